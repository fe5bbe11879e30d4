"""Chinese output closes every bracket in the form it opened: a zh template opens "（" where the English opened
"(", and the ASCII ")" that closed it comes later on the line (a source path, DeepSpeed's message)."""

from __future__ import annotations

import pytest

from dsfields.model.messages import localize

pytestmark = pytest.mark.unit


def test_a_full_width_bracket_opened_by_a_template_closes_full_width():
    line = ("x.hjson: value change: gradient_clipping: DeepSpeed 0.8.0 used 0.0 (default, "
            "deepspeed/runtime/config.py:266); DeepSpeed 0.19.8 would use 1.0; 0.0 written to keep the behaviour")
    zh = localize(line, "zh", "migrate.")
    assert "（默认值，deepspeed/runtime/config.py:266）" in zh
    assert zh.count("（") == zh.count("）") and ")" not in zh


def test_ascii_pairs_inside_stay_ascii_and_english_is_untouched():
    line = ('zero_optimization.stage: deepspeed.initialize raises AssertionError: "zero stage 2 requires an '
            'optimizer" (DeepSpeed 0.19.8, deepspeed/runtime/engine.py:2659 (_configure_zero_optimizer); why)')
    zh = localize(line, "zh", "check.")
    assert "engine.py:2659 (_configure_zero_optimizer)" in zh
    assert zh.endswith("）") and zh.count("（") == zh.count("）")
    assert localize(line, "en", "check.") == line
