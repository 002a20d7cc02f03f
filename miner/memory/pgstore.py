"""The store interface on PostgreSQL: a team's shared memories (`miner team`).

`PgStore` implements the memory, dedup and link methods of `STORE.md` with the same arguments, records and
transaction semantics as the SQLite `Store`, so that `dedup.Deduper` routes a memory through the same three layers
on either backend: exact repeats merge evidence, paraphrases merge, a later change of mind supersedes with
history. What belongs to one machine (watermarks, sessions, checkpoints, the archive, the recall log) has no place
on a team server and is not implemented.

Every row carries its team id and project key, and every query is scoped by both. Writers of one project are
serialised by a transaction-level advisory lock (`lock_project`), and every insert or update of a memory or a link
takes the next value of one sequence (`seq`), so that a reader pulling "everything after seq N" of a project never
misses a change committed out of order.

Credentials come from the URL or libpq's environment only; nothing here stores or logs them. Needs psycopg 3.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterable, Iterator

import psycopg

from ..textutil import content_hash, index_text
from .fts_query import without_common
from .hidden_copies import hides, scrub
from .pgschema import SCHEMA, PgStoreError, check_url, create_schema, describe, terms_text, tsquery
from .records import STATES, Evidence, Link, NewMemory, StoredMemory, Wording, now_iso
from .store_memories import MemoryQueries

_COLUMNS = StoredMemory.columns()
_M_COLUMNS = StoredMemory.columns("m")
_LINK_COLUMNS = Link.columns()
PROJECT_LOCK_WAIT_S = 30
# A number the sequence gave: one of a member's own past it (schema 1 let an insert choose) skips all changes to come.
_SEQ_GIVEN = f"seq <= pg_sequence_last_value('{SCHEMA}.changes')"
STATEMENT_TIMEOUT_S = 30  # what any statement may wait (a member's LOCK TABLE, a server that stalls a read)


class PgStore:
    """One team's memories on a PostgreSQL server; `project` arguments are the team's project keys."""

    def __init__(self, url: str, team: str, member: str = "", connect_timeout: int = 10, create: bool = True):
        self.team = team
        self.member = member
        check_url(url)
        try:
            self.db = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout,
                                      application_name="transcript-miner")
            self.db.execute(f"SET statement_timeout = '{STATEMENT_TIMEOUT_S}s'")  # (a pull holds the local lock)
        except psycopg.ProgrammingError:  # libpq's reason quotes the URL, password and all (`miner team` says why)
            raise PgStoreError("not a PostgreSQL URL: give one like postgresql://user@host/database") from None
        except psycopg.OperationalError as exc:
            reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise PgStoreError(f"cannot reach the team server {describe(url)}: {reason}") from None
        self._depth = 0
        self._exact: dict[tuple[str, str], StoredMemory | None] = {}  # `prefetch_exact`: (project, hash)
        self._ids: list[int] = []  # `reserve_ids`: memory ids taken ahead, next last
        if create:
            self.create_schema()

    # --- open, schema, transactions ------------------------------------------------------------

    def create_schema(self, repair: bool = False) -> None:
        """Create the team tables when they are missing (needs CREATE on the database the first time); `repair`:
        whatever of them is missing too (a table, a trigger, an index dropped since; `miner team setup`)."""
        create_schema(self.db, repair)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "PgStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[psycopg.Connection]:
        """A transaction; nested, a savepoint (only the inner part is undone on an exception)."""
        self._depth += 1
        try:
            with self.db.transaction():
                yield self.db
        finally:
            self._depth -= 1

    def lock_project(self, project: str) -> None:
        """Serialise this project's writers until the transaction ends (an advisory lock, inside `atomic`); a hung
        sync of another member's holds the others `PROJECT_LOCK_WAIT_S` at most."""
        self.db.execute(f"SET LOCAL lock_timeout = '{PROJECT_LOCK_WAIT_S}s'")
        try:
            self.db.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (self.team, project))
            self.db.execute("SET LOCAL lock_timeout = 0")  # the rest of the batch waits as it always did
        except (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled):  # (whichever timeout comes first;
            # a Ctrl-C is a KeyboardInterrupt, not a cancelled statement)
            raise PgStoreError(f"another member's sync held {project!r} on the server for {PROJECT_LOCK_WAIT_S} s; "
                               "run `miner team sync` again later") from None

    def _rows(self, sql: str, args: Iterable = ()) -> list[tuple]:
        return self.db.execute(sql, tuple(args)).fetchall()

    def _memory_rows(self, sql: str, args: Iterable = ()) -> list[StoredMemory]:
        return [StoredMemory.from_values(v) for v in self._rows(sql, args)]

    def _memories(self, where: str, args: Iterable = ()) -> list[StoredMemory]:
        return self._memory_rows(f"SELECT {_COLUMNS} FROM {SCHEMA}.memories WHERE team = %s AND {where}",
                                 (self.team, *args))

    # --- counters -----------------------------------------------------------------------------

    def bump(self, name: str, by: int = 1) -> None:
        if by:
            self.db.execute(
                f"""INSERT INTO {SCHEMA}.counters (team, name, value) VALUES (%s, %s, %s)
                    ON CONFLICT (team, name) DO UPDATE SET value = counters.value + excluded.value""",
                (self.team, name, int(by)))

    def counters(self) -> dict[str, int]:
        return dict(self._rows(f"SELECT name, value FROM {SCHEMA}.counters WHERE team = %s", (self.team,)))

    # --- memories and evidence (writes inside `atomic()`) ------------------------------------------

    # Built on find_exact, insert_memory and merge_evidence alone: the same on both backends.
    add_memory = MemoryQueries.add_memory

    def insert_memory(self, new: NewMemory, state: str = "active", pinned: bool = False) -> int:
        """A new memory row with its first evidence row."""
        stamp = now_iso()
        ts = new.ts or stamp
        keywords = " ".join(new.keywords) if new.keywords else index_text(new.text)
        digest = content_hash(new.text)
        self._exact.pop((new.project, digest), None)
        reserved = self._ids.pop() if self._ids else None
        # The memory and its first evidence row in one statement; with an id reserved ahead, nothing to wait for
        # (inside `pipeline()` the statement goes out with the next ones).
        cur = self.db.execute(
            f"""WITH m AS (
                INSERT INTO {SCHEMA}.memories (id, team, project, category, text, hash, keywords, terms, subject, value,
                state, tentative, scope, confidence, pinned, rule_id, role, source, session_id, transcript, entry_uuid,
                git_branch, member, first_seen, last_seen, valid_from, created_at, updated_at)
                VALUES (COALESCE(%s, nextval(pg_get_serial_sequence('{SCHEMA}.memories', 'id'))), %s, %s, %s, %s,
                %s, %s, to_tsvector('simple', %s), %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id)
                INSERT INTO {SCHEMA}.evidence (memory_id, member, session_id, transcript, entry_uuid, role, ts, rule_id,
                text) SELECT id, %s, %s, %s, %s, %s, %s, %s, %s FROM m RETURNING memory_id""",
            (reserved, self.team, new.project, new.category, new.text, digest, keywords,
             terms_text(new.text, keywords), new.subject, new.value, state, bool(new.tentative), new.scope,
             new.confidence, bool(pinned), new.rule_id, new.role, new.source, new.session_id, new.transcript,
             new.entry_uuid, new.git_branch, self.member, ts, ts, ts, stamp, stamp,
             self.member, new.session_id, new.transcript, new.entry_uuid, new.role, new.ts, new.rule_id,
             new.evidence_text or new.text),
        )
        return reserved if reserved is not None else cur.fetchone()[0]

    def reserve_ids(self, count: int) -> None:
        """Take `count` memory ids ahead (one round trip): the inserts that use them need no answer back."""
        self._ids = [r[0] for r in self._rows(
            f"SELECT nextval(pg_get_serial_sequence('{SCHEMA}.memories', 'id')) FROM generate_series(1, %s)",
            (count,))][::-1]

    @contextmanager
    def pipeline(self) -> Iterator[None]:
        """Statements whose answer nobody reads go out without waiting (psycopg's pipeline mode); a read
        waits for all before it. Errors surface at the next read or when the block ends."""
        with self.db.pipeline():
            yield

    def hide_archived(self, memory_id: int) -> int:  # (the server keeps no archive of what was said)
        return 0

    def merge_evidence(self, memory_id: int, new: NewMemory) -> bool:
        """One more evidence row for a memory said again; False when this entry already counted.

        One statement: the evidence row, and only when it was new, the counts (the session count includes
        the row just added, which the statement's own snapshot cannot see).
        """
        self._forget_cached(memory_id)
        stamp = now_iso()
        row = self.db.execute(
            f"""WITH e AS (
                INSERT INTO {SCHEMA}.evidence (memory_id, member, session_id, transcript, entry_uuid, role, ts, rule_id,
                text) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING session_id),
                s AS (SELECT COUNT(DISTINCT x.session_id) AS n FROM (
                    SELECT session_id FROM {SCHEMA}.evidence WHERE memory_id = %s UNION ALL SELECT session_id FROM e) x)
                UPDATE {SCHEMA}.memories m SET evidence_count = evidence_count + 1, session_count = s.n,
                last_seen = GREATEST(last_seen, %s), updated_at = %s,
                confidence = LEAST(1.0, confidence + CASE WHEN s.n > m.session_count THEN 0.1 ELSE 0.02 END)
                FROM s WHERE m.id = %s AND EXISTS (SELECT 1 FROM e) RETURNING m.id""",
            (memory_id, self.member, new.session_id, new.transcript, new.entry_uuid, new.role, new.ts, new.rule_id,
             new.evidence_text or new.text, memory_id, new.ts or stamp, stamp, memory_id)).fetchone()
        return row is not None

    def reword(self, memory_id: int, new: NewMemory) -> None:
        """Give a memory newer wording; the old wording's hash keeps pointing at it (unless the new one is the old
        with a secret hidden: `hidden_copies`)."""
        self._forget_cached(memory_id)
        project, digest, text = self._rows(f"SELECT project, hash, text FROM {SCHEMA}.memories WHERE id = %s",
                                           (memory_id,))[0]
        if hides(new.text, text):
            scrub(self.db, memory_id, new.text, "%s", SCHEMA)
        else:
            self.db.execute(f"""INSERT INTO {SCHEMA}.memory_hashes (team, project, hash, memory_id, text, created_at)
                                VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING""",
                            (self.team, project, digest, memory_id, text, now_iso()))
        keywords = " ".join(new.keywords) if new.keywords else index_text(new.text)
        self.db.execute(
            f"""UPDATE {SCHEMA}.memories SET text = %s, hash = %s, keywords = %s, terms = to_tsvector('simple', %s),
                rule_id = %s, role = %s, session_id = %s, transcript = %s, entry_uuid = %s,
                subject = CASE WHEN %s <> '' THEN %s ELSE subject END, value = CASE WHEN %s <> '' THEN %s ELSE value END,
                member = %s, updated_at = %s WHERE id = %s""",
            (new.text, content_hash(new.text), keywords, terms_text(new.text, keywords), new.rule_id, new.role,
             new.session_id, new.transcript, new.entry_uuid, new.subject, new.subject, new.value, new.value,
             self.member, now_iso(), memory_id))

    def set_state(self, memory_id: int, state: str, reason: str = "", until: str = "") -> None:
        self._forget_cached(memory_id)
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}")
        self.db.execute(
            f"""UPDATE {SCHEMA}.memories SET state = %s, state_reason = %s, updated_at = %s,
                valid_to = CASE WHEN %s <> '' THEN %s ELSE valid_to END WHERE id = %s""",
            (state, reason, now_iso(), until, until, memory_id))

    def changed_by_id(self, ids: Iterable[int]) -> list[tuple[int, StoredMemory, str, str]]:
        """`changed_memories`' rows of these team memories, as they are now (a pull's retries)."""
        return [(r[0], StoredMemory.from_values(r[3:]), r[1], r[2]) for r in self._rows(
            f"""SELECT seq, member, state_reason, {_COLUMNS} FROM {SCHEMA}.memories
                WHERE team = %s AND id = ANY(%s) ORDER BY seq""", (self.team, list(ids)))]

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        self._forget_cached(memory_id)
        self.db.execute(f"UPDATE {SCHEMA}.memories SET pinned = %s, updated_at = %s WHERE id = %s",
                        (bool(pinned), now_iso(), memory_id))

    def confirm(self, memory_id: int) -> None:
        self._forget_cached(memory_id)
        self.db.execute(f"UPDATE {SCHEMA}.memories SET tentative = false WHERE id = %s", (memory_id,))

    # --- reads --------------------------------------------------------------------------------

    def get(self, memory_id: int) -> StoredMemory | None:
        found = self._memories("id = %s", (memory_id,))
        return found[0] if found else None

    def state_reason(self, memory_id: int) -> str:
        rows = self._rows(f"SELECT state_reason FROM {SCHEMA}.memories WHERE id = %s", (memory_id,))
        return rows[0][0] if rows else ""

    def evidence(self, memory_id: int) -> list[Evidence]:
        return [Evidence.from_values(v) for v in self._rows(
            f"SELECT {Evidence.columns()} FROM {SCHEMA}.evidence WHERE memory_id = %s ORDER BY ts, id", (memory_id,))]

    def evidence_members(self, memory_id: int) -> list[str]:
        """Who said a memory, in the order they first did (the team's provenance)."""
        return [row[0] for row in self._rows(
            f"""SELECT member FROM {SCHEMA}.evidence WHERE memory_id = %s GROUP BY member ORDER BY MIN(ts), member""",
            (memory_id,))]

    def wordings(self, memory_id: int) -> list[Wording]:
        return [Wording.from_values(v) for v in self._rows(
            f"SELECT text, created_at FROM {SCHEMA}.memory_hashes WHERE memory_id = %s ORDER BY created_at",
            (memory_id,))]

    def list_memories(self, project: str | None = None, category: str | None = None,
                      states: Iterable[str] = ("active",), limit: int = 100) -> list[StoredMemory]:
        clauses, args = ["TRUE"], []
        states = list(states)
        if states:
            clauses.append("state = ANY(%s)")
            args.append(states)
        if project:
            clauses.append("project = %s")
            args.append(project)
        if category:
            clauses.append("category = %s")
            args.append(category)
        return self._memories(f"{' AND '.join(clauses)} ORDER BY last_seen DESC, id DESC LIMIT %s", (*args, limit))

    def project_memories(self, project: str) -> list[StoredMemory]:
        return self._memories("project = %s ORDER BY id", (project,))

    def memories_by_id(self, ids: Iterable[int]) -> list[StoredMemory]:
        return self._memories("id = ANY(%s) ORDER BY id", (list(ids),))

    def memory_of_entry(self, project: str, entry_uuid: str) -> int | None:
        """The team memory said first (or last reworded) in this entry: what a copy a machine pulled names."""
        rows = self._rows(f"SELECT id FROM {SCHEMA}.memories WHERE team = %s AND project = %s AND entry_uuid = %s "
                          "ORDER BY id LIMIT 1", (self.team, project, entry_uuid))
        return rows[0][0] if rows else None

    # --- dedup primitives ---------------------------------------------------------------------

    def _forget_cached(self, memory_id: int) -> None:
        if self._exact:
            for key in [k for k, m in self._exact.items() if m is not None and m.id == memory_id]:
                del self._exact[key]

    def prefetch_exact(self, project: str, digests: Iterable[str]) -> None:
        """Look up many content hashes at once (a batch of a sync): `find_exact` then answers them without a
        round trip, until a write to the memory found (or the insert of that hash) forgets the answer."""
        digests = list(dict.fromkeys(digests))
        found = {m_hash: m for m_hash, m in (
            (r[0], StoredMemory.from_values(r[1:])) for r in self._rows(
                f"""SELECT m.hash, {_M_COLUMNS} FROM {SCHEMA}.memories m
                    WHERE m.team = %s AND m.project = %s AND m.hash = ANY(%s)
                    UNION ALL SELECT h.hash, {_M_COLUMNS} FROM {SCHEMA}.memory_hashes h
                    JOIN {SCHEMA}.memories m ON m.id = h.memory_id
                    WHERE h.team = %s AND h.project = %s AND h.hash = ANY(%s)""",
                (self.team, project, digests, self.team, project, digests)))}
        self._exact = {(project, d): found.get(d) for d in digests}

    def forget_prefetched(self) -> None:
        """Drop what `prefetch_exact` answered (another writer may have had the lock since)."""
        self._exact = {}

    def find_exact(self, project: str, digest: str) -> StoredMemory | None:
        if (project, digest) in self._exact:
            return self._exact[(project, digest)]
        found = self._memories("project = %s AND hash = %s", (project, digest))
        if not found:
            found = self._memory_rows(
                f"""SELECT {_M_COLUMNS} FROM {SCHEMA}.memory_hashes h JOIN {SCHEMA}.memories m ON m.id = h.memory_id
                    WHERE h.team = %s AND h.project = %s AND h.hash = %s""", (self.team, project, digest))
        return found[0] if found else None

    def similar_memories(self, project: str, match: str, states: Iterable[str] = ("active",),
                         categories: Iterable[str] = (), exclude: int = 0, limit: int = 12) -> list[StoredMemory]:
        """A few memories of a project matching an FTS5 expression (quoted terms OR-ed), best first."""
        query = tsquery(match)
        if not query:
            return []
        categories = list(categories)
        return self._memory_rows(
            f"""SELECT {_M_COLUMNS} FROM {SCHEMA}.memories m, to_tsquery('simple', %s) q
                WHERE m.team = %s AND m.project = %s AND m.terms @@ q AND m.state = ANY(%s)
                AND (cardinality(%s::text[]) = 0 OR m.category = ANY(%s)) AND m.id <> %s
                ORDER BY ts_rank(m.terms, q) DESC, m.id LIMIT %s""",
            (query, self.team, project, list(states), categories, categories, exclude, limit))

    def common_terms(self, project: str, share: float = 0.02, floor: int = 50) -> dict[str, int]:
        """{term: rows} of the terms in more than `share` of a project's memories (and more than `floor`):
        words that find everything and tell nothing. One pass over the project's index entries."""
        total = self._rows(f"SELECT COUNT(*) FROM {SCHEMA}.memories WHERE team = %s AND project = %s",
                           (self.team, project))[0][0]
        bound = max(floor, int(total * share))
        if total <= bound:
            return {}
        return dict(self._rows(
            "SELECT word, ndoc FROM ts_stat(format('SELECT terms FROM " + SCHEMA + ".memories WHERE team = %%L AND "
            "project = %%L', %s::text, %s::text)) WHERE ndoc > %s", (self.team, project, bound)))

    def similar_batch(self, project: str, matches: list[str], states: Iterable[str] = ("active",),
                      common: dict[str, int] | None = None, limit: int = 12) -> list[list[StoredMemory]]:
        """`similar_memories` for many FTS5 expressions in one round trip, each list best first.

        Terms in `common` (see `common_terms`) are left out of each query, but for the three rarest of them
        when nothing else is left: ranking every memory that shares a common word costs the server more
        than all the rest, and such a word alone never makes two memories one.
        """
        queries = [tsquery(without_common(match, common or {})) for match in matches]
        out: list[list[StoredMemory]] = [[] for _ in matches]
        asked = [(i, q) for i, q in enumerate(queries) if q]
        if not asked:
            return out
        self._fresh_statistics()
        for row in self._batch_rows(asked, project, states, limit):
            out[row[0]].append(StoredMemory.from_values(row[1:]))
        return out

    def _fresh_statistics(self) -> None:
        """Have the planner's statistics caught up with the table? A table that grew past them looks empty
        to it, and it would read every row of the project for each query instead of the full-text index."""
        known, rows = self._rows(
            f"""SELECT GREATEST(c.reltuples, 0), (SELECT COUNT(*) FROM {SCHEMA}.memories WHERE team = %s)
                FROM pg_class c WHERE c.oid = '{SCHEMA}.memories'::regclass""", (self.team,))[0]
        if rows > 200 and rows > 1.25 * known:
            self.db.execute(f"SELECT {SCHEMA}.refresh_statistics()")

    def _batch_rows(self, asked: list[tuple[int, str]], project: str, states: Iterable[str],
                    limit: int) -> list[tuple]:
        return self._rows(
            f"""SELECT q.i, {_M_COLUMNS} FROM unnest(%s::int[], %s::text[]) AS q(i, query)
                CROSS JOIN LATERAL (
                    SELECT m.* FROM {SCHEMA}.memories m, to_tsquery('simple', q.query) tq
                    WHERE m.team = %s AND m.project = %s AND m.terms @@ tq AND m.state = ANY(%s)
                    ORDER BY ts_rank(m.terms, tq) DESC, m.id LIMIT %s) m
                ORDER BY q.i""",
            ([i for i, _ in asked], [q for _, q in asked], self.team, project, list(states), limit))

    def subject_memories(self, project: str, subjects: Iterable[str], states: Iterable[str] = ("active",),
                         exclude: int = 0, limit: int = 12) -> list[StoredMemory]:
        subjects = [s for s in subjects if s]
        if not subjects:
            return []
        return self._memories(
            "project = %s AND subject = ANY(%s) AND subject <> '' AND state = ANY(%s) AND id <> %s "
            "ORDER BY valid_from DESC LIMIT %s", (project, subjects, list(states), exclude, limit))

    # --- supersede and reopen (inside `atomic()`) ----------------------------------------------

    def supersede(self, newer: int, older: int, reason: str, was: str = "", at: str = "") -> bool:
        """Close `older` (valid_to, state superseded) and link `newer` to it; the row is never deleted."""
        self._forget_cached(older)
        self._forget_cached(newer)
        stamp = now_iso()
        rows = self._rows(f"SELECT state, pinned, project FROM {SCHEMA}.memories WHERE id = %s", (older,))
        if not rows or newer == older:
            return False
        state, pinned, project = rows[0]
        self.db.execute(
            f"""INSERT INTO {SCHEMA}.links (team, project, src, dst, kind, reason, created_at, was, member)
                VALUES (%s, %s, %s, %s, 'supersedes', %s, %s, %s, %s)
                ON CONFLICT (src, dst, kind) DO UPDATE SET reason = excluded.reason, was = excluded.was""",
            (self.team, project, newer, older, reason, stamp, was, self.member))
        if state in ("active", "cold"):
            self.db.execute(
                f"""UPDATE {SCHEMA}.memories SET state = 'superseded', valid_to = %s, state_reason = %s, pinned = false,
                    updated_at = %s WHERE id = %s""",
                (at or stamp, f"superseded by #{newer}: {reason}", stamp, older))
            if pinned:
                self.db.execute(f"UPDATE {SCHEMA}.memories SET pinned = true WHERE id = %s", (newer,))
        return True

    def note_replacement(self, newer: int, older: int, reason: str, at: str) -> None:
        project = self._rows(f"SELECT project FROM {SCHEMA}.memories WHERE id = %s", (older,))[0][0]
        self.db.execute(
            f"""INSERT INTO {SCHEMA}.links (team, project, src, dst, kind, reason, created_at, was, member)
                VALUES (%s, %s, %s, %s, 'supersedes', %s, %s, '', %s) ON CONFLICT DO NOTHING""",
            (self.team, project, newer, older, reason, at, self.member))

    def reopen(self, memory_id: int, reason: str, at: str = "") -> None:
        self._forget_cached(memory_id)
        self.db.execute(
            f"""UPDATE {SCHEMA}.memories SET state = 'active', valid_to = NULL, valid_from = %s, state_reason = %s,
                updated_at = %s WHERE id = %s""",
            (at or now_iso(), reason, now_iso(), memory_id))

    # --- links -------------------------------------------------------------------------------

    def links(self, memory_id: int) -> list[Link]:
        return [Link.from_values(v) for v in self._rows(
            f"SELECT {_LINK_COLUMNS} FROM {SCHEMA}.links WHERE src = %s OR dst = %s ORDER BY created_at",
            (memory_id, memory_id))]

    def supersede_links(self, memory_ids: Iterable[int]) -> list[Link]:
        ids = list(memory_ids)
        if not ids:
            return []
        return [Link.from_values(v) for v in self._rows(
            f"""SELECT {_LINK_COLUMNS} FROM {SCHEMA}.links WHERE kind = 'supersedes' AND (src = ANY(%s) OR dst = ANY(%s))
                ORDER BY created_at, src, dst""", (ids, ids))]

    def supersede_pairs(self) -> list[tuple[int, int]]:
        return [(r[0], r[1]) for r in self._rows(
            f"SELECT src, dst FROM {SCHEMA}.links WHERE team = %s AND kind = 'supersedes'", (self.team,))]

    def superseders(self, memory_id: int) -> list[tuple[int, str]]:
        return [(r[0], r[1]) for r in self._rows(
            f"""SELECT l.src, m.state FROM {SCHEMA}.links l JOIN {SCHEMA}.memories m ON m.id = l.src
                WHERE l.dst = %s AND l.kind = 'supersedes' ORDER BY l.created_at, l.src""", (memory_id,))]

    def latest_superseder(self, memory_id: int) -> tuple[int, str] | None:
        rows = self._rows(
            f"""SELECT l.src, m.state FROM {SCHEMA}.links l JOIN {SCHEMA}.memories m ON m.id = l.src
                WHERE l.dst = %s AND l.kind = 'supersedes' ORDER BY l.created_at DESC, l.src DESC LIMIT 1""",
            (memory_id,))
        return (rows[0][0], rows[0][1]) if rows else None

    def was_notes(self, memory_ids: Iterable[int]) -> dict[int, str]:
        notes: dict[int, str] = {}
        for src, was in self._rows(
                f"""SELECT l.src, l.was FROM {SCHEMA}.links l JOIN {SCHEMA}.memories old ON old.id = l.dst
                    WHERE l.kind = 'supersedes' AND l.was <> '' AND old.state = 'superseded' AND l.src = ANY(%s)
                    ORDER BY l.created_at""", (list(memory_ids),)):
            notes[src] = was
        return notes

    # --- what sync reads ------------------------------------------------------------------------

    def changed_memories(self, project: str, after: int,
                         limit: int = 1000) -> list[tuple[int, StoredMemory, str, str]]:
        """(seq, memory, member, state reason) of a project's memories changed after `after`, in the order they
        changed (`member`: who worded it last). A number the sequence never gave (`_SEQ_GIVEN`) is never read."""
        return [(r[0], StoredMemory.from_values(r[3:]), r[1], r[2]) for r in self._rows(
            f"""SELECT seq, member, state_reason, {_COLUMNS} FROM {SCHEMA}.memories
                WHERE team = %s AND project = %s AND seq > %s AND {_SEQ_GIVEN} ORDER BY seq LIMIT %s""",
            (self.team, project, after, limit))]

    def changed_links(self, project: str, after: int, limit: int = 1000) -> list[tuple[int, Link]]:
        """(seq, link) of a project's links made or changed after `after`, in the order they changed."""
        return [(r[0], Link.from_values(r[1:])) for r in self._rows(
            f"""SELECT seq, {_LINK_COLUMNS} FROM {SCHEMA}.links WHERE team = %s AND project = %s AND seq > %s
                AND {_SEQ_GIVEN} ORDER BY seq LIMIT %s""", (self.team, project, after, limit))]

    def active_texts(self, project: str) -> list[str]:
        """The texts of a project's current memories (what every member converges to)."""
        return [r[0] for r in self._rows(
            f"SELECT text FROM {SCHEMA}.memories WHERE team = %s AND project = %s AND state IN ('active', 'cold')",
            (self.team, project))]
