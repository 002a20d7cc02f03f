"""The pull half of team sync (a mixin of `sync.Sync`): take in what changed on the team, in order.

Every memory and link of the project changed on the server after the local cursors
is applied here in the local transaction that moves the cursor, each row in its own
savepoint: a team memory seen for the first time is added (source `team`), one
already here takes the team's wording and state, local memories the team merged
into one become one here. A row changed here since it was last in step is re-read
after the next push; a link whose memories are not here yet stops the link cursor
before it once. A forget or quarantine here, and a memory of this machine's own
that says the same words, are never changed by a pull.

What the server holds is not trusted: another member's version, or anyone who can
write its tables, may have put it there. A row is taken as a mined one would be:
redacted in every field (with the secrets this machine learnt), left out when it is
mostly secrets, longer than `MAX_TEAM_TEXT` or not of the shape the local store and its
readers rely on (`_unfit`), and quarantined when it reads like an attempt on the
assistant (`trust.takeover_reason`), whatever role the server says said it; the
standing orders people share ("always run the linter") are not that.
"""

from __future__ import annotations

import json
import sqlite3
import time

from ..extract.model import CATEGORIES, ROLES
from ..extract.redact import mostly_redacted, redact, redact_memory, shown_value
from ..extract.secret_turns import known_in
from ..extract.trust import held_back_reason, takeover_reason
from ..memory.dedup import CURRENT_STATES
from ..memory.records import STATES, NewMemory, StoredMemory, now_iso, parse_ts
from ..textutil import NOT_SHOWN, content_hash, short
from .shared import VETOES, follows_team, goes_up, signature

PULL_PAGE = 2000
MAX_TEAM_TEXT = 4000  # characters of a team memory taken here (mining keeps sentences of 1,200 at most)
MAX_TEAM_NAME = 200  # characters of a rule, session or entry id, and of a member's name
_CHOICES = (("state", STATES), ("category", CATEGORIES), ("scope", ("project", "global")))
_TEXTS = ("text", "subject", "value", "keywords")
_NAMES = ("rule_id", "role", "session_id", "entry_uuid")  # shown by `miner show` and exported as they are kept


def _unfit(team_memory: StoredMemory) -> str:
    """Why a team row cannot be a memory here ('' when it can). A push never sends such a row, but anyone who can
    write the server's tables may, and the local store's readers (recall, the hooks, export) rely on each column's
    shape: taken as it is, one bad value would break them, or stop every later pull."""
    for name in (*_TEXTS, *_NAMES):  # (a server whose column was altered gives NULL, or a number)
        if not isinstance(getattr(team_memory, name), str):
            return f"its {name} {shown_value(getattr(team_memory, name))} is not a text"
    for name in _NAMES:
        if len(getattr(team_memory, name)) > MAX_TEAM_NAME:
            return f"its {name} is {len(getattr(team_memory, name)):,} characters (at most {MAX_TEAM_NAME})"
    if team_memory.role not in ROLES:
        return f"its role {shown_value(team_memory.role)} is not one of {', '.join(ROLES)}"
    longest = max(_TEXTS, key=lambda name: len(getattr(team_memory, name)))
    if len(getattr(team_memory, longest)) > MAX_TEAM_TEXT:
        return f"its {longest} is {len(getattr(team_memory, longest)):,} characters (at most {MAX_TEAM_TEXT:,})"
    if not team_memory.text.strip():
        return "its text is empty"
    for name, allowed in _CHOICES:
        if getattr(team_memory, name) not in allowed:
            return f"its {name} {shown_value(getattr(team_memory, name))} is not one of {', '.join(allowed)}"
    confidence = team_memory.confidence
    if type(confidence) not in (int, float) or not 0 <= confidence <= 1:  # (NaN is neither)
        return f"its confidence {shown_value(confidence)} is not a number from 0 to 1"
    for name in ("first_seen", "valid_to"):  # what becomes its times here (`valid_to` may be empty: still open)
        stamp = getattr(team_memory, name)
        if (stamp or name == "first_seen") and (not isinstance(stamp, str) or parse_ts(stamp) is None):
            return f"its {name} {shown_value(stamp)} is not an ISO time"
    if parse_ts(team_memory.first_seen) > time.time() + 86_400:  # (it would head every block under its day)
        return f"its first_seen {shown_value(team_memory.first_seen)} is in the future"
    return ""


def _when(stamp: str) -> str:
    """A time the server gives a link, or now when it is not one (it becomes a memory's end of validity here)."""
    return stamp if isinstance(stamp, str) and parse_ts(stamp) is not None else now_iso()


class Pull:
    """Pull methods; `Sync` provides store, remote, team, project, key, report and _shared."""

    def pull(self) -> None:
        """Take in what changed on the team after this machine's cursors. A row this machine changed since it
        was last in step is re-read after the next push (`retry`); a link whose memories are not here yet stops
        the link cursor before it, once."""
        self._secrets = self.store.secret_digests()  # (read once: each row's fields are looked up among them)
        state = self.store.team_state(self.team, self.project)
        cursor, link_cursor = int(state.get("memories", 0)), int(state.get("links", 0))
        retry = {int(i) for i in json.loads(state.get("retry", "[]"))}
        again: set[int] = set()
        if retry:
            with self.store.atomic():
                again |= self._take_memories(self.remote.changed_by_id(sorted(retry)))
        while True:
            rows = self.remote.changed_memories(self.key, cursor, PULL_PAGE)
            if not rows:
                break
            with self.store.atomic():
                again |= self._take_memories(rows)
                cursor = rows[-1][0]
                self.store.set_team_state(self.team, self.project, {"memories": cursor,
                                                                     "retry": json.dumps(sorted(again))})
        with self.store.atomic():
            self.store.set_team_state(self.team, self.project, {"retry": json.dumps(sorted(again))})
        stalled = int(state.get("link_stall", 0))
        while True:
            links = self.remote.changed_links(self.key, link_cursor, PULL_PAGE)
            if not links:
                break
            with self.store.atomic():
                taken, stall = self._take_links(links, stalled)
                link_cursor = taken or link_cursor
                self.store.set_team_state(self.team, self.project, {"links": link_cursor, "link_stall": stall})
            if stall:
                break
        self._resolve_doubles()

    def _locals_by_remote(self) -> dict[int, list[int]]:
        by_remote: dict[int, list[int]] = {}
        for local, (remote, _synced) in self.store.team_map(self.team).items():
            by_remote.setdefault(remote, []).append(local)
        return by_remote

    def _take_memories(self, rows: list[tuple[int, StoredMemory, str, str]]) -> set[int]:
        """Apply team rows here (inside the caller's transaction); returns the ids to re-read next time."""
        store = self.store
        by_remote = self._locals_by_remote()
        mapped = store.team_map(self.team)
        again: set[int] = set()
        for _seq, team_memory, member, reason in rows:
            self.report.pulled += 1
            reason = self._note(reason)
            member = self._note(member if isinstance(member, str) else "")[:MAX_TEAM_NAME] or "a member"
            team_memory, refused = self._as_taken(team_memory)
            if refused:
                self.report.notes.append(refused)
                continue
            try:
                with store.atomic():  # one row at a time: a row this machine cannot take stops only itself
                    if not self._take_one(team_memory, member, reason, by_remote, mapped):
                        again.add(team_memory.id)
            except (sqlite3.IntegrityError, ValueError, TypeError) as exc:
                self.report.notes.append(f"team memory #{team_memory.id} not taken here: {exc}")
        return again

    def _take_one(self, team_memory: StoredMemory, member: str, reason: str, by_remote: dict[int, list[int]],
                  mapped: dict[int, tuple[int, str]]) -> bool:
        """Apply one team row; False when this machine changed it since (its change goes up first)."""
        store = self.store
        digest = content_hash(team_memory.text)
        locals_ = list(by_remote.get(team_memory.id, []))
        holder = store.find_exact(self.project, digest)  # a memory here already saying the team's words
        if holder is not None and holder.id not in locals_ and holder.id not in mapped:
            locals_.append(holder.id)
        if not locals_ and holder is not None:  # two team rows that differ only in a secret redacted here
            self.report.notes.append(f"team memory #{team_memory.id} not taken here: redacted, it says what team "
                                     f"memory #{mapped[holder.id][0]} says")
            return True
        if not locals_:
            locals_ = [self._add_here(team_memory, member, reason)]
            self.report.added += 1
        states = {i: store.get(i) for i in locals_}
        head = self._representative(states, digest)
        local = states[head]
        if head in mapped and mapped[head][1] and goes_up(local, mapped[head][1]):
            return False
        # A forget or a quarantine here stays, whatever the team says; and a memory of this machine's own (a
        # preference, a memory of every project) that happens to say the same words is never changed by it.
        if local.state not in VETOES and follows_team(local, self._shared):
            if content_hash(local.text) != digest and (holder is None or holder.id == head):
                if takeover_reason(team_memory.text):  # an attempt on the assistant is no new wording
                    self.report.notes.append(f"team memory #{team_memory.id}: its new wording reads like an "
                                             "instruction to the assistant; not taken here")
                else:
                    store.reword(head, self._as_new(team_memory))
            if team_memory.state in CURRENT_STATES:
                if local.state == "superseded":
                    # A row the team sent closed (never checked then), now current: checked as a new one is.
                    held = held_back_reason(store.get(head).text, "team") if local.source == "team" else ""
                    if held:
                        store.set_state(head, "quarantined", f"{held}, from {member}")
                    else:
                        store.reopen(head, reason or "current again on the team")
            elif team_memory.state != local.state:  # a supersede's link and "was" note follow with the links
                store.set_state(head, team_memory.state, reason, until=team_memory.valid_to or "")
                if team_memory.state == "forgotten":  # as a forget here: unpinned, and not found through the archive
                    store.set_pinned(head, False)
                    store.hide_archived(head)
        done = [(head, team_memory.id, signature(store.get(head)))]
        done += [(i, team_memory.id, signature(states[i])) for i in locals_ if i != head and i not in mapped]
        store.set_team_map(self.team, done)
        for local_id, remote_id, synced in done:
            mapped[local_id] = (remote_id, synced)
            if local_id not in by_remote.setdefault(remote_id, []):
                by_remote[remote_id].append(local_id)
        return True

    def _representative(self, states: dict[int, StoredMemory], digest: str) -> int:
        """Which of the local memories that are one team memory stands for it here (pull and doubles agree):
        one this machine holds back (forgotten, quarantined, its own), else the one saying the team's words,
        else a current one, else the oldest."""
        return min(states, key=lambda i: (states[i].state not in VETOES and follows_team(states[i], self._shared),
                                          content_hash(states[i].text) != digest,
                                          states[i].state not in CURRENT_STATES, i))

    def _as_taken(self, team_memory: StoredMemory) -> tuple[StoredMemory, str]:
        """(the team row as this machine takes it, redacted in every field; why it is not taken at all, or '')."""
        unfit = _unfit(team_memory)
        if unfit:
            return team_memory, (f"team memory #{team_memory.id} not taken here (nor read again unless it changes "
                                 f"on the team): {unfit}")
        fields = [getattr(team_memory, name).translate(NOT_SHOWN) for name in _TEXTS]  # (no escape sequence)
        names = {name: redact(getattr(team_memory, name).translate(NOT_SHOWN))[0] for name in _NAMES if name != "role"}
        known = known_in(" ".join(fields), *self._secrets)
        given = fields[3].split()
        words = [k for k in given if k not in known and not redact(k)[1]]  # a secret by its shape, as written
        text, subject, value, keywords, kinds = redact_memory(fields[0], fields[1], fields[2], words, known=known)
        if kinds and mostly_redacted(text):
            return team_memory, (f"team memory #{team_memory.id} not taken here (nor read again unless it changes "
                                 "on the team): it is mostly secrets")
        changed = {name: value for name, value in names.items() if value != getattr(team_memory, name)}
        if not kinds and words == given and not changed and fields == [getattr(team_memory, n) for n in _TEXTS]:
            return team_memory, ""
        values = {name: getattr(team_memory, name) for name in StoredMemory.__slots__}
        values.update(text=text, subject=subject, value=value, keywords=" ".join(keywords), **changed)
        if kinds or words != given or any("[REDACTED:" in value for value in changed.values()):
            kinds = sorted(set(kinds)) or ["a secret"]
            self.report.notes.append(f"team memory #{team_memory.id}: {', '.join(kinds)} redacted here")
        return StoredMemory(**values), ""

    def _note(self, text: str) -> str:
        """A note the server holds (a state's reason, a link's reason or "was", a member's name), as this machine
        keeps it: without control characters, redacted, and none at all when it is long or reads like an attempt on
        the assistant (a "was" note is in every block)."""
        if not text:
            return text
        text = text.translate(NOT_SHOWN)
        text = redact(text, known_in(text, *self._secrets))[0]
        return "" if len(text) > 500 or takeover_reason(text) else text

    def _as_new(self, team_memory: StoredMemory) -> NewMemory:
        return NewMemory(project=self.project, category=team_memory.category, text=team_memory.text,
                         confidence=team_memory.confidence, rule_id=team_memory.rule_id or "team",
                         role=team_memory.role, session_id=team_memory.session_id, transcript="",
                         entry_uuid=team_memory.entry_uuid, ts=team_memory.first_seen, tentative=team_memory.tentative,
                         scope="project", subject=team_memory.subject, value=team_memory.value,
                         keywords=tuple(team_memory.keywords.split()), source="team")

    def _add_here(self, team_memory: StoredMemory, member: str, reason: str) -> int:
        held = held_back_reason(team_memory.text, "team") if team_memory.state in CURRENT_STATES else ""
        if held:  # held out of recall until `miner approve`, as the assistant's instruction-like words are
            state, reason = "quarantined", f"{held}, from {member}"
        else:
            state, reason = team_memory.state, reason or f"from the team ({member})"
        memory_id = self.store.insert_memory(self._as_new(team_memory), state=state)
        self.store.set_state(memory_id, state, reason, until=team_memory.valid_to or "")
        return memory_id

    def _take_links(self, links: list[tuple[int, object]], stalled: int) -> tuple[int, int]:
        """Apply team links in order; returns (the last seq taken, the seq stopped at or 0). A link whose
        memories are not here yet stops the pass (they come with the next pull), unless it stopped there before."""
        store = self.store
        by_remote = self._locals_by_remote()
        by_hand = {m.id: m.source == "manual" for m in self.remote.memories_by_id(
            {link.src for _, link in links if link.kind == "supersedes"})}  # (one look-up for the pass)
        done, taken = [], 0
        for seq, link in links:
            src, dst = by_remote.get(link.src), by_remote.get(link.dst)
            if (not src or not dst) and seq != stalled:
                store.set_team_map(self.team, done)
                return taken, seq
            taken = seq
            if not src or not dst or link.kind != "supersedes":
                continue
            newer = self._representative({i: store.get(i) for i in src}, "")
            older = self._representative({i: store.get(i) for i in dst}, "")
            if newer == older or not follows_team(store.get(older), self._shared):
                continue
            if store.get(older).state in CURRENT_STATES:
                team_memory = self.remote.get(link.dst)
                if team_memory is None or team_memory.state in CURRENT_STATES:  # reopened on the team since
                    store.note_replacement(newer, older, self._note(link.reason), _when(link.created_at))
                    continue
            # The link with its "was" note; closes the older memory here when it is still open.
            store.supersede(newer, older, self._note(link.reason), short(self._note(link.was)),
                            at=_when(link.created_at))
            if by_hand.get(link.src):  # corrected by hand: what it replaced is not found again through the archive,
                store.hide_archived(older)  # as after a correction here
            done.append((older, link.dst, signature(store.get(older))))
        store.set_team_map(self.team, done)
        return taken, 0

    def _resolve_doubles(self) -> None:
        """Local memories the team merged into one: one stays (a forgotten one, else a current one, else the
        first), the others close as its repeats."""
        doubles = {remote: sorted(ids) for remote, ids in self._locals_by_remote().items() if len(ids) > 1}
        if not doubles:
            return
        team_words = {m.id: content_hash(m.text) for m in self.remote.memories_by_id(sorted(doubles))}
        done = []
        with self.store.atomic():
            for remote_id, ids in doubles.items():
                states = {i: self.store.get(i) for i in ids}
                head = self._representative(states, team_words.get(remote_id, ""))
                for other in [i for i in ids if i != head]:
                    local = self.store.get(other)
                    if local.state in CURRENT_STATES and follows_team(local, self._shared):
                        self.store.supersede(head, other, "the team holds these as one memory", short(local.text))
                    done.append((other, self._remote_of(other), signature(self.store.get(other))))
            self.store.set_team_map(self.team, done)

    def _remote_of(self, local_id: int) -> int:
        return self.store.team_map(self.team)[local_id][0]
