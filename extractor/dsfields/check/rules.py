"""DeepSpeed's cross-field rules: the checks that no single field's metadata can express.

The snapshot says what each key accepts on its own. A few rules tie keys together (fp16 and bf16
are exclusive, the batch sizes multiply, some options need a ZeRO stage) or validate a dict-read
value inside a getter the extractor cannot see. Those are DeepSpeed *semantics*, so they are
written here by hand — each small, each citing the DeepSpeed source it mirrors, and each verified
against the real DeepSpeed by ``tests/test_check_rules.py`` (a rule fires exactly when DeepSpeed
rejects). They were read from DeepSpeed 0.19.8. Which keys a rule reads is not listed by hand: the
:class:`View` records every path a rule asks for, a path the release does not read reads as absent
(DeepSpeed of that release ignores it), and a violation about such a path is never reported — so a
rule applies to exactly the keys each release has. ``tests/test_check_rules.py`` checks every path a
rule reads against the snapshots.

Values are judged as DeepSpeed sees them: ``"auto"`` in a pydantic section is dropped to the
default, ``"true"`` coerced, and a key the HF Trainer fills (``--hf``) is :data:`UNKNOWN`.
"""

from __future__ import annotations

import math
from collections import namedtuple

from dsfields.model.batch import BATCH_KEYS
from dsfields.model.batch import integral as _integral
from dsfields.model.batch import refusal as resolve_batch
from dsfields.model.batch import show as _show
from dsfields.model.dotted import at_path
from dsfields.model.records import Snapshot
from dsfields.model.wording import at_source

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from collections.abc import Callable, Iterator
    from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
"""The key is absent (DeepSpeed uses the default)."""
UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
"""The value is filled later (HF Trainer ``"auto"``): rules involving it stay silent."""

_TRUE_STRINGS = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE_STRINGS = frozenset({"0", "off", "f", "false", "n", "no"})


class Violation(namedtuple("Violation", "paths message fix severity", defaults=("error",))):
    """A rule's verdict: the keys involved (first one carries the annotation), message and one-line fix.

    Named tuples from ``collections`` (not ``typing.NamedTuple``, not dataclasses), here and in
    :mod:`dsfields.check.findings`: ``dataclasses`` imports ``inspect`` and ``typing`` costs milliseconds,
    which would cost ``dsfields check`` more start-up time than the whole check.
    """

    __slots__ = ()

    paths: tuple[str, ...]
    message: str
    fix: str
    severity: str  # default "error"


class View:
    """The config as DeepSpeed reads it, over the snapshot's defaults."""

    def __init__(self, data: dict[str, Any], snapshot: Snapshot, hf_filled: frozenset[str]) -> None:
        self.data = data
        self.snapshot = snapshot
        self.fields = snapshot.fields
        self.hf_filled = hf_filled
        self.inserted: dict[str, tuple[Any, str]] = {}
        """Keys the HF layers add when the file lacks them (``--hf --world-size``: accelerate's
        ``gradient_accumulation_steps: 1``), with their origin (:func:`dsfields.hf.trainer.hf_insertions`)."""
        self.read: set[str] = set()
        """Every path a rule asked about (what the rule depends on, recorded rather than listed)."""

    def known(self, path: str) -> bool:
        """Whether this release reads ``path`` at all (a field, a section, or an optimizer/scheduler param)."""
        if path in self.fields or path in self.snapshot.sections:
            return True
        section, _, rest = path.partition(".")
        catalog = self.snapshot.catalogs.get(section)
        return catalog is not None and rest.startswith(catalog.params_key + ".")

    def raw(self, path: str) -> Any:
        self.read.add(path)
        if not self.known(path):
            return MISSING  # this release never reads the key: for the rules it is as good as absent
        return at_path(self.data, path, MISSING)

    def value(self, path: str) -> Any:
        """What DeepSpeed ends up with: the given value, the default when absent or dropped ``"auto"``."""
        raw = self.raw(path)
        record = self.fields.get(path)
        if isinstance(raw, str) and raw == "auto":
            if path in self.hf_filled:
                return UNKNOWN
            auto = record.auto if record else None
            if not (auto and auto.accepted and auto.becomes == "default"):
                return UNKNOWN  # DeepSpeed rejects or keeps it: the "auto" finding says so already
            raw = MISSING
        if raw is MISSING:
            return record.default if record else MISSING
        return raw

    def flag(self, path: str) -> bool | None:
        """A boolean as pydantic coerces it; None when unknown or not a boolean at all."""
        value = self.value(path)
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in _TRUE_STRINGS | _FALSE_STRINGS:
            return value.lower() in _TRUE_STRINGS
        return None

    def truthy(self, path: str) -> bool | None:
        """Python truthiness, as DeepSpeed's dict readers test ``if enabled:``; None when unknown."""
        value = self.value(path)
        return None if value is UNKNOWN or value is MISSING else bool(value)

    def number(self, path: str) -> float | None:
        value = self.value(path)
        if isinstance(value, bool) or value is UNKNOWN or value is MISSING:
            return None
        if isinstance(value, (int, float)):
            return value
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                return None
        return None

    def zero_stage(self) -> int | None:
        stage = self.number("zero_optimization.stage")
        if stage is None and self.value("zero_optimization.stage") is MISSING:
            return 0
        return int(stage) if stage is not None and _integral(stage) else None

    def bf16_section(self) -> str:
        """``bf16`` unless it is absent or null, then the legacy ``bfloat16`` (get_bfloat16_config)."""
        return "bf16" if self.raw("bf16") not in (MISSING, None) else "bfloat16"


class Rule(namedtuple("Rule", "id summary source check")):
    __slots__ = ()

    id: str
    summary: str
    source: str
    """The DeepSpeed function whose behaviour the rule mirrors (file: qualified name)."""
    check: Callable[[View, int | None], Iterator[Violation]]


# ---------------------------------------------------------------- precision


def _fp16_bf16(view: View, world_size: int | None) -> Iterator[Violation]:
    bf16 = view.bf16_section()
    if view.flag("fp16.enabled") and view.flag(f"{bf16}.enabled"):
        yield Violation(
            ("fp16.enabled", f"{bf16}.enabled"),
            "fp16 and bf16 are both enabled; DeepSpeed asserts they are exclusive",
            f'set "enabled": false in "fp16" or in "{bf16}"',
        )


def _bf16_shadows_bfloat16(view: View, world_size: int | None) -> Iterator[Violation]:
    if view.raw("bf16") not in (MISSING, None) and view.raw("bfloat16") is not MISSING:
        yield Violation(
            ("bfloat16",),
            '"bfloat16" is ignored because "bf16" is present (DeepSpeed reads only one of them)',
            'merge its keys into "bf16" and remove "bfloat16"',
            severity="warning",
        )


def _fp16_dynamic_loss_scale(view: View, world_size: int | None) -> Iterator[Violation]:
    if not view.flag("fp16.enabled") or view.number("fp16.loss_scale") != 0:
        return
    for key in ("loss_scale_window", "min_loss_scale"):
        value = view.number(f"fp16.{key}")
        if value is not None and value <= 0:
            yield Violation(
                (f"fp16.{key}", "fp16.loss_scale"),
                f"fp16.{key} must be > 0 when dynamic loss scaling is on (fp16 enabled, loss_scale 0)",
                f'set "{key}" to a positive integer, or a static "loss_scale"',
            )


# ---------------------------------------------------------------- ZeRO stage


def _stage_requirements(view: View, world_size: int | None) -> Iterator[Violation]:
    stage = view.zero_stage()
    if stage is None:
        return
    if view.flag("zero_optimization.compute_grad_norm") is False and stage not in (1, 2):
        yield Violation(
            ("zero_optimization.compute_grad_norm", "zero_optimization.stage"),
            f"compute_grad_norm=false is supported only with ZeRO stage 1 or 2 (stage is {stage})",
            'remove "compute_grad_norm" or use stage 1 or 2',
        )
    if isinstance(view.raw("zero_optimization.offload_optimizer"), dict):
        ratio = view.number("zero_optimization.offload_optimizer.ratio")
        if ratio is not None and ratio < 1.0 and stage != 3:
            yield Violation(
                ("zero_optimization.offload_optimizer.ratio", "zero_optimization.stage"),
                f"partial optimizer offload (ratio {ratio:g} < 1) is supported only with ZeRO stage 3 "
                f"(stage is {stage})",
                'remove "ratio" or use stage 3',
            )
    bf16 = view.bf16_section()
    # The switches a ZeRO stage must allow and the stages each allows are the release's own (fp16 master weights:
    # stage 2 until 0.18.1, 1-3 from 0.18.3), probed from its DeepSpeedConfig into the snapshot's requires_values.
    for record, needed in view.snapshot.values_required_of("zero_optimization.stage"):
        if record.section in ("bf16", "bfloat16") and record.section != bf16:
            continue  # DeepSpeed reads only one of the two spellings
        if not view.flag(record.path) or stage in needed["values"] or not all(
                view.truthy(c["path"]) for c in record.conditions if c.get("op") == "truthy"):
            continue
        stages = ", ".join(str(v) for v in needed["values"])
        where = at_source(needed.get("source"))
        yield Violation(
            (record.path, "zero_optimization.stage"),
            f"{record.key} is only supported with ZeRO stage {stages} (stage is {stage}); DeepSpeed "
            f"{view.snapshot.version} raises: {needed.get('message')}{where}",
            f'use ZeRO stage {stages} or remove "{record.key}"',
        )
    if view.flag(f"{bf16}.bf16_optimizer_states") and view.flag(f"{bf16}.bf16_master_weights_and_grads") is False:
        yield Violation(
            (f"{bf16}.bf16_optimizer_states", f"{bf16}.bf16_master_weights_and_grads"),
            "bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled",
            f'set "{bf16}.bf16_master_weights_and_grads": true',
        )


def _allreduce_sum(view: View, world_size: int | None) -> Iterator[Violation]:
    op = view.value("gradient_allreduce_op")
    if not (isinstance(op, str) and op.lower() == "sum"):
        return
    conflicts = (
        ("zero_optimization.stage", view.zero_stage() == 3, "ZeRO stage 3"),
        ("zero_optimization.zenflow", isinstance(view.raw("zero_optimization.zenflow"), dict), "ZenFlow"),
        ("compile.deepcompile", view.flag("compile.deepcompile") is True, "DeepCompile"),
    )
    for path, active, what in conflicts:
        if active:
            yield Violation(
                ("gradient_allreduce_op", path),
                f"gradient_allreduce_op='sum' is not supported with {what}",
                f'use "gradient_allreduce_op": "mean" or turn off {what}',
            )


# ---------------------------------------------------------------- batch size


MAX_WORLD_SIZE = 1 << 16
"""Largest world size the batch rule lists (65,536 ranks): bounds its divisor search."""


def _divisors(n: int, limit: int = MAX_WORLD_SIZE) -> list[int]:
    """The divisors of ``n`` up to ``limit``, ascending, in at most ``limit`` steps whatever ``n`` is.

    Every divisor ``w <= limit`` is either at most ``sqrt(n)`` or the cofactor of one that is;
    when ``n > limit**2`` none is above ``sqrt(n)``, so trial division stops at ``limit`` either way.
    """
    small, large = [], []
    top = min(math.isqrt(n), limit)
    for d in range(1, top + 1):
        if n % d == 0:
            small.append(d)
            if d * d != n and n // d <= limit:
                large.append(n // d)
    return small + large[::-1]


def _batch(view: View, world_size: int | None) -> Iterator[Violation]:
    if view.known("elasticity.enabled") and view.flag("elasticity.enabled"):
        # DeepSpeedConfig computes the batch sizes from the elasticity section (compute_elastic_config); a
        # release without elasticity (0.19.8) rejects the section instead, as a removed key.
        return
    values: dict[str, int | None] = {}
    filled_later = malformed = False
    added: list[str] = []
    for key in BATCH_KEYS:
        value = view.raw(key)
        if isinstance(value, str) and value == "auto":
            filled_later = True  # by the HF Trainer, or already reported as an "auto" DeepSpeed rejects
            continue
        if (value is MISSING or value is None) and key in view.inserted:
            value, origin = view.inserted[key]
            added.append(f"{key} = {value}, {origin}")
        if value is MISSING or value is None:
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _integral(value):
            yield Violation((key,), f"{key} must be a positive integer, got {value!r}", f'set "{key}" to an integer')
            malformed = True
            continue
        values[key] = int(value)
    if filled_later or malformed:
        return
    tbs, micro, gas = (values[k] for k in BATCH_KEYS)
    present = tuple(k for k in BATCH_KEYS if values[k] is not None) or ("train_batch_size",)
    if tbs is None and micro is None:
        # Under the HF Trainer, accelerate may supply the micro batch itself: only a warning there.
        hf = bool(view.hf_filled) and "train_micro_batch_size_per_gpu" in view.hf_filled
        yield Violation(
            present,
            "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
            + (" (the HF Trainer fills only keys set to \"auto\")" if hf else ""),
            '"train_micro_batch_size_per_gpu": "auto" (HF Trainer) or an integer',
            severity="warning" if hf else "error",
        )
        return
    for key in present:
        if values[key] is not None and values[key] <= 0:  # type: ignore[operator]
            yield Violation((key,), f"{key} is {values[key]}; it has to be greater than 0", f'set "{key}" >= 1')
            return
    if world_size is not None:
        problem = resolve_batch(tbs, micro, gas, world_size)
        if problem:
            # under the HF Trainer the batch is judged as accelerate hands it, not as the file gives it
            why = f" (under the HF Trainer: {'; '.join(added)})" if added else ""
            given = tuple(k for k in present if not any(a.startswith(f"{k} = ") for a in added)) or present
            fix = _batch_fix(tbs, micro, gas, world_size) if not added else (
                f"give gradient_accumulation_steps yourself (or \"auto\"), or set train_batch_size to "
                f"{_show(micro * gas * world_size)}" if micro is not None and gas is not None else
                "give train_micro_batch_size_per_gpu and gradient_accumulation_steps (or \"auto\") with "
                "train_batch_size")
            yield Violation(given, problem + why, fix)
        return
    if tbs is None:
        return  # derived from the others: consistent at any world size
    given = [v for v in (micro, gas) if v is not None]
    product = 1
    for v in given:
        product *= v
    worlds = []
    if tbs % product == 0:
        worlds = [w for w in _divisors(tbs // product) if resolve_batch(tbs, micro, gas, w) is None]
    if not worlds:
        yield Violation(
            present,
            "train_batch_size must equal micro batch × accumulation steps × world size, and no world size fits",
            _batch_fix(tbs, micro, gas, 1),
        )
    else:
        capped = tbs // product > MAX_WORLD_SIZE  # larger world sizes were not searched
        total = f"{len(worlds)} up to {MAX_WORLD_SIZE} in all" if capped else f"{len(worlds)} in all"
        shown = ", ".join(map(str, worlds[:8])) + (f" … ({total})" if len(worlds) > 8 or capped else "")
        yield Violation(
            present,
            f"batch sizes are consistent only at world size {shown}",
            "pass --world-size N to check for your launch, or set only two of the three",
            severity="info",
        )


def _batch_fix(tbs: int | None, micro: int | None, gas: int | None, world: int) -> str:
    if micro is not None and gas is not None:
        return f'set "train_batch_size": {_show(micro * gas * world)} (= {micro} × {gas} × {world}), or drop it'
    return ("give two of train_batch_size / train_micro_batch_size_per_gpu / gradient_accumulation_steps, "
            "or all three consistent")


# ---------------------------------------------------------------- values read inside getters


def _keep_in_fp32_modules(view: View, world_size: int | None) -> Iterator[Violation]:
    value = view.raw("data_types.keep_in_fp32_modules")
    if value is MISSING or value == "auto":
        return
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        yield Violation(
            ("data_types.keep_in_fp32_modules",),
            f'data_types.keep_in_fp32_modules must be "auto" or a list of name patterns, got {value!r}',
            'use "auto" or a list of strings',
        )


def _pipeline_stage(view: View, world_size: int | None) -> Iterator[Violation]:
    value = view.raw("checkpoint.parallel_write.pipeline_stage")
    if value is not MISSING and value not in (True, False):  # DeepSpeed compares with `in [True, False]`
        yield Violation(
            ("checkpoint.parallel_write.pipeline_stage",),
            f"checkpoint.parallel_write.pipeline_stage is {value!r}; expecting true or false",
            "use true or false",
        )


def _needs_key_when_enabled(section: str, required: str, source_hint: str) -> Callable[
        [View, int | None], Iterator[Violation]]:
    def check(view: View, world_size: int | None) -> Iterator[Violation]:
        block = view.raw(section)
        if isinstance(block, dict) and view.truthy(f"{section}.enabled") and required not in block:
            yield Violation(
                (f"{section}.enabled",),
                f"{section} is enabled, so {required} must be given ({source_hint})",
                f'add "{required}" to "{section}", or disable it',
            )

    return check


# ---------------------------------------------------------------- engine


def _scheduler_params_required(view: View, world_size: int | None) -> Iterator[Violation]:
    scheduler = view.raw("scheduler")
    if isinstance(scheduler, dict) and scheduler.get("type") is not None and "params" not in scheduler:
        yield Violation(
            ("scheduler.type",),
            "scheduler.type without scheduler.params: the engine calls the scheduler with **params and fails on None",
            'add "params": {} (with the scheduler\'s required arguments)',
        )


RULES: tuple[Rule, ...] = (
    Rule("fp16-bf16-exclusive", "fp16 and bf16 cannot both be enabled",
         "deepspeed/runtime/config.py: DeepSpeedConfig._initialize_params",
         _fp16_bf16),
    Rule("bf16-shadows-bfloat16", "with both bf16 and bfloat16 present, bfloat16 is ignored",
         "deepspeed/runtime/precision_config.py: get_bfloat16_config", _bf16_shadows_bfloat16),
    Rule("fp16-dynamic-loss-scale", "dynamic loss scaling needs loss_scale_window > 0 and min_loss_scale > 0",
         "deepspeed/runtime/precision_config.py: DeepSpeedFP16Config._validate_dynamic_loss_scale_params",
         _fp16_dynamic_loss_scale),
    Rule("zero-stage-requirements", "options that need (or exclude) a ZeRO stage",
         "deepspeed/runtime/config.py: DeepSpeedConfig._do_error_check; deepspeed/runtime/zero/config.py: "
         "DeepSpeedZeroConfig.compute_grad_norm_valid, offload_ratio_check",
         _stage_requirements),
    Rule("allreduce-sum", "gradient_allreduce_op 'sum' excludes ZeRO-3, ZenFlow and DeepCompile",
         "deepspeed/runtime/config.py: DeepSpeedConfig._do_error_check", _allreduce_sum),
    Rule("batch-size", "train_batch_size = micro batch × accumulation steps × world size",
         "deepspeed/runtime/config.py: DeepSpeedConfig._set_batch_related_parameters, _batch_assertion",
         _batch),
    Rule("keep-in-fp32-modules", 'data_types.keep_in_fp32_modules is "auto" or a list of strings',
         "deepspeed/runtime/config.py: DeepSpeedConfig._initialize_params",
         _keep_in_fp32_modules),
    Rule("parallel-write-pipeline-stage", "checkpoint.parallel_write.pipeline_stage is a boolean",
         "deepspeed/runtime/config.py: get_checkpoint_parallel_write_pipeline",
         _pipeline_stage),
    Rule("curriculum-metrics-required", "enabled curriculum learning needs curriculum_metrics",
         "deepspeed/runtime/data_pipeline/config.py: get_curriculum_learning",
         _needs_key_when_enabled("data_efficiency.data_sampling.curriculum_learning", "curriculum_metrics",
                                 "get_curriculum_learning")),
    Rule("dynamic-batching-max-tokens", "enabled dynamic batching needs max_tokens",
         "deepspeed/runtime/data_pipeline/config.py: get_dynamic_batching",
         _needs_key_when_enabled("data_efficiency.data_sampling.dynamic_batching", "max_tokens",
                                 "get_dynamic_batching")),
    Rule("scheduler-params-required", "a configured scheduler needs a params object",
         "deepspeed/runtime/engine.py: DeepSpeedEngine._scheduler_from_config",
         _scheduler_params_required),
)


def evaluate(view: View, world_size: int | None, rules: tuple[Rule, ...] = ()) -> Iterator[tuple[Rule, Violation]]:
    """Every violation of ``rules`` (default: all) whose keys this release reads."""
    for rule in rules or RULES:
        for violation in rule.check(view, world_size):
            if all(view.known(path) for path in violation.paths):
                yield rule, violation
