"""Prose → units: wrappers, code and our own recall block out; sentences and list items in.

Line structure is decided first: list items, table rows and headings are
units of their own; prose lines are split into sentences. CJK sentence
enders split a line wherever they stand; Latin text is split by
`split_sentences`, a small rule-based splitter that reproduces what spaCy's
blank English sentencizer did here (it used to do this job) at a fraction of
the cost: spaCy now only sees the units a rule matched, in refinement.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterable, Iterator

from .. import BLOCK_TAG
from ..textutil import NOT_SHOWN, has_cjk, table_rule
from .model import Turn, Unit

# Wrappers Claude Code puts around non-prose in user entries; their content is dropped.
WRAPPER_TAGS = (
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "task-notification",
    "bash-notification",  # a background shell's report, queued like a prompt: Claude Code's words, not the user's
    "teammate-message",  # another agent's words (agent teams), delivered as a prompt
    "user-prompt-submit-hook",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-memory-input",
    "private",
    BLOCK_TAG,
)

_WRAPPER_NAMES = "|".join(re.escape(t) for t in WRAPPER_TAGS)
# A wrapper's opening tag (group 1: its name; attributes allowed) or closing tag (group 2).
_WRAPPER_TAG_RE = re.compile(rf"<(?:({_WRAPPER_NAMES})(?:\s[^>]*)?|/({_WRAPPER_NAMES}))>", re.IGNORECASE)
# A fence of three or more backticks or tildes, closed by a line of at least as many of the same (CommonMark): a
# four-backtick fence (a README that holds a fenced block) ran to the end of the turn.
_FENCE_RE = re.compile(r"^[ \t]*((?P<mark>[`~])(?P=mark){2,}).*?(?:^[ \t]*\1(?P=mark)*[ \t]*$|\Z)",
                       re.DOTALL | re.MULTILINE)
_INTERRUPT_RE = re.compile(r"\[Request interrupted by user[^\]]*\]")
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_LIST_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+")
_CJK_SPLIT_RE = re.compile(r"(?<=[。！？；!?])(?=[^。！？；!?」』”）)])|(?<=[\u4e00-\u9fff]\.)(?=[\u4e00-\u9fff])")
_ONLY_MARKUP_RE = re.compile(r"^[\W_]*$", re.UNICODE)
_SPACES_RE = re.compile(r"[ \t\u00a0]{2,}")

MAX_UNIT_CHARS = 1200  # longer "sentences" are pasted data, not statements
# A line longer than this is pasted data (minified code, base64, logs). It is dropped before sentence
# splitting: it would cost time for no unit (every sentence of it is over MAX_UNIT_CHARS or noise).
MAX_LINE_CHARS = 100_000


def drop_wrappers(text: str, open_ended: bool = True) -> str:
    """`text` without its wrappers (`WRAPPER_TAGS`), each replaced by a blank with all it holds: up to the closing
    tag that matches its opening one, the same tag nested inside it counted (`<private>a <private>b</private> c
    </private>` is one wrapper), or to the end of the text when it is never closed. A closing tag outside any
    wrapper is left as text. `open_ended=False`: a tag never closed is text (but `<private>`, which still hides all
    that follows it). A tag inside inline code is named, not a wrapper ("it wraps hook output in
    `<system-reminder>` tags"), but `<private>`."""
    if "<" not in text:
        return text
    out: list[str] = []
    kept_from, depth, name, opened = 0, 0, "", None
    code = CodeSpans(text)
    for match in _WRAPPER_TAG_RE.finditer(text):
        opening, closing = match.group(1), match.group(2)
        if "`" in text and (opening or closing).lower() != "private" and code.holds(match.start()):
            continue
        if not depth:
            if opening:
                out.append(text[kept_from:match.start()])
                name, depth, opened = opening.lower(), 1, match
        elif (opening or closing).lower() == name:
            depth += 1 if opening else -1
            if not depth:
                out.append(" ")
                kept_from = match.end()
    if depth and not open_ended and name != "private":
        out.append(opened.group(0) + drop_wrappers(text[opened.end():], open_ended=False))
    else:
        out.append(" " if depth else text[kept_from:])
    return "".join(out)


# A terminal's escape sequences (colours, a window title) as a whole, and the other characters no text shows: mined,
# the control character alone went at output, and left "[1mbold[0m" or words glued at a NUL ("usePostgreSQL").
_ESCAPE_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL_RE = re.compile("[" + "".join(map(chr, NOT_SHOWN)) + "]")
_CONTROL_BLANKS = {c: (" " if c < 0x2000 else None) for c in NOT_SHOWN}  # (bidirectional controls go)
# In a text typed by hand, a control character between words is one blank, with the blanks around it.
_TYPED_CONTROLS_RE = re.compile(" *[" + "".join(chr(c) for c in NOT_SHOWN if c < 0x2000) + "]+ *")


# Spaces other than the plain one (no-break, thin, ideographic, …), which a text typed by hand carries from where it
# was pasted: read as plain ones, or "password\u00a0is X" would pass every pattern that joins words with a blank.
# The invisible ones with no meaning in a word (a zero-width space, a word joiner, a byte order mark) go; the
# zero-width joiners stay (Persian words and emoji sequences need them).
_TYPED = {**NOT_SHOWN, **dict.fromkeys((0xA0, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000), " "),
          **dict.fromkeys((0x200B, 0x2060, 0xFEFF))}


def typed_text(text: str) -> str:
    """A text typed by hand (a memory stored through MCP, a correction, a reason) without its wrappers: what it holds
    inside `<private>` is never stored, as when mining. The blanks a wrapper leaves are closed up. A tag never closed
    is named, not a wrapper ("the parser strips <system-reminder> blocks"), but `<private>`. No control character is
    kept (`NOT_SHOWN`: an escape sequence pasted in would reach a terminal and the model): a sequence goes whole, as
    mining drops it, and another control character is a blank (no words glued); tabs and lines are kept. Other
    spaces become plain ones (`_TYPED`)."""
    text = _TYPED_CONTROLS_RE.sub(" ", _ESCAPE_RE.sub("", text)).translate(_TYPED)
    dropped = drop_wrappers(text, open_ended=False)
    return text if dropped == text else _SPACES_RE.sub(" ", dropped).strip()


def clean_prose(text: str) -> str:
    """Remove wrappers, our own block, code fences, comments and interruption markers (and control characters)."""
    if _CONTROL_RE.search(text):
        text = _ESCAPE_RE.sub("", text).translate(_CONTROL_BLANKS)
    text = drop_wrappers(text)
    text = _FENCE_RE.sub("\n", text)
    text = _HTML_COMMENT_RE.sub(" ", text)
    text = _INTERRUPT_RE.sub(" ", text)
    return text


def _line_pieces(text: str) -> Iterator[tuple[str, bool]]:
    """(piece, needs_sentence_split) for each non-empty line of cleaned prose, hard-wrapped lines joined."""
    for line, structural in _joined_lines(text):
        if structural:
            yield line, False
        elif has_cjk(line):
            for part in _CJK_SPLIT_RE.split(line):
                if part.strip():
                    yield part.strip(), True
        else:
            yield line, True


def _joined_lines(text: str) -> Iterator[tuple[str, bool]]:
    """(line, structural) with a hard-wrapped sentence put back on one line.

    A line that does not end a sentence, followed by a prose line that starts
    in lower case (or, under a list item, an indented one), continues it:
    "The backup must fetch every case" / "and write them to one file." is one
    sentence, not two fragments.
    """
    pending, pending_structural = "", False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or len(line) > MAX_LINE_CHARS or table_rule(line) or _ONLY_MARKUP_RE.match(line):
            if pending:
                yield pending, pending_structural
            pending = ""
            continue
        structural = bool(_LIST_RE.match(line) or _HEADING_RE.match(line) or line.startswith("|"))
        if pending and not structural and _continues(pending, pending_structural, raw, line):
            pending = f"{pending} {line}"
            continue
        if pending:
            yield pending, pending_structural
        pending, pending_structural = line, structural
    if pending:
        yield pending, pending_structural


def _continues(previous: str, previous_structural: bool, raw: str, line: str) -> bool:
    if previous.startswith(("|", "#")) or _HEADING_RE.match(previous) or previous.endswith(_LINE_ENDS):
        return False
    if previous_structural:
        return raw[:1] in (" ", "\t") and line[:1].isalpha()  # an indented continuation of a list item
    return line[:1].isascii() and line[:1].islower()


_LINE_ENDS = tuple(".!?:;。！？：；)]}\"'”’`*_>।؟۔")


# --- sentences -----------------------------------------------------------------------------------

# Characters that end a sentence; only a run of them followed by whitespace can. "…" and ".." alone do not
# (an ellipsis trails off mid-thought), but "?…" does.
_ENDERS = ".!?\uff01\uff1f\u3002\uff0e\u203c\u2047\u2048\u2049\u0964\u0965\u061f\u06d4"  # (Devanagari's, Arabic's, Urdu's)
_FIRM_ENDERS = frozenset(_ENDERS) - {"."}
# What may close a sentence after its ender and still belong to it: brackets, quotes, emphasis, an ellipsis.
_CLOSERS = ")]}\"'\u201d\u2019\u00bb\u300d\u300f\uff09\u3011\u300b*_`>\u2026,:;"
_BOUNDARY_RE = re.compile("[" + re.escape(_ENDERS) + "]+[" + re.escape(_CLOSERS) + "]*(?=\\s)")
# Inline code: an ender inside it (`??`, `index_exists?`, `!`) is code, not the end of a sentence.
_CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")
# Leading characters that are not part of a word ("(e.g." is the abbreviation "e.g.").
_OPENERS = "([{\"'\u201c\u2018\u00ab\u300c\u300e\uff08*_`<\u2014\u2013-~#&%=+\u00a7$\u20ac\u00a3"
# Punctuation after which a single "." is an ender, as in "(see below)." or "`make test`.".
_PUNCT_BEFORE_STOP = frozenset("/%\u00b2-+\u2026,:;!?\u00bf\u00a1()[]{}<>_#*&\u3002\uff1f\uff01\uff0c\u3001\uff1b\uff1a\uff5e"
                               "\u00b7'\"\u201d\u201c`\u2018\u00b4\u2019\u201a\u201e\u00bb\u00ab\u300c\u300d\u300e\u300f"
                               "\uff08\uff09\u3014\u3015\u3010\u3011\u300a\u300b\u3008\u3009")
# Words whose final "." never ends a sentence (spaCy's English exceptions and a few more).
ABBREVIATIONS = frozenset(
    "e.g. E.g. E.G. i.e. I.e. I.E. a.m. p.m. vs. v.s. Mr. Mrs. Ms. Messrs. Dr. Prof. St. Mt. Jr. Sr. Gen. Gov. "
    "Sen. Rep. Rev. Adm. Co. co. Corp. Inc. Ltd. Bros. Ph.D. "
    "Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep. Sept. Oct. Nov. Dec. "
    "Ala. Ariz. Ark. Calif. Colo. Conn. Del. Fla. Ga. Ia. Id. Ill. Ind. Kan. Kans. Ky. La. Mass. Md. Mich. "
    "Minn. Miss. Mo. Mont. Neb. Nebr. Nev. Okla. Ore. Pa. Tenn. Va. Wash. Wis. Ak.".split()
) | {f"{hour}{half}.m." for hour in range(1, 13) for half in "ap"}
# Abbreviations that may also end a sentence: they do not when a lower-case word follows ("etc. and so on").
SOFT_ABBREVIATIONS = frozenset("etc. cf. approx. incl. excl. esp. resp. viz. ca.".split())


class CodeSpans:
    """A text's inline code spans, found when first asked: whether a position lies inside one (a look-up among
    them in order, not a scan of each: a pasted line can hold thousands of spans and of sentence ends)."""

    __slots__ = ("text", "_spans", "_starts")

    def __init__(self, text: str):
        self.text = text
        self._spans: list[tuple[int, int]] | None = None
        self._starts: list[int] = []

    def holds(self, position: int) -> bool:
        if self._spans is None:  # (they never overlap)
            self._spans = [m.span() for m in _CODE_SPAN_RE.finditer(self.text)]
            self._starts = [a for a, _ in self._spans]
        k = bisect.bisect_left(self._starts, position) - 1
        return k >= 0 and position < self._spans[k][1]


def split_sentences(text: str) -> list[str]:
    """The sentences of one line of prose, stripped.

    A sentence ends at a run of `.`, `!`, `?` (or their CJK forms), with any
    closing brackets, quotes or emphasis after it, followed by whitespace. A
    single `.` does not end one inside a word (config.py, 3.14, v1.2.3, a URL),
    after an abbreviation (e.g., Dr., etc. before a lower-case word), after a
    lone letter or an initialism (plan B., U.S.), or as part of an ellipsis.
    """
    sentences = []
    start = 0
    code = CodeSpans(text)
    for found in _BOUNDARY_RE.finditer(text):
        if "`" in text and code.holds(found.start()):
            continue
        if _ends_sentence(text, found):
            sentence = text[start:found.end()].strip()
            if sentence:
                sentences.append(sentence)
            start = found.end()
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def _ends_sentence(text: str, found: re.Match) -> bool:
    """Whether the ender run `found` (with its closers) ends a sentence."""
    run = found.group(0).rstrip(_CLOSERS)
    if any(c in _FIRM_ENDERS for c in run):
        return True
    if len(run) > 1:
        return False  # "..": an ellipsis
    stop = found.start()  # the single "."
    word_start = stop
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:stop + 1].lstrip(_OPENERS)
    if word in ABBREVIATIONS:
        return False
    if word in SOFT_ABBREVIATIONS:
        following = text[found.end():].lstrip()
        return not (following[:1].islower() or following[:1].isdigit())
    if len(word) < 2:
        return True  # a "." on its own
    before = word[-2]
    if before in "0123456789" or before in _PUNCT_BEFORE_STOP or (before.isalpha() and not before.isupper()):
        return True
    # An upper-case letter: an initialism's last dot (U.S., plan B.) unless two capitals end a word (API.)
    # or it is a temperature (100°C.).
    return len(word) >= 3 and ((word[-3].isalpha() and not word[-3].islower()) or word[-3] == "\u00b0")


def split_units(texts: list[str]) -> list[list[str]]:
    """Split each cleaned text into unit strings."""
    out: list[list[str]] = []
    for text in texts:
        units: list[str] = []
        for piece, split in _line_pieces(text):
            for part in split_sentences(piece) if split else (piece,):
                # A removed wrapper or comment leaves a gap ("Keep <private>…</private> this" → "Keep   this").
                part = _SPACES_RE.sub(" ", part)
                if part and not _ONLY_MARKUP_RE.match(part) and len(part) <= MAX_UNIT_CHARS:
                    units.append(part)
        out.append(units)
    return out


def turns_to_units(turns: Iterable[Turn]) -> list[Unit]:
    """All units of the given turns, in order, each knowing the unit before it."""
    turns = list(turns)
    split = split_units([clean_prose(t.text) for t in turns])
    units: list[Unit] = []
    for turn, texts in zip(turns, split):
        previous = ""
        for index, text in enumerate(texts):
            units.append(Unit(turn=turn, index=index, text=text, previous=previous))
            previous = text
    return units
