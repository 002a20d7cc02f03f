"""Redaction across the turns of a conversation, and across the processes that mine it.

`redact` reads one text. A secret is often named in one turn and used bare in
a later one:

- "the staging db password is X" in one prompt, then "now try X on prod": the
  first text teaches `redact`'s `known` set, which hides X in the second, in
  the same pass. Each Stop hook's miner mines only the lines added since the
  last one, in a process of its own, so what one process learnt must outlive
  it: the store keeps a salted digest of each secret found this way, never the
  secret, and a later text's made-up tokens are looked up among them
  (`Conversation`, with `Store.secret_digests`).
- The assistant asks "Which password should I set for the admin account?" and
  the user answers "Zk93fLqpW#1": a made-up value in a short reply to a
  request for a password, a key or a token is a secret too.

Standard library only: the PreCompact hook redacts the session's latest words
with it.
"""

from __future__ import annotations

import hashlib
import re

from .redact import redact
from .secret_finders import MIN_PROPAGATED
from .secret_values import random_like, rejected, secret_like

MAX_DIGESTS = 10_000  # the digests the store keeps, newest last (`Store.add_secret_digests`)
MAX_KNOWN = 1024  # secrets kept in a process's `known` set (the longest)
MAX_ANSWER_CHARS = 240  # a reply longer than this is more than a value given on request
_ASKED_TAIL = 600  # the end of the assistant's turn where a request for a secret is looked for

# A made-up token: no space, no quote or bracket around it.
_TOKEN_RE = re.compile(r"[^\s'\"`()<>\[\]{},;]{%d,200}" % MIN_PROPAGATED)
# What names a secret in a request for one, in the languages the context passes know (`Patterns.strong_lead`) and
# the key-like names.
_KEY_WORDS_RE = re.compile(r"(?i:\b(?:api[ _-]?keys?|access[ _-]?keys?|secret[ _-]?keys?|tokens?|credentials?|"
                           r"creds)\b)")
# A request in English without a question mark ("Please paste the API token here.", "Share the key and I'll …").
_REQUEST_RE = re.compile(r"(?i:(?:^|\b(?:please|could[ \t]+you|can[ \t]+you|would[ \t]+you)[ \t,]+)"
                         r"(?:provide|share|send|paste|give[ \t]+me|tell[ \t]+me|enter|type)\b)")
_SENTENCE_RE = re.compile(r"[^.!?。？！\n]*(?:[.!?。？！]+|\n|$)")


def digest(salt: bytes, secret: str) -> bytes:
    """A secret's salted digest, as the store keeps it."""
    return hashlib.sha256(salt + secret.encode("utf-8", "surrogatepass")).digest()[:16]


def tokens(text: str) -> set[str]:
    """The made-up tokens of a text that a secret learnt earlier may be: whole, without trailing punctuation, and
    the value after a `key=` or `key:`."""
    out = set()
    for token in _TOKEN_RE.findall(text):
        stripped = token.rstrip(".,:;!?")
        if stripped.isalpha():
            continue  # a word (most tokens): no secret is learnt that is one
        for part in {token, stripped, token.rpartition("=")[2], stripped.rpartition(":")[2]}:
            if len(part) >= MIN_PROPAGATED and not part.isdigit() and secret_like(part):
                out.add(part)
    return out


def known_in(text: str, salt: bytes, digests: frozenset[bytes] | set[bytes]) -> set[str]:
    """The tokens of `text` that are secrets learnt earlier (their digests are among `digests`): for a text that
    enters the store by another way than mining (a memory stored or corrected on request)."""
    return {token for token in tokens(text) if digest(salt, token) in digests} if digests else set()


def asks_for_secret(text: str) -> bool:
    """Whether an assistant's turn ends by asking for a password, a PIN, a key or a token: one of its last two
    sentences names one and is a question or a request ("Which password should I set?", "Please paste the API
    token."; not "I need to update the token parser.")."""
    from .secret_patterns import patterns

    tail = text[-_ASKED_TAIL:]
    if "?" not in tail and "？" not in tail and _REQUEST_RE.search(tail) is None:
        return False  # (most turns: one look)
    strong = patterns().strong_lead
    sentences = [s.strip() for s in _SENTENCE_RE.findall(tail) if s.strip()]
    for sentence in sentences[-2:]:
        if (strong.search(sentence) or _KEY_WORDS_RE.search(sentence)) and (
                sentence.endswith(("?", "？")) or _REQUEST_RE.search(sentence)):
            return True
    return False


def answer_values(text: str) -> set[str]:
    """The made-up values of a short reply (a value given on request): tokens that look generated."""
    if len(text) > MAX_ANSWER_CHARS or text.count("\n") > 3:
        return set()
    out = set()
    for token in _TOKEN_RE.findall(text):
        token = token.rstrip(".,:;?")
        if random_like(token) and not rejected(token) and "://" not in token and "@" not in token[1:]:
            out.add(token)
    return out


class Conversation:
    """The turns of a conversation redacted in order (see the module's doc).

    `salt` and `digests` are the store's (`Store.secret_digests`); `known` is `redact`'s, shared with the caller.
    What this conversation learnt is in `learnt` (digests), for the store. `asked` says whether the last turn
    read asked for a secret: a miner that mines a transcript's new lines sets it from the store (the question
    ends one Stop's lines, the answer opens the next's).
    """

    def __init__(self, salt: bytes = b"", digests: frozenset[bytes] | set[bytes] = frozenset(),
                 known: set[str] | None = None) -> None:
        self.salt = salt
        self.digests = digests
        self.known: set[str] = set() if known is None else known
        self.learnt: set[bytes] = set()
        self._digested: set[str] = set()
        self.asked = False

    def redact(self, role: str, text: str) -> tuple[str, list[str]]:
        """One turn, redacted with what the turns before it taught."""
        known = self.known
        known.update(known_in(text, self.salt, self.digests))
        if role == "user" and self.asked:
            known.update(answer_values(text))
        self.asked = role == "assistant" and asks_for_secret(text)
        out = redact(text, known)
        if self.salt and len(known) != len(self._digested):
            for secret in known - self._digested:
                self.learnt.add(digest(self.salt, secret))
            self._digested = set(known)
        return out

    def redact_turns(self, turns: list, asked: bool = False) -> list:
        """Turns (`model.Turn`) with their secrets hidden, each read whole and in order: a password is known by the
        words around it ("the password is …", a list under "Credentials:"), which a single sentence may not hold,
        by an earlier turn that named it, or by the assistant's request for it just before (`asked`: the turns
        mined before these end with one). A subagent's turns answer no question of the main thread."""
        import dataclasses  # (the miner's: the hooks redact texts, not turns)

        self.asked = asked
        out = []
        for turn in turns:
            text, kinds = redact(turn.text, self.known) if turn.is_sidechain else self.redact(turn.role, turn.text)
            out.append(dataclasses.replace(turn, text=text) if kinds else turn)
        if len(self.known) > MAX_KNOWN:
            kept = sorted(self.known, key=len, reverse=True)[:MAX_KNOWN]
            self.known.clear()
            self.known.update(kept)
        return out
