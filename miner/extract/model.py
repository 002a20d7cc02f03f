"""Internal records passed between pipeline stages (frozen; validated at the edges)."""

from __future__ import annotations

from dataclasses import dataclass, field

CATEGORIES = ("decision", "preference", "fact", "todo")
ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Turn:
    """The prose of one transcript entry, with its provenance."""

    uuid: str
    session_id: str
    role: str
    text: str
    ts: str
    cwd: str
    git_branch: str
    is_sidechain: bool
    transcript: str


@dataclass(frozen=True)
class Unit:
    """A sentence or list item of cleaned prose."""

    turn: Turn
    index: int
    text: str
    previous: str = ""


@dataclass(frozen=True)
class Candidate:
    """A unit that a rule matched, after refinement: a memory ready to store."""

    unit: Unit
    category: str
    rule_id: str
    confidence: float
    text: str
    tentative: bool = False
    scope: str = "project"
    subject: str = ""
    value: str = ""
    keywords: tuple[str, ...] = field(default_factory=tuple)
