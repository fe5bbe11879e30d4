"""The Chinese interface strings have one home (``prose/chinese.json`` via :mod:`dsfields.model.chinese`, issue 37):
no ``.py`` file of the package holds a Chinese character outside its docstrings, every key the code asks for has its
Chinese, every entry is asked for, and a template filled at its call has exactly the placeholders given (a template
without values at its call is returned as written, for its caller to fill)."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from dsfields.model import chinese

pytestmark = pytest.mark.lane("unit")

PACKAGE = Path(chinese.__file__).resolve().parent.parent
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
"""A Chinese character (the CJK ideograph blocks); full-width punctuation alone is typography, not a string."""

HOME = Path(chinese.__file__).resolve()


def modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if path.resolve() != HOME)


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string statements that document (a module's, class's, function's or attribute's)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def chinese_literals(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each string literal of ``source`` (f-strings' literal parts too) that holds Chinese,
    docstrings left out."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and HAN.search(node.value)]


def text_calls(source: str) -> list[tuple[int, str | None, set[str]]]:
    """``(line, key, keyword names)`` of each ``chinese.text(...)`` call (key None when it is not a literal)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "text"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "chinese"):
            first = node.args[0] if node.args else None
            key = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            out.append((node.lineno, key, {keyword.arg for keyword in node.keywords if keyword.arg}))
    return out


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_the_finder_sees_chinese_literals_and_skips_docstrings() -> None:
    source = ('"""文档。"""\nX = "卸载"\nY = f"{X}：阶段 {1}"\nZ = "："\n\n\ndef f():\n    """说明。"""\n'
              '    return chinese.text("a.b", n=1)\n')
    assert chinese_literals(source) == [(2, "卸载"), (3, "：阶段 ")]
    assert text_calls(source) == [(9, "a.b", {"n"})]


def test_no_chinese_literal_outside_the_catalogue() -> None:
    """A new Chinese string goes into ``prose/chinese.json``: ``"中文"`` in code is ``chinese.text("module.key")``."""
    found = {f"{path.relative_to(PACKAGE)}:{line}": text[:60]
             for path in modules() for line, text in chinese_literals(path.read_text(encoding="utf-8"))}
    assert found == {}


def test_every_key_asked_for_is_in_the_catalogue_with_its_placeholders() -> None:
    texts = chinese.table("text")
    problems = []
    for path in modules():
        for line, key, given in text_calls(path.read_text(encoding="utf-8")):
            where = f"{path.relative_to(PACKAGE)}:{line}"
            if key is None:
                problems.append(f"{where}: the key is not a literal (the catalogue's test cannot see it)")
            elif key not in texts:
                problems.append(f"{where}: {key} has no Chinese in prose/chinese.json")
            elif given and placeholders(texts[key]) != given:
                problems.append(f"{where}: {key} fills {sorted(given)}, its template says {texts[key]!r}")
    assert problems == []


def test_every_entry_is_used() -> None:
    """An entry no code asks for is dead text: removed with the code that said it."""
    asked = {key for path in modules() for _, key, _ in text_calls(path.read_text(encoding="utf-8"))}
    assert sorted(set(chinese.table("text")) - asked) == []
    groups = set(chinese.catalogue()) - {"about", "text"}
    code = "".join(path.read_text(encoding="utf-8") for path in [*modules(), HOME])
    unused = [group for group in groups
              if f'table("{group}")' not in code and not (group == "messages" and "chinese.messages()" in code)]
    assert unused == []


def test_every_help_entry_is_a_help_string_of_the_command_line() -> None:
    """The ``help`` group holds only what ``dsfields``' parser says (a reworded option leaves no stale entry)."""
    import argparse

    from dsfields.cli import get_parser

    said: set[str] = set()

    def walk(parser: argparse.ArgumentParser) -> None:
        said.add(parser.description or "")
        for action in parser._actions:
            said.add(action.help or "")
            if isinstance(action, argparse._SubParsersAction):
                said.update(choice.help or "" for choice in action._choices_actions)
                for sub in {id(p): p for p in action.choices.values()}.values():
                    walk(sub)

    walk(get_parser())
    assert sorted(set(chinese.table("help")) - said) == []


def test_a_template_is_returned_as_written_without_values_and_filled_with_them() -> None:
    key = next(k for k, v in chinese.table("text").items() if placeholders(v) and "{{" not in v)
    template = chinese.table("text")[key]
    assert chinese.text(key) == template
    filled = chinese.text(key, **{name: "<X>" for name in placeholders(template)})
    assert "<X>" in filled and "{" not in filled.replace("{{", "")


def test_every_site_entry_is_said_by_a_template_or_the_code() -> None:
    """The ``site`` group (the templates' ``_``) holds only words a template, the site's code, its script or its
    examples say."""
    said = ""
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".j2", ".js", ".html", ".json") and path.name != "chinese.json":
            said += path.read_text(encoding="utf-8") + "\n"
    said = re.sub(r"""(["'])\s*~\s*(["'])""", "", said)  # Jinja's 'a ' ~ 'b'
    said = re.sub(r"""(["'])\s*\n\s*f?(["'])""", "", said)  # Python's implicit concatenation over lines
    said = said.replace("\\n", "\n").replace('\\"', '"').replace("\\'", "'")
    assert sorted(key for key in chinese.table("site") if key not in said) == []


SEED_TERMS = ("分片", "切分", "学习率预热", "预热", "学习率", "卸载", "梯度累积", "梯度裁剪", "激活检查点", "预取",
              "常驻", "桶", "通信", "动态损失缩放", "连续内存", "收集", "白名单", "打印", "耗时", "数据效率")
"""The words the seed guides (shared/seeds) use for what keys do: a Chinese reader types these into the search."""


@pytest.mark.data
def test_every_seed_term_reaches_a_field_in_the_chinese_search() -> None:
    """The Chinese full-text index gives an entry the glossary's term when its key holds the term's English words
    (docs/hooks._search_words): each seed term must reach at least one key or class of the newest release (issue 39:
    分片 and 学习率预热 found nothing that named a field)."""
    from dsfields import load_snapshot
    from dsfields.docs.hooks import _search_words
    from dsfields.docs.i18n import SEARCH_TERMS
    from dsfields.model.store import available_versions

    snapshot = load_snapshot(available_versions()[-1])
    names = [*snapshot.all_paths, *(name for catalog in snapshot.catalogs.values() for name in catalog.names)]
    reached = {term for name in names for term in _search_words(name, SEARCH_TERMS["zh"])}
    assert sorted(set(SEED_TERMS) - reached) == []
