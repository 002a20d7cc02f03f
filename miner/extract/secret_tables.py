"""Secrets in tables and records: the cells of a CSV file's or a Markdown table's password and secret columns (or,
in a table without such a header, the made-up value beside an account's name), the values an SQL `INSERT` gives
such columns, a `.pgpass` line's password, and the values Terraform marks
sensitive.

A column is a secret one by its header ("password", "api_key", "contraseña"…). In a CSV file every cell under
such a header is hidden (and, in a row holding an AWS key id, every cell that looks generated). A Markdown
table is prose as often as data ("| password | string | the user's password |"), so there the header cell must
name the secret and nothing else, and a cell is hidden only when it is one token that is not a placeholder, a
name, a path or code. Standard library only, like the rest of redaction.
"""

from __future__ import annotations

import re
from functools import cache

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


# A credential cell that pairs an account with its secret ("ci-bot / J3nk!ns77", "deploy:Xk29pQz7").
_LOGIN_CELL_RE = re.compile(r"(?P<account>[\w.@+-]{1,40})[ \t]*[/:][ \t]*(?P<secret>[^\s|]{6,200})")


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
            login = _LOGIN_CELL_RE.fullmatch(value) if "://" not in value else None
            if login and random_like(login.group("secret")) and not rejected(login.group("secret")) \
                    and not random_like(login.group("account")):
                value, quoted = login.group("secret"), False  # "ci-bot / J3nk!ns77": the account stays
            if not value or " " in value or rejected(value) or value.lower() in ("n/a", "-", "—", "none"):
                continue
            if not quoted and not (random_like(value) or any(c.isdigit() for c in value)):
                continue  # a word in a table is as often a label ("required", "optional") as a password
            parts[j + 1] = parts[j + 1].replace(value, hidden("password", value), 1)
            lines[i] = "|".join(parts)
            changed = True
    return "\n".join(lines) if changed else text


# An account's name in a table row, and what marks a cell beside it as made up (letters, digits and a symbol).
ACCOUNTS = frozenset(("admin", "administrator", "root", "postgres", "sa", "ubuntu", "ec2-user", "deploy", "guest",
                      "superuser"))
ACCOUNT_HINTS = ("admin", "root", "postgres", " sa ", "ubuntu", "ec2-user", "deploy", "guest", "superuser")
_SYMBOLS = frozenset("!@#$%^&*+=?~")


def account_rows(text: str, hidden: Callable[[str, str], str]) -> str:
    """A table row with no password header that pairs an account with a made-up value ("| prod-db | admin |
    Lynx#Stalk12 |"): the cell after the account's, when it is one token of letters, digits and a symbol."""
    lines = text.split("\n")
    changed = False
    for i, line in enumerate(lines):
        parts = _table_parts(line)
        if parts is None or table_rule(line):
            continue
        cells = _cells(parts)
        for j in range(len(cells) - 1):
            if strip_quotes(cells[j])[0].strip("*_ ").lower() not in ACCOUNTS:
                continue
            value = strip_quotes(cells[j + 1])[0]
            email = "." in value.partition("@")[2]
            if (" " in value or "/" in value or email or rejected(value) or not random_like(value)
                    or not any(c.isdigit() for c in value) or _SYMBOLS.isdisjoint(value)):
                continue
            parts[j + 2] = parts[j + 2].replace(value, hidden("password", value), 1)
            lines[i] = "|".join(parts)
            changed = True
    return "\n".join(lines) if changed else text


# `INSERT INTO t (a, b) VALUES (…), (…)`: the column list, then the rows (quoted strings may hold anything).
_SQL_STRING = r"'(?:[^'\\\n]|''|\\.){0,400}'|\"(?:[^\"\\\n]|\\.){0,400}\""
_SQL_ROW = rf"\((?:[^()'\"\n]|{_SQL_STRING}|\([^()'\"\n]{{0,80}}\)){{1,60}}\)"
_INSERT = (rf"(?i)\binsert[ \t]+(?:ignore[ \t]+)?into[ \t]+[\w.\"`\[\]]{{1,80}}[ \t]*"
           rf"\((?P<columns>[^()\n]{{1,400}})\)\s*values\s*(?P<rows>{_SQL_ROW}(?:\s*,\s*{_SQL_ROW}){{0,200}})")
_SQL_VALUE = rf"{_SQL_STRING}|[^,'\"]+"


def sql_inserts(text: str, hidden: Callable[[str, str], str]) -> str:
    """The quoted values an SQL `INSERT` gives a password or secret column
    (`INSERT INTO users (email, password) VALUES ('ann@example.com', 'X')`)."""
    value_re = _compiled(_SQL_VALUE)

    def row(m: re.Match, columns: list[int]) -> str:
        inner = m.group(0)[1:-1]
        values = [v for v in value_re.finditer(inner) if v.group(0).strip()]
        if len(values) != width:
            return m.group(0)
        for j in reversed(columns):
            start, end = values[j].span()
            cell = inner[start:end]
            value, quoted = strip_quotes(cell.strip())
            if quoted and value and not rejected(value) and "''" not in value:
                inner = inner[:start] + cell.replace(value, hidden("password", value), 1) + inner[end:]
        return "(" + inner + ")"

    def insert(m: re.Match) -> str:
        nonlocal width
        names = [c.strip().strip('"`[]').lower() for c in m.group("columns").split(",")]
        columns = [j for j, n in enumerate(names)
                   if SECRET_COLUMN_RE.search(n) and not n.endswith(("id", "link", "url", "name", "names"))]
        if not columns:
            return m.group(0)
        width = len(names)
        rows = _compiled(_SQL_ROW).sub(lambda r: row(r, columns), m.group("rows"))
        return m.group(0)[:m.start("rows") - m.start()] + rows

    width = 0
    return _compiled(_INSERT).sub(insert, text)


# A `.pgpass` line, `hostname:port:database:username:password` (any of the first four may be `*`), alone on its
# line: `cat ~/.pgpass` shows no word for it. (Within a line, the shape in `secret_shapes` needs the file named.)
_PGPASS = (r"(?m)^[ \t]*(?:[\w.-]{1,253}|\*):(?:\d{2,5}|\*):(?:[\w.$-]{1,63}|\*):(?:[\w.@$-]{1,63}|\*):"
           r"(?P<value>[^\s:]\S{0,200})[ \t]*$")
_PGPASS_PORT_RE = re.compile(r":(?:\d{2,5}|\*):")  # what every such line holds (searched fast: a literal first)


def pgpass_lines(text: str, hidden: Callable[[str, str], str]) -> str:
    """The password of a `.pgpass` line."""
    if not _PGPASS_PORT_RE.search(text):
        return text

    def line(m: re.Match) -> str:
        value = m.group("value")
        if rejected(value) or "[REDACTED" in value:
            return m.group(0)
        start, end = m.span("value")
        return m.group(0)[:start - m.start()] + hidden("password", value) + m.group(0)[end - m.start():]

    return _compiled(_PGPASS).sub(line, text)


# A JSON object Terraform marks `"sensitive": true` (state, `terraform output -json`): its string `"value"`.
_SENSITIVE = r'\{[^{}]{0,800}"sensitive"[ \t]*:[ \t]*true[^{}]{0,800}\}'
_JSON_VALUE = r'("value"[ \t]*:[ \t]*")((?:[^"\\\n]|\\.){1,400})(")'


def sensitive_values(text: str, hidden: Callable[[str, str], str]) -> str:
    """The string `"value"` of an object marked `"sensitive": true`."""

    def value(m: re.Match) -> str:
        secret = m.group(2)
        if rejected(secret) or "[REDACTED" in secret:
            return m.group(0)
        return m.group(1) + hidden("password", secret) + m.group(3)

    return _compiled(_SENSITIVE).sub(lambda m: _compiled(_JSON_VALUE).sub(value, m.group(0)), text)


@cache
def _compiled(source: str) -> re.Pattern:
    """A record's pattern (an INSERT, a .pgpass line, a sensitive value), compiled when a text first may hold one:
    the hooks import redaction for their log lines."""
    return re.compile(source)
