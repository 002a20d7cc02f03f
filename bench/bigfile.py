"""One huge transcript: MB/s and peak RSS of mining a generated 200 MB file in streaming fashion.

Usage: python bench/bigfile.py [--mb 200] [--keep DIR]

The transcript is generated the way long Claude Code sessions look: most
bytes are tool results, tool inputs and thinking; the prose (user requests,
assistant replies, some of them decisions and facts) is a few percent. It is
mined in a fresh process into a fresh store (one `Miner.mine_file`, batches
of `mine.BATCH_BYTES`), and the child's peak RSS is read from the kernel.
The issue's bound: peak RSS ≤ 300 MB for 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

REQUESTS = [
    "Please refactor the {n} module so that the parser streams its input.",
    "We'll use PostgreSQL {n} instead of MySQL for the reporting database.",
    "Let's go with pnpm as the package manager for service {n}.",
    "I prefer small commits with a descriptive message, as in ticket {n}.",
    "TODO: add retries to the invoice mailer number {n}.",
    "Can you look at why test {n} fails on CI?",
]
REPLIES = [
    "Done: the parser for part {n} now reads the whole file.",
    "The API server for tenant {n} listens on port 8080 in development.",
    "I checked the logs; the failure in job {n} is a timeout in the fixture.",
    "Noted: the staging database {n} is refreshed every night at 02:00 UTC.",
]


def generate(path: Path, target_bytes: int, seed: int = 7) -> int:
    """Write a transcript of about `target_bytes`; returns its size."""
    rng = random.Random(seed)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    filler = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz     \n{}();=") for _ in range(64 * 1024))
    written, n, parent = 0, 0, None
    with open(path, "w", encoding="utf-8") as out:
        while written < target_bytes:
            n += 1

            def entry(kind: str, message: dict, **extra) -> dict:
                nonlocal parent
                uid = str(uuid.UUID(int=rng.getrandbits(128)))
                item = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work/big",
                        "sessionId": session, "version": "2.1.30", "gitBranch": "main", "type": kind,
                        "message": message, "uuid": uid, "timestamp": f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"}
                item.update(extra)
                parent = uid
                return item

            start = rng.randrange(0, len(filler) - 16 * 1024)
            blob = filler[start:start + rng.randrange(2_000, 16_000)]
            lines = [
                entry("user", {"role": "user", "content": rng.choice(REQUESTS).format(n=n)}),
                entry("assistant", {"id": f"msg_{n}", "role": "assistant", "type": "message", "content": [
                    {"type": "thinking", "thinking": blob[: len(blob) // 4], "signature": "x" * 64},
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"/work/big/f{n}.py"}}]}),
                entry("user", {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": blob}]},
                      toolUseResult={"stdout": blob[: len(blob) // 2], "stderr": ""}),
                entry("assistant", {"id": f"msg_{n}b", "role": "assistant", "type": "message",
                                    "content": [{"type": "text", "text": rng.choice(REPLIES).format(n=n)}]}),
                {"type": "progress", "data": {"type": "bash_progress", "output": blob[:500]}, "uuid": f"p{n}"},
            ]
            chunk = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in lines)
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
    return path.stat().st_size


CHILD = """
import json, sys, time
from miner import config
from miner.runtime.mine import Miner
from miner.memory.store import Store
t0 = time.perf_counter()
with Store() as store:
    miner = Miner(store, config.load())
    _ = miner.refiner, miner.classifier and miner.classifier.nlp  # loaded on first use; counted as startup here
    t1 = time.perf_counter()
    summary = miner.mine_file(sys.argv[1])
    t2 = time.perf_counter()
print(json.dumps({"startup_s": t1 - t0, "mine_s": t2 - t1, "pipeline": miner.pipeline.name,
                  "entries": summary.entries, "units": summary.units, "new": summary.new,
                  "skipped_lines": summary.skipped_lines}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200.0, help="size of the generated transcript (default 200)")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep the files")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="miner-bigfile-"))
    work.mkdir(parents=True, exist_ok=True)
    transcript = work / "big.jsonl"
    started = time.perf_counter()
    size = generate(transcript, int(args.mb * 1024 * 1024))
    print(f"generated {size / 1e6:.1f} MB in {time.perf_counter() - started:.1f}s: {transcript}", flush=True)
    env = dict(os.environ, MINER_HOME=str(work / "home"), PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-c", CHILD, str(transcript)], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr, file=sys.stderr)
        return 1
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB on Linux (bytes on macOS)
    peak_mb = peak_kb / 1024 if sys.platform != "darwin" else peak_kb / 1024 / 1024
    mb = size / 1e6
    print(f"pipeline      {figures['pipeline']}")
    print(f"mined         {mb:.1f} MB, {figures['entries']} entries, {figures['units']} units, "
          f"{figures['new']} new memories, {figures['skipped_lines']} lines skipped")
    print(f"time          {figures['mine_s']:.1f}s mining (+{figures['startup_s']:.1f}s startup)")
    print(f"throughput    {mb / figures['mine_s']:.1f} MB/s")
    print(f"peak RSS      {peak_mb:.0f} MB (bound: 300 MB) {'OK' if peak_mb <= 300 else 'OVER'}")
    print(f"cpus          {os.cpu_count()}")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0 if peak_mb <= 300 else 2


if __name__ == "__main__":
    sys.exit(main())
