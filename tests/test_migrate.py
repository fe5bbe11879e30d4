"""migrate: renames, conversions and removals as text edits (comments survive), and the real corpus.

Unit tests run on the fixture package's snapshot (tests/fixtures/fakeds); the corpus test migrates every
real config to 0.19.8 and asks DeepSpeedConfig, resolve and check --strict about the result.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import requires_deepspeed
from test_check_differential import CORPUS, corpus_files, for_deepspeed
from test_resolve import build

from dsfields.check import Checker, Kind, Options, Severity
from dsfields.cli import main
from dsfields.configfile import ConfigFileError, load, parse
from dsfields.migrate import apply, plan
from dsfields.model.records import Snapshot
from dsfields.model.store import load as load_snapshot
from dsfields.resolve import CONVERSIONS, Resolver

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

VERSION = "0.19.8"


@pytest.fixture(scope="module")
def fake(fake_snapshot) -> Snapshot:
    return Snapshot.from_dict(fake_snapshot)


def migrate_text(text: str, snapshot: Snapshot, drop_ignored: bool = False) -> tuple[str, list[str], list[str]]:
    config = parse(text, "<t>")
    result = plan(config, snapshot, drop_ignored)
    return apply(text, config, result.edits), [e.message for e in result.edits], result.notes


@pytest.mark.data
def test_conversions_are_for_deprecations_that_convert():
    snapshot = load_snapshot(VERSION)
    for path in CONVERSIONS:
        info = snapshot.fields[path].deprecated
        assert info is not None and info.converts_value, path
    converting = {p for p, f in snapshot.fields.items() if f.deprecated and f.deprecated.converts_value}
    assert converting == set(CONVERSIONS)


def test_rename_keeps_order_and_formatting(fake):
    text = '{\n  "legacy": {"old_flag": 3, "other": 1},\n  "train_batch_size": 8\n}\n'
    new, changes, _ = migrate_text(text, fake)
    assert new == '{\n  "legacy": {"legacy_bucket": 3, "other": 1},\n  "train_batch_size": 8\n}\n'
    assert changes == ["legacy.old_flag → legacy.legacy_bucket (deprecated, renamed)"]


def test_conversion_and_removal_with_hjson_comments(fake):
    text = ("{\n  # offload to the CPU\n  zero_optimization: {\n    cpu_offload: true  # old style\n"
            "    mics_shard_size: 4\n  }\n  // checkpoints\n  nebula: {enabled: false}\n  train_batch_size: 8\n}\n")
    new, changes, notes = migrate_text(text, fake)
    assert new == ("{\n  # offload to the CPU\n  zero_optimization: {\n    offload_optimizer: {\"device\": \"cpu\"}"
                   "  # old style\n  }\n  // checkpoints\n  train_batch_size: 8\n}\n")
    assert len(changes) == 3 and not notes
    assert parse(new, "<t>").data == {"zero_optimization": {"offload_optimizer": {"device": "cpu"}},
                                      "train_batch_size": 8}


def test_false_offload_is_deleted_and_said(fake):
    new, changes, _ = migrate_text('{"zero_optimization": {"stage": 1, "cpu_offload": false}}', fake)
    assert json.loads(new) == {"zero_optimization": {"stage": 1}}
    assert "means no offload_optimizer" in changes[0]


def test_ignored_keys_reported_or_dropped(fake):
    text = '{"train_batch_size": 8, "my_note": "x"}'
    new, changes, notes = migrate_text(text, fake)
    assert new == text and not changes and "my_note" in notes[0]
    new, changes, notes = migrate_text(text, fake, drop_ignored=True)
    assert json.loads(new) == {"train_batch_size": 8} and "--drop-ignored" in changes[0] and not notes


@pytest.mark.data
def test_cli_writes_atomically_and_diffs(tmp_path, capsys):
    source = tmp_path / "ds.json"
    source.write_text('{\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": 2, "cpu_offload": true}\n}\n')
    out = tmp_path / "new.json"
    # nothing in the file tells its release: migrate asks for it (issue 26) rather than guess the defaults
    assert main(["migrate", str(source), "--to", VERSION, "-o", str(out)]) == 2
    assert "give it with --from U" in capsys.readouterr().err
    assert main(["migrate", str(source), "--to", VERSION, "--from", VERSION, "-o", str(out), "--diff"]) == 0
    printed = capsys.readouterr().out
    assert "zero_optimization.cpu_offload: true → zero_optimization.offload_optimizer" in printed
    assert '+  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}' in printed
    assert json.loads(out.read_text())["zero_optimization"]["offload_optimizer"] == {"device": "cpu"}
    assert main(["migrate", str(out), "--to", VERSION, "--from", VERSION, "--in-place"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["migrate", str(bad), "--to", VERSION, "--from", VERSION]) == 2


@pytest.mark.data
def test_rejected_values_left_alone_exit_1(tmp_path, capsys):
    source = tmp_path / "ds.json"
    source.write_text('{"train_batch_size": 8, "zero_optimization": {"stage": "two"}}')
    assert main(["migrate", str(source), "--to", VERSION, "--from", VERSION, "--in-place"]) == 1
    assert "needs attention: zero_optimization.stage" in capsys.readouterr().out
    assert json.loads(source.read_text())["zero_optimization"]["stage"] == "two"


# ---------------------------------------------------------------- the real corpus


MIGRATION_KINDS = {Kind.DEPRECATED_KEY, Kind.REMOVED_KEY}


def _set_paths(data: Any, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else key
            out.add(path)
            out |= _set_paths(value, path)
    return out


@requires_deepspeed
@pytest.mark.deepspeed
def test_corpus_migrates_to_0_19_8():
    files = corpus_files() + sorted(CORPUS.glob("*.hjson")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"no corpus at {CORPUS}")
    snapshot = load_snapshot(VERSION)
    checker = Checker(snapshot)
    resolver = Resolver(snapshot)
    migrated = accepted = 0
    problems: list[str] = []
    left: dict[str, list[str]] = {}
    for path in files:
        try:
            config = load(path, "deepspeed")
        except ConfigFileError:
            continue
        text = path.read_text(encoding="utf-8")
        result = plan(config, snapshot)
        new_text = apply(text, config, result.edits)
        new = parse(new_text, path.name)
        if result.edits:
            migrated += 1
        # 1. DeepSpeed accepts it wherever the original's only problems were deprecated/removed keys.
        before = checker.check(config, Options(hf=True))
        only_migration = all(f.kind in MIGRATION_KINDS for f in before if f.severity is Severity.ERROR)
        original_ok = build(for_deepspeed(config.data, checker)) is not None
        migrated_ok = build(for_deepspeed(new.data, checker)) is not None
        if only_migration and not migrated_ok:
            problems.append(f"{path.name}: only deprecated/removed keys were wrong, DeepSpeed rejects the migration")
        if original_ok and not migrated_ok:
            problems.append(f"{path.name}: DeepSpeed accepted the original but rejects the migration")
        accepted += migrated_ok
        # 2. Same resolved values for every key the original set (removed keys are gone by design).
        if original_ok and migrated_ok:
            old = {r.path: r.value for r in resolver.resolve(for_deepspeed(config.data, checker))}
            now = {r.path: r.value for r in resolver.resolve(for_deepspeed(new.data, checker))}
            for key in sorted(_set_paths(config.data) & set(old)):
                if key in now and now[key] != old[key] and snapshot.fields.get(key) and \
                        not snapshot.fields[key].deprecated:
                    problems.append(f"{path.name}: {key} resolved {old[key]!r}, after migration {now[key]!r}")
        # 3. check --strict: whatever remains is not migration's business, and is listed.
        after = checker.check(new, Options(hf=True, strict=True))
        for finding in after:
            if finding.kind in MIGRATION_KINDS:
                problems.append(f"{path.name}: still {finding.kind.value}: {finding.path}")
            elif finding.severity in (Severity.ERROR, Severity.WARNING):
                left.setdefault(finding.kind.value, []).append(f"{path.name}: {finding.path}")
    print(f"\nmigrate to {VERSION}: {len(files)} files, {migrated} changed, {accepted} accepted by DeepSpeedConfig "
          "after migration; check --strict findings left (not migration's business):")
    for kind, where in sorted(left.items()):
        print(f"  {kind}: {len(where)}: {', '.join(where[:6])}{' …' if len(where) > 6 else ''}")
    assert not problems, "\n".join(problems)
    assert migrated >= 5, migrated
