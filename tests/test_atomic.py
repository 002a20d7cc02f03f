"""`Store.atomic()` on a real SQLite file: one transaction at the outermost level, savepoints inside it."""

from __future__ import annotations

import sqlite3

import pytest

from miner.memory import store as store_mod
from miner.memory.store import Store


def counter(store: Store, name: str) -> int:
    return store.counters().get(name, 0)


def other_connection_sees(path, name: str) -> int:
    """What a second connection reads: only what was committed."""
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return row[0] if row else 0
    finally:
        db.close()


def test_nested_levels_commit_once_at_the_outermost(tmp_path):
    path = tmp_path / "m.db"
    with Store(path) as store:
        with store.atomic():
            store.bump("a")
            with store.atomic():
                store.bump("a")
                with store.atomic():
                    store.bump("a")
                assert store.db.in_transaction
            assert other_connection_sees(path, "a") == 0  # nothing is visible before the outermost level ends
        assert not store.db.in_transaction
        assert other_connection_sees(path, "a") == 3


def test_an_inner_failure_caught_by_the_outer_level_undoes_only_the_inner_part(tmp_path):
    path = tmp_path / "m.db"
    with Store(path) as store:
        with store.atomic():
            store.bump("outer")
            with pytest.raises(ValueError):
                with store.atomic():
                    store.bump("inner")
                    raise ValueError("inner part fails")
            assert counter(store, "inner") == 0
            store.bump("outer")
        assert (other_connection_sees(path, "outer"), other_connection_sees(path, "inner")) == (2, 0)
        with store.atomic():  # the store is usable afterwards, and savepoints still nest
            with store.atomic():
                store.bump("inner")
        assert other_connection_sees(path, "inner") == 1


def test_an_outer_failure_undoes_everything_inner_levels_did(tmp_path):
    path = tmp_path / "m.db"
    with Store(path) as store:
        with pytest.raises(RuntimeError):
            with store.atomic():
                store.bump("outer")
                with store.atomic():
                    store.bump("inner")
                raise RuntimeError("outer part fails")
        assert not store.db.in_transaction
        assert counter(store, "outer") == counter(store, "inner") == 0
        assert other_connection_sees(path, "outer") == 0


def test_a_busy_database_is_retried_until_the_other_writer_is_done(tmp_path, monkeypatch):
    path = tmp_path / "m.db"
    with Store(path) as writer, Store(path) as waiting:
        writer.db.execute("BEGIN IMMEDIATE")
        sleeps = []

        def sleep(seconds):
            sleeps.append(seconds)
            if len(sleeps) == 2:
                writer.db.execute("COMMIT")  # the other process finishes while we wait

        monkeypatch.setattr(store_mod.time, "sleep", sleep)
        with waiting.atomic():
            waiting.bump("after")
        assert sleeps == [store_mod.LOCK_POLL_S] * 2  # asked again at once, not after SQLite's growing sleeps
        assert counter(writer, "after") == 1
        assert waiting.db.execute("PRAGMA busy_timeout").fetchone()[0] == store_mod.BUSY_TIMEOUT_MS


def test_a_database_busy_for_too_long_raises_after_the_last_attempt(tmp_path, monkeypatch):
    path = tmp_path / "m.db"
    with Store(path) as writer, Store(path) as waiting:
        writer.db.execute("BEGIN IMMEDIATE")
        clock, sleeps = [0.0], []

        def sleep(seconds):  # a clock of its own: the test does not wait a minute
            sleeps.append(seconds)
            clock[0] += seconds

        monkeypatch.setattr(store_mod.time, "sleep", sleep)
        monkeypatch.setattr(store_mod.time, "monotonic", lambda: clock[0])
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            with waiting.atomic():
                waiting.bump("never")
        assert store_mod.WRITE_LOCK_WAIT_S <= sum(sleeps) < store_mod.WRITE_LOCK_WAIT_S + 0.1
        assert set(sleeps) == {store_mod.LOCK_POLL_S, 0.02} and not waiting.db.in_transaction
        writer.db.execute("ROLLBACK")
        assert counter(waiting, "never") == 0


def test_a_transaction_opened_outside_atomic_is_not_joined(tmp_path):
    with Store(tmp_path / "m.db") as store:
        store.db.execute("BEGIN")  # as a raw read transaction would (an export holds one)
        with pytest.raises(sqlite3.OperationalError, match="within a transaction"):
            with store.atomic():
                store.bump("a")
        store.db.execute("ROLLBACK")
        with store.atomic():  # the failed attempt left no level open behind it
            store.bump("a")
        assert counter(store, "a") == 1


def test_an_inner_level_gives_way_when_sqlite_already_rolled_everything_back(tmp_path):
    with Store(tmp_path / "m.db") as store:
        with pytest.raises(ZeroDivisionError):  # the original error comes up, not "no such savepoint"
            with store.atomic():
                store.bump("a")
                with store.atomic():
                    store.db.execute("ROLLBACK")  # what SQLite does itself on some errors (I/O, interrupt)
                    1 / 0
        assert not store.db.in_transaction and counter(store, "a") == 0
        with store.atomic():
            with store.atomic():
                store.bump("b")
        assert counter(store, "b") == 1


def test_a_write_waiting_for_another_writer_is_called_off_when_asked(tmp_path, monkeypatch):
    """`miner watch --stop` gave up after 30 s on a watcher waiting for a backfill's lock: the write waited its full
    minute before the watcher could see that it was told to stop."""
    path = tmp_path / "m.db"
    with Store(path) as writer, Store(path) as waiting:
        writer.db.execute("BEGIN IMMEDIATE")
        sleeps = []
        monkeypatch.setattr(store_mod.time, "sleep", sleeps.append)
        waiting.interrupted = lambda: len(sleeps) >= 3  # told to stop while it waits
        with pytest.raises(store_mod.StoreInterrupted, match="called off while waiting"):
            with waiting.atomic():
                waiting.bump("never")
        assert len(sleeps) == 3 and not waiting.db.in_transaction
        writer.db.execute("ROLLBACK")
        assert counter(writer, "never") == 0
