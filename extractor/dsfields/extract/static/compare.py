"""Compare the static witness with a committed snapshot: which paths only one of them knows.

This is the first cut of the witness report of issue 15 (item 7): it shows where the dynamic
trace is blind (keys read conditionally, merged from literal defaults, read after a whole-dict
copy) and where the static scan is (pydantic fields, which it sees only as a model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .read_records import StaticReport


@dataclass
class Comparison:
    """Paths found only statically, and snapshot paths the static scan missed, each with why."""

    both: set[str] = field(default_factory=set)
    only_static: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    """read statically, listed as a removed key by the snapshot (DeepSpeed rejects it)"""
    only_snapshot: dict[str, str] = field(default_factory=dict)
    """path -> why the static scan has no read for it"""

    def counts(self) -> dict[str, int]:
        reasons: dict[str, int] = {}
        for why in self.only_snapshot.values():
            reasons[why] = reasons.get(why, 0) + 1
        return {
            "both": len(self.both),
            "only_static": len(self.only_static),
            "removed": len(self.removed),
            "only_snapshot": len(self.only_snapshot),
            **{f"only_snapshot: {k}": v for k, v in sorted(reasons.items())},
        }


MODEL = "pydantic model field (the static witness sees the model, not its fields)"
UNDER_PASSED = "under a section passed on whole (read by the component it is passed to)"
NOT_FOUND = "no read found statically"


def compare(report: StaticReport, snapshot: dict[str, Any]) -> Comparison:
    """Compare ``report`` with a snapshot dict (``generated/<ver>/fields.json``)."""
    # Format 2 snapshots hold the static witness's paths too: compare with what the trace saw.
    fields = {p: r for p, r in snapshot.get("fields", {}).items() if "trace" in r.get("witnesses", ["trace"])}
    static = report.paths(wildcards=False)
    out = Comparison()
    out.both = static & set(fields)
    removed = set(snapshot.get("removed") or {})
    out.removed = (static - set(fields)) & removed
    out.only_static = static - set(fields) - removed
    models = {p.path for p in report.passed_whole if p.kind == "model"}
    passed = {p.path for p in report.passed_whole}
    for path, record in fields.items():
        if path in static:
            continue
        if record.get("reader") == "pydantic" or _under(path, models):
            out.only_snapshot[path] = MODEL
        elif _under(path, passed):
            out.only_snapshot[path] = UNDER_PASSED
        else:
            out.only_snapshot[path] = NOT_FOUND
    return out


def _under(path: str, prefixes: set[str]) -> bool:
    parts = path.split(".")
    return any(".".join(parts[:i]) in prefixes for i in range(len(parts), 0, -1))
