"""Compiled regular expressions kept on disk, so that a miner process does not compile its rules again.

Every miner process used to compile the same few hundred patterns before it
read a line: the rules and the literal scans that gate them. That was about
a sixth of a small mining run (a Stop worker mining one turn; bench/worker.py).
Python cannot keep a compiled pattern (pickling one compiles it again), so this
keeps what the compiler produces: the regex engine's code for each pattern. A
pattern built from that code is the one `re.compile` builds (the two compare
equal, code included), without parsing or compiling anything.

- `compile(pattern, flags)` answers from the cache, or compiles and remembers.
- `memo(kind, key, compute)` keeps other work done on patterns at load (what a
  rule's parse says, a literal scan's pattern), for values `marshal` can write.
- The file is saved when the process exits, if it learnt anything. It is keyed
  by the interpreter, its regex engine (`_sre.MAGIC`) and the source of the
  modules whose work `memo` keeps (`SOURCES`: another version of the miner
  reads and writes another file); entries are keyed by the pattern's text and
  flags, so an edited rule file recompiles only the patterns that changed. The
  entries used last are kept, up to `MAX_ENTRIES`; another version's file
  goes once it is a month old.
- Anything unexpected (a damaged or foreign file, an interpreter whose compiler
  works otherwise) falls back to compiling as `re` does; the cache is only ever
  a shortcut. A pattern that does not compile raises `re.error` as `re.compile`.

The file lives in the data folder (`paths.cache_dir()/regex`), private like
the rest of it. It holds patterns only: the shipped rules' and the user's, the
memory layer's text patterns (`memory.text_features`) and redaction's (`secret_patterns`).
"""

from __future__ import annotations

import _sre
import atexit
import marshal
import os
import re
import sys
from typing import Any, Callable

try:  # the compiler `re.compile` uses (re._compiler and re._parser from Python 3.11)
    from re import _compiler, _parser
except ImportError:  # Python 3.10
    import sre_compile as _compiler  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

FORMAT = 1
MAX_ENTRIES = 6000
_DIGEST = 16  # bytes of the checksum that opens the file
# The modules (beside this one) whose results `memo` keeps: a change to any of them is another file.
SOURCES = ("regex_cache.py", "regex_analysis.py", "rules.py", "rule_matching.py", "cues.py")

_table: dict[tuple, Any] | None = None  # everything known: from the file, then learnt by this process
_file = ""  # the file the table came from, and is saved to ("" when there is none to use)
_used: dict[tuple, None] = {}  # keys this process used, in order
_learnt = False
_registered = False
_enabled = True
counts = {"cached": 0, "compiled": 0}  # patterns this process took from the cache, and compiled itself


def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - the name says what it replaces
    """`re.compile(pattern, flags)` for a text pattern, from the cache when it knows it."""
    if not (_enabled and isinstance(pattern, str) and isinstance(flags, int)):
        return re.compile(pattern, flags)
    key = ("re", pattern, int(flags))
    table = _load()
    entry = table.get(key)
    if entry is not None:
        try:
            compiled = _sre.compile(pattern, *entry)
        except Exception:  # noqa: BLE001 - a damaged entry: compile it again
            table.pop(key, None)
        else:
            _used[key] = None
            counts["cached"] += 1
            return compiled
    try:
        entry = _engine_code(pattern, int(flags))
        compiled = _sre.compile(pattern, *entry)
    except re.error:
        raise
    except Exception:  # noqa: BLE001 - a compiler that works otherwise than this module expects
        return re.compile(pattern, flags)
    counts["compiled"] += 1
    _remember(key, entry)
    return compiled


def memo(kind: str, key: Any, compute: Callable[[], Any], check: Callable[[Any], bool] = lambda value: True) -> Any:
    """`compute()`, kept under (kind, key) between processes; its value must be marshallable. A kept value
    `check` refuses (a damaged entry) is computed again."""
    if not _enabled:
        return compute()
    full = ("memo", kind, key)
    table = _load()
    if full in table and check(table[full]):
        _used[full] = None
        return table[full]
    value = compute()
    try:
        marshal.dumps(value)
    except ValueError:
        return value  # not something the file can hold
    _remember(full, value)
    return value


def _engine_code(pattern: str, flags: int) -> tuple:
    """The arguments `_sre.compile` takes after the pattern, as `re.compile` computes them."""
    parsed = _parser.parse(pattern, flags)
    code = list(map(int, _compiler._code(parsed, flags)))  # its opcodes are int subclasses marshal refuses
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex, tuple(indexgroup))


def _remember(key: tuple, value: Any) -> None:
    global _learnt, _registered
    table = _load()
    table[key] = value
    _used[key] = None
    _learnt = True
    if not _registered:
        _registered = True
        atexit.register(save)


def file_name() -> str:
    """The interpreter's exact version (a patch release may compile a pattern otherwise, and still run the old
    code), its regex engine's, and a digest of `SOURCES`."""
    folder = os.path.dirname(os.path.abspath(__file__))
    sources = b""
    for name in SOURCES:
        with open(os.path.join(folder, name), "rb") as handle:
            sources += handle.read()
    version = ".".join(map(str, sys.version_info[:3]))
    return f"regex-{sys.implementation.name}-{version}-{_sre.MAGIC}-{FORMAT}-{_digest(sources).hex()[:12]}.bin"


def path() -> str:
    from .. import paths

    return os.path.join(paths.data_file("cache"), "regex", file_name())


def _load() -> dict[tuple, Any]:
    global _table, _file
    if _table is None:
        try:
            _file = path()
        except OSError:  # the sources cannot be read (an unusual install): no file, compile as re does
            _file = ""
        _table = _read(_file) if _file else {}
    return _table


def _read(file: str) -> dict[tuple, Any]:
    """The table in `file`; empty when there is none, or it is damaged (its checksum does not hold)."""
    try:
        with open(file, "rb") as handle:
            blob = handle.read()
        payload = blob[_DIGEST:]
        if blob[:_DIGEST] != _digest(payload):
            return {}
        data = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def _digest(payload: bytes) -> bytes:
    import hashlib

    return hashlib.blake2b(payload, digest_size=_DIGEST).digest()


def save() -> bool:
    """Write what this process learnt, merged with the file as it is now. True if written."""
    global _learnt
    if not (_learnt and _table is not None and _file):
        return False
    file = _file
    folder = os.path.dirname(file)  # <data>/cache/regex
    if not os.path.isdir(os.path.dirname(os.path.dirname(folder))):
        return False  # the data folder is gone (a test's temporary one): nothing to keep it for
    merged = _read(file)
    # What this process used goes last (newest), so that trimming drops the entries unused longest.
    for key in _used:
        merged.pop(key, None)
        if key in _table:
            merged[key] = _table[key]
    if len(merged) > MAX_ENTRIES:
        merged = dict(list(merged.items())[-MAX_ENTRIES:])
    from ..paths import ensure_private_dir

    temp = f"{file}.{os.getpid()}.tmp"
    try:
        ensure_private_dir(os.path.dirname(folder))
        ensure_private_dir(folder)
        payload = marshal.dumps(merged)
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(_digest(payload) + payload)
        os.replace(temp, file)  # a reader never sees half a file
        _drop_stale(folder, file)
    except (OSError, ValueError):
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False
    _learnt = False
    return True


STALE_DAYS = 30


def _drop_stale(folder: str, current: str) -> None:
    """Remove the files other versions left that none has written for `STALE_DAYS` (an upgrade's leftovers)."""
    import time

    for entry in os.scandir(folder):
        if entry.path != current and entry.name.startswith("regex-") and entry.is_file(follow_symlinks=False):
            try:
                if entry.stat().st_mtime < time.time() - STALE_DAYS * 86400:
                    os.unlink(entry.path)
            except OSError:
                pass


def reset(enabled: bool = True) -> None:
    """Forget what this process loaded (tests; a changed MINER_HOME). `enabled=False` compiles as `re` does."""
    global _table, _file, _learnt, _enabled
    _table, _file, _learnt, _enabled = None, "", False, enabled
    _used.clear()
    counts.update(cached=0, compiled=0)
