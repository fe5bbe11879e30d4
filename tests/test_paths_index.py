"""The compact index (generated/<version>/paths.json) only saves time: a snapshot read through it answers
exactly as the whole snapshot does, and a stale or foreign index is ignored."""

from __future__ import annotations

import shutil

import pytest
from conftest import record_decoded

from dsfields.model import paths_index, store
from dsfields.model.records import Snapshot

pytestmark = pytest.mark.data

ROOT = store.repo_generated_dir()
VERSIONS = store.available_versions(ROOT)


def _view(snapshot: Snapshot) -> dict[str, object]:
    """Everything a consumer reads of a snapshot, as plain data."""
    return {
        "version": snapshot.version,
        "format_version": snapshot.format_version,
        "document": snapshot.document,
        "probed_switched_on": snapshot.probed_switched_on,
        "environment": snapshot.environment,
        "coverage": snapshot.coverage,
        "fields": {p: f.raw for p, f in snapshot.fields.items()},
        "field_order": list(snapshot.fields),
        "sections": {p: s.raw for p, s in snapshot.sections.items()},
        "removed": {p: r.raw for p, r in snapshot.removed.items()},
        "enums": {n: e.raw for n, e in snapshot.enums.items()},
        "catalogs": {n: c.raw for n, c in snapshot.catalogs.items()},
        "by_section": {s: {k: f.path for k, f in d.items()} for s, d in snapshot.by_section.items()},
        "by_python_name": {s: {k: f.path for k, f in d.items()} for s, d in snapshot.by_python_name.items()},
        "by_key": snapshot.by_key,
        "removed_by_section": {s: list(d) for s, d in snapshot.removed_by_section.items()},
        "all_paths": snapshot.all_paths,
        "names": snapshot.names,
        "patterns": snapshot.patterns,
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_indexed_snapshot_equals_the_whole_one(version: str) -> None:
    indexed = paths_index.load_indexed(str(ROOT / version / store.SNAPSHOT_FILE))
    assert isinstance(indexed, paths_index.IndexedSnapshot), "paths.json is stale: python -m dsfields.model.paths_index"
    whole = store.load(version, ROOT)
    assert _view(indexed) == _view(whole)
    assert indexed.raw == whole.raw


def test_index_records_are_decoded_only_when_used() -> None:
    indexed = store.load_indexed(VERSIONS[-1], ROOT)
    assert isinstance(indexed, paths_index.IndexedSnapshot)
    section = indexed.by_section["zero_optimization"]
    decoded = [f for f in indexed.fields.values() if record_decoded(f)]
    assert not decoded
    assert section["stage3_max_live_parameters"].default == 1_000_000_000
    assert [p for p, f in indexed.fields.items() if record_decoded(f)] == [
        "zero_optimization.stage3_max_live_parameters"]


def test_what_lookup_and_check_read_of_every_snapshot_decodes_no_whole_file() -> None:
    """The prose scope reads ``document``, check's switch rule ``probed_switched_on``: from the index, each."""
    indexed = store.load_indexed(VERSIONS[-1], ROOT)
    assert isinstance(indexed, paths_index.IndexedSnapshot)
    assert indexed.document == "training" and isinstance(indexed.probed_switched_on, dict)
    assert indexed.version and indexed.coverage is not None
    assert "raw" not in indexed.__dict__  # cached_property: set only once the whole fields.json is decoded


def test_stale_or_missing_index_loads_the_whole_snapshot(tmp_path) -> None:
    version = VERSIONS[-1]
    copy = tmp_path / version
    shutil.copytree(ROOT / version, copy)
    with open(copy / store.SNAPSHOT_FILE, "a", encoding="utf-8") as handle:
        handle.write("\n")  # another size: the index no longer describes it
    assert paths_index.load_indexed(str(copy / store.SNAPSHOT_FILE)) is None
    snapshot = store.load_indexed(version, tmp_path)
    assert not isinstance(snapshot, paths_index.IndexedSnapshot)
    assert snapshot.version == version
    (copy / paths_index.INDEX_NAME).unlink()
    assert paths_index.load_indexed(str(copy / store.SNAPSHOT_FILE)) is None
