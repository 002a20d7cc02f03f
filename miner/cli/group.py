"""The `miner` group's class: what any command meets that is no bug (a broken rule file, a full disk, a path that
cannot be used) becomes one line, and a terminal is never sent control characters."""

from __future__ import annotations

import errno
import sys

import click

from .. import paths
from ..textutil import NOT_SHOWN

# A path that cannot be used as it is, met by any command: what to do about it.
_PATH_ERRORS = {errno.ENAMETOOLONG: "give a shorter path (a name in it is too long)",
                errno.EEXIST: "a file stands where a folder is needed: move it, or give another folder",
                errno.ENOTDIR: "a file stands where a folder is needed: move it, or give another folder",
                errno.EACCES: "let this user read and write it, or give another path",
                errno.EPERM: "let this user read and write it, or give another path",
                errno.EROFS: "that file system is read-only: give a path on another one"}


class Group(click.Group):
    """Turns a broken rule or secrets file, a folder setting that names no usable folder, a store that cannot be
    used (not a database, written by a newer version), one another process keeps locked or this user cannot write,
    a full disk, or a path that cannot be used as it is (too long, a file where a folder is needed, not allowed),
    met by any command into one line, not a traceback."""

    def invoke(self, ctx):
        import sqlite3

        from ..extract.rules import RuleError
        from ..extract.secret_rules import SecretRuleError
        from ..memory.store import StoreError, disk_full, locked

        try:
            return super().invoke(ctx)
        except (_OneLineUsage, _NoArgsIsHelp):  # (the latter: a group given no command shows its help, as help)
            raise
        except click.UsageError as exc:  # a subcommand's arguments
            raise _OneLineUsage(exc, ctx) from None
        except (paths.PathSettingError, StoreError) as exc:  # (the latter: a store that is no store, or a newer one's)
            raise click.ClickException(str(exc)) from None
        except (RuleError, SecretRuleError) as exc:
            raise click.ClickException(f"{exc} (fix it, then check with `miner rules check`)") from None
        except sqlite3.OperationalError as exc:
            if disk_full(exc):
                raise click.ClickException(f"could not use the memory store in {paths.data_dir()} ({exc}), as on a "
                                           "full disk: free some space there and run the command again (what it was "
                                           "writing was not kept; nothing else changed)") from None
            if "readonly" in str(exc) or "unable to open" in str(exc):  # a folder or a file this user cannot write
                raise click.ClickException(f"cannot use the memory store in {paths.data_dir()} ({exc}): let this user "
                                           "read and write that folder and its files, or set MINER_HOME to a folder "
                                           "that holds the store") from None
            if not locked(exc):
                raise
            raise click.ClickException(f"the memory store is busy: another process kept it locked ({exc}); run the "
                                       "command again in a moment") from None
        except UnicodeEncodeError as exc:  # a name or a text given in bytes that are not UTF-8 (`$'\xff'`)
            if "surrogates not allowed" not in str(exc):
                raise
            raise click.ClickException("a text or a folder given here (or the current folder) is not UTF-8: the store "
                                       "keeps UTF-8 only; give it in UTF-8") from None
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise click.ClickException(f"no space left to write {exc.filename or 'a file'} ({exc.strerror}): free "
                                           "some space there and run the command again") from None
            what = _PATH_ERRORS.get(exc.errno or 0)
            if what is None or not exc.filename:
                raise
            raise click.ClickException(f"{exc.filename}: {exc.strerror}: {what}") from None

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except _NoArgsIsHelp:
            raise
        except click.UsageError as exc:  # the group's own (`miner --bogus`, `miner nosuchcommand`)
            raise _OneLineUsage(exc, parent) from None

    def main(self, *args, **kwargs):
        """A terminal's stdout and stderr drop control characters (`_Shown`), up to the last line click prints: an
        error names a path or a text as it was given (`miner mine $'\\e]0;title\\a'`). A pipe gets every character:
        an export must stay whole."""
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = (_Shown(s) if s is not None and s.isatty() else s for s in streams)
        try:
            return super().main(*args, **kwargs)
        finally:
            sys.stdout, sys.stderr = streams


# What click raises for a group given no command (`miner rules`): it shows the help itself (click 8.2 and later).
_NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _OneLineUsage(click.UsageError):
    """A usage error in one line, what was wrong and where to look (Click's own takes four: the usage, a hint, a blank
    line and the error). `ctx` is the group's, for an error that names no context of its own (an option given no
    value): the help of the command it ran is named."""

    def __init__(self, error: click.UsageError, ctx: click.Context | None) -> None:
        super().__init__(error.format_message(), error.ctx)
        if error.ctx is not None:
            self.command_path = error.ctx.command_path
        elif ctx is not None:
            self.command_path = " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
        else:
            self.command_path = ""

    def show(self, file=None) -> None:
        said = self.format_message()
        hint = f" See '{self.command_path} --help'." if self.command_path else ""
        stop = "" if not hint or said.endswith((".", "!", "?")) else "."
        click.echo(f"Error: {said}{stop}{hint}", file=file or sys.stderr)


class Filtered:
    """A stream that writes what it is given through `change` (everything else is the stream's own)."""

    def __init__(self, stream, change):
        self._stream, self._change = stream, change

    def write(self, text: str) -> int:
        return self._stream.write(self._change(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _Shown(stream) -> Filtered:
    """A terminal's stream that drops the control characters of what it is given (`textutil.NOT_SHOWN`): memory text,
    rule ids and paths come from transcripts and cloned repositories, and an escape sequence in them would retitle
    the terminal, hide text or write to the clipboard."""
    return Filtered(stream, _shown)


def _shown(text: str) -> str:
    """`text` without control characters, and a carriage return inside it made a line break: it would take the
    cursor back and let what follows write over what the line said. One that opens the text is a progress bar's."""
    text = text.translate(NOT_SHOWN)
    if "\r" in text[1:]:
        text = text[0] + text[1:].replace("\r\n", "\n").replace("\r", "\n")
    return text
