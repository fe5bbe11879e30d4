"""Is `dsfields lookup` as quick as grep? Median wall times against the two things people do instead.

Runs, alternating within each round so that machine load hits all three alike:
  (a) dsfields lookup stage3_max_live_parameters   (console script if on PATH, else python -m dsfields)
  (b) grep -rn '"stage3_max_live_parameters"' <installed deepspeed package>
  (c) python -c "from deepspeed.runtime.zero.config import DeepSpeedZeroConfig; print(...model_fields)"
and prints the medians with the ratios lookup/grep (target <= 1.0) and python-c/lookup.

    PYTHONPATH=extractor python bench/lookup.py [--rounds N] [--skip-python]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import alternate

REPO = Path(__file__).resolve().parent.parent
QUERY = "stage3_max_live_parameters"
TARGET = 1.0
"""lookup may take at most this many times grep's wall time."""


def lookup_command() -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    # An installed dsfields has its bytecode compiled at install time; let the warm-up round write it
    # here too, or every timed run would recompile the package (~20 ms) and measure that instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    script = shutil.which("dsfields")
    if script:
        return [script, "lookup", QUERY], env
    # No console script (a source checkout): run the package from extractor/ like the docs say.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "extractor"), env.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "dsfields", "lookup", QUERY], env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (one warm-up round more)")
    parser.add_argument("--skip-python", action="store_true", help="leave out (c), which imports torch")
    opts = parser.parse_args()

    lookup, lookup_env = lookup_command()
    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "lookup": (lookup, lookup_env),
        "grep": (["grep", "-rn", f'"{QUERY}"', str(alternate.deepspeed_dir("bench/lookup.py"))], dict(os.environ)),
    }
    if not opts.skip_python:
        code = "from deepspeed.runtime.zero.config import DeepSpeedZeroConfig; print(DeepSpeedZeroConfig.model_fields)"
        commands["python -c"] = ([sys.executable, "-c", code], dict(os.environ))

    found = alternate.medians("bench/lookup.py", commands, opts.rounds, ok_codes=(0,))
    alternate.report(commands, found, "lookup", "grep", TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
