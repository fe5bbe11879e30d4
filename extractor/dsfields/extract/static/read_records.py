"""Typed records of the static witness: what DeepSpeed's source reads from ds_config, and where.

The dynamic trace only sees reads that a probe config happens to trigger. These records are what
the source itself says, so the reconciliation (issue 15) can tell "read under a condition the trace
never met" from "never read". Every record carries its file, line and function; nothing the
scanner met but could not place is dropped: it goes to :class:`Unplaced` with a reason.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


class _Missing:
    """No default at the read (``d[K]``, ``K in d``): absent means "not set"."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Test:
    """One machine-readable part of a branch condition, in terms of JSON paths.

    ``op`` is ``truthy``/``falsy`` (the value read at ``path``), ``present``/``absent`` (``K in d``),
    ``==``/``!=``/``in``/``not in`` (against ``value``), ``is``/``is not`` (``None``), or
    ``isinstance``/``not isinstance`` (``value`` is the type name: accepted alternative shapes).
    """

    path: str
    op: str
    value: Any = field(default=None, hash=False)

    def negated(self) -> Test:
        return Test(self.path, _NEGATE[self.op], self.value)


_NEGATE = {
    "truthy": "falsy",
    "falsy": "truthy",
    "present": "absent",
    "absent": "present",
    "==": "!=",
    "!=": "==",
    "in": "not in",
    "not in": "in",
    "is": "is not",
    "is not": "is",
    "isinstance": "not isinstance",
    "not isinstance": "isinstance",
}


@dataclass(frozen=True)
class Condition:
    """An enclosing branch: its source text (constants resolved) and the tests it makes on paths."""

    text: str
    tests: tuple[Test, ...] = ()


@dataclass(frozen=True)
class StaticRead:
    """One read of a ds_config key: ``path`` is the JSON path, ``op`` how it is read.

    ``op``: ``get_scalar_param``/``get_dict_param``/``get_list_param``, ``get``, ``getitem``
    (``d[K]``), ``in`` (``K in d``), ``pop``, ``setdefault``, ``merged_default`` (the key of a
    literal default dict the user's section is merged into, e.g. ``pipeline``) and ``iterate``
    (``for k, v in d.items()``: ``key`` is ``*``). ``default`` is the literal default, ``MISSING``
    when the read has none; ``default_repr`` spells a default that is not a literal
    (``sys.maxsize``). A ``*`` in ``path`` is a user-named key (``different_groups.*.params``).
    """

    path: str
    key: str
    op: str
    default: Any = field(hash=False)
    default_repr: str | None
    conditions: tuple[Condition, ...]
    file: str
    line: int
    function: str

    @property
    def section(self) -> str:
        return self.path.rpartition(".")[0]

    @property
    def condition(self) -> str | None:
        """The enclosing conditions as one source text (outermost first), ``None`` when unconditional."""
        return " and ".join(f"({c.text})" if len(self.conditions) > 1 else c.text for c in self.conditions) or None


@dataclass(frozen=True)
class PassedWhole:
    """A ds_config (sub)dict handed on as a whole: its keys are read (or kept) elsewhere.

    ``kind``: ``model`` (``Model(**d)``: a pydantic model validates it), ``attribute`` (stored as
    ``Class.attr``: whoever reads the attribute reads the keys), ``call`` (passed to a callee the
    scanner could not follow, ``to`` is its source text), ``merge`` (merged into a literal default
    dict, ``to`` names it) or ``function``/``class`` (followed: its reads are records of their own).
    """

    path: str
    to: str
    kind: str
    conditions: tuple[Condition, ...]
    file: str
    line: int
    function: str


@dataclass(frozen=True)
class Choices:
    """Values a key is compared with in code: the per-release allowed values of a dict-read key.

    ``how``: ``==`` (an ``if``/``elif`` chain), ``in`` (membership in a list/set/tuple constant,
    ``constant`` names it), ``assert`` (``assert v in ...``) or ``lookup`` (keys of a literal dict the
    value indexes). ``normalized`` is ``lower``/``upper`` when the value is case-folded first;
    ``raises`` is true when the function raises or asserts (the values are validated, not hints).
    """

    path: str
    values: tuple[Any, ...] = field(hash=False)
    how: str
    normalized: str | None
    raises: bool
    constant: str | None
    file: str
    line: int
    function: str


@dataclass(frozen=True)
class Unplaced:
    """A read the scanner recognised but could not put at a JSON path, and why."""

    key: str | None
    expr: str
    reason: str
    file: str
    line: int
    function: str


@dataclass
class StaticReport:
    """Everything the static witness found in one ``deepspeed`` package."""

    package: str
    version: str | None
    reads: list[StaticRead] = field(default_factory=list)
    passed_whole: list[PassedWhole] = field(default_factory=list)
    choices: list[Choices] = field(default_factory=list)
    unplaced: list[Unplaced] = field(default_factory=list)
    files_total: int = 0
    files_parsed: int = 0
    functions_analyzed: int = 0
    seconds: float = 0.0

    def paths(self, *, wildcards: bool = True) -> set[str]:
        """JSON paths of keys read (``iterate`` records and, unless ``wildcards``, ``*`` paths left out)."""
        out = {r.path for r in self.reads if r.op != "iterate"}
        return out if wildcards else {p for p in out if "*" not in p.split(".")}

    def sections(self) -> set[str]:
        """Paths known to hold a dict: parents of reads, and dicts passed on whole."""
        out = {r.section for r in self.reads if r.section}
        out |= {p.path for p in self.passed_whole if p.path}
        return out

    def reads_of(self, path: str) -> list[StaticRead]:
        return [r for r in self.reads if r.path == path]

    def choices_of(self, path: str) -> list[Choices]:
        return [c for c in self.choices if c.path == path]

    def counts(self) -> dict[str, int]:
        return {
            "reads": len(self.reads),
            "paths": len(self.paths()),
            "conditional_paths": len({r.path for r in self.reads if r.conditions}),
            "passed_whole": len(self.passed_whole),
            "choices": len(self.choices),
            "unplaced": len(self.unplaced),
            "files_total": self.files_total,
            "files_parsed": self.files_parsed,
            "functions_analyzed": self.functions_analyzed,
        }

    def as_dict(self) -> dict[str, Any]:
        def enc(obj: Any) -> Any:
            d = asdict(obj)
            if "default" in d and d["default"] is MISSING:
                d["default"] = "MISSING"
            if "condition" not in d and hasattr(obj, "condition"):
                d["condition"] = obj.condition
            return d

        return {
            "package": self.package,
            "version": self.version,
            "counts": self.counts(),
            "seconds": round(self.seconds, 3),
            "reads": [enc(r) for r in self.reads],
            "passed_whole": [enc(p) for p in self.passed_whole],
            "choices": [enc(c) for c in self.choices],
            "unplaced": [enc(u) for u in self.unplaced],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1, sort_keys=True, default=repr)
