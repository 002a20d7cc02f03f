"""The compiled glossary (`recall.glossary`) as a small SQLite file of its own, beside the block cache.

The miner writes it whole (`write`) when a glossary or synonyms file changed;
the prompt hook reads only the rows of the prompt's words (`named_groups`,
`group_members`), so that a prompt costs a few indexed look-ups, not the
parsing of the whole glossary. Standard library only: it is on the hook path.
"""

from __future__ import annotations

import os

from .. import paths
from . import reader

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    import sqlite3

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE words (term TEXT NOT NULL, grp INTEGER NOT NULL);
CREATE INDEX words_term ON words (term);
CREATE TABLE phrases (term TEXT NOT NULL, phrase TEXT NOT NULL, grp INTEGER NOT NULL, joined INTEGER NOT NULL);
CREATE INDEX phrases_term ON phrases (term);
CREATE TABLE members (grp INTEGER NOT NULL, phrase TEXT NOT NULL, joined INTEGER NOT NULL, terms TEXT NOT NULL);
CREATE INDEX members_grp ON members (grp);
"""
CHUNK = 500  # terms per look-up (SQLite's bound on parameters is 999 on old builds)


def write(path: str, meta: dict[str, str], words: dict[str, list[int]], phrases: dict[str, list[list]],
          members: list[list[list]]) -> None:
    """Write the lookup to `path` whole: a reader sees the old file or the new one, never half of one."""
    temp = f"{path}.{os.getpid()}.tmp"
    if os.path.exists(temp):
        os.remove(temp)
    os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # the user's words: the user's only
    try:
        db = reader.driver().connect(temp)
        try:
            with db:
                db.executescript(SCHEMA)
                db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                db.executemany("INSERT INTO words VALUES (?, ?)",
                               ((term, group) for term, groups in words.items() for group in groups))
                db.executemany("INSERT INTO phrases VALUES (?, ?, ?, ?)",
                               ((term, phrase, group, int(joined)) for term, found in phrases.items()
                                for phrase, group, joined in found))
                db.executemany("INSERT INTO members VALUES (?, ?, ?, ?)",
                               ((group, phrase, int(joined), " ".join(terms)) for group, found in enumerate(members)
                                for phrase, joined, terms in found))
        finally:
            db.close()
        os.replace(temp, path)
    except BaseException:  # (a full disk): no half-written copy is left behind
        paths.discard(temp, temp + "-journal")
        raise


def open_lookup(path: str) -> sqlite3.Connection | None:
    """The compiled lookup, read-only; None when there is none (or it cannot be read)."""
    if not os.path.exists(path):
        return None
    try:
        return reader.open_readonly(path)
    except reader.driver().Error:
        return None


def meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM meta").fetchall())


def _chunks(terms: list[str]):
    for start in range(0, len(terms), CHUNK):
        yield terms[start:start + CHUNK]


def named_groups(db: sqlite3.Connection, terms: list[str]) -> tuple[list[tuple], list[tuple]]:
    """(term, group) of the words among `terms`, and (term, phrase, group, joined) of the phrases keyed by them."""
    words: list[tuple] = []
    phrases: list[tuple] = []
    for chunk in _chunks(terms):
        marks = ",".join("?" * len(chunk))
        words += db.execute(f"SELECT term, grp FROM words WHERE term IN ({marks})", chunk).fetchall()
        phrases += db.execute(f"SELECT term, phrase, grp, joined FROM phrases WHERE term IN ({marks})",
                              chunk).fetchall()
    return words, phrases


def group_members(db: sqlite3.Connection, groups: list[int]) -> list[tuple]:
    """(group, phrase, joined, its terms space-separated) of every word of these groups, in the file's order."""
    marks = ",".join("?" * len(groups))
    return db.execute(f"SELECT grp, phrase, joined, terms FROM members WHERE grp IN ({marks}) ORDER BY rowid",
                      groups).fetchall()
