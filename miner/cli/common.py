"""What the commands share: the settings, the store and the project directory, each failing as one clear line."""

from __future__ import annotations

import os
import sys

import click

from .. import config as config_mod
from .. import paths
from ..extract.redaction_version import REDACTION_VERSION, for_output
from ..memory import reader
from ..memory.store import ReadOnlyStoreError, Store, StoreError
from .group import Filtered

# A memory id as an argument: SQLite's integers are 64-bit, a larger number would be a traceback, not "no memory".
MEMORY_ID = click.IntRange(1, 2**63 - 1)


class ReadableFile(click.Path):
    """An existing regular file to read: a device or a pipe (/dev/zero) passes `exists`, and was read for ever."""

    def __init__(self, path_type: type = str):
        super().__init__(exists=True, dir_okay=False, path_type=path_type)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        if not os.path.isfile(path):
            self.fail(f"{os.fsdecode(path)!r} is not a regular file (a device or a pipe); give a file", param, ctx)
        return path


def counted(count: int, noun: str, plural: str = "") -> str:
    """"1 rule", "2 rules" ("1 memory", "2 memories" with `plural`)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def load_config() -> dict:
    """The settings; a bad one is one line that names the key, not a traceback."""
    try:
        return config_mod.load()
    except config_mod.ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def open_store(readonly: bool = False, or_readonly: bool = False, create: bool | None = None,
               shows: bool = True) -> Store:
    """The memory store; one that cannot be opened is one line. `or_readonly`: a store this user may not write is
    opened read-only instead (for a command that only reads, but records what it read when it can). `create`: a
    missing store is made (by default only for a command that may write: a command that reads or changes what is
    there says where it looked instead, so a mistyped MINER_HOME is not an empty store). `shows`: the command prints
    what the store holds, so until the repair of an upgrade has run (`miner doctor --fix`, or the next background
    worker), what it prints is redacted as the hooks redact it (an export redacts its records itself)."""
    creates = not or_readonly if create is None else create
    if not creates and not paths.db_path().exists():
        raise click.ClickException(f"no memory store at {paths.db_path()} yet: mine transcripts first "
                                   "(`miner mine --all`), or set MINER_HOME to the folder that holds it")
    try:
        store = Store(readonly=readonly)
    except ReadOnlyStoreError as exc:
        if not or_readonly:
            raise click.ClickException(str(exc)) from None
        return open_store(readonly=True, shows=shows)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    store.waiting = lambda: click.echo(f"waiting for another process to let go of the memory store (up to "
                                       f"{store.lock_wait_s:.0f}s)…", err=True)
    version = reader.redaction_version(store.db)
    if shows and version < REDACTION_VERSION and not getattr(sys.stdout, "redacted", False):
        # Standard output hides what the current redaction hides (`redaction_version.for_output`); the command
        # group puts the stream back when the command ends.
        sys.stdout = Filtered(sys.stdout, lambda text: for_output(text, version))
        sys.stdout.redacted = True
    return store


def project_dir(project: str | None) -> str:
    """The project root of `project` (default: the current directory; `~` is the home folder).

    An empty one (`--project "$UNSET"`) is refused: it would name the current folder, and `purge` would delete
    that project's memories."""
    if project is not None and not project.strip():
        raise click.ClickException("--project is empty: give the project folder, or leave the option out for the "
                                   "current one")
    return paths.project_root(os.path.abspath(os.path.expanduser(project or os.getcwd())))


def project_filter(project: str | None) -> str | None:
    """The project root of `--project` for a command that lists every project without it: None when not given."""
    return project_dir(project) if project is not None else None


class stopped_as_by_ctrl_c:
    """While a command writes a file through a temporary one: SIGTERM and SIGHUP (a closed terminal) stop it as
    Ctrl+C does, so that the temporary file is removed on the way out (the signals' own handling ends the process at
    once, leaving it). In the main thread only (a signal's handler is set there); the handlers are put back after."""

    def __enter__(self):
        import signal
        import threading

        self.before = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(sig) is not signal.SIG_IGN:  # (`nohup`: a closed terminal stops nothing)
                    self.before[sig] = signal.signal(sig, signal.default_int_handler)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        for sig, handler in self.before.items():
            signal.signal(sig, handler)


def refuse_to_replace(path, force: bool) -> None:
    """The one line that refuses to write over an existing file unless --force was given."""
    if path is not None and path.is_file() and not force:  # (what is no file is refused where it is written)
        raise click.ClickException(f"{path} exists: give another file, or --force to replace it")
