"""What a record of an export may hold, and how its texts are redacted: the checks an import makes on each record
(types, choices, times, sizes, trust) and the redaction export and import both apply (`portable`).
"""

from __future__ import annotations

import json
import math
import re
from datetime import date
from typing import Iterable

from ..extract.clean import typed_text
from ..extract.model import CATEGORIES, ROLES
from ..extract.redact import redact, redact_memory, shown_value
from ..extract.secret_turns import known_in
from ..extract.trust import held_back_reason, quarantine_reason, reports_source
from ..textutil import NOT_SHOWN, content_hash, map_strings
from .records import STATES

MAX_TEXT = 4000  # characters of a memory's text, subject, value or keywords, as a team pull takes (mining keeps 1,200)

# Text columns that may hold what a user said, per record kind.
REDACTED_FIELDS = {  # (and the names people type that are shown and recalled: a branch, a working folder)
    "memory": ("text", "value", "subject", "keywords", "state_reason", "git_branch"),
    "session": ("cwd", "git_branch"),
    "wording": ("text",),
    "evidence": ("text",),
    "link": ("was", "reason"),
    "checkpoint": (),
    "archive": ("text", "terms"),
}


class PortableError(ValueError):
    """An import file that cannot be read as an export; the message names the line."""


def redacted_record(kind: str, record: dict, secrets: tuple[bytes, frozenset[bytes]] = (b"", frozenset())) -> dict:
    """A record's texts as mining would have kept them: without what `<private>` holds (mined text has none), with
    every secret hidden, those the store learnt (`secrets`: its salt and digests) too, looked up in all its fields
    (a memory's keywords hold one in small letters, which no digest matches)."""
    names = [name for name in REDACTED_FIELDS.get(kind, ()) if isinstance(record.get(name), str) and record[name]]
    for name in names:  # (no control character: an escape sequence would reach a terminal and the model)
        record[name] = record[name].translate(NOT_SHOWN)
    learnt = known_in(" ".join(record[name] for name in names), *secrets)
    if kind == "memory" and "text" in names:  # a capture is judged in sight of its text, as mining judges it; a
        # keyword that only a secret held goes with it
        together = ("text", "subject", "value", "keywords")
        fields = {name: record[name] if name in names else "" for name in together}
        text = typed_text(fields["text"]) if "<private" in fields["text"].lower() else fields["text"]
        text, subject, value, kept, _ = redact_memory(text, fields["subject"], fields["value"],
                                                      fields["keywords"].split(), known=set(learnt))
        record.update({name: new for name, new in zip(together, (text, subject, value, " ".join(kept)))
                       if name in names})
        names = [name for name in names if name not in together]
    for name in names:
        value = record[name]
        if "<private" in value.lower():
            value = typed_text(value)
        record[name] = redact(value, set(learnt))[0]
    return record


_CHECKPOINT_KEYS = ("session_id", "project", "created_at")  # what names the checkpoint: no one's words


def _redacted_json(value, secrets: tuple[bytes, frozenset[bytes]]):
    """A checkpoint's body (JSON) with each of its strings redacted, but those that name it."""
    return map_strings(value, lambda text: redact(text, known_in(text, *secrets))[0] if text else text,
                       _CHECKPOINT_KEYS)


def redacted_checkpoint(record: dict, secrets: tuple[bytes, frozenset[bytes]] = (b"", frozenset())) -> dict:
    """An imported checkpoint with every secret in its body hidden, those the store learnt (`secrets`) too."""
    body = record.get("body")
    if not isinstance(body, str):
        raise PortableError("a checkpoint needs its body as a JSON text")
    try:
        parsed = json.loads(body)
    except ValueError:
        raise PortableError("a checkpoint's body is not JSON") from None
    clean = _redacted_json(parsed, secrets)
    if clean != parsed:
        record["body"] = json.dumps(clean, ensure_ascii=False)
    return record


_CHOICES = {"state": STATES, "category": CATEGORIES, "scope": ("project", "global"), "pinned": (0, 1),
            "tentative": (0, 1), "role": ROLES}
_TYPE_NAMES = {"INTEGER": "an integer of 64 bits at most", "REAL": "a finite number", "TEXT": "a text"}


_TIMES = frozenset(("first_seen", "last_seen", "valid_from", "valid_to", "last_recalled", "created_at", "updated_at",
                    "ts", "first_ts", "last_ts"))
_TIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](?:(\d{2}):(\d{2})(?::(\d{2}))?)?[0-9:.+\-]{0,40}Z?)?")


def is_time(value: str) -> bool:
    """Whether `value` is a time as the store writes them: a real day (not 2026-02-30), and an hour, minute and
    second in range when it gives them."""
    found = _TIME_RE.fullmatch(value)
    if not found:
        return False
    year, month, day, hour, minute, second = (int(part) if part else 0 for part in found.groups())
    try:
        date(year, month, day)
    except ValueError:
        return False
    return hour < 24 and minute < 60 and second < 61


def check_types(kind: str, record: dict, types: dict[str, str], required: Iterable[str] = ()) -> None:
    """Each value the store will hold has its column's type: SQLite's loose columns would take a text where a number
    belongs, or a number too large for it, and recall, `miner show`, `gc` and the hooks would fail on it later. A
    time is one (the blocks print its day). `required`: the columns that may not be left out nor be null."""
    for name in required:
        if record.get(name) is None:
            raise PortableError(f"{kind} record: {name} is {'null' if name in record else 'missing'}")
    for name, declared in types.items():
        value = record.get(name)
        if value is None:
            continue
        if name in _TIMES and type(value) is str and value and not is_time(value):
            raise PortableError(f"{kind} record: {name} {shown_value(value)} is not a time (YYYY-MM-DDThh:mm:ssZ)")
        if declared == "TEXT":
            fits = type(value) is str
        else:
            fits = (type(value) is int and -2**63 <= value < 2**63
                    or declared == "REAL" and type(value) is float and math.isfinite(value))
        if not fits:
            raise PortableError(f"{kind} record: {name} {shown_value(value)} is not "
                                f"{_TYPE_NAMES.get(declared, declared)}")


def checked_memory(record: dict) -> dict:
    old_id = record.get("id")
    if type(old_id) is not int or not isinstance(record.get("text"), str) or not record["text"].strip() \
            or not isinstance(record.get("project"), str) or not record["project"]:
        raise PortableError("a memory needs an integer id, a project and a text")
    if old_id < 1:  # stored as such, it was listed and recalled, but no command could name it to forget or correct
        raise PortableError(f"memory {old_id}: its id is below 1")
    for name, allowed in _CHOICES.items():
        if name in record and (record[name] not in allowed or type(record[name]) is bool):
            raise PortableError(f"memory {old_id}: {name} {shown_value(record[name])} is not one of "
                                f"{', '.join(map(str, allowed))}")
    confidence = record.get("confidence", 0)
    if type(confidence) not in (int, float) or not 0 <= confidence <= 1:
        raise PortableError(f"memory {old_id}: confidence {record['confidence']!r} is not a number from 0 to 1")
    for name in ("evidence_count", "session_count", "recall_count"):
        if type(record.get(name, 0)) is not int:
            raise PortableError(f"memory {old_id}: {name} {shown_value(record[name])} is not a whole number")
        if record.get(name, 0) < 0:
            raise PortableError(f"memory {old_id}: {name} {record[name]!r} is below 0")
    for name in ("text", "subject", "value", "keywords"):  # a team pull leaves out what is longer: so does an import
        if len(record.get(name) or "") > MAX_TEXT:
            raise PortableError(f"memory {old_id}: its {name} is {len(record[name]):,} characters "
                                f"(at most {MAX_TEXT:,})")
    record["hash"] = content_hash(record["text"])  # of the text as taken: redacted on the way in, or written by hand
    return record


def held_back(record: dict) -> bool:
    """Quarantine a current memory whose text reads like an attempt on the assistant, as a team pull does: a file
    can come from anyone, and say anything of itself (approved, pinned). True when it did."""
    reason = held_back_reason(record["text"], "imported") if record.get("state", "active") in ("active", "cold") else ""
    if reason:
        record.update(state="quarantined", pinned=0, state_reason=reason)
    return bool(reason)


def archived_kept(record: dict) -> bool:
    """Whether mining would have kept this archived unit, checked: a role of its own and a text of bounded size
    (else PortableError), and False for the assistant's instruction or report of a source, or an attempt on the
    assistant by anyone (a file can come from anyone)."""
    text = record.get("text")
    if not isinstance(text, str) or not text.strip() or not record.get("project"):
        raise PortableError("an archived unit needs a project and a text")
    if record.get("role") not in ROLES:
        raise PortableError(f"an archived unit's role {shown_value(record.get('role'))} is not one of "
                            f"{', '.join(ROLES)}")
    if len(text) > MAX_TEXT:
        raise PortableError(f"an archived unit's text is {len(text):,} characters (at most {MAX_TEXT:,})")
    return not (held_back_reason(text, "imported") or record["role"] != "user" and (
        quarantine_reason(record["role"], text) or reports_source(text)))
