"""The static witness (extract/static): every ds_config read in a package's source, without running it.

Unit tests run on tests/fixtures/staticds, a miniature DeepSpeed holding each pattern the scanner
must understand; the `deepspeed`-marked tests check concrete finds on the installed release and
compare them with its committed snapshot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, requires_deepspeed

from dsfields.extract.static import MISSING, StaticReport, Test, static_report
from dsfields.extract.static.compare import MODEL, compare

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

PKG = FIXTURES / "staticds"


@pytest.fixture(scope="module")
def report() -> StaticReport:
    return static_report(PKG)


def _one(report: StaticReport, path: str, op: str | None = None):
    reads = [r for r in report.reads_of(path) if op is None or r.op == op]
    assert reads, f"no {op or ''} read of {path}: {sorted(report.paths())}"
    return reads[0]


def test_version_and_locations(report):
    assert report.version == "0.0.2"
    read = _one(report, "gradient_allreduce_op")
    assert (read.file, read.function) == ("staticds/runtime/config.py", "get_gradient_allreduce_op")
    assert read.default == "mean" and read.op == "get_scalar_param"


def test_constants_resolved_through_star_imports_concatenation_and_class_namespaces(report):
    assert _one(report, "fp16.loss_scale_window", "get_scalar_param").default == 1000  # LOSS + "scale_window"
    tag = _one(report, "checkpoint.tag_validation")  # TAG_PREFIX from ../constants.py via a star import
    assert tag.default == "WARN"  # ValidationMode.WARN


def test_conditional_reads_carry_their_condition(report):
    window = _one(report, "fp16.loss_scale_window", "get_scalar_param")
    assert window.conditions[0].text == "get_fp16_enabled(param_dict)"
    assert window.conditions[0].tests == (Test("fp16.enabled", "truthy"),)
    assert _one(report, "fp16.hysteresis", "in").default is MISSING


def test_mode_dependent_reads_have_the_mode_test(report):
    local = _one(report, "sparse_attention.num_local_blocks")
    tests = [t for c in local.conditions for t in c.tests]
    assert Test("sparse_attention.mode", "==", "fixed") in tests
    assert "mode == 'fixed'" in local.condition  # the constant SPARSE_FIXED_MODE spelled as its value
    blocks = report.reads_of("sparse_attention.block")
    assert len({r.function for r in blocks}) == 2  # read under each mode, each with its own condition


def test_literal_default_dict_merge_and_defaults_loop(report):
    stages = _one(report, "pipeline.stages")
    assert (stages.op, stages.default) == ("merged_default", "auto")
    assert {"pipeline.partition", "pipeline.seed_layers"} <= report.paths()
    assert any(p.path == "pipeline" and p.kind == "merge" for p in report.passed_whole)
    assert _one(report, "aio.queue_depth").default == 8  # for key, default in AIO_DEFAULT_DICT.items()


def test_whole_passed_section_read_later_through_an_attribute(report):
    theta = _one(report, "progressive_layer_drop.theta")
    assert (theta.function, theta.op) == ("DeepSpeedEngine.pld_theta", "getitem")
    assert _one(report, "progressive_layer_drop.gamma").function == "DeepSpeedEngine.__init__"
    passed = [p for p in report.passed_whole if p.path == "progressive_layer_drop"]
    assert [(p.kind, p.to) for p in passed] == [("attribute", "DeepSpeedConfig.pld_params")]


def test_callee_named_like_the_root_reads_under_the_callers_path(report):
    assert "min_gpus" not in report.paths() and "enabled" not in report.paths()
    min_gpus = _one(report, "elasticity.min_gpus")
    assert min_gpus.function == "ElasticityConfig.__init__"
    tests = [t for c in min_gpus.conditions for t in c.tests]
    assert tests == [Test("elasticity", "present"), Test("elasticity.enabled", "truthy")]


def test_wildcard_maps_of_user_named_groups(report):
    paths = report.paths()
    base = "compression_training.weight_quantization.different_groups.*"
    assert {f"{base}.params", f"{base}.params.start_bits", f"{base}.modules"} <= paths
    assert _one(report, f"{base}.modules").default == "*"
    assert f"{base}.params.start_bits" not in report.paths(wildcards=False)


def test_legacy_form_and_model_passed_whole(report):
    legacy = _one(report, "allgather_size")
    assert legacy.default_repr == "sys.maxsize"
    assert Test("zero_optimization", "isinstance", "bool") in [t for c in legacy.conditions for t in c.tests]
    models = [p for p in report.passed_whole if p.kind == "model"]
    assert [(p.path, p.to) for p in models] == [("zero_optimization", "staticds.runtime.zero_config.ZeroModel")]


def test_choices_from_comparisons_and_membership(report):
    by_path = {c.path: c for c in report.choices}
    comm = by_path["communication_data_type"]
    assert (comm.values, comm.how, comm.normalized, comm.raises) == (("fp32", "fp16"), "==", "lower", True)
    op = by_path["gradient_allreduce_op"]
    assert (op.values, op.how, op.constant) == (("mean", "sum"), "in", "GRADIENT_ALLREDUCE_OP_SUPPORTED")
    tag = by_path["checkpoint.tag_validation"]
    assert (tag.values, tag.normalized) == (("WARN", "FAIL"), "upper")
    assert by_path["sparse_attention.mode"].values == ("dense", "fixed")


def test_unplaced_reads_are_listed_with_a_reason(report):
    lost = "read under a key the scan cannot resolve"
    assert [(u.key, u.function, u.reason) for u in report.unplaced] == [
        (None, "get_eigenvalue_config", "key is not a constant (container <root>)"),
        ("eigenvalue", "get_eigenvalue_enabled", lost),
        ("eigenvalue", "get_eigenvalue_enabled", lost),
        ("enabled", "get_eigenvalue_enabled", lost),
        ("eigenvalue", "get_eigenvalue_verbose", lost),
        ("eigenvalue", "get_eigenvalue_verbose", lost),
        ("verbose", "get_eigenvalue_verbose", lost),
        ("loss_scale", "read_unknown", "container not traced to ds_config"),
    ]


def test_reads_under_an_unresolved_key_are_unplaced_not_at_the_root(report):
    # 0.8-0.19.2: `param_dict = param_dict[QUANTIZE_TRAINING]` (a name defined nowhere), then
    # get_eigenvalue_enabled(param_dict), a getter whose parameter is named like the root
    assert not {p for p in report.paths() if p.split(".")[0] == "eigenvalue"}
    lost = [u for u in report.unplaced if u.reason == "read under a key the scan cannot resolve"]
    assert {(u.function, u.key) for u in lost} >= {("get_eigenvalue_enabled", "enabled"),
                                                   ("get_eigenvalue_verbose", "verbose")}
    enabled = next(u for u in lost if u.key == "enabled")
    assert enabled.expr == "param_dict[QUANTIZE_TRAINING] (container <root>) -> eigenvalue.enabled"
    assert any(u.expr == "param_dict[QUANTIZE_TRAINING]" and u.function == "get_eigenvalue_config"
               for u in report.unplaced)
    # the guard's own reads keep their place, and no test on the unknown path is left in a condition
    assert "compression_training.weight_quantization.shared_parameters.enabled" in report.paths()
    assert all("\x00" not in t.path for r in report.reads for c in r.conditions for t in c.tests)


def test_comparison_with_a_snapshot():
    snap = {
        "fields": {
            "fp16": {"reader": "dict"},
            "fp16.enabled": {"reader": "dict"},
            "zero_optimization.stage": {"reader": "pydantic"},
            "never_read": {"reader": "dict"},
        },
        "removed": {"allgather_size": {}},
    }
    cmp = compare(static_report(PKG), snap)
    assert {"fp16", "fp16.enabled"} <= cmp.both
    assert "fp16.loss_scale_window" in cmp.only_static and "pipeline.stages" in cmp.only_static
    assert cmp.removed == {"allgather_size"}
    assert cmp.only_snapshot == {"zero_optimization.stage": MODEL, "never_read": "no read found statically"}


def test_report_json_and_cli(report):
    data = json.loads(report.to_json())
    assert data["counts"]["unplaced"] == 8  # read_unknown, and the eigenvalue block under an unresolved key (7)
    assert any(r["default"] == "MISSING" for r in data["reads"])
    out = subprocess.run(
        [sys.executable, "-m", "dsfields.extract.static", str(PKG)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO / "extractor"), "PATH": ""},
    ).stdout
    assert "unplaced (8):" in out and "read_unknown" in out


# ------------------------------------------------------------------ real DeepSpeed
def _installed() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("deepspeed")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


@pytest.fixture(scope="module")
def real() -> StaticReport:
    return static_report(_installed())


@pytest.mark.deepspeed
@requires_deepspeed
def test_real_pipeline_keys_with_literal_defaults(real):
    defaults = {r.key: r.default for r in real.reads if r.section == "pipeline" and r.op == "merged_default"}
    assert defaults == {
        "stages": "auto",
        "partition": "best",
        "seed_layers": False,
        "activation_checkpoint_interval": 0,
        "pipe_partitioned": True,
        "grad_partitioned": True,
    }


@pytest.mark.deepspeed
@requires_deepspeed
def test_real_choices(real):
    by_path = {(c.path, c.how): c for c in real.choices}
    assert by_path[("communication_data_type", "==")].values == ("fp32", "fp16", "bf16")
    assert by_path[("communication_data_type", "==")].normalized == "lower"
    assert set(by_path[("gradient_allreduce_op", "in")].values) == {"mean", "sum"}
    assert set(by_path[("checkpoint.tag_validation", "in")].values) == {"WARN", "IGNORE", "FAIL"}


@pytest.mark.deepspeed
@requires_deepspeed
def test_real_conditional_and_legacy_reads(real):
    legacy = real.reads_of("allgather_size")
    assert legacy and all(
        Test("zero_optimization", "isinstance", "bool") in [t for c in r.conditions for t in c.tests] for r in legacy
    )
    seq = [r for r in real.reads_of("sequence_parallel_size") if r.function == "DeepSpeedConfig.__init__"]
    assert seq and all(r.conditions for r in seq)  # read only in the "no mpu, no mesh" branch


@pytest.mark.deepspeed
@requires_deepspeed
def test_real_comparison_with_the_committed_snapshot(real):
    from importlib import metadata

    version = metadata.version("deepspeed")
    snap = json.loads((REPO / "generated" / version / "fields.json").read_text())
    cmp = compare(real, snap)
    pipeline = {f"pipeline.{k}" for k in ("stages", "partition", "seed_layers")}
    assert pipeline <= cmp.only_static
    assert "optimizer.params" in cmp.only_static and "sequence_parallel_size" in cmp.only_static
    # every snapshot path the scan misses is a pydantic field (the scan sees the model whole)
    assert set(cmp.only_snapshot.values()) <= {MODEL}
    assert len(cmp.both) >= 170


@pytest.mark.deepspeed
@requires_deepspeed
def test_real_scan_completes_with_nothing_dropped():
    """The whole installed package is scanned (its speed is measured by bench/extract.py, not asserted here)."""
    report = static_report(_installed())
    assert report.reads and report.choices
    assert all(u.reason for u in report.unplaced)


def test_a_dict_the_users_keys_are_copied_into_in_a_loop_reads_them_later(report):
    # 0.8.0-0.16.4: get_curriculum_learning copies the user's keys into `output` in a loop under `if enabled`;
    # the data sampler then iterates output[curriculum_metrics]: each metric's schedule_type is a read
    assert _one(report, "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.*.schedule_type")


def test_a_branch_on_constants_reads_only_the_side_it_takes(report):
    # get_compress_methods: `if LAYER_REDUCTION in method: continue` inside a loop unrolled over the methods
    assert _one(report, "compression_training.quantization.groups")
    assert not report.reads_of("compression_training.layer_reduction.groups")
    assert _one(report, "compression_training.layer_reduction.teacher_layer")


def test_a_counter_changed_in_a_loop_is_no_choice(report):
    # random_ltd_initialize compares the key with a counter that starts at 0: no choice list [0]
    assert _one(report, "data_efficiency.data_routing.layer_num")
    assert not [c for c in report.choices if c.path == "data_efficiency.data_routing.layer_num"]


def test_a_key_only_iterated_is_not_taken_for_a_dict(report):
    # random_ltd_layer_id is a list the engine sorts: iterated, never read by key, so no section (check would
    # otherwise demand an object); curriculum_metrics, whose entries are read by key, is one
    from dsfields.extract.reconcile import dict_paths

    assert report.reads_of("data_efficiency.data_routing.layer_id.*")
    dicts = dict_paths(report)
    assert "data_efficiency.data_routing.layer_id" not in dicts
    assert "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics" in dicts


def test_the_read_documenting_a_key_does_not_depend_on_the_order_the_scan_met_them(report):
    # The scan reaches one line on several paths (a loop that copies the user's keys into a dict, or not), in an
    # order that follows set iteration: the snapshot must not change with it (byte-stable re-extraction).
    import dataclasses

    from dsfields.extract.reconcile import _best_read, _condition_of
    from dsfields.extract.static.read_records import Condition

    read = _one(report, "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.*.schedule_type")
    on = Test("data_efficiency.data_sampling.curriculum_learning.enabled", "truthy")
    once = dataclasses.replace(read, conditions=(Condition("a and b", (on,)),))
    twice = dataclasses.replace(read, conditions=(Condition("b and a", (on, on)),))
    for reads in ([once, twice], [twice, once]):
        assert _condition_of(reads) == _condition_of([once, twice])
        assert _best_read(reads) is once
