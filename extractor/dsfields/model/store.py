"""Snapshots on disk: the contract between extraction and every consumer (load, write, pick versions).

One JSON file per DeepSpeed version, ``generated/<version>/fields.json``, documented in
``docs/snapshot-format.md`` with a JSON Schema in ``extractor/dsfields/snapshot.schema.json``.
Writing is atomic and byte-stable (sorted keys, fixed indentation, trailing newline) so that a
re-extraction of the same version is a no-op in git. Loading needs only the stdlib and returns a typed
:class:`~dsfields.model.records.Snapshot`.
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache

from dsfields.model.errors import SnapshotError, UsageError
from dsfields.model.generated import (  # noqa: F401 (re-exported: store is every consumer's entry to the tree)
    COMPRESSED_SUFFIX,
    INDEX_FILE,
    SNAPSHOT_FILE,
    available_versions,
    dumps,
    generated_file,
    generated_root,
    generated_size,
    read_generated,
    repo_generated_dir,
    version_key,
    version_listing,
    write_atomic,
)
from dsfields.model.records import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib cost lookup's start-up milliseconds; annotations are strings anyway
    from pathlib import Path
    from typing import Any

FORMAT_VERSION = 3
"""Bump on any change a consumer could notice; stale snapshots are then re-extracted."""

READABLE_FORMATS = (1, 2, 3)
"""Formats consumers still read: format 2 only adds keys (witnesses, probes, patterns...), whose typed
accessors answer "not known" on a format-1 record, so a tree being re-extracted stays usable; format 3 only drops
``hf_trainer`` (the HF Trainer's fill list, now read from ``generated/hf/`` alone), which no consumer reads."""

REQUIRED_KEYS: dict[str, type | tuple[type, ...]] = {
    "format_version": int, "deepspeed_version": str, "sections": dict, "fields": dict, "removed": dict,
}
"""Top-level keys the consumers (check, lookup, diff, schema, docs) index directly, with their JSON types."""
OPTIONAL_KEYS: dict[str, type | tuple[type, ...]] = {
    "generated_by": str, "environment": dict, "enums": dict, "coverage": dict,
    "optimizers": dict, "schedulers": dict,
}
"""The other top-level keys of ``snapshot.schema.json``: read with ``.get``, type-checked when present."""


def validate(data: Any, path: str | Path = "snapshot") -> dict[str, Any]:
    """``data`` if it has the snapshot's required top-level keys with the right types, else SnapshotError.

    A snapshot that is valid JSON but truncated or hand-edited would otherwise surface as a
    KeyError deep inside whichever consumer reads it first.
    """
    if not isinstance(data, dict):
        raise SnapshotError(f"snapshot {path} is not a JSON object; re-extract it")
    if data.get("format_version") not in READABLE_FORMATS:
        raise SnapshotError(
            f"snapshot {path} has format_version {data.get('format_version')!r}, this dsfields reads "
            f"{FORMAT_VERSION}; re-extract it"
        )
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise SnapshotError(f"snapshot {path} lacks {', '.join(missing)}; re-extract it")
    for key, kind in {**REQUIRED_KEYS, **OPTIONAL_KEYS}.items():
        if key in data and (not isinstance(data[key], kind) or isinstance(data[key], bool)):
            raise SnapshotError(f"snapshot {path}: {key} is not of the expected type; re-extract it")
    return data


@cache
def _load_cached(path: str, mtime: float) -> Snapshot:
    try:
        data = json.loads(read_generated(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise SnapshotError(f"cannot read snapshot {path}: {exc}") from None
    return Snapshot.from_dict(validate(data, path), f"snapshot {path}")


def load(version: str, generated: Path | None = None) -> Snapshot:
    """The snapshot of ``version``; :class:`SnapshotError` names the available ones if it is missing."""
    from pathlib import Path

    root = Path(generated) if generated else repo_generated_dir()
    path = root / version / SNAPSHOT_FILE
    found = generated_file(str(path))
    if found is None:
        versions = available_versions(root)
        raise SnapshotError(f"no snapshot for DeepSpeed {version} (available: {version_listing(versions)})")
    return _load_cached(str(path), os.stat(found).st_mtime)


def snapshot_path(version: str, generated: Path | None = None) -> Path:
    return (generated or repo_generated_dir()) / version / SNAPSHOT_FILE


def load_indexed(version: str, generated: Path | str | None = None) -> Snapshot:
    """:func:`load`, read through the release's compact index where it is current: each record is decoded
    when first used (``lookup`` and ``check`` touch a few), nothing validated again; else :func:`load`."""
    from dsfields.model.paths_index import load_indexed as indexed

    root = os.fspath(generated) if generated else generated_root()
    return indexed(os.path.join(root, version, SNAPSHOT_FILE)) or load(version, generated)


def installed_deepspeed_version() -> str | None:
    """The installed DeepSpeed's version (:func:`installed_version`)."""
    return installed_version("deepspeed")


def installed_version(distribution: str) -> str | None:
    """The installed ``distribution``'s version from its ``*.dist-info``/``*.egg-info`` on ``sys.path``.

    ``importlib.metadata`` answers the same but costs tens of milliseconds (it imports ``email`` and
    builds every distribution), as much as the whole grep lookup competes with; one directory listing
    per ``sys.path`` entry is enough here.
    """
    prefix = distribution.lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            lowered = name.lower()
            if not lowered.startswith(prefix) or not lowered.endswith((".dist-info", ".egg-info")):
                continue
            meta = os.path.join(entry or ".", name, "METADATA" if lowered.endswith(".dist-info") else "PKG-INFO")
            try:
                with open(meta, encoding="utf-8") as handle:
                    for line in handle:
                        if line.startswith("Version:"):
                            return line.partition(":")[2].strip()
                        if not line.strip():
                            break
            except OSError:
                continue
    return None


def resolve_version(requested: str | None, generated: Path | str | None = None) -> str:
    """``--version`` semantics shared by all consumers: explicit, else installed if snapshotted, else newest."""
    if requested is not None and not requested.strip():
        # `--version ""` (an unset shell variable) must not quietly mean the default release.
        raise UsageError(f"the version given is empty; name a DeepSpeed release "
                         f"(available: {version_listing(available_versions(generated))})")
    if not requested:
        # The common case without listing every release: the installed one, snapshotted, else the newest.
        installed = installed_deepspeed_version()
        root = os.fspath(generated) if generated else generated_root()
        if installed and _plain_name(installed) and generated_file(os.path.join(root, installed, SNAPSHOT_FILE)):
            return installed
        newest = _newest_snapshotted(root)
        if newest is not None:
            return newest
    versions = available_versions(generated)
    if requested and requested != "installed":
        if requested not in versions:
            raise SnapshotError(f"no snapshot for DeepSpeed {requested} (available: {version_listing(versions)})")
        return requested
    installed = installed_deepspeed_version()
    if installed and installed in versions:
        return installed
    if requested == "installed":
        raise SnapshotError(f"no snapshot for the installed DeepSpeed {installed or '(none installed)'}")
    if not versions:
        raise SnapshotError(f"no snapshots found in {generated or repo_generated_dir()}")
    return versions[-1]


def _newest_snapshotted(root: str) -> str | None:
    """``available_versions(root)[-1]`` without asking every release for its snapshot: the folders newest first,
    the first that has one (in a wheel, each asked costs two ``stat`` calls)."""
    try:
        names = os.listdir(root)
    except OSError:
        return None
    for name in reversed(sorted(names, key=version_key)):  # available_versions' order, from its end
        if generated_file(os.path.join(root, name, SNAPSHOT_FILE)):
            return name
    return None


def _plain_name(name: str) -> bool:
    """A name that is one entry of a directory (what :func:`available_versions` can list)."""
    return bool(name) and name not in (".", "..") and "/" not in name and os.sep not in name and "\0" not in name


def load_requested(requested: str | None, generated: Path | None = None) -> Snapshot:
    """The snapshot a consumer's ``--version`` names (:func:`resolve_version`), loaded from the same tree."""
    return load(resolve_version(requested, generated), generated)


RELEASES_FILE = "releases.json"
"""Release dates next to the snapshots (``python -m dsfields.extract.releases_dates`` writes it: PyPI's upload
time of each release's sdist)."""


def release_dates(generated: Path | str | None = None) -> list[tuple[str, str]]:
    """(version, ISO date) of every snapshotted release with a known date, in release order."""
    root = os.fspath(generated) if generated else generated_root()
    try:
        releases = json.loads(read_generated(os.path.join(root, RELEASES_FILE)).decode("utf-8")).get("releases")
    except (OSError, ValueError, AttributeError):
        return []
    have = set(available_versions(generated))
    dated = [(v, r["date"]) for v, r in (releases or {}).items()
             if v in have and isinstance(r, dict) and isinstance(r.get("date"), str)]
    return sorted(dated, key=lambda item: version_key(item[0]))


def release_at(date: str, generated: Path | str | None = None) -> tuple[str, str]:
    """(version, its date): the newest snapshotted release published by ``date`` (``YYYY``, ``YYYY-MM`` or
    ``YYYY-MM-DD``; a month or year means its end). UsageError on a malformed date or one before every release."""
    import re

    match = re.fullmatch(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", date.strip())
    if match is None or (match.group(2) and not 1 <= int(match.group(2)) <= 12) or (
            match.group(3) and not 1 <= int(match.group(3)) <= 31):
        raise UsageError(f"the date {date!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    year, month, day = match.group(1), match.group(2) or "12", match.group(3) or "31"
    last = f"{year}-{month}-{day}"
    dates = release_dates(generated)
    if not dates:
        raise SnapshotError("no release dates next to the snapshots (generated/releases.json)")
    before = [item for item in dates if item[1] <= last]
    if not before:
        raise UsageError(f"no snapshotted DeepSpeed release was published by {date.strip()} "
                         f"(the oldest, {dates[0][0]}, is of {dates[0][1]})")
    return max(before, key=lambda item: (item[1], version_key(item[0])))


# ---------------------------------------------------------------- the inference document (issue 29)

INFERENCE_FILE = "inference.json"
"""``generated/<version>/inference.json``: DeepSpeedInferenceConfig in the snapshot format (``document``)."""


def inference_versions(generated: Path | str | None = None) -> list[str]:
    """Releases with an inference document, in release order."""
    root = os.fspath(generated) if generated else generated_root()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    return sorted((n for n in names if generated_file(os.path.join(root, n, INFERENCE_FILE))), key=version_key)


def resolve_inference_version(requested: str | None, generated: Path | str | None = None) -> str:
    """``--version`` for ``--inference``: explicit, else the installed release if it has one, else the newest."""
    versions = inference_versions(generated)
    if requested and requested != "installed":
        if requested not in versions:
            raise SnapshotError(f"no inference snapshot for DeepSpeed {requested} "
                                f"(available: {version_listing(versions)})")
        return requested
    installed = installed_deepspeed_version()
    if installed in versions:
        return str(installed)
    if requested == "installed" or not versions:
        raise SnapshotError(f"no inference snapshot for DeepSpeed {installed if requested else '(any)'}; "
                            "run python -m dsfields.extract.inference_witness")
    return versions[-1]


def load_inference(version: str | None, generated: Path | None = None) -> Snapshot:
    """The inference document of ``version`` (:func:`resolve_inference_version`) as a :class:`Snapshot`."""
    root = os.fspath(generated) if generated else generated_root()  # not pathlib: every lookup reads this
    name = resolve_inference_version(version, root)
    path = os.path.join(root, name, INFERENCE_FILE)
    found = generated_file(path)
    assert found is not None  # resolve_inference_version listed it
    snapshot = _load_cached(path, os.stat(found).st_mtime)
    if snapshot.document != "inference":
        raise SnapshotError(f"{path}: not an inference document (no \"document\": \"inference\"); re-extract it")
    return snapshot


# ---------------------------------------------------------------- the message catalogue (issue 38)

MESSAGES_FILE = "messages.json"
"""``generated/<version>/messages.json``: what the release raises, asserts and logs about its config (documented in
docs/snapshot-format.md, written by ``python -m dsfields.extract.message_catalogue``)."""


def load_messages(version: str, generated: Path | str | None = None) -> dict[str, Any] | None:
    """The message catalogue of ``version`` (its ``format`` checked), None when the release has none."""
    import json

    root = str(generated) if generated is not None else generated_root()
    try:
        document = json.loads(read_generated(os.path.join(root, version, MESSAGES_FILE)))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{version}/{MESSAGES_FILE}: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != 1 or not isinstance(document.get("messages"), list):
        raise SnapshotError(f"{version}/{MESSAGES_FILE}: not a message catalogue of format 1")
    return document
