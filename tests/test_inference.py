"""``--inference`` of every consumer, on tiny hand-made inference documents (issue 29).

The documents imitate ``generated/<version>/inference.json`` (``document: "inference"``, fields keyed by
attribute name, pydantic aliases beside them); a tiny training snapshot sits beside them so that a plain
``lookup`` can say that a key is (also) an inference key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsfields.cli import main
from dsfields.model.store import dumps

pytestmark = pytest.mark.unit

OLD, NEW = "9.9.8", "9.9.9"


def _field(path: str, type_: str, json_types: list[str], default, **extra) -> dict:
    section, _, key = path.rpartition(".")
    record = {
        "path": path, "section": section, "key": key, "python_name": key, "reader": "pydantic", "type": type_,
        "json_types": json_types, "default": default, "default_repr": None, "default_factory": None,
        "required": False, "read_without_default": False, "constraints": {}, "choices": None, "enum": None,
        "deprecated": None, "effective_default": None, "auto": None, "description": None,
        "source": {"file": "deepspeed/inference/config.py", "line": 1}, "constant": None, "is_section": False,
        "alternatives": [], "choices_normalized": None, "condition": None, "conditions": [], "pattern": False,
        "probes": None, "truthiness": False, "witnesses": ["model"], "aliases": [], "read_at": [],
    }
    record.update(extra)
    return record


def _section(path: str, model: str) -> dict:
    return {"kind": "model", "model": model, "parent": None if not path else path.rpartition(".")[0],
            "passthrough": False, "source": None, "description": None, "strict": True, "unknown_keys": "error",
            "passed_to": None, "pattern": False}


def _inference(version: str, tp_default: int) -> dict:
    fields = [
        _field("replace_with_kernel_inject", "bool", ["boolean"], False, aliases=["kernel_inject"]),
        _field("dtype", "dtype", ["string"], None, default_repr="torch.float16", choices=["fp16", "fp32", "half"]),
        _field("tensor_parallel", "DeepSpeedTPConfig", ["object"], {}, is_section=True, aliases=["tp"]),
        _field("tensor_parallel.tp_size", "int", ["integer"], tp_default),
        _field("mp_size", "int", ["integer"], 1, deprecated={"converts_value": False,
                                                             "new_param": "tensor_parallel.tp_size"}),
        _field("max_out_tokens", "int", ["integer"], 1024, constraints={"gt": 0}, aliases=["max_tokens"]),
    ]
    if version == NEW:
        fields.append(_field("keep_module_on_host", "bool", ["boolean"], False))
    return {
        "document": "inference", "format_version": 2, "generated_by": "python -m dsfields.extract.inference_witness",
        "deepspeed_version": version, "environment": {}, "model": "deepspeed.inference.config.DeepSpeedInferenceConfig",
        "sections": {"": _section("", "deepspeed.inference.config.DeepSpeedInferenceConfig"),
                     "tensor_parallel": _section("tensor_parallel", "deepspeed.inference.config.DeepSpeedTPConfig")},
        "fields": {f["path"]: f for f in fields}, "enums": {}, "removed": {}, "coverage": {},
    }


def _training(version: str) -> dict:
    field = _field("tensor_parallel.kernel_inject", "bool", ["boolean"], False,
                   python_name="replace_with_kernel_inject", witnesses=["trace"])
    top = _section("", "")
    top.update(kind="dict", model=None, strict=False, unknown_keys="ignored")
    return {"format_version": 2, "generated_by": "dsfields extract", "deepspeed_version": version, "environment": {},
            "sections": {"": top, "tensor_parallel": _section("tensor_parallel", "deepspeed.runtime.TPTrainingConfig")},
            "fields": {field["path"]: field,
                       "tensor_parallel": _field("tensor_parallel", "TPTrainingConfig", ["object"], {},
                                                 section="", is_section=True)},
            "enums": {}, "removed": {}, "coverage": {}}


@pytest.fixture
def generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for version, tp in ((OLD, 1), (NEW, 2)):
        (tmp_path / version).mkdir()
        (tmp_path / version / "inference.json").write_text(dumps(_inference(version, tp)))
        (tmp_path / version / "fields.json").write_text(dumps(_training(version)))
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_lookup_inference_json_gives_the_default_and_aliases(generated, capsys):
    code, out, _ = _run(capsys, "lookup", "--inference", "tensor_parallel.tp_size", "--version", OLD, "--json")
    payload = json.loads(out)
    assert code == 0 and payload["document"] == "inference"
    assert payload["matches"][0]["field"]["default"] == 1
    code, out, _ = _run(capsys, "lookup", "--inference", "kernel_inject", "--version", NEW, "--json")
    match = json.loads(out)["matches"][0]
    assert (match["path"], match["field"]["default"], match["field"]["aliases"]) == (
        "replace_with_kernel_inject", False, ["kernel_inject"])
    # Our inference prose (prose/inference/), never a ds_config key's text borrowed by spelling.
    assert match["explanation"]["key"] == "replace_with_kernel_inject"
    assert "kernel" in match["explanation"]["summary"]


def test_lookup_inference_history_shows_the_changed_default(generated, capsys):
    code, out, _ = _run(capsys, "lookup", "--inference", "tensor_parallel.tp_size", "--history", "--json")
    history = json.loads(out)["matches"][0]["history"]
    assert code == 0
    assert [(e["version"], e["kind"]) for e in history] == [(OLD, "introduced"), (NEW, "default_changed")]


def test_plain_lookup_names_the_inference_form(generated, capsys):
    code, out, _ = _run(capsys, "lookup", "replace_with_kernel_inject", "--version", NEW)
    assert code == 0 and out.startswith("tensor_parallel.kernel_inject")
    assert "dsfields lookup --inference replace_with_kernel_inject" in " ".join(out.split())
    code, out, _ = _run(capsys, "lookup", "mp_size", "--version", NEW, "--json")
    payload = json.loads(out)
    assert code == 1 and payload["matches"] == []
    assert payload["also_inference"]["paths"] == ["mp_size"]
    assert payload["also_inference"]["message"].startswith("Not a ds_config key")


def test_check_inference_findings(generated, capsys, tmp_path):
    config = tmp_path / "inference_config.json"
    config.write_text(json.dumps({"replace_with_kernel_injct": True, "mp_size": 2, "kernel_inject": True,
                                  "tp": {"tp_size": "two"}, "max_out_tokens": 0, "dtype": "fp8"}))
    code, out, _ = _run(capsys, "check", "--inference", str(config), "--version", NEW, "--format", "json")
    findings = {(f["path"], f["severity"]): f for f in json.loads(out)["files"][0]["findings"]}
    assert code == 1
    assert 'did you mean "replace_with_kernel_inject"' in findings[("replace_with_kernel_injct", "error")]["fix"]
    # mp_size and its replacement through the alias tp: DeepSpeed refuses both together
    assert "both set" in findings[("mp_size", "error")]["message"]
    assert ("kernel_inject", "info") in findings and ("tp", "info") in findings
    assert ("tp.tp_size", "error") in findings
    assert ("max_out_tokens", "error") in findings and ("dtype", "error") in findings


def test_check_inference_deprecated_key_names_its_replacement(generated, capsys, tmp_path):
    config = tmp_path / "deprecated.json"
    config.write_text(json.dumps({"mp_size": 2}))
    code, out, _ = _run(capsys, "check", "--inference", str(config), "--format", "json")
    finding, = json.loads(out)["files"][0]["findings"]
    assert code == 0 and finding["severity"] == "warning"
    assert finding["fix"] == 'rename to "tensor_parallel.tp_size"'


def test_check_inference_accepts_a_clean_config(generated, capsys, tmp_path):
    config = tmp_path / "clean.json"
    config.write_text(json.dumps({"dtype": "half", "tensor_parallel": {"tp_size": 2}, "keep_module_on_host": True}))
    assert _run(capsys, "check", "--inference", str(config), "--version", NEW)[0] == 0
    # keep_module_on_host came in 9.9.9: the older release's model rejects it
    code, out, _ = _run(capsys, "check", "--inference", str(config), "--version", OLD)
    assert code == 1 and "keep_module_on_host" in out


def test_diff_inference_reports_added_and_redefaulted(generated, capsys):
    code, out, _ = _run(capsys, "diff", "--inference", OLD, NEW, "--format", "json")
    changes = {(c["path"], c["kind"]) for c in json.loads(out)["changes"]}
    assert {("keep_module_on_host", "added"), ("tensor_parallel.tp_size", "default_changed")} <= changes


def test_schema_inference_takes_names_and_aliases(generated, capsys):
    import jsonschema

    code, out, _ = _run(capsys, "schema", "--inference", "--version", NEW)
    schema = json.loads(out)
    assert code == 0 and "inference" in schema["title"]
    jsonschema.validate({"kernel_inject": True, "tp": {"tp_size": 2}, "dtype": "fp16"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"replace_with_kernel_injct": True}, schema)


def test_resolve_inference_carries_the_deprecated_key(generated, capsys, tmp_path):
    config = tmp_path / "deprecated.json"
    config.write_text(json.dumps({"mp_size": 4, "kernel_inject": True}))
    code, out, _ = _run(capsys, "resolve", "--inference", str(config), "--version", NEW, "--format", "json")
    resolved = json.loads(out)
    assert code == 0
    assert resolved["mp_size"]["note"] == "carried to tensor_parallel.tp_size"
    assert resolved["tensor_parallel.tp_size"]["value"] == 4
    assert resolved["replace_with_kernel_inject"]["value"] is True
    assert "train_batch_size" not in resolved


def test_no_inference_document_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    code, _, err = _run(capsys, "lookup", "--inference", "dtype", "--version", "1.0.0")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no inference snapshot" in err


def test_lookup_inference_borrows_no_training_prose(generated, capsys):
    from dsfields.model import prose

    training = prose.explain("tensor_parallel", "en")
    assert training is not None  # ds_config's tensor_parallel (AutoTP training) has our prose
    code, out, _ = _run(capsys, "lookup", "--inference", "tensor_parallel", "--version", NEW)
    assert code == 0 and "tensor_parallel: section" in out
    assert " ".join(training.summary.split()) not in " ".join(out.split())
