"""Comparing two memories: near-duplicate or near miss, and (through `supersede`) whether the newer one
supersedes the older.

Text side of the dedup layers, no database. `Comparer` keeps each text's
features (`text_features`) and makes the two decisions: `duplicate_score`
is layer 2's test, with the guards of `near_miss` (a negation, a hedge,
another number, name or content word on one side keeps two texts apart) and
an optional local embedder; `supersedes` is layer 3's, decided by
`supersede`. Thresholds are tuned on tests/fixtures/pairs/.
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Protocol, Sequence

from .lexicon import Synonyms
from .supersede import Conflict, supersedes
from .text_features import Features, Statement, canonical, features, lexical_similarity, reversed_order, term_tokens

# The highest threshold with the best merge F1 on tests/fixtures/pairs/pairs.jsonl (tests/test_dedup.py);
# the guards in `near_miss` do most of the work, so precision stays 1.0 from 0.40 up. Raise it to merge less.
NEAR_DUPLICATE_THRESHOLD = 0.6
EMBED_WEIGHT = 0.5


def near_miss(a: Features, b: Features) -> str:
    """Why two close texts must not merge ('' when nothing stands in the way)."""
    if a.negated != b.negated:
        return "negation on one side"
    if a.hedged != b.hedged:
        return "hedged on one side"
    if a.numbers and b.numbers and a.numbers != b.numbers:
        return "another number"
    if a.replaced != b.replaced and (a.replaced or b.replaced):
        return "another replaced term"
    if (a.critical - b.tokens) and (b.critical - a.tokens):
        return "another name"
    if (a.heavy - b.tokens) and (b.heavy - a.tokens):
        return "another content word"
    if (a.cjk_heavy - b.tokens) and (b.cjk_heavy - a.tokens):
        return "another content word"
    if a.ordered and b.ordered and reversed_order(a, b):
        return "the same words the other way round"
    return ""


class Embedder(Protocol):
    """A local sentence-embedding model, for whoever wants more than lexical near-duplicates.

    `embed` returns one vector per text; vectors are compared by cosine. Plug one
    in with `Deduper(store, embedder=...)` or the config key
    `"dedup": {"embedder": "package.module:factory"}` (a callable returning it).
    The guards of `near_miss` still apply, so numbers and names never merge.
    """

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


def load_embedder(spec: str) -> Embedder:
    """`module:attribute` → the embedder it names (called when it is a factory)."""
    module_name, _, attribute = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in filter(None, attribute.split(".")):
        target = getattr(target, part)
    if isinstance(target, type) or (callable(target) and not hasattr(target, "embed")):
        target = target()  # a class or a factory
    if not hasattr(target, "embed"):
        raise ValueError(f"{spec} is not an embedder (it has no `embed` method)")
    return target


def vector_cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class Comparer:
    """Features per text (cached) and the two decisions: duplicate? supersedes?"""

    def __init__(self, synonyms: Synonyms, threshold: float = NEAR_DUPLICATE_THRESHOLD,
                 embedder: Embedder | None = None, embed_weight: float = EMBED_WEIGHT):
        self.synonyms = synonyms
        self.threshold = threshold
        self.embedder = embedder
        self.embed_weight = embed_weight
        self._features: dict[str, Features] = {}
        self._vectors: dict[str, Sequence[float]] = {}

    def features(self, text: str) -> Features:
        found = self._features.get(text)
        if found is None:
            if len(self._features) > 4096:
                # The older half goes (in the order they were made): a batch keeps comparing with recent texts.
                for old in list(self._features)[:2048]:
                    del self._features[old]
            found = self._features[text] = features(text, self.synonyms)
        return found

    def canonical(self, value: str) -> str:
        """A subject or value as one comparable string ("Postgres" and "postgresql" agree)."""
        return canonical(value, self.synonyms)

    def _semantic(self, a: str, b: str) -> float | None:
        if self.embedder is None:
            return None
        missing = [t for t in (a, b) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing)):
                self._vectors[text] = vector
        return vector_cosine(self._vectors[a], self._vectors[b])

    def duplicate_score(self, new: Statement, old: Statement) -> float:
        """0..1, or 0 when a guard says the two must stay apart."""
        if new.category != old.category:
            return 0.0
        a, b = self.features(new.text), self.features(old.text)
        if near_miss(a, b):
            return 0.0
        if self._other_value(new, old, a, b):
            return 0.0
        score = lexical_similarity(a, b)
        semantic = self._semantic(new.text, old.text)
        if semantic is not None:
            score = (1 - self.embed_weight) * score + self.embed_weight * semantic
        return score

    def _other_value(self, new: Statement, old: Statement, a: Features, b: Features) -> bool:
        """Same subject, and each side's value is missing from the other's text ("use MySQL" / "use PostgreSQL")."""
        if not (new.subject and old.subject and new.value and old.value):
            return False
        if self.canonical(new.subject) != self.canonical(old.subject):
            return False
        new_value, old_value = term_tokens(new.value, self.synonyms), term_tokens(old.value, self.synonyms)
        return bool(new_value - b.tokens) and bool(old_value - a.tokens)

    def is_duplicate(self, new: Statement, old: Statement) -> bool:
        return self.duplicate_score(new, old) >= self.threshold

    def supersedes(self, new: Statement, old: Statement) -> Conflict | None:
        """Why `new` replaces `old`, or None. Assumes `new` is the later statement and not a duplicate."""
        return supersedes(new, old, self.features, self.synonyms)
