"""Is `dsfields lookup` as quick as grep? Median wall times against the two things people do instead.

Runs, alternating within each round so that machine load hits all three alike:
  (a) dsfields lookup stage3_max_live_parameters   (console script if on PATH, else python -m dsfields)
  (b) grep -rn '"stage3_max_live_parameters"' <installed deepspeed package>
  (c) python -c "from deepspeed.runtime.zero.config import DeepSpeedZeroConfig; print(...model_fields)"
and prints the medians with the ratios lookup/grep (target <= 1.5) and python-c/lookup.

    PYTHONPATH=extractor python bench/lookup.py [--rounds N] [--skip-python]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUERY = "stage3_max_live_parameters"
TARGET = 1.5
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


def deepspeed_dir() -> Path:
    # find_spec locates the package without executing it (importing it would import torch).
    spec = importlib.util.find_spec("deepspeed")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench/lookup.py: DeepSpeed is not installed in this interpreter; grep needs its source")
    return Path(next(iter(spec.submodule_search_locations)))


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"bench/lookup.py: {' '.join(command)} exited {proc.returncode}:\n{proc.stderr.decode()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (one warm-up round more)")
    parser.add_argument("--skip-python", action="store_true", help="leave out (c), which imports torch")
    opts = parser.parse_args()

    lookup, lookup_env = lookup_command()
    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "lookup": (lookup, lookup_env),
        "grep": (["grep", "-rn", f'"{QUERY}"', str(deepspeed_dir())], dict(os.environ)),
    }
    if not opts.skip_python:
        code = "from deepspeed.runtime.zero.config import DeepSpeedZeroConfig; print(DeepSpeedZeroConfig.model_fields)"
        commands["python -c"] = ([sys.executable, "-c", code], dict(os.environ))

    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(opts.rounds + 1):
        for name, (command, env) in commands.items():
            elapsed = timed(command, env)
            if round_number:  # the first round only warms the page cache
                times[name].append(elapsed)

    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{opts.rounds} rounds, median wall time:")
    for name, (command, _) in commands.items():
        print(f"  {name:<10} {medians[name] * 1000:8.1f} ms   {' '.join(command)[:90]}")
    ratio = medians["lookup"] / medians["grep"]
    verdict = "met" if ratio <= TARGET else "NOT met"
    print(f"lookup / grep      {ratio:6.2f}x   (target <= {TARGET}x: {verdict})")
    if "python -c" in medians:
        print(f"python-c / lookup  {medians['python -c'] / medians['lookup']:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
