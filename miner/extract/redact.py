"""Secret redaction, applied before anything is stored, logged, cached, exported or printed.

A secret becomes `[REDACTED:<kind>]`. A memory that is mostly redacted is not
worth keeping, and `mostly_redacted` says so.

Three kinds of evidence, each checked only when a cheap hint is in the text
(most prose has none, so most prose costs a few substring searches):

- **Shape.** Tokens whose form gives them away: cloud and SaaS keys, JWTs,
  private-key blocks, credentials in URLs (`secret_shapes.SHAPES`).
- **Assignment.** `password=…`, `"client_secret": "…"`, `export X_TOKEN=…`:
  the key names a secret. A password-like key hides any value that is not a
  placeholder, a type or a reference to another variable; a token-like key
  (`api_key`, `X_TOKEN`) hides values that look random. The key name stays,
  so `STAGING_DATABASE_PASSWORD=[REDACTED:assignment]` still says what it was.
- **Context in prose.** A value next to a mention of a password, passphrase,
  PIN or secret, in the languages the rules cover and more (contraseña,
  пароль, 密码, パスワード, 비밀번호, …): "the password is X", "Your password
  `X` is in …", "use X as the initial password", "数据库密码是 X"; a
  `user / pass` pair in a login context; the items of a list under a line
  about credentials; an AWS secret access key near its key id; the password
  and secret columns of a CSV credentials file.

A secret found by context is remembered for the rest of the text, and for
later texts when the caller passes a `known` set: "my sudo password is X"
followed later by "run it with X" hides both.

This module is the public face: what to call, and the state of this
process (the extra kinds loaded). The patterns are `secret_patterns`', the
passes that run them and judge each value `secret_finders`'; both load, and
the patterns compile, on the first `redact`, from the standard library
only: the hooks redact their log lines with them and import this module on
every call (`python -X importtime -c 'import miner.extract.redact'`). Extra
kinds come from YAML files, the shipped `rules/secrets.yaml` and the user's
`$XDG_CONFIG_HOME/miner/secrets.yaml`, loaded by the miner (`load_extra`,
through `secret_rules`), which has PyYAML already. Each extra rule carries
its own `examples:` (match / no_match), checked at load.

`REDACTION_VERSION` (in `redaction_version`, which the hooks read) changes
whenever a change here would redact more of what is already stored: `miner
doctor --fix` (which the installer runs) applies the current redaction to the
store, and records the version.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing and pathlib cost import time on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Iterable

# Extra kinds from YAML (`load_extra`); empty on the hook path.
_extra: list[tuple[str, re.Pattern]] = []
_extra_stamp: tuple | None = None  # the files' state when they were loaded (`ensure_extra`)
_extra_loaded = ""  # where they came from: "yaml" (the files), "kept" (the copy the last miner kept), or not yet
KEPT_FILE = "secret-kinds.json"  # in the cache folder: the kinds as the last miner loaded them, for the hook path
REDACTED_RE = re.compile(r"\[REDACTED:[a-z0-9\-]+\]")
_BLANK_RUN_RE = re.compile(r"([ \t]{64,})")
# Invisible characters (zero-width spaces and joiners, a word joiner, a byte-order mark, a soft hyphen) inside a run
# of visible ASCII: they split a key in two for every pattern ("sk-…\u200b…" left its second half in sight).
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_INVISIBLE_RE = re.compile(rf"(?<=[!-~])[{_INVISIBLE}]+(?=[!-~])")


def redact(text: str, known: set[str] | None = None, words: set[str] | None = None) -> tuple[str, list[str]]:
    """The text with every secret replaced, and the kinds that were found.

    `known`, when given, holds literal secrets found in earlier texts (hidden
    here wherever they appear) and receives the ones found in this text.
    `words`, when given, receives the plain words given as a password ("the
    admin password is swordfish"): hidden here, and never learnt into `known`,
    which would hide them in every later text (`secret_turns.Conversation`
    hides them where a later text speaks of a secret or a login).
    """
    if not text:
        return text, []
    # loaded on first use: the hooks import this module on every call
    from .secret_finders import hide_secrets

    if any(map(text.__contains__, _INVISIBLE)):
        text = _INVISIBLE_RE.sub("", text)

    if "        " in text and _BLANK_RUN_RE.search(text):
        out, kinds = _by_pieces(text, known, hide_secrets, words)
    else:
        out, kinds = hide_secrets(text, _extra, known, words)
    # A text redacted before comes back as it was: its markers, found again where a secret stood, are no secret
    # (`doctor` would report them for ever).
    return (out, kinds) if out != text else (out, [])


def _by_pieces(text: str, known: set[str] | None, hide, words: set[str] | None = None) -> tuple[str, list[str]]:
    """A text with long runs of blanks (a padded table, a pasted log), redacted piece by piece: no secret's context
    spans such a run, and a pattern that tried every length of one would take time as its square."""
    learnt: set[str] = set() if known is None else known
    pieces, kinds = _BLANK_RUN_RE.split(text), []
    for i in range(0, len(pieces), 2):  # (the runs themselves, at odd places, stay as they are)
        pieces[i], found = hide(pieces[i], _extra, learnt, words)
        kinds += found
    from .secret_values import hide_literal

    out = "".join(pieces)
    for secret in sorted(learnt, key=len, reverse=True):  # a secret learnt in a later piece, said in an earlier one
        if secret in out:
            out, count = hide_literal(out, secret, "[REDACTED:known-secret]")
            kinds += ["known-secret"] * count
    return out, kinds


def redact_memory(text: str, subject: str = "", value: str = "", keywords: tuple[str, ...] | list[str] = (),
                  known: set[str] | None = None) -> tuple[str, str, str, list[str], list[str]]:
    """(text, subject, value, keywords, kinds) of one memory, redacted together.

    A rule's captures are redacted in sight of the text they came from: a
    capture that redaction took out of the text, or that holds a secret
    itself, is not kept raw ("STAGING_DATABASE_PASSWORD=…" keeps its key as
    subject, never its value). A keyword that only the secret held goes too.
    """
    learnt: set[str] = set() if known is None else known
    redacted, kinds = redact(text, learnt)
    out = []
    for capture in (subject, value):
        new, found = redact(capture, learnt) if capture else (capture, [])
        kinds += found
        if capture and kinds and (found or capture.lower() not in redacted.lower()):
            new = "[REDACTED:capture]" if not found else new
        out.append(new)
    if kinds:
        low, low_redacted = text.lower(), redacted.lower()
        keywords = [k for k in keywords if (k in low_redacted or k not in low)
                    and not any(k in secret.lower() or secret.lower() in k for secret in learnt)]
    return redacted, out[0], out[1], list(keywords), kinds


def shown_value(value: object, limit: int = 40) -> str:
    """A refused value as an error or a note quotes it: redacted when a text, and cut when long (it may be a whole
    memory)."""
    text = repr(redact(value)[0] if isinstance(value, str) else value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def redact_text(text: str) -> str:
    """Just the redacted text (for printing and exporting)."""
    return redact(text)[0]


def mostly_redacted(text: str) -> bool:
    """True when redaction markers make up most of what the text says."""
    left = REDACTED_RE.sub("", text)
    markers = len(text) - len(left)
    return markers > 0 and len(left.strip()) < max(20, markers)


def was_redacted(text: str) -> bool:
    """True when the text holds a redaction marker."""
    return "[REDACTED:" in text


def load_extra(files: Iterable[Path | str] | None = None) -> list[tuple[str, re.Pattern]]:
    """Load extra secret kinds (default: the shipped file, then the user's) for this process; returns them."""
    from .secret_rules import parse_secret_file

    global _extra, _extra_loaded, _extra_stamp
    stamp = _secret_files_stamp() if files is None else None  # (taken first: an edit while it loads is seen)
    if files is None:
        files = [p for p in _secret_files() if p.is_file()]
    loaded: list[tuple[str, re.Pattern]] = []
    for path in files:
        loaded += parse_secret_file(path)
    _extra, _extra_loaded, _extra_stamp = loaded, "yaml", stamp
    _keep(loaded)
    return loaded


def _secret_files() -> list[Path]:
    from .secret_rules import shipped_secret_file, user_secret_file

    return [shipped_secret_file(), user_secret_file()]


def _secret_files_stamp() -> tuple:
    """The secret kinds' files as they are now (present or not, size, time): it changes when one is edited."""
    from ..paths import file_stamp

    return tuple((str(path), file_stamp(path)) for path in _secret_files())


def _kept_path() -> str:
    import os

    from .. import paths

    return os.path.join(paths.data_file("cache"), KEPT_FILE)


def _keep(kinds: list[tuple[str, re.Pattern]]) -> None:
    """Write the kinds loaded for the hook path, which reads no YAML (only when they changed; private)."""
    import json
    import os

    from .. import paths

    try:
        data = json.dumps([[kind, pattern.pattern, pattern.flags] for kind, pattern in kinds]).encode()
        path = _kept_path()
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                if handle.read() == data:
                    return
        paths.write_private(path, data)
    except OSError:
        pass  # the hook path then hides the built-in kinds only, until a miner can write it


def load_kept_extra() -> None:
    """On the hook path: the extra kinds as the last miner loaded them (`KEPT_FILE`), when this process has none;
    a missing or damaged copy leaves the built-in kinds alone."""
    global _extra, _extra_loaded
    if _extra_loaded:
        return
    import json

    try:
        with open(_kept_path(), "rb") as handle:
            kinds = [(str(kind), re.compile(pattern, int(flags))) for kind, pattern, flags in json.loads(handle.read())]
    except (OSError, ValueError, TypeError, re.error):
        return
    _extra, _extra_loaded = kinds, "kept"


def ensure_extra() -> None:
    """The extra secret kinds as the files say now, loaded again only when one changed (two `stat`s): for
    whatever stores text it did not mine (the MCP server, a correction, an import, a team pull, doctor's scan),
    which must hide what the miner hides, and for a long-running miner (the watcher), which must hide a kind the
    user added while it ran. Raises `secret_rules.SecretRuleError` for a broken file, every time until it is
    fixed. (Not for the hook path, which reads no YAML.)"""
    if _extra_loaded != "yaml" or _extra_stamp != _secret_files_stamp():
        load_extra()
