"""Field history across snapshots: which release introduced, changed, deprecated or removed a field.

Fixture snapshot trees (several fake versions in tmp_path) stand in for the releases that will be
committed later; ``write_snapshot`` is shared with test_lookup.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from dsfields.history import EventKind, HistoryEvent, field_history
from dsfields.model.store import INDEX_FILE, SNAPSHOT_FILE, dumps


def field_record(path: str, **overrides: Any) -> dict[str, Any]:
    """A complete field record (every key of the snapshot contract), pydantic-style by default."""
    section, _, key = path.rpartition(".")
    record: dict[str, Any] = {
        "auto": {"accepted": True, "becomes": "default", "error": None},
        "choices": None,
        "constant": None,
        "constraints": {},
        "default": None,
        "default_factory": None,
        "default_repr": None,
        "deprecated": None,
        "description": None,
        "effective_default": None,
        "enum": None,
        "is_section": False,
        "json_types": ["integer"],
        "key": key,
        "path": path,
        "python_name": key,
        "read_without_default": False,
        "reader": "pydantic",
        "required": False,
        "section": section,
        "source": {"file": "deepspeed/runtime/zero/config.py", "line": 10},
        "type": "int",
    }
    record.update(overrides)
    return record


def removed_record(path: str, message: str) -> dict[str, Any]:
    section, _, key = path.rpartition(".")
    return {"key": key, "message": message, "path": path, "section": section,
            "source": {"file": "deepspeed/runtime/config.py", "line": 81, "table": "_REMOVED_ZERO_CONFIG_KEYS"}}


def write_snapshot(root: Path, version: str, fields: Sequence[dict[str, Any]],
                   removed: Sequence[dict[str, Any]] = (), **extra: Any) -> Path:
    """Write ``root/<version>/fields.json`` with a section record for every section the fields use."""
    sections: dict[str, Any] = {"": {"description": None, "kind": "dict", "model": None, "parent": None,
                                     "passthrough": False, "source": None, "strict": False,
                                     "unknown_keys": "ignored"}}
    for record in [*fields, *removed]:
        name = record["section"]
        while name and name not in sections:
            sections[name] = {"description": f"The {name} section.", "kind": "model",
                              "model": f"deepspeed.runtime.{name.replace('.', '_')}.Config",
                              "parent": name.rpartition(".")[0], "passthrough": False,
                              "source": {"file": "deepspeed/runtime/zero/config.py", "line": 5},
                              "strict": True, "unknown_keys": "error"}
            name = name.rpartition(".")[0]
    snapshot = {
        "format_version": 1,
        "generated_by": "tests",
        "deepspeed_version": version,
        "environment": {},
        "sections": sections,
        "fields": {r["path"]: r for r in fields},
        "enums": {},
        "removed": {r["path"]: r for r in removed},
        "coverage": {},
    }
    snapshot.update(extra)
    path = root / version / SNAPSHOT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(snapshot), encoding="utf-8")
    return path


Z = "zero_optimization"


@pytest.fixture
def releases(tmp_path: Path) -> Path:
    """Five fake releases; 0.10.0 must sort after 0.3.0 (release order, not string order)."""
    a, b, c = f"{Z}.alpha", f"{Z}.beta", f"{Z}.gamma"
    deprecation = {"converts_value": False, "new_param": "beta"}
    write_snapshot(tmp_path, "0.1.0", [field_record(a, default=1), field_record(c, default=True, type="bool"),
                                       field_record(f"{Z}.old", deprecated=deprecation)])
    write_snapshot(tmp_path, "0.2.0", [field_record(a, default=2), field_record(b),
                                       field_record(f"{Z}.old", deprecated=deprecation)])
    write_snapshot(tmp_path, "0.3.0", [field_record(a, default=2), field_record(b),
                                       field_record(f"{Z}.old", deprecated=deprecation)])
    write_snapshot(tmp_path, "0.10.0", [field_record(a, default=2.0, type="float"),
                                        field_record(b, deprecated={"new_param": "alpha"}),
                                        field_record(c, default=True, type="bool")])
    write_snapshot(tmp_path, "0.11.0", [field_record(b), field_record(c, default=True, type="bool")],
                   removed=[removed_record(a, "alpha has been removed."),
                            removed_record(f"{Z}.gone", "gone has been removed.")])
    return tmp_path


# One row per field: (path, expected (version, kind, old, new) events), oldest first.
CASES = [
    (f"{Z}.alpha", [
        ("0.1.0", "introduced", None, {"type": "int", "default": 1}),
        ("0.2.0", "default_changed", 1, 2),
        ("0.10.0", "type_changed", "int", "float"),
        ("0.11.0", "removed", {"type": "float", "default": 2.0}, "alpha has been removed."),
    ]),
    (f"{Z}.beta", [
        ("0.2.0", "introduced", None, {"type": "int", "default": None}),
        ("0.10.0", "deprecated", None, {"new_param": "alpha"}),
        ("0.11.0", "undeprecated", {"new_param": "alpha"}, None),
    ]),
    (f"{Z}.gamma", [
        ("0.1.0", "introduced", None, {"type": "bool", "default": True}),
        ("0.2.0", "removed", {"type": "bool", "default": True}, None),
        ("0.10.0", "reintroduced", None, {"type": "bool", "default": True}),
    ]),
    (f"{Z}.old", [
        ("0.1.0", "introduced", None, {"type": "int", "default": None}),
        ("0.1.0", "deprecated", None, {"converts_value": False, "new_param": "beta"}),
        ("0.10.0", "removed", {"type": "int", "default": None}, None),
    ]),
    (f"{Z}.gone", [("0.11.0", "removed", None, "gone has been removed.")]),
    (f"{Z}.never", []),
]


@pytest.mark.parametrize(("path", "expected"), CASES, ids=[c[0].rpartition(".")[2] for c in CASES])
def test_history_events(releases: Path, path: str, expected: list[tuple[Any, ...]]) -> None:
    events = field_history(path, releases)
    assert [(e.version, e.kind.value, e.old, e.new) for e in events] == expected


def test_default_repr_counts_as_the_default(tmp_path: Path) -> None:
    # torch.float16 -> torch.bfloat16 keeps JSON default null: only the symbolic spelling changes.
    path = "tensor_parallel.dtype"
    write_snapshot(tmp_path, "1.0.0", [field_record(path, type="dtype", default_repr="torch.float16")])
    write_snapshot(tmp_path, "1.1.0", [field_record(path, type="dtype", default_repr="torch.bfloat16")])
    events = field_history(path, tmp_path)
    assert events[-1] == HistoryEvent("1.1.0", EventKind.DEFAULT_CHANGED, "torch.float16", "torch.bfloat16")


def test_generated_defaults_to_the_env_var(releases: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSFIELDS_GENERATED", str(releases))
    assert [e.kind for e in field_history(f"{Z}.gone")] == [EventKind.REMOVED]


def _write_index(root: Path, index: Any) -> None:
    (root / INDEX_FILE).write_text(json.dumps(index), encoding="utf-8")


def test_precomputed_index_is_preferred(releases: Path) -> None:
    events = [{"version": "0.3.0", "kind": "default_changed", "old": 7, "new": 8}]
    _write_index(releases, {"versions": ["0.1.0", "0.2.0", "0.3.0", "0.10.0", "0.11.0"],
                            "fields": {f"{Z}.alpha": events}})
    assert [e.as_dict() for e in field_history(f"{Z}.alpha", releases)] == events


@pytest.mark.parametrize("index", [
    {"versions": ["0.1.0", "0.2.0"], "fields": {f"{Z}.alpha": []}},  # stale: written before 0.3.0
    {"fields": {f"{Z}.alpha": [{"version": "0.1.0", "kind": "exploded"}]}},  # unknown kind
    {"fields": {f"{Z}.beta": []}},  # silent on this path
    ["not", "an", "object"],
], ids=["stale", "malformed-event", "path-missing", "not-an-object"])
def test_unusable_index_falls_back_to_walking(releases: Path, index: Any) -> None:
    _write_index(releases, index)
    assert [e.as_dict() for e in field_history(f"{Z}.alpha", releases)] == [
        {"version": v, "kind": k, "old": o, "new": n} for v, k, o, n in CASES[0][1]
    ]


def test_event_dict_round_trip() -> None:
    event = HistoryEvent("0.2.0", EventKind.DEPRECATED, None, {"new_param": "beta"})
    assert HistoryEvent.from_dict(json.loads(json.dumps(event.as_dict()))) == event
