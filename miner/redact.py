"""Secret redaction, applied before anything is stored, logged or printed (standard library only).

A match becomes `[REDACTED:<kind>]`. A memory that is mostly redacted is not
worth keeping, and `mostly_redacted` says so.
"""

from __future__ import annotations

import math
import re

# (kind, pattern). Order matters: specific kinds before generic ones.
SECRET_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")),
    ("gcp-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
]
_ASSIGNMENT_RE = re.compile(
    r"(?i)\b(?P<key>[A-Za-z0-9_\-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth)[A-Za-z0-9_\-]*)"
    r"(?P<sep>\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;]{8,})"
)
_REDACTED_RE = re.compile(r"\[REDACTED:[a-z\-]+\]")


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def redact(text: str) -> tuple[str, list[str]]:
    """The text with every secret replaced, and the kinds that were found."""
    kinds: list[str] = []
    for kind, pattern in SECRET_PATTERNS:
        text, count = pattern.subn(f"[REDACTED:{kind}]", text)
        kinds += [kind] * count

    def assignment(match: re.Match) -> str:
        value = match.group("value")
        if value.startswith("[REDACTED:") or _entropy(value) < 3.0 or not any(c.isdigit() for c in value):
            return match.group(0)
        kinds.append("assignment")
        return f"{match.group('key')}{match.group('sep')}[REDACTED:assignment]"

    text = _ASSIGNMENT_RE.sub(assignment, text)
    return text, kinds


def mostly_redacted(text: str) -> bool:
    """True when redaction markers make up most of what the text says."""
    left = _REDACTED_RE.sub("", text)
    markers = len(text) - len(left)
    return markers > 0 and len(left.strip()) < max(20, markers)
