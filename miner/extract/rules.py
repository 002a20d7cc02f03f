"""YAML rules: schema, validation and compilation, loading with overrides, and the rules' own examples.

A rule file holds `rules:` (a list) and optionally `disable:` (rule ids).
Files are read in order: the shipped defaults, then the user's
`$XDG_CONFIG_HOME/miner/rules/*.yaml` (and `*.yml`), then a project's
`.claude/miner-rules.yaml`. A later rule with an existing id replaces it.
A project's file comes with the repository (a clone brings its author's), so
it applies only once the user has trusted it as it is (`miner rules trust`
records its digest); changed since, it is left out until trusted again.
Any problem is a `RuleError` naming the file, the line and the rule id.

Each rule is validated and compiled here into a `Rule`, and the merged rules
into a `RuleSet`; matching them against text is `rule_matching`'s, what a
pattern's parse tells (its literals, whether it is safe) `regex_analysis`'s.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Iterable

import yaml

from . import regex_cache
from .model import CATEGORIES, ROLES
from .regex_analysis import empty_match, literal_gate, literal_requirements, parse, posix_class, unsafe_repeat
from .rule_matching import Rule, RuleSet, as_rules_read
from .rule_trust import PROJECT_RULE_FILE, TRUST_FILE, digest, is_trusted
from .rule_trust import trusted as trusted_files

LANGS = ("en", "zh", "any")
SCOPES = ("project", "global")
# libyaml's loader when PyYAML has it (about ten times faster: every miner process reads the rule files, the
# secrets file and the synonyms), else the pure-Python one; both build the same values.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
NON_RULE_FILES = {"synonyms.yaml", "secrets.yaml", "glossary.yaml"}


class RuleError(ValueError):
    """A rule file is broken; the message is one line naming file, line and rule."""


def _fail(source: str, line: int, rule_id: str, message: str) -> RuleError:
    where = f"{source}:{line}" if line else source
    who = f" rule {rule_id}" if rule_id else ""
    return RuleError(f"{where}:{who}: {message}" if who else f"{where}: {message}")


def _compile(source: str, line: int, rule_id: str, pattern: Any) -> tuple[re.Pattern, tuple[frozenset[str], ...]]:
    """The compiled pattern and its literal requirements; the safety check and the requirements share one parse.

    All three are kept between processes (`regex_cache`), keyed by the pattern's text.
    """
    if not isinstance(pattern, str) or not pattern:
        raise _fail(source, line, rule_id, "each pattern must be a non-empty string")
    pattern = as_rules_read(pattern)  # (the texts' "don’t" is read as "don't": so is a pattern's, or it never matches)
    posix = posix_class(pattern)
    if posix:
        raise _fail(source, line, rule_id, posix)
    try:
        compiled = regex_cache.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:  # (a repeat count past C's, 2,000 nested groups)
        reason = exc if isinstance(exc, re.error) else f"{type(exc).__name__}: too large or too deeply nested"
        raise _fail(source, line, rule_id, f"pattern {pattern[:200]!r} does not compile: {reason}") from None
    problem, requirements = regex_cache.memo("rule-pattern", pattern, lambda: _analyse(pattern), _is_analysis)
    if problem:
        raise _fail(source, line, rule_id, problem)
    return compiled, requirements


def _analyse(pattern: str) -> tuple[str, tuple[frozenset[str], ...]]:
    """What a rule pattern's parse says: why it is unsafe or can match empty text ('' when neither), and its literal
    requirements (kept between processes by `regex_cache`, whose file is another for another version of this code)."""
    parsed = parse(pattern)
    return unsafe_repeat(pattern, parsed) or empty_match(pattern, parsed), literal_requirements(parsed)


def _is_analysis(value: Any) -> bool:
    return (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], tuple)
            and all(isinstance(options, frozenset) for options in value[1]))


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def parse_rule(raw: Any, source: str, line: int, default_lang: str) -> Rule:
    """Validate one rule mapping and compile it."""
    if not isinstance(raw, dict):
        raise _fail(source, line, "", "each rule must be a mapping")
    rule_id = raw.get("id")
    if rule_id is not None and not isinstance(rule_id, str):
        raise _fail(source, line, "", f"`id` must be a string (put {rule_id!r} in quotes, or a word before it)")
    if not isinstance(rule_id, str) or not rule_id.strip():
        raise _fail(source, line, "", "a rule needs an `id`")
    unknown = set(raw) - RULE_KEYS
    if unknown:
        raise _fail(source, line, rule_id, unknown_keys(unknown, RULE_KEYS))
    effect = raw.get("effect", "keep")
    if effect not in EFFECTS:
        raise _fail(source, line, rule_id, f"`effect` must be one of {', '.join(EFFECTS)}")
    category = raw.get("category", "decision" if effect == "drop" else None)
    if category not in CATEGORIES:
        raise _fail(source, line, rule_id, f"`category` must be one of {', '.join(CATEGORIES)}")
    lang = raw.get("lang", default_lang)
    if lang not in LANGS:
        raise _fail(source, line, rule_id, f"`lang` must be one of {', '.join(LANGS)}")
    # A veto holds for both voices unless it says otherwise ("never a memory"); a rule that keeps, for the user's.
    roles = tuple(_as_list(raw.get("roles", list(ROLES) if effect == "drop" else ["user"])))
    if not roles or any(r not in ROLES for r in roles):
        raise _fail(source, line, rule_id, "`roles` must list user and/or assistant")
    if category == "preference" and "assistant" in roles and effect != "drop":
        raise _fail(source, line, rule_id, "preferences come from the user only; drop `assistant` from `roles`")
    patterns = _as_list(raw.get("patterns"))
    if not patterns:
        raise _fail(source, line, rule_id, "a rule needs at least one pattern in `patterns`")
    confidence = raw.get("confidence", 0.6)
    if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0 < confidence <= 1:
        raise _fail(source, line, rule_id, "`confidence` must be a number in (0, 1]")
    if not isinstance(raw.get("tentative", False), bool):
        raise _fail(source, line, rule_id, "`tentative` must be true or false")
    scope = raw.get("scope", "project")
    if scope not in SCOPES:
        raise _fail(source, line, rule_id, "`scope` must be project or global")
    subject = raw.get("subject", "")
    if not isinstance(subject, str):
        raise _fail(source, line, rule_id, "`subject` must be a string")
    if not isinstance(raw.get("description", ""), str):
        raise _fail(source, line, rule_id, "`description` must be a string")
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
        gate=literal_gate(required),
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


def unknown_keys(unknown: set, known: Iterable[str]) -> str:
    """What is said of unknown keys: each, with the closest known key when there is one (`textutil.closest`)."""
    from ..textutil import closest

    said = [(key, closest(key, known)) for key in sorted(map(str, unknown))]
    return "unknown key(s) " + ", ".join(f"{key} (did you mean `{near}`?)" if near else key for key, near in said)


def read_tree(text: str, source: str) -> tuple[Any, Any]:
    """(the data, the node tree that gives its line numbers) of a YAML text, in one parse, checked by `_check_tree`.
    Raises `RuleError` for a YAML error, an alias or a key given twice, naming the file and the line."""
    try:
        loader = YAML_LOADER(text)
        try:
            node = loader.get_single_node()
            _check_tree(node, source)
            return (loader.construct_document(node) if node is not None else None), node
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        problem = str(getattr(exc, "problem", exc))
        if "escape" in problem:  # ("port \d+" in double quotes): the fix is the quotes
            problem += "; write patterns in single quotes ('port \\d+'), where a backslash is the regex's"
        raise _fail(source, line, "", f"not valid YAML: {problem}") from None


def _check_tree(node: yaml.Node | None, source: str) -> None:
    """Refuse what YAML allows and a rule file has no use for: an alias (`*name`), which a few hundred bytes can
    nest into billions of values (a cloned repository's file is read before the user trusts it), and a key given
    twice in one mapping, which YAML resolves by dropping the first silently (its rules would never run)."""
    seen: set[int] = set()
    pending = [node] if node is not None else []
    while pending:
        current = pending.pop()
        if id(current) in seen:
            raise _fail(source, current.start_mark.line + 1, "", "aliases (`*name`) are not allowed in a rule file; "
                        "write the value out")
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in current.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys:
                        raise _fail(source, key.start_mark.line + 1, "", f"key {key.value!r} is given twice in one "
                                    "mapping (YAML would keep only the last); merge them")
                    keys.add(key.value)
                pending += (key, value)
        elif isinstance(current, yaml.SequenceNode):
            pending += current.value


def load_file(path: Path | str, text: str | None = None) -> tuple[list[Rule], set[str]]:
    """Rules and disabled ids of one file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8") if text is None else text
    except OSError as exc:
        raise _fail(source, 0, "", f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise _fail(source, 0, "", f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    data, node = read_tree(text, source)
    if data is None:
        return [], set()
    if not isinstance(data, dict):
        raise _fail(source, 1, "", "a rule file must be a mapping with `rules:` and/or `disable:`")
    known = ("rules", "disable", "lang", "version")
    if set(data) - set(known):  # (named as written: YAML reads `on:` as a boolean)
        written = [k for k, _ in node.value if getattr(k, "value", None) not in known]
        raise _fail(source, written[0].start_mark.line + 1 if written else 1, "", "top-level " + unknown_keys(
            {getattr(k, "value", str(k)) for k in written} or set(map(str, set(data) - set(known))), known))
    default_lang = data.get("lang", "any")
    if default_lang not in LANGS:  # (else the first rule without its own `lang` was blamed for it)
        raise _fail(source, _key_line(node, "lang"), "", f"top-level `lang` must be one of {', '.join(LANGS)}")
    raw_rules = data.get("rules") or []
    if not isinstance(raw_rules, list):
        raise _fail(source, _key_line(node, "rules"), "", "`rules` must be a list")
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
        raise _fail(source, _key_line(node, "disable"), "", "`disable` must be a list of rule ids")
    return rules, set(disabled)


def _key_line(node: Any, key: str) -> int:
    """1-based line of the top-level `key` (1 when it cannot be told)."""
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if getattr(k, "value", None) == key:
                return k.start_mark.line + 1
    return 1


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
    """The user's rule files: `*.yaml` and `*.yml` in the rules folder of their config folder (a `.yml` file was
    passed over without a word), but hidden ones."""
    folder = config_dir / "rules"
    if not folder.is_dir():
        return []
    # Not an editor's lock or backup (Emacs' ".#rules.yaml", a dangling link), nor macOS' "._rules.yaml": hidden.
    found = [*folder.glob("*.yaml"), *folder.glob("*.yml")]
    return sorted(p for p in found if not p.name.startswith((".", "#")) and (p.is_file() or not p.is_symlink()))




def project_rule_path(project: str | None) -> Path | None:
    """The project's own rule file, trusted or not (None when it has none)."""
    path = Path(project) / PROJECT_RULE_FILE if project else None
    try:
        return path if path is not None and path.is_file() else None
    except OSError:  # (no such folder can exist: a name over the system's limit, in a transcript's cwd or a URL)
        return None


def trust(path: Path, config_dir: Path, revoke: bool = False) -> None:
    """Record (or, with `revoke`, drop) the user's trust in a project's rule file as it is now."""
    import json

    from .. import paths

    trusted = trusted_files(config_dir)
    key = str(path.resolve())
    if revoke:
        trusted.pop(key, None)
    else:
        trusted[key] = digest(path)
    paths.write_private(config_dir / TRUST_FILE, json.dumps(trusted, indent=2, sort_keys=True) + "\n")


def project_rule_file(project: str | None, config_dir: Path | None = None) -> list[Path]:
    """The project's rule file when the user trusts it as it is now, else none."""
    from .. import paths

    path = project_rule_path(project)
    return [path] if path is not None and is_trusted(path, config_dir or paths.config_dir()) else []


def rule_files(project: str | None = None) -> list[Path]:
    """Every rule file that applies to `project`, in the order they load: shipped, the user's, the project's (when
    trusted)."""
    from .. import paths

    return default_rule_files() + user_rule_files(paths.config_dir()) + project_rule_file(project)


def files_stamp(config_dir: Path) -> tuple:
    """The shipped and the user's rule files and the trust record as they are now: it changes when one of them is
    edited, added or removed, or a project's rule file is trusted."""
    from ..paths import file_stamp

    files = default_rule_files() + user_rule_files(config_dir) + [config_dir / TRUST_FILE]
    return tuple((str(path), file_stamp(path)) for path in files)


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
    """Merge rule files in order: later ids override earlier ones, `disable` removes. A rule of a file that is not
    shipped is the user's (`Rule.own`): where it fires, it decides before the shipped ones."""
    by_id: dict[str, Rule] = {}
    disabled: set[str] = set()
    names = []
    shipped = default_rules_dir()
    for path in files:
        rules, off = load_file_cached(path)
        names.append(str(path))
        own = Path(path).parent != shipped
        for rule in rules:
            by_id[rule.id] = dataclasses.replace(rule, own=True) if own else rule
            disabled.discard(rule.id)
        disabled |= off
    rules = [r for rid, r in by_id.items() if rid not in disabled]
    return RuleSet(rules=rules, files=names, disabled=disabled)


def unknown_disables(files: Iterable[Path | str]) -> list[str]:
    """One line per id a file's `disable:` names that no rule file defines (a typo turns nothing off)."""
    loaded = [(str(path), *load_file_cached(path)) for path in files]
    known = {rule.id for _, rules, _ in loaded for rule in rules}
    return [f"{source}: `disable` names no rule: {rule_id}" for source, _, off in loaded
            for rule_id in sorted(off - known)]


def replaced_ids(files: Iterable[Path | str]) -> list[str]:
    """One line per rule a later file redefines (by its id: the later one replaces it, as `load_rules` merges)."""
    first: dict[str, str] = {}
    lines = []
    for path in files:
        for rule in load_file_cached(path)[0]:
            if rule.id in first and first[rule.id] != str(path):
                lines.append(f"note: {path}: rule {rule.id} replaces the one of {first[rule.id]}")
            first[rule.id] = str(path)
    return lines


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
