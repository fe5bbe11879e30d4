"""Witness 4 of issue 15: value probes, DeepSpeed's verdict on a fixed list of values per leaf field.

Every leaf field is given each value of :data:`PROBES` and DeepSpeed's verdict is stored in the
record as ``probes: {probe id: {"ok": true, "as": value?} | {"ok": false, "error": first line}}``
(``as`` only where DeepSpeed stores something else than the JSON given, e.g. ``"1"`` → ``1``).

* pydantic fields are validated by their section model directly (``Model(**{key: value})``), which
  gives the same verdict as a full ``DeepSpeedConfig`` (checked by ``tests/test_witnesses.py`` on
  0.19.8) in a fraction of the time;
* dict-read fields need the full ``DeepSpeedConfig`` (the reader is code): all keys of a section get
  the same probe at once and only a rejected batch is bisected, so a section costs one run per probe
  when DeepSpeed accepts everything.

``json_types`` of a dict-read field is then what DeepSpeed accepted: the JSON types of the accepted
probes when some probe was rejected (a validator exists), ``[]`` (anything) when every probe was
accepted (the value is used unvalidated, later). pydantic fields keep their declared types.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from dsfields.extract.discover import BASE_CONFIG, _validation_error, set_path
from dsfields.extract.jsonvalue import to_json

if TYPE_CHECKING:
    from dsfields.extract.build import Extraction

PROBES: tuple[tuple[str, Any], ...] = (
    ("-1", -1),
    ("0", 0),
    ("true", True),
    ('"1"', "1"),
    ('"false"', "false"),
    ("1.5", 1.5),
    ("null", None),
    ("[]", []),
    ("{}", {}),
    ('"auto"', "auto"),
)
"""The fixed probe list: id (the value as JSON) → value. Documented in docs/snapshot-format.md."""

PROBE_IDS = tuple(pid for pid, _ in PROBES)
_ERROR_LEN = 200


def json_type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def error_line(exc: BaseException) -> str:
    """One line: pydantic's first error (location and message), else the exception's first line."""
    error = _validation_error(exc)
    if error is not None:
        try:
            first = error.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            text = f"{loc}: {first.get('msg')}" if loc else str(first.get("msg"))
            return f"ValidationError: {text}"[:_ERROR_LEN]
        except Exception:
            pass
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return (f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__)[:_ERROR_LEN]


def _model_verdict(cls: type, key: str, python_name: str, value: Any) -> dict[str, Any]:
    try:
        instance = cls(**{key: copy.deepcopy(value)})
    except Exception as exc:  # pydantic errors, and validators raising anything
        return {"ok": False, "error": error_line(exc)}
    stored, _ = to_json(getattr(instance, python_name, None))
    if json.dumps(stored, sort_keys=True) != json.dumps(value, sort_keys=True):
        return {"ok": True, "as": stored}
    return {"ok": True}


def _model_works_empty(cls: type) -> bool:
    try:
        cls()
    except Exception:
        return False
    return True


def value_probes(ex: Extraction) -> int:
    """Fill ``probes`` (and, for dict readers, ``json_types``) of every leaf field; return DeepSpeedConfig runs made."""
    runs_before = ex.prober.runs
    dict_groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    bases: dict[str, dict[str, Any]] = {}
    empty_ok: dict[type, bool] = {}
    for path, record in sorted(ex.fields.items()):
        if record["is_section"] or record.get("pattern") or "trace" not in record["witnesses"]:
            continue  # DeepSpeedConfig does not read it: its verdict says nothing (the launch trace will)
        section = record["section"]
        cls = ex.model_classes.get(section)
        if record["reader"] == "pydantic" and cls is not None:
            if cls not in empty_ok:
                empty_ok[cls] = _model_works_empty(cls)
            if empty_ok[cls]:
                record["probes"] = {pid: _model_verdict(cls, record["key"], record["python_name"], v)
                                    for pid, v in PROBES}
                continue
        base = getattr(ex, "bases", {}).get(path)
        if base is None:
            base = _with_section(BASE_CONFIG, section)
        key = json.dumps(base, sort_keys=True, default=repr)
        bases[key] = base
        dict_groups.setdefault((key, section), []).append(record)
    for (key, section), records in sorted(dict_groups.items(), key=lambda kv: kv[0]):
        base = bases[key]
        verdicts: dict[str, dict[str, Any]] = {r["path"]: {} for r in records}
        for pid, value in PROBES:
            _probe_group(ex, base, section, records, pid, value, verdicts)
        for record in records:
            record["probes"] = {pid: verdicts[record["path"]][pid] for pid in PROBE_IDS}
            if record["reader"] == "dict":
                types = accepted_types(record["probes"])
                if types and record["choices"]:  # the allowed values were accepted when the choices were confirmed
                    types = sorted(set(types) | {json_type_of(c) for c in record["choices"]})
                record["json_types"] = types
    return ex.prober.runs - runs_before


def accepted_types(probes: dict[str, dict[str, Any]]) -> list[str]:
    """JSON types DeepSpeed accepted (``"auto"`` left out: it has its own record); ``[]``: it accepted all."""
    verdicts = [(pid, v) for pid, v in probes.items() if pid != '"auto"']
    if all(v.get("ok") for _, v in verdicts):
        return []
    values = dict(PROBES)
    types = {json_type_of(values[pid]) for pid, v in verdicts if v.get("ok")}
    if "number" in types:
        types.add("integer")
    return sorted(types)


def _with_section(config: dict[str, Any], section: str) -> dict[str, Any]:
    if not section:
        return copy.deepcopy(config)
    parent, _, last = section.rpartition(".")
    node: Any = config
    for part in section.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return copy.deepcopy(config) if isinstance(node, dict) else set_path(config, parent, last, {})


def _probe_group(ex: Extraction, base: dict[str, Any], section: str, records: list[dict[str, Any]], pid: str,
                 value: Any, verdicts: dict[str, dict[str, Any]]) -> None:
    """All keys at once; on a rejection the key read last before it is tried alone (usually the culprit)."""
    from dsfields.extract.trace import join

    pending = list(records)
    while pending:
        config = copy.deepcopy(base)
        for record in pending:
            config = set_path(config, section, record["key"], copy.deepcopy(value))
        run = ex.prober.run(config, trace=True)
        if run.error is None:
            for record in pending:
                verdicts[record["path"]][pid] = {"ok": True}
            return
        by_path = {r["path"]: r for r in pending}
        culprit = next((by_path[p] for e in reversed(run.recorder.events)
                        if (p := join(e.section, e.key)) in by_path), None)
        if culprit is None:
            break
        alone = ex.prober.run(set_path(base, section, culprit["key"], copy.deepcopy(value)), trace=False)
        if alone.error is None:
            break
        verdicts[culprit["path"]][pid] = {"ok": False, "error": error_line(alone.error)}
        pending.remove(culprit)
    if pending:
        _bisect(ex, base, section, pending, pid, value, verdicts)


def _bisect(ex: Extraction, base: dict[str, Any], section: str, records: list[dict[str, Any]], pid: str,
            value: Any, verdicts: dict[str, dict[str, Any]]) -> None:
    config = copy.deepcopy(base)
    for record in records:
        config = set_path(config, section, record["key"], copy.deepcopy(value))
    run = ex.prober.run(config, trace=False)
    if run.error is None:
        for record in records:
            verdicts[record["path"]][pid] = {"ok": True}
        return
    if len(records) == 1:
        verdicts[records[0]["path"]][pid] = {"ok": False, "error": error_line(run.error)}
        return
    half = len(records) // 2
    _bisect(ex, base, section, records[:half], pid, value, verdicts)
    _bisect(ex, base, section, records[half:], pid, value, verdicts)
