"""One error base for everything dsfields refuses: ``cli.main`` turns it into one line and exit 2."""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


class DsfieldsError(Exception):
    """Unusable input or environment (unknown version, unreadable file, DeepSpeed missing): one line, exit 2."""

    exit_code = 2


class SnapshotError(DsfieldsError):
    """A snapshot is missing, unreadable, incomplete, or of another format version."""


class UsageError(DsfieldsError):
    """The command line asks for something that cannot be done (bad option value, missing argument)."""


def refuse_two_dashes(argv: list[str]) -> None:
    """Python 3.11's argparse parses ``--option=--`` as an empty list, whatever the option's type: a
    :class:`UsageError` for it, before any command meets a list where it expects a string (the command line and
    ``dsfields mcp`` both ask). Arguments after a bare ``--`` are positional, and a pasted ``=--`` is fine there."""
    for arg in argv[:argv.index("--")] if "--" in argv else argv:
        if arg.startswith("-") and arg.endswith("=--"):
            raise UsageError(f"{arg}: '--' is not a value")


class MissingExtra(DsfieldsError):
    """A package an optional part of dsfields needs cannot be imported (griffe, DeepSpeed, mkdocs...)."""

    def __init__(self, package: str, extra: str = "extract", cause: str | None = None,
                 message: str | None = None) -> None:
        because = f" ({cause})" if cause else ""
        super().__init__(message or f"needs {package}, which cannot be imported{because}; install it with "
                         f"`pip install dsfields[{extra}]`")
        self.package = package
        self.extra = extra


class ExtractionError(DsfieldsError):
    """DeepSpeed (or transformers) was importable but could not be read: extraction, verification or a witness
    failed, or what it reports is unusable."""


def standalone(main: Callable[[list[str] | None], int], prog: str) -> int:
    """A ``python -m`` entry point run as ``cli.main`` runs a subcommand: a :class:`DsfieldsError` is one line on
    stderr (``prog: message``) and its exit code, never a traceback."""
    try:
        return main(None)
    except DsfieldsError as exc:
        from dsfields.model import termsafe

        termsafe.report(f"{prog}: {exc}")
        return exc.exit_code
    except OSError as exc:  # the environment (a read-only folder, a full disk): one line, as cli.main says it
        from dsfields.model import termsafe

        where = f"{exc.filename}: " if exc.filename else ""
        termsafe.report(f"{prog}: {where}{exc.strerror or exc}")
        return 2


def missing_extra(exc: ImportError, extra: str = "extract") -> MissingExtra:
    """The :class:`MissingExtra` for an ImportError raised while importing an optional part."""
    package = (exc.name or "").partition(".")[0] or "a package"
    first = (str(exc).strip().splitlines() or [""])[0]
    return MissingExtra(package, extra, first if exc.name is None else None)


def one_line_argparse(parser: Any) -> None:
    """argparse's own refusals (a missing value, ``--params -7e9`` read as an option) as one line, exit 2,
    like every other refusal, instead of a usage block (``estimate``, ``init``, ``convert``)."""
    def error(message: str) -> NoReturn:
        from dsfields.model import termsafe

        termsafe.report(f"{parser.prog}: {message} (see --help)")
        raise SystemExit(2)

    parser.error = error
