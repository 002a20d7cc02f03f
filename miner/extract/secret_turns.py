"""Redaction across the turns of a conversation, and across the processes that mine it.

`redact` reads one text. A secret is often named in one turn and used bare in
a later one:

- "the staging db password is X" in one prompt, then "now try X on prod": the
  first text teaches `redact`'s `known` set, which hides X in the second, in
  the same pass. Each Stop hook's miner mines only the lines added since the
  last one, in a process of its own, so what one process learnt must outlive
  it: the store keeps a salted digest of each secret found this way, never the
  secret, and a later text's made-up tokens are looked up among them
  (`Conversation`, with `Store.secret_digests`). The salt is in the same file:
  a digest keeps the secret out of sight, not out of reach of a guess (the
  transcripts on the same disk hold it in clear anyway).
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
from .secret_sentences import NAMES_A_SECRET_RE, WHICH_RE, generated
from .secret_values import random_like, rejected, secret_like

MAX_DIGESTS = 10_000  # the digests the store keeps, newest last (`Store.add_secret_digests`)
MAX_KNOWN = 1024  # secrets kept in a process's `known` set (the longest)
MAX_ANSWER_CHARS = 240  # a reply longer than this is more than a value given on request
_ASKED_TAIL = 600  # the end of the assistant's turn where a request for a secret is looked for

# A made-up token: no space, no quote or bracket around it, and no letter of a script written without spaces (a
# secret is said inside such text with none: "已更新X密码").
_TOKEN_RE = re.compile(r"[^\s'\"`()<>\[\]{},;\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]{%d,200}"
                       % MIN_PROPAGATED)
_WRAPPERS = "*_~«»“”‘’"  # Markdown's emphasis and quotes around a token
_TRAILING = ".,:;?!"
# What names a secret in a request for one, in the languages the context passes know (`Patterns.strong_lead`) and
# the key-like names.
_KEY_WORDS_RE = re.compile(r"(?i:\b(?:api[ _-]?keys?|access[ _-]?keys?|secret[ _-]?keys?|tokens?|credentials?|"
                           r"creds)\b)")
# A request for a value: in English, a verb of giving ("Please paste the API token here.", "Could you share the
# key?") or a question asking which or what ("Which password should I set?", "What's the database password?"); in
# any language, a question that names one ("数据库密码是多少？").
_GIVE_RE = re.compile(r"(?i:(?:^|\b(?:please|could[ \t]+you|can[ \t]+you|would[ \t]+you)[ \t,]+)"
                      r"(?:provide|share|send|paste|give[ \t]+me|tell[ \t]+me|enter|type)\b|"
                      # "Let me know the password", "I'll need your API token", and the same in other languages
                      r"\blet[ \t]+me[ \t]+know[ \t]+(?:the|your)\b|\b(?:i|i['’]ll|we|we['’]ll)[ \t]+(?:also[ \t]+)?"
                      r"need[ \t]+(?:the|your)\b)|教えて|入力して|알려|입력해|告诉我|提供一下|发给我|發給我|"
                      r"(?i:\b(?:dime|pásame|envíame|gib[ \t]+mir|schick[ \t]+mir|donne-moi|envoie-moi|"
                      r"me[ \t]+(?:passa|manda)|скинь|пришли)\b)")
# … or a question that points back at a secret the sentence before it named ("The password was refused. What is the
# current one?").
_POINTS_BACK_RE = re.compile(r"(?i:(?:(?:so|ok(?:ay)?|and|then)[ \t,]+)?(?:what(?:['’]s|[ \t]+is)[ \t]+(?:the[ \t]+"
                             r"(?:current|new|right|correct|actual|valid|working|updated|latest)[ \t]+one|it[ \t]+now)|"
                             r"(?:what|which[ \t]+one)[ \t]+(?:should|do|can)[ \t]+I[ \t]+use(?:[ \t]+instead)?)"
                             r"[ \t]*[?？])")
# … or a question of a name alone, with no verb ("And the SMTP password for alerts?", "Your vault token?").
_NAMED_ONLY_RE = re.compile(r"(?i:(?:(?:and|also|plus|now|then|ok(?:ay)?|what[ \t]+about|how[ \t]+about)[ \t,]+){0,2}"
                            r"(?:the|your|its|our)[ \t]+(?:[\w-]+[ \t]+){0,3}?)")
_NAMED_ONLY_TAIL_RE = re.compile(r"(?i:(?:[ \t]+(?:for|of|on|to|in)[ \t]+(?:the[ \t]+)?[\w-]+(?:[ \t]+[\w-]+)?)?"
                                 r"[ \t]*[?？])")
# A passphrase of words joined by hyphens or dots ("lantern-otter-basalt-nine"), given first in a reply.
_WORDS_PASSPHRASE_RE = re.compile(r"[^\W\d_]{3,}(?:([-.])[^\W\d_]{3,})(?:\1[^\W\d_]{3,}){2,}")
# What opens a reply that gives a value ("it's X", "just use X", "try X"), and a PIN: a reply of digits alone.
_REPLY_LEAD_RE = re.compile(r"(?i:(?:ok(?:ay)?[ \t,]+)?(?:it['’]s|it[ \t]+is|just[ \t]+use|use|try))[ \t]+")
_PIN_REPLY_RE = re.compile(r"\d{4,8}")
_SENTENCE_RE = re.compile(r"\S(?:[^.!?。？！\n]|[.!?](?=\S))*(?:[.!?。？！]+|\n|$)")


def digest(salt: bytes, secret: str) -> bytes:
    """A secret's salted digest, as the store keeps it."""
    return hashlib.sha256(salt + secret.encode("utf-8", "surrogatepass")).digest()[:16]


def tokens(text: str) -> set[str]:
    """The made-up tokens of a text that a secret learnt earlier may be: whole; out of Markdown's emphasis or
    quotes; without trailing punctuation, one mark or all (a secret may end with "!"); the value after a `key=` or
    `key:`; each part of a path or of a word joined with "-"."""
    out = set()
    for token in _TOKEN_RE.findall(text):
        core = token.strip(_WRAPPERS)
        if core.rstrip(_TRAILING).isalpha():
            continue  # a word (most tokens): no secret is learnt that is one
        parts = {token, core, core[:-1] if core[-1:] in _TRAILING else core, core.rstrip(_TRAILING),
                 core.rpartition("=")[2], core.rstrip(_TRAILING).rpartition(":")[2]}
        for joined in ("/", "-", "’", "'"):
            if joined in core:
                parts.update(core.rstrip(_TRAILING).split(joined))
        for part in parts:
            if len(part) >= MIN_PROPAGATED and not part.isdigit() and secret_like(part):
                out.add(part)
    return out


def known_in(text: str, salt: bytes, digests: frozenset[bytes] | set[bytes], words: bool = True) -> set[str]:
    """The tokens of `text` that are secrets learnt earlier (their digests are among `digests`): for a text that
    enters the store by another way than mining (a memory stored or corrected on request); with `words`, and where
    the text speaks of a secret or a login, the plain words given as a password too."""
    if not digests:
        return set()
    found = {token for token in tokens(text) if digest(salt, token) in digests}
    return found | words_known_in(text, salt, digests) if words else found


def words_known_in(text: str, salt: bytes, digests: frozenset[bytes] | set[bytes]) -> set[str]:
    """The plain words of `text` given as a password before (their digests are among `digests`), where the text
    speaks of a secret or a login: elsewhere "swordfish" is a word like any other."""
    if not digests or not speaks_of_secret(text):
        return set()
    return {word for word in set(_WORD_RE.findall(text)) if digest(salt, word) in digests}


# A user saying a value comes next ("I'll paste the new DB password in my next message"), in a few languages.
_ANNOUNCE_RE = re.compile(r"(?i)next message|(?:i['’]ll|i will|let me|going to) (?:paste|send|give|share|type|drop)|"
                          r"(?:paste|send|give) (?:it|you) (?:next|below|in a (?:sec|second|moment|minute))|"
                          r"coming (?:in a (?:sec|second|moment|minute)|next|right up)|"
                          r"следующ\w+ сообщени|сейчас (?:скину|пришлю|отправлю)|"
                          r"nächsten nachricht|schick\w* (?:ich )?gleich|"
                          r"prochain message|je (?:t['’]envoie|te donne)|próxim[oa] mensa|siguiente mensaje|"
                          r"te (?:mando|paso|envío|envio)|prossimo messaggio|ti (?:mando|passo|invio)|"
                          r"下一?条消息|下条|等下发|马上发|次のメッセージ|後で送|다음 메시지|보낼게")
_WORD_RE = re.compile(r"[^\W\d_]{%d,}" % MIN_PROPAGATED)


def speaks_of_secret(text: str) -> bool:
    """Whether a text names a password, a secret or a login (where a plain word given as a password is looked for)."""
    from .secret_sentences import LOGIN_WORD_RE, SECRET_WORD_RE

    return SECRET_WORD_RE.search(text) is not None or LOGIN_WORD_RE.search(text) is not None


def asks_for_secret(text: str) -> bool:
    """Whether the end of an assistant's turn asks for a password, a PIN, a key or a token: a sentence names one and
    asks for its value ("Which password should I set?", "Please paste the API token."; not "I need to update the
    token parser.", "Should I hash the password with argon2?", "What is the password hashing library you want?")."""
    from .secret_patterns import patterns

    tail = text[-_ASKED_TAIL:]
    if "?" not in tail and "？" not in tail and _GIVE_RE.search(tail) is None:
        return False  # (most turns: one look)
    strong = patterns().strong_lead
    before = False  # whether the sentence before names a secret
    for sentence in _SENTENCE_RE.findall(tail):
        sentence = sentence.strip()
        named = strong.search(sentence) or _KEY_WORDS_RE.search(sentence)
        if named is None or NAMES_A_SECRET_RE.match(sentence, named.end()) is None:
            if before and _POINTS_BACK_RE.fullmatch(sentence):
                return True
            before = False
            continue  # ("What is the password hashing library you want?")
        before = True
        if _GIVE_RE.search(sentence) or sentence.endswith(("?", "？")) and (
                WHICH_RE.search(sentence) or not sentence.isascii()
                or _NAMED_ONLY_RE.fullmatch(sentence, 0, named.start()) and _NAMED_ONLY_TAIL_RE.fullmatch(
                    sentence, named.end())):
            return True
    return False


def answer_values(text: str) -> set[str]:
    """The made-up values of a short reply (a value given on request): tokens that look generated, out of Markdown's
    emphasis or quotes, and a passphrase of words joined by hyphens or dots that opens it."""
    if len(text) > MAX_ANSWER_CHARS or text.count("\n") > 3:
        return set()
    out = set()
    first = _WORDS_PASSPHRASE_RE.match(text.strip().strip(_WRAPPERS + "`'\""))
    if first is not None and len(first.group(0)) >= 15:
        out.add(first.group(0))
    reply = _REPLY_LEAD_RE.sub("", text.strip(), 1).strip(_WRAPPERS + "`'\"")
    if _PIN_REPLY_RE.fullmatch(reply):
        out.add(reply)  # a PIN as the whole reply ("582014", "it's 4417")
    for token in _TOKEN_RE.findall(text):
        token = token.strip(_WRAPPERS).rstrip(".,:;?")
        if random_like(token) and not rejected(token) and "://" not in token and "@" not in token[1:] \
                and "=" not in token:
            out.add(token)
    return out


def names_secret(text: str) -> bool:
    """Whether the end of an assistant's turn names a password, a key, a token or a login, as a secret ("Login failed
    for user `admin`.", "The token seems to have expired."; not "the token parser", "the password manager"). Broad:
    what a reply after it gives is learnt only when it looks generated (`Conversation.redact`)."""
    from .secret_sentences import LOGIN_WORD_RE, SECRET_WORD_RE

    tail = text[-_ASKED_TAIL:]
    return any(NAMES_A_SECRET_RE.match(tail, m.end()) is not None
               for pattern in (SECRET_WORD_RE, _KEY_WORDS_RE, LOGIN_WORD_RE) for m in pattern.finditer(tail))


def made_up_values(text: str) -> set[str]:
    """The values of a short reply that could be nothing but made up (`secret_sentences.made_up_tokens`): after a
    turn that named a secret without asking for it ("The token expired." – "here's a fresh one X")."""
    from .secret_sentences import made_up_tokens

    if len(text) > MAX_ANSWER_CHARS or text.count("\n") > 3:
        return set()
    return {value for _, value in made_up_tokens(text)}


class Conversation:
    """The turns of a conversation redacted in order (see the module's doc).

    `salt` and `digests` are the store's (`Store.secret_digests`); `known` is `redact`'s, shared with the caller.
    What this conversation learnt is in `learnt` (digests), for the store, and in `fresh` (the secrets, until
    the caller takes them): what the store holds from before may say them bare (`memory.repair.scrub`); what it hid
    in one turn only is in `hidden`. `asked` says whether the last turn read asked for a secret (the assistant's
    request, or the user's word that one comes next): a miner that mines a transcript's new lines sets it from
    the store (the question ends one Stop's lines, the answer opens the next's).
    """

    def __init__(self, salt: bytes = b"", digests: frozenset[bytes] | set[bytes] = frozenset(),
                 known: set[str] | None = None) -> None:
        self.salt = salt
        self.digests = digests
        self.known: set[str] = set() if known is None else known
        self.learnt: set[bytes] = set()
        self.fresh: set[str] = set()
        self._digested: set[str] = set()
        self.asked = False
        self.named = False
        self.announced = False
        self.hidden: set[str] = set()  # the values hidden in their own turn only (for a caller that shows a few turns)
        self.words: set[str] = set()  # the plain words given as a password (`redact`'s `words`)

    def redact(self, role: str, text: str, main: bool = True) -> tuple[str, list[str]]:
        """One turn, redacted with what the turns before it taught. A turn off the main thread (a subagent's) uses
        and teaches the secrets, and answers no request of the main thread's."""
        known = self.known
        known.update(known_in(text, self.salt, self.digests, words=False))  # (its words: `_words_said`)
        doubtful: set[str] = set()  # hidden in this turn only, never learnt as a secret
        if main:
            if role == "user" and self.asked:
                known.update(answer_values(text))
            elif role == "user" and self.named:  # learnt, as what a pass hides near a secret, when generated
                values = made_up_values(text) - known
                doubtful = {value for value in values if not generated(value)}
                known.update(values - doubtful)
            # Asked for: by the assistant, or by the user, who named a secret without giving it ("I'll paste the new
            # DB password in my next message"), their next prompt then giving it, with or without a reply between.
            self.asked = role == "assistant" and (self.announced or asks_for_secret(text))
            self.named = role == "assistant" and not self.asked and names_secret(text)
        said = self._words_said(text)
        if said:  # a plain word given as a password earlier, here where a secret or a login is spoken of
            target = known | said
            out = redact(text, target, self.words)
            known.update(target - said)
        else:
            out = redact(text, known, self.words)
        if main:
            self.announced = role == "user" and not out[1] and _ANNOUNCE_RE.search(text) is not None \
                and names_secret(text)
            self.asked = self.asked or self.announced
        if doubtful - known:  # (what a pass found stays learnt; the doubtful values are hidden here only)
            self.hidden.update(doubtful - known)
            text_out, kinds = out
            for value in sorted(doubtful - known, key=len, reverse=True):
                if value in text_out:
                    kinds = kinds + ["password"] * text_out.count(value)
                    text_out = text_out.replace(value, "[REDACTED:password]")
            out = (text_out, kinds)
        self.learn()
        return out

    def redact_units(self, units: list) -> list:
        """Units (`model.Unit`) of turns `redact_turns` gave, redacted again where cleaning changed their text: a
        comment, an escape sequence or a run of blanks taken out, or a hard-wrapped line joined, brings together
        what the turn's redaction read apart ("password <!-- … --> is X"). The rest are left as they are."""
        import dataclasses

        out, previous = [], None
        for unit in units:
            if unit.text not in unit.turn.text:
                text, kinds = redact(unit.text, self.known, self.words)
                if kinds:
                    unit = dataclasses.replace(unit, text=text)
                    self.learn()
            if previous is not None and unit.index and unit.previous != previous.text:
                unit = dataclasses.replace(unit, previous=previous.text)
            out.append(unit)
            previous = unit
        return out

    def _words_said(self, text: str) -> set[str]:
        """The plain words given as a password before (in this conversation, or found among the store's digests) that
        `text` says, when it speaks of a secret or a login: "swordfish" alone is a word like any other."""
        if not (self.words or self.digests) or not speaks_of_secret(text):
            return set()
        self.words.update(words_known_in(text, self.salt, self.digests))
        return {word for word in self.words if word in text}

    def learn(self) -> None:
        """Take the secrets of `known` not digested yet into `learnt` (and `fresh`, those new to the store), and the
        plain words given as a password into `learnt` only (scrubbing a word from every row would hide it where it
        is no secret)."""
        if self.salt:
            self.learnt.update(digest(self.salt, word) for word in self.words)
        known = self.known
        if self.salt and len(known) != len(self._digested):  # (`_digested` is a subset of `known`, trimmed with it)
            # (a secret with a blank in it is never one token of a later text: it is not kept)
            for secret in known - self._digested:
                if not any(c.isspace() or c == "," for c in secret):
                    learnt = digest(self.salt, secret)
                    self.learnt.add(learnt)
                    # New to the store (one it knew was looked for when it was learnt), and not a PIN: digits are
                    # everywhere.
                    if learnt not in self.digests and len(secret) >= MIN_PROPAGATED and not secret.isdigit():
                        self.fresh.add(secret)
            self._digested.update(known)

    def redact_turns(self, turns: list, asked: bool = False) -> list:
        """Turns (`model.Turn`) with their secrets hidden, each read whole and in order: a password is known by the
        words around it ("the password is …", a list under "Credentials:"), which a single sentence may not hold,
        by an earlier turn that named it, or by the assistant's request for it just before (`asked`: the turns
        mined before these end with one). A subagent's turns answer no question of the main thread."""
        import dataclasses  # (the miner's: the hooks redact texts, not turns)

        self.asked = asked
        out = []
        for turn in turns:
            text, kinds = self.redact(turn.role, turn.text, main=not turn.is_sidechain)
            out.append(dataclasses.replace(turn, text=text) if kinds else turn)
        if len(self.known) > MAX_KNOWN:
            kept = sorted(self.known, key=len, reverse=True)[:MAX_KNOWN]
            self.known.clear()
            self.known.update(kept)
            self._digested.intersection_update(kept)
        return out
