"""Refinement after the rules, with spaCy: drop what is not a memory, mark what is hedged, make units self-contained.

Runs on candidate units only (those a rule matched), so its cost does not
grow with the transcript. Each step is a method taking a spaCy `Doc`, so
that it can be tested and explained on its own:

- on the blank pipeline the steps use token attributes, lookup lemmas, a
  `Matcher` (openers such as "let me", "I'll check", "I've updated") and
  `PhraseMatcher`s (greetings, hedges), and plain patterns (pasted program
  output, a user's request pinned to a line number, a lead-in that stops
  before its list, options put up for a choice, which are kept but
  unconfirmed);
- on a trained pipeline they also use its tags and parse: an auxiliary
  before its subject is a question, a first-person future of a work verb is
  narration, a modal "might" is a hedge, "this" as a determiner needs no
  context.

Chinese is handled on the text: the English tokenizer keeps a run of CJK
characters as one token. `refine` applies the steps in order and says which
one dropped a unit.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from .clean import has_cjk
from .model import Candidate, Unit
from .nlp import Pipeline, has_parse
from .rules import Hit
from ..textutil import CJK_RANGES, HANGUL_RANGES, keywords, letter_ratio

MIN_CHARS = 20
MIN_LETTER_RATIO = 0.30
MAX_MERGED_CHARS = 400
MAX_KEYWORDS = 32
# A unit this short that ends with "this"/"it" says nothing without the unit before it.
SHORT_REFERENCE_WORDS = 8
END_REFERENCES = frozenset({"this", "that", "it", "them", "these", "those"})

# One source for the word lists: the matchers below and the plain-text helpers used off the miner's path.
HEDGES = ("maybe", "might", "perhaps", "probably", "possibly", "i think", "i guess", "i suppose", "not sure",
          "could be", "may be", "i believe", "likely", "unclear", "hypothesis", "suspect")
CJK_HEDGES = ("可能", "也许", "也許", "大概", "或许", "或許", "好像", "似乎")
# Hedges of Spanish, Italian, Portuguese, French, German and Russian, matched as whole words on the text (the
# English tokenizer's tokens do not fit them). Only the phrase is a hedge where a word alone is not: Russian
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
)
# Japanese and Korean: no spaces in Japanese, particles on Korean words, so plain patterns. 多分 only before
# kana or a pause (Chinese 多分钟 / 多分析 is "more minutes" / "analyse more"); 아마 not inside 아마존.
KANA_HANGUL_HEDGES = (r"かもしれ", r"かも知れ", r"たぶん", r"多分(?=[\u3040-\u309f、,，\s]|$)", r"おそらく", r"恐らく",
                      r"と思[うっいわ]", r"(?<!\w)아마(?:도)?(?!\w)", r"(?<!\w)것\s?같", r"(?<!\w)수도\s?있", r"듯(?:하|해|싶)")
MODAL_HEDGES = frozenset({"might", "may", "could"})
GREETINGS = ("hi", "hello", "hey", "thanks", "thank", "thank you", "thx", "great", "perfect", "awesome", "nice",
             "excellent", "cool", "ok", "okay", "sure", "got it", "sounds good", "lgtm", "good job", "good work",
             "well done", "it works", "that works", "this works", "it worked", "that worked", "looks good",
             "that looks good", "this looks good", "it looks good")
CJK_GREETINGS = ("谢谢", "謝謝", "好的", "你好", "太好了", "完美")
QUESTION_WORDS = frozenset({"what", "why", "how", "when", "where", "which", "who", "whose"})
QUESTION_OPENERS = {"can": {"you"}, "could": {"you"}, "would": {"you"}, "will": {"you"}, "should": {"we", "i"},
                    "shall": {"we"}, "do": {"you"}, "did": {"you"}, "is": {"there", "it"}, "are": {"there", "you"},
                    "any": {"idea", "ideas", "thoughts"}}
DISCOURSE = frozenset({"ok", "okay", "now", "first", "next", "then", "great", "perfect", "good", "alright",
                       "excellent", "done", "so"})
ADVERBS = ["now", "first", "also", "then", "quickly", "just", "successfully", "next"]
# Verbs of the assistant's own work: "I'll check…", "Checking…" narrate; "I've updated…" recaps.
WORK_VERBS = ["check", "look", "read", "start", "run", "update", "create", "add", "fix", "examine", "test", "verify",
              "search", "review", "implement", "write", "explore", "investigate", "try", "open", "inspect", "analyze",
              "analyse", "build", "make", "set", "begin", "continue", "proceed", "launch", "modify", "edit",
              "refactor", "remove", "install", "commit", "push", "deploy", "go", "see", "find", "debug", "trace",
              "fetch", "scan", "rerun", "clean"]
# After "let's" only verbs of looking into things: "let's go with pnpm" and "let's use X" are decisions.
LETS_VERBS = ["check", "look", "see", "start", "run", "test", "verify", "read", "try", "examine", "explore", "update",
              "fix", "create", "review", "first", "debug", "inspect", "investigate", "find"]
LOOKUP_VERBS = ["check", "look", "read", "see", "find", "update", "fix", "verify"]
DONE_VERBS = ["create", "update", "add", "fix", "implement", "make", "change", "write", "build", "complete",
              "finish", "remove", "refactor", "modify", "set", "move", "rename", "install", "commit", "push",
              "deploy", "test", "verify", "run", "replace", "convert"]
# Words that, right after "this"/"that", make it a pronoun ("This means…") rather than a determiner ("This file…").
# Compared with the following word and its lemma, so base forms cover "is", "means", "works".
PRONOUN_FOLLOWERS = frozenset({
    "be", "'s", "will", "'ll", "would", "should", "can", "could", "may", "might", "must", "do", "have", "mean",
    "make", "work", "seem", "look", "need", "happen", "ensure", "allow", "keep", "give", "let", "cause", "break",
    "fix", "help", "avoid", "prevent", "sound", "explain", "match", "depend", "get", "go", "run", "save",
    "way", "one", "also", "just", "only", "still", "already",
})
DANGLING = frozenset({"this", "that", "it", "these", "those", "they"})
CJK_DANGLING = ("它", "这", "這", "那")

# The first words of the narration and recap patterns below (kept in step with them; a test checks it).
_OPENERS = frozenset({"let", "i", "successfully", "all", "the", "changes", "fix", "update", "implementation",
                      "summary", "here", "what"})
# A closing question put to the assistant about what was just stated ("…, can you set that up?"), not one
# that doubts the statement ("…, but should we?").
_ASKS_THE_ASSISTANT_RE = re.compile(
    r"(?:(?:can|could|would|will) you|ok(?:ay)?\b|right\b|agreed\b|what do you think|how (?:do|can|should) (?:i|we)|"
    r"is that (?:ok|possible|clear)|应该|應該|怎么|怎麼|如何|可以吗|可以嗎|好吗|好嗎|行吗|行嗎|对吗|對嗎|你觉得|你覺得)",
    re.IGNORECASE,
)
_CLAUSE_SEPARATORS = (",", "，", ";", "；", "—")  # one character each: the tail starts right after
_QUESTION_END_RE = re.compile(r"[?？][\s)\"'”」*_`]*$")
# A question the user writes without a question mark: a closing particle (吗/呢), or a "why"/"whether"/A-not-A
# form ("会不会", "是不是"), in a sentence that does not end as a statement.
_CJK_QUESTION_RE = re.compile(
    r"(?:吗|嗎|呢)[\s,，、~]*$|为什么|為什麼|为何|為何|是否|能否|会不会|會不會|是不是|有没有|有沒有|能不能|要不要|可不可以|"
    r"好不好|对不对|對不對|行不行|怎么办|怎麼辦|应该如何|應該如何|如何做")
_STATEMENT_END = ("。", "！", "!", "：", ":", "；", ";")
# Program output pasted into the conversation: an exception line, a stack frame, a Ruby hash dump, git's
# branch report, a test runner's counts or failures, a compiler error, a JSON log line. Somebody's program
# said it; nobody decided or stated it.
_OUTPUT_RE = re.compile(
    r"^\s*\{\"[\w-]+\":|^\s*not ok \d+\b|\berror TS\d{4}:|"
    r"^\W{0,3}(?:(?:Uncaught\s+(?:\(in promise\)\s+)?)?[\w.]*(?:Error|Exception)\b:|Traceback \(most recent call last\)|npm ERR!|\[(?:new branch|new tag|"
    r"deleted|rejected)\])|(?:'[^']*'|\"[^\"]*\")\s*=>\s*[\[{'\"\d]|^\s*at [\w.$<>]+ \(\S*:\d+|"
    r"(?i:\b\d+ (?:examples?|tests?|failures?|errors?|passed|failed)\b,?\s*(?:and\s+)?\d+ (?:other\s+)?"
    r"(?:examples?|tests?|failures?|errors?|passed|failed|skipped)\b)")
# Stack frames and crash reports of other runtimes, and test runners' failure lines: Python ('File "x.py", line 9'),
# IPython ("File ~/x.py:95, in read_csv", "Cell In[3], line 5", "---> 95 df = read()"), Rust ("thread 'main'
# panicked at", "--> src/main.rs:5:9"), Go ("goroutine 1 [running]:", "main.go:12 +0x1d"), Java ("Caused by: …", "at a.B.c(B.java:42)",
# "... 12 more"), .NET ("at A.B() in C:\x.cs:line 9"), pytest ("E   assert …", "FAILED tests/x.py::t",
# "x.py:12: in f"), Python warnings ("DeprecationWarning: …").
_TRACE_RE = re.compile(  # one anchored alternation: `match` tries the start of the unit only
    r"\s*(?:File \"[^\"\n]+\", line \d+|File \S+:\d+(?:, in \S|\s*$)|(?:Cell|Input) In\s*\[\d*\]|"
    r"-{2,}>\s*\d+\s|-->\s+\S+:\d+(?::\d+)?\s*$|thread '[^'\n]*' panicked at\b|note: run with `RUST_BACKTRACE|"
    r"error\[E\d{4}\]:|\d+: (?:0x[0-9a-f]+ - )?[\w<>$]+::[\w<>${}:]+|at \S+\.\w+:\d+(?::\d+)?\s*$|"
    r"goroutine \d+ \[[^\]\n]+\]:|panic: \S|\S+\.go:\d+(?: \+0x[0-9a-f]+)?\s*$|exit status \d+\s*$|"
    r"Caused by: [\w.$]+|Exception in thread \"|"
    r"at [\w.$<>/]+\((?:[\w.$ -]+\.(?:java|kt|kts|scala|groovy|clj):\d+|Native Method|Unknown Source)\)|"
    r"\.\.\. \d+ (?:more|common frames omitted)\s*$|at [\w.<>`\[\], ]+\(.*\) in \S.*:line \d+|"
    r"E\s+(?:assert\b|[\w.]*(?:Error|Exception|Warning)\b|[+\-?]\s|where\b|and\b|At index\b|Left contains|"
    r"Right contains|Full diff|Use -v|Omitting\b|Differing items)|"
    r"(?:FAILED|ERROR|PASSED|XFAIL|XPASS|SKIPPED)\s+[\w/.\-\[\]]+(?:::|\.py\b)|"
    r"[\w/.\-]+\.py:\d+: (?:in \w|[\w.]*(?:Error|Exception|Warning)\b)|collected \d+ items?\b|"
    r"=+ .*\bin \d+(?:\.\d+)?s\b|\W{0,3}[\w.]*\wWarning: )")


def _is_trace(text: str) -> bool:
    return _TRACE_RE.match(text) is not None or "<ipython-input-" in text


# A numbered line of code, as IPython and debuggers print the lines around a frame ("93 kwds.update(defaults)",
# "94 def read(path):", "95 import pandas as pd"): a number, then something no sentence starts with.
_NUMBERED_CODE_RE = re.compile(
    r"^\s*\d{1,5}\s+(?:(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]|"
    r"(?:return|raise|yield|assert|await)(?:\s+[\w.]+(?:\(|\s*[,=<>!]=?|\s*$)|\s*$)|"
    r"import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+)*\s*$|from\s+[\w.]+\s+import\s|"
    r"(?:if|elif|while|for|with|try|except|finally|else)\b.*:\s*$|[\w.\[\]'\"]+\s*[-+*/%|&]?=(?!=)\s*\S|[\w.]+\()")
_NUMBERED_LINE_RE = re.compile(r"^\s*\d{1,5}\s+\S")
# A line a script prints about its results: "label: number", nothing more ("Accuracy: 0.9312", "- Label: 15.86%").
_METRIC_LINE_RE = re.compile(
    r"^\s*(?:[-*+•]\s+)?(?P<label>[^\W\d][\w .\-/()@#']{0,48}?)\s*[:=]\s*"
    r"(?P<value>[-+]?\d+(?:\.\d+)?)\s*(?P<percent>%)?(?:\s*(?:±|\+/-|\+-)\s*\d+(?:\.\d+)?\s*%?)?"  # 0.93 ± 0.02
    r"\s*(?:[a-zA-Zµ]{1,4}(?:/[a-zA-Z]{1,4})?)?\s*(?:\([^)\n]{0,30}\))?\s*[.,;]?\s*$")  # a unit, a note: "ms", "(macro)"
# Several "label: decimal" pairs on one line ("loss: 0.2345 - accuracy: 0.9312", "precision=0.91, recall=0.87").
_METRIC_PAIR_RE = re.compile(r"(?<![\w.])[^\W\d][\w\-/]*\s*[:=]\s*[-+]?\d+\.\d+%?")
# Labels of a value somebody chose, not measured: such a line is a decision ("Coverage target: 80.5%").
_CHOSEN_VALUE_RE = re.compile(
    r"(?i)\b(?:target|goal|threshold|limit|budget|max|maximum|min|minimum|cap|ceiling|floor|slo|sla|at least|at most|"
    r"should|must|keep|default|set|use|expected|required|desired|minimal|maximal)\b")
# Labels of a measurement: with any decimal value the line is a script's report ("Accuracy: 0.93").
_MEASURE_LABEL_RE = re.compile(
    r"(?i)\b(?:accuracy|acc|precision|recall|f1(?:[-_ ]?score)?|auc|roc[-_ ]?auc|loss|mse|rmse|mae|mape|r2|r²|bleu|"
    r"rouge[\w-]*|perplexity|iou|map(?:@\d+)?|ndcg(?:@\d+)?|top-?\d+(?: acc\w*)?|score|error rate|std|stdev|mean|"
    r"median|avg|average|throughput|elapsed|wall time|cpu time|"
    r"(?:val|train|test|eval)[_ ]?(?:loss|acc\w*|f1|auc|score|error|mae|mse|rmse|precision|recall))\b")


def _significant_digits(value: str) -> str:
    return value.lstrip("+-").replace(".", "").lstrip("0").rstrip("0")


def _round_figure(value: str) -> bool:
    """A value a person picks (0.25, 0.001, 1.5, 12.5), not one a program prints (0.9312, 15.86)."""
    digits = _significant_digits(value)
    return len(digits) <= 1 or (len(digits) <= 3 and digits.endswith("5"))


def _metric(text: str) -> re.Match | None:
    """A "label: decimal number" line whose label does not name a chosen value (a target, a limit, a default)."""
    found = _METRIC_LINE_RE.match(text)
    if found is None or "." not in found.group("value") or _CHOSEN_VALUE_RE.search(found.group("label")):
        return None
    return found


def _printed_fraction(found: re.Match) -> bool:
    """A share as programs print them: a percentage with decimals, or a fraction below 1 with two or more."""
    value = found.group("value")
    whole, _, decimals = value.lstrip("+-").partition(".")
    return not _round_figure(value) and (bool(found.group("percent")) or (whole == "0" and len(decimals) >= 2))


def is_metric_printout(text: str, previous: str = "") -> bool:
    """A script's report of its results ("Accuracy: 0.9312", "- Label: 15.86%", "loss: 0.23 - acc: 0.91").

    A single "label: number" line is ambiguous ("Timeout: 30", "- Coverage target: 80%", "- Node: 20.11"
    are decisions), so it counts only when its shape is clearly a program's: several "label: decimal"
    pairs on one line; a measurement's label (accuracy, loss, F1, mean…) with a decimal value; a
    percentage with two or more decimals; three or more decimals that are not a round figure; or, right
    after another "label: decimal" line (`previous`: the only sibling refinement sees), a share that is
    not round (0.87, 15.8%). Integers never count, and a label that names a chosen value (target, limit,
    threshold, default…) keeps the line whatever its number.
    """
    if ":" not in text and "=" not in text:
        return False
    if len(_METRIC_PAIR_RE.findall(text)) >= 2 and not _CHOSEN_VALUE_RE.search(text):
        words_left = [w for w in _METRIC_PAIR_RE.sub(" ", text).split() if any(c.isalpha() for c in w)]
        if len(words_left) <= 2:  # nothing but the pairs, and perhaps "Epoch 3/10"
            return True
    found = _metric(text)
    if found is None:
        return False
    value = found.group("value")
    decimals = len(value.partition(".")[2])
    if _MEASURE_LABEL_RE.search(found.group("label")):
        return True
    if not _round_figure(value) and (decimals >= 3 or (found.group("percent") and decimals >= 2)):
        return True
    return bool(previous) and _metric(previous) is not None and _printed_fraction(found)


_CJK_NARRATION_RE = re.compile(r"^(?:让我|讓我|我来|我來|现在我|現在我|接下来我|接下來我|我先|首先我|我将|我將)")
_CJK_RECAP_RE = re.compile(r"^(?:我已经|我已經|已完成|完成了)")
_CJK_PUNCT_RE = re.compile(r"[\s!.,，。！~、]+")
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


def _other_hedge(text: str) -> bool:
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
_OWN_WISH_RE = re.compile(r"\bi think (?:i|we)(?:['’]d like| (?:really |just )?(?:want|would like|prefer))\b",
                          re.IGNORECASE)
# A statement, then an afterthought set off by a dash or a semicolon ("X is cached — probably to spare the API").
_AFTERTHOUGHT_RE = re.compile(r"\s(?:—|–|--)\s|——|;\s|；")
# A lead-in that stops mid-clause before a list ("The fix is to either:", "The changes include:"): it says
# nothing until what follows, which is its own unit.
_LEAD_IN_RE = re.compile(r"(?i)\b(?:either|or|and|both|following|these|those|as follows|like|such as|includes?|including|"
                         r"are|is|to|the|a|an|of|with|by|for)\s*\**\s*[:：]\s*\**\s*$")
# A request pinned to a line of code as it is now ("add a log on line 76"): carried out at once, stale after.
_LINE_ANCHORED_RE = re.compile(r"\b(?:on|at|in|near|around|from|after|before|starting (?:on|at|from))\s+lines?\s+\d+",
                               re.IGNORECASE)
# One of several options put up for a choice ("Option 2: …", "方案 B：…", "Cons: …"): unconfirmed until one is chosen.
_OPTION_RE = re.compile(
    r"^[\W_]*(?:option\s+(?:[a-z]|\d{1,2})|alternatives?(?:\s+(?:[a-z]|\d{1,2}))?|approach\s+(?:[a-z]|\d{1,2})|pros?|cons?|"
    r"(?:方案|选项|選項)\s*(?:[a-z]|\d{1,2}|[一二三四五])|优点|缺点|優點|缺點)\b[\s*_]*(?:\([^)]*\))?[\s*_]*[:：]",
    re.IGNORECASE)
_LEAD_MARKUP_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")


@dataclass(frozen=True)
class Verdict:
    """What refinement made of a unit: a candidate, or why it was dropped; and the steps it went through, in
    order, each with what it did when it changed something ("question: the statement before it")."""

    candidate: Candidate | None
    dropped_by: str = ""
    steps: tuple[str, ...] = ()


@dataclass
class Work:
    """A unit on its way through the steps: a step may replace the unit and its doc, or set the memory text."""

    unit: Unit
    doc: Any
    hit: Hit
    assistant: bool
    text: str = ""
    tentative: bool = False
    note: str = ""  # what the last step did, for the trace


# --- plain-text steps (no spaCy: also used by the MCP tools and the similarity layer) ----------------


_CJK_CHAR_RE = re.compile("[" + CJK_RANGES + HANGUL_RANGES + "]")


def passes_quality_gate(text: str) -> bool:
    """Void Memory's gate: at least 20 characters and 30% letters (CJK counts as letters).

    A character of Chinese, Japanese or Korean says as much as a few Latin letters: six of them (and eight
    characters in all) are enough.
    """
    cjk = 0 if text.isascii() else len(_CJK_CHAR_RE.findall(text))
    long_enough = len(text) >= MIN_CHARS or (cjk >= 6 and len(text) >= 8)
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
    return statement if _QUESTION_END_RE.search(tail) and _ASKS_THE_ASSISTANT_RE.match(tail) else None


def is_output(text: str, previous: str = "") -> bool:
    """Program output pasted into the conversation ("AssertionError: …", "at foo (x.ts:9:1)", "[new branch] …",
    a traceback's frames and code lines, a script's metric printout).

    `previous` is the unit before this one: a numbered line right after a traceback line is one of its
    code lines, and a metric line after another is one of a printout's.
    """
    if _OUTPUT_RE.search(text) or _is_trace(text) or _NUMBERED_CODE_RE.match(text):
        return True
    if previous and _NUMBERED_LINE_RE.match(text) and (_is_trace(previous) or _NUMBERED_CODE_RE.match(previous)):
        return True
    return is_metric_printout(text, previous)


def is_unmarked_question(text: str) -> bool:
    """A Chinese question without a question mark ("这样写有什么好处,是否会影响性能")."""
    stripped = text.rstrip()
    return has_cjk(stripped) and not stripped.endswith(_STATEMENT_END) and bool(_CJK_QUESTION_RE.search(stripped))


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
    clause = _OWN_WISH_RE.sub(" ", main_clause(text))
    return bool(_HEDGE_RE.search(clause)) or _other_hedge(clause)


def display_text(text: str) -> str:
    """The unit as a memory: list markers, heading hashes, bold markers and dangling brackets removed."""
    text = _LEAD_MARKUP_RE.sub("", text.strip())
    text = _BOLD_RE.sub(lambda m: m.group(1) or m.group(2), text).strip()
    # Sentence splitting can leave a bracket that opens or closes in the neighbouring unit.
    if text.endswith("(") or (text.endswith(")") and text.count(")") > text.count("(")):
        text = text[:-1].rstrip()
    return text


# --- the spaCy steps -----------------------------------------------------------------------------


class Refiner:
    """The matchers of one pipeline, built once; `refine` runs every step on a unit a rule matched."""

    def __init__(self, pipeline: Pipeline):
        from spacy.matcher import Matcher, PhraseMatcher

        self.pipeline = pipeline
        self.nlp = pipeline.nlp
        vocab = self.nlp.vocab
        make = self.nlp.make_doc
        self.greetings = PhraseMatcher(vocab, attr="LOWER")
        self.greetings.add("GREETING", [make(g) for g in GREETINGS])
        self.hedges = PhraseMatcher(vocab, attr="LOWER")
        self.hedges.add("HEDGE", [make(h) for h in HEDGES])
        self.matcher = Matcher(vocab)
        self.matcher.add("HEDGE", [[{"LEMMA": "seem"}, {"LOWER": {"IN": ["to", "like"]}}]])
        self.matcher.add("NARRATION", _narration_patterns())
        self.matcher.add("RECAP", _recap_patterns())
        self._labels = {vocab.strings[name]: name for name in ("HEDGE", "NARRATION", "RECAP")}

    def doc(self, text: str):
        """The unit's display text through the pipeline."""
        return self.nlp(display_text(text))

    def _matches(self, doc) -> tuple[set[str], set[str]]:
        """(labels found anywhere, labels that open the text after discourse words such as "Okay, now").

        The matcher runs once per doc; the steps share its result.
        """
        found = doc.user_data.get("miner_matches")
        if found is None:
            start = _content_start(doc)
            opener = doc[start].lower_ if start < len(doc) else ""
            # Every pattern opens with one of a few words, or is a hedge with "seem": most units skip the matcher,
            # which checks the doc's lemmas token by token on every call.
            if opener in _OPENERS or opener.endswith("ing") or "seem" in _text(doc).lower():
                matches = [(self._labels[m], s) for m, s, _ in self.matcher(doc)]
            else:
                matches = []
            found = doc.user_data["miner_matches"] = ({m for m, _ in matches}, {m for m, s in matches if s == start})
        return found

    def _opening(self, doc) -> set[str]:
        return self._matches(doc)[1]

    def is_question(self, doc) -> bool:
        text = _text(doc).strip()
        if _QUESTION_END_RE.search(text):
            return True
        if text.endswith((".", "。", "!")) or not len(doc):
            return False
        first = doc[0]
        second = doc[1].lower_ if len(doc) > 1 else ""
        if first.lower_ in QUESTION_WORDS or second in QUESTION_OPENERS.get(first.lower_, ()):
            return True
        if has_parse(doc):  # "Is the cache still used", "Does the build need node 20"
            subject_after = any(t.dep_ in ("nsubj", "nsubjpass", "expl") for t in doc[1:])
            return (first.tag_ in ("WDT", "WP", "WP$", "WRB")) or (first.pos_ == "AUX" and subject_after)
        return False

    def is_greeting(self, doc) -> bool:
        """Nothing but thanks, praise and acknowledgement."""
        if _CJK_PUNCT_RE.sub("", _text(doc)) in CJK_GREETINGS:
            return True
        covered = set()
        for _, start, end in self.greetings(doc):
            covered.update(range(start, end))
        return bool(covered) and all(i in covered or t.is_punct or t.is_space for i, t in enumerate(doc))

    def is_narration(self, doc) -> bool:
        """The assistant saying what it is about to do: "Let me check…", "Now I'll update…", "Checking…"."""
        if _CJK_NARRATION_RE.match(_text(doc)) or "NARRATION" in self._opening(doc):
            return True
        clause = _first_person_clause(doc)
        return clause is not None and clause[0].lemma_ in WORK_VERBS and bool(clause[1] & {"will", "shall"})

    def is_recap(self, doc) -> bool:
        """The assistant reporting what it just did: "I've updated…", "Successfully built…"."""
        if _CJK_RECAP_RE.match(_text(doc)) or "RECAP" in self._opening(doc):
            return True
        clause = _first_person_clause(doc)
        return (clause is not None and clause[0].tag_ == "VBN" and "have" in clause[1]
                and clause[0].lemma_ in DONE_VERBS)

    def is_hedged(self, doc) -> bool:
        """"maybe", "I think" (but not "I think I want"), "seems to", "可能"…; with a parse, also a modal
        "might"/"may"/"could"."""
        text = _text(doc)
        head = main_clause(text)
        if len(head) < len(text) or _OWN_WISH_RE.search(text):
            # Only the statement's own words count: not an afterthought's, not "I think" before a wish.
            return is_hedged(head) or (has_parse(doc) and any(
                t.tag_ == "MD" and t.lower_ in MODAL_HEDGES and t.idx < len(head) for t in doc))
        if any(h in text for h in CJK_HEDGES) or self.hedges(doc) or _other_hedge(text):
            return True
        if "HEDGE" in self._matches(doc)[0]:
            return True
        return has_parse(doc) and any(t.tag_ == "MD" and t.lower_ in MODAL_HEDGES for t in doc)

    def opens_with_reference(self, doc) -> bool:
        """Whether the text opens with "this/that/it" pointing at something said before it."""
        if not len(doc):
            return False
        first = doc[0]
        if first.lower_ not in DANGLING:
            return _text(doc).startswith(CJK_DANGLING)
        if first.lower_ in ("it", "they"):
            return True
        if has_parse(doc):
            return first.dep_ != "det"  # "This file…" is self-contained, "This means…" is not
        following = doc[1] if len(doc) > 1 else None
        return (following is None or following.is_punct or following.lower_ in PRONOUN_FOLLOWERS
                or following.lemma_ in PRONOUN_FOLLOWERS)

    def ends_with_reference(self, doc) -> bool:
        """Whether a short unit's only object is "this/that/it" at its end ("I want to simplify this.")."""
        words = [t for t in doc if not t.is_punct and not t.is_space]
        return 0 < len(words) <= SHORT_REFERENCE_WORDS and words[-1].lower_ in END_REFERENCES

    def make_self_contained(self, unit: Unit, doc) -> str | None:
        """The unit's text, with the unit before it when it opens with a dangling "this/that/it", or is a
        short one that ends with it.

        None when it needs context that is not there (or that would make it too long).
        """
        text = _text(doc)
        if not self.opens_with_reference(doc) and not self.ends_with_reference(doc):
            return text
        previous = display_text(unit.previous)
        if not previous or len(previous) + len(text) + 1 > MAX_MERGED_CHARS or previous.endswith(("?", "？")):
            return None
        return f"{previous} {text}"

    def keywords(self, text: str, doc) -> tuple[str, ...]:
        """Identifiers, paths, versions, words and CJK bigrams of the text, plus the lemmas of its words."""
        found = dict.fromkeys(keywords(text, limit=MAX_KEYWORDS))
        for token in doc:
            lemma = token.lemma_.lower()
            if token.is_alpha and token.is_ascii and len(lemma) > 2 and not token.is_stop and lemma != token.lower_:
                found.setdefault(lemma)
        return tuple(list(found)[:MAX_KEYWORDS])

    # The steps, in the order they run: each returns '' to pass the unit on, or why it drops it.
    STEPS = ("quote", "output", "question", "greeting", "line-anchored", "lead-in", "narration", "recap",
             "self-contained", "quality-gate", "hedge")

    def refine(self, unit: Unit, hit: Hit, doc=None) -> Verdict:
        """Run every step on a unit a rule matched (`doc`: the unit already through the pipeline)."""
        work = Work(unit, self.doc(unit.text) if doc is None else doc, hit, unit.turn.role == "assistant")
        done: list[str] = []
        for name in self.STEPS:
            work.note = ""
            dropped = getattr(self, "_step_" + name.replace("-", "_"))(work)
            done.append(f"{name}: {work.note}" if work.note else name)
            if dropped:
                return Verdict(None, dropped, tuple(done))
        unit = work.unit
        return Verdict(Candidate(
            unit=unit,
            category=hit.rule.category,
            rule_id=hit.rule.id,
            confidence=hit.rule.confidence * (0.7 if work.tentative else 1.0),
            text=work.text,
            tentative=work.tentative,
            scope=hit.rule.scope,
            subject=hit.subject.lower(),
            value=hit.value,
            keywords=self.keywords(work.text, work.doc),
        ), steps=tuple(done))

    def _step_quote(self, work: Work) -> str:
        return "quote" if is_quote(work.unit.text) else ""

    def _step_output(self, work: Work) -> str:
        return "output" if is_output(work.unit.text, work.unit.previous) else ""

    def _step_question(self, work: Work) -> str:
        """A question is no memory; a statement before a closing question to the assistant is kept alone."""
        if not (self.is_question(work.doc) or (not work.assistant and is_unmarked_question(work.unit.text))):
            return ""
        statement = statement_before_question(work.unit.text, work.hit)
        if statement is None or self.is_question(statement_doc := self.doc(statement)):
            return "question"
        work.unit, work.doc = dataclasses.replace(work.unit, text=statement), statement_doc
        work.note = "the statement before it"
        return ""

    def _step_greeting(self, work: Work) -> str:
        return "greeting" if self.is_greeting(work.doc) else ""

    def _step_line_anchored(self, work: Work) -> str:
        return "line-anchored" if not work.assistant and _LINE_ANCHORED_RE.search(work.unit.text) else ""

    def _step_lead_in(self, work: Work) -> str:
        return "lead-in" if _LEAD_IN_RE.search(work.unit.text) else ""

    def _step_narration(self, work: Work) -> str:
        return "narration" if work.assistant and self.is_narration(work.doc) else ""

    def _step_recap(self, work: Work) -> str:
        return "recap" if work.assistant and self.is_recap(work.doc) else ""

    def _step_self_contained(self, work: Work) -> str:
        merged = self.make_self_contained(work.unit, work.doc)
        if merged is None:
            return "not-self-contained"
        if merged != _text(work.doc):
            work.note = "with the sentence before it"
        work.text = merged
        return ""

    def _step_quality_gate(self, work: Work) -> str:
        return "" if passes_quality_gate(work.text) else "quality-gate"

    def _step_hedge(self, work: Work) -> str:
        """Hedged, or one option among several: kept, as unconfirmed."""
        work.tentative = bool(work.hit.rule.tentative or is_option(work.unit.text) or self.is_hedged(work.doc)
                              or (work.text != _text(work.doc) and is_hedged(work.text)))
        if work.tentative:
            work.note = "unconfirmed"
        return ""


def _text(doc) -> str:
    """`doc.text`, built once: spaCy joins the tokens again on every access."""
    text = doc.user_data.get("miner_text")
    if text is None:
        text = doc.user_data["miner_text"] = doc.text
    return text


def _content_start(doc) -> int:
    """Index of the first token after leading punctuation and discourse words."""
    for i, token in enumerate(doc):
        if not (token.is_punct or token.is_space or token.lower_ in DISCOURSE):
            return i
    return len(doc)


def _first_person_clause(doc):
    """(root, the norms of its auxiliaries) when a parse says the subject is "I" or "we"; else None."""
    if not has_parse(doc):
        return None
    root = doc[:].root
    if not any(c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in ("i", "we") for c in root.children):
        return None
    return root, {c.norm_ for c in root.children if c.dep_ == "aux"}


def _narration_patterns() -> list[list[dict]]:
    """Openers of status narration; each starts with a word of `_OPENERS` or an "-ing" form."""
    adverb = {"LOWER": {"IN": ADVERBS}, "OP": "?"}
    work = {"LEMMA": {"IN": WORK_VERBS}}
    return [
        [{"LOWER": "let"}, {"LOWER": "me"}],
        [{"LOWER": "let"}, {"LOWER": {"IN": ["'s", "’s", "us"]}}, adverb, {"LEMMA": {"IN": LETS_VERBS}}],
        [{"LOWER": "i"}, {"NORM": {"IN": ["will", "shall"]}}, adverb, work],
        [{"LOWER": "i"}, {"NORM": {"IN": ["will"]}}, {"LOWER": "now"}],
        [{"LOWER": "i"}, {"NORM": {"IN": ["will", "shall", "can"]}}, adverb, {"LEMMA": "help"}],  # "I'll help you find…"
        [{"LOWER": "i"}, {"NORM": {"IN": ["am", "'m"]}}, {"LOWER": "going"}, {"LOWER": "to"}],
        [{"LOWER": "i"}, {"LOWER": "need"}, {"LOWER": "to"}, {"LEMMA": {"IN": LOOKUP_VERBS}}],
        [{"LEMMA": {"IN": WORK_VERBS}, "LOWER": {"REGEX": "ing$"}}],
    ]


def _recap_patterns() -> list[list[dict]]:
    """Openers of recaps; each starts with a word of `_OPENERS`."""
    return [
        [{"LOWER": "i"}, {"NORM": "have"}, {"LOWER": {"IN": ADVERBS}, "OP": "?"},
         {"LEMMA": {"IN": DONE_VERBS}, "LOWER": {"REGEX": "(?:ed|en|t|un|an|ote|ade)$"}}],
        [{"LOWER": "successfully"}],
        [{"LOWER": "all"}, {"LOWER": {"IN": ["tests", "checks"]}}, {"LEMMA": "pass"}],
        [{"LOWER": "the", "OP": "?"}, {"LOWER": {"IN": ["changes", "fix", "update", "implementation"]}},
         {"LOWER": {"IN": ["has", "have", "'s", "'ve"]}}, {"LOWER": "been"}],
        [{"LOWER": "summary"}],
        [{"LOWER": "here"}, {"LOWER": {"IN": ["'s", "is"]}}, {"LOWER": "what"}, {"LOWER": {"IN": ["i", "we"]}},
         {"LEMMA": "do"}],
        [{"LOWER": "what"}, {"LOWER": {"IN": ["i", "we"]}}, {"LOWER": "did"}],
    ]
