"""mkdocs hooks (``hooks:`` in mkdocs.yml): per-release navigation, pre-rendered HTML, redirects, the Chinese site.

- **Navigation per release.** ``dsfields docs build`` writes ``releases/nav.json``: the nav of every
  release and which release each page belongs to. ``on_config`` hands mkdocs the newest release's
  nav; ``on_page_context`` swaps in the nav of the page's own release, so a 0.14.4 page's sidebar
  lists 0.14.4's pages (77 navs in one nav would make every page quadratic).
- **Pre-rendered HTML.** Generated pages carry their bulk (field facts, tables) as HTML between
  ``<!--raw-->`` and ``<!--/raw-->``; Python-Markdown spends most of a build parsing raw HTML, so
  ``on_page_markdown`` lifts those chunks out and ``on_page_content`` puts them back. Headings stay
  Markdown, so the table of contents and search sections are mkdocs' own.
- **Nav memo.** Material renders the page's whole release nav on every page; ``on_env`` routes its nav
  item macro through ``_nav_item``: a page keeps the top-level links, the way to itself (its release,
  group, its entry with its table of contents) and its siblings, rendered once per set of relative URLs
  and reused byte for byte; the rest of the nav (the other groups and top-level sections) is drawn by
  ``assets/dsfields.js`` from the release's nav in ``releases/data/<version>.json``, fetched once.
- **Redirects.** Field URLs of releases whose section is identical to a later release's page are
  tiny redirects (``releases/stubs.json``), written straight into the site by ``on_post_build``.
- **Chinese.** The same render writes ``zh/`` (``mkdocs.zh.yml`` builds it with the ``zh`` UI and
  jieba-segmented search); the English build starts that build in a child process at ``on_config``
  (two cores, two builds) and moves its output to ``site/zh/`` at ``on_post_build``.

- **Page cache.** A built page is kept in ``.cache/docs-pages/<site>/`` next to mkdocs.yml (folder:
  ``$DSFIELDS_DOCS_CACHE``; ``0`` turns the cache off), keyed by a hash of everything its HTML is made
  of: its Markdown and front matter, its path, the config files, this file, the versions of mkdocs,
  Material, Markdown, pymdown-extensions and jieba, ``releases/nav.json`` and the list of the site's
  files. A page whose key is cached is not converted nor templated again: its HTML, search entries,
  title and anchors come from the cache, so the output is the same bytes; the links to anchors it holds
  are still checked against the other pages. Every release nav is still built in the same order (it
  sets the neighbours of shared pages). Pages are cached only from a build without warnings.

mkdocs loads this file by path, so it imports nothing from dsfields: plain ``mkdocs build`` /
``mkdocs serve`` work after a render.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from dsfields.model import chinese

log = logging.getLogger("mkdocs.hooks.dsfields")

GENERATED = Path("releases")
RAW = re.compile(r"^<!--raw-->\n(.*?)\n<!--/raw-->$", re.S | re.M)
PLACEHOLDER = "DSFRAW{}X"
PLACED = re.compile(r"<p>DSFRAW(\d+)X</p>")
CHILD_ENV = "DSFIELDS_DOCS_CHILD"

CACHE_ENV = "DSFIELDS_DOCS_CACHE"
CACHED_TEMPLATE = "dsfields-cached-page.html"
"""An empty template for cached pages (``on_post_page`` puts the cached HTML in its place)."""
_PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "jieba")

_raw: dict[str, list[str]] = {}
_navs: dict[str, Any] = {}
_state: dict[str, Any] = {}
_cache: dict[str, Any] = {}
_links: dict[str, dict[int, tuple[Any, Any, Any]]] = {}
"""Per release: id of each page in its nav → (previous page, next page, parent section) there."""


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _cache_start(config: Any) -> None:
    _cache.clear()
    setting = os.environ.get(CACHE_ENV, "")
    if setting == "0":
        return
    config_file = Path(config["config_file_path"])
    base = Path(setting) if setting else config_file.parent / ".cache" / "docs-pages"
    digest = hashlib.sha256()
    for path in sorted({config_file, config_file.with_name("mkdocs.yml"), Path(__file__)}):
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    for name in _PACKAGES:
        try:
            digest.update(f"{name}={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=\0".encode())
    digest.update((Path(config["docs_dir"]) / GENERATED / "nav.json").read_bytes())
    digest.update(f"site_url={config.get('site_url') or ''}\0".encode())
    site = hashlib.sha256(str(Path(config["docs_dir"]).resolve()).encode()).hexdigest()[:16]
    warnings = _Warnings()
    logging.getLogger("mkdocs").addHandler(warnings)
    _cache.update(folder=base / site, digest=digest, warnings=warnings, hits={}, fresh={}, used=set(), mark=0)


def _cache_files(files: Any) -> None:
    if _cache:
        digest = _cache["digest"]
        for file in files:
            if not file.inclusion.is_excluded():  # dotfiles (.gitignore, .render.json) come and go
                digest.update(file.src_uri.encode() + b"\0")
        _cache["site_key"] = digest.hexdigest()


def _page_key(markdown: str, page: Any) -> str:
    meta = json.dumps(page.meta, sort_keys=True, default=str)
    text = "\0".join((_cache["site_key"], page.file.src_uri, meta, markdown))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _cached(markdown: str, page: Any, files: Any) -> bool:
    """On a cache hit: make ``page.render`` restore the rendered state instead of converting the Markdown."""
    if not _cache or "site_key" not in _cache:
        return False
    key = _page_key(markdown, page)
    path = _cache["folder"] / key[:2] / f"{key}.pickle"
    _cache["used"].add(path)
    try:
        entry = pickle.loads(path.read_bytes())
    except (OSError, pickle.PickleError, EOFError):
        _cache["fresh"][page.file.src_uri] = (path, _cache["warnings"].count)
        return False

    def render(config: Any, files: Any) -> None:
        page.content = ""
        page.toc = []
        page._title_from_render = entry["title"]
        page.present_anchor_ids = set(entry["anchors"])
        page.links_to_anchors = {files.src_uris[uri]: links for uri, links in entry["links"].items()
                                 if uri in files.src_uris}

    page.render = render
    page.meta["template"] = CACHED_TEMPLATE
    page.meta["search"] = {**(page.meta.get("search") or {}), "exclude": True}
    _cache["hits"][page.file.src_uri] = entry
    return True


NAV_ITEM_GLOBAL = "dsfields_nav_item"
_NAV_CALLS = {
    "partials/nav.html": ("{{ item.render(nav_item, path, 1) }}",
                          "{{ dsfields_nav_item(item.render, nav_item, path, 1) }}"),
    "partials/nav-item.html": ('{{ render(item, path ~ "_" ~ loop.index, level + 1, nav_item) }}',
                               '{{ dsfields_nav_item(render, item, path ~ "_" ~ loop.index, level + 1, nav_item) }}'),
}
"""Material's calls of its nav item macro (top level, nested) and the same calls through :func:`_nav_item`."""
_nav_memo: dict[Any, Any] = {}


def _nav_templates(env: Any) -> dict[str, str]:
    """Material's nav templates with the item macro called through ``dsfields_nav_item`` (nothing else
    changes); none when a template does not hold the call exactly once (another Material version)."""
    patched = {}
    for name, (call, memoized) in _NAV_CALLS.items():
        try:
            source = env.loader.get_source(env, name)[0]
        except Exception:  # whatever the loader raises: leave Material's templates alone
            return {}
        if source.count(call) != 1:
            log.info("dsfields hooks: %s is not the expected Material template; the nav is not memoized", name)
            return {}
        patched[name] = source.replace(call, memoized)
    return patched


def _nav_links(item: Any, page: Any) -> list[str] | None:
    """The URLs in ``item``'s subtree, or None when it holds the page or an active item (then its HTML is
    the page's own: open sections, the page's table of contents)."""
    stack, urls = [item], []
    while stack:
        node = stack.pop()
        if getattr(node, "active", False) or getattr(node, "pages", None) or (node.is_page and node == page):
            return None
        if not node.is_section:
            urls.append(node.url)
        stack.extend(node.children or ())
    return urls


def _nav_item(context: Any, render: Any, item: Any, *args: Any) -> Any:
    """Material's nav item macro, memoized. Every page renders its release's whole nav (~60 items, about
    a quarter of mkdocs' time); an item away from the page renders the same for every page that sees
    the same relative URLs in it, so it is rendered once per distinct set of them. Keyed by the item, its
    macro arguments and those URLs as the ``url`` filter writes them from this page: the same bytes."""
    from mkdocs.utils import normalize_url

    page = context.get("page")
    links = _nav_links(item, page) if page is not None else None
    if links is None:
        return render(item, *args)
    holder = args[2] if len(args) > 2 else None
    in_release = page.file.src_uri in _state["navs"]["pages"]  # a release's own page (nav.json "pages")
    if in_release and not (holder is None and not item.is_section) and holder is not getattr(page, "parent", None):
        # Away from a release's page: drawn by assets/dsfields.js from the release's nav (releases/data/<v>.json,
        # fetched once per release), not repeated in every page (the sidebar was a third of the site). The
        # page keeps the top-level links, the way to itself (its release, group, contents) and its siblings;
        # the few pages outside the releases (home, guides, across releases) keep Material's whole nav.
        return ""
    # Nested items also get their parent section (its open state shows with navigation.tabs).
    parent = tuple((id(section), bool(getattr(section, "active", False))) for section in args[2:])
    key = (id(item), *args[:2], parent, tuple(normalize_url(url, page=page) for url in links))
    html = _nav_memo.get(key)
    if html is None:
        html = _nav_memo[key] = render(item, *args)
    return html


PALETTE = "partials/javascripts/palette.html"
PALETTE_JS = "assets/dsfields-palette.js"
"""Material's inline script that applies the reader's colour scheme (~0.7 KB on every page), as one file:
:func:`on_env` makes the template load it, :func:`on_post_build` writes it (the same script, still run
where Material runs it, before the page is drawn)."""
_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def _palette(env: Any) -> str | None:
    """The script of Material's palette template, if it is one static script (else None: left as it is)."""
    try:
        source = env.loader.get_source(env, PALETTE)[0]
    except Exception:  # whatever the loader raises: leave Material's template alone
        return None
    found = _SCRIPT.findall(source)
    return found[0] if len(found) == 1 and "{{" not in source and "{%" not in source else None


def on_env(env: Any, config: Any, files: Any) -> Any:
    import jinja2

    _nav_memo.clear()
    templates = {CACHED_TEMPLATE: ""} if _cache else {}
    palette = _palette(env)
    _state["palette"] = palette
    if palette is not None:
        templates[PALETTE] = f'<script src="{{{{ \'{PALETTE_JS}\' | url }}}}"></script>'
    nav = _nav_templates(env)
    if nav:
        templates.update(nav)
        env.globals[NAV_ITEM_GLOBAL] = jinja2.pass_context(_nav_item)
    if templates:
        env.loader = jinja2.ChoiceLoader([jinja2.DictLoader(templates), env.loader])
    return env


def _search_entries(config: Any) -> list[dict[str, Any]] | None:
    for name in ("material/search", "search"):
        plugin = config.plugins.get(name)
        if plugin is not None and hasattr(plugin, "search_index"):
            return plugin.search_index.entries
    return None


SEARCH_HOLD = "assets/dsfields-search-hold.js"
"""Written by :func:`on_post_build` into each language's site, loaded by every page before Material's bundle."""
SEARCH_HOLD_JS = """// dsfields: Material fetches the whole search index on every page load; hold that request until
// the reader focuses the search box (or arrives with ?q= / ?h=), so a page costs its own bytes only.
// Loaded before Material's bundle (its search index request starts when the bundle runs).
(function () {
  var open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send, held = [];
  var armed = /[?&](q|h)=/.test(location.search);
  XMLHttpRequest.prototype.open = function (method, url) {
    this.dsfIndex = /\\/search\\/search_index\\.json$/.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.dsfIndex && !armed) { held.push([this, arguments]); return; }
    return send.apply(this, arguments);
  };
  function arm() { armed = true; held.splice(0).forEach(function (h) { send.apply(h[0], h[1]); }); }
  document.addEventListener("focusin", function (e) {
    if (e.target.matches && e.target.matches("input.md-search__input")) arm();
  });
  document.addEventListener("change", function (e) { if (e.target.id === "__search" && e.target.checked) arm(); });
})();
"""
BUNDLE = re.compile(r'<script src="([^"]*)assets/javascripts/bundle\.[0-9a-f]+\.min\.js"></script>')


def _search_on_focus(output: str) -> str:
    """:data:`SEARCH_HOLD` loaded right before Material's bundle (one file, not ~1 KB inline on every page)."""
    return BUNDLE.sub(lambda match: f'<script src="{match.group(1)}{SEARCH_HOLD}"></script>\n' + match.group(),
                      output, count=1)


VERBATIM = re.compile(r"<pre[\s>].*?</pre>|<textarea[\s>].*?</textarea>|<script[\s>].*?</script>", re.S)
BLANKS = re.compile(r"\n\s+")
_BLOCK = (r"(?:html|head|body|title|meta|link|style|script|noscript|header|footer|main|article|aside|nav|div|"
          r"form|input|label|ul|ol|li|table|thead|tbody|tr|td|th|p|h[1-6]|hr|br|details|summary)\b")
BLOCK_BREAKS = re.compile(rf"(?<=>)\n(?=</?{_BLOCK})|(<{_BLOCK}[^<>]*>|</{_BLOCK}>)\n")
"""A line break right before or after a block-level tag: white space there is not rendered (it collapses at a
block's edge), so it goes; a break between two inline elements (``</code>\n<code>`` is a space) stays."""
NAV_LABEL = re.compile(r'(<span class="md-ellipsis">)\n([^<\n]*)\n</span>(?:\n(?=<span class="md-nav__icon|</a>))?')
NAV_LINK = re.compile(r'(<a [^<>]*class="md-nav__link[^"<>]*">)\n')
"""Material's nav item text: ``<span class="md-ellipsis">`` inside a flex link (``NAV_LINK``), where the breaks
around the text and before the next flex item are not rendered either."""


def _compact(output: str) -> str:
    """The page with every run of white space that holds a line break made one line break (none at a block
    tag's edge, :data:`BLOCK_BREAKS`, nor in a nav link), outside <pre>, <textarea> and <script>: Material's
    templates indent each nav item over ~30 lines (a third of a page's bytes), and a browser renders a run of
    white space as one space either way."""

    def squeeze(text: str) -> str:
        text = NAV_LINK.sub(r"\1", NAV_LABEL.sub(r"\1\2</span>", BLANKS.sub("\n", text)))
        return BLOCK_BREAKS.sub(lambda match: match.group(1) or "", text)

    out, last = [], 0
    for verbatim in VERBATIM.finditer(output):
        out += [squeeze(output[last:verbatim.start()]), verbatim.group()]
        last = verbatim.end()
    out.append(squeeze(output[last:]))
    return "".join(out)


ICONS_CSS = "assets/dsfields-icons.css"
"""Written by :func:`on_post_build` into each language's site (linked from every page by :func:`on_config`)."""
ICON = re.compile(r'<svg xmlns="http://www\.w3\.org/2000/svg"( viewBox="[^"<>]*")>((?:(?!</?svg|<title).)*?)</svg>',
                  re.S)
"""An inline icon of Material's templates (header, search, palette, footer, back-to-top): one colour, no title."""
_icons: dict[str, str] = {}


def _icon(match: re.Match[str]) -> str:
    svg = match.group()
    name = "dsf-i" + hashlib.sha1(svg.encode()).hexdigest()[:6]
    _icons[name] = svg
    return f'<svg{match.group(1)} class="{name}"></svg>'


def _icons_css(icons: dict[str, str]) -> str:
    """One rule a line: the icon as a mask over the text colour (what Material's ``fill: currentcolor`` gives)."""
    from urllib.parse import quote

    rules = []
    for name, svg in sorted(icons.items()):
        url = 'url("data:image/svg+xml;charset=utf-8,' + quote(svg, safe=" =/:;,.-_") + '")'
        rules.append(f"svg.{name}{{background-color:currentcolor;-webkit-mask:{url} center/contain no-repeat;"
                     f"mask:{url} center/contain no-repeat}}")
    return "\n".join(rules) + "\n"


def on_post_page(output: str, page: Any, config: Any) -> str:
    """A cached page: its HTML and search entries; a built one: into the cache (if it logged no warning)."""
    output = _compact(_search_on_focus(output))
    if not _cache:
        return _twin_link(ICON.sub(_icon, output), page)
    entries = _search_entries(config)
    hit = _cache["hits"].pop(page.file.src_uri, None)
    if hit is not None:
        if entries is not None:
            entries.extend(hit["search"])
        output = hit["html"]
    elif page.file.src_uri in _cache["fresh"]:
        path, warnings_before = _cache["fresh"][page.file.src_uri]
        if _cache["warnings"].count == warnings_before:
            links = {target.src_uri: dict(found) for target, found in (page.links_to_anchors or {}).items()}
            _cache["fresh"][page.file.src_uri] = (path, {
                "html": output, "search": list(entries[_cache["mark"]:]) if entries is not None else [],
                "title": page._title_from_render, "anchors": sorted(page.present_anchor_ids or ()),
                "links": links})
        else:
            del _cache["fresh"][page.file.src_uri]
    if entries is not None:
        _cache["mark"] = len(entries)
    # After the cache (which keeps the page as rendered): every page, cached or not, names its icons here.
    return _twin_link(ICON.sub(_icon, output), page)


TWIN_LINK = '<link rel="alternate" type="text/markdown" href="index.md">'
ASSETS = re.compile(r"""(?<=["'])((?:\.\./)*)assets/""")
"""A page's reference to its site's ``assets/`` folder (relative, as mkdocs writes it from the page)."""


def _english_assets(output: str) -> str:
    """A Chinese page built for the whole site (``site/zh/``) loads the English site's ``assets/``, one folder up:
    Material's and our scripts, styles and icons are the same files in both languages (1.4 MB), so the Chinese
    copy is not kept (:func:`_drop_chinese_assets`). A Chinese site built alone keeps its own."""
    return ASSETS.sub(lambda match: f"{match.group(1)}../assets/", output)


RELEASE_DATA = Path("releases") / "data"
OWN_DATA = ("version", "title", "nav")
"""The parts of a release's data (``releases/data/<v>.json``) that are the language's own; the rest (its pages'
URLs, its fields, its source lines, its finder keys) name no word of a language."""


def share_release_data(site: Path) -> None:
    """Each Chinese release data file without the parts that are the English file's, byte for byte: it names them
    (``"english": [...]``) and ``assets/dsfields.js`` reads them from ``../releases/data/<v>.json`` (1.9 MB of the
    site: every part but the nav is the same in both languages)."""
    for path in sorted((site / "zh" / RELEASE_DATA).glob("*.json")):
        english = site / RELEASE_DATA / path.name
        if not english.is_file():
            continue
        own, theirs = json.loads(path.read_text(encoding="utf-8")), json.loads(english.read_text(encoding="utf-8"))
        same = [key for key in own if key not in OWN_DATA and key != "english" and own[key] == theirs.get(key)]
        if same:
            lean = {key: value for key, value in own.items() if key not in same}
            lean["english"] = sorted(set(same) | set(own.get("english") or ()))
            path.write_text(json.dumps(lean, ensure_ascii=False) + "\n", encoding="utf-8")


def _drop_chinese_assets(site: Path) -> None:
    """``site/zh/assets``, whose pages load ``site/assets`` (:func:`_english_assets`): removed once each of its files
    is the English site's (the icon styles: the English file then holds every rule of both)."""
    zh, en = site / "zh" / "assets", site / "assets"
    for path in sorted(p for p in zh.rglob("*") if p.is_file()):
        twin = en / path.relative_to(zh)
        if twin.is_file() and twin.read_bytes() == path.read_bytes():
            continue
        if path.relative_to(zh).as_posix() == ICONS_CSS.removeprefix("assets/") and twin.is_file():
            rules = dict.fromkeys([*twin.read_text(encoding="utf-8").splitlines(),
                                   *path.read_text(encoding="utf-8").splitlines()])
            twin.write_text("\n".join(sorted(rule for rule in rules if rule)) + "\n", encoding="utf-8")
            continue
        raise PluginError(f"the Chinese site's {path.relative_to(site)} differs from the English site's: its pages "
                          "load the English one (hooks.py, _english_assets)")
    shutil.rmtree(zh, ignore_errors=True)
CANONICAL = '<link rel="canonical" href="{href}">'


SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
SEARCH_NAME = {"en": "Search", "zh": chinese.text("docs.hooks.search")}


def _twin_link(output: str, page: Any) -> str:
    """Name the page's Markdown twin in its head (issue 41). ``dsfields docs build`` writes the twins after
    mkdocs (dsfields/docs/twins.py, whose ``has_twin`` is this rule: the pages of the newest release and those
    of no release). Also names Material's search dialog (axe: ``aria-dialog-name``), in the page's language."""
    lang = _state.get("lang", "en")
    output = output.replace(SEARCH_DIALOG, SEARCH_DIALOG[:-1] + f' aria-label="{SEARCH_NAME.get(lang, "Search")}">', 1)
    if lang == "zh" and os.environ.get(CHILD_ENV):
        output = _english_assets(output)
    if 'rel="canonical"' not in output:
        # No site URL: the page's own address, relative (valid wherever the site is served; it drops ?v= and
        # ?q=); a page shown for another release than its own gets that release's URL (assets/dsfields.js).
        output = output.replace("</head>", CANONICAL.format(href="./") + "</head>", 1)
    if "navs" not in _state:
        return output
    release = page_release(page.file.src_uri)
    if page.file.src_uri in _state["navs"]["pages"]:
        output = own_release_footer(output, release)
    if release != _state["navs"]["newest"]:
        return output
    return output.replace("</head>", TWIN_LINK + "</head>", 1)


FOOTER = re.compile(r'<footer class="md-footer">.*?</footer>', re.S)
NAMED_RELEASE = re.compile(r"(?<=DeepSpeed )(?<![–-])\d+\.\d+\.\d+(?![\d–-]|\.\d)")
"""A release named in a title ("Enums · DeepSpeed 0.19.5"), not a span of them ("DeepSpeed 0.8.0–0.19.8")."""


def own_release_footer(output: str, release: str) -> str:
    """The page's previous/next links named for its own release (issue 39 point 4). In a release's nav, a page
    stored once under a later release stands for this release's page, but Material labels it with the stored
    page's title, which names the release it is stored under ("Enums · DeepSpeed 0.19.5" on a 0.12.5 page)."""
    return FOOTER.sub(lambda footer: NAMED_RELEASE.sub(release, footer.group()), output, count=1)


def _cache_finish() -> None:
    """After a build without warnings: store the new pages, drop the entries no page used."""
    if not _cache:
        return
    warnings = _cache.pop("warnings")
    logging.getLogger("mkdocs").removeHandler(warnings)
    if warnings.count:
        return
    folder: Path = _cache["folder"]
    for path, entry in _cache["fresh"].values():
        if isinstance(entry, dict):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
            tmp.replace(path)
    if _cache.get("prune", True) and folder.is_dir():
        for stale in folder.glob("*/*.pickle"):
            if stale not in _cache["used"]:
                stale.unlink(missing_ok=True)


def on_build_error(error: Exception) -> None:
    warnings = _cache.pop("warnings", None)
    if warnings is not None:
        logging.getLogger("mkdocs").removeHandler(warnings)
    _cache.clear()


def _read(config: Any, name: str) -> Any:
    path = Path(config["docs_dir"]) / GENERATED / name
    if not path.is_file():
        raise PluginError(f"{path} is missing: render the pages first with `dsfields docs build`")
    return json.loads(path.read_text(encoding="utf-8"))


class _AnchoredNavLinks(logging.Filter):
    """Drops mkdocs' INFO that a nav link with an anchor is "not found in the documentation files", for the links
    the render put in the nav by design: a group without sections links to its rows on the top-level keys page
    (``…/top-level/#group-…``), a URL mkdocs cannot resolve as a file (mkdocs.yml's ``validation: nav: not_found:
    info``); tests/test_docs_site.py resolves every link of the built site. ~150 lines a build, read by newcomers
    as problems. Any other message, and the same message for another link, passes."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: frozenset[str] = frozenset()

    def expect(self, navs: Any) -> None:
        urls: set[str] = set()
        stack = list(navs.get("releases", {}).values()) if isinstance(navs, dict) else []
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, str) and "#" in item:
                urls.add(item)
        self.messages = frozenset(f"A reference to '{url}' is included in the 'nav' configuration, which is not "
                                  "found in the documentation files." for url in urls)

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and record.getMessage() in self.messages)


_anchored_nav_links = _AnchoredNavLinks()


def _site_url(config: Any) -> str | None:
    """The published site's URL: ``[project.urls] Documentation`` (``dsfields.links.SITE_URL``, the one setting),
    the Chinese site under its ``zh/``; None when unset (or when mkdocs runs without dsfields importable)."""
    try:
        from dsfields.links import SITE_URL
    except ImportError:
        return None
    if not SITE_URL:
        return None
    return SITE_URL + ("zh/" if _state["lang"] == "zh" else "")


def on_config(config: Any) -> Any:
    navs = _read(config, "nav.json")
    _state["navs"] = navs
    _state["lang"] = str(config["theme"].get("language") or "en")
    # Canonical links and sitemaps (issue 41): mkdocs and Material write them from site_url.
    config["site_url"] = config.get("site_url") or _site_url(config)
    _state["site_url"] = config["site_url"]
    _anchored_nav_links.expect(navs)
    nav_log = logging.getLogger("mkdocs.structure.nav")
    if _anchored_nav_links not in nav_log.filters:
        nav_log.addFilter(_anchored_nav_links)
    _navs.clear()
    config["nav"] = navs["releases"][navs["newest"]]
    _icons.clear()
    if ICONS_CSS not in config["extra_css"]:
        config["extra_css"].append(ICONS_CSS)
    _cache_start(config)
    zh_config = Path(config["config_file_path"]).with_name("mkdocs.zh.yml")
    if (not os.environ.get(CHILD_ENV) and zh_config.is_file()
            and (Path(config["docs_dir"]) / "zh" / GENERATED / "nav.json").is_file()):
        out = Path(str(config["site_dir"]).rstrip("/") + ".zh-build")
        shutil.rmtree(out, ignore_errors=True)
        env = {**os.environ, CHILD_ENV: "1", "NO_MKDOCS_2_WARNING": "1"}
        from dsfields.model.safewrite import parent_death_signal

        _state["zh"] = (subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--config-file", str(zh_config),
             "--site-dir", str(out)], env=env, cwd=zh_config.parent, preexec_fn=parent_death_signal()), out)
    return config


def on_page_markdown(markdown: str, page: Any, files: Any, **_: Any) -> str:
    if _cached(markdown, page, files):
        return markdown
    chunks: list[str] = []

    def lift(match: re.Match[str]) -> str:
        chunks.append(match.group(1))
        return "\n" + PLACEHOLDER.format(len(chunks) - 1) + "\n"

    text = RAW.sub(lift, markdown)
    _raw[page.file.src_uri] = chunks
    return text


def on_page_content(html: str, page: Any, **_: Any) -> str:
    """The lifted chunks back in place of their placeholder paragraphs, in one pass over the page (a
    replace per chunk rescans a default-values page ~150 times)."""
    chunks = _raw.pop(page.file.src_uri, [])
    if not chunks:
        return html
    placed: set[int] = set()

    def put(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(chunks) or index in placed:  # as str.replace(..., 1) did: the first one only
            return match.group()
        placed.add(index)
        return chunks[index]

    return PLACED.sub(put, html)


def release_nav(release: str, config: Any) -> Any:
    """The nav of an older release, built on first use. Building it also sets the previous/next and
    parent links of the pages in it (mkdocs' get_navigation), also of pages shared with other releases'
    navs (the guides, the pages across releases, identical field pages); ``on_page_context`` sets a
    page's links back to its own release's nav before the page is rendered."""
    from mkdocs.structure.nav import get_navigation

    if release not in _navs:
        newest = config["nav"]
        config["nav"] = _state["navs"]["releases"][release]
        try:
            _navs[release] = get_navigation(_state["files"], config)
        finally:
            config["nav"] = newest
        _remember_links(release, _navs[release])
    return _navs[release]


def _remember_links(release: str, nav: Any) -> None:
    """Each page's previous/next page and parent section in ``release``'s nav, as get_navigation set them."""
    _links[release] = {id(page): (page.previous_page, page.next_page, page.parent) for page in nav.pages}


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    _links.clear()
    _remember_links(_state["navs"]["newest"], nav)
    return nav


def page_release(src_uri: str) -> str:
    navs = _state["navs"]
    return navs["pages"].get(src_uri, navs["newest"])


def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    """The page's own release's nav, and its links in that nav: a page in several navs (the guides, the
    pages across releases, a field page identical in two releases) holds the links of the nav built last,
    which for the newest release's pages is an older release's (built after the newest's)."""
    release = page_release(page.file.src_uri)
    if release != _state["navs"]["newest"]:
        context["nav"] = release_nav(release, config)
    own = _links.get(release, {}).get(id(page))
    held = (page.previous_page, page.next_page, page.parent)
    if own is not None and any(a is not b for a, b in zip(own, held, strict=True)):
        page.active = False  # closes the sections of the other nav that mkdocs just opened
        page.previous_page, page.next_page, page.parent = own
    page.active = True  # opens the page's sections in its own nav
    return context


def on_files(files: Any, config: Any) -> Any:
    _state["files"] = files
    _cache_files(files)
    return files


KEY_PARTS = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def _search_words(text: str, terms: dict[str, str]) -> list[str]:
    """What a Chinese reader types for ``text`` besides its words: the glossary's Chinese term for each
    English word it holds (卸载 for offload), and each key's trailing ``_`` parts (max_live_parameters,
    live_parameters for stage3_max_live_parameters: Material matches by prefix only)."""
    text = text.lower()
    extra: dict[str, None] = {}
    for term, english in terms.items():
        # By the word's stem, so "loss scale" also meets "loss scaling" and "partition" "partitioned".
        if all(re.search(rf"(?<![a-z]){re.escape(word[:max(4, len(word) - 2)])}", text) for word in english.split()):
            extra[term] = None
    for key in KEY_PARTS.findall(text):
        parts = key.split("_")
        for i in range(1, len(parts)):
            extra["_".join(parts[i:])] = None
    return list(extra)


WORDS_MARK = 'class="dsf-words"'


def _augment(entry: dict[str, Any], terms: dict[str, str]) -> None:
    """An index entry with those words, hidden: in its title when the title holds them (the field named so
    ranks first), else in its text."""
    if WORDS_MARK in (entry.get("title") or "") or WORDS_MARK in (entry.get("text") or ""):
        return  # already given them (an entry restored from the page cache)
    in_title = _search_words(entry.get("title") or "", terms)
    in_text = [word for word in _search_words(entry.get("text") or "", terms) if word not in in_title]
    if in_title:
        entry["title"] = f"{entry.get('title', '')}<span {WORDS_MARK} hidden> {' '.join(in_title)}</span>"
    if in_text:
        entry["text"] = f"{entry.get('text', '')}<p {WORDS_MARK} hidden>{' '.join(in_text)}</p>"


def augment_search(config: Any, entries: list[dict[str, Any]]) -> None:
    """Give index entries the words of the site's search glossary (site-data.json "terms"; the Chinese site
    has one); ``dsfields.docs.partial`` calls it on the entries it rebuilds, as a full build does here. Both
    then write the index as UTF-8 (:func:`_index_in_utf8`)."""
    terms = (_read(config, "site-data.json") or {}).get("terms") or {}
    for entry in entries if terms else []:
        _augment(entry, terms)
    _index_in_utf8(config)


def _index_in_utf8(config: Any) -> None:
    """The search plugin's ``search_index.json`` with its characters as UTF-8, not ``\\uXXXX`` escapes: the same
    JSON (keys in the same order) for the browser, and on the Chinese site, where every character and jieba's
    zero-width separators took 6 bytes instead of 3, about 0.7 MB less."""
    for name in ("material/search", "search"):
        plugin = config.plugins.get(name)
        index = getattr(plugin, "search_index", None)
        if index is None or getattr(index, "dsf_utf8", False):
            continue
        generate = index.generate_search_index

        def in_utf8(*args: Any, generate: Any = generate) -> str:
            return json.dumps(json.loads(generate(*args)), ensure_ascii=False, separators=(",", ":"))

        index.generate_search_index = in_utf8
        index.dsf_utf8 = True


@event_priority(50)  # before the search plugin writes its index
def on_post_build(config: Any) -> None:
    _cache_finish()  # first: the cache keeps each page's own entries, as a build from it adds them
    augment_search(config, _search_entries(config) or [])
    site = Path(config["site_dir"])
    # Material's source maps (1.2 MB per language) are for debugging its minified JavaScript, never read by
    # a reader's browser; the bundles keep working without them (devtools just shows the minified code).
    for source_map in (site / "assets" / "javascripts").rglob("*.min.js.map"):
        source_map.unlink()
    # Material writes each icon inline, ~3 KB a page (9 MB of the site); the pages name them by class and
    # this stylesheet draws them (a rebuild of one release keeps the full build's file, whose names it uses).
    (site / SEARCH_HOLD).parent.mkdir(parents=True, exist_ok=True)
    (site / SEARCH_HOLD).write_text(SEARCH_HOLD_JS, encoding="utf-8")
    if _state.get("palette"):
        (site / PALETTE_JS).write_text(_state["palette"] + "\n", encoding="utf-8")
    if _icons:
        (site / ICONS_CSS).parent.mkdir(parents=True, exist_ok=True)
        (site / ICONS_CSS).write_text(_icons_css(_icons), encoding="utf-8")
    for path, html in _read(config, "stubs.json").items():
        target = site / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    child = _state.pop("zh", None)
    if child:
        process, out = child
        if process.wait():
            raise PluginError("the Chinese site (mkdocs.zh.yml) failed to build: see its messages above")
        shutil.rmtree(site / "zh", ignore_errors=True)
        shutil.move(str(out), str(site / "zh"))
        _drop_chinese_assets(site)
        share_release_data(site)
    write_sitemaps(site, _state.get("site_url"), _site_pages(), _read(config, "stubs.json"),
                   child=bool(os.environ.get(CHILD_ENV)))


SITEMAP_NOTE = ("dsfields docs: no site URL ([project.urls] Documentation in pyproject.toml): no sitemaps, "
                "canonical links relative (README \"Docs site\")")
SITEMAP = "sitemap.xml"
SITE_PAGES_SITEMAP = "sitemap-pages.xml"
"""The sitemap of the pages of no release (home, guides, across releases), beside each release's ``<v>/sitemap.xml``."""


def _site_pages() -> list[tuple[str, str]]:
    """(url, release or "") of every page mkdocs built: a release's own pages (nav.json "pages") and the rest."""
    files = _state.get("files")
    owned = _state["navs"]["pages"]
    out = []
    for file in files.documentation_pages() if files is not None else []:
        if file.inclusion.is_excluded() or not file.url and file.src_uri != "index.md":
            continue
        out.append((file.url, owned.get(file.src_uri, "")))
    return out


def _urlset(base: str, urls: list[str]) -> str:
    from xml.sax.saxutils import escape

    rows = "".join(f"<url><loc>{escape(base + url)}</loc></url>\n" for url in sorted(set(urls)))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n')


def _sitemap_index(base: str, maps: list[str]) -> str:
    from xml.sax.saxutils import escape

    rows = "".join(f"<sitemap><loc>{escape(base + name)}</loc></sitemap>\n" for name in maps)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</sitemapindex>\n')


def write_sitemaps(site: Path, site_url: str | None, pages: list[tuple[str, str]], stubs: dict[str, str],
                   child: bool = False) -> None:
    """A sitemap per release (``<v>/sitemap.xml``: its own URLs, also those of its pages stored once under another
    release, which are its redirect stubs), ``sitemap-pages.xml`` for the pages of no release, and ``sitemap.xml``
    their index (the English site's also lists the Chinese site's). mkdocs' one sitemap goes (it lists each
    stored page once, under its owner). Without a site URL there are none (a sitemap's addresses are absolute):
    the build says so once."""
    for name in (SITEMAP, SITEMAP + ".gz"):
        (site / name).unlink(missing_ok=True)
    if not site_url:
        if not child:
            log.info(SITEMAP_NOTE)
        return
    by_release: dict[str, list[str]] = {}
    for url, release in pages:
        by_release.setdefault(release, []).append(url)
    for path in stubs:
        release = path.split("/", 1)[0]
        by_release.setdefault(release, []).append(path.removesuffix("index.html"))
    maps = []
    for release, urls in sorted(by_release.items()):
        name = f"{release}/{SITEMAP}" if release else SITE_PAGES_SITEMAP
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(_urlset(site_url, urls), encoding="utf-8")
        maps.append(name)
    if not child and (site / "zh" / SITEMAP).is_file():
        zh = re.findall(r"<loc>[^<]*/zh/([^<]*)</loc>", (site / "zh" / SITEMAP).read_text(encoding="utf-8"))
        maps += [f"zh/{name}" for name in zh]
    (site / SITEMAP).write_text(_sitemap_index(site_url, maps), encoding="utf-8")
