"""The part of `Store` that keeps what happened: sessions, checkpoints, the archive of what was said, the recall
log (a mixin: `store.Store` is the class).

Writes that belong to mining run inside the caller's `Store.atomic()`; a checkpoint
and a recall log entry open their own (nested when the caller has one). It stands on
what `Store` provides (`db`, `_tuples`, `atomic`, `readonly`) and on `rare_terms` of
`store_memories`.
"""

from __future__ import annotations

from .. import jsonlite
from ..textutil import echoes, fts_match_forms, fts_terms
from .records import ArchivedUnit, RecallLogEntry, Session, now_iso

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from typing import Iterable

_SESSION_COLUMNS = Session.columns()
ARCHIVE_ROWS_PER_STATEMENT = 90  # of 10 values each: under the 999 parameters older SQLite builds allow

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


class SessionQueries:
    """Sessions, checkpoints, the archive and the recall log."""

    # --- sessions -------------------------------------------------------------------------------

    def upsert_session(self, session_id: str, project: str, cwd: str, git_branch: str, transcript: str,
                       ts: str) -> None:
        """Record a sighting of a session (see `_UPSERT_SESSION_SQL` for how sightings combine)."""
        self.db.execute(_UPSERT_SESSION_SQL, (session_id, project, cwd, git_branch, transcript, ts, ts))

    def upsert_sessions(self, sightings: Iterable[tuple[str, str, str, str, str, str]]) -> None:
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
        self.db.executemany(_UPSERT_SESSION_SQL, [(session_id, *row) for session_id, row in folded.items()])

    def add_user_prompts(self, counts: dict[str, int]) -> None:
        """Count more prompts typed by the user, per session (the session rows exist already)."""
        self.db.executemany("UPDATE sessions SET user_prompts = user_prompts + ? WHERE session_id = ?",
                            [(n, session_id) for session_id, n in counts.items() if n])

    def sessions_without_user_memory(self, session_ids: Iterable[str], min_prompts: int) -> list[str]:
        """Of these sessions, those with `min_prompts` prompts or more and no memory from the user's words yet."""
        out = []
        for session_id in session_ids:
            row = self.db.execute(
                """SELECT s.user_prompts AS prompts, EXISTS (SELECT 1 FROM evidence e
                   WHERE e.session_id = s.session_id AND e.role = 'user') AS has FROM sessions s WHERE s.session_id = ?""",
                (session_id,)).fetchone()
            if row and row["prompts"] >= min_prompts and not row["has"]:
                out.append(session_id)
        return out

    def session(self, session_id: str) -> Session | None:
        """One session by id."""
        rows = self._tuples(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", (session_id,))
        row = rows.fetchone()
        return Session.from_values(row) if row else None

    def last_session(self, project: str, exclude: str = "") -> Session | None:
        """The project's latest session other than `exclude`."""
        row = self._tuples(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE project = ? AND session_id <> ? ORDER BY last_ts DESC LIMIT 1",
            (project, exclude),
        ).fetchone()
        return Session.from_values(row) if row else None

    def transcript_sessions(self, transcript: str) -> list[Session]:
        """The sessions a transcript holds, in the order they are stored."""
        return [Session.from_values(v) for v in self._tuples(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE transcript = ?", (transcript,))]

    def sessions_without_checkpoint(self, transcript: str, session_id: str = "") -> list[str]:
        """The sessions of a project first seen in `transcript` (or named `session_id`) that have no checkpoint yet:
        one a miner was killed or ran out of disk before writing. A session none of whose words are stored is none
        of them: earlier versions left such rows behind a purge, and its checkpoint would bring the purged project's
        words back."""
        return [row[0] for row in self.db.execute(
            """SELECT session_id FROM sessions s WHERE (transcript = ? OR session_id = ?) AND project <> ''
               AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.session_id = s.session_id)
               AND (EXISTS (SELECT 1 FROM archive a WHERE a.session_id = s.session_id)
                    OR EXISTS (SELECT 1 FROM memories m WHERE m.session_id = s.session_id)) ORDER BY session_id""",
            (transcript, session_id))]

    def last_transcript_session(self, transcript: str) -> Session | None:
        """The latest session a transcript holds."""
        row = self._tuples(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE transcript = ? ORDER BY last_ts DESC LIMIT 1",
                           (transcript,)).fetchone()
        return Session.from_values(row) if row else None

    def session_times(self, project: str) -> list[str]:
        """When each of the project's sessions was last active (those with a time), in order."""
        return [row[0] for row in self._tuples(
            "SELECT last_ts FROM sessions WHERE project = ? AND last_ts <> '' ORDER BY last_ts", (project,))]

    # --- checkpoints -----------------------------------------------------------------------------

    def put_checkpoint(self, session_id: str, project: str, body: dict) -> None:
        """Store (or replace) a session's checkpoint, a JSON document."""
        import json  # writers only: a SessionStart reads checkpoints with `jsonlite`

        with self.atomic():
            self.db.execute(
                """INSERT INTO checkpoints (session_id, project, created_at, body) VALUES (?, ?, ?, ?)
                   ON CONFLICT (session_id) DO UPDATE SET project = excluded.project,
                   created_at = excluded.created_at, body = excluded.body""",
                (session_id, project, now_iso(), json.dumps(body, ensure_ascii=False)),
            )

    def checkpoint(self, session_id: str) -> dict | None:
        """A session's checkpoint."""
        row = self.db.execute("SELECT body FROM checkpoints WHERE session_id = ?", (session_id,)).fetchone()
        return jsonlite.loads(row["body"]) if row else None

    def latest_checkpoint(self, project: str, exclude: str = "") -> dict | None:
        """The checkpoint of the project's latest session other than `exclude`."""
        row = self.db.execute(
            # The latest session's, not the latest written: a backfill or two checkpoints written in the
            # same centisecond must not put an older session first.
            """SELECT c.body FROM checkpoints c LEFT JOIN sessions s ON s.session_id = c.session_id
               WHERE c.project = ? AND c.session_id <> ?
               ORDER BY COALESCE(s.last_ts, '') DESC, c.created_at DESC, c.rowid DESC LIMIT 1""",
            (project, exclude),
        ).fetchone()
        return jsonlite.loads(row["body"]) if row else None

    # --- the archive of what was said --------------------------------------------------------------

    def archive_units(self, rows: Iterable[tuple]) -> int:
        """Keep prose units in the archive: (project, session_id, transcript, entry_uuid, unit, role, ts, text, terms,
        worth) each; a unit kept before (a replayed entry) is not kept twice. Returns how many were new."""
        rows = list(rows)
        new = 0
        # Many rows to a statement: row by row, the trigger that fills the full-text index left it a new segment
        # every row or two (FTS5 writes out its pending terms between statements), segments that later writes
        # merge again and every look-up reads. In one statement they make one, and the writes take a third less.
        for start in range(0, len(rows), ARCHIVE_ROWS_PER_STATEMENT):
            batch = rows[start:start + ARCHIVE_ROWS_PER_STATEMENT]
            new += self.db.execute(
                """INSERT OR IGNORE INTO archive (project, session_id, transcript, entry_uuid, unit, role, ts, text,
                   terms, worth) VALUES """ + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(batch)),
                [value for row in batch for value in row]).rowcount
        return new  # the rows of the archive only (`total_changes` would count the index's writes too)

    def session_said(self, session_id: str, role: str, limit: int = 5000) -> list[tuple[str, str, float]]:
        """What `role` said in a session, as the archive keeps it (visible units only; the latest `limit`), in the
        order said: (entry uuid, text, how likely the classifier found it a memory) of each unit."""
        return self._tuples(
            "SELECT entry_uuid, text, worth FROM archive WHERE session_id = ? AND role = ? AND hidden = 0 "
            "ORDER BY id DESC LIMIT ?", (session_id, role, limit)).fetchall()[::-1]

    def hide_archived(self, memory_id: int) -> int:
        """Hide the archived units a memory was drawn from (its evidence entries, the same text), and the
        assistant's reply right after each that says it again (`textutil.echoes`): a forgotten memory is not found
        again through the archive. Returns how many were hidden."""
        cur = self.db.execute(
            """UPDATE archive SET hidden = 1 WHERE hidden = 0 AND id IN (
                 SELECT a.id FROM archive a JOIN evidence e ON e.entry_uuid = a.entry_uuid
                 WHERE e.memory_id = ? AND (instr(e.text, a.text) > 0 OR instr(a.text, e.text) > 0))""",
            (memory_id,))
        echoed = []
        for said, session_id, entry, ts in self.db.execute(
                "SELECT text, session_id, entry_uuid, ts FROM evidence WHERE memory_id = ? AND session_id <> ''",
                (memory_id,)).fetchall():
            for unit_id, role, unit_entry, text in self.db.execute(
                    """SELECT id, role, entry_uuid, text FROM archive WHERE session_id = ? AND ts >= ?
                       ORDER BY ts, unit LIMIT 40""", (session_id, ts or "")).fetchall():
                if unit_entry == entry:
                    continue
                if role != "assistant":
                    break  # the reply ends at the next thing the user said
                if echoes(said, text):
                    echoed.append(unit_id)
        hidden = self.db.executemany("UPDATE archive SET hidden = 1 WHERE id = ? AND hidden = 0",
                                     [(i,) for i in echoed]).rowcount if echoed else 0
        return cur.rowcount + max(0, hidden)

    def search_archive(self, query: str, project: str | None = None, limit: int = 20, rare_terms: int = 8,
                       forms: dict[str, list[list]] | None = None) -> list[tuple[ArchivedUnit, float]]:
        """Archived units matching free text, best first, with their BM25 rank (lower is better). `forms`: the
        glossary's words for terms of the query, as for `search`."""
        terms = fts_terms(query)
        if len(terms) > rare_terms:
            terms = self.rare_terms(terms, rare_terms, index="archive")
        match = fts_match_forms(terms, forms)
        if not match:
            return []
        where, args = ("AND a.project = ?", (project,)) if project else ("", ())
        rows = self._tuples(
            f"""SELECT {ArchivedUnit.columns("a")}, bm25(archive_fts, 1.0, 0.5) AS rank FROM archive_fts
                JOIN archive a ON a.id = archive_fts.rowid
                WHERE archive_fts MATCH ? AND a.hidden = 0 {where} ORDER BY rank LIMIT ?""",
            (match, *args, limit)).fetchall()
        return [(ArchivedUnit.from_values(row[:-1]), row[-1]) for row in rows]

    # --- the recall log ---------------------------------------------------------------------------

    def note_recalled(self, ids: Iterable[int]) -> None:
        """Count these memories as recalled once more, now."""
        ids = list(ids)
        if not ids or self.readonly:
            return
        stamp = now_iso()
        with self.atomic():
            self.db.executemany(
                "UPDATE memories SET recall_count = recall_count + 1, last_recalled = ? WHERE id = ?",
                ((stamp, i) for i in ids),
            )

    def log_recall(self, project: str, situation: str, query: str, shown: list[int], voided: list[int],
                   left_out: list[int], chars: int, elapsed_ms: float) -> None:
        """Log a recall: what it was asked, what it showed, voided and left out."""
        if self.readonly:
            return
        # The hooks hand their log to a worker: redaction's patterns load only where a log is written.
        import json

        from ..extract.redact import redact_text

        with self.atomic():
            self.db.execute(
                """INSERT INTO recall_log (created_at, project, situation, query, shown, voided, left_out, chars, elapsed_ms)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                # A typed query may hold a pasted secret: it is stored redacted, like everything else.
                (now_iso(), project, situation, redact_text(query), json.dumps(shown), json.dumps(voided),
                 json.dumps(left_out), chars, elapsed_ms),
            )

    def last_recall(self, project: str) -> RecallLogEntry | None:
        """The project's latest logged recall."""
        row = self._tuples(
            f"SELECT {RecallLogEntry.columns()} FROM recall_log WHERE project = ? ORDER BY id DESC LIMIT 1", (project,)
        ).fetchone()
        return RecallLogEntry.from_values(row) if row else None

    def recall_count(self) -> int:
        """How many recalls were logged."""
        return self.db.execute("SELECT COUNT(*) FROM recall_log").fetchone()[0]
