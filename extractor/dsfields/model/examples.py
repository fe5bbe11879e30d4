"""A JSON example for each section, and for the keys whose shape a default cannot show.

Two sources, both checked by ``dsfields check`` for every release they are shown on
(``tests/test_examples.py``):

- generated from the snapshot's facts: a section's leaf keys at their defaults (:func:`section_example`),
  nested under the section's path, so a reader sees the block as DeepSpeed reads it. No value is typed in.
- curated, keyed by JSON path in ``dsfields/prose/examples.toml`` (:func:`curated`): the shapes defaults do
  not give, such as ``offload_optimizer`` with a device, or ``optimizer`` with a type and its ``params``.
  An entry may carry the prose conditions (``since``, ``until``, ``requires``, ``lacks``), so it is shown
  only where it holds.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from dsfields.model import prose
from dsfields.model.jsontypes import json_type
from dsfields.model.records import Field

EXAMPLES_FILE = "examples.toml"
JSON_SCALARS = (bool, int, float, str)


def nest(path: str, value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for ``a.b``."""
    out: Any = value
    for part in reversed(path.split(".")):
        out = {part: out}
    return out


def _json_value(value: Any) -> bool:
    if isinstance(value, JSON_SCALARS):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False


def section_example(snapshot: dict[str, Any], section: str) -> dict[str, Any] | None:
    """The config block of ``section`` with each of its own leaf keys at its default (from the snapshot's
    JSON), or None when no key has a JSON default. Left out: deprecated and removed keys, pattern keys,
    keys without a default or with a computed one, and defaults the release itself would not take back
    when written (a type outside the key's accepted JSON types, a value its probe saw rejected, "auto")."""
    if not section or "*" in section:
        return None
    removed = snapshot.get("removed") or {}
    own = (snapshot.get("fields") or {}).get(section)
    if isinstance(own, dict) and own.get("deprecated"):
        return None  # a deprecated section (bfloat16): its page points at the replacement, no example to copy
    block: dict[str, Any] = {}
    for path, record in sorted((snapshot.get("fields") or {}).items()):
        if (not isinstance(record, dict) or record.get("section") != section or record.get("is_section")
                or record.get("pattern") or record.get("deprecated") or path in removed
                or record.get("default_factory") or record.get("read_without_default")):
            continue
        default = record.get("default")
        if default is None or default == "auto" or not _json_value(default):
            continue
        types = record.get("json_types") or []
        if types and json_type(default) not in types and not (json_type(default) == "integer" and "number" in types):
            continue
        probe = Field(record, path).probe_for(default)  # the verdict `dsfields check` judges this value by
        if probe is not None and probe[1].get("ok") is False:
            continue
        block[str(record.get("key") or path.rpartition(".")[2])] = default
    return _with_required(snapshot, section, block) if block else None


def _with_required(snapshot: dict[str, Any], section: str, block: dict[str, Any]) -> dict[str, Any]:
    """``block`` nested under ``section``, with the keys the release needs beside it once each section on the way
    is given (``required_with_section``: a compression method's ``different_groups``), as an empty object or
    their default; without them the example itself would be refused."""
    fields = snapshot.get("fields") or {}
    parts = section.split(".")
    out: dict[str, Any] = block
    for depth in range(len(parts), 0, -1):
        here = ".".join(parts[:depth])
        for record in fields.values():
            if isinstance(record, dict) and record.get("section") == here and record.get("required_with_section"):
                value = {} if record.get("is_section") else record.get("default")
                if value is not None:
                    out.setdefault(str(record.get("key")), value)
        out = {parts[depth - 1]: out}
    return out


def shown(snapshot: dict[str, Any], path: str, scope: prose.Scope | None) -> list[tuple[str, dict[str, Any]]]:
    """The examples a release's page of ``path`` shows: ``("curated", config)`` where we wrote one that holds,
    else ``("defaults", config)`` from the facts. The site and ``tests/test_examples.py`` both use this."""
    config = curated(path, scope)
    if config is not None:
        return [("curated", config)]
    config = section_example(snapshot, path)
    return [("defaults", config)] if config is not None else []


@cache
def _curated_table() -> dict[str, Any]:
    path = os.path.join(prose._root(), EXAMPLES_FILE)
    try:
        import tomllib

        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError:
        return {}


def curated(path: str, scope: prose.Scope | None) -> dict[str, Any] | None:
    """The curated example config for ``path`` where its conditions hold in ``scope``, parsed."""
    entry = _curated_table().get(path)
    if not isinstance(entry, dict) or not isinstance(entry.get("config"), str) or not prose.holds(entry, path, scope):
        return None
    import json

    data = json.loads(entry["config"])
    return data if isinstance(data, dict) else None


def curated_paths() -> list[str]:
    return sorted(_curated_table())
