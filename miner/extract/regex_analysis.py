"""What a regular expression's parse says before it runs: the literals every match contains, and whether
it can backtrack for ever.

Both read the standard library's own parse of a pattern (`parse`). The literal
requirements let the rule matcher (`rule_matching`) and the similarity layer
skip a regex on text that cannot match; `unsafe_repeat` refuses, at load, a
rule (`rules`) or a secret kind (`secret_rules`) that could hang on hostile text.
"""

from __future__ import annotations

import re
from typing import Any, Callable

try:  # the standard library's own regex parser, to find required literals (re._parser from Python 3.11)
    import re._compiler as sre_compile
    import re._parser as sre_parse
except ImportError:  # Python 3.10
    import sre_compile  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]


_POSIX_CLASS_RE = re.compile(r"(?<!\\)\[:\^?(?:alnum|alpha|ascii|blank|cntrl|digit|graph|lower|print|punct|space|"
                             r"upper|word|xdigit):\]")


def posix_class(pattern: str) -> str:
    """Why a pattern that uses a POSIX class (`[[:alpha:]]`) cannot be taken, or '': Python's regular expressions
    read it as a set of its characters, and only warn."""
    found = _POSIX_CLASS_RE.search(pattern)
    return (f"pattern {pattern[:200]!r} uses the POSIX class {found.group(0)}, which Python's regular expressions do "
            "not know: write \\w, \\d, \\s or a set such as [A-Za-z]") if found else ""


def empty_match(pattern: str, parsed: Any = None) -> str:
    r"""Why a pattern that can match empty text cannot be taken, or '': `x?`, `(?:todo:)?`, `\b`, `(?=\d)`, or
    only lookaheads. Its shortest match is no character at all, so it fires on (or, a secret's, marks) any text.
    `parsed`: the pattern's parse, when the caller has it."""
    if (parsed if parsed is not None else parse(pattern)).getwidth()[0]:
        return ""
    return (f"pattern {pattern[:200]!r} can match empty text, so it would match any text: give it "
            "characters it must find (not all of it optional, nor only lookaheads or boundaries)")


def parse(pattern: str) -> Any:
    """The standard library's parse of `pattern` (raises `re.error` as `re.compile` does)."""
    return sre_parse.parse(pattern)


def required_literals(pattern: str) -> frozenset[str] | None:
    """Lower-cased strings of which every match must contain at least one, or None if unknown.

    A necessary condition only: checking it is far cheaper than running the
    regex, and most units match no rule. The strongest of `literal_requirements`.
    """
    return _strongest(literal_requirements(pattern)) or None


def literal_requirements(pattern: str | Any) -> tuple[frozenset[str], ...]:
    """Every literal requirement of a pattern (a string or its parse): each a set one of which a match contains.

    Literal runs, and the requirements of groups and of repeats done at least
    once, all hold at once; an alternation holds one requirement per branch.
    Lookarounds and optional parts are ignored. Every literal lowers plainly
    (`plain_char`): a run is cut at a character that does not.
    """
    try:
        parsed = sre_parse.parse(pattern) if isinstance(pattern, str) else pattern
    except Exception:  # noqa: BLE001 - an unusual pattern simply gets no prefilter
        return ()
    return tuple(dict.fromkeys(frozenset(options) for options in _requirements(parsed) if _selective(options)))


def _selective(options: set[str]) -> bool:
    """False for a requirement nearly every text meets (a single letter or space): it filters nothing."""
    return not any(len(o) == 1 and o.isascii() and (o.isalnum() or o.isspace()) for o in options)


def plain_char(char: str) -> bool:
    """True when lower-casing maps `char` to the one character a case-insensitive regex compares it as: not
    so for characters with more than one case partner or a lower case of several characters (the long s, the
    dotless i, a capital I with a dot, sharp s, the Kelvin sign's partners and the like), nor for sigma, whose
    lower case depends on where it stands."""
    lower = char.lower()
    return len(lower) == 1 and char.upper().lower() == lower and lower.upper().lower() == lower \
        and char not in "\u03a3\u03c3\u03c2"


def _requirements(sub) -> list[set[str]]:
    found: list[set[str]] = []
    run = ""
    for op, av in sub:
        if op is sre_parse.LITERAL:
            char = chr(av)
            if plain_char(char):
                run += char.lower()
                continue
            # A literal is looked for in lower-cased text, which cannot show this character as the regex
            # compares it (the dotless i of a Turkish word matches "i" and "I" too): the run ends before it,
            # and each side is a requirement of its own.
            if run:
                found.append({run})
            run = ""
            continue
        if run:
            found.append({run})
            run = ""
        if op is sre_parse.SUBPATTERN:
            found += _requirements(av[3])
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT) and av[0] >= 1:
            found += _requirements(av[2])
        elif op is sre_parse.BRANCH:
            options: set[str] = set()
            for branch in av[1]:
                strongest = _strongest(_requirements(branch))
                if not strongest:
                    options = set()
                    break
                options |= strongest
            if options:
                found.append(options)
    if run:
        found.append({run})
    return found


def _strongest(requirements) -> frozenset[str]:
    """The requirement whose shortest literal is longest (the first such), or an empty set."""
    best: frozenset[str] = frozenset()
    for options in requirements:
        if options and (not best or min(map(len, options)) > min(map(len, best))):
            best = frozenset(options)
    return best


def literal_gate(required: tuple[tuple[frozenset[str], ...], ...]) -> frozenset[str] | None:
    """The literals one of which every match of the rule contains: each pattern's strongest requirement."""
    strongest = [_strongest(requirements) for requirements in required]
    return frozenset().union(*strongest) if strongest and all(strongest) else None


def unsafe_repeat(pattern: str, parsed: Any = None) -> str | None:
    """Why a pattern can backtrack catastrophically (a repeat of a repeat, both unbounded; a repeat of alternatives
    that spell the same text two ways), or None.

    Python's `re` cannot be interrupted, so such patterns are refused at load:
    `(\\w+\\s*)*` on a long line of words takes exponential time, and `(a|aa)+$` on a long run of a's. Bounded
    outer repeats such as `(?:\\w+\\s+){0,3}` stay allowed. `parsed` is the
    pattern's parse when the caller has it.
    """
    try:
        parsed = sre_parse.parse(pattern) if parsed is None else parsed
    except Exception:  # noqa: BLE001 - re.compile reports syntax errors
        return None
    found = _nested_repeat(parsed, parsed.state.flags)
    if found is AMBIGUOUS:
        return (f"pattern {pattern!r} repeats alternatives that spell the same text more than one way; it can hang "
                "on hostile text: make no alternative a run of others, e.g. `a+` for `(a|aa)+`")
    if found:
        return (f"pattern {pattern!r} nests an unbounded repeat inside another ({found}); it can hang on "
                "hostile text: bound the outer repeat, e.g. {0,5}, or make the inner part fixed-length")
    return None


_REPEATS = tuple(op for op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None))
                 if op is not None)


def _unbounded(av) -> bool:
    return av[1] == sre_parse.MAXREPEAT or av[1] > 50


# The most passes a bounded repeat may make of a group made only of repeats, one of them optional (`\w+\s?`: where
# the optional part matches nothing, one pass can end anywhere inside a word). Each pass more multiplies the ways a
# text can be split by about three: on a unit of 1,200 characters, `(?:\w+\s?){1,5}#` fails in 14 ms, {1,8} in
# 0.35 s, {1,10} in 3 s, {1,50} never ends. (`(?:\s+\w+){0,6}` splits one way only, and stays allowed.)
NESTED_PASSES = 5


def _loose(sub) -> tuple[bool, bool]:
    """Whether some way through the sequence (one alternative of each choice) is made of repeats only, and whether
    such a way can hold an unbounded one: `\\w+|,` can pass as `\\w+` alone, which two passes can split."""
    loose = False
    for op, av in sub:
        if op in _REPEATS:
            loose = loose or _unbounded(av) or _has_unbounded(av[2])
            continue
        if op is sre_parse.SUBPATTERN:
            ways = [_loose(av[3])]
        elif op is sre_parse.BRANCH:
            ways = [_loose(branch) for branch in av[1]]
        else:
            ways = []
        ways = [way for way in ways if way[0]]
        if not ways:
            return False, False
        loose = loose or any(way[1] for way in ways)
    return True, loose


AMBIGUOUS = "ambiguous"
FINITE_LIMIT = 64  # the most texts a repeated part's alternatives are spelt out to


class _SpeltTwice(Exception):
    """Two ways through a part spell the same text (`very |VERY ` under `(?i)`, `a|a`): repeated, it is ambiguous."""


def _spelt(sub, flags: int) -> set[str] | None:
    """Every text a sequence of literals, small classes and choices matches (at most FINITE_LIMIT), or None; raises
    `_SpeltTwice` when two of its ways (alternatives, or how they join) spell the same text."""
    fold = (lambda text: text.lower()) if flags & sre_parse.SRE_FLAG_IGNORECASE else (lambda text: text)
    texts = {""}
    for op, av in sub:
        if op is sre_parse.LITERAL:
            options = {fold(chr(av))}
        elif op is sre_parse.IN and all(o is sre_parse.LITERAL for o, _ in av):
            options = {fold(chr(c)) for _, c in av}  # (one class matches a character one way, whatever its case)
        elif op is sre_parse.SUBPATTERN:
            options = _spelt(av[3], flags | av[1])
        elif op is sre_parse.BRANCH:
            spelt = [_spelt(b, flags) for b in av[1]]
            options = None if None in spelt else set().union(*spelt)
            if options is not None and len(options) < sum(len(one) for one in spelt):
                raise _SpeltTwice
        else:
            return None
        if options is None or len(texts) * len(options) > FINITE_LIMIT:
            return None
        joined = {t + o for t in texts for o in options}
        if len(joined) < len(texts) * len(options):
            raise _SpeltTwice
        texts = joined
    return texts


def _spelt_ambiguous(sub, flags: int) -> bool:
    try:
        return _ambiguous(_spelt(sub, flags) or set())
    except _SpeltTwice:
        return True


def _ambiguous(words: set[str]) -> bool:
    """True when two different sequences of `words` spell the same text (`a`, `aa`: "aa" is one or two), by
    Sardinas and Patterson's test: a dangling suffix that is itself a word."""
    words = {w for w in words if w}
    dangling = {b[len(a):] for a in words for b in words if a != b and b.startswith(a)}
    seen: set[str] = set()
    while dangling - seen:
        if dangling & words:
            return True
        seen |= dangling
        dangling = ({w[len(d):] for d in dangling for w in words if w != d and w.startswith(d)}
                    | {d[len(w):] for d in dangling for w in words if d != w and d.startswith(w)}) - {""}
    return False


def _any_repeat(sub, test: Callable[[Any], bool]) -> bool:
    """True when a repeat anywhere in the sequence (groups and alternatives included) passes `test(av)`."""
    for op, av in sub:
        if op in _REPEATS and (test(av) or _any_repeat(av[2], test)):
            return True
        if op is sre_parse.SUBPATTERN and _any_repeat(av[3], test):
            return True
        if op is sre_parse.BRANCH and any(_any_repeat(b, test) for b in av[1]):
            return True
    return False


def _has_unbounded(sub) -> bool:
    return _any_repeat(sub, _unbounded)


def _has_optional(sub) -> bool:
    """True when a part of the sequence may match nothing (`?`, `*`, `{0,n}`)."""
    return _any_repeat(sub, lambda av: av[0] == 0)


# Characters a part of a pattern is tried on, to tell whether two parts can match the same one: letters, digits,
# blanks, punctuation, and a few beyond ASCII.
SAMPLES = "aZ0_ \t\n.,;:-/\\'\"()[]{}#@!?*+=<>|&%$^~`\u00e9\u00df\u4e2d\u0416\u00a0"


_WORD_CHARS = frozenset(c for c in SAMPLES if c.isalnum() or c == "_")


def _chars(item, state, flags: int) -> frozenset[str]:
    """The sample characters one item of a parse matches on its own (a repeat: one pass of it)."""
    op, av = item
    if op in _REPEATS:
        item = (sre_parse.SUBPATTERN, (None, 0, 0, av[2]))
    try:
        compiled = sre_compile.compile(sre_parse.SubPattern(state, [item]), flags)
    except Exception:  # noqa: BLE001 - a part that cannot stand alone (a back-reference): taken as matching all
        return frozenset(SAMPLES)
    return frozenset(c for c in SAMPLES if compiled.fullmatch(c))


def _unpinned_run(sub, state, flags: int) -> bool:
    """Whether the sequence holds an unbounded run and no single required character that every such run stops at:
    repeated, `(.*\\s)*` splits "a b c" every way the run can stop at a blank, while in `(\\S+\\s)*` or
    `(?:,\\s*\\w+)*` each pass ends where it must (at the blank, before the comma)."""
    runs = [item for item in sub if item[0] in _REPEATS and _unbounded(item[1])]
    if not runs:
        return False
    reach = frozenset().union(*(_chars(run, state, flags) for run in runs))
    if reach <= _WORD_CHARS and any(op is sre_parse.AT and av == sre_parse.AT_BOUNDARY for op, av in sub):
        return False  # (`(?:\\b\\w+)+`: a pass starts at a word's edge, never inside the word)
    return not any(op not in _REPEATS and op not in (sre_parse.SUBPATTERN, sre_parse.BRANCH) and op is not sre_parse.AT
                   and not _chars((op, av), state, flags) & reach for op, av in sub)


def _nested_repeat(sub, flags: int = 0) -> str | None:
    """A repeat of a repeat where the passes can split the text in many ways: `(a+)+`, `(\\w+\\s*)*`, `(.*,)*`."""
    for op, av in sub:
        children = []
        if op in _REPEATS:
            if op is not getattr(sre_parse, "POSSESSIVE_REPEAT", None):
                if _unbounded(av) and _loose(av[2]) == (True, True):
                    return "a `*`, `+` or `{n,}` repeating a group made only of repeats"
                body = av[2]
                if len(body) == 1 and body[0][0] is sre_parse.SUBPATTERN:
                    body = body[0][1][3]  # (the group's own parts)
                if _unbounded(av) and _unpinned_run(body, sub.state, flags):
                    return ("a `*`, `+` or `{n,}` repeating a group whose unbounded run can match every one of the "
                            "group's other parts, so its passes can end anywhere")
                if (_unbounded(av) or av[1] > NESTED_PASSES) and _spelt_ambiguous(av[2], flags):
                    return AMBIGUOUS
                if av[1] > NESTED_PASSES and _loose(av[2]) == (True, True) and _has_optional(av[2]):
                    return (f"{{{av[0]},{av[1]}}} repeating a group made only of repeats, one of them optional: at "
                            f"most {NESTED_PASSES} passes")
                children = [av[2]]
        elif op is sre_parse.SUBPATTERN:
            children = [av[3]]
        elif op is sre_parse.BRANCH:
            children = list(av[1])
        elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            children = [av[1]]
        for child in children:
            found = _nested_repeat(child, flags | av[1] if op is sre_parse.SUBPATTERN else flags)
            if found:
                return found
    return None
