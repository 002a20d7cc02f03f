"""A consistent copy of the memory store while miners and hooks keep writing (standard library only).

It uses SQLite's online backup API; the copy is checked before it takes its name.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

from .. import paths
from .portable import writable_target
from .store import Store


def backup(store: Store, target: Path) -> Path:
    """A consistent copy of the database at `target` (a file, or a folder to put a dated file in).

    SQLite's online backup API copies a snapshot while others keep writing.
    The copy is a self-contained file (no WAL beside it), readable by its
    owner only, checked with integrity_check before it replaces `target`.
    """
    target = Path(target)
    if target.is_dir():
        from datetime import datetime, timezone

        stamp = f"memory-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}"
        target = target / f"{stamp}.db"
        for n in range(2, 1000):  # two backups within a second: the second gets a name of its own
            if not os.path.lexists(target):
                break
            target = target.with_name(f"{stamp}-{n}.db")
    writable_target(target, store)  # (its folder must exist: a typo in its name made one)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent))
    os.close(fd)
    os.chmod(temp, 0o600)
    try:
        copy = sqlite3.connect(temp, isolation_level=None)
        try:
            store.db.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
            verdict = copy.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            copy.close()
        if verdict != "ok":
            raise sqlite3.DatabaseError(f"the copy failed integrity_check: {verdict}")
        os.replace(temp, target)
    except BaseException:
        paths.discard(temp, temp + "-journal")
        raise
    return target
