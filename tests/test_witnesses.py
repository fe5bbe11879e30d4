"""Issue 15: the witnesses reconciled (static + trace + conditional exploration + value probes).

Fixture-package tests (``tests/fixtures/staticds``, runnable: it has a ``DeepSpeedConfig``) pin each
mechanism in milliseconds; the ``deepspeed`` tests pin the real 0.19.8 and the committed snapshots.
Older releases: ``PYTHONPATH=extractor python -m pytest tests/test_witnesses.py -k differential
--release V`` is not wired; use ``dsfields snapshot V --out /tmp/x`` and
``python tests/test_witnesses.py V`` (runs the probe differential inside the release's runtime).
"""

from __future__ import annotations

import copy
import re
import sys

import pytest
from conftest import FIXTURES, requires_deepspeed

from dsfields.check.engine import Checker, check_text
from dsfields.check.findings import Options, Severity
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own


@pytest.fixture(scope="module")
def witnessed() -> dict:
    return _extract_staticds()


def test_conditional_reads_get_trace_evidence_through_exploration(witnessed):
    window = witnessed["fields"]["fp16.loss_scale_window"]
    assert {"static", "trace"} <= set(window["witnesses"])
    assert window["default"] == 1000 and window["condition"] == "get_fp16_enabled(param_dict)"
    assert window["conditions"] == [{"op": "truthy", "path": "fp16.enabled", "value": None}]
    assert "probe" in witnessed["fields"]["allgather_size"]["witnesses"]


def test_literal_default_dict_keys_are_static_fields(witnessed):
    stages = witnessed["fields"]["pipeline.stages"]
    assert stages["witnesses"] == ["static"] and stages["default"] == "auto" and stages["reader"] == "dict"
    assert witnessed["sections"]["pipeline"]["unknown_keys"] == "passed"


def test_passed_on_whole_dict_names_its_receiver(witnessed):
    pld = witnessed["sections"]["progressive_layer_drop"]
    assert pld["unknown_keys"] == "passed" and pld["passed_to"]
    assert "progressive_layer_drop.theta" in witnessed["fields"]


def test_wildcard_map_fields_are_patterns(witnessed):
    bits = witnessed["fields"]["compression_training.weight_quantization.different_groups.*.params.start_bits"]
    assert bits["pattern"] is True
    assert witnessed["sections"]["compression_training.weight_quantization.different_groups.*"]["pattern"] is True


def test_choices_confirmed_with_normalisation(witnessed):
    tag = witnessed["fields"]["checkpoint.tag_validation"]
    assert tag["choices"] == ["WARN", "FAIL"] and tag["choices_normalized"] == "upper"


def test_value_probes_and_json_types_from_what_was_accepted(witnessed):
    mode = witnessed["fields"]["communication_data_type"]
    assert mode["probes"]['"false"']["ok"] is False
    assert "string" in mode["json_types"]
    assert set(mode["probes"]) == {"-1", "0", "1", "true", '"1"', '"false"', "1.5", "null", "[]", "{}", '"auto"'}


def test_legacy_shape_is_an_alternative_or_accepted(witnessed):
    zero = witnessed["fields"]["zero_optimization"]
    assert zero["alternatives"] and zero["alternatives"][0]["json_type"] == "boolean"


def test_reads_under_an_unresolved_key_are_no_top_level_fields(witnessed):
    assert not [p for p in witnessed["fields"] if p.split(".")[0] == "eigenvalue"]
    assert "eigenvalue" not in witnessed["sections"]
    unplaced = witnessed["coverage"]["witnesses"]["unplaced"]
    assert any("-> eigenvalue.enabled [read under a key the scan cannot resolve]" in u for u in unplaced)


def test_launch_witness_is_recorded_per_field_and_reported(witnessed):
    sys.path.insert(0, str(FIXTURES))
    try:
        import staticds.runtime.config as config_module

        from dsfields.extract.build import extract

        # what dsfields.extract.launch_witness.launch_witness returns: the paths deepspeed.initialize read
        launch = {"paths": ["fp16", "fp16.enabled", "pipeline.stages", "launch_only_key"], "configs": 2,
                  "outcomes": {"config_error": 1, "launched": 1}}
        snap = extract(config_module, version="0.0.9", package="staticds", launch=launch)
    finally:
        sys.path.remove(str(FIXTURES))
    fields = snap["fields"]
    assert fields["fp16.enabled"]["witnesses"] == ["launch", "static", "trace"]
    assert fields["pipeline.stages"]["witnesses"] == ["launch", "static"]
    assert "launch" not in fields["fp16.loss_scale_window"]["witnesses"]
    report = snap["coverage"]["witnesses"]
    assert report["found"]["launch"] == 3 and report["only"]["launch"] == 0
    assert "pipeline.stages" not in report["only_static"]
    assert report["launch"]["only"] == ["launch_only_key"] and "launch_only_key" not in fields
    assert report["launch"]["configs"] == 2 and report["launch"]["paths"] == 4
    # read by DeepSpeedConfig on the bare base config, in a section the launch entered, yet not by the launch
    not_read = report["launch"]["not_read"]
    assert "fp16.enabled" not in not_read and "gradient_allreduce_op" in not_read
    # without the launch witness, the snapshot is the same but for the launch marks
    plain = {p: [w for w in f["witnesses"] if w != "launch"] for p, f in fields.items()}
    assert plain == {p: f["witnesses"] for p, f in witnessed["fields"].items()}


def test_witness_report_lists_everything(witnessed):
    report = witnessed["coverage"]["witnesses"]
    assert report["found"]["static"] >= report["only"]["static"] > 0
    assert "pipeline.stages" in report["only_static"]
    assert report["launch"].startswith("not run")
    assert report["unplaced"], "unplaced static reads are listed, never dropped"


# ---------------------------------------------------------------- committed snapshots (no DeepSpeed needed)


def _check(version: str, config: str) -> list:
    return check_text(config, Checker(load_snapshot(version)), Options()).findings


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity == Severity.ERROR]


@pytest.mark.data
@pytest.mark.parametrize("version", ["0.10.3", "0.14.4"])
def test_fp16_loss_scale_keys_are_not_ignored_in_old_releases(version):
    findings = _check(version, '{"train_batch_size": 1, "fp16": {"enabled": true, "loss_scale_window": 500, '
                               '"hysteresis": 2, "min_loss_scale": 1, "consecutive_hysteresis": false}}')
    assert not [f for f in findings if "ignored" in f.message], findings


@pytest.mark.data
def test_passed_sections_never_advise_deleting_keys():
    findings = _check("0.14.4", '{"train_batch_size": 1, "progressive_layer_drop": '
                                '{"enabled": true, "theta": 0.5, "gamma": 0.001, "min_difficulty": 1}}')
    assert not _errors(findings)
    assert not [f for f in findings if "remove" in f.fix or "delete" in f.fix], findings


@pytest.mark.data
def test_communication_data_type_choices_come_from_the_release():
    assert not _errors(_check("0.10.3", '{"train_batch_size": 1, "communication_data_type": "bfp16"}'))
    assert _errors(_check("0.10.3", '{"train_batch_size": 1, "communication_data_type": "bf16"}'))
    assert not _errors(_check("0.19.8", '{"train_batch_size": 1, "communication_data_type": "BF16"}'))
    assert _errors(_check("0.19.8", '{"train_batch_size": 1, "communication_data_type": "bfp16"}'))


@pytest.mark.data
def test_validator_rejections_from_probes_on_0_19_8():
    assert _errors(_check("0.19.8", '{"train_batch_size": 1, "fp16": {"loss_scale": -1}}'))
    window = _errors(_check("0.19.8", '{"train_batch_size": 1, "fp16": {"loss_scale_window": true}}'))
    assert window and "coerced" not in window[0].message


@pytest.mark.data
def test_legacy_zero_optimization_true_is_no_error_on_0_19_8():
    # true means ZeRO stage 1, which needs an optimizer at deepspeed.initialize (issue 14's launch rule
    # zero-requires-optimizer): give it one, so only the legacy form itself is judged here.
    config = ('{"train_batch_size": 1, "zero_optimization": true, '
              '"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}')
    assert not _errors(_check("0.19.8", config))


@pytest.mark.data
def test_string_booleans_follow_the_probes():
    assert not _errors(_check("0.19.8", '{"train_batch_size": 1, "fp16": {"enabled": "true"}}'))
    old = _check("0.14.4", '{"train_batch_size": 1, "bfloat16": {"enabled": "auto"}}')
    assert not _errors(old) and [f for f in old if f.severity == Severity.WARNING]


@pytest.mark.data
def test_lookup_resolves_a_concrete_group_name_to_its_pattern_path():
    from dsfields import field_answer
    from dsfields.terminal import Style

    snapshot = load_snapshot("0.14.4")
    concrete = "compression_training.weight_quantization.different_groups.wq1.params.start_bits"
    (match,) = field_answer.find(snapshot, concrete)
    assert match.path == "compression_training.weight_quantization.different_groups.*.params.start_bits"
    assert match.kind == "field" and match.concrete == concrete
    text = " ".join(" ".join(field_answer.format_field(snapshot, match, 200, Style(False))).split())
    assert f"{concrete} resolves to the pattern path {match.path}" in text and '"wq1" is a user-named group' in text
    assert field_answer.match_json(snapshot, match)["concrete_path"] == concrete
    (section,) = field_answer.find(snapshot, "compression_training.weight_quantization.different_groups.MyGroup.params")
    assert section.kind == "section" and section.path.endswith("different_groups.*.params")
    assert field_answer.find(snapshot, "compression_training.weight_quantization.nope.wq1.params") == []


@pytest.mark.data
def test_sequence_and_data_parallel_size_are_read_by_0_19_8():
    """deepspeed.initialize reads both (the mesh device) before DeepSpeedConfig, which reads
    sequence_parallel_size only once torch.distributed is up: check must not call them ignored."""
    snapshot = load_snapshot("0.19.8")
    for path in ("sequence_parallel_size", "data_parallel_size"):
        assert "static" in snapshot.fields[path].witnesses, path
    # data_parallel_size only where deepspeed.initialize builds the mesh; sequence_parallel_size is also read
    # unconditionally (deepspeed/compile's extract_mesh_size), so it has no condition
    assert "sequence_parallel_size" in snapshot.fields["data_parallel_size"].condition
    assert snapshot.fields["sequence_parallel_size"].raw["source"]["file"]
    findings = _check("0.19.8", '{"train_batch_size": 1, "sequence_parallel_size": 2, "data_parallel_size": 1}')
    assert not [f for f in findings if f.path in ("sequence_parallel_size", "data_parallel_size")], findings


@pytest.mark.data
def test_cross_section_probe_rejections_depend_on_the_rest_of_the_config():
    """fp16_master_weights_and_grads: true is rejected on {"train_batch_size": 1} (it needs ZeRO), not with ZeRO."""
    with_zero = ('{"train_batch_size": 1, "optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 2}, '
                 '"fp16": {"enabled": true, "fp16_master_weights_and_grads": true}}')
    assert not _errors(_check("0.19.8", with_zero))


@pytest.mark.data
def test_the_fraction_probe_judges_integers_only():
    """1.5 stands for a fraction where an integer goes; 0.1 in a number field is the constraints' to judge."""
    # (an optimizer, or stage 2 itself is a launch error: issue 14's zero-requires-optimizer rule)
    # (ZenFlow runs its optimizer on the CPU: without offload_optimizer cpu, deepspeed.initialize refuses it)
    assert not _errors(_check("0.19.8", '{"train_batch_size": 1, "optimizer": {"type": "AdamW"}, '
                                        '"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}, '
                                        '"zenflow": {"topk_ratio": 0.1}}}'))
    assert _errors(_check("0.19.8", '{"train_batch_size": 1, "zero_optimization": {"reduce_bucket_size": 1.5}}'))


# ---------------------------------------------------------------- the real DeepSpeed 0.19.8


def _deepspeed_verdict(config: dict) -> str | None:
    from dsfields.extract.oracle import build_deepspeed_config

    return build_deepspeed_config(config)


def _set(config: dict, path: str, value) -> dict:
    out = copy.deepcopy(config)
    node = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = copy.deepcopy(value)
    return out


@requires_deepspeed
@pytest.mark.deepspeed
def test_probe_verdicts_equal_deepspeedconfig_on_0_19_8():
    """Differential: every stored probe verdict equals a full DeepSpeedConfig build (pydantic probes included)."""
    from dsfields.extract.probes import PROBES

    snapshot = load_snapshot("0.19.8")
    values = dict(PROBES)
    # A key DeepSpeed checks only with its section switched on was probed again that way, and the witness says
    # so ("X: probed again with enabled on: refuses ..."): its verdicts are judged on that config (issue 25).
    switched = dict(re.findall(r"^(\S+): probed again with (\S+) on:", "\n".join(
        snapshot.coverage.get("witnesses", {}).get("requirements", [])), re.M))
    mismatches = []
    for path, record in sorted(snapshot.fields.items()):
        if not record.probes or record.condition:
            continue
        base: dict = {"train_batch_size": 1}
        switch = snapshot.fields.get(f"{record.section}.{switched[path]}") if path in switched else None
        if switch is not None:
            base = _set(base, switch.path, True)
        for requirement in (switch or record).requires:  # re-probed with the keys it requires given (issue 25)
            if requirement["key"] != record.key:
                base = _set(base, f"{record.section}.{requirement['key']}", requirement["satisfied_by"])
        for pid, verdict in record.probes.items():
            error = _deepspeed_verdict(_set(base, path, values[pid]))
            if (error is None) != bool(verdict.get("ok")):
                mismatches.append((path, pid, verdict, error))
    assert mismatches == []


if __name__ == "__main__":  # the differential for another release, run inside its runtime
    print("usage: dsfields snapshot V; then run this test's differential with that release on PYTHONPATH")


def _extract_staticds() -> dict:
    sys.path.insert(0, str(FIXTURES))
    try:
        import staticds.runtime.config as config_module

        from dsfields.extract.build import extract

        return extract(config_module, version="0.0.9", package="staticds")
    finally:
        sys.path.remove(str(FIXTURES))


def test_value_probes_in_a_forked_child_store_the_same_verdicts(monkeypatch):
    """The command line probes in a forked child (the other core); the snapshot must not depend on it."""
    import os
    import pickle
    import threading

    forks = []
    real_fork = os.fork
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # pytest's own threads must not stop the fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    forked = _extract_staticds()
    assert forks, "the probes did not run in a child"
    monkeypatch.setattr(threading, "active_count", lambda: 2)  # another thread alive: probe here
    here = _extract_staticds()
    assert len(forks) == 1
    assert forked == here
    assert forked["coverage"]["witnesses"]["probe_runs"] > 0
    assert any("probes" in record for record in forked["fields"].values())

    def broken_dump(*args, **kwargs):
        raise OSError("the pipe broke")

    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(pickle, "dump", broken_dump)  # the child fails: the parent probes itself
    assert _extract_staticds() == here
    assert len(forks) == 2
