"""Rules as compiled records, and matching them against a unit's text fast.

A `Rule` holds its compiled patterns and the literals every match of them
contains (`regex_analysis`); `rules` builds rules from the YAML files and
merges them into a `RuleSet`. The literals that gate the rules are found in
one regex pass (`LiteralScan`), so a rule none of whose literals occur costs
nothing; a `Matcher` answers texts said again from a bounded memo. A rule
that fires gives a `Hit`. No YAML here: what only matches needs no parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import AbstractSet, Iterable

from . import regex_cache
from .regex_analysis import literal_gate, literal_requirements, plain_char

RECENT_TEXTS = 4096  # texts whose hits each Matcher remembers (a few MB at most)
CLASSIFIER_RULE_PREFIX = "classifier."  # the id of a hit that stands for the classifier ("classifier.fact")


@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    lang: str
    roles: tuple[str, ...]
    patterns: tuple[re.Pattern, ...]
    unless: tuple[re.Pattern, ...] = ()
    confidence: float = 0.6
    scope: str = "project"
    subject: str = ""
    tentative: bool = False
    match_examples: tuple[str, ...] = ()
    no_match_examples: tuple[str, ...] = ()
    source: str = ""
    line: int = 0
    description: str = ""
    effect: str = "keep"
    own: bool = False  # the user's (or the project's) rule: it decides before any shipped rule that fires too
    # Per pattern, the literal requirements every match meets (each a set of lower-cased strings one of which
    # the text contains); per rule, the literals one of which any match of any pattern contains (None: unknown).
    required: tuple[tuple[frozenset[str], ...], ...] = ()
    gate: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if len(self.required) != len(self.patterns):
            object.__setattr__(self, "required", tuple(literal_requirements(p.pattern) for p in self.patterns))
            object.__setattr__(self, "gate", literal_gate(self.required))

    def applies(self, role: str, langs: Iterable[str]) -> bool:
        return role in self.roles and (self.lang == "any" or self.lang in langs)

    @property
    def from_classifier(self) -> bool:
        """Whether this stands for the classifier's decision, not for a rule of a file."""
        return self.id.startswith(CLASSIFIER_RULE_PREFIX)

    def literals(self) -> set[str]:
        """Every literal the prefilters look for."""
        return {literal for requirements in self.required for options in requirements for literal in options}

    def search(self, text: str) -> re.Match | None:
        """The first pattern match on `text` unless an `unless` pattern also matches (on the text as the rules
        read it: `as_rules_read`)."""
        text = as_rules_read(text)
        literals = self.literals()
        if not (lowers_plainly(text) and lowers_plainly("".join(literals))):
            return self.search_present(text, None)  # lower-casing cannot tell: as `LiteralScan.present_in`
        lowered = text.lower()
        return self.search_present(text, {lit for lit in literals if lit in lowered})

    def search_present(self, text: str, present: AbstractSet[str] | None) -> re.Match | None:
        """`search`, given which of the rule's literals the lower-cased text contains (None: not known, every
        pattern is tried)."""
        if present is not None and self.gate is not None and present.isdisjoint(self.gate):
            return None  # no pattern of this rule can match
        for pattern, requirements in zip(self.patterns, self.required):
            if present is not None and any(present.isdisjoint(options) for options in requirements):
                continue  # cannot match: a literal every match contains is missing
            found = pattern.search(text)
            if found:
                return None if any(u.search(text) for u in self.unless) else found
        return None


class LiteralScan:
    """Which of many literals occur in a lower-cased text, found in one regex pass.

    The literals are compiled into one trie-shaped regex inside a lookahead, so
    that `findall` reports, at every position, the longest literal starting
    there. Every literal that occurs is a prefix of one of those, so adding the
    literal prefixes of each found literal gives exactly the set that occurs.

    A lower-cased literal gates a case-insensitive pattern only where lower-casing
    shows each character as the regex engine compares it (`lowers_plainly`):
    `present_in` answers None for a text, or literals, where it does not.
    """

    def __init__(self, literals: Iterable[str]):
        known = set(literals)
        self._prefixes = {lit: frozenset(lit[:n] for n in range(1, len(lit) + 1) if lit[:n] in known) for lit in known}
        self._regex = regex_cache.compile(_scan_pattern(known), re.DOTALL) if known else None
        self._plain = lowers_plainly("".join(known))

    def present(self, lowered: str) -> frozenset[str]:
        """The literals that occur in `lowered`."""
        found = self._regex.findall(lowered) if self._regex is not None else ()
        return frozenset().union(*map(self._prefixes.__getitem__, found)) if found else frozenset()

    def present_in(self, text: str) -> frozenset[str] | None:
        """The literals that occur in `text` lower-cased, or None when lower-casing cannot tell."""
        return self.present(text.lower()) if self._plain and lowers_plainly(text) else None


_PLAIN_SEEN: set[str] = set()  # characters found plain so far (a few thousand at most: those of the texts read)


def lowers_plainly(text: str) -> bool:
    """True when lower-casing maps every character of `text` to the one character a case-insensitive regex
    compares it as (`regex_analysis.plain_char`)."""
    if text.isascii():
        return True  # every ASCII character lowers plainly
    new = set(text).difference(_PLAIN_SEEN)
    if new:
        if not all(map(plain_char, new)):
            return False
        _PLAIN_SEEN.update(new)
    return True


def _scan_pattern(literals: set[str]) -> str:
    """The lookahead pattern of a `LiteralScan`, kept between processes (`regex_cache`) by its literals' digest."""
    import hashlib

    ordered = sorted(literals)
    digest = hashlib.sha256("\0".join(ordered).encode("utf-8", "surrogatepass")).hexdigest()
    return regex_cache.memo("literal-scan", digest, lambda: "(?=(" + _trie_regex(ordered) + "))",
                            lambda value: isinstance(value, str))


def _trie_regex(words: list[str]) -> str:
    """One regex matching the longest of `words` that starts at the current position."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here
    return _node_regex(trie)


def _node_regex(node: dict) -> str:
    leaves = sorted(c for c, child in node.items() if c and set(child) == {""})
    inner = [re.escape(c) + _node_regex(child) for c, child in sorted(node.items()) if c and set(child) != {""}]
    if len(leaves) == 1:
        inner.append(re.escape(leaves[0]))
    elif leaves:
        inner.append("[" + "".join(re.escape(c) for c in leaves) + "]")
    body = inner[0] if len(inner) == 1 else "(?:" + "|".join(inner) + ")"
    # Greedy: a longer word through this node is preferred to the word that ends here.
    return f"(?:{body})?" if "" in node else body


def as_rules_read(text: str) -> str:
    """`text` with its typographic apostrophes straight: rules are written with "don't", and macOS and phone
    keyboards type "don’t". One character for one, so a match's offsets hold for `text` as given."""
    return text.replace("\u2019", "'") if "\u2019" in text else text


@dataclass(frozen=True)
class Hit:
    rule: Rule
    match: re.Match

    @property
    def value(self) -> str:
        groups = self.match.groupdict()
        return (groups.get("value") or "").strip()

    @property
    def subject(self) -> str:
        groups = self.match.groupdict()
        return (groups.get("subject") or self.rule.subject or "").strip()


class Matcher:
    """Matching for one list of rules (those that apply to a role and languages).

    The literals that gate the rules are found in one pass (`LiteralScan`), so
    a rule none of whose literals occur costs nothing. Texts said again
    ("Perfect!", a pasted line) are answered from a bounded memo.
    """

    def __init__(self, rules: Iterable[Rule]):
        self.rules = tuple(rules)
        self._scan = LiteralScan(lit for rule in self.rules for lit in rule.literals())
        self._ungated = frozenset(i for i, rule in enumerate(self.rules) if rule.gate is None)
        by_literal: dict[str, set[int]] = {}
        for position, rule in enumerate(self.rules):
            for literal in rule.gate or ():
                by_literal.setdefault(literal, set()).add(position)
        self._by_literal = {literal: frozenset(found) for literal, found in by_literal.items()}
        self._recent: dict[str, tuple[Hit, ...]] = {}

    def match(self, text: str) -> list[Hit]:
        """Every rule that fires on `text`: the user's first, then the shipped ones; each best confidence first."""
        hits = self._recent.get(text)
        if hits is None:
            if len(self._recent) >= RECENT_TEXTS:
                self._recent.clear()
            hits = self._recent[text] = tuple(self._match(text))
        return list(hits)

    def _match(self, text: str) -> list[Hit]:
        present = self._scan.present_in(text)
        hits = []
        for position in range(len(self.rules)) if present is None else self._candidates(present):
            rule = self.rules[position]
            found = rule.search_present(text, present)
            if found:
                hits.append(Hit(rule, found))
        hits.sort(key=lambda h: (not h.rule.own, -h.rule.confidence))
        return hits

    def _candidates(self, present: frozenset[str]) -> list[int]:
        """Positions, in order, of the rules whose gate lets `present` through."""
        by_literal = self._by_literal
        return sorted(self._ungated.union(*[by_literal[lit] for lit in present if lit in by_literal]))


# Matchers by rule list, shared by the RuleSets of every project that has no rules of its own.
_shared_matchers: dict[tuple[Rule, ...], Matcher] = {}
MAX_MATCHERS = 32


def matcher_for(rules: Iterable[Rule]) -> Matcher:
    """The shared `Matcher` of a list of rules (built on first use)."""
    key = tuple(rules)
    found = _shared_matchers.get(key)
    if found is None:
        if len(_shared_matchers) >= MAX_MATCHERS:
            _shared_matchers.clear()
        found = _shared_matchers[key] = Matcher(key)
    return found


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    _matchers: dict[tuple[str, tuple[str, ...]], Matcher] = field(default_factory=dict, repr=False)

    def match(self, text: str, role: str, langs: Iterable[str]) -> list[Hit]:
        """Every rule that fires on `text`: the user's first, then the shipped ones; each best confidence first.

        The same hits, in the same order, as `Rule.search` on every rule that
        applies to `role` and `langs`, only faster (see `Matcher`), on the text as the rules read it
        (`as_rules_read`).
        """
        text = as_rules_read(text)
        key = (role, tuple(langs))
        matcher = self._matchers.get(key)
        if matcher is None:
            matcher = self._matchers[key] = matcher_for(r for r in self.rules if r.applies(role, key[1]))
        hits = matcher.match(text)
        if not hits and "**" in text:
            # Bold is emphasis, not content: "- **`DEBUG`** env var for verbose logging" states what
            # "- `DEBUG` env var for verbose logging" does. Rules that read bold as a label match first.
            hits = matcher.match(text.replace("**", ""))
        return hits

    def get(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)
