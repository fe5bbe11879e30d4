"""The probe differential of issue 15: every stored probe verdict against a fresh ``DeepSpeedConfig``.

``python -m dsfields.extract.differential SNAPSHOT`` runs inside the runtime of the snapshot's
release (``bench/probe_differential.py V`` starts it there with :func:`releases.run_in_release`)
and prints one JSON object: fields and verdicts compared, mismatches (each ``[path, probe id,
stored verdict, DeepSpeed's error or null]``) and seconds. Keys read only under a condition are
left out (their probes start from the exploration config, not from ``{"train_batch_size": 1}``). A key
re-probed for a requirement (issue 25) is judged on the config it was probed on: its required keys given
their ``satisfied_by`` values, and, for a key probed again with its section's switch on, that switch on too
(as ``tests/test_witnesses.py`` does for 0.19.8). Exit status 0 only when nothing differs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from dsfields.extract.discover import BASE_CONFIG
from dsfields.model.dotted import set_path


def _builder() -> Any:
    """``DeepSpeedConfig`` with output silenced; DS_ACCELERATOR left as the release runtime has it
    (0.9.3 to 0.14.0 cannot use ``cpu`` without intel_extension_for_pytorch), as extraction does."""
    import contextlib
    import copy
    import io
    import logging

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from deepspeed.runtime.config import DeepSpeedConfig
    logging.getLogger("DeepSpeed").setLevel(logging.CRITICAL)

    def build(data: dict[str, Any]) -> BaseException | None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                DeepSpeedConfig(copy.deepcopy(data))
            except Exception as exc:  # every DeepSpeed complaint is a verdict
                return exc
        return None

    return build


def _probed_on(snapshot: dict[str, Any], record: dict[str, Any], switched: dict[str, str]) -> dict[str, Any]:
    """The config ``record``'s probes were taken on: the base, with its section's switch on where it was probed
    again that way, and the keys it (or that switch) requires given the values that met them."""
    base = BASE_CONFIG
    section = record["section"]
    switch_key = record.get("switched_on") or switched.get(record["path"])
    switch = snapshot["fields"].get(f"{section}.{switch_key}" if section else str(switch_key)) if switch_key else None
    if switch is not None:
        base = set_path(base, section, switch["key"], True)
    for requirement in (switch or record).get("requires") or []:
        if requirement.get("key") != record["key"] and "satisfied_by" in requirement:
            base = set_path(base, section, requirement["key"], requirement["satisfied_by"])
    return base


def differential(snapshot: dict[str, Any]) -> dict[str, Any]:
    from dsfields.extract.probes import PROBES

    build_deepspeed_config = _builder()

    started = time.perf_counter()
    values = dict(PROBES)
    fields = verdicts = 0
    mismatches: list[list[Any]] = []
    notes = "\n".join(snapshot.get("coverage", {}).get("witnesses", {}).get("requirements", []))
    switched = dict(re.findall(r"^(\S+): probed again with (\S+) on:", notes, re.M))
    for path, record in sorted(snapshot["fields"].items()):
        probes = record.get("probes")
        if not probes or record.get("condition"):
            continue
        fields += 1
        base = _probed_on(snapshot, record, switched)
        for pid, stored in sorted(probes.items()):
            verdicts += 1
            error = build_deepspeed_config(set_path(base, record["section"], record["key"], values[pid]))
            if (error is None) != bool(stored.get("ok")):
                why = None if error is None else f"{type(error).__name__}: {error}"[:200]
                mismatches.append([path, pid, stored, why])
    return {"deepspeed_version": snapshot["deepspeed_version"], "fields": fields, "verdicts": verdicts,
            "mismatches": mismatches, "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.differential", description=__doc__)
    parser.add_argument("snapshot", type=Path, help="generated/<version>/fields.json of the release this runs")
    args = parser.parse_args(argv)
    result = differential(json.loads(args.snapshot.read_text(encoding="utf-8")))
    print(json.dumps(result, sort_keys=True))
    return 0 if not result["mismatches"] else 1


if __name__ == "__main__":
    sys.exit(main())
