"""Values as DeepSpeed's pydantic models see them: which JSON values a declared type accepts, and as what.

``check`` must never be stricter than DeepSpeed: pydantic's lax mode turns ``"true"`` into ``True``
and ``5e8`` into an ``int``. The functions here mirror that for one JSON type at a time.
"""

from __future__ import annotations

import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from typing import Any

_BOOL_STRINGS = {"0": False, "off": False, "f": False, "false": False, "n": False, "no": False,
                 "1": True, "on": True, "t": True, "true": True, "y": True, "yes": True}
_INT_STRING = re.compile(r"^\s*[+-]?\d+(\.0*)?\s*$")


def coerce(kind: str, value: Any) -> tuple[bool, Any, bool]:
    """pydantic v2 lax mode for one JSON type: ``(accepted, coerced value, already the canonical type)``.

    Mirrors what DeepSpeed 0.19.8's pydantic accepts (verified in tests against DeepSpeedConfig):
    ``5e8`` for an int, ``"true"``/``1`` for a bool, ``"8"`` for an int — never stricter than DeepSpeed.
    """
    if kind == "null":
        return value is None, value, True
    if kind == "boolean":
        if isinstance(value, bool):
            return True, value, True
        if isinstance(value, (int, float)) and value in (0, 1):
            return True, bool(value), False
        if isinstance(value, str) and value.lower() in _BOOL_STRINGS:
            return True, _BOOL_STRINGS[value.lower()], False
        return False, value, False
    if kind == "integer":
        if isinstance(value, bool):
            return True, int(value), False
        if isinstance(value, int):
            return True, value, True
        if isinstance(value, float):
            # JSON has one number type: 5e8 written by hand is a float pydantic accepts for an int.
            return (math.isfinite(value) and value.is_integer()), value, True
        if isinstance(value, str) and _INT_STRING.match(value):
            # Exactly, whatever its length: int(float("1" + 400 * "0")) overflows. Past Python's digit
            # limit (4300) int() refuses the string, and so does pydantic's own int parsing.
            try:
                return True, int(value.strip().partition(".")[0]), False
            except ValueError:
                return False, value, False
        return False, value, False
    if kind == "number":
        if isinstance(value, bool):
            return True, float(value), False
        if isinstance(value, (int, float)):
            return True, value, True
        if isinstance(value, str):
            try:
                return True, float(value.strip()), False
            except ValueError:
                return False, value, False
        return False, value, False
    if kind == "string":
        return isinstance(value, str), value, True
    if kind == "array":
        return isinstance(value, list), value, True
    if kind == "object":
        return isinstance(value, dict), value, True
    return True, value, True


def accepts(types: list[str], value: Any) -> tuple[bool, Any, bool]:
    """Exact type matches win (pydantic's smart union), then lax coercions in declared order."""
    if not types:
        return True, value, True
    for kind in types:
        ok, coerced, exact = coerce(kind, value)
        if ok and exact:
            return True, coerced, True
    for kind in types:
        ok, coerced, exact = coerce(kind, value)
        if ok:
            return True, coerced, exact
    return False, value, False


