"""Unit tests of issue 38's pieces that need no snapshot: the message reader (ast → pattern, keys) and the paste
normaliser. The committed catalogue and the explainer's answers are tested in test_explain_data.py."""

from __future__ import annotations

import pytest

from dsfields.explain import Message, normalise
from dsfields.extract.message_catalogue import literal_text, message_id, scan_modules

pytestmark = pytest.mark.unit

SNAPSHOT = {
    "fields": {
        "train_batch_size": {"key": "train_batch_size", "section": "", "constant": {"name": "TRAIN_BATCH_SIZE"},
                             "source": {"file": "deepspeed/runtime/config.py", "function": "get_train_batch_size"}},
        "zero_optimization.stage": {"key": "stage", "section": "zero_optimization", "python_name": "stage",
                                    "source": {"file": "deepspeed/runtime/zero/config.py"}},
        "zero_optimization.zero_quantized_weights": {
            "key": "zero_quantized_weights", "section": "zero_optimization", "python_name": "zero_quantized_weights",
            "source": {"file": "deepspeed/runtime/zero/config.py"}},
        "fp16.loss_scale": {"key": "loss_scale", "section": "fp16", "source": {"file": "deepspeed/runtime/config.py"}},
    },
    "sections": {"": {}, "zero_optimization": {"model": "deepspeed.runtime.zero.config.DeepSpeedZeroConfig"},
                 "fp16": {}},
}

CONFIG = '''
def get_train_batch_size(param_dict):
    return param_dict.get(TRAIN_BATCH_SIZE, None)

class DeepSpeedConfig:
    def _initialize_params(self, param_dict):
        self.train_batch_size = get_train_batch_size(param_dict)
        self.zero_config = DeepSpeedZeroConfig(**param_dict.get("zero_optimization", {}))
        self.zero_optimization_stage = self.zero_config.stage

    def _batch_assertion(self):
        train_batch = self.train_batch_size
        assert train_batch > 0, f"Train batch size: {train_batch} has to be greater than 0"
        if self.zero_optimization_stage > 2:
            msg = "stage %d needs %s" % (self.zero_optimization_stage, "x")
            raise ValueError(msg)
        logger.warning("Using {} with {{braces}}".format(self.train_batch_size))
        logger.info("progress only, no key here at all")
'''
ENGINE = '''
class DeepSpeedEngine:
    def zero_optimization_stage(self):
        return self._config.zero_optimization_stage

    def _configure(self):
        assert self.zero_optimization_stage() != 1, "ZeRO stage one is refused in this release"
'''
QUANT = '''
def quantize(param, groups):
    assert param.numel() % (8 * groups) == 0, f"Quantized weights need a multiple of 8, {param.numel()} is not"
'''


def scanned() -> list[dict]:
    sources = {"deepspeed/runtime/config.py": CONFIG, "deepspeed/runtime/engine.py": ENGINE,
               "deepspeed/runtime/zero/partition_parameters.py": QUANT}
    entries, failed = scan_modules(sources, SNAPSHOT)
    assert not failed
    return entries


def by_text(entries: list[dict], text: str) -> dict:
    found = [e for e in entries if text in e["pattern"]]
    assert len(found) == 1, (text, [e["pattern"] for e in entries])
    return found[0]


def test_an_fstring_becomes_a_pattern_with_wildcards_and_its_key_from_a_local_variable() -> None:
    entry = by_text(scanned(), "Train batch size")
    assert entry["pattern"] == "Train batch size: {train_batch} has to be greater than 0"
    assert entry["keys"] == ["train_batch_size"]
    assert entry["kind"] == "assert" and entry["type"] == "AssertionError"
    assert entry["condition"] == "train_batch > 0"
    assert (entry["file"], entry["line"]) == ("deepspeed/runtime/config.py", 13)


def test_percent_format_through_a_variable_and_the_enclosing_if_give_the_key() -> None:
    entry = by_text(scanned(), "needs")
    assert entry["pattern"] == "stage {self.zero_optimization_stage} needs {'x'}"
    assert entry["keys"] == ["zero_optimization.stage"]
    assert entry["condition"] == "self.zero_optimization_stage > 2"


def test_dot_format_keeps_literal_braces_doubled() -> None:
    entry = by_text(scanned(), "Using")
    assert entry["pattern"] == "Using {self.train_batch_size} with {{braces}}"
    assert literal_text(entry["pattern"]).split() == ["Using", "with", "{braces}"]


def test_an_engine_accessor_maps_to_the_config_attribute_it_returns() -> None:
    assert by_text(scanned(), "stage one")["keys"] == ["zero_optimization.stage"]


def test_a_message_with_no_key_takes_the_fields_of_its_folders_section_named_by_its_words() -> None:
    entry = by_text(scanned(), "Quantized weights")
    assert entry["section"] == "zero_optimization"
    assert entry["keys"] == ["zero_optimization.zero_quantized_weights"]


def test_an_info_log_naming_no_key_is_progress_not_a_message() -> None:
    assert not [e for e in scanned() if "progress only" in e["pattern"]]


def test_ids_are_stable_and_ignore_what_fills_a_field() -> None:
    assert message_id("assert", "AssertionError", "a {x} b") == message_id("assert", "AssertionError", "a {y}  b")
    assert message_id("assert", "AssertionError", "a {x} b") != message_id("raise", "ValueError", "a {x} b")
    assert message_id("raise", "ValueError", "x").startswith("DS")


def test_the_pattern_matches_its_message_once_formatted() -> None:
    message = Message("DS00001", "assert", "AssertionError",
                      "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
                      "gradient_acc_step * world_size {train_batch} != {micro_batch} * {grad_acc} * {ws}", "deepspeed")
    wrapped = ("AssertionError: Check batch related parameters. train_batch_size is not\nequal to "
               "micro_batch_per_gpu * gradient_acc_step * world_size 64 != 4 *\n8 * 1")
    match = message.regex().search(normalise(wrapped).flat)
    assert match is not None and match.group(1) == "64"


def test_normalise_strips_colours_rank_prefixes_and_rich_frames() -> None:
    paste = ("\x1b[31m[rank0]: Traceback (most recent call last):\x1b[0m\n"
             '[rank0]:   File "/x/site-packages/deepspeed/runtime/engine.py", line 1080, in _do_sanity_check\n'
             "│ ❱  891 │   │   assert train_batch == micro_batch │\n"
             "[rank0]: ValueError: Type fp16 is not supported.\x07\n")
    result = normalise(paste)
    assert result.frames == [("deepspeed/runtime/engine.py", 1080, "_do_sanity_check")]
    assert result.exceptions == [("ValueError", "Type fp16 is not supported.")]
    assert result.source_lines == ["assert train_batch == micro_batch"]
    assert "\x1b" not in result.flat and "\x07" not in result.flat and "[rank0]" not in result.flat


def test_normalise_is_bounded_on_a_huge_or_binary_paste() -> None:
    huge = normalise(b"\x00\xff" * (3 << 20) + b"\nValueError: boom at the end")
    assert len(huge.flat) <= 2_100_000
    assert huge.exceptions[-1] == ("ValueError", "boom at the end")


def test_a_log_call_with_arguments_is_percent_formatted_by_logging() -> None:
    source = 'def f(names):\n    logger.warning("per head: %s stay on the full path (%d)", names, len(names))\n'
    entries, _ = scan_modules({"deepspeed/runtime/x.py": source}, SNAPSHOT)
    assert [e["pattern"] for e in entries] == ["per head: {names} stay on the full path ({len(names)})"]


def test_an_attribute_chain_through_a_model_names_the_nested_key() -> None:
    snapshot = {
        "fields": {
            "zero_optimization.offload_param": {"key": "offload_param", "section": "zero_optimization",
                                                "python_name": "offload_param"},
            "zero_optimization.offload_param.nvme_path": {
                "key": "nvme_path", "section": "zero_optimization.offload_param", "python_name": "nvme_path"},
            "zero_optimization.offload_optimizer.nvme_path": {
                "key": "nvme_path", "section": "zero_optimization.offload_optimizer", "python_name": "nvme_path"},
        },
        "sections": {"": {}, "zero_optimization": {"model": "m.DeepSpeedZeroConfig"},
                     "zero_optimization.offload_param": {"model": "m.DeepSpeedZeroOffloadParamConfig"},
                     "zero_optimization.offload_optimizer": {}},
    }
    config = ("def get_zero_config(d):\n    return DeepSpeedZeroConfig(**d)\n\nclass C:\n    def f(self, d):\n"
              "        self.zero_config = get_zero_config(d)\n")
    check = ("def v(ds_config):\n    assert ds_config.zero_config.offload_param.nvme_path is not None, "
             "'\"nvme_path\" cannot be None for nvme'\n")
    entries, _ = scan_modules({"deepspeed/runtime/config.py": config, "deepspeed/runtime/zero/p.py": check}, snapshot)
    assert [e["keys"] for e in entries] == [["zero_optimization.offload_param.nvme_path"]]
