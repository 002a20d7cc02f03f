"""Excluded projects: never mined, never archived, never injected (standard library only: the hooks read them).

The globs of project folders are kept in `$XDG_CONFIG_HOME/miner/exclusions.json`
(`miner exclude add|remove|list`). `is_excluded` never raises: a broken file
excludes everything until it is fixed.
"""

from __future__ import annotations

import fnmatch
import os

from .. import jsonlite, paths

EXCLUSIONS_FILE = "exclusions.json"


class PrivacyError(ValueError):
    """A privacy command cannot do what was asked; the message says why, in one line."""


def exclusions_path():
    return paths.config_dir() / EXCLUSIONS_FILE


def load_exclusions() -> list[str]:
    """The excluded project globs; [] when there is no file. A broken file excludes nothing and says so."""
    # A string path and the hooks' JSON reader: a SessionStart that renders its block asks this first, and
    # `pathlib` and `json` would cost it milliseconds.
    try:
        data = jsonlite.loads(paths.read_small(os.path.join(paths.config_root(), EXCLUSIONS_FILE)))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PrivacyError(f"{exclusions_path()} cannot be read ({exc.strerror}); fix or remove it") from None
    except (ValueError, RecursionError) as exc:
        raise PrivacyError(f"{exclusions_path()} is not valid JSON ({exc}); fix or remove it") from None
    globs = data.get("exclude") if isinstance(data, dict) else None
    if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
        raise PrivacyError(f"{exclusions_path()} must hold {{\"exclude\": [\"glob\", ...]}}; fix or remove it")
    return globs


def _save_exclusions(globs: list[str]) -> None:
    import json

    paths.write_private(exclusions_path(), json.dumps({"exclude": globs}, indent=2) + "\n")


def normalise_glob(glob: str, cwd: str | None = None) -> str:
    """An absolute glob: `~` expanded, relative paths taken from `cwd`, no trailing slash.

    A glob that starts with a wildcard (`*/secret-*`) is kept as it is: it matches anywhere.
    """
    glob = os.path.expanduser(glob.strip())
    if not glob:
        raise PrivacyError("an empty glob would exclude nothing; give a project folder or a pattern")
    if not paths.is_utf8(glob):  # (bytes that are not UTF-8, as the shell passed them)
        raise PrivacyError("the glob is not UTF-8: Claude Code names every folder in UTF-8, so it would exclude "
                           "nothing; give it in UTF-8")
    if glob.startswith("~"):  # `~name` of no user on this machine: not a folder under the current one
        raise PrivacyError(f"cannot expand {glob.split('/')[0]!r}: no such user; give the folder's full path")
    if not glob.startswith(("*", "?", "[", "/")):
        glob = os.path.join(cwd or os.getcwd(), glob)
    glob = glob.rstrip("/") or "/"
    if not any(c in glob for c in "*?["):
        return os.path.normpath(glob)
    if os.path.exists(glob):  # a folder that is there is named, not a pattern, whatever its name holds (`a[1]`)
        import glob as glob_mod

        return glob_mod.escape(os.path.normpath(glob))
    return glob


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
    folder = os.path.normpath(os.path.abspath(path))
    candidates = {folder, os.path.realpath(folder)}
    try:
        root = os.path.normpath(paths.project_root(path))
        candidates |= {root, os.path.realpath(root)}
    except Exception:  # noqa: BLE001 - a probe failure only means one candidate fewer
        pass
    # A folder reached through a symbolic link is the same folder: each side is compared as given and resolved.
    for glob in {g for glob in globs for g in (glob, resolved_glob(glob))}:
        for candidate in candidates:
            if fnmatch.fnmatchcase(candidate, glob) or fnmatch.fnmatchcase(candidate, glob.rstrip("/") + "/*"):
                return True
    return False


def excluded_elsewhere(project: str):
    """A test that is true of the projects other than `project` that are excluded: a global memory said in one is
    never shown in another project either. None when nothing is excluded (the usual case: no file to read); a
    broken exclusions file excludes every other project."""
    try:
        globs = load_exclusions()
    except PrivacyError:
        return lambda other: other != project
    if not globs:
        return None
    answers: dict[str, bool] = {project: False}  # a block weighs dozens of memories of a few projects: once each

    def excluded(other: str) -> bool:
        if other not in answers:
            answers[other] = is_excluded(other, globs)
        return answers[other]

    return excluded


def resolved_glob(glob: str) -> str:
    """`glob` with the symbolic links of its folders resolved, up to its first wildcard (`/link/*` → `/real/*`);
    a glob that starts with a wildcard is kept as it is."""
    parts = glob.split("/")
    fixed = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
    if not glob.startswith("/"):
        return glob
    if fixed == len(parts):
        return os.path.realpath(glob)
    return os.path.realpath("/".join(parts[:fixed]) or "/").rstrip("/") + "/" + "/".join(parts[fixed:])
