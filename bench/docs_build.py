"""How long does the docs site take to build? Full builds against a named baseline, and one release's rebuild.

Runs, alternating within each round so that machine load hits both alike:
  (a) baseline:  `dsfields docs build` of a git ref (default ``main``), unpacked with `git archive`
  (b) candidate: `dsfields docs build` of this checkout
each in its own copy of the checkout (fresh docs/ and site/, so every build renders every page), then
(c) `dsfields docs build --release VERSION` on the candidate's built site. Prints the wall times with the
1-minute load average before each run and the CPU time (user + sys of the build and every process it
waited for: the forked render, both mkdocs builds), the ratio candidate/baseline, and the issue's targets
(full build <= 60 s, one release <= 10 s). On a shared machine the load says how much the wall times
mean; the CPU time depends on it much less (60 s on two cores needs at most ~110 s of CPU).

    PYTHONPATH=extractor python bench/docs_build.py [--baseline main] [--rounds 1] [--release 0.14.4]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FULL_TARGET, RELEASE_TARGET = 60.0, 10.0


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").is_file() else "?"


def checkout(ref: str | None, into: Path) -> Path:
    """A copy of the checkout (``ref``'s tree, or the working tree) without generated pages or a site."""
    into.mkdir(parents=True)
    if ref:
        archive = into / "tree.tar"
        subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), ref], check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
        archive.unlink()
        return into
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, stdout=subprocess.PIPE).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # tracked and untracked files as they are in the working tree (not deleted ones)
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(root: Path, *extra: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `dsfields docs build`."""
    env = {**os.environ, "PYTHONPATH": str(root / "extractor"), "NO_MKDOCS_2_WARNING": "1"}
    started, cpu = time.perf_counter(), cpu_of_children()
    proc = subprocess.run([sys.executable, "-m", "dsfields", "docs", "build", *extra], cwd=root, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode:
        sys.exit(f"bench/docs_build.py: build in {root} exited {proc.returncode}:\n{proc.stdout.decode()[-3000:]}")
    return elapsed, cpu_of_children() - cpu


def fresh(root: Path) -> None:
    """Forget the previous build: every page is rendered and built again (the page cache too, else a
    second round would take its pages from the first round's cache)."""
    shutil.rmtree(root / "site", ignore_errors=True)
    shutil.rmtree(root / ".cache", ignore_errors=True)
    for folder in (root / "docs").iterdir():
        if folder.is_dir() and folder.name != "assets":
            shutil.rmtree(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git ref of the baseline (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=1, help="full builds of each (default: %(default)s)")
    parser.add_argument("--release", default="0.14.4", help="release to rebuild alone (default: %(default)s)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dsfields-bench-docs-") as tmp:
        roots = {"baseline": checkout(opts.baseline, Path(tmp) / "baseline"),
                 "candidate": checkout(None, Path(tmp) / "candidate")}
        times: dict[str, list[float]] = {name: [] for name in roots}
        cpus: dict[str, list[float]] = {name: [] for name in roots}
        for round_number in range(1, opts.rounds + 1):
            for name, root in roots.items():
                fresh(root)
                before = load()
                wall, cpu = build(root)
                times[name].append(wall)
                cpus[name].append(cpu)
                print(f"round {round_number} {name:<9} full build {wall:6.1f} s, CPU {cpu:6.1f} s   (load {before})",
                      flush=True)
        before = load()
        one, one_cpu = build(roots["candidate"], "--release", opts.release)
        print(f"candidate --release {opts.release}  {one:6.1f} s, CPU {one_cpu:6.1f} s   (load {before})")
    base, cand = (statistics.median(times[name]) for name in ("baseline", "candidate"))
    base_cpu, cand_cpu = (statistics.median(cpus[name]) for name in ("baseline", "candidate"))
    print(f"full build: baseline ({opts.baseline}) {base:.1f} s (CPU {base_cpu:.1f} s), candidate {cand:.1f} s "
          f"(CPU {cand_cpu:.1f} s), candidate / baseline {cand / base:.2f}x wall, {cand_cpu / base_cpu:.2f}x CPU")
    print(f"targets: full build <= {FULL_TARGET:.0f} s: {'met' if cand <= FULL_TARGET else 'NOT met'}; "
          f"one release <= {RELEASE_TARGET:.0f} s: {'met' if one <= RELEASE_TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
