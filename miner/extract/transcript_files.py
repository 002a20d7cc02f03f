"""Which files are Claude Code transcripts: regular `.jsonl` files under its projects folder, reached through no
symlink (standard library only)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def real_path_below(path: str | Path, root: str | Path) -> str | None:
    """`path` spelled under the real path of `root`, when it lies under `root` (as given or as real); else None."""
    absolute = os.path.abspath(path)
    root_real = os.path.realpath(root)
    for base in (os.path.abspath(root), root_real):
        if absolute == base:
            return root_real
        if absolute.startswith(base.rstrip(os.sep) + os.sep):
            return root_real.rstrip(os.sep) + os.sep + absolute[len(base.rstrip(os.sep)) + 1:]
    return None


def contained_transcript(path: str | Path, root: str | Path) -> str | None:
    """The real path of `path` when it is a regular `.jsonl` file under `root` reached through no symlink; else None.

    `root` (Claude Code's projects folder) may itself be a symlink: the user put
    it there. Below it Claude Code writes plain files in plain folders, so any
    symlink there (the file or a folder on the way) is refused, wherever it points.
    """
    candidate = real_path_below(path, root)
    if candidate is None or not candidate.endswith(".jsonl") or os.path.realpath(candidate) != candidate:
        return None
    try:
        mode = os.lstat(candidate).st_mode
    except OSError:
        return None
    return candidate if stat.S_ISREG(mode) else None


def transcript_files(folder: str | Path, root: str | Path, unreadable: list[str] | None = None) -> list[str]:
    """Real paths of the regular `.jsonl` files under `folder` (subagent folders included), sorted; `unreadable`
    receives the folders that could not be listed (permissions). Nothing is reached through a symlink: a symlinked
    file or folder below `root` is skipped, whether it points outside (it must never be read) or inside (what it
    points at is found on its own), and a `folder` that is or lies behind a symlink yields nothing. `folder` must
    lie under `root`."""
    start = real_path_below(folder, root)
    if start is None or os.path.realpath(start) != start:
        return []
    found: list[str] = []
    pending = [start]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    try:
                        if entry.is_symlink():
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                            found.append(entry.path)
                    except OSError:
                        continue
        except OSError as exc:  # gone, or unreadable: nothing to mine there (the caller may say so)
            if isinstance(exc, PermissionError) and unreadable is not None:
                unreadable.append(current)
    return sorted(found)
