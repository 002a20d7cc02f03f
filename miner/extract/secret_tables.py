"""Secrets in tables: the cells of a CSV file's or a Markdown table's password and secret columns.

A column is a secret one by its header ("password", "api_key", "contraseña"…). In a CSV file every cell under
such a header is hidden (and, in a row holding an AWS key id, every cell that looks generated). A Markdown
table is prose as often as data ("| password | string | the user's password |"), so there the header cell must
name the secret and nothing else, and a cell is hidden only when it is one token that is not a placeholder, a
name, a path or code. Standard library only, like the rest of redaction.
"""

from __future__ import annotations

import re

from ..textutil import table_rule
from .secret_values import PLACEHOLDER_RE, random_like, rejected, strip_quotes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

SECRET_COLUMN_RE = re.compile(r"(?i)\b(?:pass(?:word|wd)?|secret|token|api[ _-]?key|private[ _-]?key|pin|pwd)\b|"
                              r"contraseña|senha|пароль|密码|密碼")


def csv_rows(text: str, hidden: Callable[[str, str], str]) -> str:
    """Rows under a CSV header with password or secret columns: those cells; in any row holding an AWS key id,
    the cells that look generated."""
    lines = text.split("\n")
    columns: list[int] = []
    width = 0
    changed = False
    for i, line in enumerate(lines):
        if "," not in line:
            columns = []
            continue
        cells = line.split(",")
        names = [c.strip().strip('"').lower() for c in cells]
        if all(0 < len(n) <= 40 and not any(ch.isdigit() for ch in n) for n in names) \
                and any(SECRET_COLUMN_RE.search(n) for n in names):
            columns = [j for j, n in enumerate(names)
                       if SECRET_COLUMN_RE.search(n) and not n.endswith(("id", "link", "url", "name", "names"))]
            width = len(cells)
            continue
        hide = columns if columns and len(cells) == width else []
        if "[REDACTED:aws-access-key]" in line:
            hide = hide + [j for j, c in enumerate(cells) if random_like(c.strip().strip('"')) and "://" not in c]
        for j in hide:
            cell = cells[j].strip().strip('"')
            if cell and "[REDACTED" not in cell and not PLACEHOLDER_RE.match(cell):
                cells[j] = cells[j].replace(cell, hidden("password" if j in columns else "aws-secret-key", cell))
                changed = True
        lines[i] = ",".join(cells)
    return "\n".join(lines) if changed else text


# A Markdown table's header cell that names a secret and nothing else ("Password", "**API key**", "密码"). Not
# "pin": a table of pins is as often a board's GPIO pins ("| LED | pin |").
_TABLE_SECRET_HEADER_RE = re.compile(
    r"(?i)^(?:pass(?:word|wd)?|pwd|secret|token|api[ _-]?key|private[ _-]?key|credentials?|contraseña|senha|"
    r"mot de passe|passwort|пароль|密码|密碼|パスワード|비밀번호)$")


def _table_parts(line: str) -> list[str] | None:
    """A Markdown table row split on its pipes (the first part is what comes before the first pipe, the last
    what comes after the last, when the row closes with one), or None when the line is no row."""
    stripped = line.strip()
    if not stripped.startswith("|") or stripped.count("|") < 2:
        return None
    return line.split("|")


def _cells(parts: list[str]) -> list[str]:
    """The cells of a row's parts: between the first pipe and the last one (or the end of the line)."""
    inner = parts[1:-1] if not parts[-1].strip() else parts[1:]
    return [cell.strip() for cell in inner]


def table_rows(text: str, hidden: Callable[[str, str], str]) -> str:
    """Rows under a Markdown table's header with a password or secret column: those cells, when each is one
    made-up token ("| staging | admin | Velvet#Moon22 |")."""
    lines = text.split("\n")
    columns: list[int] = []
    width = 0
    changed = False
    for i, line in enumerate(lines):
        parts = _table_parts(line)
        if parts is None:
            columns = []
            continue
        if table_rule(line):
            continue
        cells = _cells(parts)
        names = [strip_quotes(cell)[0].strip("*_ ").lower() for cell in cells]
        secret_columns = [j for j, name in enumerate(names) if _TABLE_SECRET_HEADER_RE.match(name)]
        if secret_columns and i + 1 < len(lines) and table_rule(lines[i + 1]):
            columns, width = secret_columns, len(cells)
            continue
        if not columns or len(cells) != width:
            continue
        for j in columns:
            value, quoted = strip_quotes(cells[j])
            if not value or " " in value or rejected(value) or value.lower() in ("n/a", "-", "—", "none"):
                continue
            if not quoted and not (random_like(value) or any(c.isdigit() for c in value)):
                continue  # a word in a table is as often a label ("required", "optional") as a password
            parts[j + 1] = parts[j + 1].replace(value, hidden("password", value), 1)
            lines[i] = "|".join(parts)
            changed = True
    return "\n".join(lines) if changed else text
