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


@pytest.mark.parametrize("page", ["estimate.md", "journeys.md"])
def test_chinese_twin_runs_the_english_commands_in_chinese(page):
    """A twin whose examples answer in Chinese runs the English page's commands, each with ``--lang zh``
    (or asking in Chinese already): a command added to one page and not the other fails here."""
    def commands(name: str) -> list[str]:
        return [c.replace(" --lang zh", "") for p, c, _ in examples() if p == name]

    en, zh = commands(page), commands(page.replace(".md", ".zh.md"))
    assert en and en == zh
    twin = [c for p, c, _ in examples() if p == page.replace(".md", ".zh.md")]
    assert all("--lang zh" in c or "显存" in c for c in twin), twin


@pytest.mark.parametrize(("page", "command", "expected"), examples(), ids=lambda v: v[:60] if isinstance(v, str) else v)
def test_example_output(page, command, expected, monkeypatch, capsys):
    monkeypatch.chdir(DOCS)
    monkeypatch.setenv("COLUMNS", "100")  # answers that wrap (lookup) wrap the same everywhere
    main(shlex.split(command)[1:])
    captured = capsys.readouterr()
    assert captured.out + captured.err == expected


@pytest.mark.parametrize("twin", sorted(p.name for p in DOCS.glob("*.zh.md")))
def test_chinese_twin_has_no_english_sentence_outside_code(twin):
    """The zh site serves ``<stem>.zh.md`` as ``<stem>.md`` (render.hand_written_pages); the site test's
    sentence counter does not reach hand-written pages, so each twin is rendered here with the zh site's
    Markdown extensions (mkdocs.zh.yml, minus snippets: the twins include none) and counted the same way."""
    import markdown
    from test_docs_site import latin_sentences

    html = markdown.markdown((DOCS / twin).read_text(encoding="utf-8"), extensions=[
        "admonition", "attr_list", "tables", "toc", "pymdownx.highlight", "pymdownx.superfences"])
    assert latin_sentences(f"<article>{html}</article>") == []
