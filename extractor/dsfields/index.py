"""``generated/index.json``: which releases are snapshotted, which failed, and every field's history.

Answering "when did this key appear / change / go away?" by loading every release's snapshot is
slow once there are dozens of them, so the history is computed once, after snapshotting, by
folding :func:`dsfields.diff.diff_snapshots` over consecutive releases. Readers
(:func:`dsfields.history.field_history`, the docs) use it only when its ``versions`` match the
snapshots on disk, so a stale index is never believed. Stdlib only, like every consumer.

Events have the shape of :class:`dsfields.history.HistoryEvent`: ``{version, kind, old, new}`` with
kinds ``introduced`` / ``reintroduced`` (new: ``{type, default}``), ``default_changed`` and
``type_changed`` (old/new: the values; defaults in their symbolic spelling where there is one),
``deprecated`` / ``undeprecated`` (the deprecation records), ``removed`` (old: ``{type, default}``;
the key is no longer read) and ``became_removed`` (new: DeepSpeed's rejection message).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dsfields.diff import Change, ChangeKind, diff_snapshots
from dsfields.model.store import (
    FORMAT_VERSION,
    INDEX_FILE,
    SNAPSHOT_FILE,
    SnapshotError,
    available_versions,
    dumps,
    load,
    repo_generated_dir,
    version_key,
    write_atomic,
)

FAILURES_FILE = "failures.json"
"""Written by the multi-release snapshotting: version → why it has no snapshot."""

GENERATED_BY = "python -m dsfields.index"

_EMPTY: dict[str, Any] = {"fields": {}, "sections": {}, "removed": {}}
"""What precedes the first release: folding from it makes every key of that release ``introduced``."""


def _default(record: dict[str, Any]) -> Any:
    # Same spelling as dsfields.history.default_value, so index and snapshot walk agree.
    return record["default_repr"] if record.get("default_repr") is not None else record.get("default")


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    return {"type": record.get("type"), "default": _default(record)}


def _events(version: str, old: dict[str, Any], new: dict[str, Any], changes: list[Change],
            seen: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Translate one release's changes into per-path history events (``seen``: paths met before)."""
    old_fields, new_fields = old.get("fields") or {}, new.get("fields") or {}
    out: dict[str, list[dict[str, Any]]] = {}
    introduced: set[str] = set()

    def add(path: str, kind: str, before: Any, after: Any) -> None:
        event = {"version": version, "kind": kind, "old": before, "new": after}
        if event not in out.setdefault(path, []):
            out[path].append(event)

    def arrive(path: str) -> None:
        record = new_fields[path]
        add(path, "reintroduced" if path in seen else "introduced", None, _summary(record))
        introduced.add(path)
        if record.get("deprecated") is not None:  # born deprecated: "deprecated since" is still news
            add(path, "deprecated", None, record["deprecated"])

    for change in changes:
        path, kind = change.path, change.kind
        if kind is ChangeKind.ADDED:
            arrive(path)
        elif kind is ChangeKind.RENAMED:
            # A rename is history for both keys: the old one is deprecated or gone, the new one arrives.
            arrive(change.new)
            if path in new_fields:
                add(path, "deprecated", old_fields[path].get("deprecated"), new_fields[path].get("deprecated"))
            else:
                add(path, "removed", _summary(old_fields[path]), None)
        elif kind is ChangeKind.REMOVED and path in old_fields:
            add(path, "removed", _summary(old_fields[path]), None)
        elif kind is ChangeKind.BECAME_REMOVED:
            add(path, "became_removed", _summary(old_fields[path]) if path in old_fields else None, change.new)
        elif path in introduced or path not in old_fields or path not in new_fields:
            continue  # attribute changes of a renamed pair belong to the arrival
        elif kind is ChangeKind.DEFAULT_CHANGED and _default(old_fields[path]) != _default(new_fields[path]):
            add(path, "default_changed", _default(old_fields[path]), _default(new_fields[path]))
        elif kind is ChangeKind.TYPE_CHANGED and old_fields[path].get("type") != new_fields[path].get("type"):
            add(path, "type_changed", old_fields[path].get("type"), new_fields[path].get("type"))
        elif kind in (ChangeKind.DEPRECATED, ChangeKind.UNDEPRECATED):
            add(path, kind.name.lower(), change.old, change.new)
    return out


def read_failures(generated: Path) -> dict[str, str]:
    """``failures.json`` as version → one-line reason; accepts a flat map or one under ``failed``."""
    path = generated / FAILURES_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {FAILURES_FILE: f"unreadable: {exc}"}
    if isinstance(data, dict):
        data = data.get("failed", data.get("failures", data))
    if not isinstance(data, dict):
        return {FAILURES_FILE: "unexpected content (expected version -> reason)"}
    failed: dict[str, str] = {}
    for version, reason in data.items():
        if version in ("generated_by", "format_version"):
            continue
        if isinstance(reason, dict):
            reason = reason.get("reason") or reason.get("error") or reason.get("message") or json.dumps(reason)
        failed[str(version)] = str(reason)
    return failed


def _raw_format_version(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("format_version")
    except (OSError, ValueError, AttributeError):
        return None


def build_index(generated_dir: Path | None = None, *, generated_by: str = GENERATED_BY) -> dict[str, Any]:
    """The index of ``generated_dir`` (default: the checkout's ``generated/``) as plain data."""
    root = generated_dir or repo_generated_dir()
    versions = available_versions(root)
    failed = read_failures(root)
    snapshots: dict[str, dict[str, Any]] = {}
    fields: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    previous = _EMPTY
    for version in versions:
        try:
            snapshot = load(version, root).raw
        except SnapshotError as exc:
            # A stale-format snapshot stays listed (readers compare versions with the disk) but is
            # left out of the history rather than compared across formats.
            snapshots[version] = {"format_version": _raw_format_version(root / version / SNAPSHOT_FILE),
                                  "fields": None}
            failed.setdefault(version, str(exc))
            continue
        snapshots[version] = {"format_version": snapshot.get("format_version"),
                              "fields": len(snapshot.get("fields") or {})}
        changes = diff_snapshots(previous, snapshot)
        for path, events in _events(version, previous, snapshot, changes, seen).items():
            fields.setdefault(path, []).extend(events)
        seen.update(snapshot.get("fields") or {})
        seen.update(snapshot.get("removed") or {})
        previous = snapshot
    return {
        "generated_by": generated_by,
        "format_version": FORMAT_VERSION,
        "versions": versions,
        "snapshots": snapshots,
        "failed": dict(sorted(failed.items(), key=lambda item: version_key(item[0]))),
        "fields": dict(sorted(fields.items())),
    }


def write_index(generated_dir: Path | None = None, *, generated_by: str = GENERATED_BY) -> Path:
    """Rebuild ``index.json`` next to the snapshots (atomically); call after adding or removing one."""
    root = generated_dir or repo_generated_dir()
    target = root / INDEX_FILE
    write_atomic(target, dumps(build_index(root, generated_by=generated_by)))
    return target


def load_index(generated_dir: Path | None = None) -> dict[str, Any]:
    """``index.json`` if it matches the snapshots on disk, else the index built now (never stale)."""
    root = generated_dir or repo_generated_dir()
    path = root / INDEX_FILE
    if path.is_file():
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            index = None
        if isinstance(index, dict) and index.get("versions") == available_versions(root):
            return index
    return build_index(root)


def added_since(version: str, index: dict[str, Any] | Path | None = None, *,
                until: str | None = None) -> dict[str, str]:
    """Keys (re)introduced after ``version`` and still present at ``until`` (default: newest): path → release.

    Keys already in the oldest snapshot are never reported: what happened before it is unknown.
    """
    data = index if isinstance(index, dict) else load_index(index)
    versions: list[str] = list(data.get("versions") or [])
    first = versions[0] if versions else None
    after = version_key(version)
    limit = version_key(until) if until else None
    found: dict[str, str] = {}
    for path, events in (data.get("fields") or {}).items():
        arrived: str | None = None
        for event in events:
            if limit is not None and version_key(event["version"]) > limit:
                break
            if event["kind"] in ("introduced", "reintroduced"):
                arrived = event["version"]
            elif event["kind"] in ("removed", "became_removed"):
                arrived = None
        if arrived is not None and arrived != first and version_key(arrived) > after:
            found[path] = arrived
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.index [GENERATED_DIR]``: rewrite the index by hand."""
    args = sys.argv[1:] if argv is None else argv
    target = write_index(Path(args[0]) if args else None)
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
