"""Comparing two memories: near-duplicate or near miss, and whether the newer one supersedes the older.

Text side of the dedup layers, no database. `features` turns a text into
canonical tokens (stems, synonyms, CJK bigrams), the words that must not
change (numbers, names, identifiers, content words) and correction markers.
`Comparer.duplicate_score` is layer 2's test, `Comparer.supersedes` layer 3's:
by subject and value, a changed number, a correction marker ("instead of X",
"actually", "改用", "不是…而是"), a negation or an antonym swapped in otherwise
the same words. Thresholds are tuned on tests/fixtures/pairs/.
"""

from __future__ import annotations

import importlib
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from .lexicon import ANTONYMS, CJK_LIGHT, LIGHT, NUMBER_WORDS, STOP, Synonyms, lemma
from ..extract.refine import is_hedged
from ..extract.rules import required_literals
from ..textutil import STOPWORDS, WORD_MARKS, char_bigrams, short, word_text

# The highest threshold with the best merge F1 on tests/fixtures/pairs/pairs.jsonl (tests/test_dedup.py);
# the guards in `near_miss` do most of the work, so precision stays 1.0 from 0.40 up. Raise it to merge less.
NEAR_DUPLICATE_THRESHOLD = 0.6
# A correction marker without a named replaced term needs this much overlap with what it corrects.
CORRECTION_THRESHOLD = 0.42
# Same words but another number: the words must agree this much.
NUMBER_CHANGE_THRESHOLD = 0.7
EMBED_WEIGHT = 0.5

_EMOJI = "\u2190-\u21ff\u2300-\u27bf\u2b00-\u2bff\U0001f300-\U0001faff"
# Words of any script written with spaces (see `textutil.word_text`: no-space scripts are blanked first
# and compared by their character bigrams), "c++" and "c#" whole, or an emoji.
_TOKEN_RE = re.compile(r"[^\W_][\w.\-/@:+#" + WORD_MARKS + r"]*(?:[^\W_]|[#+" + WORD_MARKS + r"])|[^\W_]|["
                       + _EMOJI + "]")
_BACKTICK_RE = re.compile(r"`([^`]{1,80})`")
# Capitals of Latin (with Latin-1's accented ones), Greek and Cyrillic: a capital mid-sentence starts a name.
_CAPITALS = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0391-\u03a9\u0400-\u042f"
_CAPITAL_RE = re.compile(r"(?<![\w.])([" + _CAPITALS + r"][\w.+#-]*[\w+#]|[" + _CAPITALS + r"])(?![\w])")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;]\s+|\n)\W*$")
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|don't|dont|doesn't|do not|does not|isn't|aren't|won't|can't|cannot|shouldn't|without|"
    r"avoid|stop using|no longer)\b|不要|不用|不再|别再|別再|别用|別用|禁止|不能|不可|不准|勿|不会|不會|不是|しない|ないで|ません",
    re.IGNORECASE,
)
# Negation words of Spanish, French, German, Italian, Portuguese, Russian and Greek, looked up among a
# text's tokens (cheaper than one more regex on every text; "sans-serif" and "non-blocking" are tokens of
# their own, so they do not count). The French elision and Korean's negating verbs and adverbs need a pattern.
_NEGATION_TOKENS = frozenset("""nunca sin tampoco jamás ne pas jamais sans aucun aucune nicht kein keine keinem
    keinen keiner keines nie niemals ohne non mai senza sem não не нет никогда нельзя без δεν μην ποτέ χωρίς""".split())
_ELIDED_NEGATION_RE = re.compile(r"\bn['’](?=\w)")
_HANGUL_NEGATION_RE = re.compile(r"않|없|(?<!\w)(?:안|못)(?=\s)")
_TERM = (r"(?P<term>[`*\"']?[\w.#+@/" + _EMOJI + r"-]+(?:\s+(?!(?:for|in|on|to|at|with|because|since|so|and|or|but|"
         r"as|when|if|now|anymore)\b)[\w.#+@/" + _EMOJI + r"-]+){0,2}[`*\"']?)")
_CJK_TERM = r"(?P<term>[A-Za-z0-9_.#+-]+|[\u3400-\u9fff]{1,8})"
_REPLACED_RES = [re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:instead of|rather than)\s+(?:the |a |an |using |plain )?" + _TERM,
    r"\bnot\s+(?:the |a |an )?" + _TERM + r",?\s+but\b",
    r",\s*not\s+(?:the |a |an )?" + _TERM + r"\s*(?:[,.;!]|$)",
    r"\b(?:switch|migrat|chang|mov|port|convert|upgrad|downgrad|bump|reduc|increas|rais|lower|cut)\w*\s+"
    r"(?:[\w.-]+\s+){0,3}?from\s+(?:the |a |an )?" + _TERM + r"\s+to\b",
    r"\breplac\w*\s+(?:the |a |an )?" + _TERM + r"\s+(?:with|by)\b",
    r"\bno longer\s+(?:use|uses|using|need|needs|run|runs|support|supports|want)?\s*(?:the |a |an )?" + _TERM,
    r"不是\s*" + _CJK_TERM + r"\s*[,，]?\s*而是",
    r"(?:而不是|而非|代替|取代)\s*" + _CJK_TERM,
    r"不再(?:用|使用|採用|采用)?\s*" + _CJK_TERM,
    r"(?:把|将|將)\s*" + _CJK_TERM + r"\s*(?:改成|改为|改為|换成|換成|替换成|替換成|改用)",
    _CJK_TERM + r"\s*(?:ではなく|じゃなくて)",
)]
_MARKER_RE = re.compile(
    r"(?:^|[.;:!?,—(]\s*)actually\b|\b(?:instead of|rather than|no longer|anymore|any more|scratch that|on second thought|"
    r"i was wrong|correction:|to correct|switch(?:ed|ing)?\s+(?:\w+\s+){0,3}?(?:to|over to|back to)|"
    r"chang(?:e|ed|ing)\s+(?:\w+\s+){0,3}?to|migrat(?:e|ed|ing)\s+(?:\w+\s+){0,3}?to|"
    r"mov(?:e|ed|ing)\s+(?:\w+\s+){0,2}?(?:over\s+)?to|replac(?:e|ed|ing)\s+.{1,40}?\s+with|not\s+[\w.#+@/-]+(?:\s+\w+)?,?\s+but|"
    r"(?:switch|migrat|chang|mov|port|convert|upgrad|downgrad|bump|reduc|increas|rais|lower|cut)\w*\s+"
    r"(?:[\w.-]+\s+){0,3}?from\s+\S+(?:\s+\S+){0,2}?\s+to)\b"
    r"|改用|改成|改为|改為|换成|換成|换用|換用|不再|其实|其實|更正|改回|换回|換回|切换到|切換到|迁移到|遷移到|而不是|"
    r"不是.{1,30}而是|ではなく|じゃなくて|に変更|に切り替え|実は",
    re.IGNORECASE,
)
# Only explicit removals and prohibitions: "not" alone is everywhere in assistant prose.
_NEGATED_TERM_RES = [re.compile(p, re.IGNORECASE) for p in (
    r"(?:^|[.;:!,—]\s*|\s-\s)no\s+(?:more\s+)?" + _TERM,
    r"\b(?:drop|remove|delete|get rid of|stop using|stop showing|avoid)\s+(?:the |any |a |an |all )?" + _TERM,
    r"\b(?:don't|do not|never|no longer)\s+(?:use|show|display|add|include|want|need|put|generate|create|render)\s+"
    r"(?:the |any |a |an |more )?" + _TERM,
    r"(?:不要|不用|不再用?|别再用?|別再用?|别用|別用|去掉|删掉|刪掉|移除|砍掉|拿掉|不生)\s*" + _CJK_TERM,
)]
_LOOSE_NEGATION_RE = re.compile(r"\b(?:no|not|never|without)\s+(?:the |any |a |an )?" + _TERM, re.IGNORECASE)
# A number that names one of a series ("module 3", "step 2", "phase 1-0"): which thing, not how much.
_LABEL_NUMBER_RE = re.compile(
    r"\b(?:module|step|phase|stage|part|section|chapter|page|item|task|issue|ticket|level|tier|lesson|week|day|"
    r"sprint|round|case|scenario|example|option|screen|slide|figure|table|row|column|node|worker|shard|replica|"
    r"zone|room|floor|unit|lab|exercise|question|problem|milestone|epic|story|test|job|pr|#)\s*#?\s*(\d[\w.-]*)",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(r"^v?\d+(?:[.,:/x-]\d+)*(?:[a-z%]{1,5})?$|^\d+[-_][a-z]{1,10}$")
MAX_MARKER_TOKENS = 35
MAX_DIRECTIVE_TOKENS = 8
_NEGATION_WORDS = frozenset({"never", "not", "no", "without", "avoid", "longer", "不要", "不用", "不再", "禁止"})


@dataclass(frozen=True)
class Features:
    """What the layers compare: canonical tokens, the words that must not change, and markers."""

    tokens: frozenset[str]
    heavy: frozenset[str]
    critical: frozenset[str]
    numbers: frozenset[str]
    cjk_heavy: frozenset[str]
    grams: Counter
    negated: bool
    hedged: bool
    marker: str
    replaced: frozenset[str]
    negated_terms: frozenset[str]
    number_text: tuple[str, ...] = ()
    loosely_negated: frozenset[str] = frozenset()
    tokens_cjk: frozenset[str] = frozenset()


def _canon(token: str, syn: Synonyms) -> str:
    token = token.strip(".:/-_'\"")
    if not token:
        return ""
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    found = syn.words.get(token)
    if found:
        return found
    stem = lemma(token)
    return syn.words.get(stem, stem)


def _has_digit(token: str) -> bool:
    return not token.isalpha() and any(c.isdigit() for c in token)


_NUMBER_VALUES = frozenset(NUMBER_WORDS.values())
_IDENTIFIER_CHAR_RE = re.compile(r"[./@#+:]")


def _starts_sentence(raw: str, index: int) -> bool:
    """Whether only non-word characters after a sentence end (or the start) come before `index`.

    The same answer as `_SENTENCE_START_RE.search(raw[:index])`, looking back only
    over the non-word characters right before `index` instead of the whole prefix.
    """
    start = index
    while start > 0 and not (raw[start - 1].isalnum() or raw[start - 1] == "_"):
        start -= 1
    tail = raw[start:index]
    if start == 0 or "\n" in tail:
        return True
    return any(c in ".!?:;" and tail[i + 1].isspace() for i, c in enumerate(tail[:-1]))


def _gated(pattern: re.Pattern) -> tuple[re.Pattern, frozenset[str] | None]:
    """A pattern with the lower-cased literals one of which every match contains (None: unknown)."""
    return pattern, required_literals(pattern.pattern)


def _may_match(gate: frozenset[str] | None, lowered_ascii: str | None) -> bool:
    """False only when the pattern cannot match: an ASCII text lacks all its literals.

    Only ASCII text is prefiltered: there `str.lower` and the case-insensitive
    match agree exactly (elsewhere re folds pairs such as ı and i that lower() keeps apart).
    """
    return gate is None or lowered_ascii is None or any(lit in lowered_ascii for lit in gate)


# Each with its literals, so that a text without them skips the regex (see `_may_match`).
_GATED_REPLACED = [_gated(p) for p in _REPLACED_RES]
_GATED_NEGATED_TERMS = [_gated(p) for p in _NEGATED_TERM_RES]
_GATED_LOOSE_NEGATION = _gated(_LOOSE_NEGATION_RE)
_GATED_MARKER = _gated(_MARKER_RE)
_GATED_NEGATION = _gated(_NEGATION_RE)


def _number_form(token: str) -> str:
    return token[1:] if token[:1] == "v" and token[1:2].isdigit() else token


def term_tokens(text: str, syn: Synonyms) -> frozenset[str]:
    """Canonical content tokens of a short term (a replaced or negated thing)."""
    lowered = syn.rewrite(unicodedata.normalize("NFKC", text).lower())
    out = {_canon(t, syn) for t in _TOKEN_RE.findall(word_text(lowered))}
    out |= set(char_bigrams(lowered))
    return frozenset(t for t in out if t and t not in STOP)


_CONTRACTION_RE = re.compile(r"n['’]t\b")
_CLITIC_RE = re.compile(r"['’](?:s|ll|re|ve|d|m)\b")


def features(text: str, syn: Synonyms) -> Features:
    """The comparable form of one memory's text."""
    raw = unicodedata.normalize("NFKC", text)
    lowered = syn.rewrite(_CLITIC_RE.sub("", _CONTRACTION_RE.sub(" not", raw.lower())))
    tokens: list[str] = []
    numbers: list[str] = []
    words = _TOKEN_RE.findall(word_text(lowered))
    for token in words:
        canon = _canon(token, syn)
        if not canon or canon in STOP:
            continue
        tokens.append(canon)
        if _NUMBER_RE.match(canon) or canon in _NUMBER_VALUES:
            numbers.append(_number_form(canon))
    cjk = char_bigrams(lowered)
    token_set = frozenset(tokens) | frozenset(cjk)
    names = syn.names()
    critical = {t for t in tokens if _has_digit(t) or t in names or _IDENTIFIER_CHAR_RE.search(t)
                or ("_" in t and t not in names)}
    for span in _BACKTICK_RE.findall(raw):
        critical |= {_canon(t, syn) for t in _TOKEN_RE.findall(word_text(syn.rewrite(span.lower())))}
    for found in _CAPITAL_RE.finditer(raw):
        word = found.group(1)
        if _starts_sentence(raw, found.start()) and not (len(word) > 1 and word.isupper()):
            continue  # a capital at the start of a sentence says nothing; an all-caps word (CREATED, KEPT) does
        critical |= {_canon(t, syn) for t in _TOKEN_RE.findall(word_text(syn.rewrite(found.group(1).lower())))}
    critical = {c for c in critical if c in token_set}
    heavy = {t for t in tokens if t not in LIGHT and not _has_digit(t)}
    cjk_heavy = {g for g in cjk if not any(ch in CJK_LIGHT for ch in g) and len(g) == 2}
    ascii_lowered = raw.lower() if raw.isascii() else None
    marker = _MARKER_RE.search(raw) if _may_match(_GATED_MARKER[1], ascii_lowered) else None
    replaced = _terms_found(_GATED_REPLACED, raw, ascii_lowered, syn)
    negated_terms = _terms_found(_GATED_NEGATED_TERMS, raw, ascii_lowered, syn)
    loosely_negated = negated_terms | _terms_found([_GATED_LOOSE_NEGATION], raw, ascii_lowered, syn)
    joined = " ".join(tokens + cjk)
    padded = f"  {joined}  "
    grams = Counter([padded[i : i + 3] for i in range(len(padded) - 2)])
    negated = ((_may_match(_GATED_NEGATION[1], ascii_lowered) and bool(_NEGATION_RE.search(raw)))
               or not _NEGATION_TOKENS.isdisjoint(words)
               or (("n'" in lowered or ascii_lowered is None) and bool(_ELIDED_NEGATION_RE.search(lowered)))
               or (ascii_lowered is None and bool(_HANGUL_NEGATION_RE.search(raw))))
    return Features(
        tokens=token_set, heavy=frozenset(heavy), critical=frozenset(critical), numbers=frozenset(numbers),
        cjk_heavy=frozenset(cjk_heavy), grams=grams, negated=negated,
        hedged=is_hedged(raw), marker=marker.group(0).strip(" .;:!?,—(").lower() if marker else "",
        replaced=frozenset(replaced), negated_terms=frozenset(negated_terms), number_text=tuple(numbers),
        loosely_negated=frozenset(loosely_negated), tokens_cjk=frozenset(cjk),
    )


def _terms_found(gated: list[tuple[re.Pattern, frozenset[str] | None]], raw: str, ascii_lowered: str | None,
                 syn: Synonyms) -> set[str]:
    """Canonical tokens of every `term` group the patterns find in `raw`."""
    found: set[str] = set()
    for pattern, gate in gated:
        if _may_match(gate, ascii_lowered):
            for match in pattern.finditer(raw):
                found |= term_tokens(match.group("term"), syn)
    return found


# --- similarity --------------------------------------------------------------------------------


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def cosine(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def lexical_similarity(a: Features, b: Features) -> float:
    """Half canonical-token overlap (Dice), half character-trigram cosine: 0..1."""
    return 0.5 * dice(a.tokens, b.tokens) + 0.5 * cosine(a.grams, b.grams)


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


# --- statements and conflicts --------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """A memory as the layers see it: text, category, the rule's subject and value, and when."""

    text: str
    category: str
    subject: str = ""
    value: str = ""
    tentative: bool = False
    ts: str = ""


@dataclass(frozen=True)
class Conflict:
    kind: str  # subject | number | correction | negation
    reason: str
    was: str


_TOPICAL_CATEGORIES = {"decision", "preference", "fact"}
_DIRECTIVE_CATEGORIES = {"decision", "preference"}


def _categories_meet(a: str, b: str) -> bool:
    return a == b or (a in _TOPICAL_CATEGORIES and b in _TOPICAL_CATEGORIES)


def _labels_only(text: str, numbers: list[str]) -> bool:
    """Whether every one of `numbers` stands in `text` as a label ("module 3"), not as a quantity."""
    labels = {m.group(1).lower().rstrip(".-") for m in _LABEL_NUMBER_RE.finditer(text)}
    return bool(numbers) and all(n.lower() in labels for n in numbers)


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
                self._features.clear()
            found = self._features[text] = features(text, self.synonyms)
        return found

    def canonical(self, value: str) -> str:
        """A subject or value as one comparable string ("Postgres" and "postgresql" agree)."""
        tokens = sorted(term_tokens(value, self.synonyms))
        return " ".join(tokens) or value.strip().lower()

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
        if new.tentative or not _categories_meet(new.category, old.category):
            return None
        a, b = self.features(new.text), self.features(old.text)
        found = (self._by_subject(new, old, a, b) or self._by_number(new, old, a, b)
                 or self._by_marker(new, old, a, b) or self._by_negation(new, old, a, b)
                 or self._by_antonym(new, old, a, b))
        return found

    def _by_subject(self, new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
        if not (new.subject and old.subject and new.value and old.value):
            return None
        subject = self.canonical(new.subject)
        if subject != self.canonical(old.subject) or new.category != old.category:
            return None
        if set(subject.split()) <= a.replaced:
            return None  # "X instead of <subject>": the subject is what was replaced, not a topic
        new_value, old_value = term_tokens(new.value, self.synonyms), term_tokens(old.value, self.synonyms)
        if not new_value or not (new_value - b.tokens):
            return None  # the new value was already part of the old statement
        drop = set(subject.split()) | new_value | old_value
        # What the statement says around the subject and value; CJK bigrams only when they carry content.
        context_a = (a.tokens - drop) - a.numbers - LIGHT - STOPWORDS - (a.tokens_cjk - a.cjk_heavy)
        context_b = (b.tokens - drop) - b.numbers - LIGHT - STOPWORDS - (b.tokens_cjk - b.cjk_heavy)
        if context_a and context_b:
            if ((a.critical & context_a) - b.tokens) or ((b.critical & context_b) - a.tokens):
                return None  # the same kind of thing about different things: the API's port, the admin's port
            if len(context_a & context_b) / min(len(context_a), len(context_b)) < 0.5:
                return None
        return Conflict("subject", f"{new.subject}: {old.value} → {new.value}", old.value)

    def _by_number(self, new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
        if new.category != old.category or not a.numbers or not b.numbers or a.numbers == b.numbers:
            return None
        words_a, words_b = a.tokens - a.numbers, b.tokens - b.numbers
        if a.negated != b.negated or not words_a or not words_b:
            return None
        if (len(words_a) < 2 or len(words_b) < 2) and words_a != words_b:
            return None
        if ((a.critical - a.numbers) - b.tokens) and ((b.critical - b.numbers) - a.tokens):
            return None
        if (a.heavy - b.tokens) and (b.heavy - a.tokens):
            return None  # another thing's number: Redis on 6379, Postgres on 5432
        if dice(words_a, words_b) < NUMBER_CHANGE_THRESHOLD:
            return None
        before = [n for n in b.number_text if n not in a.numbers]
        after = [n for n in a.number_text if n not in b.numbers]
        if _labels_only(new.text, after) and _labels_only(old.text, before):
            return None  # another numbered thing ("module 3" → "module 4"), not another value for the same one
        return Conflict("number", f"{', '.join(before)} → {', '.join(after)}", ", ".join(dict.fromkeys(before)))

    def _by_marker(self, new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
        if not a.marker and not a.replaced:
            return None
        if len(a.tokens) > MAX_MARKER_TOKENS or len(b.tokens) > MAX_MARKER_TOKENS:
            return None  # long prose mentions many things; a marker in it says little about which
        if a.replaced:
            if not a.replaced <= (b.tokens - b.negated_terms):
                return None
            # The replaced thing must be what the old memory is about: its value, or a good part of its words,
            # or the old memory ruled out what the new one now uses ("no Lombok" → "Lombok instead of records").
            old_value = term_tokens(old.value, self.synonyms) if old.value else frozenset()
            substance = (b.heavy | b.critical | b.cjk_heavy) - STOPWORDS
            prominent = (bool(old_value & a.replaced) or bool(a.replaced & b.numbers)
                         or len(a.replaced & substance) >= 0.25 * max(1, len(substance)))
            flip = bool(b.negated_terms & (a.tokens - a.replaced))
            rest_a, rest_b = a.tokens - a.replaced - LIGHT, b.tokens - a.replaced - LIGHT
            if not (prominent or flip) or (not (rest_a & rest_b) and (len(rest_b) > 2 or len(rest_a) > 3)):
                return None  # mentions the replaced thing, but says something else about it
            return Conflict("correction", f"'{a.marker or 'not'}' replaces {' '.join(sorted(a.replaced))}", short(old.text))
        if new.category != old.category or lexical_similarity(a, b) < CORRECTION_THRESHOLD:
            return None
        # "Actually" alone is everyday prose: a name or number must have been swapped for another.
        swapped = (a.critical | a.numbers, b.critical | b.numbers)
        if len(a.tokens) <= MAX_DIRECTIVE_TOKENS and len(b.tokens) <= MAX_DIRECTIVE_TOKENS:
            swapped = (swapped[0] | a.heavy, swapped[1] | b.heavy)  # in a short statement any content word counts
        if not (swapped[0] - b.tokens) or not (swapped[1] - a.tokens):
            return None
        return Conflict("correction", f"'{a.marker}'", short(old.text))

    def _by_antonym(self, new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
        # The same words with one swapped for its opposite: "above" / "below", "include" / "exclude".
        if new.category != old.category or a.negated != b.negated:
            return None
        only_b = b.tokens - a.tokens
        for word in a.tokens - b.tokens:
            for opposite in ANTONYMS.get(word, ()):
                if opposite in only_b and dice(a.tokens - {word}, b.tokens - {opposite}) >= 0.6:
                    return Conflict("antonym", f"{opposite} → {word}", short(old.text))
        return None

    def _by_negation(self, new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
        # "no Lombok" then "use Lombok", or "use the year legend" then "drop the year legend".
        if len(a.tokens) > MAX_MARKER_TOKENS or len(b.tokens) > MAX_MARKER_TOKENS:
            return None
        if a.negated != b.negated and new.category == old.category \
                and ((a.tokens - _NEGATION_WORDS) ^ (b.tokens - _NEGATION_WORDS)) <= LIGHT:
            # The same rule turned around: "always squash" / "never squash".
            return Conflict("negation", "now " + ("ruled out" if a.negated else "allowed"), short(old.text))
        # Only a short directive ("drop the year legend", "no Lombok") turns a thing off or back on;
        # facts say "no X" all the time without ruling anything out.
        if not {new.category, old.category} <= _DIRECTIVE_CATEGORIES:
            return None
        removed = a.negated_terms & (b.tokens - b.loosely_negated) if len(a.tokens) <= MAX_DIRECTIVE_TOKENS else set()
        restored = b.negated_terms & (a.tokens - a.loosely_negated) if len(b.tokens) <= MAX_DIRECTIVE_TOKENS else set()
        flipped = removed or restored
        if not (flipped - LIGHT):
            return None
        others = (a.tokens & b.tokens) - flipped - LIGHT
        if not others and len(flipped) < 2:
            return None
        if lexical_similarity(a, b) < 0.25:
            return None
        terms = " ".join(sorted(flipped))
        return Conflict("negation", f"no longer {terms}" if removed else f"{terms} again", short(old.text))
