"""A compact per-release index next to each snapshot, so ``lookup`` and ``check`` decode only the records they use.

``json.loads`` of a 800 kB ``fields.json`` is most of what ``dsfields lookup`` or ``check`` would spend
after Python's own start-up, yet an answer needs a handful of field records. ``generated/<version>/paths.json``
holds every path's search names (key, Python path), what the per-section indexes need of each field
(section, key, Python name, reader, pattern), the byte span of every field record and of every
other top-level value in ``fields.json``, and the paths of the few records stating a fact ``check`` looks for in
every section a config gives (:data:`FACTS`). :func:`load_indexed` reads the snapshot's bytes and decodes a
field record only when it is first used (:class:`IndexedSnapshot`), the small top-level values when
first asked for. The snapshot was validated when its index was built; a snapshot edited since (another
size in bytes) is loaded whole and validated instead, so a stale index can cost time but never an answer.
Written by every snapshot write (``dsfields extract`` / ``snapshot``) and by
``python -m dsfields.model.paths_index [GENERATED_DIR]``; a test keeps the committed ones current.
"""

from __future__ import annotations

import json
import os
from functools import cached_property

from dsfields.model.dotted import join
from dsfields.model.records import Enum, Field, Record, Removed, Section, Snapshot, _catalog

INDEX_NAME = "paths.json"
FACTS = ("compared_with", "required_in_group", "required_with_section")
"""Facts few records state, listed by path in the index: check looks for them in every given section without
decoding each of its records (about 100 for zero_optimization)."""
INDEX_FORMAT = 3
"""Bump when the layout below changes; an index of another format is ignored (the snapshot is loaded whole)."""

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs lookup's start-up milliseconds; annotations are strings anyway
    from pathlib import Path
    from typing import Any

def _decode(data: bytes, span: list[int]) -> Any:
    return json.loads(data[span[0]:span[1]].decode("utf-8"))


def _spans(text: str, keys: list[str], depth: int = 1, start: int = 0) -> dict[str, tuple[int, int]]:
    """Character spans of the values under ``keys`` of one object, in a snapshot written by ``store.dumps``
    (``indent=1``: a key of nesting ``depth`` starts a line indented by ``depth`` spaces), from ``start`` on."""
    decoder = json.JSONDecoder()
    spans: dict[str, tuple[int, int]] = {}
    cursor = start
    for key in sorted(keys):
        marker = "\n" + " " * depth + json.dumps(key, ensure_ascii=False) + ": "
        at = text.find(marker, cursor)
        if at < 0:
            raise ValueError(f"{key} not found where expected (depth {depth})")
        begin = at + len(marker)
        _, end = decoder.raw_decode(text, begin)
        spans[key] = (begin, end)
        cursor = end
    return spans


def _to_bytes(text: str, spans: dict[Any, tuple[int, int]]) -> dict[Any, list[int]]:
    """Character spans as byte spans of the UTF-8 text (one pass over the positions in order)."""
    positions = sorted({p for span in spans.values() for p in span})
    offsets = {}
    chars = size = 0
    for position in positions:
        size += len(text[chars:position].encode("utf-8"))
        chars = position
        offsets[position] = size
    return {key: [offsets[a], offsets[b]] for key, (a, b) in spans.items()}


def build(text: str) -> str:
    """The index of one snapshot's text (its ``fields.json``), as the JSON to write next to it."""
    import json

    data = json.loads(text)
    snapshot = Snapshot.from_dict(data, "snapshot")
    top = _spans(text, list(data))
    top_bytes = _to_bytes(text, top)
    fields: dict[str, Any] = {}
    if "fields" in top:
        record_bytes = _to_bytes(text, _spans(text, list(snapshot.fields), depth=2, start=top["fields"][0]))
        for path, record in snapshot.fields.items():
            fields[path] = [*record_bytes[path], record.section, record.key, record.python_name, record.reader,
                            record.pattern]
    payload = {
        "generated_by": "python -m dsfields.model.paths_index",
        "index_format": INDEX_FORMAT,
        "deepspeed_version": snapshot.version,
        "snapshot_bytes": len(text.encode("utf-8")),
        "names": [list(entry) for entry in snapshot.names],
        "fields": fields,
        "top": {key: span for key, span in top_bytes.items() if key != "fields"},
        "facts": {fact: sorted(p for p, r in snapshot.fields.items() if r.raw.get(fact)) for fact in FACTS},
    }
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_for(snapshot_file: Path) -> Path:
    from dsfields.model.generated import write_atomic

    target = snapshot_file.with_name(INDEX_NAME)
    write_atomic(target, build(snapshot_file.read_text(encoding="utf-8")))
    return target


_RAW = Record.__dict__["raw"]
"""The ``raw`` slot of every record, which :class:`_LazyField` fills on first use."""


class _LazyField(Field):
    """A field record whose JSON object is decoded from the snapshot's bytes when first read."""

    __slots__ = ("_data", "_span")

    def __init__(self, data: bytes, span: list[int], path: str) -> None:
        self._data = data
        self._span = span
        self._path = path

    @property  # type: ignore[override]
    def raw(self) -> dict[str, Any]:
        try:
            return _RAW.__get__(self)
        except AttributeError:
            value = _decode(self._data, self._span)
            _RAW.__set__(self, value)
            return value


class IndexedSnapshot(Snapshot):
    """A :class:`Snapshot` read through its index: the same answers, each part decoded when first used.

    Given ``source`` (the snapshot's file) instead of ``data``, its bytes are read when a part needs them: a search
    of the names alone (``lookup``'s "also a key of the inference config?") reads the index only."""

    __slots__ = ()

    def __init__(self, data: bytes | None, index: dict[str, Any], source: str | None = None) -> None:
        if data is not None:
            self.__dict__["_data"] = data
        self.__dict__["_source"] = source
        self.__dict__["_index"] = index

    @cached_property
    def _data(self) -> bytes:
        from dsfields.model.generated import read_generated

        return read_generated(self.__dict__["_source"])

    def _top(self, key: str) -> Any:
        cache = self.__dict__.setdefault("_decoded", {})
        if key not in cache:
            span = self._index["top"].get(key)
            cache[key] = None if span is None else _decode(self._data, span)
        return cache[key]

    def _group(self, key: str) -> dict[str, Any]:
        value = self._top(key)
        return value if isinstance(value, dict) else {}

    @cached_property
    def raw(self) -> dict[str, Any]:  # type: ignore[override]
        """The whole snapshot, for a caller that wants it all (decoded once)."""
        return json.loads(self._data.decode("utf-8"))

    @property
    def version(self) -> str:
        return str(self._top("deepspeed_version")) if "deepspeed_version" in self._index["top"] else "?"

    @property
    def format_version(self) -> Any:
        return self._top("format_version")

    @property
    def document(self) -> str:  # type: ignore[override]
        return str(self._top("document") or "training")  # as Snapshot.document, without decoding the whole file

    @property
    def environment(self) -> dict[str, Any]:
        return self._group("environment")

    @property
    def coverage(self) -> dict[str, Any]:
        return self._group("coverage")

    @cached_property
    def fields(self) -> dict[str, Field]:
        data = self._data
        return {path: _LazyField(data, entry, path) for path, entry in self._index["fields"].items()}

    @cached_property
    def sections(self) -> dict[str, Section]:
        return {path: Section(raw, path) for path, raw in self._group("sections").items()}

    @cached_property
    def removed(self) -> dict[str, Removed]:
        return {path: Removed(raw, path) for path, raw in self._group("removed").items()}

    @cached_property
    def enums(self) -> dict[str, Enum]:
        return {name: Enum(raw) for name, raw in self._group("enums").items() if isinstance(raw, dict)}

    @cached_property
    def optimizers(self) -> Any:
        return _catalog(self._top("optimizers"), "optimizer")

    @cached_property
    def schedulers(self) -> Any:
        return _catalog(self._top("schedulers"), "scheduler")

    # The indexes over every field, from the index's copy of what they need: no field record decoded.

    def _meta(self) -> list[tuple[str, Field, list[Any]]]:
        fields = self.fields
        return [(path, fields[path], entry) for path, entry in self._index["fields"].items()]

    @cached_property
    def by_section(self) -> dict[str, dict[str, Field]]:
        out: dict[str, dict[str, Field]] = {}
        for _, record, entry in self._meta():
            out.setdefault(entry[2], {})[entry[3]] = record
        return out

    @cached_property
    def by_python_name(self) -> dict[str, dict[str, Field]]:
        out: dict[str, dict[str, Field]] = {}
        for _, record, (_, _, section, key, name, reader, _) in self._meta():
            if reader == "pydantic" and name and name != key:
                out.setdefault(section, {})[name] = record
        return out

    @cached_property
    def by_alias(self) -> dict[str, dict[str, Field]]:
        # No record carries "aliases" when the bytes never spell the key (a ds_config snapshot: aliases are the
        # inference document's): answered without decoding a record; else every record is read, as Snapshot does.
        if b'"aliases"' not in self._data:
            return {}
        return Snapshot.by_alias.func(self)  # type: ignore[attr-defined]

    @cached_property
    def by_key(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path, _, entry in self._meta():
            out.setdefault(entry[3], []).append(path)
        return out

    def paths_with(self, fact: str) -> frozenset[str]:
        return frozenset(self._index.get("facts", {}).get(fact, ()))

    @cached_property
    def all_paths(self) -> list[str]:
        return [entry[0] for entry in self._index["names"]]

    @cached_property
    def names(self) -> list[tuple[str, str, str | None]]:
        return [tuple(entry) for entry in self._index["names"]]  # type: ignore[misc]

    @cached_property
    def patterns(self) -> list[tuple[tuple[str, ...], str]]:
        paths = {p for p, entry in self._index["fields"].items() if entry[6]}
        paths |= {p for p, s in self.sections.items() if s.pattern}
        return sorted(((tuple(p.split(".")), p) for p in paths), key=lambda t: (t[1].count("*"), t[1]))


def index_name(snapshot_file: str) -> str:
    """The index beside ``snapshot_file``: ``paths.json`` of ``fields.json``; ``inference_paths.json`` of the
    inference document (written into the wheel by its build hook, hatch_build.py: a checkout has none)."""
    name = os.path.basename(snapshot_file)
    return INDEX_NAME if name == "fields.json" else name.removesuffix(".json") + "_" + INDEX_NAME


def load_indexed(snapshot_file: str, *, lazy: bool = False) -> Snapshot | None:
    """The snapshot in ``snapshot_file`` read through its index (:func:`index_name`), or ``None`` (no index, or a
    stale one). ``lazy``: the snapshot's bytes are read when first needed (its size is judged without them)."""
    index_file = os.path.join(os.path.dirname(snapshot_file), index_name(snapshot_file))
    from dsfields.model.generated import generated_size, read_generated

    try:
        index = json.loads(read_generated(index_file).decode("utf-8"))
        data = None if lazy else read_generated(snapshot_file)
        size = generated_size(snapshot_file) if data is None else len(data)
    except (OSError, ValueError):
        return None
    if (not isinstance(index, dict) or index.get("index_format") != INDEX_FORMAT
            or index.get("snapshot_bytes") != size
            or not isinstance(index.get("fields"), dict) or not isinstance(index.get("top"), dict)
            or not isinstance(index.get("names"), list) or not isinstance(index.get("facts"), dict)):
        return None
    return IndexedSnapshot(data, index, snapshot_file)


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.model.paths_index [GENERATED_DIR]``: rewrite every release's index."""
    import sys
    from pathlib import Path

    from dsfields.model.generated import SNAPSHOT_FILE, available_versions, repo_generated_dir

    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else repo_generated_dir()
    for version in available_versions(root):
        write_for(root / version / SNAPSHOT_FILE)
    print(f"{len(available_versions(root))} indexes in {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["INDEX_NAME", "IndexedSnapshot", "build", "index_name", "join", "load_indexed", "write_for"]
