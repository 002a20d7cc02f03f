"""Decay and cold storage: memories nobody needs any more leave recall, but are never deleted.

A memory's heat is its importance (type weight × confidence) × a recency decay
(half-life from the config, longer for standing kinds such as preferences, counted
from when it was last said or recalled to when its project was last worked in:
a project left alone for months keeps what it knew) × its use (recalls). Below
`cold_threshold` it goes cold: out of recall, still found by `miner search --all`.
Pinned memories never go cold.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from .records import StoredMemory, parse_ts
from .store import Store


@dataclass(frozen=True)
class Heat:
    memory: StoredMemory
    heat: float
    age_days: float


def heat(memory: StoredMemory, config: dict[str, Any], now: float | None = None) -> Heat:
    now = time.time() if now is None else now
    last = max(parse_ts(memory.last_seen) or 0.0, parse_ts(memory.last_recalled or "") or 0.0)
    age_days = max(0.0, (now - last) / 86400) if last else 0.0
    importance = config["type_weights"].get(memory.category, 0.5) * memory.confidence
    scale = float(config["category_half_life_scale"].get(memory.category, 1.0))
    decay = 0.5 ** (age_days / (float(config["half_life_days"]) * scale))
    use = 1.0 + math.log2(1 + memory.recall_count)
    return Heat(memory, importance * decay * use, age_days)


def project_clocks(store: Store, now: float | None = None) -> dict[str, float]:
    """When each project was last worked in (its latest session or memory), never later than `now`: a memory ages
    while its project is used, not while the project lies idle."""
    now = time.time() if now is None else now
    clocks: dict[str, float] = {}
    for project, last in store.db.execute("SELECT project, MAX(last_seen) FROM memories GROUP BY project UNION ALL "
                                          "SELECT project, MAX(last_ts) FROM sessions GROUP BY project"):
        clocks[project] = min(now, max(clocks.get(project, 0.0), parse_ts(last or "") or 0.0))
    return clocks


def _heat_now(memory: StoredMemory, config: dict[str, Any], clocks: dict[str, float], now: float | None) -> Heat:
    """`heat` at its project's clock (a memory of every project: at `now`)."""
    return heat(memory, config, now if memory.scope == "global" else clocks.get(memory.project, now))


def cold_candidates(store: Store, config: dict[str, Any], project: str | None = None,
                    now: float | None = None) -> list[Heat]:
    """Active, unpinned memories whose heat is below the threshold, coldest first."""
    threshold = float(config["cold_threshold"])
    memories = store.unpinned_active(project)
    clocks = project_clocks(store, now)
    cold = [h for h in (_heat_now(m, config, clocks, now) for m in memories) if h.heat < threshold]
    return sorted(cold, key=lambda h: h.heat)


def go_cold(store: Store, heats: list[Heat], config: dict[str, Any], now: float | None = None) -> list[Heat]:
    """Move the memories of `heats` to cold storage, each weighed again inside the write: one pinned, forgotten,
    superseded or seen again since it was chosen (by a hook or a command meanwhile) stays as it is. Returns those
    moved."""
    threshold = float(config["cold_threshold"])
    moved = []
    with store.atomic():
        current = {memory.id: memory for memory in store.unpinned_active(None)}
        clocks = project_clocks(store, now)
        for item in heats:
            memory = current.get(item.memory.id)
            again = _heat_now(memory, config, clocks, now) if memory is not None else None
            if again is not None and again.heat < threshold:
                store.set_state(memory.id, "cold", f"heat {again.heat:.3f} below threshold")
                moved.append(again)
    return moved
