"""Machines for the team tests: each a SQLite store of its own that mines memories and syncs with one server."""

from __future__ import annotations

import random
from pathlib import Path

from miner.memory.dedup import Deduper
from miner.memory.pgstore import PgStore
from miner.memory.records import STATES, NewMemory
from miner.memory.store import Store
from miner.team.settings import TeamSettings
from miner.team.shared import shareable
from miner.team.sync import Sync

KEY = "example.org/acme/shop"
_SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vor", "pel", "di", "nax", "qu", "ber", "fo", "zim", "tal", "rus"]
_TOPICS = ["service", "database", "cache", "handler", "deploy", "config", "tests", "client", "server", "queue"]


class Machine:
    """One member's machine: its own store file and its own path to the project."""

    def __init__(self, root: Path | None, name: str, url: str, team: str = "acme", store: Store | None = None,
                 project: str = ""):
        """`store`: an open store to mine into (the one `miner` itself opens), else a file of its own in `root`."""
        self.name = name
        self.project = project or f"/home/{name}/src/shop"
        self.store = store or Store(root / f"{name}.db")
        self.settings = TeamSettings(url, team, name, {self.project: KEY})
        self.deduper = Deduper(self.store)
        self.entries = 0

    def _new(self, text: str, category: str, ts: str, session: str, **extra) -> NewMemory:
        self.entries += 1
        return NewMemory(project=self.project, category=category, text=text, confidence=0.6, rule_id="test.rule",
                         role="user", session_id=session, transcript=f"/home/{self.name}/t.jsonl",
                         entry_uuid=f"{self.name}-{self.entries}", ts=ts, **extra)

    def mine(self, text: str, category: str = "decision", ts: str = "2026-02-01T10:00:00Z", session: str = "",
             **extra) -> int:
        """Store one memory as the miner does (the same three layers); returns its id."""
        with self.store.atomic():
            return self.deduper.add(self._new(text, category, ts, session or f"{self.name}-s1", **extra)).memory_id

    def mine_many(self, texts: list[tuple[str, str]], ts: str = "2026-02-01T10:00:00Z") -> None:
        """Many memories in one transaction, forty to a session."""
        with self.store.atomic():
            for text, category in texts:
                self.deduper.add(self._new(text, category, ts, f"{self.name}-s{(self.entries + 1) // 40}"))

    def sync(self, remote: PgStore | None = None):
        own = remote is None
        remote = remote or PgStore(self.settings.url, self.settings.team, self.name)
        try:
            return Sync(self.store, remote, self.settings, self.project, KEY).run()
        finally:
            if own:
                remote.close()

    def team_view(self) -> list[str]:
        """The texts of the current memories this machine holds of the team's (shareable) kinds."""
        shared = self.store.team_shared()
        return sorted(m.text for m in self.store.list_memories(self.project, states=("active", "cold"), limit=10**6)
                      if shareable(m, shared))

    def all_memories(self):
        return self.store.list_memories(self.project, states=STATES, limit=10**6)

    def close(self) -> None:
        self.store.close()


def server_view(url: str, team: str = "acme") -> list[str]:
    with PgStore(url, team) as remote:
        return sorted(remote.active_texts(KEY))


def say_cache_store(machine: Machine, value: str, ts: str, **fields) -> None:
    """The choice the supersede tests change their minds about: "Use <value> for the cache store.", said at `ts`."""
    machine.mine(f"Use {value} for the cache store.", subject="cache store", value=value, ts=ts, **fields)


def everywhere(machines: list[Machine], url: str, team: str = "acme") -> list[str]:
    """The team's current memories, once every machine shows exactly those (asserted)."""
    on_server = server_view(url, team)
    for machine in machines:
        assert machine.team_view() == on_server, f"{machine.name} shows {machine.team_view()}, the team {on_server}"
    return on_server


def sync_until_stable(machines: list[Machine], rounds: int = 5) -> int:
    """Sync every machine in turn until a whole round pushes and takes nothing; returns the rounds run."""
    for n in range(1, rounds + 1):
        moved = 0
        for machine in machines:
            report = machine.sync()
            moved += report.pushed + report.added + report.superseded
        if not moved and n > 1:
            return n
    raise AssertionError(f"still moving after {rounds} rounds")


def distinct_statements(count: int, seed: int) -> list[tuple[str, str]]:
    """`count` statements no two of which are the same memory: each names made-up things of its own."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out = []
    while len(out) < count:
        words = ["".join(rng.choice(_SYLLABLES) for _ in range(4)) for _ in range(3)]
        if any(w in seen for w in words):
            continue
        seen.update(words)
        topic = rng.choice(_TOPICS)
        out.append((f"The {topic} {words[0]} reads from {words[1]} through {words[2]}.",
                    rng.choice(["decision", "fact", "todo"])))
    return out
