"""Keys every entry of a user-named group must give: compression ``different_groups.<name>.params.bits``.

DeepSpeed reads each entry of a group the user names (``different_groups: {"wq1": {...}}``) in a loop, and
asserts some keys present (``bits must be specified for activation quantization group wq1``) or indexes them
unguarded (``KeyError: 'params'``). No value probe sees that: the snapshot's path is a pattern
(``different_groups.*.params.bits``), never set alone. Here each pattern section ending in ``*`` is given one
entry, named :data:`GROUP`, built one refusal at a time: a refusal naming a key below the entry gives that key
the first candidate value DeepSpeed accepts (an object first for a key that is a section), until the build
passes. Each key met on the way is then taken out of the passing entry again; where DeepSpeed refuses that,
naming the key, it is recorded on the key's record as ``required_in_group: {message, source}``: DeepSpeed's
first line and the line that raised it. ``check`` reports an entry that lacks it as one error on the key.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsfields.extract.probes import BASE_CONFIG, error_line
from dsfields.extract.requirements import CANDIDATES, MAX_STEPS, _names, _raised_at
from dsfields.model.dotted import put_path, set_path, without_path

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction

GROUP = "dsfields_group"
"""The name the probed entry is given (a name no DeepSpeed key has)."""


def keys_below(ex: Extraction, root: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Key name -> (its section relative to the entry, its record), for the keys below the pattern ``root``
    (the shallowest where a name repeats); keys below a second ``*`` are left out."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    below = [r for p, r in ex.fields.items() if p.startswith(root + ".") and p.count("*") == root.count("*")]
    for record in sorted(below, key=lambda r: (r["path"].count("."), r["path"])):
        relative = record["section"][len(root):].lstrip(".")
        out.setdefault(record["key"], (relative, record))
    return out


def _candidates(record: dict[str, Any]) -> list[Any]:
    default = record.get("default")
    first: list[Any] = [{}] if record.get("is_section") else []
    if default not in (None, "", [], {}) and not record.get("is_section"):
        first.append(default)
    return first + [c for c in CANDIDATES if c not in first]


def _entry_config(base: dict[str, Any], root: str, entry: dict[str, Any]) -> dict[str, Any]:
    parent = root.rpartition(".")[0]
    section, _, key = parent.rpartition(".")
    return set_path(base, section, key, {GROUP: copy.deepcopy(entry)})


def satisfy(ex: Extraction, build: Callable[[dict[str, Any]], dict[str, Any]],
            keys: dict[str, tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]] | None:
    """An entry (an object ``build`` places in a config) DeepSpeed accepts, and the keys the refusals named on the
    way; None if none is found."""
    entry: dict[str, Any] = {}
    tried: dict[str, int] = {}
    met: dict[str, dict[str, Any]] = {}
    last: str | None = None
    for _ in range(MAX_STEPS):
        run = ex.prober.run(build(entry), trace=False)
        if run.error is None:
            return entry, met
        full = f"{type(run.error).__name__}: {run.error}"
        named = [k for k in _names(full, set(keys)) if tried.get(k, 0) < len(_candidates(keys[k][1]))]
        if not named and last is not None and tried[last] < len(_candidates(keys[last][1])):
            named = [last]  # the candidate just given broke the build (``params: 1``): try the next
        if not named:
            return None
        key = last = named[0]
        if key not in met:
            met[key] = {"message": error_line(run.error), "source": _raised_at(run.error, ex)}
        relative, record = keys[key]
        entry = put_path(entry, relative, key, copy.deepcopy(_candidates(record)[tried.get(key, 0)]))
        tried[key] = tried.get(key, 0) + 1
    return None


def learn_group_requirements(ex: Extraction) -> list[str]:
    """Record ``required_in_group`` on the keys each entry of a user-named group must give; one note per key."""
    notes: list[str] = []
    roots = sorted(p for p in ex.sections if p.rpartition(".")[2] == "*" and p.count("*") == 1)
    for root in roots:
        keys = keys_below(ex, root)
        if not keys:
            continue
        satisfied = satisfy(ex, lambda entry, root=root: _entry_config(BASE_CONFIG, root, entry), keys)
        if satisfied is None:
            notes.append(f"{root}: no entry DeepSpeed accepts was found")
            continue
        entry, met = satisfied
        for key, first in sorted(met.items()):
            relative, record = keys[key]
            run = ex.prober.run(_entry_config(BASE_CONFIG, root, without_path(entry, relative, key)), trace=False)
            if run.error is None or key not in _names(f"{type(run.error).__name__}: {run.error}", {key}):
                continue  # needed only beside another candidate value, not by every entry
            record["required_in_group"] = {"message": error_line(run.error).replace(GROUP, "<name>"),
                                           "source": _raised_at(run.error, ex) or first["source"]}
            where = record["required_in_group"]["source"] or {}
            notes.append(f"{record['path']}: every entry must give it ({where.get('file')}:{where.get('line')})")
    return notes
