"""Extraction wall time as a ratio to a bare ``import deepspeed`` (baseline), alternating, in one run.

Usage: python bench/extract.py [ROUNDS]   (needs dsfields[extract]; target ratio <= 1.5)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO / "extractor"), DS_ACCELERATOR="cpu")
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    baseline, extract = [], []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(rounds):
            baseline.append(timed([sys.executable, "-c", "import deepspeed"]))
            extract.append(timed([sys.executable, "-m", "dsfields", "extract", "--quiet", "--out", out]))
    b, e = statistics.median(baseline), statistics.median(extract)
    print(f"baseline  import deepspeed          median {b * 1000:7.0f} ms  ({rounds} rounds)")
    print(f"dsfields  extract (full snapshot)   median {e * 1000:7.0f} ms")
    print(f"ratio extract / import deepspeed = {e / b:.2f}  (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
