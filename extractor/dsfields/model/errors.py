"""One error base for everything dsfields refuses: ``cli.main`` turns it into one line and exit 2."""

from __future__ import annotations


class DsfieldsError(Exception):
    """Unusable input or environment (unknown version, unreadable file, DeepSpeed missing): one line, exit 2."""

    exit_code = 2


class SnapshotError(DsfieldsError):
    """A snapshot is missing, unreadable, incomplete, or of another format version."""


class UsageError(DsfieldsError):
    """The command line asks for something that cannot be done (bad option value, missing argument)."""


class MissingExtra(DsfieldsError):
    """A package an optional part of dsfields needs cannot be imported (griffe, DeepSpeed, mkdocs...)."""

    def __init__(self, package: str, extra: str = "extract", cause: str | None = None) -> None:
        because = f" ({cause})" if cause else ""
        super().__init__(f"needs {package}, which cannot be imported{because}; install it with "
                         f"`pip install dsfields[{extra}]`")
        self.package = package
        self.extra = extra


def missing_extra(exc: ImportError, extra: str = "extract") -> MissingExtra:
    """The :class:`MissingExtra` for an ImportError raised while importing an optional part."""
    package = (exc.name or "").partition(".")[0] or "a package"
    first = (str(exc).strip().splitlines() or [""])[0]
    return MissingExtra(package, extra, first if exc.name is None else None)
