"""``generated/index.json``: versions, failures, snapshot sizes and hashes, and per-field history on a
3-release fixture tree (the index is dsfields.model.history's walk, written down)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from test_diff import field, snap

from dsfields.model.history import (
    INDEX_FORMAT_VERSION,
    added_since,
    build_index,
    field_histories,
    index_problems,
    load_index,
    main,
    read_index,
    walk,
    write_index,
)
from dsfields.model.store import FORMAT_VERSION, INDEX_FILE, SnapshotError, available_versions, dumps, load

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

GENERATED = REPO / "generated"


def write_tree(root: Path, snapshots: dict[str, dict[str, Any]]) -> Path:
    for version, data in snapshots.items():
        (root / version).mkdir(parents=True)
        (root / version / "fields.json").write_text(dumps(data), encoding="utf-8")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """0.9.0 → 0.9.2 → 0.10.0 (release order is not string order), with every history event."""
    v1 = snap(field("a.x", default=1), field("a.y", type="int"), field("a.z"), field("a.gone"), field("amp"),
              field("a.old", deprecated={"new_param": "x"}), version="0.9.0")
    v2 = snap(field("a.x", default=2), field("a.y", type="float"), field("a.z", deprecated={"new_param": "x"}),
              field("a.old"), field("a.new"), removed={"amp": "AMP was removed."}, version="0.9.2")
    v3 = snap(field("a.x", default=2, default_repr="sys.maxsize"), field("a.y", type="float"), field("a.z"),
              field("a.old"), field("a.new"), field("a.gone"), field("amp"), version="0.10.0")
    root = write_tree(tmp_path, {"0.9.0": v1, "0.9.2": v2, "0.10.0": v3})
    (root / "failures.json").write_text(json.dumps({"0.9.1": "ImportError: no module named apex"}))
    return root


def kinds(index: dict[str, Any], path: str) -> list[tuple[str, str]]:
    return [(e["version"], e["kind"]) for e in index["fields"][path]]


def test_versions_snapshots_and_failures(tree: Path) -> None:
    index = build_index(tree)
    assert index["generated_by"] == "python -m dsfields.model.history"
    assert index["format_version"] == INDEX_FORMAT_VERSION
    assert index["versions"] == ["0.9.0", "0.9.2", "0.10.0"]
    data = (tree / "0.9.2" / "fields.json").read_bytes()
    assert index["snapshots"]["0.9.2"] == {"format_version": FORMAT_VERSION, "fields": 5, "size": len(data),
                                           "sha256": hashlib.sha256(data).hexdigest()}
    assert index["failed"] == {"0.9.1": "ImportError: no module named apex"}


def test_field_histories(tree: Path) -> None:
    index = build_index(tree)
    assert index["fields"]["a.x"] == [
        {"version": "0.9.0", "kind": "introduced", "old": None, "new": {"type": "int", "default": 1}},
        {"version": "0.9.2", "kind": "default_changed", "old": 1, "new": 2},
        {"version": "0.10.0", "kind": "default_changed", "old": 2, "new": "sys.maxsize"},
    ]
    assert kinds(index, "a.y")[1:] == [("0.9.2", "type_changed")]
    assert kinds(index, "a.z")[1:] == [("0.9.2", "deprecated"), ("0.10.0", "undeprecated")]
    assert kinds(index, "a.old") == [("0.9.0", "introduced"), ("0.9.0", "deprecated"), ("0.9.2", "undeprecated")]
    assert kinds(index, "a.gone") == [("0.9.0", "introduced"), ("0.9.2", "removed"), ("0.10.0", "reintroduced")]
    assert kinds(index, "a.new") == [("0.9.2", "introduced")]
    assert index["fields"]["amp"][1:2] == [{"version": "0.9.2", "kind": "became_removed",
                                          "old": {"type": "int", "default": 1}, "new": "AMP was removed."}]
    assert kinds(index, "amp") == [("0.9.0", "introduced"), ("0.9.2", "became_removed"), ("0.10.0", "reintroduced")]


def test_index_is_the_walk_written_down(tree: Path) -> None:
    # One engine: the old index folded dsfields.diff while lookup walked snapshots, and they disagreed.
    write_index(tree)
    walked = walk(tree)
    assert {p: [e.as_dict() for e in events] for p, events in walked.items()} == build_index(tree)["fields"]
    assert read_index(tree) is not None
    assert field_histories(walked, tree) == walked
    (tree / INDEX_FILE).unlink()
    assert field_histories(walked, tree) == walked


def test_added_since(tree: Path) -> None:
    index = build_index(tree)
    # Keys of the oldest snapshot are not "new": nothing is known before it.
    assert added_since("0.9.0", index) == {"a.new": "0.9.2", "a.gone": "0.10.0", "amp": "0.10.0"}
    assert added_since("0.9.2", index) == {"a.gone": "0.10.0", "amp": "0.10.0"}
    assert added_since("0.9.0", index, until="0.9.2") == {"a.new": "0.9.2"}
    assert added_since("0.9.0", tree) == added_since("0.9.0", index)


def test_write_index_is_stable_and_load_index_refuses_stale(tree: Path) -> None:
    target = write_index(tree)
    first = target.read_bytes()
    assert write_index(tree).read_bytes() == first and first.endswith(b"}\n")
    assert json.loads(first)["versions"] == ["0.9.0", "0.9.2", "0.10.0"]
    write_tree(tree, {"0.11.0": snap(field("a.x"), version="0.11.0")})
    assert load_index(tree)["versions"][-1] == "0.11.0"  # rebuilt: the file on disk is stale
    assert read_index(tree) is None


def test_index_problems_sees_a_same_size_edit(tree: Path) -> None:
    write_index(tree)
    assert index_problems(tree) == []
    target = tree / "0.10.0" / "fields.json"
    text = target.read_text(encoding="utf-8")
    edited = text.replace('"default": 2,', '"default": 3,', 1)
    assert edited != text and len(edited) == len(text)
    target.write_text(edited, encoding="utf-8")
    # Readers compare sizes only (a stat per snapshot; hashing 77 would cost more than the lookup) ...
    assert read_index(tree) is not None
    # ... the thorough check, run by the tests and `python -m dsfields.model.history --check`, hashes.
    assert index_problems(tree) == ["0.10.0: snapshot sha256 differs from the indexed one"]
    assert main(["--check", str(tree)]) == 1
    assert main([str(tree)]) == 0 and main(["--check", str(tree)]) == 0


def test_stale_format_snapshot_is_listed_not_folded(tree: Path) -> None:
    stale = b'{"format_version": 0, "fields": {}}'
    (tree / "0.10.0" / "fields.json").write_bytes(stale)
    index = build_index(tree)
    assert index["snapshots"]["0.10.0"] == {"format_version": 0, "fields": None, "size": len(stale),
                                            "sha256": hashlib.sha256(stale).hexdigest()}
    assert "re-extract" in index["failed"]["0.10.0"]
    assert all(e["version"] != "0.10.0" for events in index["fields"].values() for e in events)
    assert {p: [e.as_dict() for e in events] for p, events in walk(tree).items()} == index["fields"]


@pytest.mark.data
@pytest.mark.parametrize("version", available_versions(GENERATED))
def test_committed_snapshot_has_current_format(version: str) -> None:
    try:
        data = load(version, GENERATED).raw
    except SnapshotError as exc:
        pytest.fail(str(exc))
    assert data["format_version"] == FORMAT_VERSION and data["deepspeed_version"] == version


@pytest.mark.data
def test_committed_index_matches_the_snapshots() -> None:
    committed = json.loads((GENERATED / INDEX_FILE).read_text(encoding="utf-8"))
    rebuilt = build_index(GENERATED, generated_by=committed.get("generated_by", ""))
    assert committed == rebuilt, "generated/index.json is stale: run `python -m dsfields.model.history`"
