"""Witness 4 of issue 15: value probes, DeepSpeed's verdict on a fixed list of values per leaf field.

Every leaf field is given each value of :data:`PROBES` and DeepSpeed's verdict is stored in the
record as ``probes: {probe id: {"ok": true, "as": value?} | {"ok": false, "error": first line}}``
(``as`` only where DeepSpeed stores something else than the JSON given, e.g. ``"1"`` → ``1``).

Every verdict is a full ``DeepSpeedConfig`` build with that one key set on a neutral base config
(:func:`probe_base`): a section model alone misses cross-section validators
(``bf16_master_weights_and_grads`` needs ZeRO), and keys probed together give joint verdicts
(``train_batch_size: 1.5`` with a micro batch of 1.5). ``tests/test_witnesses.py`` checks every
stored verdict against a fresh build on 0.19.8; ``bench/probe_differential.py`` does the same for an
older release in its own runtime. pydantic fields record what their model stores (``as``).

``json_types`` of a dict-read field is then what DeepSpeed accepted: the JSON types of the accepted
probes when some probe was rejected (a validator exists), ``[]`` (anything) when every probe was
accepted (the value is used unvalidated, later). pydantic fields keep their declared types.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsfields.extract.discover import BASE_CONFIG, _validation_error
from dsfields.extract.jsonvalue import to_json
from dsfields.model.dotted import set_path
from dsfields.model.jsontypes import json_type

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction

PROBES: tuple[tuple[str, Any], ...] = (
    ("-1", -1),
    ("0", 0),
    ("1", 1),
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


def _stored(cls: type | None, key: str, python_name: str | None, value: Any) -> dict[str, Any]:
    """An accepted probe: what the section model stores for it (``as``) where that is not the JSON given."""
    if cls is None or not python_name:
        return {"ok": True}
    try:
        instance = cls(**{key: copy.deepcopy(value)})
    except Exception:  # the model alone needs more (its siblings): the full config's verdict stands
        return {"ok": True}
    stored, _ = to_json(getattr(instance, python_name, None))
    if json.dumps(stored, sort_keys=True) != json.dumps(value, sort_keys=True):
        return {"ok": True, "as": stored}
    return {"ok": True}


def probe_base(ex: Extraction, record: dict[str, Any]) -> dict[str, Any]:
    """The config a field's probes start from: the neutral :data:`BASE_CONFIG`, or, for a key DeepSpeed
    reads only under a condition, the exploration config that satisfies it (else the key is never read)."""
    if record.get("condition"):
        base = getattr(ex, "bases", {}).get(record["path"])
        if base is not None:
            return base
    return BASE_CONFIG


def value_probes(ex: Extraction) -> int:
    """Fill ``probes`` (and, for dict readers, ``json_types``) of every leaf field; return DeepSpeedConfig runs made.

    Each probe is one full ``DeepSpeedConfig`` build with that one key set (from :func:`probe_base`):
    cross-section validators (``bf16.bf16_master_weights_and_grads`` needs ZeRO) and interacting keys
    (``train_batch_size`` with the micro batch) give the verdict a user gets for that key alone.
    A build costs well under a millisecond, so this is cheap next to ``import deepspeed``.
    """
    runs_before = ex.prober.runs
    for _, record in sorted(ex.fields.items()):
        if record["is_section"] or record.get("pattern") or "trace" not in record["witnesses"]:
            continue  # DeepSpeedConfig does not read it: its verdict says nothing (the launch trace will)
        section, key = record["section"], record["key"]
        cls = ex.model_classes.get(section) if record["reader"] == "pydantic" else None
        base = probe_base(ex, record)
        verdicts: dict[str, dict[str, Any]] = {}
        for pid, value in PROBES:
            run = ex.prober.run(set_path(base, section, key, copy.deepcopy(value)), trace=False)
            if run.error is not None:
                verdicts[pid] = {"ok": False, "error": error_line(run.error)}
            else:
                verdicts[pid] = _stored(cls, key, record.get("python_name"), value)
        record["probes"] = verdicts
        if record["reader"] == "dict":
            types = accepted_types(verdicts)
            if types and record["choices"]:  # the allowed values were accepted when the choices were confirmed
                types = sorted(set(types) | {json_type(c) for c in record["choices"]})
            record["json_types"] = types
    return ex.prober.runs - runs_before


def value_probes_beside(ex: Extraction) -> Callable[[], int]:
    """Start :func:`value_probes` in a forked child, so it runs on the other core while this process
    measures the parsed-state facts; return the function that waits for it, stores its verdicts in
    ``ex.fields`` and returns the runs made.

    The probes are independent ``DeepSpeedConfig`` builds and read nothing the later steps of
    :func:`dsfields.extract.build.extract` write, so the snapshot is the same byte for byte as when
    they run here (``tests/test_witnesses.py``). Where fork is unavailable or another thread is alive
    (the launch witness's driver), or the child fails, the probes run here instead.
    """
    from dsfields.launch.forked import Forked, ForkFailed, can_fork

    if not can_fork():
        return lambda: value_probes(ex)

    def probe() -> tuple[int, dict[str, Any]]:
        runs = value_probes(ex)
        return runs, {path: (record["probes"], record["json_types"]) for path, record in ex.fields.items()
                      if "probes" in record}

    child = Forked(probe)

    def finish() -> int:
        try:
            runs, found = child.result()
        except ForkFailed:
            return value_probes(ex)
        for path, (verdicts, types) in found.items():
            record = ex.fields[path]
            record["probes"] = verdicts
            if record["reader"] == "dict":  # value_probes sets json_types of dict readers only
                record["json_types"] = types
        ex.prober.runs += runs
        return runs

    return finish


def accepted_types(probes: dict[str, dict[str, Any]]) -> list[str]:
    """JSON types DeepSpeed accepted (``"auto"`` left out: it has its own record); ``[]``: it accepted all."""
    verdicts = [(pid, v) for pid, v in probes.items() if pid != '"auto"']
    if all(v.get("ok") for _, v in verdicts):
        return []
    values = dict(PROBES)
    types = {json_type(values[pid]) for pid, v in verdicts if v.get("ok")}
    if "number" in types:
        types.add("integer")
    return sorted(types)
