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

from dsfields.extract.probes import PROBES, _stored, accepted_types, error_line, probe_base
from dsfields.model.dotted import at_path, set_path, without_path
from dsfields.model.jsontypes import json_type
from dsfields.model.records import probe_id

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
    # A switch off by default is switched on first: ``1`` for a boolean would be a poor value to record.
    first = [True] if default is False else [default] if default not in (None, "", [], {}) else []
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
            node: Any = at_path(config, section) if section else config
            # The value each required key was given: the re-probed verdicts are reproducible from it.
            return config, [{**r, "satisfied_by": copy.deepcopy(node[r["key"]])} for r in found.values()]
        message = error_line(run.error)
        # The whole message: elasticity's names the sibling that lifts it after the first 200 characters.
        full = f"{type(run.error).__name__}: {run.error}"
        named = [k for k in _names(full, siblings) if tried.get(k, 0) < len(_candidates(ex, section, k))]
        if not named:
            return None  # refused for another reason (or no candidate value satisfies the key): not a requirement
        required = named[0]
        if required not in found:
            found[required] = {"key": required, "message": message, "source": _raised_at(run.error, ex)}
            # A refusal that also names top-level keys the base sets ("batch related parameters were found"):
            # the key is needed only beside them, so it is recorded with them and check asks for it only then.
            top = {r["key"] for r in ex.fields.values() if r["section"] == "" and not r["is_section"]}
            given = [k for k in _names(full, top) if k in base]
            if given:
                found[required]["with"] = given
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
        if alone.error is not None and required in _names(f"{type(alone.error).__name__}: {alone.error}", {required}):
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
        verdicts = _probe_on(ex, config, section, key, record)
        record["probes"] = verdicts
        record["requires"] = sorted(requires, key=lambda r: r["key"])
        auto = record.get("auto") or {}
        if auto.get("error") and _names(str(auto["error"]), {r["key"] for r in requires}):
            record["auto"] = _auto_on(ex, config, section, key)
        if record["reader"] == "dict":
            _retype(record, verdicts)
        given = ", ".join(f"{r['key']}" for r in record["requires"])
        notes.append(f"{path}: requires {given} (probed again with them given)")
        notes.extend(_siblings_on(ex, set_path(config, section, key, copy.deepcopy(trigger)), section, key,
                                  by_section.get(section, set())))
    return notes


def _siblings_on(ex: Extraction, switched_on: dict[str, Any], section: str, key: str,
                 keys: set[str]) -> list[str]:
    """Probe the section's other keys again with the feature on and its requirements met.

    DeepSpeed checks some keys only when the section is switched on (elasticity's ``model_parallel_size``
    and ``num_gpus_per_node`` must be >= 1); set alone on the neutral base, every value passed. A key whose
    verdicts change gets the new ones: what a user who turns the feature on is told.
    """
    notes = []
    for sibling in sorted(keys - {key}):
        path = f"{section}.{sibling}" if section else sibling
        record = ex.fields.get(path)
        if record is None or record["is_section"] or record.get("pattern") or record.get("requires"):
            continue
        verdicts = _probe_on(ex, switched_on, section, sibling, record)
        items = _item_probes(ex, switched_on, section, sibling, record)
        if items:
            record["item_probes"], record["switched_on"] = items, key
            refused = sorted(p for p, v in items.items() if not v.get("ok"))
            notes.append(f"{path}: one-item lists probed with {key} on: refuses "
                         f"{', '.join(f'[{p}]' for p in refused) or 'none'}")
        before = record.get("probes") or {}
        if {p: v.get("ok") for p, v in verdicts.items()} == {p: v.get("ok") for p, v in before.items()} or (
                not before and all(v.get("ok") for v in verdicts.values())):
            continue  # the same verdicts, or a key not probed before that refuses nothing: nothing learned
        # The default and the value that met a requirement are valid: where the probe standing for one is
        # refused while it passes (elasticity ``version`` 0.2 accepted, 1.5 not; ``micro_batch_sizes`` [2, 4]
        # accepted, [] not), these probes would misjudge valid values, so the first ones stand.
        known = [record.get("default"), _node(switched_on, section).get(sibling)]
        if any(v is not None and probe_id(v) in verdicts and not verdicts[probe_id(v)].get("ok") and ex.prober.run(
                set_path(switched_on, section, sibling, copy.deepcopy(v)), trace=False).error is None for v in known):
            notes.append(f"{path}: probed again with {key} on, but the probes misjudge a valid value: kept")
            continue
        record["probes"], record["switched_on"] = verdicts, key
        if record["reader"] == "dict" and before:  # a key first typed by the static witness keeps its types
            _retype(record, verdicts)
        refused = sorted(p for p, v in verdicts.items() if not v.get("ok"))
        notes.append(f"{path}: probed again with {key} on: refuses {', '.join(refused) or 'none'}")
    return notes


ITEM_PROBES: tuple[tuple[str, int], ...] = (("-1", -1), ("0", 0))
"""The items a list of integers is probed with, one at a time (elasticity ``micro_batch_sizes`` must hold
positive integers): ``[]`` stands for every list, so no fixed probe sees an item DeepSpeed refuses."""


def _item_probes(ex: Extraction, config: dict[str, Any], section: str, key: str,
                 record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """DeepSpeed's verdict on ``[-1]`` and ``[0]`` for a key whose valid value (its default, or the value that met
    a requirement) is a list of integers that DeepSpeed accepts, with ``[1]`` accepted as the control; else ``{}``."""
    known = _node(config, section).get(key, record.get("default"))
    if not (isinstance(known, list) and known and all(type(v) is int for v in known)):
        return {}
    if any(ex.prober.run(set_path(config, section, key, copy.deepcopy(v)), trace=False).error is not None
           for v in (known, [1])):
        return {}  # the control is refused: the items' verdicts would say nothing of the items
    verdicts: dict[str, dict[str, Any]] = {}
    for pid, item in ITEM_PROBES:
        run = ex.prober.run(set_path(config, section, key, [item]), trace=False)
        verdicts[pid] = {"ok": True} if run.error is None else {"ok": False, "error": error_line(run.error)}
    return verdicts


def _probe_on(ex: Extraction, config: dict[str, Any], section: str, key: str,
              record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every probe value of ``section.key`` set on ``config``: DeepSpeed's verdict on each, as stored."""
    cls = ex.model_classes.get(section) if record["reader"] == "pydantic" else None
    verdicts: dict[str, dict[str, Any]] = {}
    for pid, value in PROBES:
        run = ex.prober.run(set_path(config, section, key, copy.deepcopy(value)), trace=False)
        verdicts[pid] = (_stored(cls, key, record.get("python_name"), value) if run.error is None
                         else {"ok": False, "error": error_line(run.error)})
    return verdicts


def _retype(record: dict[str, Any], verdicts: dict[str, dict[str, Any]]) -> None:
    """A dict-read key's JSON types from new verdicts, its choices' types kept."""
    types = accepted_types(verdicts)
    if types and record["choices"]:
        types = sorted(set(types) | {json_type(c) for c in record["choices"]})
    record["json_types"] = types


def _node(config: dict[str, Any], section: str) -> dict[str, Any]:
    node = at_path(config, section, {}) if section else config
    return node if isinstance(node, dict) else {}


def satisfying_base(ex: Extraction, base: dict[str, Any], section: str, key: str, value: Any) -> dict[str, Any] | None:
    """A config on which ``key: value`` is accepted, built from ``base`` one refusal at a time; None if none is found.

    For confirming a choice list whose allowed value was refused for want of another key: a refusal naming a key
    of the section or of its parent (compression's pruning ``method`` set alone: ``KeyError: 'different_groups'``,
    a key of ``sparse_pruning``, the parent of ``shared_parameters``) gives that key the first candidate value
    DeepSpeed accepts. A refusal naming no such key is the value's own verdict: None.
    """
    def keys_of(where: str) -> set[str]:
        return {r["key"] for r in ex.fields.values() if r["section"] == where and not r.get("pattern")}

    scopes = {k: section for k in keys_of(section) - {key}}
    if section:
        parent, _, own = section.rpartition(".")
        scopes.update({k: parent for k in keys_of(parent) - {own} if k not in scopes})
    config = copy.deepcopy(base)
    tried: dict[str, int] = {}
    last: str | None = None
    for _ in range(MAX_STEPS):
        run = ex.prober.run(set_path(config, section, key, copy.deepcopy(value)), trace=False)
        if run.error is None:
            return config
        full = f"{type(run.error).__name__}: {run.error}"
        named = [k for k in _names(full, set(scopes)) if tried.get(k, 0) < len(_candidates(ex, scopes[k], k))]
        if not named and last is not None and tried[last] < len(_candidates(ex, scopes[last], last)):
            named = [last]  # the candidate just given broke the build (``different_groups: 1``): try the next
        if not named:
            return None
        required = last = named[0]
        candidates = _candidates(ex, scopes[required], required)
        config = set_path(config, scopes[required], required, copy.deepcopy(candidates[tried.get(required, 0)]))
        tried[required] = tried.get(required, 0) + 1
    return None
