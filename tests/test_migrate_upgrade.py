"""migrate --from / upgrade: one fixture per rewrite kind, the curated legacy table checked against the snapshots.

The rewrite kinds run on the committed snapshots of real releases (data lane: no DeepSpeed import); the text
edits they rely on are tested as pure code in ``tests/test_migrate_text.py``. ``tests/test_migrate_corpus.py``
builds every migrated fixture with the real DeepSpeedConfig 0.19.8 (``REWRITES`` below is shared with it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsfields.cli import main
from dsfields.configfile import parse
from dsfields.legacy import LEGACY, located
from dsfields.migrate import migrate
from dsfields.model.dotted import at_path
from dsfields.model.store import available_versions
from dsfields.model.store import load as load_snapshot
from dsfields.upgrade import infer_release, report

pytestmark = pytest.mark.data

NEW = "0.19.8"


def run(text: str, source: str, *, keep: bool = True) -> tuple[dict[str, Any], list[str], Any]:
    """(migrated data, every line migrate would print about it, the plan)."""
    config = parse(text, "<t>", "deepspeed")
    new_text, result = migrate(text, config, load_snapshot(NEW), load_snapshot(source), keep_behaviour=keep)
    lines = [e.message for e in result.edits] + [i.message for i in result.inserts] + result.notes + \
        result.losses + [c.path for c in result.changes]
    return parse(new_text, "<t>", "deepspeed").data, lines, result


# (name, from, text, what the migrated file holds (dotted path → value; None: absent), words a line must say)
REWRITES: list[tuple[str, str, str, dict[str, Any], list[str]]] = [
    ("pins changed defaults", "0.10.3",
     '{"train_batch_size": 8, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}',
     {"gradient_clipping": 0.0, "steps_per_print": 10, "zero_optimization.offload_optimizer.pin_memory": False},
     ["gradient_clipping", "steps_per_print", "zero_optimization.offload_optimizer.pin_memory"]),
    ("boolean zero_optimization", "0.10.3",
     '{"train_batch_size": 8, "zero_optimization": true, "allgather_size": 100000000}',
     {"zero_optimization.stage": 1, "zero_optimization.allgather_bucket_size": 100000000, "allgather_size": None},
     ["read_zero_config_deprecated"]),
    ("bfloat16 spelling", "0.10.3", '{"train_batch_size": 8, "bfloat16": {"enabled": true}}',
     {"bf16.enabled": True, "bfloat16": None}, ["bfloat16 → bf16"]),
    ("cpu_offload_use_pin_memory carried", "0.10.3",
     '{"train_batch_size": 8, "zero_optimization": {"stage": 2, "cpu_offload_use_pin_memory": true, '
     '"cpu_offload": true}}',
     {"zero_optimization.offload_optimizer.device": "cpu", "zero_optimization.offload_optimizer.pin_memory": True,
      "zero_optimization.cpu_offload_use_pin_memory": None},
     ["carried to zero_optimization.offload_optimizer.pin_memory", "ignored this key"]),
    ("apex opt_level removed", "0.10.3",
     '{"train_batch_size": 8, "fp16": {"enabled": true, "opt_level": "O2", "fp16_opt_level": "O1"}}',
     {"fp16.enabled": True, "fp16.opt_level": None, "fp16.fp16_opt_level": None},
     ["fp16.opt_level: DeepSpeed 0.10.3 ignored it", "rejects unknown keys there"]),
    ("legacy curriculum moved", "0.10.3",
     '{"train_batch_size": 8, "curriculum_learning": {"enabled": true, "curriculum_type": "seqlen", '
     '"min_difficulty": 8, "max_difficulty": 1024, "schedule_type": "fixed_linear", '
     '"schedule_config": {"total_curriculum_step": 100, "difficulty_step": 8}}}',
     {"curriculum_learning": None, "data_efficiency.enabled": True, "data_efficiency.data_sampling.enabled": True,
      "data_efficiency.data_sampling.curriculum_learning.enabled": True,
      "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.seqlen.min_difficulty": 8,
      "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.seqlen.schedule_config":
          {"total_curriculum_step": 100, "difficulty_step": 8}},
     ["curriculum_learning → data_efficiency", "curriculum_seqlen", "difficulty_type"]),
    ("compression cannot be carried", "0.10.3",
     '{"train_batch_size": 8, "compression_training": {"weight_quantization": {"shared_parameters": '
     '{"enabled": true}}}}',
     {"compression_training": None}, ["compression_training: DeepSpeed 0.10.3 used it"]),
    ("max_grad_norm moved to gradient_clipping", "0.8.0",
     '{"train_batch_size": 8, "optimizer": {"type": "Adam", "params": {"lr": 0.001, "max_grad_norm": 1.0}}}',
     {"gradient_clipping": 1.0, "optimizer.params.max_grad_norm": None, "optimizer.params.lr": 0.001},
     ["optimizer.params.max_grad_norm: 1 → gradient_clipping (DeepSpeed 0.19.8: 'max_grad_norm' is not"]),
    ("1-bit optimizer cannot be carried", "0.10.3",
     '{"train_batch_size": 8, "optimizer": {"type": "OneBitAdam", "params": {"lr": 0.001, "freeze_step": 10}}}',
     {"optimizer.type": "OneBitAdam"}, ["OneBitAdam: DeepSpeed 0.10.3 has this optimizer, DeepSpeed 0.19.8 does not"]),
]


def _at(data: Any, dotted: str) -> Any:
    return at_path(data, dotted)


@pytest.mark.parametrize(("name", "source", "text", "holds", "says"), REWRITES, ids=[r[0] for r in REWRITES])
def test_rewrite_kind(name: str, source: str, text: str, holds: dict[str, Any], says: list[str]):
    data, lines, _ = run(text, source)
    for path, value in holds.items():
        assert _at(data, path) == value, (path, data)
    for words in says:
        assert any(words in line for line in lines), (words, lines)


def test_adopt_defaults_lists_every_change_and_pins_none():
    text = '{"train_batch_size": 8, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}'
    data, _, result = run(text, "0.10.3", keep=False)
    assert "gradient_clipping" not in data and "pin_memory" not in data["zero_optimization"]["offload_optimizer"]
    changes = {c.path: (c.old, c.new, c.pinned) for c in result.changes}
    assert changes["gradient_clipping"] == (0.0, 1.0, False)
    assert changes["zero_optimization.offload_optimizer.pin_memory"] == (False, True, False)
    _, _, kept = run(text, "0.10.3")
    assert {c.path for c in kept.changes} >= set(changes)  # listed either way
    assert all(c.pinned for c in kept.changes if c.path in ("gradient_clipping", "steps_per_print"))


def test_fractional_min_loss_scale_says_what_to_choose(tmp_path, capsys):
    source = tmp_path / "ds.json"
    source.write_text('{"train_batch_size": 8, "fp16": {"enabled": true, "min_loss_scale": 0.1}}')
    assert main(["migrate", str(source), "--to", NEW, "--from", "0.10.3", "--in-place"]) == 1
    out = capsys.readouterr().out
    assert "fp16.min_loss_scale: 0.1 was taken as written by DeepSpeed 0.10.3" in out
    assert "choose 0 or 1" in out
    assert json.loads(source.read_text())["fp16"]["min_loss_scale"] == 0.1  # no lossless rewrite: left alone


def test_strict_fails_on_what_cannot_be_carried(tmp_path, capsys):
    source = tmp_path / "ds.json"  # DeepSpeedConfig 0.19.8 builds the migration; the feature is gone
    source.write_text('{"train_batch_size": 8, "compression_training": {"weight_quantization": '
                      '{"shared_parameters": {"enabled": true}}}}')
    assert main(["migrate", str(source), "--to", NEW, "--from", "0.10.3", "-o", str(tmp_path / "a.json")]) == 0
    assert "cannot be carried: compression_training: DeepSpeed 0.10.3 used it" in capsys.readouterr().out
    assert main(["migrate", str(source), "--to", NEW, "--from", "0.10.3", "-o", str(tmp_path / "b.json"),
                 "--strict"]) == 1
    onebit = tmp_path / "onebit.json"  # also a finding without --strict: deepspeed.initialize would fail
    onebit.write_text('{"train_batch_size": 8, "optimizer": {"type": "OneBitAdam", "params": {"lr": 0.001}}}')
    assert main(["migrate", str(onebit), "--to", NEW, "--from", "0.10.3", "-o", str(tmp_path / "c.json")]) == 1
    assert "cannot be carried: optimizer.type: OneBitAdam" in capsys.readouterr().out
    off = tmp_path / "off.json"  # a removed feature switched off loses nothing
    off.write_text('{"train_batch_size": 8, "steps_per_print": 10, "gradient_clipping": 0.0, '
                   '"compression_training": {"enabled": false}}')
    assert main(["migrate", str(off), "--to", NEW, "--from", "0.10.3", "--strict", "--in-place"]) == 0
    assert "compression_training" not in json.loads(off.read_text())


def test_from_is_guessed_only_where_the_keys_decide_it(tmp_path, capsys):
    # keys read only by 0.19.3 … 0.19.6, and no default the file relies on changed in that span: any is as good
    guess = infer_release({"train_batch_size": 8, "quantize_training": {"enabled": False}})
    assert guess.version == "0.19.6" and "quantize_training is read up to 0.19.6" in guess.how, guess.how
    assert "no default this file relies on changed in between" in guess.how
    # curriculum_learning: read up to 0.19.7, but gradient_clipping's default changed inside 0.8.0 … 0.19.7
    source = tmp_path / "ds.json"
    source.write_text('{"train_batch_size": 8, "curriculum_learning": {"enabled": false}}')
    assert main(["migrate", str(source), "--to", NEW, "--in-place"]) == 2
    err = capsys.readouterr().err
    assert "curriculum_learning is read up to" in err and "0.8.0 … " in err and "give it with --from U" in err
    assert "steps_per_print in 0.15.2" in err  # a default that makes the release matter
    assert infer_release({"train_batch_size": 8}).version is None
    # upgrade (not migrate) goes on from the oldest release the keys allow, and says so; its changes name releases
    assert main(["upgrade", str(source), "--to", NEW]) == 1  # 0.19.8 refuses curriculum_learning
    out = capsys.readouterr().out
    assert "from DeepSpeed 0.8.0 to" in out and "from the oldest release the keys allow, 0.8.0" in out
    assert "gradient_clipping: 0.0 → 1.0" in out and "changed in DeepSpeed 0.19.3" in out


def test_legacy_table_matches_the_snapshots():
    """Every path the curated table names exists in the releases it is applied to, read as it says."""
    versions = available_versions()
    old, new = load_snapshot(versions[0]), load_snapshot(NEW)
    for snapshot in (old, load_snapshot("0.10.3"), new):
        reader = snapshot.fields["allgather_size"].source
        assert reader is not None and reader.function == "read_zero_config_deprecated", snapshot.version
        assert snapshot.fields["bfloat16"].source.function == snapshot.fields["bf16"].source.function
        pin = snapshot.fields["zero_optimization.cpu_offload_use_pin_memory"].deprecated
        assert pin is not None and not pin.set_new_param
        assert pin.new_param and all(t.split(".")[1] in pin.new_param
                                     for t in LEGACY["zero_optimization.cpu_offload_use_pin_memory"].targets)
    for rule in LEGACY.values():
        for snapshot in (old, load_snapshot("0.10.3"), new):  # the cited code exists in every release it is used for
            assert located(rule, snapshot), (rule.path, snapshot.version)
            if rule.functions:
                assert snapshot.fields[rule.witness].source.function in rule.functions, (rule.path, snapshot.version)
        for target in rule.targets:
            assert target in new.fields, (rule.path, target)
        if rule.kind == "moved":  # DeepSpeed's own message names the replacement
            section, _, param = rule.path.split(".")
            assert rule.targets[0] in new.catalogs[section].rejected_params[param]
    curriculum = LEGACY["curriculum_learning"]
    assert "curriculum_learning" in new.removed
    assert curriculum.targets[2].rpartition(".")[0] in new.removed["curriculum_learning"].message
    legacy = load_snapshot("0.10.3")
    base = curriculum.targets[2].rpartition(".")[0]
    for old_key, new_key in curriculum.keys:
        assert f"curriculum_learning.{old_key}" in legacy.fields, old_key
        assert f"{base}.{new_key.format(type='*')}" in new.fields, new_key
    for need in curriculum.needs:
        assert f"{base}.{need.format(type='*')}" in new.fields, need
    assert f"curriculum_learning.{curriculum.name_key}" in legacy.fields


def test_upgrade_report_for_a_zero2_offload_config(tmp_path, capsys):
    source = tmp_path / "ds.json"
    source.write_text('{"train_batch_size": 8, "gradient_clipping": 1.0, "fp16": {"enabled": true, '
                      '"opt_level": "O2"}, "zero_optimization": {"stage": 2, "cpu_offload": true}}')
    old, new = load_snapshot("0.10.3"), load_snapshot(NEW)
    items = report(json.loads(source.read_text()), old, new)
    by_kind = {(i.kind, i.path) for i in items}
    assert ("renamed", "zero_optimization.cpu_offload") in by_kind
    assert ("rejected", "fp16.opt_level") in by_kind
    assert ("defaults", "zero_optimization.offload_optimizer.pin_memory") in by_kind
    assert ("defaults", "steps_per_print") in by_kind
    assert not any(k == "new" and p.startswith("zero_optimization.stage3_") for k, p in by_kind)  # stage 2 file
    pin = next(i for i in items if i.path == "zero_optimization.offload_optimizer.pin_memory")
    assert "offload_config.py" in pin.text  # the source lines the snapshots carry
    # exit 1 as check's: ZeRO-2 with no optimizer section is refused by deepspeed.initialize (0.10.3 too)
    assert ("still", "zero_optimization.stage") in by_kind
    assert main(["upgrade", str(source), "--from", "0.10.3", "--to", NEW, "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["items"]
    assert main(["upgrade", str(source), "--from", "0.10.3", "--to", NEW, "--lang", "zh", "--format",
                 "markdown"]) == 1
    out = capsys.readouterr().out
    assert "## 文件未设置、但默认值改变的键" in out
    # every change names the release it came in, not the target: a long jump is not "all new in 0.19.8"
    assert "`zero_optimization.cpu_offload`: 自 DeepSpeed 0.8.0（或更早）起弃用" in out
    assert "`zero_optimization.zenflow`: DeepSpeed 0.17.5 新增" in out
    assert "`steps_per_print`: 10 → null" in out and "在 DeepSpeed 0.15.2 中改变" in out
    assert "（自 0.17.1 起；0.10.3 不会）" in out  # fp16.opt_level: refused since fp16 became a strict model


def test_upgrade_names_launch_rules_confirmed_in_one_release_only():
    """ZeRO without an optimizer: deepspeed.initialize 0.19.8 refuses it (its launch.json confirms the rule),
    0.8.0's launch did not."""
    data = {"train_batch_size": 8, "zero_optimization": {"stage": 1}}
    items = report(data, load_snapshot("0.8.0"), load_snapshot(NEW))
    assert any(i.kind == "rejected" and i.data["check"]["rule"] == "zero-requires-optimizer"
               and "deepspeed.initialize raises" in i.text for i in items), [i.text for i in items]


def test_hf_auto_is_the_trainers_value_in_both_releases():
    text = '{"train_batch_size": 8, "gradient_clipping": 1.0, "steps_per_print": 10, "fp16": {"enabled": "auto"}}'
    _, _, plain = run(text, "0.10.3")
    assert [c.path for c in plain.changes] == ["fp16.enabled"]  # "auto": a string 0.10.3 kept, 0.19.8 drops
    config = parse(text, "<t>", "deepspeed")
    _, hf = migrate(text, config, load_snapshot(NEW), load_snapshot("0.10.3"), hf=True)
    assert not hf.changes
