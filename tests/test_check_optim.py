"""The optimizer/scheduler catalog in the snapshot and the HF fill list are derived, current and true.

The catalog is read from the engine's code; here it is checked against behaviour: each listed
scheduler really is built as ``cls(optimizer, **params)`` with its listed parameters and rejects an
unlisted one, torch optimizers accept every listed parameter, and DeepSpeed's own name list
(``DEEPSPEED_OPTIMIZERS``, ``VALID_LR_SCHEDULES``) is covered.
"""

from __future__ import annotations

import pytest
from conftest import requires_deepspeed

from dsfields.extract.hf.fills import fill_calls
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

SNAPSHOT = load_snapshot("0.19.8").raw


def test_fill_calls_reads_fill_match_and_fill_only():
    code = '''
class HfTrainerDeepSpeedConfig:
    def fill_match(self, ds_key_long, hf_val, hf_key=None, must_match=True):
        pass
    fill_only = partialmethod(fill_match, must_match=False)
    def trainer_config_process(self, args):
        self.fill_match("train_batch_size", 1, "x", not args.auto)
        self.fill_only("scheduler.params.warmup_min_lr", 0)
        self.fill_match("bf16.enabled", True, must_match=False)
        self.fill_match(some_variable, 1)
'''
    assert fill_calls(code) == {
        "bf16.enabled": {"function": "trainer_config_process", "line": 9, "must_match": False},
        "scheduler.params.warmup_min_lr": {"function": "trainer_config_process", "line": 8, "must_match": False},
        "train_batch_size": {"function": "trainer_config_process", "line": 7, "must_match": True},
    }


@pytest.mark.data
def test_the_hf_fill_list_has_one_home_with_its_transformers_version():
    """The Trainer's fill list is read from generated/hf/ (the witness pair's transformers), and no DeepSpeed snapshot
    carries a copy of it any more (format 3)."""
    from dsfields.hf.trainer import WITNESS_PAIR, fill_list

    hf = fill_list()
    assert hf is not None and hf.transformers_version == WITNESS_PAIR[0]
    assert "train_micro_batch_size_per_gpu" in hf.paths and set(hf.paths["fp16.enabled"]) == {
        "function", "line", "must_match"}
    assert "hf_trainer" not in SNAPSHOT and SNAPSHOT["format_version"] == 3


@requires_deepspeed
@pytest.mark.deepspeed
def test_catalog_in_the_snapshot_is_what_the_installed_deepspeed_gives():
    from dsfields.extract.optim import optimizers_and_schedulers

    live = optimizers_and_schedulers()
    assert live == {"optimizers": SNAPSHOT["optimizers"], "schedulers": SNAPSHOT["schedulers"]}


@requires_deepspeed
@pytest.mark.deepspeed
def test_deepspeeds_own_name_lists_are_covered():
    from deepspeed.runtime.config import DEEPSPEED_OPTIMIZERS
    from deepspeed.runtime.lr_schedules import VALID_LR_SCHEDULES

    names = SNAPSHOT["optimizers"]["names"]
    assert all(names[n]["case_insensitive"] and names[n]["origin"] == "deepspeed" for n in DEEPSPEED_OPTIMIZERS)
    assert "SGD" in names and "Adam" not in names  # "Adam" is lower-cased to DeepSpeed's own adam first
    assert set(VALID_LR_SCHEDULES) <= set(SNAPSHOT["schedulers"]["names"])
    assert SNAPSHOT["optimizers"]["rejected_params"].keys() == {"max_grad_norm"}
    assert "torch_adam" in names["adamw"]["engine_params"]


def _sample(name: str, spec: dict) -> object:
    default = spec.get("default")
    return ([2] if name == "milestones" else 1) if default is None else default


@requires_deepspeed
@pytest.mark.deepspeed
@pytest.mark.parametrize("name", sorted(SNAPSHOT["schedulers"]["names"]))
def test_scheduler_params_are_the_constructors(name):
    import importlib

    import torch

    if name in ("SequentialLR", "LambdaLR", "MultiplicativeLR", "ReduceLROnPlateau", "ChainedScheduler"):
        pytest.skip("needs callables or other schedulers, not expressible in JSON")
    record = SNAPSHOT["schedulers"]["names"][name]["classes"][0]
    module, _, attr = record["class"].rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)
    required = {p: _sample(p, s) for p, s in record["params"].items() if s["required"]}
    if name in ("CyclicLR", "OneCycleLR"):
        required |= {"total_steps": 10} if name == "OneCycleLR" else {"base_lr": 0.01}
    cls(optimizer, **required)
    with pytest.raises(TypeError):
        cls(optimizer, **required, not_a_parameter_of_it=1)


@requires_deepspeed
@pytest.mark.deepspeed
@pytest.mark.parametrize("name", sorted(n for n, e in SNAPSHOT["optimizers"]["names"].items()
                                        if e["origin"] == "torch.optim"))
def test_torch_optimizer_params_are_accepted(name):
    import importlib

    import torch

    record = SNAPSHOT["optimizers"]["names"][name]["classes"][0]
    module, _, attr = record["class"].rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    params = [torch.nn.Parameter(torch.zeros(2, 2))]
    for key, spec in record["params"].items():
        if spec["default"] is not None:
            cls(params, **{key: spec["default"]})  # each listed keyword is a real constructor parameter
    with pytest.raises(TypeError):
        cls(params, not_a_parameter_of_it=1)
