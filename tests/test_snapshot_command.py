"""``dsfields snapshot``: failures are recorded with their cause, up-to-date snapshots are skipped."""

from __future__ import annotations

import json

import pytest

from dsfields.cli import main
from dsfields.extract import snapshot_command
from dsfields.model.store import FORMAT_VERSION

pytestmark = pytest.mark.unit


def test_a_failing_release_is_recorded_not_fatal(tmp_path, monkeypatch, capsys):
    # Stands in for a release that cannot be extracted (the real cause comes from releases.py).
    monkeypatch.setattr(snapshot_command, "extract_release", lambda version, root, launch: "ImportError: no module x")
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
        (tmp_path / version / "inference.json").write_text("{}")
    done: list[str] = []

    def fake(version, root, launch):
        done.append(version)
        (root / version / "fields.json").write_text(json.dumps({"format_version": FORMAT_VERSION}))

    monkeypatch.setattr(snapshot_command, "extract_release", fake)
    assert main(["snapshot", "0.1.0", "0.2.0", "--out", str(tmp_path)]) == 0
    assert done == ["0.2.0"]
    assert "1 up to date, 1 to extract" in capsys.readouterr().err


def test_no_versions_is_unusable_input(tmp_path, capsys):
    assert main(["snapshot", "--out", str(tmp_path)]) == 2
    assert "name VERSIONs or use --all" in capsys.readouterr().err


def _snapshot(root, version, fields, launch=None):
    (root / version).mkdir(parents=True, exist_ok=True)
    witnesses = {"launch": launch if launch is not None else "not run (dsfields extract --launch)"}
    (root / version / "fields.json").write_text(json.dumps(
        {"format_version": FORMAT_VERSION, "coverage": {"fields": fields, "witnesses": witnesses}}))


def test_launch_runs_every_witness_in_the_release_and_reports_its_outcomes(tmp_path, monkeypatch, capsys):
    import subprocess

    from dsfields.extract import releases

    _snapshot(tmp_path, "0.1.0", 10)  # up to date, but without the launch witness: --launch redoes it
    calls: list[list[str]] = []

    def fake_run(version, argv, timeout, **_):
        calls.append(argv)
        if "--inference" in argv:
            (tmp_path / version / "inference.json").write_text("{}")
            return subprocess.CompletedProcess(argv, 0, "", "")
        _snapshot(tmp_path, version, 12, {"configs": 3, "paths": 40,
                                          "outcomes": {"launched": 1, "config_error": 1, "machine_error": 1}})
        (tmp_path / version / "launch.json").write_text(json.dumps({"rules": {
            "a": {"confirmed": True}, "b": {"confirmed": False, "why_not": ["plain trigger failed for a machine "
                                                                            "reason (fp16-on-cpu)"]}}}))
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(releases, "run_in_release", fake_run)
    assert main(["snapshot", "0.1.0", "--launch", "--out", str(tmp_path)]) == 0
    assert calls and "--launch" in calls[0] and "--launch-rules" in calls[0]
    assert calls[1] == ["dsfields", "extract", "--inference", "--out", str(tmp_path)]  # the same run writes both
    err = capsys.readouterr().err
    assert "0 up to date, 1 to extract" in err
    assert ("0.1.0    ok: 12 fields (was 10); launch witness: 40 paths from 3 configs (1 launched, 1 refused, "
            "1 machine); rules: 1/2 confirmed, 1 unconfirmed for a machine reason") in err
    calls.clear()
    assert main(["snapshot", "0.1.0", "--launch", "--out", str(tmp_path)]) == 0  # now it has every witness
    assert not calls
    assert main(["snapshot", "0.1.0", "--force", "--out", str(tmp_path)]) == 0  # without --launch: no launch
    assert calls and "--launch" not in calls[0]


def test_releases_are_extracted_newest_first(tmp_path, monkeypatch):
    done: list[str] = []
    monkeypatch.setattr(snapshot_command, "extract_release", lambda version, root, launch: done.append(version))
    assert main(["snapshot", "0.9.1", "0.10.0", "0.8.2", "--jobs", "1", "--out", str(tmp_path)]) == 0
    assert done == ["0.10.0", "0.9.1", "0.8.2"]


def test_another_run_recording_its_releases_meanwhile_is_kept(tmp_path, monkeypatch):
    (tmp_path / "failures.json").write_text(json.dumps({"0.3.0": "ImportError: old cause"}))

    def fake(version, root, launch):
        # A second `dsfields snapshot` on the same tree finishes while this one extracts: 0.3.0 now
        # snapshots, 0.4.0 failed.
        (root / "failures.json").write_text(json.dumps({"0.4.0": "ImportError: its cause"}))
        return "ImportError: no module x"

    monkeypatch.setattr(snapshot_command, "extract_release", fake)
    assert main(["snapshot", "0.1.0", "--out", str(tmp_path)]) == 1
    assert json.loads((tmp_path / "failures.json").read_text()) == {
        "0.1.0": "ImportError: no module x", "0.4.0": "ImportError: its cause"}


def test_releases_are_prepared_oldest_first_then_in_extraction_order():
    # The oldest's runtime (pydantic 1 for 0.8-0.11) installs beside the newest's, not after 60 releases.
    todo = ["0.8.0", "0.9.0", "0.18.0", "0.19.8"]  # sorted oldest first, as run() keeps them
    assert snapshot_command.preparation_order(todo) == ["0.8.0", "0.19.8", "0.18.0", "0.9.0"]
    assert snapshot_command.preparation_order([]) == []


def test_without_transformers_beside_dsfields_the_release_is_still_extracted(tmp_path, monkeypatch, capsys):
    # Format 3: a snapshot holds no HF Trainer fill list (generated/hf/ does), so transformers is not needed.
    from dsfields.extract import releases

    extracted = []
    monkeypatch.setattr(releases, "same_transformers", lambda: ())
    monkeypatch.setattr(snapshot_command, "extract_release",
                        lambda version, root, launch: extracted.append(version) or "ImportError: stop here")
    main(["snapshot", "0.1.0", "--out", str(tmp_path)])
    assert extracted == ["0.1.0"]
    assert "transformers" not in capsys.readouterr().err


def test_a_release_without_its_inference_document_is_redone_and_a_failed_one_reported(tmp_path, monkeypatch,
                                                                                       capsys):
    """Issue 29: ``snapshot`` writes inference.json beside fields.json; a current fields.json without one is
    not up to date, and an inference extraction that fails fails the release with its cause."""
    import subprocess

    from dsfields.extract import releases

    _snapshot(tmp_path, "0.1.0", 10)
    calls: list[list[str]] = []

    def fake_run(version, argv, timeout, **_):
        calls.append(argv)
        if "--inference" in argv:
            return subprocess.CompletedProcess(argv, 2, "", "dsfields extract --inference: ImportError: x\n")
        _snapshot(tmp_path, version, 10)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(releases, "run_in_release", fake_run)
    assert main(["snapshot", "0.1.0", "--out", str(tmp_path)]) == 1
    assert [("--inference" in c) for c in calls] == [False, True]
    err = capsys.readouterr().err
    assert "0 up to date, 1 to extract" in err
    assert "FAILED: inference: dsfields extract --inference: ImportError: x" in err
