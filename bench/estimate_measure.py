"""Measure ``dsfields estimate`` against what DeepSpeed really allocates (issue 40).

CPU mode (the default): one process plays rank 0 of a world of N ranks through torch's fake process group
(``torch.testing._internal.distributed.fake_pg``: collectives return at once, nothing is exchanged), builds the
engine with ``deepspeed.initialize`` for small real-architecture models (Llama, Qwen2, GPT-2 configs from
transformers, random weights, nothing downloaded), takes one optimizer step so that the optimizer states exist, and
counts the model-state bytes rank 0 holds: its flat 16-bit parameters, its fp32 master partition, the optimizer's
states, and at stage 3 with hpZ the secondary partition (after forward, before the step invalidates it). The fp32
gradient partition exists only inside the step and is not measured. Each is compared with the matching share of
``estimate``'s model states (DeepSpeed's estimator formula: 2 B/param of 16-bit params, 18 B/param partitioned =
4 master + 8 Adam + 4 fp32 gradients + 2 16-bit gradients) and with its hpZ term, and the error printed per term
and configuration; each row also checks that those shares add up to ``estimate``'s GPU figure.

CUDA mode (``--cuda``): a few real training steps on one GPU; ``torch.cuda.max_memory_allocated`` and
``max_memory_reserved`` against ``estimate``'s GPU total. Skips (exit 0, one line) without CUDA.

Usage::

    python bench/estimate_measure.py                    # the CPU grid, a table
    python bench/estimate_measure.py --json              # the grid as JSON lines
    python bench/estimate_measure.py --one --world 8 --stage 3 --hpz 4 --model qwen2
    python bench/estimate_measure.py --one --world 8 --stage 2 --tp 8 --hpz 1 --model llama   # AutoTP
    python bench/estimate_measure.py --cuda

Each configuration runs in its own subprocess (the fake group and DeepSpeed's globals are per process).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MODELS = ("llama", "qwen2", "gpt2")
GRID = [(model, world, stage, offload) for model in ("llama", "gpt2") for world in (1, 8) for stage in (1, 2, 3)
        for offload in (False, True)]
"""The default grid: two architectures × N ∈ {1, 8} × ZeRO 1-3 × optimizer offload."""
TP_GRID = [(model, 8, stage, offload, tp) for model in ("llama", "qwen2") for stage in (1, 2, 3)
           for offload in (False, True) for tp in (2, 8)]
"""The AutoTP rows at N = 8: autotp_size 2 (attention split evenly over the 2 key/value heads) and 8 (more ranks
than key/value heads: rank 0 holds one of the two). GPT-2 is not in it: AutoTP refuses it (a kernel-injection
policy exists for it). AutoTP rows take no step (see :func:`measure_cpu`): their optimizer states are not
measured."""


def build_model(name: str) -> Any:
    """A small model of a real architecture, random weights, nothing downloaded."""
    import torch
    import transformers

    torch.manual_seed(0)
    if name == "llama":
        config = transformers.LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                                          num_attention_heads=4, num_key_value_heads=2, vocab_size=4096,
                                          max_position_embeddings=256)
        return transformers.LlamaForCausalLM(config)
    if name == "qwen2":
        config = transformers.Qwen2Config(hidden_size=256, intermediate_size=704, num_hidden_layers=4,
                                          num_attention_heads=4, num_key_value_heads=2, vocab_size=4096,
                                          max_position_embeddings=256)
        return transformers.Qwen2ForCausalLM(config)
    if name == "gpt2":
        config = transformers.GPT2Config(n_embd=256, n_layer=4, n_head=4, vocab_size=4096, n_positions=256)
        return transformers.GPT2LMHeadModel(config)
    raise SystemExit(f"estimate_measure: unknown model {name!r} (one of {', '.join(MODELS)})")


def ds_config(stage: int, offload: bool, hpz: int = 1, tp: int = 1) -> dict[str, Any]:
    zero: dict[str, Any] = {"stage": stage}
    if offload:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": False}
    if hpz > 1 and stage == 3:
        zero["zero_hpz_partition_size"] = hpz
    config = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
              "zero_optimization": zero, "zero_force_ds_cpu_optimizer": False,
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}}}
    if tp > 1:
        config["tensor_parallel"] = {"autotp_size": tp}
    return config


def _numel_bytes(tensors: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def measure_cpu(model_name: str, world: int, stage: int, offload: bool, hpz: int = 1, tp: int = 1) -> dict[str, Any]:
    """Rank 0's model-state bytes as DeepSpeed allocated them, in this process (the fake group is per process)."""
    os.environ.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": str(world), "LOCAL_SIZE": str(world),
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29599", "DS_ACCELERATOR": "cpu"})
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    import deepspeed

    # the shared-memory all-reduce would wait for N real processes (``deepspeed.comm.torch`` by its module name:
    # the package's attribute ``torch`` is torch itself)
    sys.modules["deepspeed.comm.torch"].build_shm_op = lambda: None  # type: ignore[attr-defined]
    deepspeed.init_distributed(dist_backend="gloo" if world == 1 else None)
    model = build_model(model_name)
    params = sum(p.numel() for p in model.parameters())
    largest = max(p.numel() for p in model.parameters())
    shape = model_shape(model.config)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                   config=ds_config(stage, offload, hpz, tp))
    secondary_after_forward = 0
    if tp == 1:  # AutoTP checks its group's batches agree, which the fake group cannot answer: no step under it
        tokens = torch.randint(0, 4096, (1, 16))
        loss = engine(input_ids=tokens, labels=tokens).loss
        secondary_after_forward = _numel_bytes(p.ds_secondary_tensor for p in model.parameters()
                                               if getattr(p, "ds_secondary_tensor", None) is not None)
        engine.backward(loss)
        engine.step()
    opt = engine.optimizer
    measured: dict[str, int] = {}
    if stage in (1, 2):
        measured["params16"] = _numel_bytes(opt.bit16_groups_flat)
        fp32 = opt.single_partition_of_fp32_groups
    else:
        measured["params16"] = _numel_bytes(opt.fp16_partitioned_groups_flat)
        fp32 = opt.fp32_partitioned_groups_flat
    measured["fp32_master"] = _numel_bytes(fp32)
    states = [s for p in fp32 for s in opt.optimizer.state.get(p, {}).values()
              if isinstance(s, torch.Tensor) and s.dim() > 0]
    if tp == 1:
        measured["optimizer_states"] = _numel_bytes(states)
    if hpz > 1 and stage == 3:  # made when forward releases each module's params; the step invalidates them
        measured["hpz_secondary"] = secondary_after_forward
    return {"params": params, "largest": largest, "shape": shape, "measured": measured}


def model_shape(config: Any) -> dict[str, int]:
    """What ``estimate`` is told of the model's shape (its ``--hidden-size --layers --heads --kv-heads
    --vocab-size``), read from the transformers config."""
    heads = config.num_attention_heads
    return {"hidden": config.hidden_size, "layers": config.num_hidden_layers, "heads": heads,
            "kv_heads": getattr(config, "num_key_value_heads", None) or heads, "vocab": config.vocab_size}


def estimated(params: int, largest: int, world: int, stage: int, offload: bool, hpz: int = 1,
              tp: int = 1, shape: dict[str, int] | None = None) -> dict[str, Any]:
    """``dsfields estimate``'s model states for the same situation, split as DeepSpeed's estimator counts them."""
    sys.path.insert(0, str(REPO / "extractor"))
    from dsfields.estimate import Model, compute, local_params, settings_from_config
    from dsfields.model.store import load
    from dsfields.resolve import Resolver

    shape = shape or {}
    model = Model(params=params, largest_layer=largest, gpus_per_node=world, hidden=shape.get("hidden"),
                  layers=shape.get("layers"), heads=shape.get("heads"), kv_heads=shape.get("kv_heads"),
                  vocab=shape.get("vocab"))
    settings, _, _ = settings_from_config(ds_config(stage, offload, hpz, tp), Resolver(load("0.19.8")), model, [])
    est = compute(settings, model)
    n = world // tp  # the data-parallel ranks ZeRO partitions over
    params = local_params(settings, model)  # tensor-parallel rank 0's share, as estimate counts it
    split = {"params16": 2 * params if stage < 3 else 2 * params // n,
             "fp32_master": 4 * params // n, "optimizer_states": 8 * params // n, "fp32_gradients": 4 * params // n}
    hpz_bytes = {t.name: t.bytes for t in est.buffers}.get("hpz_secondary_partition") if stage == 3 else None
    if hpz_bytes is not None:
        split["hpz_secondary"] = hpz_bytes
    # what estimate's GPU figure holds beyond the measured terms: the 16-bit gradients (stage 1 whole, stage 2 a
    # partition; transient in backward) and, at stage 3, the gathered largest layer (4 B/param, transient)
    on_gpu = split["params16"] + (0 if offload else split["fp32_master"] + split["optimizer_states"]
                                  + split["fp32_gradients"])
    transient = {1: 0 if offload else 2 * params, 2: 0 if offload else 2 * params // n, 3: 4 * largest}[stage]
    return {"split": split, "gpu_model_states": est.gpu_model_states, "cpu_model_states_per_node":
            est.cpu_model_states, "gpu_split_plus_transient": on_gpu + transient}


def one(args: argparse.Namespace) -> dict[str, Any]:
    if args.tp > 1 and args.hpz > 1 and args.stage == 3:
        raise SystemExit("estimate_measure: AutoTP rows take no step, so hpZ's secondary partition (made in forward) "
                         "cannot be measured with them: give --hpz 1 with --tp")
    got = measure_cpu(args.model, args.world, args.stage, args.offload, args.hpz, args.tp)
    est = estimated(got["params"], got["largest"], args.world, args.stage, args.offload, args.hpz, args.tp,
                    got["shape"])
    errors = {k: (got["measured"][k] - v) / v if v else 0.0 for k, v in est["split"].items() if k in got["measured"]}
    # over the terms measured (the fp32 gradient partition lives only inside the step: shown estimated, not compared)
    total_measured = sum(got["measured"].values())
    total_estimated = sum(v for k, v in est["split"].items() if k in got["measured"])
    return {"model": args.model, "world": args.world, "stage": args.stage, "offload": args.offload,
            "hpz": args.hpz if args.stage == 3 else 1, "tp": args.tp,
            "params": got["params"], "measured": got["measured"], "estimated": est["split"], "errors": errors,
            "total_measured": total_measured, "total_estimated": total_estimated,
            "estimate_gpu_model_states": est["gpu_model_states"],
            "estimate_consistent": abs(est["gpu_split_plus_transient"] - est["gpu_model_states"])
            <= max(16, est["gpu_model_states"] // 10**6),
            "total_error": (total_measured - total_estimated) / total_estimated}


def run_grid(grid: list[tuple[str, int, int, bool]], hpz: int,
             tp_grid: list[tuple[str, int, int, bool, int]] | None = None) -> list[dict[str, Any]]:
    """Each configuration in its own process; at stage 3 and N > 1 also with hpZ (``hpz`` > 1), with and without
    optimizer offload; then the AutoTP rows (without hpZ)."""
    runs = [(m, w, s, o, 1, 1) for m, w, s, o in grid] + [(m, w, s, o, hpz, 1) for m, w, s, o in grid
                                                          if hpz > 1 and s == 3 and w > 1]
    runs += [(m, w, s, o, 1, tp) for m, w, s, o, tp in tp_grid or []]
    rows = []
    for model, world, stage, offload, h, tp in runs:
        command = [sys.executable, __file__, "--one", "--model", model, "--world", str(world), "--stage", str(stage),
                   "--hpz", str(h), "--tp", str(tp)] + (["--offload"] if offload else [])
        done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONPATH": str(REPO / "extractor")})
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append({"model": model, "world": world, "stage": stage, "offload": offload, "hpz": h, "tp": tp,
                         "error": tail})
            continue
        rows.append(json.loads(lines[-1]))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = ["model  N  stage offload hpz tp  params16  fp32_master  optim_states  hpz_sec    total"]
    for r in rows:
        if "error" in r:
            out.append(f"{r['model']:<6} {r['world']:>2}  {r['stage']}     {r['offload']!s:<7} failed: {r['error']}")
            continue
        def pct(key: str, e: dict[str, float] = r["errors"]) -> str:
            return f"{e[key] * 100:+.2f}%" if key in e else "-"

        out.append(f"{r['model']:<6} {r['world']:>2}  {r['stage']}     {r['offload']!s:<7} {r['hpz']:<3} {r['tp']:<2} "
                   f"{pct('params16'):>9} {pct('fp32_master'):>11} {pct('optimizer_states'):>13} "
                   f"{pct('hpz_secondary'):>8} {r['total_error'] * 100:+7.2f}%")
    return "\n".join(out)


def cuda_mode() -> int:
    """A few training steps on one GPU: the real peak against estimate's GPU total; skips without CUDA."""
    import torch

    if not torch.cuda.is_available():
        print("estimate_measure: no CUDA device: the CUDA mode is skipped")
        return 0
    os.environ.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": "29598"})
    import deepspeed

    sys.path.insert(0, str(REPO / "extractor"))
    from dsfields.estimate import Model, compute, settings_from_config
    from dsfields.model.store import load
    from dsfields.resolve import Resolver

    for stage in (1, 2, 3):
        torch.cuda.reset_peak_memory_stats()
        model = build_model("llama")
        config = ds_config(stage, False) | {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
        for _ in range(3):
            tokens = torch.randint(0, 4096, (1, 128), device=engine.device)
            engine.backward(engine(input_ids=tokens, labels=tokens).loss)
            engine.step()
        params = sum(p.numel() for p in model.parameters())
        largest = max(p.numel() for p in model.parameters())
        shape = Model(params=params, largest_layer=largest, hidden=256, layers=4, seq_len=128, micro_batch=1, heads=4)
        settings, _, _ = settings_from_config(config, Resolver(load("0.19.8")), shape, [])
        total = compute(settings, shape).gpu_total()
        peak, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
        print(json.dumps({"stage": stage, "estimate": total, "max_memory_allocated": peak,
                          "max_memory_reserved": reserved, "error": (total - peak) / peak}))
        del engine
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", action="store_true", help="measure one configuration in this process (JSON)")
    parser.add_argument("--model", default="llama", choices=MODELS)
    parser.add_argument("--world", type=int, default=1)
    parser.add_argument("--stage", type=int, default=2, choices=(1, 2, 3))
    parser.add_argument("--offload", action="store_true")
    parser.add_argument("--hpz", type=int, default=4, help="zero_hpz_partition_size of the hpZ runs (default 4)")
    parser.add_argument("--tp", type=int, default=1, help="tensor_parallel.autotp_size (with --one)")
    parser.add_argument("--json", action="store_true", help="the grid as JSON lines")
    parser.add_argument("--cuda", action="store_true", help="the CUDA mode (skips without CUDA)")
    args = parser.parse_args(argv)
    if args.cuda:
        return cuda_mode()
    if args.one:
        print(json.dumps(one(args)))
        return 0
    rows = run_grid(GRID, args.hpz, TP_GRID)
    print("\n".join(json.dumps(r) for r in rows) if args.json else table(rows))
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
