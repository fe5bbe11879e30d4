"""What ``DeepSpeedConfig`` holds where the user wrote nothing: the parsed-state witnesses.

A field's ``default`` is what the reader declares or passes; what DeepSpeed keeps when the key is
absent is measured here, by building ``DeepSpeedConfig`` with and without the key and comparing
the parsed object graphs (:func:`dsfields.extract.state.parsed_state`); no attribute name is known
in advance.

- ``when_absent`` of a section: ``"defaults"`` (an absent section parses like ``{}``: each key gets
  its default), ``"none"`` (DeepSpeed keeps ``None`` where ``{}`` builds an object:
  ``weight_quantization``, ``checkpoint.writer``), or ``"value"`` with the object DeepSpeed uses
  instead (a passed-on section's built-in default, ``pipeline``).
- ``when_absent`` of a key read only with ``in`` / ``[]``: ``"value"`` where the reader returns a
  value of its own (the else branch of ``get_optimizer_legacy_fusion``), ``"sentinel"`` where it
  keeps a private ``object()`` meaning "not given" (``expert_parallel.expert_w3``).
- ``forced_by`` of a boolean key: another key that sets its parsed value whatever the key itself
  says (``wall_clock_breakdown`` is ORed with ``flops_profiler.enabled``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from dsfields.extract.discover import BASE_CONFIG, PROBE_KEY
from dsfields.extract.jsonvalue import stable_repr
from dsfields.extract.state import parsed_state
from dsfields.model.dotted import at_path, set_path, without_path

MARKER = "__dsfields_marker__"
"""A value no reader knows: where it lands in the parsed state is where DeepSpeed keeps the key."""

SENTINEL = stable_repr(object())
"""How :func:`parsed_state` spells a bare ``object()``: DeepSpeed's private "not given" marker."""

_Missing: Any = type("Missing", (), {})()


def _base(ex: Any, record: dict[str, Any]) -> dict[str, Any]:
    """The config under which DeepSpeedConfig reads the key (its exploration config if it needed one)."""
    from dsfields.extract.extraction import with_section

    base = ex.bases.get(record["path"])
    section = record["section"]
    config = copy.deepcopy(base) if base is not None else with_section(BASE_CONFIG, section)
    return without_path(config, section, record["key"])


class _States:
    """Parsed states by config, each config built once."""

    def __init__(self, ex: Any) -> None:
        self.ex = ex
        self.memo: dict[str, Any] = {}

    def __call__(self, config: dict[str, Any]) -> Any:
        memo = json.dumps(config, sort_keys=True, default=str)
        if memo not in self.memo:
            run = self.ex.prober.run(config, trace=False)
            self.memo[memo] = _Missing if run.error is not None else parsed_state(run.config, self.ex.package)
        return self.memo[memo]


def _leaves(state: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if isinstance(state, dict) and state:
        out: dict[tuple[str, ...], Any] = {}
        for key, value in state.items():
            out.update(_leaves(value, (*prefix, key)))
        return out
    return {prefix: state}


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, str):
        return value != SENTINEL and not value.startswith("<")
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(_is_json(v) for v in value.values())
    return False


def _none_where_built(absent: Any, empty: Any) -> bool:
    """Every difference between the two states lies under a place that is None absent and an object for ``{}``."""
    roots: list[tuple[str, ...]] = []

    def walk(node: Any, location: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        if location and at_path(absent, location, _Missing) is None and node:
            roots.append(location)
            return
        for key, value in node.items():
            walk(value, (*location, key))

    walk(empty, ())
    a, b = _leaves(absent), _leaves(empty)
    differing = [loc for loc in set(a) | set(b) if a.get(loc, _Missing) != b.get(loc, _Missing)]
    return bool(roots) and all(any(loc[:len(r)] == r or r[:len(loc)] == loc for r in roots) for loc in differing)


def _section(ex: Any, states: _States, record: dict[str, Any]) -> dict[str, Any] | None:
    base = _base(ex, record)
    section, key = record["section"], record["key"]
    absent = states(base)
    if absent is _Missing:
        return None
    if (ex.sections.get(record["path"]) or {}).get("passthrough"):
        probed = states(set_path(base, section, key, {PROBE_KEY: 1}))
        where = {loc[:-1] for loc, v in _leaves(probed).items() if loc and loc[-1] == PROBE_KEY and v == 1}
        if len(where) == 1:
            value = at_path(absent, where.pop(), _Missing)
            if value is not _Missing and value not in (None, {}) and _is_json(value):
                return {"parsed": "value", "value": value}
    empty = states(set_path(base, section, key, {}))
    if empty is _Missing:
        return None
    if empty == absent:
        return {"parsed": "defaults"}
    if _none_where_built(absent, empty):
        return {"parsed": "none"}
    ex.notes.append(f"{record['path']}: an absent section parses neither as {{}} nor as None")
    return None


def _key(ex: Any, states: _States, record: dict[str, Any]) -> dict[str, Any] | None:
    base = _base(ex, record)
    absent = states(base)
    marked = states(set_path(base, record["section"], record["key"], MARKER))
    if absent is _Missing or marked is _Missing:
        return None
    where = [loc for loc, v in _leaves(marked).items() if v == MARKER]
    values = [at_path(absent, loc, _Missing) for loc in where]
    if not values or any(v is _Missing for v in values) or any(v != values[0] for v in values):
        return None
    value = values[0]
    if value == SENTINEL:
        return {"parsed": "sentinel"}
    if _is_json(value) and value != record["default"]:
        return {"parsed": "value", "value": value}
    return None


def when_absent(ex: Any) -> int:
    """Record ``when_absent`` on sections and on keys read without a default; return the builds made."""
    states = _States(ex)
    for _path, record in sorted(ex.fields.items()):
        if record.get("pattern") or "trace" not in record.get("witnesses", []) or record["required"]:
            continue
        if record["is_section"]:
            found = _section(ex, states, record)
        elif record["reader"] == "dict" and record["read_without_default"]:
            found = _key(ex, states, record)
        else:
            continue
        if found is not None:
            record["when_absent"] = found
    forced_by(ex, states)
    return len(states.memo)


def forced_by(ex: Any, states: _States) -> None:
    """Booleans (default false) whose parsed value another boolean sets, whatever they say themselves.

    For each such key X, the leaves of the parsed state that writing ``true`` changes are X's. Key W
    is forced by F when F=true changes all of W's leaves to what W=true gives, and still does with
    W written false.
    """
    candidates = [r for r in ex.fields.values()
                  if r["default"] is False and not r["is_section"] and not r.get("pattern") and not r["required"]
                  and "trace" in r.get("witnesses", [])]
    changed: dict[str, dict[tuple[str, ...], Any]] = {}
    for record in sorted(candidates, key=lambda r: r["path"]):
        base = _base(ex, record)
        reference, on = states(base), states(set_path(base, record["section"], record["key"], True))
        if reference is _Missing or on is _Missing:
            continue
        ref, new = _leaves(reference), _leaves(on)
        diff = {loc: new.get(loc, _Missing) for loc in set(ref) | set(new)
                if ref.get(loc, _Missing) != new.get(loc, _Missing)}
        if diff:
            changed[record["path"]] = diff
    by_path = {r["path"]: r for r in candidates}
    for target, mine in sorted(changed.items()):
        found = []
        for other, theirs in sorted(changed.items()):
            if other == target or not all(loc in theirs and theirs[loc] == v for loc, v in mine.items()):
                continue
            record, setter = by_path[target], by_path[other]
            config = set_path(_base(ex, setter), setter["section"], setter["key"], True)
            quiet = states(without_path(config, record["section"], record["key"]))
            written = states(set_path(config, record["section"], record["key"], False))
            if quiet is _Missing or written is _Missing:
                continue
            if all(at_path(s, loc, _Missing) == v for s in (quiet, written) for loc, v in mine.items()):
                found.append({"path": other, "when": True, "value": True})
        if found:
            by_path[target]["forced_by"] = found
