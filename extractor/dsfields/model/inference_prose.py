"""Our explanations of the inference config's fields (issue 29), en and zh, as data keyed by its JSON paths.

The inference document (``generated/<v>/inference.json``) has its own paths: ``tensor_parallel.tp_size``
or ``checkpoint`` there are not the ds_config keys of the same spelling, so its texts live apart, in
``dsfields/prose/inference/<lang>.toml``, and are never looked up for a training path (nor the reverse).
An entry has the training prose's form and release scoping (``since``/``until``, ``requires``/``lacks``,
``default``/``default_not`` on the entry or a piece, see :mod:`dsfields.model.prose`); a ``*`` stands for
one key, as there. ``tests/test_inference_prose.py`` checks every entry against every release's inference
facts.
"""

from __future__ import annotations

import os
from functools import cache

from dsfields.model import prose

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = "inference"


def _path(lang: str) -> str:
    return os.path.join(prose._root(), FOLDER, f"{lang}.toml")


@cache
def table(lang: str) -> dict[str, Any]:
    """Every inference entry of ``lang`` as written ({} when the file is absent)."""
    try:
        return prose._parse(_path(lang))
    except OSError:
        return {}


def explain(path: str, lang: str, scope: prose.Scope | None = None) -> prose.Explanation | None:
    """Our explanation of inference ``path`` in ``lang`` as it holds for release ``scope`` (every piece when
    ``None``): the exact entry, else the first pattern that matches."""
    entries = table(lang)
    if path in entries:
        return prose._entry(path, lang, entries[path], path, scope)
    for key, raw in entries.items():
        if "*" in key and prose.matches(key, path):
            return prose._entry(key, lang, raw, path, scope)
    return None


def explain_shown(path: str, lang: str, scope: prose.Scope | None) -> prose.Explanation | None:
    """What a reader of release ``scope`` is shown about inference ``path``: English where ``lang`` lacks it."""
    return explain(path, lang, scope) or (explain(path, "en", scope) if lang != "en" else None)


def entries(lang: str) -> dict[str, prose.Explanation]:
    """Every entry of ``lang`` with all its pieces (tests, coverage)."""
    return {k: e for k, raw in table(lang).items() if (e := prose._entry(k, lang, raw)) is not None}


def explain_for(document: str, path: str, lang: str, scope: prose.Scope | None) -> prose.Explanation | None:
    """What a reader of ``scope``'s ``document`` (``training`` or ``inference``) is shown about ``path``: the
    one call lookup and schema make, so neither document is ever given the other's text."""
    if document == "inference":
        return explain_shown(path, lang, scope)
    return prose.explain_shown(path, lang, scope)
