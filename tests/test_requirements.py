"""Issue 25: requirements between keys as facts ("enabled: true requires max_tokens"), learned from refusals.

The fixture package (``tests/fixtures/fakeds``: ``batching.enabled`` asserts ``max_tokens``) pins the
mechanism in milliseconds; ``tests/test_requirements_deepspeed.py`` pins the real DeepSpeed 0.19.8.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import FIXTURES

from dsfields.check import Checker, Options, Severity
from dsfields.check.engine import check_text
from dsfields.model.records import Snapshot

pytestmark = pytest.mark.unit


def _line_of(text: str) -> int:
    lines = (FIXTURES / "fakeds" / "runtime" / "config.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture(autouse=True)
def empty_generated(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny hand-made tree: neither the committed snapshots nor their launch records are read."""
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))


def _check(snapshot: Snapshot, data: dict[str, Any]) -> list[Any]:
    report = check_text(json.dumps(data, indent=1), Checker(snapshot), Options())
    assert report.error is None
    return report.findings


def test_a_refusal_naming_another_key_is_a_requirement_not_a_verdict(fake_snapshot):
    enabled = fake_snapshot["fields"]["batching.enabled"]
    [requirement] = enabled["requires"]
    assert requirement["key"] == "max_tokens" and requirement["when"] == "truthy"
    assert "max_tokens must be given" in requirement["message"]
    assert requirement["source"] == {"file": "fakeds/runtime/config.py", "line": _line_of("assert BATCHING_MAX")}
    # Probed again with max_tokens given: true is accepted, so boolean is no longer refused.
    assert enabled["probes"]["true"] == {"ok": True}
    assert "boolean" in enabled["json_types"] or enabled["json_types"] == []
    assert any("batching.enabled" in line for line in fake_snapshot["coverage"]["witnesses"]["requirements"])


def test_a_key_refused_for_its_own_value_gets_no_requirement(fake_snapshot):
    assert not [p for p, f in fake_snapshot["fields"].items() if f.get("requires")
                and p not in ("batching.enabled", "elastic.enabled")]  # the fixture's two requirements


def test_check_reports_the_missing_key_once_and_never_the_flag(fake_snapshot):
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    broken = _check(snapshot, {"train_batch_size": 1, "batching": {"enabled": True}})
    errors = [f for f in broken if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["batching.max_tokens"]
    assert "max_tokens must be given" in errors[0].message and f"config.py:{_line_of('assert BATCHING_MAX')}" in (
        errors[0].message)
    assert errors[0].line == 4  # the line of "enabled", the key that needs it
    fine = _check(snapshot, {"train_batch_size": 1, "batching": {"enabled": True, "max_tokens": 128}})
    assert not [f for f in fine if f.severity is Severity.ERROR]
    off = _check(snapshot, {"train_batch_size": 1, "batching": {"enabled": False}})
    assert not [f for f in off if f.severity is Severity.ERROR]


def test_lookup_shows_the_requirement(fake_snapshot):
    from dsfields.field_answer import requires_text

    record = Snapshot(copy.deepcopy(fake_snapshot)).fields["batching.enabled"]
    assert requires_text(record) == (f'"max_tokens" when set to a true value (fakeds/runtime/config.py:'
                                     f'{_line_of("assert BATCHING_MAX")})')


def test_a_choice_list_in_an_after_validator_becomes_the_fields_choices(fake_snapshot):
    strategy = fake_snapshot["fields"]["zero_optimization.select_strategy"]
    assert strategy["choices"] == ["auto", "step", "epoch"]
    line = next(i for i, text in enumerate((FIXTURES / "fakeds" / "runtime" / "zero_config.py").read_text()
                                           .splitlines(), 1) if "not in [" in text)
    assert f"zero_optimization.select_strategy: ['auto', 'step', 'epoch'] confirmed (fakeds/runtime/zero_config.py:" \
           f"{line}, a validator of ZeroConfig)" in fake_snapshot["coverage"]["witnesses"]["choices"]
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    found = _check(snapshot, {"train_batch_size": 1, "zero_optimization": {"select_strategy": "sometimes"}})
    assert [f.path for f in found if f.severity is Severity.ERROR] == ["zero_optimization.select_strategy"]
    assert not [f for f in _check(snapshot, {"train_batch_size": 1, "zero_optimization": {"select_strategy": "step"}})
                if f.severity is Severity.ERROR]


def test_a_choice_list_in_an_assert_is_confirmed_on_a_config_giving_the_parents_key(fake_snapshot):
    # pruning.shared_parameters.method set alone is refused (KeyError: 'different_groups', a key of the parent):
    # the list is confirmed on a config that gives it, as compression's quantization_type and method are.
    method = fake_snapshot["fields"]["pruning.shared_parameters.method"]
    assert method["choices"] == ["l1", "topk"]
    line = _line_of("assert output[PRUNING_METHOD] in [")
    assert f"pruning.shared_parameters.method: ['l1', 'topk'] confirmed (fakeds/runtime/config.py:{line})" in (
        fake_snapshot["coverage"]["witnesses"]["choices"])
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    bad = _check(snapshot, {"train_batch_size": 1, "pruning": {"shared_parameters": {"method": "l2"},
                                                                "different_groups": {}}})
    assert [f.path for f in bad if f.severity is Severity.ERROR] == ["pruning.shared_parameters.method"]
    good = _check(snapshot, {"train_batch_size": 1, "pruning": {"shared_parameters": {"method": "topk"},
                                                                 "different_groups": {}}})
    assert not [f for f in good if f.severity is Severity.ERROR]


def test_a_requirement_named_beside_a_top_level_key_applies_only_beside_it(fake_snapshot):
    elastic = fake_snapshot["fields"]["elastic.enabled"]
    by_key = {r["key"]: r for r in elastic["requires"]}
    assert set(by_key) == {"max_batch", "ignore_batch_info"}
    assert by_key["ignore_batch_info"]["with"] == ["train_batch_size"] and "with" not in by_key["max_batch"]
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    missing = _check(snapshot, {"train_batch_size": 1, "elastic": {"enabled": True, "ignore_batch_info": True}})
    assert [f.path for f in missing if f.severity is Severity.ERROR] == ["elastic.max_batch"]
    full = {"train_batch_size": 1, "elastic": {"enabled": True, "max_batch": 8, "ignore_batch_info": True}}
    assert not [f for f in _check(snapshot, full) if f.severity is Severity.ERROR]
    # Without train_batch_size the fixture (like DeepSpeed's elasticity) does not ask for ignore_batch_info; the
    # fixture's own assert wants a batch size, so only check's requirement logic is looked at here.
    alone = _check(snapshot, {"elastic": {"enabled": True, "max_batch": 8}})
    assert "elastic.ignore_batch_info" not in [f.path for f in alone if f.severity is Severity.ERROR]


def test_a_bound_checked_only_when_the_section_is_on_is_probed_with_it_on(fake_snapshot):
    # elastic.parallel >= 1 is checked only inside ElasticConfig, built only when enabled: probed alone, the
    # key is never read; probed again with enabled on and its requirements met, 0 and -1 are refused.
    parallel = fake_snapshot["fields"]["elastic.parallel"]
    assert parallel["probes"]["0"]["ok"] is False and parallel["probes"]["-1"]["ok"] is False
    assert "cannot be less than 1" in parallel["probes"]["0"]["error"] and parallel["probes"]["1"] == {"ok": True}
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    base = {"enabled": True, "max_batch": 8, "ignore_batch_info": True}
    zero = _check(snapshot, {"train_batch_size": 1, "elastic": {**base, "parallel": 0}})
    assert [f.path for f in zero if f.severity is Severity.ERROR] == ["elastic.parallel"]
    assert not [f for f in _check(snapshot, {"train_batch_size": 1, "elastic": {**base, "parallel": 2}})
                if f.severity is Severity.ERROR]


def test_a_string_an_after_validator_allows_only_as_auto_is_refused_whatever_the_word(fake_snapshot):
    # `isinstance(v, str) and v != "auto": raise`: the two string probes are refused with one message, "auto"
    # passes; a word no probe stands for ("sometimes") gets the same verdict, an integer none.
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    base = {"train_batch_size": 1}
    bad = _check(snapshot, base | {"zero_optimization": {"select_interval": "sometimes"}})
    errors = [f for f in bad if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["zero_optimization.select_interval"]
    assert 'must be "auto"' in errors[0].message
    for fine in ("auto", 4):
        assert not [f for f in _check(snapshot, base | {"zero_optimization": {"select_interval": fine}})
                    if f.severity is Severity.ERROR]


def test_a_switch_another_keys_value_lifts_records_the_values_it_needs(fake_snapshot):
    # fp16.master_weights: true is refused unless zero_optimization.stage is 3 (the fixture's _do_error_check, read
    # only with fp16 enabled): each of stage's choices is probed with the switch on, and the lifting ones are kept.
    master = fake_snapshot["fields"]["fp16.master_weights"]
    [needed] = master["requires_values"]
    assert needed["path"] == "zero_optimization.stage" and needed["values"] == [3] and needed["when"] == "truthy"
    assert "only supported with ZeRO Stage 3" in needed["message"]
    assert needed["source"] == {"file": "fakeds/runtime/config.py", "line": _line_of('"master_weights is only')}
    assert "fp16.master_weights: true requires zero_optimization.stage in [3] (each of its choices probed)" in (
        fake_snapshot["coverage"]["witnesses"]["requirements"])
    assert [p for p, f in fake_snapshot["fields"].items() if f.get("requires_values")] == ["fp16.master_weights"]


def test_check_applies_the_stage_the_release_names(fake_snapshot):
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    base = {"train_batch_size": 1}
    bad = _check(snapshot, base | {"fp16": {"enabled": True, "master_weights": True}})
    errors = [f for f in bad if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["fp16.master_weights"]
    assert "ZeRO stage 3 (stage is 0)" in errors[0].message and "only supported with ZeRO Stage 3" in errors[0].message
    for fine in ({"fp16": {"enabled": True, "master_weights": True}, "zero_optimization": {"stage": 3}},
                 {"fp16": {"enabled": False, "master_weights": True}}):  # read only with fp16 on, as DeepSpeed does
        assert not [f for f in _check(snapshot, base | fine) if f.severity is Severity.ERROR], fine
    # Another release naming other stages is answered with its own: the fact, not a range kept here.
    other = copy.deepcopy(fake_snapshot)
    other["fields"]["fp16.master_weights"]["requires_values"][0]["values"] = [0, 3]
    assert not [f for f in _check(Snapshot(other), base | {"fp16": {"enabled": True, "master_weights": True}})
                if f.severity is Severity.ERROR]


def test_the_items_of_a_list_are_probed_with_the_section_on(fake_snapshot):
    # elastic.micro_batch_sizes must hold positive integers, checked only with elastic enabled: [] stands for every
    # list among the fixed probes, so [-1] and [0] are probed as items, on the switched-on config.
    micro = fake_snapshot["fields"]["elastic.micro_batch_sizes"]
    assert micro["switched_on"] == "enabled"
    assert set(micro["item_probes"]) == {"-1", "0"}
    assert all(not v["ok"] and "positive integers" in v["error"] for v in micro["item_probes"].values())
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    on = {"enabled": True, "max_batch": 8, "ignore_batch_info": True}
    bad = _check(snapshot, {"train_batch_size": 1, "elastic": {**on, "micro_batch_sizes": [2, 0]}})
    errors = [f for f in bad if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["elastic.micro_batch_sizes"] and "positive integers" in errors[0].message
    assert not [f for f in _check(snapshot, {"train_batch_size": 1, "elastic": {**on, "micro_batch_sizes": [2, 4]}})
                if f.severity is Severity.ERROR]
    off = _check(snapshot, {"train_batch_size": 1, "elastic": {"enabled": False, "micro_batch_sizes": [0]}})
    assert not [f for f in off if f.severity is Severity.ERROR]


def test_every_entry_of_a_user_named_group_must_give_the_keys_its_loop_asserts(fake_snapshot):
    # pruning.different_groups.<name>: the loop indexes "params" unguarded and asserts "dense_ratio" in it; an entry
    # is probed with one refusal lifted at a time, then each key it needed taken out again.
    fields = fake_snapshot["fields"]
    ratio = fields["pruning.different_groups.*.params.dense_ratio"]["required_in_group"]
    assert ratio == {"message": "AssertionError: dense_ratio must be specified for pruning group <name>",
                     "source": {"file": "fakeds/runtime/config.py", "line": _line_of("assert PRUNING_DENSE_RATIO")}}
    params = fields["pruning.different_groups.*.params"]["required_in_group"]
    assert params["message"] == "KeyError: 'params'"
    assert "required_in_group" not in fields["pruning.different_groups.*.modules"]  # read with a default
    assert [p for p, f in fields.items() if f.get("required_in_group")] == [
        "pruning.different_groups.*.params", "pruning.different_groups.*.params.dense_ratio"]
    notes = fake_snapshot["coverage"]["witnesses"]["requirements"]
    assert f"pruning.different_groups.*.params.dense_ratio: every entry must give it (fakeds/runtime/config.py:" \
           f"{_line_of('assert PRUNING_DENSE_RATIO')})" in notes


def test_check_reports_a_group_entry_without_a_required_key_once_on_that_key(fake_snapshot):
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    base = {"train_batch_size": 1}

    def pruning(groups: dict[str, Any]) -> dict[str, Any]:
        return base | {"pruning": {"shared_parameters": {"method": "l1"}, "different_groups": groups}}

    bare = _check(snapshot, pruning({"attn": {"params": {}, "modules": ["*"]}}))
    errors = [f for f in bare if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["pruning.different_groups.attn.params.dense_ratio"]
    assert "dense_ratio must be specified for pruning group attn" in errors[0].message
    assert f"config.py:{_line_of('assert PRUNING_DENSE_RATIO')}" in errors[0].message
    no_params = _check(snapshot, pruning({"attn": {"modules": ["*"]}}))
    assert [f.path for f in no_params if f.severity is Severity.ERROR] == ["pruning.different_groups.attn.params"]
    fine = _check(snapshot, pruning({"attn": {"params": {"dense_ratio": 0.5}}, "mlp": {"params": {"dense_ratio": 1}}}))
    assert not [f for f in fine if f.severity is Severity.ERROR]


def test_a_key_a_present_section_indexes_unguarded_is_required_with_the_section(fake_snapshot):
    # get_pruning reads nothing while "pruning" is absent, then indexes different_groups unguarded: "pruning" written
    # empty is refused naming it (KeyError), and given it is built; no other key of the section is required. The
    # legacy curriculum section is handed on after pop("enabled") without a default: it must give "enabled".
    fields = fake_snapshot["fields"]
    groups = fields["pruning.different_groups"]["required_with_section"]
    assert groups == {"message": "KeyError: 'different_groups'",
                      "source": {"file": "fakeds/runtime/config.py", "line": _line_of("sub_param_dict = param_dict[")}}
    enabled = fields["curriculum.enabled"]["required_with_section"]
    assert enabled == {"message": "KeyError: 'enabled'",
                       "source": {"file": "fakeds/runtime/config.py", "line": _line_of("curriculum_params.pop(")}}
    assert [p for p, f in fields.items() if f.get("required_with_section")] == [
        "curriculum.enabled", "pruning.different_groups"]
    # schedule_offset was probed on a "pruning" without different_groups: every refusal named it, and no verdict
    # on the value; probed again with it given, every value passes (get_pruning reads it unvalidated)
    offset = fields["pruning.shared_parameters.schedule_offset"]["probes"]
    assert offset and all(v["ok"] for v in offset.values())
    assert "pruning.shared_parameters.schedule_offset: probed again with different_groups given: refuses none" in (
        fake_snapshot["coverage"]["witnesses"]["requirements"])
    assert f"pruning.different_groups: required once pruning is given (fakeds/runtime/config.py:" \
           f"{_line_of('sub_param_dict = param_dict[')})" in fake_snapshot["coverage"]["witnesses"]["requirements"]


def test_check_reports_a_present_section_without_its_required_key_once_on_that_key(fake_snapshot):
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    bare = _check(snapshot, {"train_batch_size": 1, "pruning": {"shared_parameters": {"method": "l1"}}})
    errors = [f for f in bare if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["pruning.different_groups"]
    assert '"pruning" is given without "different_groups"' in errors[0].message
    assert "KeyError: 'different_groups'" in errors[0].message and "config.py:" in errors[0].message
    for fine in ({"train_batch_size": 1}, {"train_batch_size": 1, "pruning": {"different_groups": {}}}):
        assert not [f for f in _check(snapshot, fine) if f.severity is Severity.ERROR], fine


def test_a_comparison_between_two_keys_is_learned_from_pairs_of_values(fake_snapshot):
    # `assert offset <= offset_end` (read only with method topk): set alone, every probe of the end is measured
    # against the offset's default; the pairs below, above and equal give the comparison.
    end = fake_snapshot["fields"]["pruning.shared_parameters.schedule_offset_end"]
    message = "AssertionError: Invalid schedule_offset and schedule_offset_end values"
    assert end["compared_with"] == [{"key": "schedule_offset", "op": ">=", "message": message,
                                     "source": {"file": "fakeds/runtime/config.py",
                                                "line": _line_of("assert output[PRUNING_OFFSET] <=")}}]
    assert [p for p, f in fake_snapshot["fields"].items() if f.get("compared_with")] == [
        "pruning.shared_parameters.schedule_offset_end"]


def test_check_applies_a_comparison_where_the_keys_read_condition_holds(fake_snapshot):
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))

    def shared(**keys: Any) -> dict[str, Any]:
        return {"train_batch_size": 1, "pruning": {"shared_parameters": keys, "different_groups": {}}}

    def errors(config: dict[str, Any]) -> list[Any]:
        return [f for f in _check(snapshot, config) if f.severity is Severity.ERROR]

    [before] = errors(shared(method="topk", schedule_offset=10, schedule_offset_end=5))
    assert before.path == "pruning.shared_parameters.schedule_offset_end"
    assert '"schedule_offset_end" 5 must be >= "schedule_offset" (10)' in before.message
    assert "Invalid schedule_offset and schedule_offset_end values" in before.message
    [defaulted] = errors(shared(method="topk", schedule_offset_end=50))  # the offset's default is 100
    assert "(100, its default)" in defaulted.message
    for fine in (shared(method="topk", schedule_offset=5, schedule_offset_end=10),
                 shared(method="topk", schedule_offset_end=500),  # refused as a probe (1 < 100): not a verdict
                 shared(method="topk", schedule_offset=500),  # the end defaults to the offset
                 shared(method="l1", schedule_offset=10, schedule_offset_end=5)):  # not read unless topk
        assert not errors(fine), fine


def test_a_choice_list_checked_when_a_class_is_built_is_confirmed_by_building_it(fake_snapshot):
    # curriculum.schedule_type: an if/elif chain ending in raise, in the Scheduler the engine builds from the
    # section DeepSpeedConfig keeps whole; DeepSpeedConfig accepts any word, building the Scheduler does not.
    record = fake_snapshot["fields"]["curriculum.schedule_type"]
    line = next(i for i, text in enumerate((FIXTURES / "fakeds" / "runtime" / "scheduler.py").read_text()
                                           .splitlines(), 1) if "== CURRICULUM_TYPE_LINEAR" in text)
    assert record["choices"] == ["fixed_linear", "custom"]
    assert record["choices_source"] == {"built": "Scheduler", "file": "fakeds/runtime/scheduler.py",
                                        "function": "Scheduler.__init__", "line": line,
                                        "message": "RuntimeError: Unsupported curriculum schedule type"}
    assert f"curriculum.schedule_type: ['fixed_linear', 'custom'] confirmed by building Scheduler " \
           f"(fakeds/runtime/scheduler.py:{line})" in fake_snapshot["coverage"]["witnesses"]["choices"]
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    on = {"enabled": True, "min_difficulty": 1}
    bad = _check(snapshot, {"train_batch_size": 1, "curriculum": {**on, "schedule_type": "fixed_lin"}})
    errors = [f for f in bad if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["curriculum.schedule_type"]
    assert "when it builds Scheduler: RuntimeError: Unsupported curriculum schedule type" in errors[0].message
    assert 'did you mean "fixed_linear"' in errors[0].fix
    assert not [f for f in _check(snapshot, {"train_batch_size": 1, "curriculum": {**on, "schedule_type": "custom"}})
                if f.severity is Severity.ERROR]


def test_lookup_shows_group_keys_comparisons_and_where_built_choices_are_checked(fake_snapshot):
    from dsfields.field_answer import checked_by_text, requires_text

    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    ratio = requires_text(snapshot.fields["pruning.different_groups.*.params.dense_ratio"])
    assert ratio == ("this key, in every entry of the user-named group (fakeds/runtime/config.py:"
                     f"{_line_of('assert PRUNING_DENSE_RATIO')})")
    end = requires_text(snapshot.fields["pruning.shared_parameters.schedule_offset_end"])
    line = _line_of("assert output[PRUNING_OFFSET] <=")
    assert end == f'a value >= "schedule_offset" (fakeds/runtime/config.py:{line})'
    built = checked_by_text(snapshot.fields["curriculum.schedule_type"])
    assert built is not None and built.startswith("the allowed values, when DeepSpeed builds Scheduler (")
