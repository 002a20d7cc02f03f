"""Words as the dedup layers see them: a light stemmer, word classes and synonym groups.

Synonyms come from the shipped `rules/synonyms.yaml`, then the user's
`$XDG_CONFIG_HOME/miner/synonyms.yaml` (same shape; a group sharing a word with
a shipped one joins it). Standard library and PyYAML; never on the hook path.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import yaml

from .. import paths
from ..textutil import CJK_RANGES, SOUTHEAST_ASIAN_RANGES, STOPWORDS, cyrillic_stem

# --- synonyms -----------------------------------------------------------------------------


class SynonymError(ValueError):
    """A synonyms file is broken; the message names the file and the group."""


# Scripts written without spaces: a synonym in them is found by the phrase regex, not looked up as a word.
_NO_SPACE_RE = re.compile("[" + CJK_RANGES + SOUTHEAST_ASIAN_RANGES + "]")
# A single word of any script written with spaces ("postgres", "база", "datenbank"): looked up as a token.
_SIMPLE_WORD_RE = re.compile(r"^[^\W_]+$")


def _is_simple_word(term: str) -> bool:
    return bool(_SIMPLE_WORD_RE.match(term)) and not _NO_SPACE_RE.search(term)


def canonical_token(term: str) -> str:
    """One token for a synonym group's canonical entry ("c#" → "csharp", "pull request" → "pull_request")."""
    term = unicodedata.normalize("NFKC", term).strip().lower().replace("#", "sharp").replace("+", "plus")
    term = re.sub(r"[\s\-]+", "_", term)
    return re.sub(r"[^\w.]", "", term)


@dataclass(frozen=True)
class Synonyms:
    """Variant → canonical token; single words by lookup, phrases and CJK words by one regex."""

    words: dict[str, str] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    variants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @classmethod
    def from_groups(cls, groups: Iterable[Sequence[str]], files: Sequence[str] = ()) -> "Synonyms":
        merged: list[list[str]] = []
        for group in groups:
            terms = [unicodedata.normalize("NFKC", str(t)).strip().lower() for t in group if str(t).strip()]
            if not terms:
                continue
            joined = [g for g in merged if set(g) & set(terms)]
            if joined:
                # A group sharing a word with earlier ones joins them; the earliest keeps its canonical form.
                target = joined[0]
                for other in joined[1:]:
                    target += [t for t in other if t not in target]
                    merged.remove(other)
                target += [t for t in terms if t not in target]
            else:
                merged.append(list(dict.fromkeys(terms)))
        words: dict[str, str] = {}
        phrases: dict[str, str] = {}
        variants: dict[str, tuple[str, ...]] = {}
        for group in merged:
            canon = canonical_token(group[0])
            variants[canon] = tuple(group)
            for term in group:
                if _is_simple_word(term):
                    words[term] = canon
                    words.setdefault(lemma(term), canon)  # "routed" meets "route"
                elif not _NO_SPACE_RE.search(term) or len(term) >= 2:
                    phrases[term] = canon
        return cls(words, phrases, variants, tuple(files))

    @property
    def _phrase_re(self) -> re.Pattern | None:
        cached = self.__dict__.get("_phrase_re_cache")
        if cached is None and self.phrases:
            ordered = sorted(self.phrases, key=len, reverse=True)
            cjk = [re.escape(t) for t in ordered if _NO_SPACE_RE.search(t)]
            latin = [re.escape(t) for t in ordered if not _NO_SPACE_RE.search(t)]
            # One word-boundary check around all the Latin terms, not one per term: the same matches, far faster.
            groups = ["(?:" + "|".join(cjk) + ")"] if cjk else []
            groups += [r"(?<![\w#+])(?:" + "|".join(latin) + r")(?![\w#+])"] if latin else []
            cached = re.compile("|".join(groups))
            object.__setattr__(self, "_phrase_re_cache", cached)
        return cached

    def rewrite(self, lowered: str) -> str:
        """Lower-cased text with every phrase or CJK variant replaced by its canonical token."""
        pattern = self._phrase_re
        if pattern is None:
            return lowered
        return pattern.sub(lambda m: f" {self.phrases[m.group(0)]} ", lowered)

    def names(self) -> frozenset[str]:
        cached = self.__dict__.get("_names")
        if cached is None:
            cached = frozenset(self.variants)
            object.__setattr__(self, "_names", cached)
        return cached


def default_synonym_files() -> list[Path]:
    """The shipped list, then the user's `$XDG_CONFIG_HOME/miner/synonyms.yaml` when present."""
    from ..extract.rules import default_rules_dir

    files = [default_rules_dir() / "synonyms.yaml", paths.config_dir() / "synonyms.yaml"]
    return [f for f in files if f.is_file()]


def read_synonym_file(path: Path) -> list[list[str]]:
    from ..extract.rules import YAML_LOADER

    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=YAML_LOADER)
    except OSError as exc:
        raise SynonymError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SynonymError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise SynonymError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("groups", []), list):
        raise SynonymError(f"{path}: a synonyms file holds `groups:`, a list of lists of words")
    groups = []
    for i, group in enumerate(data.get("groups") or []):
        if not isinstance(group, list) or not group or not all(isinstance(t, (str, int, float)) for t in group):
            raise SynonymError(f"{path}: group {i + 1} must be a non-empty list of words")
        groups.append([str(t) for t in group])
    return groups


_synonym_cache: dict[tuple, Synonyms] = {}


def load_synonyms(files: Sequence[Path] | None = None) -> Synonyms:
    """Synonyms from `files` (default: shipped then user), parsed once per process while unchanged.

    A broken file raises `SynonymError`; but for the defaults, a broken file of the user's is left out: synonyms
    only decide what is merged as the same memory, so mining goes on without it (`miner doctor` and `miner rules
    check` name it)."""
    users = files is None
    files = list(default_synonym_files() if files is None else files)
    key = []
    for f in files:
        try:
            st = Path(f).stat()
            key.append((str(f), st.st_mtime, st.st_size))
        except OSError:
            key.append((str(f), 0, 0))
    cache_key = tuple(key)
    if cache_key not in _synonym_cache:
        groups: list[list[str]] = []
        read = []
        for f in files:
            try:
                groups += read_synonym_file(Path(f))
            except SynonymError:
                if not users or not paths.in_config_root(f):
                    raise
                continue
            read.append(str(f))
        _synonym_cache[cache_key] = Synonyms.from_groups(groups, read)
    return _synonym_cache[cache_key]


# --- word forms and word classes ------------------------------------------------------------------

NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90", "hundred": "100",
    "thousand": "1000", "million": "1000000", "twice": "2x", "single": "1", "double": "2x", "half": "0.5",
}
# Words whose swap changes the meaning ("before" / "after") stay content words here.
_POLAR = {"above", "below", "before", "after", "under", "over", "up", "down", "off", "out", "more", "most", "few",
          "only", "against", "same", "other", "all", "any", "each", "both", "further", "on", "in", "from", "into"}
STOP = (STOPWORDS - _POLAR - set(NUMBER_WORDS)) | {"please", "always", "also", "just", "really", "actually", "now",
                                                  "instead", "rather", "still", "already", "anymore", "longer"}
# Words a paraphrase swaps freely: light verbs, copulas, fillers.
_LIGHT_WORDS = """be is are was were been being get gets got getting go goes going went gone come comes came coming
    keep keeps kept keeping stay stays stayed remain remains remained live lives lived hold holds held contain contains
    have has had make makes made do does did done put puts set sets take takes took need needs needed want wants
    should must shall will would can could may might run runs ran running work works worked happen happens use uses
    used using via currently every whole entire each always all everything things thing
    way ways also still here there like called named call calls mean means meant show shows shown display
    displays displayed give gives gave provide provides provided handle handles handled listen listens listening
    serve serves served bind binds expose exposes exposed switch switched switching change changed changing move
    moved moving migrate migrated migrating replace replaced pick picked choose chose settle settled opt opted prefer
    preferred decide decided adopt adopted stick sticking want wanted""".split()
# The same in the Romance languages people write to the assistant in: be, have, do, go, use, can, must, want, need
# (not French "ai" and "eu", which are "AI" and "EU" in English).
_LIGHT_WORDS += """ser es son era eran fue fueron sido soy somos estar está están estaba estoy estamos tener tengo
    tiene tienen tenemos tenía tenido hacer hago hace hacen hacemos hizo hecho ir voy va van vamos usar uso usa usan
    usamos usando usado poder puedo puede pueden podemos deber debo debe deben querer quiero quiere queremos
    necesitar necesito necesita necesitamos hay
    essere è sono sei siamo erano stato stata avere ho hai ha abbiamo hanno aveva avuto fare faccio fa fanno
    facciamo fatto andare vado vanno usare usano usiamo usato potere posso può possono dovere devo deve devono
    volere voglio vuole vogliamo servono bisogna
    être est sont était été suis sommes avoir avons ont avait faire fait font aller vont utiliser utilise
    utilisent pouvoir peut peuvent devoir doit doivent vouloir veux veut
    é são foi estão ter tenho tem têm fazer faz fazem vai vão usam pode podem dever devem quero quer precisar
    preciso precisa""".split()
# … and in Russian: pronouns, prepositions and conjunctions, be, take, use, do, need, want, decide, choose, move to,
# change one's mind, and the words of a change itself ("вместо")
_LIGHT_WORDS += """я мы ты вы он она они это этот эта эти тот та для на в во с со по к у о об от до из за при и а но
    или же ли бы уже ещё еще теперь сейчас быть есть был была было были будет будем буду берём берем возьмём возьмем
    используем использовать использую используется используют делаем делать сделаем нужно надо хочу хотим давай
    давайте пусть решили решил решила выбрали выбрал выбираем переходим перейдём перейдем перешли переходить
    передумал передумала передумали вместо""".split()
# … in Turkish, Arabic and Hindi: we, for, with, to, in, use, take, move to, from now on, instead
_LIGHT_WORDS += """için ile ve bir bu da de artık şimdi kullan kullanalım kullanıyoruz kullanacağız geçelim geçiyoruz
    yerine نحن نستخدم سنستخدم نستعمل سننتقل ننتقل إلى في من على هذا هذه الآن بدلاً بدلا هم मैं हम का की के में से
    पर को है हैं था थी करेंगे करें करते इस्तेमाल उपयोग अब जगह बजाय""".split()


_IRREGULAR = {
    "sent": "send", "built": "build", "written": "write", "wrote": "write", "ran": "run", "kept": "keep",
    "held": "hold", "made": "make", "chose": "choose", "chosen": "choose", "got": "get", "gotten": "get",
    "went": "go", "gone": "go", "came": "come", "told": "tell", "found": "find", "left": "leave", "began": "begin",
    "begun": "begin", "brought": "bring", "thought": "think", "spent": "spend", "took": "take", "taken": "take",
    "gave": "give", "given": "give", "shown": "show", "knew": "know", "known": "know", "drew": "draw",
    "drawn": "draw", "broke": "break", "broken": "break", "hid": "hide", "hidden": "hide", "stood": "stand",
    "paid": "pay", "said": "say", "meant": "mean", "rewrote": "rewrite", "rewritten": "rewrite", "ate": "eat",
    "fell": "fall", "fallen": "fall", "bound": "bind", "sped": "speed", "led": "lead",
}


def lemma(word: str) -> str:
    """A light stemmer: 'stored'/'store', 'listens'/'listening', 'sent'/'send' meet; Russian 'базу'/'базы' too."""
    if word in _IRREGULAR:
        return lemma(_IRREGULAR[word])
    if not word.isalpha() or len(word) <= 3:
        return word
    if not word.isascii():
        return cyrillic_stem(word)
    stem = word
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if stem.endswith(suffix) and len(stem) - len(suffix) >= 3:
            if suffix == "es" and not stem[:-2].endswith(("s", "x", "z", "ch", "sh")):
                continue
            if suffix == "s" and stem.endswith(("ss", "us", "is")):
                continue
            stem = stem[: -len(suffix)] + repl
            if suffix in ("ing", "ed") and len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] in "bdgmnprt":
                stem = stem[:-1]
            break
    if len(stem) >= 4 and stem.endswith("e"):
        stem = stem[:-1]
    return word if stem in STOP else stem


LIGHT = frozenset(lemma(w) for w in _LIGHT_WORDS)
_ANTONYM_PAIRS = """include exclude, enable disable, show hide, above below, before after, public private, allow deny,
    allow block, sync async, on off, true false, increase decrease, bigger smaller, larger smaller, more fewer,
    more less, light dark, ascending descending, first last, top bottom, left right, open closed, add remove,
    required optional, mandatory optional, internal external, local remote, static dynamic, horizontal vertical,
    uppercase lowercase, minimum maximum, min max, inside outside, with without, enabled disabled, visible hidden"""
ANTONYMS: dict[str, set[str]] = {}
for _pair in _ANTONYM_PAIRS.split(","):
    _x, _y = (lemma(w) for w in _pair.split())
    ANTONYMS.setdefault(_x, set()).add(_y)
    ANTONYMS.setdefault(_y, set()).add(_x)
CJK_LIGHT = set("的了是在用都请請就来來会會把被也还還要我们們你他她它这這那个個和与與及或很更最已经經将將让讓给給从從到对對为為于於以跟着著过過地得之其吧呢吗嗎啊呀哦嗯啦么麼再又才只该該应應能可需先后後")
