"""``dsfields extract``: snapshot the DeepSpeed importable in this interpreter."""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import re
import sys
import time
from pathlib import Path

from dsfields.model import paths_index
from dsfields.model.errors import ExtractionError, MissingExtra, UsageError, missing_extra
from dsfields.model.store import SNAPSHOT_FILE, dumps, repo_generated_dir, write_atomic

VERIFICATION_FILE = "verification.json"

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="root of the snapshot tree (default: generated/)")
    parser.add_argument("--quiet", action="store_true", help="print no summary")
    parser.add_argument("--launch", action="store_true",
                        help="also run the launch witness: deepspeed.initialize on CPU over tracing dicts "
                             "(every launch rule's example configs, ~10 s once DeepSpeed's CPU ops are built); "
                             "fields it saw read get the 'launch' witness")
    parser.add_argument("--launch-rules", action="store_true",
                        help="also confirm the launch rules with deepspeed.initialize on CPU and write launch.json")
    parser.add_argument("--inference", action="store_true",
                        help="write only the inference document (DeepSpeedInferenceConfig) to <out>/<version>/"
                             "inference.json; imports deepspeed.inference.config only")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="also run the differential checks (explicit default, liveness) and write verification.json",
    )


_VERSION_NAME = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
"""A version usable as one folder name under --out: PEP 440 characters, no separator, not ``..``."""


def version_problem(version: object) -> str | None:
    """Why ``version`` (DeepSpeed's ``__version__`` or a requested release) cannot name a snapshot folder."""
    if not isinstance(version, str) or not _VERSION_NAME.fullmatch(version) or ".." in version:
        shown = repr(version) if len(repr(version)) <= 80 else repr(version)[:77] + "..."
        return f"{shown} is not a version dsfields can use as a folder name (letters, digits, . + _ - only)"
    return None


def out_problem(root: Path) -> str | None:
    """Why ``--out`` cannot hold snapshots, checked before minutes of extraction."""
    for folder in (root, *root.parents):
        if folder.exists():
            return None if folder.is_dir() else f"--out {root}: {folder} is not a directory"
    return None


def import_failure() -> str | None:
    """Import DeepSpeed's config module; return one line naming the cause if that fails.

    DS_ACCELERATOR is left alone: each release picks its accelerator as a real install does (0.9.3 to
    0.14.0 reject ``cpu`` without intel_extension_for_pytorch).
    """
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink):
            import deepspeed
            import deepspeed.runtime.config  # noqa: F401
    except SystemExit as exc:  # a DeepSpeed (or a plugin) that exits at import must not pass for success
        return f"its import called sys.exit({exc.code!r})"
    except Exception as exc:  # any import-time failure is the user's environment, reported in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return None


def run(args: argparse.Namespace) -> int:
    if getattr(args, "inference", False):  # issue 29: the init_inference document alone
        from dsfields.extract.inference_witness import main as inference_main

        return inference_main(["--out", str(args.out or repo_generated_dir())])
    started = time.perf_counter()
    root = args.out or repo_generated_dir()
    problem = out_problem(root)
    if problem:
        raise UsageError(problem)
    try:  # the extraction's own imports (griffe, pydantic...) fail like DeepSpeed's: one line naming the package
        from dsfields.extract.build import extract_installed, start_launch, start_static
    except ImportError as exc:
        raise missing_extra(exc) from None

    static = start_static()  # the static witness scans on the other core while DeepSpeed imports
    launch_rules = getattr(args, "launch_rules", False)
    launch = start_launch(rules=launch_rules) if getattr(args, "launch", False) else None
    cause = import_failure()
    if cause is not None:
        if static is not None:
            static.cancel()  # its scan is of no use now, and it holds our stdout/stderr until it ends
        raise MissingExtra("deepspeed", message=f"cannot import DeepSpeed ({cause}); install it with "
                                                "`pip install dsfields[extract]`")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            snapshot = extract_installed(static, launch)
    except (Exception, SystemExit) as exc:  # report, never leave a half-written snapshot
        if static is not None:
            static.cancel()  # no-op once its report was read
        log.debug("extraction failed", exc_info=True)
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ExtractionError(f"extraction failed: {type(exc).__name__}: {first}") from None
    version = snapshot.get("deepspeed_version")
    problem = version_problem(version)
    if problem:
        raise ExtractionError(f"DeepSpeed's __version__ {problem}")
    target = root / version / SNAPSHOT_FILE
    report = None
    if args.verify:  # before writing anything: a failing verification leaves no snapshot without its report
        try:
            from deepspeed.runtime.config import DeepSpeedConfig

            from dsfields.extract.verify import verify
        except ImportError as exc:
            raise missing_extra(exc) from None
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                report = verify(snapshot, DeepSpeedConfig)
        except (Exception, SystemExit) as exc:
            log.debug("verification failed", exc_info=True)
            first = (str(exc).strip().splitlines() or [""])[0]
            raise ExtractionError(f"verification failed: {type(exc).__name__}: {first}") from None
    write_atomic(target, dumps(snapshot))
    paths_index.write_for(target)  # lookup's compact index, always beside the snapshot it indexes
    if report is not None:
        write_atomic(target.with_name(VERIFICATION_FILE), dumps(report))
    document = launch.result().get("launch_json") if launch is not None and launch_rules else None
    if document is not None:  # confirmed by the launch witness's worker, after its traced launches
        from dsfields.extract.launch_witness import launch_json_text

        write_atomic(target.with_name("launch.json"), launch_json_text(document))
    elif launch_rules:  # its own process: a launch changes process-wide state
        import subprocess

        from dsfields.extract.launch_witness import witness_env

        argv = [sys.executable, "-m", "dsfields.extract.launch_witness", "--rules", "--out",
                  str(target.with_name("launch.json"))]
        if subprocess.run(argv, check=False, env=witness_env()).returncode:
            raise ExtractionError("the launch-rule probe failed")
    if not args.quiet:
        print(summary(snapshot, target, time.perf_counter() - started))
    return 0


def summary(snapshot: dict, target: Path, seconds: float) -> str:
    cov = snapshot["coverage"]
    lines = [
        f"DeepSpeed {snapshot['deepspeed_version']}: {cov['fields']} fields in {cov['sections']} sections "
        f"-> {target} ({seconds:.1f} s)",
        f"  removed keys: {len(snapshot['removed'])}, enums: {len(snapshot['enums'])}, "
        f"deprecated: {sum(1 for f in snapshot['fields'].values() if f['deprecated'])}",
    ]
    wit = cov.get("witnesses") or {}
    if wit:
        lines.append(f"  witnesses: found {wit['found']}, only one witness {wit['only']}; "
                     f"{len(wit['triggered_by_probes'])} conditional reads triggered by "
                     f"{wit['exploration_configs']} probe configs")
    launch = wit.get("launch")
    if isinstance(launch, dict):
        lines.append(f"  launch witness: {launch['configs']} configs {launch['outcomes']}, "
                     f"{launch['paths']} paths read")
    launch = launch if isinstance(launch, dict) else {}
    for title, items in (
        ("keys only the static witness found", wit.get("only_static", [])),
        ("keys only the launch read", launch.get("only", [])),
        ("keys the trace read on the base config that no launch read", launch.get("not_read", [])),
        ("static reads the trace never triggered", [f"{d['path']}: under {d['condition']}"
                                                    for d in wit.get("not_triggered", [])]),
        ("static reads under a model that declares no such field", wit.get("static_under_model", [])),
        ("choices", wit.get("choices", [])),
        ("static reads not placed", wit.get("unplaced", [])),
        ("models found but not placed", [f"{k}: {v}" for k, v in cov["models_not_placed"].items()]),
        ("*_DEFAULT constants attributed to no path", cov["defaults_not_attributed"]),
        ("models named in errors but not found", [f"{k}: {v}" for k, v in cov["unresolved_models"].items()]),
        ("notes", cov["notes"]),
    ):
        if items:
            lines.append(f"  {title} ({len(items)}):")
            lines.extend(f"    {item}" for item in items)
    return "\n".join(lines)
