"""A throwaway full-text index of prose in memory: plain FTS5 BM25, the baseline recall is measured against.

Nothing is kept: the index lives in an in-memory database for as long as the
`ProseIndex` is open.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable


class ProseIndex:
    """Texts added in any order, searched by an FTS5 expression, best (BM25) first."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE prose USING fts5 (text)")

    def add(self, texts: Iterable[str]) -> None:
        self.db.executemany("INSERT INTO prose (text) VALUES (?)", ((text,) for text in texts))

    def search(self, match: str, limit: int = 100) -> list[str]:
        """The texts matching an (escaped) FTS5 expression, best first."""
        return [text for (text,) in self.db.execute(
            "SELECT text FROM prose WHERE prose MATCH ? ORDER BY rank LIMIT ?", (match, limit))]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "ProseIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
