"""The per-version JSON Schema: valid Draft 2020-12, committed up to date, and consistent with check.

Consistency is tested both ways on the real-config corpus (and on a few synthetic configs): every
place the schema rejects is reported by ``check --hf`` at error or warning level, and every error
``check`` reports that a per-key schema can express is rejected by the schema too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import corpus_configs
from referencing import Registry, Resource

from dsfields.check import Checker, Finding, Options, Severity, check_text
from dsfields.configfile import ConfigFileError, load
from dsfields.links import field_url
from dsfields.model.store import dumps, repo_generated_dir
from dsfields.model.store import load as load_snapshot
from dsfields.schema import SCHEMA_FILE, build_schema, committed_history

pytestmark = pytest.mark.data

VERSION = "0.19.8"
# Finding kinds a per-key schema can express; cross-field rules and "auto" semantics stay in check.
EXPRESSIBLE = {"UNKNOWN_KEY", "REMOVED_KEY", "WRONG_TYPE", "CHOICE", "CONSTRAINT", "OPTIMIZER", "SCHEDULER"}


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return load_snapshot(VERSION)


@pytest.fixture(scope="module")
def schema(snapshot) -> dict[str, Any]:
    return build_schema(snapshot, history=committed_history())


def test_valid_against_the_draft_2020_12_metaschema(schema, snapshot):
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator.check_schema(build_schema(snapshot, strict_unknown=True))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_committed_schema_is_up_to_date(schema):
    committed = repo_generated_dir() / VERSION / SCHEMA_FILE
    assert committed.read_text(encoding="utf-8") == dumps(schema), (
        f"regenerate: dsfields schema --version {VERSION} -o generated/{VERSION}/{SCHEMA_FILE}")


def test_strictness_follows_deepspeed(schema, snapshot):
    props = schema["properties"]
    assert props["zero_optimization"]["additionalProperties"] is False  # pydantic extra="forbid"
    assert "additionalProperties" not in schema and "additionalProperties" not in props["aio"]  # silently ignored
    assert props["pipeline"]["additionalProperties"] is True  # passed on whole
    strict = build_schema(snapshot, strict_unknown=True)
    assert strict["additionalProperties"] is False and strict["properties"]["aio"]["additionalProperties"] is False


def test_field_metadata(schema):
    zero = schema["properties"]["zero_optimization"]["properties"]
    bucket = zero["reduce_bucket_size"]["anyOf"][0]
    assert bucket == {"type": "integer", "exclusiveMinimum": 0}
    assert zero["reduce_bucket_size"]["default"] == 500000000
    assert zero["stage3_gather_fp16_weights_on_model_save"]["deprecated"] is True
    assert zero["mics_shard_size"]["not"] == {}
    # No site is published (links.SITE_URL unset): no placeholder host, no $id, no "Docs:" link.
    assert "$id" not in schema and "Docs:" not in zero["reduce_bucket_size"]["description"]


def test_site_url_gives_the_id_and_a_docs_link_per_field(snapshot):
    published = build_schema(snapshot, site_url="https://docs.example.org/dsfields/")
    url = field_url(VERSION, "zero_optimization.reduce_bucket_size", "https://docs.example.org/dsfields")
    assert url == ("https://docs.example.org/dsfields/0.19.8/fields/zero_optimization/"
                   "#zero_optimization-reduce_bucket_size")
    assert f"Docs: {url}" in published["properties"]["zero_optimization"]["properties"]["reduce_bucket_size"][
        "description"]
    assert published["$id"] == "https://docs.example.org/dsfields/0.19.8/ds_config.schema.json"
    assert "--site-url https://docs.example.org/dsfields/" in published["$comment"]


def _schema_paths(validator: jsonschema.Draft202012Validator, data: dict[str, Any]) -> set[str]:
    """Dotted paths the schema rejects; extra keys are named one by one."""
    paths = set()
    for error in validator.iter_errors(data):
        base = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties":
            allowed = set(error.schema.get("properties", {}))
            paths |= {f"{base}.{k}" if base else k for k in error.instance if k not in allowed}
        else:
            paths.add(base)
    return paths


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def assert_consistent(validator: jsonschema.Draft202012Validator, data: dict[str, Any], found: list[Finding],
                      label: str) -> None:
    rejected = _schema_paths(validator, data)
    reported = [f.path for f in found if f.severity in (Severity.ERROR, Severity.WARNING)]
    schema_only = [p for p in rejected if not any(_related(p, r) for r in reported)]
    assert not schema_only, f"{label}: the schema rejects {schema_only}, check reports nothing there"
    expressible = [f.path for f in found if f.severity is Severity.ERROR and f.kind.name in EXPRESSIBLE]
    check_only = [p for p in expressible if not any(_related(p, r) for r in rejected)]
    assert not check_only, f"{label}: check errors at {check_only}, the schema accepts them"


@pytest.mark.parametrize("hf", [True, False], ids=["hf", "plain"])
def test_schema_agrees_with_check_on_the_corpus(snapshot, hf):
    """``schema --hf`` against ``check --hf``, and the plain schema against plain ``check``."""
    validator = jsonschema.Draft202012Validator(build_schema(snapshot, hf=hf))
    checker = Checker(snapshot)
    compared = disagreeing_rejections = 0
    for path in corpus_configs():
        try:
            config = load(path, "hf" if hf else "deepspeed")
        except ConfigFileError:
            continue
        found = checker.check(config, Options(hf=hf))
        assert_consistent(validator, config.data, found, path.name)
        compared += 1
        disagreeing_rejections += bool(_schema_paths(validator, config.data))
    assert compared >= 60 and disagreeing_rejections >= 15


@pytest.mark.parametrize("config", [
    {"train_batch_size": 8, "bf16": {"enabled": True, "loss_scale": 0}},
    {"train_batch_size": 8, "zero_optimization": {"stage": 7, "reduce_bucket_size": -1}},
    {"train_batch_size": 8, "optimizer": {"type": "adamw", "params": {"lr": 1e-3, "weight_decy": 0}}},
    {"train_batch_size": 8, "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_ratio": 0.1}}},
    {"train_batch_size": 8, "optimizer": {"type": "Sgd"}, "wall_clock_breakdown": "no"},
    {"train_batch_size": 8, "zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9,
                                                  "offload_param": {"device": "nvme", "buffer_count": 5}}},
])
def test_schema_agrees_with_check_on_synthetic_configs(schema, snapshot, config):
    report = check_text(json.dumps(config), Checker(snapshot), Options(hf=True))
    validator = jsonschema.Draft202012Validator(build_schema(snapshot, hf=True))
    assert_consistent(validator, config, report.findings, json.dumps(config))
    report = check_text(json.dumps(config), Checker(snapshot), Options())
    assert_consistent(jsonschema.Draft202012Validator(schema), config, report.findings, json.dumps(config))


def test_cli_writes_atomically(tmp_path: Path, capsys):
    from dsfields.cli import main

    target = tmp_path / "out" / SCHEMA_FILE
    assert main(["schema", "--version", VERSION, "-o", str(target)]) == 0
    assert json.loads(target.read_text())["title"] == f"DeepSpeed {VERSION} ds_config.json"
    assert main(["schema", "--version", "9.9.9"]) == 2
    assert "no snapshot" in capsys.readouterr().err


# --- editor-ready (issue 28): markdownDescription, examples, "auto" per variant, $id per release --------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markdown_description_is_our_prose_with_default(snapshot, lang):
    from dsfields.model import prose

    built = build_schema(snapshot, lang=lang)
    prop = built["properties"]["zero_optimization"]["properties"]["reduce_bucket_size"]
    ours = prose.explain("zero_optimization.reduce_bucket_size", lang)
    assert prop["markdownDescription"].startswith(f"**{ours.summary}**")
    assert ("默认值" if lang == "zh" else "Default") + ": `500000000`" in prop["markdownDescription"]
    assert prop["examples"][0] == prop["default"]
    stage = built["properties"]["zero_optimization"]["properties"]["stage"]
    assert list(dict.fromkeys(m.value for m in load_snapshot(VERSION).enums[stage_enum(snapshot)].members)) == [
        e for e in stage["examples"] if e != "auto"]


def stage_enum(snapshot) -> str:
    return snapshot.fields["zero_optimization.stage"].enum


def test_auto_only_where_deepspeed_handles_it_and_the_hf_variant_adds_the_trainers(snapshot):
    plain, hf = build_schema(snapshot), build_schema(snapshot, hf=True)
    from dsfields.hf.trainer import fill_list

    filled = set(fill_list().paths)
    probe = {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}
    assert set(probe) <= filled
    assert list(jsonschema.Draft202012Validator(plain).iter_errors(probe))
    assert not list(jsonschema.Draft202012Validator(hf).iter_errors(probe))
    assert "--hf" in hf["$comment"] and "--hf" not in plain["$comment"]
    jsonschema.Draft202012Validator.check_schema(hf)


def test_id_per_release_and_language_is_the_file_the_site_serves(snapshot):
    from dsfields.schema import schema_file

    url = "https://docs.example.org"
    assert build_schema(snapshot, site_url=url)["$id"] == f"{url}/{VERSION}/{SCHEMA_FILE}"
    assert build_schema(snapshot, site_url=url, hf=True)["$id"] == f"{url}/{VERSION}/{schema_file(hf=True)}"
    assert build_schema(snapshot, site_url=url, lang="zh")["$id"] == f"{url}/zh/{VERSION}/{SCHEMA_FILE}"


def test_site_render_writes_each_releases_schemas(snapshot):
    from dsfields.docs.planning import schema_files
    from dsfields.docs.schemas import SHARED_FOLDER, resolve

    history = committed_history()
    files = schema_files(VERSION, snapshot, "en", history)
    releases = {f"{VERSION}/{SCHEMA_FILE}", f"{VERSION}/ds_config.hf.schema.json"}
    assert releases <= set(files)
    shared = set(files) - releases
    assert shared and all(name.startswith(f"{SHARED_FOLDER}/") for name in shared)
    # Each release's file, its references read from the shared files, is the whole schema `dsfields schema` writes.
    whole = resolve(json.loads(files[f"{VERSION}/{SCHEMA_FILE}"]), files.__getitem__)
    assert whole == json.loads(dumps(build_schema(snapshot, history=history)))
    hf = resolve(json.loads(files[f"{VERSION}/ds_config.hf.schema.json"]), files.__getitem__)
    assert hf == json.loads(dumps(build_schema(snapshot, hf=True, history=history)))
    zh = schema_files(VERSION, snapshot, "zh", history)
    assert resolve(json.loads(zh[f"{VERSION}/{SCHEMA_FILE}"]), zh.__getitem__) == json.loads(
        dumps(build_schema(snapshot, lang="zh", history=history)))
    # A validator that follows the references (as an editor fetching them from the site does) judges as before.
    registry = Registry().with_resources(
        (f"https://site.test/{name}", Resource.from_contents(json.loads(text))) for name, text in files.items())
    plain = jsonschema.Draft202012Validator({"$ref": f"https://site.test/{VERSION}/{SCHEMA_FILE}"}, registry=registry)
    whole_validator = jsonschema.Draft202012Validator(whole)
    for config in ({"zero_optimization": {"stage": 3, "overlap_comm": "yes"}}, {"zero_optimization": {"stage": 2}},
                   {"bf16": {"enabled": 1}}, {"train_batch_size": "auto"}, {"train_batch_size": 1.5},
                   {"train_batch_size": 8}):
        assert bool(list(plain.iter_errors(config))) == bool(list(whole_validator.iter_errors(config))), config
    # Both a section (behind its own reference) and a top-level key (behind the root's) are still judged.
    assert list(plain.iter_errors({"zero_optimization": {"stage": 3, "overlap_comm": "yes"}}))
    assert list(plain.iter_errors({"train_batch_size": 1.5}))
    assert not list(plain.iter_errors({"train_batch_size": 8}))


@pytest.mark.parametrize("site_url", [None, "https://docs.example.net/ds/"])
def test_site_schemas_share_the_keys_two_releases_write_alike(site_url, monkeypatch):
    """A section that changed in one key between two releases is stored as two small files of its keys' references
    and the keys' files, shared: most of the bytes of the second release's section are not written again (the site's
    schemas were 17.3 MB on disk when a section was the smallest shared part). So too once the site is published:
    its keys' docs links are their history across releases, the same in both (a link to each release's entry made
    every key a file per release: 203 MB)."""
    from dsfields import links
    from dsfields.docs.planning import schema_files
    from dsfields.docs.schemas import SHARED_FOLDER, resolve

    monkeypatch.setattr(links, "SITE_URL", site_url)
    history = committed_history()
    older, newer = "0.19.7", VERSION
    shared: dict[str, str] = {}
    for version in (older, newer):
        files = schema_files(version, load_snapshot(repo_generated_dir() / version), "en", history)
        assert resolve(json.loads(files[f"{version}/{SCHEMA_FILE}"]), files.__getitem__) == json.loads(dumps(
            build_schema(load_snapshot(repo_generated_dir() / version), history=history, site_url=site_url,
                         history_links=True)))
        if site_url:
            assert f"{site_url}releases/history/#zero_optimization-stage" in json.dumps(resolve(
                json.loads(files[f"{version}/{SCHEMA_FILE}"]), files.__getitem__))
        before = set(shared)
        new = {name: text for name, text in files.items() if name.startswith(SHARED_FOLDER) and name not in before}
        if version == newer:
            zero = f"{SHARED_FOLDER}/zero_optimization."
            whole = sum(len(text) for name, text in files.items() if name.startswith(zero))
            written = sum(len(text) for name, text in new.items() if name.startswith(zero))
            assert whole > 50_000 and written < whole / 4, (written, whole)
            # Keys are files of their own, named by their section and key.
            assert any(name.startswith(f"{SHARED_FOLDER}/zero_optimization.offload_param.") for name in files)
        shared.update(new)
