"""Corrections by hand: forget, correct, pin, unpin, and the history of a memory.

Each function changes the store in one transaction and returns a `Change`
saying what it did, for the CLI to print. Nothing is deleted: a forgotten
memory keeps its row (state `forgotten`), so that its content hash keeps
absorbing the same text when a transcript is mined again; a corrected one is
closed and linked to its replacement, like a conflict found by mining.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ..extract.clean import typed_text
from ..extract.redact import ensure_extra, mostly_redacted, redact
from ..extract.secret_turns import known_in
from ..textutil import content_hash, short
from .records import NewMemory, StoredMemory, now_iso
from .store import Store

MANUAL_RULE = "manual"
MAX_TEXT_CHARS = 1_000  # a corrected memory, as long as one the MCP server stores: a block has room for it
MAX_REASON_CHARS = 2_000  # why a memory was forgotten or corrected: a few sentences, which `show` and `history` print


class CorrectionError(ValueError):
    """The correction cannot be made; the message says why and what to do."""


@dataclass(frozen=True)
class Change:
    """What a correction did: the memory, the action, and one line per change."""

    memory_id: int
    action: str  # forgotten | corrected | pinned | unpinned | unchanged
    lines: tuple[str, ...]
    new_id: int | None = None


@dataclass(frozen=True)
class Version:
    memory: StoredMemory
    replaced: tuple[tuple[int, str], ...] = ()  # (older id, reason) this version superseded
    wordings: tuple[str, ...] = ()  # earlier wordings merged into it as near-duplicates


@dataclass(frozen=True)
class History:
    memory_id: int
    versions: tuple[Version, ...] = field(default_factory=tuple)

    @property
    def current(self) -> tuple[int, ...]:
        return tuple(v.memory.id for v in self.versions if v.memory.state in ("active", "cold"))


def _get(store: Store, memory_id: int) -> StoredMemory:
    memory = store.get(memory_id)
    if memory is None:
        raise CorrectionError(f"no memory #{memory_id}; `miner list` shows the ids")
    return memory


def _successor(store: Store, memory_id: int) -> int | None:
    """The current version that replaced `memory_id`, following the chain forward (the newest link first)."""
    seen, current = {memory_id}, memory_id
    while True:
        found = store.latest_superseder(current)
        if found is None or found[0] in seen:
            return current if current != memory_id else None
        src, state = found
        if state in ("active", "cold"):
            return src
        seen.add(src)
        current = src


def _closed_error(store: Store, memory: StoredMemory, verb: str, done: str) -> CorrectionError:
    """Why a closed memory cannot be pinned or corrected, naming the current version when there is one."""
    if memory.state == "superseded":
        successor = _successor(store, memory.id)
        state = store.get(successor).state if successor else ""
        if state in ("active", "cold"):
            return CorrectionError(f"memory #{memory.id} is superseded by #{successor}; {verb} #{successor} instead")
        if successor:  # (its replacement was forgotten since, or quarantined: nothing of it is recalled)
            return CorrectionError(f"memory #{memory.id} is superseded by #{successor}, which is {state}: nothing "
                                   f"of it is recalled (`miner history {memory.id}` shows its chain)")
        return CorrectionError(f"memory #{memory.id} is superseded; `miner history {memory.id}` shows its chain")
    return CorrectionError(f"memory #{memory.id} is {memory.state}; only a current memory can be {done}")


def _redacted(store: Store, text: str) -> tuple[str, list[str]]:
    """A text typed by hand, without what it says in `<private>`, redacted, with the secrets mining learnt too (one
    typed bare is hidden)."""
    from ..extract.secret_rules import SecretRuleError

    try:
        ensure_extra()  # the secret kinds of the YAML files, as mining hides them
    except SecretRuleError as exc:
        raise CorrectionError(f"{exc}; fix it (`miner rules check`) first: nothing changed") from None
    text = typed_text(text)
    return redact(text, known_in(text, *store.secret_digests()))


def _same_words(typed: str, text: str) -> bool:
    """Whether `typed` says `text` again, written as typed in a hurry: but for its closing stop, and the case of its
    first letter where the first word is otherwise lower case ("use pnpm" for "Use pnpm."; not "iOS" for "IOS")."""
    def loose(words: str) -> str:
        words = " ".join(words.split()).rstrip(".!?。！？")
        first = words.split(" ", 1)[0]
        return words[:1].lower() + words[1:] if first[1:] == first[1:].lower() else words
    return loose(typed) == loose(text)


def _check_reason(reason: str) -> None:
    if len(reason.strip()) > MAX_REASON_CHARS:
        raise CorrectionError(f"the reason is {len(reason.strip()):,} characters; at most {MAX_REASON_CHARS:,}: say "
                              "why in a few sentences (nothing changed)")


def forget(store: Store, memory_id: int, reason: str = "") -> Change:
    """Never recall this memory again; mining the same text again does not bring it back."""
    _check_reason(reason)
    memory = _get(store, memory_id)
    if memory.state == "forgotten":
        return Change(memory_id, "unchanged", (f"#{memory_id} was already forgotten: {memory.text}",))
    # A reason typed by hand is stored and printed like any text (and without one, a broken secrets file does not
    # stand in the way of forgetting).
    reason = _redacted(store, reason)[0] if reason.strip() else ""
    note = reason.strip() or "forgotten by hand"
    with store.atomic():
        store.set_state(memory_id, "forgotten", note)
        store.set_pinned(memory_id, False)
        store.hide_archived(memory_id)  # nor is it found again through the archive of what was said
    lines = [f"#{memory_id} forgotten (was {memory.state}{', pinned' if memory.pinned else ''}): {memory.text}"]
    if reason.strip():
        lines.append(f"reason: {reason.strip()}")
    return Change(memory_id, "forgotten", tuple(lines))


def correct(store: Store, memory_id: int, text: str, reason: str = "", by: tuple[str, str, str, float] = ()) -> Change:
    """Replace a memory's text: the new text becomes a memory of its own that supersedes the old one. `by`: who
    corrects it, as (role, source, rule id, confidence), when not the user by hand (the assistant, through MCP: its
    wording never carries the user's authority)."""
    _check_reason(reason)
    memory = _get(store, memory_id)
    # Redacted whole, before its white space is collapsed (lists keep their lines), and with the secrets mining
    # learnt: one typed bare into a correction is hidden too.
    text, kinds = _redacted(store, text)
    text = " ".join(text.split())
    reason = _redacted(store, reason)[0]
    if not text:
        raise CorrectionError("the new text is empty: give the memory's corrected words")
    if not any(c.isalnum() for c in text):
        raise CorrectionError("the new text has no letter nor digit: give the memory's corrected words")
    if len(text) > MAX_TEXT_CHARS:
        raise CorrectionError(f"the new text is {len(text):,} characters; a memory holds at most {MAX_TEXT_CHARS:,}: "
                              "say it shorter (nothing changed)")
    if kinds and mostly_redacted(text):
        raise CorrectionError("the new text is mostly secrets; nothing changed (memories never keep secrets)")
    _refuse_to_correct_twice(store, memory)
    if _same_words(text, memory.text):  # (another case or markup inside is a correction: "github" → "GitHub")
        return Change(memory_id, "unchanged", (f"#{memory_id} already says that: {memory.text}",))
    note = reason.strip() or "corrected by hand"
    stamp = now_iso()
    subject, value = _subject_value(text, memory)
    role, source, rule_id, confidence = by or ("user", "manual", MANUAL_RULE, max(memory.confidence, 0.9))
    new = NewMemory(
        project=memory.project, category=memory.category, text=text, confidence=confidence,
        rule_id=rule_id, role=role, session_id="", transcript="", entry_uuid=f"{source}:{uuid.uuid4()}",
        ts=stamp, git_branch=memory.git_branch, tentative=False, scope=memory.scope, subject=subject, value=value,
        source=source,
    )
    lines = []
    with store.atomic():
        memory = _get(store, memory_id)  # again, under the write lock: another process may have superseded it
        _refuse_to_correct_twice(store, memory)
        existing = store.find_exact(memory.project, content_hash(text))
        if existing is not None and existing.id == memory_id:
            # Back to one of its own earlier wordings, or another case or markup: the same memory, reworded.
            if memory.state in ("forgotten", "quarantined"):  # (it would stay so, and nothing would be recalled)
                raise CorrectionError(f"#{memory_id} is {memory.state}, and the new text is the same memory (another "
                                      "case or markup, or an earlier wording of it): it would stay so; "
                                      + ("say it in other words" if memory.state == "forgotten" else
                                         f"`miner approve {memory_id}` releases it") + " (nothing changed)")
            store.merge_evidence(memory_id, new)
            store.reword(memory_id, new)
            if not by:  # the user's wording by hand now: the assistant's words never reword it (`dedup`)
                store.set_source(memory_id, "manual")
            return Change(memory_id, "corrected", (f"#{memory_id} reworded: {memory.text} → {text}",), memory_id)
        if existing is not None:
            _refuse_to_reopen(store, existing, memory_id)
            new_id = existing.id
            store.merge_evidence(new_id, new)
            if not by:  # (the user's wording by hand now, as a new memory would be)
                store.set_source(new_id, "manual")
            if existing.state != "active":
                store.reopen(new_id, note, at=stamp)
                lines.append(f"#{new_id} is current again ({existing.state} before): {existing.text}")
        else:
            new_id = store.insert_memory(new, pinned=memory.pinned)
            lines.append(f"#{new_id} added: {text}")
        if memory.state == "forgotten":
            # Stays forgotten (its text must not come back), but the history shows what replaced it.
            store.note_replacement(new_id, memory_id, note, stamp)
            lines.append(f"#{memory_id} stays forgotten, linked to #{new_id}")
        else:
            # The old value, where the new text is of the same subject; else the old text ("was: Fly.io" under a
            # decision on the database would say what it never was).
            replaced = existing.subject if existing is not None else subject
            was = memory.value if memory.value and replaced == memory.subject else short(memory.text)
            store.supersede(new_id, memory_id, note, was, at=stamp)
            store.hide_archived(memory_id)  # the wording corrected away is not found again through the archive
            lines.append(f"#{memory_id} stays quarantined (never recalled), linked to #{new_id}"
                         if memory.state == "quarantined" else
                         f"#{memory_id} superseded by #{new_id} (kept as history): {memory.text}")
    return Change(memory_id, "corrected", tuple(lines), new_id)


def corrected_to(store: Store, memory: StoredMemory) -> int | None:
    """The current version a correction gave a forgotten or quarantined memory (which stays as it was, linked to
    it); None when there is none."""
    if memory.state not in ("forgotten", "quarantined"):
        return None
    successor = _successor(store, memory.id)
    return successor if successor is not None and store.get(successor).state in ("active", "cold") else None


def _refuse_to_correct_twice(store: Store, memory: StoredMemory) -> None:
    """A superseded memory is corrected through its current version; so is a forgotten or quarantined one that a
    correction replaced already (it stays as it was, linked to its replacement): a second correction would make a
    second current version beside the first."""
    if memory.state == "superseded":
        raise _closed_error(store, memory, "correct", "corrected")
    successor = corrected_to(store, memory)
    if successor is not None:
        raise CorrectionError(f"memory #{memory.id} is {memory.state} and was corrected already: #{successor} "
                              f"is its current version; correct #{successor} instead (nothing changed)")


def _refuse_to_reopen(store: Store, existing: StoredMemory, corrected: int) -> None:
    """A correction whose text another memory holds already makes that one current again, unless it was forgotten
    (never recalled again), is quarantined (only `miner approve` releases it), or was replaced by a memory other than
    the one corrected (two versions would both be current)."""
    if existing.state == "forgotten":
        raise CorrectionError(f"#{existing.id} says that already and was forgotten: it stays forgotten "
                              "(nothing changed)")
    if existing.state == "quarantined":
        raise CorrectionError(f"#{existing.id} says that already and is quarantined: `miner approve {existing.id}` "
                              "releases it (nothing changed)")
    successor = _successor(store, existing.id) if existing.state == "superseded" else None
    if successor is not None and successor != corrected:
        raise CorrectionError(f"#{existing.id} says that already and was replaced by #{successor}: correct "
                              f"#{successor} instead (nothing changed)")


def pin(store: Store, memory_id: int, everywhere: bool = False) -> Change:
    """Always recall this memory; it never decays. `everywhere`: in every project (scope global)."""
    memory = _get(store, memory_id)
    if memory.state in ("superseded", "forgotten", "quarantined"):
        raise _closed_error(store, memory, "pin", "pinned")
    widen = everywhere and memory.scope != "global"
    if memory.pinned and memory.state == "active" and not widen:
        return Change(memory_id, "unchanged", (f"#{memory_id} was already pinned: {memory.text}",))
    lines = [f"#{memory_id} pinned: {memory.text}"]
    with store.atomic():
        store.set_pinned(memory_id, True)
        if widen:
            store.set_global(memory_id)
            lines.append(f"#{memory_id} is now recalled in every project")
        if memory.state == "cold":
            store.set_state(memory_id, "active", "pinned")
            lines.append(f"#{memory_id} back from cold storage")
    return Change(memory_id, "pinned", tuple(lines))


def unpin(store: Store, memory_id: int, everywhere: bool = False) -> Change:
    """Let this memory be ranked and decay like any other again. `everywhere`: and recall it in its own project
    only again (what `pin --global` widened)."""
    memory = _get(store, memory_id)
    narrow = everywhere and memory.scope == "global"
    if not memory.pinned and not narrow:
        return Change(memory_id, "unchanged", (f"#{memory_id} was not pinned: {memory.text}",))
    lines = [f"#{memory_id} unpinned: {memory.text}"] if memory.pinned else []
    with store.atomic():
        store.set_pinned(memory_id, False)
        if memory.state == "active" and store.state_reason(memory_id) == "pinned":  # (what brought it back from cold)
            store.set_state(memory_id, "active", "unpinned by hand: ranked and decays like any other")
        if narrow:
            store.set_global(memory_id, False)
            lines.append(f"#{memory_id} is recalled in its own project only again ({memory.project})")
    if memory.scope == "global" and not narrow:
        lines.append(f"#{memory_id} is still recalled in every project: `miner unpin {memory_id} --global` keeps it "
                     "to its own")
    return Change(memory_id, "unpinned", tuple(lines))


def history(store: Store, memory_id: int) -> History:
    """Every version of the topic `memory_id` belongs to, in the order they became current, following supersede links
    both ways."""
    _get(store, memory_id)
    seen, frontier = {memory_id}, [memory_id]
    while frontier:
        batch, frontier = frontier, []
        for link in store.supersede_links(batch):
            for other in (link.src, link.dst):
                if other not in seen:
                    seen.add(other)
                    frontier.append(other)
    links = store.supersede_links(seen)
    versions = []
    for mid in seen:
        memory = store.get(mid)
        if memory is None:
            continue
        replaced = tuple((link.dst, link.reason) for link in links if link.src == mid)
        wordings = tuple(dict.fromkeys(w.text for w in store.wordings(mid) if w.text != memory.text))  # (earlier only)
        versions.append(Version(memory, replaced, wordings))
    # In the order they became current: one superseded, then said again, is current from then on (`reopen`).
    versions.sort(key=lambda v: (v.memory.valid_from or v.memory.first_seen, v.memory.id))
    return History(memory_id, tuple(versions))


def version_end(memory) -> str:
    """Where a version of a memory's history ends, as `miner history` and the viewer say it: when it was superseded,
    "now" while it is current (active or cold), else its state."""
    if memory.state == "superseded":
        return (memory.valid_to or "")[:19]
    return "now" if memory.state in ("active", "cold") else memory.state


def format_history(found: History) -> list[str]:
    """Lines for `miner history`: one block per version, in the order they became current."""
    lines = [f"History of #{found.memory_id}: {len(found.versions)} version(s)"
             + (f", current: {', '.join('#' + str(i) for i in found.current)}" if found.current else ", none current")]
    for version in found.versions:
        m = version.memory
        until = version_end(m)
        marks = "".join([" pinned" if m.pinned else "", " unconfirmed" if m.tentative else ""])
        lines.append(f"#{m.id:<6} {m.state:<10} {m.valid_from[:19]} → {until}{marks}  [{m.category}]")
        lines.append(f"        {m.text}")
        if m.valid_from[:19] > m.first_seen[:19] and any(m.id == older for v in found.versions for older, _ in
                                                         v.replaced):  # (closed once, current again since)
            lines.append(f"        first said {m.first_seen[:19]}; superseded, then current again from "
                         f"{m.valid_from[:19]}")
        for older, reason in version.replaced:
            lines.append(f"        replaced #{older}: {reason}")
        for wording in version.wordings:
            lines.append(f"        also said as: {wording}")
        lines.append(f"        evidence: {m.evidence_count} in {m.session_count} session(s), source {m.source}")
    return lines



def _subject_value(text: str, old: StoredMemory) -> tuple[str, str]:
    """The subject and value the rules find in the corrected text; the old subject when none is found."""
    try:
        from ..extract import rules as rules_mod
        from ..runtime.mine import unit_langs

        ruleset = rules_mod.load_rules(rules_mod.rule_files(old.project))
        hits = ruleset.match(text, "user", unit_langs(text)) or ruleset.match(text, "assistant", unit_langs(text))
    except Exception:  # noqa: BLE001 - a broken rule file must not block a correction by hand
        hits = []
    if hits:
        return (hits[0].subject.lower() or old.subject), hits[0].value
    return old.subject, ""
