"""The HF programs (extract/hf/programs.py, model/hf_rules.simulate) on small fake transformers/accelerate trees.

Each tree is written to a temporary folder in the shape a release has it: a 4.x one (``get_optimizer_cls_and_kwargs``
an if/elif chain, ``num_training_steps`` computed inline in ``_inner_training_loop`` with a floor division, the
checks in ``__post_init__``) and a 5.x one (a handler table in ``trainer_optimizer.py``, the steps in
``set_initial_training_values`` through a ``_prepare_for_training(max_steps, ...)`` parameter, ``_validate_args``).
What is asserted is what the user sees: the class each ``--optim`` and ``--lr_scheduler_type`` builds, the
steps, the check that raises with the release's message, accelerate's swap under ZeRO-Offload.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsfields.extract.hf.programs import accelerate_programs, trainer_programs
from dsfields.hf.pair_rules import HfRules, Unreadable, simulate

pytestmark = pytest.mark.unit

ENUMS = '''
class ExplicitEnum(str, Enum):
    pass

class IntervalStrategy(ExplicitEnum):
    NO = "no"
    STEPS = "steps"

class SchedulerType(ExplicitEnum):
    LINEAR = "linear"
    CONSTANT = "constant"
    REDUCE_ON_PLATEAU = "reduce_lr_on_plateau"

class OptimizerNames(ExplicitEnum):
    ADAMW_TORCH = "adamw_torch"
    ADAFACTOR = "adafactor"
    SGD = "sgd"
    ADAGRAD = "adagrad"
    LION = "lion_32bit"
'''

ARGS_4 = ENUMS + '''
class TrainingArguments:
    def __post_init__(self):
        self.logging_strategy = IntervalStrategy(self.logging_strategy)
        self.lr_scheduler_type = SchedulerType(self.lr_scheduler_type)
        if self.logging_strategy == IntervalStrategy.STEPS and self.logging_steps == 0:
            raise ValueError(f"logging strategy {self.logging_strategy} requires non-zero --logging_steps")
        if self.framework == "pt" and is_torch_available() and self.bf16:
            raise ValueError("Your setup doesn't support bf16/gpu.")
        if self.fp16 and self.bf16:
            raise ValueError("At most one of fp16 and bf16 can be True, but not both")
        if self.warmup_ratio < 0 or self.warmup_ratio > 1:
            raise ValueError("warmup_ratio must lie in range [0,1]")
'''

TRAINER_4 = '''
import torch
from .optimization import Adafactor, get_scheduler

class Trainer:
    @staticmethod
    def get_optimizer_cls_and_kwargs(args):
        optimizer_kwargs = {"lr": args.learning_rate}
        if args.optim == OptimizerNames.ADAFACTOR:
            optimizer_cls = Adafactor
        elif args.optim in [OptimizerNames.ADAMW_TORCH]:
            from torch.optim import AdamW

            optimizer_cls = AdamW
        elif args.optim in [OptimizerNames.LION]:
            try:
                from bitsandbytes.optim import Lion
                if "lion" in args.optim:
                    optimizer_cls = Lion
            except ImportError:
                raise ValueError("no bitsandbytes")
        elif args.optim == OptimizerNames.SGD:
            optimizer_cls = torch.optim.SGD
        elif args.optim == OptimizerNames.ADAGRAD:
            optimizer_cls = torch.optim.Adagrad
        else:
            raise ValueError(f"Trainer cannot instantiate unsupported optimizer: {args.optim}")
        return optimizer_cls, optimizer_kwargs

    def _inner_training_loop(self, batch_size=None, args=None):
        train_dataloader = self.get_train_dataloader()
        total_train_batch_size = self._train_batch_size * args.gradient_accumulation_steps * args.world_size
        if has_length(train_dataloader):
            len_dataloader = len(train_dataloader)
            num_update_steps_per_epoch = len_dataloader // args.gradient_accumulation_steps
            num_update_steps_per_epoch = max(num_update_steps_per_epoch, 1)
            if args.max_steps > 0:
                max_steps = args.max_steps
            else:
                max_steps = math.ceil(args.num_train_epochs * num_update_steps_per_epoch)
        elif args.max_steps > 0:
            max_steps = args.max_steps
        else:
            raise ValueError(f"args.max_steps must be set to a positive value, was {args.max_steps}")
        if self.is_deepspeed_enabled:
            self.optimizer, self.lr_scheduler = deepspeed_init(self, num_training_steps=max_steps)
'''

OPTIMIZATION = '''
from torch.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau

def get_constant_schedule(optimizer, last_epoch=-1):
    return LambdaLR(optimizer, _get_constant_lambda, last_epoch=last_epoch)

def get_reduce_on_plateau_schedule(optimizer, **kwargs):
    return ReduceLROnPlateau(optimizer, **kwargs)

def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    return get_constant_schedule(optimizer)

TYPE_TO_SCHEDULER_FUNCTION = {
    SchedulerType.LINEAR: get_linear_schedule_with_warmup,
    SchedulerType.CONSTANT: get_constant_schedule,
    SchedulerType.REDUCE_ON_PLATEAU: get_reduce_on_plateau_schedule,
}
'''

ARGS_5 = ENUMS + '''
class TrainingArguments:
    def __post_init__(self):
        self.logging_strategy = IntervalStrategy(self.logging_strategy)
        self._validate_args()

    def _validate_args(self):
        if self.fp16 and self.bf16:
            raise ValueError("At most one of fp16 and bf16 can be True, but not both")
        if self.warmup_steps < 0:
            raise ValueError(f"Got warmup_steps = {self.warmup_steps}, Expected value warmup_steps >= 0")
'''

TRAINER_5 = '''
class Trainer:
    @staticmethod
    def get_optimizer_cls_and_kwargs(args, model=None):
        handler = _OPTIMIZER_HANDLERS.get(args.optim)
        return handler(ctx)

    def _inner_training_loop(self, batch_size=None, args=None, resume_from_checkpoint=None):
        train_dataloader = self.get_train_dataloader()
        (num_train_epochs, num_update_steps_per_epoch, max_steps) = self.set_initial_training_values(
            args, train_dataloader)
        model = self._prepare_for_training(max_steps, train_dataloader, resume_from_checkpoint)

    def _prepare_for_training(self, max_steps, train_dataloader, resume_from_checkpoint):
        if self.is_deepspeed_enabled:
            self.optimizer, self.lr_scheduler = deepspeed_init(self, num_training_steps=max_steps)

    def set_initial_training_values(self, args, dataloader):
        max_steps = args.max_steps
        epoch_based = max_steps < 0
        len_dataloader = len(dataloader) if has_length(dataloader) else None
        sp_size = self.get_sp_size()
        if sp_size > 1 and len_dataloader is not None:
            len_dataloader = len_dataloader * sp_size
        if len_dataloader is not None:
            num_update_steps_per_epoch = max(
                len_dataloader // args.gradient_accumulation_steps
                + int(len_dataloader % args.gradient_accumulation_steps > 0), 1)
            if epoch_based:
                max_steps = math.ceil(args.num_train_epochs * num_update_steps_per_epoch)
        num_train_epochs = self.num_examples(dataloader)
        return (num_train_epochs, num_update_steps_per_epoch, max_steps)

    def get_sp_size(self):
        return self.accelerator.sp_size
'''

HANDLERS_5 = '''
import torch
from .optimization import Adafactor

def _get_adafactor(ctx):
    return Adafactor, ctx.optimizer_kwargs

def _get_adamw_torch(ctx):
    from torch.optim import AdamW

    ctx.optimizer_kwargs.update(ctx.adam_kwargs)
    return AdamW, ctx.optimizer_kwargs

def _get_sgd(ctx):
    return torch.optim.SGD, ctx.optimizer_kwargs.copy()

def _get_adagrad(ctx):
    return torch.optim.Adagrad, ctx.optimizer_kwargs.copy()

_TORCH_ADAGRAD = [OptimizerNames.ADAGRAD]

_OPTIMIZER_HANDLERS = {
    OptimizerNames.ADAFACTOR: _get_adafactor,
    OptimizerNames.ADAMW_TORCH: _get_adamw_torch,
    **dict.fromkeys([OptimizerNames.SGD], _get_sgd),
    **dict.fromkeys(_TORCH_ADAGRAD, _get_adagrad),
}
'''

INTEGRATION = '''
def deepspeed_optim_sched(trainer, hf_deepspeed_config, args, num_training_steps, model_parameters):
    config = hf_deepspeed_config.config
    if "optimizer" in config:
        if args.adafactor:
            raise ValueError("--adafactor was passed, but also found `optimizer` configured in the DeepSpeed config.")
        optimizer = DummyOptim(params=model_parameters)
    else:
        optimizer = trainer.create_optimizer()
    return optimizer, None
'''

ACC_DEEPSPEED = '''
from torch import optim

def map_pytorch_optim_to_deepspeed(optimizer):
    defaults = {k: v for k, v in optimizer.defaults.items() if k in ["lr", "weight_decay"]}
    from deepspeed.ops.adam import DeepSpeedCPUAdam

    optimizer_class = DeepSpeedCPUAdam
    if compare_versions("deepspeed", ">=", "0.3.1"):
        defaults["adamw_mode"] = False
    if compare_versions("deepspeed", ">=", "0.5.5"):
        is_ada = isinstance(optimizer, optim.Adagrad)
        if is_bnb_available() and not is_ada:
            is_ada = optimizer.optim_bits == 32
        if is_ada:
            from deepspeed.ops.adagrad import DeepSpeedCPUAdagrad

            optimizer_class = DeepSpeedCPUAdagrad
    return optimizer_class(optimizer.param_groups, **defaults)

class DummyOptim:
    def __init__(self, params, lr=0.001, weight_decay=0, **kwargs):
        self.params = params

class DummyScheduler:
    def __init__(self, optimizer, total_num_steps=None, warmup_num_steps=0, lr_scheduler_callable=None, **kwargs):
        self.optimizer = optimizer
'''

ACCELERATOR = '''
class Accelerator:
    def _prepare_deepspeed(self, *args):
        if model is not None:
            if optimizer is not None:
                if isinstance(optimizer, (DummyOptim)):
                    kwargs["model_parameters"] = optimizer.params
                else:
                    if self.deepspeed_config["zero_optimization"].get("offload_optimizer", {}).get(
                        "device", "none"
                    ) != "none" and self.deepspeed_config.get("zero_force_ds_cpu_optimizer", True):
                        optimizer = map_pytorch_optim_to_deepspeed(optimizer)
'''


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _rules(tmp_path: Path, release: str) -> HfRules:
    files = {"training_args.py": ARGS_4 if release == "4" else ARGS_5, "optimization.py": OPTIMIZATION,
             "trainer.py": TRAINER_4 if release == "4" else TRAINER_5, "integrations/deepspeed.py": INTEGRATION}
    if release == "5":
        files["trainer_optimizer.py"] = HANDLERS_5
    unread: list[dict[str, str]] = []
    programs = trainer_programs(_tree(tmp_path / f"t{release}", files), unread)
    acc_unread: list[dict[str, str]] = []
    acc = accelerate_programs(_tree(tmp_path / "a", {"utils/deepspeed.py": ACC_DEEPSPEED,
                                                     "accelerator.py": ACCELERATOR}), acc_unread)
    assert unread == [] and acc_unread == []
    json.dumps(programs, sort_keys=True)  # data, as the snapshot writes it
    snap = {"transformers_version": f"{release}.0.0", "rules": {"fills": [], "programs": programs}}
    return HfRules(snap, {"rules": {"programs": acc}}, "1.0.0")


def _names(**values):
    defaults = {"optim": "adamw_torch", "lr_scheduler_type": "linear", "fp16": False, "bf16": False,
                "logging_strategy": "steps", "logging_steps": 500, "warmup_ratio": 0.0, "warmup_steps": 0,
                "max_steps": -1, "num_train_epochs": 3.0, "gradient_accumulation_steps": 1, "world_size": 1,
                "adafactor": False, "learning_rate": 5e-5}
    out = {}
    for key, value in {**defaults, **values}.items():
        out[f"args.{key}"] = out[f"self.{key}"] = value
    return out


@pytest.mark.parametrize("release", ["4", "5"])
@pytest.mark.parametrize("optim, built", [("adamw_torch", "torch.optim.AdamW"), ("adafactor",
                                          "transformers.optimization.Adafactor"), ("sgd", "torch.optim.SGD"),
                                          ("adagrad", "torch.optim.Adagrad")])
def test_the_optimizer_each_optim_builds_is_the_releases(tmp_path, release, optim, built):
    assert _rules(tmp_path, release).optimizer_class(_names(optim=optim))[0] == built


def test_an_optimizer_behind_an_import_is_named_and_an_unknown_choice_is_said(tmp_path):
    rules = _rules(tmp_path, "4")
    assert rules.optimizer_class(_names(optim="lion_32bit"))[0] == "bitsandbytes.optim.Lion"
    with pytest.raises(Unreadable, match="unsupported optimizer: nope"):
        rules.optimizer_class(_names(optim="nope"))
    with pytest.raises(Unreadable, match="no entry"):  # 5.x: not in the table
        _rules(tmp_path, "5").optimizer_class(_names(optim="lion_32bit"))


@pytest.mark.parametrize("kind, built", [("linear", "torch.optim.lr_scheduler.LambdaLR"),
                                         ("constant", "torch.optim.lr_scheduler.LambdaLR"),
                                         ("reduce_lr_on_plateau", "torch.optim.lr_scheduler.ReduceLROnPlateau")])
def test_the_scheduler_class_follows_the_functions_it_calls(tmp_path, kind, built):
    assert _rules(tmp_path, "4").scheduler_class(_names(lr_scheduler_type=kind))[0] == built


@pytest.mark.parametrize("release, words, batches, steps", [
    ("4", {"max_steps": 7}, 10, 7), ("5", {"max_steps": 7}, 10, 7),
    ("4", {"gradient_accumulation_steps": 4}, 10, 6),  # 4.x: 10 // 4 = 2 updates an epoch, x 3 epochs
    ("5", {"gradient_accumulation_steps": 4}, 10, 9),  # 5.x: ceil(10 / 4) = 3 updates an epoch
    ("4", {"max_steps": 5}, None, 5), ("5", {"num_train_epochs": 0.5}, 10, 5),
])
def test_num_training_steps_is_the_releases_formula(tmp_path, release, words, batches, steps):
    assert _rules(tmp_path, release).training_steps(_names(**words), batches) == steps


def test_num_training_steps_refusal_and_loops(tmp_path):
    with pytest.raises(Unreadable, match="must be set to a positive value, was -1"):
        _rules(tmp_path, "4").training_steps(_names(), None)
    # a value assigned in a loop is not known afterwards (the loop may not run, or run many times)
    program = {"steps": [{"op": "assign", "targets": ["n"], "value": "1", "when": []},
                         {"op": "assign", "targets": ["n"], "value": "0", "when": ["__loop__"]}]}
    names: dict = {}
    simulate(program, names)
    assert "n" not in names


@pytest.mark.parametrize("release", ["4", "5"])
def test_training_arguments_checks_raise_the_releases_message(tmp_path, release):
    rules = _rules(tmp_path, release)
    assert rules.post_init_error(_names()) is None
    both = rules.post_init_error(_names(fp16=True, bf16=True))
    assert both is not None and both.message == "At most one of fp16 and bf16 can be True, but not both"
    if release == "4":
        assert rules.post_init_error(_names(warmup_ratio=1.5)).message == "warmup_ratio must lie in range [0,1]"
        logging = rules.post_init_error(_names(logging_steps=0))
        assert logging.message == "logging strategy IntervalStrategy.STEPS requires non-zero --logging_steps"
        # a check that needs the machine (is_torch_available()) is never taken as raised
        assert rules.post_init_error(_names(bf16=True)) is None
    else:
        assert rules.post_init_error(_names(warmup_steps=-2)).message == (
            "Got warmup_steps = -2, Expected value warmup_steps >= 0")
        assert rules.post_init_error(_names(warmup_ratio=1.5)) is None  # 5.x has no such check


def test_deepspeed_optim_sched_refusals(tmp_path):
    rules = _rules(tmp_path, "4")
    names = {**_names(adafactor=True), "config": {"optimizer": {"type": "AdamW"}}}
    assert "--adafactor was passed" in rules.optim_sched_error(names).message
    assert rules.optim_sched_error({**_names(adafactor=True), "config": {}}) is None


def test_accelerates_cpu_swap(tmp_path):
    from dsfields.hf.pair_rules import ClassPath, isinstance_by_path

    rules = _rules(tmp_path, "4")
    assert rules.cpu_optimizer("torch.optim.AdamW", "0.19.8")[0] == "deepspeed.ops.adam.DeepSpeedCPUAdam"
    assert rules.cpu_optimizer("torch.optim.Adagrad", "0.19.8")[0] == "deepspeed.ops.adagrad.DeepSpeedCPUAdagrad"
    assert rules.cpu_optimizer("torch.optim.Adagrad", "0.5.0")[0] == "deepspeed.ops.adam.DeepSpeedCPUAdam"
    # the keywords the swap passes beyond lr / weight_decay (DeepSpeed's signature judges them in check)
    assert rules.cpu_optimizer_call("torch.optim.Adagrad", "0.19.8")[2] == {"adamw_mode": False}
    assert rules.cpu_optimizer_call("torch.optim.Adagrad", "0.3.0")[2] == {}
    base = {"optimizer": ClassPath("torch.optim.AdamW"), "model": ClassPath("model"),
            "isinstance": isinstance_by_path, "DummyOptim": ClassPath("accelerate.utils.DummyOptim")}
    offload = {"zero_optimization": {"offload_optimizer": {"device": "cpu"}}}
    assert rules.cpu_swap({**base, "self.deepspeed_config": offload}) is True
    assert rules.cpu_swap({**base, "self.deepspeed_config": {**offload, "zero_force_ds_cpu_optimizer": False}}) is False
    assert rules.cpu_swap({**base, "self.deepspeed_config": {"zero_optimization": {}}}) is False
    assert rules.dummy_defaults("DummyOptim") == {"lr": 0.001, "weight_decay": 0}


def test_simulate_never_takes_an_unknown_branch():
    program = {"steps": [
        {"op": "assign", "targets": ["x"], "value": "1", "when": []},
        {"op": "assign", "targets": ["x"], "value": "2", "when": ["gpu_ok()"]},
        {"op": "raise", "type": "ValueError", "message": "x is {x}", "when": ["gpu_ok()"]},
        {"op": "raise", "type": "ValueError", "message": "y is {y}", "when": ["y > 1"]},
        {"op": "return", "value": "x", "when": []}]}
    names = {"y": 0}
    assert simulate(program, names).kind == "unknown" and "x" not in names  # x may be 1 or 2: not known
    out = simulate(program, {"y": 3})
    assert (out.kind, out.message) == ("raise", "y is 3")


def test_an_accelerate_without_snapshot_falls_back_to_the_newest_with_a_notice(tmp_path, monkeypatch):
    from dsfields.hf import arguments as hf_args

    hf = tmp_path / "hf"
    hf.mkdir()
    for version in ("1.2.0", "1.10.0"):
        (hf / f"accelerate-{version}.json").write_text(json.dumps({"accelerate_version": version, "rules": {
            "launch_env": {"exports": {"zero_stage": {"env": "ACCELERATE_DEEPSPEED_ZERO_STAGE"}}, "reads": []},
            "plugin_env": {"zero_stage": {"env": "ACCELERATE_DEEPSPEED_ZERO_STAGE", "default": 2}}}}))
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    monkeypatch.setattr(hf_args, "installed_transformers_version", lambda: None)
    monkeypatch.setattr(hf_args, "installed_accelerate_version", lambda: None)
    snapshot = {"transformers_version": "4.40.0", "release": {"accelerate_paired": "0.30.0"}, "rules": {"fills": []}}
    rules = hf_args.load_rules(snapshot)
    assert rules.accelerate_version == "1.10.0"  # the newest, by version order, not by name
    assert rules.notes == ["accelerate 0.30.0 has no HF snapshot: the newest snapshotted, accelerate 1.10.0, is used "
                           "(--hf-version T,A to choose)"]
    config = tmp_path / "acc.yaml"
    config.write_text("mixed_precision: bf16\ndeepspeed_config:\n  zero_stage: 3\n")
    assert hf_args.load_accelerate_config(str(config), rules)["zero_stage"] == 3
    # no accelerate snapshot at all: the fixed 1.15.0 key list, said
    for path in hf.iterdir():
        path.unlink()
    rules = hf_args.load_rules(snapshot)
    settings = hf_args.load_accelerate_config(str(config), rules)
    assert settings["zero_stage"] == 3
    assert settings["unknown"][0].startswith("no HF snapshot of accelerate 0.30.0: the deepspeed_config keys are read "
                                             "as accelerate 1.15.0 names them")


def test_the_inline_swap_of_old_accelerate_is_one_class_whatever_the_optimizer(tmp_path):
    old = ACCELERATOR.replace("optimizer = map_pytorch_optim_to_deepspeed(optimizer)",
                              "from deepspeed.ops.adam import DeepSpeedCPUAdam\n\n"
                              "                        optimizer = DeepSpeedCPUAdam(optimizer.param_groups)")
    unread: list[dict[str, str]] = []
    acc = accelerate_programs(_tree(tmp_path / "old", {"utils/deepspeed.py": "", "accelerator.py": old}), unread)
    assert unread == []
    rules = HfRules({"transformers_version": "4.0.0", "rules": {"fills": []}}, {"rules": {"programs": acc}}, "0.2")
    assert rules.cpu_optimizer("torch.optim.Adagrad")[0] == "deepspeed.ops.adam.DeepSpeedCPUAdam"
    assert acc["cpu_swap"]["when"][-1].endswith("get('zero_force_ds_cpu_optimizer', True)")
