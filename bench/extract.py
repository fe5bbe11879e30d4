"""Extraction wall time as a ratio to a bare ``import deepspeed`` (baseline), alternating, in one run.

    PYTHONPATH=extractor python bench/extract.py [--rounds N]   (needs dsfields[extract]; target <= 1.5)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import alternate

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.5
"""A full extraction may take at most this many times a bare `import deepspeed`."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (one warm-up round more)")
    opts = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO / "extractor"))
    with tempfile.TemporaryDirectory() as out:
        commands: alternate.Commands = {
            "import": ([sys.executable, "-c", "import deepspeed"], env),
            "extract": ([sys.executable, "-m", "dsfields", "extract", "--quiet", "--out", out], env),
        }
        found = alternate.medians("bench/extract.py", commands, opts.rounds)
    alternate.report(commands, found, "extract", "import", TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
