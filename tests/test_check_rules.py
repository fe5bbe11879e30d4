"""Each hand-written rule in check_rules fires exactly when the real DeepSpeed 0.19.8 rejects.

The rules are DeepSpeed semantics copied by hand, so each is pinned to DeepSpeed here: every case
is built into ``DeepSpeedConfig`` (or the engine method the rule cites) and the rule's verdict
must equal DeepSpeed's. Every rule needs at least one firing and one silent case, so a new rule
cannot land untested.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import requires_deepspeed

from dsfields.check import rules as check_rules
from dsfields.extract.oracle import build_deepspeed_config
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

SNAPSHOT = load_snapshot("0.19.8")
BASE: dict[str, Any] = {"train_batch_size": 1}

# (rule id, config merged over BASE, world size for the batch rule)
CASES: list[tuple[str, dict[str, Any], int | None]] = [
    ("fp16-bf16-exclusive", {"fp16": {"enabled": True}, "bf16": {"enabled": True}}, None),
    ("fp16-bf16-exclusive", {"fp16": {"enabled": True}, "bfloat16": {"enabled": "true"}}, None),
    ("fp16-bf16-exclusive", {"fp16": {"enabled": True}, "bf16": {"enabled": False}}, None),
    ("fp16-bf16-exclusive", {"fp16": {"enabled": "auto"}, "bf16": {"enabled": True}}, None),
    ("fp16-bf16-exclusive", {"fp16": {"enabled": True}, "bf16": None, "bfloat16": {"enabled": True}}, None),
    ("fp16-dynamic-loss-scale", {"fp16": {"enabled": True, "loss_scale_window": 0}}, None),
    ("fp16-dynamic-loss-scale", {"fp16": {"enabled": True, "min_loss_scale": 0}}, None),
    ("fp16-dynamic-loss-scale", {"fp16": {"enabled": True, "loss_scale": 128, "min_loss_scale": 0}}, None),
    ("fp16-dynamic-loss-scale", {"fp16": {"enabled": False, "loss_scale_window": 0}}, None),
    ("zero-stage-requirements", {"zero_optimization": {"stage": 3, "compute_grad_norm": False}}, None),
    ("zero-stage-requirements", {"zero_optimization": {"stage": 2, "compute_grad_norm": False}}, None),
    ("zero-stage-requirements", {"zero_optimization": {"compute_grad_norm": False}}, None),
    ("zero-stage-requirements", {"zero_optimization": {"stage": 2, "offload_optimizer": {"ratio": 0.5}}}, None),
    ("zero-stage-requirements", {"zero_optimization": {"stage": 3, "offload_optimizer": {"ratio": 0.5}}}, None),
    ("zero-stage-requirements", {"fp16": {"fp16_master_weights_and_grads": True}}, None),
    ("zero-stage-requirements", {"fp16": {"fp16_master_weights_and_grads": True}, "zero_optimization": {"stage": 1}},
     None),
    ("zero-stage-requirements", {"bf16": {"bf16_master_weights_and_grads": True}}, None),
    ("zero-stage-requirements", {"bf16": {"bf16_optimizer_states": True}, "zero_optimization": {"stage": 2}}, None),
    ("zero-stage-requirements", {"bf16": {"bf16_optimizer_states": True, "bf16_master_weights_and_grads": True},
                                 "zero_optimization": {"stage": 2}}, None),
    ("allreduce-sum", {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}}, None),
    ("allreduce-sum", {"gradient_allreduce_op": "SUM", "zero_optimization": {"stage": 2, "zenflow": {}}}, None),
    ("allreduce-sum", {"gradient_allreduce_op": "sum", "compile": {"deepcompile": True}}, None),
    ("allreduce-sum", {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 2}}, None),
    ("batch-size", {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 3}, 1),
    ("batch-size", {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4}, 1),
    ("batch-size", {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1},
     1),
    ("batch-size", {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4},
     1),
    ("batch-size", {"train_batch_size": 0}, 1),
    ("batch-size", {"train_batch_size": "16"}, 1),
    ("batch-size", {"train_batch_size": 16.0, "gradient_accumulation_steps": 4}, 1),
    ("batch-size", {"train_batch_size": None, "gradient_accumulation_steps": 4}, 1),
    ("batch-size", {"train_batch_size": None, "train_micro_batch_size_per_gpu": 2}, 1),
    ("keep-in-fp32-modules", {"data_types": {"keep_in_fp32_modules": "norm"}}, None),
    ("keep-in-fp32-modules", {"data_types": {"keep_in_fp32_modules": ["norm", 3]}}, None),
    ("keep-in-fp32-modules", {"data_types": {"keep_in_fp32_modules": ["norm"]}}, None),
    ("parallel-write-pipeline-stage", {"checkpoint": {"parallel_write": {"pipeline_stage": "yes"}}}, None),
    ("parallel-write-pipeline-stage", {"checkpoint": {"parallel_write": {"pipeline_stage": 1}}}, None),
    ("curriculum-metrics-required", {"data_efficiency": {"data_sampling": {"curriculum_learning": {
        "enabled": True}}}}, None),
    ("curriculum-metrics-required", {"data_efficiency": {"data_sampling": {"curriculum_learning": {
        "enabled": True, "curriculum_metrics": {}}}}}, None),
    ("dynamic-batching-max-tokens", {"data_efficiency": {"data_sampling": {"dynamic_batching": {
        "enabled": True}}}}, None),
    ("dynamic-batching-max-tokens", {"data_efficiency": {"data_sampling": {"dynamic_batching": {
        "enabled": True, "max_tokens": 2048}}}}, None),
]

ENGINE_RULES = {"scheduler-params-required"}
ENGINE_CASES = [
    ({"scheduler": {"type": "WarmupLR"}}, True),
    ({"scheduler": {"type": "WarmupLR", "params": {}}}, False),
]


def violations(rule_id: str, config: dict[str, Any], world_size: int | None) -> list[check_rules.Violation]:
    rule = next(r for r in check_rules.RULES if r.id == rule_id)
    view = check_rules.View(config, SNAPSHOT, frozenset())
    return [v for v in rule.check(view, world_size) if v.severity == "error"]


def merged(config: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(BASE) | copy.deepcopy(config)
    return {k: v for k, v in out.items() if v is not None or k not in ("train_batch_size",)}


def test_every_rule_has_firing_and_silent_cases():
    for rule in check_rules.RULES:
        if rule.id in ENGINE_RULES or rule.id == "bf16-shadows-bfloat16":
            continue
        fired = {bool(violations(r, merged(c), w)) for r, c, w in CASES if r == rule.id}
        assert fired == {True, False}, f"{rule.id} needs a firing and a silent case"
        assert rule.source.startswith("deepspeed/"), rule.id


def test_every_path_a_rule_reads_is_a_key_of_the_release_it_was_written_for():
    """No hand-kept field list: the View records what each rule reads; all of it must exist in 0.19.8."""
    read: dict[str, set[str]] = {}
    for rule_id, config, world_size in CASES:
        rule = next(r for r in check_rules.RULES if r.id == rule_id)
        view = check_rules.View(merged(config), SNAPSHOT, frozenset())
        list(rule.check(view, world_size))
        read.setdefault(rule_id, set()).update(view.read)
    assert set(read) >= {r.id for r in check_rules.RULES} - {"bf16-shadows-bfloat16", *ENGINE_RULES}
    unknown = {rule: sorted(p for p in paths if not view.known(p)) for rule, paths in read.items()}
    assert {rule: paths for rule, paths in unknown.items() if paths} == {}


@pytest.mark.data
def test_a_rule_never_reports_a_key_its_release_does_not_read():
    """0.10.3 reads no zenflow/compile keys: the same config draws no violation about them there."""
    old = load_snapshot("0.10.3")
    config = merged({"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}})
    for rule, violation in check_rules.evaluate(check_rules.View(config, old, frozenset()), None):
        assert all(check_rules.View(config, old, frozenset()).known(p) for p in violation.paths), (rule.id, violation)


@requires_deepspeed
@pytest.mark.deepspeed
@pytest.mark.parametrize(("rule_id", "config", "world_size"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_fires_exactly_when_deepspeed_rejects(rule_id, config, world_size):
    data = merged(config)
    fires = bool(violations(rule_id, data, world_size))
    error = build_deepspeed_config(data)
    assert fires == (error is not None), f"{rule_id}: rule {'fires' if fires else 'is silent'}, DeepSpeed: {error!r}"


@requires_deepspeed
@pytest.mark.deepspeed
def test_bf16_wins_over_bfloat16_as_the_warning_says():
    from deepspeed.runtime.config import DeepSpeedConfig

    data = merged({"bf16": {"enabled": False}, "bfloat16": {"enabled": True}})
    rule = next(r for r in check_rules.RULES if r.id == "bf16-shadows-bfloat16")
    assert [v.severity for v in rule.check(check_rules.View(data, SNAPSHOT, frozenset()), None)] == ["warning"]
    assert DeepSpeedConfig(data).bfloat16_config.enabled is False


@requires_deepspeed
@pytest.mark.deepspeed
@pytest.mark.parametrize(("config", "fails"), ENGINE_CASES)
def test_scheduler_params_rule_matches_the_engine(config, fails):
    """Run the engine's own _scheduler_from_config on a stub engine: params=None is a TypeError there."""
    import torch
    from deepspeed.runtime.engine import DeepSpeedEngine

    class Stub:
        def scheduler_name(self):
            return config["scheduler"]["type"]

        def scheduler_params(self):
            return config["scheduler"].get("params")

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    try:
        DeepSpeedEngine._scheduler_from_config(Stub(), optimizer)
        raised = False
    except TypeError:
        raised = True
    rule = next(r for r in check_rules.RULES if r.id == "scheduler-params-required")
    assert bool(list(rule.check(check_rules.View(merged(config), SNAPSHOT, frozenset()), None))) == fails == raised
