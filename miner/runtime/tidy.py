"""Housekeeping: the files the miner's home gathers per session, removed once nothing has used them for a while, and
what writes cut short left (standard library only).

Every session leaves a block rendered for its compaction or resume (`cache/session-*.json`) and what it was shown
(`cache/shown-*.json`). Neither is needed once its session is over (a hook that finds none renders the block
again, or shows again what a later prompt asks), and they only grow: `tidy` removes those untouched for
`STALE_DAYS`, with what a process cut short left behind (a record handed to a worker that never took it, a
write's temp file, here or beside Claude Code's settings). The worker runs it once a day (`tidy_if_due`), and
`miner gc` whenever it runs.

The locks folder keeps its lock files and marks (one lock per transcript, empty): whoever holds a lock is taken
for a miner by the hooks, so a remover holding one for a moment would leave a Stop's lines unmined; and a lock's or
a mark's time is when it was made, not when it was last used.
"""

from __future__ import annotations

import os
import time

from .. import paths

STALE_DAYS = 30
LEFT_S = 86_400  # a handed record or a temp file this old was left by a process that is gone
DUE_S = 86_400
STAMP = "tidied"  # in the cache folder: when `tidy_if_due` last ran


def tidy(now: float | None = None, stale_days: float = STALE_DAYS) -> int:
    """Remove what ended sessions and cut-short processes left; how many files went."""
    now = time.time() if now is None else now
    stale, left = now - stale_days * 86_400, now - LEFT_S
    removed = 0
    cache = paths.data_file("cache")
    claude = paths.claude_root()  # (only the temp files of our own writes of its settings: `install.settings`)
    for folder in (cache, os.path.join(cache, "textcat"), os.path.join(cache, "regex"), paths.data_file("locks"),
                   paths.config_root(), claude):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                mtime = entry.stat(follow_symlinks=False).st_mtime
                ended = folder == cache and name.endswith(".json") and name.startswith(("session-", "shown-"))
                handed = folder == cache and name.endswith(".json") and name.startswith("recall-")
                ours = folder != claude or name.startswith((".settings.json.", ".settings.local.json."))
                if ended and mtime < stale or (handed or ours and name.endswith(".tmp")) and mtime < left:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


def tidy_if_due(now: float | None = None) -> int:
    """`tidy`, when it has not run for a day (one `stat` otherwise); how many files went."""
    now = time.time() if now is None else now
    stamp = paths.data_file("cache", STAMP)
    try:
        if now - os.stat(stamp).st_mtime < DUE_S:
            return 0
    except FileNotFoundError:
        pass
    removed = tidy(now)
    paths.write_private(stamp, "")
    return removed
