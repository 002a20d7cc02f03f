"""The mining pipeline: read → clean → rules → refine → redact → store, one transcript at a time.

Mining is incremental and idempotent: each batch of a transcript is committed in one transaction together with
the watermark that says how far it got, and entries already mined (by uuid, from any file) are skipped.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterable

from .. import paths
from ..extract import nlp as nlp_mod
from ..extract import rules as rules_mod
from ..extract import trust
from ..extract.classify import Classifier, contexts, unit_tokens
from ..extract.clean import turns_to_units
from ..extract.model import CATEGORIES, ROLES, Candidate, Turn, Unit
from ..extract.redact import ensure_extra as ensure_secret_kinds
from ..extract.redact import load_extra as load_secret_kinds
from ..extract.redact import mostly_redacted, redact_memory
from ..extract.refine import Refiner
from ..extract.rule_matching import CLASSIFIER_RULE_PREFIX, Hit, Rule, RuleSet
from ..extract.secret_turns import MAX_DIGESTS, Conversation
from ..extract.sentences import display_text
from ..extract.transcript import Watermark, read_transcript, use_fast_json
from ..memory.dedup import Deduper
from ..memory.records import NewMemory
from ..memory.repair import SCRUB_PENDING
from ..memory.store import Store
from ..recall.glossary import refresh_quietly as refresh_glossary
from ..textutil import char_bigrams, has_cjk, width_folded
from ..textutil import keywords as keywords_of
from . import exclusions
from .passes import Summary, learnt_meanwhile, scrub_learnt

BATCH_BYTES = 8 * 1024 * 1024
REFINED_MEMO = 4096  # refined units remembered per process (a long-lived watcher stays small)
# Reader skip reasons that mean an entry of an unknown shape, not a known non-prose entry.
MALFORMED_REASONS = frozenset({"unknown-type", "unknown-role", "not-an-object", "no-message", "no-uuid", "malformed"})
_THREE_LATIN_LETTERS_RE = re.compile(r"[A-Za-z][^A-Za-z]*[A-Za-z][^A-Za-z]*[A-Za-z]")


UNIT_LANGS = ((), ("en",), ("zh",), ("zh", "en"))  # what `unit_langs` can return


def unit_langs(text: str) -> tuple[str, ...]:
    """Languages whose rules apply to a unit: zh when it has CJK, en when it has Latin words."""
    langs = []
    if has_cjk(text):
        langs.append("zh")
    if _THREE_LATIN_LETTERS_RE.search(text):
        langs.append("en")
    return tuple(langs)


class Miner:
    """Holds what is costly to build (spaCy, compiled rules) for the life of a process."""

    def __init__(self, store: Store, config: dict, ruleset: RuleSet | None = None, pipeline=None,
                 classifier: Classifier | None | bool = True):
        use_fast_json()
        self.store = store
        self.config = config
        self._pipeline = pipeline
        self._refiner: Refiner | None = None
        # The trained classifier decides every unit; without one (none shipped, or off) rules decide, as hints.
        if classifier is True:
            classifier = Classifier() if config["classifier"] and Classifier.available() else None
        self.classifier: Classifier | None = classifier or None
        self._classifier_rules: dict[str, Rule] = {}
        self._base_rules = ruleset
        self._rules_by_project: dict[str, RuleSet] = {}
        self._rulesets: dict[tuple[str, ...], RuleSet] = {}
        self._session_projects: dict[str, str] = {}
        self._rule_stamps: dict[str | None, tuple | None] = {}  # what the rule sets were read from (`refresh`)
        # Refinement and redaction depend on the unit's role, text, previous unit and rule only: a unit seen
        # before (a prompt repeated in a subagent, a resumed session that rewrites history) is not refined again.
        self._refined: OrderedDict[tuple, tuple[str, Candidate | None]] = OrderedDict()
        # A password typed in one prompt and echoed later without a word around it is still hidden there, in this
        # process and in later ones: the store keeps the digests of what this learns (`secret_turns`).
        self.conversation = Conversation(store.secret_digests()[0])
        self.stopping: Callable[[], bool] = lambda: False  # asked between batches: a watcher told to stop stops
        load_secret_kinds()  # the shipped and the user's extra secret kinds (YAML), for this process
        refresh_glossary()  # the words across languages that the prompt hook searches for, compiled for it
        try:  # compile the default and user rules now, rather than on the first units
            ruleset = self.rules_for("")
        except rules_mod.RuleError:
            pass  # reported per transcript when mining, with the file and the line
        else:
            for role in ROLES:
                for langs in UNIT_LANGS:
                    ruleset.match("", role, langs)  # builds the matcher of each role and language mix

    @property
    def pipeline(self) -> nlp_mod.Pipeline:
        """spaCy's pipeline for refinement, loaded when a unit is first kept (most turns keep none)."""
        if self._pipeline is None:
            self._pipeline = nlp_mod.load(self.config["spacy_model"])
        return self._pipeline

    @property
    def refiner(self) -> Refiner:
        if self._refiner is None:
            self._refiner = Refiner(self.pipeline)
        return self._refiner

    def project_of(self, turn: Turn, fallback_cwd: str) -> str:
        """A session's project is fixed by its first cwd: a later `cd` into a subfolder does not split it."""
        key = turn.session_id
        if key and key in self._session_projects:
            return self._session_projects[key]
        project = ""
        if key:
            session = self.store.session(key)
            project = session.project if session and session.project else ""
        project = project or paths.project_root(turn.cwd or fallback_cwd)
        if key:
            self._session_projects[key] = project
        return project

    def reload_rules(self) -> None:
        """Read the rule files again on next use (a file left unchanged is not parsed again)."""
        self._rules_by_project.clear()
        self._rulesets.clear()
        self._rule_stamps.clear()

    def refresh(self) -> None:
        """For a miner that runs for days (the watcher), before a round: the secret kinds and the rule files as they
        are now. A kind added to secrets.yaml hides its secrets from then on (a broken file raises
        `SecretRuleError` until it is fixed); a rule file edited, added, removed or trusted applies."""
        ensure_secret_kinds()
        stamps = self._rule_stamps
        if stamps and (stamps.get(None) != rules_mod.files_stamp(paths.config_dir()) or any(
                stamp != paths.file_stamp(rules_mod.project_rule_path(project))
                for project, stamp in stamps.items() if project is not None)):
            self.reload_rules()

    def rules_for(self, project: str) -> RuleSet:
        """Default and user rules, plus the project's own `.claude/miner-rules.yaml`."""
        if self._base_rules is not None:
            return self._base_rules
        ruleset = self._rules_by_project.get(project)
        if ruleset is None:
            if not self._rule_stamps:  # (taken before the files are read: an edit meanwhile is seen next time)
                self._rule_stamps[None] = rules_mod.files_stamp(paths.config_dir())
            self._rule_stamps[project] = paths.file_stamp(rules_mod.project_rule_path(project))
            files = rules_mod.rule_files(project)
            key = tuple(str(f) for f in files)  # projects without their own rule file share one rule set
            ruleset = self._rulesets.get(key)
            if ruleset is None:
                ruleset = self._rulesets[key] = rules_mod.load_rules(files)
            self._rules_by_project[project] = ruleset
        return ruleset

    # --- extraction --------------------------------------------------------------------

    def extract(self, units: Iterable[Unit], project_of: Callable[[Turn], str], summary: Summary | None = None,
                trace: Callable[[Unit, list, str, Candidate | None, tuple[str, ...]], None] | None = None,
                scores_out: list | None = None) -> list[Candidate]:
        """Candidates from units: the rules and the classifier decide, then refinement and redaction.

        `scores_out`, when given, receives the classifier's scores of each unit (for `miner rules test`).
        """
        units = list(units)
        hits_of = [self.rules_for(project_of(u.turn)).match(u.text, u.turn.role, unit_langs(u.text)) for u in units]
        scores = self._scores(units, hits_of)
        if scores_out is not None:
            scores_out.extend(scores)
        traced: list[tuple[Unit, list, tuple | None, str, float]] = []
        fresh: dict[tuple, tuple[Unit, Hit]] = {}
        for unit, hits, score in zip(units, hits_of, scores):
            hit, reason, confidence = self._decide(unit, hits, score)
            key = _refine_key(unit, hit) if hit is not None else None
            if key is not None and key in self._refined:
                self._refined.move_to_end(key)
            elif key is not None:
                fresh.setdefault(key, (unit, hit))
            traced.append((unit, hits, key, reason, confidence))
        # spaCy sees the units that were kept, and only those: its cost does not grow with the transcript.
        docs = self.refiner.nlp.pipe((display_text(u.text) for u, _ in fresh.values()), batch_size=256) \
            if fresh else ()
        for key, (unit, hit), doc in zip(fresh, fresh.values(), docs):
            outcome, candidate, steps = self._candidate(unit, [hit], doc)
            # The memo keeps no unit: a unit holds its whole turn, and every use takes the unit at hand.
            self._refined[key] = (outcome, candidate and dataclasses.replace(candidate, unit=_NO_UNIT), steps)
        out = []
        for unit, hits, key, reason, confidence in traced:
            outcome, candidate, steps = (reason, None, ()) if key is None else self._refined[key]
            if candidate is not None:
                candidate = dataclasses.replace(candidate, unit=unit)
                if confidence:
                    candidate = dataclasses.replace(candidate, confidence=round(
                        confidence * (0.7 if candidate.tentative else 1.0), 3))
                out.append(candidate)
            elif key is not None and summary:
                summary.dropped[outcome] = summary.dropped.get(outcome, 0) + 1
            if trace:
                trace(unit, hits, outcome, candidate, steps)
        while len(self._refined) > REFINED_MEMO:
            self._refined.popitem(last=False)
        if summary:
            summary.units += len(units)
            summary.candidates += len(out)
        return out

    def _scores(self, units: list[Unit], hits_of: list[list]) -> list[dict[str, float] | None]:
        """The classifier's scores of each unit (None for all without a classifier)."""
        if self.classifier is None or not units:
            return [None] * len(units)
        context = contexts(units)
        tokens = [unit_tokens(u, c, [h for h in hits if h.rule.effect != "drop"])
                  for u, c, hits in zip(units, context, hits_of)]
        return self.classifier.scores(tokens)

    def _decide(self, unit: Unit, hits: list, score: dict[str, float] | None) -> tuple[Hit | None, str, float]:
        """(the hit to refine the unit with, or None; why not; the classifier's confidence, 0 for a rule's).

        A rule that drops vetoes; a rule that keeps decides; otherwise the classifier decides, and a hint of
        the category it chose lends its subject, value and scope. Without a classifier, hints keep.
        """
        hits = [h for h in hits if h.rule.own] or hits  # (the user's rules, where any fires, decide: a hint too)
        if any(h.rule.effect == "drop" for h in hits):
            return None, "rule-veto", 0.0
        kept = [h for h in hits if h.rule.effect == "keep"]
        if kept:
            return kept[0], "", 0.0
        if score is None:
            return (hits[0], "", 0.0) if hits else (None, "no rule", 0.0)
        category, confidence = self.classifier.decide(score, unit.turn.role)
        if category == "preference" and unit.turn.role != "user":
            # Preferences are the user's own words; what the assistant says of them is its next best reading.
            category = max(("decision", "fact", "todo"), key=lambda c: score.get(c, 0.0))
        if category == "none":
            return None, "classifier", 0.0
        same = [h for h in hits if h.rule.category == category]
        return (same[0] if same else self._classifier_hit(unit, category)), "", confidence

    def _user_voice(self, units: list[Unit], scores: list, session_id: str, project_of: Callable) -> Candidate | None:
        """The user's unit of this batch that the classifier rates most likely a memory and refinement keeps.

        A session in which the user typed `MIN_USER_PROMPTS` prompts or more said something that a later
        session needs; when nothing of theirs was kept, their most memory-like statement is (rule id
        `classifier.user-voice`, so `miner show` says why); never one a rule vetoes.
        """
        if self.classifier is None:
            return None
        ranked = sorted(((1.0 - score.get("none", 1.0), i) for i, (unit, score) in enumerate(zip(units, scores))
                         if score and unit.turn.role == "user" and not unit.turn.is_sidechain
                         and unit.turn.session_id == session_id), reverse=True)
        for likelihood, i in ranked[:USER_VOICE_TRIES]:
            if likelihood < USER_VOICE_FLOOR:
                break
            unit, score = units[i], scores[i]
            if any(hit.rule.effect == "drop" for hit in self.rules_for(project_of(unit.turn)).match(
                    unit.text, unit.turn.role, unit_langs(unit.text))):
                continue
            category = max(CATEGORIES, key=lambda c: score.get(c, 0.0))
            hit = self._classifier_hit(unit, category, "user-voice")
            _, candidate, _ = self._candidate(unit, [hit], self.refiner.doc(unit.text))
            if candidate is not None and not candidate.tentative:
                return dataclasses.replace(candidate, confidence=round(likelihood, 3))
        return None

    def _classifier_hit(self, unit: Unit, category: str, why: str = "") -> Hit:
        """A hit standing for the classifier's decision (no subject or value; it spans the whole unit)."""
        key = f"{CLASSIFIER_RULE_PREFIX}{why or category}"
        rule = self._classifier_rules.get(key + category)
        if rule is None:
            rule = self._classifier_rules[key + category] = Rule(
                id=key, category=category, lang="any", roles=ROLES, patterns=(_WHOLE_RE,),
                confidence=1.0, effect="keep", description="the trained classifier")
        return Hit(rule, _WHOLE_RE.match(unit.text))

    def _candidate(self, unit: Unit, hits: list, doc) -> tuple[str, Candidate | None, tuple[str, ...]]:
        """Refinement, redaction and the reported-speech check for one matched unit: (outcome, candidate, the
        refinement steps it went through)."""
        verdict = self.refiner.refine(unit, hits[0], doc)
        candidate, steps = verdict.candidate, verdict.steps
        if candidate is None:
            return verdict.dropped_by, None, steps
        # The unit was redacted with its whole turn in sight (`redact_turns`); this pass keeps the captures
        # in step with the text, and catches what a merge with the unit before brought in.
        text, subject, value, keywords, kinds = redact_memory(candidate.text, candidate.subject, candidate.value,
                                                              candidate.keywords)
        if kinds and mostly_redacted(text):
            return "mostly-redacted", None, steps
        if kinds:
            candidate = dataclasses.replace(candidate, text=text, subject=subject, value=value,
                                            keywords=tuple(keywords) or tuple(keywords_of(text)))
        if candidate.category in ("preference", "decision") and trust.reports_source(candidate.text) \
                and (unit.turn.role != "user" or trust.takeover_reason(candidate.text)):
            # "The README says to always use X" is what a file said, not what the user decided; nor is an attempt
            # on the assistant the user quotes ("the vendor's email said: ignore previous instructions and …").
            return "reported-speech", None, steps
        return "kept", candidate, steps

    # --- files -------------------------------------------------------------------------

    def mine_file(self, path: str | Path, stop_after_uuid: str | None = None) -> Summary:
        """Mine what was added to one transcript since its watermark."""
        path = str(Path(path).resolve())
        summary = Summary(files=1)
        while True:
            mark = self.store.watermark(path)
            watermark = Watermark(*mark) if mark else Watermark()
            chunk = read_transcript(path, watermark, seen=set(), stop_after_uuid=stop_after_uuid, max_bytes=BATCH_BYTES)
            already = self.store.seen_uuids(t.uuid for t in chunk.turns)
            turns = [t for t in chunk.turns if t.uuid not in already]
            summary.entries += chunk.stats.entries
            summary.turns += len(turns)
            summary.skipped_lines += chunk.stats.skipped_lines
            replayed = chunk.stats.replayed + len(chunk.turns) - len(turns)
            summary.replayed += replayed
            fallback_cwd = _fallback_cwd(path, chunk.turns)
            cwd_of = lambda t: t.cwd or fallback_cwd  # noqa: E731 - tiny closure
            project_of = lambda t: self.project_of(t, fallback_cwd)  # noqa: E731
            # Excluded projects are never mined, nor what was said in an excluded folder below a project's root (a
            # session may `cd` into one): their entries only advance the watermark.
            shut = _excluded(chunk.turns, project_of, cwd_of)
            if shut:
                kept = [t for t in turns if not shut(t)]
                dropped = summary.dropped.get("excluded-project", 0)
                summary.dropped["excluded-project"], turns = dropped + len(turns) - len(kept), kept
            # Secrets hidden with what earlier turns taught, in this process or another (`secret_turns`).
            self.conversation.digests, asked = self.store.secret_digests()[1], self.store.secret_asked(path)
            units = self.conversation.redact_units(turns_to_units(self.conversation.redact_turns(turns, asked)))
            scores: list = []
            candidates = self.extract(units, project_of, summary, scores_out=scores)
            # Made before the write lock is taken, needing none: prompts, archive rows, dedup's look-up expressions.
            prompts = _user_prompts(turns)
            archive = list(_archive_rows(units, scores, project_of, path)) if self.config["archive"] else []
            deduper = Deduper.from_config(self.store, self.config)
            deduper.prepare(candidate.text for candidate in candidates)
            with self.store.atomic():
                late = self.store.seen_uuids(t.uuid for t in turns)
                # A project excluded while this batch was made (and purged, maybe: the purge waited for this lock)
                # gets nothing of it; its entries only advance the watermark, as above.
                shut = _excluded(turns, project_of, cwd_of)
                gone = {t.uuid for t in turns if t.uuid not in late and shut(t)} if shut else set()
                if gone:
                    summary.dropped["excluded-project"] = summary.dropped.get("excluded-project", 0) + len(gone)
                if late or gone:  # what another process mined meanwhile (a resumed session's copy), an excluded one's
                    dropped = late | gone
                    turns = [t for t in turns if t.uuid not in dropped]
                    candidates = [c for c in candidates if c.unit.turn.uuid not in dropped]
                    archive = [row for row in archive if row[3] not in dropped]
                    kept = [i for i, unit in enumerate(units) if unit.turn.uuid not in dropped]  # (the user's voice)
                    units, scores = [units[i] for i in kept], [scores[i] for i in kept] if scores else scores
                    prompts, replayed = _user_prompts(turns), replayed + len(late)
                    summary.turns, summary.replayed = summary.turns - len(late), summary.replayed + len(late)
                self.store.upsert_sessions((
                    (turn.session_id, project_of(turn), cwd_of(turn), turn.git_branch, path, turn.ts)
                    for turn in turns if turn.session_id))  # (an entry seen before, a purged one too, is not again)
                self.store.add_user_prompts(prompts)
                summary.archived += self.store.archive_units(archive)
                for candidate in candidates:
                    turn = candidate.unit.turn
                    new = NewMemory(
                        project=project_of(turn), category=candidate.category, text=candidate.text,
                        confidence=candidate.confidence, rule_id=candidate.rule_id, role=turn.role,
                        session_id=turn.session_id, transcript=path, entry_uuid=turn.uuid, ts=turn.ts,
                        git_branch=turn.git_branch, tentative=candidate.tentative, scope=candidate.scope,
                        subject=candidate.subject, value=candidate.value, keywords=candidate.keywords,
                    )
                    reason = _quarantine_reason(turn.role, candidate.text)
                    if reason:
                        # Kept out of dedup: an untrusted text must not reword or supersede a trusted memory.
                        created = trust.store_quarantined(self.store, new, reason)[1]
                        summary.new += created
                        summary.merged += not created
                        continue
                    if deduper.add(new).created:
                        summary.new += 1
                    else:
                        summary.merged += 1
                for session_id in self.store.sessions_without_user_memory(prompts, MIN_USER_PROMPTS):
                    voice = self._user_voice(units, scores, session_id, project_of)
                    if voice is not None:
                        turn = voice.unit.turn
                        deduper.add(NewMemory(
                            project=project_of(turn), category=voice.category, text=voice.text,
                            confidence=voice.confidence, rule_id=voice.rule_id, role=turn.role,
                            session_id=turn.session_id, transcript=path, entry_uuid=turn.uuid, ts=turn.ts,
                            git_branch=turn.git_branch, tentative=voice.tentative, keywords=voice.keywords))
                        summary.new += 1
                self.store.mark_seen(t.uuid for t in turns)
                summary.sessions.update(t.session_id for t in turns if t.session_id and not t.is_sidechain)
                if self.conversation.learnt:
                    self.store.add_secret_digests(self.conversation.learnt, MAX_DIGESTS)
                if self.conversation.fresh:  # scrubbed for below; a process that dies first leaves it to a worker
                    self.store.bump(SCRUB_PENDING)
                if turns and self.conversation.asked != asked:
                    self.store.set_secret_asked(path, self.conversation.asked)
                project = project_of(chunk.turns[0]) if chunk.turns else ""
                self.store.set_watermark(path, chunk.watermark.offset, chunk.watermark.inode, chunk.watermark.head,
                                         project)
                self.store.bump("lines_skipped", chunk.stats.skipped_lines)
                self.store.bump("entries_read", chunk.stats.entries)
                self.store.bump("entries_replayed", replayed)
                self.store.bump("turns_cut", chunk.stats.cut_turns)  # prose over the reader's cap, cut
                self.store.bump("entries_skipped_malformed", sum(  # shapes the reader did not know (format drift)
                    n for r, n in chunk.stats.skipped_entries.items() if r in MALFORMED_REASONS))
            self.conversation.fresh |= learnt_meanwhile(self.store, units, self.conversation)  # (by another miner)
            self.conversation.learnt.clear()  # (committed)
            if self.conversation.fresh:  # what the store held before these were known may say one bare
                summary.scrubbed += scrub_learnt(self.store, self.conversation.fresh)
            if not chunk.more or chunk.reached_stop or self.stopping():  # (the watermark keeps the place)
                break
        return summary

    def mine_paths(self, files: list[str], progress: Callable[[str, Summary], None] | None = None,
                   lock_wait_s: float = 300.0) -> Summary:
        """Mine many transcripts, each under its lock, as the hooks' miners do (`passes.mine_paths`)."""
        from .passes import mine_paths

        return mine_paths(self, files, progress, lock_wait_s)


_NO_UNIT = Unit(Turn("", "", "", "", "", "", "", False, ""), 0, "")
MIN_USER_PROMPTS = 5  # a session with this many prompts from the user yields a memory in their words
USER_VOICE_TRIES = 10
USER_VOICE_FLOOR = 0.1  # below this likelihood of being a memory, nothing the user said is kept on that ground


def _excluded(turns: list[Turn], project_of: Callable[[Turn], str],
              cwd_of: Callable[[Turn], str]) -> Callable[[Turn], bool] | None:
    """Whether each of these turns is excluded (its project, or the folder it was said in), or None when none is."""
    globs = exclusions.load_exclusions()
    shut = {p for p in {project_of(t) for t in turns} | {cwd_of(t) for t in turns} if exclusions.is_excluded(p, globs)}
    return (lambda t: project_of(t) in shut or cwd_of(t) in shut) if shut else None


def _archive_rows(units: list[Unit], scores: list, project_of: Callable[[Turn], str], path: str):
    """Archive rows of the units worth finding again: quality-gated prose, not pasted program output, and nothing
    untrusted that a memory would be quarantined for (the assistant's prose that reads like an instruction, or
    reports what a file or page said; anyone's relaying of an attempt on the assistant); each with how likely the
    classifier found it a memory (0.5 without one)."""
    from ..extract.program_output import is_output
    from ..extract.sentences import is_quote, passes_quality_gate

    for unit, score in zip(units, scores):
        text = display_text(unit.text)
        if not passes_quality_gate(text) or is_output(unit.text, unit.previous) or is_quote(unit.text):
            continue
        turn = unit.turn
        if turn.role != "user" and (_quarantine_reason(turn.role, text) or trust.reports_source(text)) \
                or trust.relayed_attack(text):
            continue
        worth = round(1.0 - score.get("none", 0.5), 3) if score else 0.5
        yield (project_of(turn), turn.session_id, path, turn.uuid, unit.index, turn.role, turn.ts, text,
               " ".join(char_bigrams(width_folded(text))), worth)


def _user_prompts(turns: list[Turn]) -> dict[str, int]:
    """Prompts the user typed, per session: their own words (not a slash command, a filler, a pasted tool output)."""
    from ..recall.checkpoint import request_text

    counts: dict[str, int] = {}
    for turn in turns:
        if turn.role == "user" and not turn.is_sidechain and turn.session_id and request_text(turn.text):
            counts[turn.session_id] = counts.get(turn.session_id, 0) + 1
    return counts
_WHOLE_RE = re.compile(r".*", re.DOTALL)
# Pure in (role, text), and its patterns are long: a text seen again is not checked again.
_quarantine_reason = functools.lru_cache(maxsize=4096)(trust.quarantine_reason)


def _refine_key(unit: Unit, hit: Hit) -> tuple:
    """What refinement and redaction depend on; the rule by identity, as a project may redefine an id."""
    return (unit.turn.role, unit.text, unit.previous, id(hit.rule))


def _fallback_cwd(path: str, turns: list[Turn]) -> str:
    """A cwd for entries that carry none: another entry's, else the transcript's folder."""
    return next((turn.cwd for turn in turns if turn.cwd), str(Path(path).parent))


def find_transcripts(root: Path | None = None, unreadable: list[str] | None = None) -> list[str]:
    """Every transcript under Claude Code's projects folder (or `root`), subagent files included, oldest first: real
    paths, found without following any symlink below the folder, so that a link never leads the miner out of it
    (see `transcript.transcript_files`, which puts the folders it could not list in `unreadable`)."""
    from ..extract.transcript_files import transcript_files

    root = root or paths.projects_dir()
    found = transcript_files(root, root, unreadable)
    found.sort(key=lambda p: (_mtime(p), p))
    return found


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
