"""Where each config key lives on the docs site: its group (the seed dictionary's eight + more) and page.

The hand-written dictionary we replace organised ``ds_config.json`` into eight groups. Snapshots know
sections, not groups, so the group of any JSON path is derived from its top-level key with the
small ordered rule table below (exact keys first, then patterns); a key no rule matches goes to
*misc* and is listed as unmapped on the groups page, never dropped. The table also names keys of
older releases so all ~77 snapshots group sensibly.

Page and anchor of a field come from :mod:`dsfields.links` (shared with the JSON Schema and
``check``, so every link to a field agrees): a key is documented on the page of its top-level
section (``<version>/fields/zero_optimization/``), or on ``<version>/fields/top-level/`` when it is a
top-level key that is not a section, under the anchor ``links.anchor(path)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from dsfields import links

TOP_LEVEL_PAGE = links.TOP_LEVEL_PAGE


@dataclass(frozen=True)
class Group:
    """One group of the field dictionary; ``number`` 1-8 are the seed's, 9+ the sections it left out."""

    number: int
    slug: str
    """Anchor of the group on overview pages (contains a hyphen: never a DeepSpeed key)."""
    title: str
    keys: tuple[str, ...]
    """Top-level keys (exact) or ``fnmatch`` patterns; exact keys win over any pattern."""


GROUPS: tuple[Group, ...] = (
    Group(1, "group-1-batch", "Batch size and accumulation", (
        "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
        "gradient_clipping", "steps_per_print", "wall_clock_breakdown", "managed_gradient_accumulation",
    )),
    Group(2, "group-2-precision", "Precision (fp16 / bf16)", (
        "fp16", "bf16", "bfloat16", "torch_autocast", "data_types", "amp", "fp16*", "bf16*", "*autocast*",
    )),
    Group(3, "group-3-optimizer", "Optimizer", ("optimizer",)),
    Group(4, "group-4-scheduler", "Scheduler", ("scheduler",)),
    Group(5, "group-5-zero", "ZeRO (and its NVMe I/O)", ("zero_optimization", "aio")),
    Group(6, "group-6-activation-checkpointing", "Activation checkpointing", ("activation_checkpointing",)),
    Group(7, "group-7-communication-data", "Communication and data", (
        "communication_data_type", "seq_parallel_communication_data_type", "prescale_gradients",
        "gradient_predivide_factor", "gradient_allreduce_op", "disable_allgather", "sparse_gradients",
        "data_efficiency", "dataloader_drop_last", "curriculum_learning",
        "*allreduce*", "*allgather*", "*communication*", "data_*",
    )),
    Group(8, "group-8-misc", "Misc and debug", (
        "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "dump_state", "memory_breakdown",
        "log_level", "disable_python_gc", "vocabulary_size", "graph_harvesting",
    )),
    Group(9, "group-9-monitoring", "Monitoring and profiling", (
        "tensorboard", "wandb", "csv_monitor", "comet", "comms_logger", "flops_profiler", "timers",
        "*_monitor",
    )),
    Group(10, "group-10-autotuning", "Autotuning", ("autotuning",)),
    Group(11, "group-11-checkpointing", "Checkpointing", (
        "checkpoint", "datastates_ckpt", "nebula", "*checkpoint*", "*ckpt*",
    )),
    Group(12, "group-12-compile", "Compile", ("compile",)),
    Group(13, "group-13-parallelism", "Parallelism and elastic scaling", (
        "tensor_parallel", "expert_parallel", "pipeline", "hybrid_engine", "use_data_before_expert_parallelism",
        "elasticity", "*parallel*",
    )),
    Group(14, "group-14-compression", "Quantization, compression and sparsity", (
        "weight_quantization", "compression_training", "quantize_training", "sparse_attention",
        "progressive_layer_drop", "eigenvalue", "*quantiz*", "*compression*", "*sparse*",
    )),
)

MISC = GROUPS[7]
"""Where a top-level key no rule matches goes (and is listed as unmapped)."""


def _exact() -> dict[str, Group]:
    return {key: group for group in GROUPS for key in group.keys if not _is_pattern(key)}


def _is_pattern(key: str) -> bool:
    return any(ch in key for ch in "*?[")


_EXACT = _exact()
_PATTERNS: tuple[tuple[str, Group], ...] = tuple(
    (key, group) for group in GROUPS for key in group.keys if _is_pattern(key)
)


def top_key(path: str) -> str:
    return path.split(".", 1)[0]


def group_rule(path: str) -> tuple[Group, str | None]:
    """The group of a JSON path and the rule that chose it (``None``: unmapped, fell back to misc)."""
    key = top_key(path)
    if key in _EXACT:
        return _EXACT[key], key
    for pattern, group in _PATTERNS:
        if fnmatchcase(key, pattern):
            return group, pattern
    return MISC, None


def group_of(path: str) -> Group:
    return group_rule(path)[0]


def is_top_section(key: str, snapshot: dict[str, Any]) -> bool:
    """True when the top-level ``key`` is a section of this snapshot (so it has a page of its own)."""
    return key != "" and (snapshot.get("sections") or {}).get(key, {}).get("parent") == ""


def field_location(path: str, snapshot: dict[str, Any]) -> tuple[str, str]:
    """``(page under fields/, anchor)`` documenting ``path`` in this release, as :func:`links.field_url` says."""
    return links.page(path, is_top_section(top_key(path), snapshot)), links.anchor(path)
