"""Ranking for the recall block: which memories are candidates and how each scores (standard library only).

`block` builds the block from what this module decides, in its stages: `rank` scores the candidates
(every change to a score happens there, each recorded in the item's `parts`, the breakdown
`miner recall --explain` shows), `shortlist` keeps those that can make it into a block and
void-marks weak clusters (`void`), and `block.fit` packs them into the budget, in the order
`by_novelty` gives for a new session.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter

from ..memory.records import MemoryHead, StoredMemory, parse_ts
from ..memory.store import Store
from ..runtime.exclusions import excluded_elsewhere
from ..textutil import echoes, folded
from .history import history_ids
from .void import Zone, suppress_hubs, void_mark

TYPE_CHECKING = False  # typing costs import time: SessionStart imports this module when it renders
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

# Guards for histories the dev data does not hold, fixed rather than settings (turning them off moved no
# cross-validated answer; tests/test_multi.py shows what they prevent):
# - a first claim on a new session's budget, by category: the standing rules and open todos of a long history
#   are not crowded out by its latest details (40 busy sessions after the rule);
# - a session's items beyond its fair share of the block score × SESSION_DECAY once per better sibling: one
#   very long session does not fill the block.
STANDING_SHARES = {"preference": 0.2, "todo": 0.1}
SESSION_DECAY = 0.9
SESSION_FREE = 20
CURRENT_SESSION_BOOST = 10.0  # the current session's own decisions and todos come first


class Item:
    """A candidate memory, its score and the score's breakdown (`parts`).

    A plain class (no dataclass): SessionStart imports this module when it renders a block.
    """

    __slots__ = ("memory", "score", "parts")

    def __init__(self, memory: StoredMemory, score: float, parts: dict[str, float] | None = None):
        self.memory = memory
        self.score = score
        self.parts = {} if parts is None else parts

    def __repr__(self) -> str:
        return f"Item(memory=#{self.memory.id}, score={self.score!r}, parts={self.parts!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.memory, self.score, self.parts) == (other.memory, other.score, other.parts)

    __hash__ = None  # mutable, as a dataclass's

    def scale(self, part: str, factor: float) -> None:
        """Multiply the score by `factor`, kept in the breakdown as `part`."""
        self.score *= factor
        self.parts[part] = factor


def by_score(items: list[Item]) -> list[Item]:
    """Best first (the newer memory first on a tie)."""
    return sorted(items, key=lambda i: (-i.score, -i.memory.id))


def score_items(memories: list[StoredMemory], relevance: dict[int, float], config: dict[str, Any],
                half_life_s: float | None = None, weights: dict[str, float] | None = None,
                typed: bool = True, recall_stage: bool = True) -> list[Item]:
    """Score = (relevance·w + type·w + recency·w) × confidence, plus a pinned boost.

    Recency halves every `half_life_s` of the project's time (`half_life_days` by default). `typed`: the
    type part follows `type_weights`; without it every category weighs the same (a new session: which
    category matters more did not move what it needed, measured leave-one-project-out).
    """
    weights = weights or config["weights"]
    type_weights = config["type_weights"]
    half_life = half_life_s or float(config["half_life_days"]) * 86400
    role_weights = config["role_weights"]
    stamps = [parse_ts(m.last_seen) or 0.0 for m in memories]
    # Recency is relative to the project's latest activity, so an idle project keeps its memory.
    reference = max(stamps, default=0.0)
    w_relevance, w_type, w_recency = weights["relevance"], weights["type"], weights["recency"]
    pinned_boost = float(config["pinned_boost"])
    items = []
    for memory, stamp in zip(memories, stamps):  # hundreds of candidates: the loop is kept lean
        recency = 0.5 ** (max(0.0, reference - stamp) / half_life) if stamp else 0.0
        count = memory.recall_count
        stage = (1.2 if count >= 3 else 1.1 if count >= 1 else 1.0) if recall_stage else 1.0
        # The user's own words outrank the assistant's (which a new session can often rediscover).
        multiplier = (0.75 + 0.25 * memory.confidence) * stage * role_weights.get(memory.role, 1.0)
        by_relevance = relevance.get(memory.id, 0.0) * w_relevance
        by_type = (type_weights.get(memory.category, 0.5) if typed else 1.0) * w_type
        by_recency = recency * w_recency
        score = (by_relevance + by_type + by_recency) * multiplier
        parts = {"relevance": by_relevance, "type": by_type, "recency": by_recency,
                 "confidence_multiplier": multiplier}
        if memory.pinned:
            parts["pinned"] = pinned_boost
            score += pinned_boost
        items.append(Item(memory, score, parts))
    return by_score(items)


def relevance_scores(store: Store, project: str, query: str, best_first: bool = False) -> tuple[dict[int, float], list[int]]:
    """Normalised BM25 relevance (0..1) of the project's memories to `query`, and the matched ids."""
    if not query.strip():
        return {}, []
    raw = store.relevant(query, project, best_first=best_first)
    if not raw:
        return {}, []
    best = max(raw.values()) or 1.0
    return {i: max(0.0, r) / best for i, r in raw.items()}, list(raw)


NEIGHBOUR_SOURCES = 10  # the best matches whose neighbours a question also weighs (a cost bound)


def with_neighbours(store: Store, project: str, relevance: dict[int, float], window: int,
                    weight: float) -> dict[int, float]:
    """`relevance` with what was said around the best matches: a memory `d` steps from a match, in the match's
    own session, is at least as relevant as its own match plus `weight` × 0.5^(d-1) × the match's relevance.

    A question names its topic; the answer is often the memory said next to the one that names it (the
    reply to a question, the reason after a decision).
    """
    best = sorted(relevance.items(), key=lambda kv: -kv[1])[:NEIGHBOUR_SOURCES]
    out = dict(relevance)
    for source, near in store.neighbours([i for i, _ in best], project, window).items():
        value = relevance[source]
        for other, step in near:
            out[other] = max(out.get(other, 0.0), relevance.get(other, 0.0) + weight * value * 0.5 ** (step - 1))
    return out


# Text that leans on the moment it was said in ("line 39", "like this", "the selected block", "as above"):
# a new session cannot resolve it.
_DEICTIC_RE = re.compile(r"(?i)\b(?:lines?|lime) \d|\b(?:the|this) (?:selected|highlighted|attached|screenshot|following)\b"
                         r"|\blike this\b|\b(?:see|as) (?:above|below)\b")
_DEICTIC_LAST = frozenset("this that these those it here above below".split())
_DEICTIC_CJK = ("这个", "那个", "上面", "下面", "如下", "以下", "这里")
_CJK_LINE_RE = re.compile(r"第\s*\d+\s*行")


def context_bound(text: str) -> bool:
    """True when a memory points at its own session's context (a line number, "this", "above")."""
    words = text.rstrip(" .!?:。！？：").rsplit(None, 1)
    if words and words[-1].lower() in _DEICTIC_LAST:
        return True
    if not text.isascii() and (any(m in text for m in _DEICTIC_CJK) or _CJK_LINE_RE.search(text)):
        return True
    return bool(_DEICTIC_RE.search(text))


def standing(items: list[Item], config: dict[str, Any], include_tentative: bool = False) -> None:
    """What a new session needs, whichever session it came from: multiply each score by how much it stands.

    - bound to its moment ("line 39", "like this"): a new session cannot use it;
    - unconfirmed (tentative) memories count as set in the settings, and are shown marked as such.
    """
    tentative = float(config["startup_tentative"])
    bound = float(config["startup_context_bound"])
    for item in items:
        memory = item.memory
        factor = 1.0
        if memory.tentative and not include_tentative:
            factor *= tentative
        if bound != 1.0 and context_bound(memory.text):
            factor *= bound
            item.parts["context_bound"] = bound
        if factor != 1.0:
            item.scale("standing", factor)


def diversify(items: list[Item], decay: float, free: int = 0,
              group: Callable[[StoredMemory], str] = lambda memory: memory.entry_uuid or f"#{memory.id}",
              part: str = "entry_diversity") -> list[Item]:
    """Best first again, after each item beyond the first `free` of its group (a transcript entry, by default)
    was scored × `decay` once for every better item of the group past those.

    One long answer (a table, a list of options) cannot fill a new session's block. (Each group's scores only fall down its list, so this is the
    order a greedy pick, rescoring after each item it takes, would give.)
    """
    if not items or decay >= 1.0:
        return items
    seen: dict[str, int] = {}
    for item in by_score(items):
        key = group(item.memory)
        better = seen.get(key, 0)
        seen[key] = better + 1
        if better >= free:
            item.scale(part, decay ** (better - free + 1))
    return by_score(items)


def spread(items: list[Item], config: dict[str, Any], budget_chars: int) -> list[Item]:
    """A new session's candidates with their top spread over the transcript entries and the sessions.

    Only the top can make it into a block; the tail is left in order. A session pays for its items beyond
    its fair share of the block (or SESSION_FREE, if more).
    """
    if not items:
        return items
    top = items[: 2 * int(config["startup_max_candidates"])]
    top = diversify(top, float(config["startup_entry_decay"]), int(config["startup_entry_free"]))
    fits = budget_chars / (sum(len(i.memory.text) + 20 for i in top) / len(top))
    fair = math.ceil(fits / len({i.memory.session_id for i in top}))
    return diversify(top, SESSION_DECAY, max(SESSION_FREE, fair), group=lambda memory: memory.session_id,
                     part="session_diversity") + items[len(top):]


def rank(store: Store, project: str, config: dict[str, Any], query: str, current_ids: set[int] = frozenset(),
         include_tentative: bool = False, half_life_s: float | None = None, asked: bool = False,
         startup: bool = False, budget_chars: int | None = None, also: Iterable[int] = ()) -> list[Item]:
    """Stage one: the candidates, scored and sorted (best first).

    Scores are set here and nowhere else, in this order: the base score (`score_items`); for a new session,
    how much each memory stands (`standing`); the boost of the current session's own memories (`current_ids`,
    the ids its checkpoint lists); hub damping, except for a new session; last, for a new session, the spread
    of the top over entries and sessions within `budget_chars` (`spread`).

    `asked`: the query is a question someone asked (`miner recall QUERY`), not a situation,
    so relevance leads and the FTS5 ranking is exact rather than bounded; its items past `max_candidates`,
    which no block can draw from, carry a `MemoryHead` rather than the whole memory.
    `startup`: a new session, which needs what stands across the whole history more than
    what the last session was about (see `standing`); its top is spread within `budget_chars`, the
    block's budget, which a new session's ranking therefore needs.
    `also`: ids of active memories that are candidates whatever their age (after a compaction, the
    session's own: the freshest of each category can all be newer than what it said first).
    """
    if startup and budget_chars is None:
        raise ValueError("a new session's ranking needs the block's budget_chars")
    # A question ranks hundreds of candidates by what it needs of them (`MemoryHead`) and reads the whole
    # records of those that can make it into a block only (see `hydrate`); the situations read them whole.
    record = MemoryHead if asked else StoredMemory
    relevance, matched = relevance_scores(store, project, query, best_first=asked)
    if asked and relevance and int(config["query_neighbours"]) > 0:
        relevance = with_neighbours(store, project, relevance, int(config["query_neighbours"]),
                                    float(config["query_neighbour_weight"]))
        matched = list(relevance)
    candidates = {m.id: m for m in (store.candidates(project, int(config["startup_latest"])) if startup
                                     else store.candidates(project, record=record))}
    if startup:
        matched = matched + history_ids(store, project, int(config["startup_stretches"]),
                                              int(config["startup_per_stretch"]))
    for memory in store.memories_by_id({i: None for i in [*matched, *also] if i not in candidates}, record):
        candidates[memory.id] = memory
    tentative_ok = include_tentative or (startup and float(config["startup_tentative"]) > 0)
    elsewhere = excluded_elsewhere(project)  # a global memory of an excluded project is shown nowhere
    pool = [m for m in candidates.values() if (tentative_ok or not m.tentative)
            and (elsewhere is None or m.project == project or not elsewhere(m.project))]
    if startup:
        items = score_items(pool, relevance, config, half_life_s, config["startup_weights"], typed=False,
                            recall_stage=False)
        standing(items, config, include_tentative)
    else:
        weights = config["query_weights"] if asked else config["resume_weights"] if current_ids or half_life_s else None
        items = score_items(pool, relevance, config, half_life_s, weights)
    for item in items:
        if item.memory.id in current_ids:
            item.score += CURRENT_SESSION_BOOST
            item.parts["current_session"] = CURRENT_SESSION_BOOST
    if not startup:
        # Every new session's block counts as a recall: taken as confidence, yesterday's block would keep
        # itself in today's. A new session ranks without that feedback.
        suppress_hubs(items)
    items = by_score(items)
    if record is MemoryHead:
        return hydrate(store, items, int(config["max_candidates"]))
    return spread(items, config, budget_chars) if startup else items


def hydrate(store: Store, items: list[Item], limit: int) -> list[Item]:
    """`items` with the whole memory of the first `limit`, as many as a block may draw from (`shortlist`);
    the rest keep what ranked them. One whose memory is gone since it was ranked is left out."""
    top: list[Item] = []
    while len(top) < limit and items:
        batch, items = items[: limit - len(top)], items[limit - len(top):]
        whole = {m.id: m for m in store.memories_by_id(i.memory.id for i in batch)}
        for item in batch:
            if item.memory.id in whole:
                item.memory = whole[item.memory.id]
                top.append(item)
    return top + items


def project_name(project: str) -> str:
    """The project folder's own name (`Path(project).name`, without importing `pathlib` on the hook path)."""
    parts = [part for part in project.split("/") if part and part != "."]
    return parts[-1] if parts else ""


FORGOTTEN_MIN_CHARS = 12  # a shorter forgotten text ("use it") would take ordinary lines with it


def without_forgotten(store: Store, project: str, checkpoint: dict | None) -> dict | None:
    """A checkpoint without the words that say a forgotten memory again, or one a correction by hand replaced: a
    session's words are shown as they were said, but never what the user asked never to be recalled, nor what they
    said was wrong."""
    forgotten = [text for text in map(folded, store.forgotten_texts(project)) if len(text) >= FORGOTTEN_MIN_CHARS
                 ] if checkpoint else []
    if not forgotten:
        return checkpoint

    def says(text: object) -> bool:
        return isinstance(text, str) and any(words in folded(text) for words in forgotten)

    recent, echo = [], False
    for line in checkpoint.get("recent") or []:
        text = line[-1] if isinstance(line, list) and line else None
        # What says it, and the assistant's reply right after that says it again ("Netlify set up for the site.").
        dropped = says(text) or (echo and isinstance(text, str) and line[0] == "assistant"
                                 and any(echoes(f, text) for f in forgotten))
        echo = dropped
        if not dropped:
            recent.append(line)
    kept = dict(checkpoint, task=[t for t in checkpoint.get("task") or [] if not says(t)], recent=recent)
    last = kept.get("last_reply")
    if says(last) or (isinstance(last, str) and any(says(t) for t in checkpoint.get("task") or [])
                      and any(echoes(f, last) for f in forgotten)):
        kept["last_reply"] = ""
    return kept


def situation_query(store: Store, project: str, situation: str, session_id: str,
                    query: str) -> tuple[str, dict | None, dict | None]:
    """What to rank against, the checkpoint that opens the block, and the last session's checkpoint (without what
    was forgotten)."""
    checkpoint = last = None
    if situation in ("compact", "resume"):
        checkpoint = (store.checkpoint(session_id) if session_id else None) or _resumed(store, project, session_id)
        checkpoint = without_forgotten(store, project, checkpoint)
        if checkpoint and not query:
            query = " ".join(checkpoint.get("task", []))
    elif situation in ("startup", "clear"):
        # A new session: the project, its branch, and where the last session left off.
        last = without_forgotten(store, project, store.latest_checkpoint(project, exclude=session_id))
        if not query:
            session = store.last_session(project, exclude=session_id)
            parts = [project_name(project), session.git_branch if session else ""]
            query = " ".join(p for p in parts + (last.get("task", []) if last else []) if p)
    return query, checkpoint, last


def _resumed(store: Store, project: str, session_id: str) -> dict | None:
    """For a session with no checkpoint of its own: the checkpoint of the session it resumes under a new id (the
    project's latest session's). None when the session itself was mined (it was cut short before any checkpoint), or
    when the latest session has none: an older session's words are not where this one stopped."""
    if session_id and store.session(session_id) is not None:
        return None
    latest = store.latest_checkpoint(project)
    last = store.last_session(project) if latest else None
    return latest if latest and (last is None or latest.get("session_id") == last.session_id) else None


def claimed(items: list[Item], shares: dict[str, float], budget_chars: int) -> set[int]:
    """Ids of the best items of each category with a share of the budget, as many as that share holds."""
    ids: set[int] = set()
    for category, share in shares.items():
        room = float(share) * budget_chars
        for item in items:
            if item.memory.category == category:
                room -= len(item.memory.text) + 16
                if room < 0:
                    break
                ids.add(item.memory.id)
    return ids


def shortlist(items: list[Item], config: dict[str, Any], budget_chars: int, shares: dict[str, float] | None,
              protected_ids: set[int], startup: bool, void: bool | None) -> tuple[list[Item], list[Item], list[Zone]]:
    """Stage two: the ranked candidates that may make it into a block, those that cannot, and the void zones.

    What has a first claim on the budget (`shares`, see `block.fit`) is neither cut nor voided, and neither
    is a zone that holds one of `protected_ids`. `void`: mark void zones (True), or not (False); by default,
    only when the candidates crowd the budget.
    """
    claims = claimed(items, shares, budget_chars) if shares else set()
    # A block holds a few dozen items: far below the first few hundred, nothing can make it in.
    limit = int(config["startup_max_candidates" if startup else "max_candidates"])
    items, beyond = items[:limit], items[limit:]
    if claims:
        items += [i for i in beyond if i.memory.id in claims]
        beyond = [i for i in beyond if i.memory.id not in claims]
    zones: list[Zone] = []
    # Void marking is for crowds: when the candidates would fill the budget several times over.
    crowded = sum(len(i.memory.text) + 16 for i in items) > float(config["void_crowd_factor"]) * budget_chars
    if void if void is not None else (crowded and float(config["void_share"]) > 0):
        zones = void_mark(items, config, set(protected_ids) | claims)
        voided_ids = {i for z in zones if z.voided for i in z.ids}
        items = [i for i in items if i.memory.id not in voided_ids]
    return items, beyond, zones


def by_novelty(items: list[Item], power: float, exponent: float) -> list[Item]:
    """Items in the order a greedy pick would take them when each is worth its score × novelty^power per
    character^exponent, novelty being the share of its words (weighted by rarity) that no item taken
    before it has said: the block covers more subjects instead of saying one thing several ways.

    Novelty only falls as items are taken, so a stale value is an upper bound (a lazy greedy: an
    item is rescored when it reaches the top, and taken if it still leads). Each item's novelty
    when taken is kept in its score parts for `--explain`.
    """
    words = [frozenset(i.memory.keywords.split()) or frozenset(i.memory.text.lower().split()) for i in items]
    counts = Counter(word for item_words in words for word in item_words)
    weight = {word: math.log(1 + len(items) / count) for word, count in counts.items()}
    totals = [sum(weight[word] for word in item_words) or 1.0 for item_words in words]
    covered: set[str] = set()

    def novelty(k: int) -> float:
        return sum(weight[word] for word in words[k] if word not in covered) / totals[k]

    def value(k: int) -> float:
        return items[k].score * novelty(k) ** power / (len(items[k].memory.text) + 20) ** exponent

    heap = [(-value(k), -items[k].memory.id, k) for k in range(len(items))]
    heapq.heapify(heap)
    out: list[Item] = []
    while heap:
        _, tie, k = heapq.heappop(heap)
        current = value(k)
        if heap and current < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-current, tie, k))
            continue
        items[k].parts["novelty"] = novelty(k)
        out.append(items[k])
        covered |= words[k]
    return out
