"""SQLite store: one connection, nesting transactions, and every query the rest of the tool needs.

Standard library only: the hooks open it. WAL mode, a busy timeout, and
write transactions taken with BEGIN IMMEDIATE so that concurrent miners
queue instead of failing; `atomic()` nests (a SAVEPOINT inside an open
transaction). Exact duplicates are a constraint: the tagged content hash is
unique per project. The schema is `migrations`; what the queries return is
`records`; the queries themselves sit in mixins by purpose (`store_memories`,
`store_dedup`, `store_sessions`, and `store_team` for `miner team`). STORE.md
beside this file lists the whole interface.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager

from .. import paths
from . import migrations, reader
from .records import now_iso
from .store_dedup import DedupQueries
from .store_memories import MemoryQueries
from .store_sessions import SessionQueries
from .store_team import TeamQueries

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Iterable, Iterator

BUSY_TIMEOUT_MS = 10_000
LOCK_POLL_S = 0.002  # how often a writer asks again, at first, for the write lock another process holds
WRITE_LOCK_WAIT_S = 60.0  # how long it asks (a backfill's batch may hold the lock for seconds)
# A full-text index with more segments than this gets a round of merging after mining (`Store.merge_indexes`), of
# at most this many pages of work.
MAX_INDEX_SEGMENTS = 4
MERGE_PAGES = 500
# Counters `stats` names at 0 too: a reader sees that nothing was skipped, not that nothing is counted.
SKIP_COUNTERS = ("lines_skipped", "entries_skipped_malformed", "turns_cut")
CACHE_KIB = 16 * 1024  # SQLite's page cache per connection, at most (its default is 2 MiB)
MMAP_BYTES = 256 << 20  # the database file read through a memory map, up to this much
# A term in at least this many rows of a full-text index has its count kept (`Store.count_common_terms`), counted
# again once the index has grown by this share since.
COMMON_DOCS = 200
RECOUNT_GROWTH = 0.02


def locked(exc: BaseException) -> bool:
    """Whether an error is SQLite's "another process holds the lock" (locked, busy): a wait, not a fault."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def disk_full(exc: BaseException) -> bool:
    """Whether an error is SQLite's full disk ("disk I/O error" on a full tmpfs)."""
    return isinstance(exc, sqlite3.OperationalError) and ("disk is full" in str(exc) or "disk I/O error" in str(exc))


class StoreError(RuntimeError):
    """The database cannot be opened or used; the message says what to do."""


class StoreInterrupted(StoreError):
    """A write waiting for another process's lock was called off (`Store.interrupted`): the watcher is stopping."""


class ReadOnlyStoreError(StoreError):
    """The database is there, but this user may not write it."""


def newer_store(path, names: list[str]) -> str:
    """What to say of a store a newer version wrote (`names`: its migrations this version does not know)."""
    return (f"{path} was written by a newer version of transcript-miner (it has {', '.join(names)}); upgrade this "
            "one (./install.sh) before it writes there")


class Store(MemoryQueries, DedupQueries, SessionQueries, TeamQueries):
    """One connection to the memory database; writes in short IMMEDIATE transactions (`atomic()`)."""

    lock_wait_s = WRITE_LOCK_WAIT_S  # how long a write waits for another process's lock (a hook sets its budget)
    interrupted: Callable[[], bool] | None = None  # asked while a write waits: True calls the write off
    waiting: Callable[[], None] | None = None  # told once when a write has waited a second (a command says so)

    def __init__(self, path: Path | str | None = None, readonly: bool = False, busy_ms: int = BUSY_TIMEOUT_MS):
        # `busy_ms`: how long a statement waits for another process's lock (a hook passes what is left of its time).
        # The file as a string, as the hook path names its files (`paths.data_file`): `pathlib` (with `urllib.parse`
        # and `ipaddress` behind it) costs a SessionStart that renders its block milliseconds; `path` makes the
        # `Path` when asked.
        self._file = os.fspath(path) if path else paths.data_file(paths.DB_NAME)
        self.readonly = readonly
        self._depth = 0  # how many `atomic()` levels are open
        self._busy_ms = max(0, int(busy_ms))
        if self._busy_ms < BUSY_TIMEOUT_MS:  # so does opening it (WAL mode, migrations)
            self.lock_wait_s = min(self.lock_wait_s, self._busy_ms / 1000)
        # {FTS5 term: (memories holding it, counted up to `common_docs` + 1; the newest memory id then)}
        self._term_docs: dict[str, tuple[int, int]] = {}
        self._shares: dict[str, tuple[float, int]] = {}  # {project: (its share of the memories, the newest id then)}
        if not readonly:
            paths.ensure_private_dir(os.path.dirname(self._file) or ".")
            if os.path.exists(self._file) and not os.access(self._file, os.W_OK):  # SQLite would fail at a write
                raise ReadOnlyStoreError(f"cannot write to {self._file}: it is read-only for you; make it writable "
                                         "(`chmod u+w`) or run as its owner")
        elif not os.path.exists(self._file):
            raise StoreError(f"no memory database at {self._file}: run `miner mine --all` first")
        try:
            if readonly:
                self.db = sqlite3.connect(reader.readonly_uri(self._file), uri=True, timeout=self._busy_ms / 1000,
                                          isolation_level=None, check_same_thread=False)
            else:
                fresh = not os.path.exists(self._file)
                self.db = sqlite3.connect(self._file, timeout=self._busy_ms / 1000, isolation_level=None,
                                          check_same_thread=False)
                if fresh:
                    _chmod_private(self._file)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self._file}: {exc}") from None
        self.db.row_factory = sqlite3.Row
        try:
            self._configure()
        except StoreError:
            self.db.close()
            raise
        except sqlite3.DatabaseError as exc:
            self.db.close()
            # Reading a WAL file writes its -shm file beside it: a folder read-only for this user says "readonly",
            # a read-only mount "unable to open database file".
            if readonly and ("readonly" in str(exc) or "unable to open" in str(exc)):
                folder = os.path.dirname(os.path.abspath(self._file))
                raise StoreError(f"cannot read {self._file}: SQLite writes beside the file to read it, and {folder} "
                                 "is read-only for you (its permissions or a read-only mount); make it writable "
                                 "(`chmod u+w`), or run as its owner") from None
            if type(exc) is not sqlite3.DatabaseError:
                raise  # a lock, a constraint, a bug: not the file's fault
            # (not a database, or a damaged one: SQLite says which)
            raise StoreError(f"cannot use {self._file}: {exc}; move it aside and run `miner mine --all` to build "
                             "the store again from the transcripts, or put a backup in its place") from None

    def _configure(self) -> None:
        self.db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        self.db.execute("PRAGMA foreign_keys = ON")
        # A big store's FTS pages read through a map, not one `pread` call each (mining into 100k memories spent a
        # fifth of its CPU in the kernel, 1.1-2.2 s; with these, 0.2-0.3 s), and the page cache holds a look-up's
        # working set. Both are ceilings: a small store maps and caches only what it has.
        self.db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        self.db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        if not self.readonly:
            self._retry(lambda: self.db.execute("PRAGMA journal_mode = WAL"))
            self.db.execute("PRAGMA synchronous = NORMAL")
            self.migrate()
        else:  # (a reader never migrates: what it opens must be a store, of any version)
            self._refuse_foreign()

    @property
    def path(self) -> Path:
        """The database file."""
        from pathlib import Path

        return Path(self._file)

    # --- plumbing ---------------------------------------------------------------

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _retry(self, action):
        """Run `action`, asked again while another process holds the write lock: every `LOCK_POLL_S` for the first
        second, then every 20 ms, for up to `lock_wait_s` (`WRITE_LOCK_WAIT_S` unless set shorter). SQLite's own
        wait sleeps longer each time (up to 100 ms), so a lock let go just after a sleep began lay unused until it
        ended; with this polling (and the work that needs no lock done before it), each of the two processes of
        `miner mine --jobs 2` waited 0.44-0.50 s for the other instead of 0.69-0.77 s."""
        started, told = time.monotonic(), self.waiting is None
        self.db.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    return action()
                except sqlite3.OperationalError as exc:
                    waited = time.monotonic() - started
                    if not locked(exc) or waited >= self.lock_wait_s:
                        raise
                    if self.interrupted is not None and self.interrupted():
                        raise StoreInterrupted("called off while waiting for another process's write lock") from None
                    if waited >= 1.0 and not told:
                        told = True
                        self.waiting()
                    time.sleep(LOCK_POLL_S if waited < 1.0 else 0.02)
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")

    def _tuples(self, sql: str, args: Iterable = ()) -> sqlite3.Cursor:
        """Run a query whose rows come back as plain tuples (several times faster than `sqlite3.Row`)."""
        cursor = self.db.cursor()
        cursor.row_factory = None
        return cursor.execute(sql, tuple(args))

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: a write transaction, or a savepoint inside one that is open already.

        The outermost level takes the write lock up front (BEGIN IMMEDIATE, retried while
        another process holds it), so it never fails half-way on a lock, and commits on
        success; an inner level releases its savepoint. An exception rolls back the level
        it leaves (an inner one only its own part: the caller may catch it and go on) and
        goes on up. Yields the connection, for the memory package's own statements.
        """
        if not self._depth:
            # Not a transaction someone else opened on this connection: that one would be joined unlocked.
            self._retry(lambda: self.db.execute("BEGIN IMMEDIATE"))
            self._depth = 1
            try:
                yield self.db
            except BaseException:
                if self.db.in_transaction:  # SQLite may have rolled it back already (I/O error, interrupt)
                    self.db.execute("ROLLBACK")
                raise
            else:
                self.db.execute("COMMIT")
            finally:
                self._depth = 0
            return
        name = f"atomic_{self._depth}"
        self.db.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield self.db
        except BaseException:
            if self.db.in_transaction:
                self.db.execute(f"ROLLBACK TO {name}")
                self.db.execute(f"RELEASE {name}")
            raise
        else:
            self.db.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1

    def _refuse_foreign(self) -> list[str]:
        """The database's tables; StoreError when it is a database of something else: tables, but none of ours."""
        tables = [row[0] for row in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if tables and "migrations" not in tables:
            raise StoreError(f"{self._file} is a database of something else (its tables: {', '.join(tables[:5])}"
                             f"{', …' if len(tables) > 5 else ''}); move it aside, or set MINER_HOME to the folder of "
                             "the memory store")
        return tables

    def migrate(self) -> list[str]:
        """Apply pending migrations in order, each in its own transaction. A database of something else (tables, but
        none of ours) is refused, never written into."""
        tables = self._refuse_foreign()
        self.db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {row[0] for row in self.db.execute("SELECT name FROM migrations")}
        newer = migrations.unknown(applied)
        if newer:  # its tables may hold what this version would break (a column it does not fill, a constraint)
            raise StoreError(newer_store(self._file, newer))
        done = []
        for migration in migrations.MIGRATIONS:
            if migration.__name__ in applied:
                continue
            with self.atomic() as db:
                # Another process may have applied it while we waited for the lock.
                if db.execute("SELECT 1 FROM migrations WHERE name = ?", (migration.__name__,)).fetchone():
                    continue
                migration(db)
                db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (migration.__name__, now_iso()))
            done.append(migration.__name__)
        mark = migrations.redaction_mark()
        if mark not in applied:  # (older miners write here no more)
            with self.atomic() as db:
                db.execute("INSERT OR IGNORE INTO migrations (name, applied_at) VALUES (?, ?)", (mark, now_iso()))
        if not tables:  # a new store: nothing in it was stored under an older redaction (`memory.repair`)
            from ..extract.redaction_version import COUNTER, REDACTION_VERSION

            with self.atomic() as db:
                db.execute("INSERT OR IGNORE INTO counters (name, value) VALUES (?, ?)", (COUNTER, REDACTION_VERSION))
        return done

    def migrations_applied(self) -> list[str]:
        """The names of the migrations this database has, in order."""
        return [row[0] for row in self.db.execute("SELECT name FROM migrations ORDER BY name")]

    def has_table(self, name: str) -> bool:
        """True when the database has this table (a read-only store opened before a migration may lack one)."""
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (name,)).fetchone() is not None

    def merge_indexes(self, rounds: int | None = 1, max_segments: int | None = None) -> list[str]:
        """Merge the segments of each full-text index that has more than `max_segments` (`MAX_INDEX_SEGMENTS`) in
        rounds of `MERGE_PAGES` pages of work, until it has few enough or a round finds nothing to merge, at most
        `rounds` rounds (None: no limit); the indexes merged.

        Every write leaves FTS5 a new segment, and its automerge, paced by how much is written, leaves the small
        writes of mining passes piled up (twenty-odd segments after a few hundred passes): a look-up (the prompt
        hook counts dozens of terms in the vocabulary, every MATCH) reads each segment. A round merges the small
        ones of a level with each other and leaves the large ones alone: after every pass, it keeps an index at
        about four segments for under a millisecond. What a search finds does not change.
        """
        limit = MAX_INDEX_SEGMENTS if max_segments is None else max_segments
        merged = []
        for index in ("memories_fts", "archive_fts"):
            left = rounds
            while ((left is None or left > 0) and self.has_table(index) and self.index_segments(index) > limit
                   and self._merge_round(index)):
                left = None if left is None else left - 1
                if index not in merged:
                    merged.append(index)
        return merged

    def _merge_round(self, index: str) -> bool:
        """One round of merging an index's small segments; False when it found nothing to merge (one segment a
        level: what is left is no longer small)."""
        with self.atomic() as db:
            # a level is merged once it has two segments (FTS5's own default waits for four); set once
            row = db.execute(f"SELECT v FROM {index}_config WHERE k = 'usermerge'").fetchone()
            if row is None or row[0] != 2:
                db.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('usermerge', 2)")
            changes = db.total_changes
            db.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('merge', {MERGE_PAGES})")
            return db.total_changes - changes >= 2  # how FTS5 tells that a merge did some work

    def count_common_terms(self, force: bool = False) -> list[str]:
        """Count again the rows of each full-text index that hold each of its common terms (in `COMMON_DOCS` rows
        or more), when the index has grown by `RECOUNT_GROWTH` since the last count, was never counted, or
        `force`; the indexes counted.

        FTS5 counts a term by reading its whole list of rows, which grows with the index: the prompt hook, which
        weighs each term of a prompt, reads the common ones from here (`reader.document_frequencies`). A full
        count reads every list once: about 0.1 s for 200,000 archived units.
        """
        counted = []
        for index in ("memories", "archive"):
            if not self.has_table(f"{index}_fts"):
                continue
            size = reader.index_size(self.db, index)  # the size the hook weighs terms against
            row = self.db.execute("SELECT size FROM common_terms_counted WHERE idx = ?", (index,)).fetchone()
            if not force and row is not None and size <= row[0] * (1 + RECOUNT_GROWTH):
                continue
            with self.atomic() as db:
                db.execute("DELETE FROM common_terms WHERE idx = ?", (index,))
                db.execute(f"INSERT INTO common_terms (idx, term, docs) SELECT ?, term, doc FROM {index}_vocab "
                           "WHERE doc >= ?", (index, COMMON_DOCS))
                db.execute("INSERT OR REPLACE INTO common_terms_counted (idx, size) VALUES (?, ?)", (index, size))
            counted.append(index)
        return counted

    def forget_term_counts(self) -> None:
        """Drop the kept counts of common terms (inside `atomic()`, after rows were deleted): the hook counts every
        term in the indexes until the next mining pass counts them again."""
        self.db.execute("DELETE FROM common_terms")
        self.db.execute("DELETE FROM common_terms_counted")

    def index_segments(self, index: str) -> int:
        """How many segments a full-text index ("memories_fts" or "archive_fts") is made of."""
        if index not in ("memories_fts", "archive_fts"):
            raise ValueError(f"no full-text index named {index!r}")
        return self.db.execute(f"SELECT COUNT(DISTINCT segid) FROM {index}_idx").fetchone()[0]

    def integrity_ok(self) -> bool:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    # --- secrets found by context: their salted digests only (`extract.secret_turns`) ----------------

    def secret_digests(self) -> tuple[bytes, frozenset[bytes]]:
        """(this store's salt, the digests of the secrets mining found by their context)."""
        try:
            row = self.db.execute("SELECT salt FROM secret_salt").fetchone()
            digests = frozenset(r[0] for r in self.db.execute("SELECT digest FROM secret_digests"))
        except sqlite3.OperationalError:  # a store read before its migration ran (a read-only hook)
            return b"", frozenset()
        return (row[0] if row else b""), digests

    def add_secret_digests(self, digests: Iterable[bytes], keep: int) -> None:
        """Keep these digests too (inside `atomic()`), and no more than `keep` in all, the newest (one seen again is
        new again)."""
        added = self.db.execute("SELECT COALESCE(MAX(added), 0) FROM secret_digests").fetchone()[0] + 1
        self.db.executemany("INSERT INTO secret_digests (digest, added) VALUES (?, ?) "
                            "ON CONFLICT (digest) DO UPDATE SET added = excluded.added", [(d, added) for d in digests])
        self.db.execute("DELETE FROM secret_digests WHERE digest IN (SELECT digest FROM secret_digests "
                        "ORDER BY added DESC LIMIT -1 OFFSET ?)", (keep,))

    def secret_asked(self, transcript: str) -> bool:
        """Whether the lines of `transcript` mined so far end with the assistant asking for a secret."""
        try:
            return self.db.execute("SELECT 1 FROM secret_asked WHERE transcript = ?", (transcript,)).fetchone() \
                is not None
        except sqlite3.OperationalError:
            return False

    def set_secret_asked(self, transcript: str, asked: bool) -> None:
        """Record whether they do (inside `atomic()`, with what was mined)."""
        if asked:
            self.db.execute("INSERT OR IGNORE INTO secret_asked (transcript) VALUES (?)", (transcript,))
        else:
            self.db.execute("DELETE FROM secret_asked WHERE transcript = ?", (transcript,))

    # --- counters, watermarks, seen entries ---------------------------------------------------

    def bump(self, name: str, by: int = 1) -> None:
        """Add `by` to a named counter (inside `atomic()`)."""
        if by:
            self.db.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + ?",
                (name, by, by),
            )

    def counters(self) -> dict[str, int]:
        return {r["name"]: r["value"] for r in self.db.execute("SELECT name, value FROM counters ORDER BY name")}

    def watermark(self, transcript: str) -> tuple[int, int, str] | None:
        """(offset, inode, head) up to which a transcript was mined."""
        row = self.db.execute(
            "SELECT offset, inode, head FROM watermarks WHERE transcript = ?", (transcript,)
        ).fetchone()
        return (row["offset"], row["inode"], row["head"]) if row else None

    def watermarks(self) -> dict[str, int]:
        """Every transcript's mined offset."""
        return {r["transcript"]: r["offset"] for r in self.db.execute("SELECT transcript, offset FROM watermarks")}

    def watermark_project(self, transcript: str) -> str:
        """The project a transcript was filed under when it was last mined ('' when unknown)."""
        row = self.db.execute("SELECT project FROM watermarks WHERE transcript = ?", (transcript,)).fetchone()
        return row["project"] if row else ""

    def set_watermark(self, transcript: str, offset: int, inode: int, head: str, project: str = "") -> None:
        """Where mining a transcript stopped (inside `atomic()`, with what was mined)."""
        self.db.execute(
            """INSERT INTO watermarks (transcript, offset, inode, head, project, updated_at) VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (transcript) DO UPDATE SET offset = excluded.offset, inode = excluded.inode,
               head = excluded.head, project = CASE WHEN excluded.project = '' THEN project ELSE excluded.project END,
               updated_at = excluded.updated_at""",
            (transcript, offset, inode, head, project, now_iso()),
        )

    def seen_uuids(self, uuids: Iterable[str]) -> set[str]:
        """Which of `uuids` were already mined (from any transcript)."""
        uuids = list(uuids)
        found: set[str] = set()
        for i in range(0, len(uuids), 500):
            batch = uuids[i : i + 500]
            marks = ",".join("?" * len(batch))
            found.update(r[0] for r in self.db.execute(f"SELECT uuid FROM seen_entries WHERE uuid IN ({marks})", batch))
        return found

    def mark_seen(self, uuids: Iterable[str]) -> None:
        """Remember these entries as mined (inside `atomic()`)."""
        self.db.executemany("INSERT OR IGNORE INTO seen_entries (uuid) VALUES (?)", ((u,) for u in uuids))

    # --- stats -----------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts of memories by state, category and confidence stage, of evidence, projects, sessions,
        transcripts, and the counters."""
        db = self.db
        by_state = {r[0]: r[1] for r in db.execute("SELECT state, COUNT(*) FROM memories GROUP BY state")}
        by_category = {r[0]: r[1] for r in db.execute(
            "SELECT category, COUNT(*) FROM memories WHERE state = 'active' GROUP BY category")}
        return {
            "database": str(self.path),
            "memories": sum(by_state.values()),
            "by_state": by_state,
            "by_category": by_category,
            # Void Memory's confidence stages: stored, accessed (recalled), confirmed (recalled 3+ times).
            "by_confidence": {
                r[0]: r[1] for r in db.execute(
                    """SELECT CASE WHEN recall_count >= 3 THEN 'confirmed' WHEN recall_count >= 1 THEN 'accessed'
                       ELSE 'stored' END AS stage, COUNT(*) FROM memories WHERE state = 'active' GROUP BY stage"""
                )
            },
            "evidence": db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0],
            "projects": db.execute("SELECT COUNT(DISTINCT project) FROM memories").fetchone()[0],
            "sessions": db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0],
            "transcripts": db.execute("SELECT COUNT(*) FROM watermarks").fetchone()[0],
            # The skipped input's counters are named even while nothing was skipped (the README lists them).
            "counters": {**dict.fromkeys(SKIP_COUNTERS, 0), **self.counters()},
        }


def _chmod_private(path: str) -> None:
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
