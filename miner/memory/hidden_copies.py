"""Copies of a memory's words from before a secret in them was hidden.

A memory can say a value nobody knew was a secret: a teammate's machine learns it later, redacts its own rows, and
pushes the memory's words with the value hidden. Reworded so (on the team's server, or on a machine that pulled the
memory), its earlier words must not stay behind as one of its wordings or as its evidence: `reword` of either store
keeps no such copy and takes away those it kept.
"""

from __future__ import annotations

from ..extract.redact import REDACTED_RE as _MARKER_RE

MAX_CHARS = 5_000  # of an earlier wording read: a memory holds 4,000 at most, evidence a sentence


def hides(new: str, old: str) -> bool:
    """Whether `new` is `old` with secrets hidden: the same text, a marker where `old` says one word, a quoted run of
    words or a private key's block (a secret is no run of bare words: "The token is [REDACTED:token]." hides nothing
    of "The token is rotated weekly.", but a passphrase in quotes is one secret). Read left to right, each literal at
    its first place (a later one only widens the word before it): no regex, whose backtracking over runs of one letter
    took minutes."""
    parts = _MARKER_RE.split(new)
    if len(parts) == 1 or new == old or len(old) > MAX_CHARS:
        return False  # (no marker, or nothing hidden)
    first, *middle, last = parts
    end = len(old) - len(last)
    if not (old.startswith(first) and old.endswith(last)) or end <= len(first):
        return False
    at = len(first)
    for part in filter(None, middle):  # (markers side by side stand for one word)
        found = old.find(part, at + 1, end)
        if found < 0 or not _one_secret(old, at, found):
            return False
        at = found + len(part)
    return end > at and _one_secret(old, at, end)


_QUOTES = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "\u300c": "\u300d",
           "\u300e": "\u300f"}  # an opening quote and its closing one


def _one_secret(text: str, start: int, stop: int) -> bool:
    """Whether `text[start:stop]` can be one secret: a word, a run in quotes (the quotes in it or around it), or a
    private key's block."""
    span = text[start:stop]
    if not any(c.isspace() for c in span):
        return True
    if span.startswith("-----BEGIN") and span.rstrip().endswith("-----"):
        return True
    quoted = ((span[0], span[1:-1], span[-1]),  # the quotes hidden with it
              (text[start - 1:start] if start else "", span, text[stop:stop + 1]))  # the quotes left around it
    return any(opening in _QUOTES and closing == _QUOTES[opening] and closing not in inner
               for opening, inner, closing in quoted)


def scrub(db, memory_id: int, text: str, mark: str = "?", schema: str = "") -> None:
    """Take away the wordings and evidence texts of `memory_id` that `text` hides a secret of. `db`: the store's
    connection (SQLite's, or the team server's with `mark` "%s" and its `schema`)."""
    prefix = f"{schema}." if schema else ""
    rows = db.execute(f"SELECT hash, text FROM {prefix}memory_hashes WHERE memory_id = {mark}", (memory_id,))
    for digest, old in rows.fetchall():
        if hides(text, old):
            db.execute(f"DELETE FROM {prefix}memory_hashes WHERE memory_id = {mark} AND hash = {mark}",
                       (memory_id, digest))
    rows = db.execute(f"SELECT id, entry_uuid, text FROM {prefix}evidence WHERE memory_id = {mark}", (memory_id,))
    for row_id, entry_uuid, old in rows.fetchall():
        if hides(text, old):
            twin = db.execute(f"SELECT 1 FROM {prefix}evidence WHERE memory_id = {mark} AND entry_uuid = {mark} AND "
                              f"text = {mark}", (memory_id, entry_uuid, text)).fetchone()
            if twin:
                db.execute(f"DELETE FROM {prefix}evidence WHERE id = {mark}", (row_id,))
            else:
                db.execute(f"UPDATE {prefix}evidence SET text = {mark} WHERE id = {mark}", (text, row_id))
