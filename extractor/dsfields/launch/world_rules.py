"""The world rules: what ``deepspeed.initialize`` refuses only at some world sizes (issue 42).

A config that launches on one rank can be refused on 8: the hpZ group must divide the world, an AutoTP mesh
larger than the world (or not dividing it) fails on the ranks outside it. Each
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

from dsfields.model.dotted import at_path, edited

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations are strings
    from collections.abc import Callable
    from typing import Any

PROBE_WORLD = 8
"""The world size the examples are launched at (rank 0 and rank 7)."""
WORLD_FILE = "world.json"
WORLD_FORMAT = 1


class WorldRule(namedtuple("WorldRule", "id enforces source key fix message fires triggers controls read_in related",
                           defaults=("0.19.8", ()))):
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
    """(config, N, ranks per node) -> the JSON path refused, or None."""
    triggers: tuple[dict[str, Any], ...]
    controls: tuple[dict[str, Any], ...]
    read_in: str  # default "0.19.8"
    related: tuple[str, ...]  # default ()
    """Other keys the refusal names (``tensor_parallel.autotp_size`` beside ``tp.tp_size``)."""


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
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=2),)),
    WorldRule(
        "autotp-divides-world",
        "AutoTP: a tensor-parallel size that does not divide the world leaves the last ranks outside the mesh; they "
        "fail (rank 0 launches)",
        "deepspeed/runtime/engine.py:958 (groups.py:229, torch/distributed/device_mesh.py:828)",
        "tensor_parallel.autotp_size", "use an autotp_size that divides the world size",
        "list index out of range", _autotp_not_dividing,
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=3),),
        (_with(zero_optimization__stage=2, tensor_parallel__autotp_size=4),)),
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
        ()),
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
)
BY_ID = {rule.id: rule for rule in RULES}


def evaluate(config: Any, world: int, per_node: int | None = None,
             rules: tuple[WorldRule, ...] = RULES) -> list[tuple[WorldRule, str]]:
    """Every rule that fires on ``config`` at ``world`` ranks (``per_node`` per node; None: all on one node)."""
    if not isinstance(config, dict) or world < 1:
        return []
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
