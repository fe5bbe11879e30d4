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

from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.store import FORMAT_VERSION, SNAPSHOT_FILE, dumps, repo_generated_dir, version_key, write_atomic

FAILURES_FILE = "failures.json"
EXTRACT_TIMEOUT = 900.0
LAUNCH_TIMEOUT = 2400.0
"""With --launch: a cold release JIT-builds the CPU ops its launches load (1-2 min each on 2 busy cores)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("versions", nargs="*", metavar="VERSION", help="DeepSpeed releases to snapshot")
    parser.add_argument("--all", action="store_true", help="every PyPI release from --since on")
    parser.add_argument("--since", default="0.8.0", help="oldest release for --all (default: 0.8.0)")
    parser.add_argument("--jobs", type=int, default=2, help="releases extracted in parallel (default: 2)")
    parser.add_argument("--out", type=Path, default=None, help="root of the snapshot tree (default: generated/)")
    parser.add_argument("--force", action="store_true", help="re-extract even up-to-date snapshots")
    parser.add_argument("--launch", action="store_true",
                        help="every witness: also run the launch witness and confirm the launch rules "
                             "(deepspeed.initialize on CPU in each release's runtime; writes launch.json)")


def up_to_date(root: Path, version: str) -> bool:
    """Current training snapshot and an inference document beside it (every release from 0.8.0 has one)."""
    try:
        current = json.loads((root / version / SNAPSHOT_FILE).read_text())["format_version"] == FORMAT_VERSION
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return current and (root / version / INFERENCE_FILE).is_file()


def extract_release(version: str, root: Path, launch: bool = False) -> str | None:
    """Snapshot one release; return None on success, else the cause in one line.

    ``launch``: every witness (``dsfields extract --launch --launch-rules`` in the release's runtime).
    """
    from dsfields.extract import releases

    _prepare_ahead()
    argv = ["dsfields", "extract", "--quiet", "--out", str(root)]
    if launch:
        argv += ["--launch", "--launch-rules"]
    try:
        done = releases.run_in_release(version, argv, timeout=LAUNCH_TIMEOUT if launch else EXTRACT_TIMEOUT)
    except Exception as exc:  # download, environment or timeout: the cause is the answer
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        return lines[-1] if lines else f"exit {done.returncode}"
    if not (root / version / SNAPSHOT_FILE).is_file():
        return "extraction wrote no snapshot for this version (DeepSpeed reports another __version__)"
    return extract_inference(version, root)


INFERENCE_FILE = "inference.json"
"""The init_inference document (issue 29), written beside the training snapshot by the same run."""


def extract_inference(version: str, root: Path) -> str | None:
    """The release's ``inference.json`` (``dsfields extract --inference`` in its runtime): None on success,
    else the cause in one line. Its own process, as ``extract --inference`` imports only the inference config."""
    from dsfields.extract import releases

    try:
        done = releases.run_in_release(version, ["dsfields", "extract", "--inference", "--out", str(root)],
                                       timeout=EXTRACT_TIMEOUT)
    except Exception as exc:  # download, environment or timeout: the cause is the answer
        return f"inference: {type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        return "inference: " + (lines[-1] if lines else f"exit {done.returncode}")
    if not (root / version / INFERENCE_FILE).is_file():
        return "inference: extraction wrote no inference.json for this version"
    return None


def field_count(root: Path, version: str) -> int | None:
    try:
        return int(json.loads((root / version / SNAPSHOT_FILE).read_text())["coverage"]["fields"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def outcome_line(root: Path, version: str, before: int | None) -> str:
    """What one finished release's snapshot holds: fields (and before), the launch witness, the rules.

    Machine errors are counted apart from launches and refusals: this CPU machine failing a launch says
    nothing about the config, so they are never folded into either.
    """
    after = field_count(root, version)
    parts = [f"{after} fields" + (f" (was {before})" if before is not None and before != after else "")]
    try:
        witnesses = json.loads((root / version / SNAPSHOT_FILE).read_text())["coverage"]["witnesses"]
        launch = witnesses.get("launch")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        launch = None
    if isinstance(launch, dict):
        outcomes = launch.get("outcomes", {})
        parts.append(f"launch witness: {launch.get('paths')} paths from {launch.get('configs')} configs "
                     f"({outcomes.get('launched', 0)} launched, {outcomes.get('config_error', 0)} refused, "
                     f"{outcomes.get('machine_error', 0)} machine)")
    try:
        rules = json.loads((root / version / "launch.json").read_text())["rules"]
    except (OSError, ValueError, KeyError, TypeError):
        rules = None
    if isinstance(rules, dict) and launch is not None:
        machine = sum(1 for r in rules.values() if any("machine reason" in w for w in r.get("why_not", ())))
        confirmed = sum(1 for r in rules.values() if r.get("confirmed"))
        parts.append(f"rules: {confirmed}/{len(rules)} confirmed, {machine} unconfirmed for a machine reason")
    return "; ".join(parts)


def read_failures(path: Path) -> dict[str, str]:
    """``failures.json`` (release → why its snapshot failed) as this command writes it; an absent file is empty.

    Anything else (a JSON array, a string, malformed JSON) is not what a run can update without losing what the
    file holds: one line, exit 2, naming the file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeError) as exc:
        raise DsfieldsError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DsfieldsError(f"{path}: not JSON ({first}); fix or remove it (it records failed releases)") from None
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else f"a {type(data).__name__}"
        raise DsfieldsError(f"{path}: {kind}, not an object of release → reason; fix or remove it (it records "
                            "failed releases)")
    return data


def run(args: argparse.Namespace) -> int:
    from dsfields.extract import releases

    root: Path = args.out or repo_generated_dir()
    if args.all:
        try:
            versions = releases.list_releases(args.since)
        except Exception as exc:
            raise DsfieldsError(f"cannot list DeepSpeed releases: {exc}") from None
    else:
        versions = list(args.versions)
    if not versions:
        raise UsageError("name VERSIONs or use --all")
    from dsfields.extract.extract_command import out_problem, version_problem

    bad = next((problem for problem in map(version_problem, versions) if problem), None)
    if bad or out_problem(root):
        raise UsageError(str(bad or out_problem(root)))
    versions = sorted(set(versions), key=version_key)
    launch = bool(getattr(args, "launch", False))
    todo = [v for v in versions if args.force or not up_to_date(root, v) or (launch and not has_launch(root, v))]
    before = {v: field_count(root, v) for v in todo}
    failures_path = root / FAILURES_FILE
    read_failures(failures_path)  # a file this run cannot update is one line now, not an error hours later
    outcomes: dict[str, str | None] = {}
    """This run's verdict per release (None: snapshotted), applied to failures.json as it is at the end."""
    started = time.perf_counter()
    lock = threading.Lock()
    done_count = 0
    print(f"dsfields snapshot: {len(versions) - len(todo)} up to date, {len(todo)} to extract", file=sys.stderr)
    with _ahead_lock:
        _ahead[:] = todo if len(todo) > 1 else []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        # Newest first: the releases most users run are done first when a long run is cut short.
        futures = {pool.submit(_timed, extract_release, v, root, launch): v for v in reversed(todo)}
        for future in as_completed(futures):
            version = futures[future]
            cause, seconds = future.result()
            with lock:
                done_count += 1
                outcomes[version] = cause
                status = f"ok: {outcome_line(root, version, before[version])}" if cause is None else f"FAILED: {cause}"
                print(f"[{done_count:>3}/{len(todo)}] {version:<8} {status} ({seconds:.1f} s)", file=sys.stderr)
    # Read now, not at the start: another snapshot run on the same tree (one per release, two at a time)
    # may have recorded its own releases meanwhile; only this run's releases change here.
    failures = read_failures(failures_path)
    with _ahead_lock:
        _ahead.clear()
    for version, cause in outcomes.items():
        if cause is None:
            failures.pop(version, None)
        else:
            failures[version] = cause
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


_ahead: list[str] = []
"""The releases of the running ``snapshot`` still to prepare (:func:`prepare`), taken by the first extraction."""
_ahead_lock = threading.Lock()


def _prepare_ahead() -> None:
    """Start :func:`prepare` over this run's releases, once: from the first real extraction, so nothing is
    fetched for a run that extracts nothing."""
    with _ahead_lock:
        todo = list(_ahead)
        _ahead.clear()
    if todo:
        threading.Thread(target=prepare, args=(todo,), name="dsfields-prepare", daemon=True).start()


def preparation_order(todo: list[str]) -> list[str]:
    """The order :func:`prepare` fetches releases in: the oldest first, then newest to oldest as extracted.

    The oldest's runtime (pydantic 1 when 0.8-0.11 are asked) then installs beside the newest's, on the core
    that would otherwise wait for it, and each later sdist is there before its release's turn.
    """
    if not todo:
        return []
    return [todo[0], *reversed(todo[1:])]


def prepare(todo: list[str]) -> None:
    """Fetch the sdists and build the runtimes of ``todo`` ahead of their extraction (a background thread).

    Only what extraction does itself, earlier and under the same locks: a failure here is left for the
    release's own extraction to meet and report.
    """
    from dsfields.extract import releases

    for version in preparation_order(todo):
        try:
            releases.fetch_source(version)
            releases.environment_for(version)
        except Exception:  # reported by the release's own extraction
            continue


def has_launch(root: Path, version: str) -> bool:
    """Whether ``version``'s snapshot carries the launch witness and its launch.json exists."""
    try:
        snapshot = json.loads((root / version / SNAPSHOT_FILE).read_text())
        launch = snapshot["coverage"]["witnesses"]["launch"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return isinstance(launch, dict) and (root / version / "launch.json").is_file()


def _timed(fn, version: str, root: Path, launch: bool) -> tuple[str | None, float]:  # noqa: ANN001
    start = time.perf_counter()
    return fn(version, root, launch), time.perf_counter() - start
