"""Issue 25: requirements between keys as facts ("enabled: true requires max_tokens"), learned from refusals.

The fixture package (``tests/fixtures/fakeds``: ``batching.enabled`` asserts ``max_tokens``) pins the
mechanism in milliseconds; ``tests/test_requirements_deepspeed.py`` pins the real DeepSpeed 0.19.8.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import FIXTURES

from dsfields.check import Checker, Options, Severity
from dsfields.check.engine import check_text
from dsfields.model.records import Snapshot

pytestmark = pytest.mark.unit


def _line_of(text: str) -> int:
    lines = (FIXTURES / "fakeds" / "runtime" / "config.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture(autouse=True)
def empty_generated(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny hand-made tree: neither the committed snapshots nor their launch records are read."""
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))


def _check(snapshot: Snapshot, data: dict[str, Any]) -> list[Any]:
    report = check_text(json.dumps(data, indent=1), Checker(snapshot), Options())
    assert report.error is None
    return report.findings


def test_a_refusal_naming_another_key_is_a_requirement_not_a_verdict(fake_snapshot):
    enabled = fake_snapshot["fields"]["batching.enabled"]
    [requirement] = enabled["requires"]
    assert requirement["key"] == "max_tokens" and requirement["when"] == "truthy"
    assert "max_tokens must be given" in requirement["message"]
    assert requirement["source"] == {"file": "fakeds/runtime/config.py", "line": _line_of("assert BATCHING_MAX")}
    # Probed again with max_tokens given: true is accepted, so boolean is no longer refused.
    assert enabled["probes"]["true"] == {"ok": True}
    assert "boolean" in enabled["json_types"] or enabled["json_types"] == []
    assert any("batching.enabled" in line for line in fake_snapshot["coverage"]["witnesses"]["requirements"])


def test_a_key_refused_for_its_own_value_gets_no_requirement(fake_snapshot):
    assert not [p for p, f in fake_snapshot["fields"].items() if f.get("requires") and p != "batching.enabled"]


def test_check_reports_the_missing_key_once_and_never_the_flag(fake_snapshot):
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    broken = _check(snapshot, {"train_batch_size": 1, "batching": {"enabled": True}})
    errors = [f for f in broken if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["batching.max_tokens"]
    assert "max_tokens must be given" in errors[0].message and f"config.py:{_line_of('assert BATCHING_MAX')}" in (
        errors[0].message)
    assert errors[0].line == 4  # the line of "enabled", the key that needs it
    fine = _check(snapshot, {"train_batch_size": 1, "batching": {"enabled": True, "max_tokens": 128}})
    assert not [f for f in fine if f.severity is Severity.ERROR]
    off = _check(snapshot, {"train_batch_size": 1, "batching": {"enabled": False}})
    assert not [f for f in off if f.severity is Severity.ERROR]


def test_lookup_shows_the_requirement(fake_snapshot):
    from dsfields.lookup import requires_text

    record = Snapshot(copy.deepcopy(fake_snapshot)).fields["batching.enabled"]
    assert requires_text(record) == (f'"max_tokens" when set to a true value (fakeds/runtime/config.py:'
                                     f'{_line_of("assert BATCHING_MAX")})')


def test_a_choice_list_in_an_after_validator_becomes_the_fields_choices(fake_snapshot):
    strategy = fake_snapshot["fields"]["zero_optimization.select_strategy"]
    assert strategy["choices"] == ["auto", "step", "epoch"]
    line = next(i for i, text in enumerate((FIXTURES / "fakeds" / "runtime" / "zero_config.py").read_text()
                                           .splitlines(), 1) if "not in [" in text)
    assert f"zero_optimization.select_strategy: ['auto', 'step', 'epoch'] confirmed (fakeds/runtime/zero_config.py:" \
           f"{line}, a validator of ZeroConfig)" in fake_snapshot["coverage"]["witnesses"]["choices"]
    snapshot = Snapshot(copy.deepcopy(fake_snapshot))
    found = _check(snapshot, {"train_batch_size": 1, "zero_optimization": {"select_strategy": "sometimes"}})
    assert [f.path for f in found if f.severity is Severity.ERROR] == ["zero_optimization.select_strategy"]
    assert not [f for f in _check(snapshot, {"train_batch_size": 1, "zero_optimization": {"select_strategy": "step"}})
                if f.severity is Severity.ERROR]
