"""Background mining started by the hooks: `python -m miner.worker mine|catchup …`.

This is where spaCy is loaded, never in the hook process itself. Each
transcript is mined under its lock; see `locks` for how a second request
while a miner runs becomes another pass of that miner.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import config as config_mod
from . import locks, paths
from .store import Store


def mine_locked(miner, transcript: str, wait_s: float = 0.0) -> bool:
    """Mine `transcript` until no pass is pending. False when another miner has it."""
    while True:
        fd = locks.try_lock(transcript, wait_s)
        if fd is None:
            locks.mark_pending(transcript)
            return False
        try:
            locks.take_pending(transcript)
            miner.mine_file(transcript)
        finally:
            locks.release(fd)
        if not locks.take_pending(transcript):
            return True


def lagging_transcripts(store: Store, folder: Path) -> list[str]:
    """Transcripts in a project folder (subagents included) with bytes not yet mined."""
    if not folder.is_dir():
        return []
    marks = store.watermarks()
    lagging = []
    for path in sorted(folder.rglob("*.jsonl")):
        resolved = str(path.resolve())
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size > marks.get(resolved, 0):
            lagging.append(resolved)
    return lagging


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m miner.worker", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    mine = sub.add_parser("mine", help="mine transcripts under their locks")
    mine.add_argument("transcripts", nargs="+")
    mine.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a running miner")
    catchup = sub.add_parser("catchup", help="mine a project's transcripts that lag behind")
    catchup.add_argument("cwd")
    args = parser.parse_args(argv)

    from .mine import Miner  # spaCy and YAML load here, in the background process

    config = config_mod.load()
    with Store() as store:
        miner = Miner(store, config)
        if args.command == "mine":
            targets = args.transcripts
        else:
            targets = lagging_transcripts(store, paths.projects_dir() / paths.encode_project(args.cwd))
        for transcript in targets:
            mine_locked(miner, str(Path(transcript).resolve()), getattr(args, "wait", 0.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
