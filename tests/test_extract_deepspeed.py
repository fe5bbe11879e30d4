"""The extractor against the real installed DeepSpeed: the committed snapshot is true and current."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import pytest
from conftest import REPO, requires_deepspeed

from dsfields.model.store import dumps

pytestmark = [requires_deepspeed, pytest.mark.deepspeed]


@pytest.fixture(scope="module")
def fresh() -> dict:
    import contextlib
    import io

    from dsfields.extract.build import extract_installed, start_launch

    launch = start_launch()  # the committed snapshot is made with `dsfields extract --launch`
    with contextlib.redirect_stdout(io.StringIO()):
        return extract_installed(launch=launch)


@pytest.fixture(scope="module")
def committed(fresh) -> dict:
    path = REPO / "generated" / fresh["deepspeed_version"] / "fields.json"
    assert path.is_file(), f"no committed snapshot for the installed DeepSpeed {fresh['deepspeed_version']}"
    return json.loads(path.read_text())


def test_committed_snapshot_equals_a_fresh_extraction(fresh, committed):
    # Drift guard: re-extraction of the same DeepSpeed is byte-identical to what is committed.
    assert dumps(fresh) == dumps(committed)


def test_snapshot_matches_its_documented_schema(committed):
    import jsonschema

    schema = json.loads((REPO / "extractor" / "dsfields" / "snapshot.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(committed, schema)


def test_pydantic_fields_agree_with_deepspeeds_own_models(committed):
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig, ZeroStageEnum

    fields = committed["fields"]
    for name, info in DeepSpeedZeroConfig.model_fields.items():
        record = fields[f"zero_optimization.{info.alias or name}"]
        assert record["python_name"] == name
        if info.default_factory is None and not info.is_required():
            assert record["default"] == (info.default.value if hasattr(info.default, "value") else info.default)
    live = fields["zero_optimization.stage3_max_live_parameters"]
    assert (live["default"], live["python_name"]) == (1_000_000_000, "max_live_parameters")
    assert "parameters resident per GPU" in live["description"]
    lines, start = inspect.getsourcelines(DeepSpeedZeroConfig)
    offset = next(i for i, line in enumerate(lines) if line.lstrip().startswith("max_live_parameters:"))
    assert live["source"] == {"file": "deepspeed/runtime/zero/config.py", "line": start + offset}
    assert committed["sections"]["zero_optimization"]["source"]["line"] == start
    assert committed["enums"]["ZeroStageEnum"]["source"]["line"] == inspect.getsourcelines(ZeroStageEnum)[1]


def test_acceptance_fields(committed):
    f = committed["fields"]
    assert f["train_batch_size"]["default"] is None and f["train_batch_size"]["reader"] == "dict"
    assert f["zero_optimization.offload_optimizer.device"]["enum"] == "OffloadDeviceEnum"
    assert f["zero_optimization.cpu_offload"]["deprecated"]["new_param"] == "offload_optimizer"
    assert f["zero_optimization.overlap_comm"]["effective_default"] == {"0": False, "1": False, "2": False, "3": True}
    for path in (
        "activation_checkpointing.partition_activations",
        "aio.block_size",
        "fp16.loss_scale_window",
        "bf16.enabled",
        "flops_profiler.module_depth",
        "checkpoint.tag_validation",
        "tensorboard.output_path",
        "compile.deepcompile",
    ):
        assert path in f, path
    assert "Nebula" in committed["removed"]["nebula"]["message"]
    assert "nebula" not in f


def test_dict_defaults_are_the_ones_deepspeed_passes(committed):
    from deepspeed.runtime import constants
    from deepspeed.runtime.swap_tensor import constants as aio_constants

    f = committed["fields"]
    assert f["gradient_clipping"]["default"] == constants.GRADIENT_CLIPPING_DEFAULT
    assert f["steps_per_print"]["default"] == constants.STEPS_PER_PRINT_DEFAULT
    assert f["aio.block_size"]["default"] == aio_constants.AIO_BLOCK_SIZE_DEFAULT
    assert f["aio.block_size"]["constant"]["name"] == "AIO_BLOCK_SIZE"


def test_differential_report_is_current(committed):
    # (a) explicit default == absent, (b) another value changes the parsed state, for every
    # field; the fields where either cannot hold are committed with their reasons.
    import contextlib
    import io

    from deepspeed.runtime.config import DeepSpeedConfig

    from dsfields.extract.verify import verify

    with contextlib.redirect_stdout(io.StringIO()):
        report = verify(committed, DeepSpeedConfig)
    stored = json.loads((REPO / "generated" / committed["deepspeed_version"] / "verification.json").read_text())
    assert report == stored
    assert report["checked"] > 250
    live_required = ["zero_optimization.stage3_max_live_parameters", "aio.block_size", "fp16.loss_scale_window"]
    assert not [p for p in live_required if p in report["not_live"]]
    # The exceptions stay exceptions: most fields pass both checks.
    assert len(report["not_live"]) < report["checked"] / 5


def test_extract_without_deepspeed_exits_2_and_writes_nothing(monkeypatch, tmp_path, capsys):
    from dsfields.cli import main

    for name in [m for m in sys.modules if m == "deepspeed" or m.startswith("deepspeed.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "deepspeed", None)
    assert main(["extract", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot import DeepSpeed" in err[0]
    assert list(Path(tmp_path).iterdir()) == []


def test_extract_command_writes_atomically_and_summarises(tmp_path, capsys):
    from dsfields.cli import main

    assert main(["extract", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fields in" in out
    written = list(tmp_path.rglob("*"))
    assert not [p for p in written if p.name.endswith(".tmp")]
    assert (tmp_path / json.loads(next(tmp_path.rglob("fields.json")).read_text())["deepspeed_version"]).is_dir()
