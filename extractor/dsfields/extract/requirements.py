"""Requirements between keys, learned from the value probes: "enabled: true requires max_tokens".

A value probe sets one key alone. Where DeepSpeed refuses it for want of *another* key of the same section
(``Dynamic batching is enabled, so max_tokens must be specified``), the refusal is not a verdict on the
probed value: taken as one, boolean drops out of the key's accepted types and ``check`` errors on every valid
config that turns the feature on. Here each such key is probed again on a config that satisfies its section's
requirements (the named keys given values DeepSpeed accepts, found by trying candidates one refusal at a
time), its verdicts replace the first ones, and each requirement is recorded as a fact with its provenance:
the key required, the values of the probed key that need it, DeepSpeed's message and the source line that
raised it. ``check`` reports a broken requirement as one error on the missing key, never on the flag.
"""

from __future__ import annotations

import copy
import re
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsfields.extract.discover import set_path, without_path
from dsfields.extract.probes import PROBES, _stored, accepted_types, error_line, probe_base
from dsfields.model.jsontypes import json_type

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction

CANDIDATES: tuple[Any, ...] = (1, [1], True, "1", {}, 1.5, "x")
"""Values tried, in order, for a required key without a usable default: the first DeepSpeed accepts is kept."""

MAX_STEPS = 12
"""Builds per key while satisfying its requirements (each refusal names one key; a section needs few)."""

_TRIGGERS = ("true", "1", '"1"')
"""The probe whose refusal is followed: the value a user writes to switch a feature on."""


def _names(error: str, siblings: set[str]) -> list[str]:
    """The sibling keys a refusal names, in the order it names them."""
    found = [(m.start(), key) for key in siblings for m in [re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", error)]
             if m is not None]
    return [key for _, key in sorted(found)]


def _raised_at(exc: BaseException | None, ex: Extraction) -> dict[str, Any] | None:
    """The innermost frame of DeepSpeed's package that raised ``exc`` (``deepspeed/<file>``, line)."""
    if exc is None:
        return None
    module = sys.modules.get(ex.package)
    root = Path(getattr(module, "__file__", "") or ".").resolve().parent
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            Path(frame.filename).resolve().relative_to(root)
        except ValueError:
            continue
        where = {"file": ex.source.relative(frame.filename), "line": frame.lineno}
    return where


def _candidates(ex: Extraction, section: str, key: str) -> list[Any]:
    record = ex.fields.get(f"{section}.{key}" if section else key) or {}
    default = record.get("default")
    first = [default] if default not in (None, False, "", [], {}) else []
    return first + [c for c in CANDIDATES if c not in first]


def _satisfy(ex: Extraction, base: dict[str, Any], section: str, key: str, trigger: Any,
             siblings: set[str]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """A config on which ``key: trigger`` is accepted, and the requirements met on the way; None if none is found."""
    config = copy.deepcopy(base)
    tried: dict[str, int] = {}
    found: dict[str, dict[str, Any]] = {}
    for _ in range(MAX_STEPS):
        run = ex.prober.run(set_path(config, section, key, copy.deepcopy(trigger)), trace=False)
        if run.error is None:
            node: Any = config
            for part in section.split(".") if section else []:
                node = node[part]
            # The value each required key was given: the re-probed verdicts are reproducible from it.
            return config, [{**r, "satisfied_by": copy.deepcopy(node[r["key"]])} for r in found.values()]
        message = error_line(run.error)
        named = [k for k in _names(message, siblings) if tried.get(k, 0) < len(_candidates(ex, section, k))]
        if not named:
            return None  # refused for another reason (or no candidate value satisfies the key): not a requirement
        required = named[0]
        if required not in found:
            found[required] = {"key": required, "message": message, "source": _raised_at(run.error, ex)}
        candidates = _candidates(ex, section, required)
        config = set_path(config, section, required, copy.deepcopy(candidates[tried.get(required, 0)]))
        tried[required] = tried.get(required, 0) + 1
    return None


def _when(ex: Extraction, satisfied: dict[str, Any], section: str, key: str, required: str) -> Any:
    """The probe values of ``key`` that need ``required``: ``"truthy"`` when exactly the truthy ones do."""
    without = without_path(satisfied, section, required)
    needing: list[str] = []
    accepted: list[tuple[str, Any]] = []
    for pid, value in PROBES:
        with_it = ex.prober.run(set_path(satisfied, section, key, copy.deepcopy(value)), trace=False)
        if with_it.error is not None:
            continue  # refused even with the requirement met: the value's own verdict, not the requirement's
        accepted.append((pid, value))
        alone = ex.prober.run(set_path(without, section, key, copy.deepcopy(value)), trace=False)
        if alone.error is not None and required in _names(error_line(alone.error), {required}):
            needing.append(pid)
    if needing and {pid for pid, value in accepted if value} == set(needing):
        return "truthy"
    return needing


def _auto_on(ex: Extraction, config: dict[str, Any], section: str, key: str) -> dict[str, Any]:
    """The ``auto`` record measured again on the satisfying config (the first one was refused for want of a key)."""
    from dsfields.extract.extraction import _state  # the same measurement as build's _auto_behaviour

    reference, _ = _state(ex, config)
    state, error = _state(ex, set_path(config, section, key, "auto"))
    if error is not None:
        return {"accepted": False, "becomes": None, "error": error.splitlines()[0][:300]}
    same = reference is not None and state == reference
    return {"accepted": True, "becomes": "default" if same else "kept", "error": None}


def learn_requirements(ex: Extraction) -> list[str]:
    """Re-probe every key refused for want of a sibling key, on a satisfying config; record the requirements.

    Returns one line per key for the witness report (``coverage.witnesses.requirements``).
    """
    notes: list[str] = []
    by_section: dict[str, set[str]] = {}
    for record in ex.fields.values():
        if not record.get("pattern"):
            by_section.setdefault(record["section"], set()).add(record["key"])
    for path, record in sorted(ex.fields.items()):
        probes = record.get("probes")
        if not probes or record["is_section"]:
            continue
        section, key = record["section"], record["key"]
        siblings = by_section.get(section, set()) - {key}
        trigger = next((dict(PROBES)[pid] for pid in _TRIGGERS if not probes.get(pid, {}).get("ok", True)
                        and _names(str(probes[pid].get("error", "")), siblings)), None)
        if trigger is None:
            continue
        base = probe_base(ex, record)
        satisfied = _satisfy(ex, base, section, key, trigger, siblings)
        if satisfied is None:
            notes.append(f"{path}: a refusal names another key, but no config satisfying it was found")
            continue
        config, found = satisfied
        requires = []
        for requirement in found:
            when = _when(ex, config, section, key, requirement["key"])
            if when:
                requires.append({**requirement, "when": when})
        if not requires:
            continue
        cls = ex.model_classes.get(section) if record["reader"] == "pydantic" else None
        verdicts: dict[str, dict[str, Any]] = {}
        for pid, value in PROBES:
            run = ex.prober.run(set_path(config, section, key, copy.deepcopy(value)), trace=False)
            verdicts[pid] = (_stored(cls, key, record.get("python_name"), value) if run.error is None
                             else {"ok": False, "error": error_line(run.error)})
        record["probes"] = verdicts
        record["requires"] = sorted(requires, key=lambda r: r["key"])
        auto = record.get("auto") or {}
        if auto.get("error") and _names(str(auto["error"]), {r["key"] for r in requires}):
            record["auto"] = _auto_on(ex, config, section, key)
        if record["reader"] == "dict":
            types = accepted_types(verdicts)
            if types and record["choices"]:
                types = sorted(set(types) | {json_type(c) for c in record["choices"]})
            record["json_types"] = types
        given = ", ".join(f"{r['key']}" for r in record["requires"])
        notes.append(f"{path}: requires {given} (probed again with them given)")
    return notes
