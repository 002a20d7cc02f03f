"""`miner doctor`: each check yields (ok, what was found, the command that fixes it)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Iterator

from .. import paths
from ..extract import nlp
from ..install.settings import SettingsError, command_executable, load_settings, registered_commands, settings_path
from ..memory import reader

Check = tuple[bool, str, str]


def _registered() -> tuple[Path, dict[str, list[str]]] | SettingsError:
    """The settings file our hooks are registered in, with our commands: the user's, else this project's (project
    or local scope); the user's when none has them."""
    found = None
    for scope in ("user", "project", "local"):
        path = settings_path(scope)
        try:
            commands = registered_commands(load_settings(path)[1])
        except SettingsError as exc:
            if scope == "user":
                return exc
            continue
        found = found or (path, commands)
        if commands:
            return path, commands
    return found


def check_hooks() -> Iterator[Check]:
    registered = _registered()
    if isinstance(registered, SettingsError):
        path = settings_path("user")
        yield False, str(registered), f"fix {path} by hand, then run `miner install`"
        return
    path, commands = registered
    from ..install.settings import EVENTS, PLUGIN, plugin_enabled_anywhere

    wanted = tuple(EVENTS)
    missing = [e for e in wanted if not commands.get(e)]
    plugin = plugin_enabled_anywhere()
    if plugin and commands:
        yield False, (f"the {PLUGIN} plugin ({plugin}) and hooks in {path} are both registered: every hook runs "
                      "twice and the block is injected twice"), "miner uninstall (the plugin's hooks stay)"
        return
    if plugin:
        yield True, f"hooks run through the {PLUGIN} plugin ({plugin})", ""
        return
    scope = "" if path == settings_path("user") else " (this project's settings: its sessions only)"
    if missing:
        yield False, f"hooks not registered in {path}{scope} for {', '.join(missing)}", "miner install"
    else:
        yield True, f"hooks registered in {path}{scope}", ""
    yield from _commands(commands)


def _commands(commands: dict[str, list[str]]) -> Iterator[Check]:
    """Each registered command runs an interpreter that is there, imports our hooks, and runs isolated."""
    from ..install.settings import ISOLATED, OLD_MARKER, is_current

    exposed, older, working = [], [], {}
    for event, cmds in sorted(commands.items()):
        for command in cmds:
            exe = command_executable(command)
            if not exe or not os.access(exe, os.X_OK):
                yield False, f"{event} hook points at a missing interpreter: {exe or command}", "./install.sh (then miner install)"
            elif exe not in working:
                working[exe], elsewhere = _imports_the_hooks(exe)
                if working[exe]:
                    yield False, f"the hooks' interpreter {exe} cannot import them ({working[exe]})", "./install.sh"
                elif elsewhere:  # (another venv: the code a user upgraded is not what runs, nor what redacts)
                    yield False, (f"the hooks run another install's code: {exe} imports {elsewhere}, not this one "
                                  f"({_package_dir()})"), "miner install (from this install), or ./install.sh"
            if f" {ISOLATED} " not in f"{command} ":
                exposed.append(event)
            elif not is_current(command):
                older.append(event)
    if exposed:
        # Registered by an older version: Python puts the project folder first on sys.path, so its files could
        # stand in for our modules.
        yield False, (f"{', '.join(exposed)} hook(s) not isolated (no `-I`): files in a project folder could run "
                      "as our modules"), "miner install"
    if older:
        yield False, (f"{', '.join(older)} hook(s) not registered as this version registers them (an older "
                      f"version's `{OLD_MARKER.strip()}` starts slower: it loads runpy first)"), "miner install"


def _imports_the_hooks(python: str) -> tuple[str, str]:
    """('', '') when `python` imports our hooks as a hook would (isolated, from another folder), and this install's
    package; else why not, or the other package it imports (its folder and version)."""
    import subprocess

    probe = "import miner, miner.hooks; print(miner.__file__); print(getattr(miner, '__version__', ''))"
    try:
        done = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, cwd="/", timeout=15)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc), ""
    lines = done.stderr.strip().splitlines()
    if done.returncode != 0:
        return (lines[-1] if lines else f"exit status {done.returncode}"), ""
    where, _, version = done.stdout.strip().partition("\n")
    folder = os.path.dirname(os.path.realpath(where))
    return "", "" if folder == _package_dir() else f"{folder}" + (f" (version {version})" if version else "")


def _package_dir() -> str:
    import miner

    return os.path.dirname(os.path.realpath(miner.__file__))


def check_database() -> Iterator[Check]:
    from ..memory.store import locked

    db = paths.db_path()
    if not db.exists():
        # A fresh install with no transcript yet: the first mined session creates it.
        yield True, f"no database yet at {db} (the first mined session creates it)", ""
        return
    unwritable = [str(p) for p in (db, db.parent) if not os.access(p, os.W_OK)]
    if unwritable:  # sound, perhaps, but nothing can be mined into it (and reading a WAL file writes beside it)
        yield False, f"database {db} cannot be written by you ({' and '.join(unwritable)}: read-only)", \
            f"chmod u+w {' '.join(unwritable)} (or run as their owner)"
        return
    try:
        result = reader.health_check(db)
    except sqlite3.Error as exc:
        if locked(exc):
            yield False, f"database {db} is busy: another process kept it locked ({exc})", "run miner doctor again"
        else:  # SQLite cannot copy what it cannot read: the file is kept aside, and the transcripts mined again
            yield False, f"database {db} is not usable: {exc}", f"mv {db} {db}.broken, then miner mine --all"
        return
    from ..memory import migrations
    from ..memory.store import newer_store

    newer = migrations.unknown(reader.migrations_applied(db))
    if newer:  # (no miner writes to it)
        yield False, newer_store(db, newer), "upgrade: ./install.sh"
        return
    if result != "ok":
        yield False, f"database {db} fails integrity_check: {result}", f"move {db} away and run miner mine --all"
    else:
        yield True, f"database {db} is writable and passes integrity_check", ""


def check_pipeline(config: dict) -> Iterator[Check]:
    model = config["spacy_model"]
    line = nlp.describe(model)
    yield True, f"spaCy: {line}", ""
    from ..extract.classify import MODEL_DIR, Classifier, thresholds_text

    if not config["classifier"]:
        yield True, "memory classifier switched off in the settings: the rules alone decide", ""
    elif Classifier.available():
        thresholds = thresholds_text(Classifier().thresholds)
        yield True, f"memory classifier: {MODEL_DIR} (thresholds on P(none): {thresholds})", ""
    else:
        yield False, f"no memory classifier at {MODEL_DIR}: the rules alone decide", "./install.sh (or miner train)"


def check_lag() -> Iterator[Check]:
    from ..runtime.pending import transcript_lag

    db = paths.db_path()
    behind, found = transcript_lag(reader.watermark_offsets(db) if db.exists() else {})
    if not found:
        yield True, f"no transcripts under {paths.projects_dir()} yet", ""
    elif behind:
        lag_bytes = sum(row[2] for row in behind)
        yield False, f"{found} transcripts found; {len(behind)} behind by {_size(lag_bytes)}", "miner mine --all"
    else:
        yield True, f"{found} transcripts found, all mined", ""


def check_hook_errors() -> Iterator[Check]:
    log = paths.logs_dir() / "hooks.log"
    if not log.exists():
        yield True, "no hook errors logged", ""
        return
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    # "<time> <event> info: ..." says what a hook left to the miner (a store busy at PreCompact): not an error.
    errors = [line for line in lines if line.split(" ", 3)[2:3] != ["info:"]]
    notices = f" ({len(lines) - len(errors)} notice(s) in {log})" if len(errors) < len(lines) else ""
    if errors:
        yield False, f"{len(errors)} hook error(s) in {log}; last: {errors[-1]}{notices}", f"read {log}, then remove it"
    else:
        yield True, f"no hook errors logged{notices}", ""


def check_worker_errors() -> Iterator[Check]:
    """What the background workers (the hooks' miners) left in their log as they failed: a traceback each."""
    log = paths.logs_dir() / "worker.log"
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if not starts:
        yield True, "no background miner failed", ""
        return
    # The exception's own line: the first unindented line after the last traceback's frames.
    last = next((line for line in lines[starts[-1] + 1:] if line and not line.startswith(" ")), "?")
    yield False, f"{len(starts)} background miner failure(s) in {log}; last: {last}", f"read {log}, then remove it"


def check_install() -> Iterator[Check]:
    """The tool runs from some environment (./install.sh's venv, a plugin's, a checkout's): say which, and
    whether the hook command can be started from it."""
    import sys

    hook = Path(sys.executable).with_name("miner-hook")
    where = sys.prefix
    if hook.exists() or (Path(where) / "bin" / "miner-hook").exists():
        yield True, f"installed in {where} ({sys.executable})", ""
    else:
        yield False, f"the miner-hook command is not installed beside {sys.executable}", "./install.sh"


def check_secrets() -> Iterator[Check]:
    """Secrets that the current redaction hides but an older one stored."""
    from ..extract.redaction_version import REDACTION_VERSION
    from ..extract.secret_rules import SecretRuleError
    from ..memory.repair import scan
    from ..memory.store import Store, StoreError

    if not paths.db_path().exists():
        return
    try:
        with Store(readonly=True) as store:
            found = scan(store)
            older = reader.redaction_version(store.db) < REDACTION_VERSION
    except (StoreError, sqlite3.Error, SecretRuleError) as exc:
        yield False, f"stored secrets not checked: {exc}", ""
        return
    if found.total:
        yield False, f"stored secrets that redaction now hides: {found.line()}", "miner doctor --fix"
    elif older:  # (what the transcripts reveal is read by the repair only: a scan that read them all would be slow)
        yield False, ("the store was last cleaned by an older redaction: its repair reads the transcripts again for "
                      "secrets the rows alone do not show"), "miner doctor --fix"
    else:
        yield True, "no stored secret (every text passes the current redaction)", ""


def check_settings() -> Iterator[Check]:
    from ..config import ConfigError, config_path, load, removed_keys

    try:
        settings = load()
        if (settings.get("dedup") or {}).get("embedder"):  # (imported as mining imports it)
            from ..memory.dedup import embedder_of

            embedder_of(settings["dedup"])
    except ConfigError as exc:
        yield False, f"settings: {exc}", f"edit {config_path()}"
        return
    if not settings["budget_share"]:
        yield (False, f"{config_path()} sets budget_share to 0: every session starts without a block, pinned memories "
                      "and where the last session left off too", f"set it above 0 (default 0.02) in {config_path()}")
    removed = removed_keys()
    if removed:
        yield (False, f"{config_path()} sets settings this version ignores (they did not change what recall "
                      f"answers): {', '.join(removed)}", f"delete them from {config_path()}")


def check_exclusions() -> Iterator[Check]:
    """A broken exclusions file excludes every project (the safe side), which hooks say nowhere."""
    from ..runtime.exclusions import PrivacyError, load_exclusions

    try:
        load_exclusions()
    except PrivacyError as exc:
        yield False, f"{exc}: until then every project is excluded (nothing is mined or recalled)", \
            "fix it, then `miner exclude list`"


def check_rules() -> Iterator[Check]:
    """The rule files and the secret kinds' files: a broken one stops every miner (and so every hook's mining)."""
    from ..extract import rules as rules_mod
    from ..extract.redact import load_extra
    from ..extract.secret_rules import SecretRuleError
    from ..runtime import halted

    try:
        rules_mod.load_rules(rules_mod.rule_files(None))
        load_extra()
    except (rules_mod.RuleError, SecretRuleError) as exc:
        yield False, f"rules: {exc}; nothing is mined until it is fixed", "fix it, then run miner rules check"
        return
    error = halted.current()[1]  # (a project's own file, which the lines above do not read, halted a miner)
    if error:
        yield False, f"rules: background mining halted: {error}", "fix it, then run miner rules check in its project"


def check_glossary() -> Iterator[Check]:
    """The glossary and synonym files, compiled for the prompt hook (which cannot read YAML)."""
    from ..memory.lexicon import SynonymError
    from ..recall import glossary

    try:
        glossary.refresh()
    except (SynonymError, OSError) as exc:
        yield False, f"glossary: {exc}", ("fix that file (until then the prompt hook searches with the last good "
                                          "lookup, or without that file)")
        return
    names = ", ".join(str(f) for f in glossary.default_files())
    yield True, f"glossary compiled for the prompt hook from {names}", ""


def check_watcher() -> Iterator[Check]:
    """A watcher still running the code from before an update mines and redacts with it."""
    from ..recall.blockcache import code_state
    from ..runtime.watch import read_status, running_pid

    pid = running_pid()
    if pid is not None and (read_status() or {}).get("code") != code_state():
        yield False, (f"the watcher (pid {pid}) runs the code from before this install was updated: it mines and "
                      "redacts with it"), "miner watch --stop, then start it again (or restart its service)"


def run_checks(config: dict) -> Iterator[Check]:
    """Every check in turn; one that fails to run (an unreadable store, a folder that is a file) is a failed line of
    its own, and the others still run."""
    checks = (("installation", check_install), ("hooks", check_hooks), ("database", check_database),
              ("stored secrets", check_secrets), ("pipeline", lambda: check_pipeline(config)),
              ("settings", check_settings), ("exclusions", check_exclusions), ("rules", check_rules),
              ("glossary", check_glossary), ("transcripts", check_lag), ("hook errors", check_hook_errors),
              ("background miners", check_worker_errors), ("watcher", check_watcher))
    for name, check in checks:
        try:
            yield from check()
        except Exception as exc:  # noqa: BLE001 - the doctor reports what it could not check
            yield False, f"could not check the {name}: {type(exc).__name__}: {exc}", ""


def _size(count: int) -> str:
    """A byte count as people read it: 2.4 MB, 310 KB, 12 bytes."""
    if count >= 100_000:
        return f"{count / 1e6:.1f} MB"
    return f"{count / 1e3:.0f} KB" if count >= 1000 else f"{count} bytes"
