"""The extractor on a miniature DeepSpeed: every pattern it must understand, in milliseconds."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

from dsfields.model.store import dumps

pytestmark = pytest.mark.unit


def test_version_is_stripped(fake_snapshot):
    assert fake_snapshot["deepspeed_version"] == "0.0.1"


def test_dict_reader_default_is_the_argument_deepspeed_passes(fake_snapshot):
    clip = fake_snapshot["fields"]["gradient_clipping"]
    assert clip["reader"] == "dict"
    assert clip["default"] == 1.0
    assert clip["constant"]["name"] == "GRADIENT_CLIPPING"
    assert clip["constant"]["file"].endswith("fakeds/runtime/constants.py")
    assert clip["description"] == "Clip gradients to this norm."
    assert clip["source"]["function"] == "__init__"


def test_nested_dict_sections_and_guarded_and_conditional_reads(fake_snapshot):
    fields, sections = fake_snapshot["fields"], fake_snapshot["sections"]
    assert fields["aio.block_size"]["default"] == 1048576
    # `if not sampling: return` only reads a non-empty section; num_epochs only when enabled.
    assert sections["data.sampling"]["kind"] == "dict"
    assert fields["data.sampling.enabled"]["default"] is False
    assert fields["data.sampling.num_epochs"]["default"] == 1000
    assert sections["data"]["unknown_keys"] == "ignored"


def test_pydantic_v2_alias_pp_int_and_symbolic_default(fake_snapshot):
    live = fake_snapshot["fields"]["zero_optimization.stage3_max_live_parameters"]
    assert (live["python_name"], live["default"], live["constraints"]) == ("max_live_parameters", 10**9, {"ge": 0})
    assert live["description"].startswith("The maximum number of parameters")
    assert live["source"]["line"] == _line_of("zero_config.py", "max_live_parameters: int")
    persist = fake_snapshot["fields"]["zero_optimization.stage3_model_persistence_threshold"]
    assert persist["default_repr"] == "sys.maxsize"
    assert fake_snapshot["fields"]["zero_optimization.reduce_bucket_size"]["constraints"] == {"gt": 0}


def test_deprecated_extra_with_lambda(fake_snapshot):
    dep = fake_snapshot["fields"]["zero_optimization.cpu_offload"]["deprecated"]
    assert dep == {"new_param": "offload_optimizer", "converts_value": True}


def test_nested_optional_model_and_enum(fake_snapshot):
    device = fake_snapshot["fields"]["zero_optimization.offload_optimizer.device"]
    assert device["enum"] == "OffloadDeviceEnum" and device["choices"] == ["none", "cpu"]
    assert fake_snapshot["sections"]["zero_optimization.offload_optimizer"]["strict"] is True
    stage = fake_snapshot["enums"]["ZeroStageEnum"]
    assert [m["name"] for m in stage["members"]] == ["disabled", "weights", "max_stage"]
    assert stage["source"]["line"] == _line_of("zero_config.py", "class ZeroStageEnum")


def test_effective_default_per_stage(fake_snapshot):
    overlap = fake_snapshot["fields"]["zero_optimization.overlap_comm"]
    assert overlap["default"] is None
    assert overlap["effective_default"] == {"0": False, "3": True}


def test_pydantic_v1_model(fake_snapshot):
    fields = fake_snapshot["fields"]
    bucket = fields["legacy.legacy_bucket"]
    assert (bucket["python_name"], bucket["default"], bucket["constraints"]) == ("bucket", 16, {"ge": 1})
    assert bucket["description"] == "Bucket size, in MB."
    assert fields["legacy.old_flag"]["deprecated"]["new_param"] == "bucket"
    assert fake_snapshot["sections"]["legacy"]["strict"] is True


def test_auto_behaviour(fake_snapshot):
    fields = fake_snapshot["fields"]
    assert fields["zero_optimization.stage3_max_live_parameters"]["auto"]["becomes"] == "default"
    assert fields["steps_per_print"]["auto"] == {"accepted": True, "becomes": "kept", "error": None}


def test_removed_keys_are_placed_by_deepspeeds_own_rejection(fake_snapshot):
    removed = fake_snapshot["removed"]
    assert removed["nebula"]["message"] == "Nebula has been removed."
    assert removed["zero_optimization.mics_shard_size"]["section"] == "zero_optimization"


def test_coverage_lists_what_it_could_not_place(fake_snapshot):
    cov = fake_snapshot["coverage"]
    assert "fakeds.runtime.legacy_config.UnusedModel" in cov["models_not_placed"]
    assert any("ORPHAN_DEFAULT" in item for item in cov["defaults_not_attributed"])
    assert not any("GRADIENT_CLIPPING" in item for item in cov["defaults_not_attributed"])


def test_extraction_is_byte_stable(fake_snapshot):
    import fakeds.runtime.config as config_module

    from dsfields.extract.build import extract

    again = extract(config_module, version="0.0.1", package="fakeds")
    assert dumps(again) == dumps(fake_snapshot)
    json.loads(dumps(again))


def _line_of(filename: str, needle: str) -> int:
    lines = (FIXTURES / "fakeds" / "runtime" / filename).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def test_what_deepspeed_holds_when_a_key_is_absent(fake_snapshot):
    """Measured on the parsed object graph, not the declared default (issue 13)."""
    fields = fake_snapshot["fields"]
    assert fields["legacy"]["when_absent"] == {"parsed": "none"}  # `LegacyModel(...) if "legacy" in d else None`
    assert fields["zero_optimization.offload_optimizer"]["when_absent"] == {"parsed": "none"}
    assert fields["aio"]["when_absent"] == {"parsed": "defaults"}
    assert fields["data.sampling"]["when_absent"] == {"parsed": "defaults"}
    assert fake_snapshot["sections"]["pipe"]["passthrough"] is True
    assert fields["pipe"]["default"] is None
    assert fields["pipe"]["when_absent"] == {"parsed": "value", "value": {"seed_layers": False, "stages": "auto"}}
    fusion = fields["optim.fusion"]
    assert fusion["read_without_default"] and fusion["default"] is None
    assert fusion["when_absent"] == {"parsed": "value", "value": False}  # the else branch
    assert fields["experts.w3"]["when_absent"] == {"parsed": "sentinel"}  # a private object(): "not given"
    assert "when_absent" not in fields["gradient_clipping"]  # the default says it all


def test_a_key_another_key_sets(fake_snapshot):
    fields = fake_snapshot["fields"]
    assert fields["wall_clock"]["forced_by"] == [{"path": "profiler.enabled", "value": True, "when": True}]
    assert "forced_by" not in fields["profiler.enabled"]
    assert "forced_by" not in fields["data.sampling.enabled"]
