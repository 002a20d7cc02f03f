"""Prose → units: wrappers, code and our own recall block out; sentences and list items in.

Splitting is done by a spaCy pipeline handed in by the caller (a blank one
with a sentencizer works offline). Line structure is decided here first:
list items, table rows and headings are units of their own; prose lines are
split into sentences. CJK sentence enders are split before spaCy sees the
text, because the English tokenizer keeps them inside a word.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

from . import BLOCK_TAG
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
    "user-prompt-submit-hook",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-memory-input",
    "private",
    BLOCK_TAG,
)

_WRAPPER_RE = re.compile(
    r"<(" + "|".join(re.escape(t) for t in WRAPPER_TAGS) + r")(?:\s[^>]*)?>.*?(?:</\1>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_FENCE_RE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_INTERRUPT_RE = re.compile(r"\[Request interrupted by user[^\]]*\]")
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_LIST_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+")
_TABLE_RULE_RE = re.compile(r"^\s*\|?[\s:|-]+\|[\s:|-]*$")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_SPLIT_RE = re.compile(r"(?<=[。！？；!?])(?=[^。！？；!?」』”）)])")
_ONLY_MARKUP_RE = re.compile(r"^[\W_]*$", re.UNICODE)
_SPACES_RE = re.compile(r"[ \t\u00a0]{2,}")

MAX_UNIT_CHARS = 1200  # longer "sentences" are pasted data, not statements
# A line longer than this is pasted data (minified code, base64, logs). It is dropped before sentence
# splitting: spaCy refuses texts over `nlp.max_length` (1,000,000) with an error that would stop mining
# the transcript for good, and tokenising such a line costs time for no unit.
MAX_LINE_CHARS = 100_000


def clean_prose(text: str) -> str:
    """Remove wrappers, our own block, code fences, comments and interruption markers."""
    text = _WRAPPER_RE.sub(" ", text)
    text = _FENCE_RE.sub("\n", text)
    text = _HTML_COMMENT_RE.sub(" ", text)
    text = _INTERRUPT_RE.sub(" ", text)
    return text


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def _line_pieces(text: str) -> Iterator[tuple[str, bool]]:
    """(piece, needs_sentence_split) for each non-empty line of cleaned prose."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or len(line) > MAX_LINE_CHARS or _TABLE_RULE_RE.match(line) or _ONLY_MARKUP_RE.match(line):
            continue
        structural = bool(_LIST_RE.match(line) or _HEADING_RE.match(line) or line.startswith("|"))
        if structural:
            yield line, False
        elif has_cjk(line):
            for part in _CJK_SPLIT_RE.split(line):
                if part.strip():
                    yield part.strip(), True
        else:
            yield line, True


def split_units(nlp, texts: list[str]) -> list[list[str]]:
    """Split each cleaned text into unit strings, batching sentence splitting through `nlp`."""
    pieces: list[list[tuple[str, bool]]] = [list(_line_pieces(t)) for t in texts]
    to_split = [p for ps in pieces for p, split in ps if split]
    sentences = iter([[s.text.strip() for s in doc.sents] for doc in nlp.pipe(to_split, batch_size=256)]) if to_split else iter(())
    out: list[list[str]] = []
    for ps in pieces:
        units: list[str] = []
        for piece, split in ps:
            parts = next(sentences) if split else [piece]
            for part in parts:
                # A removed wrapper or comment leaves a gap ("Keep <private>…</private> this" → "Keep   this").
                part = _SPACES_RE.sub(" ", part)
                if part and not _ONLY_MARKUP_RE.match(part) and len(part) <= MAX_UNIT_CHARS:
                    units.append(part)
        out.append(units)
    return out


def turns_to_units(nlp, turns: Iterable[Turn]) -> list[Unit]:
    """All units of the given turns, in order, each knowing the unit before it."""
    turns = list(turns)
    split = split_units(nlp, [clean_prose(t.text) for t in turns])
    units: list[Unit] = []
    for turn, texts in zip(turns, split):
        previous = ""
        for index, text in enumerate(texts):
            units.append(Unit(turn=turn, index=index, text=text, previous=previous))
            previous = text
    return units
