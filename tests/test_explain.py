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
    assert entry["condition"] == "train_batch <= 0"  # when the message appears: the assert failing
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


# The audit of round 3: a shared constant, an assert under an `if`, a quantizer's words, an info log.

def test_a_constant_several_sections_share_is_narrowed_by_what_else_the_check_reads() -> None:
    snapshot = {"fields": {}, "sections": {"": {}, "compression_training": {}, "amp": {}, "bf16": {}}}
    for path, constant in (("amp.enabled", "ENABLED"), ("bf16.enabled", "ENABLED"),
                           ("compression_training.activation_quantization", "ACTIVATION_QUANTIZATION"),
                           ("compression_training.activation_quantization.different_groups", "DIFFERENT_GROUPS"),
                           ("compression_training.channel_pruning.different_groups", "DIFFERENT_GROUPS"),
                           ("compression_training.activation_quantization.shared_parameters", "SHARED_PARAMETERS"),
                           ("compression_training.channel_pruning.shared_parameters", "SHARED_PARAMETERS"),
                           ("compression_training.activation_quantization.shared_parameters.enabled", "ENABLED"),
                           ("compression_training.channel_pruning.shared_parameters.enabled", "ENABLED")):
        snapshot["fields"][path] = {"key": path.rsplit(".", 1)[-1], "constant": {"name": constant},
                                    "source": {"file": "deepspeed/compression/config.py"}}
    source = '''
def get_activation_quantization(param_dict):
    output = {}
    sub_param_dict = param_dict[ACTIVATION_QUANTIZATION]
    output[SHARED_PARAMETERS] = get_shared(sub_param_dict)
    if output[SHARED_PARAMETERS][ENABLED]:
        assert DIFFERENT_GROUPS in sub_param_dict.keys(
        ), f"Activation Quantization is enabled, {DIFFERENT_GROUPS} must be specified"
'''
    entries, _ = scan_modules({"deepspeed/compression/config.py": source}, snapshot)
    entry = by_text(entries, "must be specified")
    assert entry["keys"] == ["compression_training.activation_quantization.different_groups",
                             "compression_training.activation_quantization.shared_parameters.enabled"]
    # when the message appears: enabled and the groups absent (not "groups present and enabled")
    assert entry["condition"] == "DIFFERENT_GROUPS not in sub_param_dict.keys() and output[SHARED_PARAMETERS][ENABLED]"


def test_an_assert_under_an_if_is_reported_when_the_if_holds_and_the_assert_fails() -> None:
    source = '''
class DeepSpeedEngine:
    def _do_sanity_check(self):
        if not self.managed_gradient_accumulation():
            assert not self.pipeline_parallelism, \\
                "managed_gradient_accumulation=False is not supported with pipeline parallelism"
        if self.train_batch_size > 1:
            pass
        else:
            raise ValueError("a train batch size of one is refused here")
'''
    entries, _ = scan_modules({"deepspeed/runtime/engine.py": source}, SNAPSHOT)
    # DeepSpeed asks for "managed or no pipeline": leaving managed_gradient_accumulation true answers it
    assert by_text(entries, "pipeline parallelism")["condition"] == (
        "self.pipeline_parallelism and not self.managed_gradient_accumulation()")
    assert by_text(entries, "one is refused")["condition"] == "self.train_batch_size <= 1"


def test_a_catalogue_assert_condition_is_worded_as_when_the_message_is_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dsfields import explain
    from dsfields.explain import Occurrence, _fix

    monkeypatch.setattr(explain, "_universe", lambda layer: ["0.19.8"])

    message = Message("DS00002", "assert", "AssertionError",
                      "managed_gradient_accumulation=False is not supported with pipeline parallelism", "deepspeed")
    occurrence = Occurrence("0.19.8", "deepspeed/runtime/engine.py", 2033, ["managed_gradient_accumulation"],
                            "self.pipeline_parallelism and not self.managed_gradient_accumulation()", None)
    message.occurrences.append(occurrence)
    _, fix, _ = _fix(message, occurrence, occurrence.keys, "en")
    assert "reported when: `self.pipeline_parallelism and not self.managed_gradient_accumulation()`" in fix


def test_words_of_a_message_name_a_key_only_when_the_words_it_lacks_are_qualifiers() -> None:
    from dsfields.model.wording import keys_named_by_words

    paths = ["zero_optimization.sub_group_size", "zero_optimization.zero_quantized_weights",
             "zero_optimization.stage3_prefetch_bucket_size"]
    text = "Adaptive grouping algorithm cannot find a group size for input tensor of size"
    assert keys_named_by_words(text, "zero_optimization", paths) == []  # "sub" is a word of its own
    assert keys_named_by_words("the prefetch bucket size must be", "zero_optimization", paths) == [
        "zero_optimization.stage3_prefetch_bucket_size"]
    assert keys_named_by_words("Quantized weights need", "zero_optimization", paths) == [
        "zero_optimization.zero_quantized_weights"]
    field = {"key": "sub_group_size", "source": {"file": "deepspeed/runtime/zero/config.py"}}
    snapshot = {"fields": {"zero_optimization.sub_group_size": field}, "sections": {"": {}, "zero_optimization": {}}}
    source = '''
class CUDAQuantizer:
    target_group_size = 8000

    def quantize(self, param, groups=None):
        assert param.numel(
        ) > groups, f"Adaptive grouping algorithm cannot find a group size for input tensor of size {param.numel()}"
'''
    entries, _ = scan_modules({"deepspeed/runtime/zero/partition_parameters.py": source}, snapshot)
    assert by_text(entries, "Adaptive grouping")["keys"] == []


def test_an_info_log_is_about_what_it_says_not_the_value_it_prints_and_asks_for_no_change() -> None:
    from dsfields.explain import Occurrence, _fix

    source = '''
def configure(zero_stage):
    if dist.get_rank() == 0:
        logger.info(f"--------- the configured value is {TRAIN_BATCH_SIZE}")
        logger.info(f"Checkpointing the train_batch_size of {zero_stage}")
'''
    entries, _ = scan_modules({"deepspeed/runtime/x.py": source}, SNAPSHOT)
    assert [e["pattern"] for e in entries] == ["Checkpointing the train_batch_size of {zero_stage}"]
    message = Message("DS00003", "log", "info", entries[0]["pattern"], "deepspeed")
    occurrence = Occurrence("0.19.8", "deepspeed/runtime/x.py", 5, entries[0]["keys"], entries[0]["condition"], None)
    message.occurrences.append(occurrence)
    for lang in ("en", "zh"):
        action, fix, _ = _fix(message, occurrence, occurrence.keys, lang)
        assert action == "no_change" and "`train_batch_size`" in fix
    assert "nothing to change" in _fix(message, occurrence, occurrence.keys, "en")[1]


def test_a_plain_english_word_that_is_also_a_key_counts_only_quoted() -> None:
    """ "Expert checkpoint file not found" is about a file, not the ``checkpoint`` section; "`checkpoint` must be a
    dict" names it."""
    snapshot = {**SNAPSHOT, "fields": {**SNAPSHOT["fields"], "checkpoint": {
        "key": "checkpoint", "section": "", "source": {"file": "deepspeed/runtime/config.py"}}}}
    source = '''
def load(path):
    if not path:
        raise ValueError(f"Expert checkpoint file not found: {path}")
    if path == 2:
        raise ValueError("`checkpoint` must be a dict of options")
'''
    entries, _ = scan_modules({"deepspeed/runtime/x.py": source}, snapshot)
    keys = {e["pattern"]: e["keys"] for e in entries}
    assert keys == {"Expert checkpoint file not found: {path}": [],
                    "`checkpoint` must be a dict of options": ["checkpoint"]}
