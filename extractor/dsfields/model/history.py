"""When a DeepSpeed config key appeared, changed, was deprecated, renamed, removed or rejected: one engine.

Every answer about a key's history — ``dsfields lookup --history``, the docs' history and
"added since" pages, ``generated/index.json`` — comes from :func:`walk`, which reads each committed
snapshot once, in release order, and compares every key's state with the previous release's.
``index.json`` is nothing but that walk's output, written after snapshotting so that a lookup need
not load 77 snapshots; :func:`field_history` answers from it only while it is *current* (see
:func:`read_index`) and walks otherwise. The story is therefore the same with or without the index,
by construction.

A key's state in one release is one of

* **present**: in the snapshot's ``fields`` (DeepSpeed reads it);
* **rejected**: in the snapshot's ``removed`` map (DeepSpeed raises with a message if it is set),
  or — for a key that was present or rejected in the previous release — inside a section that is
  now rejected (DeepSpeed raises on the section, so the key goes with it, as ``dsfields diff`` says);
  rejection wins over a ``fields`` record, which DeepSpeed may keep only to raise;
* **absent**: neither (a value there is ignored, or an unknown-key error of a strict section).

Events between consecutive releases, in this order within one release (:class:`EventKind`):
``introduced`` / ``reintroduced`` (absent or rejected → present; new: ``{type, default}``; a key born
deprecated also gets ``deprecated``), ``type_changed``, ``default_changed`` (the symbolic spelling
where there is one), ``deprecated`` / ``undeprecated`` (old/new: the deprecation records),
``renamed`` (old/new: the JSON paths; see below), ``removed`` (present → absent: no longer read;
old: ``{type, default}``), ``became_removed`` (→ rejected; new: DeepSpeed's message) and
``no_longer_rejected`` (rejected → absent: the message is gone, the key is not read either).

Renames are reported only where the snapshots prove them, on both keys, in the release it happened
(never in the oldest snapshot, where nothing is known about before): key X becomes deprecated with a
replacement (``new_param``, a python name of X's section) that resolves to a key Y arriving in the
same release; or X stops being read while exactly one key Y of the same section arrives under the
same pydantic attribute (``python_name``), a new alias.

Only the stdlib and :mod:`dsfields.model.store` are imported (not ``dsfields.diff``: the snapshot
command writes the index, and diff's import would close a package loop).

The index also carries ``catalogs``: per optimizer/scheduler section, each ``type`` name's ``[first, last]``
release spans (:func:`catalog_spans`), so ``check`` can say "removed in X (last in Y)" of a name without
loading every snapshot; an index without it is answered by a walk.

**Staleness.** The index records, per snapshotted version, the byte size and sha256 of its
``fields.json`` at index time, and its own ``format_version`` (:data:`INDEX_FORMAT_VERSION`). A
reader believes it only if its format version is this one's, its ``versions`` are exactly the
snapshots on disk and every snapshot's size (one ``stat`` each, well under a millisecond for 77
releases) is the recorded one; otherwise it walks. Hashing every snapshot on each lookup would cost
25–80 ms (29 MB), more than the whole lookup with the index; the trade-off is that an edit keeping
a snapshot's byte size exactly (``0.0`` → ``1.0``) goes unnoticed by readers until the index is
rewritten. Every writer of snapshots (``dsfields snapshot``) rewrites the index, and
:func:`index_problems` (``python -m dsfields.model.history --check``, and the test suite) compares
the hashes too, so such an index cannot be committed unnoticed.
"""

from __future__ import annotations

import json
import os
import sys
from collections import namedtuple
from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum

from dsfields.model.records import Field, Snapshot
from dsfields.model.renames import replacement_of
from dsfields.model.store import (
    COMPRESSED_SUFFIX,
    INDEX_FILE,
    SNAPSHOT_FILE,
    SnapshotError,
    available_versions,
    dumps,
    generated_root,
    generated_size,
    load,
    read_generated,
    repo_generated_dir,
    version_key,
    write_atomic,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathlib (with urllib.parse and ipaddress under it) costs check's start-up: the paths a check
    from pathlib import Path  # reads (read_index, departure, arrival) are joined with os.path

INDEX_FORMAT_VERSION = 3
"""Of ``index.json`` itself (1: the diff-folding index, without snapshot sizes and hashes; 2: without the
constraint and choice changes of a key)."""

FAILURES_FILE = "failures.json"
"""Written by the multi-release snapshotting: version → why it has no snapshot."""

GENERATED_BY = "python -m dsfields.model.history"

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up time (an unknown key reads the index); annotations are strings
    from typing import Any

Record = dict
"""A JSON object as stored (what the events carry, so that ``--json`` and the index stay plain data)."""


class EventKind(StrEnum):
    """What happened to a key at a release; the value is what scripts see in ``--json`` and the index.

    Declaration order is the order of a key's events within one release.
    """

    INTRODUCED = "introduced"
    REINTRODUCED = "reintroduced"
    TYPE_CHANGED = "type_changed"
    DEFAULT_CHANGED = "default_changed"
    CONSTRAINTS_CHANGED = "constraints_changed"
    """The bounds of a value changed (``ge`` → ``gt``): ``old``/``new`` are the constraints maps."""
    CHOICES_CHANGED = "choices_changed"
    """The list of allowed values changed: ``old``/``new`` are the lists (None: any value of the type)."""
    DEPRECATED = "deprecated"
    UNDEPRECATED = "undeprecated"
    RENAMED = "renamed"
    REMOVED = "removed"
    """No longer read, and no message: a value there is now ignored (or an unknown-key error)."""
    BECAME_REMOVED = "became_removed"
    """Removed and rejected: DeepSpeed raises with a message (the snapshot's ``removed`` map)."""
    NO_LONGER_REJECTED = "no_longer_rejected"

    @property
    def message(self) -> str:
        return _MESSAGES.get(self, self.value.replace("_", " "))


_MESSAGES = {EventKind.BECAME_REMOVED: "removed and rejected", EventKind.REMOVED: "removed (no longer read)"}
_RANK = {kind: i for i, kind in enumerate(EventKind)}
_ARRIVALS = (EventKind.INTRODUCED, EventKind.REINTRODUCED)


class HistoryEvent(namedtuple("HistoryEvent", "version kind old new", defaults=(None, None))):
    """One change of one key between a release and the previous committed snapshot: ``version``, the first
    DeepSpeed release (among committed snapshots) showing the change; its ``kind`` (:class:`EventKind`); ``old``,
    the value before (type, default, deprecation record, old path), None where there is none; ``new``, the value
    from ``version`` on (for ``became_removed``, DeepSpeed's message).

    A named tuple rather than a dataclass (``dataclasses`` imports ``inspect``) or ``typing.NamedTuple`` (``typing``):
    both cost ``check`` and ``lookup`` start-up time.
    """

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        return {"version": self.version, "kind": self.kind.value, "old": self.old, "new": self.new}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HistoryEvent:
        return cls(str(data["version"]), EventKind(data["kind"]), data.get("old"), data.get("new"))


def default_value(record: Field) -> Any:
    """The default as compared across releases: the symbolic spelling where JSON alone misleads."""
    return record.default_repr if record.default_repr is not None else record.default


def _summary(record: Field) -> dict[str, Any]:
    return {"type": record.type, "default": default_value(record)}


def _deprecation(record: Field) -> Record | None:
    """The deprecation record as stored (events carry it as data)."""
    deprecated = record.deprecated
    return deprecated.raw if deprecated is not None else None


# ---------------------------------------------------------------- the walk

_PRESENT, _REJECTED = "present", "rejected"


class _State(namedtuple("_State", "kind value")):
    """``kind``: ``present`` or ``rejected`` (absent keys have no state); ``value``: the :class:`Field` (present) or
    DeepSpeed's message (rejected)."""

    __slots__ = ()


def _rejecting_ancestor(path: str, removed: dict[str, Any]) -> str | None:
    head = path
    while "." in head:
        head = head.rpartition(".")[0]
        if head in removed:
            return head
    return None


def _states(snapshot: Snapshot, previous: dict[str, _State]) -> dict[str, _State]:
    removed = snapshot.removed
    states = {path: _State(_PRESENT, record) for path, record in snapshot.fields.items()}
    for path, record in removed.items():
        states[path] = _State(_REJECTED, record.message)  # rejection wins over a fields record
    if removed:
        for path in previous.keys() - states.keys():
            owner = _rejecting_ancestor(path, removed)
            if owner is not None:
                states[path] = _State(_REJECTED, removed[owner].message)
    return states


def _attribute_changes(version: str, old: Field, new: Field) -> Iterator[HistoryEvent]:
    if old.type != new.type:
        yield HistoryEvent(version, EventKind.TYPE_CHANGED, old.type, new.type)
    if default_value(old) != default_value(new):
        yield HistoryEvent(version, EventKind.DEFAULT_CHANGED, default_value(old), default_value(new))
    if (old.constraints or {}) != (new.constraints or {}):
        yield HistoryEvent(version, EventKind.CONSTRAINTS_CHANGED, dict(old.constraints or {}),
                           dict(new.constraints or {}))
    if old.choices != new.choices:
        yield HistoryEvent(version, EventKind.CHOICES_CHANGED, old.choices, new.choices)
    old_dep, new_dep = _deprecation(old), _deprecation(new)
    if old_dep is None and new_dep is not None:
        yield HistoryEvent(version, EventKind.DEPRECATED, None, new_dep)
    elif old_dep is not None and new_dep is None:
        yield HistoryEvent(version, EventKind.UNDEPRECATED, old_dep, None)
    elif old_dep != new_dep:
        # The replacement changed (e.g. a new target key): a fresh deprecation.
        yield HistoryEvent(version, EventKind.DEPRECATED, old_dep, new_dep)


def _transition(version: str, before: _State | None, after: _State | None, seen: bool) -> list[HistoryEvent]:
    if after is not None and after.kind == _PRESENT:
        if before is not None and before.kind == _PRESENT:
            return list(_attribute_changes(version, before.value, after.value))
        kind = EventKind.REINTRODUCED if seen else EventKind.INTRODUCED
        events = [HistoryEvent(version, kind, None, _summary(after.value))]
        if after.value.deprecated is not None:
            # Born deprecated (or older than the oldest snapshot): "deprecated in" is still news.
            events.append(HistoryEvent(version, EventKind.DEPRECATED, None, _deprecation(after.value)))
        return events
    if after is not None:  # rejected
        if before is not None and before.kind == _REJECTED:
            return []
        old = _summary(before.value) if before is not None else None
        return [HistoryEvent(version, EventKind.BECAME_REMOVED, old, after.value)]
    if before is None:
        return []
    if before.kind == _PRESENT:
        return [HistoryEvent(version, EventKind.REMOVED, _summary(before.value), None)]
    return [HistoryEvent(version, EventKind.NO_LONGER_REJECTED, before.value, None)]




def _renames(version: str, fields: dict[str, Field], previous: dict[str, _State],
             step: dict[str, list[HistoryEvent]]) -> list[tuple[str, str]]:
    """(old path, new path) pairs this release proves renamed (see the module docstring)."""
    arrived = {path for path, events in step.items() if events[0].kind in _ARRIVALS}
    pairs: list[tuple[str, str]] = []
    taken: set[str] = set()
    for path, events in sorted(step.items()):
        kinds = {e.kind for e in events}
        if EventKind.DEPRECATED in kinds and not kinds & set(_ARRIVALS):
            target = replacement_of(fields, path, fields[path])
            if target in arrived and target not in taken:
                pairs.append((path, target))
                taken.add(target)
    for path, events in sorted(step.items()):
        if [e.kind for e in events] != [EventKind.REMOVED]:
            continue
        before: Field = previous[path].value
        name, section = before.python_name, before.section
        if not name:
            continue
        matches = [p for p in arrived - taken if fields[p].python_name == name and fields[p].section == section]
        if len(matches) == 1:
            pairs.append((path, matches[0]))
            taken.add(matches[0])
    return pairs


def walk_snapshots(snapshots: Iterable[tuple[str, Snapshot | Record]]) -> dict[str, list[HistoryEvent]]:
    """Every key's events over ``(version, snapshot)`` pairs in release order: the one engine.

    A snapshot is a :class:`Snapshot` (a plain JSON object is wrapped in one).
    """
    histories: dict[str, list[HistoryEvent]] = {}
    states: dict[str, _State] = {}
    first = True
    for version, given in snapshots:
        snapshot = given if isinstance(given, Snapshot) else Snapshot(given)
        fields = snapshot.fields
        new_states = _states(snapshot, states)
        step: dict[str, list[HistoryEvent]] = {}
        for path in states.keys() | new_states.keys():
            events = _transition(version, states.get(path), new_states.get(path), seen=path in histories)
            if events:
                step[path] = events
        if not first:
            for old_path, new_path in _renames(version, fields, states, step):
                event = HistoryEvent(version, EventKind.RENAMED, old_path, new_path)
                step[old_path].append(event)
                step[new_path].append(event)
        for path, events in step.items():
            histories.setdefault(path, []).extend(sorted(events, key=lambda e: _RANK[e.kind]))
        states, first = new_states, False
    return dict(sorted(histories.items()))


def _loadable(root: Path, versions: list[str]) -> Iterator[tuple[str, Snapshot]]:
    """The snapshots the history is made of: a stale-format or unreadable one is left out, not compared."""
    for version in versions:
        try:
            yield version, load(version, root)
        except SnapshotError:
            continue


def walk(generated: Path | None = None) -> dict[str, list[HistoryEvent]]:
    """Every key's history from the snapshots on disk (``generated`` defaults to the checkout's)."""
    root = generated or repo_generated_dir()
    return walk_snapshots(_loadable(root, available_versions(root)))


# ---------------------------------------------------------------- the index


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


def _file_facts(path: Path) -> dict[str, Any]:
    import hashlib  # only writers and the thorough check hash; lookup's start-up stays lighter without it

    data = read_generated(os.fspath(path))
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _raw_format_version(path: Path) -> Any:
    try:
        return json.loads(read_generated(os.fspath(path)).decode("utf-8")).get("format_version")
    except (OSError, ValueError, AttributeError):
        return None


def build_index(generated_dir: Path | None = None, *, generated_by: str = GENERATED_BY) -> dict[str, Any]:
    """The index of ``generated_dir`` (default: the checkout's ``generated/``) as plain data."""
    root = generated_dir or repo_generated_dir()
    versions = available_versions(root)
    failed = read_failures(root)
    snapshots: dict[str, dict[str, Any]] = {}
    loaded: list[tuple[str, Snapshot]] = []
    for version in versions:
        facts = _file_facts(root / version / SNAPSHOT_FILE)
        try:
            snapshot = load(version, root)
        except SnapshotError as exc:
            # Listed (readers compare versions with the disk) but left out of the history, as the walk does.
            snapshots[version] = {"format_version": _raw_format_version(root / version / SNAPSHOT_FILE),
                                  "fields": None, **facts}
            failed.setdefault(version, str(exc))
            continue
        snapshots[version] = {"format_version": snapshot.format_version, "fields": len(snapshot.fields), **facts}
        loaded.append((version, snapshot))
    histories = walk_snapshots(loaded)
    return {
        "catalogs": catalog_spans(loaded),
        "generated_by": generated_by,
        "format_version": INDEX_FORMAT_VERSION,
        "versions": versions,
        "snapshots": snapshots,
        "failed": dict(sorted(failed.items(), key=lambda item: version_key(item[0]))),
        "fields": {path: [e.as_dict() for e in events] for path, events in histories.items()},
    }


def write_index(generated_dir: Path | None = None, *, generated_by: str = GENERATED_BY) -> Path:
    """Rebuild ``index.json`` next to the snapshots (atomically); call after adding or removing one."""
    root = generated_dir or repo_generated_dir()
    target = root / INDEX_FILE
    write_atomic(target, dumps(build_index(root, generated_by=generated_by)))
    return target


def _stale_reason(index: Any, root: Path | str, signature: tuple[Any, ...] | None = None) -> str | None:
    """Why ``index`` (parsed ``index.json``) does not describe the snapshots on disk, by the cheap test; from the
    stats of :func:`_signature` when given (``read_index`` has them: the folder is not listed and statted twice)."""
    if not isinstance(index, dict):
        return "not a JSON object"
    if index.get("format_version") != INDEX_FORMAT_VERSION:
        return f"format_version {index.get('format_version')!r}, this dsfields reads {INDEX_FORMAT_VERSION}"
    if not isinstance(index.get("fields"), Mapping) or not isinstance(index.get("snapshots"), dict):
        return "no fields or snapshots map"
    folder = os.fspath(root)
    if signature is None:
        signature = _signature(folder)
    sizes = {fact[0]: fact[2] for fact in signature if fact[5]}  # regular files only
    on_disk = {}
    for path, size in sizes.items():
        parent, name = os.path.split(path)
        if name in (SNAPSHOT_FILE, SNAPSHOT_FILE + COMPRESSED_SUFFIX) and os.path.dirname(parent) == folder:
            on_disk.setdefault(os.path.basename(parent), {})[name] = size
    versions = sorted(on_disk, key=version_key)
    if index.get("versions") != versions:
        return "its versions are not the snapshots on disk"
    snapshots = index["snapshots"]
    stored = _stored_sizes(folder)
    for version in versions:
        recorded = snapshots.get(version)
        size: int | None = on_disk[version].get(SNAPSHOT_FILE)
        if size is None:
            # A compressed snapshot (the wheel's) still of the size the wheel's build wrote it at: the one the index
            # was checked against then (STORED_SIZES); only another has its gzip trailer read.
            if stored.get(version) != on_disk[version][SNAPSHOT_FILE + COMPRESSED_SUFFIX]:
                try:
                    size = generated_size(os.path.join(folder, version, SNAPSHOT_FILE))
                except OSError:
                    return f"{version}: snapshot unreadable"
        if not isinstance(recorded, dict) or (size is not None and recorded.get("size") != size):
            return f"{version}: snapshot size differs from the indexed one"
    return None


STORED_SIZES = "stored.json"
"""In a wheel's ``generated/`` (written by its build, hatch_build.py): each release's ``fields.json.gz`` size as
written. A compressed snapshot still of that size is the one the build checked ``index.json`` against, so the
staleness test takes the indexed size for it without opening its gzip trailer (77 opens were a twentieth of
``check``'s time for a file of typos); a snapshot of another size is read as before."""


def write_stored_sizes(folder: str | Path) -> None:
    """Write :data:`STORED_SIZES` for the compressed snapshots under ``folder`` (the wheel's build hook)."""
    root = os.fspath(folder)
    sizes = {}
    for name in sorted(os.listdir(root)):
        packed = os.path.join(root, name, SNAPSHOT_FILE + COMPRESSED_SUFFIX)
        if os.path.isfile(packed):
            sizes[name] = os.stat(packed).st_size
    with open(os.path.join(root, STORED_SIZES), "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"generated_by": "hatch_build.py", "fields_json_gz": sizes}, sort_keys=True) + "\n")


def _stored_sizes(folder: str) -> dict[str, int]:
    """:data:`STORED_SIZES` of a wheel's ``generated/``: release → the size of its ``fields.json.gz`` as the build
    wrote it ({} in a checkout, or if unreadable)."""
    try:
        with open(os.path.join(folder, STORED_SIZES), encoding="utf-8") as handle:
            sizes = json.loads(handle.read()).get("fields_json_gz")
    except (OSError, ValueError, AttributeError):
        return {}
    return {k: v for k, v in sizes.items() if isinstance(v, int)} if isinstance(sizes, dict) else {}


_READ: dict[str, tuple[tuple[Any, ...], dict[str, Any] | None]] = {}
"""Per ``generated/`` folder: the stat signature of its files when :func:`read_index` last judged them, and its
verdict. ``check`` asks about every unknown key; the index is read and judged once per process, not per key."""


def _signature(root: Path | str) -> tuple[Any, ...]:
    """What changes when ``index.json`` or a snapshot under ``root`` is written, added or removed: one ``stat``
    per file (well under a millisecond for 77 releases), no byte read; ``(path, inode, size, mtime, ctime, is a
    regular file)`` each, which the staleness test reads its versions and sizes from."""
    import stat as stat_kind

    folder = os.fspath(root)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    paths = [os.path.join(folder, INDEX_FILE)]
    for name in names:
        snapshot = os.path.join(folder, name, SNAPSHOT_FILE)
        paths += [snapshot, snapshot + COMPRESSED_SUFFIX]
    facts: list[Any] = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        facts.append((path, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns,
                      stat_kind.S_ISREG(stat.st_mode)))
    return tuple(facts)


_RACY_NS = 2_000_000_000
"""A file written this recently may be written again within the file system's timestamp granularity (a clock tick,
not a nanosecond) without a visible change of its stat: a verdict on it is not kept (git's "racy clean" rule)."""


def _settled(signature: tuple[Any, ...]) -> bool:
    """Every file of ``signature`` last changed long enough ago for its stat to tell the next change."""
    import time

    now = time.time_ns()
    return all(now - fact[3] > _RACY_NS for fact in signature)  # mtime: what a write moves


_FIELDS_AT = '\n "fields": '
"""Where ``index.json`` (written by :func:`dumps`: sorted keys, one space per level) holds every key's events."""


class _IndexFields(Mapping):
    """``index.json``'s ``fields``, a key's events decoded when first asked (``check`` asks a few of ~2,000 keys);
    iterating decodes them all."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self._text, self._start, self._end = text, start, end
        self._asked: dict[str, Any] = {}
        self._all: dict[str, Any] | None = None

    def _whole(self) -> dict[str, Any]:
        if self._all is None:
            self._all = json.loads(self._text[self._start:self._end])
        return self._all

    def __getitem__(self, path: str) -> Any:
        if self._all is not None:
            return self._all[path]
        if path not in self._asked:
            marker = "\n  " + json.dumps(path, ensure_ascii=False) + ": "  # a key of this object: two spaces in
            at = self._text.find(marker, self._start, self._end)
            if at < 0:
                raise KeyError(path)
            self._asked[path] = json.JSONDecoder().raw_decode(self._text, at + len(marker))[0]
        return self._asked[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())


def _parsed_index(text: str) -> dict[str, Any]:
    """``index.json``'s text as data, its ``fields`` decoded lazily (:class:`_IndexFields`): the rest, a few kB of
    the 185 kB, is decoded now."""
    at = text.find(_FIELDS_AT)
    end = text.find('\n "', at + len(_FIELDS_AT)) if at >= 0 else -1
    if at < 0 or end < 0:
        return json.loads(text)
    start = at + len(_FIELDS_AT)
    stop = text.rindex("}", start, end) + 1
    index = json.loads(text[:start] + "{}" + text[stop:])
    index["fields"] = _IndexFields(text, start, stop)
    return index


def read_index(generated_dir: Path | None = None) -> dict[str, Any] | None:
    """``index.json`` if it is current (format, versions, snapshot sizes), else None: never a stale one.

    Judged once per process while no file of the folder changes (:func:`_signature`) and none changed in the last two
    seconds (:func:`_settled`); callers must not mutate it.
    """
    root = os.fspath(generated_dir) if generated_dir else generated_root()
    key = root
    signature = _signature(root)
    known = _READ.get(key)
    if known is not None and known[0] == signature:
        return known[1]
    try:
        with open(os.path.join(root, INDEX_FILE), encoding="utf-8") as handle:
            index = _parsed_index(handle.read())
    except (OSError, ValueError):
        index = None
    current = index if index is not None and _stale_reason(index, root, signature) is None else None
    if _settled(signature):
        _READ[key] = (signature, current)
    return current


def index_problems(generated_dir: Path | None = None) -> list[str]:
    """What is wrong with ``index.json`` by the thorough test (hashes, and the content rebuilt); [] if none."""
    root = generated_dir or repo_generated_dir()
    try:
        index = json.loads((root / INDEX_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{INDEX_FILE} unreadable: {exc}"]
    reason = _stale_reason(index, root)
    if reason is not None:
        return [reason]
    problems = [f"{version}: snapshot sha256 differs from the indexed one" for version in index["versions"]
                if index["snapshots"][version].get("sha256") != _file_facts(root / version / SNAPSHOT_FILE)["sha256"]]
    rebuilt = build_index(root, generated_by=index.get("generated_by", GENERATED_BY))
    if not problems and rebuilt != index:
        problems.append("content differs from the index rebuilt now (the engine changed?)")
    return problems


def load_index(generated_dir: Path | None = None) -> dict[str, Any]:
    """``index.json`` if it is current, else the index built now (never stale)."""
    root = generated_dir or repo_generated_dir()
    return read_index(root) or build_index(root)


def _events(raw: Any) -> list[HistoryEvent]:
    if not isinstance(raw, list):
        raise TypeError("events are not a list")
    return [HistoryEvent.from_dict(event) for event in raw]


def field_histories(paths: Iterable[str], generated: Path | None = None) -> dict[str, list[HistoryEvent]]:
    """Every change of each key at JSON ``paths`` across the committed snapshots, oldest first.

    From ``index.json`` while it is current, else from :func:`walk`: the same events either way.
    ``generated`` defaults to the checkout's ``generated/`` (or ``$DSFIELDS_GENERATED``). A path that
    no snapshot knows has no events.
    """
    root = generated or generated_root()
    return _histories(list(paths), root, read_index(root))


def _histories(wanted: list[str], root: Path, index: dict[str, Any] | None) -> dict[str, list[HistoryEvent]]:
    """:func:`field_histories` with the index already read (None: not current)."""
    if index is not None:
        try:
            fields = index["fields"]
            return {path: _events(fields.get(path, [])) for path in wanted}
        except (KeyError, TypeError, ValueError):
            pass  # a damaged index is no index
    walked = _walked(root)
    return {path: list(walked.get(path, [])) for path in wanted}


_WALKED: dict[str, tuple[tuple[Any, ...], dict[str, list[HistoryEvent]]]] = {}
"""Per folder without a current index: its :func:`walk`, made once while no file of it changes."""


def _walked(root: Path) -> dict[str, list[HistoryEvent]]:
    key, signature = os.fspath(root), _signature(root)
    known = _WALKED.get(key)
    if known is not None and known[0] == signature:
        return known[1]
    walked = walk(root)
    if _settled(signature):
        _WALKED[key] = (signature, walked)
    return walked


def catalog_spans(snapshots: Iterable[tuple[str, Snapshot]]) -> dict[str, dict[str, list[list[str]]]]:
    """Per catalog section (``optimizer``, ``scheduler``), each ``type`` name → its ``[first, last]`` release spans.

    What ``check`` needs to say "removed in X, last in Y" of an optimizer no longer built: a name the
    current release does not know, but an older one did. Spans, not one range: a name may come back.
    """
    spans: dict[str, dict[str, list[list[str]]]] = {}
    previous: dict[str, set[str]] = {}
    last_version: str | None = None
    for version, snapshot in snapshots:
        current = {section: set(catalog.names) for section, catalog in snapshot.catalogs.items()}
        for section, names in current.items():
            table = spans.setdefault(section, {})
            for name in names:
                runs = table.setdefault(name, [])
                if runs and name in previous.get(section, set()) and runs[-1][1] == last_version:
                    runs[-1][1] = version
                else:
                    runs.append([version, version])
        previous, last_version = current, version
    return {section: dict(sorted(table.items())) for section, table in sorted(spans.items())}


def catalog_name_spans(section: str, generated: Path | None = None) -> tuple[list[str], dict[str, list[list[str]]]]:
    """The committed releases and ``section``'s name spans (:func:`catalog_spans`), from a current index or a walk."""
    root = generated or generated_root()
    index = read_index(root)
    if index is None or not isinstance(index.get("catalogs"), dict):
        versions = available_versions(root)
        return versions, catalog_spans(_loadable(root, versions)).get(section, {})
    return list(index.get("versions") or []), dict(index["catalogs"].get(section) or {})


def next_release(versions: list[str], version: str) -> str | None:
    """The committed release after ``version`` (where a key or name last seen in ``version`` was gone)."""
    try:
        at = versions.index(version)
    except ValueError:
        return None
    return versions[at + 1] if at + 1 < len(versions) else None


class Departure(namedtuple("Departure", "kind version last renamed_to", defaults=(None,))):
    """How a key left the releases up to one: ``kind`` (``removed``, ``became_removed`` or ``renamed``), the release
    it went in (``version``), the last that had it (``last``: the committed release before ``version``, None when
    ``version`` is the oldest snapshot), and what it became (``renamed_to``)."""

    __slots__ = ()


def departure(path: str, until: str, generated: Path | None = None, *,
              index: dict[str, Any] | None | bool = True) -> Departure | None:
    """The latest removal, rejection or rename of ``path`` at or before ``until``, if the key has not come back.

    ``index``: :func:`read_index`'s answer when the caller has it already (``check`` asks it once per run, not
    once per unknown key); ``True`` (the default) reads it."""
    root = generated or generated_root()
    if index is True:
        index = read_index(root)
    assert index is None or isinstance(index, dict)
    versions = list(index["versions"]) if index is not None else available_versions(root)
    limit = version_key(until)
    found: Departure | None = None
    for event in _histories([path], root, index)[path]:
        if version_key(event.version) > limit:
            break
        if event.kind in _ARRIVALS:
            found = None
        elif event.kind in (EventKind.REMOVED, EventKind.BECAME_REMOVED) or (
                event.kind is EventKind.RENAMED and event.old == path):
            at = versions.index(event.version) if event.version in versions else 0
            last = versions[at - 1] if at > 0 else None
            renamed = str(event.new) if event.kind is EventKind.RENAMED else (found.renamed_to if found else None)
            kind = event.kind if found is None or event.kind is not EventKind.REMOVED else found.kind
            found = Departure(kind, event.version, last, renamed)
    return found


def arrival(path: str, after: str, generated: Path | None = None, *,
            index: dict[str, Any] | None | bool = True) -> str | None:
    """The first committed release later than ``after`` where ``path`` is (re)introduced and which still has it at
    that release, or None (a key of no later release: a typo, not an upgrade away).

    ``index``: as :func:`departure`'s (``check`` reads it once per run: judging it stats every release's snapshot)."""
    limit = version_key(after)
    root = generated or generated_root()
    if index is True:
        index = read_index(root)
    assert index is None or isinstance(index, dict)
    for event in _histories([path], root, index)[path]:
        if version_key(event.version) > limit and event.kind in _ARRIVALS:
            return event.version
    return None


def field_history(path: str, generated: Path | None = None) -> list[HistoryEvent]:
    """:func:`field_histories` of one path."""
    return field_histories([path], generated)[path]


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
            if event["kind"] in _ARRIVALS:
                arrived = event["version"]
            elif event["kind"] in (EventKind.REMOVED, EventKind.BECAME_REMOVED):
                arrived = None
        if arrived is not None and arrived != first and version_key(arrived) > after:
            found[path] = arrived
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.model.history [--check] [GENERATED_DIR]``: rewrite (or verify) the index."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    from pathlib import Path

    root = Path(args[0]) if args else None
    if check:
        problems = index_problems(root)
        for problem in problems:
            print(f"{INDEX_FILE} is stale: {problem}", file=sys.stderr)
        return 1 if problems else 0
    print(write_index(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
