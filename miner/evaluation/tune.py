"""Rule tuning: show what the rules and refinement did to each unit, and score each rule against gold."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..extract.clean import turns_to_units
from ..extract.model import Candidate, Turn, Unit
from ..extract.secret_turns import Conversation
from ..extract.transcript import Watermark, read_transcript
from ..runtime.mine import Miner, unit_langs
from .transcripts import read_jsonl, texts_match, transcript_for


@dataclass
class Traced:
    unit: Unit
    langs: tuple[str, ...]
    rules: list[str]
    outcome: str
    candidate: Candidate | None
    scores: dict[str, float] | None = None  # the classifier's probabilities (None without a classifier)
    steps: tuple[str, ...] = ()  # the refinement steps it went through, in order (none when no rule kept it)


def trace_turns(miner: Miner, turns: list[Turn], project: str = "", secrets: tuple | None = None) -> list[Traced]:
    """Every unit of `turns` with the rules that fired, the classifier's probabilities and what refinement did.

    The turns are redacted first, as mining redacts them (`secrets`: the salt and digests of what a store learnt,
    the miner's store's by default): a trace shows what mining sees, and prints no password."""
    traced: list[Traced] = []
    salt, digests = secrets if secrets is not None else miner.store.secret_digests()
    turns = Conversation(salt, digests).redact_turns(turns)

    def record(unit: Unit, hits: list, outcome: str, candidate: Candidate | None, steps: tuple[str, ...]) -> None:
        traced.append(Traced(unit, unit_langs(unit.text), [h.rule.id for h in hits], outcome, candidate,
                             steps=steps))

    units = turns_to_units(turns)
    scores: list = []
    miner.extract(units, lambda turn: project, trace=record, scores_out=scores)
    for item, score in zip(traced, scores):
        item.scores = score
    return traced


def text_turn(text: str, role: str) -> Turn:
    return Turn(uuid="text", session_id="", role=role, text=text, ts="", cwd="", git_branch="", is_sidechain=False,
                transcript="")


def transcript_turns(path: str) -> list[Turn]:
    return read_transcript(path, Watermark(), seen=set()).turns


@dataclass
class RuleScore:
    hits: int = 0
    correct: int = 0
    neutral: int = 0
    only_it: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        scored = self.hits - self.neutral
        return self.correct / scored if scored else None


def rule_stats(miner: Miner, gold: Path, transcripts: Path) -> dict[str, RuleScore]:
    """Per rule: kept hits, precision against the gold, and gold units only it finds."""
    scores: dict[str, RuleScore] = defaultdict(RuleScore)
    for extraction in sorted((gold / "extraction").glob("*.jsonl")):
        transcript = transcript_for(extraction.stem, transcripts)
        if transcript is None:
            continue
        by_uuid: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for unit in read_jsonl(extraction, "extraction"):
            by_uuid[unit["uuid"]].append(unit)
        finders: dict[tuple[str, int], set[str]] = defaultdict(set)
        texts: dict[tuple[str, int], str] = {}
        for traced in trace_turns(miner, transcript_turns(str(transcript))):
            if traced.candidate is None:
                continue
            matches = [u for u in by_uuid.get(traced.unit.turn.uuid, []) if texts_match(traced.candidate.text, u["text"])]
            scored = [u for u in matches if not u.get("tentative") and not u.get("doc")]
            for rule_id in traced.rules:
                score = scores[rule_id]
                score.hits += 1
                if scored:
                    score.correct += 1
                elif matches:
                    score.neutral += 1
            for unit in scored:
                key = (extraction.stem, unit["unit"])
                finders[key].update(traced.rules)
                texts[key] = unit["text"]
        for key, rule_ids in finders.items():
            if len(rule_ids) == 1:
                scores[next(iter(rule_ids))].only_it.append(texts[key])
    return dict(scores)
