"""Void marking (Void Memory's second stage), standard library only: it runs in the hook.

Candidates are clustered by keyword Jaccard. The clusters above the largest
score gap are protected; the lowest-scoring clusters are voided until about
30% of candidates are void, so that a block is not filled with a long tail of
weakly relevant memories on one topic. Hubs, memories recalled far more
often than the rest, are damped first so they cannot take every block.
Voiding only leaves a memory out of this block; nothing is deleted.
"""

from __future__ import annotations

from collections import Counter

TYPE_CHECKING = False  # typing costs import time: SessionStart imports this module when it renders
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Scored(Protocol):
        score: float
        parts: dict[str, float]

        @property
        def memory(self) -> Any: ...


class Zone:
    """A cluster of candidates, and whether (and why) it was voided (a plain class: no dataclass on the
    hook path)."""

    __slots__ = ("ids", "topic", "score", "voided", "protected", "reason", "items")

    def __init__(self, ids: list[int], topic: list[str], score: float, voided: bool = False,
                 protected: bool = False, reason: str = "", items: list[Any] | None = None):
        self.ids, self.topic, self.score = ids, topic, score
        self.voided, self.protected, self.reason = voided, protected, reason
        self.items = [] if items is None else items

    def _fields(self) -> tuple:
        return self.ids, self.topic, self.score, self.voided, self.protected, self.reason, self.items

    def __repr__(self) -> str:
        return (f"Zone(ids={self.ids!r}, topic={self.topic!r}, score={self.score!r}, voided={self.voided!r}, "
                f"protected={self.protected!r}, reason={self.reason!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # mutable, as a dataclass's

    def as_dict(self) -> dict[str, Any]:
        return {"ids": self.ids, "topic": self.topic, "score": round(self.score, 4), "voided": self.voided,
                "protected": self.protected, "reason": self.reason}


def keyword_set(memory: Any) -> frozenset[str]:
    return frozenset(memory.keywords.split())


def suppress_hubs(items: list[Scored], factor: float = 0.5, ratio: float = 3.0, floor: int = 5) -> list[int]:
    """Damp memories recalled far more often than the rest; returns their ids."""
    counts = [i.memory.recall_count for i in items]
    if len(counts) < 3:
        return []
    ordered = sorted(counts)
    typical = ordered[len(ordered) // 2]  # the median, without importing `statistics` on the hook's path
    limit = max(floor, ratio * max(typical, 1))
    hubs = []
    for item in items:
        if item.memory.recall_count > limit:
            item.score *= factor
            item.parts["hub_damping"] = factor
            hubs.append(item.memory.id)
    return hubs


def cluster(items: list[Scored], threshold: float) -> list[Zone]:
    """Greedy clustering, best items first: an item joins the first zone whose seed it resembles.

    Keyword sets are bit masks over the candidates' words: comparing an item with a seed is one AND
    and a bit count, however many words they have or how common those are.
    """
    zones: list[Zone] = []
    seeds: list[tuple[int, int]] = []  # each zone's seed: the mask of its words, and how many
    bit: dict[str, int] = {}
    for item in sorted(items, key=lambda i: -i.score):
        words = keyword_set(item.memory)
        mask = 0
        for word in words:
            mask |= 1 << bit.setdefault(word, len(bit))
        size = len(words)
        target = None
        for zone, (seed, seed_size) in enumerate(seeds):
            common = (mask & seed).bit_count()
            if common and common >= threshold * (size + seed_size - common):  # Jaccard ≥ threshold
                target = zone
                break
        if target is None:
            target = len(zones)
            zones.append(Zone(ids=[], topic=[], score=item.score))
            seeds.append((mask, size))
        zones[target].items.append(item)
        zones[target].ids.append(item.memory.id)
    for zone in zones:
        if len(zone.items) == 1:  # the same as counting: every word once, in order
            zone.topic = [w for w in dict.fromkeys(zone.items[0].memory.keywords.split()) if not w.isdigit()][:3]
            continue
        counts = Counter(w for i in zone.items for w in i.memory.keywords.split() if not w.isdigit())
        zone.topic = [w for w, _ in counts.most_common(3)]
    return zones


def void_mark(items: list[Scored], config: dict[str, Any], protected_ids: set[int] = frozenset()) -> list[Zone]:
    """Mark zones void until about `void_share` of the candidates are; returns every zone."""
    share = float(config["void_share"])
    zones = cluster(items, float(config["void_jaccard"]))
    if len(items) < int(config["void_min_candidates"]):
        share = 0.0  # a handful of memories is no crowd: void nothing
    zones.sort(key=lambda z: -z.score)
    if not zones:
        return zones
    # Protect everything above the largest drop between consecutive zone scores (in the upper half).
    head = max(1, (len(zones) + 1) // 2)
    gaps = [(zones[i].score - zones[i + 1].score, i) for i in range(min(head, len(zones) - 1))]
    cut = max(gaps)[1] + 1 if gaps else 1
    for zone in zones[:cut]:
        zone.protected = True
        zone.reason = "above the score gap"
    for zone in zones:
        if not zone.protected and (protected_ids & set(zone.ids) or any(i.memory.pinned for i in zone.items)):
            zone.protected = True
            zone.reason = "holds a pinned or current-session memory"
    target = int(round(share * len(items)))
    voided = 0
    for zone in reversed(zones):
        if voided >= target:
            break
        if zone.protected or voided + len(zone.ids) > target + max(1, target // 4):
            continue
        zone.voided = True
        zone.reason = f"low score {zone.score:.3f} below the gap"
        voided += len(zone.ids)
    return zones
