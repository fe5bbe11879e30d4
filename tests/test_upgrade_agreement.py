"""``upgrade`` says what ``check`` and ``resolve`` say, across releases (issue 39).

On the shared real-world configs, for every consecutive pair of snapshotted releases and ten long jumps:
"Keys no longer read" is exactly the written keys ``resolve --version U`` reads and ``resolve --version V`` does
not; "Now refused" exactly the errors ``check --version V`` reports and ``check --version U`` did not (the same
key and rule); "Refused by both" the rest of V's errors; and ``upgrade`` exits 1 exactly where ``check --version V``
does. The expected sets are asked here from the check engine and the resolver directly, not from upgrade's
:class:`~dsfields.upgrade.Judge`. Every snapshot is loaded once; every file is judged once per release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsfields.check import Checker, Options
from dsfields.cli import main
from dsfields.configfile import ConfigFile, ConfigFileError, load
from dsfields.model.store import available_versions, load_requested, release_at, release_dates
from dsfields.resolve import IGNORED, REMOVED, Resolver
from dsfields.upgrade import Judge, report

pytestmark = pytest.mark.data

SHARED = Path(__file__).resolve().parents[2] / "shared" / "realworld-configs"
LONG_JUMPS = [("0.8.0", "0.19.8"), ("0.9.5", "0.14.4"), ("0.10.3", "0.19.8"), ("0.12.6", "0.16.0"),
              ("0.14.4", "0.19.8"), ("0.8.0", "0.12.0"), ("0.11.1", "0.17.6"), ("0.13.0", "0.19.5"),
              ("0.15.4", "0.19.8"), ("0.9.0", "0.18.0")]


def shared_configs() -> list[ConfigFile]:
    out = []
    for path in sorted(SHARED.glob("*.json")):
        try:
            out.append(load(path, "deepspeed"))
        except ConfigFileError:
            continue  # index.json (an array), not a config
    return out


def pairs(versions: list[str]) -> list[tuple[str, str]]:
    jumps = [(u, v) for u, v in LONG_JUMPS if u in versions and v in versions]
    assert len(jumps) == len(LONG_JUMPS), "a long jump names a release with no snapshot"
    return list(zip(versions, versions[1:], strict=False)) + jumps


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared real-world configs are not on this machine")
def test_upgrade_agrees_with_check_and_resolve_on_every_pair():
    versions = available_versions()
    snapshots = {v: load_requested(v) for v in versions}
    configs = shared_configs()
    assert len(configs) >= 60
    checked = disagreements = 0
    examples: list[str] = []
    for config in configs:
        errors: dict[str, set[tuple[str, str | None]]] = {}
        reads: dict[str, set[str]] = {}
        for version, snapshot in snapshots.items():
            findings = Checker(snapshot).check(config, Options())
            errors[version] = {(f.path, f.rule) for f in findings if f.severity.value == "error"}
            reads[version] = {r.path for r in Resolver(snapshot).resolve(config.data)
                              if r.written and r.source not in (IGNORED, REMOVED)}
        judge = Judge(config)
        for u, v in pairs(versions):
            items = report(config.data, snapshots[u], snapshots[v], judge=judge)
            said_gone = {i.path for i in items if i.kind == "removed"}
            said_new = {(i.data["check"]["path"], i.data["check"]["rule"]) for i in items if i.kind == "rejected"}
            said_still = {(i.data["check"]["path"], i.data["check"]["rule"]) for i in items if i.kind == "still"}
            expected = (reads[u] - reads[v], errors[v] - errors[u], errors[v] & errors[u])
            checked += 1
            if (said_gone, said_new, said_still) != expected:
                disagreements += 1
                examples.append(f"{config.name} {u}→{v}: said {(said_gone, said_new, said_still)}, "
                                f"check/resolve {expected}")
    assert checked == len(configs) * (len(versions) - 1 + len(LONG_JUMPS))
    assert disagreements == 0, "\n".join(examples[:10])


def test_upgrade_says_what_check_says_on_transformers_zero3(tmp_path, capsys):
    """The issue's case: transformers' ZeRO-3 test config, 0.19.5 → 0.19.8. ``reduce_bucket_size: 0`` is refused
    from 0.19.6 on (check says so), the optimizer's params are passed on in both releases (not "no longer read"),
    and the exit code is check's."""
    config = {"optimizer": {"type": "AdamW", "params": {"lr": 3e-5, "betas": [0.8, 0.999], "eps": 1e-8,
                                                        "weight_decay": 3e-7}},
              "zero_optimization": {"stage": 3, "reduce_bucket_size": 0}, "train_batch_size": 8}
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(config))
    code = main(["upgrade", str(path), "--from", "0.19.5", "--to", "0.19.8", "--format", "json"])
    items = json.loads(capsys.readouterr().out)["items"]
    assert [i["path"] for i in items if i["kind"] == "rejected"] == ["zero_optimization.reduce_bucket_size"]
    assert not [i for i in items if i["kind"] == "removed"]
    check_code = main(["check", str(path), "--version", "0.19.8"])
    capsys.readouterr()
    assert code == check_code == 1
    assert main(["upgrade", str(path), "--from", "0.19.8", "--to", "0.19.8"]) == 1  # still refused: check's code
    assert "Refused by both releases" in capsys.readouterr().out


def test_from_date_names_the_newest_release_published_by_then(tmp_path, capsys):
    version, published = release_at("2023-05")
    assert published <= "2023-05-31"
    assert all(date > "2023-05-31" for v, date in release_dates() if v != version and date >= published)
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": 8}')
    assert main(["upgrade", str(path), "--from-date", "2023-05", "--to", "0.19.8"]) == 0
    out = capsys.readouterr().out
    assert f"from DeepSpeed {version} to 0.19.8" in out and f"published {published}" in out
    assert main(["upgrade", str(path), "--from-date", "1999-01", "--to", "0.19.8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no snapshotted DeepSpeed release was published by 1999-01" in err
    assert main(["upgrade", str(path), "--from-date", "2023-13", "--to", "0.19.8"]) == 2
    assert main(["upgrade", str(path), "--from", "0.10.3", "--from-date", "2023-05", "--to", "0.19.8"]) == 2
