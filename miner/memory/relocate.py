"""`miner move`: a project's rows filed under the folder it was moved to.

Every row is filed under its project's root, the folder Claude Code ran in. Moved or renamed, the folder's new
sessions start a project of their own; `move_project` files the old one's memories, sessions, checkpoints,
watermarks, archive and recall log under the new path (and those of projects in folders inside it under the same
folders inside the new one), in one transaction.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from .dedup import Deduper
from .import_merge import carry_over, closed_by_hand
from .privacy import PROJECT_TABLES as TABLES
from .privacy import clear_block_cache
from .privacy import stored_projects as all_projects
from .repair import merge_into


def stored_projects(store, old: str) -> list[str]:
    """The projects the store keeps at `old` or in a folder inside it."""
    inside = old.rstrip("/") + "/"
    return sorted(p for p in all_projects(store) if p == old or p.startswith(inside))


def move_project(store, old: str, new: str) -> dict[str, int]:
    """File every row of `old`, and of the projects inside it, under `new` (the same folders inside it). Returns
    the rows moved by table, and as "already there" the memories that joined one the new path held in the same
    words."""
    counts = dict.fromkeys((*TABLES, "already there"), 0)
    with store.atomic() as db:
        for project in stored_projects(store, old):
            target = new + project[len(old):]
            joined = _join_same_words(store, project, target)
            counts["already there"] += len(joined)
            for table in TABLES:
                counts[table] += db.execute(f"UPDATE {table} SET project = ? WHERE project = ?",
                                            (target, project)).rowcount
            db.execute("UPDATE sessions SET cwd = ?1 || substr(cwd, ?2) WHERE project = ?3 AND (cwd = ?4 OR "
                       "substr(cwd, 1, ?2) = ?4 || '/')", (new, len(old) + 1, target, old))
            for session_id, body in db.execute("SELECT session_id, body FROM checkpoints WHERE project = ?",
                                               (target,)).fetchall():
                checkpoint = json.loads(body)
                checkpoint["project"] = target
                for key in ("decisions", "todos"):  # (ids of the session's memories: a joined one's is the other's)
                    if isinstance(checkpoint.get(key), list):
                        checkpoint[key] = [joined.get(i, i) for i in checkpoint[key]]
                db.execute("UPDATE checkpoints SET body = ? WHERE session_id = ?",
                           (json.dumps(checkpoint, ensure_ascii=False), session_id))
            db.execute("UPDATE OR IGNORE memory_hashes SET project = ? WHERE project = ?", (target, project))
            db.execute("DELETE FROM memory_hashes WHERE project = ?", (project,))  # (a wording the new path knew)
            db.execute("UPDATE OR IGNORE team_sync SET project = ? WHERE project = ?", (target, project))
            db.execute("DELETE FROM team_sync WHERE project = ?", (project,))
    clear_block_cache()  # (rendered for the old path, or for the new one without what it now holds)
    return counts


def _join_same_words(store, project: str, target: str) -> dict[int, int]:
    """Each memory of `project` that `target` holds in the same words joins that one (a project holds a wording
    once): its evidence, links and wordings go to it, and what the user decided of it (forgotten, superseded,
    pinned) carries over, as in an import. Returns {joined id: the id it joined}."""
    db = store.db
    pairs = db.execute("SELECT here.id, there.id FROM memories here JOIN memories there ON there.project = ? AND "
                       "there.hash = here.hash WHERE here.project = ?", (target, project)).fetchall()
    for joined, kept in pairs:
        record = dict(db.execute("SELECT * FROM memories WHERE id = ?", (joined,)).fetchone())
        merge_into(db, joined, kept)  # (what replaced it there now replaces the one kept)
        here = store.get(kept)
        if record["state"] == "superseded" and (record["valid_to"] or "") < here.last_seen:
            # Replaced there, and said again here since: current, and what replaced it is closed in turn, as when a
            # replaced memory is said again (not a user's correction by hand: then the close carries over).
            said = SimpleNamespace(ts=here.last_seen, role=here.role, source=here.source)
            if Deduper(store).restate(here, said) is not None:
                record["state"] = "active"
        carry_over(store, kept, record)
        db.execute("UPDATE memories SET evidence_count = (SELECT COUNT(*) FROM evidence WHERE memory_id = ?1), "
                   "session_count = (SELECT COUNT(DISTINCT session_id) FROM evidence WHERE memory_id = ?1), "
                   "first_seen = MIN(first_seen, ?2), last_seen = MAX(last_seen, ?3) WHERE id = ?1",
                   (kept, record["first_seen"], record["last_seen"]))
    for memory_id in closed_by_hand(db, [kept for _, kept in pairs]):  # as an import: what the user forgot or
        store.hide_archived(memory_id)  # corrected by hand is found again through the archive of neither project
    return dict(pairs)
