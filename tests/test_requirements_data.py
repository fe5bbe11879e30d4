"""Issue 25 on the committed snapshots of releases older than the installed DeepSpeed (0.16.9, 0.11.2): the
elasticity requirements and bounds and the compression choice lists, as check reports them. Each verdict was
confirmed against that release's own DeepSpeedConfig (``tests/sampled_verdicts.py`` in its runtime)."""

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
