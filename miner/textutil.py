"""Text helpers shared by the miner and the hook path (standard library only): normalisation and the tagged content
hash (exact dedup), keyword extraction (code identifiers, paths, versions, words of any script, character bigrams of
scripts written without spaces), and escaping of free text into a safe FTS5 query.

Words are Unicode: Cyrillic, Greek, accented Latin, Arabic, Hebrew, Devanagari and the like are words as English is
(lower-cased, NFC; Arabic and Hebrew vowel points, which writers leave out at will, are dropped). CJK, Thai, Lao,
Khmer and Myanmar put no spaces between words, so a run of them becomes overlapping character bigrams (combining
marks dropped outside CJK); Hangul keeps its words and adds bigrams, since Korean attaches particles to them. The
patterns for non-ASCII text are built on first use: an English-only process never pays for them.
"""

from __future__ import annotations

import unicodedata

from . import BLOCK_TAG

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    import re

try:  # the C module directly: `hashlib` loads OpenSSL first, milliseconds on the hook's path
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b


# Combining marks that belong inside a word (`\w` does not match them): leftover Latin diacritics, Cyrillic titlo, the
# vowel signs and viramas of the Indic scripts (dandas excluded), Syriac and Thaana vowels, and the zero-width
# (non-)joiners of Persian and Indic words.
WORD_MARKS = ("\u0300-\u036f\u0483-\u0489\u0730-\u074a\u07a6-\u07b0\u0900-\u0963\u0966-\u0dff"
              "\u1ab0-\u1aff\u1dc0-\u1dff\u200c\u200d\u20d0-\u20ff\ufe20-\ufe2f")
# ASCII characters that are neither letters nor digits, as a `str.translate` table that makes them spaces: what is
# left of ASCII text is its runs of letters and digits, FTS5's words.
_ASCII_BREAKS = {c: " " for c in range(128) if not chr(c).isalnum()}

KANA_RANGES = "\u3040-\u30ff"
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RANGES = KANA_RANGES + HAN_RANGES
# Thai and Lao, Myanmar, Khmer: written without spaces between words, like CJK.
SOUTHEAST_ASIAN_RANGES = "\u0e00-\u0eff\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f\u1780-\u17ff\u19e0-\u19ff"
HANGUL_RANGES = "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f"

# Patterns compiled on first use, each on its own (`_pattern`): the prompt hook imports this module for its words and
# needs none of these for an English prompt; an English-only process never compiles the large ranges (about 1 ms each,
# the CJK class 2 ms), and the miner-only ones (normalising, versions, letter counts) cost no hook. `re` itself is
# imported on first use: the prompt hook answers an English prompt without it (about 6 ms).
_LAZY: dict[str, str] = {
    # A word: starts with a letter or digit, may hold `_ . - / @ : +` (identifiers, paths, versions), ends
    # with a letter, digit or mark. Runs of the no-space scripts are blanked out before it runs.
    "word": r"[^\W_][\w.\-/@:+" + WORD_MARKS + r"]*(?:[^\W_]|[" + WORD_MARKS + r"])|[^\W_]",
    # Where FTS5's unicode61 tokenizer splits a word of ours (it splits at marks of the Indic scripts too,
    # but a quoted term is a phrase, so the whole word still matches its pieces in order).
    "piece_split": r"[_.\-/@:+\u200c\u200d]+",
    "ws": r"\s+",
    "markup": r"[*_`>#|]+",
    "lead_bullet": r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+",
    "version": r"(?i)^v?\d+(?:\.\d+)+[a-z0-9.\-]*$",
    "space": r"\s",  # what str.isspace() calls space
    "ascii_letter": r"[A-Za-z]",
    # A Markdown table's rule line ("|---|:---:|"): no prose in it, and the line above is the table's header.
    "table_rule": r"^\s*\|?[\s:|-]+\|[\s:|-]*$",
    "cjk": "[" + CJK_RANGES + "]",  # one Chinese or Japanese character
    "kana": "[" + KANA_RANGES + "]",  # one Japanese kana
    "hangul": "[" + HANGUL_RANGES + "]",  # one Korean character
    "cyrillic": "[\u0400-\u04ff]",  # one Cyrillic letter
    "southeast": "[" + SOUTHEAST_ASIAN_RANGES + "]",  # one character of Thai, Lao, Myanmar or Khmer
    "no_space": "[" + CJK_RANGES + SOUTHEAST_ASIAN_RANGES + "]+",
    # One alternative per script: a bigram never spans two scripts.
    "runs": "([" + CJK_RANGES + "]+)|([" + SOUTHEAST_ASIAN_RANGES + "]+)|([" + HANGUL_RANGES + "]+)",
    "width": "[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff66-\uffdc]+",  # (letters and digits: punctuation is no term)
    "vowel_points": "[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u0640\u064b-\u065f\u0670"
                    "\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed]+",
    "latin_accented": "[\u00c0-\u024f\u1e00-\u1eff\u0300-\u036f]+",
    # The tag, with blanks or invisible characters (a zero-width space) anywhere in it, or "<" and "-" look-alikes.
    "block_tag": r"(?i)[<\uff1c\ufe64]({0}*/?)({0}*{1})".format(r"[\s\u00ad\u200b-\u200f\u2060-\u2064\ufeff]", (
        r"[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]*".join(c if c.isalnum() else r"[-\u2010-\u2015\u2212\ufe63\uff0d]"
                                                          for c in BLOCK_TAG))),
}
# Control characters but tabs and line breaks (a terminal's escape sequences, a NUL), and the bidirectional overrides
# and isolates that make a text display otherwise than it reads: what text from transcripts must not carry into a
# terminal or the model's context (`str.translate` table).
NOT_SHOWN = dict.fromkeys(c for c in (*range(0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F),
                                      *range(0x2066, 0x206A)) if chr(c) not in "\t\n\r")
_compiled: dict[str, re.Pattern] = {}


def _pattern(name: str) -> re.Pattern:
    found = _compiled.get(name)
    if found is None:
        import re

        found = _compiled[name] = re.compile(_LAZY[name])
    return found


_drop_marks: dict[int, None] | None = None


def _marks_dropped() -> dict[int, None]:
    """The combining marks of Thai, Lao, Myanmar and Khmer, as a `str.translate` table that drops them."""
    global _drop_marks
    if _drop_marks is None:
        marks = [chr(c) for lo, hi in ((0x0E00, 0x0F00), (0x1000, 0x10A0), (0x1780, 0x1800), (0x19E0, 0x1A00),
                                       (0xA9E0, 0xAA00), (0xAA60, 0xAA80))
                 for c in range(lo, hi) if unicodedata.category(chr(c))[0] == "M"]
        _drop_marks = str.maketrans(dict.fromkeys(marks))
    return _drop_marks


def has_cjk(text: str) -> bool:
    """True when `text` holds a Chinese or Japanese character."""
    return not text.isascii() and _pattern("cjk").search(text) is not None


def has_kana(text: str) -> bool:
    """True when `text` holds a Japanese kana (Chinese has none)."""
    return not text.isascii() and _pattern("kana").search(text) is not None


def has_hangul(text: str) -> bool:
    """True when `text` holds a Korean character."""
    return not text.isascii() and _pattern("hangul").search(text) is not None


def has_cyrillic(text: str) -> bool:
    """True when `text` holds a Cyrillic letter."""
    return not text.isascii() and _pattern("cyrillic").search(text) is not None


def has_southeast_asian(text: str) -> bool:
    """True when `text` holds a character of Thai, Lao, Myanmar or Khmer."""
    return not text.isascii() and _pattern("southeast").search(text) is not None


# Words a question about earlier work uses whatever it is about: they find everything, so they find nothing (the
# prompt hook's search leaves them out, and so does the glossary it searches with).
META_WORDS = frozenset("""user users project projects assistant claude session sessions earlier before previous
previously last time decided decide said say mentioned told asked currently current""".split())

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just let me more most my no nor
    not now of off on once only or other our ours out over own same she should so some such than that the
    their them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours ok okay yes yeah sure please thanks thank
    use using used make made get got need needs want wants like one two also via per etc i'm i'll i've we'll
    we're it's that's there's don't doesn't can't won't let's now then ll ve re""".split()
) | frozenset(
    # The commonest function words of Spanish, French, German, Italian, Portuguese, Russian and Greek,
    # leaving out any that is also a word of English or of code ("des", "die", "mit", "del", "aux", "os",
    # "dos", "nas", "em", "sa", "plus") or a language code ("en", "es").
    """el la los las un una unos unas de al que por para con sin lo le les se su sus como más pero muy
    este esta estos estas ese esa eso también hay
    les une du et ou qui dans pour par sur avec sans est sont ce cette ces il elle nous vous je ne pas
    der das den dem ein eine einen einem einer und oder aber ist sind wird werden von zu im auf für nicht kein
    keine ich wir sie auch nur noch wie wenn dass
    lo gli di della dei delle da su tra fra che sono più anche ma questo questa
    uma uns umas das nos sem não são mais mas ao isso
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее её мне было вот
    от меня еще ещё нет о из ему теперь когда даже ну ли если уже или ни быть был него до вас ведь там потом
    себя ей может они тут где есть ней для мы тебя их чем была сам чтоб без чего тоже себе под будет тогда
    кто этот того потому этого какой ним здесь этом мой тем чтобы нее сейчас были при об хоть после над тот
    через эти нас про всего них эту моя этой том им всю между это эта
    ο η το οι τα του της των και να σε με για από που είναι δεν θα""".split())


def normalise(text: str) -> str:
    """Lower-case, markup-free, single-spaced text: the basis of exact dedup."""
    text = unicodedata.normalize("NFKC", text)
    text = _pattern("lead_bullet").sub("", text)
    text = _pattern("markup").sub(" ", text)
    text = _pattern("ws").sub(" ", text).strip().lower()
    return text.rstrip(" .。!！;；:：")


def folded(text: str) -> str:
    """Case-folded, single-spaced text: two wordings of one thing compare alike ("Use  Redis" and "use redis")."""
    return " ".join(text.casefold().split())


def closest(word: str, known) -> str:
    """The known word closest to `word` (a setting's or a key's name mistyped), or '' when none is close."""
    from difflib import get_close_matches

    near = get_close_matches(word, sorted(known), n=1)
    return near[0] if near else ""


def content_hash(text: str) -> str:
    """Tagged hash of the normalised text (`b2:` + blake2b), unique per project."""
    digest = blake2b(normalise(text).encode("utf-8"), digest_size=16).hexdigest()
    return "b2:" + digest


def char_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of every run of CJK, Thai, Lao, Khmer, Myanmar or Hangul.
    A lone CJK character stays whole; a lone Hangul syllable is left to `word_tokens`.
    Thai, Lao, Khmer and Myanmar runs lose their combining marks first (vowel signs, tone marks): FTS5 splits words
    at them, and the bare consonant pairs are what an index and a query agree on.
    """
    if text.isascii():
        return []
    grams: list[str] = []
    for cjk, southeast, hangul in _pattern("runs").findall(text):
        run = cjk or hangul or southeast.translate(_marks_dropped())
        if len(run) == 1:
            if cjk:
                grams.append(run)
        else:
            grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


# The name the dedup layer knows; CJK runs give the same bigrams as before.
cjk_bigrams = char_bigrams


def width_folded(text: str) -> str:
    """`text` with its half- and full-width forms (U+FF00-U+FFEF: "ＳＱＬ", "ﾃﾞｰﾀ") as the usual ones ("SQL", "データ")."""
    width = _pattern("width")  # (for a search's terms: a whole NFKC would change Thai's "ทำ" as stores hold it)
    return unicodedata.normalize("NFC", width.sub(lambda m: unicodedata.normalize("NFKC", m[0]), text)) \
        if width.search(text) else text


def word_text(text: str) -> str:
    """`text` ready for a word pattern: NFC, vowel points dropped, runs of no-space scripts blanked. ASCII text comes
    back as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    text = _pattern("vowel_points").sub("", text)
    return _pattern("no_space").sub(" ", text)


def word_count(text: str) -> int:
    """About how many words `text` holds, in any script: its words written with spaces, and for the runs of
    scripts written without them, where splitting at spaces would make a whole sentence one word, one word
    per two characters of Chinese or Japanese and per three of Thai, Lao, Khmer or Myanmar (marks left out)."""
    if text.isascii():
        return len(text.split())
    cjk = southeast = 0
    for cjk_run, southeast_run, _ in _pattern("runs").findall(text):
        cjk += len(cjk_run)
        southeast += len(southeast_run.translate(_marks_dropped()))
    if not cjk and not southeast:
        return len(text.split())
    return len(_pattern("no_space").sub(" ", text).split()) + (cjk + 1) // 2 + (southeast + 2) // 3


def word_tokens(text: str) -> list[str]:
    """Lower-cased words of any script written with spaces, keeping identifiers, paths and versions whole."""
    return _pattern("word").findall(word_text(text).lower())


def simple_stem(word: str) -> str:
    """A light suffix stripper, so that 'tests' and 'test' meet in queries."""
    if len(word) > 4 and not any(c in word for c in "._/-@") and word.isalpha():
        for suffix in ("ing", "ies", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


# Russian and Ukrainian inflect nouns, adjectives and verbs ("база"/"базу"/"базы", "используем"/"использовать"): the
# longest of these endings that leaves three letters comes off (a reflexive -ся/-сь with it), so that the forms of a
# word meet. Far from a full stemmer, but enough for paraphrases to share their words and for a search to find "в
# папке" when asked for "папка".
CYRILLIC_ENDINGS = frozenset("""ировать овать ывать ивать уем уешь ует уете уют аем аешь ает аете ают яем яет яют
    ешь ете ишь ите ать ять ить еть уть ть ем ет ют ут ит ят ат ала али ало ила или ило ела ели ело ал ил ел ыми ими
    ого его ому ему ая яя ое ее ые ие ую юю ой ей ий ый ых их ым им ом иями ями ами ией иях ях ах ием иям ям ам ов
    ев ию ью ия ья а я о е у ю ы и ь й""".split())
_CYRILLIC_LETTERS = frozenset("абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ")
PREFIX_MARK = "*"  # a search term ending in it stands for every word it begins (`fts_any`)


def cyrillic_stem(word: str) -> str:
    """A lower-cased Cyrillic word without its ending (see `CYRILLIC_ENDINGS`); any other word as it is. No `re`:
    the prompt hook stems the words it searches for."""
    if len(word) <= 3 or not _CYRILLIC_LETTERS.issuperset(word):
        return word
    for cut in range(3, len(word) + 1):  # the shortest stem whose rest is one ending, a reflexive one, or nothing
        rest = word[cut:]
        if rest.endswith(("ся", "сь")):
            rest = rest[:-2]
        if not rest or rest in CYRILLIC_ENDINGS:
            return word[:cut]
    return word


def prefix_term(term: str) -> str:
    """The search term for every form of a Cyrillic word (its stem, marked as a prefix); any other term as it is."""
    if len(term) <= 3 or not _CYRILLIC_LETTERS.issuperset(term):
        return term
    return cyrillic_stem(term) + PREFIX_MARK


def prefix_of(term: str) -> str:
    """The stem a term made by `prefix_term` stands for; '' for any other term."""
    return term[:-1] if term.endswith(PREFIX_MARK) and len(term) > 1 else ""


def echoes(said: str, reply: str) -> bool:
    """Whether a reply says again what `said` said ("Netlify set up for the marketing site." after "We'll host the
    marketing site on Netlify."): two of its words at least, and half of them (common words aside)."""
    words = {w for w in fts_terms(said) if len(w) > 2 and w not in STOPWORDS}
    shared = words & set(fts_terms(reply)) if len(words) >= 2 else set()
    return len(shared) >= max(2, len(words) / 2)


def keywords(text: str, limit: int = 24) -> list[str]:
    """Distinct content keywords of `text` (`width_folded`), in order of first appearance."""
    text = text if text.isascii() else width_folded(text)
    seen: dict[str, None] = {}
    for token in word_tokens(text):
        if len(token) < 2 or token in STOPWORDS:
            continue
        seen.setdefault(token, None)
    for gram in char_bigrams(text):
        seen.setdefault(gram, None)
    return list(seen)[:limit]


def is_version(token: str) -> bool:
    return bool(_pattern("version").match(token))


def _fold_latin(match: re.Match) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", match.group(0)) if not "\u0300" <= c <= "\u036f")


def fts_terms(text: str) -> list[str]:
    """Terms of free text for an FTS5 query: words and character bigrams, no operators. Each is what FTS5's `unicode61
    remove_diacritics 2` tokenizer makes of it (Latin letters without their accents), to be looked up in the index's
    vocabulary; full-width forms as the usual ones (`width_folded`), and as written (what a store indexed before)."""
    if text.isascii():  # the usual case, without `re`
        return _ascii_terms(text)
    folded = width_folded(text)
    return _word_terms(text) if folded == text else list(dict.fromkeys(_word_terms(folded) + _word_terms(text)))


def _word_terms(text: str) -> list[str]:
    """`fts_terms` of any text: its words' pieces as FTS5 splits them, then its character bigrams."""
    terms: list[str] = []
    for token in word_tokens(text):
        if len(token) < 2 or token in STOPWORDS:
            continue
        if not token.isascii():
            token = _pattern("latin_accented").sub(_fold_latin, token)
        # FTS5's unicode61 tokenizer splits on punctuation; keep each alphanumeric piece.
        terms.extend(p for p in _pattern("piece_split").split(token) if len(p) > 1 and p not in STOPWORDS)
    terms.extend(char_bigrams(text))
    return list(dict.fromkeys(terms))


def _ascii_terms(text: str) -> list[str]:
    """`fts_terms` of ASCII text, as `_word_terms` finds them: a word of it splits at every character that is not a
    letter or digit, so its pieces are the text's runs of letters and digits (a stopword, or a word shorter than
    two characters, is one piece of the same kind: leaving out such pieces leaves out such words)."""
    return list(dict.fromkeys(w for w in ascii_words(text) if len(w) > 1 and w not in STOPWORDS))


def ascii_words(text: str) -> list[str]:
    """The runs of letters and digits of ASCII text, lower-cased (what `[^\\W_]+` finds), without `re`."""
    return text.lower().translate(_ASCII_BREAKS).split()


def fts_match(terms: list[str], limit: int = 32) -> str:
    """An FTS5 MATCH expression OR-ing quoted terms; '' when there are none.

    Every term is a double-quoted string, so no user input can become FTS5 syntax.
    """
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:limit])


def fts_any(groups) -> str:
    """An FTS5 MATCH expression OR-ing groups of terms, each group all of its terms (AND); a group given twice is
    said once, an empty one not at all; '' when there are none. Every term is quoted, as in `fts_match`; one made
    by `prefix_term` matches every word it begins."""
    parts = []
    for group in groups:
        quoted = ['"' + prefix_of(t).replace('"', '""') + '"*' if prefix_of(t) else '"' + t.replace('"', '""') + '"'
                  for t in group]
        if quoted:
            parts.append(quoted[0] if len(quoted) == 1 else "(" + " AND ".join(quoted) + ")")
    return " OR ".join(dict.fromkeys(parts))


def fts_match_forms(terms: list[str], forms: dict | None = None, limit: int = 32) -> str:
    """`fts_match` of `terms`, each also matched by its other `forms`: for a term, [text, joined, its terms] of the
    words naming the same thing in other languages (`recall.glossary.expand`), a phrase or a word written
    without spaces being all its terms; a Russian or Ukrainian word in any of its forms (`prefix_term`)."""
    forms = forms or {}
    return fts_any([prefix_term(t) for t in group]
                   for term in terms[:limit] for group in [[term], *(form[2] for form in forms.get(term, ()))])


def letter_ratio(text: str) -> float:
    """Share of letters among non-space characters (CJK characters count as letters, and so do the vowel
    signs and viramas of Indic and Southeast Asian scripts: combining marks belong to their letter)."""
    if text.isascii():  # the usual case, counted by the regex engine
        visible = len(text) - len(_pattern("space").findall(text))
        return len(_pattern("ascii_letter").findall(text)) / visible if visible else 0.0
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if c.isalpha() or (not c.isascii() and unicodedata.category(c)[0] == "M")) / len(chars)


def utf16_len(text: str) -> int:
    """Length as JavaScript (and Claude Code, which cuts a hook's context at 10,000) counts it: characters outside
    the BMP count twice."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def map_strings(value, change, kept: frozenset[str] | tuple = ()):
    """A JSON value with `change` applied to each string in it, but the values of the keys in `kept`."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [map_strings(item, change, kept) for item in value]
    if isinstance(value, dict):
        return {key: item if key in kept else map_strings(item, change, kept) for key, item in value.items()}
    return value


def escape_block_tag(text: str) -> str:
    """Text that cannot open, close or forge the recall block's tag (memory text, a project path), nor carry a
    control character (an escape sequence) into the model's context."""
    text = text.translate(NOT_SHOWN)
    if "<" not in text and "\uff1c" not in text and "\ufe64" not in text:
        return text
    return _pattern("block_tag").sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def index_text(text: str) -> str:
    """What FTS5 indexes besides the text: keywords plus character bigrams, space-separated."""
    return " ".join(keywords(text, limit=64))


def short(text: str, limit: int = 90) -> str:
    """Text for a "(was: …)" note: on one line and whole when short, else '' (a cut note would mislead)."""
    text = " ".join(text.split()).strip(" .。")
    return text if len(text) <= limit else ""


SENTENCE_MARKS = (". ", "。", "! ", "? ", "！", "？", "। ", "؟ ", "; ")  # where `clip` and `clip_start` cut, if near
_FLAG_LETTERS = "".join(map(chr, range(0x1F1E6, 0x1F200)))  # a flag is two of these


def _inside_grapheme(text: str, i: int) -> bool:
    """Whether a cut before `text[i]` splits a character as read (a mark, a virama's pair, a joined emoji, a flag)."""
    if not 0 < i < len(text) or text[i].isascii():
        return False
    import unicodedata  # (here: only a cut before a character beyond ASCII needs it)
    char, before = text[i], text[i - 1]
    return (unicodedata.category(char) in ("Mn", "Mc", "Me") or char in "\u200d\ufe0e\ufe0f" or before == "\u200d"
            or "VIRAMA" in unicodedata.name(before, "") or "\U0001f3fb" <= char <= "\U0001f3ff" or "\U000e0020" <= char
            <= "\U000e007f" or char in _FLAG_LETTERS and (i - len(text[:i].rstrip(_FLAG_LETTERS))) % 2 == 1)


def table_rule(line: str) -> bool:
    """Whether `line` is a Markdown table's rule ("|---|:---:|")."""
    return "|" in line and _pattern("table_rule").match(line) is not None


def clip(text: str, limit: int) -> str:
    """`text` on one line in at most `limit` characters: whole, else up to a sentence (or word) end, then ' …'."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    end = limit - 2
    while _inside_grapheme(text, end):
        end -= 1
    cut = text[:end]  # (never inside a character as read)
    for mark in SENTENCE_MARKS:
        pos = cut.rfind(mark)
        if pos >= len(cut) // 2:
            return cut[: pos + 1] + " …"
    space = cut.rfind(" ")
    return (cut[:space] if space >= len(cut) // 2 else cut) + " …"


def clip_start(text: str, limit: int) -> str:
    """The end of `text` in at most `limit` characters, from a sentence (else a word) start in the former half,
    after '… '; '' when too little would be left to say anything (under 80 characters)."""
    if limit < 80:
        return ""
    start = max(0, len(text) - (limit - 2))
    while _inside_grapheme(text, start):
        start += 1
    cut = text[start:]
    for mark in SENTENCE_MARKS:
        pos = cut.find(mark)
        if 0 <= pos < len(cut) // 2:
            return "… " + cut[pos + len(mark):].lstrip()
    space = cut.find(" ")
    return "… " + (cut[space + 1:] if 0 <= space < len(cut) // 2 else cut)
