"""The settings files themselves (standard library only): read and checked as JSON, backed up, replaced atomically
in their own style, their mode kept, and removed when nothing but our own entries was in them (`apply`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from . import json_style

_FIX = "fix or move it, then run again"


class SettingsError(Exception):
    """The settings file cannot be used as it is; nothing was written."""

_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}


class _NotWritable(ValueError):
    """What JSON reads but cannot write back as it was: NaN, Infinity, a number past a float's range."""


def _constant(name: str):
    raise _NotWritable(f"it holds {name}, which JSON does not allow")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise _NotWritable(f"it holds the number {text[:40]}, too large to be written back as it was")
    return number


def _parse(path: Path, text: str) -> dict:
    body = text[1:] if text.startswith("\ufeff") else text
    if not body.strip():
        return {}
    try:
        obj = json.loads(body, parse_constant=_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON (line {exc.lineno} col {exc.colno}); {_FIX}"
        ) from None
    except _NotWritable as exc:
        raise SettingsError(f"{path}: {exc}; {_FIX}") from None
    if not isinstance(obj, dict):
        kind = _JSON_TYPES.get(type(obj), "not an object")
        raise SettingsError(f"{path} is not a JSON object (it holds {kind}); {_FIX}")
    return obj


def _read_text(path: Path) -> str | None:
    try:  # (bytes, decoded: reading as text would turn CRLF line endings into LF, and the rewrite would keep those)
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} cannot be read ({exc}); {_FIX}") from None


def load_settings(path: Path) -> tuple[str | None, dict]:
    """(original text or None when missing, settings object). Raises SettingsError."""
    path = Path(path)
    text = _read_text(path)
    if text is None:
        return None, {}
    return text, _parse(path, text)


def _same(a: object, b: object) -> bool:
    # Order- and type-sensitive (True == 1 in Python, not in JSON).
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _back_up(path: Path, target: Path) -> Path:
    """`target` copied beside `path` as `<name>.bak-<YYYYmmddHHMMSS>` (copy2: mode and times kept); a copy cut short
    (a full disk) is removed, never left to pass for a backup."""
    base = path.with_name(f"{path.name}.bak-{datetime.now().strftime('%Y%m%d%H%M%S')}")
    candidate, n = base, 1
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}.{n}"), n + 1
    try:
        shutil.copy2(target, candidate)
    except OSError:
        candidate.unlink(missing_ok=True)
        raise
    return candidate


def _default_mode() -> int:
    # What Claude Code (or any editor) would create: 0o666 less the umask.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _atomic_write(target: Path, text: str, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


render = json_style.render  # settings as JSON in the style of the file as read (its indentation, its last newline)


def apply(path: Path, new_settings: dict, original_text: str | None, dry_run: bool) -> str:
    """Write `new_settings` to `path` if it differs from what was read; one line says what.

    `original_text` is the file's text as read (None: it did not exist). The write backs up the existing file
    (`_back_up`), replaces it atomically (temp file in the same directory + os.replace), keeps its mode, and writes
    through a symlink instead of replacing it; a file left with nothing (it held nothing but ours) is removed. If the
    file changed since it was read, or its owner made it read-only, nothing is written and SettingsError is raised.
    """
    path = Path(path)
    before = _parse(path, original_text) if original_text is not None else {}
    if _same(before, new_settings):
        return f"{path}: unchanged, nothing written"
    verb = "update" if original_text is not None else "create"
    text = render(new_settings, original_text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise SettingsError(f"{path} holds a lone surrogate (a \\ud800-style escape), which cannot be written back; "
                            f"{_FIX}") from None
    # Left with nothing, it held nothing but our entries: it goes (an empty settings file, and a backup of ours, left
    # in a repository after `uninstall --scope project`), unless it is reached through a link (itself, or a folder
    # above it: `~/.claude` kept in a dotfiles repository), whose target may be kept or shared.
    emptied = (not new_settings and original_text is not None
               and os.path.realpath(path) == os.path.normpath(os.path.abspath(path)))
    if dry_run:
        if emptied:
            return f"dry run: would remove {path} (nothing but ours is in it); nothing written"
        backup = f" (backup as {path.name}.bak-<timestamp>)" if original_text is not None else ""
        return f"dry run: would {verb} {path}{backup}; nothing written"
    try:
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        target.parent.mkdir(parents=True, exist_ok=True)
        if _read_text(target) != original_text:
            raise SettingsError(f"{path} changed while it was being edited; nothing written, run again")
        if original_text is None:
            _atomic_write(target, text, _default_mode())
            return f"created {path}"
        mode = os.stat(target).st_mode & 0o7777
        if not mode & 0o200:  # made read-only by its owner, who would not have it changed behind their back
            raise SettingsError(f"{path} is read-only (mode {mode:o}): nothing written; make it writable "
                                "(`chmod u+w`) and run again, or see the change with `miner install --dry-run`")
        if emptied:
            target.unlink()
            return f"removed {path} (nothing but ours was in it)"
        backup = _back_up(path, target)
        _atomic_write(target, text, mode)
    except OSError as exc:
        fix = "free some space on" if exc.errno in (28, 122) else "check the permissions of"  # (ENOSPC, EDQUOT)
        raise SettingsError(f"cannot write {path} ({exc.strerror or exc}); {fix} {path.parent}, then run "
                            "again") from None
    return f"updated {path} (backup: {backup})"
