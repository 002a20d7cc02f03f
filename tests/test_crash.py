"""Crash safety: a miner SIGKILLed at random moments, many times, leaves a sound database, and a rerun
yields exactly what one uninterrupted run yields.

The mining child is forked from the test process (spaCy already loaded), so
each iteration costs milliseconds, not a fresh interpreter. Batches are made
tiny so that one file is many transactions; in half of the runs the child
pauses inside its transaction, so that kills land mid-transaction too.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import sqlite3
import time

import pytest

from miner.config import validated
from miner.memory import portable
from miner.memory.store import Store
from miner.runtime import mine as mine_mod
from miner.runtime.mine import Miner
from tests.builders import Session

KILLS = 20
SEED = int(os.environ.get("MINER_CRASH_SEED", "20261130"))

LINES = [
    ("user", "We'll use PostgreSQL instead of MySQL for the main database."),
    ("assistant", "Understood. The API server listens on port 8080 in development."),
    ("user", "Please always run the linter before you commit."),
    ("user", "TODO: add an index on orders.created_at before the launch."),
    ("user", "Let's go with pnpm as the package manager for the frontend."),
    ("assistant", "Noted: the staging database is refreshed every night at 02:00 UTC."),
    ("user", "We decided to deploy with Docker Compose on the staging host."),
    ("user", "I prefer small commits with a descriptive message."),
    ("user", "Actually, let's use Yarn instead of pnpm as the package manager for the frontend."),
    ("user", "We'll use Redis for the session cache."),
    ("assistant", "The integration tests take about four minutes on CI."),
    ("user", "TODO: write the migration guide for the v2 API."),
]


def build_transcript(tmp_path):
    session = Session(tmp_path / "projects" / "crash" / "s1.jsonl", cwd="/work/crash")
    for round_ in range(5):
        for role, text in LINES:
            text = text if round_ == 0 else text.replace(".", f" (round {round_}).", 1)
            (session.user if role == "user" else session.assistant)(text)
            session.tool_result("x" * 300)  # bytes between prose, as real transcripts have
    return str(session.path.resolve())


def snapshot(store: Store, ignore: tuple[str, ...] = (), kinds: tuple[str, ...] = ()) -> list:
    """The store's content, with ids replaced by texts and wall-clock stamps left out."""
    records = list(portable.iter_export(store))
    texts = {r["id"]: r["text"] for r in records if r["record"] == "memory"}
    volatile = {"id", "created_at", "updated_at", "last_recalled", *ignore}
    out = []
    for record in records[1:]:
        if kinds and record["record"] not in kinds:
            continue
        item = {k: v for k, v in record.items() if k not in volatile}
        for key in ("memory_id", "src", "dst"):
            if key in item:
                item[key] = texts[item[key]]
        if record["record"] == "memory" and record["state"] == "superseded":
            item.pop("valid_to", None)  # closed "now" when no later timestamp is known
        if record["record"] == "checkpoint":  # its body: the time it was written, and memories by id
            body = {k: v for k, v in json.loads(item["body"]).items() if k not in volatile}
            for key in ("decisions", "todos"):
                body[key] = sorted(texts.get(i, "") for i in body.get(key, []))
            item["body"] = json.dumps(body, sort_keys=True)
        out.append(sorted(item.items(), key=lambda kv: kv[0]))
    return sorted(map(repr, out))


def _child(db_path: str, transcript: str, pause: bool, pipeline) -> None:
    # A fresh connection in the child: never share the parent's.
    if pause:
        original = Store.set_watermark

        def slow_watermark(self, *args, **kwargs):
            time.sleep(0.01)  # inside the batch's transaction, after its rows
            return original(self, *args, **kwargs)

        Store.set_watermark = slow_watermark
    with Store(db_path) as store:
        Miner(store, validated({"spacy_model": None}), pipeline=pipeline).mine_file(transcript)
    os._exit(0)


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(mine_mod, "BATCH_BYTES", 900)


def test_sigkill_at_random_moments_then_rerun_equals_one_clean_run(tmp_path, pipeline, small_batches):
    transcript = build_transcript(tmp_path)
    with Store(tmp_path / "reference.db") as reference:
        Miner(reference, validated({"spacy_model": None}), pipeline=pipeline).mine_file(transcript)
        expected = snapshot(reference)
    assert len(expected) > 20

    # How long an uninterrupted child takes, start to exit: kills are drawn across that span.
    context = multiprocessing.get_context("fork")
    start = time.monotonic()
    child = context.Process(target=_child, args=(str(tmp_path / "timing.db"), transcript, False, pipeline))
    child.start()
    child.join()
    clean_run_s = time.monotonic() - start
    assert child.exitcode == 0

    rng = random.Random(SEED)
    db_path = str(tmp_path / "killed.db")
    Store(db_path).close()  # created (and migrated) once, as an installed miner's store would be
    killed_mid_run = 0
    for iteration in range(KILLS):
        pause = iteration % 2 == 1
        child = context.Process(target=_child, args=(db_path, transcript, pause, pipeline))
        child.start()
        # Each run resumes from the last committed batch; short delays let a few kills hit each stretch.
        time.sleep(rng.uniform(0, clean_run_s * (0.3 if pause else 0.2)))
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        killed_mid_run += child.exitcode == -signal.SIGKILL
        db = sqlite3.connect(db_path)
        try:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", f"seed {SEED}, kill {iteration}"
            assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        finally:
            db.close()
    print(f"clean child run {clean_run_s:.2f}s, {killed_mid_run} of {KILLS} children killed while mining")
    assert killed_mid_run >= KILLS // 4, "kills should land while the child was still mining"

    with Store(db_path) as store:
        Miner(store, validated({"spacy_model": None}), pipeline=pipeline).mine_file(transcript)
        assert store.integrity_ok()
        assert snapshot(store) == expected, f"seed {SEED}"
        # Every memory exactly once per project and text, every evidence row once.
        assert store.db.execute(
            "SELECT COUNT(*) FROM (SELECT entry_uuid, text FROM evidence GROUP BY memory_id, entry_uuid, text "
            "HAVING COUNT(*) > 1)").fetchone()[0] == 0
        assert store.watermark(transcript)[0] == os.path.getsize(transcript)
