"""mkdocs hooks (``hooks:`` in mkdocs.yml): per-release navigation, pre-rendered HTML, redirects, the Chinese site.

- **Navigation per release.** ``dsfields docs build`` writes ``releases/nav.json``: the nav of every
  release and which release each page belongs to. ``on_config`` hands mkdocs the newest release's
  nav; ``on_page_context`` swaps in the nav of the page's own release, so a 0.14.4 page's sidebar
  lists 0.14.4's pages (77 navs in one nav would make every page quadratic).
- **Pre-rendered HTML.** Generated pages carry their bulk (field facts, tables) as HTML between
  ``<!--raw-->`` and ``<!--/raw-->``; Python-Markdown spends most of a build parsing raw HTML, so
  ``on_page_markdown`` lifts those chunks out and ``on_page_content`` puts them back. Headings stay
  Markdown, so the table of contents and search sections are mkdocs' own.
- **Redirects.** Field URLs of releases whose section is identical to a later release's page are
  tiny redirects (``releases/stubs.json``), written straight into the site by ``on_post_build``.
- **Chinese.** The same render writes ``zh/`` (``mkdocs.zh.yml`` builds it with the ``zh`` UI and
  jieba-segmented search); the English build starts that build in a child process at ``on_config``
  (two cores, two builds) and moves its output to ``site/zh/`` at ``on_post_build``.

mkdocs loads this file by path, so it imports nothing from dsfields: plain ``mkdocs build`` /
``mkdocs serve`` work after a render.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

GENERATED = Path("releases")
RAW = re.compile(r"^<!--raw-->\n(.*?)\n<!--/raw-->$", re.S | re.M)
PLACEHOLDER = "DSFRAW{}X"
CHILD_ENV = "DSFIELDS_DOCS_CHILD"

_raw: dict[str, list[str]] = {}
_navs: dict[str, Any] = {}
_state: dict[str, Any] = {}


def _read(config: Any, name: str) -> Any:
    path = Path(config["docs_dir"]) / GENERATED / name
    if not path.is_file():
        raise PluginError(f"{path} is missing: render the pages first with `dsfields docs build`")
    return json.loads(path.read_text(encoding="utf-8"))


def on_config(config: Any) -> Any:
    navs = _read(config, "nav.json")
    _state["navs"] = navs
    _navs.clear()
    config["nav"] = navs["releases"][navs["newest"]]
    zh_config = Path(config["config_file_path"]).with_name("mkdocs.zh.yml")
    if (not os.environ.get(CHILD_ENV) and zh_config.is_file()
            and (Path(config["docs_dir"]) / "zh" / GENERATED / "nav.json").is_file()):
        out = Path(str(config["site_dir"]).rstrip("/") + ".zh-build")
        shutil.rmtree(out, ignore_errors=True)
        env = {**os.environ, CHILD_ENV: "1", "NO_MKDOCS_2_WARNING": "1"}
        _state["zh"] = (subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--config-file", str(zh_config),
             "--site-dir", str(out)], env=env, cwd=zh_config.parent), out)
    return config


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    chunks: list[str] = []

    def lift(match: re.Match[str]) -> str:
        chunks.append(match.group(1))
        return "\n" + PLACEHOLDER.format(len(chunks) - 1) + "\n"

    text = RAW.sub(lift, markdown)
    _raw[page.file.src_uri] = chunks
    return text


def on_page_content(html: str, page: Any, **_: Any) -> str:
    chunks = _raw.pop(page.file.src_uri, [])
    for i, chunk in enumerate(chunks):
        html = html.replace(f"<p>{PLACEHOLDER.format(i)}</p>", chunk, 1)
    return html


def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    from mkdocs.structure.nav import get_navigation

    navs = _state["navs"]
    release = navs["pages"].get(page.file.src_uri, navs["newest"])
    if release == navs["newest"]:
        return context
    if release not in _navs:
        newest = config["nav"]
        config["nav"] = navs["releases"][release]
        try:
            _navs[release] = get_navigation(_state["files"], config)
        finally:
            config["nav"] = newest
    context["nav"] = _navs[release]
    page.active = True  # marks the page's sections in this nav as open
    return context


def on_files(files: Any, config: Any) -> Any:
    _state["files"] = files
    return files


def on_post_build(config: Any) -> None:
    site = Path(config["site_dir"])
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
