"""The site's inference section (issue 29) in a built site: each release has its inference pages in both
languages, their headings name the release, every link on them stays in that release and resolves, every
inference field of the release has its anchor, the Chinese pages speak Chinese, and a reader clicking through
the sidebar in Chromium stays on the release they came for.

Read from the whole site that every site test shares (conftest.built_site, built once per test run). There a page
that reads alike for several releases is stored once, under one of them, and the others' folders hold a stub
sending the reader there with the release named (``?v=``): a link to such a page keeps the reader's release.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from conftest import BuiltSite, serving
from test_docs_site import CHROMIUM_ARGS, _need_chromium, _Page, _shows, latin_sentences

from dsfields.links import anchor
from dsfields.model.store import inference_versions, repo_generated_dir

pytestmark = pytest.mark.site

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
RELEASES = ("0.8.0", "0.10.3", inference_versions()[-1])
OLD, NEW = RELEASES[0], RELEASES[-1]
PAGES = ("", "defaults/", "changes/")
RELEASE_DIR = re.compile(r"^(?:zh/)?(\d+\.\d+\.\d+)/")


@pytest.fixture(scope="module")
def site(built_site: BuiltSite) -> Path:
    """The whole site, built once per test run and shared by the site tests (conftest.built_site)."""
    return built_site.site


def _pages(site: Path, lang: str, version: str) -> list[Path]:
    prefix = "zh/" if lang == "zh" else ""
    return [site / f"{prefix}{version}/inference/{page}index.html" for page in PAGES]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("version", [OLD, NEW])
def test_each_release_has_its_inference_pages_and_their_headings_name_it(site, lang, version):
    for path in _pages(site, lang, version):
        html = path.read_text(encoding="utf-8")
        heading = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S)
        assert heading and f"DeepSpeed {version}" in heading.group(1), path
        assert ("推理配置" if lang == "zh" else "Inference config") in heading.group(1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_inference_field_of_the_release_has_its_anchor(site, lang):
    for version in (OLD, NEW):
        fields = json.loads((repo_generated_dir() / version / "inference.json").read_text())["fields"]
        page = _Page()
        page.feed(_pages(site, lang, version)[0].read_text(encoding="utf-8"))
        missing = [p for p, record in fields.items() if not record["is_section"] and anchor(p) not in page.ids]
        assert missing == [], (version, missing[:5])


def _stored_for(site: Path, version: str, local: str) -> bool:
    """Whether ``local`` (a page in another release's folder) is ``version``'s page stored once: the same path in
    ``version``'s folder is the build's stub sending its reader there, with the release named (``?v=``)."""
    own = RELEASE_DIR.sub(lambda m: m.group(0).replace(m.group(1), version), local, count=1)
    stub = site / own / "index.html" if own.endswith("/") else site / own
    if not stub.is_file():
        return False
    html = stub.read_text(encoding="utf-8")
    target = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', html)
    if not target:
        return False
    sent = urlsplit(urljoin(f"http://site/{own}", target.group(1)))
    return sent.path.lstrip("/") == local and sent.query == f"v={version}"


def _as_served(site: Path, rel: str) -> str:
    """The page a reader of ``rel`` reads: the file, or the page its stub sends them to (stored once)."""
    html = (site / rel).read_text(encoding="utf-8")
    target = re.search(r'http-equiv="refresh" content="0; url=([^"?#]+)', html)
    if not target:
        return html
    local = urlsplit(urljoin(f"http://site/{rel}", target.group(1))).path.lstrip("/")
    return (site / local / "index.html" if local.endswith("/") else site / local).read_text(encoding="utf-8")


def test_links_on_inference_pages_keep_the_release_and_resolve(site):
    """Every link into a release folder goes to the page's own release (or to the page the build stored once for
    it, which its stub names), and every local link (and anchor) exists."""
    wrong, broken = [], []
    for lang in ("en", "zh"):
        for version in RELEASES:
            for path in _pages(site, lang, version):
                rel = path.relative_to(site).as_posix()
                page = _Page()
                page.feed(path.read_text(encoding="utf-8"))
                for href in page.hrefs:
                    target = urljoin(f"http://site/{rel}", href)
                    if not target.startswith("http://site/"):
                        continue
                    parts = urlsplit(target)
                    local = parts.path.lstrip("/")
                    release = RELEASE_DIR.match(local)
                    if release and release.group(1) != version and not _stored_for(site, version, local):
                        wrong.append((rel, href))
                    file = site / local / "index.html" if local.endswith("/") or not local else site / local
                    if not file.is_file():
                        broken.append((rel, href))
                    elif parts.fragment and "/inference/" in local:
                        ids = _Page()
                        ids.feed(file.read_text(encoding="utf-8"))
                        if parts.fragment not in ids.ids:
                            broken.append((rel, href))
    assert wrong == [] and broken == [], (wrong[:5], broken[:5])


def test_the_releases_nav_lists_its_inference_pages(site):
    """The release's sidebar (pruned to the open group) leads to the section, and in it to its three pages."""
    for prefix in ("", "zh/"):
        overview = _as_served(site, f"{prefix}{OLD}/index.html")
        # (stored once, the overview may link the inference page of the release it is stored under: the page's
        # script keeps the reader's release, which the Chromium test below clicks through)
        assert re.search(r'href="(?:\.\./\d+\.\d+\.\d+/)?inference/"', overview), prefix
        fields = (site / f"{prefix}{OLD}/inference/index.html").read_text(encoding="utf-8")
        start = fields.index("md-sidebar--primary")  # with toc.integrate there is no secondary sidebar
        sidebar = fields[start:fields.index('class="md-content"', start)]
        for page in ("defaults/", "changes/"):
            assert f'href="{page}"' in sidebar, (prefix, page)


def test_chinese_inference_pages_have_no_english_sentences_outside_code(site):
    found = {}
    for version in RELEASES:
        for path in _pages(site, "zh", version):
            sentences = latin_sentences(path.read_text(encoding="utf-8"))
            if sentences:
                found[str(path.relative_to(site))] = sentences[:3]
    assert not found, found


def test_an_old_release_shows_its_own_prose_and_facts(site):
    """0.8.0's page has no key 0.8.0 lacks (keep_module_on_host came in 0.16.3) and its own dtype sentence."""
    old = _pages(site, "en", OLD)[0].read_text(encoding="utf-8")
    new = _pages(site, "en", NEW)[0].read_text(encoding="utf-8")
    assert 'id="keep_module_on_host"' not in old and 'id="keep_module_on_host"' in new
    assert "accepts only fp16, fp32 and int8" in old and "accepts only fp16, fp32 and int8" not in new
    assert f'<a class="dsf-src" data-v="{OLD}">deepspeed/inference/config.py:' in old  # its source, at its tag


@pytest.fixture
def served(site) -> Iterator[str]:
    with serving(site) as url:
        yield url


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_reader_of_an_old_release_clicks_through_the_inference_section_and_stays_on_it(served, lang):
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    prefix = "zh/" if lang == "zh" else ""
    defaults = "默认值" if lang == "zh" else "Default values"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{served}{prefix}{OLD}/inference/")
            expect(page.locator("h1")).to_contain_text(f"DeepSpeed {OLD}")
            # The section's own "Default values" (the release's training one is in the same sidebar).
            link = page.locator('.md-sidebar--primary a.md-nav__link[href$="defaults/"]')
            expect(link).to_contain_text(defaults)
            link.click()
            page.wait_for_url(f"**/{prefix}{OLD}/inference/defaults/")
            expect(page.locator("h1")).to_contain_text(f"DeepSpeed {OLD}")
            page.locator("table.dsf-table a", has_text="max_out_tokens").first.click()
            page.wait_for_url(f"**/{prefix}{OLD}/inference/#max_out_tokens")
            expect(page.locator("#max_out_tokens")).to_be_in_viewport()
            assert f"/{OLD}/" in page.url
            _shows(page, expect, OLD)  # selector, sidebar heading, banner, every sidebar/footer link: OLD
            page.goto(f"{served}{prefix}{OLD}/inference/defaults/")
            _shows(page, expect, OLD)
            page.select_option("#dsf-version", NEW)  # the same inference page of the release chosen
            page.wait_for_url(f"**/{prefix}{NEW}/inference/defaults/**")
            # The newest release's global links carry no ?v= (it is the default): _shows is for older ones.
            expect(page.locator("#dsf-version")).to_have_value(NEW, timeout=30_000)
            expect(page.locator("h1")).to_contain_text(f"DeepSpeed {NEW}")
        finally:
            browser.close()


def test_the_zero_block_shows_the_per_stage_default_its_validator_gives():
    """``zero.overlap_comm`` is DeepSpeedZeroConfig's: declared null, set per stage by its validator, as the training
    page says for ``zero_optimization.overlap_comm``; the inference pages said only "null" (the 0.15.4 audit)."""
    from dsfields.docs import inference_pages
    from dsfields.model.store import load, load_inference

    training = load("0.15.4").raw
    record = load_inference("0.15.4").fields["zero.overlap_comm"].raw
    shown = inference_pages._default_html(record, "zero.overlap_comm", training, lambda text: text)
    assert "stage 3" in shown and "true" in shown, shown
    plain = load_inference("0.15.4").fields["replace_with_kernel_inject"].raw
    assert inference_pages._default_html(plain, "replace_with_kernel_inject", training, lambda t: t) == \
        inference_pages.default_text(plain, True)
