"""`dsfields convert`'s chain on hand-written accelerate sources: the rule witness reads them, ``hf.plugin`` follows.

The sources below have the shape of accelerate's ``DeepSpeedPlugin`` (utils/dataclasses.py),
``prepare_deepspeed_cmd_env`` (utils/launch.py) and ``BaseConfig`` (commands/config/config_args.py). What is
asserted is what a user relies on: the ds_config comes from the release's own literal and expressions (change the
source, the output follows), the file branch fills ``"auto"`` from the plugin, a refusal carries accelerate's own
message, and back to YAML the plugin-only form is chosen exactly when it rebuilds the config. The real releases are
compared with accelerate itself in tests/test_convert_accelerate.py.
"""

from __future__ import annotations

import math

import pytest

from dsfields.extract.hf.rule_witness import accelerate_rules, config_file_checks, config_file_keys
from dsfields.hf import plugin

pytestmark = pytest.mark.unit

PLUGIN = '''
class DeepSpeedPlugin:
    def __post_init__(self):
        if self.gradient_accumulation_steps is None:
            gas = os.environ.get("ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "auto")
            self.gradient_accumulation_steps = int(gas) if gas.isdigit() else gas
        if self.gradient_clipping is None:
            gradient_clipping = os.environ.get("ACCELERATE_GRADIENT_CLIPPING", "auto")
            self.gradient_clipping = gradient_clipping if gradient_clipping == "auto" else float(gradient_clipping)
        if self.zero_stage is None:
            self.zero_stage = int(os.environ.get("ACCELERATE_DEEPSPEED_ZERO_STAGE", 2))
        if self.offload_optimizer_device is None:
            self.offload_optimizer_device = os.environ.get("ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE", "none")
        if self.offload_optimizer_nvme_path is None:
            self.offload_optimizer_nvme_path = os.environ.get(
                "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_NVME_PATH", "none")
        if self.hf_ds_config is None:
            self.hf_ds_config = os.environ.get("ACCELERATE_DEEPSPEED_CONFIG_FILE", "none")
        if (isinstance(self.hf_ds_config, dict) or (isinstance(self.hf_ds_config, str) and self.hf_ds_config != "none")
                or isinstance(self.hf_ds_config, HfDeepSpeedConfig)):
            if "gradient_accumulation_steps" not in self.hf_ds_config.config:
                self.hf_ds_config.config["gradient_accumulation_steps"] = 1
            if "zero_optimization" not in self.hf_ds_config.config:
                raise ValueError("Please specify the ZeRO optimization config in the DeepSpeed config.")
            self._deepspeed_config_checks()
            plugin_to_config_mapping = {"gradient_accumulation_steps": "gradient_accumulation_steps",
                                        "gradient_clipping": "gradient_clipping",
                                        "zero_stage": "zero_optimization.stage"}
        else:
            config = {
                "train_batch_size": "auto",
                "gradient_accumulation_steps": self.gradient_accumulation_steps,
                "zero_optimization": {
                    "stage": self.zero_stage,
                    "offload_optimizer": {
                        "device": self.offload_optimizer_device,
                        "nvme_path": (
                            self.offload_optimizer_nvme_path if self.offload_optimizer_device == "nvme" else None),
                    },
                },
            }
            if self.gradient_clipping:
                config["gradient_clipping"] = self.gradient_clipping
            self.hf_ds_config = HfDeepSpeedConfig(config)
        self.deepspeed_config = self.hf_ds_config.config
        self.deepspeed_config["steps_per_print"] = float("inf")
        if self.zero3_init_flag is None:
            self.zero3_init_flag = str_to_bool(os.environ.get("ACCELERATE_DEEPSPEED_ZERO3_INIT",
                                                              str(self.hf_ds_config.is_zero3()))) == 1

    def _deepspeed_config_checks(self):
        env_variable_names_to_ignore = ["ACCELERATE_DEEPSPEED_ZERO_STAGE", "ACCELERATE_MIXED_PRECISION"]
        env_variable_names_to_ignore = [
            name.replace("ACCELERATE_", "").replace("DEEPSPEED_", "").lower() for name in env_variable_names_to_ignore]
        if any(name in env_variable_names_to_ignore for name in deepspeed_fields_from_accelerate_config):
            raise ValueError(f"When using `deepspeed_config_file`, these are ignored: {env_variable_names_to_ignore}.")

    def fill_match(self, ds_key_long, mismatches=None, must_match=True, **kwargs):
        raise ValueError(f"`{ds_key_long}` not found in kwargs.")

    def set_mixed_precision(self, mixed_precision):
        ds_config = self.deepspeed_config
        kwargs = {"fp16.enabled": mixed_precision == "fp16", "bf16.enabled": mixed_precision == "bf16"}
        if mixed_precision == "fp16":
            if "fp16" not in ds_config:
                ds_config["fp16"] = {"enabled": True, "auto_cast": True}
        elif mixed_precision == "bf16":
            if "bf16" not in ds_config:
                ds_config["bf16"] = {"enabled": True}
        if mixed_precision != "no":
            diff_dtype = "bf16" if mixed_precision == "fp16" else "fp16"
            if str(ds_config.get(diff_dtype, {}).get("enabled", "False")).lower() == "true":
                raise ValueError(f"`--mixed_precision` {mixed_precision} clashes with `{diff_dtype}`.")
        for dtype in ["fp16", "bf16"]:
            if dtype not in ds_config:
                ds_config[dtype] = {"enabled": False}
'''

ACCELERATOR = '''
class Accelerator:
    def _prepare_deepspeed(self, *args):
        config_kwargs = {"gradient_clipping": 1.0}
'''

LAUNCH = '''
def prepare_deepspeed_cmd_env(args):
    current_env["ACCELERATE_CONFIG_DS_FIELDS"] = str(args.deepspeed_fields_from_accelerate_config).lower()
    if args.zero_stage is not None:
        current_env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] = str(args.zero_stage)
    if args.gradient_accumulation_steps is not None:
        current_env["ACCELERATE_GRADIENT_ACCUMULATION_STEPS"] = str(args.gradient_accumulation_steps)
    if args.gradient_clipping is not None:
        current_env["ACCELERATE_GRADIENT_CLIPPING"] = str(args.gradient_clipping).lower()
    if args.offload_optimizer_device is not None:
        current_env["ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE"] = str(args.offload_optimizer_device).lower()
    if args.zero3_init_flag is not None:
        current_env["ACCELERATE_DEEPSPEED_ZERO3_INIT"] = str(args.zero3_init_flag).lower()
    if args.deepspeed_config_file is not None:
        current_env["ACCELERATE_DEEPSPEED_CONFIG_FILE"] = str(args.deepspeed_config_file)
    cmd.extend(["--hostfile", str(args.deepspeed_hostfile)])
'''

CONFIG_ARGS = '''
class BaseConfig:
    compute_environment: ComputeEnvironment
    distributed_type: DistributedType
    mixed_precision: str
    deepspeed_config: dict

    @classmethod
    def from_yaml_file(cls, yaml_file=None):
        config_dict = cls.process_config(config_dict)
        extra_keys = sorted(set(config_dict.keys()) - set(cls.__dataclass_fields__.keys()))
        if len(extra_keys) > 0:
            raise ValueError(f"The config file at {yaml_file} had unknown keys ({extra_keys}), upgrade.")

    @staticmethod
    def process_config(config_dict):
        if "fp16" in config_dict:
            del config_dict["fp16"]


class ClusterConfig(BaseConfig):
    num_processes: int = -1
    num_machines: int = 1
'''


def rules(plugin_source: str = PLUGIN) -> dict:
    found = accelerate_rules(plugin_source, ACCELERATOR, LAUNCH)
    found["config_file_keys"] = config_file_keys(CONFIG_ARGS)
    found["config_file_checks"] = config_file_checks(CONFIG_ARGS)
    return found


def yaml(ds: dict, mixed: str | None = "bf16", **top) -> dict:
    data = {"compute_environment": "LOCAL_MACHINE", "distributed_type": "DEEPSPEED", "deepspeed_config": ds, **top}
    if mixed is not None:
        data["mixed_precision"] = mixed
    return data


def test_a_plugin_only_yaml_gives_the_release_s_literal_with_the_launch_s_values():
    built = plugin.build(yaml({"zero_stage": 3, "gradient_accumulation_steps": 4, "gradient_clipping": 1.0,
                               "offload_optimizer_device": "nvme", "offload_optimizer_nvme_path": "/nvme",
                               "zero3_init_flag": True}), "9.9", rules=rules())
    config = dict(built.config)
    assert math.isinf(config.pop("steps_per_print"))
    assert config == {"train_batch_size": "auto", "gradient_accumulation_steps": 4, "gradient_clipping": 1.0,
                      "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "none"}},
                      "bf16": {"enabled": True}, "fp16": {"enabled": False}}
    assert built.attributes["zero3_init_flag"] is True
    said = " ".join(en for en, _zh in built.notes)
    # the launch never exports the nvme path: the plugin's default "none" is what DeepSpeed gets, and it is said
    assert "deepspeed_config.offload_optimizer_nvme_path: accelerate 9.9's launch never passes it on" in said
    assert "steps_per_print: accelerate sets it to infinity" in said and "zero3_init_flag: true" in said
    assert "steps_per_print" not in built.file_config()


def test_the_output_follows_the_release_s_source_not_a_table():
    """A release whose literal adds a key, or whose default stage differs, gives that ds_config."""
    changed = PLUGIN.replace('"train_batch_size": "auto",',
                             '"train_batch_size": "auto", "wall_clock_breakdown": False,')
    changed = changed.replace('"ACCELERATE_DEEPSPEED_ZERO_STAGE", 2)', '"ACCELERATE_DEEPSPEED_ZERO_STAGE", 1)')
    built = plugin.build(yaml({}, mixed="no"), "9.9", rules=rules(changed))
    assert built.config["wall_clock_breakdown"] is False and built.config["zero_optimization"]["stage"] == 1
    assert built.config["gradient_accumulation_steps"] == "auto" and built.config["gradient_clipping"] == "auto"
    assert plugin.build(yaml({}, mixed="no"), "9.9", rules=rules()).config["zero_optimization"]["stage"] == 2


def test_a_config_file_has_its_auto_filled_by_the_plugin_and_its_refusals_are_accelerate_s():
    given = {"zero_optimization": {"stage": "auto"}, "gradient_clipping": "auto", "bf16": {"enabled": "auto"}}
    built = plugin.build(yaml({"deepspeed_config_file": "ds.json", "zero3_init_flag": False}, mixed=None), "9.9",
                         config_files={"ds.json": given}, rules=rules())
    assert built.config["zero_optimization"]["stage"] == 2  # the plugin's default fills "auto"
    assert built.config["gradient_accumulation_steps"] == 1 and built.config["gradient_clipping"] == "auto"
    # no mixed precision: set_mixed_precision fills bf16.enabled "auto" with False (the given dict is not changed)
    assert built.config["bf16"] == {"enabled": False} and given["zero_optimization"]["stage"] == "auto"
    with pytest.raises(plugin.AccelerateRefusal, match="Please specify the ZeRO optimization config"):
        plugin.build(yaml({"deepspeed_config_file": "ds.json"}, mixed=None), "9.9", config_files={"ds.json": {}},
                     rules=rules())
    with pytest.raises(plugin.AccelerateRefusal, match="When using `deepspeed_config_file`, these are ignored"):
        plugin.build(yaml({"deepspeed_config_file": "ds.json"}, mixed="fp16"), "9.9",
                     config_files={"ds.json": given}, rules=rules())


def test_a_top_level_key_the_release_lacks_is_refused_with_its_message():
    with pytest.raises(plugin.AccelerateRefusal) as refused:
        plugin.build(yaml({}, enable_cpu_affinity=False), "9.9", name="a.yaml", rules=rules())
    assert refused.value.message == "The config file at a.yaml had unknown keys (['enable_cpu_affinity']), upgrade."
    assert refused.value.where == "commands/config/config_args.py"


def test_back_to_yaml_is_plugin_only_exactly_when_the_plugin_rebuilds_the_config():
    found = rules()
    built = plugin.build(yaml({"zero_stage": 1, "gradient_accumulation_steps": 8}, mixed="fp16"), "9.9",
                         rules=found)
    data, notes = plugin.to_accelerate(built.file_config(), "ds.json", "9.9", 4, rules=found)
    assert data["mixed_precision"] == "fp16" and data["deepspeed_config"]["zero_stage"] == 1
    assert "deepspeed_config_file" not in data["deepspeed_config"] and data["num_processes"] == 4
    assert plugin.build(data, "9.9", rules=found).config == built.config
    extra = {**built.file_config(), "optimizer": {"type": "AdamW"}}
    data, notes = plugin.to_accelerate(extra, "ds.json", "9.9", rules=found)
    assert data["deepspeed_config"] == {"deepspeed_config_file": "ds.json", "zero3_init_flag": False}
    assert "mixed_precision" not in data
    assert any("cannot hold" in en and "optimizer.type" in en for en, _zh in notes)
    with pytest.raises(plugin.AccelerateRefusal, match="Please specify the ZeRO optimization config"):
        plugin.to_accelerate({"optimizer": {"type": "AdamW"}}, "ds.json", "9.9", rules=found)


@pytest.mark.parametrize("text", ["no", "'no'", "1.0", "1e-3", "[]", "{}", "~", "On", "3", "1_0"])
def test_yaml_scalars_are_read_as_pyyaml_reads_them(text):
    from dsfields.hf.arguments import _yaml_scalar

    expected = {"no": False, "'no'": "no", "1.0": 1.0, "1e-3": "1e-3", "[]": [], "{}": {}, "~": None, "On": True,
                "3": 3, "1_0": 10}[text]
    assert _yaml_scalar(text) == expected and type(_yaml_scalar(text)) is type(expected)


def test_dumped_yaml_reads_back_the_same():
    from dsfields.hf.arguments import parse_accelerate_yaml

    data = {"a": "no", "b": {"c": None, "d": 1.5, "e": "x: y", "f": True, "g": "it's"}, "h": 3}
    assert parse_accelerate_yaml(plugin.dump_yaml(data), "t") == data
