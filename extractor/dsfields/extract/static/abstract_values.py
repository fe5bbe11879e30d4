"""Abstract values of the static scan: what a local name may hold while a function is read.

A name is either traced to a place in ds_config (:class:`Tracked`), a dict the code builds from
such places (:class:`Shape`, e.g. ``output[DATA_SAMPLING] = get_data_sampling(sub)``), a constant,
a key of an iteration, or a boolean test over paths. Keeping these small and hashable lets the
scanner analyse a function once per calling context and cache the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .read_records import Test

Path = tuple[str, ...]


def dotted(path: Path) -> str:
    return ".".join(path)


@dataclass(frozen=True)
class Tracked:
    """The value found at one or more JSON paths (``()`` is the whole ds_config)."""

    paths: frozenset[Path]
    norm: str | None = None
    """``lower``/``upper`` once the code case-folds the value."""

    @staticmethod
    def at(path: Path) -> Tracked:
        return Tracked(frozenset([path]))

    def child(self, key: str) -> Tracked:
        return Tracked(frozenset(p + (key,) for p in self.paths if len(p) < 12))


@dataclass(frozen=True, eq=False)
class Const:
    """A value known at scan time (``repr`` spells it when it is not JSON, e.g. ``torch.float16``)."""

    value: Any
    repr: str | None = None

    def __hash__(self) -> int:
        return hash(("Const", _stable(self.value), self.repr))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Const) and _stable(self.value) == _stable(other.value) and self.repr == other.repr


@dataclass(frozen=True)
class Opaque:
    """A value that is not a constant: only its source text is known (for a default's repr)."""

    text: str


@dataclass(frozen=True)
class Shape:
    """A dict built in code: ``items`` known per key, anything else read from ``base``."""

    base: Tracked | None
    items: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str) -> Any:
        for k, v in self.items:
            if k == key:
                return v
        return None

    def with_item(self, key: str, value: Any) -> Shape:
        items = tuple((k, v) for k, v in self.items if k != key) + ((key, value),)
        return Shape(self.base, items)


@dataclass(frozen=True)
class Items:
    """``d.items()`` of a tracked dict (iterated as ``key, value`` pairs)."""

    of: Tracked


@dataclass(frozen=True)
class IterKey:
    """The key variable of ``for k in d`` over a tracked dict: a user-chosen name (``*``)."""

    of: Tracked


@dataclass(frozen=True, eq=False)
class KeySet:
    """The key variable of a loop over literal keys (``for k, v in DEFAULTS.items()``, ``for k in [A, B]``).

    ``defaults`` maps each key to its literal default when the loop runs over a dict, else is ``None``;
    ``origin`` names the literal (for PassedWhole ``merge``).
    """

    keys: tuple[str, ...]
    defaults: tuple[tuple[str, Any], ...] | None
    origin: str

    def __hash__(self) -> int:
        return hash(("KeySet", self.keys, self.origin))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeySet) and (self.keys, self.origin) == (other.keys, other.origin)


@dataclass(frozen=True)
class DefaultOf:
    """The value variable of ``for k, v in DEFAULTS.items()``: the default of the current key."""

    keys: KeySet


@dataclass(frozen=True)
class Tests:
    """A boolean over paths, from a comparison, membership or truthiness test."""

    tests: tuple[Test, ...]


@dataclass(frozen=True)
class Instance:
    """``self`` inside a method, or an object built from a class of the package."""

    module: str
    cls: str


@dataclass(frozen=True)
class LocalFunc:
    """A function defined inside the function being read (a closure helper)."""

    module: str
    qualname: str
    lineno: int


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), _stable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_stable(v) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", tuple(sorted(repr(v) for v in value)))
    return (type(value).__name__, repr(value))


def join(a: Any, b: Any) -> Any:
    """The value after two branches: tracked wins, two tracked values merge their paths."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if isinstance(a, Tracked) and isinstance(b, Tracked):
        return Tracked(a.paths | b.paths, a.norm or b.norm)
    if isinstance(a, Shape) and isinstance(b, Shape):
        # a dict built on two paths (a loop that may copy the user's keys into it, or not) may hold the items and
        # the base of either
        keys = [k for k, _ in a.items] + [k for k, _ in b.items if a.get(k) is None]
        return Shape(join(a.base, b.base), tuple((k, join(a.get(k), b.get(k))) for k in keys))
    if isinstance(a, Shape) and isinstance(b, Tracked):
        return Shape(join(a.base, b), a.items)
    if isinstance(a, Tracked) and isinstance(b, Shape):
        return Shape(join(b.base, a), b.items)
    if isinstance(b, Tracked | Shape) and not isinstance(a, Tracked | Shape):
        return b
    return a


@dataclass(frozen=True)
class ShapeItems:
    """``d.items()`` of a dict built in code: iterated key by key."""

    shape: Shape


@dataclass(frozen=True)
class Imported:
    """A name bound by an import inside the function being read."""

    module: str
    name: str


def tests_of(value: Any) -> tuple[Test, ...]:
    """The tests ``value`` stands for as a condition (a tracked value: truthy)."""
    if isinstance(value, Tests):
        return value.tests
    if isinstance(value, Tracked):
        return tuple(Test(dotted(p), "truthy") for p in sorted(value.paths))
    return ()


def paths_of(value: Any, depth: int = 0) -> list[Path]:
    """Paths of ds_config a value carries (a built dict carries its base and its items)."""
    if isinstance(value, Tracked):
        return sorted(value.paths)
    if isinstance(value, Shape) and depth < 4:
        out = set(value.base.paths) if value.base is not None else set()
        for _key, item in value.items:
            out.update(paths_of(item, depth + 1))
        return sorted(out)
    return []
