"""The world a launch plays and the world rules' predicates (unit: no snapshot, no DeepSpeed).

The launch side (every rule's examples launched at N = 8, the committed world.json reproduced, check against
the launch) is tests/test_world_launch.py; check's use of world.json is tests/test_world_check.py.
"""

from __future__ import annotations

import pytest

from dsfields.launch import world_rules
from dsfields.launch.verdict import classify, degree_named
from dsfields.launch.world import World

pytestmark = pytest.mark.unit


def test_a_rank_of_n_sets_what_the_launcher_would_and_plays_rank_0_and_the_last():
    world = World(16, 9, gpus_per_node=8)
    assert world.env() == {"RANK": "9", "LOCAL_RANK": "1", "WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "8",
                           "LOCAL_SIZE": "8"}
    assert world.argv() == ["--world-size", "16", "--rank", "9", "--gpus-per-node", "8"]
    assert World(8).ranks_to_play() == (0, 7) and World(1).ranks_to_play() == (0,)
    assert World(8).played() == "rank 0 of 8, 8 per node"
    # at one rank the committed records' environment is kept: no LOCAL_SIZE (the CPU accelerator counts NUMA nodes)
    assert "LOCAL_SIZE" not in World(1).env() and not World(1).fake
    with pytest.raises(ValueError):
        World(8, 8)


def test_a_refusal_about_the_world_is_the_configs_at_n_ranks_and_this_machines_at_one():
    exc = AssertionError("world_size must be divisible by sequence parallel size")
    assert classify(exc, ranks=1) == ("machine_error", "world-size")
    assert classify(exc, ranks=8) == ("config_error", None)
    config = {"zero_optimization": {"stage": 3, "zero_hpz_partition_size": 3}}
    assert degree_named(config, "8 is not divisible by 3") == "zero_optimization.zero_hpz_partition_size"
    assert degree_named(config, "8 is not divisible by 5") is None


@pytest.mark.parametrize("rule", world_rules.RULES, ids=lambda r: r.id)
def test_each_world_rule_fires_on_its_triggers_and_not_on_its_controls(rule):
    n, g = world_rules.PROBE_WORLD, world_rules.PROBE_PER_NODE
    for config in rule.triggers:
        assert [key for r, key in world_rules.evaluate(config, n, g) if r is rule] == [rule.key]
    for config in rule.controls:
        assert not [r for r, _ in world_rules.evaluate(config, n, g) if r is rule]


@pytest.mark.parametrize(("size", "world", "fires"), [
    (2, 1, False),  # min(hpZ, world) = 1 divides one rank
    (3, 8, True), (2, 8, False), (3, 64, True), (4, 64, False), (16, 8, False),  # 16 > 8: the group is the world
])
def test_hpz_against_the_world_as_groups_py_computes_it(size, world, fires):
    config = {"zero_optimization": {"stage": 3, "zero_hpz_partition_size": size}}
    assert bool(world_rules.BY_ID["hpz-divides-world"].fires(config, world, world)) is fires
    stage2 = {"zero_optimization": {"stage": 2, "zero_hpz_partition_size": 3}}
    assert not world_rules.BY_ID["hpz-divides-world"].fires(stage2, 8, 8)  # hpZ is ZeRO-3's


def test_autotp_larger_than_the_world_and_not_dividing_it_are_two_refusals():
    def fired(size: int, world: int) -> list[str]:
        return [r.id for r, _ in world_rules.evaluate({"tensor_parallel": {"autotp_size": size}}, world)]

    assert fired(16, 8) == ["autotp-larger-than-world"]
    assert fired(3, 8) == ["autotp-divides-world"]
    assert fired(4, 8) == [] and fired(2, 64) == []


def _fired(config: dict, world: int, per_node: int | None = None) -> list[str]:
    return [r.id for r, _ in world_rules.evaluate(config, world, per_node)]


@pytest.mark.parametrize(("shard", "hierarchical", "world", "per_node", "fired"), [
    (3, False, 8, 4, ["mics-shard-divides-world"]),  # mics_utils.py: (world // pp) % shard_size
    (16, False, 8, 8, ["mics-shard-divides-world"]),  # a shard wider than the world does not divide it either
    (4, False, 8, 4, []), (-1, True, 8, 4, []),  # -1: MiCS off
    (4, True, 8, 4, ["mics-hierarchy-spans-nodes"]),  # span_nodes = 4 // 4 = 1: one node
    (8, True, 8, 4, []),  # two nodes of 4
    (8, True, 8, 8, ["mics-hierarchy-spans-nodes"]),  # the same config on one node of 8
    (16, True, 64, 8, []),
])
def test_mics_shard_size_against_the_world_and_the_gpus_per_node(shard, hierarchical, world, per_node, fired):
    config = {"zero_optimization": {"stage": 3, "mics_shard_size": shard,
                                    "mics_hierarchical_params_gather": hierarchical}}
    assert _fired(config, world, per_node) == fired
    config["zero_optimization"]["stage"] = 2  # MiCS is stage 3's
    assert _fired(config, world, per_node) == []


@pytest.mark.parametrize(("zenflow", "offload", "fired"), [
    ({}, None, ["zenflow-needs-cpu-offload"]),
    ({}, "cpu", []),
    ({"select_interval": 4}, "cpu", ["zenflow-auto-with-select-interval"]),  # "auto" strategy is the default
    ({"select_interval": 4}, None, ["zenflow-auto-with-select-interval"]),  # configure_zenflow refuses first
    ({"select_strategy": "step", "select_interval": 1, "update_interval": 4}, "cpu", ["zenflow-select-below-update"]),
    ({"select_strategy": "step", "select_interval": 4, "update_interval": 4}, "cpu", []),
    ({"select_strategy": "step", "select_interval": 1, "update_interval": "auto"}, "cpu", []),
    ({"select_strategy": "epoch", "select_interval": 1, "update_interval": 4}, "cpu", []),  # × len(dataloader) = 0
])
def test_zenflows_set_up_refusals(zenflow, offload, fired):
    section = {"stage": 2, "zenflow": zenflow} | ({"offload_optimizer": {"device": offload}} if offload else {})
    assert _fired({"zero_optimization": section}, 1) == fired
    assert _fired({"zero_optimization": section}, 64) == fired  # they read no world size
    assert all(world_rules.BY_ID[rule].any_world for rule in fired)


def test_muon_at_stage_3_needs_reduce_scatter_off_and_unmanaged_accumulation_refuses_two_combinations():
    muon = {"optimizer": {"type": "muon"}, "zero_optimization": {"stage": 3}}
    assert _fired(muon, 1) == ["muon-not-with-reduce-scatter"]
    assert _fired(muon | {"zero_optimization": {"stage": 3, "reduce_scatter": False}}, 1) == []
    assert _fired(muon | {"zero_optimization": {"stage": 2}}, 1) == []
    unmanaged = {"managed_gradient_accumulation": False, "compile": {"deepcompile": True}}
    assert _fired(unmanaged | {"zero_optimization": {"stage": 1}}, 8) == [
        "unmanaged-accumulation-not-with-deepcompile"]
    # engine.py asserts overlap_comm at stage 1 first: one refusal, not two
    assert _fired(unmanaged | {"zero_optimization": {"stage": 1, "overlap_comm": True}}, 8) == [
        "unmanaged-accumulation-overlap-stage1"]
    assert _fired(unmanaged | {"zero_optimization": {"stage": 2, "overlap_comm": True}}, 8) == [
        "unmanaged-accumulation-not-with-deepcompile"]


def test_every_feature_refusal_not_reachable_from_a_config_is_said_in_the_snapshot_format_page():
    from conftest import REPO

    page = (REPO / "docs" / "snapshot-format.md").read_text(encoding="utf-8")
    assert [feature for feature, _, _ in world_rules.NOT_REACHABLE if feature not in page] == []


class _Invalid(Exception):
    """A pydantic ValidationError's shape: ``title`` (the refusing model) and ``errors()``."""

    def __init__(self, title: str, loc: tuple[str, ...]) -> None:
        super().__init__(f"1 validation error for {title}")
        self.title, self._loc = title, loc

    def errors(self) -> list[dict]:
        return [{"loc": self._loc, "type": "extra_forbidden"}]


@pytest.mark.parametrize(("title", "loc", "key"), [
    ("DeepSpeedBF16Config", ("loss_scale",), "bf16.loss_scale"),  # fp16.loss_scale is as short and came first
    ("DeepSpeedFP16Config", ("loss_scale",), "fp16.loss_scale"),
    ("TPTrainingConfig", ("enabled",), "tensor_parallel.enabled"),  # not fp16.enabled
])
def test_a_validation_error_is_placed_in_the_section_its_model_names(title, loc, key):
    from dsfields.launch.verdict import locate

    config = {"fp16": {"enabled": True, "loss_scale": 0}, "bf16": {"enabled": False, "loss_scale": 0},
              "tensor_parallel": {"enabled": True, "tp_size": 2}}
    assert locate(_Invalid(title, loc), config) == key
