"""One place decides where data lives (standard library only: the hooks use it).

`MINER_HOME` wins, then the folder `./install.sh` installed into (written
beside the interpreter it installed, as `<venv>/miner-home`: its hooks and
commands keep using that store when they start without `MINER_HOME`, as
Claude Code starts hooks), then `$XDG_DATA_HOME/miner`, then
`~/.local/share/miner`.
Claude Code's folder is `CLAUDE_CONFIG_DIR`, else `~/.claude`.

Import cost is hook latency: this module imports neither `pathlib` nor `re`
(each would pull in `re` and its compiler, several milliseconds of a hook that
must stay near a bare interpreter start). The hooks use the `*_root` functions,
which answer plain strings; everything else uses the `Path` ones, which load
`pathlib` when first called.
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from pathlib import Path

try:  # hashlib would load OpenSSL first: several milliseconds on the hooks' path
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython has _blake2
    from hashlib import blake2b

HALTED_MARKER = "mining-halted.json"  # in the cache folder while a broken rule file halts mining (`runtime.halted`)
DB_NAME = "memory.db"
INSTALLED_HOME_FILE = "miner-home"  # in the venv ./install.sh made: the data folder it installed into
_installed_home: str | None = None


SMALL_FILE_LIMIT = 4 << 20  # a settings, exclusions or cache file larger than this is not one of ours


def open_regular(path: str):
    """`path` opened for reading in binary, when it is a regular file; OSError otherwise. A FIFO swapped in for a
    transcript blocked the watcher in `open` for good, and a device is read for ever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if (os.fstat(fd).st_mode & 0o170000) != 0o100000:  # stat.S_ISREG, without importing `stat`
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", path)
    return open(fd, "rb")


def read_small(path: str, limit: int = SMALL_FILE_LIMIT) -> str:
    """The text of a small file the hooks read (settings, exclusions, a cache entry). OSError when it is missing or
    not a regular file: a FIFO would block the hook for ever, and /dev/zero never ends; ValueError when it is over
    `limit` bytes or not UTF-8."""
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is over {limit:,} bytes")
    return data.decode("utf-8")


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


# --- plain strings (the hooks' path) ------------------------------------------------------


class PathSettingError(RuntimeError):
    """A folder setting (`MINER_HOME`, `CLAUDE_CONFIG_DIR`) that names no usable folder: the commands say it in one
    line, the hooks fail open."""


def _expanded(value: str) -> str:
    """`~` and `~user` expanded, as `Path.expanduser` does: a home that cannot be found is an error, never a
    folder called `~user` under whatever directory the process runs in (a hook runs in the user's project)."""
    out = os.path.expanduser(value)
    if out.startswith("~"):
        raise PathSettingError(f"cannot find the home folder in {value!r}; set it to an absolute path")
    return out


def home_root() -> str:
    return os.environ.get("HOME") or _expanded("~")


def installed_home() -> str:
    """The data folder `./install.sh` installed this interpreter's venv for ('' when it did not: a checkout's venv).
    Read once per process."""
    global _installed_home
    if _installed_home is None:
        try:
            found = read_small(os.path.join(sys.prefix, INSTALLED_HOME_FILE), 4096).strip()
        except (OSError, ValueError):
            found = ""
        _installed_home = found if os.path.isabs(found) else ""
    return _installed_home


def absolute_env(name: str) -> str:
    """The folder `$name` names, `~` expanded; '' when unset. A relative one is an error: a hook runs in the user's
    project, so it would name a folder of whatever repository is open, and a repository's `.claude/settings.json`
    can set the hooks' environment (the store written into it, its code run as ours)."""
    value = os.environ.get(name)
    if not value:
        return ""
    out = _expanded(value)
    if not os.path.isabs(out):
        raise PathSettingError(f"{name} is {value!r}, a relative path; set it to an absolute one")
    return out


def _xdg(name: str, default: str) -> str:
    """An XDG base folder: a relative value is ignored, as the XDG specification says (and for the reason above)."""
    value = os.environ.get(name)
    out = _expanded(value) if value else ""
    return out if os.path.isabs(out) else os.path.join(home_root(), default)


def data_root() -> str:
    explicit = absolute_env("MINER_HOME")
    if explicit:
        return explicit
    installed = installed_home()
    if installed:
        return installed
    return os.path.join(_xdg("XDG_DATA_HOME", os.path.join(".local", "share")), "miner")


def config_root() -> str:
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "miner")


def claude_root() -> str:
    return absolute_env("CLAUDE_CONFIG_DIR") or os.path.join(home_root(), ".claude")


def in_config_root(path) -> bool:
    """Whether `path` is a file of the user's config folder (their glossary, synonyms, rules), however either is
    written ("//", a trailing "/")."""
    return os.path.normpath(os.path.dirname(os.fspath(path))) == os.path.normpath(config_root())


def config_file() -> str:
    """The user's settings file (`config`)."""
    return os.path.join(config_root(), "config.json")


def data_file(*parts: str) -> str:
    """A path under the data folder, e.g. `data_file("logs", "hooks.log")`."""
    return os.path.join(data_root(), *parts)


# --- Path objects ---------------------------------------------------------------------------


def home() -> Path:
    return _path(home_root())


def data_dir() -> Path:
    return _path(data_root())


def config_dir() -> Path:
    return _path(config_root())


def db_path() -> Path:
    return _path(data_file(DB_NAME))


def logs_dir() -> Path:
    return _path(data_file("logs"))


def locks_dir() -> Path:
    return _path(data_file("locks"))


def cache_dir() -> Path:
    """Blocks rendered ahead of time, and what each session was shown."""
    return _path(data_file("cache"))


def claude_dir() -> Path:
    return _path(claude_root())


def projects_dir() -> Path:
    return _path(os.path.join(claude_root(), "projects"))


# --- names ----------------------------------------------------------------------------------


def file_stem(key: str) -> str:
    """A short file name for any key (a transcript path, a project, a session id)."""
    return blake2b(key.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()


def is_utf8(text: str) -> bool:
    """True when `text` (a file name) holds nothing but UTF-8: no byte the file system kept undecoded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """`text` with what is not UTF-8 written as escapes: a file name as a terminal can show it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def unkeepable_name(path: str) -> str:
    """What is said of a transcript whose file name is not UTF-8: no watermark can name it, so it is not mined."""
    return f"{printable(path)}: its name is not UTF-8, which the store cannot keep; rename it"


def encode_project(cwd: str) -> str:
    """Claude Code's folder name for a cwd: every character but an ASCII letter or digit becomes '-'."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def ensure_private_dir(path):
    """Create a directory readable by its owner only (memories are private data); returns `path` as given
    (a `Path` or a string). An existing one loses what its group and others may do, and its owner keeps what
    they have: a folder its owner made read-only stays so."""
    os.makedirs(path, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o777
        if mode & 0o077:
            os.chmod(path, mode & 0o700)
    except OSError:
        pass
    return path


def file_stamp(path) -> tuple[int, int] | None:
    """A file as it is now (time and size), to tell that it changed since; None when there is none."""
    try:
        st = os.stat(path)
    except (OSError, TypeError):  # (no path at all: None)
        return None
    return st.st_mtime_ns, st.st_size


def write_private(path, data: bytes | str) -> None:
    """Replace the file at `path` (a `Path` or a string) with `data`, readable by its owner only, in a private
    folder; a reader never sees half of it (written aside, then moved into place). Raises OSError."""
    folder = ensure_private_dir(os.path.dirname(os.fspath(path)) or ".")
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(temp, path)
    except BaseException:  # (a full disk): the half-written copy goes, or one a process's id names stays for good
        discard(temp)
        raise


def discard(*files: str) -> None:
    """Remove these files where they exist: what a write cut short left (its temp file, SQLite's journal)."""
    for file in files:
        try:
            os.unlink(file)
        except OSError:
            pass


_ROOTS: dict[str, str] = {}
_ROOTS_KEPT = 256


def project_root(cwd: str | None) -> str:
    """The project of a session: the git root above `cwd` (absolute), else `cwd` itself (also when `cwd` is not
    absolute here, as a Windows path is not on Linux).

    Works for paths that no longer exist on this machine (backfilled transcripts):
    they are their own project. Answers are kept (256 at most; `project_root.cache_clear()` forgets them).
    """
    if not cwd:
        return ""
    known = _ROOTS.get(cwd)
    if known is not None:
        return known
    root = _git_root(cwd)
    if len(_ROOTS) >= _ROOTS_KEPT:
        _ROOTS.clear()
    _ROOTS[cwd] = root
    return root


def _git_root(cwd: str) -> str:
    # As `Path(cwd)` spells it: no trailing slash, no "." parts, "//" collapsed (a leading "//" kept).
    text = os.fspath(cwd)
    if len(text) > 1 and text[1] == ":" and text[0].isascii() and text[0].islower():
        # A Windows drive in either case is one drive: Claude Code records "C:\\work" from a terminal and
        # "c:\\work" from an editor's terminal for the same folder, which would file one project's sessions
        # under two.
        text = text[0].upper() + text[1:]
    lead = "//" if text.startswith("//") and not text.startswith("///") else ("/" if text.startswith("/") else "")
    parts = [p for p in text.split("/") if p and p != "."]
    clean = lead + "/".join(parts) if parts or lead else "."
    if not os.path.isabs(text):
        # Not a path of this machine (Claude Code writes absolute ones): a session recorded on Windows and mined
        # here, "C:\\work\\shop". Looked up from the process's own folder, it would take that folder's git root.
        return clean
    candidate = clean
    while True:
        try:
            os.stat(os.path.join(candidate, ".git"))
            return candidate
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as exc:  # a folder it may not look into (EACCES): the cwd is its own project, as it was
            if exc.errno not in (errno.EBADF, errno.ELOOP):
                return clean
        except ValueError:  # no path of this machine: a NUL, a surrogate no file name can hold (UnicodeEncodeError)
            return clean
        parent = os.path.dirname(candidate) or "."
        if parent == candidate:
            return clean
        candidate = parent


project_root.cache_clear = _ROOTS.clear  # type: ignore[attr-defined]
