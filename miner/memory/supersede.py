"""Whether a newer memory supersedes an older one: the change-of-mind decision of dedup layer 3.

`supersedes` reads the two texts' features (`text_features`) and finds a
`Conflict` by subject and value, a changed number, a correction marker
("instead of X", "actually", "改用", "不是…而是"), a negation or an antonym
swapped in otherwise the same words; `similarity.Comparer.supersedes` asks
it, after the near-duplicate test. Thresholds are tuned on tests/fixtures/pairs/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..textutil import STOPWORDS, has_hangul, short
from .lexicon import ANTONYMS, LIGHT, Synonyms
from .text_features import Features, Statement, canonical, dice, lexical_similarity, reversed_order, term_tokens

# A correction marker without a named replaced term needs this much overlap with what it corrects.
CORRECTION_THRESHOLD = 0.42
# Same words but another number: the words must agree this much.
NUMBER_CHANGE_THRESHOLD = 0.7
# A number that names one of a series ("module 3", "step 2", "phase 1-0"): which thing, not how much.
_LABEL_NUMBER_RE = re.compile(
    r"\b(?:module|step|phase|stage|part|section|chapter|page|item|task|issue|ticket|level|tier|lesson|week|day|"
    r"sprint|round|case|scenario|example|option|screen|slide|figure|table|row|column|node|worker|shard|replica|"
    r"zone|room|floor|unit|lab|exercise|question|problem|milestone|epic|story|test|job|pr|#)\s*#?\s*(\d[\w.-]*)",
    re.IGNORECASE,
)
# A file named by its name and extension (with its folders, if any), or a path written as one ("./gen", "~/src"):
# where a statement is, in a repository. Words joined by a slash ("DTO/model", "@Data/@Builder") are not.
_FILE_RE = re.compile(r"(?:(?<![\w/])(?:\.{1,2}|~)?/(?:[\w.-]+/)*[\w.-]*\w"
                      r"|(?:[\w.-]+/)*\b[\w-]+\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|"
                      r"php|vue|svelte|md|json|ya?ml|toml|ini|cfg|sql|sh|css|scss|html?))\b")
# The same words the other way round: most of the rest must agree too.
ORDER_THRESHOLD = 0.6
MAX_MARKER_TOKENS = 35
MAX_DIRECTIVE_TOKENS = 8
_NEGATION_WORDS = frozenset({"never", "not", "no", "without", "avoid", "longer", "不要", "不用", "不再", "禁止"})


@dataclass(frozen=True)
class Conflict:
    kind: str  # subject | number | correction | antonym | negation | order
    reason: str
    was: str


_TOPICAL_CATEGORIES = {"decision", "preference", "fact"}
_DIRECTIVE_CATEGORIES = {"decision", "preference"}


def _categories_meet(a: str, b: str) -> bool:
    return a == b or (a in _TOPICAL_CATEGORIES and b in _TOPICAL_CATEGORIES)


def _files(text: str) -> set[str]:
    return {found.lower() for found in _FILE_RE.findall(text)}


def _labels_only(text: str, numbers: list[str]) -> bool:
    """Whether every one of `numbers` stands in `text` as a label ("module 3"), not as a quantity."""
    labels = {m.group(1).lower().rstrip(".-") for m in _LABEL_NUMBER_RE.finditer(text)}
    return bool(numbers) and all(n.lower() in labels for n in numbers)


def supersedes(new: Statement, old: Statement, features: Callable[[str], Features], syn: Synonyms) -> Conflict | None:
    """Why `new` replaces `old`, or None. Assumes `new` is the later statement and not a duplicate.

    `features` gives a text's features (the caller's cache).
    """
    if new.tentative or not _categories_meet(new.category, old.category):
        return None
    a, b = features(new.text), features(old.text)
    found = (_by_subject(new, old, a, b, syn) or _by_number(new, old, a, b)
             or _by_marker(new, old, a, b, syn) or _by_negation(new, old, a, b)
             or _by_antonym(new, old, a, b) or _by_order(new, old, a, b))
    return found


def _by_subject(new: Statement, old: Statement, a: Features, b: Features, syn: Synonyms) -> Conflict | None:
    if not (new.subject and old.subject and new.value and old.value):
        return None
    subject = canonical(new.subject, syn)
    if subject != canonical(old.subject, syn) or new.category != old.category:
        return None
    if set(subject.split()) <= a.replaced:
        return None  # "X instead of <subject>": the subject is what was replaced, not a topic
    new_value, old_value = term_tokens(new.value, syn), term_tokens(old.value, syn)
    if new_value == old_value:
        return None  # the same value, written inside another word ("package.json:11") or with other words
    if not new_value or not (new_value - b.tokens):
        return None  # the new value was already part of the old statement
    drop = set(subject.split()) | new_value | old_value
    # What the statement says around the subject and value; CJK bigrams only when they carry content.
    context_a = (a.tokens - drop) - a.numbers - LIGHT - STOPWORDS - (a.tokens_cjk - a.cjk_heavy)
    context_b = (b.tokens - drop) - b.numbers - LIGHT - STOPWORDS - (b.tokens_cjk - b.cjk_heavy)
    if context_a and context_b:
        if ((a.critical & context_a) - b.tokens) or ((b.critical & context_b) - a.tokens):
            return None  # the same kind of thing about different things: the API's port, the admin's port
        overlap = len(context_a & context_b) / min(len(context_a), len(context_b))
        if overlap < 0.5:
            return None
        if (context_a - context_b) and (context_b - context_a) and not any(c.isdigit() for c in old.value + new.value):
            return None  # each names what the other does not: the billing service's tool, the search service's
    return Conflict("subject", f"{new.subject}: {old.value} → {new.value}", old.value)


def _by_number(new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
    if not _categories_meet(new.category, old.category) or not a.numbers or not b.numbers or a.numbers == b.numbers:
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
    if not after:
        return None  # no number the old one lacks: a part of it said again ("port 8000" of "port 8000, Django 5.0.6")
    if _labels_only(new.text, after) and _labels_only(old.text, before):
        return None  # another numbered thing ("module 3" → "module 4"), not another value for the same one
    return Conflict("number", f"{', '.join(before)} → {', '.join(after)}", ", ".join(dict.fromkeys(before)))


def _by_marker(new: Statement, old: Statement, a: Features, b: Features, syn: Synonyms) -> Conflict | None:
    if not a.marker and not a.replaced:
        return None
    if len(a.tokens) > MAX_MARKER_TOKENS or len(b.tokens) > MAX_MARKER_TOKENS:
        return None  # long prose mentions many things; a marker in it says little about which
    if a.replaced:
        if not a.replaced <= (b.tokens - b.negated_terms):
            return None
        where_a, where_b = _files(new.text), _files(old.text)
        if where_a and where_b and not where_a & where_b:
            return None  # the same change in another file ("rename tmp to buffer in api.py", "… in models.py")
        names = b.critical - b.replaced
        if a.replaced <= b.replaced and names and names <= a.tokens:
            return None  # the same replacement said again ("Dagster instead of Airflow", then "moved to Dagster …")
        # The replaced thing must be what the old memory is about: its value, or a good part of its words,
        # or the old memory ruled out what the new one now uses ("no Lombok" → "Lombok instead of records").
        old_value = term_tokens(old.value, syn) if old.value else frozenset()
        # Korean words are tokens already: their syllable pairs would count each word twice or more.
        substance = (b.heavy | b.critical | {g for g in b.cjk_heavy if not has_hangul(g)}) - STOPWORDS
        prominent = (bool(old_value & a.replaced) or bool(a.replaced & b.numbers)
                     or len(a.replaced & substance) >= 0.25 * max(1, len(substance)))
        flip = bool(b.negated_terms & (a.tokens - a.replaced))
        rest_a, rest_b = a.tokens - a.replaced - LIGHT, b.tokens - a.replaced - LIGHT
        if not (prominent or flip) or (not (rest_a & rest_b) and (len(rest_b) > 2 or len(rest_a) > 3)):
            return None  # mentions the replaced thing, but says something else about it
        said = f"'{a.marker}'" if a.marker else "the newer statement"
        return Conflict("correction", f"{said} replaces {' '.join(sorted(a.replaced))}", short(old.text))
    if new.category != old.category or lexical_similarity(a, b) < CORRECTION_THRESHOLD:
        return None
    # "Actually" alone is everyday prose: a name or number must have been swapped for another.
    swapped = (a.critical | a.numbers, b.critical | b.numbers)
    if len(a.tokens) <= MAX_DIRECTIVE_TOKENS and len(b.tokens) <= MAX_DIRECTIVE_TOKENS:
        swapped = (swapped[0] | a.heavy, swapped[1] | b.heavy)  # in a short statement any content word counts
    if not (swapped[0] - b.tokens) or not (swapped[1] - a.tokens):
        return None
    return Conflict("correction", f"'{a.marker}'", short(old.text))


def _by_antonym(new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
    # The same words with one swapped for its opposite: "above" / "below", "include" / "exclude".
    if new.category != old.category or a.negated != b.negated:
        return None
    only_b = b.tokens - a.tokens
    for word in a.tokens - b.tokens:
        for opposite in ANTONYMS.get(word, ()):
            if opposite in only_b and dice(a.tokens - {word}, b.tokens - {opposite}) >= 0.6:
                return Conflict("antonym", f"{opposite} → {word}", short(old.text))
    return None


def _by_order(new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
    # The same words with two of them the other way round: "Black over Ruff" / "Ruff over Black".
    if new.category != old.category or a.negated != b.negated or lexical_similarity(a, b) < ORDER_THRESHOLD:
        return None
    if reversed_order(a, b) is None:
        return None
    return Conflict("order", "the same words the other way round", short(old.text))


def _by_negation(new: Statement, old: Statement, a: Features, b: Features) -> Conflict | None:
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
    if not {t for t in flipped - LIGHT if len(t) > 1 or not t.isascii()}:  # (a lone letter: Spanish "y", Italian "e")
        return None
    others = (a.tokens & b.tokens) - flipped - LIGHT
    # Light verbs turned around say little: "I don't have X installed" does not rule out a plan to use X.
    if not others and len(flipped - LIGHT) < 2:
        return None
    if lexical_similarity(a, b) < 0.25:
        return None
    terms = " ".join(sorted(flipped))
    return Conflict("negation", f"no longer {terms}" if removed else f"{terms} again", short(old.text))
