"""Team sync against a throwaway local PostgreSQL server: throughput, and SessionStart with a team joined.

    .venv/bin/python bench/team.py [--memories 10000] [--runs 15]

A server is started from the machine's PostgreSQL binaries as the tests start it
(`tests/pg_support.py`: Unix socket, fsync off; `MINER_TEST_PG_URL` uses a running
one). Three machines (SQLite stores of their own) each mine a third of
`--memories` distinct memories through the miner's dedup layers (untimed), then:

- push: each machine's first sync sends its memories through the server's three
  dedup layers (memories/s = memories sent / seconds);
- pull: each machine's second sync takes in the other two machines' memories
  (memories/s = memories added / seconds);
- nothing to do: a third sync of every machine;
- the whole exchange: every memory moved (pushed + added) / all the seconds above.

Then SessionStart as Claude Code runs it (a fresh `python -I -m miner.hooks
session-start` process, the payload on stdin) in a project that joined a team
whose server cannot be reached (an unroutable address), beside the same project
with no team: p50 over `--runs` runs each, and `python -c pass` for scale. The
hook never reads the team settings, so the two should match.

Target: sync ≥ 2,000 memories/s to a local server; SessionStart never waits for
the network.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import pg_support  # noqa: E402
from team_support import KEY, Machine, distinct_statements  # noqa: E402

from miner.memory.pgstore import PgStore  # noqa: E402
from miner.team.sync import Sync  # noqa: E402


def timed(machines: list[Machine], remote: PgStore, step: str) -> tuple[float, int, int]:
    """Every machine's push (or pull, or both: a whole sync), timed together; (seconds, pushed, added)."""
    began = time.perf_counter()
    pushed = added = 0
    for machine in machines:
        sync = Sync(machine.store, remote, machine.settings, machine.project, KEY)
        if step in ("push", "sync"):
            sync.push()
        if step in ("pull", "sync"):
            sync.pull()
        pushed += sync.report.pushed
        added += sync.report.added
    return time.perf_counter() - began, pushed, added


def hook_p50(env: dict[str, str], payload: str, runs: int) -> float:
    """p50 of the hook as a fresh process; the background worker each run starts is waited for, untimed."""
    from miner.worker import running_workers

    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-m", "miner.hooks", "session-start"], input=payload, env=env,
                       capture_output=True, text=True, timeout=60, check=True)
        times.append(time.perf_counter() - began)
        deadline = time.monotonic() + 60
        while running_workers(Path(env["MINER_HOME"])) and time.monotonic() < deadline:
            time.sleep(0.05)
    return statistics.median(times) * 1000


def session_start(root: Path, runs: int) -> None:
    from miner.team import settings as settings_mod

    print(f"\nSessionStart, p50 of {runs} runs (a fresh process each, payload on stdin)")
    bare = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        bare.append(time.perf_counter() - began)
    print(f"  python -c pass:                         {statistics.median(bare) * 1000:6.1f} ms")
    for label, joined in (("no team", False), ("team joined, server unreachable", True)):
        home = root / ("joined" if joined else "alone")
        project = home / "shop"
        project.mkdir(parents=True)
        env = {**os.environ, "HOME": str(home), "MINER_HOME": str(home / "miner"),
               "XDG_CONFIG_HOME": str(home / ".config"), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        machine_env = dict(os.environ)
        os.environ.update(env)
        try:
            from miner.memory.store import Store

            with Store() as store:
                Machine(None, "ana", "", store=store, project=str(project)).mine_many(distinct_statements(1000, seed=5))
            if joined:
                settings_mod.save(settings_mod.TeamSettings("postgresql://ana@10.255.255.1:5432/team", "acme", "ana",
                                                            {str(project): KEY}))
        finally:
            os.environ.clear()
            os.environ.update(machine_env)
        payload = json.dumps({"session_id": "bench", "transcript_path": str(home / "t.jsonl"), "cwd": str(project),
                              "hook_event_name": "SessionStart", "source": "startup"})
        hook_p50(env, payload, 2)  # warm the page cache
        print(f"  {label + ':':40}{hook_p50(env, payload, runs):6.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the server it started stops too
    server = None
    url = os.environ.get("MINER_TEST_PG_URL")
    if not url:
        try:
            server = pg_support.start()
        except pg_support.NoServer as exc:
            print(f"no PostgreSQL server: {exc}")
            return 1
        url = server.url
    try:
        url = pg_support.fresh_database(url, "miner_bench_team")
        with tempfile.TemporaryDirectory(prefix="miner-bench-team-") as tmp:
            root = Path(tmp)
            machines = [Machine(root, name, url) for name in ("ana", "ben", "chi")]
            statements = distinct_statements(args.memories, seed=7)
            began = time.perf_counter()
            for i, machine in enumerate(machines):
                machine.mine_many(statements[i::3])
            print(f"mined {args.memories} memories on 3 machines in {time.perf_counter() - began:.1f} s (untimed)")
            with PgStore(url, "acme", "bench") as remote:
                push_s, pushed, _ = timed(machines, remote, "push")
                pull_s, _, added = timed(machines, remote, "pull")
                idle_s, idle_pushed, idle_added = timed(machines, remote, "sync")
            print(f"push:            {pushed:6} memories in {push_s:6.2f} s = {pushed / push_s:7.0f} memories/s")
            print(f"pull:            {added:6} memories in {pull_s:6.2f} s = {added / pull_s:7.0f} memories/s")
            print(f"nothing to do:   3 syncs in {idle_s:.2f} s ({idle_pushed} pushed, {idle_added} added)")
            moved, seconds = pushed + added, push_s + pull_s + idle_s
            print(f"whole exchange:  {moved:6} memories moved in {seconds:6.2f} s = {moved / seconds:7.0f} memories/s")
            views = {tuple(m.team_view()) for m in machines}
            print(f"converged: {len(views) == 1} ({len(next(iter(views)))} current team memories on each machine)")
            for machine in machines:
                machine.close()
            session_start(root, args.runs)
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
