"""Recall blocks rendered ahead of time, so that SessionStart can answer without rendering.

Standard library only on the reading side (the SessionStart hook); the
rendering side imports `recall` and `store` when it runs (workers, PreCompact).

The worker renders a project's startup block after its last write, and
PreCompact renders the session's block after writing its checkpoint. Each
entry records what it was rendered from: the database file's identity (its
inode: a restored backup is another file), the versions the store keeps of
the project's rows and of the global memories, the settings file and the
code. SessionStart uses an entry only when all of these are unchanged;
anything else (no entry, a stale or unreadable one, a store without versions)
falls back to rendering from the store, so a cache entry can make SessionStart
faster, never show what the store no longer says.

The versions (`memory.migrations.m008_block_versions`) move with every write
to the project's memories, their links, its sessions and its checkpoints, by
triggers in the database; writes to anything else leave an entry valid: the
recall record that the hook which showed the block leaves behind, and another
project's mining. Recall counts have versions of their own, which only a
block that weighs them (after a compaction, on resume) depends on. One thing
an entry does not follow: BM25 weighs a term by its frequency over every
project's memories, so another project's writes could move a score by a hair.
"""

from __future__ import annotations

import os

from .. import jsonlite, paths

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from pathlib import Path

FORMAT = 2  # 2: the store's state is its versions of the project's rows, not the file's metadata
# Claude Code cuts additionalContext over 10,000 characters (JavaScript length: UTF-16 units).
CONTEXT_LIMIT = 10_000
HARD_CHAR_CAP = CONTEXT_LIMIT - 1
_PACKAGE_DIR = os.path.dirname(os.path.abspath(paths.__file__))


cache_dir = paths.cache_dir


# An entry's path is a plain string (no `pathlib` on the hook path; see `paths`).
def startup_path(project: str) -> str:
    return paths.data_file("cache", f"startup-{paths.file_stem(project)}.json")


def session_path(session_id: str) -> str:
    return paths.data_file("cache", f"session-{paths.file_stem(session_id)}.json")


# --- what an entry must match ----------------------------------------------------------


def store_state(project: str, situation: str) -> list | None:
    """What a block of `project` in `situation` was drawn from, read from the store: the database file's
    inode and the versions of its rows (and of their recall counts, but for a new session's block, which
    does not weigh them); None when there is no database or it keeps no versions yet."""
    from ..memory import reader

    db = paths.data_file(paths.DB_NAME)
    try:
        inode = os.stat(db).st_ino
    except FileNotFoundError:
        return None
    versions = reader.block_versions(db, project, with_recalls=situation != "startup")
    return None if versions is None else [inode, *versions]


def code_state() -> list:
    """The installed code's identity: an upgrade or an edit of any module re-renders."""
    stamps: list[int] = []
    folders = [_PACKAGE_DIR]
    while folders:  # the package and its stage subpackages (not the data folders, which hold no code)
        for entry in os.scandir(folders.pop()):
            if entry.name.endswith(".py"):
                stamps.append(entry.stat().st_mtime_ns)
            elif entry.is_dir() and os.path.exists(os.path.join(entry.path, "__init__.py")):
                folders.append(entry.path)
    return [len(stamps), max(stamps, default=0)]


def config_state() -> str | None:
    """The user's settings file as it is now (`paths.config_file()`, read without importing `config`,
    whose `typing` import costs milliseconds); the defaults are part of the code."""
    try:
        return paths.read_small(paths.config_file())
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return "unreadable"


def load(path: str | Path) -> dict | None:
    """The entry at `path` if it was rendered from the current store, settings and code; else None."""
    try:
        entry = jsonlite.loads(paths.read_small(os.fspath(path)))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    if not isinstance(entry.get("text"), str) or not isinstance(entry.get("record"), dict):
        return None
    if entry.get("code") != code_state() or entry.get("config_file") != config_state():
        return None
    if not isinstance(entry.get("project"), str) or not isinstance(entry.get("situation"), str):
        return None
    if entry.get("state") != store_state(entry["project"], entry["situation"]):
        return None
    return entry


def save(path: str | Path, entry: dict) -> None:
    import json

    paths.write_private(path, json.dumps(entry, ensure_ascii=False))  # a reader never sees half an entry


# --- rendering ------------------------------------------------------------------------------


def fit_block(text: str, limit: int = HARD_CHAR_CAP) -> str:
    """`text` if it fits `limit` UTF-16 units; else its whole lines that fit, with the closing tag kept."""
    from ..textutil import utf16_len  # (here: a SessionStart served from an entry loads no more than it needs)

    if utf16_len(text) <= limit:
        return text
    lines = text.split("\n")
    closing = lines[-1] if lines[-1].startswith("</") else ""
    body = lines[:-1] if closing else lines
    kept: list[str] = []
    used = utf16_len(closing) + 1
    for line in body:
        cost = utf16_len(line) + 1
        if used + cost > limit:
            break
        kept.append(line)
        used += cost
    return "\n".join(kept + ([closing] if closing else []))


def render(store, project: str, config: dict, situation: str, session_id: str = "") -> tuple[str, dict | None]:
    """(block text, what to record) from the store; ('', None) when there is nothing to show."""
    text, record, _ = render_recall(store, project, config, situation, session_id)
    return text, record


def render_recall(store, project: str, config: dict, situation: str, session_id: str = ""):
    """(block text, what to record, the built `block.Recall`) from the store, the text exactly as the hook
    injects it; ('', None, recall) when there is nothing to show."""
    from .. import config as config_mod
    from ..textutil import utf16_len
    from .block import build, log_record

    budget = min(config_mod.budget_chars(config), HARD_CHAR_CAP)
    recall = build(store, project, config, situation=situation, session_id=session_id, budget_chars=budget,
                   log=False)
    over = utf16_len(recall.text) - HARD_CHAR_CAP
    if over > 0:  # characters outside the BMP: shrink the budget by what they add
        recall = build(store, project, config, situation=situation, session_id=session_id,
                       budget_chars=max(200, budget - over - 50), log=False)
    if not (recall.shown or recall.checkpoint):
        return "", None, recall
    from ..extract.redaction_version import for_output
    from ..memory import reader

    text = fit_block(for_output(recall.text, reader.redaction_version(store.db)))
    return text, log_record(recall, len(text)), recall


def refresh(path: str | Path, project: str, situation: str, session_id: str = "") -> bool:
    """Render and save the entry at `path` unless it is current; True when one was written.

    Rendered with the settings as the file holds them now (not as a long-running caller, the watcher, loaded them
    when it started: the entry is stamped with the file it was rendered from). Call it with no write transaction
    open in this process: the state is taken before reading, and an entry whose store or settings changed meanwhile
    is not saved.
    """
    from .. import config as config_mod
    from ..memory.store import Store

    if load(path) is not None:
        return False
    state, settings = store_state(project, situation), config_state()
    if state is None:
        return False
    config = config_mod.load()
    with Store(readonly=True) as store:
        text, record = render(store, project, config, situation, session_id)
    if store_state(project, situation) != state or config_state() != settings:
        return False  # written meanwhile: the next worker renders it
    save(path, {"format": FORMAT, "state": state, "code": code_state(), "config_file": settings,
                "project": project, "situation": situation, "session_id": session_id, "text": text,
                "record": record or {}})
    return True
