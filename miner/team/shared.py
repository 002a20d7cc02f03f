"""What team sync's push and pull agree on: which memories may be shared, and when one has changed here."""

from __future__ import annotations

from ..memory.records import StoredMemory
from ..memory.store import Store
from ..textutil import content_hash

SHARED_CATEGORIES = ("decision", "fact", "todo")
# What a sighting says on the server: never its words. One text for every sighting also makes a sighting one row
# per entry, however the memory was worded when it went up.
EVIDENCE_TEXT = "(said; the words stay on the member's machine)"
VETOES = ("forgotten", "quarantined")  # a local state a pull never undoes


def signature(memory: StoredMemory) -> str:
    """What a memory was when last in step with the team: a change to any part makes it pending."""
    return f"{memory.state}|{content_hash(memory.text)}|{memory.evidence_count}|{memory.category}"


def shareable(memory: StoredMemory, shared: set[int]) -> bool:
    """May this memory reach the team at all (before the secret check)?"""
    if memory.scope != "project" or memory.state == "quarantined":
        return False
    return memory.category in SHARED_CATEGORIES or memory.id in shared


def follows_team(memory: StoredMemory, shared: set[int]) -> bool:
    """Whether the team's changes apply to this local memory: one that may go to the team, or a copy the team gave
    (a preference a member shared comes as such, and so do its forget and its corrections)."""
    return shareable(memory, shared) or (memory.source == "team" and memory.scope == "project"
                                         and memory.state != "quarantined")


def goes_up(memory: StoredMemory, known: str | None) -> bool:
    """Whether a memory has a change the team has not seen that this machine sends: `known` is its signature when
    last in step. One forgotten (or held) here, when the team knew it so or never knew it, sends nothing, ever (said
    again since, it stays as it is)."""
    if memory.state in VETOES and (known is None or known.split("|", 1)[0] in VETOES):
        return False
    return known is None or known != signature(memory)


def pending(store: Store, team: str, project: str) -> list[StoredMemory]:
    """The project's local memories whose change the team has not seen, oldest first."""
    mapped = store.team_map(team)
    shared = store.team_shared()
    out = []
    for memory in store.project_memories(project):
        if not shareable(memory, shared):
            continue
        known = mapped.get(memory.id)
        if goes_up(memory, known[1] if known else None):
            out.append(memory)
    out.sort(key=lambda m: (m.first_seen, m.id))
    return out
