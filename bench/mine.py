"""Mining throughput: MB/s of transcript JSONL end to end, units/s and peak RSS, on one core (or `--jobs`).

Usage: python bench/mine.py [--mb 100] [--transcripts ../shared/data/transcripts] [--prefill 100000] [--jobs 2]

(`--transcripts ../shared/data/multi` mines the eight projects' whole histories instead.) The
store's size on disk is printed too, and the archive's share of it, per MB of transcript.

The dev transcripts are copied until there are at least --mb megabytes, each
copy with fresh entry uuids and session ids (otherwise the miner would rightly
skip the copies as replays). Everything is mined into a fresh store in one
process, as `miner mine --all --jobs 1` would (see `--jobs` below). The copies repeat the same prose: the
memos of rule hits and refinement serve them and their memories merge as exact
repeats (in the dev transcripts themselves about a fifth of the units are
repeats). So the first copy's own figure is printed too: the cost of text the
miner has never seen.

`--prefill N` first fills the store with N memories of other projects, written
with the transcripts' own 5,000 most common words, drawn as often as the
transcripts use them (untimed): mining into a big store against mining into an
empty one (the near-duplicate lookup searches one full-text index for every
project). `--prefill-into same` puts them in the projects being mined instead (the
projects the transcripts' sessions name), so that every new memory is looked up
against them: the harder case. `--prefill-words uniform` draws every word equally
often, as this benchmark did before: then no word is in more than a few hundred of
100k memories, which no real store looks like.

`--jobs N` mines as `miner mine --jobs N` does: in N processes, each taking whole project
folders. Each process loads spaCy and the rules itself: the throughput is timed from when
the last of them is ready, end to end from the start, and the CPU figure is this process's
and its children's, their setup included.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

UUID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def make_corpus(sources: list[Path], target_bytes: int, out: Path) -> tuple[int, int]:
    """Copies of `sources` with every uuid remapped per copy; returns (files, bytes)."""
    total = files = copy = 0
    while total < target_bytes:
        copy += 1
        namespace = uuid.UUID(int=copy)
        for source in sources:
            data = UUID_RE.sub(lambda m: str(uuid.uuid5(namespace, m.group(0).decode())).encode(), source.read_bytes())
            folder = out / f"-bench-project-{copy}-{source.parent.name}"  # a project folder per source project
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{uuid.uuid5(namespace, str(source))}.jsonl").write_bytes(data)
            total += len(data)
            files += 1
            if total >= target_bytes:
                break
    return files, total


def source_projects(sources: list[Path]) -> list[str]:
    """The projects the transcripts' sessions belong to (their first cwd's project root)."""
    import json

    from miner.paths import project_root

    found = []
    for source in sources:
        with open(source, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    cwd = json.loads(line).get("cwd")
                except (ValueError, AttributeError):
                    continue
                if isinstance(cwd, str) and cwd:
                    found.append(project_root(cwd))
                    break
    return sorted(set(found))


def prefill(store, count: int, sources: list[Path], projects: list[str] | None = None,
            draw: str = "frequency") -> float:
    """`count` memories, in the transcripts' own words, spread over `projects` (default: 50 other projects);
    returns seconds taken. `draw`: the words drawn as often as the transcripts use them ("frequency": a few
    words are in thousands of memories, as in a real store), or all equally often ("uniform": no word is in
    more than a few hundred of 100k)."""
    import random
    from collections import Counter

    from miner.memory.records import NewMemory

    words = Counter()
    for source in sources[:40]:
        words.update(w.lower() for w in re.findall(r"[A-Za-z]{4,12}", source.read_text(errors="replace")[:200_000]))
    vocabulary, counts = zip(*words.most_common(5000))
    weights = counts if draw == "frequency" else None
    projects = projects or [f"/bench/prefill-{n}" for n in range(50)]
    rng = random.Random(count)
    started = time.perf_counter()
    with store.atomic():
        for n in range(count):
            text = " ".join(rng.choices(vocabulary, weights, k=rng.randint(8, 14))).capitalize() + f" (note {n})."
            store.add_memory(NewMemory(
                project=projects[n % len(projects)], category=("decision", "fact", "preference", "todo")[n % 4],
                text=text, confidence=0.7, rule_id="bench", role="user", session_id=f"prefill-{n // 40}",
                transcript="/prefill.jsonl", entry_uuid=f"prefill-{n}", ts="2025-01-01T00:00:00.000Z",
                keywords=tuple(dict.fromkeys(text.lower().split()[:10]))))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="megabytes of JSONL to mine (default 100)")
    parser.add_argument("--transcripts", type=Path, default=REPO.parent / "shared" / "data" / "transcripts")
    parser.add_argument("--prefill", type=int, default=0, help="memories of other projects in the store before "
                                                                "mining (default 0: an empty store)")
    parser.add_argument("--prefill-into", choices=("other", "same"), default="other",
                        help="the prefilled memories' projects: others (default), or the ones being mined")
    parser.add_argument("--jobs", type=int, default=1, help="processes to mine with, as `miner mine --jobs` "
                                                             "(default 1: this process)")
    parser.add_argument("--prefill-words", choices=("frequency", "uniform"), default="frequency",
                        help="the prefilled memories' words: drawn as often as the transcripts use them (default), "
                             "or all equally often")
    args = parser.parse_args()
    sources = sorted(args.transcripts.glob("*/*.jsonl"))
    if not sources:
        print(f"no transcripts under {args.transcripts}; pass --transcripts DIR")
        return 1

    with tempfile.TemporaryDirectory(prefix="miner-bench-") as tmp:
        root = Path(tmp)
        os.environ["MINER_HOME"] = str(root / "home")
        files, size = make_corpus(sources, int(args.mb * 1e6), root / "projects")

        from miner import config as config_mod
        from miner.memory.store import Store
        from miner.runtime.mine import Miner, find_transcripts

        store = Store(root / "home" / "memory.db")
        if args.prefill:
            into = source_projects(sources) if args.prefill_into == "same" else None
            took = prefill(store, args.prefill, sources, into, args.prefill_words)
            where = f"the {len(into)} projects being mined" if into else "other projects"
            print(f"(store prefilled with {args.prefill:,} memories of {where}, words drawn {args.prefill_words}, "
                  f"in {took:.1f} s, untimed)", flush=True)
        started = time.perf_counter()
        transcripts = find_transcripts(root / "projects")
        first = {"cpu": 0.0, "bytes": 0, "last": 0.0}
        if args.jobs > 1:
            from miner.runtime.parallel import mine_parallel, project_groups

            ready = {}
            summary = mine_parallel(store.path, project_groups(transcripts), args.jobs,
                                    ready=lambda name: ready.update(at=time.perf_counter(), pipeline=name))
            loaded, loaded_cpu, pipeline = ready.get("at", started), 0.0, ready.get("pipeline", "?")
        else:
            miner = Miner(store, config_mod.load())
            # spaCy's pipeline and the classifier load on first use; loaded here, setup holds every one-time cost.
            _ = miner.refiner, miner.classifier and miner.classifier.nlp
            pipeline = miner.pipeline.name
            loaded, loaded_cpu = time.perf_counter(), time.process_time()
            first["last"] = loaded_cpu

            def first_copy(path: str, _result) -> None:
                """CPU time of the first copy, whose text the miner has not seen before."""
                now = time.process_time()
                if os.path.basename(os.path.dirname(path)).startswith("-bench-project-1-"):
                    first["cpu"] += now - first["last"]
                    first["bytes"] += os.path.getsize(path)
                first["last"] = now

            summary = miner.mine_paths(transcripts, progress=first_copy)
        finished, mine_cpu = time.perf_counter(), time.process_time() - loaded_cpu
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sizes = dict(store.db.execute(
            """SELECT CASE WHEN name LIKE 'archive%' THEN 'archive' ELSE 'rest' END, SUM(pgsize)
               FROM dbstat GROUP BY 1""").fetchall())
        archived = store.db.execute("SELECT COUNT(*) FROM archive").fetchone()[0]
        store.close()
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mb = max(cpu.ru_maxrss, children.ru_maxrss) / 1024  # Linux reports KiB

    mb = size / 1e6
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, pipeline {pipeline}")
    print(f"corpus: {files} files, {mb:.1f} MB ({len(sources)} dev transcripts, uuids remapped per copy)")
    if args.jobs > 1:
        mine_s, mine_cpu = finished - loaded, mine_cpu + children.ru_utime + children.ru_stime
        print(f"setup (spaCy, rules), until the last of {args.jobs} processes was ready: {loaded - started:.2f} s")
        print(f"mining: {mine_s:.2f} s wall; {mine_cpu:.2f} s CPU with setup (this process and its children)")
        print(f"throughput: {mb / mine_s:.1f} MB/s, {summary.units / mine_s:.0f} units/s, "
              f"{summary.entries / mine_s:.0f} entries/s")
        print(f"end to end (with setup): {mb / (finished - started):.1f} MB/s")
    else:
        mine_s = finished - loaded
        print(f"setup (spaCy, rules): {loaded - started:.2f} s")
        # CPU seconds of the mining alone tell more than wall time on a machine shared with other work.
        print(f"mining: {mine_s:.2f} s wall, {mine_cpu:.2f} s CPU ({cpu.ru_utime + cpu.ru_stime:.2f} s CPU in all)")
        print(f"throughput: {mb / mine_s:.1f} MB/s, {summary.units / mine_s:.0f} units/s, "
              f"{summary.entries / mine_s:.0f} entries/s")
        print(f"end to end (with setup): {mb / (finished - started):.1f} MB/s")
        # The copies repeat the same prose, which the miner does not refine or store twice (memos, exact-repeat
        # merges). The first copy shows the cost of text never seen before.
        print(f"first copy only (text never seen before): {first['bytes'] / 1e6:.1f} MB in {first['cpu']:.2f} s "
              f"CPU, {first['bytes'] / 1e6 / max(first['cpu'], 1e-9):.1f} MB/s")
    print(f"result: {summary.line()}; {summary.new / mine_cpu:.0f} new memories per CPU second")
    for error in summary.errors:
        print(f"error: {error}")
    print(f"store on disk: {sum(sizes.values()) / 1e6:.1f} MB, {sum(sizes.values()) / 1e6 / mb:.3f} MB per MB of "
          f"transcript; the archive ({archived:,} units, its index included) {sizes.get('archive', 0) / 1e6:.1f} MB, "
          f"{sizes.get('archive', 0) / 1e6 / mb:.3f} MB per MB of transcript")
    print(f"peak RSS: {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
