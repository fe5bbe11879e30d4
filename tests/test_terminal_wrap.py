"""lookup's wrapping (dsfields.terminal.fill and dedent) is textwrap's, written out so that ``dsfields lookup`` does
not import textwrap: the two agree on random text with every kind of whitespace, long words, CJK and indents."""

from __future__ import annotations

import random
import textwrap

import pytest

from dsfields.terminal import dedent, fill

pytestmark = pytest.mark.unit

ALPHABET = ["a", "b", "stage3_max_live_parameters", "-", "_", "中", " ", "  ", "\t", "\n", "\r", "\x0b", "\x0c",
            "x" * 30, "1e9", "\u00a0", "."]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40))) for _ in range(count)]


def test_fill_is_textwraps_wrap_without_breaking_words_or_hyphens() -> None:
    rng = random.Random(7)
    for text in _texts(1, 3000):
        width = rng.randrange(1, 60)
        indent, hanging = rng.choice(["", "  ", "- "]), rng.choice(["", "    ", "\t"])
        expected = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hanging,
                                 break_long_words=False, break_on_hyphens=False)
        assert fill(text, width, indent, hanging) == expected, (text, width, indent, hanging)


def test_fill_refuses_a_width_below_one_as_textwrap_does() -> None:
    with pytest.raises(ValueError):
        textwrap.wrap("a b", 0)
    with pytest.raises(ValueError):
        fill("a b", 0)


def test_dedent_is_textwraps() -> None:
    rng = random.Random(3)
    for text in _texts(2, 3000):
        lines = text.split("\n")
        text = "\n".join(rng.choice(["", " ", "  ", "\t", " \t"]) + line for line in lines)
        assert dedent(text) == textwrap.dedent(text), repr(text)
