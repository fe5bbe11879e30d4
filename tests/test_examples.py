"""The JSON examples the site shows, run through `dsfields check` for every release they are shown on."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from dsfields.check.engine import Checker, check_text
from dsfields.check.findings import Options, Severity
from dsfields.model import examples, prose
from dsfields.model.store import available_versions, load, repo_generated_dir

pytestmark = pytest.mark.data

VERSIONS = available_versions()
BATCH = {"train_micro_batch_size_per_gpu": 1}
"""Every example is checked inside a config that has a batch size (check reports its absence otherwise)."""


def _raw(version: str) -> dict:
    return json.loads((repo_generated_dir() / version / "fields.json").read_text(encoding="utf-8"))


def _problems(checker: Checker, config: dict) -> list[str]:
    report = check_text(json.dumps({**BATCH, **config}), checker, Options())
    assert report.error is None
    return [f"{f.severity.value} {f.kind.value} {f.path}: {f.message}" for f in report.findings
            if f.severity is not Severity.INFO]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_example_shown_on_a_release_passes_check(version):
    raw, checker = _raw(version), Checker(load(version))
    scope = prose.Scope.of_raw(raw)
    shown, bad = 0, []
    for path in sorted(raw["sections"]):
        for _kind, config in examples.shown(raw, path, scope):
            shown += 1
            problems = _problems(checker, config)
            if problems:
                bad.append((path, problems[:3]))
    assert shown >= len([s for s in raw["sections"] if s and "*" not in s]) // 2
    assert bad == []


def test_every_curated_example_is_shown_somewhere():
    counts: Counter[str] = Counter()
    for version in VERSIONS:
        raw = _raw(version)
        scope = prose.Scope.of_raw(raw)
        counts.update(p for p in examples.curated_paths() if p in raw["sections"] and examples.curated(p, scope))
    assert set(counts) == set(examples.curated_paths())


def test_a_generated_example_is_the_defaults_of_its_release():
    for version in ("0.10.3", "0.19.2", "0.19.3"):
        raw = _raw(version)
        example = examples.section_example(raw, "")
        assert example is None  # the top level is a page of its own keys, not a block
        block = examples.section_example(raw, "zero_optimization")["zero_optimization"]
        assert block["stage"] == raw["fields"]["zero_optimization.stage"]["default"]
        assert set(block) <= {raw["fields"][p]["key"] for p in raw["fields"]
                              if raw["fields"][p]["section"] == "zero_optimization"}


def test_a_wrong_example_fails_check():
    """Mutation: a misspelled key in an example is reported, so the test above can fail."""
    checker = Checker(load("0.19.5"))
    assert _problems(checker, {"zero_optimization": {"stage": 3, "offload_parm": {"device": "cpu"}}})
