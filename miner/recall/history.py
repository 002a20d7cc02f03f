"""Recall across the whole of a project's history, not only its latest sessions.

Ranking policy over two plain store queries (`Store.session_times`, `Store.latest_ids`):
the project's sessions are cut into stretches, and each stretch gives its latest
decisions and facts, so that an old stretch of work still has a voice in the block.
"""

from __future__ import annotations

# Preferences and todos are few: `Store.candidates` holds the latest sixty of each, whatever their age.
KINDS = (("decision", ""), ("fact", ""), ("decision", "user"), ("fact", "user"))


def history_ids(store, project: str, stretches: int = 16, per_stretch: int = 2) -> list[int]:
    """Ids of active memories from every stretch of a project's history (in `store`, a `memory.store.Store`).

    The project's sessions are cut into up to `stretches` runs of consecutive sessions; from each
    run come the ids of its `per_stretch` latest decisions and facts, and as many in the user's own
    words. Each query walks one range of an index, so the cost grows with the number of
    stretches, not with the size of the store.
    """
    stamps = store.session_times(project)
    if len(stamps) < 2:
        return []
    count = min(stretches, len(stamps))
    # A stretch holds what was said after the previous stretch's last session and up to its own last one.
    ends = [stamps[int((i + 1) * len(stamps) / count) - 1] for i in range(count - 1)] + ["\uffff"]
    ranges = [(low, high) for low, high in zip([""] + ends, ends) if low < high]
    ids: dict[int, None] = {}
    for low, high in ranges:
        for category, role in KINDS:
            ids.update((memory_id, None) for memory_id in store.latest_ids(project, category, role, low, high,
                                                                            per_stretch))
    return list(ids)
