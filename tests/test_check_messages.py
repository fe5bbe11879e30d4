"""check's messages agree with each other and with the snapshots' history, on real configs and mutations.

A finding may be right alone and wrong beside another: "max_grad_norm" offered as a Lamb parameter in the
output that rejects it, "a boolean is expected" of a batch size the batch rule calls an integer, a KeyError
quoting the key the config gives. The invariants below are checked on every config of the shared real-config
corpus and on mutations of each (seeded), for the newest release and an older one; the targeted tests pin the
messages a user acts on: a removed optimizer says when it went, reordered words find the key, an HF config
checked without ``--hf`` says so once.
"""

from __future__ import annotations

import copy
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from dsfields.check import Checker, Finding, Options, Severity
from dsfields.check.engine import check_text
from dsfields.configfile import ConfigFileError, load
from dsfields.model.history import catalog_name_spans, next_release
from dsfields.model.store import available_versions
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.data

VERSIONS = ("0.19.8", "0.16.9")
_CANDIDATES = (os.environ.get("DSFIELDS_CORPUS"), REPO.parent / "shared" / "realworld-configs",
               REPO.parent.parent / "shared" / "realworld-configs")


def corpus_files() -> list[Path]:
    for candidate in _CANDIDATES:
        if candidate and Path(candidate).is_dir():
            return sorted(p for p in Path(candidate).glob("*.json") if p.name != "index.json")
    if os.environ.get("CI"):
        raise AssertionError("the real-config corpus is missing (set DSFIELDS_CORPUS)")
    return []


@pytest.fixture(scope="module", params=VERSIONS)
def checker(request: pytest.FixtureRequest) -> Checker:
    return Checker(load_snapshot(request.param))


def run(checker: Checker, data: Any, hf: bool = False) -> list[Finding]:
    import json

    report = check_text(json.dumps(data), checker, Options(hf=hf))
    assert report.error is None, report.error
    return report.findings


# ---------------------------------------------------------------- invariants over any output

_EXPECTED = re.compile(r"where (?:a|an) (\w+) is expected|expected ([\w ]+?)(?: \(|, got)")
_TAKES = re.compile(r"takes: (.*)$")
_MEANT = re.compile(r'did you mean "([^"]+)"')


def contradictions(checker: Checker, data: Any, findings: list[Finding], hf: bool) -> list[str]:
    """Every pair (or single finding) of ``findings`` that says two incompatible things."""
    problems: list[str] = []
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    rejected_params = {f.path.rpartition(".")[2] for f in findings if "DeepSpeed raises:" in f.message}
    for f in findings:
        offered = _TAKES.search(f.fix)
        if offered:
            listed = {p.strip() for p in offered.group(1).split(",")}
            if listed & rejected_params:
                problems.append(f"{f.path}: offers {sorted(listed & rejected_params)} the same output rejects")
        quoted = re.search(r"KeyError: \"?'(\w+)'", f.message)
        if quoted and quoted.group(1) != f.path.rpartition(".")[2]:
            problems.append(f"{f.path}: quotes KeyError {quoted.group(1)!r} on another key")
        meant = _MEANT.search(f.fix)
        if meant and f.kind.name in ("UNKNOWN_KEY",):
            section = f.path.rpartition(".")[0]
            target = meant.group(1)
            full = f"{section}.{target}" if section else target
            if full in checker.removed:
                problems.append(f"{f.path}: suggests {target!r}, which this release rejects")
        if "removed in DeepSpeed" in f.message and "did you mean" in f.fix:
            problems.append(f"{f.path}: a removed name also gets a did-you-mean")
    for path, group in by_path.items():
        if not path:
            continue
        record = checker.fields.get(path)
        number_key = record is not None and not isinstance(record.default, bool) and bool(
            {"integer", "number"} & set(record.used_as or record.json_types))
        for f in group:
            said = _EXPECTED.search(f.message)
            if number_key and said and "boolean" in (said.group(1) or said.group(2) or "").split(" or ")[:1]:
                problems.append(f"{path}: a number key described as expecting a boolean: {f.message}")
        errors = [f for f in group if f.severity is Severity.ERROR]
        fine = [f for f in group if f.kind.name == "COERCED" and "older form" in f.message]
        if errors and fine:
            problems.append(f"{path}: both accepted as an older form and an error")
    hints = [f for f in findings if "looks like an HF Trainer config" in f.message]
    if len(hints) > 1 or (hf and hints):
        problems.append(f"{len(hints)} HF hints (hf={hf})")
    return problems


def mutations(data: dict[str, Any], rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """The mutations that provoked the contradictions of issue 25, applied where the config allows."""
    out: list[tuple[str, dict[str, Any]]] = []
    gas = copy.deepcopy(data)
    gas["gradient_accumulation_steps"] = "8"
    out.append(("gas-string", gas))
    zero = data.get("zero_optimization")
    if isinstance(zero, dict):
        keys = [k for k in zero if isinstance(k, str) and "_" in k]
        if keys:
            key = rng.choice(keys)
            swapped = copy.deepcopy(data)
            words = key.split("_")
            swapped["zero_optimization"][("_".join(words[::-1]))] = swapped["zero_optimization"].pop(key)
            out.append((f"swap:{key}", swapped))
    lamb = copy.deepcopy(data)
    lamb["optimizer"] = {"type": "Lamb", "params": {"lr": 1e-3, "max_grad_norm": 1.0, "qqqzzz": 1}}
    out.append(("lamb", lamb))
    pld = copy.deepcopy(data)
    pld["progressive_layer_drop"] = {"enabled": True, rng.choice(["theta", "gamma"]): 0.5}
    out.append(("pld", pld))
    onebit = copy.deepcopy(data)
    onebit["optimizer"] = {"type": "OnebitAdam", "params": {"lr": 1e-3}}
    out.append(("onebit", onebit))
    return out


def test_no_message_contradicts_another_on_the_corpus_and_its_mutations(checker):
    files = corpus_files()
    if not files:
        pytest.skip("no real-config corpus")
    rng = random.Random(25)
    problems: list[str] = []
    checked = 0
    for path in files:
        try:
            config = load(path, "deepspeed")
        except ConfigFileError:
            continue
        if not isinstance(config.data, dict):
            continue
        cases = [("as is", config.data), *mutations(config.data, rng)]
        for label, data in cases:
            for hf in (False, True):
                found = run(checker, data, hf=hf)
                problems += [f"{path.name} [{label}, hf={hf}]: {p}" for p in contradictions(checker, data, found, hf)]
                checked += 1
    assert checked >= 69 * 2 * 4
    assert not problems, "\n".join(problems[:20])


# ---------------------------------------------------------------- the messages a user acts on


def test_a_removed_optimizer_says_when_it_was_removed_and_gets_no_did_you_mean():
    versions = available_versions()
    _, spans = catalog_name_spans("optimizer")
    newest = versions[-1]
    checker = Checker(load_snapshot(newest))
    names = checker.catalogs["optimizer"].names
    # "Muon" became the case-insensitive "muon" (0.17.6): still built, so not removed.
    gone = sorted(n for n, runs in spans.items() if runs[-1][1] != newest and n.lower() not in names)
    assert gone, "no optimizer name was ever removed: the test has nothing to say"
    for name in gone:
        last = spans[name][-1][1]
        found = [f for f in run(checker, {"train_batch_size": 1, "optimizer": {"type": name, "params": {}}})
                 if f.path == "optimizer.type"]
        assert len(found) == 1
        assert f"removed in DeepSpeed {next_release(versions, last)} (last in {last})" in found[0].message
        assert "did you mean" not in found[0].fix


def test_the_removed_optimizer_of_the_issue():
    """OnebitAdam: the issue's example, whichever release dropped it (read from the snapshots, not here)."""
    _, spans = catalog_name_spans("optimizer")
    runs = spans.get("onebitadam") or spans.get("OnebitAdam")
    assert runs
    checker = Checker(load_snapshot("0.19.8"))
    found = run(checker, {"train_batch_size": 1, "optimizer": {"type": "OnebitAdam", "params": {"lr": 1e-3}}})
    [finding] = [f for f in found if f.path == "optimizer.type"]
    assert "NAdam" not in finding.fix and f"last in {runs[-1][1]}" in finding.message


def test_a_removed_key_says_when_it_was_removed():
    checker = Checker(load_snapshot("0.19.8"))
    found = run(checker, {"train_batch_size": 1, "progressive_layer_drop": {"enabled": False}})
    [finding] = [f for f in found if f.path == "progressive_layer_drop"]
    assert re.search(r"removed in DeepSpeed \d+\.\d+\.\d+, last in \d+\.\d+\.\d+: DeepSpeed 0\.19\.8 raises",
                     finding.message)


@pytest.mark.parametrize(("written", "meant"), [
    ("comm_overlap", "overlap_comm"), ("overlapcomm", "overlap_comm"), ("gradients_contiguous", "contiguous_gradients"),
    ("reduce_size_bucket", "reduce_bucket_size"),
])
def test_did_you_mean_finds_reordered_and_split_words(written, meant):
    checker = Checker(load_snapshot("0.19.8"))
    found = run(checker, {"train_batch_size": 1, "zero_optimization": {"stage": 2, written: True}})
    [finding] = [f for f in found if f.path == f"zero_optimization.{written}"]
    assert f'did you mean "{meant}"?' in finding.fix


def test_an_hf_config_without_hf_says_so_once():
    checker = Checker(load_snapshot("0.19.8"))
    data = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"}}
    hints = [f for f in run(checker, data) if f.rule == "hf-config"]  # the engine's one hint, as check prints it
    assert len(hints) == 1 and hints[0].severity is Severity.INFO and "With --hf they are judged" in hints[0].message
    assert not [f for f in run(checker, data, hf=True) if f.rule == "hf-config" or "--hf" in f.message]
    assert not [f for f in run(checker, {"train_batch_size": 8}) if f.rule == "hf-config" or "--hf" in f.message]


def test_a_string_batch_size_is_not_called_a_boolean():
    checker = Checker(load_snapshot("0.19.8"))
    found = [f for f in run(checker, {"train_batch_size": 8, "gradient_accumulation_steps": "8"})
             if f.path == "gradient_accumulation_steps"]
    assert found and all("boolean" not in f.message + f.fix for f in found)


def test_lamb_never_offers_the_parameter_deepspeed_rejects():
    checker = Checker(load_snapshot("0.16.9"))
    found = run(checker, {"train_batch_size": 8, "optimizer": {
        "type": "Lamb", "params": {"lr": 1e-3, "max_grad_norm": 1.0, "qqqzzz": 1}}})
    assert [f for f in found if f.path == "optimizer.params.max_grad_norm" and f.severity is Severity.ERROR]
    assert all("max_grad_norm" not in f.fix for f in found if f.path == "optimizer.params.qqqzzz")


@pytest.mark.parametrize("given", ["theta", "gamma"])
def test_pld_quotes_the_key_that_is_missing(given):
    checker = Checker(load_snapshot("0.16.9"))
    found = run(checker, {"train_batch_size": 8, "optimizer": {"type": "Adam", "params": {}},
                          "progressive_layer_drop": {"enabled": True, given: 0.5}})
    missing = {"theta": "gamma", "gamma": "theta"}[given]
    [finding] = [f for f in found if f.rule == "pld-theta-gamma-required"]
    assert finding.path == f"progressive_layer_drop.{missing}" and f"'{missing}'" in finding.message
    assert f"'{given}'" not in finding.message


@pytest.mark.parametrize("empty", ["", None, 0, [], {}])
def test_a_key_deepspeed_asserts_non_empty_refuses_an_empty_value(empty):
    """autotuning.results_dir: `assert self.results_dir` (the probes show every false or empty value refused)."""
    checker = Checker(load_snapshot("0.19.8"))
    [finding] = [f for f in run(checker, {"train_batch_size": 1, "autotuning": {"results_dir": empty}})
                 if f.path == "autotuning.results_dir"]
    assert finding.severity is Severity.ERROR and "results_dir cannot be empty" in finding.message
    assert not [f for f in run(checker, {"train_batch_size": 1, "autotuning": {"results_dir": "out"}})
                if f.path == "autotuning.results_dir"]


def test_a_string_a_before_validator_wraps_into_a_list_is_no_error():
    """zero_optimization.leaf_module.classes: list[str], and a before-validator turns "X" into ["X"]."""
    checker = Checker(load_snapshot("0.19.8"))
    config = {"train_batch_size": 1, "zero_optimization": {"stage": 3, "leaf_module": {"classes": "MyBlock"}}}
    found = [f for f in run(checker, config) if f.path == "zero_optimization.leaf_module.classes"]
    assert [f.severity for f in found] == [Severity.INFO] and "converts it" in found[0].message
    wrong = [f for f in run(checker, {"train_batch_size": 1, "fp16": {"enabled": "maybe"}}) if f.path == "fp16.enabled"]
    assert [f.severity for f in wrong] == [Severity.ERROR]
