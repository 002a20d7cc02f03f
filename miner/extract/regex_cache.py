"""Compiled regular expressions kept on disk, so that a miner process does not compile its rules again.

Every miner process used to compile the same few hundred patterns before it
read a line: the rules, the literal scans that gate them, the secret kinds.
That was about a third of a small mining run (a Stop worker mining one turn).
Python cannot keep a compiled pattern (pickling one compiles it again), so this
keeps what the compiler produces: the regex engine's code for each pattern. A
pattern built from that code is the one `re.compile` builds (the two compare
equal, code included), without parsing or compiling anything.

- `compile(pattern, flags)` answers from the cache, or compiles and remembers.
- `memo(kind, key, compute)` keeps other work done on patterns at load (what a
  rule's parse says, a literal scan's pattern), for values `marshal` can write.
- The file is saved when the process exits, if it learnt anything. It is keyed
  by the interpreter and its regex engine (`_sre.MAGIC`); entries are keyed by
  the pattern's text and flags, so an edited rule file recompiles only the
  patterns that changed. The entries used last are kept, up to `MAX_ENTRIES`.
- Anything unexpected (a damaged or foreign file, an interpreter whose compiler
  works otherwise) falls back to compiling as `re` does; the cache is only ever
  a shortcut. A pattern that does not compile raises `re.error` as `re.compile`.

The file lives in the data folder (`paths.cache_dir()/regex`), private like
the rest of it. It holds patterns only: the shipped rules' and the user's.
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
# The interpreter's exact version: a patch release may compile a pattern otherwise, and still run the old code.
FILE_NAME = f"regex-{sys.implementation.name}-{'.'.join(map(str, sys.version_info[:3]))}-{_sre.MAGIC}-{FORMAT}.bin"

_table: dict[tuple, Any] | None = None  # everything known: from the file, then learnt by this process
_file = ""  # the file the table came from, and is saved to
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


def memo(kind: str, key: Any, compute: Callable[[], Any]) -> Any:
    """`compute()`, kept under (kind, key) between processes; its value must be marshallable."""
    if not _enabled:
        return compute()
    full = ("memo", kind, key)
    table = _load()
    if full in table:
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


def path() -> str:
    from .. import paths

    return os.path.join(paths.data_file("cache"), "regex", FILE_NAME)


def _load() -> dict[tuple, Any]:
    global _table, _file
    if _table is None:
        _file = path()
        _table = _read(_file)
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
    if not (_learnt and _table is not None):
        return False
    file = _file
    if not os.path.isdir(os.path.dirname(os.path.dirname(os.path.dirname(file)))):
        return False  # the data folder is gone (a test's temporary one): nothing to keep it for
    merged = _read(file)
    merged.update((key, _table[key]) for key in _table if key not in merged or key in _used)
    # The entries this process used go last, so that trimming drops the ones unused longest.
    for key in _used:
        if key in merged:
            merged[key] = merged.pop(key)
    if len(merged) > MAX_ENTRIES:
        merged = dict(list(merged.items())[-MAX_ENTRIES:])
    from ..paths import ensure_private_dir

    temp = f"{file}.{os.getpid()}.tmp"
    try:
        ensure_private_dir(os.path.dirname(file))
        payload = marshal.dumps(merged)
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(_digest(payload) + payload)
        os.replace(temp, file)  # a reader never sees half a file
    except (OSError, ValueError):
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False
    _learnt = False
    return True


def reset(enabled: bool = True) -> None:
    """Forget what this process loaded (tests; a changed MINER_HOME). `enabled=False` compiles as `re` does."""
    global _table, _file, _learnt, _enabled
    _table, _file, _learnt, _enabled = None, "", False, enabled
    _used.clear()
    counts.update(cached=0, compiled=0)
