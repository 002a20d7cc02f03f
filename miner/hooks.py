"""`miner-hook <event>`: Claude Code's entry points (standard library and own modules only).

Each hook reads Claude Code's JSON payload from stdin, does its work, prints
at most once at the end, and fails open: on any problem it writes one line
to `$MINER_HOME/logs/hooks.log`, prints nothing and exits 0.

- session-start: prints the recall block as `additionalContext`; starts
  catch-up mining of the project's unmined transcripts in the background.
- stop / session-end: hands the transcript to a detached background miner.
- pre-compact: mines up to now (bounded in time), then writes the session
  checkpoint that opens the block after the compaction.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import config as config_mod
from . import locks, paths

EVENTS = ("session-start", "stop", "pre-compact", "session-end")
SOURCES = ("startup", "resume", "clear", "compact", "fork")
MAX_STDIN_BYTES = 1024 * 1024
HARD_CHAR_CAP = 9_999


class HookInputError(ValueError):
    """The payload is not what Claude Code sends; the hook logs it and does nothing."""


@dataclass(frozen=True)
class HookEvent:
    event: str
    session_id: str
    transcript_path: str
    cwd: str
    source: str = ""
    trigger: str = ""
    reason: str = ""

    @classmethod
    def parse(cls, event: str, raw: str) -> "HookEvent":
        if event not in EVENTS:
            raise HookInputError(f"unknown event {event!r}; expected one of {', '.join(EVENTS)}")
        if not raw.strip():
            raise HookInputError("empty payload on stdin")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise HookInputError(f"payload is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise HookInputError("payload is not a JSON object")

        def text(key: str) -> str:
            value = data.get(key, "")
            if not isinstance(value, str):
                raise HookInputError(f"payload field {key!r} is not a string")
            return value

        return cls(event, text("session_id"), text("transcript_path"), text("cwd"), text("source"), text("trigger"),
                   text("reason"))


# --- logging -----------------------------------------------------------------------


def log(event: str, message: str, max_bytes: int = 256 * 1024) -> None:
    """One line in hooks.log, rotated when it passes `max_bytes`; never raises."""
    try:
        from .redact import redact

        folder = paths.ensure_private_dir(paths.logs_dir())
        path = folder / "hooks.log"
        try:
            if path.stat().st_size > max_bytes:
                os.replace(path, folder / "hooks.log.1")
        except FileNotFoundError:
            pass
        line = " ".join(redact(message)[0].split())[:1000]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {event} {line}\n")
    except Exception:  # noqa: BLE001 - logging must never break a hook
        pass


# --- input safety -------------------------------------------------------------------


def safe_transcript(path: str) -> str:
    """The resolved transcript path, if it is a regular .jsonl file under Claude's folder."""
    if not path:
        raise HookInputError("payload has no transcript_path")
    root = os.path.realpath(paths.claude_dir())
    real = os.path.realpath(path)
    if not real.endswith(".jsonl"):
        raise HookInputError(f"refused transcript_path {path!r}: not a .jsonl file")
    if os.path.commonpath([root, real]) != root:
        raise HookInputError(f"refused transcript_path {path!r}: outside {root}")
    import stat

    try:
        mode = os.stat(real).st_mode
    except OSError:
        raise HookInputError(f"transcript_path {path!r} does not exist") from None
    if not stat.S_ISREG(mode):
        raise HookInputError(f"refused transcript_path {path!r}: not a regular file")
    return real


# --- background work -----------------------------------------------------------------


def spawn(args: list[str]) -> None:
    """Start `python -m miner.worker ARGS` detached: the hook never waits for it."""
    import subprocess

    log_path = paths.ensure_private_dir(paths.logs_dir()) / "worker.log"
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        subprocess.Popen(
            [sys.executable, "-m", "miner.worker", *args],
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)


def hand_off(transcript: str) -> bool:
    """Ask for the transcript to be mined; start a miner only when none is running for it."""
    locks.mark_pending(transcript)
    if locks.is_locked(transcript):
        return False
    spawn(["mine", transcript])
    return True


def catch_up(cwd: str) -> bool:
    """Start background mining when this project's transcripts are ahead of their watermarks."""
    folder = paths.projects_dir() / paths.encode_project(cwd)
    if not folder.is_dir():
        return False
    db = paths.db_path()
    if db.exists():
        import sqlite3

        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2) as conn:
            try:
                marks = dict(conn.execute("SELECT transcript, offset FROM watermarks"))
            except sqlite3.Error:
                marks = {}
    else:
        marks = {}
    for path in folder.rglob("*.jsonl"):
        try:
            if path.stat().st_size > marks.get(str(path.resolve()), 0):
                spawn(["catchup", cwd])
                return True
        except OSError:
            continue
    return False


# --- events ------------------------------------------------------------------------------


def session_start(event: HookEvent, config: dict) -> str:
    from .recall import build
    from .store import Store

    if not event.cwd:
        raise HookInputError("payload has no cwd")
    project = paths.project_root(event.cwd)
    output = ""
    if paths.db_path().exists():
        with Store() as store:
            situation = event.source if event.source in SOURCES else "startup"
            if situation == "fork":
                situation = "resume"
            recall = build(store, project, config, situation=situation, session_id=event.session_id,
                           budget_chars=min(config_mod.budget_chars(config), HARD_CHAR_CAP))
        if recall.shown or recall.checkpoint:
            block = recall.text[:HARD_CHAR_CAP] if len(recall.text) > HARD_CHAR_CAP else recall.text
            output = json.dumps(
                {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": block}},
                ensure_ascii=False,
            )
    try:
        catch_up(event.cwd)
    except Exception as exc:  # noqa: BLE001 - the block matters more than catch-up
        log(event.event, f"catch-up not started: {exc}")
    return output


def stop(event: HookEvent, config: dict) -> str:
    hand_off(safe_transcript(event.transcript_path))
    return ""


def pre_compact(event: HookEvent, config: dict) -> str:
    import subprocess

    from .checkpoint import write_checkpoint
    from .store import Store

    transcript = safe_transcript(event.transcript_path)
    timeout = float(config.get("precompact_timeout_s", 45.0))
    try:
        subprocess.run(
            [sys.executable, "-m", "miner.worker", "mine", "--wait", str(timeout / 2), transcript],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout, check=True,
        )
    except subprocess.TimeoutExpired:
        log(event.event, f"mining did not finish in {timeout:.0f}s; checkpoint written from what is stored")
    except subprocess.CalledProcessError as exc:
        log(event.event, f"miner failed: {exc.stderr.decode('utf-8', 'replace').strip().splitlines()[-1:]}")
    project = paths.project_root(event.cwd) if event.cwd else ""
    with Store() as store:
        if not project:
            row = store.session(event.session_id)
            project = row["project"] if row else ""
        write_checkpoint(store, event.session_id, project, transcript)
    return ""


def session_end(event: HookEvent, config: dict) -> str:
    hand_off(safe_transcript(event.transcript_path))
    return ""


HANDLERS = {"session-start": session_start, "stop": stop, "pre-compact": pre_compact, "session-end": session_end}


def run(event_name: str, raw: str) -> str:
    config = config_mod.load()
    event = HookEvent.parse(event_name, raw)
    return HANDLERS[event.event](event, config)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    event_name = argv[0] if argv else ""
    try:
        raw = sys.stdin.read(MAX_STDIN_BYTES) if not sys.stdin.isatty() else ""
        output = run(event_name, raw)
    except BaseException as exc:  # noqa: BLE001 - hooks fail open, whatever happened
        log(event_name or "?", f"{type(exc).__name__}: {exc}")
        return 0
    if output:
        sys.stdout.write(output)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
