"""migrate's text edits (a member added with the file's own layout) and the upgrade report's wording: pure code."""

from __future__ import annotations

from typing import Any

import pytest

from dsfields.configfile import parse
from dsfields.migrate import insert_member
from dsfields.model.dotted import at_path
from dsfields.upgrade import HEADINGS, KINDS, WORDS, render

pytestmark = pytest.mark.unit


def _at(data: Any, dotted: str) -> Any:
    return at_path(data, dotted)


def test_report_words_exist_in_both_languages():
    assert set(WORDS["en"]) == set(WORDS["zh"])
    assert set(HEADINGS["en"]) == set(HEADINGS["zh"]) == set(KINDS)
    assert render([], "f", "1", "2", "text", "zh").count("无") == len(KINDS)


def _insert(text: str, parent: tuple[str, ...], key: str, value: Any) -> str:
    return insert_member(text, parse(text, "<t>", "deepspeed"), parent, key, value)


@pytest.mark.parametrize(("text", "parent", "expected"), [
    ('{\n  "a": 1,\n  "z": {\n    "b": 2\n  }\n}\n', ("z",),
     '{\n  "a": 1,\n  "z": {\n    "b": 2,\n    "k": 0.0\n  }\n}\n'),
    ('{\n  "a": 1\n}\n', (), '{\n  "a": 1,\n  "k": 0.0\n}\n'),
    ('{"a": 1, "z": {"b": 2}}', ("z",), '{"a": 1, "z": {"b": 2, "k": 0.0}}'),
    ('{"a": 1, "z": {}}', ("z",), '{"a": 1, "z": {"k": 0.0}}'),
    ('{"a": 1, "z": {\n  "b": 2\n}}', (), '{"a": 1, "z": {\n  "b": 2\n}, "k": 0.0}'),
    ("{\n  # hjson, no commas\n  a: 1\n  z: {\n    b: 2  // why\n  }\n}\n", ("z",),
     "{\n  # hjson, no commas\n  a: 1\n  z: {\n    b: 2  // why\n    k: 0.0\n  }\n}\n"),
    ('{\n  "a": 1,\n  "b": 2 // last\n}\n', (), '{\n  "a": 1,\n  "b": 2, // last\n  "k": 0.0\n}\n'),
])
def test_insert_member_keeps_formatting(text: str, parent: tuple[str, ...], expected: str):
    new = _insert(text, parent, "k", 0.0)
    assert new == expected
    assert _at(parse(new, "<t>", "deepspeed").data, ".".join((*parent, "k"))) == 0.0
