"""Output styles shared by every command that reports results (diff's changes, check's findings).

Each result object explains itself once per style (griffe's ``explain(style)``): the command picks the
style from ``--format`` and never formats a result by hand. The GitHub escaping lives here once.
"""

from __future__ import annotations

from enum import StrEnum


class OutputStyle(StrEnum):
    """``--format`` values; the value is what users type."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    GITHUB = "github"


def github_data(text: str) -> str:
    """Escape the message part of a GitHub workflow command (``::error ...::MESSAGE``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``) of a GitHub workflow command."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")
