"""Probe that every DeepSpeed release in range imports from its sdist and builds a DeepSpeedConfig.

For each release (oldest first, at most ``--jobs`` at a time) this fetches the sdist and the shared
environment (:mod:`dsfields.extract.releases`), then runs a tiny probe inside that environment::

    import deepspeed
    from deepspeed.runtime.config import DeepSpeedConfig
    c = DeepSpeedConfig({"train_batch_size": 1})
    print(deepspeed.__version__.strip(), type(c.zero_config).__name__)

and reports OK/FAIL per release with the cause and wall time, plus the total. ``--cache DIR`` uses
(and if needed creates) another cache; ``--cold`` uses a brand-new temporary cache, i.e. measures
everything from downloads to probes. Exit status is 0 only if every release passes.

Run: ``python bench/probe_releases.py [--min 0.8.0] [--max 0.19.8] [--jobs 2] [--cold | --cache DIR]``
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBE_TIMEOUT = 300.0

log = logging.getLogger("probe_releases")


def child() -> int:
    """The probe itself, run inside a release's environment (``python -m probe_releases --child``)."""
    import deepspeed
    from deepspeed.runtime.config import DeepSpeedConfig

    config = DeepSpeedConfig({"train_batch_size": 1})
    expected = os.environ["DSFIELDS_RELEASE"]
    version = deepspeed.__version__.strip()
    where = Path(deepspeed.__file__).resolve()
    result = {
        "version": version,
        "zero_config": type(config.zero_config).__name__,
        "file": str(where),
        "compat_added": [n for n in os.environ.get("DSFIELDS_COMPAT_ADDED", "").split(",") if n],
    }
    print(deepspeed.__version__.strip(), type(config.zero_config).__name__)
    print("PROBE-RESULT " + json.dumps(result))
    if version != expected:
        print(f"version mismatch: imported {version!r}, expected {expected}", file=sys.stderr)
        return 3
    if not where.is_relative_to(Path(os.environ["DSFIELDS_RELEASE_SOURCE"]).resolve()):
        print(f"imported deepspeed from {where}, not from the release's source", file=sys.stderr)
        return 3
    return 0


@dataclass
class Outcome:
    """What probing one release gave."""

    version: str
    ok: bool
    seconds: float
    probe_seconds: float = 0.0
    env: str = ""
    detail: str = ""
    compat_added: tuple[str, ...] = ()


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if "Error" in ln or "error" in ln]
    return (errors or lines or ["(no output)"])[-1][:300]


def probe(version: str, compat: bool = True) -> Outcome:
    """Fetch, build the environment for and probe one release (``compat=False``: without the shim)."""
    from dsfields.extract import releases

    started = time.monotonic()
    try:
        releases.fetch_source(version)
        python = releases.environment_for(version)
        probe_started = time.monotonic()
        no_compat = {releases.COMPAT_ENV_VAR: ""}
        proc = releases.run_in_release(version, ["probe_releases", "--child"], PROBE_TIMEOUT,
                                       extra_paths=[HERE], env=None if compat else no_compat)
        probe_seconds = time.monotonic() - probe_started
    except subprocess.TimeoutExpired:
        return Outcome(version, False, time.monotonic() - started, detail=f"timeout ({PROBE_TIMEOUT}s)")
    except Exception as exc:  # reported per release
        detail = f"{type(exc).__name__}: {exc}"[:500]
        return Outcome(version, False, time.monotonic() - started, detail=detail)
    elapsed = time.monotonic() - started
    env_name = python.parent.parent.name
    result_line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE-RESULT ")), None)
    if proc.returncode != 0 or result_line is None:
        log.debug("%s stderr:\n%s", version, proc.stderr)
        return Outcome(version, False, elapsed, probe_seconds, env_name,
                       f"exit {proc.returncode}: {_last_error_line(proc.stderr)}")
    result = json.loads(result_line.removeprefix("PROBE-RESULT "))
    return Outcome(version, True, elapsed, probe_seconds, env_name,
                   f"{result['version']} {result['zero_config']}", tuple(result["compat_added"]))


def _interleave(versions: list[str]) -> list[str]:
    """Oldest, newest, second oldest, ...: the first two jobs build the two environments side by side."""
    order: list[str] = []
    low, high = 0, len(versions) - 1
    while low <= high:
        order.append(versions[low])
        if high != low:
            order.append(versions[high])
        low, high = low + 1, high - 1
    return order


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--min", default="0.8.0", help="oldest release (default 0.8.0)")
    parser.add_argument("--max", default=None, help="newest release (default: the latest)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel jobs (default 2)")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cold", action="store_true", help="use a brand-new temporary cache")
    cache.add_argument("--cache", type=Path, help="cache directory (default: dsfields' user cache)")
    parser.add_argument("--no-compat", action="store_true",
                        help="probe without dsfields' compatibility shim (shows which releases need it)")
    parser.add_argument("--json", type=Path, help="also write the outcomes as JSON here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.child:
        return child()

    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.cold:
        os.environ["DSFIELDS_CACHE"] = tempfile.mkdtemp(prefix="dsfields-cold-")
    elif args.cache:
        os.environ["DSFIELDS_CACHE"] = str(args.cache)
    sys.path.insert(0, str(HERE.parent / "extractor"))
    from dsfields.extract import releases

    log.info("cache: %s", releases.cache_dir())
    started = time.monotonic()
    versions = releases.list_releases(args.min, args.max)
    log.info("%d releases: %s .. %s", len(versions), versions[0], versions[-1])
    outcomes: dict[str, Outcome] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for outcome in pool.map(lambda v: probe(v, not args.no_compat), _interleave(versions)):
            outcomes[outcome.version] = outcome
            log.info("%s %s %.1fs %s", outcome.version, "OK" if outcome.ok else "FAIL", outcome.seconds,
                     outcome.detail)
    total = time.monotonic() - started

    print(f"{'release':<9} {'result':<6} {'wall s':>7} {'probe s':>7}  {'env':<28} detail")
    for version in versions:
        o = outcomes[version]
        print(f"{version:<9} {'OK' if o.ok else 'FAIL':<6} {o.seconds:>7.1f} {o.probe_seconds:>7.1f}  "
              f"{o.env:<28} {o.detail}")
    for added in sorted({o.compat_added for o in outcomes.values() if o.ok}):
        users = [v for v in versions if outcomes[v].ok and outcomes[v].compat_added == added]
        print(f"compat shim added [{', '.join(added) or 'nothing'}] in {len(users)} release(s): "
              f"{users[0]} .. {users[-1]}")
    failed = [v for v in versions if not outcomes[v].ok]
    print(f"{len(versions) - len(failed)}/{len(versions)} OK; total wall time {total:.1f}s "
          f"with {args.jobs} jobs; cache {releases.cache_dir()}")
    if args.json:
        report = {"total_seconds": total, "outcomes": [asdict(outcomes[v]) for v in versions]}
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
