"""Typed records from a real store, and the history stretches `recall.history` takes from its two queries."""

from __future__ import annotations

import json
import pickle

import pytest

from miner.memory.dedup import Deduper
from miner.memory.records import (
    ArchivedUnit,
    Evidence,
    Link,
    MemoryHead,
    NewMemory,
    ProjectSummary,
    RecallLogEntry,
    Session,
    StoredMemory,
    Wording,
)
from miner.recall.history import history_ids


def new(text: str, n: int, **kw) -> NewMemory:
    fields = dict(project="/p", category="decision", text=text, confidence=0.8, rule_id="t.rule", role="user",
                  session_id=f"s{n}", transcript="/t.jsonl", entry_uuid=f"u{n}", ts=f"2026-01-{1 + n:02d}T00:00:00Z")
    fields.update(kw)
    return NewMemory(**fields)


def test_queries_return_records_with_their_fields(store):
    with store.atomic():
        store.upsert_session("s1", "/p", "/p/sub", "main", "/t.jsonl", "2026-01-02T00:00:00Z")
        old = Deduper(store).add(new("Use MySQL for the database.", 1, subject="database", value="MySQL"))
        newer = Deduper(store).add(new("Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL"))
        store.archive_units([("/p", "s1", "/t.jsonl", "u1", 0, "user", "2026-01-02T00:00:00Z",
                              "We compared MySQL and PostgreSQL at length.", "", 0.7)])
    store.log_recall("/p", "startup", "the database", [newer.memory_id], [], [old.memory_id], 120, 1.5)

    memory = store.get(newer.memory_id)
    assert isinstance(memory, StoredMemory) and (memory.text, memory.state) == ("Use PostgreSQL for the database.",
                                                                               "active")
    assert memory.tentative is False and memory.pinned is False and memory.subject == "database"
    (evidence,) = store.evidence(newer.memory_id)
    assert isinstance(evidence, Evidence)
    assert (evidence.memory_id, evidence.session_id, evidence.entry_uuid, evidence.role) == (newer.memory_id, "s2",
                                                                                            "u2", "user")
    (link,) = store.links(old.memory_id)
    assert isinstance(link, Link) and (link.src, link.dst, link.kind, link.was) == (newer.memory_id, old.memory_id,
                                                                                   "supersedes", "MySQL")
    assert store.supersede_links([old.memory_id]) == [link] and store.supersede_pairs() == [(link.src, link.dst)]
    session = store.session("s1")
    assert isinstance(session, Session) and (session.project, session.cwd, session.last_ts) == (
        "/p", "/p/sub", "2026-01-02T00:00:00Z")
    assert store.transcript_sessions("/t.jsonl") == [session] == [store.last_transcript_session("/t.jsonl")]
    (unit, rank), = store.search_archive("compared MySQL")
    assert isinstance(unit, ArchivedUnit) and unit.entry_uuid == "u1" and unit.worth == 0.7 and rank < 0
    last = store.last_recall("/p")
    assert isinstance(last, RecallLogEntry) and last.situation == "startup" and json.loads(last.shown) == [
        newer.memory_id]
    assert store.projects() == [ProjectSummary("/p", 1, memory.last_seen)]
    assert store.find_exact("/p", "b2:nothing") is None
    assert [m.id for m, _ in store.search("PostgreSQL")] == [newer.memory_id]


def test_a_reworded_memory_keeps_its_earlier_wording_as_a_record(store):
    with store.atomic():
        first = Deduper(store).add(new("We'll use PostgreSQL as the main database.", 1))
        Deduper(store).add(new("We will use PostgreSQL as our main database.", 2))
    (wording,) = store.wordings(first.memory_id)
    assert isinstance(wording, Wording) and wording.text == "We'll use PostgreSQL as the main database."


def test_records_are_read_only_values_that_pickle_and_read_by_name(store):
    with store.atomic():
        memory_id, _ = store.add_memory(new("Use pnpm for packages.", 1))
    memory = store.get(memory_id)
    with pytest.raises(AttributeError):
        memory.text = "changed"
    assert memory == store.get(memory_id) and hash(memory) == hash(store.get(memory_id))
    assert pickle.loads(pickle.dumps(memory)) == memory
    assert memory.text == "Use pnpm for packages."
    with pytest.raises(TypeError):  # fields are attributes; a record is not a mapping
        memory["text"]
    assert Session("s", "/p", "/p", "", "/t", "", "", 0).as_dict()["session_id"] == "s"
    with pytest.raises(TypeError):
        NewMemory(project="/p")


def test_a_record_read_from_values_checks_their_number_and_makes_its_flags_booleans(store):
    with store.atomic():
        memory_id, _ = store.add_memory(new("Use pnpm for packages.", 1))
        store.set_pinned(memory_id, True)
    values = store.get(memory_id).values()
    memory = StoredMemory.from_values(tuple(int(v) if isinstance(v, bool) else v for v in values))
    assert memory.pinned is True and memory.tentative is False and memory == store.get(memory_id)
    (head,) = store.memories_by_id([memory_id], record=MemoryHead)
    assert (head.id, head.category, head.pinned, head.tentative) == (memory_id, "decision", True, False)
    with pytest.raises(TypeError, match="StoredMemory takes 27 values, got 2"):
        StoredMemory.from_values((1, "/p"))
    assert Session.from_values(("s", "/p", "/p", "", "/t", "", "", 0)).session_id == "s"
    assert NewMemory(**{**new("x", 1).as_dict(), "scope": "global"}).scope == "global"


# --- history stretches ----------------------------------------------------------------------------------


def stretches_by_sql(store, project: str, stretches: int, per_stretch: int) -> list[int]:
    """The stretches as the store used to compute them, in one piece (the reference)."""
    stamps = [r[0] for r in store.db.execute(
        "SELECT last_ts FROM sessions WHERE project = ? AND last_ts <> '' ORDER BY last_ts", (project,))]
    if len(stamps) < 2:
        return []
    count = min(stretches, len(stamps))
    ends = [stamps[int((i + 1) * len(stamps) / count) - 1] for i in range(count - 1)] + ["\uffff"]
    ranges = [(low, high) for low, high in zip([""] + ends, ends) if low < high]
    ids: dict[int, None] = {}
    for low, high in ranges:
        for category, role in (("decision", ""), ("fact", ""), ("decision", "user"), ("fact", "user")):
            rows = store.db.execute(
                "SELECT id FROM memories WHERE project = ? AND state = 'active' AND category = ? "
                "AND last_seen > ? AND last_seen <= ?" + (" AND role = ?" if role else "")
                + " ORDER BY last_seen DESC, id DESC LIMIT ?",
                (project, category, low, high, *((role,) if role else ()), per_stretch))
            ids.update((row[0], None) for row in rows)
    return list(ids)


def test_history_ids_are_the_stretches_the_store_gave(store):
    categories = ("decision", "fact", "preference", "todo")
    with store.atomic():
        for n in range(13):
            when = f"2025-{1 + n % 12:02d}-{1 + n:02d}T10:00:00Z"
            store.upsert_session(f"s{n}", "/p", "/p", "main", f"/t{n}.jsonl", when)
            for k in range(7):
                store.add_memory(new(f"Statement {k} of session {n} about the {categories[k % 4]} of the widget.",
                                     n * 10 + k, category=categories[k % 4], session_id=f"s{n}",
                                     role="user" if k % 3 else "assistant", ts=f"{when[:11]}09:{k:02d}:00Z"))
        store.upsert_session("s-empty", "/p", "/p", "main", "/t-empty.jsonl", "")
        store.upsert_session("o1", "/other", "/other", "main", "/o.jsonl", "2025-03-03T00:00:00Z")
        store.set_state(3, "forgotten", "test")
    for stretches, per_stretch in ((16, 2), (4, 1), (3, 5), (1, 2), (40, 3)):
        expected = stretches_by_sql(store, "/p", stretches, per_stretch)
        assert history_ids(store, "/p", stretches, per_stretch) == expected
    assert history_ids(store, "/p", 4, 1)  # the case is not empty
    assert history_ids(store, "/other") == [] and history_ids(store, "/nowhere") == []
