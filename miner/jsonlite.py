"""JSON for the hooks, without importing `json` (standard library only).

`import json` imports `re` and compiles its patterns: about 7 ms of a Stop
hook that must stay near a bare interpreter start (see `paths`). The parsing
and string escaping here are the standard library's own, from the C module
`json` itself uses (`_json`); only the top level is done here: the whitespace
around a document, and walking a value to write it. Where `_json` is missing
(not CPython), `json` is used. Output and errors match `json`'s: `loads` raises
a `ValueError` (a `json.JSONDecodeError` for bad documents), `dumps` writes
what `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None

_SPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoding:
    """What `_json.make_scanner` reads from a `json.JSONDecoder`: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = _json.make_scanner(_Decoding()) if _json is not None else None


def _error(message: str, text: str, at: int) -> ValueError:
    from json import JSONDecodeError  # only on bad input: the import costs what this module saves

    return JSONDecodeError(message, text, at)


def loads(text: str) -> object:
    """`json.loads(text)` of a string."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    if not isinstance(text, str):
        raise TypeError(f"the JSON object must be str, not {type(text).__name__}")
    if text.startswith("\ufeff"):
        raise _error("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise _error("Expecting value", text, stop.value) from None
    except RecursionError:
        raise
    except Exception:  # noqa: BLE001 - `_json` raises its errors through `json.decoder`, which must be loaded:
        import json  # the document is bad (or odd); `json` says how, in its own words

        return json.loads(text)
    rest = len(text) - len(text[end:].lstrip(_SPACE))
    if rest != len(text):
        raise _error("Extra data", text, rest)
    return value


def dumps(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` for dicts with string keys, lists, tuples,
    strings, numbers, booleans and None (anything else is a TypeError, as there)."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    out: list[str] = []
    _write(value, out, set())
    return "".join(out)


def string(text: str) -> str:
    """A string as a JSON literal, non-ASCII characters kept (`json.dumps(text, ensure_ascii=False)`)."""
    return _json.encode_basestring(text) if _json is not None else dumps(text)


def _write(value: object, out: list[str], open_ids: set[int]) -> None:
    if isinstance(value, str):
        out.append(_json.encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (dict, list, tuple)):
        if id(value) in open_ids:
            raise ValueError("Circular reference detected")
        open_ids.add(id(value))
        if isinstance(value, dict):
            out.append("{")
            for n, (key, item) in enumerate(value.items()):
                out.append("," if n else "")
                out.append(_json.encode_basestring(_key(key)))
                out.append(":")
                _write(item, out, open_ids)
            out.append("}")
        else:
            out.append("[")
            for n, item in enumerate(value):
                out.append("," if n else "")
                _write(item, out, open_ids)
            out.append("]")
        open_ids.discard(id(value))
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return _float(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)
