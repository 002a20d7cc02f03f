"""The watcher's pidfile and status file (`watch`): one watcher per data folder, and what `--status` reads.

The pidfile is held with `flock` for the watcher's life, so a stale pidfile never blocks a new one. The status file
(JSON: pid, start time, transcripts watched, last mined, error count) is rewritten after each round.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import time
from pathlib import Path

from .. import paths
from ..memory.records import now_iso


class WatchError(RuntimeError):
    """The watcher cannot start or be reached; the message says why."""


def pid_file() -> Path:
    return paths.data_dir() / "watch.pid"


def status_file() -> Path:
    return paths.data_dir() / "watch.status.json"


def note(message: str) -> None:
    print(f"[watch {os.getpid()} {now_iso()}] {message}", file=sys.stderr, flush=True)


# --- pidfile ------------------------------------------------------------------------------------


def _take_pidfile(tries: int = 10) -> int:
    """An fd holding the pidfile's lock, with our pid written in it; WatchError when a watcher runs.

    Tried a few times: `running_pid` (`--status`, doctor) holds a shared lock for a moment, and a watcher that stops
    removes the file before it lets go of it (the file then locked is not the one others open)."""
    for attempt in range(tries):
        fd = _open_pidfile()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if attempt + 1 < tries:
                time.sleep(0.02)
                continue
            raise WatchError(f"a watcher is already running (pid {running_pid() or '?'}); `miner watch --stop` stops "
                             "it") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(pid_file()).st_ino
        except OSError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)  # (removed by the watcher that stopped: the next try opens the file that is there now)
    raise WatchError(f"{pid_file()} kept changing while the watcher started; start it again")


def _open_pidfile() -> int:
    try:
        paths.ensure_private_dir(paths.data_dir())
        return os.open(pid_file(), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:  # a read-only data folder, or a file where it should be: one line, not a traceback
        import errno

        what = ", and a file stands where it (or a folder above it) should be: move the file, or set MINER_HOME to " \
            "another folder" if exc.errno in (errno.EEXIST, errno.ENOTDIR) else ""
        raise WatchError(f"cannot write {pid_file()} ({exc.strerror}); the data folder must be writable to mine "
                         f"into it{what}") from None


def running_pid() -> int | None:
    """The pid of the running watcher of this data folder, or None."""
    path = pid_file()
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return None  # nobody holds it: a stale file
        except BlockingIOError:
            pass
        try:
            return int(os.read(fd, 32).decode().strip() or 0) or None
        except ValueError:
            return None
    finally:
        os.close(fd)


# --- status ------------------------------------------------------------------------------------


class Status:
    """What `miner watch --status` shows, rewritten atomically."""

    def __init__(self, root: Path):
        from ..recall.blockcache import code_state  # (which code runs: `miner doctor` says when it is not current)

        self.data = {"pid": os.getpid(), "started_at": now_iso(), "root": str(root), "running": True,
                     "code": code_state(), "files_watched": 0, "mined": 0, "last_mined": None, "last_mined_at": None,
                     "errors": 0, "last_error": None, "updated_at": now_iso()}
        self.unwritten = ""  # why the last write failed (said once), or ''

    def mined(self, transcript: str) -> None:
        self.data["mined"] += 1
        self.data["last_mined"] = transcript
        self.data["last_mined_at"] = now_iso()

    def error(self, message: str) -> None:
        self.data["errors"] += 1
        self.data["last_error"] = message[-500:]

    def write(self, **changes) -> None:
        """Rewrite the file; a write that fails (a full disk) is said once, and the watcher goes on: it is what
        `--status` shows, nothing is lost without it, and the next write tries again."""
        self.data.update(changes, updated_at=now_iso())
        try:
            paths.write_private(status_file(), json.dumps(self.data, indent=2))
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            if reason != self.unwritten:
                note(f"the status file was not written ({reason}); `miner watch --status` shows an older one")
            self.unwritten = reason
        else:
            self.unwritten = ""


def read_status() -> dict | None:
    """The status the watcher last wrote; None when there is none, or the file is not one (edited, or cut short)."""
    try:
        status = json.loads(status_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def status_lines() -> list[str]:
    """`miner watch --status`: running or not, and what the watcher did."""
    pid = running_pid()
    status = read_status() or {}
    if pid is None:
        lines = ["watcher: not running"]
        if status:
            lines.append(f"last run: pid {status.get('pid')}, started {status.get('started_at')}, "
                         f"stopped {status.get('stopped_at') or 'without a clean stop'}")
    else:
        lines = [f"watcher: running, pid {pid}, since {status.get('started_at', '?')}"]
    if status:
        lines += [
            f"watching     {status.get('root')} ({status.get('files_watched', 0)} transcripts)"
            + (f" by looking every {status['rescan_only']:.0f}s (the system's inotify limit was reached)"
               if status.get("rescan_only") else ""),
            f"mined        {status.get('mined', 0)} passes; last {status.get('last_mined') or 'none'}"
            + (f" at {status['last_mined_at']}" if status.get("last_mined_at") else ""),
            f"errors       {status.get('errors', 0)}" + (f" (last: {str(status['last_error']).splitlines()[-1]})"
                                                         if str(status.get("last_error") or "").strip() else ""),
        ]
    return lines


def stop(timeout_s: float = 30.0) -> str:
    """`miner watch --stop`: SIGTERM the running watcher and wait until it has let go of its pidfile."""
    pid = running_pid()
    if pid is None:
        return "watcher: not running"
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "watcher: not running"
    deadline = time.monotonic() + timeout_s
    while running_pid() is not None:
        if time.monotonic() > deadline:
            raise WatchError(f"the watcher (pid {pid}) did not stop within {timeout_s:.0f}s: it stops once the batch "
                             "it is mining is written; run `miner watch --stop` again in a moment")
        time.sleep(0.05)
    return f"watcher (pid {pid}) stopped"
