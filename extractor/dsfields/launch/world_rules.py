"""The world rules: what ``deepspeed.initialize`` refuses only at some world sizes (issue 42).

A config that launches on one rank can be refused on 8: the hpZ group must divide the world, an AutoTP mesh
larger than the world (or not dividing it) fails on the ranks outside it, MiCS' shard group must divide the world and
its hierarchical gather must span nodes, elasticity's world size must be one of its valid GPU counts. The same probe
also confirms refusals that read no world size but that no value probe reaches, because they fire only when the
engine and its optimizer are set up (``any_world``: ZenFlow, Muon, DeepCompile with unmanaged accumulation, the
legacy curriculum scheduler's asserted keys, elasticity's own checks, the optimizer's dtype mix). Each
:class:`WorldRule` here is one such refusal, read in DeepSpeed's source (``source``: file:line of ``read_in``), with a
predicate over the config *as written* and the world (N ranks, G per node), and a triggering and a non-triggering
example at :data:`PROBE_WORLD` ranks.

Like the launch rules (:mod:`dsfields.launch.catalogue`) they are *confirmed per release*: ``python -m
dsfields.extract.world_witness`` launches every example as rank 0 and as the last rank of a world of
:data:`PROBE_WORLD` (torch's fake process group, :mod:`dsfields.launch.world`) and writes
``generated/<version>/world.json``; ``check --world-size N`` applies a rule only where that file confirms it.

Imports: stdlib and ``dsfields.model`` only (shared by the extractor, which runs the examples, and by ``check``).
"""

from __future__ import annotations

from collections import namedtuple

from dsfields.model import elasticity
from dsfields.model.dotted import at_path, edited

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations are strings
    from collections.abc import Callable
    from typing import Any

PROBE_WORLD = 8
"""The world size the examples are launched at (rank 0 and rank 7)."""
PROBE_PER_NODE = 4
"""Ranks per node in the probe world: two nodes of 4, so a rule about ranks per node (MiCS' hierarchical gather)
is launched both within one node and across two."""
WORLD_FILE = "world.json"
WORLD_FORMAT = 1


class WorldRule(namedtuple("WorldRule",
                           "id enforces source key fix message fires triggers controls read_in related any_world "
                           "marker", defaults=("0.19.8", (), False, None))):
    __slots__ = ()

    id: str
    enforces: str
    """What DeepSpeed (or torch under it) enforces at ``deepspeed.initialize`` on N ranks."""
    source: str
    """``file:line`` where it is enforced, in DeepSpeed ``read_in``."""
    key: str
    fix: str
    message: str
    """A substring of the refusal's own message (or of the raising line's code) when the rule fires."""
    fires: Callable[[dict[str, Any], int, int], str | None]
    """(config, N, ranks per node) -> the JSON path refused, or None. A rule that needs the release's defaults
    (elasticity) reads them from the config's :data:`DEFAULTS_KEY` entry, put there by :func:`evaluate`."""
    triggers: tuple[dict[str, Any], ...]
    controls: tuple[dict[str, Any], ...]
    read_in: str  # default "0.19.8"
    related: tuple[str, ...]  # default ()
    """Other keys the refusal names (``tensor_parallel.autotp_size`` beside ``tp.tp_size``)."""
    any_world: bool  # default False
    """The refusal reads no world size (a feature's own set-up refusal, launched in the same probe): ``check``
    applies it at every world size, with or without ``--world-size``."""
    marker: str | None  # default None: ``message``
    """A substring of the refusal's own message as the release's message catalogue (``messages.json``) records it,
    by which a release not launched is read statically; "" when the refusal is torch's or in a module the catalogue
    does not scan (the key alone marks it)."""


def _int(config: dict[str, Any], path: str) -> int | None:
    value = at_path(config, path, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _stage(config: dict[str, Any]) -> int | None:
    return _int(config, "zero_optimization.stage")


def _hpz(config: dict[str, Any], world: int, per_node: int) -> str | None:
    size = _int(config, "zero_optimization.zero_hpz_partition_size")
    if _stage(config) != 3 or size is None or size <= 1:
        return None
    return "zero_optimization.zero_hpz_partition_size" if world % min(size, world) else None


def _autotp_larger(config: dict[str, Any], world: int, per_node: int) -> str | None:
    size = _int(config, "tensor_parallel.autotp_size")
    return "tensor_parallel.autotp_size" if size is not None and size > world else None


def _autotp_not_dividing(config: dict[str, Any], world: int, per_node: int) -> str | None:
    size = _int(config, "tensor_parallel.autotp_size")
    if size is None or size <= 1 or size > world:
        return None
    return "tensor_parallel.autotp_size" if world % size else None


def _tp_size_mismatch(config: dict[str, Any], world: int, per_node: int) -> str | None:
    autotp = _int(config, "tensor_parallel.autotp_size")
    tp_size = _int(config, "tensor_parallel.tp.tp_size")
    if autotp is None or autotp <= 1 or autotp > world or world % autotp or tp_size is None:
        return None  # a mesh refused first (the rules above) hides this one
    return "tensor_parallel.tp.tp_size" if tp_size not in (1, autotp) else None


def _autoep_width(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if at_path(config, "expert_parallel.enabled", None) is not True or at_path(config, "pipeline", None):
        return None  # with pipeline stages the width divides world / pp: pp is the model's, not the config's
    size = _int(config, "expert_parallel.autoep_size")
    tensor = _int(config, "expert_parallel.expert_tensor_parallel_size") or 1
    if size is None or size < 1:
        return None
    return "expert_parallel.autoep_size" if world % (size * tensor) else None


def _autotp_zero3(config: dict[str, Any], world: int, per_node: int) -> str | None:
    size = _int(config, "tensor_parallel.autotp_size")
    if _stage(config) != 3 or size is None or size <= 1 or size > world or world % size:
        return None  # below 3, or a mesh refused first
    return "tensor_parallel.autotp_size"


def _qgz_reduce_scatter(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if _stage(config) != 3 or at_path(config, "zero_optimization.zero_quantized_gradients", None) is not True:
        return None
    return "zero_optimization.reduce_scatter" if at_path(
        config, "zero_optimization.reduce_scatter", None) is False else None


def _mics(config: dict[str, Any]) -> int | None:
    size = _int(config, "zero_optimization.mics_shard_size")
    return size if _stage(config) == 3 and size is not None and size > 0 else None


def _mics_divides_world(config: dict[str, Any], world: int, per_node: int) -> str | None:
    size = _mics(config)  # mics_utils.py: (world // pp) % shard_size; pp is the model's (1 without a PipelineModule)
    return "zero_optimization.mics_shard_size" if size is not None and world % size else None


def _mics_hierarchy_one_node(config: dict[str, Any], world: int, per_node: int) -> str | None:
    size = _mics(config)
    if size is None or world % size or at_path(config, "zero_optimization.mics_hierarchical_params_gather",
                                                None) is not True:
        return None  # not MiCS, or refused first by the shard size
    spans = size // per_node  # _generate_mics_config: span_nodes = len(shard_group) // ndev_per_node
    return "zero_optimization.mics_hierarchical_params_gather" if spans <= 1 else None


def _zenflow(config: dict[str, Any]) -> dict[str, Any] | None:
    section = at_path(config, "zero_optimization.zenflow", None)
    return section if isinstance(section, dict) else None


def _zenflow_cpu_offload(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if _zenflow(config) is None or _stage(config) not in (1, 2) or _zenflow_interval_refused(config):
        return None  # ZenFlowZeroOptimizer is stages 1-2's; configure_zenflow's refusals come first
    device = at_path(config, "zero_optimization.offload_optimizer.device", None)
    return "zero_optimization.zenflow" if device != "cpu" else None


def _zenflow_interval_refused(config: dict[str, Any]) -> str | None:
    """Which of configure_zenflow's interval refusals fires (zenflow/engine.py), or None."""
    section = _zenflow(config)
    if section is None:
        return None
    strategy = section.get("select_strategy", "auto")
    select, update = section.get("select_interval", "auto"), section.get("update_interval", "auto")
    if strategy == "auto":
        return "auto" if isinstance(select, int) and not isinstance(select, bool) else None
    if strategy != "step" or isinstance(update, str) or not isinstance(select, int) or isinstance(select, bool):
        return None  # "epoch": select_interval × len(dataloader), 0 without a dataloader (initialize has none)
    return "below" if isinstance(update, int) and select != 0 and select < update else None


def _zenflow_auto_with_interval(config: dict[str, Any], world: int, per_node: int) -> str | None:
    return "zero_optimization.zenflow.select_interval" if _zenflow_interval_refused(config) == "auto" else None


def _zenflow_select_below_update(config: dict[str, Any], world: int, per_node: int) -> str | None:
    return "zero_optimization.zenflow.select_interval" if _zenflow_interval_refused(config) == "below" else None


def _muon_reduce_scatter(config: dict[str, Any], world: int, per_node: int) -> str | None:
    kind = at_path(config, "optimizer.type", None)
    if _stage(config) != 3 or not isinstance(kind, str) or kind.lower() != "muon":
        return None
    return "optimizer.type" if at_path(config, "zero_optimization.reduce_scatter", None) is not False else None


def _unmanaged_accumulation(config: dict[str, Any]) -> bool:
    return at_path(config, "managed_gradient_accumulation", None) is False


def _unmanaged_overlap_stage1(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if not _unmanaged_accumulation(config) or (_stage(config) or 0) >= 2:
        return None
    return "managed_gradient_accumulation" if at_path(
        config, "zero_optimization.overlap_comm", None) is True else None


def _unmanaged_deepcompile(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if not _unmanaged_accumulation(config) or _unmanaged_overlap_stage1(config, world, per_node):
        return None  # engine.py asserts the overlap_comm rule first
    return "managed_gradient_accumulation" if at_path(config, "compile.deepcompile", None) is True else None


_CURRICULUM_KEYS = ("min_difficulty", "max_difficulty", "schedule_type")  # asserted in this order
_SCHEDULE_KEYS = {"fixed_discrete": ("difficulty", "max_step"),
                  "fixed_root": ("total_curriculum_step", "difficulty_step", "root_degree"),
                  "fixed_linear": ("total_curriculum_step", "difficulty_step")}


def _legacy_curriculum(config: dict[str, Any]) -> dict[str, Any] | None:
    section = at_path(config, "curriculum_learning", None)
    return section if isinstance(section, dict) and section.get("enabled") is True else None


def _curriculum_requires(config: dict[str, Any], world: int, per_node: int) -> str | None:
    section = _legacy_curriculum(config)  # engine start builds CurriculumScheduler(the whole section)
    missing = [key for key in _CURRICULUM_KEYS if key not in (section or {})]
    return f"curriculum_learning.{missing[0]}" if section is not None and missing else None


def _curriculum_schedule_requires(config: dict[str, Any], world: int, per_node: int) -> str | None:
    section = _legacy_curriculum(config)
    if section is None or _curriculum_requires(config, world, per_node):
        return None
    kind = section.get("schedule_type")
    needed = _SCHEDULE_KEYS.get(kind) if isinstance(kind, str) else None
    schedule = section.get("schedule_config")
    if needed is None or not isinstance(schedule, dict):
        return None  # "custom", or no schedule_config at all (a KeyError, not this assert)
    missing = [key for key in needed if key not in schedule]
    return f"curriculum_learning.schedule_config.{missing[0]}" if missing else None


DEFAULTS_KEY = "\0defaults"
"""Where :func:`evaluate` hands a predicate the release's defaults (a key no JSON config can have)."""


def _elastic(config: dict[str, Any], world: int) -> tuple[str, str] | None:
    defaults = config.get(DEFAULTS_KEY) or {}
    return elasticity.world_refusal(at_path(config, "elasticity", None), world, defaults.get("elasticity") or {})


def _elasticity_config(config: dict[str, Any], world: int, per_node: int) -> str | None:
    refused = _elastic(config, world)
    return f"elasticity.{refused[0]}" if refused and not refused[1].startswith("World size") else None


def _elasticity_world(config: dict[str, Any], world: int, per_node: int) -> str | None:
    refused = _elastic(config, world)
    return "elasticity" if refused and refused[1].startswith("World size") else None


_DTYPES = {"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16", "half": "fp16", "bf16": "bf16",
           "bfloat16": "bf16"}
"""``data_types.grad_accum_dtype``'s spellings (DeepSpeed's DtypeEnum values) and the dtype each means."""


def _model_dtype(config: dict[str, Any]) -> str:
    """engine.get_data_types: fp16 when fp16 is enabled, bf16 when bf16 (or its old name) is, else fp32."""
    if at_path(config, "fp16.enabled", None) is True:
        return "fp16"
    if True in (at_path(config, "bf16.enabled", None), at_path(config, "bfloat16.enabled", None)):
        return "bf16"
    return "fp32"


def _grad_accum_dtype(config: dict[str, Any]) -> str | None:
    given = at_path(config, "data_types.grad_accum_dtype", None)
    return _DTYPES.get(given) if isinstance(given, str) else None


def _dtype_mix_without_zero(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if not isinstance(config.get("optimizer"), dict) or (_stage(config) or 0) > 0:
        return None  # _do_optimizer_sanity_check runs with an optimizer; under ZeRO the ZeRO optimizer takes any mix
    accum = _grad_accum_dtype(config)
    return "data_types.grad_accum_dtype" if accum is not None and accum != _model_dtype(config) else None


def _offload_device_cpu(config: dict[str, Any]) -> bool:
    return at_path(config, "zero_optimization.offload_optimizer.device", None) == "cpu" or \
        at_path(config, "zero_optimization.cpu_offload", None) is True


def _grad_norm_off_bf16_stage1(config: dict[str, Any], world: int, per_node: int) -> str | None:
    if not isinstance(config.get("optimizer"), dict) or _stage(config) != 1:
        return None
    if _model_dtype(config) != "bf16" or _grad_accum_dtype(config) != "fp32" or _offload_device_cpu(config):
        return None
    return "zero_optimization.compute_grad_norm" if at_path(
        config, "zero_optimization.compute_grad_norm", None) is False else None


_ELASTIC = {"model_parallel_size": 1, "num_gpus_per_node": 1, "min_time": 0, "prefer_larger_batch": True}
"""The elasticity examples give every key (their verdict needs no release's defaults)."""


def _with(**changes: Any) -> dict[str, Any]:
    """A small stage-3 config (AdamW from the config, a batch that divides :data:`PROBE_WORLD`) with ``changes``:
    ``a__b=v`` sets ``a.b``."""
    return edited({"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
                   "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "zero_optimization": {"stage": 3}},
                  changes, "__")


RULES: tuple[WorldRule, ...] = (
    WorldRule(
        "hpz-divides-world",
        "ZeRO++ hierarchical partitioning (hpZ): the secondary group size must divide the world size",
        "deepspeed/utils/groups.py:945 (_create_zero_param_parallel_group: _ensure_divisibility)",
        "zero_optimization.zero_hpz_partition_size",
        "choose a zero_hpz_partition_size that divides the world size (usually the GPUs per node)",
        "is not divisible by", _hpz,
        (_with(zero_optimization__zero_hpz_partition_size=3),),
        (_with(zero_optimization__zero_hpz_partition_size=2),)),
    WorldRule(
        "autotp-larger-than-world",
        "AutoTP: tensor_parallel.autotp_size larger than the world size cannot be laid out as a device mesh",
        "deepspeed/comm/torch.py:583 (init_device_mesh; torch refuses the layout)",
        "tensor_parallel.autotp_size", "use an autotp_size no larger than the world size (and dividing it)",
        "init_device_mesh", _autotp_larger,
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=16),),
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=2),), marker=""),
    WorldRule(
        "autotp-divides-world",
        "AutoTP: a tensor-parallel size that does not divide the world leaves the last ranks outside the mesh; they "
        "fail (rank 0 launches)",
        "deepspeed/runtime/engine.py:958 (groups.py:229, torch/distributed/device_mesh.py:828)",
        "tensor_parallel.autotp_size", "use an autotp_size that divides the world size",
        "list index out of range", _autotp_not_dividing,
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=3),),
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=4),), marker=""),
    WorldRule(
        "tp-size-matches-autotp-size",
        "AutoTP: tensor_parallel.tp.tp_size, when given, must be 1 or equal tensor_parallel.autotp_size",
        "deepspeed/runtime/engine.py:1021 (_apply_autotp_partitioning)",
        "tensor_parallel.tp.tp_size", "drop tensor_parallel.tp.tp_size, or give it autotp_size's value",
        "does not match tensor_parallel.autotp_size", _tp_size_mismatch,
        (_with(zero_optimization__stage=2, tensor_parallel={"autotp_size": 2, "tp": {"tp_size": 4}}),),
        (_with(zero_optimization__stage=2, tensor_parallel={"autotp_size": 2, "tp": {"tp_size": 2}}),),
        related=("tensor_parallel.autotp_size",)),
    WorldRule(
        "autoep-width-divides-world",
        "AutoEP: autoep_size × expert_tensor_parallel_size must divide the world size (per pipeline stage)",
        "deepspeed/module_inject/auto_ep_folding.py:112",
        "expert_parallel.autoep_size", "use an autoep_size (× expert_tensor_parallel_size) that divides the world size",
        "must divide the stage size", _autoep_width,
        (_with(zero_optimization__stage=2, expert_parallel={"enabled": True, "autoep_size": 3}),),
        (), marker=""),  # module_inject/ is outside the message catalogue: the key alone marks it
    WorldRule(
        "autotp-not-with-zero3",
        "AutoTP with ZeRO stage 3 is refused (\"not validated\"); 0.19.4 lifted it (DeepSpeed issue 7389)",
        "deepspeed/runtime/engine.py:632-634 (0.19.3; 0.16.4 on)",
        "tensor_parallel.autotp_size", "use ZeRO stage 1 or 2 with AutoTP, or DeepSpeed >= 0.19.4",
        "has not been validated", _autotp_zero3,
        (_with(tensor_parallel__autotp_size=2),),
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=2),),
        read_in="0.19.3", related=("zero_optimization.stage",)),
    WorldRule(
        "qgz-needs-reduce-scatter",
        "ZeRO++ quantized gradients (qgZ) at stage 3 reduce through all-to-all, which needs reduce_scatter",
        "deepspeed/runtime/zero/stage3.py:390",
        "zero_optimization.reduce_scatter", 'remove "reduce_scatter": false, or turn zero_quantized_gradients off',
        "reduce_scatter should also be enabled", _qgz_reduce_scatter,
        (_with(zero_optimization__zero_quantized_gradients=True, zero_optimization__reduce_scatter=False),),
        (_with(zero_optimization__zero_quantized_gradients=True),)),
    WorldRule(
        "mics-shard-divides-world",
        "MiCS: the shard size must divide the data-parallel world (world size / pipeline stages); MiCS was removed "
        "in 0.19.4, which refuses the key itself",
        "deepspeed/runtime/zero/mics_utils.py:178 (0.18.9: _generate_mics_config)",
        "zero_optimization.mics_shard_size", "use a mics_shard_size that divides the world size (often the GPUs per "
        "node, or a multiple of it)",
        "dp group size is not dividable by dp_shard_size", _mics_divides_world,
        (_with(zero_optimization__mics_shard_size=3),),
        (_with(zero_optimization__mics_shard_size=4),),
        read_in="0.18.9"),
    WorldRule(
        "mics-hierarchy-spans-nodes",
        "MiCS: mics_hierarchical_params_gather needs a shard group spanning more than one node (shard size / GPUs "
        "per node > 1)",
        "deepspeed/runtime/zero/mics_utils.py:125 (0.18.9: create_mics_comm_groups)",
        "zero_optimization.mics_hierarchical_params_gather",
        "drop mics_hierarchical_params_gather, or use a mics_shard_size spanning several nodes",
        "sharding spans on single node", _mics_hierarchy_one_node,
        (_with(zero_optimization__mics_shard_size=4, zero_optimization__mics_hierarchical_params_gather=True),),
        (_with(zero_optimization__mics_shard_size=8, zero_optimization__mics_hierarchical_params_gather=True),),
        read_in="0.18.9", related=("zero_optimization.mics_shard_size",)),
    WorldRule(
        "zenflow-needs-cpu-offload",
        "ZenFlow (stages 1-2) runs its optimizer on the CPU: offload_optimizer.device must be cpu",
        "deepspeed/runtime/zenflow/zenflow_stage_1_and_2.py:116 (_configure_zenflow)",
        "zero_optimization.zenflow", 'add "offload_optimizer": {"device": "cpu"}, or remove zenflow',
        "Zenflow must be used with cpu offload", _zenflow_cpu_offload,
        (_with(zero_allow_untested_optimizer=True, zero_optimization={"stage": 2, "zenflow": {"topk_ratio": 0.1}}),),
        (_with(zero_allow_untested_optimizer=True,
               zero_optimization={"stage": 2, "overlap_comm": True, "offload_optimizer": {"device": "cpu"},
                                  "zenflow": {"topk_ratio": 0.1}}),), any_world=True),
    WorldRule(
        "zenflow-auto-with-select-interval",
        "ZenFlow: with select_strategy \"auto\" (the default) a numeric select_interval is refused (it would be "
        "overwritten); DeepSpeed raises a bare Warning",
        "deepspeed/runtime/zenflow/engine.py:39 (configure_zenflow)",
        "zero_optimization.zenflow.select_interval", 'set "select_strategy": "step" (or "epoch"), or drop '
        'select_interval',
        "If use auto select strategy", _zenflow_auto_with_interval,
        (_with(zero_allow_untested_optimizer=True,
               zero_optimization={"stage": 2, "overlap_comm": True, "offload_optimizer": {"device": "cpu"},
                                  "zenflow": {"select_interval": 4}}),),
        (_with(zero_allow_untested_optimizer=True,
               zero_optimization={"stage": 2, "overlap_comm": True, "offload_optimizer": {"device": "cpu"},
                                  "zenflow": {"select_interval": 4, "select_strategy": "step"}}),),
        any_world=True),
    WorldRule(
        "zenflow-select-below-update",
        "ZenFlow: with select_strategy \"step\", select_interval must be >= update_interval",
        "deepspeed/runtime/zenflow/engine.py:63 (configure_zenflow)",
        "zero_optimization.zenflow.select_interval", "raise select_interval to at least update_interval",
        "Select interval must be greater or equal to update interval", _zenflow_select_below_update,
        (_with(zero_allow_untested_optimizer=True,
               zero_optimization={"stage": 2, "overlap_comm": True, "offload_optimizer": {"device": "cpu"},
                                  "zenflow": {"select_strategy": "step", "select_interval": 1,
                                              "update_interval": 4}}),),
        (_with(zero_allow_untested_optimizer=True,
               zero_optimization={"stage": 2, "overlap_comm": True, "offload_optimizer": {"device": "cpu"},
                                  "zenflow": {"select_strategy": "step", "select_interval": 4,
                                              "update_interval": 4}}),),
        related=("zero_optimization.zenflow.update_interval",), any_world=True),
    WorldRule(
        "muon-not-with-reduce-scatter",
        "Muon at ZeRO stage 3 needs whole gradients: reduce_scatter (on by default) must be false",
        "deepspeed/runtime/zero/stage3.py:361 (DeepSpeedZeroOptimizer_Stage3.__init__)",
        "optimizer.type", 'set "zero_optimization": {"reduce_scatter": false} with Muon at stage 3',
        "Muon and reduce scatter cannot be used together", _muon_reduce_scatter,
        (_with(optimizer={"type": "Muon", "params": {"lr": 1e-3}}),),
        (_with(optimizer={"type": "Muon", "params": {"lr": 1e-3}}, zero_optimization__reduce_scatter=False),),
        related=("zero_optimization.reduce_scatter",), any_world=True),
    WorldRule(
        "curriculum-legacy-requires",
        "legacy curriculum learning (top-level curriculum_learning, enabled): min_difficulty, max_difficulty and "
        "schedule_type are asserted when the engine starts (DeepSpeedConfig does not read them)",
        "deepspeed/runtime/data_pipeline/curriculum_scheduler.py:16-20 (0.18.9: CurriculumScheduler.__init__)",
        "curriculum_learning.max_difficulty", "give min_difficulty, max_difficulty and schedule_type, or move to "
        "data_efficiency.data_sampling.curriculum_learning",
        "Curriculum learning requires the config", _curriculum_requires,
        (_with(zero_optimization__stage=2, curriculum_learning={
            "enabled": True, "curriculum_type": "seqlen", "min_difficulty": 8, "schedule_type": "fixed_linear",
            "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}),),
        (_with(zero_optimization__stage=2, curriculum_learning={
            "enabled": True, "curriculum_type": "seqlen", "min_difficulty": 8, "max_difficulty": 64,
            "schedule_type": "fixed_linear", "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8}}),),
        read_in="0.18.9", any_world=True, marker="Curriculum learning requires the config"),
    WorldRule(
        "curriculum-legacy-schedule-requires",
        "legacy curriculum learning: each schedule_type asserts its schedule_config keys when the engine starts "
        "(fixed_discrete: difficulty, max_step; fixed_root: total_curriculum_step, difficulty_step, root_degree; "
        "fixed_linear: total_curriculum_step, difficulty_step)",
        "deepspeed/runtime/data_pipeline/curriculum_scheduler.py:40-90 (0.18.9: CurriculumScheduler.__init__)",
        "curriculum_learning.schedule_config.difficulty_step", "give the schedule_config keys its schedule_type needs",
        "schedule requires the schedule_config", _curriculum_schedule_requires,
        (_with(zero_optimization__stage=2, curriculum_learning={
            "enabled": True, "curriculum_type": "seqlen", "min_difficulty": 8, "max_difficulty": 64,
            "schedule_type": "fixed_linear", "schedule_config": {"total_curriculum_step": 10}}),),
        (_with(zero_optimization__stage=2, curriculum_learning={
            "enabled": True, "curriculum_type": "seqlen", "min_difficulty": 8, "max_difficulty": 64,
            "schedule_type": "fixed_root",
            "schedule_config": {"total_curriculum_step": 10, "difficulty_step": 8, "root_degree": 2}}),),
        read_in="0.18.9", any_world=True),
    WorldRule(
        "elasticity-config",
        "elasticity (enabled): micro_batch_sizes must be positive integers, min_gpus/max_gpus at least 1 with "
        "min_gpus <= max_gpus, version at most the runtime's (0.2), model_parallel_size > 1 only with version 0.2",
        "deepspeed/elasticity/config.py:69 (0.18.9: ElasticityConfig; elasticity.py:292-343 compute_elastic_config)",
        "elasticity.micro_batch_sizes", "give elasticity values DeepSpeed's ElasticityConfig accepts",
        "Elasticity expected micro_batch_sizes to only contain a list of integers", _elasticity_config,
        (_with(zero_optimization__stage=2, train_micro_batch_size_per_gpu=None, gradient_accumulation_steps=None,
               elasticity={"enabled": True, "max_train_batch_size": 1000, "micro_batch_sizes": [8, 12.5, 16],
                           "min_gpus": 1, "max_gpus": 64, "version": 0.1, **_ELASTIC}),),
        (_with(zero_optimization__stage=2, train_micro_batch_size_per_gpu=None, gradient_accumulation_steps=None,
               elasticity={"enabled": True, "max_train_batch_size": 1000, "micro_batch_sizes": [8, 12, 16],
                           "min_gpus": 1, "max_gpus": 64, "version": 0.1, **_ELASTIC}),),
        read_in="0.18.9", any_world=True, marker="only contain a list of integers"),
    WorldRule(
        "elasticity-world-size",
        "elasticity (enabled): the world size must be one of the GPU counts compute_elastic_config derives from "
        "max_train_batch_size, micro_batch_sizes and min_gpus/max_gpus (DeepSpeed's own test: 128 refused, 16 "
        "accepted)",
        "deepspeed/elasticity/elasticity.py:349 (0.18.9: compute_elastic_config)",
        "elasticity", "launch on one of the valid GPU counts, or change micro_batch_sizes / max_train_batch_size",
        "is not valid with the current list of valid GPU counts", _elasticity_world,
        (_with(zero_optimization__stage=2, train_micro_batch_size_per_gpu=None, gradient_accumulation_steps=None,
               elasticity={"enabled": True, "max_train_batch_size": 30, "micro_batch_sizes": [3],
                           "min_gpus": 1, "max_gpus": 64, "version": 0.1, **_ELASTIC}),),
        (_with(zero_optimization__stage=2, train_micro_batch_size_per_gpu=None, gradient_accumulation_steps=None,
               elasticity={"enabled": True, "max_train_batch_size": 10000, "micro_batch_sizes": [8, 12, 16, 17],
                           "min_gpus": 1, "max_gpus": 1500, "version": 0.1, **_ELASTIC}),),
        read_in="0.18.9", marker="is not valid with the current list of valid GPU counts"),
    WorldRule(
        "dtype-mix-without-zero",
        "without ZeRO, the optimizer's gradients accumulate in the model's dtype: a data_types.grad_accum_dtype other "
        "than it (bf16 with fp32, fp32 with bf16) is not implemented",
        "deepspeed/runtime/engine.py:2323 (_do_optimizer_sanity_check)",
        "data_types.grad_accum_dtype", "use ZeRO stage 1 or more for a different accumulation dtype, or drop "
        "data_types.grad_accum_dtype",
        "unsupported mix of", _dtype_mix_without_zero,
        (_with(zero_optimization={"stage": 0}, bf16={"enabled": True}, data_types={"grad_accum_dtype": "fp32"}),),
        (_with(zero_optimization={"stage": 0}, bf16={"enabled": True}, data_types={"grad_accum_dtype": "bf16"}),),
        related=("bf16.enabled",), any_world=True),
    WorldRule(
        "grad-norm-off-bf16-stage1",
        "zero_optimization.compute_grad_norm false is refused at ZeRO stage 1 with bf16 parameters and fp32 gradient "
        "accumulation (without CPU offload)",
        "deepspeed/runtime/engine.py:2308 (_do_optimizer_sanity_check)",
        "zero_optimization.compute_grad_norm", 'remove "compute_grad_norm": false, or use another stage or dtype',
        "compute_grad_norm=false does not support ZeRO Stage 1", _grad_norm_off_bf16_stage1,
        (_with(zero_optimization={"stage": 1, "compute_grad_norm": False}, bf16={"enabled": True},
               data_types={"grad_accum_dtype": "fp32"}, gradient_clipping=0),),
        (_with(zero_optimization={"stage": 2, "compute_grad_norm": False}, bf16={"enabled": True},
               data_types={"grad_accum_dtype": "fp32"}, gradient_clipping=0),),
        any_world=True),
    WorldRule(
        "unmanaged-accumulation-overlap-stage1",
        "managed_gradient_accumulation false with overlap_comm is supported only from ZeRO stage 2",
        "deepspeed/runtime/engine.py:2031 (_do_sanity_check)",
        "managed_gradient_accumulation", 'remove "managed_gradient_accumulation": false, or overlap_comm, or use '
        'stage 2',
        "supports ZeRO overlap_comm only with ZeRO stage 2", _unmanaged_overlap_stage1,
        (_with(zero_optimization={"stage": 1, "overlap_comm": True}, managed_gradient_accumulation=False),),
        (_with(zero_optimization={"stage": 2, "overlap_comm": True}, managed_gradient_accumulation=False),),
        related=("zero_optimization.overlap_comm",), any_world=True),
    WorldRule(
        "unmanaged-accumulation-not-with-deepcompile",
        "managed_gradient_accumulation false is refused with DeepCompile (compile.deepcompile)",
        "deepspeed/runtime/engine.py:2035 (_do_sanity_check)",
        "managed_gradient_accumulation", 'remove "managed_gradient_accumulation": false, or turn deepcompile off',
        "not supported with DeepCompile", _unmanaged_deepcompile,
        (_with(zero_optimization__stage=1, compile={"deepcompile": True}, managed_gradient_accumulation=False),),
        (_with(zero_optimization__stage=1, compile={"deepcompile": True}),),
        related=("compile.deepcompile",), any_world=True),
)
BY_ID = {rule.id: rule for rule in RULES}

NOT_REACHABLE: tuple[tuple[str, str, str], ...] = (
    ("hpZ against ranks per node", "deepspeed/utils/groups.py:945 (0.19.8)",
     "no refusal: only the world is checked. zero_hpz_partition_size 8 and 16 launch at 16 ranks, 4 per node "
     "(ranks 0 and 15 played); a group wider than a node is slower, not refused"),
    ("qwZ (zero_quantized_weights, zero_quantized_nontrainable_weights)",
     "deepspeed/runtime/zero/partition_parameters.py:1142 (0.19.8)",
     "not confirmed by launch: the CPU has no quantizer op (QuantizerBuilder), so every qwZ config fails on this "
     "machine before any rule about it; nothing is judged"),
    ("pipeline section (pipeline.stages, pipeline.partition, ...)", "deepspeed/runtime/pipe/engine.py (0.19.8)",
     "not reachable from a config alone: pipeline stages come from a PipelineModule in code; with a plain model the "
     "section is read and ignored (pipeline.stages 3 launches at 8 ranks)"),
    ("tensor_parallel.tp.tp_size without autotp_size", "deepspeed/runtime/engine.py (0.19.8)",
     "no refusal: without autotp_size no tensor-parallel mesh is built (tp_size 3 launches at 8 ranks); with it, the "
     "AutoTP rules above judge the sizes"),
    ("Ulysses sequence parallelism (sequence_parallel_size)", "deepspeed/runtime/config.py:468 (0.19.8)",
     "not reachable from a config alone: the sequence-parallel group comes from an mpu object in code; a top-level "
     "sequence_parallel_size only divides the config's data-parallel world (2, 3 and 16 launch at 8 ranks)"),
    ("SuperOffload (offload_optimizer.super_offload)", "deepspeed/runtime/superoffload/superoffload_stage3.py:23 "
     "(0.19.8)", "not confirmed by launch: SuperOffload asserts a CUDA accelerator, a machine refusal on this CPU; "
     "its own rules are not reached"),
    ("torch_compile / DeepCompile passes (compile.*)", "deepspeed/runtime/engine.py:5840-5912 (0.19.8)",
     "not reachable from deepspeed.initialize: the backend, pass and compile.autoep_non_moe refusals fire in "
     "engine.compile(), which the training script calls afterwards"),
    ("Muon's use_muon tags", "deepspeed/runtime/engine.py:2447 (0.19.8)",
     "not reachable from a config alone: it fires only when model_parameters holds parameters the model does not"),
)
"""Refusals about the features issue 42 names that a config alone cannot trigger at ``deepspeed.initialize`` on this
machine, or that turned out not to exist: (feature, source, why). Said in docs/snapshot-format.md, never guessed."""


def in_source(rule: WorldRule, messages: list[dict[str, Any]], paths: Any) -> dict[str, Any] | None:
    """Where ``rule`` is in a release's source, read statically: its key among the release's ``paths`` and its
    :attr:`WorldRule.marker` in the release's message catalogue (``messages.json``'s entries); the first entry
    found (``{"site": file:line, "function": ...}``), ``{}`` for a refusal of torch's, None when absent."""
    if rule.key not in paths:
        return None
    marker = rule.message if rule.marker is None else rule.marker
    if not marker:
        return {}
    read = rule.source.split(":", 1)[0]  # the file the rule was read in is preferred (a message may recur elsewhere)
    found = sorted((entry.get("file") != read, index) for index, entry in enumerate(messages)
                   if marker in str(entry.get("pattern") or ""))
    if not found:
        return None
    entry = messages[found[0][1]]
    return {"site": f"{entry.get('file')}:{entry.get('line')}", "function": entry.get("function")}


def evaluate(config: Any, world: int, per_node: int | None = None,
             rules: tuple[WorldRule, ...] = RULES,
             defaults: dict[str, dict[str, Any]] | None = None) -> list[tuple[WorldRule, str]]:
    """Every rule that fires on ``config`` at ``world`` ranks (``per_node`` per node; None: all on one node).
    ``defaults``: section -> key -> the release's default, for the rules that need them (elasticity)."""
    if not isinstance(config, dict) or world < 1:
        return []
    config = {**config, DEFAULTS_KEY: defaults or {}}
    fired = []
    for rule in rules:
        try:
            key = rule.fires(config, world, min(per_node or world, world))
        except (ArithmeticError, TypeError, ValueError, AttributeError):
            key = None
        if key:
            fired.append((rule, key))
    return fired


def world_path(version: str, generated: Any = None) -> Any:
    from dsfields.model.store import repo_generated_dir

    return (generated or repo_generated_dir()) / version / WORLD_FILE


def load_world(version: str) -> dict[str, Any] | None:
    """``generated/<version>/world.json``, or None when absent, unreadable or of another format."""
    from dsfields.launch.catalogue import read_rule_record

    return read_rule_record(None, version, WORLD_FILE, WORLD_FORMAT)


def confirmed(record: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The rules a world record confirmed: id -> its record (message, exc_type, site, rank)."""
    from dsfields.launch.catalogue import confirmed as confirmed_in

    return confirmed_in(record, BY_ID)
