"""The working set of one snapshot's extraction, and the measurements every witness shares with the builder.

Apart from :mod:`dsfields.extract.build` (which runs the witnesses: absent, probes, reconcile, requirements,
validators) so that the witnesses import what they work on without importing the module that imports them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from dsfields.extract.discover import Discovery, Prober
from dsfields.extract.source import SourceIndex
from dsfields.extract.state import parsed_state
from dsfields.model.dotted import set_path


@dataclass
class Extraction:
    """Mutable working set while building one snapshot."""

    package: str
    """Top-level package name being extracted (``deepspeed``; fixtures use their own)."""
    config_module: Any
    prober: Prober
    source: SourceIndex
    discovery: Discovery
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    enums: dict[str, dict[str, Any]] = field(default_factory=dict)
    placed_models: set[type] = field(default_factory=set)
    modules_by_file: dict[str, Any] = field(default_factory=dict)
    constant_files: list[str] = field(default_factory=list)
    instance_memo: dict[tuple[int, type], list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    model_classes: dict[str, type] = field(default_factory=dict)
    """Section path → the pydantic model validating it (value probes validate it directly)."""
    bases: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Field path → the probe config under which the trace read it (conditional reads)."""
    witnesses: dict[str, Any] = field(default_factory=dict)


def _state(ex: Extraction, config: dict[str, Any]) -> tuple[Any, str | None]:
    run = ex.prober.run(config, trace=False)
    if run.error is not None:
        return None, f"{type(run.error).__name__}: {run.error}"
    return parsed_state(run.config, ex.package), None


def with_section(config: dict[str, Any], section: str) -> dict[str, Any]:
    """``config`` with the (possibly nested) section present, as an empty dict where it was absent."""
    if not section:
        return copy.deepcopy(config)
    parent, _, last = section.rpartition(".")
    return set_path(config, parent, last, {})
