"""The unit lane's guard, the light wheel's compressed snapshots, and the wheel itself."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO
from lanes import LaneViolation

from dsfields.model import paths_index, store
from dsfields.model.store import dumps


@pytest.mark.unit
def test_a_unit_test_cannot_read_the_committed_snapshots():
    with pytest.raises(LaneViolation, match="committed snapshot"):
        open(REPO / "generated" / "index.json", "rb").close()
    with pytest.raises(LaneViolation, match="listed"):
        os.listdir(REPO / "generated")


@pytest.mark.unit
def test_a_unit_test_cannot_start_a_compiler():
    with pytest.raises(LaneViolation, match="started g\\+\\+"):
        subprocess.run(["g++", "--version"], capture_output=True)


def _tree(root: Path, snapshot: dict, compressed: bool) -> None:
    folder = root / snapshot["deepspeed_version"]
    folder.mkdir(parents=True)
    text = dumps(snapshot)
    index = paths_index.build(text)
    for name, content in (("fields.json", text), ("paths.json", index)):
        data = content.encode("utf-8")
        if compressed:
            with gzip.GzipFile(folder / (name + ".gz"), "wb", mtime=0) as out:
                out.write(data)
        else:
            (folder / name).write_bytes(data)


@pytest.mark.unit
def test_a_compressed_tree_answers_as_the_plain_one(tmp_path, fake_snapshot):
    """What the wheel ships (each release's files gzip-compressed) reads back as the checkout's tree."""
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    _tree(plain, fake_snapshot, compressed=False)
    _tree(packed, fake_snapshot, compressed=True)
    version = fake_snapshot["deepspeed_version"]
    assert store.available_versions(packed) == store.available_versions(plain) == [version]
    a, b = store.load(version, plain), store.load(version, packed)
    assert a.raw == b.raw
    indexed = store.load_indexed(version, packed)
    assert type(indexed).__name__ == "IndexedSnapshot"  # the byte spans hold in the decompressed bytes
    assert sorted(indexed.fields) == sorted(a.fields)
    for path in list(a.fields)[:20]:
        assert indexed.fields[path].raw == a.fields[path].raw
    fields = os.fspath(packed / version / "fields.json")
    assert store.generated_size(fields) == os.stat(plain / version / "fields.json").st_size
    assert store.read_generated(fields) == (plain / version / "fields.json").read_bytes()


@pytest.mark.unit
def test_a_corrupt_compressed_snapshot_is_one_clear_error(tmp_path, fake_snapshot):
    _tree(tmp_path, fake_snapshot, compressed=True)
    version = fake_snapshot["deepspeed_version"]
    target = tmp_path / version / "fields.json.gz"
    target.write_bytes(target.read_bytes()[:100])
    store._load_cached.cache_clear()
    with pytest.raises(store.SnapshotError, match="cannot read snapshot"):
        store.load(version, tmp_path)


@pytest.mark.build
def test_the_wheel_is_light_and_carries_what_an_install_needs(tmp_path):
    """The wheel: every release's snapshot (compressed, byte-identical once decompressed), the docs sources,
    and at most 15 MB once installed."""
    pytest.importorskip("build")
    subprocess.run([sys.executable, "-m", "build", "-q", "--wheel", "--outdir", str(tmp_path), str(REPO)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("dsfields-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        infos = archive.infolist()
        names = {info.filename for info in infos}
        installed = sum(info.file_size for info in infos)
        versions = sorted(p.name for p in (REPO / "generated").iterdir() if (p / "fields.json").is_file())
        for version in versions:
            packed = archive.read(f"dsfields/generated/{version}/fields.json.gz")
            assert gzip.decompress(packed) == (REPO / "generated" / version / "fields.json").read_bytes()
            assert f"dsfields/generated/{version}/paths.json.gz" in names
        assert sorted(json.loads(archive.read("dsfields/generated/index.json"))["versions"]) == versions
        assert {"dsfields/site_src/mkdocs.yml", "dsfields/site_src/mkdocs.zh.yml",
                "dsfields/site_src/docs/index.md", "dsfields/docs/hooks.py"} <= names
        assert not any(name.endswith("verification.json") for name in names)
    assert installed <= 15 * 2**20, f"{installed / 2**20:.1f} MiB installed"


@pytest.mark.data
def test_the_public_face_answers_as_the_commands(tmp_path):
    import dsfields

    assert set(dsfields.__all__) == {"DsfieldsError", "Snapshot", "check_file", "diff_releases", "load_snapshot",
                                     "lookup_key"}
    snapshot = dsfields.load_snapshot("0.19.8")
    assert isinstance(snapshot, dsfields.Snapshot) and snapshot.version == "0.19.8"
    (answer,) = [a for a in dsfields.lookup_key("stage3_max_live_parameters", "0.19.8")
                 if a["path"] == "zero_optimization.stage3_max_live_parameters"]
    assert answer["field"]["default"] == snapshot.fields["zero_optimization.stage3_max_live_parameters"].default
    config = tmp_path / "ds.json"
    config.write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 2, "overlap_comn": true}}')
    report = dsfields.check_file(config, "0.19.8")
    assert report.error is None
    assert any(f.path == "zero_optimization.overlap_comn" for f in report.findings)
    changes = dsfields.diff_releases("0.14.4", "0.19.8")
    assert changes and all(hasattr(change, "path") for change in changes)
    with pytest.raises(dsfields.DsfieldsError):
        dsfields.load_snapshot("0.0.1")
