"""``dsfields init``: a ds_config for a situation (model, GPUs, nodes, HF Trainer or not), chosen by the estimate.

The candidates go from the cheapest in compute to the dearest (ZeRO-1, 2, 3; then the same with activation
checkpointing; then optimizer offload; then parameter offload too); the first that :mod:`dsfields.estimate` says
fits is written, every choice explained in English and Chinese. Every value not chosen is left out of the file, so
DeepSpeed uses its own default for the chosen release (read from the snapshot when the explanation names it).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dsfields.estimate import (
    RESERVE,
    Model,
    _one_line_error,
    compute,
    count,
    gib,
    gpu_memory,
    settings_from_config,
)
from dsfields.model import chinese, prose
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.store import load_requested
from dsfields.resolve import Resolver

NO_BF16 = ("v100", "t4", "p100", "rtx2080", "2080")
"""GPUs (names as ``--gpu-memory`` takes them) without bf16: fp16 is chosen there (ours: vendors' data
sheets)."""

ASSUMED_VOCAB = 32_000
"""Vocabulary assumed for ``--params`` without ``--model-config`` (Llama-2's): the embedding as the largest layer."""


LEARNING_RATE = 1e-4
"""The optimizer section's lr in a plain-DeepSpeed config (ours, said: set your own)."""


@dataclass(frozen=True)
class Candidate:
    """One way to run: ZeRO stage, offloads, activation checkpointing, in order of compute cost."""

    stage: int
    checkpointing: bool = False
    offload_optimizer: bool = False
    offload_param: bool = False


CANDIDATES = (
    Candidate(1), Candidate(2), Candidate(3),
    Candidate(1, True), Candidate(2, True), Candidate(3, True),
    Candidate(2, True, True), Candidate(3, True, True), Candidate(3, True, True, True),
)
"""Cheapest in compute first: ZeRO-1 < 2 < 3 in communication; checkpointing costs ~33% more compute; offload
moves the optimizer step (then every parameter) over PCIe."""


@dataclass(frozen=True)
class Shape:
    """What the estimate needs of the model."""

    params: int
    hidden: int
    layers: int
    heads: int | None
    largest: int
    source: str
    source_zh: str


def shape_from_params(params: int) -> Shape:
    """A Llama-like shape for ``params`` (P ≈ 12·L·h² with L ≈ h/128): ours, said in the explanation."""
    hidden = max(256, round((params * 128 / 12) ** (1 / 3) / 256) * 256)
    layers = max(1, round(params / (12 * hidden * hidden)))
    largest = max(4 * hidden * hidden, ASSUMED_VOCAB * hidden)
    return Shape(params, hidden, layers, None, largest,
                 f"--params {params}: a Llama-like shape assumed (hidden {hidden}, {layers} layers, vocabulary "
                 f"{ASSUMED_VOCAB}); give --model-config for the real one",
                 chinese.text("init.params_a_llama_like_shape_assumed", params=params, hidden=hidden, layers=layers,
                              ASSUMED_VOCAB=ASSUMED_VOCAB))


def shape_from_config(path: Path) -> Shape:
    """The shape of an HF ``config.json``: hidden size, layers, heads, vocabulary, MLP width; the parameter count
    of a decoder of that shape (gated MLP for Llama-family model types)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--model-config {path}: {exc.__class__.__name__}: not a readable JSON file") from None
    if not isinstance(data, dict):
        raise UsageError(f"--model-config {path}: not a JSON object")

    def number(*keys: str) -> int | None:
        for key in keys:
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**7:
                return value
        return None

    hidden = number("hidden_size", "n_embd", "d_model")
    layers = number("num_hidden_layers", "n_layer", "num_layers")
    heads = number("num_attention_heads", "n_head")
    vocab = number("vocab_size") or ASSUMED_VOCAB
    if hidden is None or layers is None:
        raise UsageError(f"--model-config {path}: no hidden_size / num_hidden_layers (an HF model's config.json)")
    inter = number("intermediate_size", "n_inner", "ffn_dim") or 4 * hidden
    kv = number("num_key_value_heads") or heads or 1
    gated = str(data.get("model_type", "")).lower() in ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2",
                                                        "mixtral", "phi3", "yi", "deepseek_v2", "olmo2")
    attention = hidden * hidden * 2 + 2 * hidden * (hidden * kv // (heads or 1))
    mlp = (3 if gated else 2) * hidden * inter
    tied = data.get("tie_word_embeddings", not gated) is True
    params = layers * (attention + mlp + 2 * hidden) + vocab * hidden * (1 if tied else 2)
    largest = max(vocab * hidden, hidden * inter)
    return Shape(params, hidden, layers, heads, largest,
                 f"--model-config {path.name}: hidden {hidden}, {layers} layers, vocabulary {vocab}, "
                 f"about {params / 1e9:.2f}B parameters",
                 chinese.text("init.model_config_hidden_layers_vocabulary_about", path_name=path.name, hidden=hidden,
                              layers=layers, vocab=vocab, params_1e9=params / 1e9))


HF_CLIPPING = "gradient_clipping"
"""Under the HF Trainer, "auto" here is filled from its ``--max_grad_norm`` (left out, the Trainer's flag would not
reach DeepSpeed: accelerate leaves clipping to DeepSpeed)."""

HF_SAVE_16BIT = "zero_optimization.stage3_gather_16bit_weights_on_model_save"
"""Under the HF Trainer at ZeRO-3, true makes ``save_model`` write the whole 16-bit weights gathered from every rank;
the release's default (false) saves ZeRO's partitioned checkpoint and a model file of placeholders."""


def build_config(candidate: Candidate, precision: str, micro: int, hf: bool, fields: Any = (),
                 overlap: bool = False) -> dict[str, Any]:
    """The ds_config for one candidate: only what is chosen; the rest is the release's default. ``fields``: the
    release's field paths (a key the release lacks is not written); ``overlap``: ``overlap_comm`` on at stage 1/2."""
    auto = "auto"
    zero: dict[str, Any] = {"stage": candidate.stage}
    if overlap and candidate.stage in (1, 2):
        zero["overlap_comm"] = True
    if candidate.offload_optimizer:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if candidate.offload_param:
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    if hf and candidate.stage == 3:
        zero.update({"reduce_bucket_size": auto, "stage3_prefetch_bucket_size": auto,
                     "stage3_param_persistence_threshold": auto})
        if HF_SAVE_16BIT in fields:
            zero[HF_SAVE_16BIT.rpartition(".")[2]] = True
    config: dict[str, Any] = {
        "train_micro_batch_size_per_gpu": auto if hf else micro,
        "gradient_accumulation_steps": auto if hf else 1,
    }
    if hf and HF_CLIPPING in fields:
        config[HF_CLIPPING] = auto
    if precision in ("bf16", "fp16"):
        config[precision] = {"enabled": auto if hf else True}
    config["zero_optimization"] = zero
    if hf:
        config["train_batch_size"] = auto
    else:  # ZeRO 1 and 2 need one (engine.py:2659); Adam-style is what the estimate counts
        config["optimizer"] = {"type": "AdamW", "params": {"lr": LEARNING_RATE}}
    return config


def explain(candidate: Candidate, chosen_why: str, hf: bool, precision: str, micro: int, lang: str,
            config: dict[str, Any] | None = None) -> list[str]:
    """One line per choice, in ``lang``."""
    zh = lang == "zh"
    zero = (config or {}).get("zero_optimization", {})
    stage = {1: ("ZeRO-1: only the optimizer states are partitioned (the least communication)",
                 chinese.text("init.zero_only_the_optimizer_states_are")),
             2: ("ZeRO-2: optimizer states and gradients partitioned",
                 chinese.text("init.zero_optimizer_states_and_gradients_partitioned")),
             3: ("ZeRO-3: parameters partitioned too, gathered layer by layer (about 1.5× ZeRO-2's traffic)",
                 chinese.text("init.zero_parameters_partitioned_too_gathered_layer"))}[candidate.stage]
    lines = [f"zero_optimization.stage {candidate.stage}: " + (stage[1] if zh else stage[0])]
    if zero.get("overlap_comm") is True:
        lines.append("zero_optimization.overlap_comm true: " + (
            chinese.text("init.gradient_reduction_overlaps_the_backward_pass") if zh else
            "gradient reduction overlaps the backward pass (faster); it costs a second reduce bucket, counted by "
            "the estimate, and still fits"))
    if candidate.offload_optimizer:
        lines.append("zero_optimization.offload_optimizer.device cpu: " + (
            chinese.text("init.optimizer_states_and_step_in_host") if zh else
            "optimizer states and step in host memory on the CPU (DeepSpeedCPUAdam); needs the host memory shown"))
    if candidate.offload_param:
        lines.append("zero_optimization.offload_param.device cpu: " + (
            chinese.text("init.parameters_in_host_memory_too_copied") if zh else
            "parameters in host memory too, copied in over PCIe before each use (the slowest)"))
    if candidate.checkpointing:
        if hf:
            head = (chinese.text("init.gradient_checkpointing_trainer_flag") if zh else
                    "--gradient_checkpointing (Trainer flag): ")
        else:
            head = (chinese.text("init.activation_checkpointing_turn_it_on_in") if zh else
                    "activation checkpointing (turn it on in the model's code, deepspeed.checkpointing.checkpoint): ")
        lines.append(head + (chinese.text("init.needed_to_fit_about_more_compute") if zh else
                             "needed to fit; about 33% more compute per step"))
    words = {"bf16": (chinese.text("init.gpu_bf16"), "the GPU has bf16: no loss scaling"),
             "fp16": (chinese.text("init.gpu_bf16_fp16"), "no bf16 on this GPU: fp16 with dynamic loss scaling"),
             "fp32": (chinese.text("init.fp32"), "fp32 as asked")}[precision]
    lines.append(f"{precision}: " + words[0 if zh else 1])
    if hf:
        if (config or {}).get(HF_CLIPPING) == "auto":
            lines.append(f'{HF_CLIPPING} "auto": ' + (
                chinese.text("init.filled_from_the_trainer_s_max")
                if zh else "filled from the Trainer's --max_grad_norm; left out, that flag would not reach DeepSpeed "
                "(accelerate leaves clipping to DeepSpeed)"))
        if zero.get(HF_SAVE_16BIT.rpartition(".")[2]) is True:
            lines.append(f"{HF_SAVE_16BIT} true: " + (
                chinese.text("init.save_model_writes_the_whole_bit")
                if zh else "save_model writes the whole 16-bit weights gathered from every rank; without it only "
                "ZeRO's partitioned checkpoint is saved and the model file holds placeholders"))
        lines.append('"auto": ' + (chinese.text("init.batch_sizes_precision_and_zero_s")
                                   if zh else "batch sizes, precision and ZeRO-3's buckets are filled by the HF "
                                   "Trainer from its flags and the model's hidden_size"))
    else:
        lines.append(f"optimizer AdamW, lr {LEARNING_RATE}: " + (
            chinese.text("init.zero_need_an_optimizer_the_estimate") if zh else
            "ZeRO 1/2 need an optimizer; the estimate counts Adam-style states; set your own learning rate"))
        lines.append(f"train_micro_batch_size_per_gpu {micro}, gradient_accumulation_steps 1: " + (
            chinese.text("init.raise_the_accumulation_steps_for_a") if zh else
            "raise the accumulation steps for a larger global batch at no memory cost"))
    lines.append(chinese.text("init.keys_not_written_the_release_s") if zh else
                 "keys not written: the release's defaults (dsfields resolve lists them)")
    lines.append(chosen_why)
    return lines


def choose(shape: Shape, gpus_per_node: int, nodes: int, capacity: int, hf: bool, seq_len: int, micro: int,
           precision: str, snapshot: Any, host: int | None = None
           ) -> tuple[Candidate, dict[str, Any], tuple[int, int], list[tuple[Candidate, int, int]]]:
    """The first candidate that fits the GPU (and, with ``host``, the host memory of one node), its config, its GPU
    total per rank and host total per node, and the GPU and host totals of those tried before."""
    resolver = Resolver(snapshot)
    model = Model(shape.params, shape.largest, gpus_per_node, nodes, shape.hidden, shape.layers, seq_len, micro,
                  shape.heads, True, None, hf)
    fields = snapshot.fields
    tried: list[tuple[Candidate, int, int]] = []

    def needs(candidate: Candidate, overlap: bool) -> tuple[dict[str, Any], int, int]:
        config = build_config(candidate, precision, micro, hf, fields, overlap)
        settings, _, _ = settings_from_config(config, resolver, model, [])
        settings = replace(settings, checkpointing=candidate.checkpointing, half=precision != "fp32")
        est = compute(settings, model)
        return config, est.gpu_total(candidate.checkpointing), est.cpu_total(gpus_per_node, candidate.checkpointing)

    def fits(total: int, on_host: int) -> bool:
        return total + RESERVE <= capacity and (host is None or on_host <= host)

    for candidate in CANDIDATES:
        config, total, on_host = needs(candidate, False)
        if fits(total, on_host):
            if candidate.stage in (1, 2):  # overlap_comm is faster; take it where its second bucket still fits
                overlapped = needs(candidate, True)
                if fits(*overlapped[1:]):
                    config, total, on_host = overlapped
            return candidate, config, (total, on_host), tried
        tried.append((candidate, total, on_host))
    raise NoFit(tried, capacity, host)


class NoFit(DsfieldsError):
    """No candidate fits: the smallest need is said, and whether the GPU or the host is what is short."""

    def __init__(self, tried: list[tuple[Candidate, int, int]], capacity: int, host: int | None) -> None:
        least = min(total for _, total, _ in tried)
        on_gpu = [(c, t, h) for c, t, h in tried if t + RESERVE <= capacity]
        if on_gpu and host is not None:  # the GPU alone would do: the host is short
            need = min(h for _, _, h in on_gpu)
            super().__init__(f"nothing fits: the configs that fit the GPU need at least {gib(need)} of host memory "
                             f"per node (offload: CPU Adam states and pinned buffers), more than --host-memory "
                             f"{gib(host)}; use more GPUs or nodes, or GPUs with more memory")
            return
        super().__init__(f"nothing fits: even ZeRO-3 with both offloads and activation checkpointing needs "
                         f"{gib(least)} per GPU; use more GPUs, a shorter sequence or a smaller micro batch")


def host_memory(text: str | None) -> int | None:
    """``--host-memory``: one node's RAM (512GB, 1TB, 2048GiB); a size, never a GPU name."""
    if text is None:
        return None
    if not text.strip()[:1].isdigit():
        raise UsageError(f"--host-memory {text.strip()[:40]!r}: not a memory size (512GB, 1TB, 2048GiB)")
    size = gpu_memory("--host-memory", text)
    assert size is not None
    return size[0]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _one_line_error(parser)
    parser.add_argument("--params", metavar="N", help="total model parameters (7e9, 7B, 1.3B, 350M)")
    parser.add_argument("--model-config", type=Path, metavar="FILE", help="an HF model's config.json (its shape)")
    parser.add_argument("--gpus-per-node", metavar="G", help="GPUs per node")
    parser.add_argument("--nodes", default="1", metavar="K", help="nodes (default 1)")
    parser.add_argument("--gpu-memory", metavar="SIZE", help="memory of one GPU (80GB, or A100-80GB, H100, RTX4090)")
    parser.add_argument("--host-memory", metavar="SIZE",
                        help="RAM of one node (512GB, 1TB): offload is chosen only where the host figure per node "
                             "(CPU Adam states, pinned buffers) fits it (default: not checked, said)")
    parser.add_argument("--hf", action="store_true", help="launched by the HF Trainer (\"auto\" values, its flags)")
    parser.add_argument("--seq-len", default="2048", metavar="S", help="sequence length in tokens (default 2048)")
    parser.add_argument("--micro-batch", default="1", metavar="B", help="sequences per GPU (default 1)")
    parser.add_argument("--precision", choices=["bf16", "fp16", "fp32"], default=None,
                        help="default: bf16, or fp16 on a GPU without bf16 (V100, T4)")
    parser.add_argument("--version", default=None, help="DeepSpeed version (default: the installed one if "
                                                        "snapshotted, else the newest)")
    parser.add_argument("--lang", default=None, help="en or zh (default: zh when LANG is a zh locale, else en)")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help="write the config there (default: print it)")
    parser.add_argument("--accelerate", action="store_true",
                        help="also write the matching accelerate YAML beside the config (FILE.accelerate.yaml; "
                             "needs -o)")
    parser.add_argument("--accelerate-version", default=None, metavar="V",
                        help="accelerate release of that YAML (default: the installed one if snapshotted, else the "
                             "newest)")


QUESTIONS = (("params", "Model parameters (e.g. 7B), or leave empty and give --model-config: ",
              chinese.text("init.model_parameters_e_g_b_or")),
             ("gpus_per_node", "GPUs per node: ", chinese.text("init.gpus_per_node")),
             ("gpu_memory", "Memory of one GPU (e.g. 80GB, A100-80GB): ", chinese.text("init.memory_of_one_gpu_e_g")))


def _ask_missing(args: argparse.Namespace, lang: str) -> None:
    """On a terminal, ask for what is missing (as ``accelerate config`` does); in a pipe, one line and exit 2."""
    missing = [name for name, _, _ in QUESTIONS if getattr(args, name) is None
               and not (name == "params" and args.model_config is not None)]
    if not missing:
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        flags = ", ".join("--" + name.replace("_", "-") for name in missing)
        raise UsageError(f"init needs {flags} (no questions asked outside a terminal)")
    for name, en, zh in QUESTIONS:
        if name in missing:
            try:
                setattr(args, name, input(zh if lang == "zh" else en).strip() or None)
            except EOFError:
                raise UsageError("init: no answer") from None
    if args.params is None and args.model_config is None:
        raise UsageError("init needs --params or --model-config")
    unanswered = [name for name, _, _ in QUESTIONS if name != "params" and getattr(args, name) is None]
    if unanswered:
        raise UsageError("init needs " + ", ".join("--" + name.replace("_", "-") for name in unanswered))


def run(args: argparse.Namespace) -> int:
    lang = prose.language(args.lang)
    if getattr(args, "accelerate", False) and args.output is None:
        raise UsageError("init --accelerate needs -o FILE (the YAML is written beside it, naming it)")
    _ask_missing(args, lang)
    capacity = gpu_memory("--gpu-memory", args.gpu_memory)
    assert capacity is not None
    gpus = count("--gpus-per-node", args.gpus_per_node) or 1
    nodes = count("--nodes", args.nodes) or 1
    seq_len = count("--seq-len", args.seq_len) or 1
    micro = count("--micro-batch", args.micro_batch) or 1
    if args.model_config is not None:
        shape = shape_from_config(args.model_config)
    else:
        shape = shape_from_params(count("--params", args.params) or 1)
    host = host_memory(args.host_memory)
    precision = args.precision or ("fp16" if any(word in capacity[1].lower().replace("-", "") for word in NO_BF16)
                                   else "bf16")
    snapshot = load_requested(args.version)
    try:
        candidate, config, (total, on_host), tried = choose(shape, gpus, nodes, capacity[0], args.hf, seq_len, micro,
                                                         precision, snapshot, host)
    except NoFit as exc:  # a finding about the situation, not bad input: exit 1
        from dsfields.model import termsafe

        termsafe.report(f"dsfields init: {exc}")
        return 1
    margin = capacity[0] - RESERVE - total
    zh = lang == "zh"
    why = (chinese.text("init.why_the_cheapest_in_compute_that_2", gib_total=gib(total), capacity_1=capacity[1],
                        gib_margin=gib(margin), gib_RESERVE=gib(RESERVE), gib_on_host=gib(on_host)) if zh else
           f"why: the cheapest in compute that fits: {gib(total)} per GPU, {gib(margin)} to spare on {capacity[1]} "
           f"({gib(RESERVE)} kept for the CUDA context and NCCL); host memory per node about {gib(on_host)}")
    if host is None:
        why += (chinese.text("init.host_memory_not_checked_give_host") if zh else
                "; host memory not checked (give --host-memory)")
    else:
        why += (chinese.text("init.within_host_memory",
                             gib_host=gib(host)) if zh else f", within --host-memory {gib(host)}")
    if tried:
        before = ", ".join(f"ZeRO-{c.stage}{'+ckpt' if c.checkpointing else ''}"
                           f"{'+offload' if c.offload_optimizer else ''}{'+params' if c.offload_param else ''} {gib(t)}"
                           + ((chinese.text("init.host", gib_h=gib(h)) if zh else f" (host {gib(h)})")
                              if host is not None and h > host else "")
                           for c, t, h in tried)
        why += (chinese.text("init.cheaper_ones_do_not_fit",
                             before=before) if zh else f"; cheaper ones do not fit: {before}")
    notes = explain(candidate, why, args.hf, precision, micro, lang, config)
    notes.insert(0, shape.source_zh if zh else shape.source)
    text = json.dumps(config, indent=2) + "\n"
    if args.output is not None:
        from dsfields.model import safewrite

        accelerate = _accelerate_yaml(args, config, gpus, nodes) if getattr(args, "accelerate", False) else None
        safewrite.write_text(args.output, text, force=True)
        print((chinese.text("init.wrote") if zh else "wrote ") + str(args.output))
        if accelerate is not None:
            safewrite.write_text(accelerate[0], accelerate[1], force=True)
            print((chinese.text("init.wrote") if zh else "wrote ") + str(accelerate[0]))
            notes += [zh_line if zh else en for en, zh_line in accelerate[2]]
    else:
        sys.stdout.write(text)
    heading = f"# dsfields init, DeepSpeed {snapshot.version}" + (" (HF Trainer)" if args.hf else "")
    print(heading, file=sys.stderr if args.output is None else sys.stdout)
    for line in notes:
        print(f"#  - {line}", file=sys.stderr if args.output is None else sys.stdout)
    return 0


def accelerate_path(output: Path) -> Path:
    """Where ``init --accelerate`` writes the YAML: beside the config (``ds_config.json`` →
    ``ds_config.accelerate.yaml``)."""
    return output.with_name(output.stem + ".accelerate.yaml")


def _accelerate_yaml(args: argparse.Namespace, config: dict[str, Any], gpus: int, nodes: int
                     ) -> tuple[Path, str, list[tuple[str, str]]]:
    """(path, text, notes) of the accelerate YAML that launches ``config`` on ``gpus`` × ``nodes``
    (:func:`dsfields.hf.plugin.to_accelerate`, the same as ``dsfields convert --to accelerate``)."""
    from dsfields.hf import plugin

    try:
        data, notes = plugin.to_accelerate(config, str(args.output), getattr(args, "accelerate_version", None),
                                           gpus * nodes, nodes)
    except plugin.AccelerateRefusal as exc:
        raise DsfieldsError(f"accelerate refuses the YAML for this config: {exc.message.splitlines()[0]}") from None
    return accelerate_path(args.output), plugin.dump_yaml(data), notes
