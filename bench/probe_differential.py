"""The probe differential for older releases, each in its own release runtime (issue 15).

    PYTHONPATH=extractor python bench/probe_differential.py 0.14.4 0.10.3 [--root generated]

For each release, ``python -m dsfields.extract.differential`` runs in the runtime ``dsfields
snapshot`` uses (:mod:`dsfields.extract.releases`) and rebuilds ``DeepSpeedConfig`` for every
stored probe verdict of ``<root>/<V>/fields.json``. Prints per release: fields, verdicts,
mismatches (listed), seconds. Exit 0 only when no verdict differs. 0.19.8 runs in CI as
``tests/test_witnesses.py::test_probe_verdicts_equal_deepspeedconfig_on_0_19_8``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    from dsfields.extract import releases

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", metavar="VERSION")
    parser.add_argument("--root", type=Path, default=REPO / "generated", help="snapshot tree (default: generated/)")
    opts = parser.parse_args()
    failed = 0
    for version in opts.versions:
        snapshot = (opts.root / version / "fields.json").resolve()
        done = releases.run_in_release(version, ["dsfields.extract.differential", str(snapshot)], timeout=1800)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            print(f"{version}: failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
            failed += 1
            continue
        result = json.loads(lines[-1])
        print(f"{version}: {result['fields']} fields, {result['verdicts']} verdicts, "
              f"{len(result['mismatches'])} mismatches ({result['seconds']} s)")
        for mismatch in result["mismatches"]:
            print(f"  {mismatch}")
        failed += bool(result["mismatches"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
