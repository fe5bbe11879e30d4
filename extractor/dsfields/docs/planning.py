"""Which pages the docs site has, and the data files beside them: the plan of one language's site.

The site must stay buildable in seconds with every DeepSpeed release snapshotted (~77), so pages
are planned by cost: each release gets a handful of lean pages (overview, default tables, enums,
deprecated/removed, changes, templates, typos), and only the newest release gets the full
per-field dictionary, one page per top-level section. Field URLs stay valid for every release and
across new releases: an older release's field page is a tiny static redirect to the row with the
same anchor in its default table, so a link shared while a release was the newest keeps working
after it is superseded. The mkdocs navigation lives in ``releases/nav.json``, read by ``hooks.py``
at build time.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2

from dsfields import __version__
from dsfields.docs import groups
from dsfields.docs.filters import FILTERS
from dsfields.docs.i18n import SEARCH_TERMS, script_words, translator
from dsfields.docs.views import (
    CATALOGS,
    CHANGES,
    DEFAULTS,
    DEPRECATED,
    ENUMS,
    ERRORS,
    FIELDS,
    OFFICIAL,
    OVERVIEW,
    RELEASES,
    SKELETON,
    TEMPLATES,
    TYPOS,
    Page,
    Site,
    change_detail_html,
    load_examples,
)
from dsfields.model import prose
from dsfields.model.store import SNAPSHOT_FILE

LANDING_SNIPPET = f"{RELEASES}/_landing.md"
"""Newest release's overview with links relative to the site root, included by ``docs/index.md``."""
NAV_FILE = "nav.json"
GENERATED_BY = "dsfields docs build"
GUIDES_DIR = prose.PROSE_DIR / "guides"
GUIDES = "guides"
"""Folder under docs/ (and docs/zh/) of the guide pages, with the scripts they use."""
GUIDE_ASSETS = Path(__file__).resolve().parent / "assets"
"""Scripts of the guides (batch-calculator.js), copied into ``guides/`` (mkdocs.yml's extra_javascript)."""
FIELD_LINK = re.compile(r"\[([^\]]*)\]\(field:([^)#\s]+)\)")
"""A guide's link to a field: ``[text](field:zero_optimization.stage)``."""
HAND_WRITTEN_TITLES = {"resolve-migrate.md": "resolve and migrate", "estimate.md": "Memory estimate",
                       "snapshot-format.md": "Snapshot format", "check-output.md": "check in CI",
                       "editor-schema.md": "Editor schema", "journeys.md": "Practitioner journeys"}
"""Hand-written pages of docs/ in the nav (their ``<stem>.zh.md`` is the Chinese site's page, if any)."""


# ---------------------------------------------------------------- the pages of one language


def guides(lang: str) -> list[tuple[str, str, str]]:
    """(file name stem, title, Markdown) of every guide page of ``lang`` in nav order.

    Order: a leading number in the file name (``10-batch.md``) or a front-matter ``order:``; the
    title is the front matter's ``title:`` or the first ``# `` heading.
    """
    folder = GUIDES_DIR / lang
    found = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        text = path.read_text(encoding="utf-8")
        meta: dict[str, str] = {}
        if text.startswith("---\n") and "\n---\n" in text[4:]:
            head = text[4:text.index("\n---\n", 4)]
            meta = {k.strip(): v.strip().strip("\"'") for k, _, v in (line.partition(":") for line in head.splitlines())
                    if k.strip()}
        number = path.stem.split("-", 1)[0]
        order = float(meta["order"]) if meta.get("order", "").replace(".", "", 1).isdigit() else (
            float(number) if number.isdigit() else 1e9)
        title = meta.get("title") or next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")),
                                          path.stem)
        found.append((order, path.stem, title, text))
    return [(stem, title, text) for _, stem, title, text in sorted(found)]


def plan(site: Site) -> list[Page]:
    """Every generated page of ``site.lang``: each release's pages and field pages (identical field pages
    shared, see :attr:`Site.owners`), then the pages across releases."""
    examples = load_examples()
    pages: list[Page] = []
    errors = None
    if site.errors is not None:
        from dsfields.docs.errors_index import for_site

        errors = for_site(site.versions, site.lang, site.errors)

    def add(path: str, template: str, version: str | None = None, *, links_from: str | None = None,
            **extra: Any) -> None:
        release = site.release(version or site.newest, links_from or path)
        source = f"generated/{version}/{SNAPSHOT_FILE}" if version else "generated/"
        pages.append(Page(path, template, {"r": release, "site": site, "source": source, "_": release._, **extra}))

    for version in site.versions:
        add(f"{version}/{OVERVIEW}.md", "overview.md.j2", version, landing=False, page_key=OVERVIEW)
        add(f"{version}/{DEFAULTS}.md", "defaults.md.j2", version, page_key=DEFAULTS)
        add(f"{version}/{ENUMS}.md", "enums.md.j2", version, page_key=ENUMS)
        add(f"{version}/{SKELETON}.md", "skeleton.md.j2", version, page_key=SKELETON)
        add(f"{version}/{DEPRECATED}.md", "deprecated.md.j2", version, page_key=DEPRECATED)
        add(f"{version}/{CATALOGS}.md", "catalogs.md.j2", version, page_key=CATALOGS)
        add(f"{version}/{TEMPLATES}.md", "templates.md.j2", version, examples=examples, page_key=TEMPLATES)
        add(f"{version}/{TYPOS}.md", "typos.md.j2", version, page_key=TYPOS)
        if site.release(version, "").official_docs is not None:
            add(f"{version}/{OFFICIAL}.md", "official_docs.md.j2", version, page_key=OFFICIAL)
        if site.changes is not None:
            add(f"{version}/{CHANGES}.md", "changes.md.j2", version, page_key=CHANGES)
        if errors is not None:
            # One page for every release (stored once, the newest's: render_language), its script showing the
            # entries of the reader's release; only the newest's is rendered.
            add(f"{version}/{ERRORS}.md", "errors.md.j2", version, page_key=ERRORS, errors=errors,
                error_groups=error_groups)
        release = site.release(version, "")
        for top in [groups.TOP_LEVEL_PAGE, *release.top_sections]:
            if site.owners.get((version, top)) != version:
                continue
            template = "top_level.md.j2" if top == groups.TOP_LEVEL_PAGE else "section.md.j2"
            add(release.field_doc(top), template, version, top=top, covers=site.covers(version, top),
                page_key=f"{FIELDS}/{top}")
    add(f"{RELEASES}/index.md", "versions.md.j2")
    add(f"{RELEASES}/groups.md", "groups.md.j2", rules=groups.GROUPS)
    add(f"{RELEASES}/compare.md", "compare.md.j2")
    if site.index is not None:
        add(f"{RELEASES}/added.md", "added.md.j2")
        add(f"{RELEASES}/history.md", "history.md.j2")
    # Included into index.md, so its links are made relative to the site root.
    add(LANDING_SNIPPET, "overview.md.j2", site.newest, links_from="index.md", landing=True)
    return pages


def nav_of(site: Site, version: str, pages: set[str], moved: dict[str, str] | None = None) -> list[Any]:
    """mkdocs ``nav`` of one release's pages: every group (sections, and the top-level keys of groups
    that have no section: they are rows of the top-level page), its own pages, the pages across releases;
    a page stored once for several releases (``moved``: its path in this release → the owner's) is the owner's."""
    _ = translator(site.lang)
    release = site.release(version, "")

    def field_page(top: str) -> str:
        path = release.field_page(top)
        return (moved or {}).get(path, path)

    top_level = field_page(groups.TOP_LEVEL_PAGE)

    def entry(title: str, path: str) -> list[dict[str, str]]:
        path = (moved or {}).get(path, path)
        return [{title: path}] if path in pages else []

    items: list[Any] = entry(_("Overview"), f"{version}/{OVERVIEW}.md")
    items += entry(_("Top-level keys"), top_level)
    for view in release.group_views:
        group = view["group"]
        children: list[Any] = [{s: field_page(s)} for s in view["sections"]]
        if view["scalars"] and not children:
            # A link, not the page again: a page may appear once in a nav.
            children = [{_("Top-level keys"): top_level.removesuffix(".md") + "/#" + group.slug}]
        release_title = f"{group.number}. {_(group.title)}"
        items.append({release_title: children})
    for title, name in (("Config skeleton", SKELETON), ("Default values", DEFAULTS), ("Enums", ENUMS),
                        ("Deprecated and removed", DEPRECATED),
                        ("Optimizers and schedulers", CATALOGS), ("Templates A/B/C", TEMPLATES),
                        ("Typos and errors", TYPOS), ("Errors and warnings", ERRORS), ("What changed", CHANGES),
                        ("Official docs vs code", OFFICIAL)):
        items += entry(_(title), f"{version}/{name}.md")
    across = entry(_("All versions"), f"{RELEASES}/index.md") + entry(_("Added since"), f"{RELEASES}/added.md")
    across += entry(_("Changes between two releases"), f"{RELEASES}/compare.md")
    across += entry(_("Field history"), f"{RELEASES}/history.md") + entry(_("Section groups"), f"{RELEASES}/groups.md")
    title = f"DeepSpeed {version}" + (f" ({release.date})" if release.date else "")
    out: list[Any] = [{_("Home"): "index.md"}, {title: items}]
    guide_pages = [{title: f"{GUIDES}/{stem}.md"} for stem, title, _text in guides(site.lang)]
    if guide_pages:
        out.append({_("Guides"): guide_pages})
    out += [{_("Across releases"): across}]
    out += [{_(title): name} for name, title in HAND_WRITTEN_TITLES.items() if name in pages]
    return out


def nav(site: Site, pages: list[Page], hand_written: set[str] = frozenset(),  # type: ignore[assignment]
        moved: dict[str, str] | None = None) -> dict[str, Any]:
    """``releases/nav.json``: every release's nav and the release each page belongs to (hooks.py)."""
    built = {page.path for page in pages} | {f"{GUIDES}/{stem}.md" for stem, _t, _x in guides(site.lang)}
    built |= set(hand_written)
    releases = {version: nav_of(site, version, built, moved) for version in site.versions}
    owned = {page.path: page.path.split("/")[0] for page in pages if page.path.split("/")[0] in site.versions}
    return {"newest": site.newest, "releases": releases, "pages": owned}


STUB = """<!doctype html>
<!-- generated by {by}: the {page} page of DeepSpeed {version} is the same as {owner}'s, stored once -->
<html lang="{lang}"><head><meta charset="utf-8"><title>DeepSpeed {version}: {page}</title>
<link rel="canonical" href="{canonical}">
<script>location.replace("{target}" + location.hash);</script>
<meta http-equiv="refresh" content="0; url={target}">
</head><body><a href="{target}">DeepSpeed {version}: {page}</a></body></html>
"""


def stubs(site: Site, shared: dict[tuple[str, str], str] | None = None,
          field_owners: dict[tuple[str, str], str] | None = None) -> dict[str, str]:
    """Redirects keeping ``links.field_url`` valid for every release whose field page is shared with a
    later release (``field_owners``, by default :attr:`Site.owners`), and every release page stored once for
    several releases (``shared``: (release, page name) → owner, :func:`release_page_owners`); ``?v=`` tells the
    page which release the reader came for."""
    from dsfields.links import SITE_URL

    out: dict[str, str] = {}

    def canonical(path: str) -> str:
        # The release's own URL of the page (issue 41): what its sitemap lists, and what the stored page names
        # as its canonical when shown for this release (assets/dsfields.js). Relative without a site URL.
        if not SITE_URL:
            return "./"
        return SITE_URL + ("zh/" if site.lang == "zh" else "") + path.removesuffix("index.html")

    for (version, page), owner in (site.owners if field_owners is None else field_owners).items():
        if owner != version:
            target = f"../../../{owner}/{FIELDS}/{page}/?v={version}"
            path = f"{version}/{FIELDS}/{page}/index.html"
            out[path] = STUB.format(by=GENERATED_BY, page=page, version=version, owner=owner, target=target,
                                    lang=site.lang, canonical=canonical(path))
    for (version, name), owner in sorted((shared or {}).items()):
        if owner != version:
            # A release's overview is its folder's own index.html.
            folder = "" if name == OVERVIEW else f"{name}/"
            target = "../" * (folder.count("/") + 1) + f"{owner}/{folder}?v={version}"
            path = f"{version}/{folder}index.html"
            out[path] = STUB.format(by=GENERATED_BY, page=name, version=version, owner=owner, target=target,
                                    lang=site.lang, canonical=canonical(path))
    return out


# ---------------------------------------------------------------- release pages stored once (issue 24 point 6)

SHARED_PAGES = (OVERVIEW, SKELETON, DEFAULTS, ENUMS, DEPRECATED, CATALOGS, TEMPLATES, TYPOS, OFFICIAL)
"""Release pages that are stored once for a run of releases where they read the same but for the release
itself (its number and date, and links to its own pages): the page of the newest of the run, which
``assets/dsfields.js`` restates for the release the reader came for (``?v=``, ``data-covers``)."""
ONE_PAGE = (ERRORS,)
"""Release pages stored once for every release, whatever they read: the newest's, which lists what every release
has and whose script shows the reader's release's part (the errors-and-warnings index: its 77 releases' own pages
would weigh more than the rest of the site)."""
_VERSION_AT = r"(?<![\d.]){}(?![\d]|\.\d)"
_PAGE_LINK = re.compile(r"(?<![\w-])(?:\.\./)*(?:(\d+\.\d+\.\d+)/)?(" + "|".join(SHARED_PAGES)
                        + r"|fields/[\w-]+)(?=\.md|/)")


_SOURCE = re.compile(r'(<a class="dsf-src" data-v=")([^"]*)(">[^<]*?)(?::([^:<]*))?(</a>)')
"""A link to DeepSpeed's source as ``filters.source_anchor`` writes it: its release, file and line."""


def source_lines(text: str) -> list[str]:
    """The line of every source link of a rendered page, in the order of the page (``file:line`` → line)."""
    return [match.group(4) or "" for match in _SOURCE.finditer(text)]


def _without_lines(text: str) -> str:
    # The lines of DeepSpeed's source move between releases (an edit above a read shifts every line below it)
    # while what the page says stays the same: they are the release's data (:func:`line_restatements`),
    # restated by assets/dsfields.js, so they do not keep two releases' pages apart.
    return _SOURCE.sub(lambda m: f"{m.group(1)}@V{m.group(3)}:@L{m.group(5)}", text)


def _own_links(site: Site, version: str, text: str) -> str:
    """``text`` with its links to the release's own pages (a field page: the one it shows, wherever it is
    stored) made placeholders."""
    def link(match: re.Match[str]) -> str:
        linked, page = match.groups()
        if page.startswith(f"{FIELDS}/"):
            top = page.split("/", 1)[1]
            own = site.owners.get((version, top), version)
            return f"@F:{top}" if linked in (None, version, own) else match.group()
        return f"@P:{page}" if linked in (None, version) else match.group()

    return _PAGE_LINK.sub(link, text)


def _alike_text(site: Site, version: str, text: str) -> str:
    """A rendered release page with the release made a placeholder: its number, its date, links to its
    own pages, and the lines of its source links. Equal for two releases: the owner's page, restated for the
    other release (the number, the date, the lines), reads as that release's own."""
    text = _without_lines(_own_links(site, version, text))
    text = re.sub(_VERSION_AT.format(re.escape(version)), "@V", text)
    date = site.dates.get(version)
    return text.replace(date, "@D") if date else text


_FIELD_PAGE_RELEASE = [
    re.compile(r"(from generated/)[^/]+(/)"),  # the generated-by comment
    re.compile(r'( data-version=")[^"]*(")'),  # the page marker (assets/dsfields.js reads the shown release)
    re.compile(r'(<span class="dsf-shown-release">).*?(</span>)'),  # the section example's release
    re.compile(r'(<strong class="dsf-banner__release">).*?(</strong>)'),  # the banner, restated by the script
    re.compile(r'(<span class="dsf-banner__date">).*?(</span>)'),
    re.compile(r'(<span class="dsf-banner__newest">).*?(</span>)'),
]


def _alike_field_page(site: Site, version: str, text: str) -> str:
    """A rendered field page without what assets/dsfields.js restates for the reader's release: the banner's
    release, date and newest link, the marker, links to the release's own pages and the lines of its source
    links. Unlike a release page, a number in its text is never restated (a field's history names releases:
    "default changed in 0.19.3" is the same words on 0.19.3's page and on 0.19.4's), so two field pages are
    alike only where every other word is the same."""
    text = _COVERS_NOTE.sub("", _without_lines(_own_links(site, version, text)))
    for spot in _FIELD_PAGE_RELEASE:
        text = spot.sub(r"\1@\2", text)
    return text


_COVERS_NOTE = re.compile(r'<p class="dsf-covers">.*?</p>\n?| data-covers="[^"]*"', re.S)
"""The releases a shared page stands for: the marker's list and the note naming them (the script drops it)."""


def release_page_owners(site: Site, paths: dict[tuple[str, str], str], files: dict[str, str],
                        names: tuple[str, ...] = SHARED_PAGES) -> dict[tuple[str, str], str]:
    """(release, page name) → the release whose page is shown for it: the newest of a run of consecutive
    releases whose rendered pages (``paths``: (release, name) → docs/-relative file) are alike
    (:func:`_alike_text`)."""
    out: dict[tuple[str, str], str] = {}
    for name in names:
        out.update(_runs(site, name, paths, files, _alike_text))
    return out


def _runs(site: Site, name: str, paths: dict[tuple[str, str], str], files: dict[str, str],
          alike: Callable[[Site, str, str], str], identical: Callable[[str], str | None] = lambda v: v,
          ) -> dict[tuple[str, str], str]:
    """(release, ``name``) → the newest release of its run of consecutive releases whose rendered pages read
    ``alike``; ``identical(release)`` is the newer release whose page it is already (or itself; None: the
    release has no such page), met first on the way from the newest release down."""
    out: dict[tuple[str, str], str] = {}
    previous: tuple[str, str] | None = None  # (alike text, owner) of the next newer page
    for version in reversed(site.versions):
        own = identical(version)
        if own is not None and own != version:
            out[(version, name)] = out.get((own, name), own)
            continue
        path = paths.get((version, name))
        if own is None or path is None or path not in files:
            previous = None
            continue
        text = alike(site, version, files[path])
        owner = previous[1] if previous and previous[0] == text else version
        out[(version, name)] = owner
        previous = (text, owner)
    return out


_LINK_TARGET = re.compile(r'(\]\(|href=")([\w.~/-]*(?:\.md|/))(?=[#)"])')
"""A relative link to a page (a Markdown link to a .md file, or a site URL of raw HTML, which ends in /)."""


def _site_folder(doc: str) -> str:
    stem = doc.removesuffix(".md")
    return posixpath.dirname(stem) if posixpath.basename(stem) == "index" else stem


def relink(path: str, text: str, moved: dict[str, str]) -> str:
    """``text`` of the page ``path`` with its links to a moved page (docs/-relative .md path → the owner's)
    pointing at the owner's page: Markdown links to .md files and site URLs of raw HTML alike."""
    page = "index.md" if path == LANDING_SNIPPET else path  # the snippet's links are the home page's

    def fix(match: re.Match[str]) -> str:
        lead, target = match.groups()
        if target.endswith(".md"):
            base = posixpath.dirname(page)
            owner = moved.get(posixpath.normpath(posixpath.join(base, target)))
            return lead + posixpath.relpath(owner, base or ".") if owner else match.group()
        base = _site_folder(page) or "."
        resolved = posixpath.normpath(posixpath.join(base, target))
        owner = moved.get(resolved + ".md") or moved.get(resolved + "/index.md")
        return lead + posixpath.relpath(_site_folder(owner), base) + "/" if owner else match.group()

    return _LINK_TARGET.sub(fix, text)


def _is_field_page(page: Page) -> bool:
    return str(page.context.get("page_key") or "").startswith(f"{FIELDS}/")


def field_page_owners(site: Site, paths: dict[tuple[str, str], str],
                      files: dict[str, str]) -> dict[tuple[str, str], str]:
    """(release, ``fields/<top>``) → the release whose field page is shown for it: :attr:`Site.owners` (identical
    records), then the newest of a run of those owners whose rendered pages (``paths``: (release, page key) →
    docs/-relative file) read alike (:func:`_alike_field_page`): most differ only in their source lines."""
    out: dict[tuple[str, str], str] = {}
    for top in sorted({top for _version, top in site.owners}):
        out.update(_runs(site, f"{FIELDS}/{top}", paths, files, _alike_field_page,
                         lambda version, top=top: site.owners.get((version, top))))
    return out


def line_restatements(owners: dict[tuple[str, str], str], paths: dict[tuple[str, str], str],
                      files: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """Release → page key → the lines of its page's source links, where the page shown for it (``owners``'s)
    has other lines: the release data's ``lines``, which assets/dsfields.js writes into the shown page."""
    out: dict[str, dict[str, list[str]]] = {}
    found: dict[str, list[str]] = {}  # a page shown for many releases is read once

    def lines_of(path: str) -> list[str]:
        if path not in found:
            found[path] = source_lines(files[path])
        return found[path]

    for (version, name), owner in owners.items():
        own, shown = paths.get((version, name)), paths.get((owner, name))
        if owner == version or own not in files or shown not in files or own == shown:
            continue
        if lines_of(own) != lines_of(shown):
            out.setdefault(version, {})[name] = lines_of(own)
    return out


def _lines_note(text: str, owner: str, lang: str) -> str:
    """A page stored once for releases whose source lines differ says, for a reader without its script, whose
    lines it shows (the script writes the reader's release's lines and drops the note)."""
    note = translator(lang)("Its source lines are those of DeepSpeed {v}; the page's script shows each "
                            "release's own.").replace("{v}", owner)
    return re.sub(r'(<p class="dsf-covers">.*?)(</p>)', lambda m: f"{m.group(1)} {note}{m.group(2)}", text,
                  count=1, flags=re.S)


STUBS_FILE = "stubs.json"
"""Redirect pages for the hook to write straight into the built site (see hooks.py: on_post_build)."""
DATA_FILE = "site-data.json"
"""What the version selector and the search hook know about every release (assets/dsfields.js)."""
KEYS_FILE = "keys.json"
"""Every distinct finder entry of any release (:func:`keys_of`, :func:`catalog_keys`) once; each release's
data (:func:`release_data`) lists the entries it has by their index in this table."""
CHANGES_FILE = "changes.json"
"""Per release, the changes ``dsfields.diff`` finds from the previous one (the pair picker chains them)."""


def site_data(site: Site, pages: list[Page]) -> dict[str, Any]:
    """``releases/site-data.json``: what every page needs before it knows its release (releases, dates);
    each release's own pages, fields and nav are in :func:`release_data` (fetched for the release shown); the names
    of the guides each release lacks (:mod:`dsfields.docs.guide_scope`), marked for the guide's reader."""
    from dsfields.docs.guide_scope import guide_scope, message_scope

    texts = [text for _stem, _title, text in guides(site.lang)]
    return {"newest": site.newest, "versions": site.versions,
            "dates": {v: site.dates.get(v) for v in site.versions}, "lang": site.lang,
            "words": script_words(site.lang), "terms": SEARCH_TERMS.get(site.lang, {}),
            "guide_scope": guide_scope(texts, site.snapshots, site.versions, os.fspath(site.generated)),
            "guide_messages": message_scope(texts, site.versions, os.fspath(site.generated))}


# ---------------------------------------------------------------- per-release data (issue 24: one release per URL)

RELEASE_DATA_FOLDER = "data"
"""``releases/data/<version>.json``: one release's pages, fields and nav (:func:`release_data`)."""
ANCHORS_FILE = "anchors.json"
"""Anchor → JSON path of every key of any release (the "not in this release" notice of an unknown anchor)."""


def _nav_url(target: str) -> str:
    """A nav.json target (a docs/-relative .md path, or a site-root URL with an anchor) as a site-root URL."""
    if not target.endswith(".md"):
        return target
    stem = target.removesuffix(".md")
    if stem == "index":
        return ""
    return stem.removesuffix("index") if stem.endswith("/index") else stem + "/"


def _client_nav(items: list[Any]) -> list[Any]:
    """nav.json's items as ``[title, url]`` (a page or link) or ``[title, null, children]`` (a section)."""
    out: list[Any] = []
    for item in items:
        for title, target in item.items():
            out.append([title, None, _client_nav(target)] if isinstance(target, list) else [title, _nav_url(target)])
    return out


def page_urls(site: Site, pages: list[Page]) -> dict[str, dict[str, str]]:
    """Per release: page key (``index``, ``default-values``, ``fields/<top>``) → its URL from the site root,
    the owner's for a field page shared with a later release."""
    urls: dict[str, dict[str, str]] = {v: {} for v in site.versions}
    for page in pages:
        key = page.context.get("page_key")
        if key is None:
            continue
        url = page.path.removesuffix(".md") + "/"
        url = url.removesuffix("index/") if url.endswith("/index/") else url
        for version in page.context.get("covers") or [page.path.split("/")[0]]:
            urls[version][key] = url
    return urls


def keys_table(site: Site) -> tuple[list[list[str]], dict[str, list[int]]]:
    """(:data:`KEYS_FILE`'s entries, each release's entries by index): the finder's keys of every release,
    an entry the same in many releases (most are) stored once."""
    table: dict[tuple[str, ...], int] = {}
    chosen: dict[str, list[int]] = {}
    for version in site.versions:
        chosen[version] = [table.setdefault(tuple(entry), len(table))
                           for entry in keys_of(site, version) + catalog_keys(site, version)]
    return [list(entry) for entry in table], chosen


def release_data(site: Site, version: str, urls: dict[str, str], release_nav: list[Any],
                 keys: list[int] | None = None, lines: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """``releases/data/<version>.json``: the release's pages (key → URL), its fields' anchors and its
    nav, so assets/dsfields.js can show this release's sidebar, footer and links on a page stored once for
    several releases (or on a page across releases) without the reader seeing where the page is stored; its
    fields are their anchors (the script makes a set of them); and
    ``lines``, page key → the line of each of its source links in this release, where the page it is shown
    on (another release's) has other lines."""
    snapshot = site.snapshots[version]
    paths = {*snapshot.get("fields", {}), *snapshot.get("removed", {})}
    release_title = next(iter(release_nav[1])) if len(release_nav) > 1 else f"DeepSpeed {version}"
    # The anchors alone: the script only asks whether the release has a key (an anchor → path map was half of
    # every release's data; anchors.json maps them to paths for the notice of a key the release lacks).
    return {"version": version, "title": release_title, "pages": urls,
            "fields": sorted({FILTERS["anchor"](p) for p in paths}), "nav": _client_nav(release_nav),
            "keys": keys or [], **({"lines": dict(sorted(lines.items()))} if lines else {})}


def all_anchors(site: Site) -> dict[str, str]:
    """:data:`ANCHORS_FILE`: anchor → JSON path of every key any release has (the newest spelling wins)."""
    out: dict[str, str] = {}
    for version in site.versions:
        snapshot = site.snapshots[version]
        for path in {*snapshot.get("fields", {}), *snapshot.get("removed", {})}:
            out[FILTERS["anchor"](path)] = path
    return dict(sorted(out.items()))


def keys_of(site: Site, version: str) -> list[list[str]]:
    """[path, python path, page key#anchor, our one-line summary, flags] of every key of a release, for search."""
    release = site.release(version, "")
    out = []
    snapshot = site.snapshots[version]
    for path in sorted({*snapshot.get("fields", {}), *snapshot.get("removed", {})}):
        record = snapshot.get("fields", {}).get(path) or snapshot["removed"][path]
        page, anchor = groups.field_location(path, snapshot)
        url = f"{FIELDS}/{page}#{anchor}"  # page key#anchor: the release data says where that page is
        name = record.get("python_name")
        section = record.get("section") or ""
        python_path = (f"{section}.{name}" if section else name) if name and name != record.get("key") else ""
        ex = release.explain(path)
        # Flags for the finder's ranking: s section, d deprecated, r removed (rejected).
        flags = ("s" if path in snapshot.get("sections", {}) else "") + ("d" if record.get("deprecated") else "") + (
            "r" if path in snapshot.get("removed", {}) and path not in snapshot.get("fields", {}) else "")
        out.append([path, python_path, url, ex.summary if ex else "", flags])
    return out


def catalog_keys(site: Site, version: str) -> list[list[str]]:
    """Optimizer and scheduler types as search entries (``WarmupLR`` finds the scheduler catalogue)."""
    release = site.release(version, "")
    out = []
    for section, catalog in release.catalogs:
        for name in sorted(catalog.get("names") or {}):
            ex = release.explain_type(section, name)
            out.append([f"{section}.type = {name}", "", f"{CATALOGS}#{section}-{name}".lower(),
                        ex.summary if ex else ""])
    return out


def guide_markdown(site: Site, stem: str, text: str) -> str:
    """A guide page with its ``field:`` links pointing at the newest release's field pages."""
    page = f"{GUIDES}/{stem}.md"
    release = site.release(site.newest, page)

    def link(match: re.Match[str]) -> str:
        text, path = match.groups()
        if not release.is_documented(path) and path not in release.sections_raw:
            # tests/test_guides.py holds the guides to the real newest release; a site built from other
            # snapshots (the tests' fixtures) shows the text unlinked.
            return text
        # the key's whole path on the link (data-key): the guides' scope (assets/dsfields.js) marks a block whose
        # link names a key the reader's release lacks, though its text says only "ratio"
        return f"[{text}]({release.field_link(path)}){{ data-key=\"{path}\" }}"

    source = f"extractor/dsfields/prose/guides/{site.lang}/{stem}.md"
    header = f"<!-- generated by `{GENERATED_BY}` (dsfields {__version__}) from {source}: edit that file -->\n"
    return header + FIELD_LINK.sub(link, text)


def hand_written_pages(docs_dir: Path, lang: str) -> dict[str, str]:
    """The hand-written pages of docs/ for one language's site (name → Markdown).

    English: every ``docs/*.md`` but ``*.<lang>.md``; another language: ``<stem>.<lang>.md`` as
    ``<stem>.md`` where it exists, else the English page with a note that it is English.
    """
    sources = sorted(p for p in docs_dir.glob("*.md") if not re.search(r"\.[a-z]{2}\.md$", p.name))
    if lang == "en":
        return {p.name: p.read_text(encoding="utf-8") for p in sources}
    out = {}
    for source in sources:
        translated = source.with_name(f"{source.stem}.{lang}.md")
        if translated.is_file():
            out[source.name] = translated.read_text(encoding="utf-8")
            continue
        text = source.read_text(encoding="utf-8")
        note = translator(lang)("This page is for developers and is written in English only.")
        head, newline, rest = text.partition("\n")
        out[source.name] = f'{head}{newline}\n!!! note ""\n    {note}\n{rest}' if head.startswith("# ") else text
    return out


def changes_data(site: Site) -> dict[str, list[list[Any]]]:
    """``releases/changes.json``: per release, its changes from the previous one (as far as diffed); the
    detail as HTML in the site's language (:func:`change_detail_html`)."""
    return {v: [[c.kind.value, c.path, change_detail_html(c, site.lang)] for c in items]
            for v, items in (site.changes or {}).items()}


ERRORS_FILE = "errors.json"
"""The errors-and-warnings index as the language's site shows it (:func:`dsfields.docs.errors_index.for_site`)."""


def _span(site: Site, runs: list[list[int]], _: Callable[[str], str]) -> str:
    """The releases of runs of ``site.versions`` in words."""
    said = []
    for first, last in runs:
        a, b = site.versions[first], site.versions[last]
        said.append(a if a == b else _("{a} to {b}").format(a=a, b=b))
    count = sum(last - first + 1 for first, last in runs)
    span = ", ".join(said)
    return _("{span} (1 release)").format(span=span) if count == 1 else _("{span} ({n} releases)").format(
        span=span, n=count)


def error_groups(r: Any, site: Site, document: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of the errors-and-warnings page (``document``: :func:`dsfields.docs.errors_index.for_site`'s),
    by the dictionary's group of a key all its releases name (else misc): each with its releases as ``first-last``
    runs of ``site.versions`` (``data-runs``, read by assets/dsfields.js) and in words, and its variants (one per run
    of releases alike), each with its keys linked to their history across releases (else their nearest parent's),
    its source and fix."""
    from dsfields.links import anchor

    _ = r._

    def key_href(key: str) -> str | None:
        # the key's history across releases: the same address for the reader of any release (an entry's releases
        # differ, and the page is one for all), its row linking the key's entry in each release; a key the
        # history does not list (a name DeepSpeed's message uses for a section's part) goes to its nearest parent
        known = r.history or {}  # none without generated/index.json (the history pages are left out then)
        path = key
        while path and path not in known:
            path = path.rpartition(".")[0]
        return r.global_href("history", anchor(path)) if path else None

    def data_runs(runs: list[list[int]]) -> str:  # data-runs, as assets/dsfields.js reads it
        return " ".join(f"{first}-{last}" for first, last in runs)

    def variant(shown: dict[str, Any], several: bool) -> dict[str, Any]:
        file_line, _at, version = shown["raised_at"].rpartition("@")
        file, _colon, line = file_line.rpartition(":")
        return {**shown, "runs": data_runs(shown["releases"]),
                "span": _span(site, shown["releases"], _) if several else None,
                "links": [(key, key_href(key)) for key in shown["keys"]],
                "source": {"file": file, "line": int(line) if line.isdigit() else None}, "source_version": version,
                # each release's line, for the page's script to show its reader's (data-lines)
                "line_runs": " ".join(f"{first}-{last}:{at}" for first, last, at in shown.get("lines") or [])}

    grouped: dict[int, dict[str, Any]] = {}
    for entry in document["entries"]:
        variants = entry["variants"]
        # grouped by a key every release of the entry names (a heading must be true for each of them), else misc
        common = [key for key in entry["keys"] if all(key in v["keys"] for v in variants)]
        group = groups.group_of(groups.top_key(common[0])) if common else groups.MISC
        shown = grouped.setdefault(group.number, {"group": group, "title": f"{group.number}. {_(group.title)}",
                                                  "entries": []})
        config = entry.get("config")
        shown["entries"].append({
            **entry, "runs": data_runs(entry["releases"]), "span": _span(site, entry["releases"], _),
            "variants": [variant(v, len(variants) > 1) for v in variants],
            "config_text": json.dumps(config["config"], indent=2, ensure_ascii=False) if config else None,
            "config_runs": data_runs(config.get("releases") or []) if config else "",
        })
    return [grouped[number] for number in sorted(grouped)]


def release_page(site: Site, path: str, release: str) -> bool:
    """Whether the docs/-relative page ``path`` is one of ``release``'s (for ``docs build --release``): its
    folder, and for the newest release the landing snippet the home page shows."""
    return path.startswith(f"{release}/") or (release == site.newest and path == LANDING_SNIPPET)


def render_language(site: Site, env: jinja2.Environment, hand_written: set[str] = frozenset(),  # type: ignore[assignment]
                    only: str | None = None) -> tuple[dict[str, str], list[Page]]:
    """Every file of one language's docs folder (paths relative to it); with ``only``, the pages of that
    release and every data file (navs, redirects, site data), but no other page."""
    pages = plan(site)
    header = {"by": GENERATED_BY, "dsfields": __version__}

    def render(page: Page) -> str:
        return env.get_template(page.template).render(header=header, **page.context)

    # Every release's shareable pages are rendered, also for one release (``only``): who shares whose page
    # depends on the neighbours.
    def wanted(page: Page) -> bool:
        if page.context.get("page_key") in ONE_PAGE:  # one page for every release: the newest's
            return page.path.split("/")[0] == site.newest
        return (only is None or release_page(site, page.path, only)
                or page.context.get("page_key") in SHARED_PAGES or _is_field_page(page))

    files = {page.path: render(page) for page in pages if wanted(page)}
    paths = {(page.path.split("/")[0], page.context["page_key"]): page.path for page in pages
             if page.context.get("page_key") in SHARED_PAGES + ONE_PAGE}
    shared = release_page_owners(site, paths, files)
    shared.update({(version, name): site.newest for version, name in paths if name in ONE_PAGE})
    lines = line_restatements(shared, paths, files)
    moved = {paths[(version, name)]: paths[(owner, name)] for (version, name), owner in shared.items()
             if owner != version}
    # Field pages that read alike but for their source lines (and what the script restates) are stored once
    # more (issue 24 point 6): the newest of a run of owners keeps the page.
    field_paths = {(page.path.split("/")[0], page.context["page_key"]): page.path for page in pages
                   if _is_field_page(page)}
    field_owners = field_page_owners(site, field_paths, files)
    # A release's own page is the one of identical records (Site.owners) it was already shown.
    identical = {(version, f"{FIELDS}/{top}"): field_paths[(owner, f"{FIELDS}/{top}")]
                 for (version, top), owner in site.owners.items() if (owner, f"{FIELDS}/{top}") in field_paths}
    for version, restated in line_restatements(field_owners, identical, files).items():
        lines.setdefault(version, {}).update(restated)
    moved.update({field_paths[(version, name)]: field_paths[(owner, name)] for (version, name), owner
                  in field_owners.items() if owner != version and (version, name) in field_paths})
    kept = []
    for page in pages:
        name = page.context.get("page_key")
        version = page.path.split("/")[0]
        if page.path in moved:
            files.pop(page.path, None)
            continue
        kept.append(page)
        owners = shared if name in SHARED_PAGES + ONE_PAGE else field_owners if _is_field_page(page) else None
        if owners is not None:
            covers = [v for v in site.versions if owners.get((v, name)) == version]
            if len(covers) > 1 and covers != page.context.get("covers"):
                page.context["covers"] = covers
                if page.path in files:
                    files[page.path] = render(page)
            if len(covers) > 1 and page.path in files and any(name in lines.get(v, {}) for v in covers):
                files[page.path] = _lines_note(files[page.path], version, site.lang)
            if only is not None and not release_page(site, page.path, only):
                files.pop(page.path, None)
    pages = kept
    from dsfields.docs import inference_pages  # issue 29: each release's inference section, its own module

    # The inference section's fields and defaults pages are stored once the same way (issue 29's section).
    inference = inference_pages.pages(site)
    inference_paths = {(v, inference_pages.page_key(n)): inference_pages.page_path(v, n)
                       for v in site.versions for n in inference_pages.SHAREABLE}
    inference_shared = release_page_owners(site, inference_paths, inference,
                                           tuple(inference_pages.page_key(n) for n in inference_pages.SHAREABLE))
    for version, restated in line_restatements(inference_shared, inference_paths, inference).items():
        lines.setdefault(version, {}).update(restated)
    for (version, name), owner in inference_shared.items():
        path = inference_paths[(version, name)]
        if owner != version:
            moved[path] = inference_paths[(owner, name)]
            inference.pop(path)
        else:
            inference[path] = inference_pages.with_covers(
                inference[path], [v for v in site.versions if inference_shared.get((v, name)) == version])
    shared.update(inference_shared)
    files.update({path: text for path, text in inference.items()
                  if only is None or path.startswith(f"{only}/")})
    if moved:
        files = {path: relink(path, text, moved) if path.endswith(".md") else text for path, text in files.items()}
    navs = nav(site, pages, hand_written, moved)
    inference_pages.extend_nav(site, navs, moved)
    files[f"{RELEASES}/{NAV_FILE}"] = json.dumps(navs, indent=0, ensure_ascii=False) + "\n"
    files[f"{RELEASES}/{STUBS_FILE}"] = json.dumps(stubs(site, shared, {(v, name.split("/", 1)[1]): owner
                                                                         for (v, name), owner in field_owners.items()}),
                                                  indent=0, sort_keys=True) + "\n"
    files[f"{RELEASES}/{DATA_FILE}"] = json.dumps(site_data(site, pages), ensure_ascii=False) + "\n"
    urls = page_urls(site, pages)
    inference_pages.extend_urls(site, urls, moved)
    key_entries, release_keys = keys_table(site)
    files[f"{RELEASES}/{KEYS_FILE}"] = json.dumps(key_entries, ensure_ascii=False, separators=(",", ":")) + "\n"
    for version in site.versions:
        data = release_data(site, version, urls[version], navs["releases"][version], release_keys[version],
                            lines.get(version))
        files[f"{RELEASES}/{RELEASE_DATA_FOLDER}/{version}.json"] = json.dumps(data, ensure_ascii=False) + "\n"
    files[f"{RELEASES}/{ANCHORS_FILE}"] = json.dumps(all_anchors(site), ensure_ascii=False) + "\n"
    errors = next((page.context["errors"] for page in pages if page.context.get("page_key") == ERRORS), None)
    if errors is not None:
        files[f"{RELEASES}/{ERRORS_FILE}"] = json.dumps(errors, ensure_ascii=False, separators=(",", ":")) + "\n"
    if site.changes is not None and only is None:
        files[f"{RELEASES}/{CHANGES_FILE}"] = json.dumps(changes_data(site), ensure_ascii=False) + "\n"
    from dsfields.schema import history_of

    schema_history = history_of(site.index)
    for version in site.versions if only is None else [only]:
        files.update(schema_files(version, site.snapshots[version], site.lang, schema_history, site.generated))
    for stem, _title, text in guides(site.lang):
        files[f"{GUIDES}/{stem}.md"] = guide_markdown(site, stem, text)
    for script in sorted(GUIDE_ASSETS.glob("*.js")):
        files[f"{GUIDES}/{script.name}"] = script.read_text(encoding="utf-8")
    return files, pages


def schema_files(version: str, snapshot: dict[str, Any], lang: str, history: dict[str, Any],
                 generated: Path | None = None) -> dict[str, str]:
    """``<release>/ds_config.schema.json`` and its ``--hf`` variant, in the site's language: the files the
    schemas' ``$id`` names (with ``links.SITE_URL`` set), so editors and SchemaStore can point at them; their
    large sections are references to files shared by every release that has them the same
    (``dsfields.docs.schemas``), returned here too; ``history`` dates deprecations and removals."""
    from dsfields.docs.schemas import split
    from dsfields.links import SITE_URL
    from dsfields.schema import build_schema, schema_file

    files: dict[str, str] = {}
    for hf in (False, True):
        schema = split(build_schema(snapshot, site_url=SITE_URL, lang=lang, hf=hf, history=history,
                                    history_links=True,
                                    generated=str(generated) if generated is not None else None), files)
        files[f"{version}/{schema_file(hf)}"] = json.dumps(schema, sort_keys=True, ensure_ascii=False,
                                                           separators=(",", ":")) + "\n"
    return files
