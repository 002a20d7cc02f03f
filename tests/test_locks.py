"""Per-transcript locks, pending marks, checkpoint requests and the miner's pass loop (no spaCy, no processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from miner import hooks, worker
from miner.memory.store import Store
from miner.runtime import locks, passes

TRANSCRIPT = "/home/me/.claude/projects/-home-me-shop/0b6c1f.jsonl"


def test_lock_is_exclusive_until_released():
    first = locks.try_lock(TRANSCRIPT)
    assert first is not None
    assert locks.try_lock(TRANSCRIPT) is None  # flock is per open file: a second open cannot take it
    assert locks.is_locked(TRANSCRIPT)
    assert locks.try_lock("/another/transcript.jsonl") is not None
    locks.release(first)
    assert not locks.is_locked(TRANSCRIPT)


def test_waiting_for_a_lock_gives_up_after_the_wait():
    held = locks.try_lock(TRANSCRIPT)
    try:
        assert locks.try_lock(TRANSCRIPT, wait_s=0.2) is None
    finally:
        locks.release(held)
    fd = locks.try_lock(TRANSCRIPT, wait_s=0.2)
    assert fd is not None
    locks.release(fd)


def test_a_lock_handed_to_a_child_process_outlives_the_parent_descriptor():
    fd = locks.try_lock(TRANSCRIPT)
    os.set_inheritable(fd, True)
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE,
                             pass_fds=(fd,))
    os.close(fd)  # what the hook does after starting the worker
    try:
        assert locks.is_locked(TRANSCRIPT)  # the child holds it now
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert not locks.is_locked(TRANSCRIPT)  # released when the child exits


def test_pending_marks():
    assert not locks.take_pending(TRANSCRIPT)
    locks.mark_pending(TRANSCRIPT)
    locks.mark_pending(TRANSCRIPT)
    assert locks.take_pending(TRANSCRIPT)
    assert not locks.take_pending(TRANSCRIPT)


def test_catchup_lock_is_per_project():
    fd = locks.try_catchup_lock("/home/me/shop")
    assert fd is not None
    assert locks.try_catchup_lock("/home/me/shop") is None
    other = locks.try_catchup_lock("/home/me/other")
    assert other is not None
    locks.release(fd)
    locks.release(other)


def test_checkpoint_requests_round_trip():
    locks.request_checkpoint(TRANSCRIPT, "session-a", "/home/me/shop")
    locks.request_checkpoint(TRANSCRIPT, "session-a", "/home/me/shop")  # asked twice: served once
    locks.request_checkpoint(TRANSCRIPT, "session-b", "")
    locks.request_checkpoint("/other.jsonl", "session-c", "")
    taken = locks.take_checkpoint_requests(TRANSCRIPT)
    assert sorted(r["session_id"] for r in taken) == ["session-a", "session-b"]
    for request in taken:  # written
        locks.checkpoint_request_done(request)
    assert locks.take_checkpoint_requests(TRANSCRIPT) == []
    assert [r["session_id"] for r in locks.take_checkpoint_requests("/other.jsonl")] == ["session-c"]


def test_broken_checkpoint_requests_are_dropped():
    path = Path(locks.request_checkpoint(TRANSCRIPT, "session-a", ""))
    path.write_text("{not json")
    assert locks.take_checkpoint_requests(TRANSCRIPT) == []
    assert not path.exists()


class FakeMiner:
    """Counts passes; can run a callback during a pass to play a hook that arrives meanwhile."""

    def __init__(self, during=None):
        self.passes = 0
        self.during = during

    def mine_file(self, transcript):
        self.passes += 1
        if self.during:
            self.during(self.passes)


def test_a_stop_during_a_pass_becomes_another_pass(monkeypatch):
    started = []
    monkeypatch.setattr(hooks, "spawn", lambda args, keep_fd=None: started.append(args))

    def hook_arrives(n):
        if n == 1:
            assert hooks.hand_off(TRANSCRIPT) is False  # the lock is ours: the hook only marks

    miner = FakeMiner(hook_arrives)
    assert passes.mine_locked(miner, TRANSCRIPT)
    assert miner.passes == 2 and started == []
    assert not locks.is_locked(TRANSCRIPT) and not os.path.exists(locks.pending_file(TRANSCRIPT))


def test_a_mark_left_while_another_miner_holds_the_lock_is_mined_by_it(monkeypatch):
    """A miner that had just released the lock took a hook's mark, found the lock taken, and stopped; the miner that
    held it had read the file before the hook's lines, found no mark after its pass, and stopped too: the lines
    waited for the next event. (Played with a thread: one miner releases while the other mines.)"""
    import threading

    marked, looked = threading.Event(), threading.Event()
    reads = []

    def during(n):  # the miner that took the lock: it read the file, then the hook's lines came and marked
        reads.append(n)
        if n == 1:
            locks.mark_pending(TRANSCRIPT)
            assert locks.try_lock(TRANSCRIPT) is None  # (the hook could not take the lock: it only marked)
            marked.set()
            assert looked.wait(10)  # the first miner looked at the mark meanwhile

    holder = FakeMiner(during)
    release = locks.release

    def released(fd):
        release(fd)
        if not marked.is_set():  # the first miner's release: the other one takes the lock and mines
            threading.Thread(target=lambda: passes.mine_locked(holder, TRANSCRIPT, wait_s=5), daemon=True).start()
            assert marked.wait(10)

    monkeypatch.setattr(locks, "release", released)
    first = passes.mine_locked(FakeMiner(), TRANSCRIPT)
    looked.set()
    assert first
    deadline = time.monotonic() + 10
    while locks.is_locked(TRANSCRIPT) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reads == [1, 2]  # the holder made a pass after the mark
    assert not os.path.exists(locks.pending_file(TRANSCRIPT))


def test_a_miner_that_cannot_get_the_lock_leaves_a_mark():
    held = locks.try_lock(TRANSCRIPT)
    try:
        miner = FakeMiner()
        assert passes.mine_locked(miner, TRANSCRIPT) is False
        assert miner.passes == 0 and os.path.exists(locks.pending_file(TRANSCRIPT))
    finally:
        locks.release(held)


def test_the_handed_down_lock_is_used_and_released():
    fd = locks.try_lock(TRANSCRIPT)
    miner = FakeMiner(lambda n: assert_locked())
    assert passes.mine_locked(miner, TRANSCRIPT, lock_fd=fd)
    assert miner.passes == 1 and not locks.is_locked(TRANSCRIPT)
    with pytest.raises(OSError):
        os.fstat(fd)


def assert_locked():
    assert locks.is_locked(TRANSCRIPT)


def test_hand_off_starts_one_miner_holding_the_lock(monkeypatch):
    seen = []

    def fake_spawn(args, keep_fd=None):
        assert locks.is_locked(TRANSCRIPT)  # held before the worker even starts
        seen.append((args, keep_fd))

    monkeypatch.setattr(hooks, "spawn", fake_spawn)
    assert hooks.hand_off(TRANSCRIPT, checkpoint=("session-a", "/home/me/shop")) is True
    args, fd = seen[0]
    assert args[:3] == ["mine", "--lock-fd", str(fd)] and args[-1] == TRANSCRIPT
    assert "--checkpoint=session-a" in args and args[-2] == "--"  # (a value starting with "-" is no option)
    assert os.path.exists(locks.pending_file(TRANSCRIPT))
    assert [r["session_id"] for r in locks.take_checkpoint_requests(TRANSCRIPT)] == ["session-a"]


def test_checkpoint_requests_are_served_after_the_pass(claude_dir, monkeypatch):
    transcript = claude_dir / "projects" / "-work-shop" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": "/work/shop",
                                      "message": {"role": "user", "content": "Ship the parser today."}}) + "\n")
    locks.request_checkpoint(str(transcript), "s1", "/work/shop")
    order = []
    original = passes.write_requested_checkpoints

    def recording(store, path, requests):
        order.append("checkpoint")
        original(store, path, requests)

    monkeypatch.setattr(passes, "write_requested_checkpoints", recording)
    with Store() as store:
        assert passes.mine_locked(FakeMiner(lambda n: order.append("mine")), str(transcript), store=store)
        body = store.checkpoint("s1")
    assert order == ["mine", "checkpoint"]
    # The session was never mined (fake miner): its project comes from the cwd of the request.
    assert body["project"] == "/work/shop" and body["task"] == ["Ship the parser today."]


def test_a_checkpoint_request_whose_write_failed_is_served_by_the_next_miner(claude_dir):
    """The request file was removed as it was taken: a store locked past the wait (or full, or a miner killed before
    the write) lost the session's last checkpoint for good, and the next session was told an older state."""
    import sqlite3

    transcript = claude_dir / "projects" / "-work-shop" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": "/work/shop",
                                      "message": {"role": "user", "content": "Ship the parser today."}}) + "\n")
    locks.request_checkpoint(str(transcript), "s1", "/work/shop")
    with Store() as store:
        store.lock_wait_s = 0.2
        holder = sqlite3.connect(store.path, timeout=0)
        holder.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the miner waits
        try:
            assert passes.mine_locked(FakeMiner(), str(transcript), store=store)
        finally:
            holder.rollback()
            holder.close()
        assert store.checkpoint("s1") is None
        assert [r["session_id"] for r in locks.take_checkpoint_requests(str(transcript))] == ["s1"]  # left, not lost
        store.lock_wait_s = 5.0
        assert passes.mine_locked(FakeMiner(), str(transcript), store=store)  # the next miner of the transcript
        assert store.checkpoint("s1")["task"] == ["Ship the parser today."]
    assert locks.take_checkpoint_requests(str(transcript)) == []


def test_a_failure_that_repeats_is_said_once_until_an_attempt_works(capsys, monkeypatch):
    """On a full disk the watcher printed the whole traceback at every attempt (each debounce, for as long as the
    disk stayed full); the README says it says so once and goes on."""
    import errno

    monkeypatch.setattr(passes, "_failures", {})  # (what this process said before)

    outcome = [OSError(errno.ENOSPC, "database or disk is full")]

    class Full:
        def mine_file(self, transcript):
            if outcome[0] is not None:
                raise outcome[0]

    for _ in range(3):
        assert passes.mine_locked(Full(), TRANSCRIPT)
    assert capsys.readouterr().err.count("database or disk is full") == 1
    outcome[0] = None
    assert passes.mine_locked(Full(), TRANSCRIPT)  # space was freed
    outcome[0] = OSError(errno.ENOSPC, "database or disk is full")
    assert passes.mine_locked(Full(), TRANSCRIPT)
    assert capsys.readouterr().err.count("Traceback") == 1  # full again: said again, once
    for transcript in (TRANSCRIPT, "/other.jsonl", TRANSCRIPT, "/other.jsonl"):  # each transcript's said once
        assert passes.mine_locked(Full(), transcript)
    err = capsys.readouterr().err
    assert err.count("Traceback") == 1 and "/other.jsonl failed" in err, err  # the other's once (the first's was)


def test_worker_command_line_checks_its_arguments(capsys):
    with pytest.raises(SystemExit):
        worker.parse_args(["mine", "--checkpoint", "s1", "a.jsonl", "b.jsonl"])
    args = worker.parse_args(["mine", "--lock-fd", "7", "--checkpoint", "s1", "--cwd", "/w", "a.jsonl"])
    assert (args.lock_fd, args.checkpoint, args.cwd, args.transcripts) == (7, "s1", "/w", ["a.jsonl"])


def test_lagging_transcripts_ignore_a_half_written_last_line(claude_dir):
    folder = claude_dir / "projects" / "-work-shop"
    folder.mkdir(parents=True)
    done = folder / "done.jsonl"
    done.write_text('{"a": 1}\n')
    growing = folder / "growing.jsonl"
    growing.write_text('{"a": 1}\n{"b": ')
    fresh = folder / "fresh.jsonl"
    fresh.write_text('{"a": 1}\n')
    with Store() as store:
        with store.atomic():
            store.set_watermark(str(done.resolve()), done.stat().st_size, 0, "")
            store.set_watermark(str(growing.resolve()), len('{"a": 1}\n'), 0, "")
        assert worker.lagging_transcripts(store, folder) == [str(fresh.resolve())]


def test_miner_mine_does_what_a_hook_asked_while_it_held_the_transcript(tmp_path, pipeline):
    """`miner mine` (a backfill) holds a transcript while the session goes on: a Stop finds the lock taken and marks
    the new lines pending, a SessionEnd asks for its checkpoint. The backfill mines them and writes it before it lets
    go, as the hooks' own miners do; nothing is left for a next session that may never come."""
    from miner.config import validated
    from miner.runtime.mine import Miner
    from tests.builders import Session

    session = Session(tmp_path / "s.jsonl", cwd="/work/shop")
    session.user("We decided to use PostgreSQL for the main database.")
    path = str(session.path.resolve())

    class Backfill(Miner):
        def mine_file(self, transcript, stop_after_uuid=None):
            summary = super().mine_file(transcript, stop_after_uuid)
            if not session.path.read_text().count("RabbitMQ"):  # the session goes on during the first pass
                session.user("We decided to use RabbitMQ for the job queue.")
                locks.mark_pending(path)  # Stop: the lock was taken
                locks.request_checkpoint(path, session.session_id, "/work/shop")  # SessionEnd
            return summary

    with Store() as store:
        summary = Backfill(store, validated({"spacy_model": None}), pipeline=pipeline).mine_paths([str(session.path)])
        texts = [m.text for m in store.list_memories(limit=10)]
        checkpoint = store.checkpoint(session.session_id)
    assert summary.files == 1 and summary.errors == []
    assert "We decided to use RabbitMQ for the job queue." in texts
    assert checkpoint is not None and checkpoint["project"] == "/work/shop"
    assert not locks.is_pending(path) and locks.take_checkpoint_requests(path) == []


def test_tidy_removes_what_ended_sessions_and_cut_short_runs_left_and_never_a_lock_or_a_mark(isolated_home):
    from miner import paths
    from miner.recall import blockcache
    from miner.recall.shown import shown_path
    from miner.runtime import tidy

    month_ago = time.time() - 31 * 86_400
    claude = paths.claude_dir()
    old = [blockcache.session_path("s-old"), shown_path("s-old"), paths.data_file("cache", "recall-s-old-12.json"),
           paths.data_file("cache", "textcat", ".bow-x.npz.12.tmp"), paths.data_file("locks", ".t.s.checkpoint.12.tmp"),
           str(claude / ".settings.json.k2j4.tmp")]  # (an install killed mid-write)
    # (a lock or a mark is never removed: whoever holds a lock is taken for a miner, and its time is when it was made)
    kept = [blockcache.session_path("s-new"), shown_path("s-new"), blockcache.startup_path("/work/shop"),
            paths.data_file("cache", "recall-terms.db"), locks.lock_file("/t/old.jsonl"),
            locks.pending_file("/t/old.jsonl"), locks.lock_file("/t/held.jsonl"), str(claude / ".other-tool.tmp")]
    for path in old + kept:
        paths.write_private(path, "{}")
    held = locks.try_lock("/t/held.jsonl")
    try:
        for path in old + kept[2:]:
            os.utime(path, (month_ago, month_ago))
        assert tidy.tidy() == len(old)
        assert not any(os.path.exists(path) for path in old) and all(os.path.exists(path) for path in kept)
        assert tidy.tidy_if_due() == 0 and os.path.exists(paths.data_file("cache", tidy.STAMP))  # ran: none left
        paths.write_private(old[0], "{}")
        os.utime(old[0], (month_ago, month_ago))
        assert tidy.tidy_if_due() == 0 and os.path.exists(old[0])  # not due again within a day
        assert tidy.tidy_if_due(now=time.time() + 2 * 86_400) == 1 and not os.path.exists(old[0])
    finally:
        locks.release(held)


def test_a_checkpoint_that_no_later_try_would_write_is_said_once_and_not_asked_again(claude_dir, monkeypatch,
                                                                                      capsys):
    """A request left for the next miner is right for a busy or full store; one whose checkpoint fails for what the
    transcript holds would be tried, and logged, by every miner of it from then on."""
    from miner.recall import checkpoint

    transcript = claude_dir / "projects" / "-work-shop" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": "/work/shop",
                                      "message": {"role": "user", "content": "Ship the parser today."}}) + "\n")
    locks.request_checkpoint(str(transcript), "s1", "/work/shop")

    def broken(*args, **kwargs):
        raise ValueError("a shape nothing foresaw")

    monkeypatch.setattr(checkpoint, "write_checkpoint", broken)
    with Store() as store:
        assert passes.mine_locked(FakeMiner(), str(transcript), store=store)
    assert "checkpoint of s1 not written: ValueError" in capsys.readouterr().err
    assert locks.take_checkpoint_requests(str(transcript)) == []


def test_a_store_locked_past_the_wait_is_one_notice_in_the_workers_log_not_a_failure(capsys):
    """A store another process kept locked for a minute left a traceback in worker.log, which `miner doctor` counts
    as a failed miner, though the next miner mined the lines: as in the hooks, it is a notice."""
    import sqlite3

    from miner.cli import doctor

    class Locked(FakeMiner):
        def mine_file(self, transcript):
            raise sqlite3.OperationalError("database is locked")

    assert passes.mine_locked(Locked(), TRANSCRIPT)
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "info: the store was busy" in said and "Traceback" not in said, said
    log = Path(os.environ["MINER_HOME"]) / "logs" / "worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(said, encoding="utf-8")
    assert list(doctor.check_worker_errors()) == [(True, "no background miner failed", "")]
