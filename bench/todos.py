"""Done-todo matching (PreCompact and the background miner): the time to check a batch of turns against the
project's open todos, at 1k, 10k and 30k todos.

Usage: python bench/todos.py [--sizes 1000,10000,30000] [--runs 5]

Each size gets a fresh store of open todos of six words drawn from 3,000; the batch is 40 assistant turns
of 8 "done" sentences each, a quarter of which name five of some todo's six words (so that about 80
todos are found done). It prints the median time of `checkpoint.done_todos` over the runs, how many todos
were found done, and a digest of what was found (two versions of the code must print the same digest).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from miner.extract.model import Turn  # noqa: E402
from miner.memory.records import NewMemory  # noqa: E402
from miner.memory.store import Store  # noqa: E402
from miner.recall.checkpoint import done_todos  # noqa: E402

WORDS = [f"part{i}" for i in range(3000)]


def fill(store: Store, count: int, rng: random.Random) -> list[list[str]]:
    picked = []
    with store.atomic():
        for i in range(count):
            chosen = rng.sample(WORDS, 6)
            picked.append(chosen)
            store.add_memory(NewMemory(
                project="/bench", category="todo", text=f"Later we should wire {' '.join(chosen)} item {i}.",
                confidence=0.8, rule_id="bench", role="user", session_id="s0", transcript="/bench.jsonl",
                entry_uuid=f"u{i}", ts="2025-01-01T00:00:00Z"))
    return picked


def batch(picked: list[list[str]], rng: random.Random) -> list[Turn]:
    def sentence(k: int) -> str:
        named = rng.sample(rng.choice(picked), 5) if k % 4 == 0 else rng.sample(WORDS, 5)
        return f"I added the {' '.join(named)} support, it is done now."

    return [Turn(f"t{j}", "s1", "assistant", " ".join(sentence(k) for k in range(8)), "2026-01-01T00:00:00Z",
                 "/bench", "", False, "/bench.jsonl") for j in range(40)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,30000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print(f"{'open todos':>10}  {'p50 ms':>8}  {'found':>5}  digest")
    for size in (int(s) for s in args.sizes.split(",")):
        os.environ["MINER_HOME"] = tempfile.mkdtemp(prefix="bench-todos-")
        rng = random.Random(size)
        with Store() as store:
            turns = batch(fill(store, size, rng), rng)
        with Store(readonly=True) as store:
            times, found = [], []
            for _ in range(args.runs):
                started = time.perf_counter()
                found = done_todos(store, "/bench", turns)
                times.append((time.perf_counter() - started) * 1000)
        digest = hashlib.blake2b(repr([(m.id, said) for m, said in found]).encode(), digest_size=4).hexdigest()
        print(f"{size:>10}  {statistics.median(times):>8.1f}  {len(found):>5}  {digest}")


if __name__ == "__main__":
    main()
