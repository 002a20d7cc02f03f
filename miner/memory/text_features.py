"""The comparable form of a memory's text, and how alike two texts are: what both dedup decisions read.

`features` turns a text into canonical tokens (stems, synonyms, CJK bigrams),
the words that must not change (numbers, names, identifiers, content words)
and correction markers ("instead of X", "actually", "改用", "不是…而是"),
negations and the terms they rule out. `lexical_similarity` scores two of
them; a `Statement` is a memory as the layers see it. `similarity` decides
near-duplicates with them, `supersede` changes of mind. Text only, no database.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from ..extract import regex_cache
from ..extract.regex_analysis import required_literals
from ..extract.sentences import is_hedged
from ..textutil import WORD_MARKS, char_bigrams, word_text
from . import change_words
from .lexicon import CJK_LIGHT, LIGHT, NUMBER_WORDS, STOP, Synonyms, lemma

_EMOJI = "\u2190-\u21ff\u2300-\u27bf\u2b00-\u2bff\U0001f300-\U0001faff"
# Words of any script written with spaces (see `textutil.word_text`: no-space scripts are blanked first
# and compared by their character bigrams), "c++" and "c#" whole, or an emoji.
_TOKEN_RE = regex_cache.compile(r"[^\W_][\w.\-/@:+#" + WORD_MARKS + r"]*(?:[^\W_]|[#+" + WORD_MARKS + r"])|[^\W_]|["
                                + _EMOJI + "]")
_BACKTICK_RE = regex_cache.compile(r"`([^`]{1,80})`")
# Capitals of Latin (with Latin-1's accented ones), Greek and Cyrillic: a capital mid-sentence starts a name.
_CAPITALS = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0391-\u03a9\u0400-\u042f"
_CAPITAL_RE = regex_cache.compile(r"(?<![\w.])([" + _CAPITALS + r"][\w.+#-]*[\w+#]|[" + _CAPITALS + r"])(?![\w])")
_SENTENCE_START_RE = regex_cache.compile(r"(?:^|[.!?:;]\s+|\n)\W*$")
_NEGATION_RE = regex_cache.compile(
    r"\b(?:not|no|never|don['’]?t|doesn['’]?t|do not|does not|isn['’]?t|aren['’]?t|won['’]t|can['’]t|cannot|"
    r"shouldn['’]?t|without|"
    r"avoid|stop using|no longer)\b|不要|不用|不再|别再|別再|别用|別用|禁止|不能|不可|不准|勿|不会|不會|不是|しない|ないで|ません",
    re.IGNORECASE,
)
# Negation words of Spanish, French, German, Italian, Portuguese, Russian and Greek, looked up among a
# text's tokens (cheaper than one more regex on every text; "sans-serif" and "non-blocking" are tokens of
# their own, so they do not count). The French elision and Korean's negating verbs and adverbs need a pattern.
_NEGATION_TOKENS = frozenset("""nunca sin tampoco jamás ne pas jamais sans aucun aucune nicht kein keine keinem
    keinen keiner keines nie niemals ohne non mai senza sem não не нет никогда нельзя без δεν μην ποτέ χωρίς""".split())
_ELIDED_NEGATION_RE = regex_cache.compile(r"\bn['’](?=\w)")
_HANGUL_NEGATION_RE = regex_cache.compile(r"않|없|(?<!\w)(?:안|못)(?=\s)")
_TERM = (r"(?P<term>[`*\"']?[\w.#+@/" + _EMOJI + r"-]+(?:\s+(?!(?:for|in|on|to|at|with|because|since|so|and|or|but|"
         r"as|when|if|now|anymore)\b)[\w.#+@/" + _EMOJI + r"-]+){0,2}[`*\"']?)")
_CJK_TERM = r"(?P<term>[A-Za-z0-9_.#+-]+|[\u3400-\u9fff]{1,8})"
_REPLACED_RES = [regex_cache.compile(p, re.IGNORECASE) for p in (
    r"\b(?:instead of|rather than)\s+(?:the |a |an |using |plain )?" + _TERM,
    r"\bnot\s+(?:the |a |an )?" + _TERM + r",?\s+but\b",
    r",\s*not\s+(?:the |a |an )?" + _TERM + r"\s*(?:[,.;!]|$)",
    r"\b(?:switch|migrat|chang|mov|port|convert|upgrad|downgrad|bump|reduc|increas|rais|lower|cut)\w*\s+"
    r"(?:[\w.-]+\s+){0,3}?(?:from|off(?:\s+of)?)\s+(?:the |a |an )?" + _TERM + r"\s+(?:to|onto)\b",
    r"\breplac\w*\s+(?:the |a |an )?" + _TERM + r"\s+(?:with|by)\b",
    r"\brenam\w*\s+(?:the |a |an )?" + _TERM + r"\s+(?:to|as|into)\b",
    r"(?P<term>`[^`\n]{1,40}`|[\w.#+@/-]*\w)\s+(?:was |has been |got |is now |is )?renamed\b",
    r"\bno longer\s+(?:use|uses|using|need|needs|run|runs|support|supports|want)?\s*(?:the |a |an )?" + _TERM,
    r"不是\s*" + _CJK_TERM + r"\s*[,，]?\s*而是",
    r"(?:而不是|而非|代替|取代)\s*" + _CJK_TERM,
    r"不再(?:用|使用|採用|采用)?\s*" + _CJK_TERM,
    r"(?:把|将|將)\s*" + _CJK_TERM + r"\s*(?:改成|改为|改為|换成|換成|替换成|替換成|改用)",
    _CJK_TERM + r"\s*(?:ではなく|じゃなくて)",
)]
_MARKER_RE = regex_cache.compile(
    r"(?:^|[.;:!?,—(]\s*)actually\b|\b(?:instead of|rather than|no longer|anymore|any more|scratch that|on second thought|"
    r"i was wrong|correction:|to correct|switch(?:ed|ing)?\s+(?:\w+\s+){0,3}?(?:to|over to|back to)|"
    r"chang(?:e|ed|ing)\s+(?:\w+\s+){0,3}?to|migrat(?:e|ed|ing)\s+(?:\w+\s+){0,3}?to|"
    r"mov(?:e|ed|ing)\s+(?:\w+\s+){0,2}?(?:over\s+)?to|replac(?:e|ed|ing)\s+.{1,40}?\s+with|not\s+[\w.#+@/-]+(?:\s+\w+)?,?\s+but|"
    r"(?:switch|migrat|chang|mov|port|convert|upgrad|downgrad|bump|reduc|increas|rais|lower|cut)\w*\s+"
    r"(?:[\w.-]+\s+){0,3}?(?:from|off(?:\s+of)?)\s+\S+(?:\s+\S+){0,2}?\s+(?:to|onto))\b"
    r"|改用|改成|改为|改為|换成|換成|换用|換用|不再|其实|其實|更正|改回|换回|換回|切换到|切換到|迁移到|遷移到|而不是|"
    r"不是.{1,30}而是|ではなく|じゃなくて|に変更|に切り替え|実は",
    re.IGNORECASE,
)
# Only explicit removals and prohibitions: "not" alone is everywhere in assistant prose.
_NEGATED_TERM_RES = [regex_cache.compile(p, re.IGNORECASE) for p in (
    r"(?:^|[.;:!,—]\s*|\s-\s)no\s+(?:more\s+)?" + _TERM,
    r"\b(?:drop|remove|delete|get rid of|stop using|stop showing|avoid)\s+(?:the |any |a |an |all )?" + _TERM,
    r"\b(?:don['’]?t|do not|never|no longer)\s+(?:use|show|display|add|include|want|need|put|generate|create|render)\s+"
    r"(?:the |any |a |an |more )?" + _TERM,
    r"(?:不要|不用|不再用?|别再用?|別再用?|别用|別用|去掉|删掉|刪掉|移除|砍掉|拿掉|不生)\s*" + _CJK_TERM,
)]
_LOOSE_NEGATION_RE = regex_cache.compile(r"\b(?:no|not|never|without)\s+(?:the |any |a |an )?" + _TERM, re.IGNORECASE)
_NUMBER_RE = regex_cache.compile(r"^v?\d+(?:[.,:/x-]\d+)*(?:[a-z%]{1,5})?$|^\d+[-_][a-z]{1,10}$")


@dataclass(frozen=True)
class Statement:
    """A memory as the layers see it: text, category, the rule's subject and value, and when."""

    text: str
    category: str
    subject: str = ""
    value: str = ""
    tentative: bool = False
    ts: str = ""


@dataclass(frozen=True)
class Features:
    """What the layers compare: canonical tokens, the words that must not change, and markers."""

    tokens: frozenset[str]
    heavy: frozenset[str]
    critical: frozenset[str]
    numbers: frozenset[str]
    cjk_heavy: frozenset[str]
    grams: Counter
    negated: bool
    hedged: bool
    marker: str
    replaced: frozenset[str]
    negated_terms: frozenset[str]
    number_text: tuple[str, ...] = ()
    loosely_negated: frozenset[str] = frozenset()
    tokens_cjk: frozenset[str] = frozenset()
    ordered: frozenset[tuple[str, tuple[str, ...], str]] = frozenset()  # (word, what stands between, word): `_ordered`


# A Latin name or number with a Korean particle or counter written onto it ("redux로", "3.9가", "8000번").
_HANGUL_TAIL_RE = regex_cache.compile(r"([0-9a-z][\w.#+@/-]*?[0-9a-z])[\uac00-\ud7a3]{1,3}")


def _canon(token: str, syn: Synonyms) -> str:
    token = token.strip(".:/-_'\"")
    if not token:
        return ""
    if not token.isascii():
        tail = _HANGUL_TAIL_RE.fullmatch(token)
        token = tail.group(1) if tail else token
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    found = syn.words.get(token)
    if found:
        return found
    stem = lemma(token)
    return syn.words.get(stem, stem)


def _has_digit(token: str) -> bool:
    return not token.isalpha() and any(c.isdigit() for c in token)


_NUMBER_VALUES = frozenset(NUMBER_WORDS.values())
_IDENTIFIER_CHAR_RE = regex_cache.compile(r"[./@#+:]")


def _starts_sentence(raw: str, index: int) -> bool:
    """Whether only non-word characters after a sentence end (or the start) come before `index`.

    The same answer as `_SENTENCE_START_RE.search(raw[:index])`, looking back only
    over the non-word characters right before `index` instead of the whole prefix.
    """
    start = index
    while start > 0 and not (raw[start - 1].isalnum() or raw[start - 1] == "_"):
        start -= 1
    tail = raw[start:index]
    if start == 0 or "\n" in tail:
        return True
    return any(c in ".!?:;" and tail[i + 1].isspace() for i, c in enumerate(tail[:-1]))


def _gated(pattern: re.Pattern) -> tuple[re.Pattern, frozenset[str] | None]:
    """A pattern with the lower-cased literals one of which every match contains (None: unknown).

    The literals are kept between processes (`regex_cache.memo`), as the compiled patterns are.
    """
    return pattern, regex_cache.memo("required-literals", pattern.pattern,
                                     lambda: required_literals(pattern.pattern), _is_literals)


def _is_literals(value) -> bool:
    return value is None or (isinstance(value, frozenset) and all(isinstance(literal, str) for literal in value))


def _may_match(gate: frozenset[str] | None, lowered_ascii: str | None) -> bool:
    """False only when the pattern cannot match: the lower-cased text lacks all its literals (None: not known).

    Only ASCII text is prefiltered for the English patterns: there `str.lower` and the case-insensitive
    match agree exactly (elsewhere re folds pairs such as ı and i that lower() keeps apart).
    """
    return gate is None or lowered_ascii is None or any(lit in lowered_ascii for lit in gate)


# Each with its literals, so that a text without them skips the regex (see `_may_match`).
_GATED_REPLACED = [_gated(p) for p in _REPLACED_RES]
_GATED_NEGATED_TERMS = [_gated(p) for p in _NEGATED_TERM_RES]
_GATED_LOOSE_NEGATION = _gated(_LOOSE_NEGATION_RE)
_GATED_MARKER = _gated(_MARKER_RE)
# The other languages' patterns by group (`change_words.languages` picks the groups a text may need).
_OTHER_MARKER = {group: _gated(regex_cache.compile(p, re.IGNORECASE)) for group, p in change_words.MARKERS.items()}
_OTHER_REPLACED = {group: [_gated(regex_cache.compile(p, re.IGNORECASE)) for p in patterns]
                   for group, patterns in change_words.REPLACED.items()}
_OTHER_REMOVED = {group: [_gated(regex_cache.compile(p, re.IGNORECASE)) for p in patterns]
                  for group, patterns in change_words.REMOVED.items()}
_GATED_NEGATION = _gated(_NEGATION_RE)


def _number_form(token: str) -> str:
    return token[1:] if token[:1] == "v" and token[1:2].isdigit() else token


def term_tokens(text: str, syn: Synonyms) -> frozenset[str]:
    """Canonical content tokens of a short term (a replaced or negated thing)."""
    lowered = syn.rewrite(unicodedata.normalize("NFKC", text).lower())
    out = {_canon(t, syn) for t in _TOKEN_RE.findall(word_text(lowered))}
    out |= set(char_bigrams(lowered))
    return frozenset(t for t in out if t and t not in STOP)


_CONTRACTION_RE = regex_cache.compile(r"n['’]t\b")
_CLITIC_RE = regex_cache.compile(r"['’](?:s|ll|re|ve|d|m)\b")


def features(text: str, syn: Synonyms) -> Features:
    """The comparable form of one memory's text."""
    raw = unicodedata.normalize("NFKC", text)
    lowered = syn.rewrite(_CLITIC_RE.sub("", _CONTRACTION_RE.sub(" not", raw.lower())))
    tokens: list[str] = []
    numbers: list[str] = []
    words = _TOKEN_RE.findall(word_text(lowered))
    for token in words:
        canon = _canon(token, syn)
        if not canon or canon in STOP:
            continue
        tokens.append(canon)
        if _NUMBER_RE.match(canon) or canon in _NUMBER_VALUES:
            numbers.append(_number_form(canon))
    cjk = char_bigrams(lowered)
    token_set = frozenset(tokens) | frozenset(cjk)
    names = syn.names()
    critical = {t for t in tokens if _has_digit(t) or t in names or _IDENTIFIER_CHAR_RE.search(t)
                or ("_" in t and t not in names)}
    for span in _BACKTICK_RE.findall(raw):
        critical |= {_canon(t, syn) for t in _TOKEN_RE.findall(word_text(syn.rewrite(span.lower())))}
    for found in _CAPITAL_RE.finditer(raw):
        word = found.group(1)
        if _starts_sentence(raw, found.start()) and not (len(word) > 1 and word.isupper()):
            continue  # a capital at the start of a sentence says nothing; an all-caps word (CREATED, KEPT) does
        critical |= {_canon(t, syn) for t in _TOKEN_RE.findall(word_text(syn.rewrite(found.group(1).lower())))}
    critical = {c for c in critical if c in token_set}
    heavy = {t for t in tokens if t not in LIGHT and not _has_digit(t)}
    cjk_heavy = {g for g in cjk if not any(ch in CJK_LIGHT for ch in g) and len(g) == 2}
    ascii_lowered = raw.lower() if raw.isascii() else None
    marker = _MARKER_RE.search(raw) if _may_match(_GATED_MARKER[1], ascii_lowered) else None
    replaced = _terms_found(_GATED_REPLACED, raw, ascii_lowered, syn)
    negated_terms = _terms_found(_GATED_NEGATED_TERMS, raw, ascii_lowered, syn)
    # Cyrillic, Hangul and kana fold case as lower() does (but for old letter forms nobody types): their
    # literals can prefilter any text.
    any_lowered = ascii_lowered if ascii_lowered is not None else raw.lower()
    for group in change_words.languages(raw, words):
        gate_text = ascii_lowered if group == change_words.LATIN else any_lowered
        if marker is None and _may_match(_OTHER_MARKER[group][1], gate_text):
            marker = _OTHER_MARKER[group][0].search(raw)
        replaced |= _terms_found(_OTHER_REPLACED[group], raw, gate_text, syn)
        negated_terms |= _terms_found(_OTHER_REMOVED[group], raw, gate_text, syn)
    loosely_negated = negated_terms | _terms_found([_GATED_LOOSE_NEGATION], raw, ascii_lowered, syn)
    joined = " ".join(tokens + cjk)
    padded = f"  {joined}  "
    grams = Counter([padded[i : i + 3] for i in range(len(padded) - 2)])
    negated = ((_may_match(_GATED_NEGATION[1], ascii_lowered) and bool(_NEGATION_RE.search(raw)))
               or not _NEGATION_TOKENS.isdisjoint(words)
               or (("n'" in lowered or ascii_lowered is None) and bool(_ELIDED_NEGATION_RE.search(lowered)))
               or (ascii_lowered is None and bool(_HANGUL_NEGATION_RE.search(raw))))
    return Features(
        tokens=token_set, heavy=frozenset(heavy), critical=frozenset(critical), numbers=frozenset(numbers),
        cjk_heavy=frozenset(cjk_heavy), grams=grams, negated=negated,
        hedged=is_hedged(raw), marker=marker.group(0).strip(" .;:!?,—(").lower() if marker else "",
        replaced=frozenset(replaced), negated_terms=frozenset(negated_terms), number_text=tuple(numbers),
        loosely_negated=frozenset(loosely_negated), tokens_cjk=frozenset(cjk),
        ordered=_ordered(word_text(lowered), heavy, syn),
    )


# Words that join two things either way round ("Redis and Postgres" says what "Postgres and Redis" says).
_SYMMETRIC = frozenset({"and", "or", "&", "plus", "nor", "vs", "versus", "with", "alongside", "along", "beside",
                        "besides", "next", "together", "both", "und", "oder", "mit", "neben",
                        "et", "ou", "avec", "y", "o", "con", "junto", "e", "insieme", "i", "и", "или", "ve", "veya",
                        "và", "hoặc"})
MAX_ORDERED_WORDS = 60
_LIST_BREAK_RE = regex_cache.compile(r"[,;:()\[\]{}|/\n、，；：（）]")


def _ordered(text: str, heavy: set[str], syn: Synonyms) -> frozenset[tuple[str, tuple[str, ...], str]]:
    """Two content words with one or two words between them, in the order written: "Black over Ruff" gives
    ("black", ("over",), "ruff"), which "Ruff over Black" turns around. Whether two texts of the same words say
    opposite things ("staging before production", "the frontend calls the backend"). Never across a comma, a
    colon or a bracket: the items of a list ("Alice, Bob and Carol") are in no order that means anything."""
    sequence: list[str] = []
    end = 0
    for match in _TOKEN_RE.finditer(text):
        if sequence and _LIST_BREAK_RE.search(text, end, match.start()):
            sequence.append("")
        word = match.group(0)  # (a word that joins either way round, as written: "alongside", not its stem)
        sequence.append("" if word in _SYMMETRIC else _canon(word, syn))
        end = match.end()
        if len(sequence) > MAX_ORDERED_WORDS:
            return frozenset()
    found = set()
    for i, first in enumerate(sequence):
        if first not in heavy:
            continue
        for gap in (1, 2):
            j = i + gap + 1
            if j < len(sequence) and sequence[j] in heavy and sequence[j] != first:
                between = tuple(sequence[i + 1 : j])
                if all(between):
                    found.add((first, between, sequence[j]))
    return frozenset(found)


def reversed_order(a: Features, b: Features) -> tuple[str, tuple[str, ...], str] | None:
    """A pair of words `a` writes one way round and `b` the other ("Black over Ruff" / "Ruff over Black"), or None."""
    for first, between, second in a.ordered:
        turned = (second, between, first)
        if turned in b.ordered and turned not in a.ordered and (first, between, second) not in b.ordered:
            return first, between, second
    return None


def _terms_found(gated: list[tuple[re.Pattern, frozenset[str] | None]], raw: str, ascii_lowered: str | None,
                 syn: Synonyms) -> set[str]:
    """Canonical tokens of every `term` group the patterns find in `raw`."""
    found: set[str] = set()
    for pattern, gate in gated:
        if _may_match(gate, ascii_lowered):
            for match in pattern.finditer(raw):
                found |= term_tokens(match.group("term"), syn)
    return found


def canonical(value: str, syn: Synonyms) -> str:
    """A subject or value as one comparable string ("Postgres" and "postgresql" agree)."""
    tokens = sorted(term_tokens(value, syn))
    return " ".join(tokens) or value.strip().lower()


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def cosine(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def lexical_similarity(a: Features, b: Features) -> float:
    """Half canonical-token overlap (Dice), half character-trigram cosine: 0..1."""
    return 0.5 * dice(a.tokens, b.tokens) + 0.5 * cosine(a.grams, b.grams)
