"""What is known about other releases' keys is judged once per process, and a wheel's snapshots are not
decompressed to learn their sizes: each unknown key ``check`` meets used to cost two staleness tests of
``index.json``, each decompressing every release's ``fields.json.gz`` (0.2-0.4 s of CPU per key in a wheel).

Hand-made releases in ``tmp_path`` (test_history.py's ``write_snapshot``), compressed as the wheel's build hook
compresses them.
"""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pytest
from test_history import Z, field_record, removed_record, write_snapshot

from dsfields.model import generated, history
from dsfields.model.history import EventKind, departure, field_history, read_index, write_index
from dsfields.model.store import SNAPSHOT_FILE

pytestmark = pytest.mark.unit


def _compress(root: Path) -> None:
    """Every release's fields.json as hatch_build.py ships it (gzip, mtime 0, no name), the plain file gone."""
    for plain in root.glob(f"*/{SNAPSHOT_FILE}"):
        with open(plain.with_name(plain.name + ".gz"), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
                out.write(plain.read_bytes())
        plain.unlink()


@pytest.fixture
def wheel_tree(tmp_path: Path) -> Path:
    """Three releases: ``gone`` read in 0.1.0, rejected from 0.2.0 on; the index written, then compressed."""
    write_snapshot(tmp_path, "0.1.0", [field_record(f"{Z}.kept"), field_record(f"{Z}.gone")])
    write_snapshot(tmp_path, "0.2.0", [field_record(f"{Z}.kept")],
                   removed=[removed_record(f"{Z}.gone", "gone has been removed.")])
    write_snapshot(tmp_path, "0.3.0", [field_record(f"{Z}.kept")])
    write_index(tmp_path)
    _compress(tmp_path)
    for path in tmp_path.rglob("*"):  # installed a minute ago: a verdict on files written just now is not kept
        os.utime(path, (time.time() - 60, time.time() - 60))
    return tmp_path


def test_a_compressed_snapshots_size_comes_from_its_gzip_trailer(wheel_tree: Path, monkeypatch) -> None:
    plain_sizes = {}
    for packed in wheel_tree.glob(f"*/{SNAPSHOT_FILE}.gz"):
        plain_sizes[packed.parent.name] = len(gzip.decompress(packed.read_bytes()))

    def no_decompression(path: str) -> bytes:
        raise AssertionError(f"decompressed {path} to learn its size")

    monkeypatch.setattr(generated, "read_generated", no_decompression)
    assert {version: generated.generated_size(str(wheel_tree / version / SNAPSHOT_FILE))
            for version in plain_sizes} == plain_sizes


def test_a_damaged_compressed_snapshot_is_an_oserror(tmp_path: Path) -> None:
    (tmp_path / "0.1.0").mkdir()
    (tmp_path / "0.1.0" / f"{SNAPSHOT_FILE}.gz").write_bytes(b"not gzip at all, but long enough")
    with pytest.raises(OSError, match="not a gzip file"):
        generated.generated_size(str(tmp_path / "0.1.0" / SNAPSHOT_FILE))


def test_the_index_is_judged_once_for_many_keys_and_again_after_a_write(wheel_tree: Path, monkeypatch) -> None:
    judged: list[Path] = []
    real = history._stale_reason

    def counting(index, root, signature=None):
        judged.append(root)
        return real(index, root, signature)

    monkeypatch.setattr(history, "_stale_reason", counting)
    for _ in range(10):  # ten unknown keys of one config: each asks how the key left
        gone = departure(f"{Z}.gone", "0.3.0", wheel_tree)
        assert gone is not None and (gone.kind, gone.version, gone.last) == (EventKind.BECAME_REMOVED, "0.2.0", "0.1.0")
    assert [os.fspath(root) for root in judged] == [os.fspath(wheel_tree)]
    assert read_index(wheel_tree) is not None and len(judged) == 1
    told = field_history(f"{Z}.gone", wheel_tree)

    # A release rewritten (another size): the index is judged again, found stale, and the snapshots walked.
    packed = wheel_tree / "0.3.0" / f"{SNAPSHOT_FILE}.gz"
    text = gzip.decompress(packed.read_bytes()) + b"\n"
    packed.write_bytes(gzip.compress(text))
    assert read_index(wheel_tree) is None and len(judged) == 2
    assert field_history(f"{Z}.gone", wheel_tree) == told  # the walk tells the index's story
    assert len(judged) == 3  # written just now: judged again at each read, until it has settled


def test_check_judges_the_index_once_for_all_its_unknown_keys(wheel_tree: Path, monkeypatch) -> None:
    """Each unknown key asks how it left (departure) and whether a later release has it (arrival): one check run
    judges the index once, not once per key (a judgement stats every release's snapshot)."""
    from dsfields.check import Checker, Options
    from dsfields.configfile import parse
    from dsfields.model.store import load

    monkeypatch.setenv("DSFIELDS_GENERATED", str(wheel_tree))
    judged: list[object] = []
    real = history._signature

    def counting(root):
        judged.append(root)
        return real(root)

    monkeypatch.setattr(history, "_signature", counting)
    config = parse('{"typo_one": 1, "typo_two": 2, "typo_three": 3, "typo_four": 4}', "ds.json")
    found = Checker(load("0.3.0", wheel_tree)).check(config, Options())
    unknown = sorted(f.path for f in found if "is not a key of the top level" in f.message)
    assert unknown == ["typo_four", "typo_one", "typo_three", "typo_two"]
    assert len(judged) == 1


def test_the_wheels_stored_sizes_spare_the_trailers_and_a_rewritten_snapshot_is_still_stale(
        wheel_tree: Path, monkeypatch) -> None:
    """The wheel's build writes each fields.json.gz size (hatch_build.py, stored.json): a snapshot still of that size
    is not opened to judge the index; one rewritten since (another size) is, and the index is found stale."""
    history.write_stored_sizes(wheel_tree)
    opened: list[str] = []
    real = generated.generated_size

    def counting(path: str) -> int:
        opened.append(path)
        return real(path)

    monkeypatch.setattr(history, "generated_size", counting)
    index = history.read_index(wheel_tree)
    assert index is not None and history._stale_reason(index, wheel_tree) is None and opened == []
    packed = wheel_tree / "0.2.0" / f"{SNAPSHOT_FILE}.gz"
    packed.write_bytes(gzip.compress(gzip.decompress(packed.read_bytes()) + b"\n" * 50))
    assert history._stale_reason(index, wheel_tree) == "0.2.0: snapshot size differs from the indexed one"
    assert opened == [str(wheel_tree / "0.2.0" / SNAPSHOT_FILE)]
