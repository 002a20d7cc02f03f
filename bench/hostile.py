"""Hostile sizes: wall time and peak RSS of every hook and of the background miner on a 50 MB line.

    .venv/bin/python bench/hostile.py [--mb 50] [--keep DIR]

Two transcripts are built under a temporary HOME (CLAUDE_CONFIG_DIR and
MINER_HOME inside it), each a short ordinary session plus one huge line:

- prompt:      a user prompt of `--mb` MB of prose (sentences, list items, a
               few secrets and decisions), then the assistant's reply;
- tool_result: a tool result of `--mb` MB, between a tool call and a reply.

For each, every hook (session-start, stop, pre-compact, session-end) runs
as Claude Code runs it: a fresh process, the real payload on stdin, each
against a fresh MINER_HOME (nothing mined yet: the worst case for the hook).
The detached workers a hook starts are waited for, untimed, before the next
run. PreCompact runs twice: with the default `precompact_timeout_s` (it waits
that long for its miner, which needs longer here) and with 0 (its own cost:
the checkpoint from the transcript's tail). Then SessionStart(compact) after
a PreCompact whose miner finished (the note says whether the block opens
with the checkpoint), and the background miner (`python -m miner.worker
mine TRANSCRIPT`) into a fresh store. Two more rows: a Stop hook whose stdin
is never closed (it must give up after a second), and a Stop hook whose
payload holds a 7 MB transcript_path (logged, redacted, refused), and a
UserPromptSubmit hook whose payload holds a `--mb` MB prompt. `python -c
pass` of the same interpreter gives the scale.

Targets: every hook ≤ 2 s wall and ≤ 300 MB peak RSS, the miner ≤ 20 s.

Peak RSS comes from wait4() on each child, spawned by a small launcher
process (Linux counts the pre-exec memory of a forked child in its peak: a
child forked by this process, which holds the generated text, would read as
its size).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from launcher import Launcher

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

WORDS = ("the a we to of for and in on with use keep run build test deploy cache database parser exporter queue "
         "worker retry index schema migration logging metrics billing invoice customer search config service "
         "frontend backend release branch commit review pipeline module function value error result").split()
EVENTS = {"session-start": "SessionStart", "stop": "Stop", "pre-compact": "PreCompact", "session-end": "SessionEnd"}

def isolated_env(root: Path) -> dict[str, str]:
    home = root / "home"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool has its .pyc files
    env.update(HOME=str(home), MINER_HOME=str(root / "miner-home"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), CLAUDE_CONFIG_DIR=str(home / ".claude"))
    return env


def wait_for_workers(home: Path, timeout: float = 300.0) -> None:
    """Wait (untimed) for the detached workers of this MINER_HOME; end stragglers by pid."""
    from miner.worker import running_workers

    deadline = time.monotonic() + timeout
    while running_workers(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in running_workers(home):
        os.kill(pid, 9)


# --- transcripts -------------------------------------------------------------------------------


def prose(size: int, seed: int = 11) -> str:
    """About `size` characters of prose: sentences, list items, a few decisions and secrets."""
    rng = random.Random(seed)
    lines = []
    for n in range(2000):
        if n % 97 == 0:
            lines.append(f"We'll use PostgreSQL {n} instead of MySQL for the reporting database.")
        elif n % 89 == 0:
            lines.append(f"The staging key is sk-ant-{rng.getrandbits(160):040x} for service {n}.")
        elif n % 7 == 0:
            lines.append("- " + " ".join(rng.choice(WORDS) for _ in range(12)))
        else:
            lines.append(". ".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize()
                                   for _ in range(3)) + ".")
    block = "\n".join(lines) + "\n"
    return (block * (size // len(block) + 1))[:size]


class Writer:
    """Appends entries in the shapes Claude Code writes."""

    def __init__(self, path: Path, cwd: str, session_id: str):
        self.path, self.cwd, self.session_id = path, cwd, session_id
        self.parent = None
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def entry(self, kind: str, message: dict) -> None:
        self.n += 1
        uid = f"00000000-0000-4000-8000-{self.n:012d}"
        stamp = f"2026-03-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"
        value = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                 "sessionId": self.session_id, "version": "2.1.30", "gitBranch": "main", "type": kind,
                 "message": message, "uuid": uid, "timestamp": stamp}
        self.parent = uid
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(value, ensure_ascii=False) + "\n")

    def user(self, content) -> None:
        self.entry("user", {"role": "user", "content": content})

    def assistant(self, blocks: list[dict]) -> None:
        self.entry("assistant", {"id": f"msg_{self.n:08d}", "type": "message", "role": "assistant",
                                 "model": "claude-x", "content": blocks})

    def say(self, text: str) -> None:
        self.assistant([{"type": "text", "text": text}])


def build(kind: str, path: Path, cwd: str, session_id: str, size: int) -> None:
    writer = Writer(path, cwd, session_id)
    for n in range(5):
        writer.user(f"Set up part {n} of the billing service, with tests.")
        writer.say(f"We'll use PostgreSQL for part {n} of the billing service.")
    if kind == "prompt":
        writer.user("Here is the whole log, find why the exporter fails:\n" + prose(size))
        writer.say("The exporter fails because the invoice queue is full; I'll add a retry.")
    else:
        writer.user("Run the exporter and show me its output.")
        writer.assistant([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make export"}}])
        writer.user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": prose(size, seed=12)}])
        writer.say("The exporter ran; the output above shows every invoice it wrote.")


# --- runs ----------------------------------------------------------------------------------------


def measure(launcher: Launcher, label: str, argv: list[str], env: dict[str, str], stdin: bytes = b"",
            leave_open: bool = False) -> dict:
    result = launcher.run(argv, env, stdin, leave_open)
    result["label"] = label
    return result


def fresh_home(env: dict[str, str], root: Path, name: str) -> dict[str, str]:
    home = root / f"miner-home-{name}"
    shutil.rmtree(home, ignore_errors=True)
    return dict(env, MINER_HOME=str(home))


def print_row(result: dict, note: str = "") -> None:
    flag = "" if result["status"] == 0 else f"  (exit {result['status']})"
    print(f"  {result['label']:<44} {result['seconds']:8.2f} s {result['maxrss_kb'] / 1024:8.0f} MB{flag}"
          f"{'  ' + note if note else ''}", flush=True)


def block_note(result: dict) -> str:
    """What a SessionStart printed: the block's size and whether the checkpoint's task opens it."""
    if not result["stdout"]:
        return "no block"
    text = json.loads(result["stdout"])["hookSpecificOutput"]["additionalContext"]
    return f"block of {len(text)} chars" + (", opens with the task" if "task" in text[:400].lower() else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50.0, help="size of the huge line in MB (default 50)")
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temporary one)")
    parser.add_argument("--cases", default="prompt,tool_result", help="which transcripts (prompt,tool_result)")
    args = parser.parse_args()
    launcher = Launcher()  # before the text is generated: its peak must stay small
    root = Path(args.keep or tempfile.mkdtemp(prefix="miner-hostile-"))
    root.mkdir(parents=True, exist_ok=True)
    env = isolated_env(root)
    python = sys.executable
    size = int(args.mb * 1024 * 1024)
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
          f"{os.cpu_count()} cores; huge line {args.mb:g} MB", flush=True)
    try:
        print_row(measure(launcher, "python -c pass", [python, "-c", "pass"], env))
        for kind in args.cases.split(","):
            cwd = root / "work" / f"hostile-{kind}"
            cwd.mkdir(parents=True, exist_ok=True)
            session_id = f"5e55{kind[:4].encode().hex()}-0000-4000-8000-000000000001"[:36]
            folder = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / "".join(
                c if c.isalnum() else "-" for c in str(cwd))
            transcript = folder / f"{session_id}.jsonl"
            transcript.unlink(missing_ok=True)
            started = time.perf_counter()
            build(kind, transcript, str(cwd), session_id, size)
            print(f"{kind}: {transcript.stat().st_size / 2**20:.1f} MB transcript "
                  f"(built in {time.perf_counter() - started:.1f} s)", flush=True)
            base = {"session_id": session_id, "transcript_path": str(transcript), "cwd": str(cwd)}
            extra = {"session-start": {"source": "startup"}, "stop": {"stop_hook_active": False},
                     "pre-compact": {"trigger": "auto", "custom_instructions": ""},
                     "session-end": {"reason": "other"}}
            for event, name in EVENTS.items():
                run_env = fresh_home(env, root, f"{kind}-{event}")
                stdin = json.dumps({**base, "hook_event_name": name, **extra[event]}).encode()
                result = measure(launcher, f"{event}", [python, "-m", "miner.hooks", event], run_env, stdin)
                print_row(result)
                wait_for_workers(Path(run_env["MINER_HOME"]))
            # PreCompact's own cost, without the wait for its miner (precompact_timeout_s 0).
            run_env = fresh_home(env, root, f"{kind}-pre-compact-nowait")
            config_dir = Path(run_env["XDG_CONFIG_HOME"]) / "miner"
            config_dir.mkdir(parents=True, exist_ok=True)
            (config_dir / "config.json").write_text(json.dumps({"precompact_timeout_s": 0}))
            print_row(measure(launcher, "pre-compact, precompact_timeout_s 0", [python, "-m", "miner.hooks",
                                                                                "pre-compact"], run_env,
                              json.dumps({**base, "hook_event_name": "PreCompact", **extra["pre-compact"]}).encode()))
            (config_dir / "config.json").unlink()
            wait_for_workers(Path(run_env["MINER_HOME"]))
            # SessionStart(compact) after PreCompact: the block it prints, from the checkpoint.
            run_env = fresh_home(env, root, f"{kind}-compact")
            measure(launcher, "", [python, "-m", "miner.hooks", "pre-compact"], run_env,
                    json.dumps({**base, "hook_event_name": "PreCompact", **extra["pre-compact"]}).encode())
            wait_for_workers(Path(run_env["MINER_HOME"]))
            result = measure(launcher, "session-start (compact, after mining)",
                             [python, "-m", "miner.hooks", "session-start"], run_env,
                             json.dumps({**base, "hook_event_name": "SessionStart", "source": "compact"}).encode())
            print_row(result, block_note(result))
            wait_for_workers(Path(run_env["MINER_HOME"]))
            run_env = fresh_home(env, root, f"{kind}-miner")
            print_row(measure(launcher, "miner (worker mine, fresh store)",
                              [python, "-m", "miner.worker", "mine", str(transcript)], run_env))
            transcript.unlink()
        run_env = fresh_home(env, root, "stdin-open")
        stdin = json.dumps({"session_id": "s", "transcript_path": "/nowhere.jsonl", "cwd": "/"}).encode()
        print_row(measure(launcher, "stop, stdin never closed", [python, "-m", "miner.hooks", "stop"], run_env,
                          stdin[:-1], leave_open=True))
        run_env = fresh_home(env, root, "big-path")
        stdin = json.dumps({"session_id": "s", "cwd": "/", "hook_event_name": "Stop",
                            "transcript_path": "/" + ("sk-ant-" + "a1B2c3D4" * 5 + " ") * (7 * 2**20 // 48)})
        print_row(measure(launcher, "stop, 7 MB transcript_path (logged)", [python, "-m", "miner.hooks", "stop"],
                          run_env, stdin.encode()))
        # UserPromptSubmit carries the prompt itself: a payload of `--mb` MB (it keeps the first and last MB).
        run_env = fresh_home(env, root, "big-prompt")
        stdin = json.dumps({"session_id": "s", "cwd": str(root / "work"), "hook_event_name": "UserPromptSubmit",
                            "transcript_path": "", "prompt": "Which database did we pick? " + prose(size)})
        print_row(measure(launcher, f"user-prompt-submit, {args.mb:g} MB prompt",
                          [python, "-m", "miner.hooks", "user-prompt-submit"], run_env, stdin.encode()))
    finally:
        launcher.close()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
