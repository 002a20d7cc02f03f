"""In-process recall time at 1k, 10k and 100k memories (targets: ≤ 10 ms at 10k, ≤ 50 ms at 100k).

Usage: python bench/recall.py [--sizes 1000,10000,100000] [--runs 30]

"retrieve" is candidate selection plus FTS5 relevance for the query; "block"
is the whole `recall.build` (retrieve, score, void-mark, fit, format). Each
size gets a fresh store of synthetic memories in one project (plus 10% in
other projects, 4% global preferences, sessions of 50 memories; keywords drawn
Zipf-like from 5,000 words, as real keywords are), timed over repeated runs
after one warm-up.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from miner import config as config_mod  # noqa: E402
from miner.memory.records import NewMemory  # noqa: E402
from miner.memory.store import Store  # noqa: E402
from miner.recall.block import build  # noqa: E402
from miner.recall.rank import relevance_scores  # noqa: E402

WORDS = ("cache database deploy docker webhook payment retry schema migration parser token session queue "
         "worker cron index search budget sync render template router auth login export import backup "
         "report chart filter config logging metrics alert pipeline build test lint format release").split()
CATEGORIES = ("decision", "fact", "preference", "todo")


# Real memories draw their keywords from a large vocabulary with a few very common words: a Zipf-like
# spread over the common words above and 5,000 rarer identifiers.
VOCABULARY = WORDS + [f"ident{i}" for i in range(5000)]
ZIPF = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]


def stamp(n: int, count: int) -> str:
    """A year of history: memory `n` of `count`, said in order."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1767225600 + int(n * 365 * 86400 / count)))


def fill(store: Store, count: int, rng: random.Random) -> None:
    with store.atomic():
        for n in range(0, count, 50):  # sessions of 50 memories each, as the miner files them
            store.upsert_session(f"s{n // 50}", "/bench/project", "/bench/project", "main", "/bench.jsonl",
                                 stamp(min(count - 1, n + 49), count))
        for n in range(count):
            words = list(dict.fromkeys(rng.choices(VOCABULARY, weights=ZIPF, k=8)))[:6]
            words += rng.sample(WORDS, 6 - len(words)) if len(words) < 6 else []
            project = "/bench/project" if n % 10 else f"/bench/other-{n % 7}"
            # Every 25th is a preference the user made global (recalled in every project), as heavy users have.
            scope, category = ("global", "preference") if n % 25 == 0 else ("project", CATEGORIES[n % 4])
            store.add_memory(NewMemory(
                project=project, category=category, scope=scope,
                text=f"The {words[0]} {words[1]} uses {words[2]} for {words[3]} with {words[4]} and {words[5]} #{n}.",
                confidence=0.6 + (n % 5) / 10, rule_id="bench", role="user" if n % 3 else "assistant",
                session_id=f"s{n // 50}", transcript="/bench.jsonl", entry_uuid=f"u{n}",
                ts=stamp(n, count)))


def timed(fn, runs: int) -> tuple[float, float]:
    fn()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    config = config_mod.load()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; times in ms (p50 / p95)")
    print(f"{'memories':>9} {'retrieve':>16} {'block (startup)':>16} {'block (query)':>16} {'block chars':>12}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="miner-bench-") as tmp:
            store = Store(Path(tmp) / "memory.db")
            fill(store, size, random.Random(size))
            query = "webhook retry payment"
            retrieve = timed(lambda: (store.candidates("/bench/project"),
                                      relevance_scores(store, "/bench/project", query)), args.runs)
            startup = timed(lambda: build(store, "/bench/project", config, situation="startup", log=False), args.runs)
            queried = timed(lambda: build(store, "/bench/project", config, situation="query", query=query,
                                          log=False), args.runs)
            chars = len(build(store, "/bench/project", config, log=False).text)
            store.close()
        print(f"{size:>9} {retrieve[0]:>7.1f} / {retrieve[1]:<6.1f} {startup[0]:>7.1f} / {startup[1]:<6.1f} "
              f"{queried[0]:>7.1f} / {queried[1]:<6.1f} {chars:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
