"""The committed inference documents (``generated/<version>/inference.json``) and the real-config corpus (issue 29).

Every document has the snapshot format (its JSON Schema), is written sorted and stable, and answers the
acceptance questions of its release; every corpus config has its provenance and is judged by ``check
--inference`` for every release with a document (the table goes to ``test-output/inference-corpus.json``).
"""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from dsfields.cli import main
from dsfields.model.store import dumps, inference_versions

pytestmark = pytest.mark.data

GENERATED = REPO / "generated"
CORPUS = REPO / "tests" / "fixtures" / "inference-corpus"
VERSIONS = inference_versions(GENERATED)


def _document(version: str) -> dict:
    return json.loads((GENERATED / version / "inference.json").read_text())


def test_there_are_inference_documents() -> None:
    assert "0.19.8" in VERSIONS


@pytest.mark.parametrize("version", VERSIONS)
def test_inference_document_has_the_snapshot_format_sorted_and_stable(version: str) -> None:
    import jsonschema

    text = (GENERATED / version / "inference.json").read_text()
    document = json.loads(text)
    assert dumps(document) == text
    assert (document["document"], document["deepspeed_version"]) == ("inference", version)
    jsonschema.validate(document, json.loads((REPO / "extractor" / "dsfields" / "snapshot.schema.json").read_text()))
    for path, record in document["fields"].items():
        assert record["path"] == path and record["key"] == record["python_name"]
        assert record["key"] not in record["aliases"]


def _lookup(capsys, *args: str) -> dict:
    assert main(["lookup", "--inference", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["matches"][0]["field"]


def test_acceptance_lookups_on_0_19_8(capsys) -> None:
    assert _lookup(capsys, "tensor_parallel.tp_size", "--version", "0.19.8")["default"] == 1
    kernel = _lookup(capsys, "replace_with_kernel_inject", "--version", "0.19.8")
    assert (kernel["default"], kernel["aliases"]) == (False, ["kernel_inject"])
    assert _lookup(capsys, "mp_size", "--version", "0.19.8")["deprecated"]["new_param"] == "tensor_parallel.tp_size"


@pytest.mark.parametrize("version", VERSIONS)
def test_mp_size_is_deprecated_for_tp_size_where_the_release_says_so(version: str) -> None:
    record = _document(version)["fields"].get("mp_size")
    if record is not None and record["deprecated"] is not None:
        assert record["deprecated"]["new_param"] == "tensor_parallel.tp_size"


@pytest.mark.parametrize("version", VERSIONS)
def test_check_inference_catches_the_typo_in_every_release(version: str, tmp_path, capsys) -> None:
    config = tmp_path / "typo.json"
    config.write_text(json.dumps({"replace_with_kernel_injct": True}))
    assert main(["check", "--inference", str(config), "--version", version, "--format", "json"]) == 1
    finding, = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    assert finding["severity"] == "error" and 'did you mean "replace_with_kernel_inject"' in finding["fix"]


def test_schema_inference_validates_the_real_configs(capsys) -> None:
    import jsonschema

    assert main(["schema", "--inference", "--version", "0.19.8"]) == 0
    schema = json.loads(capsys.readouterr().out)
    mii = json.loads((CORPUS / "DeepSpeed-MII" / "mii--legacy--models--load_models-L18.json").read_text())
    jsonschema.validate(mii, schema)
    moq = json.loads((CORPUS / "DeepSpeedExamples" / "training--MoQ--run_glue-L348.json").read_text())
    with pytest.raises(jsonschema.ValidationError, match="quantization_setting"):
        jsonschema.validate(moq, schema)


def test_every_corpus_config_has_provenance() -> None:
    provenance = json.loads((CORPUS / "provenance.json").read_text())
    files = {p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("*/*.json")}
    assert files == set(provenance) and len(files) >= 20
    for entry in provenance.values():
        assert {"repo", "commit", "path", "line", "extracted", "substituted", "dropped"} <= set(entry)
        assert len(entry["commit"]) == 40


def test_corpus_checked_in_every_release(capsys) -> None:
    from dsfields.check.engine import Checker, check_file
    from dsfields.check.findings import Options, Severity
    from dsfields.model.store import load_inference

    files = sorted(CORPUS.glob("*/*.json"))
    table: dict[str, dict[str, int]] = {}
    for version in VERSIONS:
        checker = Checker(load_inference(version, GENERATED))
        row = {"ok": 0, "warnings": 0, "errors": 0}
        for path in files:
            report = check_file(path, checker, Options())
            assert report.error is None
            severities = {f.severity for f in report.findings}
            row["errors" if Severity.ERROR in severities else "warnings" if Severity.WARNING in severities
                else "ok"] += 1
        table[version] = row
    out = REPO / "test-output"
    out.mkdir(exist_ok=True)
    (out / "inference-corpus.json").write_text(json.dumps(table, indent=1) + "\n")
    assert table["0.19.8"]["errors"] >= 1  # MoQ's quantization_setting is no key of DeepSpeedInferenceConfig
