"""Extra secret kinds from YAML: the shipped `rules/secrets.yaml` and the user's `secrets.yaml`.

Each rule names a kind and a pattern and carries its own `examples:`
(match / no_match), checked at load; a pattern that can backtrack for ever
is refused (`regex_analysis.unsafe_repeat`). `redact.load_extra` installs
what this parses; only the miner reads these files (it has PyYAML already),
never the hooks.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..paths import config_dir
from .regex_analysis import empty_match, parse, posix_class, unsafe_repeat
from .rules import RuleError, default_rules_dir, read_tree, unknown_keys

_KIND_RE = re.compile(r"^[a-z][a-z0-9\-]{1,40}$")
KEYS = frozenset({"kind", "pattern", "ignore_case", "description", "examples"})


class SecretRuleError(ValueError):
    """A secrets file is broken; the message is one line naming the file and the rule."""


def shipped_secret_file() -> Path:
    return default_rules_dir() / "secrets.yaml"


def user_secret_file() -> Path:
    return config_dir() / "secrets.yaml"


def parse_secret_file(path: Path | str, text: str | None = None) -> list[tuple[str, re.Pattern]]:
    """(kind, compiled pattern) of each rule in one secrets file; SecretRuleError on any problem.

    Schema: `secrets:` a list of {kind, pattern, ignore_case?, description?,
    examples: {match: [...], no_match: [...]}}. Patterns with nested unbounded
    repeats are refused (they can backtrack for ever on hostile text).
    """
    source = str(path)
    try:
        data, _ = read_tree(Path(path).read_text(encoding="utf-8") if text is None else text, source)
    except OSError as exc:
        raise SecretRuleError(f"{source}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SecretRuleError(f"{source}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except RuleError as exc:  # not YAML, an alias or a key given twice: the line says where
        raise SecretRuleError(str(exc)) from None
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) - {"secrets", "version"}:
        raise SecretRuleError(f"{source}: a secrets file is a mapping with a `secrets:` list")
    if not isinstance(data.get("secrets") or [], list):
        raise SecretRuleError(f"{source}: `secrets` must be a list, each item a mapping with `kind` and `pattern`")
    out = []
    for i, raw in enumerate(data.get("secrets") or []):
        where = f"{source}: secret #{i + 1}"
        unknown = set(raw) - KEYS if isinstance(raw, dict) else set()
        if not isinstance(raw, dict) or unknown:
            raise SecretRuleError(f"{where}: needs `kind` and `pattern` (optional: ignore_case, description, examples)"
                                  + (f"; {unknown_keys(unknown, KEYS)}" if unknown else ""))
        kind, pattern = raw.get("kind"), raw.get("pattern")
        if not isinstance(kind, str) or not _KIND_RE.match(kind):
            raise SecretRuleError(f"{where}: `kind` must be lower-case letters, digits and dashes")
        where = f"{source}: secret {kind}"
        if not isinstance(pattern, str) or not pattern:
            raise SecretRuleError(f"{where}: `pattern` must be a non-empty string")
        if not isinstance(raw.get("ignore_case", False), bool):
            raise SecretRuleError(f"{where}: `ignore_case` must be true or false")
        if not isinstance(raw.get("description", ""), str):
            raise SecretRuleError(f"{where}: `description` must be a string")
        posix = posix_class(pattern)
        if posix:
            raise SecretRuleError(f"{where}: {posix}")
        try:
            compiled = re.compile(pattern, re.IGNORECASE if raw.get("ignore_case") else 0)
        except re.error as exc:
            raise SecretRuleError(f"{where}: pattern does not compile: {exc}") from None
        parsed = parse(pattern)
        problem = unsafe_repeat(pattern, parsed) or empty_match(pattern, parsed)
        if problem:
            raise SecretRuleError(f"{where}: {problem}")
        examples = raw.get("examples") or {}
        if not isinstance(examples, dict):
            raise SecretRuleError(f"{where}: `examples` must have `match` and/or `no_match` lists")
        # (by its place, not its words: it stands for a secret, which the error line would show wherever it goes)
        for n, example in enumerate(examples.get("match") or [], 1):
            if not compiled.search(str(example)):
                raise SecretRuleError(f"{where}: `match` example #{n} should match but does not")
        for n, example in enumerate(examples.get("no_match") or [], 1):
            if compiled.search(str(example)):
                raise SecretRuleError(f"{where}: `no_match` example #{n} should not match but does")
        out.append((kind, compiled))
    return out
