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


_LANE_MODULES = {
    "test_whole.py": "import pytest\npytestmark = pytest.mark.data\ndef test_a(): pass\ndef test_b(): pass\n",
    "test_mixed.py": ('import pytest\npytestmark = pytest.mark.lane("unit")\ndef test_pure(): pass\n'
                      "@pytest.mark.data\n@pytest.mark.parametrize('n', [1, 2])\ndef test_reads(n): pass\n"
                      "@pytest.mark.deepspeed\ndef test_runs(): pass\n"),
}


def _collect(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text('pytest_plugins = ("lanes",)\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), str(REPO / "extractor")])}
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-c", os.devnull, "--rootdir", str(folder), *args, str(folder)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.unit
def test_lanes_come_from_the_modules_marks_and_pytest_m_selects_each_test_once(tmp_path):
    for name, text in _LANE_MODULES.items():
        (tmp_path / name).write_text(text)
    selected = {}
    for lane in ("unit", "data", "integration"):
        done = _collect(tmp_path, "-m", lane)
        assert done.returncode == 0, done.stdout + done.stderr
        selected[lane] = sorted(line for line in done.stdout.splitlines() if "::" in line)
    assert selected == {
        "unit": ["test_mixed.py::test_pure"],
        "data": ["test_mixed.py::test_reads[1]", "test_mixed.py::test_reads[2]", "test_whole.py::test_a",
                 "test_whole.py::test_b"],
        "integration": ["test_mixed.py::test_runs"],
    }


@pytest.mark.unit
@pytest.mark.parametrize(("text", "problem"), [
    ("def test_nothing(): pass\n", "lanes none"),
    ("import pytest\npytestmark = pytest.mark.unit\n@pytest.mark.data\ndef test_both(): pass\n",
     "lanes ['data', 'unit']"),
], ids=["no-lane", "module-and-test-disagree"])
def test_a_test_without_exactly_one_lane_fails_collection(tmp_path, text, problem):
    (tmp_path / "test_bad.py").write_text(text)
    done = _collect(tmp_path)
    assert done.returncode != 0 and problem in done.stdout + done.stderr, done.stdout + done.stderr


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
    """The wheel: every release's snapshot (compressed, byte-identical once decompressed; the newest's files that
    check and lookup read plain), the docs sources, and at most 17 MiB once installed (16.3 MiB measured once the
    newest release's files were shipped plain, for ~2 ms of every check; 15.5 MiB when explain's message
    catalogues, 3.7 MiB of it, and the world rules came in; 15 MiB before them)."""
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
            committed = (REPO / "generated" / version / "fields.json").read_bytes()
            # the newest, read by check and lookup on every call: plain (hatch_build.py)
            if version == store.available_versions(REPO / "generated")[-1]:
                assert archive.read(f"dsfields/generated/{version}/fields.json") == committed
                assert {f"dsfields/generated/{version}/{n}" for n in ("paths.json", "launch.json", "world.json")
                        } <= names
                assert f"dsfields/generated/{version}/fields.json.gz" not in names
            else:
                assert gzip.decompress(archive.read(f"dsfields/generated/{version}/fields.json.gz")) == committed
                assert f"dsfields/generated/{version}/paths.json.gz" in names
            # lookup's "also an inference key?" from the build hook's index of the inference document
            inference = REPO / "generated" / version / "inference.json"
            if inference.is_file():
                index = archive.read(f"dsfields/generated/{version}/{paths_index.index_name(str(inference))}.gz")
                assert gzip.decompress(index).decode("utf-8") == paths_index.build(inference.read_text("utf-8"))
        assert sorted(json.loads(archive.read("dsfields/generated/index.json"))["versions"]) == versions
        assert {"dsfields/site_src/mkdocs.yml", "dsfields/site_src/mkdocs.zh.yml",
                "dsfields/site_src/docs/index.md", "dsfields/docs/hooks.py"} <= names
        assert not any(name.endswith("verification.json") for name in names)
    assert installed <= 17 * 2**20, f"{installed / 2**20:.1f} MiB installed"


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
