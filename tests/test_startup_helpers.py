"""lookup's start-up stand-ins answer exactly as the stdlib modules they replace (textwrap, json)."""

from __future__ import annotations

import json
import math
import random
import textwrap

import pytest

from dsfields.model import jsonlite
from dsfields.terminal import dedent, fill

ALPHABET = ["a", "b", "zero_optimization", "1e9", " ", " ", "  ", "\t", "\n", "\n\n", "\r", "\x0b", "\x0c",
            "\xa0", "-", "--", "x" * 45, "é", "→", "`code`", "    ", "\u2003"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40))) for _ in range(count)]


@pytest.mark.parametrize("seed", range(8))
def test_fill_is_textwrap_wrap(seed: int) -> None:
    rng = random.Random(seed)
    for text in _texts(seed, 400):
        width = rng.choice([1, 5, 13, 40, 80, 100])
        indent, hanging = rng.choice([("", ""), ("  ", "    "), (" " * 15, " " * 15), ("x" * 20, "")])
        expected = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hanging,
                                 break_long_words=False, break_on_hyphens=False)
        assert fill(text, width, indent, hanging) == expected, (text, width, indent, hanging)


@pytest.mark.parametrize("seed", range(4))
def test_dedent_is_textwrap_dedent(seed: int) -> None:
    rng = random.Random(seed)
    for text in _texts(seed, 400):
        lines = [rng.choice(["", " ", "  ", "\t", " \t", "    "]) + line for line in text.split("\n")]
        sample = "\n".join(lines)
        assert dedent(sample) == textwrap.dedent(sample), sample


VALUES = [None, True, False, 0, -1, 10**30, 1.5, 1e9, 1e-7, float("inf"), float("-inf"), "", "é→\u2028\x00\"\\",
          "\ud800", [], {}, [1, [2, {"a": None}]], {"b": 1, "a": [True, 1.0]}, (1, 2), {1: "x", 2.5: "y", None: 0},
          {True: 1, False: 2}, {"z": {"y": {"x": []}}}]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_dumps_is_json_dumps(value: object) -> None:
    for sort_keys in (False, True):
        try:
            expected = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
        except TypeError:
            with pytest.raises(TypeError):
                jsonlite.dumps(value, sort_keys=sort_keys)
            continue
        assert jsonlite.dumps(value, sort_keys=sort_keys) == expected


def test_dumps_hands_other_values_to_json() -> None:
    with pytest.raises(TypeError):
        jsonlite.dumps({"a": object()})
    assert jsonlite.dumps(float("nan")) == "NaN"


@pytest.mark.parametrize("text", ['{"a": [1, 2.5, "x", null, true]}', ' [1] \n', "1e400", "-Infinity", "NaN",
                                  '"\\ud800"', '{"a": 1, "a": 2}', "[1, 2] x", "", "   ", "[", '{"a" 1}', "\ufeff1",
                                  "01", '"\x01"'])
def test_loads_is_json_loads(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            jsonlite.loads(text)
        assert str(got.value) == str(exc)
        return
    value = jsonlite.loads(text)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == expected and type(value) is type(expected)
