"""The per-release programs (optimizer swapped in, num_training_steps) against the real Trainer of the installed pair.

The corpus differential (bench/hf_trainer_differential.py) trains one step with the default ``--optim``; what the
release programs add — the class ``--optim`` builds and accelerate's ZeRO-Offload swap for it, and
``num_training_steps`` from the epochs over a dataset — is run here: a few configs with an ``"auto"``
``WarmupDecayLR.total_num_steps`` and an offloaded optimizer, trained over whole epochs of the witness's
``DATASET_SIZE`` examples, each run compared with ``resolve --trainer-args ... --dataset-size N``.

    PYTHONPATH=extractor python bench/hf_release_rules.py          # the installed transformers / accelerate
    PYTHONPATH=/tmp/hfpair:extractor python bench/hf_release_rules.py    # another pair (see README)

``check`` must exit 1 exactly where the Trainer refused; and TrainingArguments' own checks (``REFUSALS``) must
raise the message ``check`` quotes, word for word. Prints one JSON line per run and the agreement; exits 1
on any disagreement.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hf_trainer_differential import HIDDEN, _dsfields, _same

SCHEDULED = {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
             "train_batch_size": "auto", "zero_optimization": {"stage": 2},
             "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto", "warmup_num_steps": "auto",
                                                               "warmup_max_lr": "auto", "warmup_min_lr": "auto"}}}
OFFLOAD = {**SCHEDULED, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
EPOCHS = "--warmup_steps 1 --num_train_epochs"
RUNS = [  # --warmup_steps 1: 4.x fills warmup_num_steps with 0 without it, which DeepSpeed 0.19.6+ refuses
    # a partial accumulation window at the end of an epoch: an update from 4.52 on (ceil), not before (floor)
    (SCHEDULED, f"{EPOCHS} 1 --gradient_accumulation_steps 3 --per_device_train_batch_size 1"),
    (SCHEDULED, f"{EPOCHS} 2 --gradient_accumulation_steps 5 --per_device_train_batch_size 1"),
    (SCHEDULED, f"{EPOCHS} 1 --gradient_accumulation_steps 3 --per_device_train_batch_size 2"),
    (OFFLOAD, "--warmup_steps 1 --max_steps 2 --optim adamw_torch"),
    (OFFLOAD, "--warmup_steps 1 --max_steps 2 --optim adagrad"),
    (OFFLOAD, "--warmup_steps 1 --max_steps 2 --optim sgd"),
]
REFUSALS = ["--fp16 --bf16", "--warmup_steps -1", "--warmup_ratio 1.5", "--lr_scheduler_type reduce_lr_on_plateau",
            "--dataloader_prefetch_factor 2", "--fp16_full_eval --bf16_full_eval"]
"""TrainingArguments checks the words alone decide (none that the witness's own words, BASE_WORDS, change): the
Trainer's message must be the one ``check`` quotes; a flag the release lacks (``--warmup_ratio`` in 5.x) is left
out, as HfArgumentParser refuses it."""
KEYS = ("optimizer.class", "scheduler.class", "scheduler.params.total_num_steps", "train_batch_size",
        "gradient_accumulation_steps")


def main() -> int:
    from dsfields.extract.hf.trainer_witness import DATASET_SIZE, TrainerWitness

    witness = TrainerWitness()
    agree = judged = verdicts = 0
    with tempfile.TemporaryDirectory() as tmp:
        for index, (config, words) in enumerate(RUNS):
            path = Path(tmp) / f"c{index}.json"
            path.write_text(json.dumps(config), encoding="utf-8")
            real = witness.run(config, shlex.split(words))
            common = [str(path), f"--trainer-args={words}", "--hidden-size", str(HIDDEN), "--dataset-size",
                      str(DATASET_SIZE)]
            check, _ = _dsfields(["check", *common])
            _code, out = _dsfields(["resolve", *common, "--format", "json"])
            guess = {k: (json.loads(out).get(k) or {}).get("value") for k in KEYS} if out.strip() else {}
            row = {"words": words, "trained": real.get("trained"), "check": check,
                   "error": (real.get("error") or {}).get("message")}
            verdicts += (check == 1) == (not real.get("trained"))
            if real.get("trained"):
                judged += 1
                engine = real["engine"]
                row["mismatch"] = {k: {"dsfields": guess.get(k), "trainer": engine.get(k)} for k in KEYS
                                   if k in engine and not _same(k, guess.get(k), engine.get(k))}
                agree += not row["mismatch"]
            print(json.dumps(row)[:1200], flush=True)
    messages = same = 0
    for words in REFUSALS:
        predicted = _refusal(words)
        if predicted == "":  # a flag this release lacks
            continue
        real = witness.run(SCHEDULED, [*shlex.split(words), "--max_steps", "1"])
        actual = (real.get("error") or {}).get("message") if not real.get("trained") else None
        messages += 1
        same += predicted == actual
        print(json.dumps({"words": words, "dsfields": predicted, "trainer": actual})[:800], flush=True)
    print(f"versions: {json.dumps(witness.versions)}; verdicts agree {verdicts}/{len(RUNS)}; trained {judged}, "
          f"values agree {agree}/{judged}; TrainingArguments refusals quoted exactly {same}/{messages}")
    return 0 if judged and agree == judged and verdicts == len(RUNS) and same == messages else 1


def _refusal(words: str) -> str | None:
    """The message ``check`` predicts for TrainingArguments on ``words`` (None: none; "": a flag this release
    lacks)."""
    import argparse

    from dsfields.hf.arguments import from_cli
    from dsfields.hf.trainer import trainer_run

    ns = argparse.Namespace(trainer_args=words + " --max_steps 1", hidden_size=HIDDEN, model_config=None,
                            hf_version=None, accelerate_config=None, world_size=None, dataset_size=None)
    args, accelerate = from_cli(ns)
    if args.unknown:
        return ""
    run = trainer_run(SCHEDULED, args, accelerate)
    return None if run.error is None else str(run.error)


if __name__ == "__main__":
    raise SystemExit(main())
