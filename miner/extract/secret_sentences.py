"""A second secret in the sentence of a first, and a secret asked for and answered in one text: two of `redact`'s
passes, run after the others.

"The staging password is X and for prod it's Y", "the passwords are X and Y", "passwords: staging X, prod Y",
"das Passwort ist X, das vom Admin ist Y": the words that named the first value do not name the second, so no pass
that reads a value by its context finds it. Once a pass has hidden a secret, the rest of its sentence is read for
more: a value that looks generated (`random_like`), or a shorter one of letters and digits right after a word that
states it ("is", ":", "ist", "—"). What the rest of such a sentence says otherwise (a commit, a host with digits in
its name) may be hidden with it: in a sentence that gives a password, that is the safer mistake.

"Q: what's the root password? A: X" (notes pasted in, an FAQ): the question names the secret and the answer gives it
after its label. Between turns, `secret_turns` reads a reply to such a question.
"""

from __future__ import annotations

import re

from .secret_patterns import NOT_A_SECRET_AFTER, patterns
from .secret_values import CLAUSE_END_RE, random_like, rejected, secret_like, strip_quotes, trim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

# A marker an earlier pass left, and the rest of its sentence: up to a sentence's end (a stop, a question or
# exclamation mark followed by a blank or the end) or the line's end. A stop inside a token ("db1.internal") is no
# end.
_AFTER_MARKER_RE = re.compile(r"\[REDACTED:([a-z0-9-]+)\]((?:[^\n.!?。！？]|[.!?](?![\s)\]]|$))*)")
_TOKEN_RE = re.compile(r"[^\s,;()<>\[\]{}|]+")
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
        out, at, previous = [], 0, ""
        for token in _TOKEN_RE.finditer(tail):
            raw = token.group(0)
            value, quoted = strip_quotes(raw)
            value = value if quoted else trim(value)
            gap = tail[at:token.start()]
            stated = any(c in gap for c in _STATING_MARKS) or bool(_STATES_RE.fullmatch(previous))
            # (Text glued to the marker belongs to what it hid: the host after a URL's credentials.)
            if token.start() and _value(value, stated):
                out.append(tail[at:token.start()] + raw.replace(value, hidden(kind, value), 1))
                at = token.end()
            previous = raw.lower().strip("'’\"")
        out.append(tail[at:])
        return m.group(0)[:m.start(2) - m.start()] + "".join(out)

    return _AFTER_MARKER_RE.sub(rest, text)


def _value(value: str, stated: bool) -> bool:
    """Whether a token after a secret is another: generated-looking, or stated with letters and digits."""
    if not value or rejected(value) or "://" in value or "@" in value or "=" in value:
        return False
    if _identifier(value):
        return False
    if random_like(value):
        return True
    return stated and len(value) >= _SHORTEST and secret_like(value) and not value.isdigit() \
        and any(c.isalpha() for c in value)


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
_NAMES_A_SECRET_RE = re.compile(NOT_A_SECRET_AFTER)  # matches (empty) unless the name is of something else
# What may follow the name in such a question: the account or place it is for ("What's the password for staging?").
_NAME_TAIL_RE = re.compile(r"(?i:[ \t]+(?:for|of|on|to|in|at)[ \t]+[\w .'-]{1,40})?[ \t]*")
# Words that make a short question ask something else than the value ("Who has the password?").
_NOT_NAMED_ONLY = frozenset("who how where when why whose is are was does do did should can could has have will would"
                            .split())
# A question's label, and the end of a sentence before it: where the question starts.
_QUESTION_START_RE = re.compile(r"(?i:\b(?:q|question|frage|pregunta|domanda|pergunta|вопрос|питання|pytanie|tanya)|"
                                r"问|質問|질문)[ \t]*[:：][ \t]*|[.!?。！？][ \t]+")
# A question asking for a value: which or what ("What's the root password?", "Wie lautet …", "Quelle est …").
_WHICH_RE = re.compile(r"(?i:\b(?:what|which|wie[ \t]+lautet|welches|welcher|quel|quelle|cu[aá]l|qual|quale|что|какой|"
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
    if named is None or _NAMES_A_SECRET_RE.match(question, named.end()) is None:
        return False
    before = question[:named.start()].lower().split()
    if not (_WHICH_RE.search(question, 0, named.start()) or len(before) <= 3 and _NOT_NAMED_ONLY.isdisjoint(before)):
        return False
    return not question.isascii() or _NAME_TAIL_RE.fullmatch(question, named.end()) is not None
