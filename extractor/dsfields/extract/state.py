"""A comparable picture of what ``DeepSpeedConfig`` parsed: its whole object graph as plain data.

Used to ask behavioural questions without knowing DeepSpeed's attribute names: does writing a
key's default change anything (it must not)? does writing another value change something (the
key is really read)? does ``"auto"`` end up as the default?
"""

from __future__ import annotations

import enum
from typing import Any

from dsfields.extract.jsonvalue import model_field_values, stable_repr

_SKIP = {"_param_dict"}  # the raw user dict: comparing it would make every key look "read"


def parsed_state(obj: Any, package: str = "deepspeed", depth: int = 0, seen: set[int] | None = None) -> Any:
    seen = set() if seen is None else seen
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return f"{type(obj).__name__}.{obj.name}"
    if depth > 8 or id(obj) in seen:
        return "<...>"
    seen = seen | {id(obj)}
    if isinstance(obj, dict):
        return {str(k): parsed_state(v, package, depth + 1, seen) for k, v in obj.items() if k not in _SKIP}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = [parsed_state(v, package, depth + 1, seen) for v in obj]
        return sorted(items, key=repr) if isinstance(obj, (set, frozenset)) else items
    fields = model_field_values(obj)
    if fields is not None:
        return {k: parsed_state(v, package, depth + 1, seen) for k, v in fields.items()}
    module = getattr(type(obj), "__module__", "") or ""
    if module.startswith(package) and hasattr(obj, "__dict__"):
        return {k: parsed_state(v, package, depth + 1, seen) for k, v in vars(obj).items() if k not in _SKIP}
    return stable_repr(obj)


def instances_of(root: Any, cls: type, package: str = "deepspeed") -> list[Any]:
    """Objects of exactly ``cls`` reachable from a parsed config (DeepSpeed objects and models)."""
    found: list[Any] = []
    stack, seen = [(root, 0)], set()
    while stack:
        obj, depth = stack.pop()
        if id(obj) in seen or depth > 4:
            continue
        seen.add(id(obj))
        if type(obj) is cls:
            found.append(obj)
            continue
        if hasattr(obj, "__dict__") and type(obj).__module__.startswith(package):
            stack.extend((v, depth + 1) for v in vars(obj).values())
    return found
