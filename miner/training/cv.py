"""`miner eval --cv`: leave one project out, train without it, score it through the real pipeline.

The groups are the dev transcripts and the multi-session projects. For each
group, the classifier is trained, and its thresholds tuned, on every other
group only (`train.train_model`); then the held-out group is mined with that
model by the real miner and scored as `miner eval` scores it:

- a dev transcript: extraction against its gold (categories ignored and
  required, per category), restore questions against the tail, supersede
  links against the gold's `supersedes`;
- a multi-session project: the cross-session questions through the real
  SessionStart hook (and the previous session's tail at the same size),
  extraction against the sessions labelled here, and whether each session
  with five human prompts or more yielded a memory from the user's words.

Nothing a fold scores was seen by the model it scores with. Figures are
summed over folds (micro), and the classifier's own unit-level figures are
given beside the pipeline's.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from ..evaluation.transcripts import (
    evaluate_source,
    link_prf,
    prf,
    read_jsonl,
    restore_lines,
    restore_totals,
    score_extraction,
    transcript_for,
)
from ..extract.classify import Classifier, thresholds_of
from ..extract.model import CATEGORIES
from .dataset import Document
from .dataset import load as load_dataset
from .train import Example, featurize, train_model

MIN_PROMPTS = 5  # a session with this many human prompts must yield a memory from the user's words


def _unit_figures(examples: list[Example], classifier: Classifier) -> Counter:
    """The classifier alone on the held-out units: memory or not, and the category when both are memories."""
    counts: Counter = Counter()
    for example, score in zip(examples, classifier.scores([list(e.tokens) for e in examples])):
        category, _ = classifier.decide(score, example.role)
        gold = example.label
        if category != "none" and gold != "none":
            counts["tp"] += 1
            counts["same_category"] += category == gold
        elif category != "none":
            counts["fp"] += 1
        elif gold != "none":
            counts["fn"] += 1
    return counts


def _labelled_gold_units(documents: list[Document]) -> list[dict]:
    """Labelled sessions as gold units (unit ids, entry uuids, texts, categories) for `score_extraction`."""
    units = []
    for document in documents:
        for unit, label in zip(document.units, document.labels):
            if label is not None and label != "none":
                units.append({"unit": len(units), "uuid": unit.turn.uuid, "text": unit.text, "category": label})
    return units


def _project_extraction(documents: list[Document], miner_factory) -> dict:
    """Extraction on a project's labelled sessions, against their labels."""
    from ..evaluation.transcripts import mined_from_store
    from ..memory.store import Store

    with tempfile.TemporaryDirectory(prefix="miner-cv-") as tmp, Store(Path(tmp) / "cv.db") as store:
        miner = miner_factory(store)
        for document in documents:
            miner.mine_file(document.path)
        mined = mined_from_store(store)
    return score_extraction(mined, _labelled_gold_units(documents))


def busy_sessions(project_dir: Path) -> dict[str, int]:
    """Session id → prompts the user typed (their own words: no slash commands, fillers or pasted output, as
    the miner counts them), for the project's sessions with at least `MIN_PROMPTS` of them."""
    from ..evaluation.multi import session_files
    from ..extract.transcript import Watermark, read_transcript
    from ..runtime.mine import _user_prompts

    found: dict[str, int] = {}
    seen: set[str] = set()
    for _, path, _ in session_files(project_dir):
        for session_id, count in _user_prompts(read_transcript(str(path), Watermark(), seen=seen).turns).items():
            found[session_id] = found.get(session_id, 0) + count
    return {s: n for s, n in found.items() if n >= MIN_PROMPTS}


def cross_validate(data: Path, config: dict, only: str = "", progress: Callable[[str], None] | None = None,
                   with_rules: bool = True, use_classifier: bool = True, labels: Path | None = None,
                   prompt: bool = False) -> dict[str, Any]:
    """Leave-one-group-out figures (see the module note). `use_classifier=False` scores the rules alone;
    `prompt` also asks each cross-session question as the new session's first prompt (see `evaluate_prompt`)."""
    from ..evaluation.multi import evaluate_project
    from ..extract.nlp import load
    from ..runtime.mine import Miner
    from .dataset import LABELS_DIR

    say = progress or (lambda message: None)
    dataset = load_dataset(data, labels or LABELS_DIR)
    examples = featurize(dataset, with_rules=with_rules)
    pipeline = load(config["spacy_model"])
    gold = data / "gold"
    folds = []
    for group in dataset.groups():
        if only and only not in group:
            continue
        train = [e for e in examples if e.group != group]
        held = [e for e in examples if e.group == group]
        classifier = None
        fold: dict[str, Any] = {"group": group}
        if use_classifier:
            say(f"{group}: training on {len(train)} units of {len({e.group for e in train})} other groups")
            nlp, threshold, figures = train_model(train, progress=lambda m: say(f"  {m}"))
            classifier = Classifier(nlp=nlp, threshold=threshold)
            fold.update(threshold=threshold, units=dict(_unit_figures(held, classifier)))

        def factory(store, classifier=classifier):
            return Miner(store, config, pipeline=pipeline, classifier=classifier if use_classifier else False)

        transcript = transcript_for(group, data / "transcripts")
        if transcript is not None:
            say(f"{group}: mining and scoring the transcript")
            fold["transcript"] = evaluate_source(group, transcript, gold, config, factory)
        project_dir = data / "multi" / group
        questions_file = gold / "multi" / f"{group}.jsonl"
        if project_dir.is_dir():
            documents = [d for d in dataset.documents if d.group == group and d.path.parent == project_dir
                         and any(label == "none" for label in d.labels)]
            if questions_file.is_file():
                say(f"{group}: cross-session questions through the SessionStart hook")
                fold["multi"] = evaluate_project(project_dir, read_jsonl(questions_file), config, factory,
                                                 prompt=prompt)
            if documents:
                say(f"{group}: extraction on {len(documents)} labelled sessions")
                fold["labelled_extraction"] = _project_extraction(documents, factory)
            fold["busy_sessions"] = _busy_yield(project_dir, factory)
        folds.append(fold)
    return summarise(folds)


def _busy_yield(project_dir: Path, factory) -> dict[str, int]:
    """Of the project's sessions with five human prompts or more, how many yield a memory from the user."""
    from ..evaluation.multi import session_files
    from ..memory.store import Store

    busy = busy_sessions(project_dir)
    if not busy:
        return {"sessions": 0, "with_user_memory": 0}
    with tempfile.TemporaryDirectory(prefix="miner-cv-") as tmp, Store(Path(tmp) / "cv.db") as store:
        miner = factory(store)
        for _, path, _ in session_files(project_dir):
            miner.mine_file(path)
        yielded = store.sessions_with_user_memory()
    return {"sessions": len(busy), "with_user_memory": sum(1 for s in busy if s in yielded),
            "without": sorted(s for s in busy if s not in yielded)}


def summarise(folds: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro totals over the folds."""
    extraction = {"ignored": Counter(), "required": Counter()}
    per_category = {c: Counter() for c in CATEGORIES}
    labelled = {"ignored": Counter(), "required": Counter()}
    conflicts: Counter = Counter()
    restore: list[dict] = []
    multi = Counter()
    units = Counter()
    busy = Counter()
    for fold in folds:
        units.update(fold.get("units", {}))
        source = fold.get("transcript")
        if source:
            for kind in ("ignored", "required"):
                extraction[kind].update(source["extraction"][kind])
            for category in CATEGORIES:
                per_category[category].update(source["extraction"]["per_category"][category])
            conflicts.update(source["conflicts"])
            restore += source["restore"]
        if fold.get("multi"):
            for cut in fold["multi"]["cuts"]:
                multi.update({k: cut[k] for k in ("questions", "answered", "tail_answered", "prompt_answered",
                                                   "bm25_answered") if k in cut})
        if fold.get("labelled_extraction"):
            for kind in ("ignored", "required"):
                labelled[kind].update(fold["labelled_extraction"][kind])
        busy.update({k: v for k, v in fold.get("busy_sessions", {}).items() if isinstance(v, int)})
    tp, fp, fn = units["tp"], units["fp"], units["fn"]
    return {
        "folds": folds,
        "extraction": {"ignored": prf(dict(extraction["ignored"])), "required": prf(dict(extraction["required"])),
                       "per_category": {c: prf(dict(v)) for c, v in per_category.items()}},
        "labelled_extraction": {"ignored": prf(dict(labelled["ignored"])), "required": prf(dict(labelled["required"]))},
        "restore": restore_totals(restore),
        "cross_session": _rate(multi),
        "prompt": _prompt_groups(folds),
        "conflicts": link_prf(dict(conflicts)),
        "classifier_units": {"precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
                             "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
                             "category_agreement": round(units["same_category"] / tp, 3) if tp else 0.0, **units},
        "busy_sessions": dict(busy),
    }


def _prompt_groups(folds: list[dict[str, Any]]) -> dict[str, Any]:
    """The prompt path (startup block or prompt block) against BM25, overall and per language group."""
    from ..evaluation.multi import summarise_projects

    projects = [fold["multi"] for fold in folds if fold.get("multi", {}).get("cuts") and
                "prompt_answered" in fold["multi"]["cuts"][0]]
    return summarise_projects(projects, "") if projects else {}


def _rate(counts: Counter) -> dict[str, Any]:
    questions = counts["questions"]
    return {"questions": questions, "answered": counts["answered"],
            "hit_rate": round(counts["answered"] / questions, 3) if questions else 0.0,
            "tail_hit_rate": round(counts["tail_answered"] / questions, 3) if questions else 0.0}


def format_cv(report: dict[str, Any]) -> str:
    lines = ["Leave-one-project-out (each fold trained and tuned without the group it scores)", "",
             f"{'group':<56} {'thr (user/asst)':>15} {'cross-session':>13} {'extr. P/R (ign.)':>17} {'busy':>6}"]
    for fold in report["folds"]:
        cross = ""
        if fold.get("multi"):
            q = sum(c["questions"] for c in fold["multi"]["cuts"])
            a = sum(c["answered"] for c in fold["multi"]["cuts"])
            cross = f"{a}/{q}"
        ext = fold.get("transcript", {}).get("extraction") or fold.get("labelled_extraction")
        pr = ""
        if ext:
            p = prf(ext["ignored"])
            pr = f"{p['precision']:.2f}/{p['recall']:.2f}"
        b = fold.get("busy_sessions") or {}
        busy = f"{b.get('with_user_memory', 0)}/{b.get('sessions', 0)}" if b.get("sessions") else ""
        thr = "rules"
        if "threshold" in fold:
            thr = "/".join(f"{t:.3f}" for t in thresholds_of(fold["threshold"]).values())
        lines.append(f"{fold['group'][:56]:<56} {thr:>15} {cross:>13} {pr:>17} {busy:>6}")
    e, r = report["extraction"], report["cross_session"]
    lines += ["", f"cross-session hit rate (new session's block): {r['hit_rate']:.3f} ({r['answered']}/{r['questions']});"
              f" previous session's tail at the same size: {r['tail_hit_rate']:.3f}",
              f"extraction, dev transcripts, categories ignored: P {e['ignored']['precision']:.3f} "
              f"R {e['ignored']['recall']:.3f} F1 {e['ignored']['f1']:.3f}; categories required: "
              f"P {e['required']['precision']:.3f} R {e['required']['recall']:.3f} F1 {e['required']['f1']:.3f}"]
    le = report["labelled_extraction"]
    lines.append(f"extraction, labelled sessions of the projects, categories ignored: P {le['ignored']['precision']:.3f}"
                 f" R {le['ignored']['recall']:.3f} F1 {le['ignored']['f1']:.3f}; required: F1 {le['required']['f1']:.3f}")
    lines.append("per category (dev transcripts): " + ", ".join(
        f"{c} P {v['precision']:.2f} R {v['recall']:.2f}" for c, v in e["per_category"].items()))
    c = report["conflicts"]
    lines.append(f"supersede links: recall {c['recall']:.3f} ({c.get('found', 0)}/{c.get('gold', 0)}), "
                 f"precision {c['precision']:.3f}")
    rs = report["restore"]
    lines.append(f"restore: {rs['hit_rate']:.3f} against the tail's {rs['tail_hit_rate']:.3f} "
                 f"({rs['questions']} questions); long-range {rs['long_hit_rate']:.3f} against "
                 f"{rs['long_tail_hit_rate']:.3f} ({rs['long_questions']} questions)")
    u = report["classifier_units"]
    if u.get("tp") or u.get("fp"):
        lines.append(f"classifier alone on held-out units: P {u['precision']:.3f} R {u['recall']:.3f}, "
                     f"category agreement {u['category_agreement']:.3f}")
    prompt = report.get("prompt") or {}
    if prompt.get("overall", {}).get("prompt_hit_rate") is not None:
        o = prompt["overall"]
        lines.append(f"asked as the new session's first prompt (startup or prompt block): {o['prompt_hit_rate']:.3f}, "
                     f"plain BM25 over all earlier prose at the prompt block's size: {o['bm25_hit_rate']:.3f}; "
                     + ", ".join(f"{name} {g['prompt_hit_rate']:.3f}/{g['bm25_hit_rate']:.3f}"
                                 for name, g in sorted(prompt.get("languages", {}).items())))
    sources = [fold["transcript"] for fold in report["folds"] if fold.get("transcript")]
    if sources:
        lines += ["", "Restore per transcript (each scored by the fold that did not train on it)"]
        lines += restore_lines(sources, rs)
    b = report["busy_sessions"]
    if b.get("sessions"):
        lines.append(f"sessions with {MIN_PROMPTS}+ human prompts that yield a memory from the user's words: "
                     f"{b['with_user_memory']}/{b['sessions']}")
    return "\n".join(lines)
