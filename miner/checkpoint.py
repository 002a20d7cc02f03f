"""Session checkpoints: what a session was doing when its context was compacted or it ended (standard library only).

A checkpoint holds the current task (the latest user requests of the
session, cleaned and redacted), and the ids of the decisions and open todos
that this session stated or restated. PreCompact writes it so that the block
after the compaction opens with it; the SessionEnd miner writes it so that
the next session of the project is ranked against it.

Writing it also closes the project's todos that the session reports done
("Pagination of the plant list is done now", 已完成): such a todo goes cold
(out of recall, kept, and active again if it is ever said again), so that a
new session sees only the todos still open.

Requests are read from the end of the transcript: a long session's file can
be tens of megabytes, and only its last few requests matter.
"""

from __future__ import annotations

import json
import os
import re

from .clean import clean_prose
from .redact import redact
from .store import Store, StoredMemory, now_iso
from .textutil import keywords, simple_stem
from .transcript import ReadStats, Watermark, entry_to_turn, read_transcript

MAX_REQUESTS = 3
MAX_REQUEST_CHARS = 600
MAX_REPLY_CHARS = 1200
MAX_IDS = 60
TAIL_BYTES = 256 * 1024  # first window read from the end; widened until enough requests are found
_SLASH_COMMAND_RE = re.compile(r"^/\S+\s*$")
# Replies that carry no task of their own: "ok", "continue", "yes please".
_FILLER = frozenset(
    {"ok", "okay", "k", "yes", "y", "yep", "yeah", "no", "n", "nope", "sure", "continue", "go", "go on", "go ahead",
     "proceed", "carry on", "please continue", "do it", "thanks", "thank you", "ty", "lgtm", "done", "next",
     "keep going", "sounds good", "great", "perfect", "nice", "good", "right", "yes please", "ok thanks",
     "okay thanks", "ok continue", "yes continue", "继续", "好", "好的", "可以", "是的", "谢谢"}
)
_PUNCT_RE = re.compile(r"[^\w\s]+", re.UNICODE)


def clip(text: str, limit: int = MAX_REQUEST_CHARS) -> str:
    """Whole sentences of `text` up to `limit` characters (a word boundary if one sentence is longer)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for mark in (". ", "。", "! ", "? ", "\n"):
        pos = cut.rfind(mark)
        if pos > limit // 2:
            return cut[: pos + 1].strip()
    return cut.rsplit(" ", 1)[0] + " …"


def request_text(raw: str) -> str:
    """A user prompt as a task line: wrappers, code, commands and secrets out; '' when nothing is left."""
    text = " ".join(clean_prose(raw).split())
    if len(text) < 3 or _SLASH_COMMAND_RE.match(text):
        return ""
    if " ".join(_PUNCT_RE.sub(" ", text).lower().split()) in _FILLER:
        return ""
    return clip(redact(text)[0])


def _requests_from_turns(turns, session_id: str) -> tuple[list[str], list[str]]:
    """(requests of `session_id`, requests of any session), oldest first; a repeated request counts once, last."""
    own: dict[str, None] = {}
    anyone: dict[str, None] = {}
    for turn in turns:
        if turn.role != "user" or turn.is_sidechain:
            continue
        text = request_text(turn.text)
        if not text:
            continue
        anyone.pop(text, None)
        anyone[text] = None
        if not session_id or not turn.session_id or turn.session_id == session_id:
            own.pop(text, None)
            own[text] = None
    return list(own), list(anyone)


def _tail_turns(transcript: str, window: int) -> tuple[list, bool]:
    """(prose turns of the last `window` bytes of a transcript, whether that was the whole file).

    The first line of the window is dropped when it starts mid-line, the last when it is still being written.
    """
    with open(transcript, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        start = max(0, size - window)
        handle.seek(start)
        data = handle.read(size - start)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # began mid-line
    if lines and not data.endswith(b"\n"):
        lines = lines[:-1]  # still being written
    stats = ReadStats()
    turns = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        turn = entry_to_turn(entry, transcript, stats)
        if turn is not None:
            turns.append(turn)
    return turns, start == 0


def _last_reply(turns) -> str:
    """The assistant's latest prose of the main thread, cleaned, redacted and clipped."""
    for turn in reversed(turns):
        if turn.role == "assistant" and not turn.is_sidechain:
            text = " ".join(clean_prose(turn.text).split())
            if len(text) >= 20:
                return clip(redact(text)[0], MAX_REPLY_CHARS)
    return ""


def _context(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
             limit: int = MAX_REQUESTS) -> tuple[list, list[str], str]:
    """(the turns read, the latest requests, the assistant's latest reply): see `session_context`."""
    if stop_after_uuid is not None:
        # Evaluation cuts: everything up to the cut, read from the start.
        turns = read_transcript(transcript, Watermark(), seen=set(), stop_after_uuid=stop_after_uuid).turns
        own, anyone = _requests_from_turns(turns, session_id)
        return turns, (own or anyone)[-limit:], _last_reply(turns)
    window = TAIL_BYTES
    while True:
        turns, whole = _tail_turns(transcript, window)
        own, anyone = _requests_from_turns(turns, session_id)
        if len(own) >= limit or whole:
            return turns, (own or anyone)[-limit:], _last_reply(turns)
        window *= 4


def session_context(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
                    limit: int = MAX_REQUESTS) -> tuple[list[str], str]:
    """(the latest user requests of a session, oldest first; the assistant's latest reply).

    Requests are cleaned of wrappers, commands and secrets. When no entry carries
    `session_id` (a resumed session may write under another id), the transcript's
    latest requests stand in for it.
    """
    return _context(transcript, session_id, stop_after_uuid, limit)[1:]


def session_requests(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
                     limit: int = MAX_REQUESTS) -> list[str]:
    """The latest user requests of a session, oldest first (see `session_context`)."""
    return session_context(transcript, session_id, stop_after_uuid, limit)[0]


def session_memory_ids(store: Store, session_id: str, project: str) -> tuple[list[int], list[int]]:
    """(decisions, open todos) this session stated or restated, latest first."""
    rows = store.db.execute(
        """SELECT m.id, m.category, MAX(e.ts) AS said FROM evidence e JOIN memories m ON m.id = e.memory_id
           WHERE e.session_id = ? AND m.project = ? AND m.state = 'active' AND m.category IN ('decision', 'todo')
           GROUP BY m.id ORDER BY said DESC, m.id DESC LIMIT ?""",
        (session_id, project, 2 * MAX_IDS),
    ).fetchall()
    decisions = [r["id"] for r in rows if r["category"] == "decision"][:MAX_IDS]
    todos = [r["id"] for r in rows if r["category"] == "todo"][:MAX_IDS]
    return decisions, todos


def session_project(store: Store, session_id: str, fallback: str = "") -> str:
    """The project the miner filed a session under (fixed by its first cwd), else `fallback`."""
    row = store.session(session_id) if session_id else None
    return row["project"] if row and row["project"] else fallback


# A sentence reporting work as finished, and what makes one a plan, a question or a condition instead.
_DONE_RE = re.compile(
    r"(?i)\b(?:done|finished|completed?|implemented|added|fixed|resolved|merged|shipped|deployed|wired(?: up)?|"
    r"in place|taken care of|works now|working now|closed)\b|已完成|完成了|搞定|已(?:添加|修复|实现|加上|处理|合并|上线)")
_NOT_DONE_RE = re.compile(
    r"(?i)\b(?:not|never|still|yet|todo|later|should|shall|will|would|could|going to|need to|needs to|have to|"
    r"has to|must|remaining|pending|once|when|whenever|if|after|until|before|let's|let me|i'll|we'll)\b|n't\b|\?|"
    r"还没|未完成|尚未|没有|待|要|需要|以后|之后")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
# Words every todo uses: they say that something is open, not what it is.
_TODO_WORDS = frozenset(
    """later todo to-do eventually should need needs remaining still next step steps add adding follow
    follow-up up open pending item items work left maybe also someday soon future""".split())
MIN_SHARED = 2
SHARED_SHARE = 0.6  # of the todo's words; of its CJK character pairs, CJK_SHARE (pairs overlap, words do not)
CJK_SHARE = 0.4


def _stems(words) -> set[str]:
    return {simple_stem(w) for w in words if not w.isdigit() and w not in _TODO_WORDS}


def done_todos(store: Store, project: str, turns) -> list[tuple[StoredMemory, str]]:
    """The project's open todos that a later sentence of these turns reports done, with that sentence.

    A sentence counts when it reports something finished ("…is done now", "added …", 已完成), is no
    plan, question or condition ("once … is done", "not done yet"), was said after the todo was
    last said, and names most of what the todo names (at least two of its words).
    """
    todos = store._memories("WHERE project = ? AND state = 'active' AND category = 'todo'", (project,))
    words = {t.id: _stems(t.keywords.split() or keywords(t.text)) for t in todos}
    todos = [t for t in todos if len(words[t.id]) >= MIN_SHARED]
    if not todos:
        return []
    found: dict[int, tuple[StoredMemory, str]] = {}
    for turn in turns:
        if turn.is_sidechain:
            continue
        for sentence in _SENTENCE_RE.split(clean_prose(turn.text)):
            sentence = " ".join(sentence.split())
            if not sentence or not _DONE_RE.search(sentence) or _NOT_DONE_RE.search(sentence):
                continue
            said = _stems(keywords(sentence, limit=64))
            for todo in todos:
                if todo.id in found or not turn.ts or turn.ts <= (todo.last_seen or ""):
                    continue
                own = words[todo.id]
                cjk = sum(1 for w in own if not w.isascii())
                needed = SHARED_SHARE * (len(own) - cjk) + CJK_SHARE * cjk
                if len(own & said) >= max(MIN_SHARED, needed):
                    found[todo.id] = (todo, clip(redact(sentence)[0], 200))
    return list(found.values())


def close_done_todos(store: Store, project: str, turns) -> list[int]:
    """Move the todos these turns report done to cold storage (said again, they come back); their ids."""
    done = done_todos(store, project, turns)
    if done:
        with store.transaction() as db:
            for todo, sentence in done:
                store.set_state(db, todo.id, "cold", f"done: {sentence}")
    return [todo.id for todo, _ in done]


def write_checkpoint(store: Store, session_id: str, project: str, transcript: str,
                     stop_after_uuid: str | None = None) -> dict:
    """Close the todos the session reports done, then build and store the checkpoint of a session; returns it."""
    turns, requests, last_reply = _context(transcript, session_id, stop_after_uuid)
    if not store.readonly:
        close_done_todos(store, project, turns)
    decisions, todos = session_memory_ids(store, session_id, project)
    body = {
        "session_id": session_id,
        "project": project,
        "created_at": now_iso(),
        "task": requests,
        "last_reply": last_reply,
        "decisions": decisions,
        "todos": todos,
    }
    store.put_checkpoint(session_id, project, body)
    return body
