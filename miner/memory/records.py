"""The store's records: what its queries return and what the miner hands it, as small read-only objects.

Standard library only and cheap to import (the hooks import the store): plain
classes with `__slots__`, no dataclasses. A record's fields are its slots, in
the order of the columns selected for it (`columns`); it compares and hashes by
value, pickles, and cannot be changed once built. A field reads as an attribute
(`link.src`).
"""

from __future__ import annotations

from datetime import datetime, timezone

# The states a memory can be in: recalled (active), replaced, forgotten by hand, decayed, held back as untrusted.
STATES = ("active", "superseded", "forgotten", "cold", "quarantined")

_set = object.__setattr__


def now_iso() -> str:
    """The present as the store writes times (UTC, centiseconds), so that they sort as text."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def parse_ts(value: str) -> float | None:
    """Seconds since the epoch for an ISO timestamp, or None."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Record:
    """A read-only record whose fields are its `__slots__`; `defaults` gives the optional ones."""

    __slots__ = ()
    defaults: dict = {}
    flags: tuple = ()  # the fields the database keeps as 0 or 1, read as booleans
    _setters: tuple = ()  # each field's own slot descriptor: twice as fast as setting by name (recall builds hundreds)
    _maker = None  # the class's own `from_values`, compiled on first use (`_compile`)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._setters = tuple(getattr(cls, name).__set__ for name in cls.__slots__)
        cls._maker = None

    def __init__(self, *values, **named):
        fields = self.__slots__
        if len(values) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, not {len(values)}")
        for name, value in zip(fields, values):
            _set(self, name, value)
        for name in fields[len(values):]:
            if name in named:
                _set(self, name, named.pop(name))
            elif name in self.defaults:
                _set(self, name, self.defaults[name])
            else:
                raise TypeError(f"{type(self).__name__} needs a value for {name!r}")
        if named:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(named))!r} (or it was given twice)")

    @classmethod
    def from_values(cls, values):
        """From a row selected as `cls.columns()`, in that order; the `flags` become booleans."""
        return (cls._maker or cls._compile())(values)

    @classmethod
    def _compile(cls):
        """`from_values` as straight-line code, one statement per field: a recall reads hundreds of records, and
        a loop over the fields costs half as much again. Compiled on first use, not on import (the hooks)."""
        fields = cls.__slots__
        lines = ["def make(values):",
                 f"    if len(values) != {len(fields)}:",
                 f"        raise TypeError(f'{cls.__name__} takes {len(fields)} values, got {{len(values)}}')",
                 "    record = new(cls)"]
        lines += [f"    set{i}(record, {'bool(values[%d])' % i if name in cls.flags else 'values[%d]' % i})"
                  for i, name in enumerate(fields)]
        scope = {"new": object.__new__, "cls": cls, **{f"set{i}": setter for i, setter in enumerate(cls._setters)}}
        exec("\n".join(lines + ["    return record"]), scope)  # noqa: S102 - code built from the slot names only
        cls._maker = scope["make"]
        return cls._maker

    @classmethod
    def columns(cls, alias: str = "") -> str:
        """The column list that selects this record's fields, each prefixed with `alias.` when given."""
        prefix = f"{alias}." if alias else ""
        return ", ".join(prefix + name for name in cls.__slots__)

    def values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is read-only: cannot delete {name!r}")

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.values() == other.values()

    def __hash__(self):
        return hash(self.values())

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"

    def __reduce__(self):
        return self.__class__.from_values, (self.values(),)


class StoredMemory(Record):
    """A memory as stored: its text, state, provenance and counts."""

    __slots__ = ("id", "project", "category", "text", "state", "tentative", "scope", "confidence", "pinned",
                 "rule_id", "role", "source", "session_id", "transcript", "entry_uuid", "git_branch", "first_seen",
                 "last_seen", "valid_from", "valid_to", "evidence_count", "session_count", "recall_count",
                 "keywords", "subject", "value", "last_recalled")
    defaults = {"last_recalled": None}
    flags = ("tentative", "pinned")


class MemoryHead(Record):
    """What ranking a memory needs of it, without its words: a ranking reads hundreds of candidates and shows
    a few dozen, whose whole records are read after it (`StoredMemory`)."""

    __slots__ = ("id", "category", "tentative", "confidence", "pinned", "role", "last_seen", "recall_count", "project")
    flags = ("tentative", "pinned")


class NewMemory(Record):
    """What the miner (or a correction, or a tool) hands the store for one candidate."""

    __slots__ = ("project", "category", "text", "confidence", "rule_id", "role", "session_id", "transcript",
                 "entry_uuid", "ts", "git_branch", "tentative", "scope", "subject", "value", "keywords", "source",
                 "evidence_text")
    defaults = {"git_branch": "", "tentative": False, "scope": "project", "subject": "", "value": "",
                "keywords": (), "source": "mined", "evidence_text": ""}


class Evidence(Record):
    """One sighting of a memory: the entry of a transcript that said it, and its words there."""

    __slots__ = ("id", "memory_id", "session_id", "transcript", "entry_uuid", "role", "ts", "rule_id", "text")


class MinedEntry(Record):
    """What one transcript entry yielded: a memory, with the entry's own words (else the memory's)."""

    __slots__ = ("memory_id", "uuid", "text", "category")


class Link(Record):
    """A link between two memories (`supersedes`: `src` replaced `dst`), with its reason and short "was" note."""

    __slots__ = ("src", "dst", "kind", "reason", "created_at", "was")


class Wording(Record):
    """An earlier wording of a memory, kept so that its hash still finds the memory."""

    __slots__ = ("text", "created_at")


class Session(Record):
    """A session as the miner saw it: its project (fixed by its first cwd), branch, transcript and time span."""

    __slots__ = ("session_id", "project", "cwd", "git_branch", "transcript", "first_ts", "last_ts", "user_prompts")


class ArchivedUnit(Record):
    """A unit of what was said, kept in the archive with its provenance."""

    __slots__ = ("id", "project", "session_id", "transcript", "entry_uuid", "unit", "role", "ts", "text", "terms",
                 "worth", "hidden")


class RecallLogEntry(Record):
    """One recall: what it was asked, and the ids it showed, voided (as zones, JSON) and left out (JSON lists)."""

    __slots__ = ("id", "created_at", "project", "situation", "query", "shown", "voided", "left_out", "chars",
                 "elapsed_ms")


class ProjectSummary(Record):
    """A project's count of active memories and when one was last seen."""

    __slots__ = ("project", "memories", "last_seen")
