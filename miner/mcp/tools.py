"""What the MCP tools do, without the MCP SDK: validate input, call the library, return plain dicts.

`mcp_server` wraps each function as a tool. Every function takes a `Session` (the server's project, config and
synthetic session id) and raises `ToolInputError` with a message the assistant can act on when the input is bad;
nothing here prints or talks the protocol.

Writes go through the same paths as mining and `miner forget|correct`: redaction (`redact`), the quality gate
(`sentences.passes_quality_gate`), the dedup and conflict layers (`dedup.Deduper`), and `corrections`. Every tool
is confined to the session's project: none reads or stores another project's memories, and forget/correct touch
only the project's memories and global ones (which this project's recall shows). A correction the user made by
hand is the user's to change (`_writable`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from typing import Any

from .. import paths
from ..extract.clean import typed_text
from ..memory.corrections import MAX_REASON_CHARS
from ..memory.records import NewMemory, StoredMemory, now_iso
from ..memory.store import Store
from ..textutil import clip, short

CATEGORIES = ("decision", "preference", "fact", "todo")
SCOPES = ("project", "global")
SOURCE = "assistant-tool"
RULE_ID = "mcp.memory_store"
ROLE = "assistant"
# The user asked for it in the session, so it is not a guess, but it is the assistant's wording.
CONFIDENCE = 0.8
MAX_CONTENT_CHARS = 1_000
MAX_QUERY_CHARS = 2_000
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 50
BUDGET_RANGE = (50, 100_000)  # tokens, as `miner recall --budget`
CURRENT_STATES = ("active", "cold")
STORE_WAIT_S = 15.0  # how long a write waits for another process's lock: a client gives up on a tool at 60 s

HOW_IT_WORKS = """\
Transcript Miner keeps memories (decisions, preferences, facts, todos) per project in SQLite. Where they come from:
rules mine Claude Code transcripts after each turn; memory_store adds one on request (source assistant-tool). Every
memory is redacted, passes a quality gate (>= 20 characters, >= 30% letters) and goes through dedup: an exact or
near-duplicate text merges into the existing memory; a conflicting newer one supersedes the older (kept as history,
not recalled). How recall chooses: each active memory of the project (and global preferences) is scored (relevance
0.6 + type weight 0.2 + recency 0.2) x confidence; pinned ones get a boost; weakly related clusters are voided when
candidates crowd the budget (memory_zones lists them); then items are fitted whole into the budget (never truncated)
and the rest is left out. Never recalled: forgotten, superseded, cold and quarantined memories, and unconfirmed
(hedged) ones unless asked for. memory_forget makes a memory forgotten for good; memory_correct replaces its text
(the old one stays as history). memory_explain(id) says why one memory was or was not recalled. A memory the user
corrected by hand (source manual) only the user changes."""


WITHHELD = ("forgotten", "quarantined")  # the states whose text no tool shows the assistant


class ToolInputError(ValueError):
    """The tool's input is unusable; the message says what to send instead."""


@dataclass
class Session:
    """The server's context: its project (writes are confined to it), settings and a synthetic session id."""

    project: str
    config: dict[str, Any]
    session_id: str = field(default_factory=lambda: f"mcp:{uuid.uuid4()}")
    folder: str = ""  # where it was started (a folder inside `project`, which may be excluded on its own)

    def store(self, create: bool = False) -> Store:
        """The store; a missing one is made only for a tool that stores (one that reads says where it looked: a
        misdirected MINER_HOME is not an empty memory, nor a place the hooks would read)."""
        if not create and not paths.db_path().exists():
            raise ToolInputError(f"no memory store at {paths.db_path()} yet: the hooks make it when a session is "
                                 "mined (`miner mine --all` mines the existing ones)")
        store = Store()
        store.lock_wait_s = STORE_WAIT_S
        return store


# --- validation ------------------------------------------------------------------------------


def resolve_project(value: str | None) -> str:
    """The project (git root, else the directory) of a path; the path must be absolute or relative to cwd."""
    if not isinstance(value, str) or not value.strip():
        raise ToolInputError("project must be a non-empty directory path")
    if "\x00" in value or len(value) > 4096:
        raise ToolInputError("project is not a usable path")
    return paths.project_root(os.path.abspath(os.path.expanduser(value.strip())))


def started_in(explicit: str | None, config: dict[str, Any]) -> Session:
    """The server's session: the folder it answers for (an explicit directory, else $CLAUDE_PROJECT_DIR, else the
    working directory), and that folder's project."""
    given = explicit or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    folder = os.path.abspath(os.path.expanduser(given.strip()))
    if not os.path.isdir(folder):  # (a typo would serve, and store into, a project nobody works in)
        named = "--project" if explicit else "$CLAUDE_PROJECT_DIR"
        raise ToolInputError(f"{named} {given}: no such folder; give the project's directory")
    return Session(project=resolve_project(folder), config=config, folder=folder)


def _text(value: Any, name: str, limit: int, required: bool = True, lines: bool = False) -> str:
    """A text argument checked, without `<private>` text and control characters, its white space collapsed
    (`lines`: kept as typed, for redaction to read lists and tables as such; the caller collapses it after)."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be a string")
    if "\x00" in value:
        raise ToolInputError(f"{name} holds a NUL character")
    typed = typed_text(value)  # what it says in `<private>` is never stored, as when mining
    text = " ".join(typed.split())
    if required and not text:
        raise ToolInputError(f"{name} is empty")
    if len(text) > limit:
        raise ToolInputError(f"{name} is {len(text)} characters; at most {limit}")
    return typed.strip() if lines else text


def _memory_id(value: Any, name: str = "id") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:  # (SQLite's integers)
        raise ToolInputError(f"{name} must be a positive integer memory id (memory_recall lists them)")
    return value


def _project_of(session: Session, project: str | None) -> str:
    """The session's project; `project`, when given, must name it. What a tool answers goes into a session, whose
    assistant may be steered by what it read: another project's memory (another client's, maybe) stays out of it."""
    if project in (None, ""):
        return _here(session)
    named = _allowed(resolve_project(project))  # (an excluded one is said to be so)
    if named != session.project:
        raise ToolInputError(f"{named} is another project: this server answers about {session.project} only, where it "
                             "was started (`miner recall --project DIR` shows you another one)")
    return _here(session)


def _here(session: Session) -> str:
    """The session's project, unless it or the folder the server was started in is excluded (as a hook's cwd is)."""
    if session.folder:
        _allowed(session.folder)
    return _allowed(session.project)


def _allowed(project: str) -> str:
    """`project`, unless it is excluded: what MCP answers goes into a session, and an excluded project's memory is
    never stored or shown there."""
    from ..runtime.exclusions import is_excluded

    if is_excluded(project):
        raise ToolInputError(f"{project} is excluded (`miner exclude list`): its memory is never stored or shown")
    return project


def _writable(session: Session, store: Store, memory_id: int, verb: str, hand: bool = True) -> StoredMemory:
    """The memory, if this session may change it: one of its project, or a global one its recall shows (neither of
    an excluded project); without `hand`, not one the user corrected by hand or pinned (the user's to change)."""
    _here(session)
    memory = store.get(memory_id)
    if memory is None or memory.project != session.project and memory.scope != "global":
        # (one answer for both: which ids another project holds is not this session's to learn)
        raise ToolInputError(f"no memory #{memory_id} in {session.project}: {verb} works on its memories and the "
                             "global ones, never on another project's; memory_recall lists the ids")
    _allowed(memory.project)
    if not hand and memory.source == "manual":
        raise ToolInputError(f"memory #{memory_id} is the user's correction by hand: only the user changes it (`miner "
                             f"correct {memory_id}`); {verb} changed nothing")
    if not hand and memory.pinned:
        raise ToolInputError(f"memory #{memory_id} is pinned by the user: only the user changes it (`miner unpin "
                             f"{memory_id}` first); {verb} changed nothing")
    return memory


ITEM_TEXT_CHARS = 80  # of a recalled memory's text in its item: enough to tell its line in the block, which holds it


def _item(memory: StoredMemory, score: float | None = None) -> dict[str, Any]:
    out = {"id": memory.id, "category": memory.category, "text": clip(memory.text, ITEM_TEXT_CHARS),
           "date": (memory.last_seen or memory.first_seen or "")[:10], "confidence": round(memory.confidence, 3)}
    if score is not None:
        out["score"] = round(score, 4)
    return out


# --- tools -----------------------------------------------------------------------------------


def recall(session: Session, query: str = "", budget: int | None = None, project: str | None = None) -> dict:
    """The recall block for the project, ranked against `query` when given, with its items."""
    import sqlite3

    from .. import config as config_mod
    from ..recall.block import build, log_record, record_recall

    query = _text(query, "query", MAX_QUERY_CHARS, required=False)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)
                               or not BUDGET_RANGE[0] <= budget <= BUDGET_RANGE[1]):
        raise ToolInputError(f"budget must be an integer number of tokens from {BUDGET_RANGE[0]} to {BUDGET_RANGE[1]}")
    target = _allowed(_project_of(session, project))
    with session.store() as store:
        result = build(store, target, session.config, situation="query" if query else "startup", query=query,
                       budget_chars=config_mod.budget_chars(session.config, budget), log=False)
        if not store.readonly:
            store.lock_wait_s = 1.0  # what was shown, for `memory_zones`: the answer matters more, and is not held
            try:
                with store.atomic():
                    record_recall(store, log_record(result))
            except sqlite3.OperationalError:
                pass
    return {
        "project": target, "situation": result.situation, "block": result.text,
        "items": [_item(i.memory, i.score) for i in result.shown],
        "said": [{"archive_id": i, "date": date, "role": role, "text": clip(text, ITEM_TEXT_CHARS)}
                 for i, date, role, text in result.said],
        "left_out": len(result.left_out), "voided": sum(len(z.ids) for z in result.zones if z.voided),
    }


_RULESETS: dict[str, Any] = {}


def _subject_value(text: str, category: str, project: str) -> tuple[str, str]:
    """The subject and value the extraction rules see in `text`, so that conflicts are found as in mining."""
    try:
        from ..extract import rules as rules_mod
        from ..runtime.mine import unit_langs

        ruleset = _RULESETS.get(project)
        if ruleset is None:  # compiled once per project for the life of the server, as the miner does
            ruleset = _RULESETS[project] = rules_mod.load_rules(rules_mod.rule_files(project))
        langs = unit_langs(text)
        hits = [h for role in ("user", "assistant") for h in ruleset.match(text, role, langs)]
    except Exception:  # noqa: BLE001 - a broken rule file must not block an explicit store
        return "", ""
    for hit in hits:
        if hit.rule.category == category:
            return hit.subject.lower(), hit.value
    return "", ""


def store_memory(session: Session, content: str, category: str, keywords: list[str] | None = None,
                 supersedes: int | None = None, scope: str = "project", project: str | None = None) -> dict:
    """Store one memory through redaction, the quality gate, dedup and conflict marking."""
    from ..extract import trust
    from ..extract.redact import ensure_extra, mostly_redacted, redact, redact_memory
    from ..extract.secret_turns import MAX_DIGESTS, Conversation, known_in
    from ..extract.secret_values import random_like
    from ..extract.sentences import passes_quality_gate
    from ..memory import repair
    from ..memory.dedup import Deduper
    from ..textutil import keywords as text_keywords

    ensure_extra()
    if project not in (None, "") and resolve_project(project) != session.project:
        raise ToolInputError(f"memory_store writes only to the current project ({session.project}); "
                             f"{resolve_project(project)} is another one")
    _here(session)
    text = _text(content, "content", MAX_CONTENT_CHARS, lines=True)
    if category not in CATEGORIES:
        raise ToolInputError(f"category must be one of {', '.join(CATEGORIES)}")
    if scope not in SCOPES:
        raise ToolInputError("scope must be 'project' or 'global'")
    if scope == "global" and category != "preference":
        raise ToolInputError("only a preference can be global (recalled in every project); use scope 'project'")
    if keywords is None:
        keywords = []
    if not isinstance(keywords, list) or len(keywords) > MAX_KEYWORDS:
        raise ToolInputError(f"keywords must be a list of at most {MAX_KEYWORDS} words")
    raw_given = [_text(k, "each keyword", MAX_KEYWORD_CHARS) for k in keywords]
    old_id = _memory_id(supersedes, "supersedes") if supersedes is not None else None

    with session.store(create=True) as store:  # a secret learnt from the transcripts, repeated bare, is hidden too
        salt, digests = store.secret_digests()
    known = known_in(" ".join([text, *raw_given]), salt, digests)
    # A keyword that is a secret by its shape or its key is dropped, as typed: lower-cased first, a key whose shape
    # has capitals (AKIA…) would no longer be one. So is a generated-looking one: a search word is a word.
    given = [k.lower() for k in raw_given if k not in known and not redact(k)[1] and not random_like(k)]
    text, _, _, given, kinds = redact_memory(text, keywords=given, known=known)
    # What it hid is learnt, as mining learns it: said bare later (a keyword, a text), it is hidden there too.
    learnt = Conversation(salt, digests, known)
    learnt.learn()
    # The assistant's wording, as mined assistant text is: one that reads like an instruction to the assistant (it may
    # come from a file or a page the assistant read; a line of it may be written as the system's turn) waits in
    # quarantine for the user, and can neither reword nor supersede a trusted memory.
    untrusted = trust.quarantine_reason(ROLE, text)
    text = " ".join(text.split())  # redacted as typed (a list's lines, a table's rows), then made one line
    given = [k for k in given if not redact(k)[1]]
    if kinds and mostly_redacted(text):
        raise ToolInputError("content is mostly secrets; nothing stored (memories never keep secrets)")
    if not passes_quality_gate(text):
        raise ToolInputError("content fails the quality gate: say it in a full sentence of at least 20 characters, "
                             "at least 30% letters")
    subject, value = _subject_value(text, category, session.project)
    stamp = now_iso()
    new = NewMemory(
        project=session.project, category=category, text=text, confidence=CONFIDENCE, rule_id=RULE_ID, role=ROLE,
        session_id=session.session_id, transcript="", entry_uuid=f"mcp:{uuid.uuid4()}", ts=stamp,
        tentative=False, scope=scope, subject=subject, value=value,
        keywords=tuple(dict.fromkeys(given + text_keywords(text))), source=SOURCE, evidence_text=text,
    )
    with session.store(create=True) as store:
        if old_id is not None:
            old = _writable(session, store, old_id, "supersedes", hand=False)
            if old.state not in CURRENT_STATES:
                raise ToolInputError(f"memory #{old_id} is {old.state}, not current; nothing to supersede")
            if old.scope == "global" and scope != "global":  # (replaced here only, it would be gone everywhere)
                raise ToolInputError(f"memory #{old_id} is recalled in every project: its replacement must be too "
                                     "(scope 'global'); nothing stored")
        deduper = Deduper.from_config(store, session.config)
        with store.atomic():
            if learnt.learnt:
                store.add_secret_digests(learnt.learnt, MAX_DIGESTS)
            if learnt.fresh:  # what was stored before may say it bare: scrubbed below (or by the next worker)
                store.bump(repair.SCRUB_PENDING)
            closed_by = None
            if untrusted:
                memory_id, created = trust.store_quarantined(store, new, untrusted)
                action, superseded = "quarantined" if created else "exact", []
            else:
                outcome = deduper.add(new)
                action, memory_id, superseded = outcome.action, outcome.memory_id, list(outcome.superseded)
                closed_by = outcome.superseded_by
                if old_id is not None and old_id != memory_id and old_id not in superseded:
                    now = store.get(memory_id)
                    if now.state not in CURRENT_STATES:  # closing the old one would leave nothing current
                        raise ToolInputError(f"this text is memory #{memory_id}, which is {now.state}; nothing "
                                             f"stored, #{old_id} stays as it is (memory_correct changes #{old_id})")
                    if store.supersede(memory_id, old_id, "superseded on request (memory_store)",
                                       old.value or short(old.text), at=stamp):
                        superseded.append(old_id)
                store.bump("memories_superseded", len(superseded) - len(outcome.superseded))  # the one asked for
            store.bump("mcp_stored", 1)
        if learnt.fresh:
            try:
                repair.scrub(store, learnt.fresh)
            except (sqlite3.Error, OSError):
                pass  # (counted as pending: the next background worker runs the whole repair)
        memory = store.get(memory_id)
        why = store.state_reason(memory_id) if memory.state == "quarantined" else ""
    result = {"id": memory.id, "action": action, "state": memory.state, "category": memory.category,
              "text": memory.text, "scope": memory.scope, "superseded": superseded,
              "redacted": sorted(set(kinds)), "source": memory.source}
    if memory.state == "quarantined":
        result["note"] = f"{why or 'quarantined'}; it is not recalled until the user runs `miner approve {memory.id}`"
    if memory.state == "forgotten":
        result["note"] = f"this is memory #{memory.id}, which was forgotten; it stays forgotten and is never recalled"
    if memory.state == "superseded" and closed_by is not None:  # (stored, and closed at once)
        result["note"] = (f"it contradicts memory #{closed_by}, which replaces it (the user's correction by hand, "
                          "or what was said after it): that stays current, and this is kept as history only")
    elif memory.state == "superseded" and not superseded:
        result["note"] = (f"this is memory #{memory.id}, which the user corrected by hand; it stays superseded "
                          f"(`miner history {memory.id}` shows what replaced it)")
    if action == "exact" and superseded and old_id not in superseded:
        result["note"] = (f"this is memory #{memory.id}, which was superseded; said again, it is current again and "
                          f"supersedes {', '.join(f'#{i}' for i in superseded)} in turn")
    return result



def forget(session: Session, id: int, reason: str) -> dict:  # noqa: A002 - the tool's parameter name
    """Never recall memory `id` again."""
    from ..memory import corrections

    memory_id = _memory_id(id)
    why = _text(reason, "reason", MAX_REASON_CHARS)
    with session.store() as store:
        memory = _writable(session, store, memory_id, "memory_forget", hand=False)
        change = corrections.forget(store, memory_id, why)
    lines = list(change.lines)
    if memory.state in WITHHELD:  # (what the assistant must not read, as memory_explain withholds it)
        lines = [line.replace(memory.text, f"(its text is withheld: {memory.state})") for line in lines]
    return {"id": memory_id, "action": change.action, "lines": lines}


def correct(session: Session, id: int, content: str, reason: str = "") -> dict:  # noqa: A002
    """Replace memory `id`'s text; the old text is kept as history and no longer recalled."""
    from ..extract import trust
    from ..extract.redact import ensure_extra, mostly_redacted, redact
    from ..extract.sentences import passes_quality_gate
    from ..memory import corrections

    ensure_extra()
    memory_id = _memory_id(id)
    text = _text(content, "content", MAX_CONTENT_CHARS, lines=True)
    why = _text(reason, "reason", MAX_REASON_CHARS, required=False)
    text, kinds = redact(text)  # corrections.correct redacts too; here the quality gate sees the redacted text
    untrusted = trust.quarantine_reason(ROLE, text)  # a correction is the assistant's wording too (read as typed)
    text = " ".join(text.split())
    if kinds and mostly_redacted(text):
        raise ToolInputError("content is mostly secrets; nothing changed")
    if not passes_quality_gate(text):
        raise ToolInputError("content fails the quality gate: at least 20 characters, at least 30% letters")
    if untrusted:
        raise ToolInputError(f"{untrusted}; nothing changed (the user can correct it: `miner correct {memory_id}`)")
    with session.store() as store:
        held = _writable(session, store, memory_id, "memory_correct", hand=False)
        if held.state == "quarantined":
            raise ToolInputError(f"memory #{memory_id} is quarantined: only the user releases it (`miner approve "
                                 f"{memory_id}`) or corrects it (`miner correct {memory_id}`); nothing changed")
        try:
            change = corrections.correct(store, memory_id, text, why or "corrected on request (memory_correct)",
                                         by=(ROLE, SOURCE, "mcp.memory_correct", CONFIDENCE))
        except corrections.CorrectionError as exc:
            raise ToolInputError(str(exc)) from None
    return {"id": memory_id, "action": change.action, "new_id": change.new_id, "lines": list(change.lines)}


def stats(session: Session, project: str | None = None) -> dict:
    """Counts for the whole store and for the project."""
    target = _allowed(_project_of(session, project))
    with session.store() as store:
        data = store.stats()
        active = {summary.project: summary.memories for summary in store.projects()}
    data["project"] = target
    data["project_active_memories"] = active.get(target, 0)
    return data


def zones(session: Session, project: str | None = None) -> dict:
    """The void zones of the project's last recall (SessionStart hook or memory_recall)."""
    target = _allowed(_project_of(session, project))
    with session.store() as store:
        row = store.last_recall(target)
    if row is None:
        return {"project": target, "last_recall": None, "zones": [],
                "note": "no recall logged for this project yet"}
    found = json.loads(row.voided)
    return {"project": target, "last_recall": row.created_at, "situation": row.situation,
            "shown": len(json.loads(row.shown)), "left_out": len(json.loads(row.left_out)),
            "zones": found,
            "note": "" if found else "no void marking: too few candidates to crowd the budget"}


def explain(session: Session, id: int | None = None, project: str | None = None) -> dict:  # noqa: A002
    """Why memory `id` was or was not recalled; without an id, how recall works and the last recall."""
    from ..recall.block import build, explain_lines

    target = _allowed(_project_of(session, project))
    memory_id = _memory_id(id) if id is not None else None
    with session.store() as store:
        last = store.last_recall(target)
        situation = last.situation if last else "startup"
        query = last.query if last else ""
        fresh = build(store, target, session.config, situation=situation, query=query, log=False)
        if memory_id is None:
            return {"project": target, "how_it_works": HOW_IT_WORKS, "recall": explain_lines(fresh, store)}
        memory = store.get(memory_id)
        if memory is None:
            raise ToolInputError(f"no memory #{memory_id}; memory_recall lists the ids")
        if memory.project != target and memory.scope != "global":  # (its text, and where it is, are the other's)
            raise ToolInputError(f"no memory #{memory_id} in {target}: memory_explain answers about the project's own "
                                 "memories and the global ones")
        _allowed(memory.project)
        # A forgotten memory is never to be said again, and a quarantined one may be an attack on the assistant.
        shown = f"(its text is withheld: {memory.state})" if memory.state in WITHHELD else \
            memory.text
        lines = [f"#{memory.id} [{memory.category}] {shown}",
                 f"state {memory.state}, scope {memory.scope}, confidence {memory.confidence:.2f}, "
                 f"source {memory.source}, recalled {memory.recall_count} times"]
        reason = store.state_reason(memory_id)
        verdict = _verdict(memory, reason, last, fresh)
        lines.append(verdict)
    return {"project": target, "id": memory_id, "verdict": verdict, "lines": lines}


def _verdict(memory: StoredMemory, state_reason: str, last, fresh) -> str:
    """One sentence: why this memory is, or is not, in the recall."""
    if memory.state != "active":
        why = f" ({state_reason})" if state_reason else ""
        return f"not recalled: its state is {memory.state}{why}; only active memories are recalled"
    if memory.tentative:
        return "not recalled: it is unconfirmed (hedged); recall leaves unconfirmed memories out"
    parts = ""
    for item in [*fresh.shown, *fresh.left_out]:
        if item.memory.id == memory.id:
            parts = f" score {item.score:.3f} (" + ", ".join(f"{k} {v:.3f}" for k, v in item.parts.items()) + ")"
    if last is not None:
        when = f"the last recall ({last.situation}, {last.created_at})"
        if memory.id in json.loads(last.shown):
            return f"recalled: shown in {when};{parts}"
        if memory.id in json.loads(last.left_out):
            return f"not recalled: left out of {when} to fit the budget;{parts}"
        for zone in json.loads(last.voided):
            if memory.id in zone["ids"] and zone["voided"]:
                return f"not recalled: voided in {when} with the weak cluster on {', '.join(zone['topic'])};{parts}"
    if any(i.memory.id == memory.id for i in fresh.shown):
        return f"would be recalled now (not in the last logged recall);{parts}"
    if any(i.memory.id == memory.id for i in fresh.left_out):
        return f"would be left out now to fit the budget;{parts}"
    for zone in fresh.zones:
        if memory.id in zone.ids and zone.voided:
            return f"would be voided now with the weak cluster on {', '.join(zone.topic)}"
    return "not among the candidates: older than the freshest memories of its category and not matching the query"
