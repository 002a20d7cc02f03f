"""A simulated Claude Code session driven through the real hooks, as separate processes.

Turns are appended to $CLAUDE_CONFIG_DIR/projects/<encoded cwd>/<session>.jsonl
the way Claude Code writes them; Stop fires after each turn, then PreCompact,
the compaction entries, SessionStart(compact) — whose block must bring back
the decisions and the current task — our own block coming back as an
attachment (never mined), SessionEnd, and finally a new session (startup) in
the same project that gets the project's memories.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_hooks import Session, additional_context, hook_log_lines, memory_texts, run_hook, wait_for_workers

from miner import paths
from miner.memory.store import Store
from miner.worker import running_workers

DECISIONS = [
    "We'll use PostgreSQL instead of MySQL for the database.",
    "Let's go with pnpm as the package manager.",
]
CURRENT_TASK = "Now add an export of the invoices to CSV, one row per line item."


@pytest.fixture(autouse=True)
def no_stray_workers():
    yield
    wait_for_workers()


def test_a_session_survives_compaction_and_the_next_session_remembers(tmp_path, claude_dir):
    cwd = tmp_path / "work" / "billing-service"
    cwd.mkdir(parents=True)
    session = Session(cwd)

    # Turns, each followed by Stop (Claude Code fires it asynchronously; it must return at once).
    session.turn("Set up the database layer for the billing service.", DECISIONS[0], with_tool=True)
    assert run_hook("stop", session.payload("stop.json")).returncode == 0
    session.turn("Which package manager should the frontend use?", DECISIONS[1])
    assert run_hook("stop", session.payload("stop.json")).returncode == 0
    session.turn(CURRENT_TASK, "I'll start with the exporter module.", with_tool=True)
    stop = run_hook("stop", session.payload("stop.json"))
    assert stop.returncode == 0 and stop.stdout == b""

    # PreCompact: writes the checkpoint at once and hands the new lines to a background miner.
    assert run_hook("pre-compact", session.payload("pre-compact.auto.json")).returncode == 0
    wait_for_workers()  # the compaction itself takes longer than the miner PreCompact hands the lines to
    texts = memory_texts()
    assert all(d in texts for d in DECISIONS), texts
    session.compaction("This session is being continued from a previous conversation. Summary: billing work.")

    # SessionStart after the compaction: the block opens with the session's latest words, the current task last.
    block = additional_context(run_hook("session-start", session.payload("session-start.compact.json")))
    assert all(d in block for d in DECISIONS), block
    opening = block.split("\n## ", 2)[1].split("\n</", 1)[0].splitlines()
    assert opening[0] == "Before the compaction: the session's latest words"
    assert opening[-2:] == [f"- the user: {CURRENT_TASK}", "- the assistant: I'll start with the exporter module."]

    # Our own block comes back in the transcript: as attachments, and quoted in a prompt.
    wait_for_workers()
    with Store(readonly=True) as store:
        memories_before = store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        evidence_before = store.db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]
    attachments = session.hook_context(block, "compact")
    session.user(f"Earlier you were told:\n{block}\nThanks.")
    session.assistant("Understood.")
    assert run_hook("stop", session.payload("stop.json")).returncode == 0

    # SessionEnd: detached final mining, then the session's checkpoint.
    assert run_hook("session-end", session.payload("session-end.json")).returncode == 0
    assert running_workers(Path(os.environ["MINER_HOME"]))  # it never waits for the miner, still at work
    wait_for_workers()
    with Store(readonly=True) as store:
        assert store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == memories_before
        assert store.db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0] == evidence_before
        uuids = {a["uuid"] for a in attachments}
        assert not store.db.execute(
            f"SELECT 1 FROM evidence WHERE entry_uuid IN ({','.join('?' * len(uuids))})", tuple(uuids)).fetchone()
        checkpoint = store.checkpoint(session.session_id)
        assert store.watermark(str(session.transcript.resolve()))[0] == session.transcript.stat().st_size
    assert CURRENT_TASK in checkpoint["task"] and checkpoint["task"][-1] == "Earlier you were told: Thanks."
    assert len(checkpoint["decisions"]) >= 2

    # A new session in the same project gets the project's memories.
    later = Session(cwd)
    block = additional_context(run_hook("session-start", later.payload("session-start.startup.json")))
    assert all(d in block for d in DECISIONS), block
    assert "current task" not in block.lower()
    assert hook_log_lines() == []
    assert paths.db_path().exists()
