"""Output styles shared by every command that reports results (diff's changes, check's findings).

Each result object explains itself once per style (griffe's ``explain(style)``): the command picks the
style from ``--format`` and never formats a result by hand. The GitHub escaping lives once,
in :mod:`dsfields.model.termsafe`.
"""

from __future__ import annotations

from enum import StrEnum

from dsfields.model.termsafe import github_data, github_property

__all__ = ["OutputStyle", "github_data", "github_property"]


class OutputStyle(StrEnum):
    """``--format`` values; the value is what users type."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    GITHUB = "github"


