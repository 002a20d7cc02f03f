"""Per-transcript locks so that any number of hooks and miners can run at once (standard library only).

A miner holds an exclusive `flock` on the transcript's lock file for as long
as it mines. The Stop and SessionEnd hooks take that lock themselves before
they start a miner and hand the locked descriptor down to it, so there is no
moment when a miner is starting but not yet holding its lock: a hook that
finds the lock taken knows a miner is running (or about to) and leaves a
`pending` mark instead of starting a second one. The running miner looks for
the mark after it lets go of the lock and mines again, so new lines are never
left behind: hooks mark before they try the lock, miners release before they
look at the mark.

Checkpoint requests (SessionEnd asks for the session's checkpoint to be
written after the final mining, PreCompact for the checkpoint and the block
after the compaction) are small JSON files beside the lock, taken by
whichever miner holds the lock next. PreCompact waits, for a bounded time,
while its `wait` mark exists: that miner removes it once the checkpoint is
written, and the hook itself when it stops waiting, so none is left behind.

The lock of a project's catch-up mining works the same way, keyed by project.
"""

from __future__ import annotations

import fcntl
import os
import time

from .. import paths

POLL_S = 0.05

# Paths are plain strings here (no `pathlib`: the Stop hook's import cost; see `paths`).


def _locks_dir() -> str:
    return paths.data_file("locks")


def _in_locks(name: str) -> str:
    return paths.data_file("locks", name)


def lock_file(transcript: str) -> str:
    return _in_locks(f"{paths.file_stem(transcript)}.lock")


def pending_file(transcript: str) -> str:
    return _in_locks(f"{paths.file_stem(transcript)}.pending")


def catchup_lock_file(project: str) -> str:
    return _in_locks(f"catchup-{paths.file_stem(project)}.lock")


def _acquire(path: str, wait_s: float = 0.0) -> int | None:
    """An fd holding an exclusive lock on `path`, or None when another process holds it after `wait_s`. (Lock files
    are never removed: whoever holds one is taken for a miner, and a remover holding it would lose a hook's lines.)"""
    paths.ensure_private_dir(os.path.dirname(path))
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(POLL_S)
        except BaseException:
            os.close(fd)
            raise


def try_lock(transcript: str, wait_s: float = 0.0) -> int | None:
    """An fd holding the transcript's lock, or None when a miner holds it (after waiting `wait_s`)."""
    return _acquire(lock_file(transcript), wait_s)


def acquire_named(name: str, wait_s: float = 0.0) -> int | None:
    """An fd holding the lock called `name` (any text; e.g. one team sync per project), or None when another
    process still holds it after `wait_s`."""
    return _acquire(_in_locks(f"{paths.file_stem(name)}.lock"), wait_s)


def try_catchup_lock(project: str) -> int | None:
    """An fd holding the project's catch-up lock, or None when a catch-up is already running."""
    return _acquire(catchup_lock_file(project))


def release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holds_lock(fd: int) -> bool:
    """True when `fd` is an open file (a lock handed down by a hook is checked before it is trusted)."""
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def is_locked(transcript: str) -> bool:
    fd = try_lock(transcript)
    if fd is None:
        return True
    release(fd)
    return False


def mark_pending(transcript: str) -> None:
    paths.ensure_private_dir(_locks_dir())
    fd = os.open(pending_file(transcript), os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)


def take_pending(transcript: str) -> bool:
    """True (and the mark removed) when a hook asked for another pass."""
    try:
        os.unlink(pending_file(transcript))
        return True
    except FileNotFoundError:
        return False


def is_pending(transcript: str) -> bool:
    """True when a hook asked for another pass (the mark is left in place)."""
    return os.path.exists(pending_file(transcript))


# --- checkpoint requests ---------------------------------------------------------------


def checkpoint_request_file(transcript: str, session_id: str) -> str:
    return _in_locks(f"{paths.file_stem(transcript)}.{paths.file_stem(session_id)}.checkpoint")


def checkpoint_wait_file(transcript: str, session_id: str) -> str:
    """Exists while PreCompact waits for the checkpoint it asked for; the miner removes it once that is written."""
    return _in_locks(f"{paths.file_stem(transcript)}.{paths.file_stem(session_id)}.wait")


def request_checkpoint(transcript: str, session_id: str, cwd: str, compact_block: bool = False) -> str:
    """Ask the miner that next holds the transcript's lock to write this session's checkpoint.

    `compact_block`: and to render the session's block for the SessionStart
    after its compaction, and to say when the checkpoint is written (`stop_waiting`).
    """
    import json

    path = checkpoint_request_file(transcript, session_id)
    # (written aside and moved into place: a miner never reads half a request)
    paths.write_private(path, json.dumps({"session_id": session_id, "cwd": cwd, "compact_block": compact_block}))
    return path


TAKEN = ".taken"  # a request being served: removed once its checkpoint is written (`checkpoint_request_done`)


def take_checkpoint_requests(transcript: str) -> list[dict]:
    """The checkpoint requests waiting for this transcript, each marked as taken (its file renamed), not removed: a
    miner that fails to write the checkpoint, or dies first, leaves it to the next one. Requests are served under the
    transcript's lock, so one still marked taken when the lock is taken again was left by a miner that failed."""
    import json

    folder = _locks_dir()
    prefix = paths.file_stem(transcript) + "."
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith((".checkpoint", TAKEN))]
    except FileNotFoundError:
        return []
    requests: dict[str, dict] = {}
    for name in sorted(names, key=lambda n: not n.endswith(TAKEN)):  # a new request after a left one
        path = os.path.join(folder, name)
        taken = path if name.endswith(TAKEN) else path + TAKEN
        try:
            with open(path, encoding="utf-8") as handle:
                raw = handle.read()
            if path != taken:
                os.replace(path, taken)
        except OSError:
            continue  # another miner took it
        try:
            body = json.loads(raw)
        except ValueError:
            _unlink(taken)
            continue
        if isinstance(body, dict) and isinstance(body.get("session_id"), str) and body["session_id"]:
            before = requests.get(body["session_id"], {})
            requests[body["session_id"]] = {
                "session_id": body["session_id"], "cwd": str(body.get("cwd") or before.get("cwd") or ""),
                "compact_block": body.get("compact_block") is True or before.get("compact_block") is True,
                "file": taken}
        else:
            _unlink(taken)
    return list(requests.values())


def checkpoint_request_done(request: dict) -> None:
    """The request's checkpoint is written (or never can be): it is not served again."""
    _unlink(request.get("file") or "")


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def start_waiting(transcript: str, session_id: str) -> None:
    """PreCompact waits for this session's checkpoint (see `checkpoint_wait_file`)."""
    paths.ensure_private_dir(_locks_dir())
    os.close(os.open(checkpoint_wait_file(transcript, session_id), os.O_WRONLY | os.O_CREAT, 0o600))


def still_waiting(transcript: str, session_id: str) -> bool:
    """True until the miner has written the checkpoint (or the waiting hook gave up)."""
    return os.path.exists(checkpoint_wait_file(transcript, session_id))


def stop_waiting(transcript: str, session_id: str) -> None:
    """The checkpoint is written (the miner), or the hook waits no longer (PreCompact): no mark is left behind."""
    try:
        os.unlink(checkpoint_wait_file(transcript, session_id))
    except FileNotFoundError:
        pass


def wait_for_checkpoint(transcript: str, session_id: str, deadline: float) -> bool:
    """Wait until a miner has written the checkpoint asked for, or until `deadline` (monotonic); True when it has."""
    while still_waiting(transcript, session_id):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(0.02, remaining))
    return True
