"""The repository's URL is said in one place, pyproject.toml's ``[project.urls]``, and every doc that shows it
(the pre-commit hook's ``- repo:`` lines) says the same (issue 41)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
DOCS = [".pre-commit-hooks.yaml", "README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
REPO_LINE = re.compile(r"-\s*repo:\s*(\S+)")


def test_every_doc_that_names_the_repository_names_pyprojects_url():
    url = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    assert url.startswith("https://") and url.count("/") == 4
    shown = {}
    for name in DOCS:
        text = (REPO / name).read_text(encoding="utf-8")
        for found in REPO_LINE.findall(text):
            if "dsfields" in found:
                shown.setdefault(found, []).append(name)
        for other in re.findall(r"https://github\.com/[\w.-]+/dsfields\b", text):
            shown.setdefault(other, []).append(name)
    assert set(shown) == {url}, shown
    assert {".pre-commit-hooks.yaml", "docs/check-output.md", "docs/check-output.zh.md"} <= set(shown[url])


def test_the_site_url_is_pyprojects_documentation_url_and_none_while_unpublished(tmp_path):
    """The published site's URL (canonical links, sitemaps, the schema's $id) is one setting beside the repository's:
    ``[project.urls] Documentation``; absent or a placeholder, there is none (the site then has no sitemap)."""
    from dsfields.links import SITE_URL, published_site_url

    def with_urls(urls: str) -> Path:
        path = tmp_path / "pyproject.toml"
        path.write_text(f'[project]\nname = "x"\n[project.urls]\n{urls}\n', encoding="utf-8")
        return path

    assert published_site_url(with_urls('Repository = "https://github.com/o/dsfields"')) is None
    assert published_site_url(with_urls('Documentation = "https://your-org.github.io/dsfields"')) is None
    assert published_site_url(with_urls('Documentation = "not a url"')) is None
    assert published_site_url(with_urls('Documentation = "https://docs.dsfields.dev/x"')) == "https://docs.dsfields.dev/x/"
    urls = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert SITE_URL == published_site_url(REPO / "pyproject.toml")
    assert (SITE_URL is None) == ("Documentation" not in urls or "your-org" in urls["Documentation"])
