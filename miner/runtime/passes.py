"""Mining one transcript under its lock until no pass is pending, then the checkpoints hooks asked for.

Every miner goes through `mine_locked`: the hooks' workers, the watcher, and `miner mine` (`Miner.mine_paths`), so
that lines a hook announced while one of them held the lock (the hook's pending mark) are mined, and a session's
checkpoint that SessionEnd or PreCompact asked for is written, whichever of them holds the transcript.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

from .. import paths
from ..extract.redact import redact_text
from ..memory.store import Store, StoreError, disk_full, locked
from . import halted, locks

PASSES_BEFORE_CHECKPOINT = 3


@dataclass
class Summary:
    files: int = 0
    entries: int = 0
    turns: int = 0
    units: int = 0
    candidates: int = 0
    new: int = 0
    merged: int = 0
    skipped_lines: int = 0
    replayed: int = 0
    archived: int = 0
    scrubbed: int = 0  # rows stored before a secret they hold was learnt, redacted since (`memory.repair.scrub`)
    dropped: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)  # of the main conversation's turns mined (no subagent's)

    def add(self, other: "Summary") -> None:
        for name in ("files", "entries", "turns", "units", "candidates", "new", "merged", "skipped_lines", "replayed",
                     "archived", "scrubbed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, value in other.dropped.items():
            self.dropped[key] = self.dropped.get(key, 0) + value
        self.errors += other.errors
        self.sessions |= other.sessions

    def line(self) -> str:
        return (f"{self.files} files, {self.entries} entries, {self.units} units, {self.candidates} candidates, "
                f"{self.new} new memories, {self.merged} merged, {self.skipped_lines} lines skipped"
                + (f", {self.scrubbed} earlier texts redacted (a secret learnt since)" if self.scrubbed else ""))


def note(message: str) -> None:
    """One line on stderr, which the hooks point at logs/worker.log; a line that cannot be written (a full disk) is
    lost, and what the worker was doing goes on."""
    try:
        print(f"[worker {os.getpid()}] {redact_text(message)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # (ValueError: a stream already closed)
        pass


def scrub_learnt(store: Store, fresh: set[str]) -> int:
    """Redact what the store held from before of the secrets just learnt (`memory.repair.scrub`), after the batch
    that learnt them committed, in a transaction of its own; the rows it changed. `fresh` is emptied. A failure is
    noted and leaves the rest to `miner doctor --fix` (their digests are kept)."""
    import sqlite3

    from ..memory.repair import scrub

    try:
        changed = scrub(store, fresh).total
    except (sqlite3.Error, OSError) as exc:
        note(f"what was stored before a secret was learnt is not redacted yet ({type(exc).__name__}: {exc}); "
             "`miner doctor --fix` does it")
        changed = 0
    fresh.clear()
    return changed


def learnt_meanwhile(store: Store, units: list, conversation) -> set[str]:
    """The secrets that another miner learnt while a batch's `units` were redacted without them (the store's digests
    beyond those `conversation` redacted with, and beyond its own uncleared `learnt`) and that the units, as stored,
    say bare: the batch committed after that miner scrubbed the store for them, so it scrubs them itself."""
    from ..extract.secret_turns import known_in
    from ..memory.repair import SCRUB_PENDING

    salt, digests = store.secret_digests()
    newer = digests - conversation.digests - conversation.learnt
    found = set().union(*(known_in(unit.text, salt, newer, words=False) for unit in units)) if newer else set()
    if found and not conversation.fresh:  # (counted as pending, as a batch that learnt one is: `scrub` counts it off)
        with store.atomic():
            store.bump(SCRUB_PENDING)
    return found


def write_requested_checkpoints(store: Store, transcript: str, requests: list[dict]) -> list[tuple[str, str]]:
    """Write the checkpoint of each session that asked for one (after its transcript was mined).

    Returns the (session, project) pairs whose request also asked for the
    block after the compaction (PreCompact's); the hook waiting for such a
    checkpoint is told (`locks.stop_waiting`) once it was written or could not be.
    """
    from ..recall.checkpoint import session_project, write_checkpoint

    blocks = []
    for request in requests:
        session_id = request["session_id"]
        try:
            fallback = paths.project_root(request.get("cwd") or "") if request.get("cwd") else ""
            try:
                project = session_project(store, session_id, fallback)
                if project:
                    write_checkpoint(store, session_id, project, transcript)
            except FileNotFoundError:
                project = ""  # the transcript is gone: no session there goes on
            except Exception as exc:  # noqa: BLE001 - one checkpoint must not stop the others
                # A busy or full store is left for the next miner; what no later try would change is not asked again.
                later = isinstance(exc, (sqlite3.Error, StoreError, OSError))
                note(f"checkpoint of {session_id} not written{', left for the next miner' if later else ''}: "
                     f"{type(exc).__name__}: {exc}")
                if not later:
                    locks.checkpoint_request_done(request)
                continue
            locks.checkpoint_request_done(request)
            if not project:
                note(f"no project known for session {session_id}: checkpoint not written")
                continue
            if request.get("compact_block"):
                blocks.append((session_id, project))
        finally:
            if request.get("compact_block"):
                locks.stop_waiting(transcript, session_id)
    return blocks


_failures: dict[str, str] = {}  # per transcript, what the last failed attempt to mine it said, until one works


def mine_locked(miner, transcript: str, wait_s: float = 0.0, lock_fd: int | None = None,
                store: Store | None = None, on_checkpoint: Callable[[str, str], None] | None = None) -> bool:
    """Mine `transcript` until no pass is pending. False when another miner has it.

    With `lock_fd`, the lock was taken by the hook that started this process.
    Checkpoint requests are served under the lock, after a pass that left no
    pending mark (lines a hook announced meanwhile are mined first, for a few
    passes at most), so a checkpoint always sees the transcript mined at least
    up to the request. `on_checkpoint(session, project)` is told of each
    session whose block after the compaction is to be rendered (by the caller,
    once its store is closed).
    """
    fd = lock_fd if lock_fd is not None else locks.try_lock(transcript, wait_s)
    if fd is None:
        locks.mark_pending(transcript)
        return False
    while True:
        try:
            for _ in range(PASSES_BEFORE_CHECKPOINT):
                locks.take_pending(transcript)
                try:
                    done = miner.mine_file(transcript)
                    _failures.pop(transcript, None)
                    if getattr(done, "turns", 0):  # mined with every rule and secrets file loaded: none halts mining
                        halted.clear()
                except FileNotFoundError:
                    note(f"{transcript} is gone")
                except Exception as exc:  # noqa: BLE001 - a requested checkpoint is still written from what is stored
                    said = f"{type(exc).__name__}: {exc}"
                    if said != _failures.get(transcript):  # (a full disk fails each attempt alike: said once)
                        if _halting(exc):  # the user's file to fix, not a fault of ours: one line, and the next
                            halted.record(redact_text(str(exc)))  # SessionStart tells the user
                            note(f"mining {transcript} halted until a file is fixed: {said}")  # (`note` redacts)
                        elif locked(exc):
                            note(f"info: the store was busy (another process kept it locked): {transcript} waits "
                                 "for the next miner")  # (a moment's lock is no failure, as in the hooks)
                        else:
                            note(f"mining {transcript} failed:\n{traceback.format_exc()}")
                    _failures[transcript] = said
                if not locks.is_pending(transcript):
                    break
            requests = locks.take_checkpoint_requests(transcript)
            if requests and store is not None:
                blocks = write_requested_checkpoints(store, transcript, requests) or []
                for session_id, project in blocks if on_checkpoint is not None else ():
                    on_checkpoint(session_id, project)
        finally:
            locks.release(fd)
        # Released first, then looked: a hook that marked while we held the lock is seen here. The mark stays until
        # a miner holds the lock (the loop takes it): one that took the lock meanwhile may have read the file before
        # the hook's lines, and it looks again after its pass.
        if not locks.is_pending(transcript):
            return True
        fd = locks.try_lock(transcript)
        if fd is None:
            return True  # a newer miner holds it: it sees the mark, after its pass or once it has released the lock


def mine_paths(miner, files: list[str], progress: Callable[[str, Summary], None] | None = None,
               lock_wait_s: float = 300.0) -> Summary:
    """Mine many transcripts with `miner` (a `Miner`), each under its lock, as the hooks' miners do (`mine_locked`):
    again while a hook announced lines meanwhile, then the checkpoints hooks asked for. Then each session whose main
    conversation this run mined from a transcript has its checkpoint written, as its SessionEnd would have (a
    backfill's sessions ended before any hook saw them), and so has each of its sessions still without one: a todo
    a session reports done goes cold, and the next session is ranked against the latest. One broken file is
    reported, not fatal."""
    store = miner.store
    total = Summary()
    stop: list[sqlite3.OperationalError] = []  # what stops the run: the store, not the file
    for file in files:
        result = Summary(files=1)

        def one_pass(path: str, file: str = file, result: Summary = result) -> None:
            try:
                done = miner.mine_file(path)
                done.files = 0  # one file, however many passes
            except sqlite3.OperationalError as exc:
                if not store_wide(exc):
                    raise
                stop.append(exc)  # (locked past the wait, or the disk full: every file after would wait, or fail)
                return
            except FileNotFoundError as exc:  # deleted while it was read: counted, not fatal
                with store.atomic():
                    store.bump("transcripts_vanished")
                done = Summary(errors=[f"{file}: vanished while it was read ({type(exc).__name__}: {exc})"])
            except PermissionError:  # one the user can fix: say how
                done = Summary(errors=[f"{file}: cannot be read (permission denied), so it was not mined; make it "
                                       "readable (`chmod u+r`)"])
            except Exception as exc:  # noqa: BLE001 - one broken file must not stop a backfill
                done = Summary(errors=[f"{file}: {type(exc).__name__}: {exc}"])
            result.add(done)

        resolved = str(Path(file).resolve())
        held = mine_locked(SimpleNamespace(mine_file=one_pass), resolved, lock_wait_s, store=store)
        if stop:  # what was mined is kept; the caller says it in one line (`cli.group`), and the next run goes on
            raise stop[0]
        if not held:
            result.errors.append(f"{file}: another miner held it for {lock_wait_s:.0f}s and mines it; run again")
        else:  # (and those an earlier run owed: it was killed, or the disk was full, after mining them)
            owed = result.sessions.union(owed_checkpoints(store, resolved))
            result.errors += session_checkpoints(store, resolved, owed) if owed else []
        total.add(result)
        if progress:
            progress(file, result)
    return total


def store_wide(exc: BaseException) -> bool:
    """Whether an error is the store's, not a file's: SQLite's lock held past the wait, or a full disk."""
    return locked(exc) or disk_full(exc)


def _halting(exc: BaseException) -> bool:
    """Whether an error is a rule or secrets file the user must fix: nothing is mined until then."""
    from ..extract.rules import RuleError
    from ..extract.secret_rules import SecretRuleError

    return isinstance(exc, (RuleError, SecretRuleError))


def owed_checkpoints(store: Store, transcript: str) -> list[str]:
    """The sessions whose main conversation `transcript` holds that still owe their checkpoint (a run was killed,
    or the disk was full, after mining them); none for a subagent's file, which holds only its side of one. Claude
    Code names a main transcript for its session (`<session id>.jsonl`)."""
    path = Path(transcript)
    return [] if path.parent.name == "subagents" else store.sessions_without_checkpoint(transcript, path.stem)


def session_checkpoints(store: Store, transcript: str, sessions: set[str]) -> list[str]:
    """Write the checkpoint of each of these sessions from `transcript`, which holds their main conversation (not
    from a subagent's file, which holds only its own side of it); what could not be written, said in a line each."""
    from ..recall.checkpoint import session_project, write_checkpoint

    errors = []
    for session_id in sorted(sessions):
        try:
            project = session_project(store, session_id)
            if project:
                write_checkpoint(store, session_id, project, transcript)
        except FileNotFoundError:
            break  # deleted since it was mined: what it said is stored, and no session there goes on
        except Exception as exc:  # noqa: BLE001 - one checkpoint must not stop a backfill
            errors.append(f"{transcript}: the checkpoint of session {session_id} was not written "
                          f"({type(exc).__name__}: {exc})")
    return errors
