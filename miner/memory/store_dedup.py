"""The part of `Store` that dedup and corrections stand on, and the links between memories (a mixin).

Exact duplicates, the candidates of a near-duplicate or a conflict, closing a
memory that another supersedes (a link, never a deletion), and reading those
links back. Writes run inside the caller's `Store.atomic()`.

Like the other mixins it stands on what `Store` provides: `db`, `_tuples`, and `_memories`
and `_memory_rows` of `store_memories`.
"""

from __future__ import annotations

from .records import Link, StoredMemory, now_iso

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from typing import Iterable

_M_COLUMNS = StoredMemory.columns("m")
_LINK_COLUMNS = Link.columns()
# A term in more memories than this (of every project) is left out of a near-duplicate look-up. Mining into a
# store of 100k memories (bench/mine.py --prefill 100000 --prefill-into same) stored the same memories with 500 as
# with 1,000, for 6.3-7.0 s of CPU instead of 7.3-7.9; 150 of the 151 paraphrase and correction pairs of tests/fixtures/pairs, whose
# first statement sat among those 100k, found it as a candidate with either cap.
COMMON_DOCS = 500
# A project that holds most of the store ranks this many times `limit` of the index's best matches first.
FIRST_RANKED = 4


class DedupQueries:
    """Dedup primitives (exact, similar, same subject), supersede and reopen; supersede links and notes."""

    common_docs = COMMON_DOCS  # (a test sets its own on the instance)

    # --- dedup primitives ---------------------------------------------------------------------

    def find_exact(self, project: str, digest: str) -> StoredMemory | None:
        """The memory whose text, or an earlier wording of it, has this content hash."""
        found = self._memories("WHERE project = ? AND hash = ?", (project, digest))
        if not found:
            found = self._memory_rows(
                f"""SELECT {_M_COLUMNS} FROM memory_hashes h JOIN memories m ON m.id = h.memory_id
                    WHERE h.project = ? AND h.hash = ?""", (project, digest))
        return found[0] if found else None

    def similar_memories(self, project: str, match: str, states: Iterable[str] = ("active",),
                         categories: Iterable[str] = (), exclude: int = 0, limit: int = 12) -> list[StoredMemory]:
        """A few memories of a project matching an FTS5 expression (already escaped), best first.

        Terms found in more than `common_docs` memories (of every project) are left out, as on the team server:
        ranking every memory that shares a common word is what made a look-up cost more as the store grew, and
        such a word alone never makes two memories one. When only such terms are left, the first three stay (their
        counts stop at the cap, so which of them is rarest is not known).

        In a store mostly of `project`, FTS5 first ranks the index's best matches alone
        (`_similar_first_ranked`), which gives the same memories without joining every match.
        """
        newest = self.db.execute("SELECT max(id) FROM memories").fetchone()[0] or 0
        match = self._without_common(match, newest)
        states, categories = list(states), list(categories)
        if newest > self.common_docs and self._holds_most(project, newest):  # (a small store: one query is cheaper)
            found = self._similar_first_ranked(project, match, states, categories, exclude, limit)
            if found is not None:
                return found
        clauses = [f"m.state IN ({','.join('?' * len(states))})"]
        args: list = [match, project, *states]
        if categories:
            clauses.append(f"m.category IN ({','.join('?' * len(categories))})")
            args += categories
        return self._memory_rows(
            f"""SELECT {_M_COLUMNS} FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ? AND m.project = ? AND {' AND '.join(clauses)} AND m.id <> ?
                ORDER BY bm25(memories_fts, 1.0, 0.5) LIMIT ?""",
            (*args, exclude, limit))

    def _similar_first_ranked(self, project: str, match: str, states: list[str], categories: list[str],
                              exclude: int, limit: int) -> list[StoredMemory] | None:
        """`similar_memories` from the index's best matches of every project, ranked by FTS5 alone (no join for
        each match), then kept when of `project`, `states` and `categories`, in that order. Those are the same
        memories the join finds when at least `limit` of them are kept, or when the index matched no more than
        it gave; None otherwise."""
        asked = FIRST_RANKED * limit
        ids = [row[0] for row in self._tuples(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts, 1.0, 0.5) LIMIT ?",
            (match, asked))]
        if not ids:
            return []
        # By id alone: a condition on the project would have SQLite walk the project's index instead.
        rows = {m.id: m for m in self._memories(f"WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))}
        kept = [m for m in (rows.get(i) for i in ids) if m is not None and m.project == project and m.state in states
                and (not categories or m.category in categories) and m.id != exclude]
        return kept[:limit] if len(kept) >= limit or len(ids) < asked else None

    def _holds_most(self, project: str, newest: int) -> bool:
        """Whether `project` holds at least half the memories (counted again once the store grew by a quarter;
        `newest`: the newest memory's id): then the index's best matches are mostly its own."""
        share, at = self._shares.get(project, (0.0, -1))
        if at < 0 or newest > 1.25 * at + 100:
            count = self.db.execute("SELECT count(*) FROM memories WHERE project = ?", (project,)).fetchone()[0]
            share, at = count / max(1, newest), newest
            self._shares[project] = share, at
        return share >= 0.5

    def _without_common(self, match: str, newest: int) -> str:
        """`match` without its terms in more than `common_docs` memories (`newest`: the newest memory's id)."""
        from .fts_query import expression_terms, without_common

        terms = expression_terms(match)
        if len(terms) <= 3:  # the first three would stay anyway
            return match
        known, cap = self._term_docs, self.common_docs
        if newest <= cap:  # no word can be in more memories than there are
            return match
        if len(known) > 20_000:  # a long-running watcher forgets now and then
            known.clear()
        common: dict[str, int] = {}
        for term in terms:
            docs, at = known.get(term, (-1, 0))
            # A count is kept while the memories added since could not have taken it past the cap.
            if docs < 0 or (docs <= cap < docs + newest - at):
                docs = self.db.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
                    (f'"{term}"', cap + 1)).fetchone()[0]
                known[term] = docs, newest
            if docs > cap:
                common[term.lower()] = docs
        return without_common(match, common)

    def subject_memories(self, project: str, subjects: Iterable[str], states: Iterable[str] = ("active",),
                         exclude: int = 0, limit: int = 12) -> list[StoredMemory]:
        """Memories of a project stated about one of `subjects`, newest first."""
        subjects, states = [s for s in subjects if s], list(states)
        if not subjects:
            return []
        # `subject <> ''` lets SQLite use the partial index of memories that have a subject (few), instead of
        # reading every current memory of the project.
        return self._memories(
            f"""WHERE project = ? AND subject IN ({','.join('?' * len(subjects))}) AND subject <> ''
                AND state IN ({','.join('?' * len(states))}) AND id <> ? ORDER BY valid_from DESC LIMIT ?""",
            (project, *subjects, *states, exclude, limit))

    # --- supersede and reopen (inside `atomic()`) ----------------------------------------------

    def supersede(self, newer: int, older: int, reason: str, was: str = "", at: str = "") -> bool:
        """Close `older` (valid_to, state superseded) and link `newer` to it; the row is never deleted.

        A pin moves to the successor: the user wanted this topic always recalled.
        """
        stamp = now_iso()
        row = self.db.execute("SELECT state, pinned FROM memories WHERE id = ?", (older,)).fetchone()
        if row is None or newer == older:
            return False
        self.db.execute(
            """INSERT INTO links (src, dst, kind, reason, created_at, was) VALUES (?, ?, 'supersedes', ?, ?, ?)
               ON CONFLICT (src, dst, kind) DO UPDATE SET reason = excluded.reason, was = excluded.was""",
            (newer, older, reason, stamp, was),
        )
        if row["state"] in ("active", "cold"):
            self.db.execute(
                """UPDATE memories SET state = 'superseded', valid_to = ?, state_reason = ?, pinned = 0, updated_at = ?
                   WHERE id = ?""",
                (at or stamp, f"superseded by #{newer}: {reason}", stamp, older),
            )
            if row["pinned"]:
                self.db.execute("UPDATE memories SET pinned = 1 WHERE id = ?", (newer,))
        return True

    def note_replacement(self, newer: int, older: int, reason: str, at: str) -> None:
        """Link `newer` to `older` as its replacement without closing `older` (which stays as it is)."""
        self.db.execute(
            """INSERT OR IGNORE INTO links (src, dst, kind, reason, created_at, was)
               VALUES (?, ?, 'supersedes', ?, ?, '')""",
            (newer, older, reason, at),
        )

    def reopen(self, memory_id: int, reason: str, at: str = "") -> None:
        """Make a closed memory current again (restated after it was superseded)."""
        self.db.execute(
            """UPDATE memories SET state = 'active', valid_to = NULL, valid_from = ?, state_reason = ?, updated_at = ?
               WHERE id = ?""",
            (at or now_iso(), reason, now_iso(), memory_id),
        )

    # --- links -------------------------------------------------------------------------------

    def links(self, memory_id: int) -> list[Link]:
        """Every link from or to a memory, oldest first."""
        return [Link.from_values(v) for v in self._tuples(
            f"SELECT {_LINK_COLUMNS} FROM links WHERE src = ? OR dst = ? ORDER BY created_at", (memory_id, memory_id))]

    def supersede_links(self, memory_ids: Iterable[int]) -> list[Link]:
        """Supersede links touching any of `memory_ids` (either end), oldest first."""
        ids = list(memory_ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return [Link.from_values(v) for v in self._tuples(
            f"""SELECT {_LINK_COLUMNS} FROM links WHERE kind = 'supersedes' AND (src IN ({marks}) OR dst IN ({marks}))
                ORDER BY created_at, src, dst""",
            (*ids, *ids))]

    def supersede_pairs(self) -> list[tuple[int, int]]:
        """(newer, older) of every supersede link in the store."""
        return [(row[0], row[1]) for row in self._tuples("SELECT src, dst FROM links WHERE kind = 'supersedes'")]

    def superseders(self, memory_id: int) -> list[tuple[int, str]]:
        """(id, state) of each memory linked as having superseded `memory_id`."""
        found = []
        for (src,) in self._tuples("SELECT src FROM links WHERE dst = ? AND kind = 'supersedes'", (memory_id,)):
            state = self.db.execute("SELECT state FROM memories WHERE id = ?", (src,)).fetchone()
            found.append((src, state[0]))
        return found

    def latest_superseder(self, memory_id: int) -> tuple[int, str] | None:
        """(id, state) of the memory that superseded `memory_id` most recently, or None."""
        row = self.db.execute(
            """SELECT l.src, m.state FROM links l JOIN memories m ON m.id = l.src
               WHERE l.dst = ? AND l.kind = 'supersedes' ORDER BY l.created_at DESC LIMIT 1""",
            (memory_id,),
        ).fetchone()
        return (row[0], row[1]) if row else None

    def was_notes(self, memory_ids: Iterable[int]) -> dict[int, str]:
        """For current memories that replaced another: the short "was" note of the newest replacement.

        One query for any number of ids; recall uses it to print "(was: …)".
        """
        ids = list(memory_ids)
        notes: dict[int, str] = {}
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            rows = self._tuples(
                f"""SELECT l.src, l.was FROM links l JOIN memories old ON old.id = l.dst
                    WHERE l.kind = 'supersedes' AND l.was <> '' AND old.state = 'superseded'
                    AND l.src IN ({','.join('?' * len(batch))}) ORDER BY l.created_at""",
                batch,
            )
            for src, was in rows:
                notes[src] = was
        return notes
