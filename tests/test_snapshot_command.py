"""``dsfields snapshot``: failures are recorded with their cause, up-to-date snapshots are skipped."""

from __future__ import annotations

import json

from dsfields.cli import main
from dsfields.extract import snapshot_command
from dsfields.model.store import FORMAT_VERSION


def test_a_failing_release_is_recorded_not_fatal(tmp_path, monkeypatch, capsys):
    # Stands in for a release that cannot be extracted (the real cause comes from releases.py).
    monkeypatch.setattr(snapshot_command, "extract_release", lambda version, root: "ImportError: no module x")
    assert main(["snapshot", "0.1.0", "--out", str(tmp_path)]) == 1
    failures = json.loads((tmp_path / "failures.json").read_text())
    assert failures == {"0.1.0": "ImportError: no module x"}
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["failed"] == {"0.1.0": "ImportError: no module x"}
    err = capsys.readouterr().err
    assert "FAILED: ImportError: no module x" in err and "Traceback" not in err


def test_up_to_date_snapshots_are_skipped_and_stale_ones_redone(tmp_path, monkeypatch, capsys):
    for version, fmt in (("0.1.0", FORMAT_VERSION), ("0.2.0", FORMAT_VERSION - 1)):
        (tmp_path / version).mkdir()
        (tmp_path / version / "fields.json").write_text(json.dumps({"format_version": fmt}))
    done: list[str] = []

    def fake(version, root):
        done.append(version)
        (root / version / "fields.json").write_text(json.dumps({"format_version": FORMAT_VERSION}))

    monkeypatch.setattr(snapshot_command, "extract_release", fake)
    assert main(["snapshot", "0.1.0", "0.2.0", "--out", str(tmp_path)]) == 0
    assert done == ["0.2.0"]
    assert "1 up to date, 1 to extract" in capsys.readouterr().err


def test_no_versions_is_unusable_input(tmp_path, capsys):
    assert main(["snapshot", "--out", str(tmp_path)]) == 2
    assert "name VERSIONs or use --all" in capsys.readouterr().err
