"""The one reader of a file a user names (a config, ``--model-config``, ``--accelerate-config``): bounded, and
refusing in one line what is not a regular file of UTF-8 text.

Every layer may read a user's file through here (``model/`` is stdlib only, so this is too);
:mod:`dsfields.configfile` reads ds_configs with it and turns its refusal into a ``ConfigFileError``.
"""

from __future__ import annotations

import os
import stat

from dsfields.model.errors import DsfieldsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

MAX_BYTES = 8 * 1024 * 1024
"""Largest config file read, in bytes (real ds_configs are a few KB)."""


class UnreadableFile(DsfieldsError):
    """The file cannot be used at all (missing, not a regular file, too large, not UTF-8): one line, exit 2."""


def read_bytes(path: str | Path, limit: int = MAX_BYTES, what: str = "a config file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, else :class:`UnreadableFile`.

    The type is checked with ``stat`` before opening (opening a FIFO would block, reading ``/dev/zero`` would
    never end), the file is opened with ``O_NONBLOCK`` in case it was swapped for a FIFO in between and checked
    again on the open descriptor, and at most one byte more than the limit is ever read.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such file") from None
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL byte or a lone surrogate in the name
        raise UnreadableFile(f"{path}: not a usable file name ({exc})") from None
    _require_regular(path, info, limit, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        _require_regular(path, os.fstat(fd), limit, what)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise too_large(path, limit, what)
    return b"".join(chunks)


def read_text(path: str | Path, limit: int = MAX_BYTES, what: str = "a config file") -> str:
    """:func:`read_bytes` decoded as UTF-8 (a BOM kept: its reader decides); else one line naming the first byte
    that is not UTF-8."""
    raw = read_bytes(path, limit, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _require_regular(path: str | Path, info: os.stat_result, limit: int, what: str) -> None:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        if info.st_size > limit:
            raise too_large(path, limit, what)
        return
    kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise UnreadableFile(f"{path}: is {kind}; only regular files are read")


def too_large(name: object, limit: int = MAX_BYTES, what: str = "a config file") -> UnreadableFile:
    size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"
    return UnreadableFile(f"{name}: larger than {size}, dsfields' limit for {what}")
