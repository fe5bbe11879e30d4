"""The launch rules: what ``deepspeed.initialize`` (and the HF Trainer / accelerate before it) refuse.

``DeepSpeedConfig`` accepting a config is not the launch: the engine then builds the optimizer, the
scheduler and the ZeRO optimizer, and refuses some combinations there; the HF layers refuse others
before DeepSpeed sees the config. Each :class:`LaunchRule` here is one such refusal:

* what is enforced and where (``source``: file:line of the DeepSpeed release it was read in, ``read_in``,
  0.19.8 unless the behaviour is an older release's; of transformers 5.24.0 / accelerate 1.15.0 for the
  HF layers, as read into :mod:`dsfields.hf.trainer`);
* a predicate over the config *as passed* to ``deepspeed.initialize``: the :class:`Launch` (the
  calling style, where the optimizer comes from, and the :class:`~dsfields.hf.trainer.Plan`
  that style turns the config into), answering the JSON path it is about, or None;
* a triggering and a non-triggering example (:class:`Example`), the ``message`` DeepSpeed's own
  error must match, and the fix.

Rules are read from one release's source, so they are *confirmed per release*: ``python -m
dsfields.extract.launch_witness --rules`` runs every example through the real ``deepspeed.initialize`` (CPU,
gloo, world size 1, a tiny model) and writes ``generated/<version>/launch.json``; ``dsfields check``
applies a rule only where that file says it was confirmed (:mod:`dsfields.check.launch_rules`).

Imports: stdlib and ``dsfields.model`` only (this catalogue is shared by the extractor, which runs
the examples, and by ``check``, which applies the predicates; the layers allow no other home).
"""

from __future__ import annotations

from collections import namedtuple

from dsfields.hf.trainer import Plan, PlanError, hf_plan, plain_plan
from dsfields.model.dotted import at_path, edited

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from collections.abc import Callable
    from typing import Any, Literal

    Style = Literal["plain", "hf"]
    Effect = Literal["raises", "accepts"]



class Example(namedtuple("Example", "config style optimizer_from_code", defaults=("plain", False))):
    """One config and how it is launched."""

    __slots__ = ()

    config: dict[str, Any]
    style: Style  # default "plain"
    optimizer_from_code: bool  # default False

    def as_dict(self) -> dict[str, Any]:
        return {"config": self.config, "style": self.style, "optimizer_from_code": self.optimizer_from_code}


class Launch:
    """A config as it reaches ``deepspeed.initialize``: the style's plan, or the HF layers' refusal."""

    __slots__ = ("config", "style", "optimizer_from_code", "plan", "refused")

    def __init__(self, config: dict[str, Any], style: Style = "plain", optimizer_from_code: bool = False,
                 pair: tuple[str, str] | None = None) -> None:
        """``pair``: the transformers / accelerate releases whose programs plan the ``hf`` style (``--hf-version``;
        default :data:`dsfields.hf.trainer.WITNESS_PAIR`, the launch records')."""
        self.config = config
        self.style = style
        self.optimizer_from_code = optimizer_from_code
        self.plan: Plan | None = None
        self.refused: PlanError | None = None
        try:
            self.plan = hf_plan(config, pair=pair) if style == "hf" else plain_plan(config, optimizer_from_code)
        except PlanError as exc:
            self.refused = exc
        except (ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):  # too odd to plan
            self.plan = None

    # -- the passed config, read defensively (it may be anything JSON allows)

    def get(self, path: str, default: Any = None) -> Any:
        return at_path(self.plan.config if self.plan is not None else None, path, default)

    def zero_stage(self) -> int | None:
        """ZeRO stage as DeepSpeed reads it: absent 0, legacy ``true``/``false`` 1/0, None when unknown."""
        zero = self.get("zero_optimization", _ABSENT)
        if zero is _ABSENT or zero is None:
            return 0
        if isinstance(zero, bool):
            return int(zero)  # zero/config.py read_zero_config_deprecated: stage 1 if true
        if not isinstance(zero, dict):
            return None
        stage = zero.get("stage", 0)
        if isinstance(stage, bool) or not isinstance(stage, (int, float, str)):
            return None
        try:
            number = float(stage)
        except ValueError:
            return None
        return int(number) if number.is_integer() and 0 <= number <= 3 else None

    def optimizer_name(self) -> str | None:
        name = self.get("optimizer.type")
        return name if isinstance(name, str) else None

    def flag(self, path: str, default: bool) -> bool | None:
        value = self.get(path, _ABSENT)
        if value is _ABSENT or value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        return None

    @property
    def optimizer_source(self) -> str | None:
        """``config`` (DeepSpeed builds it), ``code`` (a torch optimizer passed), ``ds_cpu_adam``, None (no plan)."""
        return self.plan.optimizer if self.plan is not None else None


_ABSENT: Any = object()


class LaunchRule(namedtuple("LaunchRule", "id enforces raised_by source key fix message fires triggers controls "
                                          "effect restates read_in", defaults=("raises", (), "0.19.8"))):
    __slots__ = ()

    id: str
    enforces: str
    """What DeepSpeed / accelerate / the Trainer enforce at ``deepspeed.initialize``."""
    raised_by: str
    """``deepspeed``, ``accelerate`` or ``transformers``."""
    source: str
    """``file:line`` where it is enforced (DeepSpeed ``read_in``; transformers 5.24.0 / accelerate 1.15.0)."""
    key: str
    """The key the rule is about (the predicate names the exact path for one config)."""
    fix: str
    message: str
    """A substring DeepSpeed's (or accelerate's) own message contains when the rule fires."""
    fires: Callable[[Launch], str | None]
    triggers: tuple[Example, ...]
    controls: tuple[Example, ...]
    effect: Effect  # default "raises"
    """``raises``: the launch fails; ``accepts``: the launch takes what a static reading would refuse."""
    restates: tuple[str, ...]  # default ()
    """Static ``check`` rules (``dsfields.check.rules``) that say the same thing when this rule fires:
    their findings give way to this one's, which quotes the launch (one finding per cause)."""
    read_in: str  # default "0.19.8"
    """The DeepSpeed release whose source ``source`` cites: its committed ``launch.json`` must confirm the
    rule (tests). Metadata only: where the rule applies is decided by each release's ``launch.json``."""


# ---------------------------------------------------------------- predicates


def _offload_device(launch: Launch) -> str | None:
    """The path that turns on ZeRO-Offload of the optimizer (engine.py:1562 zero_use_cpu_optimizer)."""
    device = launch.get("zero_optimization.offload_optimizer.device")
    if isinstance(device, str) and device.lower() in ("cpu", "nvme"):
        return "zero_optimization.offload_optimizer.device"
    # zero/config.py:209 cpu_offload (deprecated): true becomes offload_optimizer {device: cpu}
    legacy = launch.get("zero_optimization.cpu_offload")
    if legacy is True and launch.get("zero_optimization.offload_optimizer") is None:
        return "zero_optimization.cpu_offload"
    return None


def _offload_client_optimizer(launch: Launch) -> str | None:
    if launch.optimizer_source != "code" or not launch.zero_stage():
        return None
    if launch.flag("zero_force_ds_cpu_optimizer", True) is False:
        return None
    return _offload_device(launch)


def _no_optimizer(launch: Launch) -> bool:
    return launch.optimizer_source == "config" and launch.get("optimizer") is None


def _zero_requires_optimizer(launch: Launch) -> str | None:
    if not _no_optimizer(launch) or launch.zero_stage() not in (1, 2):
        return None
    zero = launch.get("zero_optimization")
    return "zero_optimization.stage" if isinstance(zero, dict) and "stage" in zero else "zero_optimization"


ZERO_TESTED = frozenset({"adam", "adamw", "adagrad", "lion", "muon"})
"""Config optimizer names whose class is in ZERO_SUPPORTED_OPTIMIZERS (runtime/zero/utils.py:45):
FusedAdam / DeepSpeedCPUAdam / torch Adam(W), (CPU)Adagrad, FusedLion / DeepSpeedCPULion, MuonWithAuxAdam."""
DEEPSPEED_NAMES = frozenset({"adagrad", "adam", "adamw", "lamb", "muadam", "muadamw", "musgd", "lion", "muon",
                             "onebitadam", "onebitlamb", "zerooneadam"})
TORCH_OPTIMIZERS = frozenset({"SGD", "RMSprop", "Rprop", "ASGD", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS",
                              "SparseAdam", "Adafactor"})
"""torch.optim classes (2.x) the engine builds by name (engine.py:2555 getattr(torch.optim, name))."""


def _untested_optimizer(launch: Launch) -> str | None:
    name = launch.optimizer_name()
    if launch.optimizer_source != "config" or name is None or not launch.zero_stage():
        return None
    known = name.lower() in DEEPSPEED_NAMES or name in TORCH_OPTIMIZERS
    if not known or name.lower() in ZERO_TESTED or name.lower() in ("onebitadam", "onebitlamb", "zerooneadam"):
        return None
    if launch.flag("zero_allow_untested_optimizer", False) is not False:
        return None
    return "optimizer.type"


def _lamb_static_loss_scale(launch: Launch) -> str | None:
    name = launch.optimizer_name()
    if name is None or name.lower() != "lamb" or launch.optimizer_source != "config":
        return None
    scale = launch.get("fp16.loss_scale", 0)
    if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale != 0:
        return "fp16.loss_scale"
    return None


_DTYPES = {"fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
           "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
           "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16", "int8": "int8", "torch.int8": "int8"}


def _param_dtype(launch: Launch) -> str | None:
    requested = launch.get("data_types.param_dtype")
    if not isinstance(requested, str) or requested not in _DTYPES:
        return None
    fp16 = launch.flag("fp16.enabled", False)
    bf16 = launch.flag("bf16.enabled", False) if launch.get("bf16") is not None else launch.flag(
        "bfloat16.enabled", False)
    if fp16 is None or bf16 is None:
        return None
    model = "fp16" if fp16 else "bf16" if bf16 else "fp32"
    return "data_types.param_dtype" if _DTYPES[requested] != model else None


def _refused(pattern: str) -> Callable[[Launch], str | None]:
    def fires(launch: Launch) -> str | None:
        if launch.refused is not None and pattern in str(launch.refused):
            return launch.refused.key or "zero_optimization"
        return None

    return fires


def _hf_zero_not_object(launch: Launch) -> str | None:
    zero = launch.config.get("zero_optimization") if isinstance(launch.config, dict) else None
    if launch.refused is not None and launch.refused.exc_type == "AttributeError" and not isinstance(
            zero, (dict, type(None))):
        return "zero_optimization"
    return None


def _zero_bool_accepted(launch: Launch) -> str | None:
    if launch.style == "plain" and isinstance(launch.config.get("zero_optimization"), bool):
        return "zero_optimization"
    return None


_SCHEDULER_STEPS = {  # runtime/lr_schedules.py: positive-integer arguments checked in __init__
    "WarmupLR": ("warmup_num_steps",), "WarmupDecayLR": ("warmup_num_steps",),
    "WarmupCosineLR": ("warmup_num_steps",), "LRRangeTest": ("lr_range_test_step_size",),
}


def _scheduler_args(launch: Launch) -> str | None:
    name = launch.get("scheduler.type")
    params = launch.get("scheduler.params")
    if not isinstance(name, str) or not isinstance(params, dict):
        return None
    for key in _SCHEDULER_STEPS.get(name, ()):
        if key in params:
            value = params[key]
            if isinstance(value, str) and value == "auto":
                continue  # the "auto" findings say so
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                return f"scheduler.params.{key}"
    if name == "OneCycle":
        first = params.get("cycle_first_step_size", 2000)
        if isinstance(first, (int, float)) and not isinstance(first, bool) and first <= 0:
            return "scheduler.params.cycle_first_step_size"
        second = params.get("cycle_second_step_size")
        if isinstance(second, (int, float)) and not isinstance(second, bool) and second < 0:
            return "scheduler.params.cycle_second_step_size"
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _onecycle_zero_cycle(launch: Launch) -> str | None:
    """OneCycle._initialize_cycle before the checks of newer releases: step_ratio = first / (first + second),
    second defaulting to first; a cycle of total size 0 divides by zero when the scheduler is built."""
    params = launch.get("scheduler.params")
    if launch.get("scheduler.type") != "OneCycle" or not isinstance(params, dict):
        return None
    first = _number(params.get("cycle_first_step_size", 2000))
    second = first if params.get("cycle_second_step_size") is None else _number(params["cycle_second_step_size"])
    if first is None or second is None or first + second != 0:
        return None
    return "scheduler.params.cycle_first_step_size" if "cycle_first_step_size" in params else "scheduler.params"


def _pld_without_theta_gamma(launch: Launch) -> str | None:
    """engine.py pld_theta / pld_gamma: ``pld_params()["theta"]`` and ``["gamma"]``, read without a default
    (PLD_THETA_DEFAULT is never used) when progressive_layer_drop.enabled is truthy."""
    section = launch.get("progressive_layer_drop")
    if not isinstance(section, dict) or not section.get("enabled"):
        return None
    for key in ("theta", "gamma"):
        if key not in section:
            return f"progressive_layer_drop.{key}"
    return None


def _no_batch_size(launch: Launch) -> str | None:
    if launch.plan is None:
        return None
    if launch.get("elasticity.enabled"):
        return None  # DeepSpeedConfig computes the batch sizes from the elasticity section
    if launch.get("train_batch_size") is None and launch.get("train_micro_batch_size_per_gpu") is None:
        return "train_micro_batch_size_per_gpu"
    return None


def _hpz_without_optimizer(launch: Launch) -> str | None:
    size = launch.get("zero_optimization.zero_hpz_partition_size")
    if not _no_optimizer(launch) or launch.zero_stage() != 3:
        return None
    if isinstance(size, (int, float)) and not isinstance(size, bool) and size > 1:
        return "zero_optimization.zero_hpz_partition_size"
    return None


# ---------------------------------------------------------------- the catalogue

ZERO2: dict[str, Any] = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
                         "zero_optimization": {"stage": 2}}
ADAM = {"type": "AdamW", "params": {"lr": 1e-4}}


def _cfg(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``base`` with dotted-path changes (``zero_optimization__stage=3``; ``None`` deletes)."""
    return edited(base, changes, "__")


OFFLOAD_FIX = ('set "offload_optimizer": {"device": "cpu"} and let DeepSpeed (or accelerate) use DeepSpeedCPUAdam, '
               'define the optimizer in the config\'s "optimizer" section, or set "zero_force_ds_cpu_optimizer": false')

RULES: tuple[LaunchRule, ...] = (
    LaunchRule(
        "offload-client-optimizer",
        "ZeRO-Offload of the optimizer with an optimizer built in code (not DeepSpeedCPUAdam/CPULion) is refused "
        "unless zero_force_ds_cpu_optimizer is false; under the HF Trainer accelerate swaps in DeepSpeedCPUAdam "
        "only for offload_optimizer.device, not for the legacy cpu_offload: true",
        "deepspeed", "deepspeed/runtime/engine.py:2341-2346 (_configure_optimizer)",
        "zero_optimization.offload_optimizer.device", OFFLOAD_FIX, "ZeRO-Offload with a client provided optimizer",
        _offload_client_optimizer,
        triggers=(Example(_cfg(ZERO2, zero_optimization__offload_optimizer={"device": "cpu"}), "plain", True),
                  Example(_cfg(ZERO2, zero_optimization__cpu_offload=True), "hf")),
        controls=(Example(_cfg(ZERO2, zero_optimization__offload_optimizer={"device": "cpu"},
                               zero_force_ds_cpu_optimizer=False), "plain", True),
                  Example(_cfg(ZERO2, zero_optimization__offload_optimizer={"device": "cpu"}), "hf"))),
    LaunchRule(
        "zero-requires-optimizer",
        "ZeRO stage 1 and 2 need an optimizer: one in the config's optimizer section or one passed from code",
        "deepspeed", "deepspeed/runtime/engine.py:2659 (_configure_zero_optimizer)",
        "zero_optimization.stage",
        'add an "optimizer" section (e.g. {"type": "AdamW", "params": {"lr": 1e-4}}), pass an optimizer to '
        "deepspeed.initialize (say so with --optimizer-from-code), or use stage 0 or 3",
        "requires an optimizer", _zero_requires_optimizer,
        triggers=(Example(ZERO2),),
        controls=(Example(_cfg(ZERO2, optimizer=ADAM)), Example(ZERO2, "plain", True))),
    LaunchRule(
        "untested-zero-optimizer",
        "with ZeRO, an optimizer DeepSpeed has not tested with ZeRO (torch.optim by name such as SGD, Lamb, "
        "the mu-P optimizers) needs zero_allow_untested_optimizer: true",
        "deepspeed", "deepspeed/runtime/engine.py:2297-2301 (_do_optimizer_sanity_check)",
        "optimizer.type", 'set "zero_allow_untested_optimizer": true, or use Adam/AdamW/Adagrad/Lion',
        "untested ZeRO Optimizer", _untested_optimizer,
        triggers=(Example(_cfg(ZERO2, optimizer={"type": "SGD", "params": {"lr": 0.1}})),
                  Example(_cfg(ZERO2, optimizer={"type": "SGD", "params": {"lr": 0.1}}), "hf")),
        controls=(Example(_cfg(ZERO2, optimizer={"type": "SGD", "params": {"lr": 0.1}},
                               zero_allow_untested_optimizer=True)),)),
    LaunchRule(
        "lamb-dynamic-loss-scale",
        "the Lamb optimizer needs dynamic loss scaling: fp16.loss_scale 0 (checked even with fp16 off)",
        "deepspeed", "deepspeed/runtime/engine.py:2021-2023 (_do_sanity_check)",
        "fp16.loss_scale", 'set "fp16": {"loss_scale": 0} (dynamic), or use another optimizer',
        "requires dynamic loss scaling", _lamb_static_loss_scale,
        triggers=(Example({"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "Lamb", "params": {"lr": 1e-3}},
                           "fp16": {"enabled": False, "loss_scale": 128}}),),
        controls=(Example({"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "Lamb", "params": {"lr": 1e-3}},
                           "fp16": {"enabled": False, "loss_scale": 0}}),)),
    LaunchRule(
        "param-dtype-precision",
        "data_types.param_dtype must be the dtype of the enabled precision mode (fp16, bf16, else fp32)",
        "deepspeed", "deepspeed/runtime/engine.py:1812-1829 (_assert_valid_mixed_precision_config)",
        "data_types.param_dtype", 'enable the matching "fp16"/"bf16" section, or delete data_types.param_dtype',
        "conflicts with the enabled precision mode", _param_dtype,
        triggers=(Example(_cfg(ZERO2, optimizer=ADAM, data_types={"param_dtype": "bf16"})),),
        controls=(Example(_cfg(ZERO2, optimizer=ADAM, data_types={"param_dtype": "fp32"})),)),
    LaunchRule(
        "scheduler-invalid-args",
        "scheduler step counts are checked when the scheduler is built: warmup_num_steps (WarmupLR, WarmupDecayLR, "
        "WarmupCosineLR) and lr_range_test_step_size are positive integers, OneCycle's cycle_first_step_size > 0 "
        "and cycle_second_step_size >= 0",
        "deepspeed", "deepspeed/runtime/lr_schedules.py:370-371, 526-529, 733-734, 874-875",
        "scheduler.params.warmup_num_steps", "use a positive integer number of steps (e.g. 1000)",
        "must be", _scheduler_args,
        triggers=(Example(_cfg(ZERO2, optimizer=ADAM, scheduler={"type": "WarmupLR",
                                                                  "params": {"warmup_num_steps": 0}})),),
        controls=(Example(_cfg(ZERO2, optimizer=ADAM, scheduler={"type": "WarmupLR",
                                                                  "params": {"warmup_num_steps": 10}})),)),
    LaunchRule(
        "scheduler-onecycle-zero-cycle",
        "OneCycle divides by its total cycle size when it is built: cycle_first_step_size + cycle_second_step_size "
        "(which defaults to the first) must not be 0 (releases before OneCycle checked each half)",
        "deepspeed", "deepspeed/runtime/lr_schedules.py:480-481 (OneCycle._initialize_cycle)",
        "scheduler.params.cycle_first_step_size", "use a positive cycle_first_step_size (e.g. 1000)",
        "division by zero", _onecycle_zero_cycle, read_in="0.14.4",
        triggers=(Example(_cfg(ZERO2, optimizer=ADAM, scheduler={"type": "OneCycle", "params": {
            "cycle_min_lr": 1e-5, "cycle_max_lr": 1e-4, "cycle_first_step_size": 0}})),),
        controls=(Example(_cfg(ZERO2, optimizer=ADAM, scheduler={"type": "OneCycle", "params": {
            "cycle_min_lr": 1e-5, "cycle_max_lr": 1e-4, "cycle_first_step_size": 10}})),)),
    LaunchRule(
        "pld-theta-gamma-required",
        "progressive_layer_drop enabled needs theta and gamma: the engine reads both without a default "
        "when it builds ProgressiveLayerDrop",
        "deepspeed", "deepspeed/runtime/engine.py:496-500 (pld_theta, pld_gamma; called at engine.py:337)",
        "progressive_layer_drop.theta", 'add "theta" (e.g. 0.5) and "gamma" (e.g. 0.001) to progressive_layer_drop',
        "'theta'", _pld_without_theta_gamma, read_in="0.14.4",
        triggers=(Example(_cfg(ZERO2, optimizer=ADAM, progressive_layer_drop={"enabled": True})),),
        controls=(Example(_cfg(ZERO2, optimizer=ADAM, progressive_layer_drop={
            "enabled": True, "theta": 0.5, "gamma": 0.001})),)),
    LaunchRule(
        "batch-size-required",
        "train_batch_size or train_micro_batch_size_per_gpu must be given (gradient_accumulation_steps alone is "
        "not enough; the HF Trainer fills them only where they are \"auto\")",
        "deepspeed", "deepspeed/runtime/config.py (_set_batch_related_parameters)",
        "train_micro_batch_size_per_gpu",
        'add "train_micro_batch_size_per_gpu" (or "auto" with the HF Trainer)',
        "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided", _no_batch_size,
        triggers=(Example({"optimizer": ADAM, "zero_optimization": {"stage": 2}}),
                  Example({"optimizer": ADAM, "zero_optimization": {"stage": 2}}, "hf")),
        controls=(Example({"train_micro_batch_size_per_gpu": 1, "optimizer": ADAM,
                           "zero_optimization": {"stage": 2}}),),
        restates=("batch-size",)),
    LaunchRule(
        "zero3-hpz-requires-optimizer",
        "ZeRO-3 with zero_hpz_partition_size > 1 and no optimizer fails: the engine calls a method only the "
        "ZeRO-3 optimizer has (a DeepSpeed bug, at any world size)",
        "deepspeed", "deepspeed/runtime/engine.py:2718-2719 (_configure_zero_optimizer)",
        "zero_optimization.zero_hpz_partition_size",
        'add an "optimizer" section or pass one from code, or drop zero_hpz_partition_size',
        "_set_zero_group_parallelism", _hpz_without_optimizer,
        triggers=(Example(_cfg(ZERO2, zero_optimization={"stage": 3, "zero_hpz_partition_size": 2})),),
        controls=(Example(_cfg(ZERO2, zero_optimization={"stage": 3})),)),
    LaunchRule(
        "hf-zero-section-required",
        "under the HF Trainer, accelerate's DeepSpeedPlugin needs a zero_optimization section",
        "accelerate", "accelerate/utils/dataclasses.py:1276 (DeepSpeedPlugin.__post_init__)",
        "zero_optimization", 'add "zero_optimization": {"stage": 0} (or the stage you want)',
        "Please specify the ZeRO optimization config", _refused("Please specify the ZeRO optimization config"),
        triggers=(Example({"train_micro_batch_size_per_gpu": 1, "optimizer": ADAM}, "hf"),),
        controls=(Example({"train_micro_batch_size_per_gpu": 1, "optimizer": ADAM,
                           "zero_optimization": {"stage": 0}}, "hf"),)),
    LaunchRule(
        "hf-unfilled-auto",
        "under the HF Trainer, every \"auto\" left after the Trainer's and accelerate's fills is refused",
        "accelerate", "accelerate/utils/dataclasses.py:1365-1371 (HfDeepSpeedConfig / deepspeed_config_process)",
        "zero_optimization.sub_group_size", 'write a value instead of "auto" (only the keys the Trainer or '
        'accelerate fill may be "auto")', "not found in kwargs", _refused("not found in kwargs"),
        triggers=(Example(_cfg(ZERO2, zero_optimization__sub_group_size="auto"), "hf"),),
        controls=(Example(_cfg(ZERO2, zero_optimization__reduce_bucket_size="auto"), "hf"),)),
    LaunchRule(
        "hf-zero-optimization-object",
        "under the HF Trainer, zero_optimization must be an object: the Trainer and accelerate look keys up in it",
        "transformers", "transformers/integrations/deepspeed.py:108 (fill_match via find_config_node)",
        "zero_optimization", 'write "zero_optimization": {"stage": 1} (the legacy true means stage 1)',
        "object has no attribute 'get'", _hf_zero_not_object,
        triggers=(Example(_cfg(ZERO2, zero_optimization=True, optimizer=ADAM), "hf"),),
        controls=(Example(_cfg(ZERO2, zero_optimization={"stage": 1}, optimizer=ADAM), "hf"),)),
    LaunchRule(
        "zero-optimization-bool-accepted",
        "plain DeepSpeed still reads the legacy \"zero_optimization\": true / false (stage 1 / 0, deprecated)",
        "deepspeed", "deepspeed/runtime/zero/config.py (get_zero_config: read_zero_config_deprecated)",
        "zero_optimization", 'write "zero_optimization": {"stage": 1} (true) or {"stage": 0} (false)',
        "", _zero_bool_accepted, effect="accepts",
        triggers=(Example(_cfg(ZERO2, zero_optimization=True, optimizer=ADAM)),),
        controls=()),
)
BY_ID = {rule.id: rule for rule in RULES}


def evaluate(config: dict[str, Any], style: Style = "plain", optimizer_from_code: bool = False,
             rules: tuple[LaunchRule, ...] = RULES,
             pair: tuple[str, str] | None = None) -> list[tuple[LaunchRule, str]]:
    """Every rule that fires on ``config`` launched as ``style`` (``hf``: planned by ``pair``'s programs), with the
    key it names."""
    if not isinstance(config, dict):
        return []
    launch = Launch(config, style, optimizer_from_code, pair)
    fired = []
    for rule in rules:
        try:
            key = rule.fires(launch)
        except (ArithmeticError, TypeError, ValueError, AttributeError):  # an odd value the predicate cannot judge
            key = None
        if key:
            fired.append((rule, key))
    return fired


# ---------------------------------------------------------------- per-release confirmation (launch.json)

LAUNCH_FILE = "launch.json"
LAUNCH_FORMAT = 1


def launch_path(version: str, generated: Any = None) -> Any:
    from dsfields.model.store import repo_generated_dir

    return (generated or repo_generated_dir()) / version / LAUNCH_FILE


def load_launch(version: str, generated: Any = None) -> dict[str, Any] | None:
    """``generated/<version>/launch.json`` (the launch probe's verdicts), or None when absent or unreadable.

    A file of another format, or one whose ``rules`` is not an object, counts as absent: the rules then
    stay inactive for that release, as for a release never probed.
    """
    import os

    # Without pathlib when reading the committed tree: check's start-up skips its import.
    path = launch_path(version, generated) if generated else None
    return read_rule_record(os.fspath(path) if path else None, version, LAUNCH_FILE, LAUNCH_FORMAT)


def read_rule_record(path: str | None, version: str, file: str, fmt: int) -> dict[str, Any] | None:
    """A release's record of confirmed rules (``launch.json``, ``world.json``) at ``path`` (else the committed
    ``generated/<version>/<file>``), or None when absent, unreadable, of another format or without ``rules``."""
    import json
    import os

    from dsfields.model.store import generated_root, read_generated

    try:
        data = json.loads(read_generated(path or os.path.join(generated_root(), version, file)).decode("utf-8"))
    except (OSError, ValueError, RecursionError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format_version") != fmt or not isinstance(data.get("rules"), dict):
        return None
    return data


def confirmed(record: dict[str, Any] | None, known: Any = None) -> dict[str, dict[str, Any]]:
    """The rules a record confirmed: id -> its record (message, exc_type, site); ``known``: the rule ids that
    count (default: this catalogue's)."""
    if not record:
        return {}
    ids = BY_ID if known is None else known
    return {rule_id: entry for rule_id, entry in record["rules"].items()
            if isinstance(entry, dict) and entry.get("confirmed") is True and rule_id in ids}
