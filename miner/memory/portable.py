"""Export, import and backup of the memory store (standard library only).

Export writes JSONL: a header line, then one line per record, each tagged
with its `record` type: `memory` (every column, state and validity included),
`wording` (earlier wordings kept for exact dedup), `evidence`, `link`,
`session`, `checkpoint` and `archive` (a unit of what was said, with its
provenance; version 2), and `purged` (the uuid of an entry of a purged
project; version 3). Records come in a fixed order and carry no
export time, so export → import into an empty store → export gives the
same bytes. Mining state (watermarks, seen entries) is local to a machine
and is not exported: mining the same transcripts again after an import
merges into the imported memories instead of doubling them. Only what was
purged stays seen: its entries are not mined again after an import either.

Import runs in one transaction: a file with a bad line changes nothing.
Into an empty store the memory ids are kept; into a store that already has
memories, a memory whose text the project already holds merges its evidence
into that one (an earlier wording of either counts), and the others get
fresh ids where theirs are taken (links and evidence follow the mapping;
`import_merge`). What a user decided on the other machine comes along with a
merge: a memory forgotten or superseded there is so here too (unless it is
closed here already), and one pinned there is pinned here, in every project
too. Nothing merged is reopened: a memory forgotten here stays forgotten.

Text fields pass through `redact` on the way out as defence in depth:
memories are redacted when mined, but rules change and older rows may
predate a pattern. They pass through it on the way in too, checkpoints'
texts included, since a file may have been edited or written by an older
miner; every value is checked against its column's type (SQLite would take a
text where a number belongs, and what reads it later would fail on it), a
memory's state, category, scope and pin against what this miner knows, and
its text against the longest a team pull takes (`MAX_TEXT`).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from pathlib import Path
from typing import IO, Callable, Iterator

from ..extract.redact import ensure_extra, redact
from ..extract.secret_turns import known_in
from ..textutil import char_bigrams, content_hash, width_folded
from .export_records import (
    MAX_TEXT,
    PortableError,
    archived_kept,
    check_types,
    redacted_checkpoint,
    redacted_record,
    shown_value,
)
from .import_merge import (
    ImportSummary,
    carry_over,
    closed_by_hand,
    import_memory,
    merge_by_wording,
    one_current_version,
    purged_here,
    wording_of_its_memory,
)
from .import_merge import insert as _insert
from .store import Store

__all__ = ["FORMAT", "MAX_TEXT", "VERSION", "ImportSummary", "PortableError", "export", "export_to_file",
           "import_file", "import_records", "iter_export", "writable_target"]

FORMAT = "transcript-miner-export"
VERSION = 4  # 2: archive records; 3: purged entries; 4: the entries mined
_TABLES = {"memory": "memories", "wording": "memory_hashes", "evidence": "evidence", "link": "links",
           "session": "sessions", "checkpoint": "checkpoints", "archive": "archive"}


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def iter_export(store: Store, project: str | None = None) -> Iterator[dict]:
    """Every record of the store (or of one project), in export order, redacted."""
    db = store.db
    where, args = ("WHERE project = ?", (project,)) if project else ("", ())
    # "has_end": the file closes with an end record, which an import asks for (a file cut short at a line's end was
    # imported as if it were whole: memories without their evidence, replaced without what replaced them).
    yield {"record": "header", "format": FORMAT, "version": VERSION, "project": project or "",
           "migrations": store.migrations_applied(), "has_end": True}
    # One read transaction: a consistent snapshot while miners write (WAL).
    db.execute("BEGIN")
    try:
        secrets = store.secret_digests()
        memory_columns = _columns(db, "memories")
        ids: set[int] = set()
        for row in db.execute(f"SELECT * FROM memories {where} ORDER BY id", args):
            record = redacted_record("memory", {"record": "memory", **{name: row[name] for name in memory_columns}},
                                     secrets)
            if record["text"] != row["text"]:
                record["hash"] = content_hash(record["text"])  # the hash it would have been stored with
            ids.add(row["id"])
            yield record
        for row in db.execute(f"SELECT * FROM memory_hashes {where} ORDER BY memory_id, hash", args):
            if row["memory_id"] in ids:
                yield redacted_record("wording", {"record": "wording", **{k: row[k] for k in row.keys()}}, secrets)
        evidence_columns = [c for c in _columns(db, "evidence") if c != "id"]
        for row in db.execute("SELECT * FROM evidence ORDER BY memory_id, id"):
            if row["memory_id"] in ids:
                yield redacted_record("evidence", {"record": "evidence", **{c: row[c] for c in evidence_columns}},
                                      secrets)
        for row in db.execute("SELECT * FROM links ORDER BY src, dst, kind"):
            if row["src"] in ids and row["dst"] in ids:  # a link leaving a `--project` export is left out
                yield redacted_record("link", {"record": "link", **{k: row[k] for k in row.keys()}}, secrets)
        for row in db.execute(f"SELECT * FROM sessions {where} ORDER BY session_id", args):
            yield redacted_record("session", {"record": "session", **{k: row[k] for k in row.keys()}}, secrets)
        for row in db.execute(f"SELECT * FROM checkpoints {where} ORDER BY session_id", args):
            record = {"record": "checkpoint", **{k: row[k] for k in row.keys()}}
            record["body"] = redact(record["body"], known_in(record["body"], *secrets))[0]
            yield record
        archive_columns = [c for c in _columns(db, "archive") if c != "terms"]  # terms are derived from the text
        where_archive = "WHERE project = ?" if project else ""
        for row in db.execute(f"SELECT * FROM archive {where_archive} ORDER BY id", args):
            yield redacted_record("archive", {"record": "archive", **{c: row[c] for c in archive_columns}}, secrets)
        if not project:  # a purged project is no project any more: a whole export carries its entries
            for (uuid,) in db.execute("SELECT uuid FROM purged_entries ORDER BY uuid"):
                yield {"record": "purged", "uuid": uuid}
        # The entries mined (uuids only), so that a store restored from the file that mines the same transcripts
        # again does not count them twice (a session's prompts) nor take their memories for repeats of themselves:
        # every one of a whole export; of a project's, those its evidence and its archive name (an entry says
        # nothing of its project).
        seen = ("SELECT uuid FROM seen_entries WHERE uuid NOT IN (SELECT uuid FROM purged_entries) ORDER BY uuid"
                if not project else
                "SELECT e.entry_uuid FROM evidence e JOIN memories m ON m.id = e.memory_id WHERE m.project = ? AND "
                "e.entry_uuid != '' UNION SELECT entry_uuid FROM archive WHERE project = ? ORDER BY 1")
        for (uuid,) in db.execute(seen, (project, project) if project else ()):
            yield {"record": "seen", "uuid": uuid}
        yield {"record": "end"}
    finally:
        db.execute("COMMIT")


PROGRESS_RECORDS = ("memory", "archive")  # the bulk of an export: what its progress counts


def export_size(store: Store, project: str | None = None) -> int:
    """How many records of `PROGRESS_RECORDS` an export writes (a progress bar's length)."""
    where, args = ("WHERE project = ?", (project,)) if project else ("", ())
    return sum(store.db.execute(f"SELECT COUNT(*) FROM {table} {where}", args).fetchone()[0]
               for table in ("memories", "archive"))


def export(store: Store, out: IO[str], project: str | None = None,
           progress: Callable[[int], None] | None = None) -> int:
    """Write the export to a text stream; returns the number of memories written. `progress` is told each record
    of `PROGRESS_RECORDS` written."""
    count = 0
    for record in iter_export(store, project):
        out.write(json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
        count += record["record"] == "memory"
        if progress is not None and record["record"] in PROGRESS_RECORDS:
            progress(1)
    return count


def writable_target(path: Path, store: Store | None = None) -> Path:
    """`path` if a file may be written there (atomically: a new file takes its name); PortableError, naming what is
    wrong, when something other than a file is there (a device, a pipe: replacing `/dev/null` would break the
    system), its folder does not exist, or it is `store`'s own file (or its log), which it would replace."""
    path = Path(path)
    if store is not None:
        live = os.path.realpath(store.path)
        if os.path.realpath(path) in (live, live + "-wal", live + "-shm", live + "-journal"):
            raise PortableError(f"{path} is the memory store itself (or its log); give a path outside {store.path}")
    if os.path.lexists(path) and not (path.is_symlink() or path.is_file()):
        raise PortableError(f"{path} exists and is not a regular file; give the path of a file to write")
    if path.parent.exists() and not path.parent.is_dir():
        raise PortableError(f"{path.parent} is a file, not a folder; give a path in a folder")
    if not path.parent.is_dir():
        raise PortableError(f"folder {path.parent} does not exist; create it first or give another path")
    return path


def export_to_file(store: Store, path: Path, project: str | None = None,
                   progress: Callable[[int], None] | None = None) -> int:
    """Export to `path`, readable by its owner only, replaced atomically (never half-written)."""
    path = writable_target(path, store)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent or "."))
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            count = export(store, handle, project, progress)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    os.chmod(path, 0o600)
    return count


# --- import --------------------------------------------------------------------------------


# What a byte that is not UTF-8 is read as (`errors="surrogateescape"`): no UTF-8 text holds these.
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def _read_records(lines: IO[str]) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(lines, 1):
        if number == 1:
            line = line.removeprefix("\ufeff")  # (an export saved again by an editor that marks its encoding)
        if not line.strip():
            continue
        if _NOT_UTF8.search(line):
            raise PortableError(f"line {number}: not UTF-8 text (an export is written in UTF-8)")
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise PortableError(f"line {number}: not JSON ({exc})") from None
        except RecursionError:
            raise PortableError(f"line {number}: nested too deeply to be an export record") from None
        if not isinstance(record, dict) or not isinstance(record.get("record"), str):
            raise PortableError(f"line {number}: not an export record (no `record` tag)")
        yield number, record


def import_records(store: Store, lines: IO[str]) -> ImportSummary:
    """Restore an export into the store, in one transaction (all or nothing)."""
    from ..extract.secret_rules import SecretRuleError

    try:
        ensure_extra()  # redacted with the secret kinds of the YAML files too, as mining redacts
    except SecretRuleError as exc:
        raise PortableError(f"{exc}; fix it (`miner rules check`) first") from None
    summary = ImportSummary()
    with store.atomic() as db:
        info = {table: db.execute(f"PRAGMA table_info({table})").fetchall() for table in _TABLES.values()}
        types = {table: {row[1]: row[2] for row in rows} for table, rows in info.items()}
        columns = {table: list(names) for table, names in types.items()}
        # The columns a record must give (no default; those the import works out itself aside): an insert that
        # skips a conflicting row skipped a record without one too, and said nothing.
        required = {table: {row[1] for row in rows if row[3] and row[4] is None and not row[5]} - {"hash", "memory_id"}
                    for table, rows in info.items()}
        summary.kept_ids = db.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None
        # An archive's ids are its order (a question, then its answer): kept only in a store without one.
        keep_archive_ids = db.execute("SELECT 1 FROM archive LIMIT 1").fetchone() is None
        secrets = store.secret_digests()
        id_map: dict[int, int] = {}
        archived: list[tuple[int, str, str]] = []  # (id, project, text) of each unit taken
        header_seen, ended, closed = False, 0, False  # (the end record's line; whether the header says one comes)
        for number, record in _read_records(lines):
            kind = record.pop("record")
            if ended:
                raise PortableError(f"line {number}: a record after the end record (line {ended})")
            record = redacted_record(kind, record, secrets)
            try:
                if kind in _TABLES:
                    check_types(kind, record, types[_TABLES[kind]], required[_TABLES[kind]])
                if kind == "header":
                    if record.get("format") != FORMAT:
                        raise PortableError(f"line {number}: not a {FORMAT} file")
                    if type(record.get("version", 0)) is not int:
                        raise PortableError(f"line {number}: bad header record (version "
                                            f"{shown_value(record['version'])} is not a whole number)")
                    if record.get("version", 0) > VERSION:
                        raise PortableError(f"line {number}: export version {record['version']} is newer than "
                                            f"this miner reads ({VERSION}); upgrade the miner")
                    header_seen, closed = True, record.get("has_end") is True
                    continue
                if not header_seen:
                    raise PortableError(f"line {number}: the header line is missing")
                if kind == "memory":
                    import_memory(store, record, columns["memories"], id_map, summary)
                elif kind in ("wording", "evidence") and record.get("memory_id") in summary.left_out_ids or \
                        kind == "link" and {record.get("src"), record.get("dst")} & summary.left_out_ids or \
                        kind in ("session", "checkpoint") and summary.purged_session(record):
                    if kind == "evidence":  # (its session was said in the purged project too)
                        summary.left_out_sessions.add(record.get("session_id"))
                    continue  # (of a memory or a session purged here)
                elif kind == "wording":
                    record["memory_id"] = _mapped(id_map, record, "memory_id", number)
                    if isinstance(record.get("text"), str):
                        record["hash"] = content_hash(record["text"])  # of the text as taken (redacted on the way in)
                    wording_of_its_memory(db, record)
                    merge_by_wording(store, record, id_map, summary)
                    summary.wordings += _insert(db, "memory_hashes", record, columns["memory_hashes"], "OR IGNORE")
                elif kind == "evidence":
                    record["memory_id"] = _mapped(id_map, record, "memory_id", number)
                    record.pop("id", None)
                    summary.evidence += _insert(db, "evidence", record, columns["evidence"], "OR IGNORE")
                elif kind == "link":
                    record["src"] = _mapped(id_map, record, "src", number)
                    record["dst"] = _mapped(id_map, record, "dst", number)
                    summary.links += _insert(db, "links", record, columns["links"], "OR IGNORE")
                    if record.get("kind") == "supersedes":
                        summary.replaced.add(record["dst"])
                elif kind == "session":
                    summary.sessions += _insert(db, "sessions", record, columns["sessions"], "OR IGNORE")
                elif kind == "checkpoint":
                    summary.checkpoints += _insert(db, "checkpoints", redacted_checkpoint(record, secrets),
                                                   columns["checkpoints"], "OR IGNORE")
                elif kind == "archive":
                    taken = _import_archived(store, record, columns["archive"], keep_archive_ids)
                    if taken == -1:
                        summary.purged_left_out += 1
                    elif taken is None:
                        summary.archive_left_out += 1
                    elif taken:
                        summary.archived += 1
                        archived.append((taken, record["project"], record["text"]))
                elif kind == "end":
                    ended = number
                elif kind == "seen":
                    if not isinstance(record.get("uuid"), str) or not record["uuid"]:
                        raise PortableError(f"line {number}: a seen record needs the entry's uuid")
                    db.execute("INSERT OR IGNORE INTO seen_entries (uuid) VALUES (?)", (record["uuid"],))
                elif kind == "purged":
                    if not isinstance(record.get("uuid"), str) or not record["uuid"]:
                        raise PortableError(f"line {number}: a purged record needs the entry's uuid")
                    db.execute("INSERT OR IGNORE INTO seen_entries (uuid) VALUES (?)", (record["uuid"],))
                    summary.purged += db.execute("INSERT OR IGNORE INTO purged_entries (uuid) VALUES (?)",
                                                 (record["uuid"],)).rowcount
                else:
                    raise PortableError(f"line {number}: unknown record kind {kind!r}")
            except PortableError as exc:  # (what names no line is about this one)
                if str(exc).startswith("line "):
                    raise
                raise PortableError(f"line {number}: {exc}") from None
            except sqlite3.IntegrityError as exc:
                raise PortableError(f"line {number}: {kind} record does not fit the store ({exc})") from None
            except (KeyError, TypeError, ValueError, OverflowError, RecursionError) as exc:
                raise PortableError(f"line {number}: bad {kind} record ({str(exc) or type(exc).__name__})") from None
        if not header_seen:
            raise PortableError("empty file: not an export")
        if closed and not ended:
            raise PortableError("the file ends early: its end record is missing (cut short by a full disk or a copy?); "
                                "export it again")
        for memory_id, record in summary.carried:  # once its evidence is in: a forget hides the archive it names
            summary.states += carry_over(store, memory_id, record)
        _hide_forgotten(db, archived)
        for memory_id in closed_by_hand(db, [*summary.added, *(memory_id for memory_id, _ in summary.carried)]):
            store.hide_archived(memory_id)  # (the units this store held already, which the import took none of)
        summary.versions_closed = one_current_version(store, summary.replaced)
        for memory_id in sorted(summary.merged_into):
            # Evidence the file added to a memory the store already had counts, as when mining merges.
            db.execute("""UPDATE memories SET evidence_count = (SELECT COUNT(*) FROM evidence WHERE memory_id = ?),
                          session_count = (SELECT COUNT(DISTINCT session_id) FROM evidence WHERE memory_id = ?)
                          WHERE id = ?""", (memory_id, memory_id, memory_id))
    summary.remapped = {old: new for old, new in id_map.items() if old != new}
    return summary


def _mapped(id_map: dict[int, int], record: dict, name: str, number: int) -> int:
    old = record.get(name)
    if old not in id_map:
        raise PortableError(f"line {number}: {name} {old!r} names no memory earlier in this file")
    return id_map[old]


def _import_archived(store: Store, record: dict, columns: list[str], keep_id: bool) -> int | None:
    """One archived unit: its id here (0: the store holds it already, same entry and unit), or None when mining
    would not have kept it (`export_records.archived_kept`), or -1 when its entry was purged here. Its id is kept
    with `keep_id`, and when free."""
    if not archived_kept(record):
        return None
    if purged_here(store, record):
        return -1
    db = store.db
    record["terms"] = " ".join(char_bigrams(width_folded(record["text"])))
    if not keep_id or record.get("id") is not None and db.execute("SELECT 1 FROM archive WHERE id = ?",
                                                                   (record["id"],)).fetchone():
        record = {k: v for k, v in record.items() if k != "id"}
    if not _insert(db, "archive", record, columns, "OR IGNORE"):
        return 0
    return db.execute("SELECT last_insert_rowid()").fetchone()[0]


def _hide_forgotten(db: sqlite3.Connection, archived: list[tuple[int, str, str]]) -> None:
    """Hide the units just taken that say what a memory forgotten here said (its text or an earlier wording of it),
    as mining them would have: a forget holds whichever store the words come from."""
    if not archived:
        return
    forgotten = {(project, digest) for project, digest in db.execute(
        """SELECT project, hash FROM memories WHERE state = 'forgotten' UNION
           SELECT h.project, h.hash FROM memory_hashes h JOIN memories m ON m.id = h.memory_id
           WHERE m.state = 'forgotten'""")}
    hidden = [(unit_id,) for unit_id, project, text in archived if (project, content_hash(text)) in forgotten]
    db.executemany("UPDATE archive SET hidden = 1 WHERE id = ?", hidden)


def import_file(store: Store, path: Path, progress: Callable[[int], None] | None = None) -> ImportSummary:
    """Restore an export file (see `import_records`); `progress` is told the bytes of each line as it is read."""
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:  # (a byte not UTF-8: its line is named)
        if progress is None:
            return import_records(store, handle)
        return import_records(store, (_told(line, progress) for line in handle))


def _told(line: str, progress: Callable[[int], None]) -> str:
    progress(len(line.encode("utf-8", "surrogatepass")))
    return line
