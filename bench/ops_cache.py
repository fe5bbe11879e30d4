"""ccache versus quickcxx: a cold and a warm ``dsfields snapshot --force --launch`` of releases, both ways.

Issue #22 asks whether the well-kept tool (ccache) can replace the hand-written compiler cache
(``extract/quickcxx.py``: PCH, object sharing) and the op sharing (``ops.share_built_ops``). One run is
``dsfields snapshot --force --launch V...`` into a kept ``--out`` with its own op cache (``DSFIELDS_OPS_CACHE``):
a fresh empty one is the cold case, the same one again the warm case. ``quickcxx`` is the default build;
``ccache`` sets ``DSFIELDS_OPS_BUILD=ccache`` (DeepSpeed's flags made quick, then ccache, whose store is inside
the op cache; no op sharing). Each run's snapshots are kept (``KEEP/out-PHASE-VARIANT``) to be compared: a
variant that is quicker because a build failed or timed out shows there. The machine is shared: the variants
alternate (A B cold, then B A warm) and each line gives wall time and the CPU seconds of the run's process
tree, so a loaded moment shows as wall without CPU.

    python bench/ops_cache.py 0.19.7 0.19.8 [--order quickcxx,ccache] [--phase cold|warm|both] [--keep DIR]

Measured 2026-12-02 on the shared 2-core machine (0.19.7 and 0.19.8, --jobs 2; load is the 1-min average):
quickcxx cold 353 s wall / 320 s CPU (load 7.7), warm 58 s / 30 s (load 11); ccache cold did not finish within
the 600 s bound (load 14; its compiles parse torch/extension.h without a precompiled header). A first ccache
pair (380 s / 246 s cold, 212 s / 115 s warm) is void: its builds ran under the launch's time budget and were
killed (fixed since: ``_building`` wraps them). Not conclusive: the ccache cold run had about twice the load
and its CPU seconds are unknown (not reaped at the bound); until an idle re-measurement shows ccache within
20% on cold and warm, quickcxx stays.
A warm quickcxx run of the refactored tree wrote 0.19.8's fields.json, launch.json and paths.json
byte-identical to the committed ones.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(variant: str, versions: list[str], cache: Path, timeout: float, out: Path) -> tuple[float, float, int]:
    """``(wall s, CPU s of the children, exit code)`` of one snapshot run into ``out`` (emptied first)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = dict(os.environ, DSFIELDS_OPS_CACHE=str(cache), PYTHONPATH=str(ROOT / "extractor"))
    env.pop("DSFIELDS_OPS_BUILD", None)
    if variant == "ccache":
        env["DSFIELDS_OPS_BUILD"] = "ccache"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    # A session of its own: at the bound the whole tree (release runtimes, ninja, compilers) is killed, not
    # only the snapshot process, whose orphans would otherwise load the machine for the next run.
    proc = subprocess.Popen([sys.executable, "-m", "dsfields", "snapshot", "--force", "--launch", "--out", str(out),
                             *versions], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
        code = proc.returncode
        if code:
            sys.stderr.write(err.decode(errors="replace")[-2000:])
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        code = -1
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--order", default="quickcxx,ccache", help="variants, cold in this order, warm reversed")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (the machine's rule: < 10 min)")
    parser.add_argument("--phase", choices=("cold", "warm", "both"), default="both")
    parser.add_argument("--keep", type=Path, help="folder holding each variant's op cache (reused by --phase warm)")
    args = parser.parse_args(argv)
    variants = args.order.split(",")
    keep = args.keep or Path(tempfile.mkdtemp(prefix="dsfields-ops-caches-"))
    print(f"load {os.getloadavg()[0]:.1f}; caches in {keep}", flush=True)
    plan = []
    if args.phase in ("cold", "both"):
        plan += [("cold", v) for v in variants]
    if args.phase in ("warm", "both"):
        plan += [("warm", v) for v in reversed(variants)]
    for phase, variant in plan:
        cache = keep / variant
        if phase == "cold":
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir(parents=True)
        out = keep / f"out-{phase}-{variant}"  # kept: both variants must write the same snapshots
        wall, cpu, code = run(variant, args.versions, cache, args.timeout, out)
        size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) / 2**20
        print(f"{phase:4} {variant:8} wall {wall:7.1f} s  cpu {cpu:7.1f} s  exit {code}  cache {size:7.1f} MiB  "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
