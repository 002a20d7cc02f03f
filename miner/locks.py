"""Per-transcript locks so that any number of hooks and miners can run at once (standard library only).

A miner holds an exclusive `flock` on the transcript's lock file while it
mines. A hook that finds the lock taken leaves a `pending` mark instead of
starting a second miner; the running miner sees the mark when it finishes
and mines again, so new lines are never left behind.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from pathlib import Path

from . import paths


def _stem(transcript: str) -> str:
    return hashlib.blake2b(transcript.encode("utf-8"), digest_size=10).hexdigest()


def lock_file(transcript: str) -> Path:
    return paths.locks_dir() / f"{_stem(transcript)}.lock"


def pending_file(transcript: str) -> Path:
    return paths.locks_dir() / f"{_stem(transcript)}.pending"


def try_lock(transcript: str, wait_s: float = 0.0) -> int | None:
    """An fd holding the transcript's lock, or None when another process holds it."""
    paths.ensure_private_dir(paths.locks_dir())
    fd = os.open(lock_file(transcript), os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


def release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_locked(transcript: str) -> bool:
    fd = try_lock(transcript)
    if fd is None:
        return True
    release(fd)
    return False


def mark_pending(transcript: str) -> None:
    paths.ensure_private_dir(paths.locks_dir())
    pending_file(transcript).touch()


def take_pending(transcript: str) -> bool:
    """True (and the mark removed) when a hook asked for another pass."""
    try:
        pending_file(transcript).unlink()
        return True
    except FileNotFoundError:
        return False
