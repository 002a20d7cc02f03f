"""Golden extraction: each synthetic transcript yields exactly the memories in its `.expected.json`.

Mining runs with the small, stable ruleset in `fixtures/rules/golden.yaml`, so
golden files change only when reading, cleaning or refinement changes.

Regenerate after an intended change, then read every diff by eye:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden.py

Every sentence a fixture hides in a place that must never be mined (thinking,
tool input and output, compact summaries, our own recall block, meta entries,
wrappers, attachments, titles, queue operations, subagent briefs) names
"Cassandra", so a regression shows up even in a carelessly regenerated file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from miner import config as config_mod
from miner.extract import rule_matching
from miner.extract import rules as rules_mod
from miner.memory.store import Store
from miner.runtime.mine import Miner

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"
GOLDEN_RULES = FIXTURES / "rules" / "golden.yaml"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
CANARY = "cassandra"

GOLDEN_CASES = sorted(p for p in TRANSCRIPTS.glob("*.jsonl") if p.with_name(p.stem + ".expected.json").exists())


def expected_path(transcript: Path) -> Path:
    return transcript.with_name(transcript.stem + ".expected.json")


@pytest.fixture(scope="module")
def ruleset() -> rule_matching.RuleSet:
    return rules_mod.load_rules([GOLDEN_RULES])


@pytest.fixture
def store(tmp_path):
    db = Store(tmp_path / "m.db")
    yield db
    db.close()


@pytest.fixture
def miner(store, ruleset, pipeline) -> Miner:
    return Miner(store, config_mod.load(), ruleset=ruleset, pipeline=pipeline)


def normalised_memories(store: Store) -> list[dict]:
    """Every stored memory without ids or times, in a stable order."""
    rows = store.db.execute("SELECT category, text, role, entry_uuid FROM memories").fetchall()
    memories = [{"category": r["category"], "text": r["text"], "role": r["role"], "entry_uuid": r["entry_uuid"]}
                for r in rows]
    return sorted(memories, key=lambda m: (m["entry_uuid"], m["category"], m["text"]))


def evidence_by_memory(store: Store) -> dict[str, int]:
    rows = store.db.execute(
        "SELECT m.text AS text, COUNT(e.id) AS n FROM memories m LEFT JOIN evidence e ON e.memory_id = m.id GROUP BY m.id"
    )
    return {r["text"]: r["n"] for r in rows}


def test_there_are_golden_cases():
    names = {p.name for p in GOLDEN_CASES}
    assert {"entry_types.jsonl", "compaction.jsonl", "chinese.jsonl", "old_format_1_0.jsonl"} <= names


def test_golden_rules_examples_hold(ruleset):
    assert rules_mod.check_examples(ruleset) == []
    for rule in ruleset.rules:
        assert rule.match_examples and rule.no_match_examples, rule.id


@pytest.mark.parametrize("transcript", GOLDEN_CASES, ids=lambda p: p.stem)
def test_golden_extraction(transcript, miner, store):
    summary = miner.mine_file(transcript)
    assert summary.errors == []
    got = normalised_memories(store)
    golden = expected_path(transcript)
    if UPDATE:
        golden.write_text(json.dumps(got, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        pytest.skip(f"rewrote {golden.name}: review the diff before committing")
    expected = json.loads(golden.read_text(encoding="utf-8"))
    assert got == expected


@pytest.mark.parametrize("transcript", GOLDEN_CASES, ids=lambda p: p.stem)
def test_golden_files_are_well_formed(transcript):
    """Golden files hold only real entries' uuids, known categories and roles, and no canary."""
    expected = json.loads(expected_path(transcript).read_text(encoding="utf-8"))
    uuids = set()
    for line in transcript.read_bytes().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("uuid"), str):
            uuids.add(entry["uuid"])
    assert expected == sorted(expected, key=lambda m: (m["entry_uuid"], m["category"], m["text"]))
    for memory in expected:
        assert set(memory) == {"category", "text", "role", "entry_uuid"}
        assert memory["category"] in ("decision", "preference", "fact", "todo")
        assert memory["role"] in ("user", "assistant")
        assert memory["entry_uuid"] in uuids
        assert CANARY not in memory["text"].lower()


@pytest.mark.parametrize("transcript", GOLDEN_CASES, ids=lambda p: p.stem)
def test_nothing_from_hidden_places_is_mined(transcript, miner, store):
    """Independent of the golden file: no canary sentence may reach the store."""
    miner.mine_file(transcript)
    leaked = [m["text"] for m in normalised_memories(store) if CANARY in m["text"].lower()]
    assert leaked == []


@pytest.mark.parametrize("transcript", GOLDEN_CASES, ids=lambda p: p.stem)
def test_mining_twice_adds_nothing(transcript, miner, store):
    first = miner.mine_file(transcript)
    count = len(normalised_memories(store))
    evidence = evidence_by_memory(store)
    assert first.new == count
    second = miner.mine_file(transcript)
    assert second.new == 0
    assert second.merged == 0
    assert len(normalised_memories(store)) == count
    assert evidence_by_memory(store) == evidence


def test_reading_again_from_the_start_adds_nothing(miner, store):
    """A lost watermark means a full re-read; entries already mined are recognised by uuid."""
    transcript = TRANSCRIPTS / "wrappers.jsonl"
    miner.mine_file(transcript)
    before = normalised_memories(store)
    evidence = evidence_by_memory(store)
    with store.atomic() as db:
        db.execute("DELETE FROM watermarks")
    again = miner.mine_file(transcript)
    assert again.new == 0
    assert again.replayed > 0
    assert normalised_memories(store) == before
    assert evidence_by_memory(store) == evidence


def test_resumed_session_adds_no_evidence_for_replayed_entries(miner, store):
    original = TRANSCRIPTS / "resumed_original.jsonl"
    continued = TRANSCRIPTS / "resumed_continued.jsonl"
    miner.mine_file(original)
    before = normalised_memories(store)
    evidence_before = evidence_by_memory(store)
    assert len(before) == 3

    summary = miner.mine_file(continued)

    assert summary.replayed == 4  # three memory-bearing turns and "Noted."
    assert summary.new == 2
    assert summary.merged == 0
    after = normalised_memories(store)
    new = [m for m in after if m not in before]
    assert {m["entry_uuid"] for m in new} == {
        "f6000000-0000-4000-8000-000000000005",
        "f6000000-0000-4000-8000-000000000006",
    }
    evidence_after = evidence_by_memory(store)
    for text, count in evidence_before.items():
        assert evidence_after[text] == count, text
    # What the replayed entries said keeps the provenance of the session that said it first.
    sessions = {r["session_id"] for r in store.db.execute(
        "SELECT session_id FROM memories WHERE entry_uuid IN (?, ?, ?)",
        ("f6000000-0000-4000-8000-000000000001", "f6000000-0000-4000-8000-000000000002",
         "f6000000-0000-4000-8000-000000000003"))}
    assert sessions == {"6f000000-0000-4000-8000-00000000f006"}


def test_partial_last_line_is_mined_once_completed(tmp_path, miner, store):
    transcript = tmp_path / "partial.jsonl"
    shutil.copyfile(TRANSCRIPTS / "partial_last_line.jsonl", transcript)
    first = miner.mine_file(transcript)
    assert first.new == 2
    assert all("Terraform changes" not in m["text"] for m in normalised_memories(store))

    with transcript.open("ab") as handle:
        handle.write(b"\n")
    second = miner.mine_file(transcript)

    assert second.new == 1
    assert {"category": "preference", "text": "Never apply Terraform changes without a plan review.", "role": "user",
            "entry_uuid": "a7000000-0000-4000-8000-000000000003"} in normalised_memories(store)
