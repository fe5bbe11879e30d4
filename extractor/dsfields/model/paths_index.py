"""A compact per-release index next to each snapshot, so ``lookup`` parses only the records it shows.

``json.loads`` of a 400 kB ``fields.json`` is most of what ``dsfields lookup`` spends after Python's own
start-up, yet an answer needs a handful of records. ``generated/<version>/paths.json`` holds every
path's search names (key, Python path) and where each record's text sits in ``fields.json``; a
lookup decodes those few slices only. The index records the snapshot's size: a snapshot edited
since (another size) is loaded whole instead, so a stale index can cost time but never an answer.
Written by every snapshot write (``dsfields extract`` / ``snapshot``) and by
``python -m dsfields.model.paths_index [GENERATED_DIR]``; a test keeps the committed ones current.
"""

from __future__ import annotations

import json
import os

from dsfields.model.records import Snapshot, join

INDEX_NAME = "paths.json"
GROUPS = ("fields", "sections", "removed")

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs lookup's start-up milliseconds; annotations are strings anyway
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any


def _spans(text: str, data: dict[str, Any]) -> dict[str, Any]:
    """Character offsets of every record of ``GROUPS`` and of the whole ``enums`` object in ``text``."""
    decoder = json.JSONDecoder()
    out: dict[str, Any] = {}
    for group in (*GROUPS, "enums"):
        head = text.find(f'\n "{group}": ')
        if head < 0:
            continue
        start = head + len(f'\n "{group}": ')
        if group == "enums":
            _, end = decoder.raw_decode(text, start)
            out["enums"] = [start, end]
            continue
        spans = {}
        cursor = start
        for key in sorted(data.get(group) or {}):
            marker = "\n  " + json.dumps(key, ensure_ascii=False) + ": "
            at = text.find(marker, cursor)
            if at < 0:
                raise ValueError(f"{group}.{key} not found where expected")
            begin = at + len(marker)
            _, end = decoder.raw_decode(text, begin)
            spans[key] = [begin, end]
            cursor = end
        out[group] = spans
    return out


def build(text: str) -> str:
    """The index of one snapshot's text (its ``fields.json``), as the JSON to write next to it."""
    data = json.loads(text)
    snapshot = Snapshot(data)
    payload = {
        "generated_by": "python -m dsfields.model.paths_index",
        "deepspeed_version": snapshot.version,
        "snapshot_chars": len(text),
        "snapshot_bytes": len(text.encode("utf-8")),
        "names": [list(entry) for entry in snapshot.names],
        "spans": _spans(text, data),
    }
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_for(snapshot_file: Path) -> Path:
    from dsfields.model.store import write_atomic

    target = snapshot_file.with_name(INDEX_NAME)
    write_atomic(target, build(snapshot_file.read_text(encoding="utf-8")))
    return target


def _needed(names: Iterable[list[Any]], hits: list[str]) -> set[str]:
    """The paths a lookup of ``hits`` shows: the hits, their sections, and everything inside a hit section."""
    wanted = set(hits)
    for path in hits:
        wanted.add(path.rpartition(".")[0])
    prefixes = tuple(p + "." for p in hits)
    wanted |= {entry[0] for entry in names if entry[0].startswith(prefixes)}
    return wanted


def load_partial(snapshot_file: str, hits_of: Any) -> Snapshot | None:
    """A :class:`Snapshot` holding only what a lookup needs, or ``None`` (no index, or a stale one).

    ``hits_of(names)`` returns the paths the query names, given the search names of every path.
    """
    index_file = os.path.join(os.path.dirname(snapshot_file), INDEX_NAME)
    try:
        with open(index_file, encoding="utf-8") as handle:
            index = json.load(handle)
        size = os.stat(snapshot_file).st_size
    except (OSError, ValueError):
        return None
    if not isinstance(index, dict) or index.get("snapshot_bytes") != size:
        return None
    try:
        with open(snapshot_file, encoding="utf-8") as handle:
            text = handle.read()
        if len(text) != index.get("snapshot_chars"):
            return None
        names = [tuple(entry) for entry in index["names"]]
        hits = hits_of(names)
        wanted = _needed(index["names"], hits)
        decoder = json.JSONDecoder()
        raw: dict[str, Any] = {"deepspeed_version": index["deepspeed_version"], "format_version": None}
        head = text.find('\n "format_version": ')
        if head >= 0:
            raw["format_version"] = decoder.raw_decode(text, head + len('\n "format_version": '))[0]
        spans = index["spans"]
        for group in GROUPS:
            raw[group] = {path: decoder.raw_decode(text, span[0])[0]
                          for path, span in spans.get(group, {}).items() if path in wanted}
        if "enums" in spans:
            raw["enums"] = decoder.raw_decode(text, spans["enums"][0])[0]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    snapshot = Snapshot(raw)
    snapshot.__dict__["names"] = names  # the whole release's search names, not the partial ones
    snapshot.__dict__["all_paths"] = [entry[0] for entry in names]
    return snapshot


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.model.paths_index [GENERATED_DIR]``: rewrite every release's index."""
    import sys
    from pathlib import Path

    from dsfields.model.store import SNAPSHOT_FILE, available_versions, repo_generated_dir

    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else repo_generated_dir()
    for version in available_versions(root):
        write_for(root / version / SNAPSHOT_FILE)
    print(f"{len(available_versions(root))} indexes in {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["INDEX_NAME", "build", "load_partial", "join", "write_for"]
