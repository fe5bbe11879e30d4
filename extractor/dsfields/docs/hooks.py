"""mkdocs hooks (``hooks:`` in mkdocs.yml): the generated navigation, and the redirect pages of older releases.

The nav names the newest release, which changes with every new snapshot, so it cannot be written in
mkdocs.yml; ``dsfields docs build`` writes it to ``releases/nav.json`` and ``on_config`` hands it to
mkdocs. Older releases' field URLs (``<version>/fields/<section>/``) are tiny redirects listed in
``releases/stubs.json``; ``on_post_build`` writes them straight into the site, because thousands of
one-file folders under docs/ would be created, copied and deleted on every build for nothing.
mkdocs loads this file by path, so it imports nothing from dsfields: plain ``mkdocs build`` /
``mkdocs serve`` work after a render.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

GENERATED = Path("releases")


def _read(config: Any, name: str) -> Any:
    path = Path(config["docs_dir"]) / GENERATED / name
    if not path.is_file():
        raise PluginError(f"{path} is missing: render the pages first with `dsfields docs build`")
    return json.loads(path.read_text(encoding="utf-8"))


def on_config(config: Any) -> Any:
    config["nav"] = _read(config, "nav.json")
    return config


def on_post_build(config: Any) -> None:
    site = Path(config["site_dir"])
    for path, html in _read(config, "stubs.json").items():
        target = site / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
