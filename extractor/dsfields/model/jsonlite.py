"""``json.loads`` and ``json.dumps(..., ensure_ascii=False)`` on ``lookup``'s start-up path, without importing ``json``.

Importing the ``json`` package costs ``dsfields lookup`` more than everything it does with JSON: it
imports ``re`` (and ``enum``) and compiles five patterns. The decoding and string escaping are C
functions of ``_json`` that need none of that, so this module calls them directly: :func:`loads` is
json's own C scanner, :func:`dumps` writes what ``json.dumps`` writes for JSON values (``dict``,
``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool``, ``None``). Anything else — a value
``json.dumps`` would reject or that this module does not know, text that is not one JSON document —
is handed to the real ``json``, which then answers or raises exactly as it always does.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # another Python: the json package alone
    _json = None  # type: ignore[assignment]

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_WHITESPACE = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads of a ``json.JSONDecoder()`` with its default options."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


_scan = _json.make_scanner(_Context()) if _json is not None else None


def loads(text: str) -> Any:
    """``json.loads(text)`` of a string."""
    if _scan is not None:
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _scan(text, start)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if end == len(text) or not text[end:].strip(_WHITESPACE):
                return value
    import json

    return json.loads(text)


class _Unsupported(Exception):
    pass


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise _Unsupported


def _encode(value: Any, sort_keys: bool, depth: int) -> str:
    if depth > 200:
        raise _Unsupported  # deep (or circular): json's own checks and messages
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json.encode_basestring(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_encode(item, sort_keys, depth + 1) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else value.items()
        return "{" + ", ".join(f"{_json.encode_basestring(_key(k))}: {_encode(v, sort_keys, depth + 1)}"
                               for k, v in items) + "}"
    raise _Unsupported


def dumps(value: Any, sort_keys: bool = False) -> str:
    """``json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)``."""
    if _json is not None:
        try:
            return _encode(value, sort_keys, 0)
        except (_Unsupported, TypeError):
            pass
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
