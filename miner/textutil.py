"""Text helpers shared by the miner and the hook path (standard library only).

Normalisation and the tagged content hash (exact dedup), keyword extraction
(code identifiers, paths, versions, words, CJK character bigrams), and
escaping of free text into a safe FTS5 query.
"""

from __future__ import annotations

import re
import unicodedata

try:  # the C module directly: `hashlib` loads OpenSSL first, milliseconds on the hook's path
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

_WS_RE = re.compile(r"\s+")
_MARKUP_RE = re.compile(r"[*_`>#|]+")
_LEAD_BULLET_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-/@:+]*[A-Za-z0-9]|[A-Za-z0-9]")
_VERSION_RE = re.compile(r"^v?\d+(?:\.\d+)+[a-z0-9.\-]*$", re.IGNORECASE)

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just let me more most my no nor
    not now of off on once only or other our ours out over own same she should so some such than that the
    their them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours ok okay yes yeah sure please thanks thank
    use using used make made get got need needs want wants like one two also via per etc i'm i'll i've we'll
    we're it's that's there's don't doesn't can't won't let's now then ll ve re""".split()
)


def normalise(text: str) -> str:
    """Lower-case, markup-free, single-spaced text: the basis of exact dedup."""
    text = unicodedata.normalize("NFKC", text)
    text = _LEAD_BULLET_RE.sub("", text)
    text = _MARKUP_RE.sub(" ", text)
    text = _WS_RE.sub(" ", text).strip().lower()
    return text.rstrip(" .。!！;；:：")


def content_hash(text: str) -> str:
    """Tagged hash of the normalised text (`b2:` + blake2b), unique per project."""
    digest = blake2b(normalise(text).encode("utf-8"), digest_size=16).hexdigest()
    return "b2:" + digest


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of every CJK run (a lone character stays whole)."""
    grams: list[str] = []
    for run in _CJK_RUN_RE.findall(text):
        if len(run) == 1:
            grams.append(run)
        else:
            grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def word_tokens(text: str) -> list[str]:
    """Latin-script tokens, keeping identifiers, paths and versions whole."""
    return [m.group(0).lower().strip(".:/-") for m in _WORD_RE.finditer(text)]


def simple_stem(word: str) -> str:
    """A light suffix stripper, so that 'tests' and 'test' meet in queries."""
    if len(word) > 4 and not any(c in word for c in "._/-@") and word.isalpha():
        for suffix in ("ing", "ies", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def keywords(text: str, limit: int = 24) -> list[str]:
    """Distinct content keywords of `text`, in order of first appearance."""
    seen: dict[str, None] = {}
    for token in word_tokens(text):
        if len(token) < 2 or token in STOPWORDS:
            continue
        if token.isdigit() and len(token) < 2:
            continue
        seen.setdefault(token, None)
    for gram in cjk_bigrams(text):
        seen.setdefault(gram, None)
    return list(seen)[:limit]


def is_version(token: str) -> bool:
    return bool(_VERSION_RE.match(token))


def fts_terms(text: str) -> list[str]:
    """Terms of free text for an FTS5 query: words and CJK bigrams, no operators."""
    terms: list[str] = []
    for token in word_tokens(text):
        if len(token) < 2 or token in STOPWORDS:
            continue
        # FTS5's unicode61 tokenizer splits on punctuation; keep each alphanumeric piece.
        terms.extend(p for p in re.split(r"[^0-9a-z]+", token) if len(p) > 1 and p not in STOPWORDS)
    terms.extend(cjk_bigrams(text))
    out: dict[str, None] = {}
    for term in terms:
        out.setdefault(term, None)
    return list(out)


def fts_match(terms: list[str], limit: int = 32) -> str:
    """An FTS5 MATCH expression OR-ing quoted terms; '' when there are none.

    Every term is a double-quoted string, so no user input can become FTS5 syntax.
    """
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:limit])


def letter_ratio(text: str) -> float:
    """Share of letters among non-space characters (CJK characters count as letters)."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if c.isalpha()) / len(chars)


def index_text(text: str) -> str:
    """What FTS5 indexes besides the text: keywords plus CJK bigrams, space-separated."""
    return " ".join(keywords(text, limit=64))
