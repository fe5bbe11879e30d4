"""Shared by the bench scripts: run commands alternating within rounds and report median ratios.

Alternating (rather than timing one command N times, then the next) makes machine load hit every
command alike, which matters on a shared 2-core machine. The first round only warms caches.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

Commands = dict[str, tuple[list[str], dict[str, str]]]


def deepspeed_dir(script: str) -> Path:
    """The installed ``deepspeed`` package directory, located without importing it (no torch)."""
    spec = importlib.util.find_spec("deepspeed")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{script}: DeepSpeed is not installed in this interpreter; grep needs its source")
    return Path(next(iter(spec.submodule_search_locations)))


def timed(script: str, command: list[str], env: dict[str, str], ok_codes: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode not in ok_codes:
        sys.exit(f"{script}: {' '.join(command)} exited {proc.returncode}:\n{proc.stderr.decode()}")
    return elapsed


def medians(script: str, commands: Commands, rounds: int, ok_codes: tuple[int, ...] = (0,)) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(rounds + 1):
        for name, (command, env) in commands.items():
            elapsed = timed(script, command, env, ok_codes)
            if round_number:  # round 0 warms the page cache and writes bytecode
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def report(commands: Commands, found: dict[str, float], subject: str, baseline: str, target: float) -> None:
    print("median wall time over the timed rounds:")
    for name, (command, _) in commands.items():
        print(f"  {name:<10} {found[name] * 1000:8.1f} ms   {' '.join(command)[:90]}")
    ratio = found[subject] / found[baseline]
    verdict = "met" if ratio <= target else "NOT met"
    print(f"{subject} / {baseline:<12} {ratio:6.2f}x   (target <= {target}x: {verdict})")
    for name in commands:
        if name not in (subject, baseline):
            print(f"{name} / {subject:<12} {found[name] / found[subject]:6.2f}x")
