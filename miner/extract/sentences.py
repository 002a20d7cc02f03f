"""Plain-text tests of a unit's sentence, no spaCy: hedges, questions, options, lead-ins, the quality gate,
and the unit's text as a memory.

The refinement steps (`refine.Refiner`) use them beside their spaCy
matchers, which share the hedge word lists kept here; the MCP tools, the
miner's unit filter and the similarity layer use them alone, off the spaCy
path. Chinese, Japanese and Korean are handled on the text.
"""

from __future__ import annotations

import re

from ..textutil import CJK_RANGES, HANGUL_RANGES, has_cjk, has_southeast_asian, letter_ratio, word_count
from . import questions
from .rule_matching import Hit

MIN_CHARS = 20
MIN_LETTER_RATIO = 0.30

# One source for the word lists: these tests and the refinement's matchers.
HEDGES = ("maybe", "might", "perhaps", "probably", "possibly", "i think", "i guess", "i suppose", "not sure",
          "could be", "may be", "i believe", "likely", "unclear", "hypothesis", "suspect")
CJK_HEDGES = ("可能", "也许", "也許", "大概", "或许", "或許", "好像", "似乎")
# Hedges of Spanish, Italian, Portuguese, French, German, Russian, Ukrainian, Polish, Dutch, Turkish,
# Indonesian, Vietnamese, Hindi and Arabic, matched as whole words on the text (the English tokenizer's tokens
# do not fit them). Only the phrase is a hedge where a word alone is not: Russian
# "может" is "can", "может быть" is "maybe".
WORD_HEDGES = (
    "quizás", "quizá", "tal vez", "a lo mejor", "probablemente", "posiblemente", "creo que", "puede que",
    "no estoy seguro", "no estoy segura",
    "forse", "probabilmente", "penso che", "credo che", "magari", "non sono sicuro", "non sono sicura",
    "talvez", "provavelmente", "possivelmente", "acho que", "não tenho certeza",
    "peut-être", "peut être", "probablement", "je pense que", "je crois que", "il semble", "sans doute",
    "je ne suis pas sûr", "je ne suis pas sûre",
    "vielleicht", "wahrscheinlich", "vermutlich", "möglicherweise", "anscheinend", "ich glaube", "ich denke",
    "ich vermute", "scheint", "scheinen",
    "возможно", "наверное", "наверно", "может быть", "кажется", "вероятно", "думаю", "скорее всего",
    "похоже", "видимо", "не уверен", "не уверена",
    "можливо", "мабуть", "напевно", "здається", "не впевнений", "не впевнена",
    "być może", "chyba", "prawdopodobnie", "wydaje się", "nie jestem pewien", "nie jestem pewna",
    "misschien", "waarschijnlijk", "vermoedelijk", "ik denk", "ik geloof",
    "belki", "muhtemelen", "sanırım", "galiba", "herhalde", "emin değilim",
    "mungkin", "sepertinya", "kayaknya", "barangkali", "tidak yakin",
    "có lẽ", "hình như", "không chắc",
    "शायद", "ربما", "أعتقد", "أظن", "لست متأكد",
)
# Japanese, Korean and Thai: no spaces in Japanese or Thai, particles on Korean words, so plain patterns. 多分
# only before kana or a pause (Chinese 多分钟 / 多分析 is "more minutes" / "analyse more"); 아마 not inside 아마존.
KANA_HANGUL_HEDGES = (r"かもしれ", r"かも知れ", r"たぶん", r"多分(?=[\u3040-\u309f、,，\s]|$)", r"おそらく", r"恐らく",
                      r"と思[うっいわ]", r"(?<!\w)아마(?:도)?(?!\w)", r"(?<!\w)것\s?같", r"(?<!\w)수도\s?있", r"듯(?:하|해|싶)",
                      r"อาจจะ", r"บางที", r"น่าจะ", r"ไม่แน่ใจ", r"คิดว่า")

# A closing question put to the assistant about what was just stated ("…, can you set that up?"), not one
# that doubts the statement ("…, but should we?").
_ASKS_THE_ASSISTANT_RE = re.compile(
    r"(?:(?:can|could|would|will) you|ok(?:ay)?\b|right\b|agreed\b|what do you think|how (?:do|can|should) (?:i|we)|"
    r"is that (?:ok|possible|clear)|应该|應該|怎么|怎麼|如何|可以吗|可以嗎|好吗|好嗎|行吗|行嗎|对吗|對嗎|你觉得|你覺得)",
    re.IGNORECASE,
)
_CLAUSE_SEPARATORS = (",", "，", ";", "；", "—")  # one character each: the tail starts right after
QUESTION_END_RE = re.compile(r"[?？؟][\s)\"'”」*_`]*$")  # Latin, full-width, Arabic
# A Thai question without a question mark: a closing particle ("…ได้ไหมครับ"), or "why" opening it.
# Thai asks with a word at the end, then its polite particles: yes/no (ไหม), where (ที่ไหน), what, who, when, how, how many
# (after a "not" or a "don't", "อะไร", "ใคร" and "ไหน" are "anything", "anyone", "any": `_THAI_NOT_RE`)
_THAI_QUESTION_RE = re.compile(r"(?:ไหม|มั้ย|หรือเปล่า|หรือยัง|หรือไม่|(?P<wh>ไหน|อะไร|ใคร)|เมื่อไร|เมื่อไหร่|"
                               r"อย่างไร|ยังไง|กี่\S{0,8})(?:ครับ|คะ|ค่ะ|จ๊ะ|จ้ะ|นะ|หรอ|เหรอ)*\s*$|^\s*ทำไม")
_THAI_NOT_RE = re.compile(r"^\s*(?:อย่า(?!ง)|ห้าม)|ไม่\S*$")  # a prohibition, or a "not" in the wh-word's own chunk
# A question the user writes without a question mark: a closing particle (吗/呢), or a "why"/"whether"/A-not-A
# form ("会不会", "是不是"), in a sentence that does not end as a statement.
_CJK_QUESTION_RE = re.compile(
    r"(?:吗|嗎|呢)[\s,，、~]*$|为什么|為什麼|为何|為何|是否|能否|会不会|會不會|是不是|有没有|有沒有|能不能|要不要|可不可以|"
    r"好不好|对不对|對不對|行不行|怎么办|怎麼辦|应该如何|應該如何|如何做")
_STATEMENT_END = ("。", "！", "!", "：", ":", "；", ";")
_HEDGE_RE = re.compile(
    r"\b(?:" + "|".join(re.escape(h) for h in HEDGES) + r"|seem(?:s|ed|ing)? (?:to|like))\b|" + "|".join(CJK_HEDGES),
    re.IGNORECASE,
)
# The hedges of other languages, looked up among a text's words (cheaper than one more regex of fifty
# alternatives on every unit): each hedge as its words, indexed by its first word. Then, only in text that
# has kana or Hangul, the Japanese and Korean patterns.
_WORDS_RE = re.compile(r"\w+")


def _by_first_word(phrases: tuple[str, ...]) -> dict[str, list[tuple[str, ...]]]:
    """Each phrase's words after the first, under its first word ("peut-être" → {"peut": [("être",)]})."""
    index: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        first, *rest = _WORDS_RE.findall(phrase)
        index.setdefault(first, []).append(tuple(rest))
    return index


_WORD_HEDGES_BY_FIRST = _by_first_word(WORD_HEDGES)
_KANA_HANGUL_HEDGE_RE = re.compile("|".join(KANA_HANGUL_HEDGES))


def other_hedge(text: str) -> bool:
    """A hedge of one of the other languages (`WORD_HEDGES`, `KANA_HANGUL_HEDGES`)."""
    words = _WORDS_RE.findall(text.lower())
    if not _WORD_HEDGES_BY_FIRST.keys().isdisjoint(words):
        for i, word in enumerate(words):
            for rest in _WORD_HEDGES_BY_FIRST.get(word, ()):
                if tuple(words[i + 1 : i + 1 + len(rest)]) == rest:
                    return True
    return not text.isascii() and bool(_KANA_HANGUL_HEDGE_RE.search(text))


# "I think I want…" voices the speaker's own wish, which the speaker cannot be unsure of: not a hedge.
# ("I think we need…" still judges what the work needs: a hedge.)
OWN_WISH_RE = re.compile(r"\bi think (?:i|we)(?:['’]d like| (?:really |just )?(?:want|would like|prefer))\b",
                          re.IGNORECASE)
# A statement, then an afterthought set off by a dash or a semicolon ("X is cached — probably to spare the API").
_AFTERTHOUGHT_RE = re.compile(r"\s(?:—|–|--)\s|——|;\s|；")
# A lead-in that stops mid-clause before a list ("The fix is to either:", "The changes include:"): it says
# nothing until what follows, which is its own unit.
LEAD_IN_RE = re.compile(r"(?i)\b(?:either|or|and|both|following|these|those|as follows|like|such as|includes?|including|"
                         r"are|is|to|the|a|an|of|with|by|for)\s*\**\s*[:：]\s*\**\s*$")
# A request pinned to a line of code as it is now ("add a log on line 76"): carried out at once, stale after.
LINE_ANCHORED_RE = re.compile(r"\b(?:on|at|in|near|around|from|after|before|starting (?:on|at|from))\s+lines?\s+\d+",
                               re.IGNORECASE)
# One of several options put up for a choice ("Option 2: …", "方案 B：…", "Cons: …"): unconfirmed until one is chosen.
_OPTION_RE = re.compile(
    r"^[\W_]*(?:option\s+(?:[a-z]|\d{1,2})|alternatives?(?:\s+(?:[a-z]|\d{1,2}))?|approach\s+(?:[a-z]|\d{1,2})|pros?|cons?|"
    r"(?:方案|选项|選項)\s*(?:[a-z]|\d{1,2}|[一二三四五])|优点|缺点|優點|缺點)\b[\s*_]*(?:\([^)]*\))?[\s*_]*[:：]",
    re.IGNORECASE)
_LEAD_MARKUP_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")


_CJK_CHAR_RE = re.compile("[" + CJK_RANGES + HANGUL_RANGES + "]")


def passes_quality_gate(text: str) -> bool:
    """Void Memory's gate: at least 20 characters and 30% letters (CJK counts as letters).

    A character of Chinese, Japanese or Korean says as much as a few Latin letters: six of them (and eight
    characters in all) are enough. Thai, Lao, Khmer and Myanmar put no spaces between words either, and
    their vowel and tone marks are characters of their own: three words' worth (`word_count`) is enough.
    """
    if len(text) >= MIN_CHARS:
        long_enough = True
    elif text.isascii() or len(text) < 8:
        long_enough = False
    else:
        long_enough = len(_CJK_CHAR_RE.findall(text)) >= 6 or (has_southeast_asian(text) and word_count(text) >= 3)
    return long_enough and letter_ratio(text) >= MIN_LETTER_RATIO


def statement_before_question(text: str, hit: Hit) -> str | None:
    """The statement a rule matched before a closing question, or None.

    "I want every commit message in English, can you set that up?" states a
    rule and then asks: the rule is kept, the question dropped.
    """
    cut = max(text.rfind(sep) for sep in _CLAUSE_SEPARATORS)
    statement = text[:cut].strip()
    if cut < 0 or hit.match.end() > cut or not passes_quality_gate(statement):
        return None
    tail = text[cut + 1:].strip()
    return statement if QUESTION_END_RE.search(tail) and _ASKS_THE_ASSISTANT_RE.match(tail) else None


def is_unmarked_question(text: str) -> bool:
    """A question without a question mark in Chinese ("这样写有什么好处,是否会影响性能"), Thai, Japanese, Korean
    or Russian (`questions`)."""
    stripped = text.rstrip()
    if text.isascii() or stripped.endswith(_STATEMENT_END):
        return False
    thai = _THAI_QUESTION_RE.search(stripped)
    if thai and thai.group("wh") and (_THAI_NOT_RE.match(stripped) or _THAI_NOT_RE.search(
            stripped[:thai.start()].rsplit(" ", 1)[-1])):
        thai = None  # "อย่าแชร์ key ให้ใคร": share it with no one, not "with whom?"
    return bool((has_cjk(stripped) and _CJK_QUESTION_RE.search(stripped)) or thai or questions.asks(stripped))


def is_quote(text: str) -> bool:
    """A Markdown block quote: words quoted from a document, a message or an earlier reply, not the speaker's own."""
    return text.lstrip().startswith(">")


def is_option(text: str) -> bool:
    """One of several options offered for a choice, or a pro or con of one: not decided yet."""
    return _OPTION_RE.match(text) is not None


def main_clause(text: str) -> str:
    """The statement before an afterthought of its own (four words or more after a dash or a semicolon).

    A hedge in the afterthought qualifies the afterthought: "`history.jsonl` must be ignored — it may hold
    secrets" states a firm rule. A lone "— maybe." is no afterthought: it hedges the statement.
    """
    found = _AFTERTHOUGHT_RE.search(text)
    if found is None or found.start() < MIN_CHARS:
        return text
    rest = text[found.end():]
    return text[:found.start()] if len(rest.split()) >= 4 or (has_cjk(rest) and len(rest) >= 8) else text


def is_hedged(text: str) -> bool:
    """The hedge words on plain text, in the main clause (the refiner also uses a trained pipeline's modal verbs)."""
    clause = OWN_WISH_RE.sub(" ", main_clause(text))
    return bool(_HEDGE_RE.search(clause)) or other_hedge(clause)


def display_text(text: str) -> str:
    """The unit as a memory: list markers, heading hashes, bold markers and dangling brackets removed."""
    text = _LEAD_MARKUP_RE.sub("", text.strip())
    text = _BOLD_RE.sub(lambda m: m.group(1) or m.group(2), text).strip()
    # Sentence splitting can leave a bracket that opens or closes in the neighbouring unit.
    if text.endswith("(") or (text.endswith(")") and text.count(")") > text.count("(")):
        text = text[:-1].rstrip()
    return text
