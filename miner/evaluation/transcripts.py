"""`miner eval`: score extraction and restore against gold labels, as GUIDELINES.md defines them.

Extraction: a mined memory matches a gold unit when both come from the same
transcript entry and their word sets have Jaccard ≥ 0.5, or one text
contains the other (lower-cased, white space collapsed). Tentative and doc
units are neutral. Reported with categories ignored and required.

Restore: for each cut, the transcript is mined up to the cut, the checkpoint
the PreCompact (or SessionEnd) hook would write is written, and the block
that a post-compaction session (a cut inside the session) or a new session
(cut `end`) would get at the default budget is built. A question counts when
the block contains one of its answers, case-insensitively.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .. import config as config_mod
from ..extract.clean import clean_prose
from ..extract.model import CATEGORIES
from ..extract.transcript import Watermark, read_transcript
from ..memory.store import Store
from ..recall.block import build
from ..recall.checkpoint import write_checkpoint

_WORD_RE = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text.lower()))


def collapse(text: str) -> str:
    return " ".join(text.lower().split())


def texts_match(mined: str, gold: str) -> bool:
    a, b = collapse(mined), collapse(gold)
    if a and b and (a in b or b in a):
        return True
    wa, wb = words(mined), words(gold)
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= 0.5


class GoldError(ValueError):
    """A gold file not laid out as GUIDELINES.md says; one line names the file, the line and what is wrong."""


def _answers(value: Any) -> bool:
    # A string would be searched character by character: " " or "e" is in any block, so it would always count.
    return isinstance(value, list) and bool(value) and all(isinstance(a, str) and a.strip() for a in value)


_TEXT = (lambda value: isinstance(value, str), "a string")
_FLAG = (lambda value: isinstance(value, bool), "true or false")
_NUMBER = (lambda value: isinstance(value, int) and not isinstance(value, bool), "a whole number")
_NUMBERS = (lambda value: isinstance(value, list) and all(_NUMBER[0](n) for n in value), "a list of unit numbers")
_CATEGORY = (lambda value: isinstance(value, str) and value in CATEGORIES, f"one of {', '.join(CATEGORIES)}")
_ANSWERS = (_answers, 'a non-empty list of non-empty strings, e.g. ["PostgreSQL", "Postgres"]')

# What the scoring reads of each gold file's records (GUIDELINES.md, "Files"): the required fields, then the
# optional ones, checked when present. Fields nothing reads are not checked.
GOLD_RECORDS: dict[str, tuple[str, dict[str, tuple], dict[str, tuple]]] = {
    "extraction": ("gold unit", {"unit": _NUMBER, "uuid": _TEXT, "text": _TEXT, "category": _CATEGORY},
                   {"tentative": _FLAG, "doc": _FLAG, "supersedes": _NUMBERS}),
    "restore": ("restore question", {"cut": _TEXT, "question": _TEXT, "answers": _ANSWERS},
                {"category": _CATEGORY, "evidence_uuid": _TEXT}),
    "multi": ("cross-session question", {"before": _TEXT, "question": _TEXT, "answers": _ANSWERS},
              {"category": _CATEGORY, "evidence_session": _TEXT, "evidence_uuid": _TEXT}),
}
_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true or false",
               type(None): "null"}


def read_jsonl(path: Path, kind: str = "") -> list[dict]:
    """The records of a gold file, each checked against what GUIDELINES.md says its `kind` of file holds.

    `kind` (extraction, restore or multi) defaults to the name of the file's folder, as the gold lays them out;
    any other file is only checked to hold one JSON object a line. Anything else raises `GoldError`.
    """
    noun, required, optional = GOLD_RECORDS.get(kind or path.parent.name, ("record", {}, {}))
    records = []
    with open(path, "rb") as handle:  # (bytes: a line that is not UTF-8 is then named by its number)
        for number, raw in enumerate(handle, 1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise GoldError(f"{where}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                                "save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                at = "" if exc.msg.endswith(" at") else " at"  # ("Unterminated string starting at")
                raise GoldError(f"{where}: not valid JSON ({exc.msg}{at} column {exc.colno}); each line must be one "
                                f"whole JSON object, a {noun}") from None
            if not isinstance(record, dict):
                raise GoldError(f"{where}: {_JSON_TYPES.get(type(record), 'a value')}, not a JSON object; each line "
                                f"must be one JSON object, a {noun}")
            missing = [name for name in required if name not in record]
            if missing:
                *others, last = [f'"{name}"' for name in required]
                needs = f"{', '.join(others)} and {last}"
                raise GoldError(f'{where}: no "{missing[0]}"; a {noun} needs {needs} (see GUIDELINES.md)')
            for name, (check, wanted) in {**required, **optional}.items():
                if name in record and not check(record[name]):
                    shown = json.dumps(record[name], ensure_ascii=False)
                    shown = shown if len(shown) <= 40 else shown[:37] + "..."
                    raise GoldError(f'{where}: "{name}" is {shown}; it must be {wanted}')
            records.append(record)
    return records


def transcript_for(source: str, transcripts: Path) -> Path | None:
    """`<folder>__<file>` → transcripts/<folder>/<file>.jsonl."""
    if "__" not in source:
        return None
    folder, name = source.rsplit("__", 1)
    path = transcripts / folder / f"{name}.jsonl"
    return path if path.is_file() else None


def score_extraction(mined: list[dict], gold_units: list[dict]) -> dict[str, Any]:
    """Precision/recall counts for mined memories ({uuid, text, category}) against gold memories."""
    by_uuid: dict[str, list[dict]] = defaultdict(list)
    for unit in gold_units:
        by_uuid[unit["uuid"]].append(unit)
    counts: dict[str, Any] = {"ignored": defaultdict(int), "required": defaultdict(int)}
    per_cat = {c: defaultdict(int) for c in CATEGORIES}
    matched_any: set[int] = set()
    matched_cat: set[int] = set()
    for memory in mined:
        units = [u for u in by_uuid.get(memory["uuid"], []) if texts_match(memory["text"], u["text"])]
        scored = [u for u in units if not u.get("tentative") and not u.get("doc")]
        neutral = [u for u in units if u.get("tentative") or u.get("doc")]
        cat = memory["category"]
        if scored:
            counts["ignored"]["tp"] += 1
            matched_any.update(u["unit"] for u in scored)
            same = [u for u in scored if u["category"] == cat]
            if same:
                counts["required"]["tp"] += 1
                per_cat[cat]["tp"] += 1
                matched_cat.update(u["unit"] for u in same)
            else:
                counts["required"]["fp"] += 1
                per_cat[cat]["fp"] += 1
        elif neutral:
            continue
        else:
            counts["ignored"]["fp"] += 1
            counts["required"]["fp"] += 1
            per_cat[cat]["fp"] += 1
    required = [u for u in gold_units if not u.get("tentative") and not u.get("doc")]
    counts["ignored"]["gold"] = len(required)
    counts["ignored"]["found"] = sum(1 for u in required if u["unit"] in matched_any)
    counts["required"]["gold"] = len(required)
    counts["required"]["found"] = sum(1 for u in required if u["unit"] in matched_cat)
    for unit in required:
        per_cat[unit["category"]]["gold"] += 1
        if unit["unit"] in matched_cat:
            per_cat[unit["category"]]["found"] += 1
    return {"ignored": dict(counts["ignored"]), "required": dict(counts["required"]),
            "per_category": {c: dict(v) for c, v in per_cat.items()}}


def prf(counts: dict[str, int]) -> dict[str, float]:
    tp, fp = counts.get("tp", 0), counts.get("fp", 0)
    gold, found = counts.get("gold", 0), counts.get("found", 0)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = found / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3), **counts}


def _merge(into: dict, counts: dict) -> None:
    for key, value in counts.items():
        into[key] = into.get(key, 0) + value


def mined_from_store(store: Store) -> list[dict]:
    """One row per (memory, entry): what the miner produced from each transcript entry.

    The text is the evidence row's own: a near-duplicate merge keeps the newer wording on the
    memory, but each entry still produced its own words.
    """
    return [entry.as_dict() for entry in store.mined_entries()]


def memory_units(mined: list[dict], gold_units: list[dict]) -> dict[int, set[int]]:
    """Gold units each mined memory matches, by the same entry-and-text rule as extraction."""
    by_uuid: dict[str, list[dict]] = defaultdict(list)
    for unit in gold_units:
        by_uuid[unit["uuid"]].append(unit)
    found: dict[int, set[int]] = defaultdict(set)
    for row in mined:
        for unit in by_uuid.get(row["uuid"], []):
            if texts_match(row["text"], unit["text"]):
                found[row["memory_id"]].add(unit["unit"])
    return found


def score_links(links: list[tuple[int, int]], units_of: dict[int, set[int]], gold_units: list[dict]) -> dict[str, int]:
    """Supersede links (newer id, older id) against the gold's `supersedes`.

    A link is correct when some gold unit its newer memory matches supersedes some gold unit its
    older memory matches. Links from a tentative or doc unit are neutral, as in extraction.
    `reachable` counts gold links whose two units were both mined: the most any linking could find.
    """
    neutral = {u["unit"] for u in gold_units if u.get("tentative") or u.get("doc")}
    gold_pairs = {(u["unit"], old) for u in gold_units for old in u.get("supersedes") or []}
    scored = {pair for pair in gold_pairs if pair[0] not in neutral}
    counts = {"tp": 0, "fp": 0, "gold": len(scored), "found": 0, "reachable": 0}
    found: set[tuple[int, int]] = set()
    for newer, older in links:
        pairs = {(n, o) for n in units_of.get(newer, ()) for o in units_of.get(older, ())}
        if pairs & scored:
            counts["tp"] += 1
            found |= pairs & scored
        elif pairs & gold_pairs or (units_of.get(newer) and units_of[newer] <= neutral):
            continue
        else:
            counts["fp"] += 1
    mined_units = set().union(*units_of.values()) if units_of else set()
    counts["found"] = len(found)
    counts["reachable"] = sum(1 for n, o in scored if n in mined_units and o in mined_units)
    return counts


def link_prf(counts: dict[str, int]) -> dict[str, Any]:
    tp, fp, gold = counts.get("tp", 0), counts.get("fp", 0), counts.get("gold", 0)
    reachable = counts.get("reachable", 0)
    return {"precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
            "recall": round(counts.get("found", 0) / gold, 3) if gold else 0.0,
            "recall_reachable": round(counts.get("found", 0) / reachable, 3) if reachable else 0.0,
            "predicted": tp + fp, **counts}


def cut_order(transcript: Path, cuts: list[str]) -> list[str]:
    """Cuts in the order their entries appear in the transcript, `end` last."""
    position: dict[str, int] = {}
    wanted = set(cuts) - {"end"}
    with open(transcript, "rb") as handle:
        for index, line in enumerate(handle):
            for cut in wanted:
                if cut.encode() in line and cut not in position:
                    try:
                        if json.loads(line).get("uuid") == cut:
                            position[cut] = index
                    except ValueError:
                        pass
    ordered = sorted((c for c in cuts if c != "end"), key=lambda c: position.get(c, 1 << 60))
    return ordered + (["end"] if "end" in cuts else [])


def answered(questions: list[dict], text: str) -> int:
    """Questions with at least one answer in `text`, compared case-insensitively."""
    lowered = text.lower()
    return sum(1 for q in questions if any(a.lower() in lowered for a in q["answers"]))


LONG_RANGE_CHARS = 10_000  # a restore question whose answer was said further back than this is long-range


def session_prose(path: Path, stop_after_uuid: str | None = None) -> tuple[str, dict[str, int]]:
    """A session's user and assistant prose up to a cut, as one text, and where each entry's prose starts in it."""
    turns = read_transcript(str(path), Watermark(), seen=set(), stop_after_uuid=stop_after_uuid).turns
    parts, starts, at = [], {}, 0
    for turn in turns:
        if turn.is_sidechain:
            continue
        text = " ".join(clean_prose(turn.text).split())
        starts.setdefault(turn.uuid, at)
        parts.append(text)
        at += len(text) + 1
    return "\n".join(parts), starts


def prose_tail(path: Path, chars: int, stop_after_uuid: str | None = None) -> str:
    """The last `chars` characters of a session's user and assistant prose (up to a cut)."""
    text = session_prose(path, stop_after_uuid)[0]
    return text[-chars:] if chars else ""


def answer_distance(question: dict, prose: str, starts: dict[str, int]) -> int:
    """How far back from the cut a question's answer was last said: characters of prose from the latest place
    any of its answers appears to the end (else from its evidence entry; else the whole prose)."""
    lowered = prose.lower()
    found = max((lowered.rfind(a.lower()) for a in question["answers"]), default=-1)
    if found < 0:
        found = starts.get(question.get("evidence_uuid", ""), 0)
    return len(prose) - found


def evaluate_source(source: str, transcript: Path, gold: Path, config: dict, miner_factory) -> dict[str, Any]:
    restore_file = gold / "restore" / f"{source}.jsonl"
    questions = read_jsonl(restore_file, "restore") if restore_file.is_file() else []
    by_cut: dict[str, list[dict]] = defaultdict(list)
    for question in questions:
        by_cut[question["cut"]].append(question)
    budget = config_mod.budget_chars(config)
    restore: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="miner-eval-") as tmp:
        with Store(Path(tmp) / "eval.db") as store:
            miner = miner_factory(store)
            for cut in cut_order(transcript, list(by_cut) or ["end"]):
                miner.mine_file(transcript, stop_after_uuid=None if cut == "end" else cut)
                session = store.last_transcript_session(str(transcript.resolve()))
                if session is None or cut not in by_cut:
                    continue
                write_checkpoint(store, session.session_id, session.project, str(transcript.resolve()),
                                 stop_after_uuid=None if cut == "end" else cut)
                # A cut inside the session is a compaction there; `end` is the session resumed after it ended.
                situation = "resume" if cut == "end" else "compact"
                session_id = session.session_id
                block = build(store, session.project, config, situation=situation, session_id=session_id,
                              budget_chars=budget, log=False)
                no_void = build(store, session.project, config, situation=situation, session_id=session_id,
                                budget_chars=budget, log=False, void=False)
                # The naive baseline: the last characters of the session's prose, as many as our block has.
                prose, starts = session_prose(transcript, None if cut == "end" else cut)
                tail = prose[-len(block.text):]
                qs = by_cut[cut]
                far = [q for q in qs if answer_distance(q, prose, starts) > LONG_RANGE_CHARS]
                restore.append({"cut": cut, "questions": len(qs), "answered": answered(qs, block.text),
                                "answered_no_void": answered(qs, no_void.text), "tail_answered": answered(qs, tail),
                                "chars": len(block.text), "whole_session": int(len(prose) <= len(block.text)),
                                "long_questions": len(far),
                                "long_answered": answered(far, block.text), "long_tail_answered": answered(far, tail)})
            mined = mined_from_store(store)
            links = store.supersede_pairs()
    extraction_file = gold / "extraction" / f"{source}.jsonl"
    gold_units = read_jsonl(extraction_file, "extraction") if extraction_file.is_file() else []
    extraction = score_extraction(mined, gold_units)
    conflicts = score_links(links, memory_units(mined, gold_units), gold_units)
    return {"source": source, "extraction": extraction, "restore": restore, "mined": len(mined),
            "conflicts": conflicts}


def evaluate(gold: Path, transcripts: Path, config: dict, only: str = "") -> dict[str, Any]:
    from ..extract.nlp import load
    from ..runtime.mine import Miner

    pipeline = load(config["spacy_model"])
    sources = sorted({p.stem for p in (gold / "extraction").glob("*.jsonl")} | {p.stem for p in (gold / "restore").glob("*.jsonl")})
    results = []
    for source in sources:
        if only and only not in source:
            continue
        transcript = transcript_for(source, transcripts)
        if transcript is None:
            results.append({"source": source, "missing": True})
            continue
        results.append(evaluate_source(source, transcript, gold, config,
                                       lambda store: Miner(store, config, pipeline=pipeline)))
    totals = {"ignored": {}, "required": {}, "per_category": {c: {} for c in CATEGORIES}}
    conflicts: dict[str, int] = {}
    for result in results:
        if result.get("missing"):
            continue
        _merge(conflicts, result.get("conflicts", {}))
        extraction = result["extraction"]
        _merge(totals["ignored"], extraction["ignored"])
        _merge(totals["required"], extraction["required"])
        for cat in CATEGORIES:
            _merge(totals["per_category"][cat], extraction["per_category"][cat])
    return {
        "pipeline": pipeline.name,
        "sources": results,
        "extraction": {
            "ignored": prf(totals["ignored"]),
            "required": prf(totals["required"]),
            "per_category": {c: prf(v) for c, v in totals["per_category"].items()},
        },
        "restore": restore_totals([cut for r in results for cut in r.get("restore", [])]),
        "conflicts": link_prf(conflicts),
    }


def restore_totals(cuts: list[dict]) -> dict[str, Any]:
    """Restore hit rates summed over cuts: the block, the block without void marking, the tail at the same
    size; overall and for the long-range questions."""
    sums = Counter()
    for cut in cuts:
        sums.update({k: v for k, v in cut.items() if isinstance(v, int)})

    def rate(key: str, of: str = "questions") -> float:
        return round(sums[key] / sums[of], 3) if sums[of] else 0.0

    return {"questions": sums["questions"], "answered": sums["answered"], "tail_answered": sums["tail_answered"],
            "hit_rate": rate("answered"), "hit_rate_no_void": rate("answered_no_void"),
            "tail_hit_rate": rate("tail_answered"), "whole_session": sums["whole_session"],
            "long_questions": sums["long_questions"],
            "long_answered": sums["long_answered"], "long_hit_rate": rate("long_answered", "long_questions"),
            "long_tail_hit_rate": rate("long_tail_answered", "long_questions")}


def restore_lines(sources: list[dict], totals: dict[str, Any]) -> list[str]:
    """Restore per transcript against the tail at the same size, and the long-range questions apart.

    A transcript whose session, at every cut, had less prose than the block is marked: there the tail is the
    whole session (nothing was lost), and the block can at best tie it."""
    lines = [f"{'transcript':<58} {'block':>7} {'tail':>7} {'long-range':>11} {'tail':>7}"]
    for result in sources:
        if result.get("restore"):
            t = restore_totals(result["restore"])
            mark = " =" if t["whole_session"] == len(result["restore"]) else ""
            lines.append(f"{result['source'][:58]:<58} {t['answered']:>3}/{t['questions']:<3} "
                         f"{t['tail_answered']:>3}/{t['questions']:<3} {t['long_answered']:>5}/{t['long_questions']:<5} "
                         f"{t['long_tail_hit_rate']:>7.3f}{mark}")
    lines.append(f"{'ALL, hit rate':<58} {totals['hit_rate']:>7.3f} {totals['tail_hit_rate']:>7.3f} "
                 f"{totals['long_hit_rate']:>11.3f} {totals['long_tail_hit_rate']:>7.3f}")
    lines.append(f"(long-range: the answer was last said more than {LONG_RANGE_CHARS:,} characters of prose before the "
                 f"cut; {totals['long_questions']} of {totals['questions']} questions)")
    if any(line.endswith(" =") for line in lines):
        lines.append("(=: at every cut the session had less prose than the block, so the tail is the whole session)")
    return lines


def format_report(report: dict[str, Any]) -> str:
    lines = [f"pipeline: {report['pipeline']}", "", "Extraction (per transcript, categories ignored / required)"]
    lines.append(f"{'source':<58} {'P':>6} {'R':>6} {'F1':>6}   {'P':>6} {'R':>6} {'F1':>6}")
    for result in report["sources"]:
        if result.get("missing"):
            lines.append(f"{result['source']:<58} transcript missing")
            continue
        ig, rq = prf(result["extraction"]["ignored"]), prf(result["extraction"]["required"])
        lines.append(f"{result['source'][:58]:<58} {ig['precision']:>6.3f} {ig['recall']:>6.3f} {ig['f1']:>6.3f}   "
                     f"{rq['precision']:>6.3f} {rq['recall']:>6.3f} {rq['f1']:>6.3f}")
    ig, rq = report["extraction"]["ignored"], report["extraction"]["required"]
    lines.append(f"{'ALL':<58} {ig['precision']:>6.3f} {ig['recall']:>6.3f} {ig['f1']:>6.3f}   "
                 f"{rq['precision']:>6.3f} {rq['recall']:>6.3f} {rq['f1']:>6.3f}")
    lines += ["", "Per category (categories required)", f"{'category':<12} {'P':>6} {'R':>6} {'F1':>6} {'mined':>6} {'gold':>6}"]
    for cat, v in report["extraction"]["per_category"].items():
        lines.append(f"{cat:<12} {v['precision']:>6.3f} {v['recall']:>6.3f} {v['f1']:>6.3f} "
                     f"{v.get('tp', 0) + v.get('fp', 0):>6} {v.get('gold', 0):>6}")
    lines += ["", "Restore (questions answered by the recall block; void marking off; the session's prose tail "
                  "at the same size)", f"{'source':<48} {'cut':<28} {'block':>7} {'no void':>7} {'tail':>7} {'chars':>6}"]
    for result in report["sources"]:
        for cut in result.get("restore", []):
            kind = "end (resumed)" if cut["cut"] == "end" else f"cut {cut['cut'][:8]} (compaction)"
            n = cut["questions"]
            lines.append(f"{result['source'][:48]:<48} {kind:<28} {cut['answered']:>3}/{n:<3} "
                         f"{cut['answered_no_void']:>3}/{n:<3} {cut['tail_answered']:>3}/{n:<3} {cut['chars']:>6}")
    r = report["restore"]
    lines.append(f"{'ALL (' + str(r['questions']) + ' questions), hit rate':<77} {r['hit_rate']:>7.3f} "
                 f"{r['hit_rate_no_void']:>7.3f} {r['tail_hit_rate']:>7.3f}")
    lines += ["", "Restore per transcript (the block against the tail at the same size; long-range questions apart)"]
    lines += restore_lines(report["sources"], r)
    if "conflicts" in report:
        lines += ["", "Conflicts (supersede links against the gold's `supersedes`)",
                  f"{'source':<58} {'links':>6} {'right':>6} {'gold':>6} {'found':>6} {'both mined':>10}"]
        for result in report["sources"]:
            if result.get("conflicts"):
                c = link_prf(result["conflicts"])
                lines.append(f"{result['source'][:58]:<58} {c['predicted']:>6} {c['tp']:>6} {c['gold']:>6} "
                             f"{c['found']:>6} {c['reachable']:>10}")
        c = report["conflicts"]
        lines.append(f"{'ALL':<58} {c['predicted']:>6} {c['tp']:>6} {c['gold']:>6} {c['found']:>6} {c['reachable']:>10}")
        lines.append(f"precision {c['precision']:.3f}   recall {c['recall']:.3f}   "
                     f"recall where both units were mined {c['recall_reachable']:.3f}")
    return "\n".join(lines)
