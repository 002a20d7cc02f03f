"""The right to forget, and files only their owner reads.

- `purge`: every row of a project, evidence and archive included, then the
  full-text indexes rebuilt and VACUUM, and every pre-rendered block removed.
- `secure_files`: $MINER_HOME 0700 and every file in it 0600.

Which projects are never mined is `exclusions`; what the assistant's words
may not become is `trust`.
"""

from __future__ import annotations

import os
from contextlib import nullcontext

from .. import paths
from .reader import RECALLED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, ContextManager


class PurgeInterrupted(Exception):
    """Interrupted (Ctrl-C) after the purge's rows were deleted and committed, while the database was compacted."""


def purge(store, project: str, stage: Callable[[str], None] | None = None,
          track: Callable[[list, str], ContextManager] | None = None) -> dict[str, int]:
    """Delete every row of `project` (memories, evidence, links, wordings, sessions, checkpoints,
    watermarks, recall log, archive), rebuild the full-text indexes and vacuum. Returns counts by table.

    `stage(what)` is told each step as it starts, and `track(items, label)` (a context manager giving the items back)
    follows the transcripts read, for a progress bar. Interrupted after the deletion was committed, it raises
    `PurgeInterrupted`: what was deleted stays deleted.

    Entry uuids stay in `seen_entries` (they hold no text): the purged
    transcripts are not mined again; what is said in the project later is,
    unless it is excluded too. They are also kept as `purged_entries`, which
    an export carries: a store restored from it does not mine them again.
    """
    stage = stage or (lambda what: None)
    track = track or (lambda items, label: nullcontext(items))
    db = store.db
    counts: dict[str, int] = {}
    db.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left for a hex editor
    try:
        _delete(store, project, counts, stage, track)
    except KeyboardInterrupt:
        if db.in_transaction or holds_anything(store, project):
            raise  # (rolled back: nothing was deleted)
        raise PurgeInterrupted(counts) from None  # (it came as the deletion was committed)
    try:
        counts["cached blocks"] = clear_block_cache()
        stage("compacting the database")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except KeyboardInterrupt:
        raise PurgeInterrupted(counts) from None
    return counts


def holds_anything(store, project: str) -> bool:
    """Whether the store keeps a row of `project` (a memory, a transcript's watermark, an archived unit, a session)."""
    return store.db.execute(
        "SELECT 1 FROM memories WHERE project = ?1 UNION ALL SELECT 1 FROM watermarks WHERE project = ?1 "
        "UNION ALL SELECT 1 FROM archive WHERE project = ?1 UNION ALL SELECT 1 FROM sessions WHERE project = ?1 "
        "LIMIT 1", (project,)).fetchone() is not None


def _delete(store, project: str, counts: dict[str, int], stage, track) -> None:
    """`purge`'s deletion, in one transaction; `counts` gets the rows deleted, by table."""
    with store.atomic() as db:
        mined = set()
        # Every entry its transcripts hold now, mined or not: a miner's batch made before this and written after it
        # is dropped then, as an entry mined meanwhile (and what is still to mine of them never is).
        transcripts = sorted({row[0] for row in db.execute("SELECT transcript FROM watermarks WHERE project = ?",
                                                           (project,))} | set(claude_transcripts(project)))
        with track(transcripts, "Reading its transcripts") as read:
            for transcript in read:
                mined |= _entry_uuids(transcript)
        stage("deleting its rows and rebuilding the search indexes")
        mined.update(row[0] for row in db.execute(
            "SELECT entry_uuid FROM evidence WHERE memory_id IN (SELECT id FROM memories WHERE project = ?) "
            "UNION SELECT entry_uuid FROM archive WHERE project = ?", (project, project)))
        mined.discard("")
        for table in ("purged_entries", "seen_entries"):
            db.executemany(f"INSERT OR IGNORE INTO {table} (uuid) VALUES (?)", ((uuid,) for uuid in sorted(mined)))
        ids = "SELECT id FROM memories WHERE project = ?"
        for table, where in (("evidence", f"memory_id IN ({ids})"),
                             ("links", f"src IN ({ids}) OR dst IN ({ids})"),
                             ("memory_hashes", f"memory_id IN ({ids}) OR project = ?")):
            marks = where.count("?")
            counts[table] = db.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", (project,) * marks).fetchone()[0]
        # Evidence, links and wordings go with their memories (ON DELETE CASCADE); the trigger clears FTS rows.
        db.execute("DELETE FROM links WHERE src IN (SELECT id FROM memories WHERE project = ?) "
                   "OR dst IN (SELECT id FROM memories WHERE project = ?)", (project, project))
        db.execute("DELETE FROM memory_hashes WHERE project = ?", (project,))
        db.execute("DELETE FROM evidence WHERE memory_id IN (SELECT id FROM memories WHERE project = ?)", (project,))
        deleted = {"memories": db.execute("DELETE FROM memories WHERE project = ?", (project,)).rowcount, **counts}
        counts.clear()
        counts.update(deleted)
        # (which of its transcripts ended on a request for a secret, by the path; the store's secret digests name
        # no project, and stay: one holding the file could test a guess against them, as against the transcripts)
        db.execute("DELETE FROM secret_asked WHERE transcript IN (SELECT transcript FROM watermarks WHERE project = ?)",
                   (project,))
        for table in ("sessions", "checkpoints", "watermarks", "recall_log", "archive", "team_sync"):
            counts[table] = db.execute(f"DELETE FROM {table} WHERE project = ?", (project,)).rowcount
        # (the versions of its blocks, named by its path: the block caches go below)
        db.execute("DELETE FROM block_versions WHERE scope IN (?, ?)", (project, RECALLED + project))
        # Deleted rows leave their tokens in FTS5 segments until they merge: rebuild from the content tables.
        db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
        db.execute("INSERT INTO archive_fts (archive_fts) VALUES ('rebuild')")
        store.forget_term_counts()  # they counted the purged rows too


def claude_transcripts(project: str) -> list[str]:
    """The transcripts Claude Code keeps for `project` (its subagents' included), mined or not yet."""
    folder = paths.projects_dir() / paths.encode_project(project)
    return [str(path.resolve()) for path in folder.rglob("*.jsonl") if path.is_file()] if folder.is_dir() else []


def _entry_uuids(transcript: str) -> set[str]:
    """The uuids of a transcript's entries; none when it is gone."""
    from ..extract.transcript import iter_lines, parse_line

    found: set[str] = set()
    try:
        with open(transcript, "rb") as handle:
            for line, _end in iter_lines(handle, 0):
                try:
                    entry = parse_line(line) if line else None
                except (ValueError, TypeError, RecursionError):
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("uuid"), str):
                    found.add(entry["uuid"])
    except OSError:
        pass
    return found


def same_folder(store, project: str) -> list[str]:
    """`project`, then the other projects the store keeps under another path to the same folder (a symbolic
    link, followed or not): a purge of one path must not leave the rows filed under the other."""
    real = os.path.realpath(project)
    stored = (row[0] for row in store.db.execute(
        "SELECT project FROM memories UNION SELECT project FROM sessions UNION SELECT project FROM watermarks "
        "UNION SELECT project FROM checkpoints UNION SELECT project FROM archive"))
    # (a project recorded on another system, "C:\\work", is no path here: resolved, it would be one under the cwd)
    return [project] + sorted(p for p in stored if os.path.isabs(p) and p != project and os.path.realpath(p) == real)


def clear_block_cache() -> int:
    """Remove every pre-rendered recall block: a block of another project may show this one's global memories."""
    removed = 0
    folder = paths.cache_dir()
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file():
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    pass
    return removed


def secure_files() -> list[str]:
    """Make $MINER_HOME 0700 and every file in it 0600; returns what was changed."""
    changed = []
    root = paths.data_dir()
    if not root.is_dir():
        return changed
    import stat

    for folder, dirs, files in os.walk(root):  # os.walk does not descend into symlinked folders
        for name, mode in [(folder, 0o700)] + [(os.path.join(folder, f), 0o600) for f in files]:
            try:
                st = os.lstat(name)
                # A symlink planted in the data folder must not make us change a file elsewhere.
                if stat.S_ISLNK(st.st_mode):
                    continue
                if st.st_mode & 0o777 != mode:
                    os.chmod(name, mode, follow_symlinks=False) if os.chmod in os.supports_follow_symlinks \
                        else os.chmod(name, mode)
                    changed.append(name)
            except OSError:
                pass
    return changed
