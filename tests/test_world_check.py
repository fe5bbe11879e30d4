"""check at world size N (issue 42), on the committed snapshots: the batch as accelerate hands it under the HF
Trainer, the world rules of world.json, keys of later releases, reordered words, check --launch at N with a fake
worker (data lane: no DeepSpeed)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from dsfields.check import Checker, Finding, Options, Severity, check_text
from dsfields.check.findings import Kind
from dsfields.check.launch_check import launch_findings
from dsfields.cli import main
from dsfields.configfile import parse
from dsfields.launch import world_rules
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
    # every committed release has one now (launched or static): a snapshot folder without it, as a user's own
    from dsfields.check.world_check import world_rule_findings

    checker = Checker(load_snapshot("0.17.6"))
    config = parse(json.dumps({"train_batch_size": 8}), "ds.json")
    notes = world_rule_findings(checker, config, Options(world_size=8), [], record=None)
    assert len(notes) == 1 and notes[0].severity is Severity.INFO and "has no world.json" in notes[0].message
    assert world_rule_findings(checker, config, Options(), [], record=None) == []  # no --world-size: silent


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


STAGE3 = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "optimizer": ADAMW,
          "zero_optimization": {"stage": 3}}


def _rule_errors(version: str, config: dict[str, Any], **options: Any) -> list[tuple[str, str]]:
    return [(f.path, f.rule) for f in findings(version, config, **options) if f.rule and f.severity is Severity.ERROR
            and f.kind is Kind.LAUNCH and f.rule in world_rules.BY_ID]


@pytest.mark.parametrize("version", ["0.18.9", "0.19.3"])
@pytest.mark.parametrize(("zero", "world", "per_node", "expected"), [
    ({"mics_shard_size": 3}, 8, None, [("zero_optimization.mics_shard_size", "mics-shard-divides-world")]),
    ({"mics_shard_size": 4}, 8, None, []),
    ({"mics_shard_size": 3}, 24, 8, []),
    ({"mics_shard_size": 8, "mics_hierarchical_params_gather": True}, 16, 4, []),
    ({"mics_shard_size": 8, "mics_hierarchical_params_gather": True}, 16, 8,
     [("zero_optimization.mics_hierarchical_params_gather", "mics-hierarchy-spans-nodes")]),
])
def test_mics_is_judged_against_the_world_and_the_gpus_per_node(version, zero, world, per_node, expected):
    config = STAGE3 | {"zero_optimization": {"stage": 3, **zero}}
    assert _rule_errors(version, config, world_size=world, gpus_per_node=per_node) == expected


def test_the_features_set_up_refusals_are_judged_with_or_without_a_world_size():
    muon = STAGE3 | {"optimizer": {"type": "Muon", "params": {"lr": 1e-3}}}
    for options in ({}, {"world_size": 8}, {"world_size": 64}):
        assert _rule_errors(VERSION, muon, **options) == [("optimizer.type", "muon-not-with-reduce-scatter")]
    assert _rule_errors(VERSION, muon | {"zero_optimization": {"stage": 3, "reduce_scatter": False}}) == []
    zenflow = STAGE3 | {"zero_optimization": {"stage": 2, "zenflow": {"topk_ratio": 0.1}}}
    assert _rule_errors(VERSION, zenflow) == [("zero_optimization.zenflow", "zenflow-needs-cpu-offload")]
    unmanaged = STAGE3 | {"zero_optimization": {"stage": 1}, "compile": {"deepcompile": True},
                          "managed_gradient_accumulation": False}
    assert _rule_errors(VERSION, unmanaged) == [("managed_gradient_accumulation",
                                                 "unmanaged-accumulation-not-with-deepcompile")]
    # 0.18.9 has Muon's refusal (stage3.py:338) but not managed_gradient_accumulation (0.19.4 on)
    assert _rule_errors("0.18.9", muon) == [("optimizer.type", "muon-not-with-reduce-scatter")]
    assert "stage3.py:338" in next(f.message for f in findings("0.18.9", muon) if f.rule)
    assert [r for _, r in _rule_errors("0.18.9", unmanaged) if r.startswith("unmanaged")] == []


@pytest.mark.parametrize("version", ["0.18.9", "0.19.3"])
def test_a_legacy_curriculum_without_its_engine_start_keys_is_refused(version):
    curriculum = {"enabled": True, "curriculum_type": "seqlen", "min_difficulty": 8, "max_difficulty": 64,
                  "schedule_type": "fixed_linear",
                  "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}
    base = {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1}
    assert _rule_errors(version, base | {"curriculum_learning": curriculum}) == []
    for key in ("min_difficulty", "max_difficulty", "schedule_type"):
        partial = {k: v for k, v in curriculum.items() if k != key}
        found = [f for f in findings(version, base | {"curriculum_learning": partial})
                 if f.rule == "curriculum-legacy-requires"]
        assert [f.path for f in found] == [f"curriculum_learning.{key}"]
        assert "Curriculum learning requires the config" in found[0].message
        assert "curriculum_scheduler.py" in found[0].message
    no_step = curriculum | {"schedule_config": {"total_curriculum_step": 10}}
    assert _rule_errors(version, base | {"curriculum_learning": no_step}) == [
        ("curriculum_learning.schedule_config.difficulty_step", "curriculum-legacy-schedule-requires")]
    off = {k: v for k, v in curriculum.items() if k != "max_difficulty"} | {"enabled": False}
    assert _rule_errors(version, base | {"curriculum_learning": off}) == []  # no scheduler is built


@pytest.mark.parametrize("version", ["0.10.3", "0.14.4", "0.18.9"])
def test_a_dense_ratio_inside_0_1_is_accepted_and_1_5_still_refused(version):
    # the fixed probes (-1, 0, 1, 1.5) never tried a value inside (0, 1); DeepSpeed asserts 0 < dense_ratio < 1
    def config(ratio: float) -> dict[str, Any]:
        return {"train_batch_size": 8, "compression_training": {"sparse_pruning": {
            "shared_parameters": {"enabled": True, "method": "snip_momentum", "dense_ratio": ratio,
                                  "schedule_offset": 0, "block_pattern": "4x1"},
            "different_groups": {"sp1": {"params": {"dense_ratio": ratio}, "modules": ["attention.self"]}}}}}

    path = "compression_training.sparse_pruning.shared_parameters.dense_ratio"
    assert path not in errors(version, config(0.5)) and path not in errors(version, config(0.05))
    assert "Must be less than 1" in errors(version, config(1.5))[path]


def test_a_static_world_json_names_the_rules_in_the_source_as_not_confirmed_by_launch():
    notes = [f for f in findings("0.17.5", STAGE3, world_size=8) if "world.json" in f.message]
    assert len(notes) == 1 and notes[0].severity is Severity.INFO
    assert "not confirmed by launch" in notes[0].message and "zenflow-needs-cpu-offload" in notes[0].message
    assert "muon-not-with-reduce-scatter" not in notes[0].message  # 0.18.9 on
    assert [f for f in findings("0.17.5", STAGE3) if "world.json" in f.message] == []  # no --world-size: silent


def test_every_committed_world_json_reads_the_source_as_its_launch_saw_it():
    from dsfields.model.store import repo_generated_dir

    launched = exact = 0
    for path in sorted(repo_generated_dir().glob("*/world.json")):
        record = world_rules.load_world(path.parent.name)
        assert record is not None and set(record["rules"]) == set(world_rules.BY_ID), path
        if record["environment"].get("launched") is False:
            assert not any(entry["confirmed"] for entry in record["rules"].values()), path
            continue
        launched += 1
        for rule_id, entry in record["rules"].items():
            if entry["confirmed"]:
                assert entry["in_source"], (path, rule_id)  # a launch refusal the static reading would miss
            site = entry.get("site") or ""
            if entry["confirmed"] and site.startswith("deepspeed/") and entry.get("static_site"):
                # the static reading gives the first line of the rule's words; the curriculum rules assert one
                # key per line (the trigger misses max_difficulty, line 18; the reading finds min_difficulty's, 16)
                assert entry["static_site"].split(":")[0] == site.split(":")[0], (path, rule_id)
                exact += entry["static_site"] == site
    assert launched >= 3 and exact >= 3 * launched  # most lines agree exactly, not only their files


@pytest.mark.parametrize("version", ["0.18.9", "0.19.3"])
def test_elasticity_is_computed_at_the_users_world_size_with_the_releases_defaults(version):
    elastic = {"elasticity": {"enabled": True, "max_train_batch_size": 10000, "micro_batch_sizes": [8, 12, 16, 17],
                              "min_gpus": 32, "max_gpus": 1500, "version": 0.1}}  # per node etc.: the defaults
    assert _rule_errors(version, elastic, world_size=64) == []
    found = [f for f in findings(version, elastic, world_size=128) if f.rule == "elasticity-world-size"]
    assert [f.path for f in found] == ["elasticity"] and "deepspeed/elasticity/elasticity.py" in found[0].message
    assert _rule_errors(version, elastic) == []  # no --world-size: the world-size rule is not applied
    bad = {"elasticity": elastic["elasticity"] | {"micro_batch_sizes": [8, 12.5]}}
    assert ("elasticity.micro_batch_sizes", "elasticity-config") in _rule_errors(version, bad)
    assert [r for _, r in _rule_errors("0.19.8", elastic, world_size=128) if r.startswith("elasticity")] == []


def test_the_optimizer_set_up_refuses_a_dtype_mix_without_zero_and_grad_norm_off_at_stage_1():
    base = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "optimizer": ADAMW,
            "bf16": {"enabled": True}}
    mix = base | {"zero_optimization": {"stage": 0}, "data_types": {"grad_accum_dtype": "fp32"}}
    assert _rule_errors(VERSION, mix) == [("data_types.grad_accum_dtype", "dtype-mix-without-zero")]
    assert _rule_errors(VERSION, mix | {"data_types": {"grad_accum_dtype": "bf16"}}) == []
    assert _rule_errors(VERSION, mix | {"zero_optimization": {"stage": 1}}) == []  # the ZeRO optimizer takes it
    norm = mix | {"zero_optimization": {"stage": 1, "compute_grad_norm": False}, "gradient_clipping": 0}
    assert _rule_errors(VERSION, norm) == [("zero_optimization.compute_grad_norm", "grad-norm-off-bf16-stage1")]
    offloaded = {"stage": 1, "compute_grad_norm": False, "offload_optimizer": {"device": "cpu"}}
    assert _rule_errors(VERSION, norm | {"zero_optimization": offloaded}) == []
