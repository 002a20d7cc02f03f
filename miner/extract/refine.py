"""Refinement after the rules, with spaCy: drop what is not a memory, mark what is hedged, make units self-contained.

Runs on candidate units only (those a rule or the classifier kept), so its cost
does not grow with the transcript. Each step is a method taking a spaCy `Doc`,
so that it can be tested and explained on its own:

- on the blank pipeline the steps use token attributes, lookup lemmas, a
  `Matcher` (openers such as "let me", "I'll check", "I've updated") and
  `PhraseMatcher`s (greetings, hedges), and plain patterns (a check's outcome
  reported, `check_report`; pasted program output, a user's request pinned to
  a line number, a lead-in that stops before its list, options put up for a
  choice, which are kept but unconfirmed);
- on a trained pipeline they also use its tags and parse: an auxiliary
  before its subject is a question, a first-person future of a work verb is
  narration, a modal "might" is a hedge, "this" as a determiner needs no
  context.

Chinese is handled on the text: the English tokenizer keeps a run of CJK
characters as one token. `refine` applies the steps in order (`Refiner.STEPS`,
each with its name in the trace that `miner rules test` prints) and says which
one dropped a unit.

The spaCy side is here: the matchers and their word lists, the steps, and
what they make of a unit (`Verdict`). The plain-text tests the steps share
with the rest of the miner are `sentences`' (hedges, questions, options, the
quality gate, the memory's display text) and `program_output`'s.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from ..textutil import keywords
from .check_report import reports_check
from .model import Candidate, Unit
from .narration import announces_next_step
from .nlp import Pipeline, has_parse
from .program_output import is_output
from .rule_matching import Hit
from .sentences import (
    CJK_HEDGES,
    HEDGES,
    LEAD_IN_RE,
    LINE_ANCHORED_RE,
    OWN_WISH_RE,
    QUESTION_END_RE,
    display_text,
    is_hedged,
    is_option,
    is_quote,
    is_unmarked_question,
    main_clause,
    other_hedge,
    passes_quality_gate,
    statement_before_question,
)

MAX_MERGED_CHARS = 400
MAX_KEYWORDS = 32
# A unit this short that ends with "this"/"it" says nothing without the unit before it.
SHORT_REFERENCE_WORDS = 8
END_REFERENCES = frozenset({"this", "that", "it", "them", "these", "those"})

# The matchers' word lists (the hedges are `sentences`', shared with its plain-text test).
MODAL_HEDGES = frozenset({"might", "may", "could"})
GREETINGS = ("hi", "hello", "hey", "thanks", "thank", "thank you", "thx", "great", "perfect", "awesome", "nice",
             "excellent", "cool", "ok", "okay", "sure", "got it", "sounds good", "lgtm", "good job", "good work",
             "well done", "it works", "that works", "this works", "it worked", "that worked", "looks good",
             "that looks good", "this looks good", "it looks good",
             # thanks and acknowledgements in languages the dev data lacks (not its Spanish, Italian or Korean)
             "спасибо", "хорошо", "отлично", "понял", "поняла", "ясно", "годится", "да", "пожалуйста", "дякую", "добре",
             "чудово", "danke", "danke schön", "vielen dank", "perfekt", "alles klar", "bitte", "merci", "parfait",
             "d'accord", "génial", "obrigado", "obrigada", "valeu", "perfeito", "beleza", "ótimo", "teşekkürler",
             "teşekkür ederim", "sağol", "tamam", "harika", "evet", "شكرا", "شكراً", "حسنا", "حسناً", "ممتاز", "تمام",
             "نعم", "धन्यवाद", "शुक्रिया", "ठीक है", "बढ़िया", "हाँ", "cảm ơn", "tuyệt", "terima kasih", "oke", "mantap",
             "dzięki", "dziękuję", "świetnie", "bedankt", "dank je")
CJK_GREETINGS = ("谢谢", "謝謝", "好的", "你好", "太好了", "完美",
                 # Japanese and Thai, written without spaces (compared whole, punctuation left out)
                 "はい", "はいお願いします", "お願いします", "ありがとう", "ありがとうございます", "了解", "了解です",
                 "了解しました", "わかりました", "分かりました", "いいですね", "完璧です", "ขอบคุณ", "ขอบคุณครับ",
                 "ขอบคุณค่ะ", "โอเค", "โอเคครับ", "โอเคค่ะ", "ได้เลย", "ได้เลยครับ", "ได้เลยค่ะ")
# A unit that opens with one of these, or with a word and one of its followers, and does not end as a statement
# is a question (users often leave the "?" out). Other languages too, but only the words that open a question
# and nothing else: the accented interrogatives of Spanish ("cómo", "qué"; unaccented "como", "que" also open
# statements), Italian "cosa"/"quale", French "où"/"pourquoi", German "warum"; "como", "donde", "come",
# "dove", German "wie" and "wo" only before a verb that asks ("como puedo", "wo ist": "wie besprochen" and
# "wo möglich" open statements). Not "perché" (also "because") nor "quando" (also "whenever").
QUESTION_WORDS = frozenset({
    "what", "why", "how", "when", "where", "which", "who", "whose",
    "¿", "cómo", "dónde", "adónde", "qué", "cuál", "cuáles", "cuándo", "cuánto", "cuánta", "cuántos", "cuántas",
    "quién", "quiénes", "onde", "qual", "quais", "quale", "quali", "cosa",
    "comment", "où", "pourquoi", "quel", "quelle", "quels", "quelles",
    "warum", "wieso", "weshalb", "welche", "welcher", "welches", "welchen"})
# The verbs that make "como", "come", "donde", "dove", "wie", "wo" ask, each language its own: a shared list would
# make Spanish "como si…" and Italian "come se…" ("as if") questions.
_ASKING_AFTER = {
    "como": {"puedo", "podemos", "hago", "hacemos", "se", "funciona", "posso", "faço", "fazer"},
    "donde": {"se", "esta", "está", "estan", "están", "puedo", "pongo"},
    "come": {"faccio", "facciamo", "posso", "possiamo", "si", "funziona"},
    "dove": {"si", "è", "sono", "posso", "trovo", "metto"},
    "wie": {"ist", "sind", "kann", "können", "soll", "sollen", "mache", "macht", "funktioniert", "geht", "starte",
            "startet", "finde", "bekomme", "läuft"},
    "wo": {"ist", "sind", "kann", "finde", "finden", "liegt", "liegen", "läuft", "laufen", "wird", "werden",
           "steht"},
}
QUESTION_OPENERS = {"can": {"you"}, "could": {"you"}, "would": {"you"}, "will": {"you"}, "should": {"we", "i"},
                    "shall": {"we"}, "do": {"you"}, "did": {"you"}, "is": {"there", "it"}, "are": {"there", "you"},
                    "any": {"idea", "ideas", "thoughts"}, **_ASKING_AFTER,
                    "que": {"hace", "hago", "significa", "pasa"}, "por": {"qué"}, "est": {"-"}, "qu'est": {"-"},
                    "was": {"macht", "ist", "sind", "bedeutet", "passiert", "soll"}}
DISCOURSE = frozenset({"ok", "okay", "now", "first", "next", "then", "great", "perfect", "good", "alright",
                       "excellent", "done", "so"})
ADVERBS = ["now", "first", "also", "then", "quickly", "just", "successfully", "next"]
# Verbs of the assistant's own work: "I'll check…", "Checking…" narrate; "I've updated…" recaps.
WORK_VERBS = ["check", "look", "read", "start", "run", "update", "create", "add", "fix", "examine", "test", "verify",
              "search", "review", "implement", "write", "explore", "investigate", "try", "open", "inspect", "analyze",
              "analyse", "build", "make", "set", "begin", "continue", "proceed", "launch", "modify", "edit",
              "refactor", "remove", "install", "commit", "push", "deploy", "go", "see", "find", "debug", "trace",
              "fetch", "scan", "rerun", "clean"]
# After "let's" only verbs of looking into things: "let's go with pnpm" and "let's use X" are decisions.
LETS_VERBS = ["check", "look", "see", "start", "run", "test", "verify", "read", "try", "examine", "explore", "update",
              "fix", "create", "review", "first", "debug", "inspect", "investigate", "find"]
LOOKUP_VERBS = ["check", "look", "read", "see", "find", "update", "fix", "verify"]
DONE_VERBS = ["create", "update", "add", "fix", "implement", "make", "change", "write", "build", "complete",
              "finish", "remove", "refactor", "modify", "set", "move", "rename", "install", "commit", "push",
              "deploy", "test", "verify", "run", "replace", "convert"]
# Words that, right after "this"/"that", make it a pronoun ("This means…") rather than a determiner ("This file…").
# Compared with the following word and its lemma, so base forms cover "is", "means", "works".
PRONOUN_FOLLOWERS = frozenset({
    "be", "'s", "will", "'ll", "would", "should", "can", "could", "may", "might", "must", "do", "have", "mean",
    "make", "work", "seem", "look", "need", "happen", "ensure", "allow", "keep", "give", "let", "cause", "break",
    "fix", "help", "avoid", "prevent", "sound", "explain", "match", "depend", "get", "go", "run", "save",
    "way", "one", "also", "just", "only", "still", "already",
})
DANGLING = frozenset({"this", "that", "it", "these", "those", "they"})
CHOICES = ("decision", "preference")  # the categories of a rule that fires on a choice, not on a report
CJK_DANGLING = ("它", "这", "這", "那")

# The first words of the narration and recap patterns below (kept in step with them; a test checks it).
_OPENERS = frozenset({"let", "i", "successfully", "all", "the", "changes", "fix", "update", "implementation",
                      "summary", "here", "what"})
_CJK_NARRATION_RE = re.compile(r"^(?:让我|讓我|我来|我來|现在我|現在我|接下来我|接下來我|我先|首先我|我将|我將)")
_CJK_RECAP_RE = re.compile(r"^(?:我已经|我已經|已完成|完成了)")
_CJK_PUNCT_RE = re.compile(r"[\s!.,，。！~、]+")
# What names a thing of one project: inline code, a path, a file name, an identifier (`./gen/pb`, `src/app.py`,
# `Makefile.toml`, `make_proto`, `gw-stg2`; not "and/or"). A preference that names one holds there, not in every
# project.
_PROJECT_THING_RE = re.compile(
    r"`[^`\n]+`|(?<![\w/:])(?:\.{1,2}/|~/|/(?=\w+/))[\w.-]+(?:/[\w.-]+)*|(?<![\w/:])\w[\w.-]*(?:/[\w.-]+){2,}"
    r"|(?<![\w/:])\w[\w-]*/[\w-]*\.\w+"
    r"|\b[\w-]+\.(?:py|js|mjs|ts|tsx|jsx|go|rs|rb|java|kt|swift|c|h|cpp|cs|php|json|ya?ml|toml|md|sh|css|scss|html|"
    r"sql|lock|cfg|ini|env|txt|xml|proto|tf)\b|\b[A-Za-z]+_\w+\b|\b[A-Za-z]+-[\w-]*\d[\w-]*\b")


def _of_this_project(text: str) -> bool:
    """Whether a standing rule holds in its own project only: it says so ("in this repo"), or names a thing of it."""
    return bool(_THIS_PROJECT_RE.search(text) or _PROJECT_THING_RE.search(text))


# A rule of everywhere (a preference: "we always use X") said of this project: it stays the project's.
_THIS_PROJECT_RE = re.compile(
    r"(?i:\b(?:in|for|of|across)[ \t]+(?:this|our|the)[ \t]+(?:repo|repository|project|codebase|code[ \t]+base|"
    r"monorepo|app|service)\b|\bthis[ \t]+(?:repo|repository|project|codebase|monorepo)\b|"
    r"\b(?:en|para)[ \t]+este[ \t]+(?:proyecto|repo|repositorio)\b|\bin[ \t]+diesem[ \t]+(?:Projekt|Repo)\b|"
    r"\bdans[ \t]+ce[ \t]+(?:projet|dépôt|repo)\b|\b(?:neste|nesse)[ \t]+(?:projeto|repositório|repo)\b|"
    r"\bin[ \t]+questo[ \t]+(?:progetto|repo)\b|\bв[ \t]+этом[ \t]+(?:проекте|репозитории|репо)\b)|"
    r"这个项目|這個項目|本项目|本項目|这个仓库|這個倉庫|本仓库|このプロジェクト|このリポジトリ|이[ \t]?(?:프로젝트|저장소|레포)")


@dataclass(frozen=True)
class Verdict:
    """What refinement made of a unit: a candidate, or why it was dropped; and the steps it went through, in
    order, each with what it did when it changed something ("question: the statement before it")."""

    candidate: Candidate | None
    dropped_by: str = ""
    steps: tuple[str, ...] = ()


@dataclass
class Work:
    """A unit on its way through the steps: a step may replace the unit and its doc, or set the memory text."""

    unit: Unit
    doc: Any
    hit: Hit
    assistant: bool
    text: str = ""
    tentative: bool = False
    note: str = ""  # what the last step did, for the trace


class Refiner:
    """The matchers of one pipeline, built once; `refine` runs every step on a unit a rule matched."""

    def __init__(self, pipeline: Pipeline):
        from spacy.matcher import Matcher, PhraseMatcher

        self.pipeline = pipeline
        self.nlp = pipeline.nlp
        vocab = self.nlp.vocab
        make = self.nlp.make_doc
        self.greetings = PhraseMatcher(vocab, attr="LOWER")
        self.greetings.add("GREETING", [make(g) for g in GREETINGS])
        self.hedges = PhraseMatcher(vocab, attr="LOWER")
        self.hedges.add("HEDGE", [make(h) for h in HEDGES])
        self.matcher = Matcher(vocab)
        self.matcher.add("HEDGE", [[{"LEMMA": "seem"}, {"LOWER": {"IN": ["to", "like"]}}]])
        self.matcher.add("NARRATION", _narration_patterns())
        self.matcher.add("RECAP", _recap_patterns())
        self._labels = {vocab.strings[name]: name for name in ("HEDGE", "NARRATION", "RECAP")}

    def doc(self, text: str):
        """The unit's display text through the pipeline."""
        return self.nlp(display_text(text))

    def _matches(self, doc) -> tuple[set[str], set[str]]:
        """(labels found anywhere, labels that open the text after discourse words such as "Okay, now").

        The matcher runs once per doc; the steps share its result.
        """
        found = doc.user_data.get("miner_matches")
        if found is None:
            start = _content_start(doc)
            opener = doc[start].lower_ if start < len(doc) else ""
            # Every pattern opens with one of a few words, or is a hedge with "seem": most units skip the matcher,
            # which checks the doc's lemmas token by token on every call.
            if opener in _OPENERS or opener.endswith("ing") or "seem" in _text(doc).lower():
                matches = [(self._labels[m], s) for m, s, _ in self.matcher(doc)]
            else:
                matches = []
            found = doc.user_data["miner_matches"] = ({m for m, _ in matches}, {m for m, s in matches if s == start})
        return found

    def _opening(self, doc) -> set[str]:
        return self._matches(doc)[1]

    def is_question(self, doc) -> bool:
        text = _text(doc).strip()
        if QUESTION_END_RE.search(text):
            return True
        if text.endswith((".", "。", "!")) or not len(doc):
            return False
        first = doc[0]
        second = doc[1].lower_ if len(doc) > 1 else ""
        if first.lower_ in QUESTION_WORDS or second in QUESTION_OPENERS.get(first.lower_, ()):
            return True
        if has_parse(doc):  # "Is the cache still used", "Does the build need node 20"
            subject_after = any(t.dep_ in ("nsubj", "nsubjpass", "expl") for t in doc[1:])
            return (first.tag_ in ("WDT", "WP", "WP$", "WRB")) or (first.pos_ == "AUX" and subject_after)
        return False

    def is_greeting(self, doc) -> bool:
        """Nothing but thanks, praise and acknowledgement."""
        if _CJK_PUNCT_RE.sub("", _text(doc)) in CJK_GREETINGS:
            return True
        covered = set()
        for _, start, end in self.greetings(doc):
            covered.update(range(start, end))
        return bool(covered) and all(i in covered or t.is_punct or t.is_space for i, t in enumerate(doc))

    def is_narration(self, doc) -> bool:
        """The assistant saying what it is about to do: "Let me check…", "Now I'll update…", "Checking…",
        and the same in other languages (`narration`)."""
        text = _text(doc)
        if _CJK_NARRATION_RE.match(text) or announces_next_step(text) or "NARRATION" in self._opening(doc):
            return True
        clause = _first_person_clause(doc)
        return clause is not None and clause[0].lemma_ in WORK_VERBS and bool(clause[1] & {"will", "shall"})

    def is_recap(self, doc) -> bool:
        """The assistant reporting what it just did: "I've updated…", "Successfully built…"."""
        if _CJK_RECAP_RE.match(_text(doc)) or "RECAP" in self._opening(doc):
            return True
        clause = _first_person_clause(doc)
        return (clause is not None and clause[0].tag_ == "VBN" and "have" in clause[1]
                and clause[0].lemma_ in DONE_VERBS)

    def is_hedged(self, doc) -> bool:
        """"maybe", "I think" (but not "I think I want"), "seems to", "可能"…; with a parse, also a modal
        "might"/"may"/"could"."""
        text = _text(doc)
        head = main_clause(text)
        if len(head) < len(text) or OWN_WISH_RE.search(text):
            # Only the statement's own words count: not an afterthought's, not "I think" before a wish.
            return is_hedged(head) or (has_parse(doc) and any(
                t.tag_ == "MD" and t.lower_ in MODAL_HEDGES and t.idx < len(head) for t in doc))
        if any(h in text for h in CJK_HEDGES) or self.hedges(doc) or other_hedge(text):
            return True
        if "HEDGE" in self._matches(doc)[0]:
            return True
        return has_parse(doc) and any(t.tag_ == "MD" and t.lower_ in MODAL_HEDGES for t in doc)

    def opens_with_reference(self, doc) -> bool:
        """Whether the text opens with "this/that/it" pointing at something said before it."""
        if not len(doc):
            return False
        first = doc[0]
        if first.lower_ not in DANGLING:
            return _text(doc).startswith(CJK_DANGLING)
        if first.lower_ in ("it", "they"):
            return True
        if has_parse(doc):
            return first.dep_ != "det"  # "This file…" is self-contained, "This means…" is not
        following = doc[1] if len(doc) > 1 else None
        return (following is None or following.is_punct or following.lower_ in PRONOUN_FOLLOWERS
                or following.lemma_ in PRONOUN_FOLLOWERS)

    def ends_with_reference(self, doc) -> bool:
        """Whether a short unit's only object is "this/that/it" at its end ("I want to simplify this.")."""
        words = [t for t in doc if not t.is_punct and not t.is_space]
        return 0 < len(words) <= SHORT_REFERENCE_WORDS and words[-1].lower_ in END_REFERENCES

    def make_self_contained(self, unit: Unit, doc) -> str | None:
        """The unit's text, with the unit before it when it opens with a dangling "this/that/it", or is a
        short one that ends with it.

        None when it needs context that is not there (or that would make it too long).
        """
        text = _text(doc)
        if not self.opens_with_reference(doc) and not self.ends_with_reference(doc):
            return text
        previous = display_text(unit.previous)
        if not previous or len(previous) + len(text) + 1 > MAX_MERGED_CHARS or previous.endswith(("?", "？")):
            return None
        return f"{previous} {text}"

    def keywords(self, text: str, doc) -> tuple[str, ...]:
        """Identifiers, paths, versions, words and CJK bigrams of the text, plus the lemmas of its words."""
        found = dict.fromkeys(keywords(text, limit=MAX_KEYWORDS))
        for token in doc:
            lemma = token.lemma_.lower()
            if token.is_alpha and token.is_ascii and len(lemma) > 2 and not token.is_stop and lemma != token.lower_:
                found.setdefault(lemma)
        return tuple(list(found)[:MAX_KEYWORDS])

    # The steps, in the order they run: each returns '' to pass the unit on, or why it drops it.
    STEPS = ("quote", "output", "question", "greeting", "line-anchored", "lead-in", "narration", "recap",
             "self-contained", "quality-gate", "hedge")

    def refine(self, unit: Unit, hit: Hit, doc=None) -> Verdict:
        """Run every step on a unit a rule matched (`doc`: the unit already through the pipeline)."""
        work = Work(unit, self.doc(unit.text) if doc is None else doc, hit, unit.turn.role == "assistant")
        done: list[str] = []
        for name in self.STEPS:
            work.note = ""
            dropped = getattr(self, "_step_" + name.replace("-", "_"))(work)
            done.append(f"{name}: {work.note}" if work.note else name)
            if dropped:
                return Verdict(None, dropped, tuple(done))
        unit = work.unit
        return Verdict(Candidate(
            unit=unit,
            category=hit.rule.category,
            rule_id=hit.rule.id,
            confidence=hit.rule.confidence * (0.7 if work.tentative else 1.0),
            text=work.text,
            tentative=work.tentative,
            scope="project" if hit.rule.scope == "global" and _of_this_project(work.text) else hit.rule.scope,
            subject=hit.subject.lower(),
            value=hit.value,
            keywords=self.keywords(work.text, work.doc),
        ), steps=tuple(done))

    def _step_quote(self, work: Work) -> str:
        return "quote" if is_quote(work.unit.text) else ""

    def _step_output(self, work: Work) -> str:
        return "output" if is_output(work.unit.text, work.unit.previous) else ""

    def _step_question(self, work: Work) -> str:
        """A question is no memory; a statement before a closing question to the assistant is kept alone."""
        if not (self.is_question(work.doc) or (not work.assistant and is_unmarked_question(work.unit.text))):
            return ""
        statement = statement_before_question(work.unit.text, work.hit)
        if statement is None or self.is_question(statement_doc := self.doc(statement)):
            return "question"
        work.unit, work.doc = dataclasses.replace(work.unit, text=statement), statement_doc
        work.note = "the statement before it"
        return ""

    def _step_greeting(self, work: Work) -> str:
        return "greeting" if self.is_greeting(work.doc) else ""

    def _step_line_anchored(self, work: Work) -> str:
        return "line-anchored" if not work.assistant and LINE_ANCHORED_RE.search(work.unit.text) else ""

    def _step_lead_in(self, work: Work) -> str:
        return "lead-in" if LEAD_IN_RE.search(work.unit.text) else ""

    def _step_narration(self, work: Work) -> str:
        return "narration" if work.assistant and self.is_narration(work.doc) else ""

    def is_check_report(self, doc, hit: Hit | None = None) -> bool:
        """The assistant reporting how a check came out, and nothing besides: "All 12 tests pass" (`check_report`).
        A rule of a file that fired on a choice (`hit`: "… with lark instead of ply") says something besides."""
        if hit is not None and hit.rule.category in CHOICES and not hit.rule.from_classifier:
            return False
        return reports_check(_text(doc))

    def _step_recap(self, work: Work) -> str:
        return "recap" if work.assistant and (self.is_recap(work.doc) or self.is_check_report(work.doc, work.hit)) \
            else ""

    def _step_self_contained(self, work: Work) -> str:
        merged = self.make_self_contained(work.unit, work.doc)
        if merged is None:
            return "not-self-contained"
        if merged != _text(work.doc):
            work.note = "with the sentence before it"
        work.text = merged
        return ""

    def _step_quality_gate(self, work: Work) -> str:
        return "" if passes_quality_gate(work.text) else "quality-gate"

    def _step_hedge(self, work: Work) -> str:
        """Hedged, or one option among several: kept, as unconfirmed."""
        work.tentative = bool(work.hit.rule.tentative or is_option(work.unit.text) or self.is_hedged(work.doc)
                              or (work.text != _text(work.doc) and is_hedged(work.text)))
        if work.tentative:
            work.note = "unconfirmed"
        return ""


def _text(doc) -> str:
    """`doc.text`, built once: spaCy joins the tokens again on every access."""
    text = doc.user_data.get("miner_text")
    if text is None:
        text = doc.user_data["miner_text"] = doc.text
    return text


def _content_start(doc) -> int:
    """Index of the first token after leading punctuation and discourse words."""
    for i, token in enumerate(doc):
        if not (token.is_punct or token.is_space or token.lower_ in DISCOURSE):
            return i
    return len(doc)


def _first_person_clause(doc):
    """(root, the norms of its auxiliaries) when a parse says the subject is "I" or "we"; else None."""
    if not has_parse(doc):
        return None
    root = doc[:].root
    if not any(c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in ("i", "we") for c in root.children):
        return None
    return root, {c.norm_ for c in root.children if c.dep_ == "aux"}


def _narration_patterns() -> list[list[dict]]:
    """Openers of status narration; each starts with a word of `_OPENERS` or an "-ing" form."""
    adverb = {"LOWER": {"IN": ADVERBS}, "OP": "?"}
    work = {"LEMMA": {"IN": WORK_VERBS}}
    return [
        [{"LOWER": "let"}, {"LOWER": "me"}],
        [{"LOWER": "let"}, {"LOWER": {"IN": ["'s", "’s", "us"]}}, adverb, {"LEMMA": {"IN": LETS_VERBS}}],
        [{"LOWER": "i"}, {"NORM": {"IN": ["will", "shall"]}}, adverb, work],
        [{"LOWER": "i"}, {"NORM": {"IN": ["will"]}}, {"LOWER": "now"}],
        [{"LOWER": "i"}, {"NORM": {"IN": ["will", "shall", "can"]}}, adverb, {"LEMMA": "help"}],  # "I'll help you find…"
        [{"LOWER": "i"}, {"NORM": {"IN": ["am", "'m"]}}, {"LOWER": "going"}, {"LOWER": "to"}],
        [{"LOWER": "i"}, {"LOWER": "need"}, {"LOWER": "to"}, {"LEMMA": {"IN": LOOKUP_VERBS}}],
        [{"LEMMA": {"IN": WORK_VERBS}, "LOWER": {"REGEX": "ing$"}}],
    ]


def _recap_patterns() -> list[list[dict]]:
    """Openers of recaps; each starts with a word of `_OPENERS`."""
    return [
        [{"LOWER": "i"}, {"NORM": "have"}, {"LOWER": {"IN": ADVERBS}, "OP": "?"},
         {"LEMMA": {"IN": DONE_VERBS}, "LOWER": {"REGEX": "(?:ed|en|t|un|an|ote|ade)$"}}],
        [{"LOWER": "successfully"}],
        [{"LOWER": "all"}, {"LOWER": {"IN": ["tests", "checks"]}}, {"LEMMA": "pass"}],
        [{"LOWER": "the", "OP": "?"}, {"LOWER": {"IN": ["changes", "fix", "update", "implementation"]}},
         {"LOWER": {"IN": ["has", "have", "'s", "'ve"]}}, {"LOWER": "been"}],
        [{"LOWER": "summary"}],
        [{"LOWER": "here"}, {"LOWER": {"IN": ["'s", "is"]}}, {"LOWER": "what"}, {"LOWER": {"IN": ["i", "we"]}},
         {"LEMMA": "do"}],
        [{"LOWER": "what"}, {"LOWER": {"IN": ["i", "we"]}}, {"LOWER": "did"}],
    ]
