"""Which ``"auto"`` values the Hugging Face Trainer fills in before DeepSpeed sees the config.

HF-style configs are full of ``"auto"``; DeepSpeed alone drops most of them to its defaults and
fails on some. Whether an ``"auto"`` is fine depends on whether the Trainer replaces it, and that
list lives in ``transformers/integrations/deepspeed.py`` as ``fill_match("path", ...)`` /
``fill_only("path", ...)`` calls. Keeping a copy by hand would go stale with each transformers
release, so the calls are read from the installed file with :mod:`ast` — without importing
transformers (slow, and it may pull a different torch). :mod:`dsfields.extract.hf.flags` stores them in the HF
snapshot (``generated/hf/transformers-<T>.json``, ``fills``), the one home of the fill list
(:func:`dsfields.hf.trainer.fill_list`); the DeepSpeed snapshots no longer carry a copy (format 3).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

FILL_METHODS = ("fill_match", "fill_only")
INTEGRATION_FILE = Path("integrations") / "deepspeed.py"


def transformers_dir() -> Path | None:
    """The installed transformers' package folder, found without importing it; None when absent."""
    try:
        spec = importlib.util.find_spec("transformers")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def fill_calls(code: str) -> dict[str, dict[str, Any]]:
    """Every ``self.fill_match("a.b", ...)`` / ``self.fill_only("a.b", ...)`` in ``code``, by path."""
    found: dict[str, dict[str, Any]] = {}
    for function in ast.walk(ast.parse(code)):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in FILL_METHODS or not node.args:
                continue
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            if function.name in FILL_METHODS:
                continue  # the definitions themselves (fill_only = partialmethod(fill_match, ...))
            # fill_only never checks a literal against the Trainer's value; fill_match does unless
            # told not to (must_match=False, or a 4th positional argument).
            must_match = node.func.attr == "fill_match"
            for keyword in node.keywords:
                if keyword.arg == "must_match":
                    must_match = not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False)
            if len(node.args) >= 4:
                must_match = not (isinstance(node.args[3], ast.Constant) and node.args[3].value is False)
            found.setdefault(first.value, {"function": function.name, "line": node.lineno, "must_match": must_match})
    return dict(sorted(found.items()))
