"""Issue 25 on the real DeepSpeed 0.19.8: its requirements between keys are facts of its snapshot, and check and
DeepSpeedConfig agree on every probe value of every such key, on a config that satisfies the requirement and on
one that breaks it (the differential of the issue's acceptance).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import requires_deepspeed

from dsfields.check import Checker, Options, Severity
from dsfields.check.engine import check_text
from dsfields.check.findings import Kind
from dsfields.model.records import Snapshot

pytestmark = [requires_deepspeed, pytest.mark.integration]


METRICS = {"seqlen": {"index_to_sample_path": "x", "index_to_metric_path": "y", "difficulty_type": "value",
                      "clustering_type": "single_cluster", "min_difficulty": 8, "max_difficulty": 1024,
                      "schedule_type": "fixed_linear",
                      "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}}
SATISFYING = {
    # Written from deepspeed/runtime/data_pipeline/config.py of 0.19.8: what each requirement asks for.
    "data_efficiency.data_sampling.dynamic_batching.enabled": {"max_tokens": 2048},
    "data_efficiency.data_sampling.curriculum_learning.enabled": {"curriculum_metrics": METRICS},
}


def _nest(path: str, leaf: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"train_batch_size": 1}
    node = data
    *sections, _ = path.split(".")
    for part in sections:
        node = node.setdefault(part, {})
    node.update(leaf)
    return data


@pytest.fixture(scope="module")
def snapshot_0198() -> Snapshot:
    from dsfields.model.store import load

    return load("0.19.8")


def test_the_issue_requirements_are_facts_of_0_19_8(snapshot_0198):
    found = {p: [r["key"] for r in f.requires] for p, f in snapshot_0198.fields.items() if f.requires}
    assert found == {p: list(v) for p, v in SATISFYING.items()}
    source = snapshot_0198.fields["data_efficiency.data_sampling.dynamic_batching.enabled"].requires[0]["source"]
    assert source["file"] == "deepspeed/runtime/data_pipeline/config.py" and 107 <= source["line"] <= 109


@pytest.mark.parametrize("path", sorted(SATISFYING))
def test_check_agrees_with_deepspeedconfig_on_every_probe_value(snapshot_0198, path):
    """On the satisfying config and without the required keys, DeepSpeed's verdict is check's, value by value."""
    from dsfields.extract.oracle import build_deepspeed_config
    from dsfields.extract.probes import PROBES

    checker = Checker(snapshot_0198)
    key = path.rpartition(".")[2]
    disagreements = []
    for given in (SATISFYING[path], {}):
        for pid, value in PROBES:
            data = _nest(path, {**given, key: value})
            if pid == '"auto"':
                continue  # "auto" has its own record and its own verdicts (check's AUTO findings)
            theirs = build_deepspeed_config(data) is None
            report = check_text(json.dumps(data), checker, Options())
            ours = not [f for f in report.findings if f.severity is Severity.ERROR]
            if theirs != ours:
                disagreements.append(f"{pid} with {sorted(given)}: DeepSpeed {'accepts' if theirs else 'rejects'}, "
                                     f"check {[f.message for f in report.findings if f.severity is Severity.ERROR]}")
    assert not disagreements, "\n".join(disagreements)


def test_full_valid_configs_pass_and_a_broken_requirement_names_the_missing_key(snapshot_0198):
    from dsfields.extract.oracle import build_deepspeed_config

    checker = Checker(snapshot_0198)
    for path, given in SATISFYING.items():
        data = _nest(path, {**given, "enabled": True})
        assert build_deepspeed_config(data) is None
        report = check_text(json.dumps(data, indent=1), checker, Options())
        assert not [f for f in report.findings if f.severity is Severity.ERROR], report.findings
        for missing in given:
            broken = _nest(path, {"enabled": True, **{k: v for k, v in given.items() if k != missing}})
            assert build_deepspeed_config(broken) is not None
            errors = [f for f in check_text(json.dumps(broken, indent=1), checker, Options()).findings
                      if f.severity is Severity.ERROR]
            assert [f.path for f in errors] == [f"{path.rpartition('.')[0]}.{missing}"]


NEW_FACTS = [
    # (key, the config it sits in, values to judge): the choice list of an after-validator, the non-empty
    # assert, the before-validator's wrapping; each value judged by DeepSpeedConfig and by check.
    ("zero_optimization.zenflow.select_strategy", {"optimizer": {"type": "Adam", "params": {"lr": 1e-3}},
                                                   "zero_optimization": {"stage": 2, "zenflow": {}}},
     ["auto", "step", "epoch", "sometimes", "STEP", 1]),
    ("autotuning.results_dir", {}, ["out", "", None, 0, [], {}, 1]),
    # `isinstance(v, str) and v != "auto"` in an after-validator: any word but "auto" is refused, numbers pass.
    ("zero_optimization.zenflow.select_interval", {"optimizer": {"type": "Adam", "params": {"lr": 1e-3}},
                                                   "zero_optimization": {"stage": 2, "zenflow": {}}},
     ["auto", "sometimes", "step", 4, 0]),
    ("zero_optimization.leaf_module.classes", {"zero_optimization": {"stage": 3, "leaf_module": {}}},
     ["MyBlock", ["A", "B"], [], 1, None]),
    # A key probed again with its section switched on (its requirement met by the key itself): alone on the
    # neutral base every value was refused for want of enabled's own requirement.
    ("data_efficiency.data_sampling.dynamic_batching.max_tokens",
     {"data_efficiency": {"data_sampling": {"dynamic_batching": {"enabled": True}}}},
     [2048, 1, 0, -1, None, [], {}]),
]


@pytest.mark.parametrize(("path", "base", "values"), NEW_FACTS)
def test_check_agrees_with_deepspeedconfig_on_the_validators_in_code(snapshot_0198, path, base, values):
    import copy

    from dsfields.extract.oracle import build_deepspeed_config

    checker = Checker(snapshot_0198)
    disagreements = []
    for value in values:
        data = {"train_batch_size": 1, **copy.deepcopy(base)}
        node = data
        *sections, key = path.split(".")
        for part in sections:
            node = node.setdefault(part, {})
        node[key] = value
        theirs = build_deepspeed_config(data) is None
        # DeepSpeedConfig's verdict against check's on the config; the deepspeed.initialize rules (ZenFlow's
        # set-up refusals: no CPU offload, a numeric select_interval with "auto") are the launch tests' to judge
        errors = [f.message for f in check_text(json.dumps(data), checker, Options()).findings
                  if f.severity is Severity.ERROR and f.kind is not Kind.LAUNCH]
        if theirs != (not errors):
            disagreements.append(f"{value!r}: DeepSpeed {'accepts' if theirs else 'rejects'}, check {errors}")
    assert not disagreements, "\n".join(disagreements)


STAGE_SWITCHES = {
    # Read from deepspeed/runtime/config.py of 0.19.8 (DeepSpeedConfig._do_error_check): each needs ZeRO stage 1-3.
    "fp16.fp16_master_weights_and_grads": {"fp16": {"enabled": True}},
    "bf16.bf16_master_weights_and_grads": {"bf16": {"enabled": True}},
    "bf16.bf16_optimizer_states": {"bf16": {"enabled": True, "bf16_master_weights_and_grads": True}},
}


@pytest.mark.parametrize("path", sorted(STAGE_SWITCHES))
def test_the_stages_a_switch_needs_are_the_releases_and_check_agrees_with_deepspeedconfig(snapshot_0198, path):
    """The stages come from 0.19.8's own DeepSpeedConfig (requires_values), and for every stage check's verdict on
    the switch is DeepSpeed's (the zero-stage-requirements rule applies the fact)."""
    import copy

    from dsfields.extract.oracle import build_deepspeed_config

    [needed] = [r for r in snapshot_0198.fields[path].requires_values if r["path"] == "zero_optimization.stage"]
    assert needed["values"] == [1, 2, 3] and needed["source"]["file"] == "deepspeed/runtime/config.py"
    checker = Checker(snapshot_0198)
    section, _, key = path.rpartition(".")
    disagreements = []
    for stage in (0, 1, 2, 3):
        data = {"train_batch_size": 1, "optimizer": {"type": "Adam", "params": {"lr": 1e-3}},  # ZeRO 1-2 need one
                "zero_optimization": {"stage": stage}, **copy.deepcopy(STAGE_SWITCHES[path])}
        data[section][key] = True
        theirs = build_deepspeed_config(data) is None
        # DeepSpeedConfig's verdict against check's on the config; the deepspeed.initialize rules (ZenFlow's
        # set-up refusals: no CPU offload, a numeric select_interval with "auto") are the launch tests' to judge
        errors = [f.message for f in check_text(json.dumps(data), checker, Options()).findings
                  if f.severity is Severity.ERROR and f.kind is not Kind.LAUNCH]
        if theirs != (not errors):
            disagreements.append(f"stage {stage}: DeepSpeed {'accepts' if theirs else 'rejects'}, check {errors}")
    assert not disagreements, "\n".join(disagreements)


CM = "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.*"


@pytest.mark.parametrize("value", ["fixed_discrete", "fixed_root", "fixed_linear", "custom", "fixed_lin", "linear"])
def test_curriculum_schedule_type_is_checked_as_building_curriculumscheduler_checks_it(snapshot_0198, value):
    """The schedule_type chain of 0.19.8's CurriculumScheduler, built by the data sampler (never by DeepSpeedConfig):
    its allowed values are the snapshot's, with the line and message, and check's verdict is the class's."""
    from deepspeed.runtime.data_pipeline.curriculum_scheduler import CurriculumScheduler

    record = snapshot_0198.fields[f"{CM}.schedule_type"]
    assert record.choices == ["fixed_discrete", "fixed_root", "fixed_linear", "custom"]
    built = record.choices_source
    assert built is not None and built["built"] == "CurriculumScheduler"
    assert built["file"] == "deepspeed/runtime/data_pipeline/curriculum_scheduler.py"
    assert built["message"] == "RuntimeError: Unsupported curriculum schedule type"
    schedule = {"difficulty": [8, 16], "max_step": [5], "total_curriculum_step": 10, "difficulty_step": 8,
                "root_degree": 2}
    metric = {**METRICS["seqlen"], "schedule_type": value, "schedule_config": schedule}
    try:
        CurriculumScheduler(dict(metric))
        deepspeed_refuses = False
    except RuntimeError as exc:
        deepspeed_refuses = str(exc) == "Unsupported curriculum schedule type"
    config = _nest("data_efficiency.data_sampling.curriculum_learning.x", {
        "enabled": True, "curriculum_metrics": {"seqlen": metric}})
    report = check_text(json.dumps(config, indent=1), Checker(snapshot_0198), Options())
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == (
        ["data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.seqlen.schedule_type"]
        if deepspeed_refuses else [])
    if errors:
        assert "when it builds CurriculumScheduler" in errors[0].message


def test_a_class_built_only_when_its_section_is_on_judges_nothing_while_it_is_off(snapshot_0198):
    """With curriculum learning off, DeepSpeed builds no CurriculumScheduler: a schedule_type outside its list is
    no error (DeepSpeedConfig builds too), and the same metric with curriculum on is one."""
    from deepspeed.runtime.config import DeepSpeedConfig

    metric = {**METRICS["seqlen"], "schedule_type": "fixed_lin", "schedule_config": {}}
    for enabled, expected in ((False, []), (True, [f"{CM.replace('*', 'seqlen')}.schedule_type"])):
        config = {"train_batch_size": 1, "data_efficiency": {"data_sampling": {"curriculum_learning": {
            "enabled": enabled, "curriculum_metrics": {"seqlen": metric}}}}}
        if not enabled:
            DeepSpeedConfig(json.loads(json.dumps(config)))
        report = check_text(json.dumps(config, indent=1), Checker(snapshot_0198), Options())
        assert [f.path for f in report.findings if f.severity is Severity.ERROR] == expected, enabled
