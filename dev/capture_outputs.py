"""Capture what the consumer commands print over the real-world corpus into a folder, to compare two trees.

For a refactor that must change no output (#22 "outputs unchanged"): run this with one tree's ``extractor/`` on
``PYTHONPATH``, then with the other's, and ``diff -r`` the two folders. Each command runs in-process through
``dsfields.cli.main``; its stdout, stderr and exit code go to one file named after the command and the config.

    PYTHONPATH=extractor python dev/capture_outputs.py OUT [--corpus DIR] [--version 0.19.8]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path

QUERIES = ("stage3_max_live_parameters", "zero_optimization.stage", "fp16", "offload_optimizer.device",
           "optimizer:AdamW", "train_batch_size", "no_such_key_here")


def run(args: list[str]) -> str:
    from dsfields.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse
            code = exc.code
    return f"$ dsfields {' '.join(args)}\nexit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/realworld-configs"))
    parser.add_argument("--version", default="0.19.8")
    opts = parser.parse_args()
    opts.out.mkdir(parents=True, exist_ok=True)
    v = opts.version
    jobs: dict[str, list[str]] = {}
    for query in QUERIES:
        jobs[f"lookup-{query}"] = ["lookup", query, "--version", v]
        jobs[f"lookup-json-{query}"] = ["lookup", query, "--json", "--version", v]
        jobs[f"lookup-history-{query}"] = ["lookup", query, "--history"]
    for fmt in ("text", "json", "markdown", "github"):
        jobs[f"diff-0.14.4-{v}-{fmt}"] = ["diff", "0.14.4", v, "--format", fmt]
    jobs[f"schema-{v}"] = ["schema", "--version", v, "-o", "-"]
    for config in sorted(opts.corpus.iterdir()):
        name, path = config.name, str(config)
        jobs[f"check-{name}"] = ["check", path, "--version", v]
        jobs[f"check-json-{name}"] = ["check", path, "--format", "json", "--version", v]
        jobs[f"check-hf-{name}"] = ["check", "--hf", path, "--version", v]
        jobs[f"resolve-{name}"] = ["resolve", path, "--format", "json", "--version", v]
        jobs[f"migrate-{name}"] = ["migrate", path, "--to", v, "--from", "0.10.3"]
        jobs[f"migrate-diff-{name}"] = ["migrate", path, "--to", v, "--from", "0.10.3", "--diff"]
    for key, args in jobs.items():
        (opts.out / f"{key}.txt").write_text(run(args), encoding="utf-8")
    print(f"{len(jobs)} outputs in {opts.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
