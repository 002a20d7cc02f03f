"""The database without `Store`: plain connections for the prompt hook (read-only) and for `miner doctor`.

The UserPromptSubmit hook must stay cheap: this module imports the standard
library only, and `textutil` where a prompt is searched (no records, no
redaction), opens the file read-only and never migrates it; a store from
before a migration is read as it is (`has_table`).
`doctor` probes the file the same way, before anything would migrate it, and the
SessionStart hook reads the versions its rendered blocks were drawn from (`block_versions`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

INDEXES = ("memories", "archive")
# Keys of `block_versions` (see `migrations.m008_block_versions`): a project's own, and the global memories'
# (a project is an absolute path); recall counts move keys of their own, with this prefix.
GLOBAL_SCOPE = "*"
RECALLED = "recalled:"
PREFIX_WORDS = 64  # the words of the vocabulary a stem is counted over


def driver():
    """The `sqlite3` module for the hooks' reads: its C core `_sqlite3` (`sqlite3.connect` and `sqlite3.Error` are
    its own objects), whose package adds 1.5 ms of date adapters a hook never uses; imported when first needed,
    since a hook may find no store at all."""
    try:
        import _sqlite3 as sqlite
    except ImportError:  # pragma: no cover - CPython builds `sqlite3` on it
        import sqlite3 as sqlite
    return sqlite


def readonly_uri(path: Path | str) -> str:
    """The SQLite URI that opens `path` read only. In a URI, `?` and `#` end the path and `%` starts an escape: a data
    folder named `m#1` opened `m` read-write (created), without `?mode=ro`."""
    path = str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    # (an absolute path after an empty authority: one starting "//" would otherwise name a host)
    return f"file://{path}?mode=ro" if path.startswith("/") else f"file:{path}?mode=ro"


def open_readonly(path: Path | str, timeout: float = 2.0) -> sqlite3.Connection:
    """A read-only connection that cannot write even by mistake (query_only)."""
    db = driver().connect(readonly_uri(path), uri=True, timeout=timeout)
    try:
        db.execute("PRAGMA query_only = 1")
    except BaseException:
        db.close()
        raise
    return db


def has_table(db: sqlite3.Connection, name: str) -> bool:
    """True when the database has a table (or index, or view) of this name."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _index(index: str) -> str:
    if index not in INDEXES:
        raise ValueError(f"no full-text index named {index!r}")
    return index


def document_frequencies(db: sqlite3.Connection, index: str, terms: list[str]) -> dict[str, int]:
    """How many rows of a full-text index ("memories" or "archive") hold each term (terms held by none are left out).

    A common term's count is read from `common_terms`, as the miner last counted it (`Store.count_common_terms`:
    short of the truth by at most the rows written since, a small share of the index); the others from the
    index's vocabulary, where counting a term reads its list of rows, which is short for them. A stem made by
    `textutil.prefix_term` counts the rows of the words it begins.
    """
    from ..textutil import prefix_of  # here: SessionStart reads its versions without `textutil`

    vocab = f"{_index(index)}_vocab"
    terms = list(dict.fromkeys(terms))
    found: dict[str, int] = {}
    stems = {term for term in terms if prefix_of(term)}
    if stems:
        found.update(_prefix_frequencies(db, vocab, sorted(stems)))
        terms = [term for term in terms if term not in stems]
    for start in range(0, len(terms), 500):  # under the 999 parameters older SQLite builds allow
        batch = terms[start:start + 500]
        try:
            found.update(db.execute(f"SELECT term, docs FROM common_terms WHERE idx = ? AND term IN "
                                    f"({','.join('?' * len(batch))})", (index, *batch)))
        except driver().OperationalError:  # a store from before the table, read as it is
            break
    rest = [term for term in terms if term not in found]
    for start in range(0, len(rest), 500):
        batch = rest[start:start + 500]
        found.update((term, docs) for term, docs in db.execute(
            f"SELECT term, doc FROM {vocab} WHERE term IN ({','.join('?' * len(batch))})", batch) if docs)
    return found


def _prefix_frequencies(db: sqlite3.Connection, vocab: str, stems: list[str]) -> dict[str, int]:
    """For each stem ("папк*": every word it begins), the rows that hold its words, counted as the sum over its first
    `PREFIX_WORDS` words in the index's vocabulary (more than the truth when one row holds two of them)."""
    found = {}
    for stem in stems:
        low = stem[:-1]
        high = low[:-1] + chr(ord(low[-1]) + 1)
        docs = sum(doc for (doc,) in db.execute(f"SELECT doc FROM {vocab} WHERE term >= ? AND term < ? LIMIT ?",
                                               (low, high, PREFIX_WORDS)))
        if docs:
            found[stem] = docs
    return found


def index_size(db: sqlite3.Connection, index: str) -> int:
    """The highest row id of a full-text index: about how many rows it holds (at least 1)."""
    return db.execute(f"SELECT MAX(rowid) FROM {_index(index)}_fts").fetchone()[0] or 1


def matching_memories(db: sqlite3.Connection, match: str, project: str, limit: int, skip=None,
                      not_session: str = "") -> list[tuple]:
    """(id, text, last_seen, category) of the active, confirmed memories of a project (or global ones) that match
    an FTS5 expression, best first; without those of a project `skip` is true of, nor those first said in session
    `not_session`."""
    rows = db.execute(
        """SELECT m.id, m.text, m.last_seen, m.category, m.project FROM memories_fts
        JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? AND m.state = 'active'
        AND m.tentative = 0 AND (m.project = ? OR m.scope = 'global') AND (? = '' OR m.session_id <> ?)
        ORDER BY bm25(memories_fts, 1.0, 0.5) LIMIT ?""",
        (match, project, not_session, not_session, limit if skip is None else 4 * limit)).fetchall()
    return [row[:4] for row in rows if skip is None or not skip(row[4])][:limit]


def matching_archive(db: sqlite3.Connection, match: str, project: str, limit: int, worth_floor: float,
                     not_session: str = "") -> list[tuple]:
    """(id, text, ts, role) of a project's archived units that match an FTS5 expression, best first: BM25 times
    (`worth_floor` + how likely the unit was a memory); none of session `not_session`."""
    return db.execute(
        f"""SELECT a.id, a.text, a.ts, a.role FROM archive_fts JOIN archive a ON a.id = archive_fts.rowid
        WHERE archive_fts MATCH ? AND a.hidden = 0 AND a.project = ? AND (? = '' OR a.session_id <> ?)
        ORDER BY bm25(archive_fts, 1.0, 0.5) * ({float(worth_floor)!r} + a.worth) LIMIT ?""",
        (match, project, not_session, not_session, limit)).fetchall()


def redaction_version(db: sqlite3.Connection) -> int:
    """The redaction that last cleaned the store (`memory.repair`; 0: none yet)."""
    from ..extract.redaction_version import COUNTER

    row = db.execute("SELECT value FROM counters WHERE name = ?", (COUNTER,)).fetchone()
    return int(row[0]) if row else 0


def compacted(db: sqlite3.Connection, session_id: str) -> bool:
    """Whether the session has a checkpoint (PreCompact writes one before a compaction, SessionEnd at its end): what it
    said before is no longer in its context."""
    return db.execute("SELECT 1 FROM checkpoints WHERE session_id = ?", (session_id,)).fetchone() is not None


def following_units(db: sqlite3.Connection, ids: list[int], count: int) -> dict[int, list[tuple]]:
    """For each archived unit, the `count` units said right after it in its own session and transcript that are
    not hidden, as (id, text, ts, role), in order; the look-up walks the session's index from the unit on."""
    following = {}
    for unit_id in ids:
        following[unit_id] = db.execute(
            """SELECT a.id, a.text, a.ts, a.role FROM archive m JOIN archive a ON a.session_id = m.session_id
            AND a.transcript = m.transcript AND a.id > m.id WHERE m.id = ? AND a.hidden = 0 ORDER BY a.id LIMIT ?""",
            (unit_id, count)).fetchall()
    return following


def memory_texts(db: sqlite3.Connection, ids: list[int]) -> list[str]:
    """The texts of the memories with these ids."""
    texts = []
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        texts += [row[0] for row in db.execute(
            f"SELECT text FROM memories WHERE id IN ({','.join('?' * len(batch))})", batch)]
    return texts


def migrations_applied(path: Path | str, timeout: float = 5.0) -> list[str]:
    """The names of the migrations the store at `path` has (read only; [] without its table)."""
    import sqlite3

    db = sqlite3.connect(readonly_uri(path), uri=True, timeout=timeout)
    try:
        return [row[0] for row in db.execute("SELECT name FROM migrations")]
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()


def health_check(path: Path | str, timeout: float = 5.0) -> str:
    """The file's integrity_check verdict ("ok" when sound), after checking that the write lock can be taken.

    Not a pure read, unlike the rest of this module: it takes the write lock for a moment (and writes nothing).

    Raises `sqlite3.Error` when the file cannot be opened, read or locked for writing.
    """
    import sqlite3

    db = sqlite3.connect(str(path), timeout=timeout)
    try:
        result = db.execute("PRAGMA integrity_check").fetchone()[0]
        db.execute("BEGIN IMMEDIATE")
        db.execute("ROLLBACK")
    finally:
        db.close()
    return result


def watermark_offsets(path: Path | str, timeout: float = 5.0) -> dict[str, int]:
    """Every transcript's mined offset, read without opening a `Store` ({} when the file cannot be read)."""
    import sqlite3

    db = sqlite3.connect(readonly_uri(path), uri=True, timeout=timeout)
    try:
        return dict(db.execute("SELECT transcript, offset FROM watermarks"))
    except sqlite3.Error:
        return {}
    finally:
        db.close()


def block_versions(path: Path | str, project: str, with_recalls: bool, timeout: float = 1.0) -> list[int] | None:
    """The versions a project's recall block is drawn from: its rows', the global memories', and with
    `with_recalls` their recall counts' (0 for a key never written). None when the file cannot be read or
    has no versions yet (a store from before `migrations.m008_block_versions`)."""
    sqlite3 = driver()
    keys = [project, GLOBAL_SCOPE] + ([RECALLED + project, RECALLED + GLOBAL_SCOPE] if with_recalls else [])
    try:
        db = sqlite3.connect(readonly_uri(path), uri=True, timeout=timeout)
    except sqlite3.Error:
        return None
    try:
        marks = ", ".join("?" * len(keys))
        found = dict(db.execute(f"SELECT scope, version FROM block_versions WHERE scope IN ({marks})", keys))
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return [found.get(key, 0) for key in keys]
