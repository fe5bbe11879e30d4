"""Where each field's documentation page lives: one URL builder shared by the schema, check and the docs site.

The JSON Schema's descriptions, ``check``'s output and the rendered site must agree on every
field's URL, or links rot silently. Pages are per version and per top-level section; anchors are
the field's dotted path with dots replaced by ``-``, lower-cased. Top-level scalar keys (e.g.
``train_batch_size``) are on the :data:`TOP_LEVEL_PAGE` page.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

SITE_URL_KEY = "Documentation"
"""The ``[project.urls]`` entry of pyproject.toml that names the published site: the one place the site's URL
is written, beside the repository's (``Repository``, tests/test_project_url.py)."""
PLACEHOLDER_HOSTS = ("your-org", "example.com", "example.org")
"""Hosts and owners that mark an unfilled URL: such a URL is no URL (no link to a place that does not exist)."""


def published_site_url(pyproject: Path | None = None) -> str | None:
    """The site's URL from ``[project.urls] Documentation``: the checkout's pyproject.toml when this package runs
    from a checkout (or ``pyproject``), else the installed distribution's metadata (the same table, as the wheel
    carries it). None when absent or a placeholder: the site is then built without sitemaps and with relative
    canonical links (README "Docs site")."""
    url: str | None = None
    path = pyproject or Path(__file__).resolve().parents[2] / "pyproject.toml"
    if path.is_file():
        try:
            urls = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            urls = {}
        url = urls.get(SITE_URL_KEY) if isinstance(urls, dict) else None
    elif pyproject is None:
        from importlib import metadata

        try:
            entries = metadata.metadata("dsfields").get_all("Project-URL") or []
        except metadata.PackageNotFoundError:
            entries = []
        url = next((value.strip() for name, _, value in (e.partition(",") for e in entries)
                    if name.strip().lower() == SITE_URL_KEY.lower()), None)
    if not isinstance(url, str) or not url.startswith(("https://", "http://")) or \
            any(mark in url for mark in PLACEHOLDER_HOSTS):
        return None
    return url.rstrip("/") + "/"


SITE_URL: str | None = published_site_url()
"""Base URL of the published docs site (``[project.urls] Documentation``, :func:`published_site_url`): none
until the site is published.

Unset, the schema carries no ``$id`` and no absolute "Docs:" links, rather than a placeholder host, and the
site has no sitemaps; ``dsfields schema --site-url URL`` sets it for one run."""

TOP_LEVEL_PAGE = "top-level"
"""The page for keys that sit directly at the top of ds_config and are not sections."""


def anchor(path: str) -> str:
    """``zero_optimization.offload_param.device`` → ``zero_optimization-offload_param-device``."""
    return path.replace(".", "-").lower()


def page(path: str, is_section: bool = False) -> str:
    """The page a field is documented on: its top-level section, or :data:`TOP_LEVEL_PAGE`."""
    top, dot, _ = path.partition(".")
    return top if (dot or is_section) else TOP_LEVEL_PAGE


def field_url(version: str, path: str, site_url: str | None = SITE_URL, is_section: bool = False) -> str:
    """``{site_url}/{version}/fields/{page}/#{anchor}``; site-relative (``/{version}/…``) without a site URL."""
    return f"{(site_url or '').rstrip('/')}/{version}/fields/{page(path, is_section)}/#{anchor(path)}"
