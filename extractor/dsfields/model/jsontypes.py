"""JSON types of values: the one spelling shared by the extractor (probes, defaults) and the consumers (check)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def json_type(value: Any) -> str:
    """``"null"``, ``"boolean"``, ``"integer"``, ``"number"``, ``"string"``, ``"array"`` or ``"object"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def types_of(value: Any) -> list[str]:
    """The JSON types a value of ``value``'s type takes: a float also takes an integer; ``[]`` for null."""
    if value is None:
        return []
    kind = json_type(value)
    return ["integer", "number"] if kind == "number" else [kind]


def clone_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts and lists copied, the rest shared: JSON's scalars are immutable).

    ``copy.deepcopy`` would cost check's start-up ~2 ms of imports for configs that are JSON anyway.
    """
    if isinstance(value, dict):
        return {key: clone_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clone_json(item) for item in value]
    return value
