"""A quiet docs build: mkdocs' INFO about the nav's anchored links to the top-level keys page (one per group without
sections, per release: ~150 lines a build) is filtered by design in hooks.py; every other message stays.

mkdocs' own nav builder makes the messages (its wording, not a copy of it), on a two-page nav.
"""

from __future__ import annotations

import logging

import pytest

pytestmark = pytest.mark.site


def _nav_messages(tmp_path, nav: list, caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import File, Files
    from mkdocs.structure.nav import get_navigation

    docs = tmp_path / "docs"
    (docs / "fields").mkdir(parents=True, exist_ok=True)
    (docs / "fields" / "top-level.md").write_text("# Top-level keys\n")
    config = MkDocsConfig()
    config.load_dict({"site_name": "t", "docs_dir": str(docs), "site_dir": str(tmp_path / "site"), "nav": nav,
                      "validation": {"nav": {"not_found": "info"}}})
    errors, _ = config.validate()
    assert not errors, errors
    files = Files([File("fields/top-level.md", str(docs), str(tmp_path / "site"), use_directory_urls=True)])
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="mkdocs"):
        get_navigation(files, config)
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mkdocs.structure.nav"]


def test_the_navs_anchored_links_are_quiet_and_other_messages_stay(tmp_path, caplog) -> None:
    from dsfields.docs import hooks

    anchored = "fields/top-level/#group-1-batch"
    nav = [{"1. Batch": [{"Top-level keys": anchored}]}, {"Gone": "fields/gone.md"}]
    before = _nav_messages(tmp_path, nav, caplog)
    assert [message for _, message in before if anchored in message]  # mkdocs says it, at INFO
    logger = logging.getLogger("mkdocs.structure.nav")
    hooks._anchored_nav_links.expect({"releases": {"0.1.0": nav}})
    logger.addFilter(hooks._anchored_nav_links)
    try:
        after = _nav_messages(tmp_path, nav, caplog)
    finally:
        logger.removeFilter(hooks._anchored_nav_links)
    assert after == [entry for entry in before if anchored not in entry[1]]
    assert any("fields/gone.md" in message for _, message in after)  # a link the render did not mean stays
