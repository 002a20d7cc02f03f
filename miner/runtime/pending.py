"""What is left to mine: a transcript whose watermark still fits the file, with no complete line past it, has none.

Decided from the watermark and the file alone, so that a process with nothing to mine never builds a miner
(spaCy, the classifier, compiled rules: seconds and a hundred megabytes): the background worker, the watcher and
`miner mine`.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..memory.store import Store


def has_unmined_line(path: Path, offset: int) -> bool:
    """True when a complete line was appended after `offset` (a half-written last line does not count)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            while True:
                block = handle.read(64 * 1024)
                if not block:
                    return False
                if b"\n" in block:
                    return True
    except OSError:
        return False


def has_work(store: Store, transcript: str) -> bool:
    """False when `transcript` (a resolved path) is the file its watermark was taken on and no complete line was
    added since."""
    from ..extract.transcript import Watermark

    mark = store.watermark(transcript)
    if mark is None:
        return True
    watermark = Watermark(*mark)
    return not watermark.matches(transcript) or has_unmined_line(Path(transcript), watermark.offset)


class LazyMiner:
    """Builds the Miner (spaCy, compiled rules) on first use: a process that finds nothing to do never pays for it."""

    def __init__(self, store: Store, config: dict):
        self.store = store
        self.config = config
        self._miner = None

    def mine_file(self, transcript: str):
        if not has_work(self.store, transcript):
            return None  # no write either: a pass with nothing new would still move the watermark's time
        if self._miner is None:
            from .mine import Miner  # spaCy and YAML load here, in the background process

            self._miner = Miner(self.store, self.config)
        return self._miner.mine_file(transcript)
