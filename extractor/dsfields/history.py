"""When a DeepSpeed config field appeared, changed its default or type, was deprecated or removed.

Answers ``dsfields lookup --history`` from the committed snapshots alone (stdlib only): walking
every ``generated/<version>/fields.json`` in release order and comparing each field's record with
the previous release's. When ``generated/index.json`` carries precomputed histories (``fields`` →
path → events, same shape as :meth:`HistoryEvent.as_dict`) for the same set of versions, those are
used instead, so a long release history need not be loaded on every call.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from dsfields.model.store import INDEX_FILE, available_versions, load, repo_generated_dir


class EventKind(StrEnum):
    """What happened to a field at a release; the value is what scripts see in ``--json``."""

    INTRODUCED = "introduced"
    DEFAULT_CHANGED = "default_changed"
    TYPE_CHANGED = "type_changed"
    DEPRECATED = "deprecated"
    UNDEPRECATED = "undeprecated"
    REMOVED = "removed"
    BECAME_REMOVED = "became_removed"
    """Removed and rejected by DeepSpeed with a message (only the index tells this apart from removed)."""
    REINTRODUCED = "reintroduced"

    @property
    def message(self) -> str:
        return self.value.replace("_", " ")


class HistoryEvent(NamedTuple):
    """One change of one field between a release and the previous committed snapshot.

    A NamedTuple rather than a dataclass: ``dataclasses`` imports ``inspect``, which costs
    ``dsfields lookup`` more start-up time than everything else it needs.
    """

    version: str
    """The first DeepSpeed release (among committed snapshots) showing the change."""
    kind: EventKind
    old: Any = None
    """The value before (type, default, deprecation record), ``None`` where there is none."""
    new: Any = None
    """The value from ``version`` on; for ``removed``, DeepSpeed's message if it rejects the key."""

    def as_dict(self) -> dict[str, Any]:
        return {"version": self.version, "kind": self.kind.value, "old": self.old, "new": self.new}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HistoryEvent:
        return cls(str(data["version"]), EventKind(data["kind"]), data.get("old"), data.get("new"))


def default_value(record: dict[str, Any]) -> Any:
    """The default as compared across releases: the symbolic spelling where JSON alone misleads."""
    return record["default_repr"] if record.get("default_repr") is not None else record.get("default")


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    return {"type": record.get("type"), "default": default_value(record)}


def _state(snapshot: dict[str, Any], path: str) -> tuple[str, dict[str, Any] | None]:
    # A removed key may also appear in `fields` (DeepSpeed reads it only to reject it): removal wins.
    removed = snapshot.get("removed", {}).get(path)
    if removed is not None:
        return "removed", removed
    field = snapshot.get("fields", {}).get(path)
    if field is not None:
        return "present", field
    return "absent", None


def _changes(version: str, old: dict[str, Any], new: dict[str, Any]) -> list[HistoryEvent]:
    events: list[HistoryEvent] = []
    if old.get("type") != new.get("type"):
        events.append(HistoryEvent(version, EventKind.TYPE_CHANGED, old.get("type"), new.get("type")))
    if default_value(old) != default_value(new):
        events.append(HistoryEvent(version, EventKind.DEFAULT_CHANGED, default_value(old), default_value(new)))
    old_dep, new_dep = old.get("deprecated"), new.get("deprecated")
    if old_dep is None and new_dep is not None:
        events.append(HistoryEvent(version, EventKind.DEPRECATED, None, new_dep))
    elif old_dep is not None and new_dep is None:
        events.append(HistoryEvent(version, EventKind.UNDEPRECATED, old_dep, None))
    elif old_dep != new_dep:
        # The replacement changed (e.g. a new target key): report it as a fresh deprecation.
        events.append(HistoryEvent(version, EventKind.DEPRECATED, old_dep, new_dep))
    return events


def walk_snapshots(path: str, generated: Path, versions: list[str]) -> list[HistoryEvent]:
    """Compute ``path``'s history by comparing consecutive snapshots."""
    events: list[HistoryEvent] = []
    seen = False
    prev_state, prev = "absent", None
    for version in versions:
        state, record = _state(load(version, generated).raw, path)
        if state == "present":
            assert record is not None
            if prev_state != "present":
                kind = EventKind.REINTRODUCED if seen else EventKind.INTRODUCED
                events.append(HistoryEvent(version, kind, None, _summary(record)))
                if record.get("deprecated") is not None:
                    # Born deprecated (or older than the oldest snapshot): "deprecated in" is still news.
                    events.append(HistoryEvent(version, EventKind.DEPRECATED, None, record["deprecated"]))
            else:
                assert prev is not None
                events.extend(_changes(version, prev, record))
            seen = True
        elif state == "removed":
            assert record is not None
            if prev_state != "removed":
                old = _summary(prev) if prev_state == "present" and prev is not None else None
                events.append(HistoryEvent(version, EventKind.REMOVED, old, record.get("message")))
            seen = True
        elif prev_state == "present" and prev is not None:
            # Dropped without a rejection message: DeepSpeed now silently ignores (or rejects) it.
            events.append(HistoryEvent(version, EventKind.REMOVED, _summary(prev), None))
        prev_state, prev = state, record
    return events


def _from_index(path: str, generated: Path, versions: list[str]) -> list[HistoryEvent] | None:
    """Precomputed events from ``index.json``, or None when absent, stale, malformed or silent on ``path``."""
    index_path = generated / INDEX_FILE
    if not index_path.is_file():
        return None
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(index, dict) or not isinstance(index.get("fields"), dict):
        return None
    # An index written before the latest snapshot was committed would hide that release's changes.
    listed = index.get("versions")
    if listed is not None and list(listed) != versions:
        return None
    raw = index["fields"].get(path)
    if not isinstance(raw, list):
        return None
    try:
        return [HistoryEvent.from_dict(event) for event in raw]
    except (KeyError, TypeError, ValueError):
        return None


def field_history(path: str, generated: Path | None = None) -> list[HistoryEvent]:
    """Every change of the field at JSON ``path`` across the committed snapshots, oldest first.

    ``generated`` defaults to the checkout's ``generated/`` (or ``$DSFIELDS_GENERATED``). A path
    that no snapshot knows has no events.
    """
    root = generated or repo_generated_dir()
    versions = available_versions(root)
    indexed = _from_index(path, root, versions)
    if indexed is not None:
        return indexed
    return walk_snapshots(path, root, versions)
