"""What one turn costs in the background: the miner process a Stop hook starts, from its start to its exit.

Usage: python bench/worker.py [--runs 7] [--against DIR]

Each run is a fresh process (`python -m miner.worker mine --no-render T`, as the hooks start it) on a fresh
store, mining one generated turn: small talk that keeps nothing (most turns), or a turn that keeps a decision.
"cold" starts with no compiled rules on disk (the first miner of an install, or after the rule files changed) and
no classifier weights kept for numpy; "warm" starts with the ones a previous miner left (`$MINER_HOME/cache/regex`,
`$MINER_HOME/cache/textcat`). p50 wall time and peak RSS,
beside `python -c pass` of the same interpreter (RSS: the largest of the runs). `--against DIR` runs every case
from another checkout too (an older commit, say), in the same round robin, so that the two are compared on the
machine as it is at the same moments.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TURNS = {
    "keeps nothing": [("user", "ok thanks, that looks right"),
                      ("assistant", "Glad it works. Anything else you want me to look at?")],
    "keeps a decision": [("user", "We decided to use PostgreSQL for the ledger service, not SQLite."),
                         ("assistant", "Understood: the ledger service moves to PostgreSQL. I updated the config.")],
}


def transcript(turns: list[tuple[str, str]]) -> str:
    lines, parent = [], None
    for n, (role, text) in enumerate(turns):
        uuid = f"00000000-0000-4000-8000-{n + 1:012d}"
        content = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({
            "type": role, "uuid": uuid, "parentUuid": parent, "sessionId": "bench-session", "isSidechain": False,
            "timestamp": f"2026-01-01T00:00:{n:02d}Z", "cwd": "/bench/project", "userType": "external",
            "version": "2.1.0", "message": {"role": role, "content": content}}))
        parent = uuid
    return "\n".join(lines) + "\n"


def run_once(argv: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process (run in `cwd`: `-m miner…` imports that checkout's)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} exited with {child.returncode}")
    return wall, usage.ru_maxrss / 1024  # Linux reports KiB


def mine_once(turns: list[tuple[str, str]], cache: Path | None, keep_cache_in: Path | None = None,
              repo: Path = REPO) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="miner-bench-") as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        if cache is not None:
            shutil.copytree(cache, home / "cache")
        path = root / "projects" / "-bench-project" / "turn.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text(transcript(turns), encoding="utf-8")
        env = dict(os.environ, MINER_HOME=str(home), XDG_CONFIG_HOME=str(root / "config"))
        result = run_once([sys.executable, "-m", "miner.worker", "mine", "--no-render", str(path)], env, repo)
        if keep_cache_in is not None:  # (a miner that keeps nothing leaves nothing: "warm" is then cold)
            keep_cache_in.mkdir(parents=True, exist_ok=True)
            for kept in ("regex", "textcat"):
                if (home / "cache" / kept).is_dir():
                    shutil.copytree(home / "cache" / kept, keep_cache_in / kept, dirs_exist_ok=True)
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout to run every case from too")
    args = parser.parse_args()
    repos = [("", REPO)] + ([(f" [{args.against.name}]", args.against.resolve())] if args.against else [])
    with tempfile.TemporaryDirectory(prefix="miner-bench-cache-") as tmp:
        cache = Path(tmp) / "cache"
        # What a previous miner leaves, from each checkout: the file is named by the miner's version, so another
        # checkout's miner would find none of this one's and run cold.
        for _, repo in repos:
            mine_once(TURNS["keeps a decision"], None, keep_cache_in=cache, repo=repo)
        rows = {"python -c pass": []}
        cases = [(f"{name}, {state}{tag}", turns, cache if state == "warm" else None, repo)
                 for name, turns in TURNS.items() for state in ("cold", "warm") for tag, repo in repos]
        for label, *_ in cases:
            rows[label] = []
        for _ in range(args.runs):  # round robin, so that a busy moment of the machine touches every row alike
            rows["python -c pass"].append(run_once([sys.executable, "-c", "pass"], dict(os.environ)))
            for label, turns, start_cache, repo in cases:
                rows[label].append(mine_once(turns, start_cache, repo=repo))
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; {args.runs} runs each")
    print(f"{'process':<44} {'p50 wall':>9} {'peak RSS':>9}")
    for label, samples in rows.items():
        wall = statistics.median(s[0] for s in samples)
        rss = max(s[1] for s in samples)
        print(f"{label:<44} {wall * 1000:>7.0f} ms {rss:>6.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
