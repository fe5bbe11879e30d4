"""Dotted JSON paths (``zero_optimization.offload_param.device``), walked in one place.

A ds_config may hold anything JSON allows, so every walk is defensive: a step that is absent, or a value on the
way that is no object, ends the walk. Every part of dsfields that reads or writes a config by its dotted path —
the consumers, the launch, the snapshot factory's probes — asks this module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing typing costs lookup's start-up milliseconds; annotations are strings anyway
    from typing import Any


def _deepcopy(value: Any) -> Any:
    """A copy of a config whose objects and arrays are new (its scalars are immutable, any other object is shared):
    ``copy`` (with weakref under it) is a millisecond of check's start-up, where the launch rules' example configs
    are built."""
    from dsfields.model.jsontypes import clone_json

    return clone_json(value)


def join(section: str, key: str) -> str:
    """The JSON path of ``key`` inside ``section`` (``""`` is the top level)."""
    return f"{section}.{key}" if section else key


def parts_of(section: str) -> list[str]:
    """The keys from the top level down to ``section`` (none for the top level itself)."""
    return section.split(".") if section else []


def at_path(data: Any, path: str | tuple[str, ...] | list[str], default: Any = None) -> Any:
    """The value at ``path`` (dotted, or its keys as a tuple) in a parsed config, or ``default`` where any step is
    absent or not an object."""
    for part in path.split(".") if isinstance(path, str) else path:
        if not isinstance(data, dict) or part not in data:
            return default
        data = data[part]
    return data


def set_path(config: dict[str, Any], section: str, key: str, value: Any) -> dict[str, Any]:
    """A copy of ``config`` with ``key`` of ``section`` set to ``value``, the sections on the way made."""
    out = _deepcopy(config)
    node = out
    for part in parts_of(section):
        node = node.setdefault(part, {})
    node[key] = value
    return out


def put_path(config: dict[str, Any], section: str, key: str, value: Any) -> dict[str, Any]:
    """:func:`set_path`, except that a value on the way that is no object is replaced by one (a probe candidate
    that a sibling probe left there)."""
    out = _deepcopy(config)
    node = out
    for part in parts_of(section):
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[key] = value
    return out


def put_in_place(config: dict[str, Any], path: str, value: Any) -> dict[str, Any] | None:
    """``config`` itself with ``value`` at dotted ``path`` (missing or null sections made); None, and ``config``
    untouched below that point, when a value on the way is no object."""
    node: Any = config
    parts = path.split(".")
    for part in parts[:-1]:
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            return None
        node = nxt
    node[parts[-1]] = value
    return config


def edited(config: dict[str, Any], changes: dict[str, Any], separator: str = ".") -> dict[str, Any]:
    """A copy of ``config`` with each path of ``changes`` (parts joined by ``separator``; ``__`` lets keyword
    arguments name them) set to its value, the sections on the way made; a value of None deletes the key."""
    out = _deepcopy(config)
    for path, value in changes.items():
        *parents, last = path.split(separator)
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return out


def delete_in_place(config: dict[str, Any], path: str) -> None:
    """Remove dotted ``path`` from ``config`` itself; nothing where a step is absent or no object."""
    parts = path.split(".")
    node = at_path(config, parts[:-1]) if len(parts) > 1 else config
    if isinstance(node, dict):
        node.pop(parts[-1], None)


def without_path(config: dict[str, Any], section: str, key: str) -> dict[str, Any]:
    """A copy of ``config`` without ``key`` of ``section`` (:func:`set_path`'s inverse; absent stays absent)."""
    out = _deepcopy(config)
    node: Any = at_path(out, section) if section else out
    if isinstance(node, dict):
        node.pop(key, None)
    return out
