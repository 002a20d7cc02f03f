"""What is left to mine: a transcript whose watermark still fits the file, with no complete line past it, has none.

Decided from the watermark and the file alone, so that a process with nothing to mine never builds a miner
(spaCy, the classifier, compiled rules: seconds and a hundred megabytes): the background worker, the watcher and
`miner mine`.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import paths

SEEK_DATA = getattr(os, "SEEK_DATA", None)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    from ..memory.store import Store


def transcript_lag(offsets: dict[str, int]) -> tuple[list[tuple[str, int, int]], int]:
    """(transcript, size, bytes not mined yet) of each transcript under Claude Code's projects folder that has
    complete lines not mined (one never mined: all of it), the furthest behind first; and how many transcripts there
    are. `offsets`: how far each (resolved) transcript was mined."""
    from .. import paths
    from ..extract.transcript_files import transcript_files

    root = paths.projects_dir()
    # What mining reads: no symlink below the projects folder is followed (see `transcript_files`).
    files = transcript_files(root, root) if root.is_dir() else []
    behind = []
    for path in files:
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        done = offsets.get(os.path.realpath(path), 0)
        if size > done and has_unmined_line(path, done):  # (a half-written last line is no lag: its writer was
            behind.append((str(path), size, size - done))  # stopped mid-line, or is writing it now)
        elif size < done:  # shorter than what was mined of it: replaced, to be read again from its start
            behind.append((str(path), size, size))
    behind.sort(key=lambda row: -row[2])
    return behind, len(files)


def has_unmined_line(path: Path, offset: int) -> bool:
    """True when a complete line was appended after `offset` (a half-written last line does not count)."""
    try:
        with paths.open_regular(os.fspath(path)) as handle:  # (a FIFO swapped in would block the scan for good)
            position = offset
            while True:
                if SEEK_DATA is not None:  # a hole holds no line: a sparse 200 GB file cost each rescan 54 s
                    position = os.lseek(handle.fileno(), position, SEEK_DATA)
                handle.seek(position)
                block = handle.read(64 * 1024)
                if not block:
                    return False
                if b"\n" in block:
                    return True
                position += len(block)
    except OSError:  # (ENXIO from SEEK_DATA: nothing but a hole is left)
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
    """Builds the Miner (compiled rules; the classifier and spaCy as mining needs them) on first use: a process that
    finds nothing to do never pays for it."""

    def __init__(self, store: Store, config: dict, stopping: Callable[[], bool] = lambda: False):
        self.store = store
        self.config = config
        self._miner = None
        self.stopping = stopping  # handed to the Miner (`Miner.stopping`)

    def refresh(self) -> None:
        """`Miner.refresh`, when one was built (one built later reads the files as they are then)."""
        if self._miner is not None:
            self._miner.refresh()

    def reconfigure(self, config: dict) -> None:
        """Mine with these settings from now on: the Miner is built again, with them, when next needed."""
        self.config = config
        self._miner = None

    def mine_file(self, transcript: str):
        if not has_work(self.store, transcript):
            return None  # no write either: a pass with nothing new would still move the watermark's time
        if self._miner is None:
            from .mine import Miner  # the miner's modules load here, in the background process

            self._miner = Miner(self.store, self.config)
            self._miner.stopping = self.stopping
        return self._miner.mine_file(transcript)
