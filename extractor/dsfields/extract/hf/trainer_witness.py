"""The real-Trainer witness: transformers' Trainer + accelerate + DeepSpeed, one training step on CPU.

What :func:`dsfields.hf.trainer.trainer_run` predicts is checked here against the real thing:
``TrainingArguments`` parsed by the real ``HfArgumentParser`` from the same words ``--trainer-args``
takes, a tiny Llama built from a config object (no download), a few random token sequences, world size 1
over gloo, ``DS_ACCELERATOR=cpu``, ``--max_steps 1`` (unless the words give ``--max_steps`` or
``--num_train_epochs``: then as long as they say, over the few examples). Each run is a child forked from
one warm process (torch, transformers, accelerate and DeepSpeed imported once): the Trainer and accelerate keep
process-wide state (``AcceleratorState``, the DeepSpeed config weak reference), so every run starts clean.

Two machine limits are lifted, and only those: transformers refuses ``--bf16`` without a bf16 GPU (this
machine has none: ``is_torch_bf16_gpu_available`` answers yes here; DeepSpeed's CPU accelerator does run
bf16), and whether fp16 runs is the accelerator's answer (``fp16_supported``), so a run that fails on
that is a machine failure, never an agreement.

``python -m dsfields.extract.hf.trainer_witness CONFIG... --trainer-args "..."`` prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

HIDDEN_SIZE = 16
DATASET_SIZE = 8
SEQ_LEN = 8
BASE_WORDS = ["--report_to", "none", "--save_strategy", "no", "--logging_strategy", "no", "--disable_tqdm", "true",
              "--dataloader_num_workers", "0"]
"""Words every run adds: no reporting, saving or logging (they touch neither the config nor the step)."""


PRELOAD = ("ShareMemCommBuilder", "FusedAdamBuilder", "CPUAdamBuilder")


class TrainerWitness:
    """One warm process; :meth:`run` forks a child per (config, arguments)."""

    def __init__(self, assume_fp16: bool = False) -> None:
        """``assume_fp16``: the CPU accelerator claims fp16 support whatever the CPU says (``check --launch``'s
        retry, for the Trainer): fp16 runs then train on torch's CPU fp16 kernels, so the config's path is judged,
        not this CPU; ``fp16_supported`` stays the accelerator's own answer and ``fp16_assumed`` says so."""
        from dsfields.launch.ops import guard_ops_dir, own_extensions_dir

        os.environ["DS_ACCELERATOR"] = "cpu"
        os.environ.setdefault("ACCELERATE_USE_CPU", "false")
        own_extensions_dir()
        guard_ops_dir()
        import logging
        import warnings

        warnings.filterwarnings("ignore")
        import accelerate
        import deepspeed
        import torch
        import transformers
        from deepspeed.accelerator import get_accelerator

        transformers.logging.set_verbosity_error()
        # transformers and DeepSpeed import lazily: what every run reaches is imported once, here.
        import deepspeed.runtime.engine
        import deepspeed.runtime.zero.muon.muon_optimizer  # its torch.compile at import pulls inductor (~5 s)
        import deepspeed.runtime.zero.stage3
        import deepspeed.runtime.zero.stage_1_and_2
        import transformers.integrations.deepspeed
        from accelerate import Accelerator  # noqa: F401
        from transformers import HfArgumentParser, LlamaForCausalLM, Trainer, TrainingArguments  # noqa: F401

        logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
        self.fp16_supported = bool(get_accelerator().is_fp16_supported())  # asked, never assumed
        self.fp16_assumed = bool(assume_fp16 and not self.fp16_supported)
        if self.fp16_assumed:  # the children inherit the claim (forked after this)
            type(get_accelerator()).is_fp16_supported = lambda _self: True  # type: ignore[method-assign]
        # The JIT ops every run would load again (shm comm at the process group, FusedAdam, CPUAdam under
        # offload): loaded once here, the children inherit them (OpBuilder._loaded_ops).
        import contextlib
        import io

        for name in PRELOAD:
            with contextlib.suppress(Exception), contextlib.redirect_stdout(io.StringIO()):
                builder = get_accelerator().create_op_builder(name)
                if builder is not None:
                    builder.load(verbose=False)
        self.versions = {"transformers": transformers.__version__, "accelerate": accelerate.__version__,
                         "deepspeed": deepspeed.__version__, "torch": torch.__version__}
        self.workdir = Path(tempfile.mkdtemp(prefix="dsfields-hf-witness-"))
        # accelerate's free_memory runs gc.collect() in every run: a full pass over torch's and transformers'
        # millions of objects (~1 s). What exists now lives as long as the process: out of the collector's sight.
        import gc

        gc.collect()
        gc.freeze()

    def run(self, config: dict[str, Any], words: list[str], timeout: float = 120.0) -> dict[str, Any]:
        """The real Trainer's verdict: ``{"trained": bool, "error"?, "engine"?}``."""
        import time

        started = time.perf_counter()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one run, its answer on the pipe, then gone without cleanup handlers
            os.close(read)
            try:
                answer = _one_run(config, words, self.workdir)
            except BaseException as exc:
                answer = {"trained": False, "error": {"type": type(exc).__name__, "message": str(exc),
                                                      "where": traceback.format_exc(limit=-3)}}
            with os.fdopen(write, "w") as out:
                out.write(json.dumps(answer, default=str))
            os._exit(0)
        os.close(write)
        import select

        chunks = []
        with os.fdopen(read) as handle:
            ready, _, _ = select.select([handle], [], [], timeout)
            if ready:
                chunks.append(handle.read())
        if not chunks:
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        text = "".join(chunks)
        if not text:
            return {"trained": False, "machine": True, "error": {"type": "Timeout", "message": "no answer"}}
        return {**json.loads(text), "seconds": round(time.perf_counter() - started, 2)}


def _one_run(config: dict[str, Any], words: list[str], workdir: Path) -> dict[str, Any]:
    from dsfields.launch.launcher import free_port

    for name, value in (("MASTER_ADDR", "127.0.0.1"), ("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"),
                        ("LOCAL_WORLD_SIZE", "1"), ("MASTER_PORT", str(free_port()))):
        os.environ[name] = value
    import torch
    import transformers.training_args as training_args
    from transformers import HfArgumentParser, LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

    training_args.is_torch_bf16_gpu_available = lambda: True  # the one machine limit lifted (see the docstring)
    run_dir = Path(tempfile.mkdtemp(dir=workdir))
    # DeepSpeed writes some files relative to the working folder (autotuning's autotuning_metric.json and
    # autotuning_model_info.json when no path is set): the child works inside its own temp folder.
    os.chdir(run_dir)
    config_path = run_dir / "ds_config.json"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    parser = HfArgumentParser(TrainingArguments)
    # one step, unless the words say how long (an epoch over the DATASET_SIZE examples: num_training_steps)
    steps = [] if {"--max_steps", "--num_train_epochs"} & set(words) else ["--max_steps", "1"]
    (args,) = parser.parse_args_into_dataclasses(
        args=[*words, "--output_dir", str(run_dir), "--deepspeed", str(config_path), *steps, *BASE_WORDS],
        return_remaining_strings=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(hidden_size=HIDDEN_SIZE, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2, vocab_size=64,
                                         max_position_embeddings=SEQ_LEN))
    data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 64, (DATASET_SIZE, SEQ_LEN))]
    trainer = Trainer(model=model, args=args, train_dataset=data)
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # the Trainer prints its metrics
        trainer.train()
    engine = trainer.model_wrapped
    basic = getattr(engine, "basic_optimizer", None)
    optimizer = basic if basic is not None else getattr(engine, "optimizer", None)
    sched = getattr(trainer, "lr_scheduler", None)
    ds_sched = getattr(engine, "lr_scheduler", None)
    built = ds_sched if ds_sched is not None else sched
    return {"trained": True, "engine": {
        "fp16.enabled": bool(engine.fp16_enabled()), "bf16.enabled": bool(engine.bfloat16_enabled()),
        "train_micro_batch_size_per_gpu": engine.train_micro_batch_size_per_gpu(),
        "gradient_accumulation_steps": engine.gradient_accumulation_steps(),
        "train_batch_size": engine.train_batch_size(), "gradient_clipping": engine.gradient_clipping(),
        "optimizer.params.lr": (optimizer.defaults.get("lr") if optimizer is not None else None),
        "optimizer.class": _qualname(optimizer), "scheduler.class": _qualname(built),
        "scheduler.params.total_num_steps": getattr(built, "total_num_steps", None),
        # the scheduler's parameters as DeepSpeed read them from the config the Trainer handed it (the Trainer's
        # warmup and step fills; its schedulers then keep max(2, warmup_num_steps) themselves)
        "scheduler_params": dict(engine.scheduler_params() or {})}}


def _qualname(obj: Any) -> str | None:
    if obj is None:
        return None
    cls = type(obj)
    return f"{cls.__module__}.{cls.__name__}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.hf.trainer_witness",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--trainer-args", default="", help="the Trainer's flags, as one string")
    args = parser.parse_args(argv)
    witness = TrainerWitness()
    for path in args.configs:
        answer = witness.run(json.loads(path.read_text(encoding="utf-8")), shlex.split(args.trainer_args))
        print(json.dumps({"config": str(path), **answer}), flush=True)
    print(json.dumps({"versions": witness.versions, "fp16_supported": witness.fp16_supported}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
