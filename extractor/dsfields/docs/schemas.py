"""The site's JSON Schemas: one small file per release and variant, its sections stored once for all releases.

``<release>/ds_config.schema.json`` and ``ds_config.hf.schema.json`` (``/zh/<release>/`` in Chinese) are what
editors and SchemaStore point at: each keeps its own ``$schema``, ``$id`` (the release's URL, when
``links.SITE_URL`` is set), title, ``$comment`` and description. Each larger top-level section is a ``$ref``
to ``releases/schemas/<key>.<hash>.json``, named by a hash of its content, and the small top-level keys
together are one more such file, referenced by the root's ``$ref``: a part that reads the same in several
releases (or in the plain and ``--hf`` variants) is one file that all of them reference. Sharing it cannot
show a reader another release: a section's text names no release unless it carries docs links (``SITE_URL``
set), and then it differs per release and is not shared. 4 schemas x 77 releases were 154 MB of the site;
resolving the references gives back, key for key, what ``dsfields schema`` writes (tests/test_schema.py).

A ``$ref`` is resolved against the schema's ``$id``, else the URL it was fetched from, so the relative
``../releases/schemas/…`` works from the site and from a published ``$id`` alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

SHARED_FOLDER = "releases/schemas"
"""Where the shared sections live, relative to a language's site root (``/`` or ``/zh/``)."""
INLINE_BELOW = 2048
"""A section whose JSON is shorter than this stays in the release's file (a reference would save nothing)."""
PART_BELOW = 1024
"""Inside a shared section, a key whose JSON is at least this long is a shared file of its own
(``<section>.<key>.<hash>.json``, referenced from the section's file in the same folder): releases change a
section a key at a time (a docstring, a new key), so the section's other keys stay one file for all of them.
Measured on the full site (77 releases, en + zh): the shared schemas went from 17.29 MB to 9.67 MB on disk."""


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def split(schema: dict[str, Any], shared: dict[str, str]) -> dict[str, Any]:
    """``schema`` with each large top-level property replaced by a ``$ref`` to its shared file, which is
    added to ``shared`` (path relative to the language's site root → text)."""
    properties = dict(schema.get("properties") or {})
    small: dict[str, Any] = {}
    for key, value in list(properties.items()):
        body = _text(value)
        if len(body) < INLINE_BELOW:
            small[key] = properties.pop(key)
            continue
        properties[key] = {"$ref": f"../{_store(key, value, schema, shared)}"}
    out = {**schema, "properties": properties}
    if small and not OPEN_ROOT & set(schema):
        # The small top-level keys (train_batch_size, gradient_clipping, ...) together, as one more
        # reference beside the sections: the same in most releases. Only where nothing at the root looks
        # at which properties sit beside it (additionalProperties would), so validation is unchanged.
        out["$ref"] = f"../{_store(TOP_LEVEL, {'properties': small}, schema, shared)}"
    else:
        properties.update(small)
    return out


TOP_LEVEL = "top-level"
OPEN_ROOT = {"additionalProperties", "patternProperties", "unevaluatedProperties", "$ref"}
"""Root keywords that would judge the top-level keys by the properties beside them: none, or no shared top."""


def _parts(name: str, value: Any, schema: dict[str, Any], shared: dict[str, str]) -> Any:
    """``value`` (a stored section or key) with each large key under its ``properties`` (at any depth) a
    reference to its own shared file, named ``<name>.<key>`` and a hash."""
    if not isinstance(value, dict) or not isinstance(value.get("properties"), dict):
        return value
    properties = {}
    for key, part in value["properties"].items():
        part = _parts(f"{name}.{key}", part, schema, shared)
        if isinstance(part, dict) and len(_text(part)) >= PART_BELOW:
            part = {"$ref": _store(f"{name}.{key}", part, schema, shared, split=False).removeprefix(
                f"{SHARED_FOLDER}/")}
        properties[key] = part
    return {**value, "properties": properties}


def _store(key: str, value: dict[str, Any], schema: dict[str, Any], shared: dict[str, str],
           split: bool = True) -> str:
    if split:
        value = _parts(key, value, schema, shared)
    body = _text(value)
    name = f"{SHARED_FOLDER}/{key}.{hashlib.sha256(body.encode()).hexdigest()[:16]}.json"
    # Its own $schema: a validator that loads it alone (a registry, check-jsonschema) knows its draft.
    shared[name] = _text({"$schema": schema.get("$schema"), **value}) + "\n"
    return name


def _load(path: str, read: Callable[[str], str]) -> Any:
    """A shared file's content with its own keys' references (same folder) resolved, without its ``$schema``."""
    value = json.loads(read(path))
    value.pop("$schema", None)
    return _inline(value, read)


def _inline(value: Any, read: Callable[[str], str]) -> Any:
    if not isinstance(value, dict) or not isinstance(value.get("properties"), dict):
        return value
    properties = {}
    for key, part in value["properties"].items():
        ref = part.get("$ref") if isinstance(part, dict) else None
        if isinstance(ref, str) and len(part) == 1 and "/" not in ref and ref.endswith(".json"):
            part = _load(f"{SHARED_FOLDER}/{ref}", read)
        properties[key] = _inline(part, read)
    return {**value, "properties": properties}


def resolve(schema: dict[str, Any], read: Callable[[str], str]) -> dict[str, Any]:
    """The whole schema back from a release's file: each shared reference replaced by its file's content, and
    so on inside it (``read`` gets the path relative to the language's site root)."""
    schema = dict(schema)
    properties = {}
    top = schema.pop("$ref", None)
    if isinstance(top, str) and top.startswith(f"../{SHARED_FOLDER}/"):
        properties.update(_load(top.removeprefix("../"), read)["properties"])
    elif top is not None:
        schema["$ref"] = top
    for key, value in (schema.get("properties") or {}).items():
        ref = value.get("$ref") if isinstance(value, dict) else None
        if isinstance(ref, str) and ref.startswith(f"../{SHARED_FOLDER}/") and len(value) == 1:
            value = _load(ref.removeprefix("../"), read)
        properties[key] = value
    return {**schema, "properties": dict(sorted(properties.items()))}
