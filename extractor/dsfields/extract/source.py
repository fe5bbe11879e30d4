"""Static source facts read with griffe: attribute docstrings, line numbers, constant comments.

Runtime objects know their values but not where they were written or what the author said about
them; griffe reads both from the source without importing it. Files are visited one at a time
(only those the runtime pointed us to), which keeps extraction fast.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import griffe


@dataclass(frozen=True)
class Located:
    file: str
    """Path relative to site-packages, e.g. ``deepspeed/runtime/zero/config.py``."""
    line: int
    docstring: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line}


class SourceIndex:
    """Caches griffe modules of DeepSpeed files and answers "where is X and what does it say"."""

    def __init__(self, package_root: Path) -> None:
        self.package_root = package_root.resolve()
        """The directory holding ``deepspeed/`` (site-packages, or an unpacked sdist)."""

    @cache  # noqa: B019 - one index per extraction; the same few files are asked for at every read site
    def relative(self, filename: str) -> str:
        path = Path(filename).resolve()
        try:
            return path.relative_to(self.package_root).as_posix()
        except ValueError:
            return path.as_posix()

    @cache  # noqa: B019 - one index per extraction; the cache dies with it
    def module(self, filename: str) -> griffe.Module | None:
        path = Path(filename)
        if not path.is_file():
            return None
        name = self.relative(filename).removesuffix(".py").replace("/", ".")
        try:
            return griffe.visit(name, filepath=path, code=path.read_text(encoding="utf-8"))
        except Exception:  # a file griffe cannot parse: the runtime facts still stand
            return None

    @cache  # noqa: B019
    def lines(self, filename: str) -> list[str]:
        return Path(filename).read_text(encoding="utf-8").splitlines()

    def of_class(self, cls: type) -> tuple[Located | None, dict[str, Located]]:
        """The class's location and docstring, and each attribute's location and docstring."""
        filename = _file_of(cls)
        module = self.module(filename) if filename else None
        if module is None:
            return None, {}
        try:
            obj = module[cls.__qualname__]
        except (KeyError, ValueError, griffe.AliasResolutionError):
            return None, {}
        where = self.relative(filename)
        attrs: dict[str, Located] = {}
        for name, member in obj.members.items():
            if member.is_attribute and member.lineno:
                doc = member.docstring.value.strip() if member.docstring else None
                attrs[name] = Located(where, member.lineno, doc or None)
        doc = obj.docstring.value.strip() if obj.docstring else None
        return Located(where, obj.lineno or 0, doc or None), attrs

    def constant(self, filename: str, name: str) -> Located | None:
        """Where ``name`` is assigned in ``filename``, with the comment block above it as its text."""
        module = self.module(filename)
        if module is None or name not in module.members:
            return None
        member = module.members[name]
        if member.is_alias or not member.lineno:
            return None
        return Located(self.relative(filename), member.lineno, comment_above(self.lines(filename), member.lineno))


def comment_above(lines: list[str], lineno: int) -> str | None:
    """The ``#`` comment lines directly above line ``lineno`` (1-based), banners dropped."""
    out: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        text = lines[index].strip().lstrip("#").strip()
        if text:
            out.append(text)
        index -= 1
    text = " ".join(reversed(out)).strip()
    return text or None


def _file_of(obj: Any) -> str | None:
    try:
        return inspect.getsourcefile(obj)
    except TypeError:
        module = sys.modules.get(getattr(obj, "__module__", ""))
        return getattr(module, "__file__", None)
