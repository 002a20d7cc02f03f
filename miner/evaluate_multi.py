"""`miner eval --multi`: cross-session memory, measured on whole real project folders.

For each project folder and each cut (a session, or `end`), every session that
started before the cut is mined into a fresh store, each with the checkpoint
its SessionEnd hook would have written; then the real `session-start` hook
runs as a subprocess for a new session in that project, exactly as Claude
Code would call it, and the questions whose answers appear in the injected
block are counted. Two baselines get the same number of characters: the tail
of the previous session's prose, and Claude Code's own `memory/MEMORY.md`
where the folder has one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .checkpoint import write_checkpoint
from .evaluate import answered, prose_tail, read_jsonl
from .store import Store
from .transcript import Watermark, read_transcript


def session_files(project_dir: Path) -> list[tuple[str, Path, list[Path]]]:
    """(first timestamp, session file, its subagent files) for each top-level session, oldest first."""
    sessions = []
    for path in sorted(project_dir.glob("*.jsonl")):
        first = _first_timestamp(path)
        subagents = sorted((project_dir / path.stem).rglob("*.jsonl")) if (project_dir / path.stem).is_dir() else []
        sessions.append((first, path, subagents))
    sessions.sort(key=lambda s: (s[0] or "9999", s[1].name))
    return sessions


def _first_timestamp(path: Path) -> str:
    with open(path, "rb") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            stamp = entry.get("timestamp") if isinstance(entry, dict) else None
            if isinstance(stamp, str) and stamp:
                return stamp
    return ""


def project_cwd(sessions: list[tuple[str, Path, list[Path]]]) -> str:
    """The working directory most entries of the project's sessions ran in."""
    counts: Counter[str] = Counter()
    for _, path, _ in sessions:
        for turn in read_transcript(str(path), Watermark(), seen=set()).turns:
            if turn.cwd:
                counts[turn.cwd] += 1
    return counts.most_common(1)[0][0] if counts else "/"


def run_session_start(cwd: str, home: Path, claude: Path) -> str:
    """The additionalContext the real hook injects for a new session in `cwd`."""
    env = dict(os.environ, MINER_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude))
    payload = {"session_id": "eval-new-session", "transcript_path": str(claude / "projects" / "none.jsonl"),
               "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}
    done = subprocess.run([sys.executable, "-m", "miner.hooks", "session-start"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def wait_for_recall_log(store: Store, before: int, timeout_s: float = 30.0) -> None:
    """The hook hands its recall log to a background worker: wait for it, so that cuts stay independent of timing."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if store.db.execute("SELECT COUNT(*) FROM recall_log").fetchone()[0] > before:
            return
        time.sleep(0.05)


def evaluate_project(project_dir: Path, questions: list[dict], config: dict, miner_factory) -> dict[str, Any]:
    sessions = session_files(project_dir)
    order = {path.name: i for i, (_, path, _) in enumerate(sessions)}
    by_cut: dict[str, list[dict]] = defaultdict(list)
    for question in questions:
        by_cut[question["before"]].append(question)
    cuts = sorted(by_cut, key=lambda c: order.get(c, len(sessions)))
    memory_md = project_dir / "memory" / "MEMORY.md"
    memory_text = memory_md.read_text(encoding="utf-8", errors="replace") if memory_md.is_file() else None
    cwd = project_cwd(sessions)
    results = []
    with tempfile.TemporaryDirectory(prefix="miner-multi-", ignore_cleanup_errors=True) as tmp:
        home, claude = Path(tmp) / "home", Path(tmp) / "claude"
        claude.mkdir()
        with Store(home / "memory.db") as store:
            miner = miner_factory(store)
            mined = 0
            for cut in cuts:
                limit = order.get(cut, len(sessions))
                for _, path, subagents in sessions[mined:limit]:
                    for file in [path, *subagents]:
                        miner.mine_file(file)
                    for row in store.db.execute("SELECT session_id, project FROM sessions WHERE transcript = ?",
                                                (str(path.resolve()),)).fetchall():
                        write_checkpoint(store, row["session_id"], row["project"], str(path.resolve()))
                mined = max(mined, limit)
                logged = store.db.execute("SELECT COUNT(*) FROM recall_log").fetchone()[0]
                block = run_session_start(cwd, home, claude)
                if block:
                    wait_for_recall_log(store, logged)
                previous = sessions[limit - 1][1] if limit else None
                tail = prose_tail(previous, len(block)) if previous else ""
                qs = by_cut[cut]
                result = {"cut": cut, "questions": len(qs), "answered": answered(qs, block), "chars": len(block),
                          "tail_answered": answered(qs, tail)}
                if memory_text is not None:
                    result["memory_md_answered"] = answered(qs, memory_text[: len(block)])
                results.append(result)
    return {"project": project_dir.name, "cwd": cwd, "sessions": len(sessions), "cuts": results,
            "has_memory_md": memory_text is not None}


def evaluate_multi(multi: Path, gold: Path, config: dict) -> dict[str, Any]:
    from .mine import Miner
    from .nlp import load

    gold_dir = gold / "multi" if (gold / "multi").is_dir() else gold
    pipeline = load(config.get("spacy_model"))
    projects = []
    for gold_file in sorted(gold_dir.glob("*.jsonl")):
        project_dir = multi / gold_file.stem
        if not project_dir.is_dir():
            projects.append({"project": gold_file.stem, "missing": True})
            continue
        projects.append(evaluate_project(project_dir, read_jsonl(gold_file), config,
                                         lambda store: Miner(store, config, pipeline=pipeline)))
    totals: Counter[str] = Counter()
    for project in projects:
        for cut in project.get("cuts", []):
            for key in ("questions", "answered", "tail_answered", "chars"):
                totals[key] += cut[key]
            if "memory_md_answered" in cut:
                totals["memory_md_questions"] += cut["questions"]
                totals["memory_md_answered"] += cut["memory_md_answered"]
    q = totals["questions"] or 1
    return {
        "pipeline": pipeline.name,
        "projects": projects,
        "overall": {
            "questions": totals["questions"],
            "hit_rate": round(totals["answered"] / q, 3),
            "tail_hit_rate": round(totals["tail_answered"] / q, 3),
            "memory_md_hit_rate": round(totals["memory_md_answered"] / totals["memory_md_questions"], 3)
            if totals["memory_md_questions"] else None,
        },
    }


def format_multi(report: dict[str, Any]) -> str:
    lines = [f"pipeline: {report['pipeline']}", "",
             "Cross-session recall (questions answered by the block a new session's SessionStart hook injects)",
             f"{'project / cut':<62} {'ours':>7} {'tail':>7} {'MEMORY.md':>9} {'chars':>6}"]
    for project in report["projects"]:
        if project.get("missing"):
            lines.append(f"{project['project']:<62} project folder missing")
            continue
        lines.append(f"{project['project']}  ({project['sessions']} sessions, cwd {project['cwd']})")
        for cut in project["cuts"]:
            md = f"{cut['memory_md_answered']}/{cut['questions']}" if "memory_md_answered" in cut else "-"
            lines.append(f"  before {cut['cut'][:56]:<55} {cut['answered']:>3}/{cut['questions']:<3} "
                         f"{cut['tail_answered']:>3}/{cut['questions']:<3} {md:>9} {cut['chars']:>6}")
    overall = report["overall"]
    md = f"{overall['memory_md_hit_rate']:.3f}" if overall["memory_md_hit_rate"] is not None else "-"
    lines.append(f"{'ALL (' + str(overall['questions']) + ' questions)':<62} {overall['hit_rate']:>7.3f} "
                 f"{overall['tail_hit_rate']:>7.3f} {md:>9}")
    lines.append("baselines: tail = last characters of the previous session's prose; MEMORY.md = Claude Code's own "
                 "auto memory (its final state), both cut to our block's size")
    return "\n".join(lines)
