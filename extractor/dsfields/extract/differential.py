"""The probe differential of issue 15: every stored probe verdict against a fresh ``DeepSpeedConfig``.

``python -m dsfields.extract.differential SNAPSHOT`` runs inside the runtime of the snapshot's
release (``bench/probe_differential.py V`` starts it there with :func:`releases.run_in_release`)
and prints one JSON object: fields and verdicts compared, mismatches (each ``[path, probe id,
stored verdict, DeepSpeed's error or null]``) and seconds. Keys read only under a condition are
left out (their probes start from the exploration config, not from ``{"train_batch_size": 1}``).
Exit status 0 only when nothing differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from dsfields.extract.discover import BASE_CONFIG, set_path


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


def differential(snapshot: dict[str, Any]) -> dict[str, Any]:
    from dsfields.extract.probes import PROBES

    build_deepspeed_config = _builder()

    started = time.perf_counter()
    values = dict(PROBES)
    fields = verdicts = 0
    mismatches: list[list[Any]] = []
    for path, record in sorted(snapshot["fields"].items()):
        probes = record.get("probes")
        if not probes or record.get("condition"):
            continue
        fields += 1
        for pid, stored in sorted(probes.items()):
            verdicts += 1
            error = build_deepspeed_config(set_path(BASE_CONFIG, record["section"], record["key"], values[pid]))
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
