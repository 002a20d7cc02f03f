"""Reads for browsing the store page by page (the web viewer, `miner ui`): filtered and searched lists with
their totals, facet counts, a project's sessions and what each one said, the time span of a project, and the
archived turns around a piece of evidence.

Every function takes an open `Store` and only reads. Each list is one page (`offset`, `limit`) in an order an
index gives, so a page costs the same in a store of 100 memories or of 100,000; a total is counted up to
`COUNT_CAP` and said as "at least" beyond.
"""

from __future__ import annotations

from typing import Iterable

from ..textutil import fts_match_forms, fts_terms
from .records import STATES, ArchivedUnit, Session, StoredMemory
from .store import Store

COUNT_CAP = 10_000
# The states a viewer filters by: the stored states, with "unconfirmed" for an active memory said hedged.
VIEW_STATES = ("active", "unconfirmed", "quarantined", "superseded", "cold", "forgotten")
CATEGORIES = ("decision", "preference", "fact", "todo")
_M = StoredMemory.columns("m")


class Page:
    """One page of a list: its rows, the total (exact up to `COUNT_CAP`, else `COUNT_CAP` and `more`), and
    whether a next page has rows (`has_next`: known from one row fetched beyond the page, or from the total)."""

    __slots__ = ("rows", "total", "more", "offset", "limit", "has_next")

    def __init__(self, rows: list, total: int, more: bool, offset: int, limit: int, has_next: bool | None = None):
        self.rows, self.total, self.more, self.offset, self.limit = rows, total, more, offset, limit
        self.has_next = offset + len(rows) < total if has_next is None else has_next


def _state_clause(state: str | None) -> tuple[list[str], list]:
    if not state or state == "all":
        return [], []
    if state == "unconfirmed":  # the active memories that were said hedged (shown marked when asked for)
        return ["m.state = 'active'", "m.tentative = 1"], []
    if state not in STATES:
        raise ValueError(f"unknown state {state!r}; one of {', '.join(VIEW_STATES)} or all")
    return ["m.state = ?"], [state]


def _day_end(day: str) -> str:
    """Above every time of `day` as stored ("YYYY-MM-DDT…", ASCII) and below the next day's (even past 9999-12-31,
    where the next day is no date)."""
    return day + "~"


def memories(store: Store, project: str, category: str | None = None, state: str | None = "active",
             day: str | None = None, query: str = "", offset: int = 0, limit: int = 50,
             forms: dict[str, list[list]] | None = None) -> Page:
    """A project's memories, newest said first, or best match first when `query` is given. `state`: a stored
    state, "unconfirmed" (the active ones said hedged) or "all"; `day` (YYYY-MM-DD): only those last said on
    that day (UTC); `forms`: the glossary's words for terms of the query (`Store.search`)."""
    clauses, args = _state_clause(state)
    if category:
        clauses.append("m.category = ?")
        args.append(category)
    if day:
        clauses += ["m.last_seen >= ?", "m.last_seen < ?"]
        args += [day, _day_end(day)]
    match = fts_match_forms(fts_terms(query), forms) if query.strip() else ""
    if query.strip() and not match:
        return Page([], 0, False, offset, limit)
    if match:
        clauses.insert(0, "m.project = ?")
        base = "FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? AND "
        base_args = [match, project, *args]
        order = "ORDER BY bm25(memories_fts, 1.0, 0.5), m.id"
    else:
        clauses.insert(0, "m.project = ?")
        base = "FROM memories m WHERE "
        base_args = [project, *args]
        order = "ORDER BY m.last_seen DESC, m.id DESC"
    where = base + " AND ".join(clauses)
    rows = [StoredMemory.from_values(v) for v in store._tuples(
        f"SELECT {_M} {where} {order} LIMIT ? OFFSET ?", (*base_args, limit + 1, offset))]
    following = len(rows) > limit
    if match and (rows or not offset):  # hits are ranked, not counted: counting would match the index a second time
        return Page(rows[:limit], offset + min(len(rows), limit), following, offset, limit, following)
    # (A page past the last hit counts them: it would say there are as many as the pages before it hold.)
    total = store._tuples(f"SELECT COUNT(*) FROM (SELECT 1 {where} LIMIT ?)",
                          (*base_args, COUNT_CAP + 1)).fetchone()[0]
    return Page(rows[:limit], min(total, COUNT_CAP), total > COUNT_CAP, offset, limit, following)


def facets(store: Store, project: str) -> dict[str, dict[str, int]]:
    """A project's memories counted by state (with "unconfirmed": how many of the active ones were said hedged)
    and, for the active ones, by category."""
    by_state = dict.fromkeys(VIEW_STATES, 0)
    by_category = dict.fromkeys(CATEGORIES, 0)
    # Both from indexes alone: states and categories from (project, state, category, …), the unconfirmed
    # from their own partial index.
    for state, category, count in store._tuples(
            "SELECT state, category, COUNT(*) FROM memories WHERE project = ? GROUP BY state, category", (project,)):
        by_state[state] = by_state.get(state, 0) + count
        if state == "active":
            by_category[category] = by_category.get(category, 0) + count
    unconfirmed = store._tuples("SELECT COUNT(*) FROM memories WHERE project = ? AND state = 'active' AND tentative = 1",
                                (project,)).fetchone()[0]
    by_state["unconfirmed"] = unconfirmed
    return {"state": by_state, "category": by_category}


def counts(store: Store) -> dict:
    """The whole store counted (for the viewer's health page), each from an index: memories by state, the active
    ones by category, evidence, projects, sessions and transcripts."""
    def one(sql: str) -> int:
        return store._tuples(sql).fetchone()[0]

    by_state = dict(store._tuples("SELECT state, COUNT(*) FROM memories GROUP BY state"))
    return {
        "database": str(store.path), "memories": sum(by_state.values()), "by_state": by_state,
        "by_category": dict(store._tuples(
            "SELECT category, COUNT(*) FROM memories WHERE state = 'active' GROUP BY category")),
        "evidence": one("SELECT COUNT(*) FROM evidence"), "projects": one("SELECT COUNT(DISTINCT project) FROM memories"),
        "sessions": one("SELECT COUNT(*) FROM sessions"), "transcripts": one("SELECT COUNT(*) FROM watermarks"),
    }


def projects(store: Store) -> list[str]:
    """Every project the store holds a memory or a session of, by name."""
    return [row[0] for row in store._tuples(
        "SELECT project FROM sessions WHERE project <> '' UNION SELECT DISTINCT project FROM memories ORDER BY 1")]


def sessions(store: Store, project: str, offset: int = 0, limit: int = 50) -> Page:
    """A project's sessions, the latest first, each with how many memories it stated or restated."""
    rows = store._tuples(
        f"""SELECT {Session.columns("s")}, (SELECT COUNT(DISTINCT e.memory_id) FROM evidence e
                                            WHERE e.session_id = s.session_id) AS said
            FROM sessions s WHERE s.project = ? ORDER BY s.last_ts DESC LIMIT ? OFFSET ?""",
        (project, limit, offset)).fetchall()
    total = store._tuples("SELECT COUNT(*) FROM sessions WHERE project = ?", (project,)).fetchone()[0]
    return Page([(Session.from_values(row[:-1]), row[-1]) for row in rows], total, False, offset, limit)


def session_memories(store: Store, session_id: str, offset: int = 0, limit: int = 100) -> Page:
    """What a session said: each memory it stated or restated, with whether it was first said there, in the
    order the session said them."""
    rows = store._tuples(
        f"""SELECT {_M}, MIN(e.ts) AS said FROM evidence e JOIN memories m ON m.id = e.memory_id
            WHERE e.session_id = ? GROUP BY m.id ORDER BY said, m.id LIMIT ? OFFSET ?""",
        (session_id, limit, offset)).fetchall()
    total = store._tuples("SELECT COUNT(DISTINCT memory_id) FROM evidence WHERE session_id = ?",
                          (session_id,)).fetchone()[0]
    found = [(StoredMemory.from_values(row[:-1]), row[-1]) for row in rows]
    return Page([(m, said, m.session_id == session_id) for m, said in found], total, False, offset, limit)


def span(store: Store, project: str) -> tuple[str, str]:
    """The first and the last time a session of the project (or, without sessions, a memory) was seen."""
    first, last = store._tuples("SELECT MIN(first_ts), MAX(last_ts) FROM sessions WHERE project = ? AND first_ts <> ''",
                                (project,)).fetchone()
    if not first:
        first, last = store._tuples("SELECT MIN(first_seen), MAX(last_seen) FROM memories WHERE project = ?",
                                    (project,)).fetchone()
    return first or "", last or ""


def said_times(store: Store, memory_ids: Iterable[int]) -> dict[int, list[str]]:
    """Each memory's evidence times, oldest first (when it was said and restated)."""
    ids = list(memory_ids)
    times: dict[int, list[str]] = {i: [] for i in ids}
    if ids:
        for memory_id, ts in store._tuples(
                f"SELECT memory_id, ts FROM evidence WHERE memory_id IN ({','.join('?' * len(ids))}) ORDER BY ts",
                ids):
            times[memory_id].append(ts)
    return times


def turns_around(store: Store, session_id: str, entry_uuid: str, ts: str, around: int = 3) -> list[tuple[bool, ArchivedUnit]]:
    """The archived units said around a transcript entry in its session: (is the entry itself, unit), in the
    order they were said. Hidden units (of forgotten memories) are left out; [] when the session is not archived."""
    if not session_id:
        return []
    columns = ArchivedUnit.columns()
    own = [ArchivedUnit.from_values(v) for v in store._tuples(
        f"SELECT {columns} FROM archive WHERE entry_uuid = ? AND session_id = ? ORDER BY id", (entry_uuid, session_id))]
    if own:
        low, high = own[0].id, own[-1].id
    else:  # the entry itself was not archived (tool output, or below the quality gate): its neighbours in time
        row = store._tuples("SELECT MAX(id) FROM archive WHERE session_id = ? AND ts <= ?", (session_id, ts)).fetchone()
        if row[0] is None:
            return []
        low = high = row[0]
    before = store._tuples(
        f"SELECT {columns} FROM archive WHERE session_id = ? AND id < ? AND hidden = 0 ORDER BY id DESC LIMIT ?",
        (session_id, low, around)).fetchall()
    after = store._tuples(
        f"SELECT {columns} FROM archive WHERE session_id = ? AND id > ? AND hidden = 0 ORDER BY id LIMIT ?",
        (session_id, high, around)).fetchall()
    units = [(False, ArchivedUnit.from_values(v)) for v in reversed(before)]
    units += [(True, unit) for unit in own if not unit.hidden]
    if not own:
        units += [(False, ArchivedUnit.from_values(v)) for v in store._tuples(
            f"SELECT {columns} FROM archive WHERE id = ? AND hidden = 0", (low,))]
    units += [(False, ArchivedUnit.from_values(v)) for v in after]
    return units


def recent_recalls(store: Store, limit: int = 200) -> list[tuple[str, str, str, float, int]]:
    """The latest recalls of every project: (when, project, situation, milliseconds, characters)."""
    return list(store._tuples(
        "SELECT created_at, project, situation, elapsed_ms, chars FROM recall_log ORDER BY id DESC LIMIT ?",
        (limit,)))


def said_beyond(units: list, shown: Iterable[str]) -> list:
    """The archived units that do not say what a memory of `shown` says (a search lists the memory once)."""
    texts = [" ".join(text.lower().split()) for text in shown]
    return [unit for unit in units if not any(" ".join(unit.text.lower().split()) in text for text in texts)]
