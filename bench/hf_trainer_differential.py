"""`check/resolve --trainer-args` against the real HF Trainer, one training step per (config, argument set).

For every config and argument set the real Trainer (transformers + accelerate + DeepSpeed on CPU, a tiny
Llama of hidden size 16, `--max_steps 1`; dsfields.extract.hf.trainer_witness, one warm process forking a child
per run) either trains or refuses. dsfields must say the same:

* `dsfields check FILE --trainer-args=ARGS --hidden-size 16` exits 1 exactly where the Trainer refused;
* `dsfields resolve FILE --trainer-args=ARGS --hidden-size 16 --format json` gives, where it trained, the
  values DeepSpeed's engine finally used (fp16/bf16 enabled, micro batch, accumulation, train batch,
  gradient clipping, the optimizer's lr and class, the scheduler's class).

A run that fails on what this machine lacks (fp16 where the accelerator says it has none, an optional package
such as tensorboard that a monitor section imports) is counted as a machine failure, never as agreement.

    PYTHONPATH=extractor python bench/hf_trainer_differential.py            # the whole corpus, every set
    PYTHONPATH=extractor python bench/hf_trainer_differential.py --limit 20 --sets matched,bf16
    PYTHONPATH=extractor python bench/hf_trainer_differential.py --sets fp16 --assume-fp16   # a CPU without fp16

Prints one line per disagreement, the agreement figures, and the catalogue of refusals seen; exits 1 on
any disagreement.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "realworld-configs"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/realworld-configs")
HIDDEN = 16
ENGINE_KEYS = ("fp16.enabled", "bf16.enabled", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
               "train_batch_size", "gradient_clipping", "optimizer.params.lr", "optimizer.class", "scheduler.class")

MATCH_FLAGS = {"train_micro_batch_size_per_gpu": "--per_device_train_batch_size",
               "gradient_accumulation_steps": "--gradient_accumulation_steps", "gradient_clipping": "--max_grad_norm",
               "optimizer.params.lr": "--learning_rate", "optimizer.params.eps": "--adam_epsilon",
               "optimizer.params.weight_decay": "--weight_decay", "scheduler.params.warmup_num_steps": "--warmup_steps"}
"""The literal of a config key → the Trainer flag that must equal it (the matched argument set)."""

SETS = {
    "matched": [],
    "bf16": ["--bf16"],
    "fp16": ["--fp16"],
    "lr": ["--learning_rate", "1e-3"],
    "batch": ["--per_device_train_batch_size", "3"],
    "accumulation": ["--gradient_accumulation_steps", "2"],
    "max_grad_norm": ["--max_grad_norm", "0.3"],
    "warmup": ["--warmup_steps", "5"],
    # The 180-run sets (issue 42; `--sets matched,sft,warmup_run --limit 60`): what scripts pass in practice.
    # sft: a fine-tuning recipe of the LLaMA-Factory / alpaca kind (bf16, lr 2e-5, cosine, a warmup ratio, no weight
    # decay, a small per-device batch with accumulation, epochs rather than steps: the step count then comes from
    # the dataset, given to dsfields as --dataset-size). On 4.x the ratio is --warmup_ratio, on 5.x a float
    # --warmup_steps (5.0 folded the two): see sft_words.
    "sft": ["--bf16", "--learning_rate", "2e-5", "--lr_scheduler_type", "cosine", "--weight_decay", "0.0",
            "--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "2", "--num_train_epochs", "5",
            "--warmup_steps", "0.2"],
    # warmup_run: a short run with an explicit integer warmup (the flag 4.x was wrongly said to ignore).
    "warmup_run": ["--max_steps", "10", "--warmup_steps", "5"],
}
"""Each set is the matched arguments plus these words (later words win, as in argparse)."""

DEFAULT_SETS = ("matched", "bf16", "fp16", "lr", "batch", "accumulation", "max_grad_norm", "warmup")

SCHEDULER_KEYS = ("scheduler.params.warmup_num_steps", "scheduler.params.total_num_steps")
"""The Trainer's step fills, compared with the scheduler parameters DeepSpeed read (not its scheduler's attributes:
DeepSpeed keeps max(2, warmup_num_steps) itself)."""


def set_words(name: str, transformers_version: str) -> list[str]:
    """The set's words for this transformers release: 4.x takes a warmup ratio as --warmup_ratio (its
    --warmup_steps is an integer), 5.x as a float --warmup_steps."""
    words = list(SETS[name])
    if int(transformers_version.split(".")[0]) < 5 and name == "sft":
        at = words.index("--warmup_steps")
        words[at:at + 2] = ["--warmup_ratio", words[at + 1]]
    return words


def _get(data, path):
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def matched_words(config: dict) -> list[str]:
    """Trainer flags equal to the config's literals, so that only the set's own words can disagree."""
    words: list[str] = []
    for path, flag in MATCH_FLAGS.items():
        value = _get(config, path)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 or (
                path == "gradient_clipping" and isinstance(value, (int, float)) and not isinstance(value, bool)):
            words += [flag, repr(value) if isinstance(value, float) else str(value)]
    betas = _get(config, "optimizer.params.betas")
    if isinstance(betas, list) and len(betas) == 2 and all(isinstance(b, (int, float)) for b in betas):
        words += ["--adam_beta1", str(betas[0]), "--adam_beta2", str(betas[1])]
    for dtype in ("fp16", "bf16"):
        if _get(config, f"{dtype}.enabled") is True:
            words.append(f"--{dtype}")
    return words


def _dsfields(argv: list[str]) -> tuple[int, str]:
    from dsfields.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def predict(path: Path, words: list[str], hf_version: str | None = None) -> dict:
    from dsfields.extract.hf.trainer_witness import DATASET_SIZE

    text = shlex.join(words)
    common = [str(path), f"--trainer-args={text}", "--hidden-size", str(HIDDEN), "--dataset-size", str(DATASET_SIZE)]
    if hf_version:
        common += ["--hf-version", hf_version]
    check_code, _ = _dsfields(["check", *common])
    resolve_code, out = _dsfields(["resolve", *common, "--format", "json"])
    values = json.loads(out) if out.strip() else {}
    return {"check": check_code, "resolve": resolve_code, "values": {
        k: (values.get(k) or {}).get("value") for k in (*ENGINE_KEYS, *SCHEDULER_KEYS, "optimizer.lr", "precision")}}


def _same(key: str, predicted, real) -> bool:
    if key.endswith(".class"):
        return isinstance(predicted, str) and isinstance(real, str) and \
            predicted.rpartition(".")[2] == real.rpartition(".")[2]
    if isinstance(real, float) or isinstance(predicted, float):
        return isinstance(predicted, (int, float)) and isinstance(real, (int, float)) and \
            abs(predicted - real) <= 1e-12 * max(1.0, abs(real))
    return predicted == real


def compare(path: Path, name: str, witness, words_extra: list[str] | None = None,
            hf_version: str | None = None) -> dict:
    config = json.loads(path.read_text(encoding="utf-8"))
    extra = set_words(name, witness.versions["transformers"]) if words_extra is None else words_extra
    # one step unless the set says how long (its own --max_steps, or epochs over the witness's examples)
    length = [] if {"--max_steps", "--num_train_epochs"} & set(extra) else ["--max_steps", "1"]
    words = [*matched_words(config), *extra, *length]
    real = witness.run(config, words)
    guess = predict(path, words, hf_version)
    refused = not real.get("trained")
    # What this machine lacks is no verdict on the config: fp16 where the accelerator has none, and an optional
    # package a section asks for (tensorboard, wandb monitors) that is not installed here.
    missing = (real.get("error") or {}).get("type") in ("ModuleNotFoundError", "ImportError")
    fp16_runs = witness.fp16_supported or getattr(witness, "fp16_assumed", False)
    machine = bool(real.get("machine")) or (refused and guess["check"] == 0 and (missing or (
        guess["values"].get("precision") == "fp16" and not fp16_runs)))
    row = {"config": path.name, "set": name, "words": words, "trained": not refused, "machine": machine,
           "fp16_supported": witness.fp16_supported, "fp16_assumed": getattr(witness, "fp16_assumed", False),
           "check": guess["check"], "verdict_agrees": None, "value_mismatches": {},
           "error": (real.get("error") or {}).get("message", "")[:2000] if refused else ""}
    if machine:
        return row
    row["verdict_agrees"] = (guess["check"] == 1) == refused
    if not refused:
        engine = real["engine"]
        predicted = dict(guess["values"])
        predicted["optimizer.params.lr"] = predicted.get("optimizer.lr")
        for key in ENGINE_KEYS:
            if not _same(key, predicted.get(key), engine.get(key)):
                row["value_mismatches"][key] = {"dsfields": predicted.get(key), "trainer": engine.get(key)}
        read = engine.get("scheduler_params")
        if isinstance(read, dict):  # a witness of this code: the scheduler parameters DeepSpeed read
            for key in SCHEDULER_KEYS:
                leaf = key.rpartition(".")[2]
                if not _same(key, predicted.get(key), read.get(leaf)):
                    row["value_mismatches"][key] = {"dsfields": predicted.get(key), "trainer": read.get(leaf)}
        row["values_compared"] = len(ENGINE_KEYS) + (len(SCHEDULER_KEYS) if isinstance(read, dict) else 0)
        row["scheduler_read"] = {k: v for k, v in (read or {}).items() if f"scheduler.params.{k}" in SCHEDULER_KEYS}
    return row


def configs(limit: int | None, only: str | None = None) -> list[Path]:
    """Configs the Trainer can be handed: JSON objects (hjson-only files are left out); ``only``: comma-separated
    name prefixes (``062_,051_``) to keep."""
    found = []
    prefixes = tuple(p for p in (only or "").split(",") if p)
    for path in sorted(CORPUS.glob("*.json")):
        if prefixes and not path.name.startswith(prefixes):
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(data, dict):
            found.append(path)
    return found[:limit] if limit else found


def catalogue(rows: list[dict]) -> dict[str, int]:
    """The refusals seen, by the first line of the message (mismatch lines listed one by one)."""
    seen: dict[str, int] = {}
    for row in rows:
        if row["trained"] or row["machine"]:
            continue
        lines = row["error"].splitlines()
        keys = [line.split(" vs ")[0].split("=")[0] + " vs " + line.split(" vs hf ")[-1].split("=")[0]
                for line in lines if line.startswith("- ds ")]
        head = lines[0][:110] if lines else "(no message)"
        for key in keys or [""]:
            label = f"{head} {key}".strip()
            seen[label] = seen.get(label, 0) + 1
    return dict(sorted(seen.items(), key=lambda kv: -kv[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N configs of the corpus")
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS), help="argument sets, comma-separated (default: "
                        "the eight one-flag sets; the 180-run sets are matched,sft,warmup_run)")
    parser.add_argument("--only", default=None, help="comma-separated config name prefixes (062_,051_) to run")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    parser.add_argument("--hf-version", default=None,
                        help="passed to check/resolve as --hf-version (default: theirs, the installed pair)")
    parser.add_argument("--assume-fp16", action="store_true",
                        help="where the CPU accelerator says it has no fp16, claim it (torch's CPU fp16 kernels "
                             "train): fp16 runs are judged on the config, and the figures say 'fp16 assumed'")
    args = parser.parse_args(argv)
    from dsfields.extract.hf.trainer_witness import TrainerWitness

    started = time.perf_counter()
    witness = TrainerWitness(assume_fp16=args.assume_fp16)
    rows = []
    for path in configs(args.limit, args.only):
        for name in args.sets.split(","):
            row = compare(path, name, witness, hf_version=args.hf_version)
            rows.append(row)
            if row["verdict_agrees"] is False or row["value_mismatches"]:
                print(json.dumps(row)[:1500], flush=True)
    judged = [r for r in rows if not r["machine"]]
    agree = sum(1 for r in judged if r["verdict_agrees"])
    trained = [r for r in judged if r["trained"] and r["verdict_agrees"]]
    exact = sum(1 for r in trained if not r["value_mismatches"])
    values = sum(r.get("values_compared", len(ENGINE_KEYS)) for r in trained)
    values_right = values - sum(len(r["value_mismatches"]) for r in trained)
    print(f"versions: {json.dumps(witness.versions)}; fp16 on this CPU: {witness.fp16_supported}"
          + ("; fp16 assumed (the accelerator's answer overridden)" if witness.fp16_assumed else ""))
    print(f"runs: {len(rows)} ({len({r['config'] for r in rows})} configs x {len(args.sets.split(','))} sets), "
          f"machine failures {len(rows) - len(judged)}; verdicts agree {agree}/{len(judged)}; "
          f"trained {sum(1 for r in judged if r['trained'])}, refused {sum(1 for r in judged if not r['trained'])}; "
          f"final values agree {exact}/{len(trained)} runs, {values_right}/{values} values; "
          f"{time.perf_counter() - started:.0f} s")
    print("refusals seen:")
    for label, count in catalogue(rows).items():
        print(f"  {count:>4}  {label}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if agree == len(judged) and exact == len(trained) else 1


if __name__ == "__main__":
    sys.exit(main())
