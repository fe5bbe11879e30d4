"""Where each field's documentation page lives: one URL builder shared by the schema, check and the docs site.

The JSON Schema's descriptions, ``check``'s output and the rendered site must agree on every
field's URL, or links rot silently. Pages are per version and per top-level section; anchors are
the field's dotted path with dots replaced by ``-``, lower-cased. Top-level scalar keys (e.g.
``train_batch_size``) are on the :data:`TOP_LEVEL_PAGE` page.
"""

from __future__ import annotations

SITE_URL: str | None = None
"""Base URL of the published docs site (``site_url`` in mkdocs.yml): none until the site is published.

Unset, the schema carries no ``$id`` and no absolute "Docs:" links, rather than a placeholder host;
``dsfields schema --site-url URL`` sets it for one run."""

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
