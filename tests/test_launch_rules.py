"""Launch rules (unit, no DeepSpeed): every rule's predicate on its own examples, check's use of launch.json,
the HF Trainer semantics under --hf, ``check --launch`` with a fake worker, and the issue-14 regressions.

The integration side (each rule's examples through the real deepspeed.initialize, the committed
launch.json reproduced, the differential against the corpus) is tests/test_check_launch.py.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest

from dsfields.check import Checker, Finding, Options, Severity, check_text
from dsfields.check.launch_check import launch_findings
from dsfields.check.launch_rules import NOT_CONFIRMED, launch_rule_findings
from dsfields.check.runtime import hf_substitute
from dsfields.cli import main
from dsfields.configfile import parse
from dsfields.launch import catalogue
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.lane("data")  # the tests below without a lane mark of their own

VERSION = "0.19.8"
ZERO2 = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}
ADAMW = {"type": "AdamW", "params": {"lr": 1e-4}}


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(load_snapshot(VERSION))


def findings(checker: Checker, config: dict[str, Any], **options: Any) -> list[Finding]:
    report = check_text(json.dumps(config, indent=1), checker, Options(**options))
    assert report.error is None, report.error
    return report.findings


def errors(found: list[Finding]) -> dict[str, Finding]:
    return {f.path: f for f in found if f.severity is Severity.ERROR}


def launch_errors(found: list[Finding]) -> dict[str, str | None]:
    return {f.path: f.rule for f in found if f.severity is Severity.ERROR and f.kind.name == "LAUNCH"}


def with_zero(**zero: Any) -> dict[str, Any]:
    config = copy.deepcopy(ZERO2)
    config["zero_optimization"].update(zero)
    return config


# ---------------------------------------------------------------- the catalogue on its own examples


def fired(example: catalogue.Example) -> set[str]:
    return {rule.id for rule, _ in catalogue.evaluate(example.config, example.style, example.optimizer_from_code)}


@pytest.mark.parametrize("rule", catalogue.RULES, ids=lambda r: r.id)
def test_rule_fires_on_its_triggers_and_not_on_its_controls(rule):
    assert rule.triggers, "every rule needs a triggering example"
    assert rule.effect == "accepts" or rule.controls, "every raising rule needs a non-triggering example"
    for example in rule.triggers:
        assert rule.id in fired(example), example
        key = dict((r.id, k) for r, k in catalogue.evaluate(example.config, example.style,
                                                             example.optimizer_from_code))[rule.id]
        assert key.split(".")[0] in example.config or rule.id in ("batch-size-required", "hf-zero-section-required")
    for example in rule.controls:
        assert rule.id not in fired(example), example


@pytest.mark.unit
@pytest.mark.parametrize("rule", catalogue.RULES, ids=lambda r: r.id)
def test_rule_says_what_where_and_how_to_fix(rule):
    assert rule.enforces and rule.fix and rule.key
    assert rule.raised_by in ("deepspeed", "accelerate", "transformers")
    assert ".py" in rule.source and rule.source.startswith(rule.raised_by + "/")
    assert rule.effect == "accepts" or rule.message


def test_the_committed_launch_json_covers_every_rule():
    record = catalogue.load_launch(VERSION)
    assert record is not None and record["deepspeed_version"] == VERSION
    assert set(record["rules"]) == set(catalogue.BY_ID)
    assert {r.id for r in catalogue.RULES if r.read_in == VERSION} <= set(catalogue.confirmed(record))
    for rule_id, entry in catalogue.confirmed(record).items():
        if catalogue.BY_ID[rule_id].effect == "raises":
            assert catalogue.BY_ID[rule_id].message in entry["message"], rule_id


@pytest.mark.parametrize("rule", catalogue.RULES, ids=lambda r: r.id)
def test_each_rule_is_confirmed_in_the_release_its_source_was_read_in(rule):
    record = catalogue.load_launch(rule.read_in)
    assert record is not None and record["deepspeed_version"] == rule.read_in
    entry = catalogue.confirmed(record).get(rule.id)
    assert entry is not None, record["rules"].get(rule.id)
    assert rule.effect == "accepts" or rule.message in entry["message"]


_MICRO = ("batch-size-required", "train_micro_batch_size_per_gpu")


@pytest.mark.parametrize(("config", "plain", "hf"), [
    ({"zero_optimization": "x"}, [_MICRO], [("hf-zero-optimization-object", "zero_optimization")]),
    ({"zero_optimization": {"stage": 10**400}}, [_MICRO], [_MICRO]),
    ({"train_batch_size": 10**400, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1},
     [], [("hf-zero-section-required", "zero_optimization")]),
    ({"optimizer": "AdamW"}, [_MICRO], []),
    ({"scheduler": {"type": "WarmupLR", "params": []}}, [_MICRO], []),
    ({"fp16": 1}, [_MICRO], []),
], ids=["zero-a-string", "stage-400-digits", "batch-400-digits", "optimizer-a-string", "params-a-list", "fp16-an-int"])
def test_odd_configs_fire_only_the_rules_that_can_judge_them(config, plain, hf):
    """A value a rule's predicate cannot judge (a string for a section, 400 digits) fires no rule and raises nothing;
    the rules that can judge the rest of the config still fire, whether or not the optimizer comes from code."""
    for style, expected in (("plain", plain), ("hf", hf)):
        for optimizer_from_code in (False, True):
            fired = catalogue.evaluate(config, style, optimizer_from_code)  # type: ignore[arg-type]
            assert [(rule.id, key) for rule, key in fired] == expected, (style, optimizer_from_code)


# ---------------------------------------------------------------- launch.json decides which rules are active


def all_confirmed(**overrides: bool) -> dict[str, Any]:
    return {"format_version": 1, "deepspeed_version": VERSION,
            "rules": {r.id: {"confirmed": overrides.get(r.id.replace("-", "_"), True), "message": f"msg of {r.id}",
                             "exc_type": "AssertionError"} for r in catalogue.RULES}}


def test_a_rule_applies_only_where_confirmed_and_quotes_the_recorded_message(checker):
    config = parse(json.dumps(ZERO2), "<t>", "deepspeed")
    found = launch_rule_findings(checker, config, Options(), [], all_confirmed())
    assert [(f.path, f.rule) for f in found] == [("zero_optimization.stage", "zero-requires-optimizer")]
    assert '"msg of zero-requires-optimizer"' in found[0].message and "--optimizer-from-code" in found[0].message
    assert not launch_rule_findings(checker, config, Options(), [], all_confirmed(zero_requires_optimizer=False))


def test_without_launch_json_the_rules_are_off_and_check_says_so_once(checker):
    config = parse(json.dumps(ZERO2), "<t>", "deepspeed")
    found = launch_rule_findings(checker, config, Options(), [], None)
    assert len(found) == 1 and found[0].severity is Severity.INFO and NOT_CONFIRMED in found[0].message


def test_rules_follow_each_releases_launch_json():
    """0.14.4's probe: warmup_num_steps 0 and a conflicting param_dtype launch there (rules inactive), the
    client-optimizer rule holds (active), Lamb's cannot be confirmed on CPU (FusedLamb is CUDA-only there)."""
    record = catalogue.load_launch("0.14.4")
    assert record is not None
    active = set(catalogue.confirmed(record))
    assert {"offload-client-optimizer", "zero-requires-optimizer", "hf-zero-section-required"} <= active
    assert not {"scheduler-invalid-args", "param-dtype-precision", "lamb-dynamic-loss-scale"} & active
    old = Checker(load_snapshot("0.14.4"))
    warm0 = ZERO2 | {"optimizer": ADAMW, "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 0}}}
    assert not launch_errors(findings(old, warm0))
    assert launch_errors(findings(old, with_zero(cpu_offload=True), hf=True)) == {
        "zero_optimization.cpu_offload": "offload-client-optimizer"}


ONECYCLE0 = ZERO2 | {"optimizer": ADAMW, "scheduler": {"type": "OneCycle", "params": {
    "cycle_min_lr": 1e-5, "cycle_max_lr": 1e-4, "cycle_first_step_size": 0}}}
PLD_ON = ZERO2 | {"optimizer": ADAMW, "progressive_layer_drop": {"enabled": True}}


def onecycle(**params: Any) -> dict[str, Any]:
    return ZERO2 | {"optimizer": ADAMW, "scheduler": {"type": "OneCycle", "params": {
        "cycle_min_lr": 1e-5, "cycle_max_lr": 1e-4, **params}}}


def keys_of(rule_id: str, config: dict[str, Any], style: str = "plain") -> list[str]:
    return [k for r, k in catalogue.evaluate(config, style) if r.id == rule_id]  # type: ignore[arg-type]


def test_onecycle_zero_cycle_is_a_total_cycle_size_of_zero():
    """Before OneCycle checked each half (0.19.8: first > 0, second >= 0), _initialize_cycle divided by
    first + second (second defaulting to first): only a total of 0 fails when the scheduler is built."""
    rule = "scheduler-onecycle-zero-cycle"
    assert keys_of(rule, ONECYCLE0) == keys_of(rule, ONECYCLE0, "hf") == ["scheduler.params.cycle_first_step_size"]
    assert keys_of(rule, onecycle(cycle_first_step_size=3, cycle_second_step_size=-3))
    assert keys_of(rule, onecycle(cycle_first_step_size=0.0, cycle_second_step_size=None))
    for fine in (onecycle(cycle_first_step_size=0, cycle_second_step_size=5), onecycle(cycle_first_step_size=-1),
                 onecycle(), onecycle(cycle_first_step_size="0"), onecycle(cycle_first_step_size=True),
                 ZERO2 | {"scheduler": {"type": "WarmupLR", "params": {"cycle_first_step_size": 0}}}):
        assert not keys_of(rule, fine), fine


def test_pld_needs_theta_and_gamma_when_enabled():
    """engine.py pld_theta / pld_gamma read params["theta"] / ["gamma"] with no default (0.14.4, 0.10.3)."""
    rule = "pld-theta-gamma-required"
    assert keys_of(rule, PLD_ON) == keys_of(rule, PLD_ON, "hf") == ["progressive_layer_drop.theta"]
    theta_only = PLD_ON | {"progressive_layer_drop": {"enabled": True, "theta": 0.5}}
    assert keys_of(rule, theta_only) == ["progressive_layer_drop.gamma"]
    truthy = PLD_ON | {"progressive_layer_drop": {"enabled": "false"}}  # the engine tests its truthiness
    assert keys_of(rule, truthy) == ["progressive_layer_drop.theta"]
    for fine in ({"enabled": False}, {}, {"enabled": True, "theta": 0.5, "gamma": 0.001}, [True]):
        assert not keys_of(rule, PLD_ON | {"progressive_layer_drop": fine}), fine


def test_older_release_rules_are_active_where_their_launch_json_confirms_them(checker):
    """0.14.4 and 0.10.3 divide by a OneCycle cycle of size 0 and read PLD's theta without a default;
    0.19.8 checks OneCycle's halves (scheduler-invalid-args) and has removed progressive_layer_drop."""
    for version in ("0.14.4", "0.10.3"):
        old = Checker(load_snapshot(version))
        assert launch_errors(findings(old, ONECYCLE0)) == {
            "scheduler.params.cycle_first_step_size": "scheduler-onecycle-zero-cycle"}, version
        assert launch_errors(findings(old, PLD_ON, hf=True)) == {
            "progressive_layer_drop.theta": "pld-theta-gamma-required"}, version
    active = set(catalogue.confirmed(catalogue.load_launch(VERSION)))
    assert not {"scheduler-onecycle-zero-cycle", "pld-theta-gamma-required"} & active
    assert launch_errors(findings(checker, ONECYCLE0)) == {
        "scheduler.params.cycle_first_step_size": "scheduler-invalid-args"}


def test_a_release_without_launch_json_gets_the_note_and_no_launch_errors(tmp_path, monkeypatch):
    # A release extracted without --launch (`dsfields extract`, `dsfields snapshot` alone) has no launch.json:
    # its launch rules stay inactive and check says so. Every committed release has one, so the tree is a copy.
    import shutil

    from dsfields.model.store import repo_generated_dir

    version = "0.14.4"
    shutil.copytree(repo_generated_dir() / version, tmp_path / version,
                    ignore=shutil.ignore_patterns("launch.json"))
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    assert catalogue.load_launch(version) is None
    old = Checker(load_snapshot(version))
    found = findings(old, with_zero(cpu_offload=True), hf=True)
    assert not launch_errors(found)
    assert [f for f in found if NOT_CONFIRMED in f.message and f.severity is Severity.INFO]
    monkeypatch.delenv("DSFIELDS_GENERATED")  # the committed tree, with its launch.json: the rule is active
    assert launch_errors(findings(Checker(load_snapshot(version)), with_zero(cpu_offload=True), hf=True))


@pytest.mark.unit
def test_a_malformed_launch_json_counts_as_absent(tmp_path):
    (tmp_path / "9.9.9").mkdir()
    (tmp_path / "9.9.9" / "launch.json").write_text('{"format_version": 99, "rules": {}}')
    assert catalogue.load_launch("9.9.9", tmp_path) is None
    (tmp_path / "9.9.9" / "launch.json").write_text("{not json")
    assert catalogue.load_launch("9.9.9", tmp_path) is None


# ---------------------------------------------------------------- issue 14 regressions (0.19.8, committed launch.json)


def test_legacy_cpu_offload_under_hf_is_the_client_optimizer_error(checker):
    assert launch_errors(findings(checker, with_zero(cpu_offload=True), hf=True)) == {
        "zero_optimization.cpu_offload": "offload-client-optimizer"}
    plain_code = findings(checker, with_zero(cpu_offload=True), optimizer_from_code=True)
    assert launch_errors(plain_code) == {"zero_optimization.cpu_offload": "offload-client-optimizer"}


def test_offload_optimizer_device_is_swapped_by_accelerate_but_not_by_plain_code(checker):
    config = with_zero(offload_optimizer={"device": "cpu"})
    assert not launch_errors(findings(checker, config, hf=True))  # accelerate: DeepSpeedCPUAdam
    assert launch_errors(findings(checker, config, optimizer_from_code=True)) == {
        "zero_optimization.offload_optimizer.device": "offload-client-optimizer"}
    allowed = config | {"zero_force_ds_cpu_optimizer": False}
    assert not launch_errors(findings(checker, allowed, optimizer_from_code=True))


def test_zero_optimization_true_is_accepted_plain_and_refused_under_hf(checker):
    config = ZERO2 | {"optimizer": ADAMW, "zero_optimization": True}
    plain = findings(checker, config)
    assert not errors(plain)
    assert [f.rule for f in plain if f.path == "zero_optimization"] == ["zero-optimization-bool-accepted"]
    assert launch_errors(findings(checker, config, hf=True)) == {"zero_optimization": "hf-zero-optimization-object"}


def test_stage_2_without_an_optimizer_depends_on_who_passes_one(checker):
    assert launch_errors(findings(checker, ZERO2)) == {"zero_optimization.stage": "zero-requires-optimizer"}
    assert not launch_errors(findings(checker, ZERO2, optimizer_from_code=True))
    assert not launch_errors(findings(checker, ZERO2, hf=True))  # the Trainer passes its AdamW
    assert not launch_errors(findings(checker, with_zero(stage=3)))


def test_untested_optimizer_with_zero(checker):
    sgd = ZERO2 | {"optimizer": {"type": "SGD", "params": {"lr": 0.1}}}
    assert launch_errors(findings(checker, sgd)) == {"optimizer.type": "untested-zero-optimizer"}
    assert launch_errors(findings(checker, sgd, hf=True)) == {"optimizer.type": "untested-zero-optimizer"}
    assert not launch_errors(findings(checker, sgd | {"zero_allow_untested_optimizer": True}))
    assert not launch_errors(findings(checker, {**sgd, "zero_optimization": {"stage": 0}}))


def test_missing_zero_section_and_unfilled_auto_under_hf(checker):
    no_zero = {"train_micro_batch_size_per_gpu": 1, "optimizer": ADAMW}
    assert launch_errors(findings(checker, no_zero, hf=True)) == {"zero_optimization": "hf-zero-section-required"}
    assert not launch_errors(findings(checker, no_zero))
    assert launch_errors(findings(checker, with_zero(sub_group_size="auto"), hf=True)) == {
        "zero_optimization.sub_group_size": "hf-unfilled-auto"}
    legacy_bf16 = ZERO2 | {"bfloat16": {"enabled": "auto"}}  # 002: DeepSpeed keeps it, accelerate refuses
    assert launch_errors(findings(checker, legacy_bf16, hf=True)) == {"bfloat16.enabled": "hf-unfilled-auto"}


def test_scheduler_steps_batch_size_hpz_lamb_param_dtype(checker):
    warm0 = ZERO2 | {"optimizer": ADAMW, "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 0}}}
    assert launch_errors(findings(checker, warm0)) == {"scheduler.params.warmup_num_steps": "scheduler-invalid-args"}
    no_batch = {"optimizer": ADAMW, "zero_optimization": {"stage": 2}}
    for hf in (False, True):
        found = findings(checker, no_batch, hf=hf)
        assert launch_errors(found) == {"train_micro_batch_size_per_gpu": "batch-size-required"}
        # One cause, one error: the static batch-size rule's own "Either ... or ..." gives way to the launch's.
        assert [f.rule for f in found if f.severity is Severity.ERROR] == ["batch-size-required"]
    hpz = ZERO2 | {"zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8}}
    assert launch_errors(findings(checker, hpz)) == {
        "zero_optimization.zero_hpz_partition_size": "zero3-hpz-requires-optimizer"}
    lamb = {"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "Lamb", "params": {"lr": 1e-3}},
            "fp16": {"enabled": True, "loss_scale": 128}}
    assert launch_errors(findings(checker, lamb)) == {"fp16.loss_scale": "lamb-dynamic-loss-scale"}
    dtype = ZERO2 | {"optimizer": ADAMW, "data_types": {"param_dtype": "bf16"}}
    assert launch_errors(findings(checker, dtype)) == {"data_types.param_dtype": "param-dtype-precision"}
    assert not launch_errors(findings(checker, dtype | {"bf16": {"enabled": True}}))


def test_hf_substitute_fills_betas_with_the_trainers_values_not_one(checker):
    data = {"optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto"}}}
    params = hf_substitute(data, checker)["optimizer"]["params"]
    assert params == {"lr": 5e-5, "betas": [0.9, 0.999], "eps": 1e-8}


def test_cli_optimizer_from_code(tmp_path, capsys):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(ZERO2))
    assert main(["check", "--version", VERSION, str(path)]) == 1
    assert "zero-requires-optimizer" in capsys.readouterr().out
    assert main(["check", "--version", VERSION, "--optimizer-from-code", str(path)]) == 0


# ---------------------------------------------------------------- check --launch on a fake worker


class FakeClient:
    def __init__(self, *verdicts: SimpleNamespace) -> None:
        self.verdicts = list(verdicts)
        self.calls: list[tuple[Any, ...]] = []

    def launch(self, config: Any, style: str, code: bool, timeout: float = 0, assume_fp16: bool = False) -> Any:
        self.calls.append((style, code, assume_fp16))
        return self.verdicts.pop(0)


def verdict(outcome: str, **fields: Any) -> SimpleNamespace:
    base = {"exc_type": None, "message": None, "key": None, "reason": None, "site": None, "raised_by": None}
    return SimpleNamespace(outcome=outcome, **(base | fields))


def test_launch_findings_config_error_on_its_key_machine_error_as_not_checked():
    config = parse(json.dumps(ZERO2), "<t>", "deepspeed")
    bad = launch_findings(VERSION, config, Options(), FakeClient(verdict(
        "config_error", exc_type="AssertionError", message="zero stage 2 requires an optimizer",
        key="zero_optimization.stage", site="deepspeed/runtime/engine.py:2659", raised_by="deepspeed")))
    assert [(f.path, f.severity) for f in bad] == [("zero_optimization.stage", Severity.ERROR)]
    assert "requires an optimizer" in bad[0].message and "engine.py:2659" in bad[0].message
    machine = launch_findings(VERSION, config, Options(hf=True), FakeClient(verdict(
        "machine_error", exc_type="ImportError", message="libaio", reason="async-io")))
    assert machine[0].severity is Severity.INFO and "not checked on this machine" in machine[0].message
    fp16 = FakeClient(verdict("machine_error", reason="fp16-on-cpu", message="Type fp16 is not supported"),
                      verdict("launched"))
    assumed = launch_findings(VERSION, config, Options(optimizer_from_code=True), fp16)
    assert fp16.calls == [("plain", True, False), ("plain", True, True)]
    assert assumed[0].severity is Severity.INFO and "fp16 assumed" in assumed[0].message


def test_launch_with_another_installed_version_says_so_in_one_line(tmp_path, capsys):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(ZERO2 | {"optimizer": ADAMW}))
    started: list[int] = []
    from dsfields.check import check_command as command

    args = SimpleNamespace(files=[path], version="0.14.4", format="text", hf=False, world_size=None, strict=False,
                           runtime=False, optimizer_from_code=False, launch=True)
    command.run(args, launcher=lambda: started.append(1))
    err = capsys.readouterr().err
    assert not started and err.count("\n") == 1 and "--launch skipped" in err and "0.14.4" in err
