"""``dsfields snapshot``: extract releases that are not installed, each in its own runtime.

Each release runs ``dsfields extract`` in a cached environment from :mod:`dsfields.extract.releases`
(its sdist on ``PYTHONPATH``, a shared torch/pydantic environment, the compatibility shim). A
release that fails is reported with its cause and recorded in ``generated/failures.json``; the
others go on. Up-to-date snapshots (current ``format_version``) are skipped, so a warm rerun only
rebuilds the index.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from dsfields.model.store import FORMAT_VERSION, SNAPSHOT_FILE, dumps, repo_generated_dir, version_key, write_atomic

FAILURES_FILE = "failures.json"
EXTRACT_TIMEOUT = 900.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("versions", nargs="*", metavar="VERSION", help="DeepSpeed releases to snapshot")
    parser.add_argument("--all", action="store_true", help="every PyPI release from --since on")
    parser.add_argument("--since", default="0.8.0", help="oldest release for --all (default: 0.8.0)")
    parser.add_argument("--jobs", type=int, default=2, help="releases extracted in parallel (default: 2)")
    parser.add_argument("--out", type=Path, default=None, help="root of the snapshot tree (default: generated/)")
    parser.add_argument("--force", action="store_true", help="re-extract even up-to-date snapshots")


def up_to_date(root: Path, version: str) -> bool:
    try:
        return json.loads((root / version / SNAPSHOT_FILE).read_text())["format_version"] == FORMAT_VERSION
    except (OSError, ValueError, KeyError, TypeError):
        return False


def extract_release(version: str, root: Path) -> str | None:
    """Snapshot one release; return None on success, else the cause in one line."""
    from dsfields.extract import releases

    try:
        done = releases.run_in_release(
            version, ["dsfields", "extract", "--quiet", "--out", str(root)], timeout=EXTRACT_TIMEOUT
        )
    except Exception as exc:  # download, environment or timeout: the cause is the answer
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        return lines[-1] if lines else f"exit {done.returncode}"
    if not (root / version / SNAPSHOT_FILE).is_file():
        return "extraction wrote no snapshot for this version (DeepSpeed reports another __version__)"
    return None


def run(args: argparse.Namespace) -> int:
    root: Path = args.out or repo_generated_dir()
    if args.all:
        from dsfields.extract import releases

        try:
            versions = releases.list_releases(args.since)
        except Exception as exc:
            print(f"dsfields snapshot: cannot list DeepSpeed releases: {exc}", file=sys.stderr)
            return 2
    else:
        versions = list(args.versions)
    if not versions:
        print("dsfields snapshot: name VERSIONs or use --all", file=sys.stderr)
        return 2
    from dsfields.extract.command import out_problem, version_problem

    bad = next((problem for problem in map(version_problem, versions) if problem), None)
    if bad or out_problem(root):
        print(f"dsfields snapshot: {bad or out_problem(root)}", file=sys.stderr)
        return 2
    versions = sorted(set(versions), key=version_key)
    todo = [v for v in versions if args.force or not up_to_date(root, v)]
    failures_path = root / FAILURES_FILE
    try:
        failures: dict[str, str] = json.loads(failures_path.read_text())
    except (OSError, ValueError):
        failures = {}
    started = time.perf_counter()
    lock = threading.Lock()
    done_count = 0
    print(f"dsfields snapshot: {len(versions) - len(todo)} up to date, {len(todo)} to extract", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(_timed, extract_release, v, root): v for v in todo}
        for future in as_completed(futures):
            version = futures[future]
            cause, seconds = future.result()
            with lock:
                done_count += 1
                if cause is None:
                    failures.pop(version, None)
                else:
                    failures[version] = cause
                status = "ok" if cause is None else f"FAILED: {cause}"
                print(f"[{done_count:>3}/{len(todo)}] {version:<8} {status} ({seconds:.1f} s)", file=sys.stderr)
    for version in versions:
        if version not in todo and version in failures and up_to_date(root, version):
            failures.pop(version)
    write_atomic(failures_path, dumps(dict(sorted(failures.items(), key=lambda kv: version_key(kv[0])))))
    from dsfields.model.history import write_index

    write_index(root, generated_by="dsfields snapshot")
    failed = [v for v in versions if v in failures]
    print(
        f"dsfields snapshot: {len(versions) - len(failed)}/{len(versions)} releases snapshotted in "
        f"{time.perf_counter() - started:.1f} s" + (f"; failed: {', '.join(failed)}" if failed else ""),
        file=sys.stderr,
    )
    return 1 if failed else 0


def _timed(fn, version: str, root: Path) -> tuple[str | None, float]:  # noqa: ANN001
    start = time.perf_counter()
    return fn(version, root), time.perf_counter() - start
