"""``python -m dsfields.extract.static DIR [--json]``: inspect the static witness of one release.

Prints counts, paths per top-level section, choices and every unplaced read, so a new release's
gaps are visible without building a snapshot.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from . import static_report
from .compare import MODEL, compare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.static", description=__doc__)
    parser.add_argument("package_dir", type=Path, help="the deepspeed/ directory of a release")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--snapshot", type=Path, help="a fields.json to compare the paths with")
    args = parser.parse_args(argv)
    if not args.package_dir.is_dir():
        parser.error(f"not a directory: {args.package_dir}")
    report = static_report(args.package_dir)
    if args.json:
        print(report.to_json())
        return 0
    print(f"{report.package} {report.version or '?'}: scanned in {report.seconds:.2f} s")
    for key, value in report.counts().items():
        print(f"  {key}: {value}")
    per_section = Counter(p.split(".")[0] for p in report.paths())
    print("paths per top-level key:")
    for top, n in sorted(per_section.items()):
        print(f"  {top}: {n}")
    print("choices:")
    for c in report.choices:
        norm = f" ({c.normalized})" if c.normalized else ""
        print(f"  {c.path} {c.how}{norm} {list(c.values)}  {c.file}:{c.line}")
    print(f"unplaced ({len(report.unplaced)}):")
    for u in report.unplaced:
        print(f"  {u.file}:{u.line} {u.function}: {u.expr}  [{u.reason}]")
    if args.snapshot:
        cmp = compare(report, json.loads(args.snapshot.read_text()))
        print(f"compared with {args.snapshot}:")
        for key, value in cmp.counts().items():
            print(f"  {key}: {value}")
        print("only static:")
        for path in sorted(cmp.only_static):
            print(f"  {path}")
        print("only snapshot, not under a model:")
        for path, why in sorted(cmp.only_snapshot.items()):
            if why != MODEL:
                print(f"  {path}  [{why}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
