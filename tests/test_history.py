"""Field history across snapshots: which release introduced, changed, deprecated, removed or rejected a key.

Fixture snapshot trees (several fake versions in tmp_path) test each transition; ``write_snapshot``
is shared with test_lookup.py. The second half runs on the 77 committed releases: the story must be
the same with generated/index.json, without it and with a stale one (dsfields.model.history is the
one engine; index.json is only its cached output).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from dsfields.cli import main
from dsfields.model.history import (
    EventKind,
    HistoryEvent,
    field_histories,
    field_history,
    index_problems,
    read_index,
    write_index,
)
from dsfields.model.store import INDEX_FILE, SNAPSHOT_FILE, available_versions, dumps, load, version_key

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own


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
        # Rejected with a message: "became_removed". The old snapshot walk said "removed" here while the
        # old index said "became_removed"; one engine now, and plain "removed" means no longer read.
        ("0.11.0", "became_removed", {"type": "float", "default": 2.0}, "alpha has been removed."),
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
    (f"{Z}.gone", [("0.11.0", "became_removed", None, "gone has been removed.")]),
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
    assert [e.kind for e in field_history(f"{Z}.gone")] == [EventKind.BECAME_REMOVED]



def test_keys_of_a_rejected_section_are_rejected_with_it(tmp_path: Path) -> None:
    # DeepSpeed raises on the section (amp), so a config with amp.enabled fails too: the old walk called
    # amp.enabled merely "removed" (no longer read), the old index "became_removed"; the latter is right.
    write_snapshot(tmp_path, "0.1.0", [field_record("amp", type="any"), field_record("amp.enabled", type="bool")])
    write_snapshot(tmp_path, "0.2.0", [], removed=[removed_record("amp", "AMP was removed.")])
    write_snapshot(tmp_path, "0.3.0", [])
    assert [(e.version, e.kind.value, e.new) for e in field_history("amp.enabled", tmp_path)] == [
        ("0.1.0", "introduced", {"type": "bool", "default": None}),
        ("0.2.0", "became_removed", "AMP was removed."),
        ("0.3.0", "no_longer_rejected", None),
    ]
    # A key never read is not dragged into its section's rejection: nothing is known about it.
    assert field_history("amp.opt_level", tmp_path) == []


def test_events_of_one_release_in_a_fixed_order(tmp_path: Path) -> None:
    # steps_per_print in 0.15.2: type int -> any and default 10 -> null; the old walk listed the type
    # change first, the old index the default change. One order now: type, default, deprecation, removal.
    write_snapshot(tmp_path, "0.1.0", [field_record("steps_per_print", default=10)])
    write_snapshot(tmp_path, "0.2.0", [field_record("steps_per_print", type="any", deprecated={"new_param": "x"})])
    assert [e.kind for e in field_history("steps_per_print", tmp_path)] == [
        EventKind.INTRODUCED, EventKind.TYPE_CHANGED, EventKind.DEFAULT_CHANGED, EventKind.DEPRECATED]


def test_renames_proven_by_the_snapshots(tmp_path: Path) -> None:
    old, new = f"{Z}.cpu_offload", f"{Z}.offload_optimizer"
    alias_old, alias_new = f"{Z}.stage3_prefetch", f"{Z}.prefetch_bucket_size"
    write_snapshot(tmp_path, "0.1.0", [field_record(old), field_record(alias_old, python_name="prefetch")])
    write_snapshot(tmp_path, "0.2.0", [field_record(old, deprecated={"new_param": "offload_optimizer"}),
                                       field_record(new), field_record(alias_new, python_name="prefetch")])
    renamed = HistoryEvent("0.2.0", EventKind.RENAMED, old, new)
    assert field_history(old, tmp_path)[1:] == [HistoryEvent("0.2.0", EventKind.DEPRECATED, None,
                                                             {"new_param": "offload_optimizer"}), renamed]
    assert field_history(new, tmp_path)[1:] == [renamed]
    aliased = HistoryEvent("0.2.0", EventKind.RENAMED, alias_old, alias_new)
    assert [e.kind for e in field_history(alias_old, tmp_path)] == [
        EventKind.INTRODUCED, EventKind.RENAMED, EventKind.REMOVED]
    assert field_history(alias_new, tmp_path)[1:] == [aliased] == field_history(alias_old, tmp_path)[1:2]


def test_no_rename_in_the_oldest_snapshot(tmp_path: Path) -> None:
    # Born deprecated next to its replacement: when the rename happened is unknown.
    write_snapshot(tmp_path, "0.1.0", [field_record(f"{Z}.cpu_offload", deprecated={"new_param": "offload"}),
                                       field_record(f"{Z}.offload")])
    assert [e.kind for e in field_history(f"{Z}.cpu_offload", tmp_path)] == [EventKind.INTRODUCED,
                                                                              EventKind.DEPRECATED]


def _index(root: Path) -> dict[str, Any]:
    return json.loads((root / INDEX_FILE).read_text(encoding="utf-8"))


def _write_index(root: Path, index: Any) -> None:
    (root / INDEX_FILE).write_text(json.dumps(index), encoding="utf-8")


def test_current_index_is_read(releases: Path) -> None:
    write_index(releases)
    index = _index(releases)
    # Proof that the answer comes from the file: an edit of the index alone (snapshots untouched) shows.
    index["fields"][f"{Z}.alpha"] = [{"version": "0.3.0", "kind": "default_changed", "old": 7, "new": 8}]
    _write_index(releases, index)
    assert [e.as_dict() for e in field_history(f"{Z}.alpha", releases)] == index["fields"][f"{Z}.alpha"]
    # The index covers every key the snapshots know: one it does not list has no history.
    assert field_history(f"{Z}.never", releases) == []


def _stale_versions(index: dict[str, Any], root: Path) -> None:
    index["versions"] = index["versions"][:-1]  # written before 0.11.0 was committed


def _old_format(index: dict[str, Any], root: Path) -> None:
    index["format_version"] = 1


def _snapshot_rewritten(index: dict[str, Any], root: Path) -> None:
    target = root / "0.11.0" / SNAPSHOT_FILE
    target.write_text(target.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # same story, new size


def _malformed_event(index: dict[str, Any], root: Path) -> None:
    index["fields"][f"{Z}.alpha"] = [{"version": "0.1.0", "kind": "exploded"}]


def _no_sizes(index: dict[str, Any], root: Path) -> None:
    for facts in index["snapshots"].values():
        facts.pop("size")


@pytest.mark.parametrize("spoil", [_stale_versions, _old_format, _snapshot_rewritten, _malformed_event, _no_sizes])
def test_unusable_index_falls_back_to_walking(releases: Path, spoil: Any) -> None:
    write_index(releases)
    index = _index(releases)
    # Were the spoiled index believed, alpha's story would be this lie.
    index["fields"][f"{Z}.alpha"] = [{"version": "0.3.0", "kind": "default_changed", "old": 7, "new": 8}]
    spoil(index, releases)
    _write_index(releases, index)
    assert [(e.version, e.kind.value, e.old, e.new) for e in field_history(f"{Z}.alpha", releases)] == CASES[0][1]


@pytest.mark.parametrize("text", ['["not", "an", "object"]', "{", ""], ids=["not-an-object", "truncated", "empty"])
def test_unreadable_index_falls_back_to_walking(releases: Path, text: str) -> None:
    (releases / INDEX_FILE).write_text(text, encoding="utf-8")
    assert [(e.version, e.kind.value, e.old, e.new) for e in field_history(f"{Z}.alpha", releases)] == CASES[0][1]


def test_event_dict_round_trip() -> None:
    event = HistoryEvent("0.2.0", EventKind.DEPRECATED, None, {"new_param": "beta"})
    assert HistoryEvent.from_dict(json.loads(json.dumps(event.as_dict()))) == event


# ---------------------------------------------------------------- the 77 committed releases

GENERATED = Path(__file__).resolve().parent.parent / "generated"


def _committed_paths() -> list[str]:
    """Every key of the newest release, every removed key of any release, and every key any release read."""
    versions = available_versions(GENERATED)
    paths = set(load(versions[-1], GENERATED).raw["fields"])
    for version in versions:
        paths.update(load(version, GENERATED).raw.get("removed") or {})
        paths.update(load(version, GENERATED).raw["fields"])
    return sorted(paths)


def _tree_without_index(tmp_path: Path) -> Path:
    """The committed snapshots (symlinked) without index.json."""
    root = tmp_path / "generated"
    root.mkdir()
    for version in available_versions(GENERATED):
        (root / version).symlink_to(GENERATED / version, target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def committed_trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    bare = _tree_without_index(tmp_path_factory.mktemp("bare"))
    stale = _tree_without_index(tmp_path_factory.mktemp("stale"))
    index = json.loads((GENERATED / INDEX_FILE).read_text(encoding="utf-8"))
    index["versions"] = index["versions"][:-1]  # as if written before the newest release was committed
    index["fields"] = {path: [] for path in index["fields"]}  # so that believing it would show
    (stale / INDEX_FILE).write_text(json.dumps(index), encoding="utf-8")
    return {"index": GENERATED, "no index": bare, "stale index": stale}


@pytest.mark.data
def test_committed_index_is_current() -> None:
    # Else "with the index" below would walk too and prove nothing.
    assert read_index(GENERATED) is not None
    assert index_problems(GENERATED) == [], "run `python -m dsfields.model.history`"


@pytest.mark.data
def test_committed_history_is_the_same_with_without_and_with_a_stale_index(committed_trees) -> None:
    paths = _committed_paths()
    assert len(paths) >= 449 and "amp.enabled" in paths  # 0.8.0 … 0.19.8
    stories = {name: field_histories(paths, root) for name, root in committed_trees.items()}
    assert stories["index"] == stories["no index"] == stories["stale index"]
    for path in ("amp", "zero_optimization.mics_shard_size", "steps_per_print", "gradient_clipping"):
        assert field_history(path) == field_history(path, committed_trees["no index"]) == stories["index"][path]


@pytest.mark.data
@pytest.mark.parametrize("query", ["amp", "elasticity", "nebula", "steps_per_print", "mics_shard_size"])
def test_lookup_history_prints_one_story(capsys, monkeypatch, committed_trees, query: str) -> None:
    outputs = {}
    for name, root in committed_trees.items():
        monkeypatch.setenv("DSFIELDS_GENERATED", str(root))
        assert main(["lookup", query, "--history"]) == 0
        outputs[name] = capsys.readouterr().out
    assert outputs["index"] == outputs["no index"] == outputs["stale index"]
    if query == "amp":
        history = " ".join(outputs["index"].split("\n\nhistory", 1)[1].split())
        assert "0.19.8 removed and rejected: NVIDIA Apex AMP integration has been removed" in history


def _snapshots() -> list[tuple[str, dict[str, Any]]]:
    return [(v, load(v, GENERATED).raw) for v in available_versions(GENERATED)]


@pytest.mark.data
def test_gradient_clipping_default_became_one() -> None:
    defaults = [(v, s["fields"]["gradient_clipping"]["default"]) for v, s in _snapshots()]
    changed = [new for (_, a), (new, b) in zip(defaults, defaults[1:], strict=False) if a != b]
    assert len(changed) == 1 and version_key("0.14.4") < version_key(changed[0]) <= version_key("0.19.8")
    assert [e for e in field_history("gradient_clipping") if e.kind is EventKind.DEFAULT_CHANGED] == [
        HistoryEvent(changed[0], EventKind.DEFAULT_CHANGED, 0.0, 1.0)]


@pytest.mark.data
def test_mics_shard_size_removed_and_rejected() -> None:
    path = "zero_optimization.mics_shard_size"
    snapshots = _snapshots()
    rejected = [v for v, s in snapshots if path in s["removed"]]
    read = [v for v, s in snapshots if path in s["fields"]]
    assert rejected[-1] == "0.19.8" and read and version_key(read[-1]) < version_key(rejected[0])
    message = dict(snapshots)[rejected[0]]["removed"][path]["message"]
    assert field_history(path)[-1] == HistoryEvent(rejected[0], EventKind.BECAME_REMOVED,
                                                   {"type": "int", "default": -1}, message)


@pytest.mark.data
def test_amp_story() -> None:
    snapshots = _snapshots()
    read = [v for v, s in snapshots if "amp" in s["fields"]]
    rejected = [v for v, s in snapshots if "amp" in s["removed"]]
    assert read[0] == snapshots[0][0] and rejected == ["0.19.8"]
    message = dict(snapshots)["0.19.8"]["removed"]["amp"]["message"]
    assert [(e.version, e.kind, e.new) for e in field_history("amp")] == [
        (read[0], EventKind.INTRODUCED, {"type": "any", "default": None}),
        ("0.19.8", EventKind.BECAME_REMOVED, message)]
    # Its keys go with it: DeepSpeed raises on the section.
    assert field_history("amp.enabled")[-1] == HistoryEvent("0.19.8", EventKind.BECAME_REMOVED,
                                                            {"type": "bool", "default": False}, message)
