"""A JSON file written back in the style it was read in: its indentation (spaces, tabs, or none), its line endings
(CRLF or LF), a byte order mark and its final newline. Claude Code's settings.json is a file people keep in dotfile
repositories; a rewrite that changes every line's indentation makes their diff of one added hook as long as the
file."""

from __future__ import annotations

import json
import re

DEFAULT_INDENT = 2
_BOM = "\ufeff"
_FIRST_INDENT_RE = re.compile(r"\{\s*?\n([ \t]+)\S")


def indent_of(text: str | None) -> int | str | None:
    """The indentation `text` uses (a number of spaces, a string of tabs, or None for JSON on one line); the default
    when there is no text."""
    text = text.lstrip(_BOM) if text else text
    if not text or not text.strip():
        return DEFAULT_INDENT
    if "\n" not in text.strip():
        return None
    found = _FIRST_INDENT_RE.match(text.lstrip())
    if found is None:
        return DEFAULT_INDENT
    unit = found.group(1)
    return unit if "\t" in unit else len(unit)


def render(obj: object, like: str | None = None) -> str:
    """`obj` as JSON in the style of `like` (the file's text as read), with a final newline unless `like` had none."""
    indent = indent_of(like)
    text = json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False)
    text = text if like and not like.endswith("\n") else text + "\n"
    if like and "\r\n" in like:  # (a file kept with Windows' line endings)
        text = text.replace("\n", "\r\n")
    return _BOM + text if like and like.startswith(_BOM) else text
