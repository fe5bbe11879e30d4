"""The snapshot contract: every committed snapshot matches the documented schema; writes are atomic."""

from __future__ import annotations

import json
import stat
from functools import cache

import pytest
from conftest import REPO

from dsfields.model import store as snapshot

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

SCHEMA = json.loads((REPO / "extractor" / "dsfields" / "snapshot.schema.json").read_text())
COMMITTED = sorted((REPO / "generated").glob("*/fields.json"))


@cache
def _validator():
    """One validator of the schema (checked by the test below) for the 77 snapshots: ``jsonschema.validate`` checks
    the schema and builds a validator again for each."""
    import jsonschema

    return jsonschema.Draft202012Validator(SCHEMA)


def test_schema_is_valid_draft_2020_12():
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.data
@pytest.mark.parametrize("path", COMMITTED, ids=[p.parent.name for p in COMMITTED])
def test_committed_snapshot_matches_schema_and_is_canonical(path):
    text = path.read_text()
    data = json.loads(text)
    _validator().validate(data)
    assert data["deepspeed_version"] == path.parent.name
    # Canonical bytes: what write_atomic(dumps(...)) produces, so re-extraction diffs are real.
    assert snapshot.dumps(data) == text


def test_fixture_snapshot_matches_schema(fake_snapshot):
    import jsonschema

    jsonschema.validate(fake_snapshot, SCHEMA)


def test_write_atomic_leaves_no_partial_file(tmp_path):
    target = tmp_path / "v" / "fields.json"
    snapshot.write_atomic(target, "{}\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


    with pytest.raises(TypeError):
        snapshot.write_atomic(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "{}\n"
    assert [p.name for p in target.parent.iterdir()] == ["fields.json"]


def test_version_order_is_release_order():
    versions = ["0.10.0", "0.9.10", "0.9.2", "0.19.8", "0.8.0"]
    assert sorted(versions, key=snapshot.version_key) == ["0.8.0", "0.9.2", "0.9.10", "0.10.0", "0.19.8"]


def test_unknown_version_names_the_available_ones(tmp_path):
    (tmp_path / "0.1.0").mkdir()
    (tmp_path / "0.1.0" / "fields.json").write_text(json.dumps({"format_version": snapshot.FORMAT_VERSION}))
    with pytest.raises(snapshot.SnapshotError, match=r"no snapshot for DeepSpeed 9\.9\.9 \(available: 0\.1\.0\)"):
        snapshot.resolve_version("9.9.9", tmp_path)
    with pytest.raises(snapshot.SnapshotError, match="format_version"):
        (tmp_path / "0.2.0").mkdir()
        (tmp_path / "0.2.0" / "fields.json").write_text(json.dumps({"format_version": 0}))
        snapshot.load("0.2.0", tmp_path)
