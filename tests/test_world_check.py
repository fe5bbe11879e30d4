"""check at world size N (issue 42), on the committed snapshots: the batch as accelerate hands it under the HF
Trainer, the world rules of world.json, keys of later releases, reordered words, check --launch at N with a fake
worker (data lane: no DeepSpeed)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from dsfields.check import Checker, Finding, Options, Severity, check_text
from dsfields.check.launch_check import launch_findings
from dsfields.cli import main
from dsfields.configfile import parse
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.data
VERSION = "0.19.8"
ADAMW = {"type": "AdamW", "params": {"lr": 1e-4}}


def findings(version: str, config: dict[str, Any], **options: Any) -> list[Finding]:
    report = check_text(json.dumps(config, indent=1), Checker(load_snapshot(version)), Options(**options))
    assert report.error is None, report.error
    return report.findings


def errors(version: str, config: dict[str, Any], **options: Any) -> dict[str, str]:
    return {f.path: f.message for f in findings(version, config, **options) if f.severity is Severity.ERROR}


def test_under_the_trainer_accelerate_adds_gradient_accumulation_steps_1_so_the_batch_no_longer_adds_up():
    # 037_microsoft_Megatron-DeepSpeed's batch: bare DeepSpeed derives 2 accumulation steps at 8 ranks; under the
    # Trainer accelerate writes gradient_accumulation_steps: 1 first (utils/dataclasses.py, read from its source)
    config = {"train_batch_size": 16, "train_micro_batch_size_per_gpu": 1, "optimizer": ADAMW,
              "zero_optimization": {"stage": 2}}
    assert "train_batch_size" not in errors(VERSION, config, world_size=8)
    hf = errors(VERSION, config, hf=True, world_size=8)
    assert "16 != 1 (micro) * 1 (accumulation) * 8 (world size)" in hf["train_batch_size"]
    assert "gradient_accumulation_steps = 1, added by accelerate" in hf["train_batch_size"]
    assert "utils/dataclasses.py:1275" in hf["train_batch_size"]  # accelerate 1.15.0's line, from generated/hf
    assert "train_batch_size" not in errors(VERSION, config | {"gradient_accumulation_steps": 2}, hf=True,
                                            world_size=8)


@pytest.mark.parametrize(("config", "world", "key"), [
    ({"zero_optimization": {"stage": 3, "zero_hpz_partition_size": 3}}, 8, "zero_optimization.zero_hpz_partition_size"),
    ({"zero_optimization": {"stage": 3, "zero_hpz_partition_size": 3}}, 6, None),
    ({"zero_optimization": {"stage": 2}, "tensor_parallel": {"autotp_size": 3}}, 8, "tensor_parallel.autotp_size"),
    ({"zero_optimization": {"stage": 2}, "tensor_parallel": {"autotp_size": 16}}, 8, "tensor_parallel.autotp_size"),
    ({"zero_optimization": {"stage": 2}, "tensor_parallel": {"autotp_size": 4}}, 8, None),
    ({"zero_optimization": {"stage": 3, "zero_quantized_gradients": True, "reduce_scatter": False}}, 8,
     "zero_optimization.reduce_scatter"),
])
def test_world_rules_confirmed_in_world_json_are_judged_at_the_users_world_size(config, world, key):
    config = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "optimizer": ADAMW} | config
    found = [f for f in findings(VERSION, config, world_size=world) if f.rule and f.severity is Severity.ERROR
             and f.path != "train_batch_size"]
    assert [f.path for f in found] == ([key] if key else [])
    if key:
        assert f"at world size {world}, deepspeed.initialize raises" in found[0].message
        assert "(DeepSpeed 0.19.8, " in found[0].message
    assert not [f for f in findings(VERSION, config) if f.rule and f.path == key]  # no --world-size: not judged


def test_a_release_without_world_json_says_so_once():
    notes = [f for f in findings("0.17.6", {"train_batch_size": 8}, world_size=8) if "world.json" in f.message]
    assert len(notes) == 1 and notes[0].severity is Severity.INFO


@pytest.mark.parametrize(("version", "path", "added"), [
    ("0.9.5", ("zero_optimization", "zero_hpz_partition_size", 2), "0.10.0"),
    ("0.17.6", ("zero_optimization", "leaf_module", {"classes": ["A"]}), "0.18.0"),
    ("0.12.6", ("zero_optimization", "stage3_module_granularity_threshold", 100), "0.16.0"),
])
def test_a_key_of_a_later_release_is_an_upgrade_away_not_a_typo(version, path, added):
    section, key, value = path
    config = {"train_batch_size": 8, section: {"stage": 3, key: value}}
    found = [f for f in findings(version, config) if f.path == f"{section}.{key}"]
    assert len(found) == 1 and f"(added in DeepSpeed {added})" in found[0].message
    assert found[0].fix == f"upgrade to DeepSpeed >= {added}, or remove it"


def test_reordered_words_are_suggested_at_every_level_by_check_and_lookup(capsys):
    config = {"train_batch_size": 8, "comm_overlap": True, "zero_optimization": {"stage": 0, "comm_overlap": True}}
    fixes = {f.path: f.fix for f in findings(VERSION, config)}
    assert fixes["zero_optimization.comm_overlap"].startswith('did you mean "overlap_comm"?')
    assert fixes["comm_overlap"].startswith('did you mean "overlap_comm"?')
    assert '"zero_optimization"' in fixes["comm_overlap"]
    for query in ("comm_overlap", "zero_optimization.comm_overlap"):
        assert main(["lookup", "--version", VERSION, query]) != 0
        out = capsys.readouterr().out.splitlines()
        assert out[1].strip() == "zero_optimization.overlap_comm", out


class FakeClient:
    def __init__(self, verdict: SimpleNamespace) -> None:
        self.verdict = verdict

    def launch(self, config: Any, style: str, code: bool, timeout: float = 0, assume_fp16: bool = False) -> Any:
        return self.verdict


def verdict(outcome: str, **fields: Any) -> SimpleNamespace:
    base = {"exc_type": None, "message": None, "key": None, "reason": None, "site": None, "raised_by": None}
    return SimpleNamespace(outcome=outcome, **(base | fields))


def test_check_launch_at_n_names_the_rank_that_refused_and_what_the_fake_group_cannot_judge():
    config = parse(json.dumps({"train_batch_size": 8, "tensor_parallel": {"autotp_size": 3}}), "<t>", "deepspeed")
    refused = verdict("config_error", exc_type="IndexError", message="list index out of range",
                      key="tensor_parallel.autotp_size", site="torch/distributed/device_mesh.py:828")
    found = launch_findings(VERSION, config, Options(world_size=8), {0: FakeClient(verdict("launched")),
                                                                     7: FakeClient(refused)})
    error, note = found
    assert error.severity is Severity.ERROR and error.path == "tensor_parallel.autotp_size"
    assert "rank 7 of 8, 8 per node, torch's fake process group" in error.message
    assert "(rank 0 launched: only some ranks refuse)" in error.message
    assert note.severity is Severity.INFO and "no collective runs" in note.message
    assert "ranks other than rank 0 and rank 7" in note.message
    ok = launch_findings(VERSION, config, Options(world_size=8, gpus_per_node=4),
                         {0: FakeClient(verdict("launched")), 7: FakeClient(verdict("launched"))})
    assert "rank 0 of 8, 4 per node" in ok[0].message and "launched on rank 0 and rank 7" in ok[0].message


def test_the_float_prefetch_bucket_of_transformers_4_44_is_refused_by_deepspeed_0_15_1():
    config = {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
              "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "auto"}}
    path = "zero_optimization.stage3_prefetch_bucket_size"
    old = [f for f in findings("0.15.1", config, hf=True, hf_pair=("4.44.2", "0.33.0")) if f.rule == "hf-fill-type"]
    assert [(f.path, f.severity) for f in old] == [(path, Severity.ERROR)]
    assert 'transformers 4.44.2 / accelerate 0.33.0 fills "auto" with 57.6' in old[0].message
    new = [f for f in findings("0.15.1", config, hf=True, hf_pair=("5.24.0", "1.15.0")) if f.rule == "hf-fill-type"]
    assert new == []  # an integer fill (int(0.9 * h * h))


def test_autotp_with_zero3_is_refused_at_8_ranks_in_0_18_9_and_0_19_3_and_accepted_in_0_19_8():
    config = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "optimizer": ADAMW,
              "zero_optimization": {"stage": 3}, "tensor_parallel": {"autotp_size": 2}}
    old = [f for f in findings("0.19.3", config, world_size=8) if f.rule == "autotp-not-with-zero3"]
    assert [(f.path, f.severity) for f in old] == [("tensor_parallel.autotp_size", Severity.ERROR)]
    assert "deepspeed/runtime/engine.py:633" in old[0].message and "rank 0 of 8" in old[0].message
    older = [f for f in findings("0.18.9", config, world_size=8) if f.rule == "autotp-not-with-zero3"]
    assert [f.path for f in older] == ["tensor_parallel.autotp_size"] and "engine.py:515" in older[0].message
    assert not [f for f in findings("0.19.8", config, world_size=8) if f.rule == "autotp-not-with-zero3"]
