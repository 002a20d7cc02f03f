"""Dedup layers 2 and 3 on the store: paraphrases merge, conflicting memories supersede older ones.

Layer 1 (exact) is a constraint in the store: the tagged content hash, with
every earlier wording of a memory kept as an alias, so re-mining never adds.
On top of it, for each new memory, inside the miner's transaction:

- Layer 2, near-duplicate. Within a project and category, a memory close to
  an existing one (`similarity.Comparer.duplicate_score`) merges into it: the
  newer wording is kept, every evidence row stays. A forgotten memory absorbs
  its paraphrases too, so that it stays forgotten, and the archived units
  they were said in are hidden as `forget` hid the first ones.
- Layer 3, conflict. A new memory supersedes an older current one
  (`Comparer.supersedes`): the older one is closed (`valid_to`, state
  superseded, a link with a short "was" note), never deleted. Time decides
  the direction, so a backfill of older sessions after newer ones ends in the
  same state; a superseded memory said again later becomes current again.

Candidates come from the FTS index, a dozen per memory at most, never a scan.
A local sentence-embedding model can be plugged in through `Embedder`.
Never imported by the hook path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..textutil import STOPWORDS, cjk_bigrams, content_hash, fts_terms, short
from .lexicon import Synonyms, load_synonyms
from .records import NewMemory, StoredMemory
from .similarity import NEAR_DUPLICATE_THRESHOLD, Comparer, Embedder, load_embedder
from .store import Store
from .text_features import Statement

CANDIDATES = 12
MAX_SUPERSEDED = 3
CURRENT_STATES = ("active", "cold")
NEAR_STATES = ("active", "cold", "forgotten")


# --- the store side ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What storing one candidate did."""

    memory_id: int
    action: str  # new | exact | near-duplicate
    superseded: tuple[int, ...] = ()
    superseded_by: int | None = None
    reopened: bool = False

    @property
    def created(self) -> bool:
        return self.action == "new"


def _statement(memory: StoredMemory) -> Statement:
    return Statement(memory.text, memory.category, memory.subject, memory.value, bool(memory.tentative),
                     memory.valid_from)


def match_expression(text: str, comparer: Comparer, limit: int = 24) -> str:
    """An escaped FTS5 OR-query for memories that share words with `text`, synonyms expanded."""
    terms = fts_terms(text)
    syn = comparer.synonyms
    for token in comparer.features(text).tokens:
        for variant in syn.variants.get(token, ()):
            grams = cjk_bigrams(variant)
            words = [t for t in fts_terms(variant) if t not in grams]
            terms += grams  # a no-space script's variant: its character pairs, each a term
            if words:
                terms.append(" ".join(words))  # a word variant: one phrase ("postgre sql")
    unique = list(dict.fromkeys(t for t in terms if t and t not in STOPWORDS))[:limit]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in unique)


# Comparers by (synonyms, threshold, embedder), each holding its objects so that their ids stay theirs.
_comparers: dict[tuple[int, float, int], tuple[Synonyms, Embedder | None, Comparer]] = {}


def shared_comparer(synonyms: Synonyms, threshold: float, embedder: Embedder | None) -> Comparer:
    """One `Comparer` per synonyms, threshold and embedder for the process: its feature cache outlives a batch."""
    key = (id(synonyms), threshold, id(embedder))
    found = _comparers.get(key)
    if found is None:
        if len(_comparers) >= 16:
            _comparers.clear()
        found = _comparers[key] = (synonyms, embedder, Comparer(synonyms, threshold, embedder))
    return found[2]


def embedder_of(settings: dict) -> Embedder | None:
    """The embedder the `dedup` settings name (None: none); one that cannot be loaded is a one-line ConfigError
    that names the setting (it was reported as the error of the transcript being mined)."""
    from ..config import ConfigError, config_path

    spec = settings.get("embedder")
    if not spec:
        return None
    try:
        return load_embedder(spec)
    except Exception as exc:  # noqa: BLE001 - whatever the user's module raises
        raise ConfigError(f"{config_path()}: setting 'dedup.embedder' ({spec!r}) cannot be loaded "
                          f"({type(exc).__name__}: {exc}); fix it or remove it") from None


class Deduper:
    """Routes each new memory through the three layers inside the caller's transaction."""

    def __init__(self, store: Store, synonyms: Synonyms | None = None, threshold: float = NEAR_DUPLICATE_THRESHOLD,
                 embedder: Embedder | None = None):
        self.store = store
        self.comparer = shared_comparer(synonyms or load_synonyms(), threshold, embedder)
        self._matches: dict[str, str] = {}  # look-up expressions worked out ahead (`prepare`)

    @classmethod
    def from_config(cls, store: Store, config: dict[str, Any]) -> "Deduper":
        settings = config.get("dedup") or {}
        embedder = embedder_of(settings)
        return cls(store, threshold=float(settings.get("threshold", NEAR_DUPLICATE_THRESHOLD)), embedder=embedder)

    def prepare(self, texts: Iterable[str]) -> None:
        """Work out ahead what storing these texts will need that no write can change: their features and their
        look-up expressions. A miner does it before it takes the write lock, which it then holds for the look-ups
        and the writes only (another process mining other projects waits for it meanwhile)."""
        for text in texts:
            if text not in self._matches:
                self._matches[text] = match_expression(text, self.comparer)

    def add(self, new: NewMemory, nearby: list[StoredMemory] | None = None) -> Outcome:
        """Store one memory: merge it (exact or near-duplicate) or insert it and mark what it supersedes; the
        store's counters of superseded memories and merged near-duplicates count the outcome. Runs inside
        the caller's `Store.atomic()`. `nearby`: its candidates when the caller looked them up already (a
        batch looked up at once on a team server), else the store is asked."""
        outcome = self._route(new, nearby)
        self.store.bump("memories_superseded", len(outcome.superseded) + bool(outcome.superseded_by))
        self.store.bump("near_duplicates_merged", outcome.action == "near-duplicate")
        return outcome

    def _route(self, new: NewMemory, nearby: list[StoredMemory] | None = None) -> Outcome:
        store = self.store
        found = store.find_exact(new.project, content_hash(new.text))
        if found is not None:
            return self._exact(found, new)
        statement = Statement(new.text, new.category, new.subject, new.value, new.tentative, new.ts)
        if nearby is None:
            match = self._matches.pop(new.text, None)
            match = match_expression(new.text, self.comparer) if match is None else match
            nearby = store.similar_memories(new.project, match, NEAR_STATES, limit=CANDIDATES) if match else []
        duplicate = self._best_duplicate(statement, [m for m in nearby if m.state in NEAR_STATES])
        if duplicate is not None:
            return self._near_duplicate(duplicate, new)
        memory_id = store.insert_memory(new)
        superseded, superseded_by = self._conflicts(memory_id, statement, new, nearby)
        return Outcome(memory_id, "new", tuple(superseded), superseded_by)

    # --- layer 1 and 2 ---

    def _exact(self, memory: StoredMemory, new: NewMemory) -> Outcome:
        added = self.store.merge_evidence(memory.id, new)
        self._still_forgotten(memory, added)
        closed = None
        if added and memory.state == "cold":
            self.store.set_state(memory.id, "active", "said again")
        elif added and memory.state == "quarantined" and new.role == "user" and new.source == "mined":
            # The user said it in a session of theirs: the user's own words are trusted (`trust`), as a new memory
            # in them would have been.
            self.store.set_state(memory.id, "active", "said by the user")
        elif added and memory.state == "superseded" and new.ts and memory.valid_to and new.ts > memory.valid_to:
            closed = self.restate(memory, new)  # (what replaced it is closed in turn)
        return Outcome(memory.id, "exact", tuple(closed or ()), reopened=closed is not None)

    def _best_duplicate(self, statement: Statement, nearby: list[StoredMemory]) -> StoredMemory | None:
        best, best_score = None, 0.0
        for memory in nearby:
            if memory.category != statement.category:
                continue
            score = self.comparer.duplicate_score(statement, _statement(memory))
            if score >= self.comparer.threshold and score > best_score:
                best, best_score = memory, score
        return best

    def _still_forgotten(self, memory: StoredMemory, added: bool) -> None:
        """A forgotten memory said again stays forgotten, and so does the new sighting's archived unit (archived
        before its memories are stored, in the same transaction): it is hidden as `forget` hid the first ones."""
        if added and memory.state == "forgotten":
            self.store.hide_archived(memory.id)

    def _near_duplicate(self, memory: StoredMemory, new: NewMemory) -> Outcome:
        store = self.store
        added = store.merge_evidence(memory.id, new)
        self._still_forgotten(memory, added)
        if added:
            if (new.ts or "") >= memory.last_seen and memory.state != "forgotten" \
                    and (memory.source != "manual" or _users_own(new)) \
                    and (memory.role != "user" or new.role == "user"):
                # The newer wording, but never the assistant's over the user's (by hand or in their words): it would
                # make the user's change of mind the assistant's, which the assistant may then undo.
                store.reword(memory.id, new)
            if memory.state == "cold":
                store.set_state(memory.id, "active", "said again")
            if memory.tentative and not new.tentative:
                store.confirm(memory.id)
        return Outcome(memory.id, "near-duplicate")

    # --- layer 3 ---

    def _conflicts(self, memory_id: int, statement: Statement, new: NewMemory,
                   nearby: list[StoredMemory]) -> tuple[list[int], int | None]:
        current = {m.id: m for m in nearby if m.state in CURRENT_STATES}
        if new.subject:
            for memory in self.store.subject_memories(new.project, [new.subject], CURRENT_STATES, exclude=memory_id):
                current.setdefault(memory.id, memory)
        current.pop(memory_id, None)
        superseded: list[int] = []
        # The user's corrections first: one the new memory contradicts closes it, before it closes anything else.
        for memory in sorted(current.values(), key=lambda m: m.source != "manual"):
            old = _statement(memory)
            later_in_file = _later_in_file(memory, new)
            if new.ts and old.ts and new.ts < old.ts and not later_in_file:
                # Said before what is stored (a backfill of an older session): the stored one wins.
                if _echoes_a_preference(memory.role, new.role, new.category):
                    continue
                found = self.comparer.supersedes(old, statement)
                if found and not self.comparer.is_duplicate(old, statement):
                    self.store.supersede(memory.id, memory_id, found.reason, found.was, at=old.ts)
                    return superseded, memory.id
                continue
            if _echoes_a_preference(new.role, memory.role, memory.category):
                continue
            found = self.comparer.supersedes(statement, old)
            if found and memory.source == "manual" and not _users_own(new):
                # The assistant's words (or another's) never undo what the user corrected by hand: the correction
                # stays current and closes them, as the user's own words would (`restate`).
                self.store.supersede(memory.id, memory_id, "corrected by hand before", "", at=new.ts)  # (no "was":
                # the correction never said what the assistant says now)
                return superseded, memory.id
            if found and len(superseded) < MAX_SUPERSEDED:
                when = max(new.ts, old.ts) if later_in_file and new.ts and old.ts else new.ts  # (never before it)
                self.store.supersede(memory_id, memory.id, found.reason, found.was, at=when)
                superseded.append(memory.id)
        return superseded, None

    def settle(self, memory_id: int) -> tuple[list[int], int | None]:
        """Conflict marking for a stored memory that becomes current without being said again (a quarantined one the
        user approved), as when it was new, and with the user's authority (the user made it current): what it
        supersedes, and what supersedes it (stored since), if anything. Runs inside the caller's `Store.atomic()`."""
        memory = self.store.get(memory_id)
        new = NewMemory(project=memory.project, category=memory.category, text=memory.text,
                        confidence=memory.confidence, rule_id=memory.rule_id, role="user",
                        session_id="", transcript="", entry_uuid=memory.entry_uuid, ts=memory.valid_from,
                        tentative=bool(memory.tentative), subject=memory.subject, value=memory.value,
                        source="mined")  # (only decides conflicts, by time alone: never stored)
        match = match_expression(memory.text, self.comparer)
        nearby = self.store.similar_memories(memory.project, match, CURRENT_STATES, limit=CANDIDATES) if match else []
        return self._conflicts(memory_id, _statement(memory), new, nearby)

    def restate(self, memory: StoredMemory, new: NewMemory) -> list[int] | None:
        """A superseded memory said again later becomes current again and closes what replaced it (returned; none
        when what replaced it was forgotten since); not when it was said before what replaced it became current (an
        older session mined late, against a correction made since), nor when the user replaced it (in their words or
        by hand) and not they but the assistant says it again: None."""
        replacements = [self.store.get(head) for head in self.current_heads(memory.id)]
        if any((replacement.valid_from or "") > new.ts for replacement in replacements):
            return None
        if not _users_own(new) and self._closed_by_the_user(memory.id):
            return None
        self.store.reopen(memory.id, "said again after it was superseded", at=new.ts)
        for replacement in replacements:
            was = replacement.value or short(replacement.text)
            self.store.supersede(memory.id, replacement.id, "said again", was, at=new.ts)
        return [replacement.id for replacement in replacements]

    def _closed_by_the_user(self, memory_id: int) -> bool:
        """Whether the user's words, or a correction by hand, replaced `memory_id`, or what replaced it since
        (current, forgotten or replaced in turn)."""
        return any(replacement is not None and (replacement.role == "user" or replacement.source == "manual")
                   for replacement in map(self.store.get, (src for src, _ in self._replacements(memory_id))))

    def current_heads(self, memory_id: int) -> list[int]:
        """The current memories that replaced `memory_id`, following the chain forward."""
        return [src for src, state in self._replacements(memory_id, past=lambda state: state not in CURRENT_STATES)
                if state in CURRENT_STATES]

    def _replacements(self, memory_id: int, past=lambda state: True):
        """(id, state) of each memory that replaced `memory_id`, and of what replaced those in turn, as long as
        `past(state)` says to look beyond one; each once."""
        seen, frontier = {memory_id}, [memory_id]
        while frontier:
            for src, state in self.store.superseders(frontier.pop()):
                if src not in seen:
                    seen.add(src)
                    yield src, state
                    if past(state):
                        frontier.append(src)


def _users_own(new: NewMemory) -> bool:
    """Whether `new` is the user's words in a session of theirs, or a correction by hand (a teammate's, on the team's
    store: the later change stands); not the assistant's, an import's, a pulled copy's."""
    return new.source == "manual" or (new.role == "user" and new.source == "mined")


def _echoes_a_preference(newer_role: str, older_role: str, older_category: str) -> bool:
    """The assistant's words never close a preference of the user's: what it says after one acknowledges or applies
    it ("Understood, I replaced the print calls with logging"); the user's own words change it."""
    return older_category == "preference" and older_role == "user" and newer_role != "user"


def _later_in_file(memory: StoredMemory, new: NewMemory) -> bool:
    """True when `new` comes from the transcript and session `memory` was first said in: mined in the order of the
    file, it was said after it, whatever the clocks of the two entries say."""
    return memory.session_id == new.session_id and memory.transcript == new.transcript != ""


# --- tuning on a labelled pairs set ---------------------------------------------------------------


def merge_scores(comparer: Comparer, pairs: Iterable[tuple[Statement, Statement, str]],
                 thresholds: Iterable[float]) -> list[dict[str, float]]:
    """Merge precision and recall per threshold; a pair's label is duplicate, supersedes or distinct."""
    scored = [(comparer.duplicate_score(b, a), label == "duplicate") for a, b, label in pairs]
    out = []
    for threshold in thresholds:
        tp = sum(1 for s, dup in scored if s >= threshold and dup)
        fp = sum(1 for s, dup in scored if s >= threshold and not dup)
        fn = sum(1 for s, dup in scored if s < threshold and dup)
        out.append({"threshold": round(threshold, 3), "precision": tp / (tp + fp) if tp + fp else 1.0,
                    "recall": tp / (tp + fn) if tp + fn else 0.0, "merged": tp + fp})
    return out
