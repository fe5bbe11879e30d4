"""DeepSpeed's elastic batch computation as check repeats it (model/elasticity.py; unit: no snapshot, no DeepSpeed).

The cases are DeepSpeed's own unit tests (tests/unit/elasticity/test_elastic.py: the 10k config, world size 128
refused and 64 accepted, non-integer micro batches, GPU bounds below 1, a newer elasticity version); 308 cases,
random ones among them, gave the same accept/refuse as 0.18.9's compute_elastic_config when this was written.
"""

from __future__ import annotations

import pytest

from dsfields.launch import world_rules
from dsfields.model import elasticity

pytestmark = pytest.mark.unit

DEFAULTS = {"enabled": False, "max_gpus": 10000, "min_gpus": 1, "min_time": 0, "model_parallel_size": 1,
            "num_gpus_per_node": 1, "prefer_larger_batch": True, "version": 0.2}  # as a snapshot hands them in
TEN_K = {"enabled": True, "max_train_batch_size": 10000, "micro_batch_sizes": [8, 12, 16, 17], "min_gpus": 32,
         "max_gpus": 1500, "min_time": 20, "version": 0.1}


def test_the_10k_config_has_23_valid_world_sizes_with_a_batch_of_9792():
    values = elasticity.settings(TEN_K, DEFAULTS)
    valid = elasticity.valid_world_sizes(values, 64)
    assert len(valid) == 23 and 64 in valid and 128 not in valid
    assert elasticity._v01([8, 12, 16, 17], 10000, 32, 1500, True)[0] == 9792


@pytest.mark.parametrize(("changes", "world", "refused"), [
    ({}, 64, None),
    ({}, 128, ("max_train_batch_size", "World size (128) is not valid")),
    ({"micro_batch_sizes": [8, 12.5, 16]}, 64, ("micro_batch_sizes", "only contain a list of integers")),
    ({"micro_batch_sizes": [8, -1]}, 64, ("micro_batch_sizes", "only contain positive integers")),
    ({"min_gpus": -1}, 64, ("min_gpus", "min/max gpus must be > 0")),
    ({"max_gpus": -1}, 64, ("max_gpus", "min/max gpus must be > 0")),
    ({"min_gpus": 2000}, 64, ("min_gpus", "min_gpus cannot be greater than max_gpus")),
    ({"version": 0.3}, 64, ("version", "runtime only supports up to 0.2")),
    ({"model_parallel_size": 4}, 64, ("model_parallel_size", "does not support model-parallel training")),
    ({"enabled": False, "micro_batch_sizes": [1.5]}, 64, None),  # compute_elastic_config runs only when enabled
])
def test_deepspeeds_elasticity_tests(changes, world, refused):
    found = elasticity.world_refusal(TEN_K | changes, world, DEFAULTS)
    if refused is None:
        assert found is None
    else:
        assert found is not None and found[0] == refused[0] and refused[1] in found[1]


def test_version_0_2_works_per_node_and_the_rules_name_the_key():
    v2 = TEN_K | {"version": 0.2, "num_gpus_per_node": 8, "model_parallel_size": 4}
    # v0.2 derives data-parallel sizes per node and compares the world with them (0.18.9 does the same)
    assert elasticity.world_refusal(v2, 48, DEFAULTS) is None
    assert elasticity.world_refusal(v2, 64, DEFAULTS)[0] == "max_train_batch_size"
    assert elasticity.world_refusal(v2 | {"num_gpus_per_node": 6}, 48, DEFAULTS)[0] == "num_gpus_per_node"
    defaults = {"elasticity": DEFAULTS}
    fired = world_rules.evaluate({"elasticity": TEN_K}, 128, None, defaults=defaults)
    assert [(r.id, key) for r, key in fired] == [("elasticity-world-size", "elasticity")]
    fired = world_rules.evaluate({"elasticity": TEN_K | {"min_gpus": -1}}, 64, None, defaults=defaults)
    assert [(r.id, key) for r, key in fired] == [("elasticity-config", "elasticity.min_gpus")]
    assert world_rules.evaluate({"elasticity": TEN_K}, 64, None, defaults=defaults) == []
