"""The HF rule witness (extract/hf/rule_witness.py) on hand-written sources, and the run following rules it extracted.

The sources are written here in the shape transformers' ``integrations/deepspeed.py`` and accelerate's
``DeepSpeedPlugin`` have; what is asserted is what the consumer relies on: a fill's value expression with the
function's locals substituted, its must-match test, its guards, the messages, and that ``trainer_run`` follows
a release's own expressions instead of 5.24.0's.
"""

from __future__ import annotations

import pytest

from dsfields.extract.hf.rule_witness import accelerate_rules, transformers_rules, warmup_rule
from dsfields.hf.pair_rules import HfRules, Unreadable, evaluate

pytestmark = pytest.mark.unit

TRAINER = '''
class HfTrainerDeepSpeedConfig(HfDeepSpeedConfig):
    def fill_match(self, ds_key_long, hf_val, hf_key=None, must_match=True):
        if ds_val is not None and ds_val != hf_val:
            self.mismatches.append(f"- ds {ds_key_long}={ds_val} vs hf {hf_key}={hf_val}")

    fill_only = partialmethod(fill_match, must_match=False)

    def trainer_config_process(self, args, auto_find_batch_size=False):
        train_batch_size = args.world_size * args.per_device_train_batch_size * args.gradient_accumulation_steps
        self.fill_match("train_micro_batch_size_per_gpu", args.per_device_train_batch_size,
                        "per_device_train_batch_size", not auto_find_batch_size)
        self.fill_match("train_batch_size", train_batch_size, "train_batch_size (calculated)")
        if args.fp16:
            backend = "amp"
        else:
            backend = None
        self.fill_match("fp16.enabled", args.fp16 and backend == "amp", "fp16")
        self.fill_only("scheduler.params.warmup_min_lr", 0)
        if args.save_on_each_node:
            self.config["checkpoint"]["use_node_local_storage"] = args.save_on_each_node

    def trainer_config_finalize(self, args, model, num_training_steps):
        hidden_size_based_keys = ["zero_optimization.reduce_bucket_size"]
        hidden_size_auto_keys = [x for x in hidden_size_based_keys if self.is_auto(x)]
        if len(hidden_size_auto_keys) > 0:
            hidden_size = model.config.hidden_size
            self.fill_only("zero_optimization.reduce_bucket_size", 2 * hidden_size)
        self.fill_match("scheduler.params.warmup_num_steps", args.get_warmup_steps(num_training_steps), "warmup_steps")
        if len(self.mismatches) > 0:
            mismatches = "\\n".join(self.mismatches)
            raise ValueError("Values mismatch:" f"\\n{mismatches}\\nUse 'auto'.")
'''

ARGS_SOURCE = '''
class TrainingArguments:
    def get_warmup_steps(self, num_training_steps: int):
        warmup_steps = self.warmup_steps if self.warmup_steps > 0 else math.ceil(num_training_steps * self.warmup_ratio)
        return warmup_steps
'''

PLUGIN = '''
class DeepSpeedPlugin:
    def __post_init__(self):
        if self.zero_stage is None:
            self.zero_stage = int(os.environ.get("ACCELERATE_DEEPSPEED_ZERO_STAGE", 3))
        if self.gradient_clipping is None:
            clip = os.environ.get("ACCELERATE_GRADIENT_CLIPPING", "auto")
            self.gradient_clipping = clip
        plugin_to_config_mapping = {"zero_stage": "zero_optimization.stage", "gradient_clipping": "gradient_clipping"}
        self.deepspeed_config["steps_per_print"] = float("inf")

    def set_mixed_precision(self, mixed_precision):
        ds_config = self.deepspeed_config
        kwargs = {"fp16.enabled": mixed_precision == "fp16", "bf16.enabled": mixed_precision == "bf16"}
        if mixed_precision == "bf16":
            if "bf16" not in ds_config:
                ds_config["bf16"] = {"enabled": True}
        if mixed_precision != "no":
            diff_dtype = "bf16" if mixed_precision == "fp16" else "fp16"
            if str(ds_config.get(diff_dtype, {}).get("enabled", "False")).lower() == "true":
                raise ValueError(f"`--mixed_precision` {mixed_precision} clashes with `{diff_dtype}`.")
'''

ACCELERATOR = '''
class Accelerator:
    def _prepare_deepspeed(self, *args):
        config_kwargs = {"gradient_clipping": 1.0}
        if batch_size_per_device is not None:
            config_kwargs["train_micro_batch_size_per_gpu"] = batch_size_per_device
'''

LAUNCH = '''
def prepare_deepspeed_cmd_env(args):
    if args.zero_stage is not None:
        current_env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] = str(args.zero_stage)
    cmd.extend(["--hostfile", str(args.deepspeed_hostfile)])
'''


def test_fills_are_read_with_their_locals_guards_and_must_match():
    rules = transformers_rules(TRAINER)
    fills = {f["path"]: f for f in rules["fills"]}
    assert fills["train_batch_size"]["expression"] == (
        "args.world_size * args.per_device_train_batch_size * args.gradient_accumulation_steps")
    assert fills["train_batch_size"]["reads"] == ["gradient_accumulation_steps", "per_device_train_batch_size",
                                                 "world_size"]
    assert fills["train_micro_batch_size_per_gpu"]["must_match"] == "not auto_find_batch_size"
    assert fills["scheduler.params.warmup_min_lr"]["must_match"] is False
    assert fills["zero_optimization.reduce_bucket_size"]["when"] == ["len(hidden_size_auto_keys) > 0"]
    # a name bound under conditions stays a name; its assignments are recorded with their guards
    assert fills["fp16.enabled"]["expression"] == "args.fp16 and backend == 'amp'"
    assert [a["when"] for a in rules["locals"]["trainer_config_process"]["backend"]] == [
        ["args.fp16"], ["not (args.fp16)"]]
    assert rules["mismatch_line"]["template"] == "- ds {ds_key_long}={ds_val} vs hf {hf_key}={hf_val}"
    assert rules["mismatch_error"]["message"] == "Values mismatch:\n{mismatches}\nUse 'auto'."
    assert rules["hidden_size_keys"] == ["zero_optimization.reduce_bucket_size"]
    assert rules["hidden_size_from"] == ["model.config.hidden_size"]
    assert [w["path"] for w in rules["writes"]] == ["checkpoint.use_node_local_storage"]
    assert rules["unread"] == []


def test_a_missing_method_is_recorded_as_unread_not_dropped():
    rules = transformers_rules("class HfTrainerDeepSpeedConfig:\n    def fill_match(self):\n        pass\n")
    assert {u["rule"] for u in rules["unread"]} >= {"HfTrainerDeepSpeedConfig.trainer_config_process",
                                                    "HfTrainerDeepSpeedConfig.trainer_config_finalize"}
    acc = accelerate_rules("class DeepSpeedPlugin:\n    pass\n", "class Accelerator:\n    pass\n", None)
    assert {u["rule"] for u in acc["unread"]} >= {"DeepSpeedPlugin.__post_init__", "Accelerator._prepare_deepspeed",
                                                  "utils/launch.py prepare_deepspeed_cmd_env"}


def test_accelerate_rules_are_read():
    acc = accelerate_rules(PLUGIN, ACCELERATOR, LAUNCH)
    assert acc["plugin_env"]["zero_stage"] == {"env": "ACCELERATE_DEEPSPEED_ZERO_STAGE", "default": 3, "line": 5,
                                               "when": ["self.zero_stage is None"],
                                               "value": "int(os.environ.get('ACCELERATE_DEEPSPEED_ZERO_STAGE', 3))"}
    clip = acc["plugin_env"]["gradient_clipping"]  # through a local
    assert (clip["env"], clip["local"], clip["default"]) == ("ACCELERATE_GRADIENT_CLIPPING", "clip", "auto")
    assert (clip["local_value"], clip["value"]) == ("os.environ.get('ACCELERATE_GRADIENT_CLIPPING', 'auto')", "clip")
    assert acc["plugin_to_config"] == {"zero_stage": "zero_optimization.stage", "gradient_clipping":
                                       "gradient_clipping"}
    mixed = acc["mixed_precision"]
    assert mixed["fills"]["bf16.enabled"] == "mixed_precision == 'bf16'"
    assert [(a["section"], a["value"]) for a in mixed["added_sections"]] == [("bf16", {"enabled": True})]
    assert mixed["clash"]["message"] == "`--mixed_precision` {mixed_precision} clashes with `{diff_dtype}`."
    assert [k["path"] for k in acc["prepare_kwargs"]] == ["gradient_clipping", "train_micro_batch_size_per_gpu"]
    assert acc["launch_env"]["exports"] == {"zero_stage": {"env": "ACCELERATE_DEEPSPEED_ZERO_STAGE",
                                                           "value": "str(args.zero_stage)", "line": 4}}
    assert "deepspeed_hostfile" in acc["launch_env"]["reads"]


def test_the_evaluator_takes_the_rules_shapes_and_refuses_the_rest():
    names = {"args.world_size": 2, "args.per_device_train_batch_size": 4, "args.gradient_accumulation_steps": 3,
             "auto_find_batch_size": False}
    assert evaluate("args.world_size * args.per_device_train_batch_size * args.gradient_accumulation_steps",
                    names) == 24
    assert evaluate("not auto_find_batch_size", names) is True
    assert evaluate("int(0.9 * h * h)", {"h": 10}) == 90
    assert evaluate("x if x >= 1 else math.ceil(n * x)", {"x": 0.25, "n": 10}) == 3
    with pytest.raises(Unreadable):
        evaluate("open('x')", {})
    with pytest.raises(Unreadable):
        evaluate("args.nope", names)


def _run(rules_dict, accelerate_dict, words, **literals):
    from dsfields.hf.arguments import parse_trainer_args
    from dsfields.hf.trainer import trainer_run

    fields = {name: {"type": kind, "default": default, "value_optional": kind == "bool"} for name, kind, default in (
        ("fp16", "bool", False), ("bf16", "bool", False), ("per_device_train_batch_size", "int", 8),
        ("gradient_accumulation_steps", "int", 1), ("max_grad_norm", "float", 1.0),
        ("learning_rate", "float", 5e-5), ("warmup_steps", "float", 0), ("warmup_ratio", "float", 0.0),
        ("max_steps", "int", -1), ("num_train_epochs", "float", 3.0), ("save_on_each_node", "bool", False),
        ("optim", "str", "adamw_torch"), ("lr_scheduler_type", "str", "linear"), ("adam_beta1", "float", 0.9),
        ("adam_beta2", "float", 0.999), ("adam_epsilon", "float", 1e-8), ("weight_decay", "float", 0.0),
        ("fp16_full_eval", "bool", False), ("bf16_full_eval", "bool", False))}
    snap = {"transformers_version": "9.9.9", "training_arguments": {"fields": fields}, "rules": rules_dict}
    args = parse_trainer_args(words, snap, hidden_size=10)
    args.rules = HfRules(snap, {"rules": accelerate_dict}, "9.9")
    config = {"train_micro_batch_size_per_gpu": "auto", "train_batch_size": "auto", "fp16": {"enabled": "auto"},
              "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"},
              "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_num_steps": "auto"}}}
    return trainer_run({**config, **literals}, args, {})


def test_the_run_follows_the_releases_own_expressions():
    rules = {**transformers_rules(TRAINER), "get_warmup_steps": warmup_rule(ARGS_SOURCE)}
    acc = accelerate_rules(PLUGIN, ACCELERATOR, LAUNCH)
    run = _run(rules, acc, "--max_steps 40 --warmup_ratio 0.25 --bf16")
    assert run.error is None, run.error
    cfg = run.config
    assert cfg["zero_optimization"]["reduce_bucket_size"] == 20  # this source's 2 * hidden_size, not 5.24's h*h
    assert cfg["scheduler"]["params"]["warmup_num_steps"] == 10  # its get_warmup_steps: ratio x steps, no max(1, .)
    assert cfg["train_batch_size"] == 8 and run.precision == "bf16"
    # no fill fell back (this fixture has no programs: the optimizer, steps and checks say so on their own)
    assert not [n for n in run.notes if "could not be evaluated" in n and "trainer_config" in n]
    run = _run(rules, acc, "--max_steps 40 --learning_rate 1e-3")  # no fill of optimizer.params.lr here
    assert run.error is None


def test_a_rule_that_cannot_be_evaluated_is_said_and_the_mirror_used():
    rules = transformers_rules(TRAINER.replace('args.fp16 and backend == "amp"', "torch.cuda.ok() and args.fp16"))
    run = _run(rules, accelerate_rules(PLUGIN, ACCELERATOR, LAUNCH), "--max_steps 4")
    assert any("could not be evaluated" in n and "fp16.enabled" in n for n in run.notes)
    assert run.config is not None and run.config["fp16"]["enabled"] is False  # the 5.24.0 fill


def test_the_mismatch_message_is_the_releases():
    rules = {**transformers_rules(TRAINER), "get_warmup_steps": warmup_rule(ARGS_SOURCE)}
    run = _run(rules, accelerate_rules(PLUGIN, ACCELERATOR, LAUNCH), "--max_steps 4 --per_device_train_batch_size 2",
               train_micro_batch_size_per_gpu=4)
    assert run.error is not None and run.error.raised_by == "transformers"
    assert str(run.error) == ("Values mismatch:\n- ds train_micro_batch_size_per_gpu=4 vs hf "
                              "per_device_train_batch_size=2\nUse 'auto'.")
