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

from ..extract.transcript import Watermark, read_transcript
from ..memory.store import Store
from ..recall import glossary
from ..recall.checkpoint import write_checkpoint
from .transcripts import answered, prose_tail, read_jsonl


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


def run_session_start(cwd: str, home: Path, claude: Path, config: dict | None = None) -> str:
    """The additionalContext the real hook injects for a new session in `cwd`.

    With `config`, the hook reads exactly these settings (from a settings file of its own), so that what is
    scored is the configuration under evaluation, not the settings of whoever runs it.
    """
    env = dict(os.environ, MINER_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude))
    if config is not None:
        settings = home.parent / "config"
        (settings / "miner").mkdir(parents=True, exist_ok=True)
        (settings / "miner" / "config.json").write_text(json.dumps(config), encoding="utf-8")
        env["XDG_CONFIG_HOME"] = str(settings)
    payload = {"session_id": "eval-new-session", "transcript_path": str(claude / "projects" / "none.jsonl"),
               "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}
    done = subprocess.run([sys.executable, "-I", "-m", "miner.hooks", "session-start"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def mine_sessions(store: Store, miner, sessions: list[tuple[str, Path, list[Path]]]) -> None:
    """Mine each session with its subagents, then write the checkpoint its SessionEnd hook would have written;
    last, the indexes kept as the worker keeps them after its pass."""
    from ..worker import keep_indexes

    for _, path, subagents in sessions:
        for file in [path, *subagents]:
            miner.mine_file(file)
        for session in store.transcript_sessions(str(path.resolve())):
            write_checkpoint(store, session.session_id, session.project, str(path.resolve()))
    if sessions:
        keep_indexes(store)


def wait_for_workers(home: Path, timeout_s: float = 30.0) -> None:
    """Wait for the background workers the hook started, so that none writes into a removed folder."""
    from ..worker import running_workers

    deadline = time.monotonic() + timeout_s
    while running_workers(home) and time.monotonic() < deadline:
        time.sleep(0.05)


def wait_for_recall_log(store: Store, before: int, timeout_s: float = 30.0) -> None:
    """The hook hands its recall log to a background worker: wait for it, so that cuts stay independent of timing."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if store.recall_count() > before:
            return
        time.sleep(0.05)


def diagnose_cut(store: Store, project: str, config: dict, questions: list[dict]):
    """Why each question of a cut is answered or not: (c) in the block, (b) stored but not shown, (a) never stored.

    Call it before the hook runs, so the in-process ranking sees the store exactly as the hook does;
    it returns a function of the hook's block that gives one record per question.
    """
    from .. import config as config_mod
    from ..recall.block import build

    budget = min(config_mod.budget_chars(config), 9_999)
    recall = build(store, project, config, situation="startup", budget_chars=budget, log=False)
    shown = {i.memory.id for i in recall.shown}
    voided = {i for z in recall.zones if z.voided for i in z.ids}
    # Every candidate the block was chosen from, best first (voided ones ranked by their zone's score).
    ranked = sorted([(i.score, i.memory.id) for i in recall.shown + recall.left_out]
                    + [(z.score, i) for z in recall.zones if z.voided for i in z.ids], key=lambda t: -t[0])
    position = {memory_id: n for n, (_, memory_id) in enumerate(ranked)}
    limit = int(config["startup_max_candidates"])
    rows = store.project_memories(project)
    evidence_of = {q.get("evidence_uuid", ""): store.memory_ids_of_entry(q.get("evidence_uuid", ""))
                   for q in questions}
    texts = {r.id: r.text for r in rows}
    return lambda block: _classify(questions, block, rows, evidence_of, shown, voided, position, limit,
                                   recall.text == block, texts)


def _classify(questions, block, rows, evidence_of, shown, voided, position, limit, same_block, texts) -> list[dict]:
    out = []
    for q in questions:
        answers = [a.lower() for a in q["answers"]]
        hit = [r for r in rows if any(a in r.text.lower() for a in answers)]
        evidence = evidence_of.get(q.get("evidence_uuid", ""), [])
        record = {"same_block": same_block, "question": q["question"], "answers": q["answers"], "category": q.get("category", ""),
                  "evidence_session": q.get("evidence_session", ""), "evidence_memories": evidence,
                  "evidence_texts": [(i, i in shown, texts.get(i, "")) for i in evidence]}
        if any(a in block.lower() for a in answers):
            record["class"], record["why"] = "c", "answered"
        elif not hit:
            # (c) would be an answer present in other words: that needs reading `evidence_texts`, not a count.
            record["class"] = "a"
            record["why"] = ("evidence entry mined, answer not in its text (shown)" if any(i in shown for i in evidence)
                             else "evidence entry mined, answer not in its text" if evidence
                             else "evidence entry never mined")
        else:
            reasons = []
            for r in hit:
                if r.state != "active":
                    reasons.append((3, r.id, f"state {r.state}"))
                elif r.id not in position:
                    reasons.append((1, r.id, "not a candidate" + (" (tentative)" if r.tentative else "")))
                elif r.id in voided:
                    reasons.append((0, r.id, f"voided (rank {position[r.id]})"))
                elif position[r.id] >= limit:
                    reasons.append((1, r.id, f"beyond candidate limit (rank {position[r.id]})"))
                elif r.id in shown:
                    reasons.append((0, r.id, "shown (formatting?)"))
                else:
                    reasons.append((0, r.id, f"left out over budget (rank {position[r.id]})"))
            reasons.sort(key=lambda t: (t[0], position.get(t[1], 10 ** 9)))
            record["class"], record["why"] = "b", reasons[0][2]
            record["memories"] = [{"id": r.id, "state": r.state, "category": r.category, "role": r.role,
                                   "sessions": r.session_count, "rank": position.get(r.id)} for r in hit]
        out.append(record)
    return out


def evaluate_project(project_dir: Path, questions: list[dict], config: dict, miner_factory,
                     diagnose: bool = False, prompt: bool = False) -> dict[str, Any]:
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
            glossary.refresh(folder=str(home / "cache"))  # the hooks run with this home: they search with it
            miner = miner_factory(store)
            mined = 0
            for cut in cuts:
                limit = order.get(cut, len(sessions))
                mine_sessions(store, miner, sessions[mined:limit])
                mined = max(mined, limit)
                logged = store.recall_count()
                if diagnose:
                    from ..paths import project_root

                    # Before the hook: its recall log (counted by a worker) changes what the next ranking sees.
                    pending = diagnose_cut(store, project_root(cwd), config, by_cut[cut])
                block = run_session_start(cwd, home, claude, config)
                if block:
                    wait_for_recall_log(store, logged)
                previous = sessions[limit - 1][1] if limit else None
                tail = prose_tail(previous, len(block)) if previous else ""
                qs = by_cut[cut]
                result = {"cut": cut, "questions": len(qs), "answered": answered(qs, block), "chars": len(block),
                          "tail_answered": answered(qs, tail)}
                if memory_text is not None:
                    result["memory_md_answered"] = answered(qs, memory_text[: len(block)])
                if diagnose:
                    result["diagnosis"] = pending(block)
                    result["block"] = block
                if prompt:
                    from .prompt import prompt_cut

                    result.update(prompt_cut(qs, block, cwd, home, claude, config, sessions[:limit]))
                results.append(result)
            wait_for_workers(home)
    found = {"project": project_dir.name, "cwd": cwd, "sessions": len(sessions), "cuts": results,
             "has_memory_md": memory_text is not None}
    if prompt:
        from .prompt import language_of, user_texts

        found["language"] = language_of(user_texts(sessions))
    return found


def evaluate_multi(multi: Path, gold: Path, config: dict, diagnose: bool = False,
                   prompt: bool = False) -> dict[str, Any]:
    from ..extract.nlp import load
    from ..runtime.mine import Miner

    gold_dir = gold / "multi" if (gold / "multi").is_dir() else gold
    pipeline = load(config["spacy_model"])
    projects = []
    for gold_file in sorted(gold_dir.glob("*.jsonl")):
        project_dir = multi / gold_file.stem
        if not project_dir.is_dir():
            projects.append({"project": gold_file.stem, "missing": True})
            continue
        projects.append(evaluate_project(project_dir, read_jsonl(gold_file, "multi"), config,
                                         lambda store: Miner(store, config, pipeline=pipeline), diagnose, prompt))
    return summarise_projects(projects, pipeline.name)


def summarise_projects(projects: list[dict[str, Any]], pipeline: str) -> dict[str, Any]:
    """Totals over the projects; with the prompt path, per language group too."""
    totals: Counter[str] = Counter()
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    for project in projects:
        for cut in project.get("cuts", []):
            for key in ("questions", "answered", "tail_answered", "chars", "prompt_answered", "bm25_answered"):
                totals[key] += cut.get(key, 0)
            if "prompt_answered" in cut:
                group = groups[project.get("language", "unknown")]
                for key in ("questions", "prompt_answered", "bm25_answered"):
                    group[key] += cut[key]
            if "memory_md_answered" in cut:
                totals["memory_md_questions"] += cut["questions"]
                totals["memory_md_answered"] += cut["memory_md_answered"]
    q = totals["questions"] or 1
    report = {
        "pipeline": pipeline,
        "projects": projects,
        "overall": {
            "questions": totals["questions"],
            "hit_rate": round(totals["answered"] / q, 3),
            "tail_hit_rate": round(totals["tail_answered"] / q, 3),
            "memory_md_hit_rate": round(totals["memory_md_answered"] / totals["memory_md_questions"], 3)
            if totals["memory_md_questions"] else None,
        },
    }
    if groups:
        report["overall"]["prompt_hit_rate"] = round(totals["prompt_answered"] / q, 3)
        report["overall"]["bm25_hit_rate"] = round(totals["bm25_answered"] / q, 3)
        report["languages"] = {name: {"questions": g["questions"],
                                      "prompt_hit_rate": round(g["prompt_answered"] / g["questions"], 3),
                                      "bm25_hit_rate": round(g["bm25_answered"] / g["questions"], 3)}
                               for name, g in sorted(groups.items())}
    return report


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
    if "prompt_hit_rate" in overall:
        lines += ["", "Asked as the new session's first prompt (startup block or prompt block), against plain BM25 "
                      "over all earlier prose at the prompt block's size",
                  f"{'project':<50} {'lang':>4} {'prompt':>7} {'BM25':>7} {'max chars':>9}"]
        for project in report["projects"]:
            cuts = project.get("cuts", [])
            if not cuts or "prompt_answered" not in cuts[0]:
                continue
            n = sum(c["questions"] for c in cuts)
            lines.append(f"{project['project'][:50]:<50} {project.get('language', '?'):>4} "
                         f"{sum(c['prompt_answered'] for c in cuts):>3}/{n:<3} {sum(c['bm25_answered'] for c in cuts):>3}/"
                         f"{n:<3} {max(c['prompt_chars'] for c in cuts):>9}")
        for name, group in report["languages"].items():
            lines.append(f"  {name}: {group['prompt_hit_rate']:.3f} against {group['bm25_hit_rate']:.3f} "
                         f"({group['questions']} questions)")
        lines.append(f"{'ALL':<55} {overall['prompt_hit_rate']:>7.3f} {overall['bm25_hit_rate']:>7.3f}")
    return "\n".join(lines)


def format_diagnosis(report: dict[str, Any]) -> str:
    """Per project and overall: how many questions are (a) never stored, (b) stored but not shown, (c) in the block."""
    lines = [f"{'project':<50} {'(a) never stored':>17} {'(b) not shown':>14} {'(c) in block':>13}"]
    total: Counter[str] = Counter()
    whys: Counter[str] = Counter()
    for project in report["projects"]:
        counts: Counter[str] = Counter()
        for cut in project.get("cuts", []):
            for record in cut.get("diagnosis", []):
                counts[record["class"]] += 1
                whys[(record["class"], record["why"].split(" (rank")[0])] += 1
        total.update(counts)
        lines.append(f"{project['project'][:50]:<50} {counts['a']:>17} {counts['b']:>14} {counts['c']:>13}")
    lines.append(f"{'ALL':<50} {total['a']:>17} {total['b']:>14} {total['c']:>13}")
    lines.append("")
    lines += [f"  ({cls}) {why}: {n}" for (cls, why), n in sorted(whys.items())]
    return "\n".join(lines)


if __name__ == "__main__":  # python -m miner.evaluation.multi MULTI GOLD [--json]: the eval with a per-question diagnosis
    from .. import config as config_mod

    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    usage = "usage: python -m miner.evaluation.multi MULTI_DIR GOLD_MULTI_DIR [--json]"
    if "-h" in sys.argv or "--help" in sys.argv:
        print(usage + "\n\nThe cross-session eval, with each question's miss explained "
              "(never stored, not shown, answered).")
        sys.exit(0)
    if len(args) != 2:
        sys.exit(f"error: expected two folders, the multi-session projects and their gold questions\n{usage}")
    missing = [a for a in args if not Path(a).is_dir()]
    if missing:
        sys.exit(f"error: {missing[0]} is not a folder; "
                 f"give the multi-session projects and their gold questions\n{usage}")
    diagnosed = evaluate_multi(Path(args[0]), Path(args[1]), config_mod.load(), diagnose=True)
    if "--json" in sys.argv:
        print(json.dumps(diagnosed, indent=2, ensure_ascii=False))
    else:
        print(format_multi(diagnosed) + "\n\n" + format_diagnosis(diagnosed))
