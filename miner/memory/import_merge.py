"""How an imported memory joins the store (`portable`): taken, with a fresh id where its own is taken, or merged
into the memory the project holds already, found by its text or by an earlier wording of either; and what a merge
takes on of what the user decided on the other machine (a forget, a supersession, a pin, in every project too).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from .export_records import PortableError, checked_memory, held_back, shown_value
from .store import Store


@dataclass
class ImportSummary:
    memories: int = 0
    merged: int = 0
    evidence: int = 0
    links: int = 0
    wordings: int = 0
    sessions: int = 0
    checkpoints: int = 0
    archived: int = 0
    purged: int = 0
    states: int = 0  # merged memories that took on a forget, supersession or pin from the file
    quarantined: int = 0  # current memories whose text reads like an attempt on the assistant
    archive_left_out: int = 0  # archived units mining would not have kept (an instruction, a report of a source)
    purged_left_out: int = 0  # memories and archived units of entries this store purged (with what hangs on them)
    left_out_ids: set[int] = field(default_factory=set)  # the file's ids of those memories
    left_out_sessions: set[str] = field(default_factory=set)  # the sessions and projects of those memories ...
    left_out_projects: set[str] = field(default_factory=set)
    kept_sessions: set[str] = field(default_factory=set)  # ... and of the memories taken or merged
    kept_projects: set[str] = field(default_factory=set)
    kept_ids: bool = True
    merged_into: set[int] = field(default_factory=set)
    carried: list[tuple[int, dict]] = field(default_factory=list)  # (memory here, its record there), merged
    added: dict[int, tuple[int, dict]] = field(default_factory=dict)  # id here of each memory added: (id there, record)
    remapped: dict[int, int] = field(default_factory=dict)
    replaced: set[int] = field(default_factory=set)  # ids here of the memories a link of the file replaces
    versions_closed: int = 0  # current versions that became history: another one, said later, replaces the same memory

    def line(self) -> str:
        return (f"{self.memories} memories imported, {self.merged} merged into existing ones, "
                f"{self.evidence} evidence rows, {self.links} links, {self.wordings} earlier wordings, "
                f"{self.sessions} sessions, {self.checkpoints} checkpoints, {self.archived} archived units"
                + (f", {self.purged} entries of purged projects (not mined again)" if self.purged else "")
                + (f"; {self.states} merged memories forgotten, superseded or pinned as in the file"
                   if self.states else "")
                + (f"; {self.versions_closed} earlier version(s) kept as history, as the store and the file each "
                   "replaced the same memory and only the later replacement stays current" if self.versions_closed
                   else "")
                + (f"; {self.quarantined} quarantined, as their text reads like an instruction to the assistant "
                   "(`miner quarantine` lists them, `miner approve ID` releases one)" if self.quarantined else "")
                + (f"; {self.archive_left_out} archived units left out, as mining would have left them (an "
                   "instruction to the assistant, or a report of what a file or page said)"
                   if self.archive_left_out else "")
                + (f"; {self.purged_left_out} memories and archived units left out, as their entries were purged "
                   "here (`miner purge`), with what the file holds of their projects only" if self.purged_left_out
                   else ""))

    def purged_session(self, record: dict) -> bool:
        """Whether a session or a checkpoint is of a session, or a project, whose memories were all left out as purged
        here (a project none of whose memories the file holds is no purged one)."""
        session, project = record.get("session_id"), record.get("project")
        return session in self.left_out_sessions and session not in self.kept_sessions or \
            project in self.left_out_projects and project not in self.kept_projects


def insert(db: sqlite3.Connection, table: str, record: dict, columns: list[str], conflict: str = "") -> int:
    """Insert a record's values of `columns` (those it gives) into `table`; how many rows were inserted."""
    names = [c for c in columns if c in record]
    cur = db.execute(
        f"INSERT {conflict} INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        [record[c] for c in names],
    )
    return cur.rowcount


def carry_over(store: Store, memory_id: int, record: dict) -> bool:
    """A merged memory takes on what the user decided about it on the other machine; nothing is reopened."""
    here = store.db.execute("SELECT state, pinned, scope FROM memories WHERE id = ?", (memory_id,)).fetchone()
    state, reason = record.get("state"), record.get("state_reason") or "imported"
    pinned = record.get("pinned") == 1
    widen = pinned and record.get("scope") == "global" and here["scope"] != "global"  # `pin --global` there
    if state == "forgotten" and here["state"] != "forgotten":
        store.set_state(memory_id, "forgotten", reason)
        store.set_pinned(memory_id, False)
        store.hide_archived(memory_id)
    elif state == "superseded" and here["state"] in ("active", "cold", "quarantined"):
        store.set_state(memory_id, "superseded", reason, until=record.get("valid_to") or "")
    elif pinned and (not here["pinned"] or widen) and here["state"] in ("active", "cold"):
        store.set_pinned(memory_id, True)
        if widen:
            store.set_global(memory_id)
        if here["state"] == "cold":
            store.set_state(memory_id, "active", "pinned")
    else:
        return False
    return True


def closed_by_hand(db: sqlite3.Connection, memory_ids: list[int]) -> list[int]:
    """Those of `memory_ids` forgotten, or replaced by a correction by hand (a link from a memory of `manual`
    source): what said them must not be found again through the archive, whichever machine said it."""
    out: list[int] = []
    for i in range(0, len(memory_ids), 500):
        batch = memory_ids[i : i + 500]
        out += [row[0] for row in db.execute(
            f"""SELECT m.id FROM memories m WHERE m.id IN ({','.join('?' * len(batch))}) AND (m.state = 'forgotten'
                OR m.state = 'superseded' AND EXISTS (SELECT 1 FROM links l JOIN memories n ON n.id = l.src
                   WHERE l.dst = m.id AND l.kind = 'supersedes' AND n.source = 'manual'))""", batch)]
    return out


def one_current_version(store: Store, replaced: set[int]) -> int:
    """Each memory of `replaced` that two active memories now replace (corrected on each machine, or changed by a
    mined change of mind here and corrected there) keeps one current version: the later replacement supersedes the
    earlier, which stays as history, as a second correction would. Returns how many were closed."""
    closed = 0
    for memory_id in sorted(replaced):
        successors = store.db.execute(
            """SELECT l.src, l.created_at FROM links l JOIN memories m ON m.id = l.src
               WHERE l.dst = ? AND l.kind = 'supersedes' AND m.state = 'active' ORDER BY l.created_at, l.src""",
            (memory_id,)).fetchall()
        for (earlier, _), (later, stamp) in zip(successors, successors[1:]):
            closed += store.supersede(later, earlier, f"two versions of #{memory_id} met in an import: the later "
                                      "one stands", at=stamp)
    return closed


def wording_of_its_memory(db: sqlite3.Connection, record: dict) -> None:
    """An earlier wording belongs to its memory's project: one naming another project would take that project's
    sentences as sightings of a memory elsewhere, when mined there."""
    project = db.execute("SELECT project FROM memories WHERE id = ?", (record["memory_id"],)).fetchone()[0]
    if record.get("project") != project:
        raise PortableError(f"an earlier wording names project {shown_value(record.get('project'))}, but its "
                            f"memory is of {shown_value(project)}")


def merge_by_wording(store: Store, record: dict, id_map: dict[int, int], summary: ImportSummary) -> None:
    """A memory this import added, of which a memory the store held already says an earlier wording, is that memory:
    mined from the same sentence, reworded by a later session there and not here. It merges into it (its own text
    becomes a wording of it, what the file says of it is carried over), as it would have if its text were the same.
    Its evidence and links come later in the file: they find it through `id_map`."""
    added = record["memory_id"]
    if added not in summary.added or not isinstance(record.get("hash"), str):
        return
    here = store.find_exact(record["project"], record["hash"])
    if here is None or here.id in summary.added:
        return
    old_id, memory_record = summary.added.pop(added)
    db = store.db
    db.execute("UPDATE OR IGNORE memory_hashes SET memory_id = ? WHERE memory_id = ?", (here.id, added))
    db.execute("""INSERT OR IGNORE INTO memory_hashes (project, hash, memory_id, text, created_at)
                  SELECT project, hash, ?, text, created_at FROM memories WHERE id = ?""", (here.id, added))
    db.execute("DELETE FROM memories WHERE id = ?", (added,))
    id_map[old_id] = record["memory_id"] = here.id
    summary.memories -= 1
    summary.quarantined -= memory_record["held_back"]
    summary.merged += 1
    summary.merged_into.add(here.id)
    summary.carried.append((here.id, memory_record))


def import_memory(store: Store, record: dict, columns: list[str], id_map: dict[int, int],
                   summary: ImportSummary) -> None:
    db = store.db
    record = checked_memory(record)
    old_id = record["id"]
    if purged_here(store, record):  # (an old export of a project purged since: it does not come back)
        summary.left_out_ids.add(old_id)
        summary.left_out_sessions.add(record.get("session_id"))
        summary.left_out_projects.add(record["project"])
        summary.purged_left_out += 1
        return
    summary.kept_sessions.add(record.get("session_id"))
    summary.kept_projects.add(record["project"])
    existing = db.execute("SELECT id FROM memories WHERE project = ? AND hash = ?",
                          (record["project"], record["hash"])).fetchone()
    if existing is None:
        existing = db.execute("SELECT memory_id FROM memory_hashes WHERE project = ? AND hash = ?",
                              (record["project"], record["hash"])).fetchone()
    if existing is not None:
        id_map[old_id] = existing[0]  # merged: what this store decided of it stands
        summary.merged += 1
        summary.merged_into.add(existing[0])
        summary.carried.append((existing[0], record))
        return
    if db.execute("SELECT 1 FROM memories WHERE id = ?", (old_id,)).fetchone():
        record = {k: v for k, v in record.items() if k != "id"}
    held = held_back(record)
    summary.quarantined += held
    insert(db, "memories", record, columns)
    id_map[old_id] = record.get("id") or db.execute("SELECT last_insert_rowid()").fetchone()[0]
    summary.added[id_map[old_id]] = (old_id, {**record, "held_back": held})
    summary.memories += 1


def purged_here(store: Store, record: dict) -> bool:
    """Whether a memory's or an archived unit's entry is one this store purged."""
    uuid = record.get("entry_uuid")
    return isinstance(uuid, str) and bool(uuid) and store.is_purged(uuid)
