"""The part of `Store` that writes and reads memories and their evidence (a mixin: `store.Store` is the class).

Writes run inside the caller's `Store.atomic()`; reads return `records`. Standard
library only: the hooks read memories through it. It stands on what `Store` provides:
`db` and `_tuples`.
"""

from __future__ import annotations

from ..textutil import content_hash, folded, fts_any, fts_match_forms, fts_terms, index_text, prefix_term
from . import reader
from .records import STATES, Evidence, MinedEntry, NewMemory, ProjectSummary, StoredMemory, Wording, now_iso

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from typing import Iterable

MEMORY_COLUMNS = StoredMemory.columns()
_M_COLUMNS = StoredMemory.columns("m")


class MemoryQueries:
    """Memories and evidence: add, merge, reword, change state; get, list, rank candidates, search."""

    # --- writes (inside `atomic()`) ----------------------------------------------------------

    def add_memory(self, new: NewMemory) -> tuple[int, bool]:
        """Insert a memory, or merge it into its exact duplicate (an earlier wording counts). Returns (id, created)."""
        found = self.find_exact(new.project, content_hash(new.text))
        if found is None:
            return self.insert_memory(new), True
        self.merge_evidence(found.id, new)
        return found.id, False

    def insert_memory(self, new: NewMemory, state: str = "active", pinned: bool = False) -> int:
        """A new memory row with its first evidence row."""
        stamp = now_iso()
        ts = new.ts or stamp
        keywords = " ".join(new.keywords) if new.keywords else index_text(new.text)
        cur = self.db.execute(
            """INSERT INTO memories (project, category, text, hash, keywords, subject, value, state, tentative,
               scope, confidence, pinned, rule_id, role, source, session_id, transcript, entry_uuid, git_branch,
               first_seen, last_seen, valid_from, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (new.project, new.category, new.text, content_hash(new.text), keywords, new.subject, new.value, state,
             int(new.tentative), new.scope, new.confidence, int(pinned), new.rule_id, new.role, new.source,
             new.session_id, new.transcript, new.entry_uuid, new.git_branch, ts, ts, ts, stamp, stamp),
        )
        memory_id = cur.lastrowid
        self._add_evidence(memory_id, new, new.evidence_text or new.text)
        return memory_id

    def _add_evidence(self, memory_id: int, new: NewMemory, text: str) -> bool:
        cur = self.db.execute(
            """INSERT OR IGNORE INTO evidence (memory_id, session_id, transcript, entry_uuid, role, ts, rule_id, text)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            (memory_id, new.session_id, new.transcript, new.entry_uuid, new.role, new.ts, new.rule_id, text),
        )
        return cur.rowcount > 0

    def merge_evidence(self, memory_id: int, new: NewMemory) -> bool:
        """One more evidence row for a memory said again; False when this entry already counted.

        A memory stated in a further session gains more confidence than one repeated within a session.
        """
        if not self._add_evidence(memory_id, new, new.evidence_text or new.text):
            return False
        sessions = self.db.execute(
            "SELECT COUNT(DISTINCT session_id) FROM evidence WHERE memory_id = ?", (memory_id,)
        ).fetchone()[0]
        self.db.execute(
            """UPDATE memories SET evidence_count = evidence_count + 1, session_count = ?,
               last_seen = MAX(last_seen, ?), updated_at = ?,
               confidence = MIN(1.0, confidence + CASE WHEN ? > session_count THEN 0.1 ELSE 0.02 END)
               WHERE id = ?""",
            (sessions, new.ts or now_iso(), now_iso(), sessions, memory_id),
        )
        return True

    def reword(self, memory_id: int, new: NewMemory) -> None:
        """Give a memory newer wording; the old wording's hash keeps pointing at it (unless the new one is the old
        with a secret hidden: then no copy of the old stays, `hidden_copies`)."""
        from .hidden_copies import hides, scrub

        row = self.db.execute("SELECT project, hash, text FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if hides(new.text, row["text"]):
            scrub(self.db, memory_id, new.text)
        else:
            self.db.execute(
                "INSERT OR IGNORE INTO memory_hashes (project, hash, memory_id, text, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (row["project"], row["hash"], memory_id, row["text"], now_iso()),
            )
        keywords = " ".join(new.keywords) if new.keywords else index_text(new.text)
        self.db.execute(
            """UPDATE memories SET text = ?, hash = ?, keywords = ?, rule_id = ?, role = ?, session_id = ?,
               transcript = ?, entry_uuid = ?, subject = CASE WHEN ? <> '' THEN ? ELSE subject END,
               value = CASE WHEN ? <> '' THEN ? ELSE value END, updated_at = ? WHERE id = ?""",
            (new.text, content_hash(new.text), keywords, new.rule_id, new.role, new.session_id, new.transcript,
             new.entry_uuid, new.subject, new.subject, new.value, new.value, now_iso(), memory_id),
        )

    def set_state(self, memory_id: int, state: str, reason: str = "", until: str = "") -> None:
        """Move a memory to another of `STATES`, saying why; `until`: when it stopped being true (valid_to)."""
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}")
        self.db.execute("UPDATE memories SET state = ?, state_reason = ?, updated_at = ?, "
                        "valid_to = CASE WHEN ? <> '' THEN ? ELSE valid_to END WHERE id = ?",
                        (state, reason, now_iso(), until, until, memory_id))

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        """Pin a memory (always recalled, never decays) or unpin it."""
        self.db.execute("UPDATE memories SET pinned = ?, updated_at = ? WHERE id = ?",
                        (int(pinned), now_iso(), memory_id))

    def set_source(self, memory_id: int, source: str) -> None:
        """Say where a memory's wording comes from now (`manual`: the user's by hand)."""
        self.db.execute("UPDATE memories SET source = ?, updated_at = ? WHERE id = ?", (source, now_iso(), memory_id))

    def set_global(self, memory_id: int, everywhere: bool = True) -> None:
        """Recall a memory in every project (scope global), or (`everywhere` False) in its own project only."""
        scope = "global" if everywhere else "project"
        self.db.execute("UPDATE memories SET scope = ? WHERE id = ?", (scope, memory_id))

    def confirm(self, memory_id: int) -> None:
        """A tentative (hedged) memory said plainly: no longer tentative."""
        self.db.execute("UPDATE memories SET tentative = 0 WHERE id = ?", (memory_id,))

    # --- reads --------------------------------------------------------------------------------

    def _memory_rows(self, sql: str, args: tuple, record: type = StoredMemory) -> list:
        """Records from a query selecting `record.columns()` as plain tuples (several times faster than rows)."""
        return [record.from_values(v) for v in self._tuples(sql, args)]

    def _memories(self, where: str, args: tuple, record: type = StoredMemory) -> list:
        columns = MEMORY_COLUMNS if record is StoredMemory else record.columns()
        return self._memory_rows(f"SELECT {columns} FROM memories {where}", args, record)

    def get(self, memory_id: int) -> StoredMemory | None:
        """One memory by id, in any state."""
        found = self._memories("WHERE id = ?", (memory_id,))
        return found[0] if found else None

    def is_purged(self, entry_uuid: str) -> bool:
        """Whether a transcript entry was said in a project purged since (`privacy.purge` keeps their ids)."""
        return self.db.execute("SELECT 1 FROM purged_entries WHERE uuid = ?", (entry_uuid,)).fetchone() is not None

    def forgotten_texts(self, project: str) -> list[str]:
        """The texts of the memories forgotten in a project (global ones too), and of those a correction by hand
        replaced, with the words each sighting of them said (before refinement or a rewording): what a block must
        not say again. A replaced wording that the correction's text holds whole is not among them (the correction
        said more: a line that says it is the current version). Each part is looked up through its own index: the
        hooks ask it at every render."""
        mine = "(m.project = ? OR m.scope = 'global')"
        corrected = """FROM memories m JOIN links l ON l.dst = m.id AND l.kind = 'supersedes'
                       JOIN memories n ON n.id = l.src AND n.source = 'manual'"""
        rows = self._tuples(
            f"""SELECT m.text, '' FROM memories m WHERE m.state = 'forgotten' AND {mine}
                UNION SELECT e.text, '' FROM evidence e JOIN memories m ON m.id = e.memory_id
                      WHERE m.state = 'forgotten' AND {mine} AND e.text <> ''
                UNION SELECT m.text, n.text {corrected} WHERE m.state = 'superseded' AND {mine}
                UNION SELECT e.text, n.text {corrected} JOIN evidence e ON e.memory_id = m.id
                      WHERE m.state = 'superseded' AND {mine} AND e.text <> ''""",
            (project,) * 4).fetchall()
        return list(dict.fromkeys(text for text, now in rows if not now or folded(text) not in folded(now)))

    def state_reason(self, memory_id: int) -> str:
        """Why a memory is in its state ('' when nothing was said, or no such memory)."""
        row = self.db.execute("SELECT state_reason FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return row[0] if row else ""

    def evidence(self, memory_id: int) -> list[Evidence]:
        """Every sighting of a memory, oldest first."""
        return [Evidence.from_values(v) for v in self._tuples(
            f"SELECT {Evidence.columns()} FROM evidence WHERE memory_id = ? ORDER BY ts, id", (memory_id,))]

    def wordings(self, memory_id: int) -> list[Wording]:
        """Earlier wordings a memory had before near-duplicates reworded it."""
        return [Wording.from_values(v) for v in self._tuples(
            "SELECT text, created_at FROM memory_hashes WHERE memory_id = ? ORDER BY created_at", (memory_id,))]

    def list_memories(self, project: str | None = None, category: str | None = None,
                      states: Iterable[str] = ("active",), limit: int = 100) -> list[StoredMemory]:
        """Memories by project, category and states, newest first."""
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
        return self._memories(f"{where} ORDER BY last_seen DESC, id DESC LIMIT ?", (*args, limit))

    def project_memories(self, project: str) -> list[StoredMemory]:
        """Every memory of a project, in any state, in the order the index gives."""
        return self._memories("WHERE project = ?", (project,))

    def open_todo_words(self, project: str) -> list[tuple[int, str, str, str]]:
        """(id, keywords, text, last seen) of a project's active todos that are not pinned (a pinned one never goes
        cold), in the order the index gives: what done-todo matching reads of each (whole memories cost several times
        as much, with thousands open)."""
        return list(self._tuples("SELECT id, keywords, text, last_seen FROM memories "
                                 "WHERE project = ? AND state = 'active' AND category = 'todo' AND pinned = 0",
                                 (project,)))

    def unpinned_active(self, project: str | None = None) -> list[StoredMemory]:
        """Active memories that are not pinned (what may decay), of one project or of all."""
        return self._memories("WHERE state = 'active' AND pinned = 0" + (" AND project = ?" if project else ""),
                              (project,) if project else ())

    def memories_by_id(self, ids: Iterable[int], record: type = StoredMemory) -> list:
        """The memories with these ids (in any state, in id order per batch of 500), as `record`s: whole
        (`StoredMemory`) or what ranking needs of them (`MemoryHead`)."""
        ids = list(ids)
        out: list = []
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            out += self._memories(f"WHERE id IN ({','.join('?' * len(batch))})", tuple(batch), record)
        return out

    def candidates(self, project: str, per_category: int = 60, record: type = StoredMemory) -> list:
        """Active memories a recall considers: pinned and global ones, and the freshest of each category, as
        `record`s (see `memories_by_id`).

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
            for memory in self._memories(where, args, record):
                seen.setdefault(memory.id, memory)
        return list(seen.values())

    def latest_ids(self, project: str, category: str, role: str, after: str, until: str, limit: int) -> list[int]:
        """Ids of a project's latest active memories of a category (and role, unless ''), last seen after
        `after` and until `until` (inclusive), newest first; the query walks one range of an index."""
        rows = self._tuples(
            "SELECT id FROM memories WHERE project = ? AND state = 'active' AND category = ? "
            "AND last_seen > ? AND last_seen <= ?" + (" AND role = ?" if role else "")
            + " ORDER BY last_seen DESC, id DESC LIMIT ?",
            (project, category, after, until, *((role,) if role else ()), limit))
        return [row[0] for row in rows]

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
        match = fts_any([prefix_term(t)] for t in terms)  # a Russian or Ukrainian word in any of its forms
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

    def neighbours(self, memory_ids: Iterable[int], project: str, window: int) -> dict[int, list[tuple[int, int]]]:
        """For each memory, the active memories of `project` said just before and after it in its own session (by
        the order their evidence was recorded), up to `window` each way: [(neighbour id, steps away)]."""
        found: dict[int, list[tuple[int, int]]] = {}
        ids = list(memory_ids)
        if window <= 0 or not ids:
            return found
        # Each memory's first sighting (one query), then the rows recorded just before and after it (one each).
        firsts = self._tuples(
            f"""SELECT memory_id, MIN(id), session_id FROM evidence WHERE memory_id IN ({','.join('?' * len(ids))})
                GROUP BY memory_id""", ids).fetchall()
        side = """SELECT * FROM (SELECT e.memory_id, e.id FROM evidence e JOIN memories m ON m.id = e.memory_id
                  WHERE e.session_id = ? AND e.id {op} ? AND m.project = ? AND m.state = 'active'
                  ORDER BY e.id {order} LIMIT ?)"""
        around = side.format(op="<", order="DESC") + " UNION ALL " + side.format(op=">", order="ASC")
        for memory_id, first, session_id in firsts:
            if not session_id:
                continue
            before: list[int] = []
            after: list[int] = []
            for other, row in self._tuples(around, (session_id, first, project, 4 * window) * 2):
                near = before if row < first else after
                if other != memory_id and other not in near and len(near) < window:
                    near.append(other)
            found[memory_id] = [(other, step) for near in (before, after) for step, other in enumerate(near, 1)]
        return found

    def rare_terms(self, terms: list[str], limit: int = 8, index: str = "memories") -> list[str]:
        """The `limit` terms found in the fewest rows of `index` ("memories" or "archive"), and in one at least."""
        counts = sorted((docs, term) for term, docs in reader.document_frequencies(self.db, index, terms).items())
        return [term for _, term in counts[:limit]]

    def search(self, query: str, project: str | None = None, states: Iterable[str] = ("active",),
               limit: int = 200, forms: dict[str, list[list]] | None = None) -> list[tuple[StoredMemory, float]]:
        """Memories matching free text, with their BM25 rank (lower is better); never an FTS5 syntax error.

        `forms`: for terms of the query, the glossary's words for them in other languages
        (`recall.glossary.expand`), matched as the terms are."""
        match = fts_match_forms(fts_terms(query), forms)
        if not match:
            return []
        states = list(states)
        clauses = [f"m.state IN ({','.join('?' * len(states))})"] if states else []
        args: list = [match, *states]
        if project:
            clauses.append("(m.project = ? OR m.scope = 'global')")
            args.append(project)
        where = (" AND " + " AND ".join(clauses)) if clauses else ""
        rows = self._tuples(
            f"""SELECT {_M_COLUMNS}, bm25(memories_fts, 1.0, 0.5) AS rank FROM memories_fts
                JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ?{where} ORDER BY rank LIMIT ?""",
            (*args, limit),
        )
        return [(StoredMemory.from_values(row[:-1]), row[-1]) for row in rows]

    def projects(self) -> list[ProjectSummary]:
        """Every project with active memories, the latest seen first."""
        return [ProjectSummary.from_values(v) for v in self._tuples(
            """SELECT project, COUNT(*) AS memories, MAX(last_seen) AS last_seen FROM memories
               WHERE state = 'active' GROUP BY project ORDER BY last_seen DESC""")]

    def session_memory_ids(self, session_id: str, project: str, limit: int,
                           categories: tuple[str, ...] = ("decision", "todo")) -> list[tuple[int, str]]:
        """(id, category) of the project's active memories of `categories` (every category when empty) this
        session stated or restated, the latest said first (at most `limit`)."""
        among = f" AND m.category IN ({','.join('?' * len(categories))})" if categories else ""
        return [(row[0], row[1]) for row in self._tuples(
            f"""SELECT m.id, m.category, MAX(e.ts) AS said FROM evidence e JOIN memories m ON m.id = e.memory_id
               WHERE e.session_id = ? AND m.project = ? AND m.state = 'active'{among}
               GROUP BY m.id ORDER BY said DESC, m.id DESC LIMIT ?""",
            (session_id, project, *categories, limit))]

    def mined_entries(self) -> list[MinedEntry]:
        """One record per (memory, entry): what the miner produced from each transcript entry, in its words."""
        return [MinedEntry.from_values(v) for v in self._tuples(
            """SELECT e.memory_id AS memory_id, e.entry_uuid AS uuid, COALESCE(NULLIF(e.text, ''), m.text) AS text,
               m.category AS category FROM evidence e JOIN memories m ON m.id = e.memory_id""")]

    def memory_ids_of_entry(self, entry_uuid: str) -> list[int]:
        """The memories a transcript entry is evidence of."""
        return [row[0] for row in self._tuples(
            "SELECT DISTINCT memory_id FROM evidence WHERE entry_uuid = ?", (entry_uuid,))]

    def sessions_with_user_memory(self) -> set[str]:
        """The sessions whose user's own words gave a memory."""
        return {row[0] for row in self._tuples("SELECT DISTINCT session_id FROM evidence WHERE role = 'user'")}
