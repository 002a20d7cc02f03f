"""YAML rules: schema, loading with overrides, compilation and matching.

A rule file holds `rules:` (a list) and optionally `disable:` (rule ids).
Files are read in order: the shipped defaults, then the user's
`$XDG_CONFIG_HOME/miner/rules/*.yaml`, then a project's
`.claude/miner-rules.yaml`. A later rule with an existing id replaces it.
Any problem is a `RuleError` naming the file, the line and the rule id.
"""

from __future__ import annotations

import re

try:  # the standard library's own regex parser, to find required literals (re._parser from Python 3.11)
    import re._parser as sre_parse
except ImportError:  # Python 3.10
    import sre_parse  # type: ignore[no-redef]
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Iterable

import yaml

from .model import CATEGORIES, ROLES

LANGS = ("en", "zh", "any")
SCOPES = ("project", "global")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
RULE_KEYS = {
    "id",
    "category",
    "lang",
    "roles",
    "patterns",
    "unless",
    "confidence",
    "scope",
    "subject",
    "tentative",
    "examples",
    "description",
    "effect",
}
# What a rule that fires does. keep (the default): the unit is a memory of the rule's category; hint: the
# classifier weighs the hit with everything else it sees, and decides; drop: the unit is never a memory.
# Every hit is also something the classifier sees (`classify.unit_tokens`).
EFFECTS = ("keep", "hint", "drop")
NON_RULE_FILES = {"synonyms.yaml", "secrets.yaml"}
RECENT_TEXTS = 4096  # texts whose hits each Matcher remembers (a few MB at most)


class RuleError(ValueError):
    """A rule file is broken; the message is one line naming file, line and rule."""


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
    # Per pattern, the literal requirements every match meets (each a set of lower-cased strings one of which
    # the text contains); per rule, the literals one of which any match of any pattern contains (None: unknown).
    required: tuple[tuple[frozenset[str], ...], ...] = ()
    gate: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if len(self.required) != len(self.patterns):
            object.__setattr__(self, "required", tuple(literal_requirements(p.pattern) for p in self.patterns))
            object.__setattr__(self, "gate", _gate(self.required))

    def applies(self, role: str, langs: Iterable[str]) -> bool:
        return role in self.roles and (self.lang == "any" or self.lang in langs)

    def literals(self) -> set[str]:
        """Every literal the prefilters look for."""
        return {literal for requirements in self.required for options in requirements for literal in options}

    def search(self, text: str, lowered: str | None = None) -> re.Match | None:
        """The first pattern match on `text` unless an `unless` pattern also matches."""
        lowered = text.lower() if lowered is None else lowered
        return self.search_present(text, {lit for lit in self.literals() if lit in lowered})

    def search_present(self, text: str, present: AbstractSet[str]) -> re.Match | None:
        """`search`, given which of the rule's literals the lower-cased text contains."""
        if self.gate is not None and present.isdisjoint(self.gate):
            return None  # no pattern of this rule can match
        for pattern, requirements in zip(self.patterns, self.required):
            for options in requirements:
                if present.isdisjoint(options):
                    break  # cannot match: a literal every match contains is missing
            else:
                found = pattern.search(text)
                if found:
                    return None if any(u.search(text) for u in self.unless) else found
        return None


def _gate(required: tuple[tuple[frozenset[str], ...], ...]) -> frozenset[str] | None:
    """The literals one of which every match of the rule contains: each pattern's strongest requirement."""
    strongest = [_strongest(requirements) for requirements in required]
    return frozenset().union(*strongest) if strongest and all(strongest) else None


class LiteralScan:
    """Which of many literals occur in a lower-cased text, found in one regex pass.

    The literals are compiled into one trie-shaped regex inside a lookahead, so
    that `findall` reports, at every position, the longest literal starting
    there. Every literal that occurs is a prefix of one of those, so adding the
    literal prefixes of each found literal gives exactly the set that occurs.
    """

    def __init__(self, literals: Iterable[str]):
        known = set(literals)
        self._prefixes = {lit: frozenset(lit[:n] for n in range(1, len(lit) + 1) if lit[:n] in known) for lit in known}
        self._regex = re.compile("(?=(" + _trie_regex(sorted(known)) + "))", re.DOTALL) if known else None

    def present(self, lowered: str) -> frozenset[str]:
        """The literals that occur in `lowered`."""
        found = self._regex.findall(lowered) if self._regex is not None else ()
        return frozenset().union(*map(self._prefixes.__getitem__, found)) if found else frozenset()


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
        """Every rule that fires on `text`, best confidence first."""
        hits = self._recent.get(text)
        if hits is None:
            if len(self._recent) >= RECENT_TEXTS:
                self._recent.clear()
            hits = self._recent[text] = tuple(self._match(text))
        return list(hits)

    def _match(self, text: str) -> list[Hit]:
        present = self._scan.present(text.lower())
        hits = []
        for position in self._candidates(present):
            rule = self.rules[position]
            found = rule.search_present(text, present)
            if found:
                hits.append(Hit(rule, found))
        hits.sort(key=lambda h: -h.rule.confidence)
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
        """Every rule that fires on `text`, best confidence first.

        The same hits, in the same order, as `Rule.search` on every rule that
        applies to `role` and `langs`, only faster (see `Matcher`).
        """
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
    Lookarounds and optional parts are ignored.
    """
    try:
        parsed = sre_parse.parse(pattern) if isinstance(pattern, str) else pattern
    except Exception:  # noqa: BLE001 - an unusual pattern simply gets no prefilter
        return ()
    return tuple(dict.fromkeys(frozenset(options) for options in _requirements(parsed) if _selective(options)))


def _selective(options: set[str]) -> bool:
    """False for a requirement nearly every text meets (a single letter or space): it filters nothing."""
    return not any(len(o) == 1 and o.isascii() and (o.isalnum() or o.isspace()) for o in options)


def _requirements(sub) -> list[set[str]]:
    found: list[set[str]] = []
    run = ""
    for op, av in sub:
        if op is sre_parse.LITERAL:
            run += chr(av).lower()
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


def unsafe_repeat(pattern: str, parsed: Any = None) -> str | None:
    """Why a pattern can backtrack catastrophically (a repeat of a repeat, both unbounded), or None.

    Python's `re` cannot be interrupted, so such patterns are refused at load:
    `(\\w+\\s*)*` on a long line of words takes exponential time. Bounded
    outer repeats such as `(?:\\w+\\s+){0,3}` stay allowed. `parsed` is the
    pattern's parse when the caller has it.
    """
    try:
        parsed = sre_parse.parse(pattern) if parsed is None else parsed
    except Exception:  # noqa: BLE001 - re.compile reports syntax errors
        return None
    found = _nested_repeat(parsed)
    if found:
        return (f"pattern {pattern!r} nests an unbounded repeat inside another ({found}); it can hang on "
                "hostile text: bound the outer repeat, e.g. {0,5}, or make the inner part fixed-length")
    return None


_REPEATS = tuple(op for op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None))
                 if op is not None)


def _unbounded(av) -> bool:
    return av[1] == sre_parse.MAXREPEAT or av[1] > 50


def _only_repeats(sub) -> bool:
    """True when a sequence is made of repeats only: nothing fixed separates one pass from the next."""
    for op, av in sub:
        if op in _REPEATS:
            continue
        if op is sre_parse.SUBPATTERN and _only_repeats(av[3]):
            continue
        if op is sre_parse.BRANCH and all(_only_repeats(b) for b in av[1]):
            continue
        return False
    return True


def _has_unbounded(sub) -> bool:
    for op, av in sub:
        if op in _REPEATS and (_unbounded(av) or _has_unbounded(av[2])):
            return True
        if op is sre_parse.SUBPATTERN and _has_unbounded(av[3]):
            return True
        if op is sre_parse.BRANCH and any(_has_unbounded(b) for b in av[1]):
            return True
    return False


def _nested_repeat(sub, outer_unbounded: bool = False) -> str | None:
    """A repeat of a repeat where the passes can split the text in many ways: `(a+)+`, `(\\w+\\s*)*`."""
    for op, av in sub:
        children = []
        if op in _REPEATS:
            if op is not getattr(sre_parse, "POSSESSIVE_REPEAT", None):
                if _unbounded(av) and _only_repeats(av[2]) and _has_unbounded(av[2]):
                    return "a `*`, `+` or `{n,}` repeating a group made only of repeats"
                children = [av[2]]
        elif op is sre_parse.SUBPATTERN:
            children = [av[3]]
        elif op is sre_parse.BRANCH:
            children = list(av[1])
        elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            children = [av[1]]
        for child in children:
            found = _nested_repeat(child)
            if found:
                return found
    return None


def _fail(source: str, line: int, rule_id: str, message: str) -> RuleError:
    where = f"{source}:{line}" if line else source
    who = f" rule {rule_id}" if rule_id else ""
    return RuleError(f"{where}:{who}: {message}".replace(": :", ":"))


def _compile(source: str, line: int, rule_id: str, pattern: Any) -> tuple[re.Pattern, tuple[frozenset[str], ...]]:
    """The compiled pattern and its literal requirements; the safety check and the requirements share one parse."""
    if not isinstance(pattern, str) or not pattern:
        raise _fail(source, line, rule_id, "each pattern must be a non-empty string")
    try:
        compiled = re.compile(pattern)
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise _fail(source, line, rule_id, f"pattern {pattern!r} does not compile: {exc}") from None
    problem = unsafe_repeat(pattern, parsed)
    if problem:
        raise _fail(source, line, rule_id, problem)
    return compiled, literal_requirements(parsed)


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def parse_rule(raw: Any, source: str, line: int, default_lang: str) -> Rule:
    """Validate one rule mapping and compile it."""
    if not isinstance(raw, dict):
        raise _fail(source, line, "", "each rule must be a mapping")
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not rule_id.strip():
        raise _fail(source, line, "", "a rule needs an `id`")
    unknown = set(raw) - RULE_KEYS
    if unknown:
        raise _fail(source, line, rule_id, f"unknown key(s) {', '.join(sorted(unknown))}")
    effect = raw.get("effect", "keep")
    if effect not in EFFECTS:
        raise _fail(source, line, rule_id, f"`effect` must be one of {', '.join(EFFECTS)}")
    category = raw.get("category", "decision" if effect == "drop" else None)
    if category not in CATEGORIES:
        raise _fail(source, line, rule_id, f"`category` must be one of {', '.join(CATEGORIES)}")
    lang = raw.get("lang", default_lang)
    if lang not in LANGS:
        raise _fail(source, line, rule_id, f"`lang` must be one of {', '.join(LANGS)}")
    roles = tuple(_as_list(raw.get("roles", ["user"])))
    if not roles or any(r not in ROLES for r in roles):
        raise _fail(source, line, rule_id, "`roles` must list user and/or assistant")
    if category == "preference" and "assistant" in roles:
        raise _fail(source, line, rule_id, "preferences come from the user only; drop `assistant` from `roles`")
    patterns = _as_list(raw.get("patterns"))
    if not patterns:
        raise _fail(source, line, rule_id, "a rule needs at least one pattern in `patterns`")
    confidence = raw.get("confidence", 0.6)
    if not isinstance(confidence, (int, float)) or not 0 < confidence <= 1:
        raise _fail(source, line, rule_id, "`confidence` must be a number in (0, 1]")
    scope = raw.get("scope", "project")
    if scope not in SCOPES:
        raise _fail(source, line, rule_id, "`scope` must be project or global")
    subject = raw.get("subject", "")
    if not isinstance(subject, str):
        raise _fail(source, line, rule_id, "`subject` must be a string")
    examples = raw.get("examples") or {}
    if not isinstance(examples, dict) or set(examples) - {"match", "no_match"}:
        raise _fail(source, line, rule_id, "`examples` must have only `match` and `no_match` lists")
    match_examples = tuple(_as_list(examples.get("match")))
    no_match_examples = tuple(_as_list(examples.get("no_match")))
    if not all(isinstance(e, str) for e in match_examples + no_match_examples):
        raise _fail(source, line, rule_id, "examples must be strings")
    compiled = [_compile(source, line, rule_id, p) for p in patterns]
    required = tuple(requirements for _, requirements in compiled)
    return Rule(
        id=rule_id.strip(),
        category=category,
        lang=lang,
        roles=roles,
        patterns=tuple(pattern for pattern, _ in compiled),
        unless=tuple(_compile(source, line, rule_id, p)[0] for p in _as_list(raw.get("unless"))),
        required=required,
        gate=_gate(required),
        confidence=float(confidence),
        scope=scope,
        subject=subject,
        tentative=bool(raw.get("tentative", False)),
        match_examples=match_examples,
        no_match_examples=no_match_examples,
        source=source,
        line=line,
        description=str(raw.get("description", "")),
        effect=effect,
    )


def load_file(path: Path | str, text: str | None = None) -> tuple[list[Rule], set[str]]:
    """Rules and disabled ids of one file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8") if text is None else text
        # One parse: the node tree gives line numbers, the same tree gives the data.
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except OSError as exc:
        raise _fail(source, 0, "", f"cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        raise _fail(source, line, "", f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return [], set()
    if not isinstance(data, dict):
        raise _fail(source, 1, "", "a rule file must be a mapping with `rules:` and/or `disable:`")
    unknown = set(data) - {"rules", "disable", "lang", "version"}
    if unknown:
        raise _fail(source, 1, "", f"unknown top-level key(s) {', '.join(sorted(unknown))}")
    default_lang = data.get("lang", "any")
    raw_rules = data.get("rules") or []
    if not isinstance(raw_rules, list):
        raise _fail(source, 1, "", "`rules` must be a list")
    lines = _item_lines(node, "rules")
    rules = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_rules):
        line = lines[i] if i < len(lines) else 0
        rule = parse_rule(raw, source, line, default_lang)
        if rule.id in seen:
            raise _fail(source, line, rule.id, "duplicate rule id in this file")
        seen.add(rule.id)
        rules.append(rule)
    disabled = data.get("disable") or []
    if not isinstance(disabled, list) or not all(isinstance(d, str) for d in disabled):
        raise _fail(source, 1, "", "`disable` must be a list of rule ids")
    return rules, set(disabled)


def _item_lines(node: Any, key: str) -> list[int]:
    """1-based line of each item of the top-level list `key`."""
    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if getattr(k, "value", None) == key and isinstance(v, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in v.value]
    return []


def default_rules_dir() -> Path:
    """The shipped rule folder: `miner/default_rules` in an installed wheel, `rules/` in a source checkout."""
    here = Path(__file__).resolve().parent.parent
    installed = here / "default_rules"
    return installed if installed.is_dir() else here.parent / "rules"


def default_rule_files() -> list[Path]:
    return sorted(p for p in default_rules_dir().glob("*.yaml") if p.name not in NON_RULE_FILES)


def user_rule_files(config_dir: Path) -> list[Path]:
    folder = config_dir / "rules"
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def project_rule_file(project: str | None) -> list[Path]:
    if not project:
        return []
    path = Path(project) / ".claude" / "miner-rules.yaml"
    return [path] if path.is_file() else []


def rule_files(project: str | None = None) -> list[Path]:
    """Every rule file that applies to `project`, in the order they load: shipped, the user's, the project's."""
    from .. import paths

    return default_rule_files() + user_rule_files(paths.config_dir()) + project_rule_file(project)


_parsed: dict[tuple[str, float, int], tuple[list[Rule], set[str]]] = {}


def load_file_cached(path: Path | str) -> tuple[list[Rule], set[str]]:
    """`load_file`, parsed once per process while the file is unchanged."""
    try:
        st = Path(path).stat()
        key = (str(path), st.st_mtime, st.st_size)
    except OSError:
        return load_file(path)
    if key not in _parsed:
        _parsed[key] = load_file(path)
    return _parsed[key]


def load_rules(files: Iterable[Path | str]) -> RuleSet:
    """Merge rule files in order: later ids override earlier ones, `disable` removes."""
    by_id: dict[str, Rule] = {}
    disabled: set[str] = set()
    names = []
    for path in files:
        rules, off = load_file_cached(path)
        names.append(str(path))
        for rule in rules:
            by_id[rule.id] = rule
            disabled.discard(rule.id)
        disabled |= off
    rules = [r for rid, r in by_id.items() if rid not in disabled]
    return RuleSet(rules=rules, files=names, disabled=disabled)


def check_examples(ruleset: RuleSet) -> list[str]:
    """One line per rule example that does not behave as declared."""
    problems = []
    for rule in ruleset.rules:
        for text in rule.match_examples:
            if not rule.search(text):
                problems.append(f"{rule.source}:{rule.line}: rule {rule.id}: example should match but does not: {text!r}")
        for text in rule.no_match_examples:
            if rule.search(text):
                problems.append(f"{rule.source}:{rule.line}: rule {rule.id}: example should not match but does: {text!r}")
    return problems
