"""dsfields: the source-derived dictionary of every DeepSpeed config field.

Extraction (``dsfields.extract``) needs DeepSpeed; everything else here reads committed
snapshots only and never imports DeepSpeed, torch or pydantic.

The public face, for scripts (everything else is internal and may change)::

    import dsfields
    snap = dsfields.load_snapshot("0.19.8")          # a typed Snapshot (None: installed, else newest)
    dsfields.lookup_key("stage3_max_live_parameters")  # [{"path": ..., "default": ..., ...}] as `lookup --json`
    report = dsfields.check_file("ds_config.json")   # findings, as `dsfields check`
    dsfields.diff_releases("0.14.4", "0.19.8")       # [Change, ...], as `dsfields diff`

The names are resolved when first used (PEP 562), so ``import dsfields`` stays as cheap as the command line's
start-up needs.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Not ``lookup``/``diff``: importing the submodules dsfields.lookup and dsfields.diff rebinds those names.
__all__ = ["DsfieldsError", "Snapshot", "check_file", "diff_releases", "load_snapshot", "lookup_key"]

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing (and re, which it imports) cost every command ~5 ms of start-up; annotations are strings
    from os import PathLike
    from typing import Any

    from dsfields.check.findings import FileReport
    from dsfields.diff import Change
    from dsfields.model.errors import DsfieldsError
    from dsfields.model.records import Snapshot


def load_snapshot(version: str | None = None) -> Snapshot:
    """The committed snapshot of DeepSpeed ``version`` (None: the installed release if snapshotted, else the
    newest); :class:`DsfieldsError` names the available releases when there is none."""
    from dsfields.model.store import load, resolve_version

    return load(resolve_version(version))


def lookup_key(query: str, version: str | None = None, lang: str = "en") -> list[dict[str, Any]]:
    """What ``dsfields lookup QUERY --json`` answers: one record per matching field, section or removed key."""
    from dsfields.field_answer import find, match_json

    snapshot = load_snapshot(version)
    return [match_json(snapshot, match, lang) for match in find(snapshot, query)]


def check_file(path: str | PathLike[str], version: str | None = None, *, hf: bool = False,
               world_size: int | None = None, strict: bool = False) -> FileReport:
    """``dsfields check PATH``: the file's findings (``.findings``, each with path, severity, kind, message, fix,
    line) or why it could not be read (``.error``)."""
    from pathlib import Path

    from dsfields.check.engine import Checker
    from dsfields.check.engine import check_file as judge
    from dsfields.check.findings import Options

    snapshot = load_snapshot(version)
    options = Options(hf=hf, world_size=world_size, strict=strict)
    return judge(Path(path), Checker(snapshot), options)


def diff_releases(old: str, new: str) -> list[Change]:
    """``dsfields diff OLD NEW``: every change between two releases' snapshots, sorted by section and path."""
    from dsfields.diff import diff_snapshots

    return diff_snapshots(load_snapshot(old), load_snapshot(new))


def __getattr__(name: str) -> Any:
    if name == "Snapshot":
        from dsfields.model.records import Snapshot

        return Snapshot
    if name == "DsfieldsError":
        from dsfields.model.errors import DsfieldsError

        return DsfieldsError
    raise AttributeError(f"module 'dsfields' has no attribute {name!r}")
