"""Is `dsfields check` as quick as the checks people do by hand? Median wall times against two of them.

Runs, alternating within each round so that machine load hits all three alike:
  (a) dsfields check --hf <typical ZeRO-3 config>          (console script if on PATH, else python -m)
  (b) grep -rn '"stage3_max_live_parameters"' <installed deepspeed package>   (checking ONE key by hand)
  (c) python -c "from deepspeed.runtime.config import DeepSpeedConfig; DeepSpeedConfig(<config>)"
      (asking DeepSpeed itself, import included; "auto" filled as the HF Trainer would)
and prints the medians with the ratios check/grep (target <= 1.2) and python-c/check.

    PYTHONPATH=extractor python bench/check.py [--rounds N] [--skip-python]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import alternate

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.2
"""check may take at most this many times grep's wall time."""

# A typical HF-Trainer ZeRO-3 config (the shape of the seeds' template B, with optimizer/scheduler).
TYPICAL = {
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "train_batch_size": "auto",
    "gradient_clipping": "auto",
    "bf16": {"enabled": "auto"},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
    "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                      "warmup_num_steps": "auto", "total_num_steps": "auto"}},
    "zero_optimization": {
        "stage": 3,
        "offload_optimizer": {"device": "cpu", "pin_memory": True},
        "offload_param": {"device": "cpu", "pin_memory": True},
        "overlap_comm": True,
        "contiguous_gradients": True,
        "sub_group_size": 1e9,
        "reduce_bucket_size": "auto",
        "stage3_prefetch_bucket_size": "auto",
        "stage3_param_persistence_threshold": "auto",
        "stage3_max_live_parameters": 1e9,
        "stage3_max_reuse_distance": 1e9,
        "stage3_gather_16bit_weights_on_model_save": True,
    },
}
# What DeepSpeed gets once the HF Trainer has filled the "auto"s (one GPU).
FILLED = json.loads(json.dumps(TYPICAL).replace('"auto"', "1").replace('"betas": 1', '"betas": [0.9, 0.999]'))
FILLED["bf16"]["enabled"] = True


def check_command(path: Path) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # let the warm-up round write bytecode, as an install would
    script = shutil.which("dsfields")
    if script:
        return [script, "check", "--hf", str(path)], env
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "extractor"), env.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "dsfields", "check", "--hf", str(path)], env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (one warm-up round more)")
    parser.add_argument("--skip-python", action="store_true", help="leave out (c), which imports torch")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "ds_config.json"
        config.write_text(json.dumps(TYPICAL, indent=2), encoding="utf-8")
        filled = Path(tmp) / "filled.json"
        filled.write_text(json.dumps(FILLED), encoding="utf-8")
        check, check_env = check_command(config)
        source = str(alternate.deepspeed_dir("bench/check.py"))
        commands: alternate.Commands = {
            "check": (check, check_env),
            "grep": (["grep", "-rn", '"stage3_max_live_parameters"', source], dict(os.environ)),
        }
        if not opts.skip_python:
            code = f"from deepspeed.runtime.config import DeepSpeedConfig; DeepSpeedConfig({str(filled)!r})"
            commands["python -c"] = ([sys.executable, "-c", code], dict(os.environ) | {"DS_ACCELERATOR": "cpu"})

        found = alternate.medians("bench/check.py", commands, opts.rounds, ok_codes=(0, 1))
    alternate.report(commands, found, "check", "grep", TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
