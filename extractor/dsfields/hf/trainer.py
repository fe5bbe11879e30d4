"""The HF Trainer / accelerate calling style, in pure Python: what they hand ``deepspeed.initialize``.

transformers' Trainer and accelerate rewrite a ds_config before DeepSpeed sees it: they fill the
``"auto"`` values, add sections, refuse some configs themselves (no ``zero_optimization``, an
``"auto"`` nobody fills, ``"zero_optimization": true``) and choose the optimizer (their own AdamW
when the config has none, swapped for DeepSpeedCPUAdam under ZeRO-Offload). :func:`hf_plan` is that, with
the user's arguments assumed to match the config: the chosen pair's programs (``generated/hf/``, default
:data:`WITNESS_PAIR`) evaluated by :func:`trainer_run`, the same code ``check/resolve --trainer-args`` run;
:func:`plain_plan` is plain code calling ``deepspeed.initialize`` itself.

:func:`trainer_run` is the same mirror with the user's own Trainer arguments
(:class:`dsfields.hf.arguments.TrainerArgs`, ``--trainer-args``): their values, not assumed ones, so it also
predicts the mismatch errors transformers raises, the precision that runs and the classes built. Where the
arguments carry a pair's rules (``args.rules``, :class:`dsfields.hf.pair_rules.HfRules`, read from that
transformers' and accelerate's source into ``generated/hf/``), the rules that change between releases are taken
from there: the Trainer's fills (their own expressions, must-match tests and guards), its mismatch line and
error, ``get_warmup_steps``, the hidden-size keys; accelerate's plugin mapping and defaults, the settings it
refuses beside a config file, ``set_mixed_precision``'s sections and clash. A rule that cannot be evaluated is
noted in ``run.notes`` and the 5.24.0 / 1.15.0 rule spelt out here is used.

Both the launch (:mod:`dsfields.launch.launcher`, which then runs DeepSpeed on the plan) and
``dsfields check`` (:mod:`dsfields.check.launch_rules`, which judges the plan against the launch
rules, and ``check --runtime``'s HF fills) use this one copy.

What is still written by hand here, and why (everything else is the pair's programs):

* the arguments the launch plans assume (:data:`HF_ARGS`, :data:`NUM_TRAINING_STEPS`, :data:`HIDDEN_SIZE`,
  :data:`WITNESS_PAIR`): the witness's own inputs, not rules;
* the order of the steps in :func:`_trainer_run` and where the optimizer and scheduler come from
  (``deepspeed_optim_sched``'s choice, the same in all 49 snapshotted releases: ``tests/test_hf_rules_data.py``);
  accelerate's three refusal texts raised there (no ``zero_optimization``, an unfilled "auto", ``prepare`` without
  a dataloader) and torch's device-mesh refusal;
* the 5.24.0 / 1.15.0 rules spelt out (``_mirror_process``, ``_mirror_finalize``, ``_mirror_mixed``, the spelt
  mapping in ``_plugin_fills``, the spelt ``config_kwargs`` of ``prepare``, ``_swaps``' test, the fp16/bf16 check
  of ``_training_arguments_checks``, :data:`MISMATCH_HEAD`/:data:`MISMATCH_TAIL`, :data:`HIDDEN_KEYS`,
  :data:`TRAINER_OPTIMIZERS`, :data:`CPU_SWAP`, :data:`TRAINER_SCHEDULERS`, and
  ``dsfields.hf.arguments.IGNORED_WITH_FILE``): used only where ``args.rules`` is None (the API without an HF
  snapshot) or a release's program cannot be evaluated here, which is said in ``run.notes`` (``check``: an info
  finding); over the corpus with every snapshotted pair no run takes them (``tests/test_hf_rules_data.py``);
* the choice among several classes DeepSpeed builds for one optimizer ``type`` (:func:`_spelt_optimizer_choice`,
  0.19.8's, said as not verified for other releases).

Imports: stdlib only (bottom layer); no dataclasses (``check``'s start-up).
"""

from __future__ import annotations

from types import SimpleNamespace

from dsfields.model import batch
from dsfields.model.jsontypes import clone_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from typing import Any, Literal

    from dsfields.model.records import HfTrainer

    OptimizerSource = Literal["config", "code", "ds_cpu_adam"]

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
    """Keep the batch triple consistent at world size 1 (the config may be right for N ranks); a triple that fits
    no world size is left for DeepSpeed to reject (:func:`dsfields.model.batch.at_one_rank`)."""
    return batch.at_one_rank(config, only_a_multiple=True)


def plain_plan(config: dict[str, Any], optimizer_from_code: bool = False, fill_auto: bool = False,
               pair: tuple[str, str] | None = None, world_size: int = 1) -> Plan:
    """Plain code: the config as written (batch made consistent at one rank), optimizer from config or code.

    ``fill_auto``: first replace the ``"auto"`` values the HF Trainer fills, with the same values as
    :func:`hf_plan` (an HF-style config launched from plain code; the Trainer's fills of ``pair``, by default
    :data:`WITNESS_PAIR`); every other "auto" stays for DeepSpeed to judge. ``world_size`` above 1: the launch plays
    a rank of that world (:mod:`dsfields.launch.world`), so the batch is left as written for DeepSpeed.
    """
    cfg = clone_json(config)
    if fill_auto:
        try:
            cfg = _trainer_fills(cfg, HIDDEN_SIZE, pair)
        except AttributeError:  # a non-dict on a fill path: DeepSpeed will judge it
            pass
    return Plan(at_one_rank(cfg) if world_size == 1 else cfg, "code" if optimizer_from_code else "config",
                "config" if "scheduler" in cfg else "none", style="plain")


# TrainingArguments values assumed for the launch plans (the arguments "match the config"): learning_rate
# 5e-5, adam_beta1 0.9, adam_beta2 0.999, adam_epsilon 1e-8, weight_decay 0.0, max_grad_norm 1.0, warmup 0
# steps; per_device_train_batch_size 1 (the default is 8; 1 keeps the batch arithmetic trivial at one rank,
# like check.hf_substitute), world size 1, gradient_accumulation_steps 1. fp16/bf16 follow the config: a
# literal ``enabled: true`` is taken as the user passing --fp16/--bf16 (else the Trainer's fill_match reports
# a mismatch), "auto" as not passing it. Every other argument keeps the release's own default (its snapshot).
HF_ARGS = SimpleNamespace(learning_rate=5e-5, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, weight_decay=0.0,
                          max_grad_norm=1.0, per_device_train_batch_size=1, gradient_accumulation_steps=1,
                          world_size=1, warmup_steps=0)
NUM_TRAINING_STEPS = 100
WITNESS_PAIR = ("5.24.0", "1.15.0")
"""The transformers / accelerate releases whose snapshots (``generated/hf/``) the committed launch records are
made with (``launch.json``'s ``environment.hf_layers``), and :func:`hf_plan`'s default."""


FILL_RECORD = ("function", "line", "must_match")
"""What :func:`fill_list` keeps of each fill: where transformers' source fills the key and whether the value given
must match the Trainer's argument (the rest of the HF snapshot's fill record, its expression, is the programs')."""

FILL_ARGUMENTS: dict[str, str] = {
    "train_micro_batch_size_per_gpu": "per_device_train_batch_size",
    "gradient_accumulation_steps": "gradient_accumulation_steps",
    "train_batch_size": "world_size × per_device_train_batch_size × gradient_accumulation_steps",
    "gradient_clipping": "max_grad_norm",
    "optimizer.params.lr": "learning_rate",
    "optimizer.params.betas": "[adam_beta1, adam_beta2]",
    "optimizer.params.eps": "adam_epsilon",
    "optimizer.params.weight_decay": "weight_decay",
    "scheduler.params.warmup_min_lr": "0 (not a TrainingArguments field)",
    "scheduler.params.warmup_max_lr": "learning_rate",
    "scheduler.params.warmup_num_steps": "max(1, get_warmup_steps(num_training_steps))",
    "scheduler.params.total_num_steps": "num_training_steps (computed by the Trainer)",
    "fp16.enabled": "fp16 or fp16_full_eval",
    "bf16.enabled": "bf16 or bf16_full_eval",
    "zero_optimization.reduce_bucket_size": "hidden_size × hidden_size (the model's config)",
    "zero_optimization.stage3_prefetch_bucket_size": "0.9 × hidden_size × hidden_size (ZeRO-3)",
    "zero_optimization.stage3_param_persistence_threshold": "10 × hidden_size (ZeRO-3)",
}
"""JSON path → what the HF Trainer puts there for ``"auto"``, worded for people (``resolve`` prints it): the
TrainingArguments field(s) of ``HfTrainerDeepSpeedConfig.trainer_config_process`` / ``trainer_config_finalize``.
Which keys are filled is :func:`fill_list`'s (a test keeps the two equal); the wording is ours."""

_FILL_LISTS: dict[str, Any] = {}


def fill_list(generated: str | None = None) -> HfTrainer | None:
    """The keys whose ``"auto"`` the HF Trainer fills (path → :data:`FILL_RECORD`), of transformers
    ``WITNESS_PAIR[0]``: ``fills.paths`` of its HF snapshot (``generated/hf/transformers-<T>.json``), the one list
    ``check``, ``resolve``, ``schema``, ``explain`` and the site judge ``"auto"`` by (it depends on transformers, not
    on DeepSpeed). Read once per ``generated`` folder; None when that HF snapshot is absent or has no fill list."""
    from dsfields.model.generated import generated_root

    root = str(generated) if generated is not None else generated_root()
    if root not in _FILL_LISTS:
        from dsfields.hf.arguments import load_hf_snapshot
        from dsfields.model.errors import UsageError
        from dsfields.model.records import HfTrainer

        try:
            snapshot = load_hf_snapshot(WITNESS_PAIR[0], root)
        except (UsageError, OSError, ValueError):
            snapshot = None
        fills = snapshot.get("fills") if isinstance(snapshot, dict) else None
        paths = fills.get("paths") if isinstance(fills, dict) else None
        _FILL_LISTS[root] = None if not isinstance(paths, dict) or not paths else HfTrainer({
            "transformers_version": snapshot.get("transformers_version"),  # type: ignore[union-attr]
            "source": fills.get("source"),  # type: ignore[union-attr]
            "paths": {path: {key: fill[key] for key in FILL_RECORD if key in fill}
                      for path, fill in paths.items() if isinstance(fill, dict)},
        })
    return _FILL_LISTS[root]


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


def _is_true(config: dict[str, Any], path: str) -> bool:
    # accelerate/utils/deepspeed.py HfDeepSpeedConfig.is_true: bool(value) of a non-None value.
    node, key = _node(config, path)
    value = node.get(key) if node is not None else None
    return value is not None and bool(value) and value != "auto"


def hf_plan(config: dict[str, Any], hidden_size: int = HIDDEN_SIZE, pair: tuple[str, str] | None = None,
            world_size: int = 1) -> Plan:
    """The config and optimizer the HF Trainer with accelerate hand to DeepSpeed, the user's arguments assumed to
    match the config (:data:`HF_ARGS`; a literal ``enabled: true`` taken as ``--fp16``/``--bf16``).

    The Trainer's fills, accelerate's plugin settings, precision sections, prepare fills and optimizer swap are
    those of ``pair``'s HF snapshots (``generated/hf/``; default :data:`WITNESS_PAIR`, the launch records'),
    evaluated by :func:`trainer_run`: the same programs ``check --trainer-args`` and ``resolve --hf`` run, so
    there is one source of truth. A pair with no snapshot here is said in ``notes`` and the witness pair's
    rules are used. Raises :class:`PlanError` where those layers refuse the config.

    ``world_size`` above 1: the Trainer runs on that many ranks (its ``args.world_size``), the launch plays one of
    them (:mod:`dsfields.launch.world`), and the batch is handed on as the Trainer and accelerate make it,
    not made consistent at one rank.
    """
    args = _matched_args(config, hidden_size, pair, world_size)
    # the launch witness judges DeepSpeed at one rank: a tensor-parallel size above it is the world size's
    # refusal, not the config's (``check --trainer-args --world-size`` says it); at N ranks, torch's mesh says it
    run = trainer_run(config, args, mesh_check=False)
    if run.error is not None:
        raise run.error
    assert run.config is not None
    notes = [f"accelerate added {d}.enabled=false" for d in ("fp16", "bf16")
             if run.origins.get(f"{d}.enabled") == "added by accelerate (false)"]
    notes += [n for n in run.notes if n.startswith("accelerate swapped in") or "could not" in n
              or "has no HF snapshot" in n]
    handed = at_one_rank(run.config) if world_size == 1 else run.config
    return Plan(handed, run.optimizer, run.scheduler, notes, style="hf")  # type: ignore[arg-type]


def hf_insertions(config: dict[str, Any], pair: tuple[str, str] | None = None,
                  world_size: int = 1) -> dict[str, tuple[Any, str]]:
    """Top-level keys the HF layers add to ``config`` when the file does not give them (accelerate's
    ``gradient_accumulation_steps: 1``), with where they come from: the same run as :func:`hf_plan`. Empty when
    the Trainer refuses the config first (that refusal is reported elsewhere)."""
    try:
        args = _matched_args(config, HIDDEN_SIZE, pair, world_size)
        run = trainer_run(config, args, mesh_check=False)
    except (PlanError, ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):
        return {}
    if run.error is not None or run.config is None:
        return {}
    return {key: (value, run.origins.get(key, "added by the HF layers")) for key, value in run.config.items()
            if key not in config and str(run.origins.get(key, "")).startswith("added by accelerate (DeepSpeedPlugin")}


_PAIR_RULES: dict[tuple[str, str], Any] = {}


def _pair_rules(pair: tuple[str, str]) -> Any:
    """``(snapshot, rules)`` of a pair (cached), rules whose Trainer fills never mismatch-check; None when the pair
    has no HF snapshot here."""
    if pair not in _PAIR_RULES:
        from dsfields.hf.arguments import load_hf_snapshot
        from dsfields.hf.pair_rules import HfRules, load_accelerate_snapshot
        from dsfields.model.errors import UsageError

        found = None
        try:
            snapshot = load_hf_snapshot(pair[0])
        except (UsageError, OSError, ValueError):
            snapshot = None
        if snapshot is not None and snapshot.get("transformers_version") == pair[0]:
            rules = HfRules(snapshot, load_accelerate_snapshot(pair[1]), pair[1])
            if rules.trainer and rules.accelerate:
                found = (snapshot, _Matching(rules))
        _PAIR_RULES[pair] = found
    return _PAIR_RULES[pair]


def _matched_args(config: dict[str, Any], hidden_size: int, pair: tuple[str, str] | None = None,
                  world_size: int = 1) -> Any:
    """TrainerArgs for :func:`hf_plan`: :data:`HF_ARGS`, ``--max_steps`` :data:`NUM_TRAINING_STEPS`, the precision
    the config enables literally, and the pair's rules with every fill's mismatch check off (the arguments match).
    A pair with no HF snapshot here: the witness pair's, said in the rules' notes."""
    from dsfields.hf.arguments import parse_trainer_args

    chosen = tuple(pair) if pair is not None else WITNESS_PAIR
    found = _pair_rules(chosen)  # type: ignore[arg-type]
    missing = None
    if found is None and chosen != WITNESS_PAIR:
        missing = f"transformers {chosen[0]} / accelerate {chosen[1]} has no HF snapshot here: the rules of " \
                  f"transformers {WITNESS_PAIR[0]} / accelerate {WITNESS_PAIR[1]} are used"
        found = _pair_rules(WITNESS_PAIR)
    if found is None:  # one line and exit 2 (dsfields.cli), never a traceback
        from dsfields.model.errors import UsageError

        raise UsageError(f"no HF snapshot of transformers {WITNESS_PAIR[0]} / accelerate {WITNESS_PAIR[1]} "
                         "(generated/hf/) to plan the HF Trainer's launch: the installation is incomplete")
    snapshot, rules = found
    args = parse_trainer_args("", snapshot, world_size=world_size, hidden_size=hidden_size,
                              hidden_size_from="the model")
    try:
        fp16 = _is_true(config, "fp16.enabled")
        bf16 = not fp16 and (_is_true(config, "bf16.enabled") or _is_true(config, "bfloat16.enabled"))
    except AttributeError:  # a non-dict section: the Trainer's own fill raises on it (trainer_run says so)
        fp16 = bf16 = False
    args.values.update({name: getattr(HF_ARGS, name) for name in vars(HF_ARGS) if name in args.values})
    args.values.update({"fp16": fp16, "bf16": bf16, "max_steps": NUM_TRAINING_STEPS})
    # The arguments match the config: a batch key the file fixes is the Trainer flag it must equal (the Trainer
    # refuses a mismatch), so "auto" beside it is filled from the same number (issue 42: gradient_accumulation_steps
    # 8 beside train_batch_size "auto" no longer planned with the default --gradient_accumulation_steps 1).
    for key, flag in (("gradient_accumulation_steps", "gradient_accumulation_steps"),
                      ("train_micro_batch_size_per_gpu", "per_device_train_batch_size")):
        value = config.get(key) if isinstance(config, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1 and flag in args.values:
            args.values[flag] = value
    args.rules = _Noted(rules, missing) if missing else rules
    return args


class _Matching:
    """A pair's :class:`dsfields.hf.pair_rules.HfRules` whose Trainer fills never mismatch-check (``hf_plan``'s
    arguments are taken to equal the config's literals)."""

    def __init__(self, rules: Any) -> None:
        self._rules = rules

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)

    def fills(self, function: str) -> list[dict[str, Any]] | None:
        found = self._rules.fills(function)
        return None if found is None else [dict(f, must_match=False) for f in found]


class _Noted(_Matching):
    """The witness pair's rules standing in for a pair with no snapshot: the notes say so."""

    def __init__(self, rules: Any, note: str) -> None:
        super().__init__(rules)
        self.notes = [*rules.notes, note]


def _trainer_fills(cfg: dict[str, Any], hidden_size: int = HIDDEN_SIZE,
                   pair: tuple[str, str] | None = None) -> dict[str, Any]:
    """``cfg`` with the Trainer's own fills only (``trainer_config_process`` and ``trainer_config_finalize`` of the
    pair's snapshot, on :func:`_matched_args`): no accelerate step. A non-dict on a fill path raises
    AttributeError (``find_config_node``'s ``.get``)."""
    args = _matched_args(cfg, hidden_size, pair)
    run = TrainerRun()
    out = clone_json(cfg)
    if not _snapshot_fills(run, out, args, args.rules, "trainer_config_process"):
        _mirror_process(run, out, args)
    if not _snapshot_finalize(run, out, args, args.rules):
        _mirror_finalize(run, out, args)
    return out


def fill_trainer_auto(config: dict[str, Any], hidden_size: int = HIDDEN_SIZE,
                      pair: tuple[str, str] | None = None) -> dict[str, Any]:
    """A copy of ``config`` with the ``"auto"`` values the Trainer fills replaced by its own values
    (:data:`HF_ARGS`: betas ``[0.9, 0.999]``, lr ``5e-5``, ...; the pair's programs, default
    :data:`WITNESS_PAIR`); a non-dict on a fill path is left as is."""
    try:
        return _trainer_fills(config, hidden_size, pair)
    except AttributeError:
        return clone_json(config)


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


# ---------------------------------------------------------------- the Trainer with the user's own arguments

MISMATCH_HEAD = "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:"
MISMATCH_TAIL = "The easiest method is to set these DeepSpeed config values to 'auto'."
HIDDEN_KEYS = ("zero_optimization.reduce_bucket_size", "zero_optimization.stage3_prefetch_bucket_size",
               "zero_optimization.stage3_param_persistence_threshold")
UNKNOWN = object()
"""A value the Trainer computes from what the user did not say (the dataset size, the model's hidden size)."""

# Trainer.get_optimizer_cls_and_kwargs (transformers 5.24.0 trainer.py): --optim → the class it builds.
TRAINER_OPTIMIZERS = {"adamw_torch": "torch.optim.AdamW", "adamw_torch_fused": "torch.optim.AdamW",
                      "adafactor": "transformers.optimization.Adafactor", "sgd": "torch.optim.SGD",
                      "adagrad": "torch.optim.Adagrad", "rmsprop": "torch.optim.RMSprop"}
# accelerate utils/deepspeed.py:29 map_pytorch_optim_to_deepspeed: Adagrad → DeepSpeedCPUAdagrad, else CPUAdam.
CPU_SWAP = {"torch.optim.Adagrad": "deepspeed.ops.adagrad.DeepSpeedCPUAdagrad"}
# transformers optimization.py get_scheduler: every --lr_scheduler_type is a LambdaLR but these two.
TRAINER_SCHEDULERS = {"reduce_lr_on_plateau": "torch.optim.lr_scheduler.ReduceLROnPlateau"}


class TrainerRun:
    """What the HF Trainer with the user's arguments does to a config, predicted.

    ``config``: what DeepSpeed receives (None when refused); ``origins``: JSON path → who set the value
    there and from what; ``mismatches``: transformers' lines (``- ds KEY=VAL vs hf ARG=VAL``); ``error``:
    the first refusal, as raised; ``optimizer_class`` / ``scheduler_class``: the classes really built;
    ``precision``: ``bf16``, ``fp16`` or ``fp32``; ``unknown``: paths whose value needs what was not given.
    """

    def __init__(self) -> None:
        self.config: dict[str, Any] | None = None
        self.origins: dict[str, str] = {}
        self.mismatches: list[str] = []
        self.error: PlanError | None = None
        self.optimizer: OptimizerSource = "config"
        self.scheduler = "config"
        self.optimizer_class: str | None = None
        self.scheduler_class: str | None = None
        self.precision = "fp32"
        self.unknown: dict[str, str] = {}
        self.notes: list[str] = []
        self.mismatch_keys: list[str] = []
        self.swap_kwargs: dict[str, Any] = {}
        """The keywords accelerate's ZeRO-Offload swap passes the DeepSpeed CPU optimizer beyond lr / weight_decay
        (DeepSpeed's own signature judges them: ``check``)."""
        self.built_from: dict[str, str] = {}
        """``optimizer`` / ``scheduler`` / ``swap`` → the release's source that decided the class built."""
        self.line_template: str | None = None
        """``fill_match``'s mismatch line as the release writes it (its f-string, from the snapshot)."""

    def as_dict(self) -> dict[str, Any]:
        error = self.error
        return {"error": None if error is None else {"raised_by": error.raised_by, "type": error.exc_type,
                                                      "message": str(error), "key": error.key},
                "mismatches": self.mismatches, "optimizer.class": self.optimizer_class,
                "scheduler.class": self.scheduler_class, "precision": self.precision}


def _py(value: Any) -> str:
    """``str()`` of the value as transformers formats it (the config is Python objects from json.load)."""
    return str(value)


def _must_match(fill: dict[str, Any], names: dict[str, Any]) -> bool:
    """Whether the Trainer mismatch-checks this fill: its extracted ``must_match`` (a constant or an expression)."""
    if isinstance(fill["must_match"], bool):
        return fill["must_match"]
    from dsfields.hf.pair_rules import evaluate

    return bool(evaluate(fill["must_match"], names))


def _not_evaluated(run: TrainerRun, rules: Any, function: str, fill: dict[str, Any], exc: Exception) -> None:
    """Said, never dropped: a pair's rule this mirror cannot evaluate falls back to 5.24.0's."""
    run.notes.append(f"transformers {rules.transformers_version} {function}:{fill['line']} "
                     f"{fill['path']}: {exc} could not be evaluated here; transformers 5.24.0's rule is used")


def _match(run: TrainerRun, cfg: dict[str, Any], path: str, value: Any, hf_key: str | None, origin: str,
           must_match: bool = True) -> None:
    """transformers integrations/deepspeed.py:108 ``fill_match`` with the user's value, mismatches collected."""
    node, key = _node(cfg, path)
    if node is None:
        return
    if node.get(key) == "auto":
        if value is UNKNOWN:
            run.unknown[path] = origin
            node[key] = None
        else:
            node[key] = value
        run.origins[path] = f"filled by the Trainer from {origin}"
        return
    if not must_match or value is UNKNOWN:
        if value is UNKNOWN and must_match and node.get(key) is not None:
            run.unknown[path] = f"compared with {origin}, which needs what was not given"
        return
    ds_val = node.get(key)
    if ds_val is not None and ds_val != value:
        line = f"- ds {path}={_py(ds_val)} vs hf {hf_key}={_py(value)}"
        if run.line_template is not None:
            try:
                line = run.line_template.format(ds_key_long=path, ds_val=_py(ds_val), hf_key=hf_key, hf_val=_py(value))
            except (KeyError, IndexError, ValueError):
                pass
        run.mismatches.append(line)
        run.mismatch_keys.append(path)


def _zero_stage3(cfg: dict[str, Any]) -> bool:
    zero = cfg.get("zero_optimization")
    return isinstance(zero, dict) and zero.get("stage") == 3


def trainer_run(config: dict[str, Any], args: Any, accelerate: dict[str, Any] | None = None,
                mesh_check: bool = True, deepspeed: str | None = None) -> TrainerRun:
    """The Trainer (transformers 5.24.0) and accelerate 1.15.0 on ``config`` with ``args``
    (:class:`dsfields.hf.arguments.TrainerArgs`) and accelerate's launch settings (``accelerate``:
    ``mixed_precision``, ``gradient_accumulation_steps``, ``gradient_clipping``, ``zero_stage``,
    ``offload_optimizer_device``, ``offload_param_device``, ``zero3_save_16bit_model``, ``zero3_init_flag``).

    Follows the order the real run takes, so the first refusal is the one the user sees: TrainingArguments
    (its checks, then ``trainer_config_process`` collecting mismatches, then ``DeepSpeedPlugin``), the
    Accelerator's mixed precision (its clash hides the mismatch list), ``trainer_config_finalize`` (raises
    the mismatches), the optimizer/scheduler choice, ``Accelerator._prepare_deepspeed``.

    ``deepspeed``: the DeepSpeed release the config is for; the class it builds for the config's optimizer is read
    from its snapshot (:func:`deepspeed_optimizer_class`), the unverified part said in ``notes``.
    """
    run = TrainerRun()
    acc = accelerate or {}
    cfg = clone_json(config)
    try:
        _trainer_run(run, cfg, args, acc, mesh_check, deepspeed)
    except PlanError as exc:
        run.error = exc
        return run
    except AttributeError as exc:  # find_config_node's .get on a non-dict (``"zero_optimization": true``)
        run.error = PlanError("transformers", "AttributeError", str(exc))
        return run
    run.config = cfg  # the values at the user's world size: DeepSpeed's batch assertion judges them as they are
    return run


def _trainer_run(run: TrainerRun, cfg: dict[str, Any], args: Any, acc: dict[str, Any], mesh_check: bool = True,
                 deepspeed: str | None = None) -> None:
    v = args.values
    rules = getattr(args, "rules", None)
    if rules is not None:
        run.notes.extend(rules.notes)
        run.line_template = rules.mismatch_line()
    # -- TrainingArguments.__post_init__ / _validate_args: the release's own checks on these arguments
    _training_arguments_checks(run, args, rules)
    mixed = str(acc.get("mixed_precision") or "no").lower()  # ACCELERATE_MIXED_PRECISION (accelerate launch)
    mixed = "fp16" if v["fp16"] else "bf16" if v["bf16"] else mixed
    # -- trainer_config_process (integrations/deepspeed.py:136-192): fills and mismatches, raised later.
    if rules is None or not _snapshot_fills(run, cfg, args, rules, "trainer_config_process"):
        _mirror_process(run, cfg, args)
    # -- DeepSpeedPlugin.__post_init__ (accelerate utils/dataclasses.py:1226-1336)
    # accelerate writes gradient_accumulation_steps: 1 into a given config that lacks it; its line and value are
    # read from the pair's accelerate source (post_init_writes) where recorded
    written = [(value, line) for path, value, line in (rules.post_init_writes() if rules is not None else None) or []
               if path == "gradient_accumulation_steps" and isinstance(value, int)]
    value, line = written[0] if written else (1, None)
    if "gradient_accumulation_steps" not in cfg:
        cfg["gradient_accumulation_steps"] = value
        at = f", accelerate {getattr(rules, 'accelerate_version', None)} utils/dataclasses.py:{line}" if line else ""
        run.origins["gradient_accumulation_steps"] = f"added by accelerate (DeepSpeedPlugin: {value} when absent{at})"
    if "zero_optimization" not in cfg:
        raise PlanError("accelerate", "ValueError", "Please specify the ZeRO optimization config in the DeepSpeed "
                        "config.", "zero_optimization")
    # _deepspeed_config_checks (dataclasses.py:1507): accelerate launch exports the YAML's deepspeed_config keys
    # (and mixed_precision when it came from the YAML) as ACCELERATE_CONFIG_DS_FIELDS; the Trainer always hands
    # a DeepSpeed config, so any of these settings is refused.
    from dsfields.hf.arguments import IGNORED_WITH_FILE

    fields = list(acc.get("ds_fields", [])) + (["mixed_precision"] if "mixed_precision" in acc else [])
    ignored = (rules.ignored_with_file() if rules is not None else None) or list(IGNORED_WITH_FILE)
    if any(name in ignored for name in fields):
        message = "When using `deepspeed_config_file`, the following accelerate config variables will be ignored: " \
                  "{env_variable_names_to_ignore}.\nPlease specify them appropriately in the DeepSpeed config " \
                  "file.\nIf you are using an accelerate config file, remove others config variables mentioned in " \
                  "the above specified list.\nThe easiest method is to create a new config following the " \
                  "questionnaire via `accelerate config`.\nIt will only ask for the necessary config variables " \
                  "when using `deepspeed_config_file`."
        error = ((rules.accelerate or {}).get("ignored_with_config_file", {}).get("error") if rules else None)
        if error:
            message = error["message"]
        raise PlanError("accelerate", "ValueError", message.replace("{env_variable_names_to_ignore}", str(ignored)),
                        next(name for name in fields if name in ignored))
    plugin = _plugin_fills(acc, rules)
    for path, value in plugin.items():
        node, key = _node(cfg, path)
        if node is not None and node.get(key) == "auto" and value != "auto":
            node[key] = value
            run.origins[path] = "filled by accelerate's DeepSpeedPlugin" + (
                " from --accelerate-config" if path.rpartition(".")[2] in acc or path in acc else " (its default)")
    cfg["steps_per_print"] = float("inf")
    run.origins["steps_per_print"] = "set by accelerate (inf: DeepSpeed never logs)"
    # -- AcceleratorState → DeepSpeedPlugin.set_mixed_precision (dataclasses.py:1415-1446)
    if rules is None or not _snapshot_mixed(run, cfg, args, mixed, rules):
        _mirror_mixed(run, cfg, args, mixed)
    # -- trainer_config_finalize (integrations/deepspeed.py:194-260), from deepspeed_init at train()
    hidden = args.hidden_size
    if rules is None or not _snapshot_finalize(run, cfg, args, rules):
        _mirror_finalize(run, cfg, args)
    if run.mismatches:
        head, tail = (rules.mismatch_head_tail() if rules is not None else None) or (MISMATCH_HEAD, MISMATCH_TAIL)
        raise PlanError("transformers", "ValueError", head + "\n" + "\n".join(run.mismatches) + "\n" + tail,
                        run.mismatch_keys[0])
    # -- deepspeed_optim_sched (integrations/deepspeed.py:559-610): its refusals are the release's
    offload = _offload_device(cfg)
    if rules is not None:
        refused = rules.optim_sched_error({**_arg_names(args), "config": cfg})
        if refused is not None:
            raise PlanError("transformers", refused.step["type"], refused.message)  # type: ignore[index]
    if "optimizer" in cfg:
        run.optimizer = "config"
    else:
        run.optimizer = "code"
        cfg["zero_allow_untested_optimizer"] = True
        run.origins["zero_allow_untested_optimizer"] = "set by the Trainer (its own optimizer)"
    if "scheduler" in cfg:
        run.scheduler = "config"
    elif run.optimizer == "config":
        run.scheduler = "callable"
    else:
        run.scheduler = "none"
    # -- Accelerator._prepare_deepspeed (accelerator.py:2141-2400)
    tensor = cfg.get("tensor_parallel", {})
    tp_size = tensor.get("autotp_size", 0) if isinstance(tensor, dict) else 0
    # :2154-2171 init_device_mesh(device, (tp_size,))
    if mesh_check and isinstance(tp_size, int) and tp_size > args.world_size:
        raise PlanError("torch", "RuntimeError", f"Mesh should not be bigger than default world size "
                        f"{args.world_size}, but found {tp_size} ranks!", "tensor_parallel.autotp_size")
    micro_now = cfg.get("train_micro_batch_size_per_gpu")
    kwargs: dict[str, Any] = {"gradient_clipping": 1.0,
                              "zero_optimization.stage3_gather_16bit_weights_on_model_save": False}
    if micro_now == "auto":
        raise PlanError("accelerate", "ValueError", "When using DeepSpeed, `accelerate.prepare()` requires you to "
                        "pass at least one of training or evaluation dataloaders with `batch_size` attribute "
                        "returning an integer value or alternatively set an integer value in "
                        "`train_micro_batch_size_per_gpu` in the deepspeed config file or assign integer value to "
                        "`AcceleratorState().deepspeed_plugin.deepspeed_config['train_micro_batch_size_per_gpu']`.",
                        "train_micro_batch_size_per_gpu")
    from_rules = _snapshot_prepare(run, cfg, args, rules, micro_now)
    if from_rules is not None:
        kwargs = from_rules
    else:  # accelerate 1.15.0's config_kwargs, spelt out
        if micro_now is not None:
            kwargs["train_micro_batch_size_per_gpu"] = micro_now
            try:
                kwargs["train_batch_size"] = micro_now * cfg.get("gradient_accumulation_steps") * args.world_size
            except TypeError:
                pass
        if hidden is not None:
            kwargs.update({HIDDEN_KEYS[0]: hidden * hidden, HIDDEN_KEYS[1]: int(0.9 * hidden * hidden),
                           HIDDEN_KEYS[2]: 10 * hidden})
        if run.optimizer == "config":  # DummyOptim's lr / weight_decay (its defaults 0.001, 0)
            kwargs.update({"optimizer.params.lr": 0.001, "optimizer.params.weight_decay": 0})
    before = _leaves(cfg)
    leftover = _process(cfg, kwargs)
    for path, value in _leaves(cfg).items():
        if before.get(path) == "auto" and value != "auto":
            run.origins[path] = "filled by accelerate (prepare)"
            if value is UNKNOWN:
                node, key = _node(cfg, path)
                node[key] = None
                run.unknown[path] = "accelerate's prepare fills it with what is not known here"
    if leftover:
        raise PlanError("accelerate", "ValueError", f"`{leftover}` not found in kwargs. Please specify "
                        f"`{leftover}` without `auto` (set to correct value) in the DeepSpeed config file or pass "
                        "it in kwargs.", leftover)
    if run.optimizer == "code":
        zero = cfg["zero_optimization"]
        if not isinstance(zero, dict):
            raise PlanError("accelerate", "AttributeError", f"'{type(zero).__name__}' object has no attribute 'get'",
                            "zero_optimization")
        built = _trainer_optimizer(run, args, rules)
        if _swaps(run, cfg, built, rules):
            run.optimizer = "ds_cpu_adam"
            built = _cpu_optimizer(run, built, rules)
            run.notes.append("accelerate swapped in " + built.rpartition(".")[2])
        run.optimizer_class = built
    else:
        catalog, version = _deepspeed_catalog(deepspeed)
        run.optimizer_class, unverified = deepspeed_optimizer_class(cfg, offload, catalog, version)
        if unverified:
            run.notes.append(unverified)
    if run.scheduler == "config":
        sched = cfg.get("scheduler")
        kind = sched.get("type") if isinstance(sched, dict) else None
        run.scheduler_class = f"deepspeed.runtime.lr_schedules.{kind}" if isinstance(kind, str) else None
    else:
        run.scheduler_class = _trainer_scheduler(run, args, rules)
    fp16 = _is_true(cfg, "fp16.enabled")
    run.precision = "fp16" if fp16 else "bf16" if _is_true(cfg, "bf16.enabled") else "fp32"


def _deepspeed_catalog(version: str | None) -> tuple[Any, str | None]:
    """The optimizer catalogue of DeepSpeed ``version``'s snapshot, or None (no version, or no snapshot)."""
    if version is None:
        return None, None
    from dsfields.model.errors import SnapshotError
    from dsfields.model.store import load_indexed

    try:
        return load_indexed(version).optimizers, version
    except (SnapshotError, OSError, ValueError):
        return None, version


def _snapshot_prepare(run: TrainerRun, cfg: dict[str, Any], args: Any, rules: Any,
                      micro: Any) -> dict[str, Any] | None:
    """``Accelerator._prepare_deepspeed``'s ``config_kwargs`` as the pair's accelerate writes them (each key's
    expression under its own tests), evaluated for what the Trainer passes to ``prepare``: the model (with its
    config), its optimizer (``DummyOptim`` when the config has one) and scheduler (``DummyScheduler``, with the
    Trainer's callable when only the optimizer is in the config), no dataloader. A key whose test or value is
    not known here is filled with an unknown value (said), never guessed. None: no rule (1.15.0's is used)."""
    from dsfields.hf.pair_rules import ClassPath, Unreadable, evaluate, isinstance_by_path, truth

    records = rules.prepare_kwargs() if rules is not None else None
    if not records:
        return None
    dummy = rules.dummy_defaults("DummyOptim") or {}
    sched = rules.dummy_defaults("DummyScheduler") or {}
    optimizer = ClassPath("accelerate.utils.DummyOptim") if run.optimizer == "config" else ClassPath(
        "torch.optim.Optimizer")
    names: dict[str, Any] = {
        "batch_size_per_device": micro, "deepspeed_plugin.deepspeed_config": cfg, "self.num_processes":
        args.world_size, "sp_size": 1, "self.split_batches": False, "model": ClassPath("model"),
        "hasattr": lambda obj, name: True, "isinstance": isinstance_by_path, "math.ceil": __import__("math").ceil,
        "deepspeed_plugin.get_value": lambda key, default=None: _node(cfg, key)[0].get(_node(cfg, key)[1], default)
        if _node(cfg, key)[0] is not None else default,
        "DummyOptim": ClassPath("accelerate.utils.DummyOptim"), "DummyScheduler":
        ClassPath("accelerate.utils.DummyScheduler"), "optimizer": optimizer,
        "scheduler": ClassPath("accelerate.utils.DummyScheduler") if run.scheduler != "none" else None,
        "scheduler.lr_scheduler_callable": "the Trainer's" if run.scheduler == "callable" else None,
        "scheduler.warmup_num_steps": sched.get("warmup_num_steps", 0),
        "scheduler.total_num_steps": sched.get("total_num_steps")}
    if run.optimizer == "config":
        names.update({"optimizer.lr": dummy.get("lr"), "optimizer.weight_decay": dummy.get("weight_decay")})
    if args.hidden_size is not None:
        names["hidden_size"] = args.hidden_size
    keys = rules.hidden_size_keys() or list(HIDDEN_KEYS)
    names["hidden_size_auto_keys"] = [k for k in keys if _is_auto(cfg, k)]
    kwargs: dict[str, Any] = {}
    for record in records:
        verdicts = [truth(c, names) for c in record["when"]]
        if False in verdicts:
            continue
        try:
            if None in verdicts:
                raise Unreadable(" and ".join(c for c, v in zip(record["when"], verdicts, strict=True) if v is None))
            kwargs[record["path"]] = evaluate(record["value"], names)
        except (Unreadable, TypeError, KeyError, ValueError, AttributeError):
            kwargs[record["path"]] = UNKNOWN
    return kwargs


def _rule_failed(run: TrainerRun, rules: Any, what: str, exc: Exception, used: str) -> None:
    """Said, never dropped: a release's program this mirror cannot evaluate here; what is used instead."""
    version = f"transformers {rules.transformers_version} / accelerate {rules.accelerate_version}" if rules else \
        "(no HF snapshot)"
    run.notes.append(f"{version}: {what} could not be evaluated here ({exc}); {used}")


def _check_names(args: Any) -> dict[str, Any]:
    """The arguments as TrainingArguments' own checks read them (``self.X``): a field whose default is no literal
    (a factory, an expression) is not known unless the user gave it."""
    names = _arg_names(args)
    for name, record in args.fields.items():
        if name not in args.given and "default" not in record:
            names.pop(f"self.{name}", None)
            names.pop(f"args.{name}", None)
    return names


def _training_arguments_checks(run: TrainerRun, args: Any, rules: Any) -> None:
    """``TrainingArguments.__post_init__`` (and the methods it calls) on the user's arguments: the first of its
    checks that these values decide raises, with the release's message; a check that needs the machine
    (``is_torch_bf16_gpu_available()``) is never taken as raised."""
    from dsfields.hf.pair_rules import Unreadable

    if rules is not None:
        try:
            refused = rules.post_init_error(_check_names(args))
        except Unreadable as exc:
            _rule_failed(run, rules, "TrainingArguments.__post_init__", exc, "only transformers 5.24.0's fp16/bf16 "
                         "check is made")
        else:
            if refused is not None:
                where = f"{rules.program('transformers', 'post_init')['file']}:{refused.step['line']}"  # type: ignore[index]
                raise PlanError(f"transformers {rules.transformers_version} TrainingArguments ({where})",
                                refused.step["type"], refused.message)  # type: ignore[index]
            return
    if args.values["fp16"] and args.values["bf16"]:  # transformers 5.24.0 training_args.py _validate_args
        raise PlanError("transformers", "ValueError", "At most one of fp16 and bf16 can be True, but not both")


def _trainer_optimizer(run: TrainerRun, args: Any, rules: Any) -> str:
    """``Trainer.create_optimizer`` → ``get_optimizer_cls_and_kwargs``: the class ``--optim`` builds, as the
    release's code decides it."""
    from dsfields.hf.pair_rules import Unreadable

    optim = str(args.values["optim"])
    fallback = TRAINER_OPTIMIZERS.get(optim, f"(--optim {optim}: built by the Trainer)")
    if rules is None:
        return fallback
    try:
        built, where = rules.optimizer_class(_arg_names(args))
    except Unreadable as exc:
        _rule_failed(run, rules, f"the optimizer of --optim {optim}", exc, f"{fallback} is said")
        return fallback
    run.built_from["optimizer"] = f"transformers {rules.transformers_version} {where}"
    return str(built)


def _trainer_scheduler(run: TrainerRun, args: Any, rules: Any) -> str:
    """``Trainer.create_scheduler`` → ``get_scheduler``: the class ``--lr_scheduler_type`` builds."""
    from dsfields.hf.pair_rules import Unreadable

    kind = str(args.values["lr_scheduler_type"])
    fallback = TRAINER_SCHEDULERS.get(kind, "torch.optim.lr_scheduler.LambdaLR")
    if rules is None:
        return fallback
    try:
        built, where = rules.scheduler_class(_arg_names(args))
    except Unreadable as exc:
        _rule_failed(run, rules, f"the scheduler of --lr_scheduler_type {kind}", exc, f"{fallback} is said")
        return fallback
    run.built_from["scheduler"] = f"transformers {rules.transformers_version} {where}"
    return str(built)


def _swaps(run: TrainerRun, cfg: dict[str, Any], built: str, rules: Any) -> bool:
    """Whether ``Accelerator._prepare_deepspeed`` swaps the Trainer's optimizer for a DeepSpeed CPU one: the
    release's own tests around ``map_pytorch_optim_to_deepspeed`` (1.x: offload_optimizer.device not "none" and
    ``zero_force_ds_cpu_optimizer`` not false)."""
    from dsfields.hf.pair_rules import ClassPath, Unreadable, isinstance_by_path

    spelt = _offload_device(cfg) != "none" and bool(cfg.get("zero_force_ds_cpu_optimizer", True))
    if rules is None:
        return spelt
    names = {"self.deepspeed_config": cfg, "optimizer": ClassPath(built), "model": ClassPath("model"),
             "scheduler": None, "isinstance": isinstance_by_path,
             "DummyOptim": ClassPath("accelerate.utils.DummyOptim"),
             "DummyScheduler": ClassPath("accelerate.utils.DummyScheduler"), "self.device.type": "cpu"}
    try:
        return rules.cpu_swap(names)
    except Unreadable as exc:
        _rule_failed(run, rules, "the ZeRO-Offload optimizer swap", exc, "accelerate 1.15.0's test is used")
        return spelt


def _cpu_optimizer(run: TrainerRun, built: str, rules: Any) -> str:
    """accelerate's ``map_pytorch_optim_to_deepspeed``: the DeepSpeed CPU optimizer for the Trainer's ``built``."""
    from dsfields.hf.pair_rules import Unreadable

    fallback = CPU_SWAP.get(built, "deepspeed.ops.adam.DeepSpeedCPUAdam")
    if rules is None:
        return fallback
    try:
        from dsfields.model.store import installed_deepspeed_version

        swapped, where, passed = rules.cpu_optimizer_call(built, installed_deepspeed_version())
    except Unreadable as exc:
        _rule_failed(run, rules, f"the DeepSpeed CPU optimizer for {built}", exc, f"{fallback} is said")
        return fallback
    run.built_from["swap"] = f"accelerate {rules.accelerate_version} {where}"
    run.swap_kwargs = passed
    return str(swapped)


def training_steps(args: Any, run: TrainerRun | None = None) -> int | None:
    """``num_training_steps`` as the Trainer hands it to ``deepspeed_init``: the release's own computation (the
    pair's snapshot) on ``--max_steps``, or the epochs over a dataloader of ``--dataset-size`` examples (one rank's
    share, ``per_device_train_batch_size`` a batch); None when neither is given."""
    from dsfields.hf.pair_rules import Unreadable

    v = args.values
    if not (v.get("max_steps", -1) > 0 or args.dataset_size is not None):
        return None
    rules = getattr(args, "rules", None)
    if rules is None:
        return args.num_training_steps()
    batches = None
    if args.dataset_size is not None:
        per_step = args.world_size * v["per_device_train_batch_size"]
        batches = args.dataset_size // per_step if v.get("dataloader_drop_last") else -(-args.dataset_size // per_step)
    try:
        return rules.training_steps(_arg_names(args), batches)
    except Unreadable as exc:
        if run is not None:
            _rule_failed(run, rules, "num_training_steps", exc, "transformers 5.24.0's computation is used")
        return args.num_training_steps()


def _arg_names(args: Any) -> dict[str, Any]:
    """:func:`dsfields.hf.arguments.arg_names`, imported here, not at the top: ``check`` without
    ``--trainer-args`` never needs the argument parser, and ``args`` comes from it when this runs."""
    from dsfields.hf.arguments import arg_names

    return arg_names(args)


def _origin_of(fill: dict[str, Any], args: Any) -> str:
    """How ``resolve`` words where a fill's value comes from: the flag (``--learning_rate``), the flags of a list,
    or the expression with its flags (``--world-size 2 x per_device_train_batch_size x ...``)."""
    reads = [r for r in fill.get("reads", []) if r != "world_size"]
    expression = fill.get("expression", "")
    if not fill.get("reads"):
        return f"{expression} (fill_only, not an argument)" if fill["method"] == "fill_only" else expression
    if expression.startswith("["):
        return "[" + ", ".join(args.origin(r) for r in reads) + "]"
    if len(reads) == 1 or " or " in expression:
        return args.origin(next((r for r in reads if r in args.given), reads[0]))
    text = expression.replace("args.world_size", f"--world-size {args.world_size}").replace("args.", "")
    return text.replace(" * ", " x ")


def _snapshot_fills(run: TrainerRun, cfg: dict[str, Any], args: Any, rules: Any, function: str) -> bool:
    """``function``'s fills as the pair's snapshot records them (transformers' own expressions, evaluated on the
    user's arguments). False when there is none or one cannot be evaluated: the caller then uses the mirror."""
    from dsfields.hf.pair_rules import Unreadable, evaluate

    fills = rules.fills(function)
    if not fills:
        return False
    names = _arg_names(args)
    planned: list[tuple[dict[str, Any], Any, bool]] = []
    try:
        _bind_locals(names, rules, function)
    except (Unreadable, KeyError, TypeError) as exc:
        run.notes.append(f"transformers {rules.transformers_version} {function}: the local {exc} could not be "
                         "evaluated here; transformers 5.24.0's rule is used")
        return False
    for fill in fills:
        try:
            if fill["when"]:
                raise Unreadable(" and ".join(fill["when"]))
            value = evaluate(fill["expression"], names) if "expression" in fill else None
            match = _must_match(fill, names)
        except (Unreadable, KeyError, TypeError) as exc:
            _not_evaluated(run, rules, function, fill, exc)
            return False
        planned.append((fill, value, match))
    for fill, value, match in planned:
        _match(run, cfg, fill["path"], value, fill.get("hf_key"), _origin_of(fill, args), match)
    _snapshot_writes(run, cfg, args, rules, function)
    return True


def _bind_locals(names: dict[str, Any], rules: Any, function: str) -> None:
    """The function's conditionally bound names (4.x ``fp16_backend``): the last assignment whose conditions hold."""
    from dsfields.hf.pair_rules import evaluate

    for local, assigns in ((rules.trainer or {}).get("locals") or {}).get(function, {}).items():
        for assign in assigns:
            if all(evaluate(cond, names) for cond in assign["when"]):
                names[local] = evaluate(assign["value"], names)


def _snapshot_writes(run: TrainerRun, cfg: dict[str, Any], args: Any, rules: Any, function: str) -> None:
    """The Trainer's other writes (``save_on_each_node`` → ``checkpoint.use_node_local_storage``)."""
    from dsfields.hf.pair_rules import Unreadable, evaluate

    names = _arg_names(args)
    for write in rules.writes():
        if write["function"] != function or "." not in write["path"]:
            continue  # the parent's own "= self.config.get(...)" only makes room for the leaf
        try:
            if not all(evaluate(cond, names) for cond in write["when"]):
                continue
            value = evaluate(write["value"], names)
        except (Unreadable, KeyError, TypeError):
            run.notes.append(f"transformers {rules.transformers_version} {function}:{write['line']}: the write of "
                             f"{write['path']} could not be evaluated here")
            continue
        *parents, leaf = write["path"].split(".")
        node = cfg
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
        flags = ", ".join(args.origin(r) for r in write.get("reads", []))
        run.origins[write["path"]] = f"set by the Trainer from {flags or write['value']}"


def _mirror_process(run: TrainerRun, cfg: dict[str, Any], args: Any) -> None:
    """transformers 5.24.0 trainer_config_process, spelt out (used when the pair's snapshot has no readable rules)."""
    v = args.values
    micro = v["per_device_train_batch_size"]
    gas = v["gradient_accumulation_steps"]
    exact = not v.get("auto_find_batch_size")
    _match(run, cfg, "train_micro_batch_size_per_gpu", micro, "per_device_train_batch_size",
           args.origin("per_device_train_batch_size"), exact)
    _match(run, cfg, "gradient_accumulation_steps", gas, "gradient_accumulation_steps",
           args.origin("gradient_accumulation_steps"))
    _match(run, cfg, "train_batch_size", args.world_size * micro * gas, "train_batch_size (calculated)",
           f"--world-size {args.world_size} x per_device_train_batch_size x gradient_accumulation_steps", exact)
    _match(run, cfg, "gradient_clipping", v["max_grad_norm"], "max_grad_norm", args.origin("max_grad_norm"))
    _match(run, cfg, "optimizer.params.lr", v["learning_rate"], "learning_rate", args.origin("learning_rate"))
    _match(run, cfg, "optimizer.params.betas", [v["adam_beta1"], v["adam_beta2"]], "adam_beta1+adam_beta2",
           f"[{args.origin('adam_beta1')}, {args.origin('adam_beta2')}]")
    _match(run, cfg, "optimizer.params.eps", v["adam_epsilon"], "adam_epsilon", args.origin("adam_epsilon"))
    _match(run, cfg, "optimizer.params.weight_decay", v["weight_decay"], "weight_decay", args.origin("weight_decay"))
    _match(run, cfg, "scheduler.params.warmup_min_lr", 0, None, "0 (fill_only, not an argument)", False)
    _match(run, cfg, "scheduler.params.warmup_max_lr", v["learning_rate"], "learning_rate",
           args.origin("learning_rate"))
    if v.get("save_on_each_node"):
        cfg.setdefault("checkpoint", {})["use_node_local_storage"] = True
        run.origins["checkpoint.use_node_local_storage"] = "set by the Trainer from --save_on_each_node"
    _match(run, cfg, "fp16.enabled", bool(v["fp16"] or v.get("fp16_full_eval")), "fp16|fp16_full_eval",
           args.origin("fp16"))
    _match(run, cfg, "bf16.enabled", bool(v["bf16"] or v.get("bf16_full_eval")), "bf16|bf16_full_eval",
           args.origin("bf16"))


def _mirror_finalize(run: TrainerRun, cfg: dict[str, Any], args: Any) -> None:
    """transformers 5.24.0 trainer_config_finalize's fills, spelt out."""
    v = args.values
    hidden = args.hidden_size
    autos = [k for k in HIDDEN_KEYS if _is_auto(cfg, k)]
    if autos:
        where = args.hidden_size_from or "model.config.hidden_size"
        size = UNKNOWN if hidden is None else hidden
        _match(run, cfg, HIDDEN_KEYS[0], UNKNOWN if hidden is None else hidden * hidden, None,
               f"{where} ({hidden} x {hidden})" if hidden else "the model's hidden_size x hidden_size (give "
               "--model-config or --hidden-size)", False)
        if _zero_stage3(cfg):
            _match(run, cfg, HIDDEN_KEYS[1], UNKNOWN if size is UNKNOWN else int(0.9 * hidden * hidden), None,
                   f"{where} (0.9 x {hidden} x {hidden})" if hidden else "0.9 x the model's hidden_size squared",
                   False)
            _match(run, cfg, HIDDEN_KEYS[2], UNKNOWN if size is UNKNOWN else 10 * hidden, None,
                   f"{where} (10 x {hidden})" if hidden else "10 x the model's hidden_size", False)
    steps = training_steps(args, run)
    _match(run, cfg, "scheduler.params.total_num_steps", UNKNOWN if steps is None else steps,
           "num_training_steps (calculated)", "num_training_steps (" + (
               args.steps_origin() if steps is not None else "give --max_steps, or --dataset-size") + ")")
    warmup: Any = UNKNOWN
    if steps is not None or v.get("warmup_steps", 0) >= 1:
        warmup = max(1, args.warmup_steps(steps or 0))
    _match(run, cfg, "scheduler.params.warmup_num_steps", warmup, "warmup_steps",
           f"max(1, {args.origin('warmup_steps')})")


def _snapshot_finalize(run: TrainerRun, cfg: dict[str, Any], args: Any, rules: Any) -> bool:
    """``trainer_config_finalize``'s fills from the pair's snapshot: the hidden-size keys (their own expressions,
    under the release's conditions), ``total_num_steps`` and ``warmup_num_steps`` (with the release's own
    ``get_warmup_steps``). False when one cannot be evaluated: the caller uses the mirror."""
    from dsfields.hf.pair_rules import Unreadable, evaluate

    fills = rules.fills("trainer_config_finalize")
    if not fills:
        return False
    keys = rules.hidden_size_keys() or list(HIDDEN_KEYS)
    autos = [k for k in keys if _is_auto(cfg, k)]
    hidden = args.hidden_size
    where = args.hidden_size_from or "model.config.hidden_size"
    steps = training_steps(args, run)
    names = _arg_names(args)
    warmup_rule = rules.warmup_expression()
    v = args.values

    def warmup_steps(num_training_steps: int) -> Any:
        if warmup_rule is None:  # not read: the 5.x rule
            return args.warmup_steps(num_training_steps)
        return evaluate(warmup_rule, {**names, "num_training_steps": num_training_steps})

    planned: list[tuple[dict[str, Any], Any, str]] = []
    for fill in fills:
        expression = fill.get("expression", "")
        try:
            conds = [c for c in fill["when"] if c != "len(hidden_size_auto_keys) > 0"]
            if len(conds) < len(fill["when"]) and not autos:
                continue
            if conds == ["self.is_zero3()"]:
                if not _zero_stage3(cfg):
                    continue
            elif conds:
                raise Unreadable(" and ".join(conds))
            if "hidden_size" in expression:
                if hidden is None:
                    value, origin = UNKNOWN, f"the model's hidden_size: {expression} (give --model-config or " \
                                             "--hidden-size)"
                else:
                    value = evaluate(expression, {"hidden_size": hidden})
                    origin = f"{where} ({expression.replace('hidden_size', str(hidden)).replace(' * ', ' x ')})"
            elif "num_training_steps" in expression and "get_warmup_steps" not in expression:
                value = UNKNOWN if steps is None else evaluate(expression, {**names, "num_training_steps": steps})
                origin = "num_training_steps (" + (args.steps_origin() if steps is not None else
                                                   "give --max_steps, or --dataset-size") + ")"
            elif "get_warmup_steps" in expression:
                value = UNKNOWN
                if steps is not None or v.get("warmup_steps", 0) >= 1:
                    value = evaluate(expression, {**names, "num_training_steps": steps or 0,
                                                  "args.get_warmup_steps": warmup_steps})
                origin = args.origin("warmup_steps")
                origin = f"max(1, {origin})" if expression.startswith("max(1,") else origin
            else:
                value, origin = evaluate(expression, names), _origin_of(fill, args)
            match = _must_match(fill, names)
        except (Unreadable, KeyError, TypeError) as exc:
            _not_evaluated(run, rules, "trainer_config_finalize", fill, exc)
            return False
        planned.append((fill | {"_match": match}, value, origin))
    for fill, value, origin in planned:
        _match(run, cfg, fill["path"], value, fill.get("hf_key"), origin, fill["_match"])
    return True


def _plugin_fills(acc: dict[str, Any], rules: Any) -> dict[str, Any]:
    """``DeepSpeedPlugin.__post_init__``: config path → the plugin attribute's value (the accelerate config's, else
    its environment default), from the release's ``plugin_to_config_mapping`` when snapshotted."""
    mapping = rules.plugin_to_config() if rules is not None else None
    if mapping is None:  # accelerate 1.15.0, spelt out
        return {"gradient_accumulation_steps": acc.get("gradient_accumulation_steps", "auto"),
                "gradient_clipping": acc.get("gradient_clipping", "auto"),
                "zero_optimization.stage": acc.get("zero_stage", 2),
                "zero_optimization.offload_optimizer.device": acc.get("offload_optimizer_device", "none"),
                "zero_optimization.offload_param.device": acc.get("offload_param_device", "none"),
                "zero_optimization.offload_param.nvme_path": acc.get("offload_param_nvme_path", "none"),
                "zero_optimization.offload_optimizer.nvme_path": acc.get("offload_optimizer_nvme_path", "none"),
                "zero_optimization.stage3_gather_16bit_weights_on_model_save": bool(
                    acc.get("zero3_save_16bit_model", False))}
    from dsfields.hf.pair_rules import Unreadable, evaluate

    out: dict[str, Any] = {}
    for attribute, path in mapping.items():
        default = rules.plugin_default(attribute)
        record = ((rules.accelerate or {}).get("plugin_env") or {}).get(attribute) or {}
        if attribute not in acc and record.get("when"):
            names = {f"self.{attribute}": None, **({record["local"]: default} if record.get("local") else {})}
            try:
                if not all(evaluate(cond, names) for cond in record["when"]):
                    continue  # the default leaves the attribute None: the plugin fills nothing there
            except (Unreadable, TypeError):
                pass  # a guard on something else: the default is taken as set
        if isinstance(default, str) and default.lower() in ("true", "false"):  # read as env.lower() == "true"
            out[path] = bool(acc.get(attribute, default.lower() == "true"))
        else:
            out[path] = acc.get(attribute, default)
    return out


def _mirror_mixed(run: TrainerRun, cfg: dict[str, Any], args: Any, mixed: str) -> None:
    """accelerate 1.15.0 ``DeepSpeedPlugin.set_mixed_precision``, spelt out."""
    if mixed == "fp16" and "fp16" not in cfg:
        cfg["fp16"] = {"enabled": True, "auto_cast": True}
        run.origins["fp16.enabled"] = run.origins["fp16.auto_cast"] = f"added by accelerate (mixed precision fp16, " \
                                                                       f"{args.origin('fp16')})"
    elif mixed in ("bf16", "fp8") and "bf16" not in cfg:
        cfg["bf16"] = {"enabled": True}
        run.origins["bf16.enabled"] = f"added by accelerate (mixed precision {mixed})"
    if mixed != "no":
        other = "bf16" if mixed == "fp16" else "fp16"
        section = cfg.get(other, {})
        enabled = section.get("enabled", "False") if isinstance(section, dict) else section.get("enabled")
        if str(enabled).lower() == "true":
            raise PlanError("accelerate", "ValueError", f"`--mixed_precision` arg cannot be set to `{mixed}` when "
                            f"`{other}` is set in the DeepSpeed config file.", f"{other}.enabled")
    _fill_precision(run, cfg, mixed, {"fp16": mixed == "fp16", "bf16": mixed in ("bf16", "fp8")})


def _fill_precision(run: TrainerRun, cfg: dict[str, Any], mixed: str, on: dict[str, bool]) -> None:
    for dtype in ("fp16", "bf16"):
        if dtype not in cfg:
            cfg[dtype] = {"enabled": False}
            run.origins[f"{dtype}.enabled"] = "added by accelerate (false)"
    for dtype in ("fp16", "bf16"):
        node, key = _node(cfg, f"{dtype}.enabled")
        if node is not None and node.get(key) == "auto":
            node[key] = on[dtype]
            run.origins[f"{dtype}.enabled"] = f"filled by accelerate (mixed precision {mixed})"


def _snapshot_mixed(run: TrainerRun, cfg: dict[str, Any], args: Any, mixed: str, rules: Any) -> bool:
    """``set_mixed_precision`` as the pair's accelerate writes it: the sections it adds under its own conditions
    (fp16 with ``auto_cast``; bf16 for bf16, and for fp8 where the release says so), its clash message and its
    ``fp16.enabled``/``bf16.enabled`` fills. False when a condition cannot be evaluated (the caller uses 1.15.0)."""
    from dsfields.hf.pair_rules import Unreadable, evaluate

    rule = rules.mixed_precision()
    if rule is None or not rule.get("fills"):
        return False
    names = {"mixed_precision": mixed, "ds_config": cfg}
    try:
        adds = [(a["section"], a["value"]) for a in rule["added_sections"] if a["section"] in ("fp16", "bf16")
                and isinstance(a["value"], dict) and all(evaluate(c, names) for c in a["when"])]
        on = {path.split(".")[0]: bool(evaluate(expr, names)) for path, expr in rule["fills"].items()}
    except (Unreadable, KeyError, TypeError) as exc:
        run.notes.append(f"accelerate {rules.accelerate_version} set_mixed_precision: {exc} could not be evaluated "
                         "here; accelerate 1.15.0's rule is used")
        return False
    for section, value in adds:
        cfg[section] = dict(value)
        for key in value:
            run.origins[f"{section}.{key}"] = f"added by accelerate (mixed precision {mixed}" + (
                f", {args.origin(mixed)})" if mixed in ("fp16", "bf16") and mixed in args.given else ")")
    if mixed != "no":
        other = "bf16" if mixed == "fp16" else "fp16"
        section = cfg.get(other, {})
        enabled = section.get("enabled", "False") if isinstance(section, dict) else section.get("enabled")
        if str(enabled).lower() == "true":
            message = rule["clash"]["message"].replace("{mixed_precision}", mixed).replace("{diff_dtype}", other)
            raise PlanError("accelerate", "ValueError", message, f"{other}.enabled")
    _fill_precision(run, cfg, mixed, {"fp16": on.get("fp16", False), "bf16": on.get("bf16", False)})
    return True


def _is_auto(cfg: dict[str, Any], path: str) -> bool:
    node, key = _node(cfg, path)
    return node is not None and node.get(key) == "auto"


def _offload_device(cfg: dict[str, Any]) -> str:
    zero = cfg.get("zero_optimization")
    offload = zero.get("offload_optimizer") if isinstance(zero, dict) else None
    device = offload.get("device", "none") if isinstance(offload, dict) else "none"
    return str(device) if device is not None else "none"


OPTIMIZER_CHOICE_READ_IN = "0.19.8"
"""The DeepSpeed release whose ``DeepSpeedEngine._configure_basic_optimizer`` :func:`_spelt_optimizer_choice`
spells out by hand: which of a ``type``'s classes is built (offload, ``torch_adam``). Its answers were confirmed by
the real Trainer on that release (bench/hf_trainer_differential.py); for any other release they are said as not
verified."""


def deepspeed_optimizer_class(cfg: dict[str, Any], offload: str, catalog: Any = None,
                              version: str | None = None) -> tuple[str | None, str | None]:
    """The class DeepSpeed builds for the config's optimizer ``type``, and why it is not verified (None: it is).

    ``catalog``: the DeepSpeed release's optimizer catalogue (``Snapshot.optimizers``, read from its
    ``_configure_basic_optimizer``): a ``type`` whose branch builds one class is that class, read per release; the
    fallback to ``torch.optim`` likewise. Where a branch builds several (adam/adamw: FusedAdam, DeepSpeedCPUAdam,
    ZenFlowCPUAdam, torch's; adagrad; lion) the choice is :data:`OPTIMIZER_CHOICE_READ_IN`'s, spelt out: said as not
    verified for another release, or when the class it names is not among the release's.
    """
    section = cfg.get("optimizer")
    kind = section.get("type") if isinstance(section, dict) else None
    if not isinstance(kind, str):
        return None, None
    spelt = _spelt_optimizer_choice(section, kind, offload)
    where = f"DeepSpeed {version}" if version else "this DeepSpeed release"
    if catalog is None:  # no release named (the mirror alone), or its snapshot has no optimizer catalogue
        return spelt, None if version in (None, OPTIMIZER_CHOICE_READ_IN) else (
            f"{where} has no optimizer catalogue here: the class {spelt} is read by hand from DeepSpeed "
            f"{OPTIMIZER_CHOICE_READ_IN}'s _configure_basic_optimizer and could not be verified for this release")
    names = catalog.names
    entry = names.get(kind) or next((e for n, e in names.items() if e.case_insensitive and n == kind.lower()), None)
    if entry is None:
        if "torch.optim" in catalog.fallback_modules:
            return f"torch.optim.{kind}", None
        return spelt, f"{where} builds no optimizer type {kind!r} (its catalogue): the class could not be verified"
    classes = [c.name for c in entry.classes if c.name]
    if len(classes) == 1:
        return classes[0], None
    same = [c for c in classes if c.rpartition(".")[2] == (spelt or "").rpartition(".")[2]]
    zenflow = isinstance(cfg.get("zero_optimization"), dict) and "zenflow" in cfg["zero_optimization"]
    if not same or zenflow and any(c.endswith("ZenFlowCPUAdam") for c in classes):
        return spelt, (f"{where}: optimizer type {kind!r} builds one of {', '.join(classes)}; which one is read by "
                       f"hand from DeepSpeed {OPTIMIZER_CHOICE_READ_IN} and names {spelt}" +
                       (" (ZenFlow not followed)" if zenflow else "") + ": the class could not be verified")
    if version != OPTIMIZER_CHOICE_READ_IN:
        return same[0], (f"{where}: which of {', '.join(classes)} optimizer type {kind!r} builds is read by hand "
                         f"from DeepSpeed {OPTIMIZER_CHOICE_READ_IN}'s _configure_basic_optimizer: the class could "
                         "not be verified for this release")
    return same[0], None


def _spelt_optimizer_choice(section: dict[str, Any], kind: str, offload: str) -> str | None:
    """engine.py ``_configure_basic_optimizer`` (DeepSpeed 0.19.8), by hand: the class built for ``kind``."""
    name = kind.lower()
    params = section.get("params") if isinstance(section.get("params"), dict) else {}
    cpu = offload in ("cpu", "nvme")
    if name in ("adam", "adamw"):
        if params.get("torch_adam"):
            adam_w = name == "adamw" or params.get("adam_w_mode", True)
            return "torch.optim.AdamW" if adam_w else "torch.optim.Adam"
        return "deepspeed.ops.adam.DeepSpeedCPUAdam" if cpu else "deepspeed.ops.adam.FusedAdam"
    if name == "adagrad":
        return "deepspeed.ops.adagrad.DeepSpeedCPUAdagrad" if cpu else "torch.optim.Adagrad"
    if name == "lamb":
        return "deepspeed.ops.lamb.FusedLamb"
    if name == "lion":
        return "deepspeed.ops.lion.DeepSpeedCPULion" if cpu else "deepspeed.ops.lion.FusedLion"
    return f"torch.optim.{kind}"


def _leaves(cfg: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in cfg.items():
        if isinstance(value, dict):
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
