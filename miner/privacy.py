"""Privacy and trust: excluded projects, quarantine of instruction-like memories, and purge.

- Exclusions are globs of project folders kept in
  `$XDG_CONFIG_HOME/miner/exclusions.json`; an excluded project is never
  mined and never injected. Reading them needs the standard library only
  (`is_excluded`), because the hooks check them.
- Quarantine: a memory from a non-user source (the assistant) that reads
  like an instruction to the assistant ("ignore previous…", "always run…",
  "from now on…", a command that fetches and executes) is stored with state
  `quarantined`: never recalled, listed by `miner quarantine`, released
  only by `miner approve ID`. Tool output, attachments and thinking never
  reach the rules at all (see `transcript`).
- Reported speech: assistant prose that reports what a file, page or tool
  said is not the user's preference or decision.
- Purge: every row of a project, evidence and archive included, then FTS rebuild and VACUUM.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re

from . import paths

EXCLUSIONS_FILE = "exclusions.json"


class PrivacyError(ValueError):
    """A privacy command cannot do what was asked; the message says why, in one line."""


# --- exclusions (standard library only: the hooks read them) ---------------------------------


def exclusions_path():
    return paths.config_dir() / EXCLUSIONS_FILE


def load_exclusions() -> list[str]:
    """The excluded project globs; [] when there is no file. A broken file excludes nothing and says so."""
    try:
        with open(exclusions_path(), encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise PrivacyError(f"{exclusions_path()} is not valid JSON ({exc}); fix or remove it") from None
    globs = data.get("exclude") if isinstance(data, dict) else None
    if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
        raise PrivacyError(f"{exclusions_path()} must hold {{\"exclude\": [\"glob\", ...]}}; fix or remove it")
    return globs


def _save_exclusions(globs: list[str]) -> None:
    path = exclusions_path()
    paths.ensure_private_dir(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"exclude": globs}, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, path)


def normalise_glob(glob: str, cwd: str | None = None) -> str:
    """An absolute glob: `~` expanded, relative paths taken from `cwd`, no trailing slash.

    A glob that starts with a wildcard (`*/secret-*`) is kept as it is: it matches anywhere.
    """
    glob = os.path.expanduser(glob.strip())
    if not glob:
        raise PrivacyError("an empty glob would exclude nothing; give a project folder or a pattern")
    if not glob.startswith(("*", "?", "[", "/")):
        glob = os.path.join(cwd or os.getcwd(), glob)
    glob = glob.rstrip("/") or "/"
    return os.path.normpath(glob) if not any(c in glob for c in "*?[") else glob


def add_exclusion(glob: str, cwd: str | None = None) -> tuple[str, bool]:
    """(the glob as stored, True when it was not there yet)."""
    normal = normalise_glob(glob, cwd)
    globs = load_exclusions()
    if normal in globs:
        return normal, False
    _save_exclusions(globs + [normal])
    return normal, True


def remove_exclusion(glob: str, cwd: str | None = None) -> str:
    """Remove a glob (as given, or as `add` normalised it); returns what was removed."""
    globs = load_exclusions()
    for candidate in (glob, normalise_glob(glob, cwd)):
        if candidate in globs:
            _save_exclusions([g for g in globs if g != candidate])
            return candidate
    raise PrivacyError(f"{glob!r} is not excluded; `miner exclude list` shows the globs")


def is_excluded(path: str, globs: list[str] | None = None) -> bool:
    """True when a cwd or project folder (or a folder above it) matches an excluded glob.

    Never raises: a broken exclusions file must not break a hook, so it then
    errs on the safe side and excludes everything.
    """
    if not path:
        return False
    if globs is None:
        try:
            globs = load_exclusions()
        except PrivacyError:
            return True
    if not globs:
        return False
    candidates = {os.path.normpath(os.path.abspath(path))}
    try:
        candidates.add(os.path.normpath(paths.project_root(path)))
    except Exception:  # noqa: BLE001 - a probe failure only means one candidate fewer
        pass
    for candidate in candidates:
        for glob in globs:
            if fnmatch.fnmatchcase(candidate, glob) or fnmatch.fnmatchcase(candidate, glob.rstrip("/") + "/*"):
                return True
    return False


# --- trust: quarantine and reported speech ---------------------------------------------------

_INSTRUCTION_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("overrides earlier instructions", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
        r"(?:previous|prior|above|earlier|preceding|existing|original|system)\s+"
        r"(?:instructions?|prompts?|messages?|rules?|context|guidelines?|directions?)", re.IGNORECASE)),
    ("standing order", re.compile(r"\b(?:from now on|henceforth|going forward|for all future (?:sessions|tasks))\b",
                                  re.IGNORECASE)),
    ("standing order", re.compile(
        r"\b(?:always|never|must)\s+(?:first\s+)?(?:run|execute|exec|call|invoke|fetch|download|curl|wget|install|"
        r"pipe|send|post|upload|source|eval|import|load|visit|open)\b", re.IGNORECASE)),
    ("addressed to the assistant", re.compile(
        r"(?:^|[\s\"'`(])(?:remember|important|note to (?:the )?(?:assistant|ai|model|agent|claude))\s*:"
        r"|\b(?:assistant|claude|ai model|language model|llm|agent)s?,?\s+(?:you\s+)?(?:must|should|shall|will|need to)\b"
        r"|\b(?:new|updated|hidden|secret)\s+(?:system\s+)?instructions?\b|\bsystem prompt\b", re.IGNORECASE)),
    ("fetch and execute", re.compile(
        r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?"
        r"(?:ba|z|da|k|fi|c)?sh\b"
        r"|\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?"
        r"(?:python3?|node|ruby|perl|php|iex|invoke-expression)\b"
        r"|\b(?:ba|z|k)?sh\s+(?:-c\s+)?[\"']?<?\(\s*(?:curl|wget)\b"
        r"|\b(?:eval|source|\.)\s+[\"']?\$?[<(]\(?\s*(?:curl|wget)\b"
        r"|\biex\s*\(?\s*(?:\(?\s*new-object|irm|iwr|invoke-webrequest)"
        r"|\b(?:download|fetch|get|grab|pull)\s+(?:and|&|then)\s+(?:run|execute|exec|source|eval)\b"
        r"|\b(?:run|execute|source|eval|exec)\s+(?:the\s+)?(?:script|file|code|payload|installer|binary)\s+"
        r"(?:at|from)\s+(?:https?://|ftp://)", re.IGNORECASE)),
]
_REPORTED_RE = re.compile(
    r"^\s*(?:according to|as (?:stated|noted|mentioned|described|documented|recommended) (?:in|by)|per the)\b"
    r"|\b(?:file|readme|page|web ?page|website|site|docs?|documentation|tool|output|log|logs|comment|issue|article|"
    r"results?|command|script|config(?:uration)?|error|message|response|guide|changelog|manual|wiki|ticket|email|"
    r"instructions|notes|\w+\.(?:md|txt|rst|json|ya?ml|toml|html?|py|js|ts|sh))\b[^.!?;]{0,40}?"
    r"\b(?:says?|said|states?|stated|mentions?|mentioned|recommends?|recommended|suggests?|suggested|tells?|told|"
    r"instructs?|instructed|reads|notes|claims?|claimed|warns?|indicates?|asks?|asked|wants?|requires?|explains?)\b",
    re.IGNORECASE,
)


def instruction_reason(text: str) -> str:
    """Why `text` reads like an instruction to the assistant, or '' when it does not."""
    for reason, pattern in _INSTRUCTION_PATTERNS:
        if pattern.search(text):
            return reason
    return ""


def quarantine_reason(role: str, text: str) -> str:
    """Why a memory from `role` must be quarantined, or ''. The user's own words are trusted."""
    if role == "user":
        return ""
    reason = instruction_reason(text)
    return f"quarantined: {role} text reads like an instruction to the assistant ({reason})" if reason else ""


def reports_source(text: str) -> bool:
    """True when prose reports what a file, page or tool said, rather than stating something itself."""
    return bool(_REPORTED_RE.search(text))


def quarantined(store, project: str | None = None, limit: int = 1000) -> list:
    """Quarantined memories, newest first."""
    return store.list_memories(project, None, ("quarantined",), limit)


def approve(store, memory_id: int) -> str:
    """Release a quarantined memory: it becomes active and can be recalled. Returns a line saying so."""
    memory = store.get(memory_id)
    if memory is None:
        raise PrivacyError(f"no memory {memory_id}; `miner quarantine` lists the quarantined ones")
    if memory.state != "quarantined":
        raise PrivacyError(f"memory {memory_id} is {memory.state}, not quarantined; nothing to approve")
    with store.transaction() as db:
        store.set_state(db, memory_id, "active", "approved by the user (was quarantined)")
    return f"#{memory_id} approved: it can be recalled now. [{memory.category}] {memory.text}"


# --- the right to forget -------------------------------------------------------------------------


def purge(store, project: str) -> dict[str, int]:
    """Delete every row of `project` (memories, evidence, links, wordings, sessions, checkpoints,
    watermarks, recall log, archive), rebuild the full-text indexes and vacuum. Returns counts by table.

    Entry uuids stay in `seen_entries` (they hold no text): the purged
    transcripts are not mined again; what is said in the project later is,
    unless it is excluded too.
    """
    db = store.db
    counts: dict[str, int] = {}
    db.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left for a hex editor
    with store.transaction() as db:
        ids = "SELECT id FROM memories WHERE project = ?"
        for table, where in (("evidence", f"memory_id IN ({ids})"),
                             ("links", f"src IN ({ids}) OR dst IN ({ids})"),
                             ("memory_hashes", f"memory_id IN ({ids}) OR project = ?")):
            marks = where.count("?")
            counts[table] = db.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", (project,) * marks).fetchone()[0]
        # Evidence, links and wordings go with their memories (ON DELETE CASCADE); the trigger clears FTS rows.
        db.execute("DELETE FROM links WHERE src IN (SELECT id FROM memories WHERE project = ?) "
                   "OR dst IN (SELECT id FROM memories WHERE project = ?)", (project, project))
        db.execute("DELETE FROM memory_hashes WHERE project = ?", (project,))
        db.execute("DELETE FROM evidence WHERE memory_id IN (SELECT id FROM memories WHERE project = ?)", (project,))
        counts = {"memories": db.execute("DELETE FROM memories WHERE project = ?", (project,)).rowcount, **counts}
        for table in ("sessions", "checkpoints", "watermarks", "recall_log", "archive"):
            counts[table] = db.execute(f"DELETE FROM {table} WHERE project = ?", (project,)).rowcount
        # Deleted rows leave their tokens in FTS5 segments until they merge: rebuild from the content tables.
        db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
        db.execute("INSERT INTO archive_fts (archive_fts) VALUES ('rebuild')")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    counts["cached blocks"] = clear_block_cache()
    return counts


def clear_block_cache() -> int:
    """Remove every pre-rendered recall block: a block of another project may show this one's global memories."""
    from . import blockcache

    removed = 0
    folder = blockcache.cache_dir()
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file():
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    pass
    return removed


def secure_files() -> list[str]:
    """Make $MINER_HOME 0700 and every file in it 0600; returns what was changed."""
    changed = []
    root = paths.data_dir()
    if not root.is_dir():
        return changed
    import stat

    for folder, dirs, files in os.walk(root):  # os.walk does not descend into symlinked folders
        for name, mode in [(folder, 0o700)] + [(os.path.join(folder, f), 0o600) for f in files]:
            try:
                st = os.lstat(name)
                # A symlink planted in the data folder must not make us change a file elsewhere.
                if stat.S_ISLNK(st.st_mode):
                    continue
                if st.st_mode & 0o777 != mode:
                    os.chmod(name, mode, follow_symlinks=False) if os.chmod in os.supports_follow_symlinks \
                        else os.chmod(name, mode)
                    changed.append(name)
            except OSError:
                pass
    return changed


def store_quarantined(store, db, new, reason: str) -> bool:
    """Store an untrusted, instruction-like memory as quarantined (exact dedup only); True when a row was created.

    It bypasses near-duplicate and conflict handling, so it can neither
    reword nor supersede a trusted memory.
    """
    from .textutil import content_hash

    row = store.find_exact(db, new.project, content_hash(new.text))
    if row is not None:
        store.merge_evidence(db, row["id"], new)
        return False
    memory_id = store.insert_memory(db, new, state="quarantined")
    store.set_state(db, memory_id, "quarantined", reason)
    store.bump(db, "memories_quarantined")
    return True
