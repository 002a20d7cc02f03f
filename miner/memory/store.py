"""SQLite store: the queries the rest of the tool needs (the schema is `migrations`).

Standard library only: the hooks open it. WAL mode, a busy timeout, and
write transactions taken with BEGIN IMMEDIATE so that concurrent miners
queue instead of failing. Exact duplicates are a constraint: the tagged
content hash is unique per project.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from .. import paths
from . import migrations
from ..extract.redact import redact_text
from ..textutil import content_hash, fts_match, fts_terms, index_text

BUSY_TIMEOUT_MS = 10_000
STATES = ("active", "superseded", "forgotten", "cold", "quarantined")


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


class StoreError(RuntimeError):
    """The database cannot be opened or used; the message says what to do."""


@dataclass(frozen=True)
class StoredMemory:
    id: int
    project: str
    category: str
    text: str
    state: str
    tentative: bool
    scope: str
    confidence: float
    pinned: bool
    rule_id: str
    role: str
    source: str
    session_id: str
    transcript: str
    entry_uuid: str
    git_branch: str
    first_seen: str
    last_seen: str
    valid_from: str
    valid_to: str | None
    evidence_count: int
    session_count: int
    recall_count: int
    keywords: str
    subject: str
    value: str
    last_recalled: str | None = None

    @classmethod
    def from_values(cls, values: tuple) -> "StoredMemory":
        """From a plain tuple selected as `MEMORY_COLUMNS` (the hook's fast path)."""
        memory = cls(*values)
        object.__setattr__(memory, "tentative", bool(memory.tentative))
        object.__setattr__(memory, "pinned", bool(memory.pinned))
        return memory

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> "StoredMemory":
        return cls(
            id=row["id"],
            project=row["project"],
            category=row["category"],
            text=row["text"],
            state=row["state"],
            tentative=bool(row["tentative"]),
            scope=row["scope"],
            confidence=row["confidence"],
            pinned=bool(row["pinned"]),
            rule_id=row["rule_id"],
            role=row["role"],
            source=row["source"],
            session_id=row["session_id"],
            transcript=row["transcript"],
            entry_uuid=row["entry_uuid"],
            git_branch=row["git_branch"],
            first_seen=row["first_seen"],
            last_seen=row["last_seen"],
            valid_from=row["valid_from"],
            valid_to=row["valid_to"],
            evidence_count=row["evidence_count"],
            session_count=row["session_count"],
            recall_count=row["recall_count"],
            keywords=row["keywords"],
            subject=row["subject"],
            value=row["value"],
            last_recalled=row["last_recalled"],
        )


MEMORY_COLUMNS = ", ".join(StoredMemory.__dataclass_fields__)


@dataclass(frozen=True)
class NewMemory:
    """What the miner hands the store for one candidate."""

    project: str
    category: str
    text: str
    confidence: float
    rule_id: str
    role: str
    session_id: str
    transcript: str
    entry_uuid: str
    ts: str
    git_branch: str = ""
    tentative: bool = False
    scope: str = "project"
    subject: str = ""
    value: str = ""
    keywords: tuple[str, ...] = ()
    source: str = "mined"
    evidence_text: str = ""


# A sighting of a session: the first project and cwd stay, the latest branch wins, the times widen.
_UPSERT_SESSION_SQL = """INSERT INTO sessions (session_id, project, cwd, git_branch, transcript, first_ts, last_ts)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET
      project = CASE WHEN sessions.project = '' THEN excluded.project ELSE sessions.project END,
      cwd = CASE WHEN sessions.cwd = '' THEN excluded.cwd ELSE sessions.cwd END,
      git_branch = CASE WHEN excluded.git_branch = '' THEN sessions.git_branch ELSE excluded.git_branch END,
      first_ts = CASE WHEN sessions.first_ts = '' OR (excluded.first_ts <> '' AND excluded.first_ts < sessions.first_ts)
                      THEN excluded.first_ts ELSE sessions.first_ts END,
      last_ts = MAX(sessions.last_ts, excluded.last_ts)"""


class Store:
    """One connection to the memory database; writes in short IMMEDIATE transactions."""

    def __init__(self, path: Path | str | None = None, readonly: bool = False):
        self.path = Path(path) if path else paths.db_path()
        self.readonly = readonly
        if not readonly:
            paths.ensure_private_dir(self.path.parent)
        elif not self.path.exists():
            raise StoreError(f"no memory database at {self.path}: run `miner mine --all` first")
        try:
            if readonly:
                self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                          isolation_level=None, check_same_thread=False)
            else:
                fresh = not self.path.exists()
                self.db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                          check_same_thread=False)
                if fresh:
                    _chmod_private(self.path)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from None
        self.db.row_factory = sqlite3.Row
        self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.db.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            self._retry(lambda: self.db.execute("PRAGMA journal_mode = WAL"))
            self.db.execute("PRAGMA synchronous = NORMAL")
            self.migrate()

    # --- plumbing ---------------------------------------------------------------

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @staticmethod
    def _retry(action, attempts: int = 8):
        """Run `action`, retrying while another process holds the write lock."""
        delay = 0.05
        for attempt in range(attempts):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == attempts - 1:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so that it never fails half-way on a lock."""
        self._retry(lambda: self.db.execute("BEGIN IMMEDIATE"))
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")

    def migrate(self) -> list[str]:
        """Apply pending migrations in order, each in its own transaction."""
        self.db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {row[0] for row in self.db.execute("SELECT name FROM migrations")}
        done = []
        for migration in migrations.MIGRATIONS:
            if migration.__name__ in applied:
                continue
            with self.transaction() as db:
                # Another process may have applied it while we waited for the lock.
                if db.execute("SELECT 1 FROM migrations WHERE name = ?", (migration.__name__,)).fetchone():
                    continue
                migration(db)
                db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (migration.__name__, now_iso()))
            done.append(migration.__name__)
        return done

    # --- counters and watermarks ----------------------------------------------------

    def bump(self, db: sqlite3.Connection, name: str, by: int = 1) -> None:
        if by:
            db.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + ?",
                (name, by, by),
            )

    def counters(self) -> dict[str, int]:
        return {r["name"]: r["value"] for r in self.db.execute("SELECT name, value FROM counters ORDER BY name")}

    def watermark(self, transcript: str) -> tuple[int, int, str] | None:
        row = self.db.execute(
            "SELECT offset, inode, head FROM watermarks WHERE transcript = ?", (transcript,)
        ).fetchone()
        return (row["offset"], row["inode"], row["head"]) if row else None

    def watermarks(self) -> dict[str, int]:
        return {r["transcript"]: r["offset"] for r in self.db.execute("SELECT transcript, offset FROM watermarks")}

    def set_watermark(self, db: sqlite3.Connection, transcript: str, offset: int, inode: int, head: str,
                      project: str = "") -> None:
        db.execute(
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

    def mark_seen(self, db: sqlite3.Connection, uuids: Iterable[str]) -> None:
        db.executemany("INSERT OR IGNORE INTO seen_entries (uuid) VALUES (?)", ((u,) for u in uuids))

    # --- sessions and checkpoints ------------------------------------------------------

    def upsert_session(self, db: sqlite3.Connection, session_id: str, project: str, cwd: str, git_branch: str,
                       transcript: str, ts: str) -> None:
        db.execute(_UPSERT_SESSION_SQL, (session_id, project, cwd, git_branch, transcript, ts, ts))

    def upsert_sessions(self, db: sqlite3.Connection, sightings: Iterable[tuple[str, str, str, str, str, str]]) -> None:
        """`upsert_session` for each sighting (session_id, project, cwd, git_branch, transcript, ts), in order.

        The sightings are folded per session first, by the rules the upsert applies, so
        that a session costs one statement however many entries it has; the rows end the same.
        """
        folded: dict[str, list[str]] = {}
        for session_id, project, cwd, git_branch, transcript, ts in sightings:
            row = folded.get(session_id)
            if row is None:
                folded[session_id] = [project, cwd, git_branch, transcript, ts, ts]
                continue
            row[0] = row[0] or project
            row[1] = row[1] or cwd
            row[2] = git_branch or row[2]
            if not row[4] or (ts and ts < row[4]):
                row[4] = ts
            row[5] = max(row[5], ts)
        db.executemany(_UPSERT_SESSION_SQL, [(session_id, *row) for session_id, row in folded.items()])

    def add_user_prompts(self, db: sqlite3.Connection, counts: dict[str, int]) -> None:
        """Count more prompts typed by the user, per session (the session rows exist already)."""
        db.executemany("UPDATE sessions SET user_prompts = user_prompts + ? WHERE session_id = ?",
                       [(n, session_id) for session_id, n in counts.items() if n])

    def sessions_without_user_memory(self, db: sqlite3.Connection, session_ids: Iterable[str],
                                     min_prompts: int) -> list[str]:
        """Of these sessions, those with `min_prompts` prompts or more and no memory from the user's words yet."""
        out = []
        for session_id in session_ids:
            row = db.execute(
                """SELECT s.user_prompts AS prompts, EXISTS (SELECT 1 FROM evidence e
                   WHERE e.session_id = s.session_id AND e.role = 'user') AS has FROM sessions s WHERE s.session_id = ?""",
                (session_id,)).fetchone()
            if row and row["prompts"] >= min_prompts and not row["has"]:
                out.append(session_id)
        return out

    def archive_units(self, db: sqlite3.Connection, rows: Iterable[tuple]) -> int:
        """Keep prose units in the archive: (project, session_id, transcript, entry_uuid, unit, role, ts, text, terms,
        worth) each; a unit kept before (a replayed entry) is not kept twice. Returns how many were new."""
        before = db.total_changes
        db.executemany(
            """INSERT OR IGNORE INTO archive (project, session_id, transcript, entry_uuid, unit, role, ts, text, terms,
               worth) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", rows)
        return db.total_changes - before

    def hide_archived(self, db: sqlite3.Connection, memory_id: int) -> int:
        """Hide the archived units a memory was drawn from (its evidence entries, the same text): a forgotten
        memory is not found again through the archive. Returns how many were hidden."""
        cur = db.execute(
            """UPDATE archive SET hidden = 1 WHERE hidden = 0 AND id IN (
                 SELECT a.id FROM archive a JOIN evidence e ON e.entry_uuid = a.entry_uuid
                 WHERE e.memory_id = ? AND (instr(e.text, a.text) > 0 OR instr(a.text, e.text) > 0))""",
            (memory_id,))
        return cur.rowcount

    def search_archive(self, query: str, project: str | None = None, limit: int = 20,
                       rare_terms: int = 8) -> list[tuple[sqlite3.Row, float]]:
        """Archived units matching free text, best first, with their BM25 rank (lower is better)."""
        terms = fts_terms(query)
        if len(terms) > rare_terms:
            terms = self.rare_terms(terms, rare_terms, index="archive")
        match = fts_match(terms)
        if not match:
            return []
        where, args = ("AND a.project = ?", (project,)) if project else ("", ())
        rows = self.db.execute(
            f"""SELECT a.*, bm25(archive_fts, 1.0, 0.5) AS rank FROM archive_fts JOIN archive a ON a.id = archive_fts.rowid
                WHERE archive_fts MATCH ? AND a.hidden = 0 {where} ORDER BY rank LIMIT ?""",
            (match, *args, limit)).fetchall()
        return [(row, row["rank"]) for row in rows]

    def session(self, session_id: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()

    def last_session(self, project: str, exclude: str = "") -> sqlite3.Row | None:
        return self.db.execute(
            "SELECT * FROM sessions WHERE project = ? AND session_id <> ? ORDER BY last_ts DESC LIMIT 1",
            (project, exclude),
        ).fetchone()

    def put_checkpoint(self, session_id: str, project: str, body: dict) -> None:
        with self.transaction() as db:
            db.execute(
                """INSERT INTO checkpoints (session_id, project, created_at, body) VALUES (?, ?, ?, ?)
                   ON CONFLICT (session_id) DO UPDATE SET project = excluded.project,
                   created_at = excluded.created_at, body = excluded.body""",
                (session_id, project, now_iso(), json.dumps(body, ensure_ascii=False)),
            )

    def checkpoint(self, session_id: str) -> dict | None:
        row = self.db.execute("SELECT body FROM checkpoints WHERE session_id = ?", (session_id,)).fetchone()
        return json.loads(row["body"]) if row else None

    def latest_checkpoint(self, project: str, exclude: str = "") -> dict | None:
        row = self.db.execute(
            # The latest session's, not the latest written: a backfill or two checkpoints written in the
            # same centisecond must not put an older session first.
            """SELECT c.body FROM checkpoints c LEFT JOIN sessions s ON s.session_id = c.session_id
               WHERE c.project = ? AND c.session_id <> ?
               ORDER BY COALESCE(s.last_ts, '') DESC, c.created_at DESC, c.rowid DESC LIMIT 1""",
            (project, exclude),
        ).fetchone()
        return json.loads(row["body"]) if row else None

    # --- memories ------------------------------------------------------------------------

    def add_memory(self, db: sqlite3.Connection, new: NewMemory) -> tuple[int, bool]:
        """Insert a memory, or merge it into its exact duplicate (an earlier wording counts). Returns (id, created)."""
        row = self.find_exact(db, new.project, content_hash(new.text))
        if row is None:
            return self.insert_memory(db, new), True
        self.merge_evidence(db, row["id"], new)
        return row["id"], False

    def _add_evidence(self, db: sqlite3.Connection, memory_id: int, new: NewMemory, text: str) -> bool:
        cur = db.execute(
            """INSERT OR IGNORE INTO evidence (memory_id, session_id, transcript, entry_uuid, role, ts, rule_id, text)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            (memory_id, new.session_id, new.transcript, new.entry_uuid, new.role, new.ts, new.rule_id, text),
        )
        return cur.rowcount > 0

    def get(self, memory_id: int) -> StoredMemory | None:
        row = self.db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return StoredMemory.from_row(row) if row else None

    def evidence(self, memory_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM evidence WHERE memory_id = ? ORDER BY ts, id", (memory_id,)).fetchall()

    def links(self, memory_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM links WHERE src = ? OR dst = ? ORDER BY created_at", (memory_id, memory_id)
        ).fetchall()

    def list_memories(self, project: str | None = None, category: str | None = None, states: Iterable[str] = ("active",),
                      limit: int = 100) -> list[StoredMemory]:
        clauses, args = [], []
        states = list(states)
        if states:
            clauses.append(f"state IN ({','.join('?' * len(states))})")
            args += states
        if project:
            clauses.append("project = ?")
            args.append(project)
        if category:
            clauses.append("category = ?")
            args.append(category)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.db.execute(f"SELECT * FROM memories {where} ORDER BY last_seen DESC, id DESC LIMIT ?", (*args, limit))
        return [StoredMemory.from_row(r) for r in rows]

    def _memories(self, where: str, args: tuple) -> list[StoredMemory]:
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples: several times faster than sqlite3.Row for hundreds of rows
        return [StoredMemory.from_values(v) for v in cursor.execute(f"SELECT {MEMORY_COLUMNS} FROM memories {where}", args)]

    def candidates(self, project: str, per_category: int = 60) -> list[StoredMemory]:
        """Active memories a recall considers: pinned and global ones, and the freshest of each category.

        Taken per category so that a flood of recent facts cannot push out older standing
        preferences and decisions; each query walks an index, never the whole table.
        """
        seen: dict[int, StoredMemory] = {}
        queries = [
            ("WHERE project = ? AND pinned = 1 AND state = 'active'", (project,)),
            ("WHERE scope = 'global' AND state = 'active' ORDER BY last_seen DESC, id DESC LIMIT 60", ()),
        ] + [
            ("WHERE project = ? AND state = 'active' AND category = ? ORDER BY last_seen DESC, id DESC LIMIT ?",
             (project, category, per_category))
            for category in ("decision", "preference", "fact", "todo")
        ]
        for where, args in queries:
            for memory in self._memories(where, args):
                seen.setdefault(memory.id, memory)
        return list(seen.values())

    def relevant(self, query: str, project: str, limit: int = 300, rare_terms: int = 8,
                 best_first: bool = False) -> dict[int, float]:
        """BM25 relevance (higher is better) of the project's memories matching `query`'s rarest terms.

        By default the newest matches, ordered by rowid, not rank, so that FTS5 scores only the
        rows returned: the hook's cost stays bounded however many memories a common word
        matches. `best_first` ranks every match (for questions asked on demand).
        """
        terms = fts_terms(query)
        if len(terms) > rare_terms:
            terms = self.rare_terms(terms, rare_terms)
        match = fts_match(terms)
        if not match:
            return {}
        rows = self.db.execute(
            f"""SELECT memories_fts.rowid, bm25(memories_fts, 1.0, 0.5) AS rank FROM memories_fts
               JOIN memories m ON m.id = memories_fts.rowid
               WHERE memories_fts MATCH ? AND m.state = 'active' AND (m.project = ? OR m.scope = 'global')
               ORDER BY {"rank" if best_first else "memories_fts.rowid DESC"} LIMIT ?""",
            (match, project, limit),
        )
        return {rowid: -rank for rowid, rank in rows}

    def memories_by_id(self, ids: Iterable[int]) -> list[StoredMemory]:
        ids = list(ids)
        out: list[StoredMemory] = []
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            out += self._memories(f"WHERE id IN ({','.join('?' * len(batch))})", tuple(batch))
        return out

    def rare_terms(self, terms: list[str], limit: int = 8, index: str = "memories") -> list[str]:
        """The `limit` terms found in the fewest rows of `index` ("memories" or "archive"), and in one at least."""
        if index not in ("memories", "archive"):
            raise ValueError(f"no full-text index named {index!r}")
        counts = []
        for term in terms:
            row = self.db.execute(f"SELECT doc FROM {index}_vocab WHERE term = ?", (term,)).fetchone()
            if row and row[0]:
                counts.append((row[0], term))
        counts.sort()
        return [term for _, term in counts[:limit]]

    def search(self, query: str, project: str | None = None, states: Iterable[str] = ("active",),
               limit: int = 200) -> list[tuple[StoredMemory, float]]:
        """Memories matching free text, with their BM25 rank (lower is better); never an FTS5 syntax error."""
        match = fts_match(fts_terms(query))
        if not match:
            return []
        states = list(states)
        clauses = [f"m.state IN ({','.join('?' * len(states))})"] if states else []
        args: list[Any] = [match, *states]
        if project:
            clauses.append("(m.project = ? OR m.scope = 'global')")
            args.append(project)
        where = (" AND " + " AND ".join(clauses)) if clauses else ""
        rows = self.db.execute(
            f"""SELECT m.*, bm25(memories_fts, 1.0, 0.5) AS rank FROM memories_fts
                JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ?{where} ORDER BY rank LIMIT ?""",
            (*args, limit),
        )
        return [(StoredMemory.from_row(r), r["rank"]) for r in rows]

    def projects(self) -> list[sqlite3.Row]:
        return self.db.execute(
            """SELECT project, COUNT(*) AS memories, MAX(last_seen) AS last_seen FROM memories
               WHERE state = 'active' GROUP BY project ORDER BY last_seen DESC"""
        ).fetchall()

    def latest_project(self) -> str | None:
        row = self.db.execute("SELECT project FROM sessions WHERE project <> '' ORDER BY last_ts DESC LIMIT 1").fetchone()
        return row["project"] if row else None

    def note_recalled(self, ids: Iterable[int]) -> None:
        ids = list(ids)
        if not ids or self.readonly:
            return
        stamp = now_iso()
        with self.transaction() as db:
            db.executemany(
                "UPDATE memories SET recall_count = recall_count + 1, last_recalled = ? WHERE id = ?",
                ((stamp, i) for i in ids),
            )

    def log_recall(self, project: str, situation: str, query: str, shown: list[int], voided: list[int],
                   left_out: list[int], chars: int, elapsed_ms: float) -> None:
        if self.readonly:
            return
        with self.transaction() as db:
            db.execute(
                """INSERT INTO recall_log (created_at, project, situation, query, shown, voided, left_out, chars, elapsed_ms)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                # A typed query may hold a pasted secret: it is stored redacted, like everything else.
                (now_iso(), project, situation, redact_text(query), json.dumps(shown), json.dumps(voided),
                 json.dumps(left_out), chars, elapsed_ms),
            )

    def last_recall(self, project: str) -> sqlite3.Row | None:
        return self.db.execute(
            "SELECT * FROM recall_log WHERE project = ? ORDER BY id DESC LIMIT 1", (project,)
        ).fetchone()

    def stats(self) -> dict[str, Any]:
        db = self.db
        by_state = {r[0]: r[1] for r in db.execute("SELECT state, COUNT(*) FROM memories GROUP BY state")}
        by_category = {
            r[0]: r[1] for r in db.execute("SELECT category, COUNT(*) FROM memories WHERE state = 'active' GROUP BY category")
        }
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
            "counters": self.counters(),
        }

    def integrity_ok(self) -> bool:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    # --- dedup, conflicts and corrections (the layers themselves live in dedup.py) ---------------

    def find_exact(self, db: sqlite3.Connection, project: str, digest: str) -> sqlite3.Row | None:
        """The memory whose text, or an earlier wording of it, has this content hash."""
        row = db.execute("SELECT * FROM memories WHERE project = ? AND hash = ?", (project, digest)).fetchone()
        if row is None:
            row = db.execute(
                """SELECT m.* FROM memory_hashes h JOIN memories m ON m.id = h.memory_id
                   WHERE h.project = ? AND h.hash = ?""",
                (project, digest),
            ).fetchone()
        return row

    def insert_memory(self, db: sqlite3.Connection, new: NewMemory, state: str = "active",
                      pinned: bool = False) -> int:
        """A new memory row with its first evidence row."""
        stamp = now_iso()
        ts = new.ts or stamp
        keywords = " ".join(new.keywords) if new.keywords else index_text(new.text)
        cur = db.execute(
            """INSERT INTO memories (project, category, text, hash, keywords, subject, value, state, tentative,
               scope, confidence, pinned, rule_id, role, source, session_id, transcript, entry_uuid, git_branch,
               first_seen, last_seen, valid_from, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (new.project, new.category, new.text, content_hash(new.text), keywords, new.subject, new.value, state,
             int(new.tentative), new.scope, new.confidence, int(pinned), new.rule_id, new.role, new.source,
             new.session_id, new.transcript, new.entry_uuid, new.git_branch, ts, ts, ts, stamp, stamp),
        )
        memory_id = cur.lastrowid
        self._add_evidence(db, memory_id, new, new.evidence_text or new.text)
        return memory_id

    def merge_evidence(self, db: sqlite3.Connection, memory_id: int, new: NewMemory) -> bool:
        """One more evidence row for a memory said again; False when this entry already counted.

        A memory stated in a further session gains more confidence than one repeated within a session.
        """
        if not self._add_evidence(db, memory_id, new, new.evidence_text or new.text):
            return False
        sessions = db.execute(
            "SELECT COUNT(DISTINCT session_id) FROM evidence WHERE memory_id = ?", (memory_id,)
        ).fetchone()[0]
        db.execute(
            """UPDATE memories SET evidence_count = evidence_count + 1, session_count = ?,
               last_seen = MAX(last_seen, ?), updated_at = ?,
               confidence = MIN(1.0, confidence + CASE WHEN ? > session_count THEN 0.1 ELSE 0.02 END)
               WHERE id = ?""",
            (sessions, new.ts or now_iso(), now_iso(), sessions, memory_id),
        )
        return True

    def reword(self, db: sqlite3.Connection, memory_id: int, new: NewMemory) -> None:
        """Give a memory newer wording; the old wording's hash keeps pointing at it."""
        row = db.execute("SELECT project, hash, text FROM memories WHERE id = ?", (memory_id,)).fetchone()
        db.execute(
            "INSERT OR IGNORE INTO memory_hashes (project, hash, memory_id, text, created_at) VALUES (?, ?, ?, ?, ?)",
            (row["project"], row["hash"], memory_id, row["text"], now_iso()),
        )
        keywords = " ".join(new.keywords) if new.keywords else index_text(new.text)
        db.execute(
            """UPDATE memories SET text = ?, hash = ?, keywords = ?, rule_id = ?, role = ?, session_id = ?,
               transcript = ?, entry_uuid = ?, subject = CASE WHEN ? <> '' THEN ? ELSE subject END,
               value = CASE WHEN ? <> '' THEN ? ELSE value END, updated_at = ? WHERE id = ?""",
            (new.text, content_hash(new.text), keywords, new.rule_id, new.role, new.session_id, new.transcript,
             new.entry_uuid, new.subject, new.subject, new.value, new.value, now_iso(), memory_id),
        )

    def wordings(self, memory_id: int) -> list[sqlite3.Row]:
        """Earlier wordings a memory had before near-duplicates reworded it."""
        return self.db.execute(
            "SELECT text, created_at FROM memory_hashes WHERE memory_id = ? ORDER BY created_at", (memory_id,)
        ).fetchall()

    def similar_rows(self, db: sqlite3.Connection, project: str, match: str, states: Iterable[str] = ("active",),
                     categories: Iterable[str] = (), exclude: int = 0, limit: int = 12) -> list[sqlite3.Row]:
        """A few memories of a project matching an FTS5 expression (already escaped), best first."""
        states, categories = list(states), list(categories)
        clauses = [f"m.state IN ({','.join('?' * len(states))})"]
        args: list[Any] = [match, project, *states]
        if categories:
            clauses.append(f"m.category IN ({','.join('?' * len(categories))})")
            args += categories
        rows = db.execute(
            f"""SELECT m.* FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ? AND m.project = ? AND {' AND '.join(clauses)} AND m.id <> ?
                ORDER BY bm25(memories_fts, 1.0, 0.5) LIMIT ?""",
            (*args, exclude, limit),
        )
        return rows.fetchall()

    def subject_rows(self, db: sqlite3.Connection, project: str, subjects: Iterable[str],
                     states: Iterable[str] = ("active",), exclude: int = 0, limit: int = 12) -> list[sqlite3.Row]:
        """Memories of a project stated about one of `subjects`, newest first."""
        subjects, states = list(subjects), list(states)
        if not subjects:
            return []
        return db.execute(
            f"""SELECT * FROM memories WHERE project = ? AND subject IN ({','.join('?' * len(subjects))})
                AND state IN ({','.join('?' * len(states))}) AND id <> ? ORDER BY valid_from DESC LIMIT ?""",
            (project, *subjects, *states, exclude, limit),
        ).fetchall()

    def supersede(self, db: sqlite3.Connection, newer: int, older: int, reason: str, was: str = "",
                  at: str = "") -> bool:
        """Close `older` (valid_to, state superseded) and link `newer` to it; the row is never deleted.

        A pin moves to the successor: the user wanted this topic always recalled.
        """
        stamp = now_iso()
        row = db.execute("SELECT state, pinned FROM memories WHERE id = ?", (older,)).fetchone()
        if row is None or newer == older:
            return False
        db.execute(
            """INSERT INTO links (src, dst, kind, reason, created_at, was) VALUES (?, ?, 'supersedes', ?, ?, ?)
               ON CONFLICT (src, dst, kind) DO UPDATE SET reason = excluded.reason, was = excluded.was""",
            (newer, older, reason, stamp, was),
        )
        if row["state"] in ("active", "cold"):
            db.execute(
                """UPDATE memories SET state = 'superseded', valid_to = ?, state_reason = ?, pinned = 0, updated_at = ?
                   WHERE id = ?""",
                (at or stamp, f"superseded by #{newer}: {reason}", stamp, older),
            )
            if row["pinned"]:
                db.execute("UPDATE memories SET pinned = 1 WHERE id = ?", (newer,))
        return True

    def reopen(self, db: sqlite3.Connection, memory_id: int, reason: str, at: str = "") -> None:
        """Make a closed memory current again (restated after it was superseded)."""
        db.execute(
            """UPDATE memories SET state = 'active', valid_to = NULL, valid_from = ?, state_reason = ?, updated_at = ?
               WHERE id = ?""",
            (at or now_iso(), reason, now_iso(), memory_id),
        )

    def set_state(self, db: sqlite3.Connection, memory_id: int, state: str, reason: str = "") -> None:
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}")
        db.execute("UPDATE memories SET state = ?, state_reason = ?, updated_at = ? WHERE id = ?",
                   (state, reason, now_iso(), memory_id))

    def set_pinned(self, db: sqlite3.Connection, memory_id: int, pinned: bool) -> None:
        db.execute("UPDATE memories SET pinned = ?, updated_at = ? WHERE id = ?", (int(pinned), now_iso(), memory_id))

    def supersede_links(self, memory_ids: Iterable[int]) -> list[sqlite3.Row]:
        """Supersede links touching any of `memory_ids` (either end), oldest first."""
        ids = list(memory_ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self.db.execute(
            f"""SELECT * FROM links WHERE kind = 'supersedes' AND (src IN ({marks}) OR dst IN ({marks}))
                ORDER BY created_at, src, dst""",
            (*ids, *ids),
        ).fetchall()

    def was_notes(self, memory_ids: Iterable[int]) -> dict[int, str]:
        """For current memories that replaced another: the short "was" note of the newest replacement.

        One query for any number of ids; recall uses it to print "(was: …)".
        """
        ids = list(memory_ids)
        notes: dict[int, str] = {}
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            rows = self.db.execute(
                f"""SELECT l.src, l.was FROM links l JOIN memories old ON old.id = l.dst
                    WHERE l.kind = 'supersedes' AND l.was <> '' AND old.state = 'superseded'
                    AND l.src IN ({','.join('?' * len(batch))}) ORDER BY l.created_at""",
                batch,
            )
            for row in rows:
                notes[row["src"]] = row["was"]
        return notes

    def history_ids(self, project: str, stretches: int = 16, per_stretch: int = 2) -> list[int]:
        """Ids of active memories from every stretch of a project's history, not only its latest sessions.

        The project's sessions are cut into up to `stretches` runs of consecutive sessions; from each
        run come the ids of its `per_stretch` latest decisions and facts, and as many in the user's own
        words. Each query walks one range of an index, so the cost grows with the number of
        stretches, not with the size of the store.
        """
        stamps = [r[0] for r in self.db.execute(
            "SELECT last_ts FROM sessions WHERE project = ? AND last_ts <> '' ORDER BY last_ts", (project,))]
        if len(stamps) < 2:
            return []
        count = min(stretches, len(stamps))
        # A stretch holds what was said after the previous stretch's last session and up to its own last one.
        ends = [stamps[int((i + 1) * len(stamps) / count) - 1] for i in range(count - 1)] + ["\uffff"]
        ranges = [(low, high) for low, high in zip([""] + ends, ends) if low < high]
        ids: dict[int, None] = {}
        cursor = self.db.cursor()
        cursor.row_factory = None
        for low, high in ranges:
            # Preferences and todos are few: `candidates` holds the latest sixty of each, whatever their age.
            for category, role in (("decision", ""), ("fact", ""), ("decision", "user"), ("fact", "user")):
                rows = cursor.execute(
                    "SELECT id FROM memories WHERE project = ? AND state = 'active' AND category = ? "
                    "AND last_seen > ? AND last_seen <= ?" + (" AND role = ?" if role else "")
                    + " ORDER BY last_seen DESC, id DESC LIMIT ?",
                    (project, category, low, high, *((role,) if role else ()), per_stretch))
                ids.update((row[0], None) for row in rows)
        return list(ids)


def _chmod_private(path: Path) -> None:
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
