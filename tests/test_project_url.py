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
