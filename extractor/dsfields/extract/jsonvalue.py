"""Turn live Python defaults into stable JSON, keeping a symbolic spelling where JSON loses it.

Snapshots must be byte-identical across runs, so nothing with a memory address or a set order
may leak in; and a reader must see ``sys.maxsize`` or ``torch.float16`` rather than a bare number
or ``null``.
"""

from __future__ import annotations

import enum
import math
import re
import sys
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def stable_repr(value: Any) -> str:
    """``repr`` without memory addresses (functions, lambdas, arbitrary objects)."""
    if callable(value) and hasattr(value, "__qualname__"):
        module = getattr(value, "__module__", "") or ""
        name = value.__qualname__
        return name if module in ("builtins", "") else f"{module}.{name}"
    return _ADDRESS.sub("", repr(value))


def to_json(value: Any) -> tuple[Any, str | None]:
    """Return ``(json_value, symbolic)``; ``symbolic`` is set only where the JSON value alone misleads."""
    if value is None or isinstance(value, (bool, str)):
        return value, None
    if isinstance(value, enum.Enum):
        inner, _ = to_json(value.value)
        return inner, f"{type(value).__name__}.{value.name}"
    if isinstance(value, int):
        custom = getattr(value, "custom_print_str", None)  # DeepSpeed's pp_int(sys.maxsize, "sys.maxsize")
        if custom:
            return int(value), str(custom)
        if value == sys.maxsize:
            return int(value), "sys.maxsize"
        return int(value), None
    if isinstance(value, float):
        if math.isfinite(value):
            return value, None
        return None, repr(value)
    if isinstance(value, (list, tuple)):
        return [to_json(v)[0] for v in value], None
    if isinstance(value, (set, frozenset)):
        return sorted((to_json(v)[0] for v in value), key=repr), None
    if isinstance(value, dict):
        return {str(k): to_json(v)[0] for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}, None
    fields = model_field_values(value)
    if fields is not None:
        return {k: to_json(v)[0] for k, v in sorted(fields.items())}, None
    return None, stable_repr(value)


def model_field_values(instance: Any) -> dict[str, Any] | None:
    """A pydantic (v1 or v2) model instance as {json key: value}; None for anything else."""
    cls = type(instance)
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict) and hasattr(instance, "model_fields_set"):
        return {(f.alias or name): getattr(instance, name, None) for name, f in fields.items()}
    fields = getattr(cls, "__fields__", None)
    if isinstance(fields, dict) and hasattr(instance, "__fields_set__"):
        return {f.alias or name: getattr(instance, name, None) for name, f in fields.items()}
    return None
