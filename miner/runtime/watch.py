"""`miner watch`: a daemon that mines Claude Code transcripts as they are written.

A watchdog observer watches the projects folder recursively (subagent
transcripts included). Writes come in bursts, one line at a time, so a
transcript is mined once it has been quiet for `debounce_s` (or has been
written to for `MAX_WAIT_S` without a pause); mining is
incremental (watermarks), and each transcript is mined under its lock
(`locks`), exactly as the hooks' background miners do, so the watcher,
hooks and CLI commands can run at once. A slow rescan backs the observer
up (a folder created and written at once can beat its inotify watch).
Only regular files reached without a symlink are mined: a symlink below the
projects folder (to a file or a folder, inside it or out) is ignored, so the
watcher never reads outside Claude's folder.

One watcher per data folder, with its pidfile and status file
(`watch_state`). SIGTERM and SIGINT stop it cleanly. A
transcript deleted or replaced while watched is not an error: mining a
deleted file is skipped, and a replaced one is read again from its start.
"""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import threading
import time
import traceback
from pathlib import Path
from typing import Callable

from .. import paths
from ..extract.transcript_files import contained_transcript, real_path_below, transcript_files
from ..memory.records import now_iso
from ..memory.store import Store, StoreInterrupted, locked
from .watch_state import (  # noqa: F401 - the pidfile's and the status's names, as `miner watch` and doctor use them
    Status,
    WatchError,
    _take_pidfile,
    note,
    pid_file,
    read_status,
    running_pid,
    status_file,
    status_lines,
    stop,
)

RESCAN_S = 30.0
MAX_WAIT_S = 10.0  # a transcript written to without pause is still mined this often

# --- the watcher ---------------------------------------------------------------------------------


class _Miner:
    """The hooks' lazy miner (spaCy loads on first real work), reporting to the status."""

    def __init__(self, store: Store, config: dict, status: Status, stopping: Callable[[], bool]):
        from .pending import LazyMiner

        self.inner = LazyMiner(store, config, stopping)  # a long transcript is left between two batches
        self.status = status

    def refresh(self) -> None:
        self.inner.refresh()

    def reconfigure(self, config: dict) -> None:
        self.inner.reconfigure(config)

    def mine_file(self, transcript: str):
        try:
            result = self.inner.mine_file(transcript)
        except StoreInterrupted:
            return None  # stopping while another process held the store: nothing was written, nothing is lost
        except sqlite3.OperationalError as exc:
            if not locked(exc):
                raise
            # (a wait, not a fault: nothing was written, and the next round or rescan mines it)
            note(f"{transcript}: the store stayed locked by another process ({exc}); mined once it lets go")
            return None
        except FileNotFoundError:
            raise  # deleted while watched: `mine_locked` notes it, not an error
        except Exception:
            self.status.error(f"{transcript}: {traceback.format_exc()}")
            raise
        if result is not None:
            self.status.mined(transcript)
        return result


class Watcher:
    """Debounced, incremental mining of every transcript under `root`."""

    def __init__(self, store: Store, config: dict, root: Path, debounce_s: float = 1.0):
        self.store = store
        self.config = config
        self.root = root
        self.debounce_s = debounce_s
        self.status = Status(root)
        self.stopping = threading.Event()
        self.wake = threading.Event()  # set by what can make the loop's next step come sooner (see `run`)
        self.miner = _Miner(store, config, self.status, self.stopping.is_set)
        store.interrupted = self.stopping.is_set  # `--stop` calls off a write waiting for a backfill's lock
        self.dirty: dict[str, tuple[float, float]] = {}  # path -> (first write not yet mined, last write)
        self.known: set[str] = set()
        self.lock = threading.Lock()
        self.broken = ""  # the broken exclusions file's error, said once
        self.misnamed: set[str] = set()  # transcripts whose names are not UTF-8, each said once
        self.store_inode = os.stat(store.path).st_ino
        from ..recall.blockcache import config_state

        self.settings = config_state()  # the settings file as `config` was read from it
        self.root_replaced = threading.Event()  # the watched folder was removed, moved or made again

    def _transcript(self, path: str) -> str | None:
        """`contained_transcript`, and a name the store can keep: one that is not UTF-8 stopped the watcher on every
        start (it cannot be a watermark's key), so it is said once and left, as `miner mine` leaves it."""
        key = contained_transcript(path, self.root)
        if key is None or paths.is_utf8(key):
            return key
        with self.lock:
            said = key in self.misnamed
            self.misnamed.add(key)
        if not said:
            self.status.error(paths.unkeepable_name(key))
            note(paths.unkeepable_name(key))
        return None

    # Called from the observer's thread.
    def touched(self, path: str, deleted: bool = False) -> None:
        if not path.endswith(".jsonl"):
            return
        if deleted:
            key = real_path_below(path, self.root)
            if key is None:
                return
            with self.lock:
                if key in self.known:
                    self.wake.set()  # the status says how many files are watched
                self.known.discard(key)
                self.dirty.pop(key, None)
            return
        # Only a regular file reached without a symlink: a link never leads the watcher out of Claude's folder.
        key = self._transcript(path)
        if key is None:
            return
        with self.lock:
            self.known.add(key)
            now = time.monotonic()
            if key not in self.dirty:
                self.wake.set()  # a new deadline; a later write to a dirty file only moves its deadline later
            self.dirty[key] = (self.dirty.get(key, (now, now))[0], now)

    def stop(self) -> None:
        """Ask the loop to stop (from a signal handler or another thread): it stops between two transcripts,
        or between two batches of a long one."""
        self.stopping.set()
        self.wake.set()

    def rescan(self) -> None:
        """Every transcript with complete lines past its watermark becomes due (startup, and as a backstop)."""
        from .pending import has_unmined_line

        marks = self.store.watermarks()
        found = set()
        for path in transcript_files(self.root, self.root):
            try:
                size = os.stat(path).st_size
            except OSError:
                continue
            found.add(path)
            mark = marks.get(path)
            # (a file no longer than its watermark is not opened: a rescan of thousands idle ones cost 0.6 s)
            if mark is None or size < mark or (size > mark and has_unmined_line(Path(path), mark)):
                with self.lock:
                    self.dirty.setdefault(path, (0.0, 0.0))
        with self.lock:
            self.known = found | {p for p in self.known if os.path.exists(p)}

    def due(self) -> list[str]:
        now = time.monotonic()
        with self.lock:
            ready = [p for p, (first, last) in self.dirty.items()
                     if now - last >= self.debounce_s or now - first >= MAX_WAIT_S]
            for path in ready:
                del self.dirty[path]
        return sorted(ready)

    def next_due_in(self) -> float | None:
        """Seconds until the first dirty transcript is due, or None when none is dirty."""
        with self.lock:
            deadlines = [min(last + self.debounce_s, first + MAX_WAIT_S) for first, last in self.dirty.values()]
        return min(deadlines) - time.monotonic() if deadlines else None

    def mine_round(self, transcripts: list[str]) -> None:
        from ..config import ConfigError
        from ..extract.secret_rules import SecretRuleError
        from ..worker import keep_indexes, refresh_blocks, refresh_compact_blocks, transcript_projects
        from .exclusions import PrivacyError, load_exclusions
        from .passes import mine_locked

        try:
            in_place = os.stat(self.store.path).st_ino == self.store_inode
        except OSError:
            in_place = False
        if not in_place:  # what it mined into the file it holds open would be lost to every other process
            raise WatchError(f"the memory store {self.store.path} was deleted or replaced while the watcher ran; "
                             "start it again (`miner watch`)")
        try:  # a broken exclusions, secret kinds' or settings file stops all mining (it may exclude or hide it, or
            # change what is kept): said once
            load_exclusions()
            self.miner.refresh()  # the secret kinds and rules as the user left them, not as they were at start
            self._settings()  # … and the settings
        except (PrivacyError, SecretRuleError, ConfigError) as exc:
            if str(exc) != self.broken:
                self.broken = str(exc)
                self.status.error(self.broken)
                note(f"nothing is mined until it is fixed: {exc}")
            return
        if self.broken:  # (what `--status` showed last stays there: the log says it is over)
            note("the broken file was fixed: mining again")
        self.broken = ""
        mined = []
        compact: list[tuple[str, str]] = []
        for transcript in transcripts:
            if self.stopping.is_set():
                break
            # Checked again now: the file may have been replaced by a symlink since it was seen.
            resolved = self._transcript(transcript)
            if resolved is None:
                continue  # deleted before its turn came, or no longer a regular file
            try:
                # Another miner (a hook's) holding the lock gets a pending mark and mines it itself.
                mine_locked(self.miner, resolved, wait_s=0.0, store=self.store,
                            on_checkpoint=lambda session_id, project: compact.append((session_id, project)))
                mined.append(resolved)
                self.status.write()  # (`--status` follows a long round, a first one over every transcript)
            except Exception:  # noqa: BLE001 - the watcher outlives any one transcript
                self.status.error(f"{transcript}: {traceback.format_exc()}")
                note(f"mining {transcript} failed:\n{traceback.format_exc()}")
        if mined:
            keep_indexes(self.store)
        if self.config["recall_cache"]:
            try:
                refresh_compact_blocks(compact)
                if mined:
                    refresh_blocks(transcript_projects(self.store, mined))
            except Exception:  # noqa: BLE001 - a block not rendered ahead is rendered by the hook
                self.status.error(f"rendering blocks ahead: {traceback.format_exc()}")
                note(f"rendering blocks ahead failed:\n{traceback.format_exc()}")

    def _settings(self) -> None:
        """The settings as the file holds them now, when it changed since they were read (a hook's worker reads them
        on each run: an archive turned off is off for the watcher too); ConfigError when the file is broken."""
        from .. import config as config_mod
        from ..recall.blockcache import config_state

        now = config_state()
        if now == self.settings:
            return
        self.config = config_mod.load()
        self.miner.reconfigure(self.config)
        self.settings = now
        note("settings read again: mining with them from now on")

    def _watch_root(self, observer, handler, watch=None):
        """Watch the root (again, when it was replaced: its old watch hears nothing of the new folder)."""
        if watch is not None:
            try:
                observer.unschedule(watch)
            except (KeyError, OSError):
                pass  # (the system dropped it with the folder)
        return observer.schedule(handler, str(self.root), recursive=True)

    def run(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self
        root = os.fsdecode(os.path.abspath(self.root))

        class Above(FileSystemEventHandler):
            """The folder above the root: the root itself removed, moved away or made again."""

            def on_any_event(self, event):
                if root in (os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or "")):
                    watcher.root_replaced.set()
                    watcher.wake.set()

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.is_directory:
                    return
                kind = event.event_type
                if kind in ("created", "modified", "closed"):
                    watcher.touched(os.fsdecode(event.src_path))
                elif kind == "deleted":
                    watcher.touched(os.fsdecode(event.src_path), deleted=True)
                elif kind == "moved":
                    watcher.touched(os.fsdecode(event.src_path), deleted=True)
                    watcher.touched(os.fsdecode(event.dest_path))

        observer, handler = Observer(), Handler()
        try:
            watch = self._watch_root(observer, handler)
            if os.path.isdir(os.path.dirname(root)):
                observer.schedule(Above(), os.path.dirname(root), recursive=False)
            observer.start()
            note(f"watching {self.root} (debounce {self.debounce_s:.2f}s)")
        except OSError as exc:  # the system's inotify limits (instances, watches), reached by other programs
            if exc.errno not in (errno.EMFILE, errno.ENOSPC):
                raise
            observer = watch = None
            self.status.write(rescan_only=RESCAN_S)
            note(f"cannot watch {self.root} ({exc.strerror or exc}: raise fs.inotify.max_user_instances or "
                 f"max_user_watches): looking for new lines every {RESCAN_S:.0f}s instead")
        try:
            self.status.write()  # (this run's, before a long first look: not the last run's start)
            self.rescan()
            last_scan = time.monotonic()
            self.status.write(files_watched=len(self.known))
            while not self.stopping.is_set():
                self.wake.clear()  # before looking: what is touched from now on wakes the wait below
                if observer is not None and self.root_replaced.is_set() and os.path.isdir(self.root):
                    self.root_replaced.clear()
                    watch = self._watch_root(observer, handler, watch)
                    note(f"{self.root} was replaced: watching the new folder")
                    last_scan = time.monotonic() - RESCAN_S  # and what it holds is looked for now
                if time.monotonic() - last_scan >= RESCAN_S:
                    self.rescan()
                    last_scan = time.monotonic()
                ready = self.due()
                if ready:
                    self.mine_round(ready)
                if ready or len(self.known) != self.status.data["files_watched"]:  # a deletion mines nothing
                    self.status.write(files_watched=len(self.known))
                # Asleep until the next transcript is due, the next rescan, a new dirty file or a stop; an idle
                # watcher wakes once per rescan.
                timeout = RESCAN_S - (time.monotonic() - last_scan)
                due_in = self.next_due_in()
                self.wake.wait(max(0.0, timeout if due_in is None else min(timeout, due_in)))
        except WatchError as exc:  # (said by `--status` too: a service's log is not where one looks first)
            self.status.error(str(exc))
            raise
        finally:
            if observer is not None:
                observer.stop()
                observer.join(timeout=10)
            self.status.write(running=False, stopped_at=now_iso(), files_watched=len(self.known))
            note("stopped")


def run(config: dict, debounce_s: float = 1.0, root: Path | None = None,
        on_start: Callable[[Watcher], None] | None = None) -> None:
    """Run the watcher in the foreground until SIGTERM or SIGINT."""
    root = Path(root or paths.projects_dir())
    pid_fd = _take_pidfile()
    try:
        root.mkdir(parents=True, exist_ok=True)
        with Store() as store:
            watcher = Watcher(store, config, root, debounce_s)

            def request_stop(signum, _frame):
                note(f"signal {signum}: stopping")
                watcher.stop()

            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, request_stop)
                signal.signal(signal.SIGINT, request_stop)
            if on_start:
                on_start(watcher)
            watcher.run()
    finally:
        try:
            pid_file().unlink()
        except OSError:
            pass
        os.close(pid_fd)
