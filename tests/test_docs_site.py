"""The built docs site: `mkdocs build --strict` passes, every link and anchor resolves, field URLs work,
and a real browser finds a field through site search.

The site is built once per module from every committed snapshot, in a copy of the checkout's
mkdocs.yml and hand-written pages (so tests never touch docs/ or site/ of the checkout). The
browser test drives Debian's Chromium through Playwright; it may skip only outside CI when Chromium
is absent (dev/test.sh installs it; CI must run it).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from dsfields import links
from dsfields.cli import main
from dsfields.model.store import available_versions, load, repo_generated_dir

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
OUTPUT = REPO / "test-output"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A copy of the committed snapshots: the set the site is built from cannot change under the tests."""
    copy = tmp_path_factory.mktemp("generated")
    for version in available_versions(repo_generated_dir()):
        shutil.copytree(repo_generated_dir() / version, copy / version)
    return copy


@pytest.fixture(scope="module")
def site(tmp_path_factory, generated) -> Path:
    """Build the whole site with `dsfields docs build` (strict) in a copy of the checkout's docs setup."""
    root = tmp_path_factory.mktemp("site-root")
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    (root / "docs").mkdir()
    for page in (REPO / "docs").glob("*.md"):
        shutil.copy(page, root / "docs" / page.name)
    shutil.copytree(REPO / "docs" / "assets", root / "docs" / "assets")
    hooks = root / "extractor" / "dsfields" / "docs"
    hooks.mkdir(parents=True)
    shutil.copy(REPO / "extractor" / "dsfields" / "docs" / "hooks.py", hooks / "hooks.py")
    code = main(["docs", "build", "--config-file", str(root / "mkdocs.yml"), "--site-dir", str(root / "site"),
                 "--generated", str(generated)])
    assert code == 0, "mkdocs build --strict failed: see the captured output"
    return root / "site"


class _Page(HTMLParser):
    """Ids and hrefs of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"] or "")


@functools.cache
def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def target_file(site: Path, url_path: str) -> Path:
    path = site / unquote(url_path).lstrip("/")
    return path / "index.html" if url_path.endswith("/") or path.is_dir() else path


def test_strict_build_produces_every_release(site, generated):
    versions = available_versions(generated)
    for version in versions:
        assert (site / version / "index.html").is_file()
        assert (site / version / "default-values" / "index.html").is_file()
    assert (site / versions[-1] / "fields" / "zero_optimization" / "index.html").is_file()
    assert (site / "search" / "search_index.json").is_file()


def test_every_internal_link_and_anchor_resolves(site):
    """Includes the raw-HTML tables mkdocs does not check, and every redirect stub's target."""
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html":
            continue  # served from any depth, so its links are absolute on site_url: not checkable here
        base = "/" + page.relative_to(site).as_posix()
        for href in parse(page).hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            resolved = urlsplit(urljoin(base, href))
            target = target_file(site, resolved.path)
            if not target.is_file():
                broken.append(f"{base}: {href} (no {target.relative_to(site)})")
            elif resolved.fragment and target.suffix == ".html" and unquote(resolved.fragment) not in parse(target).ids:
                broken.append(f"{base}: {href} (no anchor)")
    assert not broken, "\n".join(broken[:40])


def _field_targets(site: Path, generated: Path, version: str) -> Iterator[tuple[str, Path, str]]:
    snapshot = load(version, generated).raw
    for path in sorted({*snapshot["fields"], *snapshot["removed"]}):
        is_section = path in snapshot["sections"] and "." not in path
        url = urlsplit(links.field_url(version, path, site_url="http://site.invalid", is_section=is_section))
        yield path, target_file(site, url.path), unquote(url.fragment)


def test_links_field_url_reaches_every_field_of_the_newest_release(site, generated):
    newest = available_versions(generated)[-1]
    missing = [f"{path}: {page.relative_to(site)}#{anchor}"
               for path, page, anchor in _field_targets(site, generated, newest)
               if not page.is_file() or anchor not in parse(page).ids]
    assert not missing, "\n".join(missing[:40])


def test_links_field_url_of_older_releases_redirects_to_the_default_table(site, generated):
    missing = []
    for version in available_versions(generated)[:-1]:
        for path, page, anchor in _field_targets(site, generated, version):
            defaults = site / version / "default-values" / "index.html"
            text = page.read_text(encoding="utf-8") if page.is_file() else ""
            if "../../default-values/" not in text or anchor not in parse(defaults).ids:
                missing.append(f"{version} {path}: {page.relative_to(site)}#{anchor}")
    assert not missing, "\n".join(missing[:40])


def test_site_has_theme_toggle_search_and_version_selector(site, generated):
    landing = (site / "index.html").read_text(encoding="utf-8")
    assert "md-search__input" in landing
    assert landing.count('data-md-color-scheme') >= 1 and "Switch to dark mode" in landing
    assert 'href="releases/"' in landing
    newest = available_versions(generated)[-1]
    assert f"DeepSpeed {newest}" in landing


# ---------------------------------------------------------------- the real browser


@pytest.fixture
def served(site) -> Iterator[str]:
    """``python -m http.server`` on 127.0.0.1 in its own process.

    In-process, pytest's warnings-as-errors turns the server threads' harmless ResourceWarnings into
    failed requests (the search index then never loads); a child process keeps the server plain.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.browser
def test_search_finds_a_field_and_shows_its_default(served):
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing in CI: dev/test.sh installs Debian's chromium package")
        pytest.skip("Chromium not installed (apt-get install chromium); CI runs this test")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    OUTPUT.mkdir(exist_ok=True)
    key = "stage3_max_live_parameters"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(served)
            # Material's search worker fetches and indexes search_index.json after load; if no
            # result shows, type the query again (seen on a loaded 2-core machine).
            box = page.locator("input.md-search__input")
            first = page.locator(".md-search-result__item").first
            for _attempt in range(3):
                box.click()
                box.fill("")
                box.fill(key)
                try:
                    first.wait_for(timeout=10_000)
                    break
                except PlaywrightTimeout:
                    continue
            expect(first).to_contain_text(key, timeout=10_000)
            # Material lists the best page first, then its best-matching sections: the first
            # section hit is the field itself.
            hit = first.locator("a.md-search-result__link").nth(1)
            expect(hit).to_contain_text(key)
            hit.click()
            page.wait_for_url(f"**/fields/zero_optimization/**#zero_optimization-{key}")
            heading = page.locator(f"#zero_optimization-{key}")
            facts = page.locator(f"#zero_optimization-{key} + ul > li")
            default = facts.filter(has_text=re.compile(r"^Default:")).locator("code")
            expect(heading).to_be_in_viewport()
            expect(default).to_have_text("1000000000")
            expect(default).to_be_in_viewport()
            page.screenshot(path=str(OUTPUT / "docs-search-stage3_max_live_parameters.png"))
        finally:
            browser.close()


# ---------------------------------------------------------------- scale (on demand)


@pytest.mark.skipif(not os.environ.get("DSFIELDS_DOCS_SCALE"), reason="set DSFIELDS_DOCS_SCALE=77 to time it")
def test_site_with_many_releases_builds_within_30_seconds(tmp_path, generated, capsys):
    """~77 releases: copies of the newest snapshot under fake older versions, each missing a few keys."""
    import json
    import time

    from dsfields.model.history import write_index

    count = int(os.environ["DSFIELDS_DOCS_SCALE"])
    newest = available_versions(generated)[-1]
    snapshot = load(newest, generated).raw
    fake = tmp_path / "generated"
    paths = sorted(p for p, r in snapshot["fields"].items() if not r.get("is_section"))
    for i in range(count):
        version = f"0.{i // 10}.{i % 10}" if i < count - 1 else "9.9.9"
        copy = json.loads(json.dumps(snapshot))
        copy["deepspeed_version"] = version
        for path in paths[: (count - 1 - i) * 2]:
            copy["fields"].pop(path, None)
        (fake / version).mkdir(parents=True)
        (fake / version / "fields.json").write_text(json.dumps(copy), encoding="utf-8")
    write_index(fake)
    root = tmp_path / "root"
    shutil.copytree(REPO / "docs", root / "docs", ignore=lambda d, names: [n for n in names if n[0].isdigit()
                                                                          or n == "releases"])
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO / "extractor" / "dsfields" / "docs", root / "extractor" / "dsfields" / "docs")
    started = time.perf_counter()
    assert main(["docs", "build", "--config-file", str(root / "mkdocs.yml"), "--generated", str(fake)]) == 0
    elapsed = time.perf_counter() - started
    print(capsys.readouterr().out)
    assert elapsed <= 30, f"{count} releases took {elapsed:.1f} s"
