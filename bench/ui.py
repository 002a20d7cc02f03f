"""The web viewer (`miner ui`) against a store of 100k memories: how long it takes to start, and p50/p95 of
each page.

    .venv/bin/python bench/ui.py [--memories 100000] [--archive 100000] [--runs 30]

The store is filled as bench/hooks.py fills it (synthetic memories over sessions of 40, 80% in one project,
and an archive of said units). `miner ui --no-browser` runs as its own process; "start" is the time from
launching it to the first page answered (p50 of 5 starts). Each page is then fetched `--runs` times over
one connection per request, with the token's cookie, the way a browser asks for it. Targets (the viewer's
issue): start < 1 s, every page p95 ≤ 100 ms at 100k memories.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import hooks  # bench/hooks.py: the same synthetic stores

PROJECT = "/work/bench-project"


def start(env: dict[str, str], project: str = PROJECT) -> tuple[subprocess.Popen, str, float]:
    """`miner ui` started; (process, token address, seconds until the first page answered)."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "miner.cli", "ui", "--no-browser", "--project", project],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = ""
    while not url:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("miner ui exited before printing its address")
        found = re.search(r"http://127\.0\.0\.1:\d+/[\w\-]+/\?token=\S+", line)
        url = found.group(0) if found else ""
    opener = client()
    with opener.open(url, timeout=30) as response:
        response.read()
    return proc, url, time.perf_counter() - began


def client() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=10)


def timed(opener, url: str, runs: int) -> tuple[float, float, int]:
    times = []
    size = 0
    for _ in range(runs):
        began = time.perf_counter()
        with opener.open(url, timeout=60) as response:
            size = len(response.read())
            assert response.status == 200, (url, response.status)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))], size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--archive", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="miner-ui-bench-") as tmp:
        env = hooks.isolated_env(Path(tmp))
        env.pop("DISPLAY", None)
        hooks.with_env(env)
        built = hooks.build_store(args.memories, PROJECT, "ui-bench-session")
        archived = hooks.build_archive(args.archive, PROJECT)
        from miner.memory.store import Store

        with Store() as store:
            some = store.list_memories(PROJECT, None, ("active",), 1)[0]
            day = some.last_seen[:10]
        print(f"store: {args.memories} memories ({built:.1f} s), {args.archive} archived units ({archived:.1f} s)")

        starts = []
        for _ in range(5):
            proc, url, seconds = start(env)
            starts.append(seconds)
            stop(proc)
        print(f"start to first page: p50 {statistics.median(starts) * 1000:.0f} ms "
              f"(min {min(starts) * 1000:.0f}, max {max(starts) * 1000:.0f}; target < 1000 ms)")

        proc, url, _ = start(env)
        base = url.split("/?")[0]
        opener = client()
        opener.open(url, timeout=30).read()  # the token's cookie
        pages = {
            "memories (page 1)": "/memories",
            "memories page 100": "/memories?page=100",
            "memories, todo": "/memories?category=todo",
            "memories, superseded": "/memories?state=superseded",
            "memories, every state": "/memories?state=all",
            "every state, page 100": "/memories?state=all&page=100",
            "memories, one day": f"/memories?day={day}",
            "memories, searched": "/memories?q=webhook+retry+jitter",
            "said, searched": "/said?q=webhook+retry+jitter",
            "memory (provenance)": f"/memory/{some.id}",
            "told at start": "/told",
            "told for a prompt": "/told?prompt=what+is+the+webhook+retry+policy",
            "sessions": "/sessions",
            "session": "/session/bench-10",
            "timeline": "/timeline",
            "health": "/health",
        }
        print(f"{'page':<24} {'p50 ms':>8} {'p95 ms':>8} {'kB':>6}")
        worst = 0.0
        for label, path in pages.items():
            p50, p95, size = timed(opener, base + path, args.runs)
            worst = max(worst, p95)
            print(f"{label:<24} {p50:8.1f} {p95:8.1f} {size / 1000:6.1f}")
        timed(opener, base + "/rules?text=We+decided+to+use+pnpm.", 1)  # loads spaCy once
        p50, p95, size = timed(opener, base + "/rules?text=We+decided+to+use+pnpm.", args.runs)
        print(f"{'rules (spaCy loaded)':<24} {p50:8.1f} {p95:8.1f} {size / 1000:6.1f}")
        stop(proc)
        print(f"worst page p95 {worst:.1f} ms (target ≤ 100 ms); {os.cpu_count()} cores, Python "
              f"{platform.python_version()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
