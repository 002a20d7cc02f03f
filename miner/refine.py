"""Refinement after the rules: drop what is not a memory, mark what is hedged, make units self-contained.

Runs on candidate units only (those a rule matched). Each step is a small
function so that it can be tested and explained on its own; `refine`
applies them in order and says which step dropped a unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Candidate, Unit
from .rules import Hit
from .textutil import keywords, letter_ratio

MIN_CHARS = 20
MIN_LETTER_RATIO = 0.30
MAX_MERGED_CHARS = 400

_QUESTION_END_RE = re.compile(r"[?？][\s)\"'”」*_`]*$")
_QUESTION_START_RE = re.compile(
    r"^(?:what|why|how|when|where|which|who|whose|can you|could you|would you|will you|should (?:we|i)|shall we|"
    r"do you|does|did you|is there|are there|is it|are you|any (?:idea|thoughts))\b",
    re.IGNORECASE,
)
_GREETING_RE = re.compile(
    r"^(?:hi|hello|hey|thanks?|thank you|thx|great|perfect|awesome|nice|excellent|cool|ok(?:ay)?|sure|"
    r"got it|sounds good|lgtm|good (?:job|work)|well done|谢谢|謝謝|好的|你好|太好了|完美)\b[\s!.,，。！~]*"
    r"(?:(?:it|that|this) (?:works|worked|looks good)|thanks?|thank you|[!.])*[\s!.。！]*$",
    re.IGNORECASE,
)
_NARRATION_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|now|first|next|then|great|perfect|good|alright|all right)[,!.]?\s+)*"
    r"(?:let me|let's (?:check|look|see|start|run|test|verify|read|try|examine|explore|update|fix|create|review|first)|"
    r"i'll (?:now |first |also |then |quickly )?(?:check|look|read|start|run|update|create|add|fix|examine|test|verify|"
    r"search|review|implement|write|explore|investigate|try|open|inspect|analy[sz]e|build|make|set up|begin|continue|"
    r"proceed|use the|launch|modify|edit|refactor|remove|install|commit|push|deploy|go)|"
    r"i'm going to|i am going to|i will now|i need to (?:check|look|read|see|find|update|fix|verify)|"
    r"(?:checking|looking|reading|running|searching|investigating|exploring|examining|updating|writing|creating|"
    r"fixing|testing|verifying|adding|installing|building|starting)\b|"
    r"让我|讓我|我来|我來|现在我|現在我|接下来我|接下來我|我先|首先我|我将|我將)",
    re.IGNORECASE,
)
_RECAP_RE = re.compile(
    r"^(?:(?:great|perfect|excellent|done|good|all set|ok(?:ay)?|now)[,!.]?\s+)*"
    r"(?:i(?:'ve| have) (?:now |also |successfully |just )?(?:created|updated|added|fixed|implemented|made|changed|"
    r"written|wrote|built|completed|finished|removed|refactored|modified|set up|moved|renamed|installed|committed|"
    r"pushed|deployed|tested|verified|run|ran|replaced|converted)|"
    r"(?:successfully|all (?:tests|checks) (?:pass|passed))|"
    r"(?:the )?(?:changes|fix|update|implementation) (?:has|have) been|"
    r"(?:summary|here's what (?:i|we) did|what (?:i|we) did)\b|"
    r"我已经|我已經|已完成|完成了)",
    re.IGNORECASE,
)
_HEDGE_RE = re.compile(
    r"\b(?:maybe|might|perhaps|probably|possibly|i think|i guess|i suppose|not sure|could be|may be|i believe|"
    r"seems? (?:to|like)|likely|unclear|hypothesis|suspect)\b|可能|也许|也許|大概|或许|或許|好像|似乎",
    re.IGNORECASE,
)
_DANGLING_RE = re.compile(r"^(?:this|that|it|these|those|they|它|这|這|那)(?:\b|(?=[\u4e00-\u9fff]))", re.IGNORECASE)
_LEAD_MARKUP_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")


@dataclass(frozen=True)
class Verdict:
    candidate: Candidate | None
    dropped_by: str = ""


def is_question(text: str) -> bool:
    stripped = text.strip()
    return bool(_QUESTION_END_RE.search(stripped)) or (
        bool(_QUESTION_START_RE.match(stripped)) and not stripped.endswith((".", "。", "!"))
    )


def is_greeting(text: str) -> bool:
    return bool(_GREETING_RE.match(text.strip()))


def is_narration(text: str) -> bool:
    return bool(_NARRATION_RE.match(display_text(text)))


def is_recap(text: str) -> bool:
    return bool(_RECAP_RE.match(display_text(text)))


def passes_quality_gate(text: str) -> bool:
    """Void Memory's gate: at least 20 characters and 30% letters (CJK counts as letters)."""
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    long_enough = len(text) >= MIN_CHARS or (cjk >= 6 and len(text) >= 8)
    return long_enough and letter_ratio(text) >= MIN_LETTER_RATIO


def is_hedged(text: str) -> bool:
    return bool(_HEDGE_RE.search(text))


def display_text(text: str) -> str:
    """The unit as a memory: list markers, heading hashes, bold markers and dangling brackets removed."""
    text = _LEAD_MARKUP_RE.sub("", text.strip())
    text = _BOLD_RE.sub(lambda m: m.group(1) or m.group(2), text).strip()
    # Sentence splitting can leave a bracket that opens or closes in the neighbouring unit.
    if text.endswith("(") or (text.endswith(")") and text.count(")") > text.count("(")):
        text = text[:-1].rstrip()
    return text


def make_self_contained(unit: Unit) -> str | None:
    """The unit's text, with the unit before it when it opens with a dangling "this/that/it".

    None when it needs context that is not there (or that would make it too long).
    """
    text = display_text(unit.text)
    if not _DANGLING_RE.match(text):
        return text
    previous = display_text(unit.previous)
    if not previous or len(previous) + len(text) + 1 > MAX_MERGED_CHARS or previous.endswith(("?", "？")):
        return None
    return f"{previous} {text}"


def refine(unit: Unit, hit: Hit) -> Verdict:
    """Apply every refinement step to a unit a rule matched."""
    text = unit.text
    if is_question(text):
        return Verdict(None, "question")
    if is_greeting(text):
        return Verdict(None, "greeting")
    if unit.turn.role == "assistant" and is_narration(text):
        return Verdict(None, "narration")
    if unit.turn.role == "assistant" and is_recap(text):
        return Verdict(None, "recap")
    merged = make_self_contained(unit)
    if merged is None:
        return Verdict(None, "not-self-contained")
    if not passes_quality_gate(merged):
        return Verdict(None, "quality-gate")
    tentative = hit.rule.tentative or is_hedged(merged)
    candidate = Candidate(
        unit=unit,
        category=hit.rule.category,
        rule_id=hit.rule.id,
        confidence=hit.rule.confidence * (0.7 if tentative else 1.0),
        text=merged,
        tentative=tentative,
        scope=hit.rule.scope,
        subject=hit.subject.lower(),
        value=hit.value,
        keywords=tuple(keywords(merged)),
    )
    return Verdict(candidate)
