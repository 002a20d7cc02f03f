"""Every schema a released version left behind upgrades in place to the current one, its rows kept."""

from __future__ import annotations

import sqlite3

import pytest

from miner.memory import migrations
from miner.memory.store import Store

MEMORY = "We deploy the billing service with Kamal to the Hetzner box."


def schema(path) -> list[tuple]:
    db = sqlite3.connect(path)
    try:
        return sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
    finally:
        db.close()


def older_store(path, upto: int) -> None:
    """A store as a version that shipped the first `upto` migrations left it, holding one memory and its evidence."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    db.execute("BEGIN")
    for migration in migrations.MIGRATIONS[:upto]:
        migration(db)
        db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, '2025-01-01T00:00:00Z')", (migration.__name__,))
    # Columns of the first schema only: what every later one must keep.
    db.execute("""INSERT INTO memories (project, category, text, hash, keywords, first_seen, last_seen, valid_from,
                  created_at, updated_at) VALUES ('/work/billing', 'decision', ?, 'h1', 'kamal hetzner billing',
                  '2025-01-01', '2025-01-01', '2025-01-01', '2025-01-01', '2025-01-01')""", (MEMORY,))
    db.execute("INSERT INTO evidence (memory_id, session_id, text) VALUES (1, 's1', ?)", (MEMORY,))
    db.execute("COMMIT")
    db.close()


@pytest.mark.parametrize("upto", range(1, len(migrations.MIGRATIONS) + 1))
def test_a_store_left_by_any_earlier_version_upgrades_to_the_current_schema(tmp_path, upto):
    fresh = tmp_path / "fresh.db"
    Store(fresh).close()
    old = tmp_path / "old.db"
    older_store(old, upto)
    with Store(old) as store:
        applied = [row[0] for row in store.db.execute("SELECT name FROM migrations ORDER BY name")]
        assert applied == [m.__name__ for m in migrations.MIGRATIONS] + [migrations.redaction_mark()]
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
        memory = store.get(1)
        assert memory is not None and memory.text == MEMORY and memory.evidence_count == 1
    assert schema(old) == schema(fresh)
    with Store(old) as store:  # what later migrations add works on the old rows: the word index finds them
        assert [m.id for m, _ in store.search("Kamal Hetzner")] == [1]


def test_migrations_are_named_in_order_and_never_twice():
    names = [m.__name__ for m in migrations.MIGRATIONS]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert all(name.startswith(f"m{n:03d}_") for n, name in enumerate(names, 1))


def test_a_store_a_newer_version_wrote_is_read_but_never_written_and_doctor_says_why(tmp_path):
    """A miner of an older version wrote into a store a newer one had migrated, and `doctor` said all was well: a
    table whose new columns or constraints it did not know failed each pass with a traceback in the log."""
    from click.testing import CliRunner

    from miner import paths
    from miner.cli.main import main
    from miner.memory.store import StoreError

    Store().close()
    db = sqlite3.connect(paths.db_path())
    db.execute("INSERT INTO migrations (name, applied_at) VALUES ('m999_from_a_newer_version', '2027-01-01')")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="written by a newer version of transcript-miner .*m999_from_a_newer_version"):
        Store()
    with Store(readonly=True) as store:  # the hooks still read it
        assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 1 and "FAIL  " in result.output and "m999_from_a_newer_version" in result.output, \
        result.output


def test_a_miner_of_an_older_redaction_writes_no_more_into_a_store_this_version_opened(monkeypatch):
    """A second install's hooks, or a watcher started before an update, went on writing into the store after this
    version had opened and repaired it: what they stored, the current redaction hides, and nothing cleans a row once
    the repair has run. This version marks the store with its redaction, a migration older ones do not know."""
    from miner import paths
    from miner.memory import reader
    from miner.memory.store import StoreError

    Store().close()
    mark = migrations.redaction_mark()
    assert mark in reader.migrations_applied(paths.db_path())
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "REDACTION_VERSION", migrations.REDACTION_VERSION - 1)  # (as an older one reads)
        with pytest.raises(StoreError, match=f"written by a newer version of transcript-miner .*{mark}"):
            Store()
        with Store(readonly=True) as store:  # (reading stays open to it)
            assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    db = sqlite3.connect(paths.db_path())  # the mark of an older redaction is no newer version's
    db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, '2026-01-01')",
               (migrations.redaction_mark(migrations.REDACTION_VERSION - 1),))
    db.commit()
    db.close()
    Store().close()
