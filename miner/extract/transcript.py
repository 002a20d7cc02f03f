"""Claude Code transcript JSONL → prose turns, read incrementally (standard library only).

Contract:
- Only user and assistant prose is kept: string content and `text` blocks, and the prompts the user typed
  while the assistant was busy (`queued_command` attachments of `commandMode: prompt`). Thinking, tool_use,
  tool_result, images, every other attachment (our own SessionStart block comes back as `hook_success` /
  `hook_additional_context` ones), progress, meta entries (`isMeta`), compact summaries (`isCompactSummary`;
  unflagged before Claude Code 2.0, known by their opening words) and the metadata entries Claude Code writes
  (titles, tags, modes, agent names, snapshots, ...) are skipped and counted by type; an entry of a type nobody
  knows is counted as `unknown-type` (format drift).
- A "user" entry is kept only when a human could have written it: in a subagent's transcript (`isSidechain`)
  the user is the main assistant briefing the subagent; task notifications and agent teams' messages come from
  Claude Code.
- A turn's prose is cut to `MAX_PROSE_CHARS` (at a word boundary) before anything else sees it: a pasted 50 MB
  log must not cost the cleaner, the splitter or the redactor more than a few hundred KB does.
- Reading starts at a `Watermark` (byte offset plus file identity). A file that was truncated, replaced or
  rewritten in place is read again from the start; replays are harmless because entries are deduplicated by
  `uuid` downstream. A partial last line (no newline yet) is left for the next run; lines that do not parse are
  skipped and counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator

from .. import paths
from ..memory.records import parse_ts
from .model import Turn

_loads = json.loads
_DecodeErrors: tuple[type[BaseException], ...] = (ValueError, TypeError)


def use_fast_json() -> None:
    """Parse with orjson when it is installed (the miner opts in; the hook path stays stdlib)."""
    global _loads, _DecodeErrors
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a declared dependency
        return
    _loads = orjson.loads
    _DecodeErrors = (orjson.JSONDecodeError, ValueError, TypeError)

_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def parse_line(line: bytes) -> Any:
    """One JSON line. A surrogate escaped alone (`\\ud83d`: an emoji cut in half) is valid JSON that orjson
    refuses and no UTF-8 text holds: it becomes U+FFFD, and the entry is kept. A line that does not parse raises,
    unless an entry was written after a torn one on the same line (`_after_torn`)."""
    try:
        if b"\\ud" not in line and b"\\uD" not in line:
            return _loads(line)
        return _without_lone_surrogates(json.loads(line))
    except _DecodeErrors:
        found = _after_torn(line)
        if found is None:
            raise
        return found


# How many object openings of a line that does not parse are tried as the start of a whole entry, and how many
# times the line's length they may parse in all (a try stops where the text stops being JSON).
TORN_TRIES = 64
TORN_WORK = 4


def _after_torn(line: bytes) -> dict | None:
    """The entry written after a torn one on the same line, or None.

    A writer killed in the middle of a line leaves it without its end and its newline; the next entry appended to
    the file then goes on that line. The earliest opening of an object from which the rest of the line parses as an
    entry (a uuid and a type) is that next entry."""
    start, work = line.find(b'{"', 1), TORN_WORK * len(line)
    for _ in range(TORN_TRIES):
        if start < 0 or work < 0:
            return None
        try:
            value = json.loads(line[start:])
        except json.JSONDecodeError as exc:
            value, work = None, work - exc.pos
        except (ValueError, RecursionError):
            value, work = None, work - (len(line) - start)
        if isinstance(value, dict) and isinstance(value.get("uuid"), str) and isinstance(value.get("type"), str):
            return _without_lone_surrogates(value)
        start = line.find(b'{"', start + 1)
    return None


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE_RE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


HEAD_BYTES = 512
MAX_LINE_BYTES = 64 * 1024 * 1024  # a line longer than this is skipped, not parsed
# Prose kept of one turn. Past this a prompt is pasted data (a log, a file); its head says what was asked.
MAX_PROSE_CHARS = 256 * 1024
# How far back `cut_text` looks for the start of the word it would cut.
_WORD_LOOKBACK = 4096
_TRAILING_WORD_RE = re.compile(r"[!-~]*")


def cut_text(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, never inside a word of printable ASCII.

    A secret (a key, a token) is such a word: cutting one in half would leave a
    prefix that no redaction pattern recognises, so the partial word at the cut
    is dropped whole. Text without spaces (CJK) is cut where the limit falls.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not ("!" <= text[limit] <= "~"):
        return head  # the cut falls between words
    tail = head[-_WORD_LOOKBACK:][::-1]
    word = _TRAILING_WORD_RE.match(tail).end()  # the partial word's length (all of the lookback if no space)
    return head[: len(head) - word]


@dataclass(frozen=True)
class Watermark:
    """How far a transcript has been read, and which file that was."""

    offset: int = 0
    inode: int = 0
    head: str = ""

    def matches(self, path: str) -> bool:
        """True when `path` is still the file this watermark was taken on, not shorter, and a line still ends where
        reading stopped (a file rewritten in place keeps its first bytes, but not always its lines)."""
        try:
            st = os.stat(path)
            if self.offset == 0:
                return True
            if st.st_size < self.offset or (self.inode and st.st_ino != self.inode):
                return False
            with paths.open_regular(path) as handle:
                handle.seek(self.offset - 1)
                if handle.read(1) != b"\n":
                    return False
        except OSError:
            return False
        return head_digest(path, min(self.offset, HEAD_BYTES)) == self.head


def head_digest(path: str, length: int = HEAD_BYTES) -> str:
    """Hash of the first bytes of a file: notices a file replaced under the same name."""
    try:
        with paths.open_regular(path) as handle:
            return hashlib.blake2b(handle.read(length), digest_size=8).hexdigest()
    except OSError:
        return ""


@dataclass
class ReadStats:
    lines: int = 0
    entries: int = 0
    turns: int = 0
    skipped_lines: int = 0
    skipped_entries: dict[str, int] = field(default_factory=dict)
    replayed: int = 0
    restarted: bool = False
    cut_turns: int = 0  # turns whose prose was cut to MAX_PROSE_CHARS

    def skip(self, reason: str) -> None:
        self.skipped_entries[reason] = self.skipped_entries.get(reason, 0) + 1


@dataclass
class Chunk:
    """What one read produced: turns, the new watermark and counters."""

    turns: list[Turn]
    watermark: Watermark
    stats: ReadStats
    session_ids: set[str] = field(default_factory=set)
    reached_stop: bool = False
    more: bool = False  # stopped at `max_bytes` with lines still to read


# Entry types that never carry user or assistant prose: known, skipped, counted under their own name.
NON_PROSE_TYPES = frozenset(
    {
        "system",
        "summary",
        "attachment",
        "progress",
        # Session metadata Claude Code appends (and re-appends on resume).
        "file-history-snapshot",
        "file-history-delta",
        "attribution-snapshot",
        "queue-operation",
        "ai-title",
        "custom-title",
        "last-prompt",
        "tag",
        "agent-name",
        "agent-color",
        "agent-setting",
        "pr-link",
        "mode",
        "permission-mode",
        "worktree-state",
        "isolation-latch",
        "speculation-accept",
        "content-replacement",
        "fork-context-ref",
        "frame-link",
        "bridge-session",
        "ended-by-model",
        "task-summary",
        "marble-origami-commit",
        "marble-origami-snapshot",
        "marble-origami-reset",
    }
)


# `origin.kind` values of user entries that Claude Code writes itself, not the human.
NON_HUMAN_ORIGINS = frozenset({"task-notification"})
# A prompt Claude Code wrote: a background task's or shell's report, or an agent team's message (announced or not).
NOT_HUMAN_OPENINGS = ("<task-notification>", "<bash-notification>", "<teammate-message",
                      "Another Claude session sent a message:")
# How the summary Claude Code writes in the user's place at a compaction opens (unflagged before 2.0).
COMPACT_SUMMARY_OPENING = "This session is being continued from a previous conversation"
CLAUDE_CODE_MODEL = "<synthetic>"  # named on the assistant entries Claude Code writes: API errors, usage limits


def extract_prose(content: Any, limit: int = MAX_PROSE_CHARS) -> str:
    """The prose of a message's content: a string, or the text blocks of a list (blocks past `limit` characters
    are not joined: the caller cuts the rest)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts, size = [], 0
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
                size += len(text) + 2
                if size > limit:
                    break
    return "\n\n".join(parts)


def _prose(content: Any, stats: ReadStats) -> str:
    text = extract_prose(content)
    if len(text) > MAX_PROSE_CHARS:
        stats.cut_turns += 1
        return cut_text(text, MAX_PROSE_CHARS)
    return text


def entry_to_turn(entry: Any, transcript: str, stats: ReadStats, notices: bool = False) -> Turn | None:
    """A prose turn from one parsed entry, or None (and the reason counted). `notices`: read as training reads, with
    Claude Code's own notices in the assistant's place (the assistant's turn a classifier must call none) and the
    compaction summary of Claude Code 1.0 (labelled units like any other), which mining skips."""
    if not isinstance(entry, dict):
        stats.skip("not-an-object")
        return None
    kind = entry.get("type")
    if kind == "attachment":
        return _queued_prompt(entry, transcript, stats)
    if kind not in ("user", "assistant"):
        stats.skip(kind if isinstance(kind, str) and kind in NON_PROSE_TYPES else "unknown-type")
        return None
    if entry.get("isMeta"):
        stats.skip("meta")
        return None
    if entry.get("isCompactSummary") or entry.get("isVisibleInTranscriptOnly"):
        stats.skip("compact-summary")
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        stats.skip("no-message")
        return None
    role = message.get("role") or kind
    if role not in ("user", "assistant"):
        stats.skip("unknown-role")
        return None
    notice = entry.get("isApiErrorMessage") or message.get("model") == CLAUDE_CODE_MODEL
    if role == "assistant" and notice and not notices:
        stats.skip("not-the-model")
        return None
    text = _prose(message.get("content"), stats)
    if not text.strip():
        stats.skip("no-prose")
        return None
    if role == "user" and entry.get("isSidechain"):
        # The subagent's "user" is the main assistant: storing its brief as the user's words would turn
        # the assistant's instructions into user preferences.
        stats.skip("sidechain-prompt")
        return None
    if role == "user" and not notices and text.lstrip().startswith(COMPACT_SUMMARY_OPENING):
        stats.skip("compact-summary")  # (training reads it: its labelled units teach what is worth keeping)
        return None
    origin = entry.get("origin")
    if role == "user" and (isinstance(origin, dict) and isinstance(origin.get("kind"), str)
                           and origin["kind"] in NON_HUMAN_ORIGINS or text.lstrip().startswith(NOT_HUMAN_OPENINGS)):
        stats.skip("not-human")
        return None
    return _turn(entry, role, text, transcript, stats)


def _queued_prompt(entry: dict, transcript: str, stats: ReadStats) -> Turn | None:
    """A prompt the user typed while the assistant was busy: a `queued_command` attachment, the user's words.

    Claude Code records such a prompt only as this attachment (no user entry
    follows). Task notifications are queued the same way (`commandMode:
    task-notification`): Claude Code's words, not the human's. Every other
    attachment, our own SessionStart block among them, is skipped, and so is a background shell's report
    (`<bash-notification>`) queued as a prompt.
    """
    attachment = entry.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        stats.skip("attachment")
        return None
    origin = attachment.get("origin")
    mode = attachment.get("commandMode")
    if mode not in (None, "prompt") or (origin is not None and not (
            isinstance(origin, dict) and origin.get("kind") == "human")):
        stats.skip("not-human")
        return None
    if entry.get("isMeta"):
        stats.skip("meta")
        return None
    text = _prose(attachment.get("prompt"), stats)
    if not text.strip():
        stats.skip("no-prose")
        return None
    if text.lstrip().startswith(NOT_HUMAN_OPENINGS):
        stats.skip("not-human")
        return None
    if entry.get("isSidechain"):
        stats.skip("sidechain-prompt")  # queued for a subagent: the main assistant's words
        return None
    return _turn(entry, "user", text, transcript, stats)


def _turn(entry: dict, role: str, text: str, transcript: str, stats: ReadStats) -> Turn | None:
    uuid = entry.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        stats.skip("no-uuid")
        return None
    return Turn(
        uuid=uuid,
        session_id=_str(entry.get("sessionId")),
        role=role,
        text=text,
        ts=_timestamp(entry.get("timestamp")),
        cwd=_str(entry.get("cwd")),
        git_branch=_branch(_str(entry.get("gitBranch"))),
        is_sidechain=bool(entry.get("isSidechain")),
        transcript=transcript,
    )


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _branch(name: str) -> str:
    """A git branch as it may be stored and shown: redacted (a token in a branch name went into the store, the
    sessions' rows and the blocks' queries); a session's entries repeat it, so each name is redacted once."""
    return name if not name or name.isalnum() else _redacted_branch(name)


@lru_cache(maxsize=256)
def _redacted_branch(name: str) -> str:
    from .redact import redact

    return redact(name)[0]


# An ISO 8601 time as Claude Code writes it ("2026-01-02T10:00:00.000Z"); its date must be a real one.
_TIMESTAMP_RE = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T[0-2]\d:[0-5]\d")


def _timestamp(value: Any) -> str:
    """An entry's time, or '' for anything else ("not a date", a number): it would head a block's lines."""
    return value if isinstance(value, str) and _TIMESTAMP_RE.match(value) and parse_ts(value) is not None else ""


def iter_lines(handle, start: int) -> Iterator[tuple[bytes | None, int]]:
    """Complete lines from `start`, each with the offset just past it.

    Yields None for a line too long to parse. A last line without its newline is
    not yielded: the writer may still be appending to it.
    """
    handle.seek(start)
    offset = start
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            # Skip the rest of an oversized line without holding it in memory.
            consumed = len(line)
            while True:
                rest = handle.readline(MAX_LINE_BYTES)
                if not rest:
                    return  # still unterminated: leave it for a later run
                consumed += len(rest)
                if rest.endswith(b"\n"):
                    break
            offset += consumed
            yield None, offset
            continue
        if not line.endswith(b"\n"):
            return
        if offset == 0 and line.startswith(b"\xef\xbb\xbf"):  # a byte-order mark (an editor's) opens the file
            line, offset = line[3:], 3
        offset += len(line)
        yield line, offset


def read_transcript(path: str, watermark: Watermark | None = None, seen: set[str] | None = None,
                    stop_after_uuid: str | None = None, max_bytes: int | None = None, notices: bool = False) -> Chunk:
    """Read the prose turns added to `path` since `watermark`.

    `seen` holds entry uuids already mined (from any file); replayed entries are skipped and the set grows.
    `stop_after_uuid` ends the read after that entry (used to mine a transcript up to a cut). `max_bytes` ends it
    after the line that crosses that many bytes, so that huge files are mined in bounded batches. `notices`: see
    `entry_to_turn`.
    """
    stats = ReadStats()
    seen = seen if seen is not None else set()
    watermark = watermark or Watermark()
    if not watermark.matches(path):
        stats.restarted = watermark.offset > 0
        watermark = Watermark()
    turns: list[Turn] = []
    sessions: set[str] = set()
    reached_stop = more = False
    with paths.open_regular(path) as handle:
        st = os.fstat(handle.fileno())
        offset = watermark.offset
        for line, end in iter_lines(handle, watermark.offset):
            offset = end
            stats.lines += 1
            if line is None:
                stats.skipped_lines += 1
                continue
            if line.isspace():  # a blank line (`strip` would copy a line of megabytes to find that out)
                continue
            try:
                entry = parse_line(line)
            except (*_DecodeErrors, RecursionError):
                stats.skipped_lines += 1
                continue
            stats.entries += 1
            if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
                sessions.add(entry["sessionId"])
            try:
                turn = entry_to_turn(entry, path, stats, notices)
            except (TypeError, ValueError, AttributeError, RecursionError):
                # A shape no check above foresaw (the format is internal): skip the entry, never the file.
                stats.skip("malformed")
                turn = None
            if turn is not None:
                if turn.uuid in seen:
                    stats.replayed += 1
                else:
                    seen.add(turn.uuid)
                    turns.append(turn)
                    stats.turns += 1
            if stop_after_uuid and isinstance(entry, dict) and entry.get("uuid") == stop_after_uuid:
                reached_stop = True
                break
            if max_bytes is not None and offset - watermark.offset >= max_bytes:
                more = True
                break
    head = head_digest(path, min(offset, HEAD_BYTES)) if offset else ""
    new_mark = Watermark(offset=offset, inode=st.st_ino, head=head)
    return Chunk(turns=turns, watermark=new_mark, stats=stats, session_ids=sessions, reached_stop=reached_stop,
                 more=more)
