"""The FTS5 OR-expressions of quoted terms that the near-duplicate look-up sends (`dedup.match_expression`
builds them), taken apart: both stores leave out the terms common enough to find everything."""

from __future__ import annotations

import re

EXPR_TERM = re.compile(r'"((?:[^"]|"")*)"')


def expression_terms(match: str) -> list[str]:
    """The terms of an expression, as quoted there (a `""` inside a term stays escaped)."""
    return EXPR_TERM.findall(match)


def without_common(match: str, common: dict[str, int]) -> str:
    """An FTS5 OR-expression without its common terms. When only those are left, the three with the lowest counts
    stay (the first of them on a tie, as with counts that stop at a cap)."""
    if not common:
        return match
    terms = expression_terms(match)
    kept = [t for t in terms if t.lower() not in common]
    if not kept:
        kept = sorted(terms, key=lambda t: common.get(t.lower(), 0))[:3]
    return " OR ".join(f'"{t}"' for t in kept)
