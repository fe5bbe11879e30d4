"""Issue 25 on the committed snapshots of releases older than the installed DeepSpeed (0.16.9, 0.11.2): the
elasticity requirements and bounds, the compression choice lists, group keys and offsets, as check reports them.
Each verdict was confirmed against that release's own DeepSpeedConfig (``tests/sampled_verdicts.py`` in its
runtime; the legacy curriculum ``schedule_type`` against its CurriculumScheduler at extraction)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsfields.check import Checker, Options, Severity
from dsfields.check.engine import check_text
from dsfields.model.store import load

pytestmark = pytest.mark.data

ELASTIC = {"enabled": True, "max_train_batch_size": 2000, "micro_batch_sizes": [2, 4, 6], "min_gpus": 1,
           "max_gpus": 10000, "min_time": 20, "version": 0.1}
GROUP = {"sp1": {"params": {"dense_ratio": 0.5}, "modules": ["attention.self"]}}


def _errors(version: str, data: dict[str, Any]) -> list[str]:
    report = check_text(json.dumps(data, indent=1), Checker(load(version)), Options())
    assert report.error is None
    return [f.path for f in report.findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_full_elasticity_configs_pass(version):
    # DeepSpeedConfig accepts both: beside train_batch_size it wants ignore_non_elastic_batch_info, and
    # without any batch key elasticity computes the batch sizes itself.
    given = {"ignore_non_elastic_batch_info": True}
    assert _errors(version, {"train_batch_size": 16, "elasticity": ELASTIC | given}) == []
    assert _errors(version, {"elasticity": ELASTIC}) == []


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_a_broken_elasticity_requirement_or_bound_names_the_key(version):
    given = {"ignore_non_elastic_batch_info": True}
    base = {"train_batch_size": 16}
    no_max = {k: v for k, v in ELASTIC.items() if k != "max_train_batch_size"}
    assert _errors(version, base | {"elasticity": no_max | given}) == ["elasticity.max_train_batch_size"]
    assert _errors(version, base | {"elasticity": ELASTIC}) == ["elasticity.ignore_non_elastic_batch_info"]
    for key in ("model_parallel_size", "num_gpus_per_node"):
        assert _errors(version, base | {"elasticity": ELASTIC | given | {key: 0}}) == [f"elasticity.{key}"]


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_compression_choice_lists(version):
    def config(method: str, quantization: str, rounding: str) -> dict[str, Any]:
        return {"train_batch_size": 1, "compression_training": {
            "sparse_pruning": {"shared_parameters": {"enabled": True, "method": method}, "different_groups": GROUP},
            "weight_quantization": {"shared_parameters": {"enabled": True, "quantization_type": quantization,
                                                          "rounding": rounding}, "different_groups": {}}}}

    assert _errors(version, config("topk", "asymmetric", "stochastic")) == []
    wq = "compression_training.weight_quantization.shared_parameters"
    assert sorted(_errors(version, config("l2", "skewed", "up"))) == [
        "compression_training.sparse_pruning.shared_parameters.method", f"{wq}.quantization_type", f"{wq}.rounding"]


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_verdicts_probed_with_the_switch_on_hold_only_while_it_is_on(version):
    # DeepSpeedConfig (both releases) accepts these with elasticity off: it reads its keys only when enabled.
    off = {"enabled": False, "ignore_non_elastic_batch_info": False, "model_parallel_size": 0}
    assert _errors(version, {"train_batch_size": 16, "elasticity": off}) == []
    assert _errors(version, {"train_batch_size": 16, "elasticity": {"ignore_non_elastic_batch_info": False}}) == []
    on = ELASTIC | {"ignore_non_elastic_batch_info": False}
    assert _errors(version, {"train_batch_size": 16, "elasticity": on}) == ["elasticity.ignore_non_elastic_batch_info"]


@pytest.mark.parametrize(("version", "stages"), [
    # Read from each release's deepspeed/runtime/config.py (_do_error_check): "only supported with ZeRO Stage 2 for
    # now" until 0.18.1, stages 1, 2 or 3 from 0.18.3 on. The snapshots learned them by probing each stage; the
    # verdicts were confirmed in 0.11.2's, 0.16.9's and 0.18.3's own DeepSpeedConfig (tests/sampled_verdicts.py).
    ("0.11.2", [2]), ("0.16.9", [2]), ("0.18.1", [2]), ("0.18.3", [1, 2, 3]), ("0.19.8", [1, 2, 3])])
def test_fp16_master_weights_needs_the_zero_stages_of_its_release(version, stages):
    path = "fp16.fp16_master_weights_and_grads"
    [needed] = load(version).fields[path].requires_values
    assert (needed["path"], needed["values"]) == ("zero_optimization.stage", stages)
    on = {"train_batch_size": 1, "optimizer": {"type": "Adam", "params": {"lr": 1e-3}},  # ZeRO 1-2 need one
          "fp16": {"enabled": True, "fp16_master_weights_and_grads": True}}
    for stage in (0, 1, 2, 3):
        errors = _errors(version, on | {"zero_optimization": {"stage": stage}})
        assert errors == ([] if stage in stages else [path]), (stage, errors)


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_elasticity_micro_batch_sizes_must_be_positive(version):
    # ElasticityConfig: "Elasticity expected value of micro_batch_sizes to only contain positive integers".
    micro = load(version).fields["elasticity.micro_batch_sizes"]
    assert micro.switched_on == "enabled" and not micro.item_probes["0"]["ok"] and not micro.item_probes["-1"]["ok"]
    for bad in ([2, 0], [-1]):
        errors = _errors(version, {"elasticity": ELASTIC | {"micro_batch_sizes": bad}})
        assert errors == ["elasticity.micro_batch_sizes"], (bad, errors)
    assert _errors(version, {"train_batch_size": 16, "elasticity": {"enabled": False, "micro_batch_sizes": [0]}}) == []


CT = "compression_training"


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_a_compression_group_without_its_required_key_is_one_error_on_that_key(version):
    # compression/config.py's get_params of each group kind: bits (activation), start_bits and target_bits
    # (weight), dense_ratio (pruning); each entry's "params" is indexed unguarded (KeyError: 'params').
    def config(kind: str, groups: dict[str, Any]) -> dict[str, Any]:
        return {"train_batch_size": 1, CT: {kind: {"different_groups": groups}}}

    quantized = {"aq1": {"params": {"bits": 8}, "modules": ["*"]}}
    assert _errors(version, config("activation_quantization", quantized)) == []
    assert _errors(version, config("activation_quantization", {"aq1": {"params": {}, "modules": ["*"]}})) == [
        f"{CT}.activation_quantization.different_groups.aq1.params.bits"]
    assert sorted(_errors(version, config("weight_quantization", {"wq1": {"params": {"start_bits": 8}}}))) == [
        f"{CT}.weight_quantization.different_groups.wq1.params.target_bits"]
    assert _errors(version, config("sparse_pruning", GROUP)) == []
    assert _errors(version, config("row_pruning", {"rp1": {"modules": ["*"]}})) == [
        f"{CT}.row_pruning.different_groups.rp1.params"]
    assert _errors(version, config("channel_pruning", {"cp1": {"params": {"dense_ratio": 0.5}}})) == []


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_snip_momentum_schedule_offset_end_may_not_come_before_the_offset(version):
    def config(**shared: Any) -> dict[str, Any]:
        # different_groups is indexed whenever the section is given, snip_momentum or not (KeyError otherwise)
        return {"train_batch_size": 1, CT: {"sparse_pruning": {"shared_parameters": {
            "enabled": True, "method": "snip_momentum", **shared}, "different_groups": {}}}}

    end = f"{CT}.sparse_pruning.shared_parameters.schedule_offset_end"
    assert _errors(version, config(schedule_offset=10, schedule_offset_end=5)) == [end]
    assert _errors(version, config(schedule_offset_end=5)) == [end]  # the offset's default is 1000
    for fine in (config(schedule_offset=5, schedule_offset_end=10), config(schedule_offset_end=2000),
                 config(schedule_offset=2000), config(schedule_offset=5, schedule_offset_end=5)):
        assert _errors(version, fine) == [], fine
    other = {"train_batch_size": 1, CT: {"sparse_pruning": {"shared_parameters": {
        "enabled": True, "method": "l1", "schedule_offset": 10, "schedule_offset_end": 5}, "different_groups": GROUP}}}
    assert _errors(version, other) == []  # compared only under snip_momentum


@pytest.mark.parametrize("version", ["0.16.9", "0.11.2"])
def test_legacy_curriculum_schedule_type_is_one_of_the_schedulers(version):
    legacy = {"enabled": True, "curriculum_type": "seqlen", "min_difficulty": 8, "max_difficulty": 1024,
              "schedule_type": "fixed_linear", "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}
    assert _errors(version, {"train_batch_size": 1, "curriculum_learning": legacy}) == []
    assert _errors(version, {"train_batch_size": 1, "curriculum_learning": legacy | {"schedule_type": "linear"}}) == [
        "curriculum_learning.schedule_type"]
