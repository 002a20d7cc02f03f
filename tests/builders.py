"""Build synthetic Claude Code transcript entries in the shapes Claude Code writes."""

from __future__ import annotations

import json
import uuid as uuid_mod
from pathlib import Path


class Session:
    """Appends user and assistant entries to a transcript file, as Claude Code does."""

    def __init__(self, path: Path, cwd: str, session_id: str | None = None, branch: str = "main",
                 start: str = "2026-03-01T10:00:00"):
        self.path = Path(path)
        self.cwd = cwd
        self.session_id = session_id or str(uuid_mod.uuid4())
        self.branch = branch
        self.minute = 0
        self.start = start
        self.parent: str | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _stamp(self) -> str:
        self.minute += 1
        return f"{self.start[:-5]}{10 + self.minute // 60:02d}:{self.minute % 60:02d}.000Z"

    def _entry(self, kind: str, message: dict, **extra) -> dict:
        entry = {
            "parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
            "sessionId": self.session_id, "version": "2.1.30", "gitBranch": self.branch, "type": kind,
            "message": message, "uuid": extra.pop("uuid", None) or str(uuid_mod.uuid4()), "timestamp": self._stamp(),
        }
        entry.update(extra)
        self.parent = entry["uuid"]
        return entry

    def write(self, *entries: dict) -> list[dict]:
        with open(self.path, "a", encoding="utf-8") as handle:
            for entry in entries:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return list(entries)

    def user(self, text: str, **extra) -> dict:
        return self.write(self._entry("user", {"role": "user", "content": text}, **extra))[0]

    def assistant(self, text: str, **extra) -> dict:
        message = {"id": "msg_" + uuid_mod.uuid4().hex[:12], "type": "message", "role": "assistant",
                   "model": "claude-x", "content": [{"type": "text", "text": text}]}
        return self.write(self._entry("assistant", message, **extra))[0]

    def tool_result(self, text: str) -> dict:
        content = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]
        return self.write(self._entry("user", {"role": "user", "content": content}))[0]

    def _bare(self, kind: str, **fields) -> dict:
        """An entry without a message (attachments), linked like the others."""
        entry = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                 "sessionId": self.session_id, "version": "2.1.185", "gitBranch": self.branch, "type": kind,
                 "uuid": fields.pop("uuid", None) or str(uuid_mod.uuid4()), "timestamp": self._stamp()}
        entry.update(fields)
        self.parent = entry["uuid"]
        return entry

    def queued(self, prompt: str, mode: str = "prompt", origin: dict | None = None, **extra) -> dict:
        """A prompt typed while the assistant was busy: Claude Code records it only as this attachment."""
        attachment = {"type": "queued_command", "prompt": prompt, "commandMode": mode}
        if origin is not None:
            attachment["origin"] = origin
        elif mode == "prompt":
            attachment["origin"] = {"kind": "human"}
        return self.write(self._bare("attachment", attachment=attachment, **extra))[0]

    def hook_output(self, block: str, source: str = "startup") -> list[dict]:
        """Our SessionStart output as Claude Code records it: two attachment entries."""
        hook = {"hookName": f"SessionStart:{source}", "toolUseID": f"SessionStart:{source}",
                "hookEvent": "SessionStart"}
        return self.write(
            self._bare("attachment", attachment={"type": "hook_additional_context", "content": [block], **hook}),
            self._bare("attachment", attachment={"type": "hook_success", "content": "", "exitCode": 0,
                                                 "stdout": block, "stderr": "", **hook}),
        )

    def metadata(self, kind: str, **fields) -> dict:
        """A session metadata entry (agent-name, tag, pr-link, ...): a type and a session id, no uuid."""
        return self.write({"type": kind, **fields, "sessionId": self.session_id})[0]

    def compact(self, summary: str) -> tuple[dict, dict]:
        boundary = {"parentUuid": None, "logicalParentUuid": self.parent, "isSidechain": False, "type": "system",
                    "subtype": "compact_boundary", "content": "Conversation compacted", "cwd": self.cwd,
                    "sessionId": self.session_id, "uuid": str(uuid_mod.uuid4()), "timestamp": self._stamp(),
                    "compactMetadata": {"trigger": "manual", "preTokens": 100000}}
        self.parent = boundary["uuid"]
        self.write(boundary)
        summary_entry = self._entry("user", {"role": "user", "content": summary}, isCompactSummary=True,
                                    isVisibleInTranscriptOnly=True)
        self.write(summary_entry)
        return boundary, summary_entry


def new_memory(text: str, n: int, **fields):
    """A NewMemory for store-level tests: entry `u<n>`, said on 2026-01-<n>; `fields` override."""
    from miner.memory.records import NewMemory

    base = dict(project="/p", category="decision", text=text, confidence=0.7, rule_id="t.rule", role="user",
                session_id="s1", transcript="/t.jsonl", entry_uuid=f"u{n}", ts=f"2026-01-{n:02d}T00:00:00Z")
    base.update(fields)
    return NewMemory(**base)


def grow_indexes(store, project: str, passes: int = 40) -> dict[str, int]:
    """`passes` writes of a memory and an archived unit of `project`, one transaction each, as that many Stop hooks
    leave them; the segments each full-text index is made of then."""
    from miner.textutil import char_bigrams

    words = "ledger invoice refund webhook retry backoff jitter queue tax currency".split()
    for n in range(passes):
        text = f"Pass {n}: the {words[n % 10]} goes through the {words[(n * 3) % 10]} worker."
        with store.atomic():
            store.add_memory(new_memory(text, 1 + n % 28, entry_uuid=f"m{n}", project=project))
            store.archive_units([(project, f"s{n}", "/t.jsonl", f"u{n}", 0, "user", "2026-01-01T00:00:00Z", text,
                                  " ".join(char_bigrams(text)), 0.5)])
    return {index: store.index_segments(index) for index in ("memories_fts", "archive_fts")}


def merge_rounds_ran(store) -> bool:
    """True when a round of `Store.merge_indexes` ran on both indexes: only a round sets FTS5's `usermerge` (to 2).
    (FTS5's own automerge also lowers the count of segments as it writes, so a lower count alone proves nothing.)"""
    return all(tuple(store.db.execute(f"SELECT v FROM {index}_config WHERE k = 'usermerge'").fetchone() or ()) == (2,)
               for index in ("memories_fts", "archive_fts"))
