"""Questions typed without a question mark in Japanese, Korean and Russian.

A user asks "ステージングの設定ファイルってどこにある", "통합 테스트만 돌리려면 어떻게 해야 하나요" or
"как запустить только интеграционные тесты" as often as with a mark, and a question is never a memory.
`sentences.is_unmarked_question` asks here for text in these scripts (Chinese has its own closing particles
and forms there). Chinese question words are left out: "哪些", "什么" and "还是" stand inside statements as
often as they ask ("明确哪些属于…", "还是确认不出…": which ones, still), and in a Chinese project's history
most of the units they would have dropped were statements.

Two signs, written from the languages (bench/questions.py measures them on sentences written for it):

- a closing particle or ending that asks (Japanese か/かな/の/っけ, Korean -나요/-까/-니/-냐/-ㄴ가,
  Russian "ли" after the verb);
- a question word in the sentence's last clause (どこ/どう/なぜ/何…, 어디/어떻게/왜/뭐…), or opening it in
  Russian (где/как/почему…), unless the clause makes it "wherever", "however", "whatever" (Japanese
  ても/でも, Korean -든/-더라도/-어도, Russian "бы ни") or it opens a clause that states ("как мы решили",
  "где возможно": as we decided, where possible).

A sentence that ends as a statement ("。", "다.") is never one; `sentences` checks the closing marks first.
"""

from __future__ import annotations

import re

from ..textutil import has_cyrillic, has_hangul, has_kana

# --- Japanese -----------------------------------------------------------------------------------------------------
_JA_END_RE = re.compile(r"(?:か|かな|かね|っけ|の|のか|だろう|でしょう)[ねなよ]?[\s、,…~〜]*$")
# A question word, not as part of "いつも" (always), "何か" (something), "どこでも" (anywhere), "何度" (many times).
_JA_WORD_RE = re.compile(r"(?:どこ|どう|なぜ|なんで|何|どっち|どちら|どれ|どの|いつ|いくつ|誰)(?!も|か|でも|ぞ|ら|度)")
_JA_CONCESSIVE_RE = re.compile(r"ても|でも|であれ|にせよ|としても")
_JA_EMBEDDED_RE = re.compile(r"か(?:どうか|は|を|が|も|に|で|、|\s)\s*\S")

# --- Korean -------------------------------------------------------------------------------------------------------
# -나요, -까요, -까 (not -니까, "because"), -니, -냐, -ㄴ가(요), -는지요, -던가
_KO_END_RE = re.compile(r"(?:나요|까요|(?<!니)까|니|냐|는가요|은가요|인가요|는가|은가|인가|던가요|는지요)[\s~.…]*$")
# (Not "몇 가지", "a few", nor "왜냐하면", "because".)
_KO_WORD_RE = re.compile(r"어디|어떻게|어떡|왜(?!냐)|뭐|뭘|무슨|무엇|언제|얼마|몇(?!\s*가지)|누가|누구|어느|어떤")
_KO_CONCESSIVE_RE = re.compile(r"든|더라도|어도|아도|라도|에도")
_KO_EMBEDDED_RE = re.compile(r"지(?:를|는|도|가)?\s+\S")

# --- Russian ------------------------------------------------------------------------------------------------------
_RU_LEAD_RE = re.compile(r"^(?:(?:а|и|ну|так|слушай|подскажи|скажи|кстати)[\s,]+)+", re.IGNORECASE)
_RU_ASKING = frozenset("почему зачем отчего сколько какой какая какое какие каком какую каких каким куда откуда кто "
                       "чей чья чьё чьи".split())
# Question words that also open statements: asking unless the next word makes them "as", "where", "what".
_RU_OPENERS = frozenset("как где что".split())
_RU_STATING_NEXT = frozenset("мы вы я он она они и обычно всегда было бы раньше договорились возможно нужно надо "
                             "только если уже сказано указано принято описано касается".split())
_RU_PREPOSITIONS = frozenset("в во на с со из для по к ко о об от у за под при до".split())
_RU_LI_RE = re.compile(r"^\S+(?:\s+\S+)?\s+ли\b", re.IGNORECASE)
_RU_CONCESSIVE_RE = re.compile(r"\bбы\s+ни\b|\bни\s+был", re.IGNORECASE)
_RU_WORD_RE = re.compile(r"[\w-]+")

_CLAUSE_RE = re.compile(r"[,，、;；]")


def _last_clause(text: str) -> str:
    return _CLAUSE_RE.split(text)[-1]


def _asks(text: str, ending: re.Pattern, word: re.Pattern, *stating: re.Pattern) -> bool:
    """An ending that asks, or a question word in the last clause that nothing of `stating` after it turns into
    a statement ("wherever", or a question inside a statement: "どれを使うかはチームで決める",
    "어디에 있는지 확인해 줘")."""
    if ending.search(text):
        return True
    clause = _last_clause(text)
    found = word.search(clause)
    return found is not None and not any(pattern.search(clause, found.end()) for pattern in stating)


def _japanese(text: str) -> bool:
    return _asks(text, _JA_END_RE, _JA_WORD_RE, _JA_CONCESSIVE_RE, _JA_EMBEDDED_RE)


def _korean(text: str) -> bool:
    return not text.rstrip(" .~…").endswith("다") and _asks(text, _KO_END_RE, _KO_WORD_RE, _KO_CONCESSIVE_RE,
                                                            _KO_EMBEDDED_RE)


def _russian(text: str) -> bool:
    if text.endswith(".") or _RU_CONCESSIVE_RE.search(text):
        return False
    opening = _RU_LEAD_RE.sub("", text.strip())
    if _RU_LI_RE.match(opening):
        return True
    words = [w.lower() for w in _RU_WORD_RE.findall(opening)[:3]]
    if words and words[0] in _RU_PREPOSITIONS:
        words = words[1:]  # "в каком модуле…", "на какой порт…"
    if not words:
        return False
    if words[0] in _RU_ASKING:
        return True
    return words[0] in _RU_OPENERS and len(words) > 1 and words[1] not in _RU_STATING_NEXT


def asks(text: str) -> bool:
    """Whether `text` (stripped, not ending as a statement) asks in Japanese, Korean or Russian."""
    if has_kana(text):
        return _japanese(text)
    if has_hangul(text):
        return _korean(text)
    return has_cyrillic(text) and _russian(text)
