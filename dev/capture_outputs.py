"""Capture what the consumer commands print over the real-world corpus into a folder, to compare two trees.

For a refactor that must change no output (#22 "outputs unchanged"): run this with one tree's ``extractor/`` on
``PYTHONPATH``, then with the other's, and ``diff -r`` the two folders. Each command runs in-process through
``dsfields.cli.main``; its stdout, stderr and exit code go to one file named after the command and the config.

    PYTHONPATH=extractor python dev/capture_outputs.py OUT [--corpus DIR] [--version 0.19.8] [--more] [--zh]

``--zh`` adds every command's answers that ``--more`` leaves out, in both languages: ``check`` with ``--hf``,
``--accelerate-config`` and ``--trainer-args``, ``explain`` on the shared pasted messages, ``init``, ``estimate``
over the corpus, and every command's ``--help`` (the Chinese catalogue's moves are checked with it).
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


ACCELERATE_YAML = ("distributed_type: DEEPSPEED\nmixed_precision: fp16\ndeepspeed_config:\n  zero_stage: 3\n"
                   "  offload_param_device: cpu\n  zero_stag: 3\n  gradient_accumulation_steps: 2\n")
"""An accelerate config with a typo and a mixed precision for ``check --accelerate-config``."""


def zh_jobs(corpus: Path, v: str) -> dict[str, list[str]]:
    """``--zh``: the answers ``--more`` leaves out, in English and Chinese."""
    import json
    import tempfile

    from dsfields.cli import COMMANDS

    yaml = Path(tempfile.gettempdir()) / "dsfields-capture-accelerate.yaml"  # one path: the commands echo it
    yaml.write_text(ACCELERATE_YAML, encoding="utf-8")
    cases = corpus.parent / "explain-examples" / "cases.jsonl"
    pasted = [json.loads(line)["pasted"] for line in cases.read_text(encoding="utf-8").splitlines() if line.strip()]
    jobs: dict[str, list[str]] = {}
    configs = sorted(corpus.iterdir())
    for lang in ("en", "zh"):
        for config in configs:
            name, path = config.name, str(config)
            jobs[f"check-hf-{lang}-{name}"] = ["check", "--hf", path, "--version", v, "--lang", lang]
            jobs[f"check-acc-{lang}-{name}"] = ["check", path, "--accelerate-config", str(yaml), "--version", v,
                                               "--lang", lang]
            jobs[f"check-trainer-{lang}-{name}"] = [
                "check", path, "--trainer-args=--bf16 --gradient_checkpointing true --per_device_train_batch_size 4 "
                "--deepspeed_bogus 1", "--version", v, "--lang", lang]
            jobs[f"estimate-{lang}-{name}"] = ["estimate", path, "--params", "7B", "--hidden-size", "4096",
                                               "--layers", "32", "--seq-len", "2048", "--gpus-per-node", "8",
                                               "--version", v, "--lang", lang]
        jobs[f"check-trainer-refused-{lang}"] = ["check", str(configs[0]), "--trainer-args=--bf16 "
                                                 "--gradient_checkpointing", "--version", v, "--lang", lang]
        for i, text in enumerate(pasted):
            jobs[f"explain-{lang}-{i:03d}"] = ["explain", text, "--version", v, "--lang", lang]
        for params in ("350M", "7B", "70B"):
            for hf in ([], ["--hf"]):
                jobs[f"init-{lang}-{params}{'-hf' if hf else ''}"] = [
                    "init", "--params", params, "--gpus-per-node", "8", "--gpu-memory", "40GB", *hf,
                    "--version", v, "--lang", lang]
        jobs[f"help-{lang}"] = ["--help", "--lang", lang]
        for command in COMMANDS:
            jobs[f"help-{lang}-{command}"] = [command, "--help", "--lang", lang]
        jobs[f"schema-{lang}"] = ["schema", "--version", v, "--lang", lang, "-o", "-"]
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/realworld-configs"))
    parser.add_argument("--version", default="0.19.8")
    parser.add_argument("--more", action="store_true", help="also Chinese answers, goals, catalogues, --inference, "
                        "an older release, upgrade, estimate and sarif (about three times as many outputs)")
    parser.add_argument("--zh", action="store_true", help="also check --hf/--accelerate-config/--trainer-args, "
                        "explain, init, estimate over the corpus and every --help, in English and Chinese")
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
    if opts.zh:
        jobs |= zh_jobs(opts.corpus, v)
    for key, args in jobs.items():
        (opts.out / f"{key}.txt").write_text(run(args), encoding="utf-8")
    print(f"{len(jobs)} outputs in {opts.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
