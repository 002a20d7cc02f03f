"""Memories in languages the dev data lacks: what a multi-session project keeps, and what its next session is told.

Usage: python bench/languages.py [--verbose] [SET_DIR ...]   (default: bench/languages/set_a and set_b)

Each file of a set is one invented project in one language (Russian, Japanese, German, French, Portuguese,
Thai, Vietnamese, Turkish in set_a; Russian, Japanese, German, French, Portuguese, Polish, Indonesian,
Ukrainian in set_b): four sessions of a developer and a coding assistant, written for this measurement, not
taken from any transcript, with the memories planted in them (who said it, its category, and one or two
strings that only that text holds). set_a was worked on; set_b was written apart from it and held out: its
misses were not read.

Sessions are written one after another as Claude Code writes them, each mined with `miner mine` as a separate
process; before each session after the first, the SessionStart hook runs as Claude Code runs it (payload on
stdin) and its block is kept. Per language and in all, it prints:
- busy sessions (five prompts or more) that yield a memory in the user's words;
- planted memories stored (a memory of that session holds the strings), and with the planted category;
- planted memories shown in the next session's block;
- memories from texts nothing was planted in (user / assistant): a rough count of false ones, since an
  assistant's reply may repeat what the user decided.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from builders import Session  # noqa: E402

# bench/hooks.py's temporary home, and its wait for the detached worker a hook starts
from hooks import isolated_env, wait_for_workers  # noqa: E402
from miner.paths import encode_project  # noqa: E402 - Claude Code's folder name for a project

FIELDS = ("busy", "busy_ok", "planted", "stored", "category", "later", "shown", "extra_user", "extra_assistant")


def environment(root: Path) -> dict[str, str]:
    env = isolated_env(root)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def session_start(env: dict[str, str], project: str, session_id: str) -> str:
    """The block SessionStart injects for a new session of `project` ('' when none)."""
    payload = json.dumps({"session_id": session_id, "transcript_path": "", "cwd": project, "source": "startup",
                          "hook_event_name": "SessionStart"})
    done = subprocess.run([sys.executable, "-m", "miner.hooks", "session-start"], input=payload.encode(),
                          capture_output=True, env=env, timeout=60)
    out = done.stdout.strip()
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def measure(spec: dict, root: Path, verbose: bool) -> dict[str, int]:
    """Mine one project session by session; its counts (`FIELDS`)."""
    env = environment(root)
    project, folder = spec["project"], root / "home" / ".claude" / "projects" / encode_project(spec["project"])
    where: dict[str, tuple[int, int, str]] = {}  # entry uuid -> (session, turn, role)
    blocks: dict[int, str] = {}
    ids = []
    for k, planned in enumerate(spec["sessions"]):
        if k:
            blocks[k] = session_start(env, project, f"bench-{k}")
            wait_for_workers(root / "miner-home")
        session_id = str(uuid.UUID(int=k + 1))
        ids.append(session_id)
        session = Session(folder / f"{session_id}.jsonl", project, session_id, start=f"2026-01-{k + 1:02d}T10:00:00")
        for t, turn in enumerate(planned["turns"]):
            where[session.user(turn["user"])["uuid"]] = (k, t, "user")
            where[session.assistant(turn.get("assistant", "OK."))["uuid"]] = (k, t, "assistant")
        done = subprocess.run([sys.executable, "-m", "miner", "mine", "-q", str(session.path)], capture_output=True,
                              text=True, env=env, timeout=300)
        if done.returncode:
            raise SystemExit(f"{spec['lang']}: mining failed: {done.stderr.strip()[-300:]}")
    with sqlite3.connect(root / "miner-home" / "memory.db") as db:
        rows = db.execute("SELECT session_id, role, category, text, entry_uuid FROM memories "
                          "WHERE state <> 'forgotten'").fetchall()
    counts = dict.fromkeys(FIELDS, 0)
    for k, planned in enumerate(spec["sessions"]):
        if len(planned["turns"]) >= 5:
            counts["busy"] += 1
            counts["busy_ok"] += any(r[0] == ids[k] and r[1] == "user" for r in rows)
    for plant in spec["planted"]:
        keys = [key.casefold() for key in plant["keys"]]
        found = [r for r in rows if r[0] == ids[plant["session"]] and all(key in r[3].casefold() for key in keys)]
        counts["planted"] += 1
        counts["stored"] += bool(found)
        counts["category"] += any(r[2] == plant["category"] for r in found)
        if plant["session"] + 1 < len(spec["sessions"]):
            counts["later"] += 1
            counts["shown"] += all(key in blocks[plant["session"] + 1].casefold() for key in keys)
        if verbose and not found:
            print(f"    missed: session {plant['session']}, turn {plant['turn']}, {plant['role']}, {plant['category']}")
    planted_at = {(p["session"], p["turn"], p["role"]) for p in spec["planted"]}
    for row in rows:
        if where.get(row[4]) not in planted_at:
            counts["extra_user" if row[1] == "user" else "extra_assistant"] += 1
            if verbose:
                print(f"    kept from a text with nothing planted: {row[1]}, {row[2]}: {row[3][:100]}")
    return counts


def line(name: str, c: dict[str, int]) -> str:
    return (f"{name}: busy sessions with the user's words {c['busy_ok']}/{c['busy']}; planted stored "
            f"{c['stored']}/{c['planted']} (category right {c['category']}); shown in the next session's block "
            f"{c['shown']}/{c['later']}; memories from texts with nothing planted {c['extra_user']} (user) / "
            f"{c['extra_assistant']} (assistant)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", type=Path, help="folders of project files (default: both shipped sets)")
    parser.add_argument("--verbose", action="store_true",
                        help="name each planted memory that was not stored, and each memory kept from a text with "
                             "nothing planted")
    args = parser.parse_args()
    sets = args.sets or [REPO / "bench" / "languages" / "set_a", REPO / "bench" / "languages" / "set_b"]
    for folder in sets:
        files = sorted(folder.glob("*.json"))
        if not files:
            print(f"no project files in {folder}")
            return 1
        total = dict.fromkeys(FIELDS, 0)
        for path in files:
            spec = json.loads(path.read_text(encoding="utf-8"))
            with tempfile.TemporaryDirectory(prefix="miner-bench-") as tmp:
                counts = measure(spec, Path(tmp), args.verbose)
            print("  " + line(spec["lang"], counts), flush=True)
            total = {k: total[k] + counts[k] for k in FIELDS}
        print(line(folder.name, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
