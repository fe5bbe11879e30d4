"""The hand-written docs pages' command examples run as tests: each ```bash block that starts with
``dsfields`` is run from ``docs/`` and compared with the ```text block that follows it (pydantic-settings'
habit: a docs example that cannot go stale)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dsfields.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs"
EXAMPLE = re.compile(r"^```bash\n(dsfields [^\n]*)\n```\n\n```text\n(.*?)^```", re.S | re.M)
PAGES = sorted(p for p in DOCS.glob("*.md") if EXAMPLE.search(p.read_text(encoding="utf-8")))


def examples() -> list[tuple[str, str, str]]:
    return [(page.name, command, output) for page in PAGES
            for command, output in EXAMPLE.findall(page.read_text(encoding="utf-8"))]


def test_both_languages_show_the_same_examples():
    en = [c for page, c, _ in examples() if page == "resolve-migrate.md"]
    zh = [c for page, c, _ in examples() if page == "resolve-migrate.zh.md"]
    assert en and en == zh


@pytest.mark.parametrize(("page", "command", "expected"), examples(), ids=lambda v: v[:60] if isinstance(v, str) else v)
def test_example_output(page, command, expected, monkeypatch, capsys):
    monkeypatch.chdir(DOCS)
    monkeypatch.setenv("COLUMNS", "100")  # answers that wrap (lookup) wrap the same everywhere
    main(shlex.split(command)[1:])
    captured = capsys.readouterr()
    assert captured.out + captured.err == expected
