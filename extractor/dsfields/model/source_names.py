"""What each release's DeepSpeed source defines, by name: the index ``generated/source-names.json`` (written by
``python -m dsfields.extract.source_index``), read for the prose check (``dsfields.model.prose_facts``)."""

from __future__ import annotations

import json
import os
from functools import cache

FILE_NAME = "source-names.json"
FORMAT = 1


class SourceNames:
    """The names of one release's source: ``names`` (every name it spells anywhere: what the release has), ``defined``
    (its functions, methods, classes and module stems: what naming in another release's text is a claim about),
    ``qualified`` (``deepspeed.a.b`` modules and ``deepspeed.a.b.X`` module-level names) and ``modules``."""

    __slots__ = ("names", "defined", "qualified", "modules")

    def __init__(self, names: frozenset[str], defined: frozenset[str], qualified: frozenset[str],
                 modules: frozenset[str]) -> None:
        self.names = names
        self.defined = defined
        self.qualified = qualified
        self.modules = modules


def index_runs(indexes: list[int]) -> str:
    """Sorted release indexes as the index's runs: ``[0, 1, 2, 5]`` → ``"0-2 5-5"`` (``[]`` → ``""``); the form
    :func:`_runs` reads back, and the site's script for the guides' scope."""
    out: list[str] = []
    for at in indexes:
        first, _, last = out[-1].partition("-") if out else ("", "", "")
        if out and int(last) == at - 1:
            out[-1] = f"{first}-{at}"
        else:
            out.append(f"{at}-{at}")
    return " ".join(out)


@cache
def _runs(root: str, key: str) -> tuple[tuple[str, int, int], ...]:
    """The ``key`` table of the index as ``(name, first, last)``, one per run of releases: parsed once, where
    :func:`of_release` asks it for each release (each run's text was read again per release: 11 of the 23 s the prose
    check spent on 77 releases)."""
    document = _index(root) or {}
    return tuple((name, int(first), int(last)) for name, runs in (document.get(key) or {}).items()
                 for first, last in (run.split("-") for run in runs.split()))


@cache
def _index(root: str) -> dict | None:
    try:
        with open(os.path.join(root, FILE_NAME), encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError:
        return None
    return document if isinstance(document, dict) and document.get("format") == FORMAT else None


@cache
def of_release(version: str, root: str | None = None) -> SourceNames | None:
    """The names ``version``'s source defines, or None where the index (or the release in it) is absent."""
    if root is None:
        from dsfields.model.store import repo_generated_dir

        root = os.fspath(repo_generated_dir())
    document = _index(root)
    if document is None or version not in (document.get("releases") or []):
        return None
    at = document["releases"].index(version)
    return SourceNames(*(frozenset(n for n, first, last in _runs(root, key) if first <= at <= last)
                         for key in ("names", "defined", "qualified", "modules")))
