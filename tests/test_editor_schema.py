"""The editor-grade schema (issue 41): what VS Code shows on a deprecated or removed key, the templates as snippets,
and the same unknown keys as ``check`` on the real-config corpus."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from conftest import corpus_configs

from dsfields.check import Checker, Options, check_text
from dsfields.configfile import ConfigFileError, load
from dsfields.model.history import departure
from dsfields.model.store import load as load_snapshot
from dsfields.schema import EXAMPLES_DIR, build_schema, committed_history

pytestmark = pytest.mark.data

VERSION = "0.19.8"


@pytest.fixture(scope="module")
def snapshot() -> Any:
    return load_snapshot(VERSION)


def _properties(schema: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every property schema by dotted path (sections' own properties included; anyOf "auto" wrappers opened)."""
    out: dict[str, dict[str, Any]] = {}
    for key, prop in schema.get("properties", {}).items():
        path = prefix + key
        out[path] = prop
        inner = prop if "properties" in prop else next((p for p in prop.get("anyOf", []) if "properties" in p), {})
        out.update(_properties(inner, path + "."))
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_deprecated_key_says_since_when_and_what_instead(snapshot, lang):
    props = _properties(build_schema(snapshot, lang=lang, history=committed_history()))
    deprecated = {path: prop for path, prop in props.items() if prop.get("deprecated")}
    assert len(deprecated) >= 4
    releases = set(committed_history()["versions"])
    for path, prop in deprecated.items():
        message = prop["deprecationMessage"]
        record = snapshot.fields.get(path) or next(r for r in snapshot.fields.values() if r.python_name and
                                                   path.endswith("." + r.python_name))
        if record.deprecated.new_param:
            assert f'"{record.deprecated.new_param}"' in message, (path, message)
        release = message.split("DeepSpeed ", 1)[1].split(" ", 1)[0].rstrip("：:起")
        assert release in releases, (path, message)
    cpu_offload = props["zero_optimization.cpu_offload"]["deprecationMessage"]
    assert cpu_offload == ('在 DeepSpeed 0.8.0 或更早的版本中已弃用：请改用 "offload_optimizer"。' if lang == "zh" else
                           'Deprecated in DeepSpeed 0.8.0 or earlier: use "offload_optimizer" instead.')


def test_a_removed_key_names_its_release_as_check_does(snapshot):
    schema = build_schema(snapshot, history=committed_history())
    removed = {path: prop for path, prop in _properties(schema).items() if prop.get("not") == {}}
    assert removed
    for path, prop in removed.items():
        gone = departure(path, VERSION)
        assert prop["errorMessage"] == prop["description"]
        if gone is not None and gone.version != committed_history()["versions"][0]:
            assert f"Removed in DeepSpeed {gone.version}: " in prop["errorMessage"], (path, prop)
    mics = removed["zero_optimization.mics_shard_size"]["errorMessage"]
    assert mics.startswith("Removed in DeepSpeed 0.19.7: ")
    report = check_text(json.dumps({"zero_optimization": {"stage": 3, "mics_shard_size": 2}}), Checker(snapshot),
                        Options())
    assert any("0.19.7" in f.message for f in report.findings if f.path == "zero_optimization.mics_shard_size")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_templates_are_snippets_that_validate_and_check_clean(snapshot, lang):
    schema = build_schema(snapshot, hf=True, lang=lang, history=committed_history())
    snippets = schema["defaultSnippets"]
    assert "defaultSnippets" not in build_schema(snapshot, lang=lang)  # the plain schema rejects their "auto"
    examples = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES_DIR.glob("*.json"))]
    assert [s["label"].split(" ")[2][0] for s in snippets] == [e["id"] for e in examples]
    validator = jsonschema.Draft202012Validator(schema)
    for snippet, example in zip(snippets, examples, strict=True):
        assert not list(validator.iter_errors(snippet["body"])), snippet["label"]
        report = check_text(json.dumps(snippet["body"]), Checker(snapshot), Options(hf=True))
        assert not [f for f in report.findings if f.severity.name == "ERROR"], (snippet["label"], report.findings)
        assert "1000000000.0" not in json.dumps(snippet["body"])
        if lang == "zh":
            assert example["title"] not in snippet["label"] and "模板" in snippet["label"]
        else:
            assert snippet["label"].endswith(example["title"])


def test_an_older_release_gets_the_templates_without_the_keys_it_does_not_read():
    old = load_snapshot("0.8.0")
    bodies = [s["body"] for s in build_schema(old, hf=True, history=committed_history())["defaultSnippets"]]

    def paths(config: dict[str, Any], prefix: str = "") -> set[str]:
        out = set()
        for key, value in config.items():
            out.add(prefix + key)
            if isinstance(value, dict):
                out |= paths(value, prefix + key + ".")
        return out

    written = set().union(*(paths(b) for b in bodies))
    assert written and written <= set(old.fields)


@pytest.mark.parametrize("hf", [False, True], ids=["plain", "hf"])
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict-unknown"])
def test_unknown_keys_are_the_same_as_checks_on_the_corpus(snapshot, hf, strict):
    """A VS Code-style validation (jsonschema) of the real configs: the keys the schema calls unknown
    (``additionalProperties``) are exactly ``check``'s unknown keys — its errors, or with ``--strict-unknown``
    (which also rejects where DeepSpeed silently ignores) all of them."""
    validator = jsonschema.Draft202012Validator(build_schema(snapshot, hf=hf, strict_unknown=strict,
                                                             history=committed_history()))
    checker = Checker(snapshot)
    compared = with_unknown = 0
    for path in corpus_configs():
        try:
            config = load(path, "hf" if hf else "deepspeed")
        except ConfigFileError:
            continue
        found = [f for f in checker.check(config, Options(hf=hf)) if f.kind.name == "UNKNOWN_KEY"]
        expected = {f.path for f in found if strict or f.severity.name == "ERROR"}
        unknown = set()
        for error in validator.iter_errors(config.data):
            if error.validator == "additionalProperties":
                base = ".".join(str(part) for part in error.absolute_path)
                allowed = set(error.schema.get("properties", {}))
                unknown |= {f"{base}.{key}" if base else key for key in error.instance if key not in allowed}
        assert unknown == expected, path.name
        compared += 1
        with_unknown += bool(expected)
    assert compared == 69
    assert with_unknown >= (10 if strict else 1), with_unknown
