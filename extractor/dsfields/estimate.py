"""``dsfields estimate``: how much GPU and host memory one config needs for a model of N parameters.

DeepSpeed's own estimators (``estimate_zero2_model_states_mem_needs``, ``estimate_zero3_...``) count the
model states only and take the ZeRO stage and offload as arguments, not from the config. This reads
the config as DeepSpeed will run it (:class:`dsfields.resolve.Resolver`: written values, defaults,
effective defaults), reproduces those model-state formulas, and adds what the config itself
allocates: communication buckets, stage-3 prefetch and reuse, persistent parameters, sub-group
buffers, pinned host memory, NVMe swap buffers, and activations when the model's shape is given.
Then it ranks the config's knobs by the bytes a change would save (the OOM list).

No DeepSpeed import: every formula is ours, and each term carries, as data, the DeepSpeed 0.19.8
source lines (or the paper) it follows (:data:`CITATIONS`); ``tests/test_estimate.py`` checks those
lines against the real 0.19.8 and the model states against DeepSpeed's estimators.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from dsfields.configfile import ConfigFileError
from dsfields.model import chinese, prose
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.store import load_requested
from dsfields.resolve import AUTO_DEFAULT, AUTO_HF, AUTO_KEPT, Resolver

CITED_RELEASE = "0.19.8"
"""The DeepSpeed release whose source the line numbers below point into."""


@dataclass(frozen=True)
class Citation:
    """Where a formula comes from: lines of DeepSpeed's source (``file`` under ``deepspeed/``), or a paper."""

    file: str
    first: int = 0
    last: int = 0
    snippet: str = ""
    """Text that occurs in those lines of DeepSpeed :data:`CITED_RELEASE` (a test checks it)."""

    @property
    def where(self) -> str:
        if not self.first:
            return self.file
        span = f"{self.first}" if self.last in (0, self.first) else f"{self.first}-{self.last}"
        return f"deepspeed/{self.file}:{span}"


PAPER_ACTIVATIONS = ("Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models "
                     "(arXiv:2205.05198), section 4.1, equation 1, and section 5 (full recomputation)")

CITATIONS: dict[str, Citation] = {
    "zero2_model_states": Citation("runtime/zero/stage_1_and_2.py", 4017, 4034,
                                   "def estimate_zero2_model_states_mem_needs"),
    "zero3_model_states": Citation("runtime/zero/stage3.py", 4016, 4052, "def estimate_zero3_model_states_mem_needs"),
    "stage12_reduce_bucket": Citation("runtime/zero/stage_1_and_2.py", 3262, 3278,
                                      "buf_1 = torch.empty(int(self.reduce_bucket_size)"),
    "stage12_allgather": Citation("runtime/utils.py", 1016, 1022, "return all_gather_into_tensor_dp_groups"),
    "stage12_allgather_shards": Citation("runtime/utils.py", 1033, 1054, "// allgather_bucket_size"),
    "stage12_offload_grad_buffers": Citation("runtime/zero/stage_1_and_2.py", 653, 661,
                                             "self.temp_grad_buffer_for_gpu_offload = torch.zeros(largest_param_numel"),
    "stage12_pinned": Citation("runtime/zero/stage_1_and_2.py", 563, 572,
                               "weights_partition = get_accelerator().pin_memory(weights_partition)"),
    "stage12_pinned_grad": Citation("runtime/zero/stage_1_and_2.py", 936, 941,
                                    "self.single_partition_of_fp32_groups[i].grad = get_accelerator().pin_memory("),
    "stage3_reduce_bucket": Citation("runtime/zero/stage3.py", 780, 784,
                                     "bucket.buffer = torch.empty(self.reduce_bucket_size"),
    "stage3_prefetch": Citation("runtime/zero/partitioned_param_coordinator.py", 452, 454,
                                "max_params_to_prefetch = min(self.__max_n_available_params"),
    "stage3_reuse": Citation("runtime/zero/partitioned_param_coordinator.py", 654, 662,
                             "if params_traversed >= self.__max_reuse_dist_in_numel:"),
    "stage3_persistence": Citation("runtime/zero/parameter_offload.py", 317, 329,
                                   "if param.ds_numel <= param_threshold:"),
    "stage3_sub_group_grad": Citation("runtime/zero/stage3.py", 1304, 1306,
                                      "gradient_buffer = torch.zeros(int(largest_numel)"),
    "stage3_sub_groups": Citation("runtime/zero/stage3.py", 1213, 1226, "if local_sub_group_size >= sub_group_size"),
    "stage3_pinned_params": Citation("runtime/zero/stage3.py", 897, 907, "aggregate_params_count + params_in_group"),
    "stage3_pinned_grads": Citation("runtime/zero/stage3.py", 791, 795,
                                    "self.grad_partitions_flat_buffer = get_accelerator().pin_memory("),
    "stage3_pinned_subgroup_grads": Citation("runtime/zero/stage3.py", 1337, 1340,
                                             "subgroup_gradient_buffer = get_accelerator().pin_memory("),
    "stage3_optimizer_swapper": Citation("runtime/zero/stage3.py", 845, 851,
                                         "largest_numel=max(self.fp16_partitioned_groups_flat_numel)"),
    "swap_buffer_manager": Citation("runtime/swap_tensor/utils.py", 182, 193,
                                    "aio_handle.new_cpu_locked_tensor(num_elems, dtype_example)"),
    "optimizer_swap_count": Citation("runtime/swap_tensor/optimizer_utils.py", 185, 189,
                                     "count=swap_config.buffer_count"),
    "param_swap_buffers": Citation("runtime/swap_tensor/partitioned_param_swapper.py", 104, 127,
                                   "int(self.aligned_elements_per_buffer * self.param_buffer_count)"),
    "aio_alignment": Citation("runtime/swap_tensor/partitioned_param_swapper.py", 100, 102,
                              "AIO_ALIGNED_BYTES * self.aio_config[AIO_INTRA_OP_PARALLELISM]"),
    "activation_cpu_checkpoint": Citation("runtime/activation_checkpointing/checkpointing.py", 611, 614,
                                          "copy_to_device(args, device=torch.device('cpu')"),
    "aio_aligned_bytes": Citation("runtime/swap_tensor/utils.py", 15, 15, "AIO_ALIGNED_BYTES = 1024"),
    "activations": Citation("Korthikanti et al. 2022, arXiv:2205.05198, eq. 1 and section 5"),
    "activations_tp": Citation("Korthikanti et al. 2022, arXiv:2205.05198, eq. 2 (tensor parallel, no sequence "
                               "parallel)"),
    "autotp": Citation("runtime/engine.py", 595, 596, "if self.autotp_size() > 1:"),
    "autotp_layers": Citation("runtime/engine.py", 1218, 1219, "parser_dict = AutoTP.tp_parser(model)"),
    "autotp_lm_head": Citation("module_inject/auto_tp.py", 450, 467,
                               "training_column_lm_head = self.training_mode and legacy_lm_head"),
    "autotp_kv_heads": Citation("module_inject/tp_shard.py", 120, 123,
                                "my_slices = (num_kv_heads // mp_size) + (1 if rank < (num_kv_heads % mp_size)"),
    "zero_dp_group": Citation("runtime/engine.py", 2683, 2683, "dp_process_group=self.seq_data_parallel_group"),
    "hpz_secondary": Citation("runtime/zero/partition_parameters.py", 1912, 1916,
                              "secondary_partition_size = int(tensor_size // self.num_ranks_in_param_group)"),
    "ulysses_world": Citation("runtime/config.py", 468, 469,
                              'self.world_size = dist.get_world_size() / config["sequence_parallel_size"]'),
    "pipeline_zero": Citation("runtime/pipe/engine.py", 76, 77,
                              "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"),
    "mics_removed": Citation("runtime/config.py", 120, 121, "MiCS ZeRO-3 sharding has been removed"),
    "expert_groups": Citation("runtime/engine.py", 2170, 2171,
                              "self.expert_data_parallel_group = groups._get_expert_data_parallel_group_dict()"),
    "deepcompile": Citation("runtime/engine.py", 856, 856, 'deepcompile_enabled=bool(getattr(compile_config, '
                                                            '"deepcompile", False))'),
}

AIO_ALIGNED_BYTES = 1024
"""``deepspeed/runtime/swap_tensor/utils.py:15`` in 0.19.8: swap buffers are rounded up to it × intra_op_parallelism."""

ADDITIONAL_BUFFER_FACTOR = 1.5
"""DeepSpeed's estimators' default ``additional_buffer_factor`` on host memory (kept to agree with them)."""

GIB = 1 << 30


@dataclass(frozen=True)
class Note:
    """One assumption, in both languages (ours)."""

    en: str
    zh: str

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Model:
    """What the command line says about the model and the machines."""

    params: int
    largest_layer: int | None = None
    gpus_per_node: int = 1
    nodes: int = 1
    hidden: int | None = None
    layers: int | None = None
    seq_len: int | None = None
    micro_batch: int | None = None
    heads: int | None = None
    zero_init: bool = True
    expert_params: int | None = None
    """Parameters inside the MoE experts (``--expert-params``): AutoEP shards these, not the rest."""
    hf: bool = False
    """Launched by the HF Trainer (``--hf``): advice in its flags (``--gradient_checkpointing``)."""
    vocab: int | None = None
    """``--vocab-size``: the input embedding (vocab × hidden), which AutoTP leaves whole on every rank."""
    kv_heads: int | None = None
    """``--kv-heads``: key/value heads; AutoTP splits attention by them, unevenly when autotp_size does not divide
    them."""

    @property
    def world(self) -> int:
        return self.gpus_per_node * self.nodes

    @property
    def shaped(self) -> bool:
        return None not in (self.hidden, self.layers, self.seq_len, self.micro_batch)


@dataclass(frozen=True)
class Parallel:
    """The parallelism a config declares beside ZeRO data parallelism, each read from its own key of the release
    (:data:`PARALLEL_PATHS`); 1 (0 for MiCS, off for DeepCompile) is "not used", also when the release has no
    such key."""

    tp: int = 1
    """``tensor_parallel.autotp_size``: AutoTP shards the model's linear weights over this many ranks."""
    pp: int = 1
    """``pipeline.stages`` when a number: pipeline stages (the model's own PipelineModule sets them)."""
    sp: int = 1
    """``sequence_parallel_size``: Ulysses sequence parallelism shards each sequence over this many ranks."""
    ep: int = 1
    """``expert_parallel.autoep_size`` with ``expert_parallel.enabled``: AutoEP shards the experts."""
    hpz: int = 1
    """``zero_optimization.zero_hpz_partition_size``: ZeRO++ hpZ's secondary partition of the 16-bit params."""
    mics: int = 0
    """``zero_optimization.mics_shard_size``: MiCS partitions ZeRO-3 states within shard groups of this size."""
    deepcompile: bool = False
    """``compile.deepcompile``: DeepCompile schedules ZeRO-3's gathers and frees itself."""

    @property
    def model_parallel(self) -> int:
        """Ranks that split one model replica's dense parameters (tensor × pipeline)."""
        return self.tp * self.pp

    @property
    def declared(self) -> bool:
        return self != Parallel()


@dataclass(frozen=True)
class Settings:
    """The config values the estimate reads, as DeepSpeed will use them.

    The fields read from the config (:data:`SETTING_PATHS`) have no defaults here: :func:`settings_from_config`
    takes every value the file leaves out from the chosen release's snapshot, never from this class."""

    stage: int
    offload_optimizer: str
    """``none``, ``cpu`` or ``nvme``."""
    offload_param: str
    optimizer_pin: bool
    param_pin: bool
    optimizer_buffer_count: int
    param_buffer_count: int
    param_buffer_size: int
    max_in_cpu: int
    reduce_bucket_size: int
    allgather_bucket_size: int
    overlap_comm: bool
    contiguous_gradients: bool
    prefetch_bucket_size: int
    max_live_parameters: int
    max_reuse_distance: int
    param_persistence_threshold: int
    model_persistence_threshold: int
    sub_group_size: int
    aio_intra_op_parallelism: int
    aio_use_gds: bool
    cpu_checkpointing: bool
    partition_activations: bool
    half: bool = True
    """fp16 or bf16 is enabled: 16-bit parameters, gradients and activations."""
    checkpointing: bool = False
    """Activation checkpointing assumed on (the model's code decides; the ``what if`` of the OOM list)."""
    parallel: Parallel = field(default_factory=Parallel)
    """The parallelism the config declares beside data parallelism (none unless its keys say so)."""

    @property
    def dtype_bytes(self) -> int:
        return 2 if self.half else 4


SETTING_PATHS: dict[str, str] = {
    "stage": "zero_optimization.stage",
    "offload_optimizer": "zero_optimization.offload_optimizer.device",
    "offload_param": "zero_optimization.offload_param.device",
    "optimizer_pin": "zero_optimization.offload_optimizer.pin_memory",
    "param_pin": "zero_optimization.offload_param.pin_memory",
    "optimizer_buffer_count": "zero_optimization.offload_optimizer.buffer_count",
    "param_buffer_count": "zero_optimization.offload_param.buffer_count",
    "param_buffer_size": "zero_optimization.offload_param.buffer_size",
    "max_in_cpu": "zero_optimization.offload_param.max_in_cpu",
    "reduce_bucket_size": "zero_optimization.reduce_bucket_size",
    "allgather_bucket_size": "zero_optimization.allgather_bucket_size",
    "overlap_comm": "zero_optimization.overlap_comm",
    "contiguous_gradients": "zero_optimization.contiguous_gradients",
    "prefetch_bucket_size": "zero_optimization.stage3_prefetch_bucket_size",
    "max_live_parameters": "zero_optimization.stage3_max_live_parameters",
    "max_reuse_distance": "zero_optimization.stage3_max_reuse_distance",
    "param_persistence_threshold": "zero_optimization.stage3_param_persistence_threshold",
    "model_persistence_threshold": "zero_optimization.stage3_model_persistence_threshold",
    "sub_group_size": "zero_optimization.sub_group_size",
    "aio_intra_op_parallelism": "aio.intra_op_parallelism",
    "aio_use_gds": "aio.use_gds",
    "cpu_checkpointing": "activation_checkpointing.cpu_checkpointing",
    "partition_activations": "activation_checkpointing.partition_activations",
}
"""Setting → the JSON path it is read from (the field must exist in the release; a test checks it for 0.19.8)."""

NOT_IN_RELEASE: dict[str, tuple[Any, str, str]] = {
    "aio_intra_op_parallelism": (1, "swap buffers aligned to AIO_ALIGNED_BYTES alone",
                                 chinese.text("estimate.swap_buffers_aligned_to_aio_aligned")),
    "aio_use_gds": (False, "no GPUDirect Storage", chinese.text("estimate.no_gpudirect_storage")),
}
"""Setting → (value, en, zh) for a release that has no key for it: the feature is absent there, so the value is the
one meaning "not there" (not a default of any release). A test checks that every setting some snapshotted release
lacks is here."""

PARALLEL_PATHS: dict[str, str] = {
    "tp": "tensor_parallel.autotp_size",
    "pp": "pipeline.stages",
    "sp": "sequence_parallel_size",
    "ep": "expert_parallel.autoep_size",
    "hpz": "zero_optimization.zero_hpz_partition_size",
    "mics": "zero_optimization.mics_shard_size",
    "deepcompile": "compile.deepcompile",
}
"""Parallel setting → its JSON path, read only in releases that have the key."""

EXPERTS_ENABLED = "expert_parallel.enabled"
"""AutoEP shards experts only when this is true (its ``autoep_size`` alone does nothing)."""

SKELETON_SECTIONS = ("zero_optimization.offload_optimizer", "zero_optimization.offload_param", "aio",
                     "activation_checkpointing")
"""Sections whose keys the estimate reads even when the file leaves the section out (the OOM list turns offload on):
resolved once with each section present and empty, so that every key gets the release's own default."""

HF_HIDDEN_FILLED = ("reduce_bucket_size", "prefetch_bucket_size", "param_persistence_threshold")
"""Settings whose "auto" the wording below says the HF Trainer fills from the hidden size (the values themselves
come from the HF snapshot's rules, :func:`_hf_fills`)."""


def _release_defaults(data: dict[str, Any], resolver: Resolver, world: int) -> dict[str, Any]:
    """The value of every path the estimate reads as the release resolves a config whose sections are present and
    empty, at the stage ``data`` gives: the release's defaults (and its effective defaults at that stage)."""
    zero = data.get("zero_optimization")
    skeleton: dict[str, Any] = {}
    if isinstance(zero, dict) and "stage" in zero:
        skeleton["zero_optimization"] = {"stage": zero["stage"]}
    for section in SKELETON_SECTIONS:
        head, _, tail = section.partition(".")
        if section not in resolver.fields:
            continue
        if tail:
            skeleton.setdefault(head, {})[tail] = {}
        else:
            skeleton.setdefault(head, {})
    return {r.path: r.value for r in resolver.resolve(skeleton, world_size=world)}


def _hf_fills(data: dict[str, Any], model: Model, pair: tuple[str, str] | None) -> dict[str, Any]:
    """The values the HF Trainer puts for this config's "auto" keys from the model's hidden size, as the HF
    snapshot's own rules compute them (:func:`dsfields.hf.trainer.fill_trainer_auto`, the function ``check``
    runs): path → value."""
    if not model.hidden:
        return {}
    from dsfields.hf.trainer import fill_trainer_auto
    from dsfields.model.dotted import at_path

    filled = fill_trainer_auto(data, model.hidden, pair)
    out = {}
    for path in SETTING_PATHS.values():
        if at_path(data, path, None) == "auto":
            value = at_path(filled, path, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[path] = value
    return out


def _as_setting(name: str, path: str, value: Any) -> Any:
    """A resolved value as the setting's type; a value DeepSpeed cannot use is one line and exit 2."""
    kind = next(f.type for f in fields(Settings) if f.name == name)
    if kind == "bool":
        return bool(value)
    if kind == "int":
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            raise DsfieldsError(f"{path} is {value!r}: not a number DeepSpeed can use") from None
        if number < 0:
            raise DsfieldsError(f"{path} is {number}: a negative size")
        return bounded(f"{path} is", number, SIZE_BOUND)
    return str(value).lower()


def settings_from_config(data: dict[str, Any], resolver: Resolver, model: Model, assumptions: list[Note],
                         hf_pair: tuple[str, str] | None = None
                         ) -> tuple[Settings, dict[str, dict[str, Any]], int | None]:
    """The settings DeepSpeed will use for ``data``, what each was read from, and the micro batch the config gives.

    Every value the file leaves out is the release's own (its snapshot, through the resolver); an "auto" the HF
    Trainer fills from the hidden size is filled by the HF snapshot's rules."""
    version = resolver.snapshot.version
    resolved = {r.path: r for r in resolver.resolve(data, world_size=model.world)}
    defaults = _release_defaults(data, resolver, model.world)
    fills = _hf_fills(data, model, hf_pair)
    values: dict[str, Any] = {}
    used: dict[str, dict[str, Any]] = {}
    for name, path in SETTING_PATHS.items():
        if path not in resolver.fields:
            value, en, zh = NOT_IN_RELEASE[name]
            values[name] = value
            if name not in ("aio_use_gds",):  # off is what it means: nothing to say
                assumptions.append(Note(f"{path}: not a key of DeepSpeed {version} ({en})",
                                        chinese.text("estimate.not_a_key_of_deepspeed", path=path, version=version,
                                                     zh=zh)))
            continue
        item = resolved.get(path)
        if item is None:  # its section is absent from the file: the release's default for the OOM list's what-ifs
            value = defaults.get(path)
            if value is None:
                value = resolver.fields[path].default
            if value is None:
                raise DsfieldsError(f"{path}: DeepSpeed {version}'s snapshot gives no default")
            values[name] = _as_setting(name, path, value)
            continue
        value, source = item.value, item.source
        if item.source in (AUTO_DEFAULT, AUTO_KEPT, AUTO_HF):
            if path in fills:
                value = fills[path]
                source = f"{AUTO_HF} (from --hidden-size)"
                assumptions.append(Note(f'{path} is "auto": taken as the HF Trainer fills it from --hidden-size '
                                        f"({value})", chinese.text("estimate.is_auto_taken_as_the_hf", path=path,
                                                                   value=value)))
            elif item.source != AUTO_DEFAULT:
                value = defaults.get(path)
                if value is None or value == "auto":
                    value = resolver.fields[path].default
                assumptions.append(Note(f'{path} is "auto" and nothing here fills it: taken as the release\'s '
                                        f"default ({value!r})",
                                        chinese.text("estimate.is_auto_and_nothing_here_fills", path=path,
                                                     value=value)))
            elif name in HF_HIDDEN_FILLED:
                assumptions.append(Note(f'{path} is "auto": DeepSpeed uses its default ({value!r}); under the HF '
                                        "Trainer pass --hidden-size to count what the Trainer fills",
                                        chinese.text("estimate.is_auto_deepspeed_uses_its_default", path=path,
                                                     value=value)))
        if value is None:
            continue
        values[name] = _as_setting(name, path, value)
        used[name] = {"path": path, "value": item.value if isinstance(values[name], str) else values[name],
                      "source": source}
    offload = resolved.get("zero_optimization.offload_optimizer")
    if offload is not None and offload.value is None:
        values["offload_optimizer"] = "none"
    section = resolved.get("zero_optimization.offload_param")
    if section is not None and section.value is None:
        values["offload_param"] = "none"
    # "auto" precision is filled by the HF Trainer from --fp16/--bf16: counted as 16-bit
    values["half"] = any(resolved[p].value is True or resolved[p].source in (AUTO_HF, AUTO_DEFAULT, AUTO_KEPT)
                         for p in ("fp16.enabled", "bf16.enabled", "bfloat16.enabled") if p in resolved)
    values["parallel"] = parallel_from_config(resolved, used, assumptions, resolver.fields, version)
    if values.get("stage") not in (0, 1, 2, 3):  # before the settings: some effective defaults need a stage
        raise DsfieldsError(f"zero_optimization.stage is {values.get('stage')}: DeepSpeed has stages 0 to 3")
    settings = Settings(**values)
    micro = resolved.get("train_micro_batch_size_per_gpu")
    micro_batch = micro.value if micro is not None and isinstance(micro.value, int) else None
    if micro_batch is not None and not isinstance(micro_batch, bool):
        if micro_batch < 1:  # DeepSpeed's _batch_assertion refuses it ("has to be greater than 0")
            raise UsageError(f"train_micro_batch_size_per_gpu is {micro_batch} at world size {model.world}: "
                             "DeepSpeed's batch assertion refuses a micro batch below 1")
        micro_batch = bounded("train_micro_batch_size_per_gpu is", micro_batch, COUNT_BOUNDS["micro_batch"])
    return settings, used, micro_batch


def parallel_from_config(resolved: dict[str, Any], used: dict[str, dict[str, Any]], assumptions: list[Note],
                         known: Any, version: str) -> Parallel:
    """The parallelism the config declares, each from its key in this release (a key the release lacks: not used,
    and said)."""
    values: dict[str, Any] = {}
    for name, path in PARALLEL_PATHS.items():
        item = resolved.get(path)
        section, _, key = path.rpartition(".")
        whole = resolved.get(section)
        if item is None and whole is not None and isinstance(whole.value, dict) and key in whole.value:
            # a section DeepSpeed passes on whole (pipeline): its key as written
            item = replace(whole, path=path, value=whole.value[key])
        if item is None or item.value is None:
            continue
        if path not in known:
            assumptions.append(Note(f"{path}: not a key of DeepSpeed {version} (check says what DeepSpeed does with "
                                    "it): not counted",
                                    chinese.text("estimate.not_a_key_of_deepspeed_check", path=path, version=version)))
            continue
        value = item.value
        if name == "deepcompile":
            values[name] = value is True
        elif name == "pp" and not isinstance(value, int):
            continue  # "auto": the model's PipelineModule decides, the config says nothing
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise DsfieldsError(f"{path} is {value!r}: not a whole number DeepSpeed can use")
        else:
            values[name] = int(value)
        if item.source == "written":
            used[f"parallel.{name}"] = {"path": path, "value": item.value, "source": item.source}
    if values.get("ep", 1) > 1:
        enabled = resolved.get(EXPERTS_ENABLED)
        if enabled is None or enabled.value is not True:
            assumptions.append(Note(f"{PARALLEL_PATHS['ep']} {values['ep']} without {EXPERTS_ENABLED} true: AutoEP "
                                    "is off, experts are not sharded",
                                    chinese.text("estimate.without_true_autoep_is_off_experts",
                                                 PARALLEL_PATHS_ep=PARALLEL_PATHS['ep'], values_ep=values['ep'],
                                                     EXPERTS_ENABLED=EXPERTS_ENABLED)))
            values["ep"] = 1
    if values.get("tp") == 0:
        values["tp"] = 1  # autotp_size 0 is AutoTP off (engine.py: `if self.autotp_size() > 1`)
    if values.get("mics", 0) < 0:
        values["mics"] = 0  # -1: MiCS off
    for name in ("tp", "pp", "sp", "ep", "hpz"):
        if values.get(name, 1) < 1:
            raise DsfieldsError(f"{PARALLEL_PATHS[name]} is {values[name]}: must be at least 1")
    return Parallel(**values)


# ---------------------------------------------------------------- the estimate


@dataclass
class Term:
    """One allocation the estimate counts."""

    name: str
    bytes: int
    device: str
    """``gpu`` (per rank), ``cpu`` (per rank unless ``per`` says node), ``nvme``."""
    citation: str
    """Key of :data:`CITATIONS`: the code (or paper) the formula follows."""
    formula: str
    per: str = "rank"
    in_total: bool = True
    """False when the bytes are already inside another figure (shown for the knob, not added twice)."""
    kind: str = "computed"
    """``computed`` (a size DeepSpeed allocates from these values) or ``estimated`` (an assumption about the model)."""
    settings: tuple[str, ...] = ()
    note: str = ""
    also: tuple[str, ...] = ()
    """Further :data:`CITATIONS` keys the term depends on."""

    def as_dict(self, used: dict[str, dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"bytes": self.bytes, "device": self.device, "per": self.per,
                               "in_total": self.in_total, "kind": self.kind, "formula": self.formula,
                               "source": CITATIONS[self.citation].where}
        if self.also:
            out["see_also"] = [CITATIONS[key].where for key in self.also]
        config = {used[s]["path"]: {"value": used[s]["value"], "source": used[s]["source"]}
                  for s in self.settings if s in used}
        if config:
            out["config"] = config
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Estimate:
    gpu_model_states: int
    cpu_model_states: int
    nvme_model_states: int
    model_states_formula: str
    model_states_citation: str
    model_states_kind: str
    buffers: list[Term] = field(default_factory=list)
    activations: list[Term] = field(default_factory=list)
    activation_ckpt: list[Term] = field(default_factory=list)
    assumptions: list[Note] = field(default_factory=list)
    parallelism: list[Term] = field(default_factory=list)
    """How the config's parallelism changes the figures, each with its DeepSpeed source (inside the others)."""

    def gpu_total(self, checkpointed: bool = False) -> int:
        acts = self.activation_ckpt if checkpointed else self.activations
        return self.gpu_model_states + sum(t.bytes for t in self.buffers + acts if t.in_total and t.device == "gpu")

    def cpu_total(self, gpus_per_node: int, checkpointed: bool = False) -> int:
        acts = self.activation_ckpt if checkpointed else []
        terms = [t for t in self.buffers + acts if t.in_total and t.device == "cpu"]
        return self.cpu_model_states + sum(t.bytes * (1 if t.per == "node" else gpus_per_node) for t in terms)

    def nvme_total(self, gpus_per_node: int) -> int:
        terms = [t for t in self.buffers if t.in_total and t.device == "nvme"]
        return self.nvme_model_states + sum(t.bytes * (1 if t.per == "node" else gpus_per_node) for t in terms)


def zero2_model_states(params: int, gpus_per_node: int, nodes: int, cpu_offload: bool) -> tuple[int, int]:
    """(cpu bytes per node, gpu bytes per rank), as ``estimate_zero2_model_states_mem_needs`` counts them."""
    total_gpus = nodes * gpus_per_node
    if cpu_offload:
        gpu = 2 * params
        cpu = params * max(4 * total_gpus, 16) * ADDITIONAL_BUFFER_FACTOR
    else:
        gpu = 2 * params + int(18 * params / total_gpus)
        cpu = params * 4 * gpus_per_node * ADDITIONAL_BUFFER_FACTOR
    return int(cpu), int(gpu)


def zero3_model_states(params: int, largest_layer: int, gpus_per_node: int, nodes: int, cpu_offload: bool,
                       cpu_offload_params: bool, zero_init: bool) -> tuple[int, int]:
    """(cpu bytes per node, gpu bytes per rank), as ``estimate_zero3_model_states_mem_needs`` counts them;
    parameters offloaded without the optimizer (a case DeepSpeed's estimator skips) is ours: the 2 bytes of
    16-bit parameters move from the GPU's partition to the host."""
    total_gpus = nodes * gpus_per_node
    gpus_factor = 1 / nodes
    largest = 4 * largest_layer
    if cpu_offload and cpu_offload_params:
        gpu = largest
        per = 18 * gpus_factor
        cpu = params * (per if zero_init else max(4 * gpus_per_node, per)) * ADDITIONAL_BUFFER_FACTOR
    elif cpu_offload:
        gpu = largest + int(2 * params / total_gpus)
        per = 16 * gpus_factor
        cpu = params * (per if zero_init else max(4 * gpus_per_node, per)) * ADDITIONAL_BUFFER_FACTOR
    elif cpu_offload_params:
        gpu = largest + int(16 * params / total_gpus)
        cpu = params * 2 * gpus_factor * ADDITIONAL_BUFFER_FACTOR
    else:
        gpu = largest + int(18 * params / total_gpus)
        cpu = (largest_layer if zero_init else params) * 4 * gpus_per_node * ADDITIONAL_BUFFER_FACTOR
    return int(cpu), int(gpu)


def model_states(settings: Settings, model: Model, assumptions: list[Note]) -> tuple[int, int, int, str, str, str]:
    """(gpu per rank, cpu per node, nvme per node, formula, citation key, kind), with the config's parallelism.

    Without AutoTP, pipeline, AutoEP or MiCS this is DeepSpeed's estimators' arithmetic as it stands
    (:func:`data_parallel_model_states`). With them, the GPU figure is the same arithmetic per model-parallel rank:
    the dense parameters split over tensor × pipeline ranks and partitioned over the data-parallel ranks left
    (ZeRO's group is the sequence-data-parallel one: Ulysses ranks partition too), the experts split over AutoEP
    ranks and partitioned over the expert-data-parallel ranks, ZeRO-3 under MiCS partitioned within its shard
    group. The host and NVMe figures per node stay the whole model's: the node's ranks hold all of it between them."""
    gpu, cpu, nvme, formula, citation, kind = data_parallel_model_states(settings, model, assumptions)
    split = parallel_split(settings, model)
    if split is None:
        return gpu, cpu, nvme, formula, citation, kind
    gpu, words = split
    return gpu, cpu, nvme, f"{formula}; per rank with parallelism: {words}", citation, "estimated"


def autotp_share(model: Model, tp: int, params: int | None = None) -> tuple[int, str]:
    """The parameters tensor-parallel rank 0 holds of ``params`` (default: the model's) under AutoTP of ``tp``
    ranks, as DeepSpeed 0.19.8 shards them, and how they were counted.

    AutoTP replaces the linear layers of the transformer blocks it finds (``runtime/engine.py:1218-1219``) and the
    output head (column-parallel in training, ``module_inject/auto_tp.py:450-467``): each is split over the ``tp``
    ranks. The input embedding lies outside the blocks and stays whole, and so do the norms (``--vocab-size`` and
    ``--hidden-size --layers`` count them: vocab·H + 2·H per layer + H). Attention is split by key/value heads
    (``module_inject/tp_shard.py:120-123``): rank 0 holds ceil(kv / tp) of the kv heads, more than 1/tp when tp does
    not divide them (``--heads --kv-heads`` count it). Rank 0 holds the most; it is the one estimated."""
    total = model.params if params is None else params
    if tp <= 1:
        return total, ""
    whole = 0
    words = []
    if model.vocab and model.hidden:
        whole += model.vocab * model.hidden
        words.append(f"input_embedding=V·H={model.vocab}·{model.hidden}")
    if model.hidden and model.layers:
        whole += model.hidden * (2 * model.layers + 1)
        words.append(f"norms=H·(2L+1)={model.hidden}·(2·{model.layers}+1)")
    whole = min(whole, total)
    attention = 0
    kv_share = ""
    if model.hidden and model.layers and model.heads and model.kv_heads and model.kv_heads % tp:
        head_dim = model.hidden // model.heads
        attention = min(model.layers * (2 * model.hidden * model.hidden + 2 * model.hidden * head_dim
                                        * model.kv_heads), total - whole)
        slices = model.kv_heads // tp + (1 if model.kv_heads % tp else 0)
        held = attention * slices // model.kv_heads
        kv_share = f" + attention={attention}×{slices}/{model.kv_heads}_kv_heads={held}"
    else:
        held = 0
    split = total - whole - attention
    share = whole + -(-split // tp) + held
    return share, (f"autotp_rank0={share}: " + " + ".join([*words, f"rest={split}/autotp_size={tp}"]) + kv_share)


def parallel_split(settings: Settings, model: Model) -> tuple[int, str] | None:
    """The GPU model states per rank under the config's model parallelism and MiCS, and how they were counted;
    ``None`` when the config declares none of them."""
    par = settings.parallel
    mics = par.mics if settings.stage == 3 else 0
    experts = (model.expert_params or 0) if par.ep > 1 else 0
    if par.model_parallel == 1 and not experts and not mics:
        return None
    world, mp = model.world, par.model_parallel
    dense = max(model.params - experts, 0)
    dp = max(world // mp, 1)
    group = min(mics, dp) if mics else dp
    shard = local_params(settings, model, dense)
    one = replace(model, params=shard, gpus_per_node=group, nodes=1)
    gpu = data_parallel_model_states(settings, one, [])[0]
    tp_words = autotp_share(model, par.tp, dense)[1]
    words = [(f"{tp_words}; " if tp_words else "")
             + f"dense {dense} / (autotp_size {par.tp} × pipeline stages {par.pp}) = {shard} partitioned over "
             + (f"the MiCS shard group of {group}" if mics else f"{dp} data-parallel ranks (world {world} / {mp})")
             + f": {gpu}"]
    if experts:
        local = -(-experts // par.ep)
        edp = max(world // par.ep, 1)
        extra = data_parallel_model_states(settings, replace(model, params=local, gpus_per_node=edp, nodes=1), [])[0]
        if settings.stage == 3:
            extra -= 4 * (model.largest_layer or 0)  # the gathered largest layer is counted once
        gpu += extra
        words.append(f"experts {experts} / autoep_size {par.ep} = {local} partitioned over {edp} expert-data-parallel "
                     f"ranks: {extra}")
    return gpu, " + ".join(words)


def local_params(settings: Settings, model: Model, params: int | None = None) -> int:
    """The parameters of ``params`` (default: the model's) one rank's ZeRO works on: AutoTP rank 0's share
    (:func:`autotp_share`), split evenly over the pipeline stages."""
    par = settings.parallel
    return -(-autotp_share(model, par.tp, params)[0] // par.pp)


def data_parallel_model_states(settings: Settings, model: Model,
                               assumptions: list[Note]) -> tuple[int, int, int, str, str, str]:
    """(gpu per rank, cpu per node, nvme per node, formula, citation key, kind) with data parallelism only."""
    p, n, g, nodes = model.params, model.world, model.gpus_per_node, model.nodes
    opt, par = settings.offload_optimizer, settings.offload_param
    if settings.stage == 3:
        largest = model.largest_layer or 0
        cpu, gpu = zero3_model_states(p, largest, g, nodes, opt != "none", par != "none", model.zero_init)
        formula = (f"estimate_zero3_model_states_mem_needs(total_params={p}, largest_layer_params={largest}, "
                   f"num_gpus_per_node={g}, num_nodes={nodes}, cpu_offload={opt != 'none'}, "
                   f"cpu_offload_params={par != 'none'}, zero_init={model.zero_init})")
        nvme = 0
        kind = "computed" if opt != "none" or par == "none" else "estimated"
        # NVMe: the same GPU side as cpu; what lives on NVMe leaves the host (ours: DeepSpeed's estimator has no nvme)
        if opt == "nvme":
            moved = 12 * p / nodes  # fp32 master weights, momentum and variance per node
            cpu -= int(moved * ADDITIONAL_BUFFER_FACTOR)
            nvme += int(moved)
            kind = "estimated"
        if par == "nvme":
            kept = min(settings.max_in_cpu, p // n) * 2 * g  # 16-bit params that stay in host memory (max_in_cpu)
            cpu -= int(2 * p / nodes * ADDITIONAL_BUFFER_FACTOR) - int(kept * ADDITIONAL_BUFFER_FACTOR)
            nvme += int(2 * p / nodes)
            kind = "estimated"
        return gpu, max(cpu, 0), nvme, formula, "zero3_model_states", kind
    offload = opt != "none" and settings.stage >= 1  # DeepSpeed offloads only under ZeRO
    if opt == "nvme" and offload:
        assumptions.append(Note("offload_optimizer.device nvme needs ZeRO stage 3; counted as cpu at this stage",
                                chinese.text("estimate.offload_optimizer_device_nvme_needs_zero")))
    cpu, gpu = zero2_model_states(p, g, nodes, offload)
    formula = (f"estimate_zero2_model_states_mem_needs(total_params={p}, num_gpus_per_node={g}, "
               f"num_nodes={nodes}, cpu_offload={offload})")
    kind = "computed" if settings.stage == 2 else "estimated"
    if settings.stage == 1 and not offload:
        gpu += 2 * p - int(2 * p / n)  # stage 1 keeps whole 16-bit gradients; stage 2 partitions them
        formula += f" + {2 * p} - {int(2 * p / n)} (ZeRO-1: 16-bit gradients not partitioned)"
    if settings.stage == 0:
        gpu = 20 * p  # nothing partitioned: the same 2 + 18 bytes per parameter on every rank
        formula = f"2·P + 18·P = 20 × {p} (stage 0: nothing partitioned; the byte split of the zero2 formula)"
    return gpu, int(cpu), 0, formula, "zero2_model_states", kind


def _aligned(numel: int, settings: Settings, element: int) -> int:
    alignment = max(1, AIO_ALIGNED_BYTES * settings.aio_intra_op_parallelism // element)
    remainder = numel % alignment
    return numel if remainder == 0 else numel + alignment - remainder


def persistent_numel(model: Model, threshold: int, cap: int) -> int | None:
    """16-bit elements kept whole on every rank at stage 3; ``None`` without the model's shape.

    Estimated on a GPT-2-style layer (the widest case): two LayerNorms with weight and bias (4 × H),
    biases of the QKV (3H), attention output (H), MLP up (4H) and down (H) projections, and the final
    LayerNorm; every tensor of at most ``threshold`` elements persists, until ``cap`` is reached."""
    if model.hidden is None or model.layers is None:
        return None
    h = model.hidden
    small = [n for n in (h, h, h, h, 3 * h, h, 4 * h, h) if n <= threshold]
    per_layer = sum(small)
    # whole layers while they all fit (arithmetic, not a loop over layers: bounded time for any --layers), then
    # tensor by tensor until not even the smallest fits
    full = model.layers if per_layer == 0 else min(model.layers, cap // per_layer)
    total = full * per_layer
    for _ in range(model.layers - full):
        if not small or cap - total < min(small):
            break
        for numel in small:
            if total + numel <= cap:
                total += numel
    for numel in (h, h):  # the final LayerNorm
        if numel <= threshold and total + numel <= cap:
            total += numel
    return total


def compute(settings: Settings, model: Model, assumptions: list[Note] | None = None) -> Estimate:
    """The whole estimate for one set of settings (pure arithmetic: the OOM list calls it per knob)."""
    notes = assumptions if assumptions is not None else []
    gpu, cpu, nvme, formula, citation, kind = model_states(settings, model, notes)
    est = Estimate(gpu, cpu, nvme, formula, citation, kind, assumptions=notes)
    b = settings.dtype_bytes
    par = settings.parallel
    # the parameters one rank's ZeRO works on, and the ranks it partitions them over
    p = local_params(settings, model)
    n = max(model.world // par.model_parallel, 1)
    if settings.stage == 3 and par.mics:
        n = min(par.mics, n)
    partition = -(-p // n)
    stage = settings.stage
    add = est.buffers.append
    parallel_terms(settings, model, est, p)
    if stage in (1, 2):
        if settings.contiguous_gradients:
            count = 2 if settings.overlap_comm else 1
            add(Term("reduce_bucket", count * settings.reduce_bucket_size * b, "gpu", "stage12_reduce_bucket",
                     f"{count} × reduce_bucket_size {settings.reduce_bucket_size} × {b} B"
                     + (" (a second buffer with overlap_comm)" if count == 2 else ""),
                     settings=("reduce_bucket_size", "overlap_comm", "contiguous_gradients")))
        add(Term("allgather_bucket", 0, "gpu", "stage12_allgather",
                 "0: the updated partitions are all-gathered in place into the flat 16-bit buffer; "
                 f"allgather_bucket_size {settings.allgather_bucket_size} only splits the calls into views of the "
                 "same buffer",
                 settings=("allgather_bucket_size",), also=("stage12_allgather_shards",)))
        if settings.offload_optimizer != "none":
            if model.largest_layer:
                numel = model.largest_layer
                add(Term("offload_gradient_staging_gpu", numel * b, "gpu", "stage12_offload_grad_buffers",
                         f"largest parameter ≤ largest layer {numel} × {b} B"))
                add(Term("offload_gradient_staging_cpu", numel * b, "cpu", "stage12_offload_grad_buffers",
                         f"largest parameter ≤ largest layer {numel} × {b} B", in_total=False,
                         note="inside the host figure's 1.5 buffer factor"))
            else:
                notes.append(Note("no --largest-layer-params: the offload gradient staging buffers "
                                  "(one largest parameter, GPU and host) are not counted",
                                  chinese.text("estimate.no_largest_layer_params_the_offload")))
            pinned = 10 * partition if settings.optimizer_pin else 0
            add(Term("pinned_host", pinned * model.gpus_per_node, "cpu", "stage12_pinned",
                     f"{'10' if settings.optimizer_pin else '0'} B × partition {partition} × {model.gpus_per_node} "
                     "ranks (fp32 weights 4 + 16-bit copy 2 + fp32 gradients 4)", per="node", in_total=False,
                     settings=("optimizer_pin",), also=("stage12_pinned_grad",),
                     note="page-locked part of the host model states"))
    if stage == 3:
        if settings.contiguous_gradients:
            add(Term("reduce_bucket", settings.reduce_bucket_size * b, "gpu", "stage3_reduce_bucket",
                     f"reduce_bucket_size {settings.reduce_bucket_size} × {b} B (one buffer at stage 3, "
                     "overlap_comm or not)", settings=("reduce_bucket_size", "contiguous_gradients")))
        largest = model.largest_layer or 0
        retained = min(settings.max_reuse_distance // 2, max(p - largest, 0))
        add(Term("stage3_reuse_retained", retained * b, "gpu", "stage3_reuse",
                 f"min(max_reuse_distance {settings.max_reuse_distance} / 2, P - largest layer) × {b} B",
                 kind="estimated", settings=("max_reuse_distance",),
                 note="at the forward/backward turn the last modules' parameters stay gathered when their "
                      "reuse is within max_reuse_distance elements of traversal (forward tail + backward head)"))
        room = max(settings.max_live_parameters - largest - retained, 0)
        prefetch = min(settings.prefetch_bucket_size, room, p)
        add(Term("stage3_prefetch", prefetch * b, "gpu", "stage3_prefetch",
                 f"min(prefetch_bucket_size {settings.prefetch_bucket_size}, max_live_parameters "
                 f"{settings.max_live_parameters} - largest layer - retained) × {b} B",
                 settings=("prefetch_bucket_size", "max_live_parameters"),
                 note="prefetch stops where gathered parameters would pass stage3_max_live_parameters"))
        persistent = persistent_numel(model, settings.param_persistence_threshold,
                                      settings.model_persistence_threshold)
        if persistent is None:
            notes.append(Note("no --hidden-size/--layers: stage-3 persistent parameters (tensors of at most "
                              "stage3_param_persistence_threshold elements, kept whole on every rank) are not counted",
                              chinese.text("estimate.no_hidden_size_layers_stage_persistent")))
        else:
            add(Term("stage3_persistent", persistent * b, "gpu", "stage3_persistence",
                     f"{persistent} elements of tensors ≤ param_persistence_threshold "
                     f"{settings.param_persistence_threshold} × {b} B", kind="estimated",
                     settings=("param_persistence_threshold", "model_persistence_threshold"),
                     note="GPT-2-style layer assumed: norms and biases (a Llama layer has only two norm weights)"))
        sub_group = min(settings.sub_group_size, partition)
        on_gpu = settings.offload_optimizer == "none"
        add(Term("sub_group_fp32_gradients", sub_group * 4, "gpu" if on_gpu else "cpu", "stage3_sub_group_grad",
                 f"min(sub_group_size {settings.sub_group_size}, partition {partition}) × 4 B", in_total=False,
                 settings=("sub_group_size",), also=("stage3_sub_groups",),
                 note="inside model_states: DeepSpeed's estimator counts 4 B/param of fp32 gradients for the whole "
                      "partition, where stage 3 shares one buffer of the largest sub-group among them"))
        if settings.offload_optimizer == "nvme":
            numel = _aligned(sub_group, settings, 4)
            count = settings.optimizer_buffer_count
            add(Term("nvme_optimizer_swap_buffers", count * numel * 4, "cpu", "optimizer_swap_count",
                     f"offload_optimizer.buffer_count {count} × aligned largest sub-group {numel} × 4 B (pinned)",
                     settings=("optimizer_buffer_count", "sub_group_size", "aio_intra_op_parallelism"),
                     also=("stage3_optimizer_swapper", "swap_buffer_manager", "stage3_sub_groups",
                           "aio_aligned_bytes")))
        if settings.offload_param == "nvme":
            numel = _aligned(settings.param_buffer_size, settings, b)
            count = settings.param_buffer_count
            add(Term("nvme_param_swap_buffers", count * numel * b, "gpu" if settings.aio_use_gds else "cpu",
                     "param_swap_buffers",
                     f"offload_param.buffer_count {count} × aligned buffer_size {numel} × {b} B"
                     + (" (on the GPU: aio.use_gds)" if settings.aio_use_gds else " (pinned)"),
                     settings=("param_buffer_count", "param_buffer_size", "aio_intra_op_parallelism", "aio_use_gds"),
                     also=("aio_alignment", "aio_aligned_bytes")))
        pinned = 0
        parts = []
        if settings.offload_param == "cpu" and settings.param_pin:
            pinned += 2 * partition
            parts.append("16-bit params 2")
        if settings.offload_optimizer == "cpu" and settings.optimizer_pin:
            pinned += 8 * partition
            parts.append("fp32 gradients 4 + sub-group gradients 4")
        elif settings.offload_optimizer == "nvme" and settings.optimizer_pin:
            pinned += 4 * partition  # sub-groups swapped to NVMe get no gradient buffer of their own
            parts.append("fp32 gradients 4")
        if parts:
            add(Term("pinned_host", pinned * model.gpus_per_node, "cpu",
                     "stage3_pinned_grads" if settings.offload_optimizer != "none" else "stage3_pinned_params",
                     f"({' + '.join(parts)}) B × partition {partition} × {model.gpus_per_node} ranks",
                     per="node", in_total=False, kind="estimated", settings=("optimizer_pin", "param_pin"),
                     also=(("stage3_pinned_subgroup_grads",) if settings.offload_optimizer != "none" else ())
                     + (("stage3_pinned_params",) if settings.offload_param == "cpu" else ()),
                     note="page-locked part of the host model states"))
    if model.shaped:
        activations(settings, model, est)
    else:
        notes.append(Note("no model shape (--hidden-size --layers --seq-len and a micro batch): activations not "
                          "counted", chinese.text("estimate.no_model_shape_hidden_size_layers")))
    return est


def parallel_terms(settings: Settings, model: Model, est: Estimate, local: int) -> None:
    """The parallelism the config declares, each with the DeepSpeed line that makes it: what it changes in the
    model states (inside that figure), and hpZ's secondary partition (an allocation of its own)."""
    par, notes = settings.parallel, est.assumptions
    plain = replace(settings, parallel=Parallel())
    if par.model_parallel > 1 or (par.ep > 1 and model.expert_params) or (settings.stage == 3 and par.mics):
        alone = data_parallel_model_states(plain, model, [])[0]
        est.parallelism.append(Term("model_parallel_sharding", alone - est.gpu_model_states, "gpu", "autotp",
                                    f"model states per rank {alone} with data parallelism alone − "
                                    f"{est.gpu_model_states} with it", in_total=False, kind="estimated",
                                    settings=tuple(f"parallel.{k}" for k in ("tp", "pp", "ep", "mics")),
                                    also=("zero_dp_group",) + (("expert_groups",) if par.ep > 1 else ())
                                    + (("pipeline_zero",) if par.pp > 1 else ())
                                    + (("mics_removed",) if par.mics else ()),
                                    note="bytes saved per rank, already inside model_states"))
    if par.tp > 1 and not (model.vocab and model.hidden and model.layers):
        notes.append(Note(f"AutoTP {par.tp}: no --vocab-size/--hidden-size/--layers, so every parameter is counted "
                          f"as sharded over the {par.tp} tensor-parallel ranks; the input embedding and the norms "
                          "stay whole on every rank, so the model states are a lower bound",
                          chinese.text("estimate.autotp_no_vocab_size_hidden_size", par_tp=par.tp)))
    elif par.tp > 1:
        notes.append(Note(f"AutoTP {par.tp}: the input embedding and the norms stay whole on every rank, the "
                          "blocks' linear layers and the output head are split (rank 0, which holds the most, is "
                          "counted)" + ("" if model.kv_heads else "; attention assumed split evenly (give --heads "
                                        "--kv-heads when autotp_size does not divide the key/value heads)"),
                          chinese.text("estimate.autotp_par_tp", par_tp=par.tp)
                          + ("" if model.kv_heads else chinese.text("estimate.autotp_size_heads_kv_heads"))))
    if par.pp > 1:
        notes.append(Note(f"pipeline.stages {par.pp}: parameters split evenly over the stages; the first stage "
                          f"holds up to {par.pp} micro-batches of its layers' activations, counted as one micro-batch "
                          "of the whole model's",
                          chinese.text("estimate.pipeline_stages_parameters_split_evenly_over", par_pp=par.pp)))
        if settings.stage >= 2:
            notes.append(Note("DeepSpeed's PipelineEngine refuses ZeRO stages 2 and 3 (runtime/pipe/engine.py:76-77)",
                              chinese.text("estimate.deepspeed_s_pipelineengine_refuses_zero_stages")))
    if par.ep > 1 and not model.expert_params:
        notes.append(Note(f"expert_parallel.autoep_size {par.ep}: pass --expert-params N (the parameters inside "
                          "the experts) to count AutoEP's sharding; counted as dense here",
                          chinese.text("estimate.expert_parallel_autoep_size_pass_expert", par_ep=par.ep)))
    if par.sp > 1:
        notes.append(Note(f"sequence_parallel_size {par.sp}: each rank holds 1/{par.sp} of every sequence's "
                          "activations (Ulysses); ZeRO partitions over the sequence-data-parallel group, every rank",
                          chinese.text("estimate.sequence_parallel_size_each_rank_holds", par_sp=par.sp)))
    if par.deepcompile:
        notes.append(Note("compile.deepcompile is on: DeepCompile's passes schedule ZeRO-3's gathers, prefetch and "
                          "frees themselves; the stage-3 prefetch and reuse terms follow the config's limits, which "
                          "it may not",
                          chinese.text("estimate.compile_deepcompile_is_on_deepcompile_s")))
    if settings.stage == 3 and par.hpz > 1:
        numel = -(-local // par.hpz)
        device = "cpu" if settings.offload_param != "none" else "gpu"
        b = settings.dtype_bytes
        est.buffers.append(Term("hpz_secondary_partition", numel * b, device, "hpz_secondary",
                                f"P {local} / zero_hpz_partition_size {par.hpz} × {b} B (a second 16-bit "
                                "partition within the node's group, gathered from in backward)",
                                settings=("parallel.hpz",),
                                note="ZeRO++ hpZ keeps it beside the primary partition"))


def activations(settings: Settings, model: Model, est: Estimate) -> None:
    """Per-layer activations after Korthikanti et al. (16-bit, no tensor or sequence parallelism)."""
    s, bsz, h, layers = model.seq_len or 0, model.micro_batch or 0, model.hidden or 0, model.layers or 0
    scale = settings.dtype_bytes / 2
    t, sp = settings.parallel.tp, settings.parallel.sp
    if sp > 1:
        s = -(-s // sp)  # Ulysses: each rank holds its slice of the sequence outside attention's all-to-all
    if t > 1:
        per_layer = int(s * bsz * h * (10 + 24 / t + (5 * model.heads * s / (h * t) if model.heads else 0)) * scale)
        shape = (f"s·b·h·(10 + 24/t + 5·a·s/(h·t)) = {s}·{bsz}·{h}·(10 + 24/{t}"
                 + (f" + 5·{model.heads}·{s}/({h}·{t}))" if model.heads else ") (no --heads)")
                 + " (tensor parallel, eq. 2)")
    elif model.heads:
        per_layer = int(s * bsz * h * (34 + 5 * model.heads * s / h) * scale)
        shape = f"s·b·h·(34 + 5·a·s/h) = {s}·{bsz}·{h}·(34 + 5·{model.heads}·{s}/{h})"
    else:
        per_layer = int(s * bsz * h * 34 * scale)
        shape = f"s·b·h·34 = {s}·{bsz}·{h}·34 (no --heads: attention scores not stored, as with flash attention)"
    if sp > 1:
        shape += f" (s = seq_len / sequence_parallel_size {sp})"
    if scale != 1:
        shape += f" × {scale:g} (fp32)"
    est.activations.append(Term("activations", per_layer * layers, "gpu", "activations_tp" if t > 1 else "activations",
                                f"layers {layers} × {shape}", kind="estimated"))
    checkpoints = int(2 * s * bsz * h * scale) * layers
    where = "cpu" if settings.cpu_checkpointing else "gpu"
    est.activation_ckpt.append(Term("checkpoints", checkpoints, where,
                                    "activation_cpu_checkpoint" if settings.cpu_checkpointing else "activations",
                                    f"layers {layers} × 2·s·b·h = {layers}·2·{s}·{bsz}·{h}"
                                    + (" (host memory: cpu_checkpointing)" if settings.cpu_checkpointing else ""),
                                    kind="estimated", settings=("cpu_checkpointing", "partition_activations")))
    est.activation_ckpt.append(Term("recompute_one_layer", per_layer, "gpu", "activations",
                                    f"one layer recomputed in backward: {shape}", kind="estimated"))


# ---------------------------------------------------------------- the OOM list


@dataclass(frozen=True)
class Knob:
    """One change to try, with what it costs (ours, en and zh)."""

    path: str
    change: str
    cost_class: int
    """1: nearly free (buffer sizes), 2: some speed, 3: much speed or host memory."""
    cost_en: str
    cost_zh: str


@dataclass
class Saving:
    knob: Knob
    gpu_saved: int
    cpu_delta: int

    def as_dict(self, lang: str) -> dict[str, Any]:
        return {"path": self.knob.path, "change": self.knob.change, "gpu_bytes_saved_per_rank": self.gpu_saved,
                "cpu_bytes_delta_per_node": self.cpu_delta, "cost_class": self.knob.cost_class,
                "cost": self.knob.cost_zh if lang == "zh" else self.knob.cost_en,
                "cost_en": self.knob.cost_en, "cost_zh": self.knob.cost_zh}


def _half(value: int) -> int:
    return max(value // 2, 1)


def candidate_changes(settings: Settings, model: Model) -> list[tuple[Knob, Settings, Model]]:
    """The knobs of this config worth turning, each with the settings (and model) it leads to."""
    z = "zero_optimization."
    out: list[tuple[Knob, Settings, Model]] = []

    def knob(path: str, change: str, cost: int, en: str, zh: str, new: Settings, new_model: Model = model) -> None:
        out.append((Knob(path, change, cost, en, zh), new, new_model))

    s = settings
    if s.stage < 3 and (s.stage < 2 or model.largest_layer):
        knob(z + "stage", f"{s.stage} → {s.stage + 1}", 2,
             "more communication: each higher stage partitions one more state and re-gathers it "
             "(stage 3 all-gathers every parameter in forward and backward, about 1.5× the traffic of stage 2)",
             chinese.text("estimate.more_communication_each_higher_stage_partitions"), replace(s, stage=s.stage + 1))
    if s.stage >= 1 and s.offload_optimizer == "none":
        knob(z + "offload_optimizer.device", "none → cpu", 3,
             "the optimizer step runs on the CPU (DeepSpeedCPUAdam) and gradients cross PCIe every step; "
             "needs the host memory shown",
             chinese.text("estimate.the_optimizer_step_runs_on_the"),
             replace(s, offload_optimizer="cpu"))
    if s.stage == 3 and s.offload_param == "none":
        knob(z + "offload_param.device", "none → cpu", 3,
             "every parameter is copied from host memory before each use: the slowest offload, "
             "bound by PCIe bandwidth",
             chinese.text("estimate.every_parameter_is_copied_from_host"),
             replace(s, offload_param="cpu"))
    if s.stage >= 1 and s.contiguous_gradients:
        knob(z + "reduce_bucket_size", f"{s.reduce_bucket_size} → {_half(s.reduce_bucket_size)}", 1,
             "more, smaller gradient reductions: a little less bandwidth efficiency",
             chinese.text("estimate.more_smaller_gradient_reductions_a_little"), replace(s,
                                                                                         reduce_bucket_size=_half(s.reduce_bucket_size)))
    if s.stage in (1, 2) and s.overlap_comm and s.contiguous_gradients:
        knob(z + "overlap_comm", "true → false", 2,
             "gradient reduction no longer overlaps the backward pass: a slower step",
             chinese.text("estimate.gradient_reduction_no_longer_overlaps_the"), replace(s, overlap_comm=False))
    if s.stage == 3 and s.parallel.hpz > 1:
        knob(z + "zero_hpz_partition_size", f"{s.parallel.hpz} → 1", 2,
             "no secondary partition: backward all-gathers parameters across nodes again",
             chinese.text("estimate.no_secondary_partition_backward_all_gathers"),
             replace(s, parallel=replace(s.parallel, hpz=1)))
    if s.stage == 3:
        knob(z + "stage3_prefetch_bucket_size", f"{s.prefetch_bucket_size} → {_half(s.prefetch_bucket_size)}", 1,
             "less parameter prefetch: all-gathers are less hidden behind compute",
             chinese.text("estimate.less_parameter_prefetch_all_gathers_are"), replace(s,
                                                                                       prefetch_bucket_size=_half(s.prefetch_bucket_size)))
        knob(z + "stage3_max_live_parameters", f"{s.max_live_parameters} → {_half(s.max_live_parameters)}", 1,
             "a lower ceiling on gathered parameters: prefetch stops earlier",
             chinese.text("estimate.a_lower_ceiling_on_gathered_parameters"), replace(s,
                                                                                      max_live_parameters=_half(s.max_live_parameters)))
        knob(z + "stage3_max_reuse_distance", f"{s.max_reuse_distance} → {_half(s.max_reuse_distance)}", 1,
             "parameters reused soon (the forward/backward turn) are released and gathered again",
             chinese.text("estimate.parameters_reused_soon_the_forward_backward"),
             replace(s, max_reuse_distance=_half(s.max_reuse_distance)))
        knob(z + "stage3_param_persistence_threshold", f"{s.param_persistence_threshold} → 0", 2,
             "small tensors (norms, biases) are gathered at every use: many small, latency-bound all-gathers",
             chinese.text("estimate.small_tensors_norms_biases_are_gathered"),
             replace(s, param_persistence_threshold=0))
        if s.offload_optimizer == "nvme":
            knob(z + "sub_group_size", f"{s.sub_group_size} → {_half(s.sub_group_size)}", 1,
                 "more, smaller optimizer steps and NVMe transfers",
                 chinese.text("estimate.more_smaller_optimizer_steps_and_nvme"), replace(s,
                                                                                         sub_group_size=_half(s.sub_group_size)))
            if s.optimizer_buffer_count > 1:
                knob(z + "offload_optimizer.buffer_count",
                     f"{s.optimizer_buffer_count} → {_half(s.optimizer_buffer_count)}", 2,
                     "less overlap of NVMe reads and writes with the optimizer step",
                     chinese.text("estimate.less_overlap_of_nvme_reads_and"),
                     replace(s, optimizer_buffer_count=_half(s.optimizer_buffer_count)))
        if s.offload_param == "nvme" and s.param_buffer_count > 1:
            knob(z + "offload_param.buffer_count", f"{s.param_buffer_count} → {_half(s.param_buffer_count)}", 2,
                 "fewer parameters in flight from NVMe: less prefetch; too few buffers fail at run time",
                 chinese.text("estimate.fewer_parameters_in_flight_from_nvme"),
                 replace(s, param_buffer_count=_half(s.param_buffer_count)))
    if model.shaped:
        if not s.checkpointing and model.hf:
            knob("--gradient_checkpointing", "off → on", 2,
                 "about one extra forward pass per step (~33% more compute); the HF Trainer calls "
                 "model.gradient_checkpointing_enable() (activation_checkpointing in the ds_config does nothing "
                 "for an HF model)",
                 chinese.text("estimate.about_one_extra_forward_pass_per"), replace(s, checkpointing=True))
        elif not s.checkpointing:
            knob("activation_checkpointing", "off → on", 2,
                 "about one extra forward pass per step (~33% more compute); turned on in the model's code "
                 "(deepspeed.checkpointing.checkpoint, or the HF Trainer's gradient_checkpointing), "
                 "not by this section",
                 chinese.text("estimate.about_one_extra_forward_pass_per_2"), replace(s, checkpointing=True))
        elif not s.cpu_checkpointing and not model.hf:
            knob("activation_checkpointing.cpu_checkpointing", "false → true", 2,
                 "checkpoints are copied to host memory and back over PCIe",
                 chinese.text("estimate.checkpoints_are_copied_to_host_memory"), replace(s, cpu_checkpointing=True))
        if (model.micro_batch or 0) > 1:
            knob("--per_device_train_batch_size" if model.hf else "train_micro_batch_size_per_gpu",
                 f"{model.micro_batch} → {_half(model.micro_batch or 2)}", 2,
                 "lower throughput per step; keep the global batch by raising "
                 + ("--gradient_accumulation_steps" if model.hf else "gradient_accumulation_steps"),
                 chinese.text("estimate.throughput_drops_raise")
                 + ("--gradient_accumulation_steps" if model.hf else "gradient_accumulation_steps")
                 + chinese.text("estimate.to_keep_the_global_batch"),
                 s, replace(model, micro_batch=_half(model.micro_batch or 2)))
    return out


def oom_list(settings: Settings, model: Model) -> list[Saving]:
    """The knobs ranked by GPU bytes saved per rank, then those that save host memory only, by the host bytes
    they save (an offload config runs out of host memory too); changes that save nothing are left out."""
    now = compute(settings, model, [])
    checkpointed = settings.checkpointing
    before_gpu, before_cpu = now.gpu_total(checkpointed), now.cpu_total(model.gpus_per_node, checkpointed)
    out = []
    for knob, new_settings, new_model in candidate_changes(settings, model):
        after = compute(new_settings, new_model, [])
        ck = new_settings.checkpointing
        saved = before_gpu - after.gpu_total(ck)
        host = after.cpu_total(model.gpus_per_node, ck) - before_cpu
        if saved > 0 or (saved == 0 and host < 0):
            out.append(Saving(knob, saved, host))
    out.sort(key=lambda s: (-s.gpu_saved, s.cpu_delta, s.knob.cost_class, s.knob.path))
    return out


def change_first(savings: list[Saving], gpu_total: int) -> Saving | None:
    """The cheapest change that saves at least 5% of the GPU total (the biggest saver among equals);
    when none does, the biggest saver."""
    worth = [s for s in savings if s.gpu_saved > 0 and s.gpu_saved * 20 >= gpu_total]
    if not worth:
        return savings[0] if savings else None
    return min(worth, key=lambda s: (s.knob.cost_class, -s.gpu_saved))


# ---------------------------------------------------------------- report


def report(est: Estimate, settings: Settings, model: Model, used: dict[str, dict[str, Any]], version: str,
           lang: str) -> dict[str, Any]:
    """The JSON answer."""
    g = model.gpus_per_node
    savings = oom_list(settings, model)
    first = change_first(savings, est.gpu_total(settings.checkpointing))
    total: dict[str, Any] = {
        "gpu_bytes_per_rank": est.gpu_total(), "cpu_bytes_per_node": est.cpu_total(g),
        "nvme_bytes_per_node": est.nvme_total(g),
    }
    if est.activations:
        total["gpu_bytes_per_rank_with_activation_checkpointing"] = est.gpu_total(True)
        total["cpu_bytes_per_node_with_activation_checkpointing"] = est.cpu_total(g, True)
    total["note"] = "model_states + buffers with in_total + activations (without checkpointing unless the key says so)"
    return {
        "version": version,
        "cited_release": CITED_RELEASE,
        "inputs": {k: v for k, v in asdict(model).items() if v is not None and not (k == "hf" and v is False)},
        "model_states": {"gpu_bytes_per_rank": est.gpu_model_states, "cpu_bytes_per_node": est.cpu_model_states,
                         "nvme_bytes_per_node": est.nvme_model_states, "kind": est.model_states_kind,
                         "formula": est.model_states_formula,
                         "source": CITATIONS[est.model_states_citation].where,
                         "config": {used[s]["path"]: {"value": used[s]["value"], "source": used[s]["source"]}
                                    for s in ("stage", "offload_optimizer", "offload_param") if s in used}},
        "buffers": {t.name: t.as_dict(used) for t in est.buffers},
        "parallelism": {t.name: t.as_dict(used) for t in est.parallelism},
        "activations": ({"without_checkpointing": {t.name: t.as_dict(used) for t in est.activations},
                         "with_checkpointing": {t.name: t.as_dict(used) for t in est.activation_ckpt},
                         "source": PAPER_ACTIVATIONS} if est.activations else {}),
        "total": total,
        "oom": [s.as_dict(lang) for s in savings],
        "change_first": first.as_dict(lang) if first else None,
        "assumptions": [note.text(lang) for note in est.assumptions],
    }


LABELS = {
    "en": {"title": "{name}: memory for {params} parameters on {nodes} × {gpus} GPUs, DeepSpeed {version} "
                    "(ZeRO stage {stage}, offload optimizer {opt}, params {par})",
           "model_states": "model states", "buffers": "buffers", "activations": "activations",
           "ckpt": "with activation checkpointing", "total": "total", "per_rank": "GPU per rank",
           "per_node": "host per node", "nvme": "NVMe per node", "not_added": "(inside another figure)",
           "oom": "OOM list: knobs ranked by GPU bytes saved per rank (then host bytes per node)",
           "first": "What to change first",
           "none": "no change to this config saves memory", "assumptions": "assumptions",
           "saves": "saves", "host": "host", "cost": "cost", "parallelism": "parallelism (saved per rank)"},
    "zh": {"title": chinese.text("estimate.title"),
           "model_states": chinese.text("estimate.model_states"), "buffers": chinese.text("estimate.buffers"),
               "activations": chinese.text("estimate.activations"),
           "ckpt": chinese.text("estimate.ckpt"), "total": chinese.text("estimate.total"),
               "per_rank": chinese.text("estimate.per_rank"),
           "per_node": chinese.text("estimate.per_node"), "nvme": chinese.text("estimate.nvme"),
               "not_added": chinese.text("estimate.not_added"),
           "oom": chinese.text("estimate.oom_list_heading"), "first": chinese.text("estimate.first"),
           "none": chinese.text("estimate.none"), "assumptions": chinese.text("estimate.assumptions"),
           "saves": chinese.text("estimate.saves"), "host": chinese.text("estimate.host"),
               "cost": chinese.text("estimate.cost"), "parallelism": chinese.text("estimate.parallelism")},
}


def verdict_lines(v: dict[str, Any], lang: str) -> list[str]:
    """The verdict in words: fits with the margin, or does not and what to change, cheapest first."""
    zh = lang == "zh"
    reserve = gib(v["reserve"])
    name = f"{v['gpu']}（{gib(v['gpu_memory'])}）" if zh else f"{v['gpu']} ({gib(v['gpu_memory'])})"
    v = dict(v, gpu=name)
    if v["fits"]:
        return [chinese.text("estimate.verdict_fits_in_per_gpu_per", v_gpu=v['gpu'],
                             gib_v_gpu_bytes_per_rank=gib(v['gpu_bytes_per_rank']), gib_v_margin=gib(v['margin']),
                                 reserve=reserve) if zh else
                f"Verdict: fits in {v['gpu']} per GPU: {gib(v['gpu_bytes_per_rank'])} per rank, {gib(v['margin'])} to "
                f"spare ({reserve} kept for the CUDA context and NCCL)"]
    lines = [chinese.text("estimate.verdict_does_not_fit_in_per", v_gpu=v['gpu'],
                          gib_v_gpu_bytes_per_rank=gib(v['gpu_bytes_per_rank']), gib_v_margin=gib(-v['margin']),
                              reserve=reserve) if zh else
             f"Verdict: does not fit in {v['gpu']} per GPU: {gib(v['gpu_bytes_per_rank'])} per rank, "
             f"{gib(-v['margin'])} over ({reserve} kept for the CUDA context and NCCL)"]
    if not v["changes"]:
        lines.append(chinese.text("estimate.no_change_to_this_config_saves") if zh else
                     "  no change to this config saves GPU memory: more or larger GPUs are needed")
        return lines
    head = (chinese.text("estimate.change_first_cheapest_that_fits") if zh else
            "  change first (cheapest that fits):") \
        if v["fits_after_changes"] else (chinese.text("estimate.these_changes_are_not_enough_more") if zh else
                                         "  these changes are not enough; more GPUs are needed too:")
    lines.append(head)
    for step in v["changes"]:
        lines.append(f"    {step['path']}: {step['change']} → {gib(step['gpu_bytes_per_rank_after'])}"
                     + (chinese.text("estimate.per_rank_2") if zh else " per rank; ") + step["cost"])
    if v["fits_after_changes"]:
        lines.append(chinese.text("estimate.then_to_spare",
                                  gib_v_margin_after_changes=gib(v['margin_after_changes'])) if zh else
                     f"  then {gib(v['margin_after_changes'])} to spare")
    return lines


def gib(value: int) -> str:
    """Bytes for people: GiB from 1 GiB, MiB below it (a bucket of a few MiB must not read 0.00 GiB)."""
    size = abs(value)
    if size >= GIB or size == 0:
        return f"{value / GIB:.2f} GiB"
    if size >= 1 << 20:
        return f"{value / (1 << 20):.1f} MiB"
    return f"{value / 1024:.1f} KiB"


def render_text(answer: dict[str, Any], name: str, settings: Settings, lang: str) -> str:
    words = LABELS[lang]
    colon = "：" if lang == "zh" else ": "  # a full-width colon takes no space after it
    inputs = answer["inputs"]
    lines = [words["title"].format(name=name, params=f"{inputs['params']:,}", nodes=inputs["nodes"],
                                   gpus=inputs["gpus_per_node"], version=answer["version"], stage=settings.stage,
                                   opt=settings.offload_optimizer, par=settings.offload_param), ""]
    ms = answer["model_states"]
    lines.append(f"{words['model_states']}{colon}{words['per_rank']} {gib(ms['gpu_bytes_per_rank'])}, "
                 f"{words['per_node']} {gib(ms['cpu_bytes_per_node'])}"
                 + (f", {words['nvme']} {gib(ms['nvme_bytes_per_node'])}" if ms["nvme_bytes_per_node"] else "")
                 + f"  [{ms['source']}]")
    lines.append(f"  {ms['formula']}")
    lines += ["", f"{words['buffers']}{colon.strip()}"]

    def term_line(term_name: str, term: dict[str, Any]) -> list[str]:
        where = {"gpu": "GPU", "cpu": words["host"], "nvme": "NVMe"}[term["device"]]
        per = "/node" if term["per"] == "node" else "/rank"
        extra = "" if term["in_total"] else f" {words['not_added']}"
        return [f"  {term_name:<30} {gib(term['bytes']):>11} {where}{per}{extra}  [{term['source']}]",
                f"  {'':<30} {term['formula']}"]

    for term_name, term in answer["buffers"].items():
        lines += term_line(term_name, term)
    if answer["parallelism"]:
        lines += ["", f"{words['parallelism']}{colon.strip()}"]
        for term_name, term in answer["parallelism"].items():
            lines += term_line(term_name, term)
    if answer["activations"]:
        lines += ["", f"{words['activations']}{colon.strip()}"]
        for term_name, term in answer["activations"]["without_checkpointing"].items():
            lines += term_line(term_name, term)
        lines.append(f"  {words['ckpt']}{colon.strip()}")
        for term_name, term in answer["activations"]["with_checkpointing"].items():
            lines += term_line(term_name, term)
    total = answer["total"]
    lines += ["", f"{words['total']}{colon}{words['per_rank']} {gib(total['gpu_bytes_per_rank'])}, "
                  f"{words['per_node']} {gib(total['cpu_bytes_per_node'])}"
                  + (f", {words['nvme']} {gib(total['nvme_bytes_per_node'])}" if total["nvme_bytes_per_node"] else "")]
    if "gpu_bytes_per_rank_with_activation_checkpointing" in total:
        lines.append(f"  {words['ckpt']}{colon}{words['per_rank']} "
                     f"{gib(total['gpu_bytes_per_rank_with_activation_checkpointing'])}, {words['per_node']} "
                     f"{gib(total['cpu_bytes_per_node_with_activation_checkpointing'])}")
    lines += ["", f"{words['oom']}{colon.strip()}"]
    if not answer["oom"]:
        lines.append(f"  {words['none']}")
    for i, item in enumerate(answer["oom"], 1):
        delta, saved = item["cpu_bytes_delta_per_node"], item["gpu_bytes_saved_per_rank"]
        effects = [f"GPU −{gib(saved)}"] if saved else []
        if delta:
            effects.append(f"{words['host']} {'+' if delta > 0 else '−'}{gib(abs(delta))}")
        lines.append(f"  {i:>2}. {item['path']}: {item['change']} — {', '.join(effects)}")
        lines.append(f"      {words['cost']}{colon}{item['cost']}")
    if answer["change_first"]:
        item = answer["change_first"]
        lines += ["", f"{words['first']}{colon}{item['path']} ({item['change']}), {words['saves']} "
                      f"{gib(item['gpu_bytes_saved_per_rank'])}; {item['cost']}"]
    if answer.get("verdict"):
        lines += [""] + verdict_lines(answer["verdict"], lang)
    if answer["assumptions"]:
        lines += ["", f"{words['assumptions']}{colon.strip()}"] + [f"  - {a}" for a in answer["assumptions"]]
    from dsfields.model.messages import localize  # issue 28: the formula lines in Chinese too (json stays English)

    return localize("\n".join(lines), lang, "estimate.")


# ---------------------------------------------------------------- command line


COUNT_BOUNDS: dict[str, int] = {
    "params": 10**15,
    "largest_layer_params": 10**15,
    "gpus_per_node": 1024,
    "nodes": 1_000_000,
    "hidden_size": 2**20,
    "layers": 100_000,
    "seq_len": 100_000_000,
    "micro_batch": 1_000_000,
    "heads": 2**20,
    "expert_params": 10**15,
    "vocab_size": 10**8,
    "kv_heads": 2**20,
}
"""The most each count can be in a real run (the largest models have ~2·10¹² parameters, hidden sizes ~3·10⁴,
a few hundred layers, contexts of ~10⁷ tokens), with room to spare: beyond it the arithmetic would only be
unbounded work (issue 43), not an answer."""
SIZE_BOUND = 2**63 - 1
"""The most a config's size or count can be: DeepSpeed allocates its buffers as torch tensors of int64 elements."""


def bounded(what: str, number: float | int, bound: int, shown: object = None) -> int:
    """The one check of every count estimate reads (a command-line option or a config value): a whole number
    up to ``bound`` (the caller has refused what is below its least), else one line naming ``what`` and the
    bound."""
    if shown is None:
        shown = number if len(str(number)) <= 24 else f"{float(number):.3e}"
    if isinstance(number, float) and not math.isfinite(number):
        raise UsageError(f"{what} {shown}: not a finite number")
    if number > bound:
        why = ("DeepSpeed's buffers are torch tensors of int64 elements" if bound == SIZE_BOUND
               else "the most a real run has")
        raise UsageError(f"{what} {shown}: more than {bound:,} ({why}; dsfields' bound)")
    if isinstance(number, float) and not number.is_integer():
        raise UsageError(f"{what} {shown}: not a whole number")
    return int(number)


def count(option: str, text: str | None, bound: int = SIZE_BOUND) -> int | None:
    """A count given on the command line: 7e9, 7000000000, 7B, 1.3B, 350M, 64K (``None`` stays ``None``), at
    most ``bound``.

    Checked here rather than by argparse, whose refusal is a usage block: bad input is one line, exit 2."""
    if text is None:
        return None
    value = text.strip().replace("_", "").replace(",", "")
    scale = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}.get(value[-1:].lower(), 1)
    if scale != 1:
        value = value[:-1]
    if len(value) > 64:  # no count has more digits than that; float() of a megabyte of them costs time
        raise UsageError(f"{option} {text[:20]!r}… ({len(text)} characters): not a count")
    try:
        number = float(value) * scale
    except ValueError:
        raise UsageError(f"{option} {text!r}: not a number (e.g. 7e9, 7B, 350M)") from None
    if not number < float("inf"):
        raise UsageError(f"{option} {text!r}: not a finite number")
    if number <= 0:
        raise UsageError(f"{option} {text!r}: must be more than 0")
    return bounded(option, number, bound, repr(text))


COUNT_OPTIONS = ("params", "largest_layer_params", "gpus_per_node", "nodes", "hidden_size", "layers", "seq_len",
                 "micro_batch", "heads", "expert_params", "vocab_size", "kv_heads")

GIB_UNITS = {"": GIB, "g": GIB, "gb": GIB, "gib": GIB, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
             "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
"""Units of ``--gpu-memory``: a GPU's "80GB" is 80 GiB (an A100-80GB reports 81920 MiB), so GB reads as GiB."""

GPUS_WITHOUT_SIZE = {"h100": 80, "h200": 141, "h20": 96, "l40s": 48, "l40": 48, "l4": 24, "a10": 24, "a10g": 24,
                     "rtx4090": 24, "4090": 24, "rtx3090": 24, "3090": 24, "a6000": 48, "rtxa6000": 48,
                     "mi300x": 192, "mi250x": 128, "t4": 16}
"""GiB of GPUs sold in one memory size, for a name without its size (``--gpu-memory H100``); a name with its
size (``A100-40GB``, ``V100-32GB``) is read from the size it carries (ours: vendors' data sheets, not DeepSpeed's)."""

MAX_GPU_MEMORY = 1 << 50
"""1 PiB: larger than any GPU, so a larger ``--gpu-memory`` is a typo (the parse stays bounded)."""


def gpu_memory(option: str, text: str | None) -> tuple[int, str] | None:
    """``--gpu-memory``: bytes and the words for it, from 80GB, 24GiB, 81920MiB, 80 (GiB), or a GPU's name
    (A100-80GB, H100-80GB, RTX4090-24GB, or H100, RTX4090 for GPUs made in one size).

    The one parser of this option (issue 43 hardens the numeric options: extend it here, do not duplicate)."""
    if text is None:
        return None
    import re

    raw = text.strip()
    if len(raw) > 40:
        raise UsageError(f"{option}: too long to be a memory size or a GPU name")
    word = raw.lower().replace(" ", "").replace("_", "-")
    sized = re.fullmatch(r"(?:([a-z][a-z0-9]*)-)?(\d+(?:\.\d+)?)([a-z]*)", word)
    if sized is None:
        bare = GPUS_WITHOUT_SIZE.get(word.replace("-", "")) or GPUS_WITHOUT_SIZE.get(word.replace("nvidia", ""))
        if bare is None:
            raise UsageError(f"{option} {raw!r}: not a memory size (80GB, 24GiB) or a GPU name such as A100-80GB, "
                             f"H100, RTX4090")
        return bare * GIB, raw
    name, number, unit = sized.groups()
    if unit not in GIB_UNITS:
        raise UsageError(f"{option} {raw!r}: unit {unit!r} is not one of GB, GiB, MB, MiB, TB")
    value = float(number) * GIB_UNITS[unit]
    if not 0 < value <= MAX_GPU_MEMORY:
        raise UsageError(f"{option} {raw!r}: must be more than 0 and at most 1 PiB")
    return int(value), raw


def _one_line_error(parser: argparse.ArgumentParser) -> None:
    """argparse's own refusals as one line, exit 2 (:func:`dsfields.model.errors.one_line_argparse`)."""
    from dsfields.model.errors import one_line_argparse

    one_line_argparse(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _one_line_error(parser)
    parser.add_argument("file", type=Path, metavar="FILE",
                        help="a ds_config file (JSON or hjson), or an accelerate YAML config")
    parser.add_argument("--params", metavar="N", help="total model parameters (7e9, 7B, 1.3B, 350M)")
    parser.add_argument("--largest-layer-params", metavar="N",
                        help="parameters of the largest layer (ZeRO-3 gathers one at a time; default 4·H² "
                             "from --hidden-size)")
    parser.add_argument("--gpus-per-node", default=None, metavar="G",
                        help="GPUs (ranks) per node (default: inferred from the config's batch sizes, else 1)")
    parser.add_argument("--nodes", default=None, metavar="K", help="nodes (default: inferred with --gpus-per-node)")
    parser.add_argument("--gpu-memory", default=None, metavar="SIZE",
                        help="memory of one GPU (80GB, 24GiB, 81920MiB, or a GPU such as A100-80GB, H100, "
                             "RTX4090): a fits / does not fit verdict with the margin and, when it does not, the "
                             "cheapest change that makes it fit")
    parser.add_argument("--expert-params", metavar="N",
                        help="parameters inside the MoE experts (AutoEP shards these over expert_parallel.autoep_size)")
    parser.add_argument("--hf", action="store_true",
                        help="launched by the HF Trainer: advice in its flags (--gradient_checkpointing)")
    parser.add_argument("--hidden-size", metavar="H", help="the model's hidden size (activations, persistent "
                                                            "parameters, the HF Trainer's \"auto\" buckets)")
    parser.add_argument("--layers", metavar="L", help="transformer layers")
    parser.add_argument("--seq-len", metavar="S", help="sequence length in tokens")
    parser.add_argument("--micro-batch", metavar="B",
                        help="sequences per GPU (default: the config's train_micro_batch_size_per_gpu)")
    parser.add_argument("--heads", metavar="A",
                        help="attention heads: counts the attention scores (leave out with flash attention)")
    parser.add_argument("--vocab-size", metavar="V",
                        help="vocabulary: AutoTP leaves the input embedding (V × H) whole on every rank")
    parser.add_argument("--kv-heads", metavar="K",
                        help="key/value heads (with --heads): AutoTP splits attention by them")
    parser.add_argument("--no-zero-init", dest="zero_init", action="store_false",
                        help="ZeRO-3: the model is built whole on each rank, not under deepspeed.zero.Init")
    parser.add_argument("--trainer-args", default=None, metavar='"ARGS"',
                        help="the HF Trainer's flags (as for check): the config as the Trainer hands it to DeepSpeed "
                             "(--per_device_train_batch_size as micro batch, --bf16/--fp16, --gradient_checkpointing)")
    parser.add_argument("--hf-version", default=None, metavar="T[,A]",
                        help="the transformers (and accelerate) releases whose flags and rules to follow")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--version", default=None,
                        help="DeepSpeed version (default: the installed one if snapshotted, else the newest)")
    parser.add_argument("--lang", default=None, help="en or zh (default: zh when LANG is a zh locale, else en)")


def _as_the_trainer_hands_it(data: dict[str, Any], args: argparse.Namespace, model: Model,
                             assumptions: list[Note]) -> tuple[dict[str, Any], bool]:
    """``--trainer-args``: the config after the Trainer's and accelerate's fills (micro batch from
    ``--per_device_train_batch_size``, precision, the hidden-size buckets), and whether ``--gradient_checkpointing``
    turns activation checkpointing on (the Trainer calls ``model.gradient_checkpointing_enable()``)."""
    from dsfields.hf.arguments import load_hf_snapshot, load_rules, parse_trainer_args
    from dsfields.hf.trainer import trainer_run

    version, _, acc = (args.hf_version or "").partition(",")
    snap = load_hf_snapshot(version or None)
    trainer = parse_trainer_args(args.trainer_args, snap, world_size=model.world, hidden_size=model.hidden,
                                 hidden_size_from="--hidden-size" if model.hidden else "")
    trainer.rules = load_rules(snap, acc or None, explicit=bool(version))
    run = trainer_run(data, trainer, {})
    tag = f"transformers {trainer.transformers_version}"
    if trainer.unknown:
        words = " ".join(trainer.unknown)
        assumptions.append(Note(f"--trainer-args: not TrainingArguments flags of {tag}: {words}",
                                chinese.text("estimate.trainer_args_not_trainingarguments_flags_of", tag=tag,
                                             words=words)))
    checkpointing = bool(trainer.values.get("gradient_checkpointing"))
    if checkpointing:
        assumptions.append(Note("--gradient_checkpointing: activations counted with checkpointing on (the Trainer "
                                "calls model.gradient_checkpointing_enable())",
                                chinese.text("estimate.gradient_checkpointing_activations_counted_with_checkpointing")))
    if run.config is None:
        first = run.mismatches[0] if run.mismatches else str(run.error).splitlines()[0] if run.error else "refused"
        assumptions.append(Note(f"the HF Trainer ({tag}) refuses this config with these arguments ({first}): "
                                "estimated from the file as written",
                                chinese.text("estimate.the_hf_trainer_refuses_this_config", tag=tag, first=first)))
        return data, checkpointing
    micro = run.config.get("train_micro_batch_size_per_gpu")
    assumptions.append(Note(f"the config as the HF Trainer ({tag}) hands it to DeepSpeed with --trainer-args "
                            f"(micro batch {micro}, precision {run.precision})",
                            chinese.text("estimate.the_config_as_the_hf_trainer", tag=tag, micro=micro,
                                         run_precision=run.precision)))
    final = {k: v for k, v in run.config.items() if k != "steps_per_print"}
    return final, checkpointing


def inferred_world(data: dict[str, Any], parallel: Parallel, model: Model, assumptions: list[Note]) -> Model:
    """The world the config's batch sizes fix (train_batch_size = micro × accumulation × data-parallel world, the
    check's batch rule), times the ranks that are not data parallel; said in the assumptions. Without one world
    that fits: one GPU, said too."""
    from dsfields.check.rules import MAX_WORLD_SIZE
    from dsfields.model.batch import BATCH_KEYS
    from dsfields.model.batch import refusal as resolve_batch

    values = [data.get(key) for key in BATCH_KEYS]
    numbers = [v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None for v in values]
    tbs, micro, gas = numbers
    worlds: list[int] = []
    if tbs is not None and micro is not None and gas is not None and tbs % (micro * gas) == 0:
        dp = tbs // (micro * gas)
        if dp <= MAX_WORLD_SIZE and resolve_batch(tbs, micro, gas, dp) is None:
            worlds = [dp]
    if not worlds:
        assumptions.append(Note("world: 1 GPU (no --gpus-per-node/--nodes, and the config's batch sizes do not fix "
                                f"a world size of at most {MAX_WORLD_SIZE}: that needs all three of train_batch_size, "
                                "train_micro_batch_size_per_gpu and gradient_accumulation_steps, consistent)",
                                chinese.text("estimate.world_gpu_no_gpus_per_node", MAX_WORLD_SIZE=MAX_WORLD_SIZE)))
        return model
    dp = worlds[0]
    world = dp * parallel.sp * parallel.model_parallel
    per_node = world if world <= 8 else 8 if world % 8 == 0 else world
    nodes = world // per_node
    others = [f"{name} {size}" for name, size in (("sequence_parallel_size", parallel.sp),
                                                 ("autotp_size", parallel.tp), ("pipeline stages", parallel.pp))
              if size > 1]
    extra = f" × {' × '.join(others)}" if others else ""
    assumptions.append(Note(f"world: {world} GPUs ({nodes} × {per_node}) inferred from the batch sizes: "
                            f"train_batch_size {tbs} = {micro} × {gas} × {dp} data-parallel ranks{extra} "
                            "(pass --gpus-per-node/--nodes to say otherwise)",
                            chinese.text("estimate.world_gpus_inferred_from_the_batch", world=world, nodes=nodes,
                                         per_node=per_node, tbs=tbs, micro=micro, gas=gas, dp=dp, extra=extra)))
    return replace(model, gpus_per_node=per_node, nodes=nodes)


RESERVE = GIB
"""Kept free by the verdict for what the estimate does not model (the CUDA context, ~0.3-1 GiB, and NCCL's
buffers): ours, said in the verdict."""


def verdict(est: Estimate, settings: Settings, model: Model, capacity: tuple[int, str], lang: str) -> dict[str, Any]:
    """Fits or not on a GPU of ``capacity`` bytes, with the margin; when it does not, the cheapest change (or the
    cheapest series of changes) that makes it fit, by the OOM list's costs."""
    size, label = capacity
    room = size - RESERVE
    need = est.gpu_total(settings.checkpointing)
    out: dict[str, Any] = {"gpu_memory": size, "gpu": label, "reserve": RESERVE, "gpu_bytes_per_rank": need,
                           "margin": room - need, "fits": need <= room, "changes": []}
    if need <= room:
        return out
    steps: list[dict[str, Any]] = []
    for most in (1, 2, 3):  # the cheapest cost class that can make it fit, each knob turned at most once
        steps = _changes_up_to(settings, model, room, most, lang)
        if steps and steps[-1]["gpu_bytes_per_rank_after"] <= room:
            break
    out["changes"] = steps
    out["fits_after_changes"] = bool(steps) and steps[-1]["gpu_bytes_per_rank_after"] <= room
    if steps:
        out["margin_after_changes"] = room - steps[-1]["gpu_bytes_per_rank_after"]
    return out


def _changes_up_to(settings: Settings, model: Model, room: int, most: int, lang: str) -> list[dict[str, Any]]:
    """Changes of cost class at most ``most``, one after the other, until the GPU total fits in ``room``: at each
    step the cheapest change that fits now, else the one that saves the most."""
    steps: list[dict[str, Any]] = []
    done: set[str] = set()
    current_settings, current_model = settings, model
    while True:
        now = compute(current_settings, current_model, []).gpu_total(current_settings.checkpointing)
        options = []
        for knob, new_settings, new_model in candidate_changes(current_settings, current_model):
            if knob.cost_class > most or knob.path in done:
                continue
            after = compute(new_settings, new_model, []).gpu_total(new_settings.checkpointing)
            if after < now:
                options.append((knob, new_settings, new_model, after))
        if not options:
            return steps
        fitting = [o for o in options if o[3] <= room]
        knob, current_settings, current_model, after = (min(fitting, key=lambda o: (o[0].cost_class, o[3])) if fitting
                                                        else min(options, key=lambda o: (o[3], o[0].cost_class)))
        done.add(knob.path)
        steps.append({"path": knob.path, "change": knob.change, "gpu_bytes_per_rank_after": after,
                      "cost_class": knob.cost_class, "cost": knob.cost_zh if lang == "zh" else knob.cost_en})
        if after <= room:
            return steps


def run(args: argparse.Namespace) -> int:
    lang = prose.language(args.lang)
    counts = {name: count(f"--{name.replace('_', '-')}", getattr(args, name), COUNT_BOUNDS[name])
              for name in COUNT_OPTIONS}
    if counts["params"] is None:
        raise UsageError("--params N is required (the model's total parameter count, e.g. 7e9)")
    snapshot = load_requested(args.version)
    try:
        # what DeepSpeed (or, with --trainer-args, the Trainer's json.load) cannot load has no memory to estimate
        from dsfields.configfile import is_accelerate_yaml
        from dsfields.convert import load_as_ds_config

        converted: list[Any] = []
        config, from_yaml = load_as_ds_config(args.file, getattr(args, "trainer_args", None) is not None,
                                              args.lang, converted)
        if from_yaml and is_accelerate_yaml(args.file):
            args.hf = True  # accelerate fills the "auto" values at prepare, as the Trainer does
    except ConfigFileError as exc:
        raise DsfieldsError(str(exc)) from None
    if not isinstance(config.data, dict):
        raise DsfieldsError(f"{config.name}: not a JSON object")
    largest = counts["largest_layer_params"]
    hidden = counts["hidden_size"]
    assumptions: list[Note] = []
    world = converted[0].world if converted else None
    if world is not None and counts["gpus_per_node"] is None and counts["nodes"] is None:
        counts["gpus_per_node"], counts["nodes"] = world[0] // world[1], world[1]  # the YAML's own world
        assumptions.append(Note(f"world from the accelerate YAML: num_processes {world[0]} over num_machines "
                                f"{world[1]} ({world[0] // world[1]} GPUs per node)",
                                chinese.text("estimate.world_from_the_accelerate_yaml_num", world_0=world[0],
                                             world_1=world[1], world_0_world_1=world[0] // world[1])))
    if largest is None and hidden:
        largest = 4 * hidden ** 2
        assumptions.append(Note(f"largest layer taken as 4·H² = {largest} (an MLP projection); an embedding of "
                                "vocab × H may be larger: pass --largest-layer-params",
                                chinese.text("estimate.largest_layer_taken_as_h_an", largest=largest)))
    hf = bool(getattr(args, "hf", False)) or getattr(args, "trainer_args", None) is not None
    capacity = gpu_memory("--gpu-memory", getattr(args, "gpu_memory", None))
    model = Model(counts["params"] or 0, largest, counts["gpus_per_node"] or 1, counts["nodes"] or 1, hidden,
                  counts["layers"], counts["seq_len"], counts["micro_batch"], counts["heads"], args.zero_init,
                  counts["expert_params"], hf, counts["vocab_size"], counts["kv_heads"])
    if model.kv_heads is not None and (model.heads is None or model.heads % model.kv_heads):
        raise UsageError("--kv-heads needs --heads, a multiple of it (grouped-query attention)")
    if model.expert_params is not None and model.expert_params > model.params:
        raise UsageError(f"--expert-params {model.expert_params} is more than --params {model.params}")
    version, _, acc = (args.hf_version or "").partition(",")
    hf_pair = (version, acc) if version and acc else None
    resolver = Resolver(snapshot)
    if counts["gpus_per_node"] is None and counts["nodes"] is None:
        probe, _, _ = settings_from_config(config.data, resolver, model, [], hf_pair)
        model = inferred_world(config.data, probe.parallel, model, assumptions)
    data, checkpointing = config.data, False
    if getattr(args, "trainer_args", None) is not None:
        data, checkpointing = _as_the_trainer_hands_it(config.data, args, model, assumptions)
    settings, used, micro = settings_from_config(data, resolver, model, assumptions, hf_pair)
    if model.world % settings.parallel.model_parallel or model.world % settings.parallel.sp:
        par = settings.parallel
        raise DsfieldsError(f"world size {model.world} is not a multiple of autotp_size {par.tp} × pipeline stages "
                            f"{par.pp} (and of sequence_parallel_size {par.sp}): DeepSpeed cannot build its groups")
    if checkpointing:
        settings = replace(settings, checkpointing=True)
    if settings.stage == 3 and largest is None:
        raise UsageError("ZeRO stage 3 needs --largest-layer-params N (or --hidden-size H for 4·H²)")
    if model.micro_batch is None and micro is not None:
        model = replace(model, micro_batch=micro)
        if model.shaped:
            assumptions.append(Note(f"micro batch {micro}: the config's train_micro_batch_size_per_gpu",
                                    chinese.text("estimate.micro_batch_the_config_s_train", micro=micro)))
    assumptions += [
        Note(f"line numbers cite DeepSpeed {CITED_RELEASE}'s source; the formulas are applied to release "
             f"{snapshot.version}'s keys and defaults",
             chinese.text("estimate.line_numbers_cite_deepspeed_s_source", CITED_RELEASE=CITED_RELEASE,
                          snapshot_version=snapshot.version)),
        Note("Adam-style optimizer (two fp32 states) and 16-bit mixed precision, as DeepSpeed's estimators assume"
             + ("" if settings.half else "; this config enables neither fp16 nor bf16"),
             chinese.text("estimate.adam_fp32_deepspeed")
             + ("" if settings.half else chinese.text("estimate.fp16_bf16"))),
        Note(f"host figures keep DeepSpeed's additional_buffer_factor {ADDITIONAL_BUFFER_FACTOR}",
             chinese.text("estimate.host_figures_keep_deepspeed_s_additional",
                          ADDITIONAL_BUFFER_FACTOR=ADDITIONAL_BUFFER_FACTOR)),
        *([] if replace(settings.parallel, deepcompile=False).declared else [
            Note("data parallel only: the config declares no tensor, pipeline or sequence parallelism"
                 + "".join(f", no {name}" for name in _parallel_features(snapshot)),
                 chinese.text("estimate.data_parallel_only_base")
                 + "".join(chinese.text("estimate.data_parallel_only_no", feature=name)
                           for name in _parallel_features(snapshot)))]),
        Note("not modelled: the CUDA context (~0.3-1 GiB per GPU), NCCL's own buffers, the allocator's "
             "fragmentation and cache, logits and loss (s·b·vocab), temporary tensors of kernels",
             chinese.text("estimate.not_modelled_the_cuda_context_gib")),
    ]
    if settings.stage == 3:
        assumptions.append(Note("ZeRO-3 model built under deepspeed.zero.Init",
                                chinese.text("estimate.zero_model_built_under_deepspeed_zero")) if model.zero_init else
                           Note("ZeRO-3 model built whole on every rank (--no-zero-init)",
                                chinese.text("estimate.zero_model_built_whole_on_every")))
    est = compute(settings, model, assumptions)
    answer = report(est, settings, model, used, snapshot.version, lang)
    if capacity is not None:
        answer["verdict"] = verdict(est, settings, model, capacity, lang)
    if args.format == "json":
        print(json.dumps(answer, indent=1, ensure_ascii=False))
    else:
        print(render_text(answer, config.name, settings, lang))
    return 0


_PARALLEL_FEATURES = (("AutoEP", "expert_parallel"), ("hpZ", "zero_optimization.zero_hpz_partition_size"),
                      ("MiCS", "zero_optimization.mics_shard_size"))
"""Ways of sharding or parallelism beyond data parallel, named by the config key that turns each on."""


def _parallel_features(snapshot: Any) -> list[str]:
    """The features of :data:`_PARALLEL_FEATURES` the release has (a config declaring none is data parallel only;
    a release without one is not told of it)."""
    raw = getattr(snapshot, "raw", {}) or {}
    known = set(raw.get("fields") or {}) | set(raw.get("sections") or {})
    return [name for name, key in _PARALLEL_FEATURES if key in known]

