"""The one home of dsfields' Chinese interface strings: ``prose/chinese.json``, read once, on first use.

Field explanations have their own home (``prose/zh/*.toml``, :mod:`dsfields.model.prose`); everything else a
Chinese reader sees — the command line's help, ``check``'s and ``diff``'s sentences, each command's own lines, the
site's interface words and the script's — is an entry of ``prose/chinese.json``, and no other ``.py`` file holds a
Chinese character outside its docstrings (``tests/test_chinese_catalogue.py``).

Adding or converting a Chinese string is one line of code and one line of data::

    said = f"{path}：DeepSpeed {version} 没有此键"          # before: a Chinese literal in the code
    said = chinese.text("estimate.no_such_key", path=path, version=version)   # after

with ``"estimate.no_such_key": "{path}：DeepSpeed {version} 没有此键"`` in the ``text`` group. The key is
``<module>.<what it says>``; the template's ``{placeholders}`` (with ``!r`` and ``:spec`` as in an f-string) are
filled by :meth:`str.format` only when values are given, so a template without them is returned as written.

Only the standard library: every layer may import this module.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs lookup's start-up; annotations are strings
    from collections.abc import Callable, Iterator
    from typing import Any

CATALOGUE_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "prose", "chinese.json")
"""The catalogue: ``{"text": {key: template}, "help": {english: chinese}, "argparse": ..., "site": ...,
"search_terms": {term: english words}, "messages": {...}}`` (its ``about`` says what each group is)."""


@cache
def catalogue() -> dict[str, dict]:
    """Every group of :data:`CATALOGUE_FILE`, read once."""
    with open(CATALOGUE_FILE, encoding="utf-8") as handle:
        return json.load(handle)


def text(key: str, /, **values: object) -> str:
    """The Chinese of ``key`` (a ``KeyError`` names a key the catalogue lacks), its placeholders filled with
    ``values`` when any are given."""
    template: str = catalogue()["text"][key]
    return template.format(**values) if values else template


def table(group: str) -> dict[str, str]:
    """One group of the catalogue as a mapping (``help``, ``argparse``, ``site``, ``search_terms``)."""
    return catalogue()[group]


def messages() -> dict[str, dict]:
    """``check``'s, ``diff``'s and ``upgrade``'s en/zh sentence templates (:mod:`dsfields.model.messages`)."""
    return catalogue()["messages"]


def help_zh(help_text: str | None) -> str | None:
    """A help string of the command line in Chinese when the catalogue has it (argparse's words too), else
    unchanged."""
    if help_text is None:
        return None
    return table("help").get(help_text) or table("argparse").get(help_text) or help_text


class ByLanguage(Mapping):  # type: ignore[type-arg]
    """``{"en": value, "zh": value}`` whose Chinese side is built when first asked for: a module's tables of words
    stay a mapping (``table[lang]``, ``table.get(lang, table["en"])``) while an English run never parses the
    catalogue (``zh`` is a function whose ``chinese.text`` calls name their keys as literals)."""

    def __init__(self, en: Any, zh: Callable[[], Any]) -> None:
        self._en = en
        self._zh = cache(zh)

    def __getitem__(self, lang: str) -> Any:
        if lang == "en":
            return self._en
        if lang == "zh":
            return self._zh()
        raise KeyError(lang)

    def __iter__(self) -> Iterator[str]:
        return iter(("en", "zh"))

    def __len__(self) -> int:
        return 2
