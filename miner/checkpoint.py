"""Session checkpoints: what a session was doing when its context was compacted (standard library only).

A checkpoint holds the current task (the latest user requests of the
session, cleaned), the ids of the session's decisions and open todos. It is
written by the PreCompact hook and opens the recall block after compaction.
"""

from __future__ import annotations

import re

from .clean import clean_prose
from .store import Store, now_iso
from .transcript import Watermark, read_transcript

MAX_REQUESTS = 3
MAX_REQUEST_CHARS = 600
_SLASH_COMMAND_RE = re.compile(r"^/\S+\s*$")


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


def session_requests(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
                     limit: int = MAX_REQUESTS) -> list[str]:
    """The latest user requests of a session, oldest first, cleaned of wrappers and commands."""
    chunk = read_transcript(transcript, Watermark(), seen=set(), stop_after_uuid=stop_after_uuid)
    requests = []
    for turn in chunk.turns:
        if turn.role != "user" or turn.is_sidechain or (session_id and turn.session_id and turn.session_id != session_id):
            continue
        text = " ".join(clean_prose(turn.text).split())
        if len(text) < 3 or _SLASH_COMMAND_RE.match(text):
            continue
        requests.append(clip(text))
    return requests[-limit:]


def write_checkpoint(store: Store, session_id: str, project: str, transcript: str,
                     stop_after_uuid: str | None = None) -> dict:
    """Build and store the checkpoint of a session; returns it."""
    rows = store.db.execute(
        """SELECT id, category FROM memories WHERE session_id = ? AND project = ? AND state = 'active'
           AND category IN ('decision', 'todo') ORDER BY last_seen DESC, id DESC LIMIT 60""",
        (session_id, project),
    ).fetchall()
    body = {
        "session_id": session_id,
        "project": project,
        "created_at": now_iso(),
        "task": session_requests(transcript, session_id, stop_after_uuid),
        "decisions": [r["id"] for r in rows if r["category"] == "decision"],
        "todos": [r["id"] for r in rows if r["category"] == "todo"],
    }
    store.put_checkpoint(session_id, project, body)
    return body
