"""What reading a function finds (:class:`Result`), and what the scan's findings become in the end.

A :class:`Result` holds a function's reads, sections passed on whole, values compared against constants
(:class:`ChoiceHit`), dicts stored on objects (:class:`Store`) and what it could not place; callers merge
their callees' results under the call site's conditions. After the last round, reads under a key the scan
could not resolve are swept into the unplaced ones (:func:`sweep_unresolved`), the paths known to hold a
dict are found (:func:`known_sections`) and the comparisons become :class:`~.records.Choices`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .read_records import Choices, Condition, PassedWhole, StaticRead, Unplaced

UNRESOLVED = "\x00"
"""Encloses the path segment standing for a key the scan could not resolve (never in a JSON key)."""


@dataclass(frozen=True)
class ChoiceHit:
    path: str
    values: tuple[Any, ...] = field(hash=False)
    how: str
    normalized: str | None
    constant: str | None
    file: str
    line: int
    function: str
    raises: bool


@dataclass(frozen=True)
class Store:
    module: str
    cls: str
    attr: str
    value: Any


@dataclass
class Result:
    """What reading one function (with its callees) found, and what it returns."""

    reads: set[StaticRead] = field(default_factory=set)
    passed: set[PassedWhole] = field(default_factory=set)
    hits: set[ChoiceHit] = field(default_factory=set)
    unplaced: set[Unplaced] = field(default_factory=set)
    stores: set[Store] = field(default_factory=set)
    reached: set[tuple[str, str]] = field(default_factory=set)
    ret: Any = None

    def merge(self, other: Result, conds: tuple[Condition, ...] = ()) -> None:
        """Add a callee's findings; ``conds`` (the call site's conditions) go before the callee's own."""
        if conds:
            self.reads |= {replace(r, conditions=conds + r.conditions) for r in other.reads}
            self.passed |= {replace(p, conditions=conds + p.conditions) for p in other.passed}
        else:
            self.reads |= other.reads
            self.passed |= other.passed
        self.hits |= other.hits
        self.unplaced |= other.unplaced
        self.stores |= other.stores
        self.reached |= other.reached


def json_form(value: Any) -> Any:
    if isinstance(value, tuple):
        return [json_form(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((json_form(v) for v in value), key=repr)
    if isinstance(value, list):
        return [json_form(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_form(v) for k, v in value.items()}
    return value


def is_json(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list | tuple | set | frozenset):
        return all(is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json(v) for k, v in value.items())
    return False


def _unresolved(path: str) -> bool:
    return path.startswith(UNRESOLVED)


def _known_tests(conditions: tuple[Condition, ...]) -> tuple[Condition, ...]:
    return tuple(replace(c, tests=tuple(t for t in c.tests if not _unresolved(t.path))) for c in conditions)


def sweep_unresolved(result: Result) -> None:
    """Reads under a key the scan could not resolve become :class:`Unplaced`; nothing else keeps the marker.

    Each such read is listed with the expression that lost the path (``param_dict[QUANTIZE_TRAINING]
    (container <root>) -> eigenvalue.enabled``); tests on those paths leave the conditions (their text stays).
    """
    for r in sorted((r for r in result.reads if _unresolved(r.path)), key=lambda r: (r.file, r.line, r.path)):
        _, head, rest = r.path.split(UNRESOLVED, 2)
        result.unplaced.add(Unplaced(r.key, f"{head} -> {rest.lstrip('.') or r.key}",
                                     "read under a key the scan cannot resolve", r.file, r.line, r.function))
    result.reads = {replace(r, conditions=_known_tests(r.conditions)) if any(
        _unresolved(t.path) for c in r.conditions for t in c.tests) else r
        for r in result.reads if not _unresolved(r.path)}
    result.passed = {replace(p, conditions=_known_tests(p.conditions)) for p in result.passed
                     if not _unresolved(p.path)}
    result.hits = {h for h in result.hits if not _unresolved(h.path)}


SURE_DICT_KINDS = frozenset({"model", "merge", "unpacked"})
"""PassedWhole kinds that prove the value is a dict (others may pass a scalar on)."""


def known_sections(result: Result) -> set[str]:
    """Paths known to hold a dict: parents of reads, and values unpacked, merged or validated whole."""
    out = {r.path.rpartition(".")[0] for r in result.reads if "." in r.path}
    out |= {p.path for p in result.passed if p.kind in SURE_DICT_KINDS}
    return out


def aggregate_choices(scanner_hits: Iterable[ChoiceHit]) -> list[Choices]:
    """One :class:`Choices` per membership test, and one per ``==`` chain (path, function)."""
    out: list[Choices] = []
    chains: dict[tuple[str, str, str, str | None], list[ChoiceHit]] = {}
    for hit in scanner_hits:
        if hit.how == "==":
            chains.setdefault((hit.path, hit.file, hit.function, hit.normalized), []).append(hit)
        else:
            out.append(
                Choices(
                    hit.path,
                    hit.values,
                    hit.how,
                    hit.normalized,
                    hit.raises,
                    hit.constant,
                    hit.file,
                    hit.line,
                    hit.function,
                )
            )
    for (path, file, function, norm), hits in chains.items():
        values: list[Any] = []
        for hit in sorted(hits, key=lambda h: h.line):
            for v in hit.values:
                if v not in values:
                    values.append(v)
        first = min(hits, key=lambda h: h.line)
        out.append(
            Choices(
                path,
                tuple(values),
                "==",
                norm,
                any(h.raises for h in hits),
                None,
                file,
                first.line,
                function,
            )
        )
    return sorted(set(out), key=lambda c: (c.path, c.file, c.line, c.how))
