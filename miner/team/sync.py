"""Push what changed here to the team's server, pull what changed there: one truth on every machine.

**Push.** A local memory is pending when it is shareable and differs from what it
was when last in step with the team (its signature: state, wording, evidence count).
Each is routed through `dedup.Deduper` on the team's `PgStore`, the same three
layers as on one machine: an exact repeat (by anyone) merges evidence, a paraphrase
merges, a later change of mind supersedes with history. Batches run in one server
transaction each, under an advisory lock on the project, and are recorded here only
after the server committed: a sync killed at any point and run again repeats nothing
(evidence is unique per entry, an exact repeat finds its memory). Then local
supersede links and forgets (as tombstones) go up; two members who replaced the same
memory at once both stay, the later change current and the earlier in its history.

**Pull** (`pull.Pull`). Every memory and link of the project changed on the server
after the local cursors, in the order they changed: a team memory seen for the
first time is added here (source `team`), one already here takes the team's wording
and state, two local memories the team merged become one (the other closed,
linked). Cursors move in the same local transaction as the rows.

**Never shared:** preferences (unless shared with `miner team share`), global
memories, quarantined ones, anything of an excluded project, a memory forgotten
before it was ever pushed, the archive, evidence words (only who, which session,
when), transcript paths; and a memory in which redaction still finds a secret.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from ..memory.dedup import CANDIDATES, CURRENT_STATES, NEAR_STATES, Deduper, match_expression
from ..memory.records import NewMemory, StoredMemory, now_iso
from ..memory.store import Store
from ..textutil import content_hash, fts_terms, short
from .pull import Pull
from .settings import TeamError, TeamSettings
from .shared import EVIDENCE_TEXT, pending, signature

BATCH = 500


@dataclass
class Report:
    """What one sync did, for `miner team sync` and `status`."""

    pushed: int = 0  # local memories sent up (new team memories, merges and updates)
    created: int = 0  # of those, new on the server
    merged: int = 0  # of those, merged into a team memory (exact or paraphrase)
    superseded: int = 0  # supersede links and tombstones sent up
    conflicts: int = 0  # two members' replacements of one memory resolved
    withheld: int = 0  # redaction still finds a secret: never sent
    pulled: int = 0  # team memories changed on the server, taken in here
    added: int = 0  # of those, new here
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        parts = [f"pushed {self.pushed} ({self.created} new, {self.merged} merged)",
                 f"pulled {self.pulled} ({self.added} new here)"]
        if self.superseded:
            parts.append(f"{self.superseded} supersede/forget sent")
        if self.conflicts:
            parts.append(f"{self.conflicts} concurrent change(s) resolved")
        if self.withheld:
            parts.append(f"{self.withheld} withheld (a secret)")
        return ", ".join(parts) + f" in {self.seconds:.2f} s"


def _as_stored(memory_id: int, new: NewMemory) -> StoredMemory:
    """A team memory as `insert_memory` just made it from `new` (no round trip to read it back)."""
    ts = new.ts
    return StoredMemory(memory_id, new.project, new.category, new.text, "active", bool(new.tentative), new.scope,
                        new.confidence, False, new.rule_id, new.role, new.source, new.session_id, new.transcript,
                        new.entry_uuid, new.git_branch, ts, ts, ts, None, 1, 1, 0, " ".join(new.keywords),
                        new.subject, new.value)


def _secret_free(memory: StoredMemory, secrets: tuple = (b"", frozenset())) -> bool:
    """Whether a memory holds no secret: of a kind redaction knows, or one the store learnt since it was stored
    (`secrets`: its salt and digests)."""
    from ..extract.redact import redact_memory
    from ..extract.secret_turns import known_in

    known = known_in(" ".join(filter(None, (memory.text, memory.subject, memory.value))), *secrets)
    return not redact_memory(memory.text, memory.subject, memory.value, memory.keywords.split(), known=known)[4]


class Sync(Pull):
    """One project's sync between a local `Store` and the team's `PgStore`."""

    def __init__(self, store: Store, remote, settings: TeamSettings, project: str, key: str,
                 progress: Callable[[int, int], None] | None = None):
        if not settings.team:
            raise TeamError("this machine has joined no team: run `miner team join URL` in the project")
        self.store, self.remote, self.project, self.key = store, remote, project, key
        self.team = settings.team
        self.deduper = Deduper(remote)
        self.progress = progress
        self.report = Report()
        self._common: dict[str, int] | None = None  # words that find everything: left out of look-ups
        self._server_common: dict[str, int] | None = None  # of those, the server's (`common_terms`) ...
        self._common_at = 0  # ... as they were when this sync had made this many memories
        self._made: dict[str, list[int]] = {}  # word -> team memories this sync created, for later batch members
        self._made_memories: dict[int, StoredMemory] = {}  # those of them unchanged since, as they were made
        self._changed: set[int] = set()  # team memories this batch changed after its look-up
        self._shared = store.team_shared()  # the preferences shared with the team

    # --- push ---------------------------------------------------------------------------------

    def push(self) -> None:
        todo = pending(self.store, self.team, self.project)
        secrets = self.store.secret_digests()  # (read once: each memory's tokens are looked up among them)
        closed: list[StoredMemory] = []
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            mapped = self.store.team_map(self.team)
            done: list[tuple[int, int, str]] = []
            # What this sync read or made in earlier batches may have changed since: another machine may have had
            # the lock in between.
            self._made_memories.clear()
            self._changed.clear()
            self.remote.forget_prefetched()
            with self.remote.atomic():
                self.remote.lock_project(self.key)
                batch = [m for m in batch if _secret_free(m, secrets)]
                self.report.withheld += len(todo[start : start + BATCH]) - len(batch)
                nearby = self._look_up(batch, mapped)
                with self.remote.pipeline():
                    for memory in batch:
                        known = mapped.get(memory.id)
                        if known is None and memory.source == "team" and memory.entry_uuid:
                            # A copy pulled from the team whose link this machine forgot (it left and joined
                            # again): pushed, its words as taken here (redacted) would be a second team memory.
                            remote_id = self.remote.memory_of_entry(self.key, memory.entry_uuid)
                            if remote_id is not None:  # (closed here meanwhile: its supersede or forget goes up)
                                current = memory.state in CURRENT_STATES
                                done.append((memory.id, remote_id, signature(memory) if current else ""))
                                if not current:
                                    closed.append(memory)
                                continue
                        remote_id = self._push_memory(memory, known[0] if known else None, nearby.get(memory.id))
                        # A closed memory stays pending until its supersede or forget went up too.
                        done.append((memory.id, remote_id,
                                     signature(memory) if memory.state in CURRENT_STATES else ""))
                        if memory.state not in CURRENT_STATES:
                            closed.append(memory)
            with self.store.atomic():
                self.store.set_team_map(self.team, done)
            if self.progress:
                self.progress(min(start + BATCH, len(todo)), len(todo))
        if closed:
            self._push_closures(closed)

    def _new(self, memory: StoredMemory, evidence) -> NewMemory:
        return NewMemory(project=self.key, category=memory.category, text=memory.text, confidence=memory.confidence,
                         rule_id=memory.rule_id, role=evidence.role or memory.role, session_id=evidence.session_id,
                         transcript="", entry_uuid=evidence.entry_uuid, ts=evidence.ts or memory.first_seen,
                         tentative=memory.tentative, scope="project", subject=memory.subject, value=memory.value,
                         keywords=tuple(memory.keywords.split()), source=memory.source,
                         evidence_text=EVIDENCE_TEXT)

    def _look_up(self, batch: list[StoredMemory], mapped: dict) -> dict[int, list[StoredMemory]]:
        """The exact and near-duplicate candidates of a batch's new memories, asked of the server at once
        (two round trips), under the project's lock: {local id: candidates}."""
        fresh = [m for m in batch if m.id not in mapped]
        if not fresh:
            return {}
        # The project's words common on the server (read again once this sync grew it by a quarter), and those
        # common among what this sync made.
        if self._server_common is None or self.report.created > 1.25 * self._common_at + 200:
            self._server_common, self._common_at = self.remote.common_terms(self.key), self.report.created
        bound = self._made_bound()
        self._common = {**self._server_common,
                        **{word: len(ids) for word, ids in self._made.items() if len(ids) > bound}}
        self.remote.prefetch_exact(self.key, [content_hash(m.text) for m in fresh])
        matches = [match_expression(m.text, self.deduper.comparer) for m in fresh]
        found = self.remote.similar_batch(self.key, matches, NEAR_STATES, self._common, CANDIDATES)
        self.remote.reserve_ids(len(fresh))
        return {m.id: list(cands) for m, cands in zip(fresh, found)}

    def _made_bound(self) -> int:
        return max(50, int(0.02 * self.report.created))

    def _batch_neighbours(self, memory: StoredMemory, nearby: list[StoredMemory]) -> list[StoredMemory]:
        """Add the team memories made earlier in this batch that share an uncommon word with `memory`
        (the batch's look-up ran before they existed)."""
        bound = self._made_bound()  # a word common among them tells nothing either
        shared: dict[int, int] = {}
        for word in set(fts_terms(memory.text)) - set(self._common or {}):
            made = self._made.get(word, ())
            if len(made) <= bound:
                for i in made:
                    shared[i] = shared.get(i, 0) + 1
        for m in nearby:
            shared.pop(m.id, None)
        ids = sorted(shared, key=lambda i: (-shared[i], -i))[:CANDIDATES]
        known = [self._made_memories[i] for i in ids if i in self._made_memories]
        asked = [i for i in ids if i not in self._made_memories]  # changed since it was made: as it is now
        return nearby + known + (self.remote.memories_by_id(asked) if asked else [])

    def _push_memory(self, memory: StoredMemory, remote_id: int | None,
                     nearby: list[StoredMemory] | None = None) -> int:
        """Route one local memory's evidence to the team; returns the team memory it is (or merged into)."""
        evidence = self.store.evidence(memory.id) or []
        if not evidence:
            from ..memory.records import Evidence

            evidence = [Evidence(0, memory.id, memory.session_id, "", memory.entry_uuid, memory.role,
                                 memory.first_seen, memory.rule_id, memory.text)]
        self.report.pushed += 1
        first, rest = evidence[0], evidence[1:]
        if remote_id is None or self.remote.get(remote_id) is None:
            if nearby is not None:
                nearby = [m for m in self._as_now(self._batch_neighbours(memory, nearby)) if m.state in NEAR_STATES]
            new = self._new(memory, first)
            outcome = self.deduper.add(new, nearby)
            remote_id = outcome.memory_id
            self._touched(remote_id, *outcome.superseded, outcome.superseded_by)
            if outcome.created:
                self.report.created += 1
                for word in fts_terms(memory.text):
                    self._made.setdefault(word, []).append(remote_id)
                if not outcome.superseded_by:
                    self._made_memories[remote_id] = _as_stored(remote_id, new)
            else:
                self.report.merged += 1
        else:
            self._update(memory, remote_id, self._new(memory, evidence[-1]))
            rest = evidence
        for row in rest:
            self.remote.merge_evidence(remote_id, self._new(memory, row))
        return remote_id

    def _touched(self, *ids: int | None) -> None:
        """Team memories this batch changed: a later member of the batch reads them again, as they are now."""
        for memory_id in ids:
            if memory_id:
                self._changed.add(memory_id)
                self._made_memories.pop(memory_id, None)

    def _as_now(self, candidates: list[StoredMemory]) -> list[StoredMemory]:
        """Candidates looked up before this batch wrote, with the ones it changed since read again."""
        stale = [m.id for m in candidates if m.id in self._changed]
        if not stale:
            return candidates
        fresh = {m.id: m for m in self.remote.memories_by_id(stale)}
        return [fresh.get(m.id, m) if m.id in self._changed else m for m in candidates]

    def _update(self, memory: StoredMemory, remote_id: int, latest: NewMemory) -> None:
        """A memory the team has, changed here: said again after the team closed it, or reworded."""
        team_memory = self.remote.get(remote_id)
        if (memory.state in CURRENT_STATES and team_memory.state == "superseded" and team_memory.valid_to
                and (memory.last_seen or "") > team_memory.valid_to):
            heads = self.deduper.current_heads(remote_id)
            # Current again, and what replaced it closes; closed without a successor the team knows: reopened.
            if self.deduper.restate(team_memory, latest) is None:
                self.remote.reopen(remote_id, "said again after it was closed", at=latest.ts)
            self._touched(remote_id, *heads)
        if team_memory.text != memory.text and (memory.last_seen or "") >= team_memory.last_seen:
            holder = self.remote.find_exact(self.key, content_hash(memory.text))
            if holder is None or holder.id == remote_id:  # new words, or an earlier wording of its own
                self.remote.reword(remote_id, latest)  # this member's newer wording
                self._touched(remote_id)
            elif holder.id != remote_id:
                self.report.notes.append(f"kept the team's wording of #{remote_id}: #{holder.id} says it already")

    def _push_closures(self, closed: list[StoredMemory]) -> None:
        """Local supersede links and forgets of memories the team has, then their signatures."""
        mapped = self.store.team_map(self.team)
        done = []
        with self.remote.atomic():
            self.remote.lock_project(self.key)
            for memory in closed:
                target = mapped.get(memory.id)
                if target is None:
                    continue
                team_memory = self.remote.get(target[0])
                if memory.state == "forgotten":
                    if team_memory.state != "forgotten":
                        self.remote.set_state(target[0], "forgotten", f"forgotten by {self.remote.member}")
                        self.report.superseded += 1
                elif memory.state == "superseded":
                    linked = False
                    for link in self.store.supersede_links([memory.id]):
                        newer = mapped.get(link.src) if link.dst == memory.id else None
                        if newer is None:
                            continue
                        linked = True
                        if newer[0] == target[0]:
                            continue  # what replaced it here is the same team memory (the team merged the two)
                        # The reason may be words a user typed (`miner correct --reason`): the team gets a plain one.
                        self._supersede(newer[0], target[0], f"replaced on {self.remote.member}'s machine", link.was,
                                        memory.valid_to or now_iso())
                    if not linked and team_memory.state in CURRENT_STATES:
                        # What replaced it here stays here (a secret, a preference): the team learns only
                        # that this no longer holds.
                        self.remote.set_state(target[0], "superseded", f"replaced on {self.remote.member}'s machine",
                                              until=memory.valid_to or now_iso())
                        self.report.superseded += 1
                done.append((memory.id, target[0], signature(memory)))
        with self.store.atomic():
            self.store.set_team_map(self.team, done)

    def _supersede(self, newer: int, older: int, reason: str, was: str, at: str) -> None:
        """Link `newer` over `older` on the server; when another member's change already replaced `older`,
        the later of the two changes stands and the earlier goes into its history."""
        if any(src == newer for src, _state in self.remote.superseders(older)):
            return
        rivals = [src for src, state in self.remote.superseders(older) if state in CURRENT_STATES and src != newer]
        self.remote.supersede(newer, older, reason, was, at)
        self.report.superseded += 1
        for rival in rivals:
            a, b = self.remote.get(rival), self.remote.get(newer)
            later, earlier = (b, a) if (b.valid_from, b.id) >= (a.valid_from, a.id) else (a, b)
            self.remote.supersede(later.id, earlier.id, "two members changed it at once: the later change stands",
                                  short(earlier.text), at=later.valid_from)
            self.remote.bump("team_conflicts_resolved")
            self.report.conflicts += 1

    # --- both -----------------------------------------------------------------------------------

    def _same_server(self) -> None:
        """Tables made again on the server since the last sync (dropped, restored from a dump) are another server:
        which local memory was which team memory there, and how far the pull had read, mean nothing on it (a
        correction would have changed another member's memory). What this machine knew of the project's sync is
        forgotten, and the project is pushed and pulled whole again: merged, never doubled."""
        from ..memory.pgschema import instance

        server = instance(self.remote.db)
        known = self.store.team_state(self.team, self.project).get("server", "")
        if not server or server == known:
            return  # (tables made before they were named: nothing to compare)
        with self.store.atomic():
            if known:
                self.store.clear_team_project(self.team, self.project)
                self.report.notes.append("the team's tables on the server were made again since the last sync: "
                                         "this project is pushed and pulled whole again")
            self.store.set_team_state(self.team, self.project, {"server": server})

    def run(self) -> Report:
        began = time.perf_counter()
        self._same_server()
        self.push()
        self.pull()
        self.report.seconds = time.perf_counter() - began
        with self.store.atomic():
            self.store.set_team_state(self.team, self.project, {
                "last_sync": now_iso(), "last_report": self.report.line(),
                "conflicts_resolved": int(self.store.team_state(self.team, self.project).get(
                    "conflicts_resolved", 0)) + self.report.conflicts})
        return self.report
