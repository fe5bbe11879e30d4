"""The HF Trainer / accelerate calling style, in pure Python: what they hand ``deepspeed.initialize``.

transformers' Trainer and accelerate rewrite a ds_config before DeepSpeed sees it: they fill the
``"auto"`` values, add sections, refuse some configs themselves (no ``zero_optimization``, an
``"auto"`` nobody fills, ``"zero_optimization": true``) and choose the optimizer (their own AdamW
when the config has none, swapped for DeepSpeedCPUAdam under ZeRO-Offload). :func:`hf_plan` mirrors
that, every step citing the transformers 5.24.0 / accelerate 1.15.0 line it follows; :func:`plain_plan`
is plain code calling ``deepspeed.initialize`` itself.

Both the launch witness (:mod:`dsfields.extract.launch`, which then runs DeepSpeed on the plan) and
``dsfields check`` (:mod:`dsfields.check.launch_rules`, which judges the plan against the launch
rules, and ``check --runtime``'s HF fills) use this one copy.

Imports: stdlib only (bottom layer); no dataclasses (``check``'s start-up).
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from dsfields.model.jsontypes import clone_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from typing import Any, Literal

    OptimizerSource = Literal["config", "code", "ds_cpu_adam"]

BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
HIDDEN_SIZE = 8
"""The launch witness's tiny model width, also its ``model.config.hidden_size`` for the HF hidden-size fills."""


class PlanError(Exception):
    """The HF layers (transformers / accelerate, mirrored in :func:`hf_plan`) refuse the config."""

    def __init__(self, raised_by: str, exc_type: str, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.raised_by = raised_by
        self.exc_type = exc_type
        self.key = key


class Plan:
    """What a caller passes to ``deepspeed.initialize``: the final config and where the optimizer comes from.

    ``optimizer``: ``config`` (DeepSpeed builds it from the config), ``code`` (a torch AdamW is passed),
    ``ds_cpu_adam`` (accelerate's swap to DeepSpeedCPUAdam). ``scheduler``: ``config``, ``callable``
    (the Trainer's own, passed as ``lr_scheduler=callable``) or ``none``.
    """

    __slots__ = ("config", "optimizer", "scheduler", "notes", "style")

    def __init__(self, config: dict[str, Any], optimizer: OptimizerSource = "config",
                 scheduler: Literal["config", "callable", "none"] = "config", notes: list[str] | None = None,
                 style: Literal["plain", "hf"] = "plain") -> None:
        self.config = config
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.notes = notes if notes is not None else []
        self.style = style

    def __repr__(self) -> str:
        return f"Plan({self.style}, optimizer={self.optimizer}, scheduler={self.scheduler})"


# ---------------------------------------------------------------- calling styles (no DeepSpeed needed)


def at_one_rank(config: dict[str, Any]) -> dict[str, Any]:
    """Keep the batch triple consistent at world size 1 (the config may be right for N ranks).

    Same rule as ``dsfields.check.at_one_rank``: only when all three are positive integers; the batch
    arithmetic for N ranks is the static check's business (``--world-size``).
    Unlike that one, a triple that fits no world size (train_batch_size not a multiple of micro x
    gas) is left for DeepSpeed to reject.
    """
    out = clone_json(config)
    values = [out.get(k) for k in BATCH_KEYS]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and _integral(v) for v in values):
        tbs, micro, gas = (int(v) for v in values)
        if tbs % (micro * gas) == 0:
            out["train_batch_size"] = micro * gas
    return out


def _integral(value: int | float) -> bool:
    import math

    return isinstance(value, int) or math.isfinite(value) and value.is_integer()


def plain_plan(config: dict[str, Any], optimizer_from_code: bool = False, fill_auto: bool = False) -> Plan:
    """Plain code: the config as written (batch made consistent at one rank), optimizer from config or code.

    ``fill_auto``: first replace the ``"auto"`` values the HF Trainer fills, with the same values as
    :func:`hf_plan` (an HF-style config launched from plain code); every other "auto" stays for
    DeepSpeed to judge.
    """
    cfg = clone_json(config)
    if fill_auto:
        with contextlib.suppress(AttributeError):  # a non-dict on a fill path: DeepSpeed will judge it
            _hf_fill(cfg, HF_ARGS, HIDDEN_SIZE)
    return Plan(at_one_rank(cfg), "code" if optimizer_from_code else "config",
                "config" if "scheduler" in cfg else "none", style="plain")


# TrainingArguments defaults assumed for the fills (transformers 5.24.0 training_args.py, the
# dataclass fields): learning_rate 5e-5, adam_beta1 0.9, adam_beta2 0.999, adam_epsilon 1e-8,
# weight_decay 0.0, max_grad_norm 1.0, warmup 0 steps; per_device_train_batch_size 1 (the default
# is 8; 1 keeps the batch arithmetic trivial at one rank, like check.hf_substitute), world size 1,
# gradient_accumulation_steps 1. fp16/bf16 follow the config: a literal ``enabled: true`` is taken
# as the user passing --fp16/--bf16 (else the Trainer's fill_match reports a mismatch), "auto" as
# not passing it (this CPU machine has no fp16).
HF_ARGS = SimpleNamespace(learning_rate=5e-5, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, weight_decay=0.0,
                          max_grad_norm=1.0, per_device_train_batch_size=1, gradient_accumulation_steps=1,
                          world_size=1, warmup_steps=0)
NUM_TRAINING_STEPS = 100


def _node(config: dict[str, Any], path: str) -> tuple[Any, str]:
    """accelerate/utils/deepspeed.py:178 ``find_config_node`` (transformers subclasses it): ``.get`` down the path.

    A non-dict on the way raises AttributeError exactly as there (``"zero_optimization": true``).
    """
    node: Any = config
    *parents, last = path.split(".")
    for part in parents:
        node = node.get(part)
        if node is None:
            return None, last
    return node, last


def _fill(config: dict[str, Any], path: str, value: Any) -> None:
    """transformers integrations/deepspeed.py:108 ``fill_match`` / accelerate utils/dataclasses.py:1357:
    replace ``"auto"`` only; mismatches are not raised here (the user's arguments are assumed to match)."""
    node, key = _node(config, path)
    if node is not None and node.get(key) == "auto":
        node[key] = value


def _is_true(config: dict[str, Any], path: str) -> bool:
    # accelerate/utils/deepspeed.py HfDeepSpeedConfig.is_true: bool(value) of a non-None value.
    node, key = _node(config, path)
    value = node.get(key) if node is not None else None
    return value is not None and bool(value) and value != "auto"


def hf_plan(config: dict[str, Any], hidden_size: int = HIDDEN_SIZE) -> Plan:
    """The config and optimizer the HF Trainer (transformers 5.24.0) with accelerate 1.15.0 hand to DeepSpeed.

    Raises :class:`PlanError` where those layers refuse the config before DeepSpeed sees it.
    """
    cfg = clone_json(config)
    args = HF_ARGS
    notes: list[str] = []
    try:
        _hf_fill(cfg, args, hidden_size)
    except AttributeError as exc:  # a dict expected on the path (find_config_node's .get)
        raise PlanError("transformers", "AttributeError", str(exc)) from exc
    # -- accelerate DeepSpeedPlugin.__post_init__ (utils/dataclasses.py:1226-1336), built by
    #    TrainingArguments.__post_init__ (transformers training_args.py:1715) right after the fills.
    if "gradient_accumulation_steps" not in cfg:  # dataclasses.py:1274
        cfg["gradient_accumulation_steps"] = 1
    if "zero_optimization" not in cfg:  # dataclasses.py:1276
        raise PlanError("accelerate", "ValueError", "Please specify the ZeRO optimization config in the DeepSpeed "
                        "config.", "zero_optimization")
    # dataclasses.py:1281-1291: plugin attributes (from ACCELERATE_* env, unset here) fill "auto" only.
    plugin = {"gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "zero_optimization.stage": 2,
              "zero_optimization.offload_optimizer.device": "none", "zero_optimization.offload_param.device": "none",
              "zero_optimization.offload_param.nvme_path": "none",
              "zero_optimization.offload_optimizer.nvme_path": "none",
              "zero_optimization.stage3_gather_16bit_weights_on_model_save": False}
    try:
        for path, value in plugin.items():
            _fill(cfg, path, value)
    except AttributeError as exc:
        raise PlanError("accelerate", "AttributeError", str(exc)) from exc
    cfg["steps_per_print"] = float("inf")  # dataclasses.py:1336
    # -- AcceleratorState (state.py:977) -> DeepSpeedPlugin.set_mixed_precision (dataclasses.py:1415-1446):
    #    mixed_precision is the Trainer's, i.e. what the config enabled literally.
    # A literal legacy ``bfloat16.enabled: true`` is taken as --bf16 too (the Trainer only looks at bf16).
    bf16 = _is_true(cfg, "bf16.enabled") or _is_true(cfg, "bfloat16.enabled")
    mixed = "fp16" if _is_true(cfg, "fp16.enabled") else "bf16" if bf16 else "no"
    if mixed == "fp16" and "fp16" not in cfg:
        cfg["fp16"] = {"enabled": True, "auto_cast": True}
    if mixed != "no":
        other = "bf16" if mixed == "fp16" else "fp16"
        section = cfg.get(other, {})
        if isinstance(section, dict) and str(section.get("enabled", "False")).lower() == "true":
            raise PlanError("accelerate", "ValueError", f"`--mixed_precision` arg cannot be set to `{mixed}` when "
                            f"`{other}` is set in the DeepSpeed config file.", f"{other}.enabled")
    for dtype in ("fp16", "bf16"):
        if dtype not in cfg:
            cfg[dtype] = {"enabled": False}
            notes.append(f"accelerate added {dtype}.enabled=false")
    _fill(cfg, "fp16.enabled", mixed == "fp16")
    _fill(cfg, "bf16.enabled", mixed == "bf16")
    # -- transformers deepspeed_optim_sched (integrations/deepspeed.py:559-610), from deepspeed_init (:613).
    if "optimizer" in cfg:
        optimizer: Literal["config", "code", "ds_cpu_adam"] = "config"  # :576-577 DummyOptim(params)
    else:
        optimizer = "code"  # :587 trainer.create_optimizer() (AdamW)
        cfg["zero_allow_untested_optimizer"] = True  # :589
    scheduler: Literal["config", "callable", "none"]
    if "scheduler" in cfg:
        scheduler = "config"  # :592-593 DummyScheduler(optimizer): DeepSpeed builds it
    elif optimizer == "config":
        scheduler = "callable"  # :595-608 DummyScheduler(lr_scheduler_callable=...): the Trainer's, via DeepSpeed
    else:
        scheduler = "none"  # trainer.py:1778 create_scheduler after prepare: DeepSpeed never sees it
    # -- accelerate Accelerator._prepare_deepspeed (accelerator.py:2141-2400) on prepare(model, optimizer).
    _fill(cfg, "gradient_accumulation_steps", args.gradient_accumulation_steps)  # :2211
    kwargs: dict[str, Any] = {"gradient_clipping": 1.0,  # :2223-2233
                              "zero_optimization.stage3_gather_16bit_weights_on_model_save": False}
    micro = cfg.get("train_micro_batch_size_per_gpu")
    if micro == "auto":  # :2177-2204: Trainer.prepare passes no dataloader
        raise PlanError("accelerate", "ValueError", "When using DeepSpeed, `accelerate.prepare()` requires you to "
                        "pass at least one of training or evaluation dataloaders with `batch_size` attribute "
                        "returning an integer value or alternatively set an integer value in "
                        "`train_micro_batch_size_per_gpu` in the deepspeed config file",
                        "train_micro_batch_size_per_gpu")
    if micro is not None:
        kwargs["train_micro_batch_size_per_gpu"] = micro
        gas = cfg.get("gradient_accumulation_steps")
        with contextlib.suppress(TypeError):
            kwargs["train_batch_size"] = micro * gas * 1 // 1  # :2231 ... * num_processes // sp_size
    if optimizer == "code":
        cfg["zero_allow_untested_optimizer"] = True  # :2262-2263 a torch.optim.Optimizer
    # :2295-2326 hidden-size keys (model.config.hidden_size), then the scheduler fills for DummyScheduler
    kwargs.update({"zero_optimization.reduce_bucket_size": hidden_size * hidden_size,
                   "zero_optimization.stage3_prefetch_bucket_size": int(0.9 * hidden_size * hidden_size),
                   "zero_optimization.stage3_param_persistence_threshold": 10 * hidden_size})
    if optimizer == "config":  # :2328-2331 DummyOptim's lr / weight_decay (DummyOptim defaults 0.001, 0)
        kwargs.update({"optimizer.params.lr": 0.001, "optimizer.params.weight_decay": 0})
    try:
        leftover = _process(cfg, kwargs)  # :2344 deepspeed_config_process(must_match=False, **config_kwargs)
    except AttributeError as exc:
        raise PlanError("accelerate", "AttributeError", str(exc)) from exc
    if leftover:  # dataclasses.py:1365-1371: an "auto" nobody fills
        raise PlanError("accelerate", "ValueError", f"`{leftover}` not found in kwargs. Please specify "
                        f"`{leftover}` without `auto` (set to correct value) in the DeepSpeed config file or pass "
                        "it in kwargs.", leftover)
    if optimizer == "code":
        zero = cfg["zero_optimization"]  # accelerator.py:2374 (KeyError impossible: checked above)
        if not isinstance(zero, dict):
            raise PlanError("accelerate", "AttributeError", f"'{type(zero).__name__}' object has no attribute 'get'",
                            "zero_optimization")
        offload = zero.get("offload_optimizer", {})
        device = offload.get("device", "none") if isinstance(offload, dict) else "none"
        # :2374-2383 only offload_optimizer.device counts: legacy ``cpu_offload: true`` keeps torch AdamW,
        # and DeepSpeed then raises about zero_force_ds_cpu_optimizer.
        if device != "none" and cfg.get("zero_force_ds_cpu_optimizer", True):
            optimizer = "ds_cpu_adam"  # utils/deepspeed.py:29 map_pytorch_optim_to_deepspeed
            notes.append("accelerate swapped in DeepSpeedCPUAdam")
    return Plan(at_one_rank(cfg), optimizer, scheduler, notes, style="hf")


def fill_trainer_auto(config: dict[str, Any], hidden_size: int = HIDDEN_SIZE) -> dict[str, Any]:
    """A copy of ``config`` with the ``"auto"`` values the Trainer fills replaced by its own values
    (:data:`HF_ARGS`: betas ``[0.9, 0.999]``, lr ``5e-5``, ...); a non-dict on a fill path is left as is."""
    cfg = clone_json(config)
    with contextlib.suppress(AttributeError):
        _hf_fill(cfg, HF_ARGS, hidden_size)
    return cfg


def _hf_fill(cfg: dict[str, Any], args: SimpleNamespace, hidden_size: int) -> None:
    # transformers integrations/deepspeed.py:136-192 trainer_config_process (at TrainingArguments creation)
    micro = args.per_device_train_batch_size
    _fill(cfg, "train_micro_batch_size_per_gpu", micro)
    _fill(cfg, "gradient_accumulation_steps", args.gradient_accumulation_steps)
    _fill(cfg, "train_batch_size", args.world_size * micro * args.gradient_accumulation_steps)
    _fill(cfg, "gradient_clipping", args.max_grad_norm)
    _fill(cfg, "optimizer.params.lr", args.learning_rate)
    _fill(cfg, "optimizer.params.betas", [args.adam_beta1, args.adam_beta2])
    _fill(cfg, "optimizer.params.eps", args.adam_epsilon)
    _fill(cfg, "optimizer.params.weight_decay", args.weight_decay)
    _fill(cfg, "scheduler.params.warmup_min_lr", 0)
    _fill(cfg, "scheduler.params.warmup_max_lr", args.learning_rate)
    _fill(cfg, "fp16.enabled", _is_true(cfg, "fp16.enabled"))
    _fill(cfg, "bf16.enabled", _is_true(cfg, "bf16.enabled"))
    # :194-260 trainer_config_finalize (deepspeed_init): hidden-size keys, then the scheduler steps.
    _fill(cfg, "zero_optimization.reduce_bucket_size", hidden_size * hidden_size)
    zero = cfg.get("zero_optimization")
    if isinstance(zero, dict) and zero.get("stage") == 3:  # :237 is_zero3()
        _fill(cfg, "zero_optimization.stage3_prefetch_bucket_size", int(0.9 * hidden_size * hidden_size))
        _fill(cfg, "zero_optimization.stage3_param_persistence_threshold", 10 * hidden_size)
    _fill(cfg, "scheduler.params.total_num_steps", NUM_TRAINING_STEPS)
    _fill(cfg, "scheduler.params.warmup_num_steps", max(1, args.warmup_steps))  # :252-256


def _process(cfg: dict[str, Any], kwargs: dict[str, Any], prefix: str = "") -> str | None:
    """accelerate utils/dataclasses.py:1392 ``deepspeed_config_process``: fill every leaf "auto" from kwargs.

    Returns the first "auto" leaf with no value (there accelerate raises ValueError).
    """
    for key, value in list(cfg.items()):
        if isinstance(value, dict):
            missing = _process(value, kwargs, f"{prefix}{key}.")
            if missing:
                return missing
        elif value == "auto":
            if f"{prefix}{key}" not in kwargs:
                return f"{prefix}{key}"
            cfg[key] = kwargs[f"{prefix}{key}"]
    return None
