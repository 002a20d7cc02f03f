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
    watermarks, recall log, archive), rebuild the full-text indexes and vacuum (when it deleted any). Returns
    counts by table.

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
    # Every entry said in the project that its transcripts hold, mined or not (a miner's batch made before the purge
    # and written after it is then dropped as mined meanwhile; what is still to mine of them never is). Read before
    # the write lock is taken, and what was written since read again under it.
    transcripts = sorted({row[0] for row in db.execute("SELECT transcript FROM watermarks WHERE project = ?",
                                                       (project,))} | set(claude_transcripts(project)))
    read: dict[str, tuple[set[str], int, dict[str, str]]] = {}
    with track(transcripts, "Reading its transcripts") as reading:
        for transcript in reading:
            read[transcript] = _entry_uuids(transcript, project)
    try:
        _delete(store, project, counts, stage, read)
    except KeyboardInterrupt:
        if "memories" not in counts or db.in_transaction or holds_anything(store, project):
            raise  # (before the deletion, or rolled back: nothing was deleted)
        raise PurgeInterrupted(counts) from None  # (it came as the deletion was committed)
    try:
        counts["cached blocks"] = clear_block_cache()
        # (not for a path nothing was stored for, a typo: a big store compacts for minutes; but after a purge
        # interrupted while it compacted)
        if needs_compacting(store):
            stage("compacting the database")
            db.execute("VACUUM")
            db.execute("DELETE FROM counters WHERE name = ?", (COMPACT_PENDING,))
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except KeyboardInterrupt:
        raise PurgeInterrupted(counts) from None
    return counts


# The tables that file their rows by project (memory_hashes and team_sync key theirs by it too).
PROJECT_TABLES = ("memories", "sessions", "checkpoints", "watermarks", "archive", "recall_log")


def holds_anything(store, project: str) -> bool:
    """Whether the store keeps a row of `project` (a memory, a transcript's watermark, an archived unit, a session,
    a checkpoint, a recall's record)."""
    return store.db.execute(" UNION ALL ".join(f"SELECT 1 FROM {table} WHERE project = ?1" for table in PROJECT_TABLES)
                            + " LIMIT 1", (project,)).fetchone() is not None


COMPACT_PENDING = "purge_compact_pending"  # a counter: a purge deleted rows and has not compacted since


def needs_compacting(store) -> bool:
    """Whether a purge deleted rows and was interrupted before it compacted the database (their pages and the log
    may still hold what it deleted)."""
    return store.db.execute("SELECT 1 FROM counters WHERE name = ?", (COMPACT_PENDING,)).fetchone() is not None


def stored_projects(store) -> set[str]:
    """Every project the store keeps a row of."""
    union = " UNION ".join(f"SELECT project FROM {table}" for table in PROJECT_TABLES)
    return {row[0] for row in store.db.execute(union)}


def _delete(store, project: str, counts: dict[str, int], stage, read: dict[str, tuple]) -> None:
    """`purge`'s deletion, in one transaction; `counts` gets the rows deleted, by table. `read`: each transcript's
    entries of the project read before, and how far."""
    with store.atomic() as db:
        mined: set[str] = set()
        for transcript, (uuids, end, sessions) in read.items():
            mined |= uuids | _entry_uuids(transcript, project, end, sessions)[0]
        for (transcript,) in db.execute("SELECT transcript FROM watermarks WHERE project = ?", (project,)):
            if transcript not in read:  # (mined meanwhile for the first time)
                mined |= _entry_uuids(transcript, project)[0]
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
        if any(counts.values()):  # (compacted below, and by the next purge if this one is stopped first)
            db.execute("INSERT OR REPLACE INTO counters (name, value) VALUES (?, 1)", (COMPACT_PENDING,))


def claude_transcripts(project: str) -> list[str]:
    """The transcripts Claude Code keeps of sessions in `project` or a folder inside it (its subagents' included),
    mined or not yet: its folder's and those of folders named after its own ("-work-app-api" for "/work/app")."""
    base = paths.projects_dir()
    if not base.is_dir():
        return []
    name = paths.encode_project(project)
    folders = [f for f in base.iterdir() if f.is_dir() and (f.name == name or f.name.startswith(name + "-"))]
    return sorted(str(path.resolve()) for folder in folders for path in folder.rglob("*.jsonl") if path.is_file())


def _entry_uuids(transcript: str, project: str, start: int = 0,
                 sessions: dict[str, str] | None = None) -> tuple[set[str], int, dict[str, str]]:
    """(the uuids of a transcript's entries from byte `start` on that were said in `project`, how far it was read,
    each session's project). A session's project is the one its first folder is in, as mining files it (another
    project's folder can share the transcript's: "/work/my-app" and "/work/my_app" do). Nothing when it is gone."""
    from ..extract.transcript import iter_lines, parse_line

    found: set[str] = set()
    sessions = {} if sessions is None else sessions
    end = start
    try:
        with open(transcript, "rb") as handle:
            for line, end in iter_lines(handle, start):
                try:
                    entry = parse_line(line) if line else None
                except (ValueError, TypeError, RecursionError):
                    continue
                if not isinstance(entry, dict) or not isinstance(entry.get("uuid"), str):
                    continue
                session, cwd = str(entry.get("sessionId") or ""), entry.get("cwd")
                if session not in sessions and isinstance(cwd, str) and cwd:
                    sessions[session] = paths.project_root(cwd)
                if sessions.get(session) == project:
                    found.add(entry["uuid"])
    except OSError:
        pass
    return found, end, sessions


def same_folder(store, project: str) -> list[str]:
    """`project`, then the other projects the store keeps under another path to the same folder (a symbolic
    link, followed or not): a purge of one path must not leave the rows filed under the other."""
    real = os.path.realpath(project)
    stored = stored_projects(store)
    # (a project recorded on another system, "C:\\work", is no path here: resolved, it would be one under the cwd)
    return [project] + sorted(p for p in stored if os.path.isabs(p) and p != project and os.path.realpath(p) == real)


BLOCK_PREFIXES = ("startup-", "session-")  # the blocks rendered ahead (`recall.blockcache`), beside other caches


def clear_block_cache() -> int:
    """Remove every pre-rendered recall block: a block of another project may show this one's global memories.
    The folder's other files stay (the compiled glossary, the secret kinds the hooks read, what sessions were
    shown)."""
    removed = 0
    folder = paths.cache_dir()
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and path.name.startswith(BLOCK_PREFIXES):
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
