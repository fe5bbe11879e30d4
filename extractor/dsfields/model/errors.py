"""One error base for everything dsfields refuses: ``cli.main`` turns it into one line and exit 2."""

from __future__ import annotations


class DsfieldsError(Exception):
    """Unusable input or environment (unknown version, unreadable file, DeepSpeed missing): one line, exit 2."""

    exit_code = 2


class SnapshotError(DsfieldsError):
    """A snapshot is missing, unreadable, incomplete, or of another format version."""


class UsageError(DsfieldsError):
    """The command line asks for something that cannot be done (bad option value, missing argument)."""
