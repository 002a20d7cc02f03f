"""The memory classifier: which prose units are memories, and of which category, for any language.

A spaCy text classifier (`textcat`, exclusive classes none / decision /
preference / fact / todo) trained by `miner train` sees every cleaned unit,
not only those a rule matched, so a sentence no rule foresaw can still be
kept. It sees what the unit's form, place and cues show (`unit_tokens`):

- with `words` only (the shipped model is trained without them: a model that
  learns its training projects' words learns their topics), the words,
  lower-cased, in any script; scripts written without spaces (Chinese,
  Japanese, Thai, …) as characters and character pairs; numbers as one token;
- who said it, and where it sits: a list item, a heading, a table row, a
  bold label, the first or last unit of its turn, the assistant's last
  message before the user spoke again, the heading it falls under;
- what it holds: code spans, paths, URLs, numbers, a question mark, a colon
  at the end;
- cue families that mean the same in every language the team knows (a
  lasting rule: "always", 每次, siempre, всегда, 항상; a prohibition; a wish;
  a choice of tool; deferred work; a cause; narration and recaps of the
  assistant's own work), so that what is learnt from one language carries to
  another;
- the YAML rules that fired on it (their categories and ids), which is how
  the shipped rules still count: as evidence the classifier weighs;
- whether the shipped rules are written for its language (`ruled_language`:
  English, Chinese or other), alone and crossed with its role and cues, so
  that a cue no rule backs up weighs more where no rule could have fired;
- the words of the user's prompt that an assistant unit answers.

The model ships in the package (`miner/model/`) with the thresholds that
training tuned, one for the user's units and one for the assistant's (the
assistant says far more, and far less of it is a memory). Only the
background miner loads it (spaCy is never imported on the hook path); with
no model, the miner falls back to the rules alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..textutil import HAN_RANGES, HANGUL_RANGES, KANA_RANGES, char_bigrams, word_count, word_tokens
from .cues import cue_families
from .model import CATEGORIES, Unit

LABELS = ("none", *CATEGORIES)
MODEL_DIR = Path(__file__).resolve().parent.parent / "model"
META_FILE = "miner-meta.json"
PROMPT_WORDS = 8  # words of the user's prompt given to the units of the answer
HEADING_WORDS = 4

_LIST_RE = re.compile(r"^\s*[-*+•]\s+")
_NUMBERED_RE = re.compile(r"^\s*\d{1,3}[.)]\s+")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+")
_BOLD_LABEL_RE = re.compile(r"^\s*(?:[-*+•]\s+|\d{1,3}[.)]\s+)?\*\*[^*]{1,80}\*\*\s*[:：—-]?")
_CODE_RE = re.compile(r"`[^`\n]+`")
_PATH_RE = re.compile(r"(?:^|[\s`(])(?:~|\.{1,2})?/[\w.\-/]+|\b[\w\-]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|md|rb|go|"
                      r"rs|java|kt|sh|sql|css|scss|html|vue|svelte|txt|env|lock|cfg|ini|conf|xml|php|swift|c|h|cpp)\b")
_URL_RE = re.compile(r"https?://\S+")
_DIGIT_RE = re.compile(r"\d")
_VERSION_RE = re.compile(r"\bv?\d+\.\d+(?:\.\d+)?\b")
_IDENT_RE = re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[a-z0-9]+(?:_[a-z0-9]+)+\b|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_EMOJI_RE = re.compile("[\u2705\u274c\u26a0\u2714\u2716\U0001f300-\U0001faff]")
# Which shipped rules can speak for a unit: English and Chinese have rules of their own, other languages only
# the rules of form. Function words tell English from the other languages written in Latin letters.
_ENGLISH_WORDS = frozenset("the is are was we you it this that to of and with should will would be have has "
                           "not for can what when there".split())
_OTHER_LATIN_WORDS = frozenset(
    "de la el que en y los las por para con una es del se lo como pero más muy il di che per non sono della "
    "gli le è anche questo essere um uma não os das dos le les des et est pour une dans pas qui der die das und "
    "ist nicht mit ein eine auf zu den het een van ik niet je ve bir bu ile için değil và của là không có được "
    "yang dan itu ini untuk dengan tidak ada w na nie jest się że to".split()) - _ENGLISH_WORDS
_KANA_HANGUL_RE = re.compile("[" + KANA_RANGES + HANGUL_RANGES + "]")
_HAN_RE = re.compile("[" + HAN_RANGES + "]")
_OTHER_LETTER_RE = re.compile(r"[^\W\d_a-zA-Z\u00c0-\u024f]")  # a letter of neither Latin nor Han
_LATIN_WORD_RE = re.compile(r"[a-z\u00df-\u024f]+")
LANGUAGE_TOKEN = "§lang:"
RULE_TOKEN, RULE_ID_TOKEN = "§rule:", "§rid:"  # the category and the id of a rule that fired


@dataclass(frozen=True)
class Context:
    """Where a unit sits: tokens for its position, the heading above it, the prompt it answers, its neighbours."""

    position: tuple[str, ...] = ()
    heading: tuple[str, ...] = ()
    prompt: tuple[str, ...] = ()
    around: tuple[str, ...] = ()  # what the turn and the unit before it are: "turn-opens:narrate", "after:colon_end"


def contexts(units: Sequence[Unit]) -> list[Context]:
    """The context of each unit of a transcript's units, in order (one pass)."""
    by_turn: dict[str, list[int]] = {}
    order: list[str] = []
    for i, unit in enumerate(units):
        uuid = unit.turn.uuid
        if uuid not in by_turn:
            order.append(uuid)
            by_turn[uuid] = []
        by_turn[uuid].append(i)
    role = {units[idx[0]].turn.uuid: units[idx[0]].turn.role for idx in by_turn.values()}
    final = {a for a, b in zip(order, order[1:] + [""]) if role[a] == "assistant" and role.get(b) != "assistant"}
    opening = {uuid: _shape(units[idx[0]].text) for uuid, idx in by_turn.items()}
    out: list[Context] = []
    heading: dict[str, tuple[str, ...]] = {}
    prompt: tuple[str, ...] = ()
    last_turn = ""
    for i, unit in enumerate(units):
        turn = unit.turn
        if turn.uuid != last_turn:
            last_turn = turn.uuid
            if turn.role == "user":
                prompt = tuple(_content_words(" ".join(units[j].text for j in by_turn[turn.uuid]))[:PROMPT_WORDS])
        indexes = by_turn[turn.uuid]
        position = []
        if i == indexes[0]:
            position.append("first")
        if i == indexes[-1]:
            position.append("last")
        if len(indexes) == 1:
            position.append("alone")
        if turn.uuid in final:
            position.append("final_msg")
        if turn.is_sidechain:
            position.append("sidechain")
        size = len(indexes)
        position.append("turn-size:" + ("1" if size == 1 else "2-4" if size <= 4 else "5-12" if size <= 12 else "13+"))
        if size > 2:
            third = (indexes.index(i) * 3) // size
            position.append("third:" + str(third))
        if _HEADING_RE.match(unit.text):
            heading[turn.uuid] = tuple(_content_words(_HEADING_RE.sub("", unit.text))[:HEADING_WORDS])
            under: tuple[str, ...] = ()
        else:
            under = heading.get(turn.uuid, ())
        around = ["turn-opens:" + t for t in opening[turn.uuid]]
        if i != indexes[0]:
            around += ["after:" + t for t in _shape(units[i - 1].text)]
        out.append(Context(tuple(position), under, prompt if turn.role == "assistant" else (), tuple(around)))
    return out


def _shape(text: str) -> list[str]:
    """The few traits of a unit that say what the units after it are: a lead-in, a heading, a narration."""
    found = []
    stripped = text.strip()
    if stripped.endswith((":", "：")):
        found.append("colon_end")
    if _HEADING_RE.match(text):
        found.append("heading")
    if stripped.endswith(("?", "？")):
        found.append("question")
    found += [name for name in cue_families(text) if name in ("narrate", "recap", "thanks")]
    return found


def _content_words(text: str) -> list[str]:
    from ..textutil import STOPWORDS

    return [w for w in word_tokens(text) if len(w) > 2 and w not in STOPWORDS and not w[0].isdigit()]


def text_tokens(text: str) -> list[str]:
    """The unit's own words: lower-cased words of any script, character pairs of scripts without spaces,
    numbers as `§num`, identifiers also as `§ident`."""
    out: list[str] = []
    for word in word_tokens(text):
        if word[0].isdigit():
            out.append("§num")
        else:
            out.append(word)
    grams = char_bigrams(text)
    if grams:
        out.extend(grams)
        out.extend({g[0] for g in grams})  # the characters too: a one-character word is common in Chinese
    return out


# What a unit's form shows: one token for each of these patterns it meets.
_TRAITS = (
    ("§list", _LIST_RE), ("§numbered", _NUMBERED_RE), ("§heading", _HEADING_RE), ("§table", re.compile(r"^\s*\|")),
    ("§bold_label", _BOLD_LABEL_RE), ("§colon_end", re.compile(r"[:：]\s*$")),
    ("§question", re.compile(r"[?？]\s*$")), ("§exclaim", re.compile(r"[!！]\s*$")), ("§code", _CODE_RE),
    ("§path", _PATH_RE), ("§url", _URL_RE), ("§digit", _DIGIT_RE), ("§version", _VERSION_RE), ("§ident", _IDENT_RE),
    ("§emoji", _EMOJI_RE),
)
# Traits of the unit's form, and where it sits; each is also crossed with the other (a list item in the last
# message of a turn is a summary, one in the middle of a turn a step) and with the cue families.
_FORM = ("§list", "§numbered", "§heading", "§table", "§bold_label", "§colon_end", "§question", "§code", "§path")
_PLACE = ("§pos:first", "§pos:last", "§pos:final_msg", "§pos:alone")


def ruled_language(text: str) -> str:
    """"en" or "zh" when the unit is written in a language the shipped rules are written for, else "other"."""
    if not text.isascii():
        if _KANA_HANGUL_RE.search(text):
            return "other"
        if _HAN_RE.search(text):
            return "zh"
        if _OTHER_LETTER_RE.search(text):
            return "other"
    words = _LATIN_WORD_RE.findall(text.lower())
    english = sum(w in _ENGLISH_WORDS for w in words)
    other = sum(w in _OTHER_LATIN_WORDS for w in words) + (not text.isascii())
    return "en" if english >= other else "other"


def unit_tokens(unit: Unit, context: Context, rule_hits: Iterable[Any] = (), words: bool = False,
                language: str | None = None) -> list[str]:
    """Everything the classifier sees of a unit, as tokens (see the module note).

    Its own words only with `words`: a model that learns the words of the projects it was trained on learns
    their topics, and does worse on a project it has not seen (cross-validated; see the README). `language`
    stands in for `ruled_language` (training's rule-free copies are "other").
    """
    text = unit.text
    tokens = ["§role:" + unit.turn.role] + [name for name, pattern in _TRAITS if pattern.search(text)]
    count = word_count(text)
    tokens.append("§len:" + ("1" if count <= 3 else "2" if count <= 8 else "3" if count <= 16 else "4"
                             if count <= 32 else "5"))
    cues = ["§cue:" + name for name in cue_families(text)]
    tokens += cues
    tokens += ["§pos:" + p for p in context.position]
    tokens += ["§" + a for a in context.around]
    form = [t for t in tokens if t in _FORM]
    place = [t for t in tokens if t in _PLACE]
    role = "§u" if unit.turn.role == "user" else "§a"
    crossed = [f"{role}|{t[1:]}" for t in tokens[1:]]
    crossed += [f"{f}&{p}" for f in form for p in place] + [f"{f}&{c}" for f in form for c in cues]
    tokens += crossed
    lang = language or ruled_language(text)
    tokens += [LANGUAGE_TOKEN + lang] + [f"{LANGUAGE_TOKEN}{lang}|{t}" for t in (role, *cues)]
    tokens += ["§under:" + w for w in context.heading]
    tokens += ["§asked:" + w for w in context.prompt]
    for hit in rule_hits:
        tokens.append(RULE_TOKEN + hit.rule.category)
        tokens.append(RULE_ID_TOKEN + hit.rule.id)
    return tokens + text_tokens(text) if words else tokens


class Orths:
    """What a bag-of-n-grams model reads of a `Doc`: its length and `to_array([ORTH])`, the tokens' string ids.

    Building a `Doc` makes a lexeme of every new token and a `Token` object of every token, which cost more
    than the model itself; the ids are the same (`spacy.strings.get_string_id` is how a `Doc` names its
    tokens)."""

    __slots__ = ("ids", "_orth")

    def __init__(self, ids, orth: int) -> None:
        self.ids = ids
        self._orth = orth

    def __len__(self) -> int:
        return len(self.ids)

    def to_array(self, attrs):
        if list(attrs) != [self._orth]:
            raise ValueError("only the tokens' ORTH ids are known here")
        return self.ids


def reads_orths_only(model) -> bool:
    """True when the model reads nothing of its documents but their ORTH ids (spaCy's TextCatBOW does)."""
    from spacy.attrs import ORTH

    leaves = [layer for layer in model.walk() if not layer.layers]
    readers = [layer for layer in leaves if layer.name == "extract_ngrams"]
    return (len(readers) == 1 and readers[0].attrs.get("attr") == ORTH
            and {layer.name for layer in leaves} <= {"extract_ngrams", "sparse_linear", "softmax_activation"})


THRESHOLD_ROLES = ("user", "assistant")


def threshold_role(role: str) -> str:
    """Whose threshold a unit said by `role` is held to: the user's own words, or everything else."""
    return "user" if role == "user" else "assistant"


def thresholds_of(value: float | dict[str, float]) -> dict[str, float]:
    """{role: threshold} from one number for both roles, or a mapping of them."""
    if isinstance(value, dict):
        return {role: float(value[role]) for role in THRESHOLD_ROLES}
    return dict.fromkeys(THRESHOLD_ROLES, float(value))


def thresholds_text(thresholds: dict[str, float]) -> str:
    """"user 0.6, assistant 0.475": the thresholds as `miner train`, `doctor` and the training log say them."""
    return ", ".join(f"{role} {value}" for role, value in thresholds_of(thresholds).items())


class Classifier:
    """The trained model and its thresholds, loaded on first use (spaCy imports here, in the miner only)."""

    def __init__(self, path: Path | str | None = None, nlp=None,
                 threshold: float | dict[str, float] | None = None):
        self.path = Path(path) if path else MODEL_DIR
        self._nlp = nlp
        self._meta: dict[str, Any] | None = None
        self._threshold = threshold
        self._thresholds: dict[str, float] | None = None  # read once: `decide` runs for every unit
        self._orths_only: bool | None = None
        # The shipped model's weights kept for numpy (`bow`): scoring without importing spaCy. Not for a pipeline
        # handed in (a fold's, in training) or a model elsewhere (a fold's folder): the cache keeps the shipped one.
        self._kept = nlp is None and self.path.resolve() == MODEL_DIR
        self._bow = None

    @staticmethod
    def available(path: Path | str | None = None) -> bool:
        """True when a trained model is there."""
        folder = Path(path) if path else MODEL_DIR
        return (folder / META_FILE).is_file() and (folder / "config.cfg").is_file()

    @property
    def meta(self) -> dict[str, Any]:
        if self._meta is None:
            try:
                self._meta = json.loads((self.path / META_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._meta = {}
        return self._meta

    @property
    def thresholds(self) -> dict[str, float]:
        """Per role, a unit is a memory when P(none) is below this (tuned by training on held-out projects).
        One number (an older model's, or a test's) serves both roles."""
        if self._thresholds is None:
            value = self._threshold if self._threshold is not None else self.meta.get("threshold", 0.5)
            self._thresholds = thresholds_of(value)
        return self._thresholds

    @property
    def nlp(self):
        if self._nlp is None:
            import spacy

            self._nlp = spacy.load(self.path)
        return self._nlp

    def scores(self, token_lists: Sequence[list[str]]) -> list[dict[str, float]]:
        """P(label) of each unit's tokens, in order."""
        if not token_lists:
            return []
        if self._kept and self._bow is None and self._nlp is None:
            from . import bow

            self._bow = bow.load(self.path / "textcat" / "model") or False
        if self._bow:
            return self._bow.scores(token_lists)
        textcat = self.nlp.get_pipe("textcat")
        if self._orths_only is None:
            self._orths_only = reads_orths_only(textcat.model)
            if self._orths_only and self._kept:
                from . import bow

                bow.export(textcat, self.path / "textcat" / "model")  # for the next process
        if self._orths_only:
            import numpy
            from spacy.attrs import ORTH
            from spacy.strings import get_string_id

            docs = [Orths(numpy.fromiter(map(get_string_id, tokens or ["§empty"]), dtype=numpy.uint64), ORTH)
                    for tokens in token_lists]
        else:
            from spacy.tokens import Doc

            docs = [Doc(self.nlp.vocab, words=tokens or ["§empty"]) for tokens in token_lists]
        out: list[dict[str, float]] = []
        for start in range(0, len(docs), 512):
            batch = docs[start:start + 512]
            scores = textcat.predict(batch)
            labels = textcat.labels
            for row in scores.tolist() if hasattr(scores, "tolist") else scores:
                out.append(dict(zip(labels, (float(v) for v in row))))
        return out

    def decide(self, scores: dict[str, float], role: str) -> tuple[str, float]:
        """(category, confidence) when the unit (said by `role`) is a memory, else ('none', P(none))."""
        none = scores.get("none", 0.0)
        if none >= self.thresholds[threshold_role(role)]:
            return "none", none
        category = max(CATEGORIES, key=lambda c: scores.get(c, 0.0))
        return category, 1.0 - none
