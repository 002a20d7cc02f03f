"""Concurrency: several `miner mine` processes and hook processes (with the miners they start) on the same
transcripts and database at once give exactly what one sequential run gives, and no lock error reaches anyone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from miner import paths
from miner.memory.store import Store
from miner.runtime import watch
from tests.test_crash import snapshot
from tests.test_hooks import Session, hook_log_lines, wait_for_workers, wait_until
from tests.test_watch import MINER

TOPICS = {
    "billing": [
        ("Set up the billing database.", "We'll use PostgreSQL instead of MySQL for the billing database."),
        ("Which queue?", "Let's go with RabbitMQ for the invoice queue."),
        ("Tests?", "Please always run the billing tests before you push."),
        ("Anything left?", "TODO: add retries to the invoice mailer."),
    ],
    "frontend": [
        ("Package manager?", "Let's go with pnpm as the package manager for the frontend."),
        ("Styling?", "We decided to use Tailwind for the frontend styles."),
        ("Commits?", "I prefer small commits with a descriptive message."),
    ],
    "search": [
        ("Search engine?", "We'll use Meilisearch for the product search."),
        ("Cache?", "We'll use Redis for the session cache."),
        ("Docs?", "TODO: write the migration guide for the v2 search API."),
    ],
}


# What mining produces; checkpoints and recall counts come from the hooks' other duties.
COMPARED = {"kinds": ("memory", "wording", "evidence", "link", "session"), "ignore": ("recall_count",)}


@pytest.fixture(autouse=True)
def no_stray_workers():
    yield
    wait_for_workers()


def write_sessions(tmp_path) -> list[Session]:
    sessions = []
    for name, turns in TOPICS.items():
        cwd = tmp_path / "work" / name
        cwd.mkdir(parents=True)
        session = Session(cwd)
        for _ in range(3):  # long enough that miners overlap on the same batches
            for request, reply in turns:
                session.turn(request, reply, with_tool=True)
                session.user(reply)
        sessions.append(session)
    return sessions


def cli(*args: str, home: str | None = None) -> subprocess.Popen:
    env = dict(os.environ)
    if home:
        env["MINER_HOME"] = home
    return subprocess.Popen([sys.executable, "-m", "miner.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def hook(event: str, payload: bytes) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "miner.hooks", event], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    proc.stdin.write(payload)
    proc.stdin.close()
    proc.stdin = None  # written and closed: communicate() must not flush it again
    return proc


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=180)
    return proc.returncode, err.decode("utf-8", "replace")


def test_many_miners_and_hooks_at_once_equal_one_sequential_run(tmp_path, claude_dir):
    sessions = write_sessions(tmp_path)

    # The reference: one sequential run in a data folder of its own.
    reference_home = str(tmp_path / "reference-home")
    code, err = finish(cli("mine", "--all", "-q", home=reference_home))
    assert code == 0, err
    with Store(Path(reference_home) / paths.DB_NAME) as reference:
        expected = snapshot(reference, **COMPARED)
    assert len(expected) > 10

    # Everyone at once: a watcher, three full miners, two Stop hooks and a SessionEnd per session, a SessionStart.
    watcher = subprocess.Popen([*MINER, "watch", "--debounce", "0.1"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=dict(os.environ))
    try:
        # Up and scanning (it mines what it found while the others start).
        wait_until(lambda: (watch.read_status() or {}).get("pid") == watcher.pid or watcher.poll() is not None,
                   timeout=60, what="the watcher to start")
        procs = [cli("mine", "--all", "-q") for _ in range(3)]
        hooks = []
        for session in sessions:
            hooks += [hook("stop", session.payload("stop.json")) for _ in range(2)]
            hooks.append(hook("session-end", session.payload("session-end.json")))
        hooks.append(hook("session-start", sessions[0].payload("session-start.startup.json")))
        # Readers of the whole store while it is written: a backup and an export.
        readers = [subprocess.Popen([*MINER, "backup", str(tmp_path / "during.db")], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=dict(os.environ)),
                   subprocess.Popen([*MINER, "export", "-o", str(tmp_path / "during.jsonl")], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=dict(os.environ))]
        results = [finish(p) for p in procs + hooks + readers]
        wait_for_workers(timeout=120)
    finally:
        if watcher.poll() is None:
            watcher.send_signal(signal.SIGTERM)  # it finishes the transcript it is mining, then exits
        watcher_result = finish(watcher)
    results.append(watcher_result)
    assert watch.read_status()["errors"] == 0

    for code, err in results:
        assert code == 0, err
        assert "locked" not in err and "Traceback" not in err, err
    assert hook_log_lines() == []
    for log in paths.logs_dir().glob("*.log") if paths.logs_dir().is_dir() else []:
        text = log.read_text(encoding="utf-8", errors="replace")
        assert "database is locked" not in text and "Traceback" not in text, f"{log.name}:\n{text}"

    with Store(tmp_path / "during.db") as copy:
        assert copy.integrity_ok()
    with Store() as store:
        assert store.integrity_ok()
        assert snapshot(store, **COMPARED) == expected
        duplicates = store.db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM evidence GROUP BY memory_id, entry_uuid HAVING COUNT(*) > 1)"
        ).fetchone()[0]
        assert duplicates == 0
        for session in sessions:
            assert store.watermark(str(session.transcript.resolve()))[0] == session.transcript.stat().st_size


def test_two_miners_reading_the_same_entries_at_once_mine_them_once(tmp_path, pipeline):
    """A resumed session's file repeats the entries of the session it resumes, under their uuids. One miner reads
    the resumed copy while another mines the original and commits first: the copy's entries are replays, as when
    the two run one after the other; no session row is made of them and no prompt counted twice."""
    from miner.config import validated
    from miner.memory.dedup import Deduper
    from miner.runtime.mine import Miner
    from tests.builders import Session as Transcript

    original = Transcript(tmp_path / "s1.jsonl", cwd="/work/shop", session_id="s-1")
    for n in range(6):
        original.user(f"We decided to keep the retry budget of worker {n} at {n + 2} attempts.")
    copy = tmp_path / "s2.jsonl"
    copy.write_text(original.path.read_text(encoding="utf-8").replace('"s-1"', '"s-2"'), encoding="utf-8")
    config = validated({"spacy_model": None})
    prepare = Deduper.prepare

    def the_other_miner_commits_first(self, texts):  # after this batch was read, before its write lock
        Deduper.prepare = prepare
        with Store() as other:
            Miner(other, config, pipeline=pipeline).mine_file(original.path)
        return prepare(self, texts)

    Deduper.prepare = the_other_miner_commits_first
    try:
        with Store() as store:
            summary = Miner(store, config, pipeline=pipeline).mine_file(copy)
            prompts = dict(store.db.execute("SELECT session_id, user_prompts FROM sessions").fetchall())
            replayed = store.db.execute("SELECT COALESCE(SUM(value), 0) FROM counters WHERE name = 'entries_replayed'"
                                        ).fetchone()[0]
            evidence = store.db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]
    finally:
        Deduper.prepare = prepare
    assert prompts == {"s-1": 6}
    assert summary.replayed == 6 and replayed == 6 and summary.new == 0
    assert evidence == 6
