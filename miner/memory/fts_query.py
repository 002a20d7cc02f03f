"""FTS5 OR-expressions of quoted terms: the near-duplicate look-up's (`dedup.match_expression` builds them), taken
apart so that both stores can leave out the terms common enough to find everything; and a search's, with the
glossary's words for each term (`with_forms`)."""

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


def with_forms(terms: list[str], forms: dict[str, list[list]] | None = None, limit: int = 32) -> str:
    """An FTS5 expression OR-ing `terms` (at most `limit`) and, for each, its other `forms`: what
    `recall.glossary.expand` gives, [text, joined, its terms], the words naming the same thing in other languages.
    A form of one term is that term quoted; a phrase, or a word written without spaces (its character pairs), is
    all its terms. '' when there are no terms; no input can become FTS5 syntax."""
    parts = []
    for term in terms[:limit]:
        for form_terms in [[term], *(form[2] for form in (forms or {}).get(term, ()))]:
            quoted = ['"' + t.replace('"', '""') + '"' for t in form_terms]
            if quoted:
                parts.append(quoted[0] if len(quoted) == 1 else "(" + " AND ".join(quoted) + ")")
    return " OR ".join(dict.fromkeys(parts))
