"""The hand-written docs pages' command examples run as tests: each ```bash block that starts with
``dsfields`` is run from ``docs/`` and compared with the ```text block that follows it (pydantic-settings'
habit: a docs example that cannot go stale)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dsfields.cli import main

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

DOCS = Path(__file__).resolve().parent.parent / "docs"
EXAMPLE = re.compile(r"^```bash\n(dsfields [^\n]*)\n```\n\n```text\n(.*?)^```", re.S | re.M)
PAGES = sorted(p for p in DOCS.glob("*.md") if EXAMPLE.search(p.read_text(encoding="utf-8")))


def examples() -> list[tuple[str, str, str]]:
    return [(page.name, command, output) for page in PAGES
            for command, output in EXAMPLE.findall(page.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", ["estimate.md", "journeys.md", "resolve-migrate.md"])
def test_chinese_twin_runs_the_english_commands_in_chinese(page):
    """A twin whose examples answer in Chinese runs the English page's commands, each with ``--lang zh``
    (or asking in Chinese already): a command added to one page and not the other fails here."""
    def commands(name: str) -> list[str]:
        return [c.replace(" --lang zh", "") for p, c, _ in examples() if p == name]

    en, zh = commands(page), commands(page.replace(".md", ".zh.md"))
    assert en and en == zh
    twin = [c for p, c, _ in examples() if p == page.replace(".md", ".zh.md")]
    assert all("--lang zh" in c or "显存" in c for c in twin), twin


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def shown_code(name: str) -> list[str]:
    """The page's code blocks that are not a command's answer (commands, synopses, example files, CI and
    editor settings), with ``--lang zh`` and bash comments (prose, translated in a twin) taken out."""
    text = (DOCS / name).read_text(encoding="utf-8")
    answers = {m.start(2) for m in EXAMPLE.finditer(text)}
    blocks = []
    for block in FENCE.finditer(text):
        if block.start(2) in answers:
            continue
        code = block.group(2).replace(" --lang zh", "")
        if block.group(1) == "bash":
            code = re.sub(r"\s+# .*$", "", code, flags=re.M)
        blocks.append(f"{block.group(1)}:{code}")
    return blocks


@pytest.mark.parametrize("twin", sorted(p.name for p in DOCS.glob("*.zh.md")))
def test_chinese_twin_shows_the_english_pages_code(twin):
    """A twin is the English page in Chinese, not a page of its own: every command, synopsis, example file and
    settings block (SARIF upload step, pre-commit hook, VS Code and SchemaStore entries) is the English page's,
    in the same order, so a block changed on one page and not the other fails here."""
    english = twin.replace(".zh.md", ".md")
    assert (DOCS / english).is_file()
    assert shown_code(twin) == shown_code(english)


def test_every_twin_and_its_nav_title_are_in_chinese():
    """The zh site's nav names each hand-written page in Chinese, and every Chinese twin belongs to a page of
    the nav (a twin of a page outside HAND_WRITTEN_TITLES would never be served)."""
    from dsfields.docs.i18n import ZH
    from dsfields.docs.planning import HAND_WRITTEN_TITLES

    assert [title for title in HAND_WRITTEN_TITLES.values() if title not in ZH] == []
    twins = {p.name.replace(".zh.md", ".md") for p in DOCS.glob("*.zh.md")}
    assert twins <= set(HAND_WRITTEN_TITLES)
    assert {"check-output.md", "editor-schema.md", "journeys.md", "resolve-migrate.md", "estimate.md"} <= twins


@pytest.mark.data
@pytest.mark.parametrize(("page", "command", "expected"), examples(), ids=lambda v: v[:60] if isinstance(v, str) else v)
def test_example_output(page, command, expected, monkeypatch, capsys):
    monkeypatch.chdir(DOCS)
    monkeypatch.setenv("COLUMNS", "100")  # answers that wrap (lookup) wrap the same everywhere
    main(shlex.split(command)[1:])
    captured = capsys.readouterr()
    assert captured.out + captured.err == expected


@pytest.mark.parametrize("twin", sorted(p.name for p in DOCS.glob("*.zh.md")))
def test_chinese_twin_has_no_english_sentence_outside_code(twin):
    """The zh site serves ``<stem>.zh.md`` as ``<stem>.md`` (planning.hand_written_pages); the site test's
    sentence counter does not reach hand-written pages, so each twin is rendered here with the zh site's
    Markdown extensions (mkdocs.zh.yml, minus snippets: the twins include none) and counted the same way."""
    import markdown
    from test_docs_site import latin_sentences

    html = markdown.markdown((DOCS / twin).read_text(encoding="utf-8"), extensions=[
        "admonition", "attr_list", "tables", "toc", "pymdownx.highlight", "pymdownx.superfences"])
    assert latin_sentences(f"<article>{html}</article>") == []
