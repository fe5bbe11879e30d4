"""The committed ``generated/`` tree on disk: where it is, its files (plain, or gzip-compressed in a wheel), the
releases it holds in release order, and the one way a snapshot file is written.

Apart from :mod:`dsfields.model.store` (which turns the files into typed snapshots) so that the modules below
the snapshots (``paths_index``) read and write the tree without importing the loader that uses them.
"""

from __future__ import annotations

import os
from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib cost lookup's start-up milliseconds; annotations are strings anyway
    from pathlib import Path
    from typing import Any

SNAPSHOT_FILE = "fields.json"
INDEX_FILE = "index.json"
COMPRESSED_SUFFIX = ".gz"
"""An installed wheel carries each release's files gzip-compressed (``fields.json.gz``; see hatch_build.py):
the same bytes, read back by :func:`read_generated`, so sizes, hashes and ``paths.json``'s byte spans hold."""


def generated_file(path: str) -> str | None:
    """``path`` if it is a file, else its compressed form if that is one (an installed wheel), else None."""
    if os.path.isfile(path):
        return path
    compressed = path + COMPRESSED_SUFFIX
    return compressed if os.path.isfile(compressed) else None


def read_generated(path: str) -> bytes:
    """The bytes of the committed file ``path``, from ``path`` or its compressed form; OSError if neither."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        compressed = path + COMPRESSED_SUFFIX
        if not os.path.isfile(compressed):
            raise
    import zlib  # an installed wheel only; zlib, not gzip: one C call (the gzip module's reader loops in Python)

    with open(compressed, "rb") as handle:
        raw = handle.read()
    # zlib checks each member's header, CRC-32 and length as gzip.open does (the build hook writes one member).
    parts = []
    while raw:  # an empty file reads as empty, as with gzip.open
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            parts.append(decompressor.decompress(raw))
        except zlib.error as exc:
            raise OSError(f"{compressed}: {exc}") from None
        if not decompressor.eof:
            raise OSError(f"{compressed}: Compressed file ended before the end-of-stream marker was reached")
        raw = decompressor.unused_data.lstrip(b"\0")  # gzip.open skips padding zeros between members too
    return b"".join(parts)


def generated_size(path: str) -> int:
    """The size of the committed file ``path`` as a checkout has it (uncompressed); OSError if absent.

    Of a compressed file, the size its gzip trailer records (ISIZE: the uncompressed length modulo 2**32, exact
    for the one-member files of the wheel's build hook, all far below 4 GiB), read without decompressing: the
    index's staleness test asks the size of every release's snapshot, and decompressing 77 of them cost
    ``check`` 0.2 s of CPU per unknown key in a wheel install.
    """
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        compressed = path + COMPRESSED_SUFFIX
        if not os.path.isfile(compressed):
            raise
    with open(compressed, "rb") as handle:
        magic = handle.read(2)
        if magic != b"\x1f\x8b" or handle.seek(0, os.SEEK_END) < 18:  # header 10 bytes, trailer 8
            raise OSError(f"{compressed}: not a gzip file")
        handle.seek(-4, os.SEEK_END)
        return int.from_bytes(handle.read(4), "little")


_PACKAGE: list[str] = []
"""The real folder of the installed package, once found (a constant of the process: ``check`` asks per key)."""


def _package_dir() -> str:
    if not _PACKAGE:
        _PACKAGE.append(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # extractor/dsfields, or …
    return _PACKAGE[0]


def generated_root() -> str:
    """:func:`repo_generated_dir` as a string, found without pathlib (``lookup`` and ``check`` skip its import)."""
    env = os.environ.get("DSFIELDS_GENERATED")
    if env:
        return env
    package = _package_dir()
    beside_checkout = os.path.join(os.path.dirname(os.path.dirname(package)), "generated")
    for candidate in (beside_checkout, os.path.join(package, "generated")):
        if os.path.isdir(candidate):
            return candidate
    return beside_checkout


def repo_generated_dir() -> Path:
    """``generated/`` of the checkout, or ``$DSFIELDS_GENERATED``; the wheel ships a copy next to the package."""
    from pathlib import Path

    return Path(generated_root())


def dumps(data: Any) -> str:
    import json  # writers only

    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str, *, force: bool = False) -> None:
    """Write via a temp file in the same directory and rename: readers never see half a file.

    :func:`dsfields.model.safewrite.write_text` does it: symlinks followed, devices and FIFOs written into,
    hard-linked and read-only targets refused unless ``force``, mode and owner kept, the temp file flushed
    to disk before the rename and removed on any failure or caught signal. A failure is an
    :class:`OSError` naming ``path`` in one line.
    """
    from dsfields.model.safewrite import write_text

    write_text(path, text, force=force)


@lru_cache(maxsize=4096)
def version_key(version: str) -> tuple[Any, ...]:
    """Order ``0.9.10`` after ``0.9.2`` (release order) without importing packaging; remembered, as the site
    and ``explain`` order the same few hundred names over a million times.

    The runs of digits and of ASCII letters, in order, as ``re.findall(r"(\\d+)|([A-Za-z]+)")`` finds them
    (without compiling a pattern at start-up); anything else separates them.
    """
    numbers = version.split(".")
    if all(number.isdecimal() for number in numbers):  # a plain release (0.19.8): the same runs, found at once
        return tuple((1, int(number), "") for number in numbers)
    parts: list[Any] = []
    run, kind = "", ""
    for char in version + " ":
        here = "d" if char.isdecimal() else "w" if ("a" <= char <= "z" or "A" <= char <= "Z") else ""
        if here != kind and run:
            parts.append((1, int(run), "") if kind == "d" else (0, 0, run))
            run = ""
        kind = here
        if here:
            run += char
    return tuple(parts)


def version_listing(versions: list[str], limit: int = 12) -> str:
    """The versions for a one-line message: all of a few, else the closest ones and the range with a count."""
    if not versions:
        return "none"
    if len(versions) <= limit:
        return ", ".join(versions)
    return f"{len(versions)} releases, {versions[0]} … {versions[-1]}; newest: {', '.join(versions[-4:])}"


def available_versions(generated: Path | str | None = None) -> list[str]:
    root = os.fspath(generated) if generated else generated_root()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    found = [name for name in names if generated_file(os.path.join(root, name, SNAPSHOT_FILE))]
    return sorted(found, key=version_key)
