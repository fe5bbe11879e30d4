"""Capture what the consumer commands print over the real-world corpus into a folder, to compare two trees.

For a refactor that must change no output (#22 "outputs unchanged"): run this with one tree's ``extractor/`` on
``PYTHONPATH``, then with the other's, and ``diff -r`` the two folders. Each command runs in-process through
``dsfields.cli.main``; its stdout, stderr and exit code go to one file named after the command and the config.

    PYTHONPATH=extractor python dev/capture_outputs.py OUT [--corpus DIR] [--version 0.19.8] [--more]
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


MORE_QUERIES = ("optimizer:OneBitAdam", "scheduler:WarmupDecayLR", "memory", "显存", "goal:speed", "checkpoint",
                "offload", "OneBitAdam", "zero_optimization", "enabled", "optimizer:nope", "goal:nope", "bfloat16", "*",
                "compression_training.weight_quantization.different_groups.wq1.params.start_bits", *QUERIES)
INFERENCE_QUERIES = ("replace_method", "tensor_parallel.tp_size", "dtype", "zero", "nope")


def more_jobs(corpus: Path, v: str) -> dict[str, list[str]]:
    """``--more``: what the consumers say in Chinese, about goals, types and the inference document, and upgrade."""
    jobs: dict[str, list[str]] = {}
    for query in MORE_QUERIES:
        for lang in ("en", "zh"):
            jobs[f"lookup-{lang}-{query}"] = ["lookup", query, "--version", v, "--lang", lang]
            jobs[f"lookup-{lang}-history-{query}"] = ["lookup", query, "--history", "--lang", lang]
            jobs[f"lookup-{lang}-json-{query}"] = ["lookup", query, "--json", "--version", v, "--lang", lang]
        jobs[f"lookup-0.10.3-{query}"] = ["lookup", query, "--version", "0.10.3"]
    for query in INFERENCE_QUERIES:
        jobs[f"lookup-inference-{query}"] = ["lookup", "--inference", query, "--version", v]
        jobs[f"lookup-inference-json-{query}"] = ["lookup", "--inference", query, "--json", "--history"]
    configs = sorted(corpus.iterdir())
    for config in configs:
        name, path = config.name, str(config)
        jobs[f"check-zh-{name}"] = ["check", path, "--version", v, "--lang", "zh"]
        jobs[f"check-0.10.3-{name}"] = ["check", path, "--version", "0.10.3"]
        jobs[f"check-sarif-{name}"] = ["check", path, "--format", "sarif", "--version", v]
        jobs[f"resolve-zh-{name}"] = ["resolve", path, "--version", v, "--lang", "zh"]
        jobs[f"migrate-zh-{name}"] = ["migrate", path, "--to", v, "--from", "0.10.3", "--lang", "zh"]
        jobs[f"upgrade-json-{name}"] = ["upgrade", path, "--from", "0.14.4", "--to", v, "--format", "json"]
        for lang in ("en", "zh"):
            jobs[f"upgrade-{lang}-{name}"] = ["upgrade", path, "--to", v, "--lang", lang]
            jobs[f"upgrade-markdown-{lang}-{name}"] = ["upgrade", path, "--from", "0.10.3", "--to", v, "--format",
                                                       "markdown", "--lang", lang]
    for lang in ("en", "zh"):
        jobs[f"diff-{lang}"] = ["diff", "0.14.4", v, "--lang", lang]
        if configs:
            jobs[f"estimate-{lang}"] = ["estimate", str(configs[0]), "--params", "7e9", "--lang", lang]
    return {key.replace("/", "_"): args for key, args in jobs.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/realworld-configs"))
    parser.add_argument("--version", default="0.19.8")
    parser.add_argument("--more", action="store_true", help="also Chinese answers, goals, catalogues, --inference, "
                        "an older release, upgrade, estimate and sarif (about three times as many outputs)")
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
    if opts.more:
        jobs |= more_jobs(opts.corpus, v)
    for key, args in jobs.items():
        (opts.out / f"{key}.txt").write_text(run(args), encoding="utf-8")
    print(f"{len(jobs)} outputs in {opts.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
