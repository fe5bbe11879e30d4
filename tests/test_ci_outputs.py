"""CI surfaces of `check`: the pre-commit hook's file pattern and sniffing, `--format json`'s
``format_version``, and `--format sarif` (SARIF 2.1.0) for code-scanning UIs.

The hook is tested against every original path of the real-config corpus (its ``index.json`` says
where each file came from): the pattern must select it, and ``--sniff`` must keep it, while files
that merely share the extension (package.json, tsconfig.json, an nginx .conf) are skipped.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import REPO

from dsfields.check.check_command import looks_like_ds_config
from dsfields.check.report import JSON_FORMAT_VERSION
from dsfields.cli import main
from dsfields.model.store import load_indexed

pytestmark = pytest.mark.data

VERSION = "0.19.8"
CORPUS = Path(os.environ.get("DSFIELDS_CORPUS") or REPO.parent / "shared" / "realworld-configs")
"""Beside the checkout, as test_schema.py finds it; DSFIELDS_CORPUS points elsewhere (a git worktree)."""


def _corpus_index() -> list[dict[str, Any]]:
    index = CORPUS / "index.json"
    if not index.is_file():
        if os.environ.get("CI"):
            raise AssertionError(f"corpus missing at {CORPUS}")
        pytest.skip("no corpus")
    return json.loads(index.read_text(encoding="utf-8"))


def _hook() -> dict[str, str]:
    """The hook's ``files`` and ``entry`` (one flat mapping: no YAML library needed for three keys)."""
    text = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    out = {}
    for key in ("id", "entry", "files"):
        match = re.search(rf"^\s*-?\s*{key}:\s*(.+?)\s*$", text, re.M)
        assert match, key
        out[key] = match.group(1).strip("'\"")
    return out


def test_hook_pattern_selects_every_original_corpus_path() -> None:
    """pre-commit matches ``files`` with ``re.search`` on the repository-relative path."""
    pattern = re.compile(_hook()["files"])
    entries = _corpus_index()
    assert len(entries) >= 69
    missed = [e["path"] for e in entries if not pattern.search(e["path"])]
    assert missed == [], f"the hook skips {len(missed)} real config paths: {missed}"


def test_hook_sniffs_every_corpus_file_and_skips_lookalikes(tmp_path: Path) -> None:
    assert "--sniff" in _hook()["entry"].split()
    snapshot = load_indexed(VERSION)
    entries = _corpus_index()
    kept = [e["file"] for e in entries if looks_like_ds_config(CORPUS / e["file"], snapshot)]
    assert len(kept) == len(entries)
    lookalikes = {
        "package.json": {"name": "x", "version": "1.0.0", "scripts": {"test": "jest"}},
        "tsconfig.json": {"compilerOptions": {"target": "es2020", "strict": True}},
        ".vscode/settings.json": {"editor.formatOnSave": True, "json.schemas": []},
        "config.json": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32},
    }
    for name, data in lookalikes.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        assert not looks_like_ds_config(path, snapshot), name
    nginx = tmp_path / "site.conf"
    nginx.write_text("server {\n  listen 80;\n  gzip on;\n}\n", encoding="utf-8")
    assert not looks_like_ds_config(nginx, snapshot)
    # A DeepSpeed config with a syntax error is still checked, and reported.
    broken = tmp_path / "stage1.json"
    broken.write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 1},}', encoding="utf-8")
    assert looks_like_ds_config(broken, snapshot)


def test_sniff_skips_lookalikes_in_the_command(tmp_path: Path, capsys) -> None:
    other = tmp_path / "package.json"
    other.write_text('{"name": "x", "version": "1.0.0"}', encoding="utf-8")
    config = tmp_path / "zf_config.json"
    config.write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 9}}', encoding="utf-8")
    assert main(["check", "--version", VERSION, "--sniff", str(other)]) == 0
    assert "0 files checked" in capsys.readouterr().out
    assert main(["check", "--version", VERSION, "--sniff", str(other), str(config)]) == 1
    out = capsys.readouterr().out
    assert "package.json" not in out and "zf_config.json" in out


def test_json_output_carries_its_format_version(tmp_path: Path, capsys) -> None:
    config = tmp_path / "ds.json"
    config.write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 9}}', encoding="utf-8")
    assert main(["check", "--version", VERSION, "--format", "json", str(config)]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["format_version"] == JSON_FORMAT_VERSION == 1
    assert list(payload) == ["format_version", "deepspeed_version", "options", "files", "summary"]
    # Every key the JSON carries is documented, on the English page and on its Chinese twin.
    for page in ("check-output.md", "check-output.zh.md"):
        doc = (REPO / "docs" / page).read_text(encoding="utf-8")
        for key in [*payload, *payload["files"][0], *payload["files"][0]["findings"][0], *payload["summary"]]:
            assert f"`{key}`" in doc, (page, key)


# A structural schema of the parts of SARIF 2.1.0 (OASIS standard, section 3) that code-scanning UIs
# read, written from the specification's property definitions: required properties, types, enums.
SARIF_STRUCTURE = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                                   "rules": {"type": "array", "items": {
                                       "type": "object", "required": ["id"],
                                       "properties": {"id": {"type": "string"},
                                                      "shortDescription": {"$ref": "#/$defs/message"},
                                                      "defaultConfiguration": {"type": "object", "properties": {
                                                          "level": {"$ref": "#/$defs/level"}}}}}}}}}},
                "invocations": {"type": "array", "items": {
                    "type": "object", "required": ["executionSuccessful"],
                    "properties": {"executionSuccessful": {"type": "boolean"},
                                   "toolExecutionNotifications": {"type": "array", "items": {
                                       "type": "object", "required": ["message"],
                                       "properties": {"message": {"$ref": "#/$defs/message"},
                                                      "level": {"$ref": "#/$defs/level"}}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": {"$ref": "#/$defs/level"},
                        "message": {"$ref": "#/$defs/message"},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "required": ["artifactLocation"], "properties": {
                                "artifactLocation": {"type": "object", "required": ["uri"],
                                                     "properties": {"uri": {"type": "string",
                                                                            "format": "uri-reference"}}},
                                "region": {"type": "object", "properties": {
                                    "startLine": {"type": "integer", "minimum": 1}}}}},
                            "logicalLocations": {"type": "array", "items": {"type": "object", "properties": {
                                "fullyQualifiedName": {"type": "string"}, "kind": {"type": "string"}}}}}}},
                        "properties": {"type": "object"}}}},
                "properties": {"type": "object"}}}},
    },
    "$defs": {
        "level": {"enum": ["none", "note", "warning", "error"]},
        "message": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
    },
}


def test_sarif_output_on_the_corpus_is_valid_sarif_2_1_0(capsys) -> None:
    entries = _corpus_index()
    files = [str(CORPUS / e["file"]) for e in entries]
    code = main(["check", "--version", VERSION, "--hf", "--format", "sarif", *files])
    sarif = json.loads(capsys.readouterr().out)
    assert code in (0, 1, 2)
    jsonschema.Draft202012Validator(SARIF_STRUCTURE, format_checker=jsonschema.FormatChecker()).validate(sarif)
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len({r["id"] for r in rules}) == len(rules)
    assert run["results"], "the corpus has findings"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".json")
    # The same findings as --format json, one result each.
    main(["check", "--version", VERSION, "--hf", "--format", "json", *files])
    payload = json.loads(capsys.readouterr().out)
    assert len(run["results"]) == sum(len(f["findings"]) for f in payload["files"])
    levels = {"error": "error", "warning": "warning", "info": "note"}
    assert sorted(r["level"] for r in run["results"]) == sorted(
        levels[x["severity"]] for f in payload["files"] for x in f["findings"])


def test_sarif_reports_an_unreadable_file_as_a_notification(tmp_path: Path, capsys) -> None:
    broken = tmp_path / "ds_config.json"
    broken.write_text('{"train_batch_size": 8,,}', encoding="utf-8")
    assert main(["check", "--version", VERSION, "--format", "sarif", str(broken)]) == 2
    sarif = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(SARIF_STRUCTURE).validate(sarif)
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["level"] == "error"
