"""One place decides where data lives (standard library only: the hooks use it).

`MINER_HOME` wins, then `$XDG_DATA_HOME/miner`, then `~/.local/share/miner`.
Claude Code's folder is `CLAUDE_CONFIG_DIR`, else `~/.claude`.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

try:  # hashlib would load OpenSSL first: several milliseconds on the hooks' path
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython has _blake2
    from hashlib import blake2b

DB_NAME = "memory.db"


def home() -> Path:
    return Path(os.environ.get("HOME") or os.path.expanduser("~"))


def data_dir() -> Path:
    explicit = os.environ.get("MINER_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else home() / ".local" / "share"
    return base / "miner"


def config_dir() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else home() / ".config"
    return base / "miner"


def db_path() -> Path:
    return data_dir() / DB_NAME


def logs_dir() -> Path:
    return data_dir() / "logs"


def locks_dir() -> Path:
    return data_dir() / "locks"


def cache_dir() -> Path:
    """Blocks rendered ahead of time, and what each session was shown."""
    return data_dir() / "cache"


def file_stem(key: str) -> str:
    """A short file name for any key (a transcript path, a project, a session id)."""
    return blake2b(key.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()


def claude_dir() -> Path:
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return home() / ".claude"


def projects_dir() -> Path:
    return claude_dir() / "projects"


def encode_project(cwd: str) -> str:
    """Claude Code's folder name for a cwd: every non-alphanumeric char becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def ensure_private_dir(path: Path) -> Path:
    """Create a directory readable by its owner only (memories are private data)."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    return path


@lru_cache(maxsize=256)
def project_root(cwd: str | None) -> str:
    """The project of a session: the git root above `cwd` (absolute), else `cwd` itself.

    Works for paths that no longer exist on this machine (backfilled transcripts):
    they are their own project.
    """
    if not cwd:
        return ""
    path = Path(cwd)
    try:
        probe = path
        for candidate in [probe, *probe.parents]:
            if (candidate / ".git").exists():
                return str(candidate)
    except OSError:
        pass
    return str(path)
