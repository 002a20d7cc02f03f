"""Cue families (`cues`): the literal pass that skips most pattern searches must give the patterns' own answer.

Every test compares `cue_families` with the families' patterns searched one by one, the way they were before the
literal pass, on generated texts: the families' own literals in any case, among words, with the characters a
lower-cased text would not show as the regex engine compares them (the long s, the dotless i, a capital I with a
dot, the Kelvin sign, the Angstrom sign, sharp s, sigma).
"""

from __future__ import annotations

import random
import re

import pytest

from miner.extract import cues

PLAIN_PATTERNS = [(name, re.compile(pattern, re.IGNORECASE)) for name, pattern in cues.CUES.items()]
ODD = {"s": ["ſ", "S"], "i": ["ı", "İ", "I"], "k": ["\u212a", "K"], "a": ["\u212b", "A", "Å"], "e": ["É", "E"]}
FILLER = ["the", "config", "模块", "проект", "데이터", "il", "file", "todo.md", "—", "(", ")", ":", "\n- "]


def by_patterns(text: str) -> tuple[str, ...]:
    return tuple(name for name, pattern in PLAIN_PATTERNS if pattern.search(text))


def literals() -> list[str]:
    cues.cue_families("")
    return sorted(set().union(*(gate for gate in cues._SCAN.gates.values() if gate)))


def generated(seed: int, count: int):
    rng = random.Random(seed)
    pool = literals()
    for _ in range(count):
        words = [rng.choice(pool) if rng.random() < 0.5 else rng.choice(FILLER) for _ in range(rng.randint(1, 6))]
        text = rng.choice([" ", "", "  "]).join(words)
        text = "".join(rng.choice(ODD[c]) if c in ODD and rng.random() < 0.25 else
                       c.upper() if rng.random() < 0.2 else c for c in text)
        if rng.random() < 0.2:
            text = rng.choice(["ΑΣ ", "Straße ", "ǅ ", "Ω "]) + text
        yield text


def test_every_family_is_gated_by_its_literals():
    """The pass only pays if every family has literals to look for; with none it would search every pattern."""
    cues.cue_families("")
    assert all(gate for gate in cues._SCAN.gates.values())


class CountingPattern:
    def __init__(self, pattern: re.Pattern):
        self.pattern, self.searches = pattern, 0

    def search(self, text: str):
        self.searches += 1
        return self.pattern.search(text)


@pytest.mark.parametrize("text,searched", [
    ("Build logs are clean.", set()),
    ("Why did it break? Because the cache was stale.", {"cause"}),
    ("Artık olarak", set(cues.CUES)),  # lower-casing cannot show the dotless i as the regex compares it
])
def test_a_family_none_of_whose_literals_occur_is_not_searched(text, searched):
    scan = cues._CueScan()
    scan.patterns = [(name, CountingPattern(pattern)) for name, pattern in scan.patterns]
    assert scan.families(text) == by_patterns(text)
    assert {name for name, pattern in scan.patterns if pattern.searches} >= searched
    if not searched:
        assert not any(pattern.searches for _, pattern in scan.patterns)


@pytest.mark.parametrize("seed", range(4))
def test_the_literal_pass_gives_the_patterns_answer(seed):
    texts = list(generated(seed, 5000))
    assert sum(bool(by_patterns(t)) for t in texts) > 1000  # the texts do meet families, and many
    assert [cues.cue_families(t) for t in texts] == [by_patterns(t) for t in texts]


@pytest.mark.parametrize("text,family", [
    ("alwayſ", "lasting"),  # the long s is an s to the case-insensitive regex, not to str.lower
    ("BECAUSE", "cause"),
    ("I WANT ıt", "wish"),
    ("İ want it", "wish"),
    ("ΑΣ, for now", "defer"),
    ("Straße: later", "defer"),
    ("ARTIK", "state"),  # Turkish: the dotless i matches "i" and "I" too
    ("artik", "state"),
    ("artık", "state"),
])
def test_characters_lower_casing_does_not_show_as_the_regex_compares_them(text, family):
    assert family in by_patterns(text)
    assert cues.cue_families(text) == by_patterns(text)


def test_texts_without_any_cue_meet_none():
    for text in ("", "x", "42", "`src/app.py`", "模块"):
        assert cues.cue_families(text) == by_patterns(text) == ()
