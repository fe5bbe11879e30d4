"""Wheel build hook: the committed snapshots and the docs sources travel inside the wheel, light.

The checkout's ``generated/`` is the contract (indented, sorted, byte-stable JSON, one folder per release); the
wheel carries the same bytes gzip-compressed (``fields.json.gz`` ...), read back by
:func:`dsfields.model.store.read_generated` as if uncompressed. Compression, not a re-encoding, keeps every
consumer's byte-level assumption true in an install: ``paths.json``'s byte spans index the decompressed
``fields.json`` exactly, ``index.json``'s sizes and hashes still match, and lookup/check/diff/site answers are the
checkout's; ``stored.json`` records each ``fields.json.gz`` size as written, for the index's staleness test.
Maintainer reports (``verification.json``) stay out. The mkdocs sources (``mkdocs*.yml``, ``docs/``)
go to ``dsfields/site_src/`` so that ``dsfields docs build`` works without a checkout; of the prose, only the
compiled ``prose/<lang>.jsonl`` ships (the TOML sources are for editing).
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

COMPRESSED = ("fields.json", "paths.json", "launch.json", "world.json", "ds_config.schema.json", "inference.json",
              "messages.json", "official_docs.json")
"""Also every HF snapshot (``generated/hf/*.json``): 9.8 MiB as text, 1.2 MiB compressed."""
PLAIN_NEWEST = ("fields.json", "paths.json", "launch.json", "world.json")
"""The newest release's files that ``check`` and ``lookup`` read on every call (the release they answer for by
default) stay plain: decompressing its fields.json (785 KB) and the others was ~2 ms of a 34 ms ``check``; 0.9 MB
more installed, the wheel (a zip) about as large."""
LEFT_OUT = ("verification.json", "source-names.json")
"""Read only by the checkout's tests: the verification record, and the names each release's source spells (the
prose check, model/prose_facts.py; 1.9 MB that no installed command reads)."""


class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        _require_current_index(root / "generated")
        self._staging = Path(tempfile.mkdtemp(prefix="dsfields-wheel-"))
        generated = self._staging / "generated"
        newest = _newest(root / "generated")
        for source in sorted((root / "generated").rglob("*")):
            if not source.is_file() or source.name in LEFT_OUT:
                continue
            target = generated / source.relative_to(root / "generated")
            target.parent.mkdir(parents=True, exist_ok=True)
            plain = source.parent.name == newest and source.name in PLAIN_NEWEST
            if not plain and (source.name in COMPRESSED or (source.parent.name == "hf" and source.suffix == ".json")):
                # mtime 0 and no file name in the header: the same snapshot gives the same wheel bytes.
                with open(target.with_name(source.name + ".gz"), "wb") as raw:
                    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
                        out.write(source.read_bytes())
            else:
                shutil.copyfile(source, target)
        _write_inference_indexes(root, generated)
        _write_stored_sizes(root, generated)
        build_data["force_include"][str(generated)] = "dsfields/generated"
        site_src = self._staging / "site_src"
        site_src.mkdir()
        for name in ("mkdocs.yml", "mkdocs.zh.yml"):
            if (root / name).is_file():
                shutil.copyfile(root / name, site_src / name)
        # Only the hand-written docs sources: the rendered per-release pages are made again by the build.
        tracked = _tracked(root, "docs")
        for relative in tracked:
            target = site_src / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / relative, target)
        build_data["force_include"][str(site_src)] = "dsfields/site_src"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        staging = getattr(self, "_staging", None)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _write_stored_sizes(root: Path, generated: Path) -> None:
    """``stored.json``: each release's ``fields.json.gz`` size as written here, for ``index.json``'s staleness test
    (:func:`dsfields.model.history.write_stored_sizes`, beside its reader)."""
    import sys

    sys.path.insert(0, str(root / "extractor"))
    try:
        from dsfields.model.history import write_stored_sizes
    finally:
        sys.path.pop(0)
    write_stored_sizes(generated)


def _newest(generated: Path) -> str | None:
    """The newest release with a snapshot under ``generated`` (the checkout's own ordering of versions)."""
    import sys

    sys.path.insert(0, str(generated.parent / "extractor"))
    try:
        from dsfields.model.store import available_versions
    finally:
        sys.path.pop(0)
    versions = available_versions(generated) if generated.is_dir() else []
    return versions[-1] if versions else None


def _require_current_index(generated: Path) -> None:
    """Refuse to build a wheel whose ``index.json`` (every key's history across the releases) is not the current
    index of its snapshots: an installed dsfields would find it stale and walk all 77 snapshots in every process
    that asks about an unknown or removed key. The index is built once, from the committed snapshots, by
    ``python -m dsfields.model.history``; here it is only checked (the cheap test readers use, stdlib only)."""
    import sys

    sys.path.insert(0, str(generated.parent / "extractor"))
    try:
        from dsfields.model.history import read_index
    finally:
        sys.path.pop(0)
    if generated.is_dir() and read_index(generated) is None:
        raise RuntimeError(f"{generated / 'index.json'} is not current: run python -m dsfields.model.history")


def _write_inference_indexes(root: Path, generated: Path) -> None:
    """Beside each release's inference document, its compact index (``inference_paths.json.gz``, the format of
    ``paths.json``), built here once from the committed bytes: ``lookup`` asks on every call whether the word is
    also an inference key, and answers that from the search names without decompressing the document. A checkout
    has no such index and loads the document (plain text there)."""
    import sys

    sys.path.insert(0, str(root / "extractor"))
    try:
        from dsfields.model.paths_index import build, index_name
    finally:
        sys.path.pop(0)
    for source in sorted((root / "generated").glob("*/inference.json")):
        target = generated / source.parent.name / (index_name(str(source)) + ".gz")
        with open(target, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
                out.write(build(source.read_text(encoding="utf-8")).encode("utf-8"))


def _tracked(root: Path, folder: str) -> list[str]:
    """The files of ``folder`` that git tracks (rendered pages are git-ignored); all of them outside a checkout."""
    import subprocess

    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", folder], cwd=root, capture_output=True, check=True)
        names = [name for name in out.stdout.decode().split("\0") if name]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    return [os.path.relpath(p, root) for p in sorted((root / folder).rglob("*")) if p.is_file()]
