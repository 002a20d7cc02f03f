"""A second secret in the sentence of a first, a secret asked for and answered in one text, and a made-up value near
a secret's name that no other pass read: three of `redact`'s passes, run after the others.

"The staging password is X and for prod it's Y", "the passwords are X and Y", "passwords: staging X, prod Y",
"das Passwort ist X, das vom Admin ist Y": the words that named the first value do not name the second, so no pass
that reads a value by its context finds it. Once a pass has hidden a secret, the rest of its sentence is read for
more: a value that looks generated (`random_like`), or a shorter one of letters and digits right after a word that
states it ("is", ":", "ist", "—"). What the rest of such a sentence says otherwise (a commit, a host with digits in
its name) may be hidden with it: in a sentence that gives a password, that is the safer mistake.

"Q: what's the root password? A: X" (notes pasted in, an FAQ): the question names the secret and the answer gives it
after its label. Between turns, `secret_turns` reads a reply to such a question.

"I changed the password. New one: X", "its secret ended up being X": a word names a secret and no pass found the
value it gave. A token in its sentence or the next that could be nothing but a made-up value is hidden
(`named_nearby`).
"""

from __future__ import annotations

import bisect
import re

from .secret_patterns import NOT_A_SECRET_AFTER, patterns
from .secret_values import CLAUSE_END_RE, random_like, rejected, secret_like, strip_quotes, trim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

# A marker an earlier pass left, and the rest of its sentence: up to a sentence's end (a stop, a question or
# exclamation mark followed by a blank or the end), the line's end, a backslash (an escape: the sentence is inside
# code or JSON) or _REST_CHARS characters. A stop inside a token ("db1.internal") is no end.
_REST_CHARS = 160
_AFTER_MARKER_RE = re.compile(r"\[REDACTED:([a-z0-9-]+)\]((?:[^\n.!?。！？\\]|[.!?](?![\s)\]]|$)){0,%d})"
                              % _REST_CHARS)
# What a value may be made of here: a generated value's characters, no quote, slash, colon or escape (code, a path, a
# URL or JSON's text), no "@" (an address, a package's version) and no letter of another script (a word there, its
# punctuation glued to it).
_CLEAN_RE = re.compile(r"[A-Za-z0-9!#$%^&*+?~._-]+")
_TOKEN_RE = re.compile(r"[^\s,;()<>\[\]{}|]+")
# A token of eight characters or more with a digit (a made-up value holds one), from its start.
_DIGIT_TOKEN_RE = re.compile(r"(?<![^\s,;()<>\[\]{}|])(?=[^\s,;()<>\[\]{}|]{8})[^\s,;()<>\[\]{}|0-9]*[0-9]"
                             r"[^\s,;()<>\[\]{}|]*")
# A word or mark that states a value: the value after it may be a short one ("the prod one is Pup77").
_STATES_RE = re.compile(r"(?i:is|are|was|es|son|era|ist|sind|est|sont|è|é|são|это|[:=：＝—–→-]+)")
_STATING_MARKS = ":=：＝—–→"
# The kinds that a word in the text named: a value found after one of them is of the same kind. A token's own shape
# (a GitHub token, an AWS key) says nothing of the next value, which is then a password.
_CONTEXT_KINDS = frozenset({"password", "assignment", "known-secret", "passphrase", "pin"})
_SHORTEST = 5  # a value stated shorter than this is a count or a word ("is 42", "is v2")


def more_in_sentence(text: str, hidden: Callable[[str, str], str]) -> str:
    """`text` with the made-up values said after a hidden secret, in its sentence, hidden too (`hidden(kind,
    value)` counts one and returns its marker)."""

    def rest(m: re.Match) -> str:
        kind = m.group(1) if m.group(1) in _CONTEXT_KINDS else "password"
        tail = m.group(2)
        out, at, last, previous = [], 0, 0, ""
        for token in _TOKEN_RE.finditer(tail):
            raw = token.group(0)
            value, quoted = strip_quotes(raw)
            value = value if quoted else trim(value)
            gap = tail[last:token.start()]
            stated = any(c in gap for c in _STATING_MARKS) or bool(_STATES_RE.fullmatch(previous))
            # (Text glued to the marker belongs to what it hid: the host after a URL's credentials.)
            if token.start() and _value(value, stated):
                out.append(tail[at:token.start()] + raw.replace(value, hidden(kind, value), 1))
                at = token.end()
            last, previous = token.end(), raw.lower().strip("'’\"")
        out.append(tail[at:])
        return m.group(0)[:m.start(2) - m.start()] + "".join(out)

    return _AFTER_MARKER_RE.sub(rest, text)


def _value(value: str, stated: bool) -> bool:
    """Whether a token after a secret is another: letters and digits, generated-looking or stated."""
    if not _CLEAN_RE.fullmatch(value) or rejected(value) or _identifier(value) or ".*" in value:
        return False  # (".*": a pattern)
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return False  # (letters alone are a word or a pattern, "auth.*validate"; digits alone a count or a port)
    return random_like(value) or stated and len(value) >= _SHORTEST


def _identifier(value: str) -> bool:
    """A name joined with "_" or "-" of words and version-like parts ("orders_v2", "staging-db-01"), not a value."""
    parts = re.split(r"[_-]", value)
    return len(parts) > 1 and all(p.isalpha() or p.isdigit() or len(p) <= 3 and p[:1].isalpha() and p[1:].isdigit()
                                  for p in parts if p)


# A question's mark, then an answer's label and what it gives ("Q: root password? A: X", "…?\nAnswer: X",
# "Antwort: X"); the question is read back from the mark, within its line.
_ANSWER_RE = re.compile(r"[?？][ \t]*\n?[ \t]*(?i:a|ans|answer|r|resp|respuesta|réponse|risposta|resposta|antwort|ответ|"
                        r"відповідь|odpowiedź|jawab|答|回答|答え|답)[ \t]*[:：][ \t]*(?P<value>\"[^\"\n]{1,80}\"|[^\s,;]+)")
_QUESTION_CHARS = 200
NAMES_A_SECRET_RE = re.compile(NOT_A_SECRET_AFTER)  # matches (empty) unless the name is of something else
# What may follow the name in such a question: the account or place it is for ("What's the password for staging?").
_NAME_TAIL_RE = re.compile(r"(?i:[ \t]+(?:for|of|on|to|in|at)[ \t]+[\w .'-]{1,40})?[ \t]*")
# Words that make a short question ask something else than the value ("Who has the password?").
_NOT_NAMED_ONLY = frozenset("who how where when why whose is are was does do did should can could has have will would"
                            .split())
# A question's label, and the end of a sentence before it: where the question starts.
_QUESTION_START_RE = re.compile(r"(?i:\b(?:q|question|frage|pregunta|domanda|pergunta|вопрос|питання|pytanie|tanya)|"
                                r"问|質問|질문)[ \t]*[:：][ \t]*|[.!?。！？][ \t]+")
# A question asking for a value: which or what ("What's the root password?", "Wie lautet …", "Quelle est …"; also
# `secret_turns`' requests across turns).
WHICH_RE = re.compile(r"(?i:\b(?:what|which|wie[ \t]+lautet|welches|welcher|quel|quelle|cu[aá]l|qual|quale|что|какой|"
                       r"какая|який|яка|jaki|jakie|apa)\b|什么|什麼|多少|何|なに|뭐|무엇)")


def answered(text: str, hidden: Callable[[str, str], str]) -> str:
    """`text` with the value after an answer's label hidden where the question before it asks for a secret."""
    out, at = [], 0
    for m in _ANSWER_RE.finditer(text):
        line_start = text.rfind("\n", max(0, m.start() - _QUESTION_CHARS), m.start()) + 1
        question = text[max(line_start, m.start() - _QUESTION_CHARS):m.start()]
        starts = list(_QUESTION_START_RE.finditer(question))
        question = question[starts[-1].end():] if starts else question
        if not _asks_for_value(question):
            continue
        raw = m.group("value")
        value, quoted = strip_quotes(raw)
        value = value if quoted else trim(value)
        whole = CLAUSE_END_RE.match(text[m.end():]) is not None  # the answer is this one word
        if not value or rejected(value) or not (quoted or secret_like(value) or whole and value.isalpha()):
            continue
        begin = m.start("value") + raw.find(value)
        out += [text[at:begin], hidden("password", value)]
        at = begin + len(value)
    return "".join(out) + text[at:] if out else text


def _asks_for_value(question: str) -> bool:
    """Whether a question (without its mark) asks for a secret's value: it names one, and asks which or what it is,
    or names it alone ("Root password?"); not "How do I reset my password?", "Who has the password?"."""
    named = patterns().strong_lead.search(question)
    if named is None or NAMES_A_SECRET_RE.match(question, named.end()) is None:
        return False
    before = question[:named.start()].lower().split()
    if not (WHICH_RE.search(question, 0, named.start()) or len(before) <= 3 and _NOT_NAMED_ONLY.isdisjoint(before)):
        return False
    return not question.isascii() or _NAME_TAIL_RE.fullmatch(question, named.end()) is not None


# The end of a sentence, or of a line.
_SENTENCE_END_RE = re.compile(r"[.!?。！？]+(?=\s|$)|\n")
# The words for a password (or credentials, or a PIN) in the languages of the context passes, plainly: this pass reads
# every text that holds a hint, and the context passes' own pattern (`Patterns.strong_lead`) takes eight times as long
# to look through one.
SECRET_WORD_RE = re.compile(
    r"(?i:\b(?:pass(?:words?|wd|phrase|code)?|passw[oö]rt(?:e|es)?|pw|pwd|psw|pswd|passwd|paswd|pword|mdp|secret|"
    r"cred(?:ential)?s|pin|contrase[ñn]as?|senhas?|clave|has[łl][oa]|heslo|parola|wachtwoord|şifre\w*|"
    r"mot[ \t]+de[ \t]+passe|kennw[oö]rt|lösenord|salasana|пароль|парол[ьяюе]\w*|пасс)\b|"
    r"密码|密碼|口令|パスワード|暗証番号|비밀번호|비번|암호)")
# The key-like words ("key", "token"), in the languages of the context passes; their values must look generated.
_KEY_WORD_RE = re.compile(r"(?i:\b(?:api[ _-]?)?(?:keys?|tokens?)\b|ключ|токен|토큰|令牌|トークン|キー|"
                         r"\b(?:jetons?|anahtar\w*|klucz\w*|sleutel|nyckeln?|avain|kulcs\w*|cheie\w*|chiave|clave|"
                         r"chave|clé|schlüssel)\b)")
# The words of a login ("creds for the ftp: ftpuser X", "login for the tenant: admin X"): a made-up value near one is
# its password. Not a command ("run /login") nor part of a name ("web-auth", "auth_token").
LOGIN_WORD_RE = re.compile(r"(?i:(?<![\w/-])(?:creds|credentials?|logins?|log[ \t]+in|sign[ \t]+in|auth)(?![\w-])|"
                            r"zugangsdaten|credenciales|credenziali|identifiants|логин|учетн\w*|登录|账号|ログイン|로그인|계정)")
# Runs of three small letters or more: the words of a name ("Argon2PasswordHasher", "transparentOnScrollTop0",
# "com.example.app_V2"), which a made-up value ("Fv6tN2qLs") has few of.
_WORD_RUN_RE = re.compile(r"[a-z]{3,}")
# The keys that are no secret, by the word before them.
_NOT_SECRET_KEYS = [[word] for word in ("public", "host", "primary", "foreign", "sort", "sorting", "cache", "unique",
                                        "partition", "composite", "dict", "map", "hash", "object", "idempotency",
                                        "translation", "i18n", "react", "list", "lookup", "index", "gpg", "pgp")]
_SYMBOLS = frozenset("!@#$%^&*+=?~")  # what a made-up value holds and a name does not
_SHORTEST_MADE_UP = 8
_SHORTEST_KEY = 12  # a key-like word is everywhere in code talk: only a long value near one


def named_nearby(text: str, hidden: Callable[[str, str], str]) -> str:
    """`text` with a made-up value hidden when a word names a secret in its sentence, or in the sentence before, and no
    pass found the value that word gave: "I changed the password. New one: X", "its secret ended up being X", "The
    old key was revoked; here is the new one: X". Made up is strict here: letters of both cases and a digit, or a
    symbol, and few runs of small letters (`_WORD_RUN_RE`); never a word, a path or an identifier."""
    # The made-up values first (most texts hold none, and then no name is looked for), then the names near them.
    candidates = made_up_tokens(text)
    if not candidates:
        return text
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(text)] + [len(text)]  # where each sentence ends
    values: dict[str, bool] = {}
    for pattern, key_like in ((SECRET_WORD_RE, False), (LOGIN_WORD_RE, False), (_KEY_WORD_RE, True)):
        for name in pattern.finditer(text):
            if NAMES_A_SECRET_RE.match(text, name.end()) is None:
                continue  # ("password manager", "token-based")
            if key_like and text[max(0, name.start() - 20):name.start()].lower().split()[-1:] in _NOT_SECRET_KEYS:
                continue  # ("public key", "primary key")
            at = bisect.bisect_right(ends, name.start())  # the sentence of the name ends at ends[at]
            start = ends[at - 1] if at else 0
            following = at + 1  # … and the next that holds more than blanks
            while following < len(ends) - 1 and not text[ends[following - 1]:ends[following]].strip():
                following += 1
            end = ends[min(following, len(ends) - 1)]
            if "[REDACTED:" in text[start:end]:
                continue  # a pass read the value this name gave (`more_in_sentence` reads the rest)
            for where, value in candidates[bisect.bisect_left(candidates, (start,)):]:
                if where >= end:
                    break
                if not key_like or len(value) >= _SHORTEST_KEY:
                    values[value] = True
    for value in sorted(values, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", lambda m: hidden("password", m.group(0)), text)
    return text


def made_up_tokens(text: str) -> list[tuple[int, str]]:
    """(where, value) of each token of `text` that could be nothing but a made-up value (`_made_up`), in order."""
    found = []
    for token in _DIGIT_TOKEN_RE.finditer(text):
        value, quoted = strip_quotes(token.group(0))
        value = value if quoted else trim(value)
        if _made_up(value):
            found.append((token.start(), value))
    return found


def generated(value: str) -> bool:
    """Whether a value looks made by a generator or a person picking a password, not named: a symbol in it, or
    letters and digits mixed with no word inside ("Rz4tNw9p"; not "pgStaging01", "Base64Url", "ResNet50": digits at
    its end only; nor a version or a host, with a dot). What a pass hid for standing near a secret is learnt only
    then (`secret_finders._Pass.hidden_here`, `secret_turns.Conversation`)."""
    if "." in value:
        return False
    if any(c in _SYMBOLS for c in value):
        return True
    if _WORD_RUN_RE.search(value):
        return False
    return any(c.isdigit() for c in value.rstrip("0123456789"))


def _made_up(value: str) -> bool:
    """Whether a token near a secret's name is a value made up for it (see `named_nearby`)."""
    if len(value) < _SHORTEST_MADE_UP or not value.isascii():
        return False  # (a value in a text without spaces comes with its words: the context passes read those)
    if any(r in value for r in ("a-z", "A-Z", "0-9")) or not _value(value, False) or value[:1] in "^~":
        return False  # (a pattern's ranges; `_value`: a path, a file's line, a URL; a range of versions)
    letters = sum(c.isalpha() for c in value)
    if not any(c.isdigit() for c in value) or sum(map(len, _WORD_RUN_RE.findall(value))) * 2 >= letters:
        return False  # (no digit: a word; half its letters in words: a name)
    symbol = any(c in _SYMBOLS for c in value)
    return symbol or (any(c.isupper() for c in value) and any(c.islower() for c in value))
