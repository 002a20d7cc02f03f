"""Secret redaction, applied before anything is stored, logged, exported or printed.

A match becomes `[REDACTED:<kind>]`. A memory that is mostly redacted is not
worth keeping, and `mostly_redacted` says so.

Two layers of patterns:

- the built-in ones below, compiled at import from a Python list: the hooks
  redact their log lines with them, so this module imports the standard
  library only (`python -X importtime -c 'import miner.redact'`);
- extra kinds from YAML files, the shipped `rules/secrets.yaml` and the
  user's `$XDG_CONFIG_HOME/miner/secrets.yaml`, loaded by the miner
  (`load_extra`), which has PyYAML already. Each extra rule carries its own
  `examples:` (match / no_match), checked at load like extraction rules.
"""

from __future__ import annotations

import math
import re
TYPE_CHECKING = False  # typing and pathlib cost import time on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Iterable

# (kind, pattern). Order matters: specific kinds before generic ones.
SECRET_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")),
    ("gcp-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b")),
    ("gitlab-token", re.compile(r"\b(?:glpat|gldt|glrt|glptt|glft)-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer-token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9_\-.~+/]{20,}=*")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
]
# password= / secret= / token= / api_key= assignments (also "key": "value" in JSON, KEY=value in env files).
_ASSIGNMENT_RE = re.compile(
    r"(?i)\b(?P<key>[A-Za-z0-9_\-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth|credentials?)"
    r"[A-Za-z0-9_\-]*)(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;]{8,})"
)
_REDACTED_RE = re.compile(r"\[REDACTED:[a-z0-9\-]+\]")
_KIND_RE = re.compile(r"^[a-z][a-z0-9\-]{1,40}$")
MIN_ASSIGNMENT_ENTROPY = 3.0

# Extra kinds from YAML (`load_extra`); empty on the hook path.
_extra: list[tuple[str, re.Pattern]] = []


class SecretRuleError(ValueError):
    """A secrets file is broken; the message is one line naming the file and the rule."""


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def redact(text: str) -> tuple[str, list[str]]:
    """The text with every secret replaced, and the kinds that were found."""
    kinds: list[str] = []
    for kind, pattern in (*SECRET_PATTERNS, *_extra):
        text, count = pattern.subn(f"[REDACTED:{kind}]", text)
        kinds += [kind] * count

    def assignment(match: re.Match) -> str:
        value = match.group("value")
        if value.startswith("[REDACTED:") or _entropy(value) < MIN_ASSIGNMENT_ENTROPY \
                or not any(c.isdigit() for c in value):
            return match.group(0)
        kinds.append("assignment")
        return f"{match.group('key')}{match.group('sep')}[REDACTED:assignment]"

    text = _ASSIGNMENT_RE.sub(assignment, text)
    return text, kinds


def redact_text(text: str) -> str:
    """Just the redacted text (for printing and exporting)."""
    return redact(text)[0]


def mostly_redacted(text: str) -> bool:
    """True when redaction markers make up most of what the text says."""
    left = _REDACTED_RE.sub("", text)
    markers = len(text) - len(left)
    return markers > 0 and len(left.strip()) < max(20, markers)


# --- extra kinds from YAML (miner side only) ------------------------------------------------


def shipped_secret_file() -> Path:
    from .rules import default_rules_dir

    return default_rules_dir() / "secrets.yaml"


def user_secret_file() -> Path:
    from .paths import config_dir

    return config_dir() / "secrets.yaml"


def parse_secret_file(path: Path | str, text: str | None = None) -> list[tuple[str, re.Pattern]]:
    """(kind, compiled pattern) of each rule in one secrets file; SecretRuleError on any problem.

    Schema: `secrets:` a list of {kind, pattern, ignore_case?, description?,
    examples: {match: [...], no_match: [...]}}. Patterns with nested unbounded
    repeats are refused (they can backtrack for ever on hostile text).
    """
    from pathlib import Path

    import yaml

    from .rules import unsafe_repeat

    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8") if text is None else text)
    except OSError as exc:
        raise SecretRuleError(f"{source}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SecretRuleError(f"{source}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) - {"secrets", "version"}:
        raise SecretRuleError(f"{source}: a secrets file is a mapping with a `secrets:` list")
    out = []
    for i, raw in enumerate(data.get("secrets") or []):
        where = f"{source}: secret #{i + 1}"
        if not isinstance(raw, dict) or set(raw) - {"kind", "pattern", "ignore_case", "description", "examples"}:
            raise SecretRuleError(f"{where}: needs `kind` and `pattern` (optional: ignore_case, description, examples)")
        kind, pattern = raw.get("kind"), raw.get("pattern")
        if not isinstance(kind, str) or not _KIND_RE.match(kind):
            raise SecretRuleError(f"{where}: `kind` must be lower-case letters, digits and dashes")
        where = f"{source}: secret {kind}"
        if not isinstance(pattern, str) or not pattern:
            raise SecretRuleError(f"{where}: `pattern` must be a non-empty string")
        try:
            compiled = re.compile(pattern, re.IGNORECASE if raw.get("ignore_case") else 0)
        except re.error as exc:
            raise SecretRuleError(f"{where}: pattern does not compile: {exc}") from None
        problem = unsafe_repeat(pattern)
        if problem:
            raise SecretRuleError(f"{where}: {problem}")
        examples = raw.get("examples") or {}
        if not isinstance(examples, dict):
            raise SecretRuleError(f"{where}: `examples` must have `match` and/or `no_match` lists")
        for example in examples.get("match") or []:
            if not compiled.search(str(example)):
                raise SecretRuleError(f"{where}: example should match but does not: {example!r}")
        for example in examples.get("no_match") or []:
            if compiled.search(str(example)):
                raise SecretRuleError(f"{where}: example should not match but does: {example!r}")
        out.append((kind, compiled))
    return out


def load_extra(files: Iterable[Path | str] | None = None) -> list[tuple[str, re.Pattern]]:
    """Load extra secret kinds (default: the shipped file, then the user's) for this process; returns them."""
    global _extra
    if files is None:
        files = [p for p in (shipped_secret_file(), user_secret_file()) if p.is_file()]
    loaded: list[tuple[str, re.Pattern]] = []
    for path in files:
        loaded += parse_secret_file(path)
    _extra = loaded
    return loaded
