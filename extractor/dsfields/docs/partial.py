"""``python -m dsfields.docs.partial``: rebuild one release's pages into a built site (``docs build --release``).

mkdocs has no build of a subset of pages (``--dirty`` rebuilds by file time, and leaves the search
index holding only the rebuilt pages), so this runs mkdocs' own build steps — config, plugins' events,
files, navigation, ``_populate_page`` and ``_build_page`` — on the release's pages only, with the whole
site's files and navs, so every page comes out byte for byte as a full build writes it:

- the pages under ``<release>/`` (and the home page, which shows the newest release's overview, when
  the release is the newest), rendered with the release's own nav (``hooks.py``);
- the release's redirect stubs (``releases/stubs.json``);
- the search index: the rebuilt pages' entries replace theirs in place (pages of older releases are
  not in it, so it changes only for the newest);
- the navs of older releases built before each page, in a full build's order: building a nav sets the
  previous/next links of the pages in it, shared pages too (``hooks.release_nav``);
- ``--strict``: a warning fails the rebuild as it fails a full build; links to anchors of pages outside
  the release are checked against those pages, rendered (not written) for that purpose.

Theme files, assets, sitemap and the 404 page are not rewritten: they do not depend on a release.
One site per call (``--config-file mkdocs.yml`` or ``mkdocs.zh.yml``); ``dsfields docs build --release``
runs the English and the Chinese one side by side.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from dsfields.docs.schemas import SHARED_FOLDER
from dsfields.model.errors import SnapshotError, standalone
from dsfields.model.safewrite import write_text

CHILD_ENV = "DSFIELDS_DOCS_CHILD"
"""hooks.py: set, the English build does not start the Chinese one."""


def selected(src_uri: str, release: str, newest: str) -> bool:
    return src_uri.startswith(f"{release}/") or (release == newest and src_uri == "index.md")


def build_release(config_file: Path, site_dir: Path, release: str) -> int:
    """Rebuild ``release``'s pages of the site of ``config_file`` into ``site_dir``: 0, or 1 on a warning."""
    os.environ[CHILD_ENV] = "1"
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs import utils
    from mkdocs.commands.build import _build_page, _populate_page
    from mkdocs.config import load_config
    from mkdocs.structure.files import InclusionLevel, get_files, set_exclusions
    from mkdocs.structure.nav import get_navigation
    from mkdocs.structure.pages import Page

    logger = logging.getLogger("mkdocs")
    counter = utils.CountHandler()
    counter.setLevel(logging.WARNING)
    logger.addHandler(counter)
    try:
        config = load_config(config_file=str(config_file), site_dir=str(site_dir), strict=True)
        config.plugins.on_startup(command="build", dirty=False)
        config = config.plugins.on_config(config)
        config.plugins.on_pre_build(config=config)
        docs_dir = Path(config["docs_dir"])
        navs = json.loads((docs_dir / "releases" / "nav.json").read_text(encoding="utf-8"))
        if release not in navs["releases"]:
            raise SnapshotError(f"no release {release} in {docs_dir}")
        files = get_files(config)
        env = config.theme.get_env()
        files.add_files_from_theme(env, config)
        files = config.plugins.on_files(files, config=config)
        set_exclusions(files, config)
        nav = get_navigation(files, config)
        nav = config.plugins.on_nav(nav, config=config, files=files)
        doc_files = files.documentation_pages(inclusion=InclusionLevel.is_included)
        for file in doc_files:
            if file.page is None and file.inclusion.is_not_in_nav():
                Page(None, file, config)
        chosen = [file for file in doc_files if selected(file.src_uri, release, navs["newest"])]
        for file in chosen:
            _populate_page(file.page, config, files)
        # The other pages of the release's nav show their titles in it (and as previous/next): read them
        # as a full build has; a page without a front-matter title takes it from its rendered heading.
        def read(page: Page | None) -> None:
            if page is not None and page.markdown is None:
                page.read_source(config)
                if "title" not in page.meta:
                    _populate_page(page, config, files)

        for path in _nav_paths(navs["releases"][release]):
            target = files.get_file_from_path(path)
            if target is not None and target not in chosen:
                read(target.page)
        env = config.plugins.on_env(env, config=config, files=files)
        # In the order of a full build: the navs it builds before each page (see hooks.release_nav).
        hooks = next(plugin for plugin in config.plugins.values() if hasattr(plugin, "release_nav"))
        remaining = set(chosen)
        for file in doc_files:
            if not remaining:
                break
            if file in remaining:
                remaining.discard(file)
                read(file.page.previous_page)  # the footer shows the neighbours' titles
                read(file.page.next_page)
                _build_page(file.page, config, doc_files, nav, env, excluded=file.inclusion.is_excluded())
            elif (owner := hooks.page_release(file.src_uri)) != navs["newest"]:
                hooks.release_nav(owner, config)
        # Anchors of pages outside the release: render those pages (not written) so mkdocs can check them.
        for file in chosen:
            for target in file.page.links_to_anchors or {}:
                if target.page is not None and target.page.present_anchor_ids is None:
                    _populate_page(target.page, config, files)
        for file in chosen:
            file.page.validate_anchor_links(files=files, log_level=config.validation.links.anchors)
        # The release's own files that are not pages (its ds_config.schema.json and the --hf one, and the
        # shared schema sections they reference): copied as a full build copies them.
        for file in files.static_pages():
            shared = file.src_uri.startswith(f"{SHARED_FOLDER}/")
            if (selected(file.src_uri, release, navs["newest"]) or shared) and file.inclusion.is_included():
                file.copy_file()
        _write_stubs(docs_dir, site_dir, release)
        _merge_search_index(config, site_dir, [file.page for file in chosen], hooks)
        if counts := counter.get_counts():
            print("dsfields docs: " + ", ".join(f"{v} {k.lower()}s" for k, v in counts)
                  + f" rebuilding {release} in strict mode", file=sys.stderr)
            return 1
        return 0
    finally:
        logger.removeHandler(counter)


def _nav_paths(nav: object) -> list[str]:
    """Every page path of a nav (``releases/nav.json``: lists of {title: path or nav})."""
    if isinstance(nav, str):
        return [] if "#" in nav or "://" in nav else [nav]
    items = nav.values() if isinstance(nav, dict) else nav if isinstance(nav, list) else []
    return [path for item in items for path in _nav_paths(item)]


def _write_stubs(docs_dir: Path, site_dir: Path, release: str) -> None:
    stubs = json.loads((docs_dir / "releases" / "stubs.json").read_text(encoding="utf-8"))
    for path, html in stubs.items():
        if path.startswith(f"{release}/"):
            target = site_dir / path
            write_text(target, html, durable=False)


def _merge_search_index(config: object, site_dir: Path, pages: list, hooks: object) -> None:
    """The rebuilt pages' search entries in place of theirs (same order as a full build: by page), with the
    glossary's words a full build gives them (``hooks.augment_search``)."""
    plugin = config.plugins.get("material/search") or config.plugins.get("search")  # type: ignore[attr-defined]
    index_path = site_dir / "search" / "search_index.json"
    if plugin is None or not index_path.is_file():
        return
    hooks.augment_search(config, plugin.search_index.entries)  # type: ignore[attr-defined]
    fresh: dict[str, list] = {}
    for entry in plugin.search_index.entries:
        fresh.setdefault(entry["location"].split("#")[0], []).append(entry)
    urls = {page.url for page in pages}
    old = json.loads(index_path.read_text(encoding="utf-8"))["docs"]
    merged, placed = [], set()
    for entry in old:
        url = entry["location"].split("#")[0]
        if url not in urls:
            merged.append(entry)
        elif url not in placed:
            placed.add(url)
            merged.extend(fresh.get(url, []))
    # A rebuilt page that had no entries before (it was excluded): appended; a full build orders it by page.
    for url in [page.url for page in pages]:
        if url not in placed and fresh.get(url):
            merged.extend(fresh[url])
    plugin.search_index.entries = merged
    data = plugin.search_index.generate_search_index(None)
    if data != index_path.read_text(encoding="utf-8"):
        write_text(index_path, data, durable=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.docs.partial", description=__doc__.split("\n")[0])
    parser.add_argument("--config-file", type=Path, required=True)
    parser.add_argument("--site-dir", type=Path, required=True, help="the built site to update")
    parser.add_argument("--release", required=True)
    args = parser.parse_args(argv)
    return build_release(args.config_file, args.site_dir.resolve(), args.release)


if __name__ == "__main__":
    sys.exit(standalone(main, "dsfields docs"))
