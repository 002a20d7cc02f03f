"""The SQLite store: migrations, exact dedup, evidence, sessions, checkpoints, search."""

from __future__ import annotations

import os
import sqlite3
import stat

import pytest

from miner.memory.migrations import MIGRATIONS, redaction_mark
from miner.memory.records import NewMemory
from miner.memory.store import CACHE_KIB, MMAP_BYTES, Store


def memory(text: str, **kw) -> NewMemory:
    base = dict(project="/p", category="decision", text=text, confidence=0.8, rule_id="t.rule", role="user",
                session_id="s1", transcript="/t.jsonl", entry_uuid="u1", ts="2026-01-01T00:00:00Z")
    base.update(kw)
    return NewMemory(**base)


def test_migrations_applied_once_and_recorded(tmp_path):
    path = tmp_path / "m.db"
    with Store(path) as s:
        names = [r[0] for r in s.db.execute("SELECT name FROM migrations ORDER BY name")]
        assert names == [m.__name__ for m in MIGRATIONS] + [redaction_mark()]  # (`migrations.REDACTION_MARK`)
        assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with Store(path) as s:  # reopening applies nothing new
        assert s.migrate() == []


def test_database_file_is_private(tmp_path):
    path = tmp_path / "sub" / "m.db"
    Store(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_connections_map_the_file_and_size_the_page_cache(tmp_path):
    """A big store's look-ups read pages through the map and keep their working set cached, read-only or not."""
    with Store(tmp_path / "m.db") as store:
        assert store.db.execute("PRAGMA mmap_size").fetchone()[0] == MMAP_BYTES
        assert store.db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    with Store(tmp_path / "m.db", readonly=True) as store:
        assert store.db.execute("PRAGMA mmap_size").fetchone()[0] == MMAP_BYTES


def test_exact_duplicate_merges_with_one_more_evidence_row(store):
    with store.atomic():
        first, created = store.add_memory(memory("Use pnpm for packages."))
        assert created
        # Same text after normalisation (case, markup, trailing dot), another entry.
        second, created = store.add_memory(memory("**use pnpm for packages**", entry_uuid="u2"))
    assert second == first and not created
    assert len(store.evidence(first)) == 2
    assert store.get(first).evidence_count == 2


def test_same_entry_twice_adds_no_evidence(store):
    with store.atomic():
        mid, _ = store.add_memory(memory("Use pnpm for packages."))
        store.add_memory(memory("Use pnpm for packages."))
    assert len(store.evidence(mid)) == 1


def test_second_session_raises_confidence(store):
    with store.atomic():
        mid, _ = store.add_memory(memory("Use pnpm for packages."))
    before = store.get(mid).confidence
    with store.atomic():
        store.add_memory(memory("Use pnpm for packages.", session_id="s2", entry_uuid="u9"))
    after = store.get(mid)
    assert after.session_count == 2
    assert after.confidence > before


def test_dedup_is_per_project(store):
    with store.atomic():
        a, _ = store.add_memory(memory("Use pnpm for packages."))
        b, created = store.add_memory(memory("Use pnpm for packages.", project="/other"))
    assert created and a != b


def test_failed_transaction_rolls_back(store):
    with pytest.raises(RuntimeError):
        with store.atomic():
            store.add_memory(memory("Use pnpm for packages."))
            raise RuntimeError("boom")
    assert store.list_memories() == []


def test_search_finds_words_and_cjk_and_never_raises_on_syntax(store):
    with store.atomic():
        store.add_memory(memory("The API server listens on port 3216."))
        store.add_memory(memory("数据库改用 PostgreSQL。", entry_uuid="u2"))
    assert [m.text for m, _ in store.search("which port does the server use")] == ["The API server listens on port 3216."]
    assert [m.text for m, _ in store.search("数据库")] == ["数据库改用 PostgreSQL。"]
    for hostile in ['"foo', "NEAR(", "*", "AND OR NOT", "port) OR (", "'; DROP TABLE memories; --"]:
        store.search(hostile)  # no exception
    assert store.list_memories(limit=10)


def test_watermark_roundtrip_and_seen_entries(store):
    with store.atomic():
        store.set_watermark("/t.jsonl", 120, 7, "abc", "/p")
        store.mark_seen(["u1", "u2"])
    assert store.watermark("/t.jsonl") == (120, 7, "abc")
    assert store.seen_uuids(["u1", "u3"]) == {"u1"}


def test_sessions_keep_first_project_and_span(store):
    with store.atomic():
        store.upsert_session("s1", "/p", "/p", "main", "/t.jsonl", "2026-01-02T00:00:00Z")
        store.upsert_session("s1", "/p/sub", "/p/sub", "feature", "/t.jsonl", "2026-01-01T00:00:00Z")
        store.upsert_session("s1", "/p", "/p", "", "/t.jsonl", "2026-01-03T00:00:00Z")
    row = store.session("s1")
    assert row.project == "/p"
    assert row.first_ts == "2026-01-01T00:00:00Z" and row.last_ts == "2026-01-03T00:00:00Z"
    assert row.git_branch == "feature"


def test_checkpoints(store):
    store.put_checkpoint("s1", "/p", {"task": ["build the parser"]})
    store.put_checkpoint("s2", "/p", {"task": ["write the docs"]})
    assert store.checkpoint("s1") == {"task": ["build the parser"]}
    assert store.latest_checkpoint("/p", exclude="s2") == {"task": ["build the parser"]}
    assert store.checkpoint("nope") is None


def test_readonly_store_refuses_missing_database(tmp_path):
    from miner.memory.store import StoreError

    with pytest.raises(StoreError, match="miner mine"):
        Store(tmp_path / "absent.db", readonly=True)


def test_integrity_check(store):
    assert store.integrity_ok()
    assert isinstance(store.db, sqlite3.Connection)


def _sessions(store):
    return [tuple(r) for r in store.db.execute("SELECT * FROM sessions ORDER BY session_id")]


@pytest.mark.parametrize("existing", [None, ("s1", "", "", "", "/old.jsonl", "", ""),
                                      ("s1", "/kept", "/cwd0", "dev", "/old.jsonl", "2026-01-05", "2026-01-06")])
def test_folded_session_upserts_end_as_one_upsert_per_sighting(tmp_path, existing):
    sightings = [
        ("s1", "", "", "", "/t.jsonl", ""),
        ("s1", "/p", "/p/sub", "main", "/t.jsonl", "2026-01-03"),
        ("s2", "/q", "/q", "", "/t.jsonl", "2026-01-02"),
        ("s1", "/other", "/other", "", "/t.jsonl", "2026-01-01"),
        ("s1", "/p", "/p", "feature", "/t.jsonl", "2026-01-09"),
        ("s2", "/q", "/q", "fix", "/t.jsonl", ""),
    ]
    one_by_one, folded = Store(tmp_path / "a.db"), Store(tmp_path / "b.db")
    for s in (one_by_one, folded):
        if existing:
            s.db.execute("INSERT INTO sessions (session_id, project, cwd, git_branch, transcript, first_ts, last_ts) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", existing)
    with one_by_one.atomic():
        for sighting in sightings:
            one_by_one.upsert_session(*sighting)
    with folded.atomic():
        folded.upsert_sessions(iter(sightings))
    assert _sessions(folded) == _sessions(one_by_one)


def test_evidence_from_a_new_session_raises_confidence_more(store):
    with store.atomic():
        memory_id, _ = store.add_memory(memory("Use pnpm for packages."))
        assert store.merge_evidence(memory_id, memory("Use pnpm for packages.", entry_uuid="u2"))
        assert store.merge_evidence(memory_id, memory("Use pnpm for packages.", entry_uuid="u3", session_id="s2"))
        assert not store.merge_evidence(memory_id, memory("Use pnpm for packages.", entry_uuid="u3", session_id="s2"))
    row = store.db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
    assert (row["evidence_count"], row["session_count"]) == (3, 2)
    assert row["confidence"] == pytest.approx(0.8 + 0.02 + 0.1)
