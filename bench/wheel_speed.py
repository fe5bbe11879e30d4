"""Is the installed wheel fast on every input? Three figures, each against a named baseline (issue 37).

Builds the wheel of a source tree (``python -m build --wheel`` into a temp folder), installs it with ``pip`` into
a fresh plain virtualenv (no torch, no DeepSpeed: what a user gets) and times its console script:

  1. ``dsfields check TEN`` (a config with ten unknown keys)  /  ``grep -rn '"stage3_max_live_parameters"' DS``
     where DS is the installed DeepSpeed package folder: median of the per-round ratios, target <= 1.0x;
  2. ``dsfields lookup stage3_max_live_parameters``  /  the same grep: target <= 0.7x;
  3. ``dsfields check`` of every ``*.json`` in the shared real-world corpus in ONE call: median CPU seconds
     (user + system of the child, from ``resource.getrusage(RUSAGE_CHILDREN)``), target <= 1.5 s.

Each round runs the subject and its baseline back to back (alternating which goes first), so that the load of
a shared machine hits both alike; one warm-up round is not counted.

    python bench/wheel_speed.py [--source DIR] [--rounds 11] [--corpus DIR] [--keep DIR]

``--source`` names the tree whose wheel is measured (default: this checkout); measure a baseline commit with a
``git worktree add`` of it. ``--keep DIR`` builds into DIR and reuses an install found there.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import alternate

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "realworld-configs"
QUERY = "stage3_max_live_parameters"
TARGETS = {"check, ten unknown keys": 1.0, "lookup": 0.7}
CPU_TARGET = 1.5
"""CPU seconds for checking the whole corpus in one call."""

# Ten misspelt keys, at the top level and in strict (pydantic) and dict-read sections: each one an unknown key
# whose history (removed? renamed? in another release?) is asked.
TEN_UNKNOWN = {
    "train_micro_batch_size_per_gpu": 1,
    "trian_batch_size": 8,
    "gradient_acumulation_steps": 2,
    "zero_optimization": {"stage": 2, "overlap_comms": True, "reduce_bucket": 1000, "contigous_gradients": True,
                          "offload_optimiser": {"device": "cpu"}},
    "fp16": {"enable": True, "loss_scale_windw": 100},
    "optimizer": {"type": "AdamW", "params": {"lr": 0.001}},
    "wall_clock_breakdwn": True,
    "steps_per_prnt": 10,
}


def install(source: Path, work: Path) -> Path:
    """The ``dsfields`` console script of ``source``'s wheel installed in a fresh virtualenv under ``work``."""
    script = work / "venv" / "bin" / "dsfields"
    if script.exists():
        return script
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "build", "-q", "--wheel", "--outdir", str(dist), str(source)],
                   check=True, stdout=subprocess.DEVNULL)
    wheel = next(dist.glob("dsfields-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], check=True)
    return script


def run(command: list[str], ok_codes: tuple[int, ...], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``command``; exits on an unexpected code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok_codes:
        sys.exit(f"bench/wheel_speed.py: {' '.join(command)} exited {proc.returncode}:\n{proc.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def paired(subject: list[str], baseline: list[str], rounds: int, ok: tuple[int, ...], cwd: Path) -> dict[str, float]:
    """Median wall times of both, the median of the per-round wall ratios subject/baseline, and the same of the CPU
    times (user + system: what the command itself costs, whatever the load of a shared machine adds to its wall)."""
    wall: dict[str, list[float]] = {"subject": [], "baseline": [], "ratio": []}
    cpu: dict[str, list[float]] = {"subject": [], "baseline": [], "ratio": []}
    for number in range(rounds + 1):
        order = (("subject", subject), ("baseline", baseline))[::1 if number % 2 else -1]  # who goes first alternates
        times = {name: run(cmd, ok if name == "subject" else (0,), cwd) for name, cmd in order}
        if number:  # round 0 warms the page cache
            for index, figures in ((0, wall), (1, cpu)):
                figures["subject"].append(times["subject"][index])
                figures["baseline"].append(times["baseline"][index])
                figures["ratio"].append(times["subject"][index] / max(times["baseline"][index], 1e-3))
    found = {key: statistics.median(values) for key, values in wall.items()}
    found |= {f"cpu {key}": statistics.median(values) for key, values in cpu.items()}
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=REPO, help="the source tree whose wheel is measured")
    parser.add_argument("--rounds", type=int, default=11, help="timed rounds (one warm-up round more)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of real-world ds_config.json files")
    parser.add_argument("--keep", type=Path, help="build and install here, and reuse an install found here")
    opts = parser.parse_args()
    configs = sorted(str(p) for p in opts.corpus.glob("*.json") if p.name != "index.json")  # its listing
    if not configs:
        sys.exit(f"bench/wheel_speed.py: no *.json in {opts.corpus}")
    grep = ["grep", "-rn", f'"{QUERY}"', str(alternate.deepspeed_dir("bench/wheel_speed.py"))]

    with tempfile.TemporaryDirectory() as tmp:
        work = opts.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        script = install(opts.source.resolve(), work)
        ten = Path(tmp) / "ten_unknown.json"
        ten.write_text(json.dumps(TEN_UNKNOWN, indent=2), encoding="utf-8")
        # Outside any checkout, so the installed package reads its own compressed snapshots.
        cwd = Path(tmp)
        found = {
            "check, ten unknown keys": paired([str(script), "check", str(ten)], grep, opts.rounds, (1,), cwd),
            "lookup": paired([str(script), "lookup", QUERY], grep, opts.rounds, (0,), cwd),
        }
        run([str(script), "check", *configs], (0, 1, 2), cwd)  # warm-up
        cpu = statistics.median(run([str(script), "check", *configs], (0, 1, 2), cwd)[1] for _ in range(opts.rounds))

    print(f"wheel of {opts.source.resolve()} installed in a fresh virtualenv: {script}")
    print(f"baseline: {' '.join(grep)}")
    print(f"medians over {opts.rounds} paired rounds:")
    for name, figures in found.items():
        target = TARGETS[name]
        verdict = "met" if figures["ratio"] <= target else "NOT met"
        print(f"  {name:<24} {figures['subject'] * 1000:7.1f} ms  grep {figures['baseline'] * 1000:7.1f} ms  "
              f"ratio {figures['ratio']:.2f}x  (target <= {target}x: {verdict})")
        print(f"  {'':<24} CPU {figures['cpu subject'] * 1000:5.1f} ms  grep {figures['cpu baseline'] * 1000:7.1f} ms"
              f"  ratio {figures['cpu ratio']:.2f}x  (user + system; the 1 ms floor of a getrusage tick)")
    verdict = "met" if cpu <= CPU_TARGET else "NOT met"
    print(f"  check of {len(configs)} configs in one call: {cpu:.2f} s CPU (target <= {CPU_TARGET} s: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
