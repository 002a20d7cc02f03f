"""A hook's input and its end: the payload read from stdin in bounded time and size, and the process ended
without the interpreter's teardown (standard library only, imported by every hook: see `hooks`)."""

from __future__ import annotations

import os
import sys
import time

from . import paths

MAX_STDIN_BYTES = 8 * 1024 * 1024  # a payload over this keeps its first and last KEEP_BYTES (see `shortened`)
KEEP_BYTES = 1024 * 1024
STDIN_TIMEOUT_S = 1.0  # Claude Code writes the payload and closes stdin at once; a hook never waits longer


class HookInputError(ValueError):
    """The payload is not what Claude Code sends; the hook logs it and does nothing."""


class MissingTranscript(HookInputError):
    """The payload's transcript is not there (yet)."""


def read_stdin(timeout_s: float = STDIN_TIMEOUT_S) -> str:
    """The payload on stdin: read until EOF, for `timeout_s` at most and `MAX_STDIN_BYTES` at most.

    Claude Code writes the payload and closes stdin; a writer that keeps it
    open (or stalls) gets a HookInputError after `timeout_s`, so the hook
    fails open instead of hanging until Claude Code kills it.
    """
    stream = sys.stdin
    if stream is None:
        return ""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return ""
    if os.isatty(fd):
        return ""
    import select

    deadline = time.monotonic() + timeout_s
    head = bytearray()
    tail = bytearray()
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise HookInputError(f"no end of the payload on stdin after {timeout_s:g}s ({size} bytes read)")
        chunk = os.read(fd, 1 << 20)  # readable: returns what is there, without blocking
        if not chunk:
            break
        size += len(chunk)
        room = MAX_STDIN_BYTES - len(head)
        head += chunk[:room]
        if len(chunk) > room:
            tail += chunk[max(room, 0):]
            del tail[:-KEEP_BYTES]
    if not tail:
        return head.decode("utf-8")
    return shortened(bytes(head[:KEEP_BYTES]), bytes(tail), size)


def shortened(head: bytes, tail: bytes, size: int) -> str:
    """An oversized payload as its first and last `KEEP_BYTES`, joined inside the string that made it huge (a
    pasted prompt); a HookInputError when they do not join into JSON (the bulk was not one string)."""
    import json
    import re

    start = head.decode("utf-8", errors="ignore").rstrip("\\")
    start = re.sub(r"\\u[0-9a-fA-F]{0,3}$", "", start).rstrip("\\")
    end = tail.decode("utf-8", errors="ignore")
    for skip in range(9):  # the cut may fall inside an escape: a few characters later it does not
        try:
            json.loads(start + " … " + end[skip:])
        except ValueError:
            continue
        return start + " … " + end[skip:]
    raise HookInputError(f"payload is over {MAX_STDIN_BYTES} bytes ({size}) and not one long string")


def end_process(code: int) -> None:
    """Flush stdout and stderr and end the process without the interpreter's teardown (2.5–4 ms a hook)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can reach Claude Code
            pass
    os._exit(code)


def safe_transcript(path: str) -> str:
    """The resolved transcript path, if it is a regular .jsonl file under Claude's folder (or under its projects
    folder, wherever a symlink puts that: moved to another disk, as `miner mine` and the watcher read it)."""
    import stat

    if not path:
        raise HookInputError("payload has no transcript_path")
    root = os.path.realpath(paths.claude_root())
    projects = os.path.realpath(os.path.join(paths.claude_root(), "projects"))
    real = os.path.realpath(path)
    if not real.endswith(".jsonl"):
        raise HookInputError(f"refused transcript_path {path!r}, which is not a .jsonl file")
    if os.path.commonpath([root, real]) != root and os.path.commonpath([projects, real]) != projects:
        raise HookInputError(f"refused transcript_path {path!r}, which is not under {root}")
    try:
        mode = os.stat(real).st_mode  # stat, never open: a FIFO would block the hook
    except OSError:
        raise MissingTranscript(f"transcript_path {path!r} does not exist") from None
    if not stat.S_ISREG(mode):
        raise HookInputError(f"refused transcript_path {path!r}, which is not a regular file")
    return real


REPLAY_TAIL_BYTES = 256 * 1024  # of a forked session's transcript, what is read for the session it replays
_SESSION_KEY = b'"sessionId"'


def replayed_session(transcript: str, session_id: str) -> str:
    """The session a fork's transcript replays: the last other `sessionId` among the entries at its end (Claude Code
    copies the forked session's entries, and their ids, into the new file); '' when there is none or no file."""
    try:
        real = safe_transcript(transcript)
        with open(real, "rb") as handle:
            handle.seek(max(0, os.path.getsize(real) - REPLAY_TAIL_BYTES))
            tail = handle.read(REPLAY_TAIL_BYTES)
    except (HookInputError, OSError):
        return ""
    for line in reversed(tail.splitlines()):
        at = line.find(_SESSION_KEY)
        if at < 0:
            continue
        value = line[at + len(_SESSION_KEY):].lstrip(b" \t:").split(b'"', 2)
        other = value[1].decode("ascii", "replace") if len(value) == 3 and not value[0] else ""
        if other and other != session_id and len(other) <= 128 and other.replace("-", "").isalnum():
            return other
    return ""
