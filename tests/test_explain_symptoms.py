"""Issue 38: the words users write for DeepSpeed's silent misreadings (``prose/symptoms.json``, keyed by JSON path),
in English and Chinese, checked against the newest snapshot and the seeds' vocabulary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dsfields.explain import explain_text
from dsfields.model.store import available_versions, load, repo_generated_dir

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "extractor" / "dsfields" / "prose" / "symptoms.json"
SEEDS = REPO.parent / "shared" / "seeds"
ENTRIES = {k: v for k, v in json.loads(TABLE.read_text(encoding="utf-8")).items() if not k.startswith("#")}


def test_every_path_is_a_field_or_section_of_the_newest_release() -> None:
    snapshot = load(available_versions(repo_generated_dir())[-1])
    known = set(snapshot.fields) | set(snapshot.raw.get("sections", {}))
    assert ENTRIES and not set(ENTRIES) - known, set(ENTRIES) - known


def test_entries_are_bilingual_and_their_seed_words_come_from_the_seeds() -> None:
    seeds = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt"))) if SEEDS.is_dir() else ""
    if not seeds:
        pytest.skip(f"the seeds are missing at {SEEDS}")
    for path, entry in ENTRIES.items():
        assert entry["action"] in ("set_value", "set_auto", "remove_key", "move_key", "rename_key",
                                   "code_or_tool"), path
        assert entry["words"]["en"] and entry["words"]["zh"], path
        for word in entry["seed"]:
            assert word in entry["words"]["zh"] and word in seeds, (path, word)
        for part in ("why", "fix"):
            zh = entry[part]["zh"]
            # no English sentence in Chinese: ASCII runs are identifiers, values or flags, never three plain words
            assert not re.search(r"\b[a-z]{2,}\s+[a-z]{2,}\s+[a-z]{2,}\b", re.sub(r"`[^`]*`|\"[^\"]*\"", "", zh)), zh
            assert re.search(r"[\u4e00-\u9fff]", zh), zh


@pytest.mark.parametrize(("text", "lang", "path", "action"), [
    ("deepspeed ZeRO stage3 全量微调baichuan13b模型 保存的模型（pytorch_model.bin）只有905kb", "zh",
     "zero_optimization.stage3_gather_16bit_weights_on_model_save", "set_value"),
    ("I saved the model with zero3 and pytorch_model.bin is only 400M", "en",
     "zero_optimization.stage3_gather_16bit_weights_on_model_save", "set_value"),
    ("offload 没有效果", "zh", "zero_optimization.offload_optimizer", "move_key"),
    ("my offload does nothing", "en", "zero_optimization.offload_optimizer", "move_key"),
    ("开了 offload_param 显存没有减少", "zh", "zero_optimization.offload_param", "set_value"),
    ("梯度累积 设置了没有效果", "zh", "gradient_accumulation_steps", "set_auto"),
    ("梯度裁剪不起作用，grad_norm 超过 1", "zh", "gradient_clipping", "set_auto"),
    ("--lr_scheduler_type cosine 不起作用，学习率一直不变", "zh", "scheduler", "remove_key"),
])
def test_symptom_words_land_on_their_misreading(text: str, lang: str, path: str, action: str) -> None:
    answer = explain_text(text, lang=lang)
    assert answer.placed and answer.causes, text
    first = answer.causes[0]
    assert first.keys[0] == path and first.action == action, (text, first.keys, first.action)
    if lang == "zh":
        assert re.search(r"[\u4e00-\u9fff]", first.why + first.fix)


@pytest.mark.parametrize(("text", "path", "action"), [
    # a pasted config: check's warnings about the keys it writes, whatever words the user chose
    ('I tried a simple config:\n{\n    "zero_optimization": true\n}\nand saw only 20% more speed', "zero_optimization",
     "set_value"),
    # sections DeepSpeed reads only where the model code asks for them
    ('When I set the config like this, the memory remains the same. It doesn\'t work!\n"activation_checkpointing": {\n'
     '  "partition_activations": true,\n  "cpu_checkpointing": true\n}', "activation_checkpointing", "code_or_tool"),
    ('I tried pipeline configs like\n"pipeline": {\n  "stages": 8\n}\nbut the changes I make have no effect on '
     'training.', "pipeline", "code_or_tool"),
    # one line from inside a section is an excerpt, not a config written at the top level
    ('I saved the model and it was only 400M.\n    "stage3_gather_16bit_weights_on_model_save": false',
     "zero_optimization.stage3_gather_16bit_weights_on_model_save", "set_value"),
])
def test_pasted_config_and_section_symptoms(text: str, path: str, action: str) -> None:
    answer = explain_text(text)
    assert answer.placed and answer.causes and not answer.not_config, text
    assert (answer.causes[0].keys[0], answer.causes[0].action) == (path, action)


def test_log_lines_of_deepspeed_parts_that_read_no_config_are_not_config() -> None:
    """The launcher's log heads name files the message catalogue never scans (it reads no ds_config); the
    same words in autotuning/utils.py, which is scanned, must not win."""
    paste = ("[2023-06-06 02:44:00,164] [WARNING] [runner.py:191:fetch_hostfile] Unable to find hostfile, will "
             "proceed with training with local resources only.\n"
             "[2023-06-06 02:44:00,195] [INFO] [runner.py:541:main] cmd = python -u -m deepspeed.launcher.launch "
             "--world_info=e30= --master_addr=127.0.0.1 /hostfile main.py --model_name_or_path facebook/opt-125m")
    answer = explain_text(paste)
    assert answer.not_config and not any(c.keys for c in answer.causes), answer.as_json()


def test_a_users_own_words_do_not_match_a_message_by_a_few_common_words() -> None:
    """No line of program output: most of a message's words are needed (here "deepspeed", "setting" and "from"
    were enough to name fp16.loss_scale)."""
    answer = explain_text("Can this model be trained with Deepspeed support? I have tried a config setting from "
                          "the README and saw a 20% increase in training speed")
    assert not any("fp16.loss_scale" in c.keys for c in answer.causes), answer.as_json()


def test_a_fractional_integer_is_the_trainer_fill_that_gives_it() -> None:
    """No field name in pydantic's line: 11560550.4 is 0.9 x 3584 x 3584, the Trainer's prefetch fill (its formula
    learnt from the fill code itself, not typed here)."""
    answer = explain_text("deepspeed-zero3: Input should be a valid integer, got a number with a fractional part "
                          "[type=int_from_float, input_value=11560550.4, input_type=float]")
    first = answer.causes[0]
    assert (first.keys, first.action) == (["zero_optimization.stage3_prefetch_bucket_size"], "set_value")
    assert "3584" in first.fix and "11560550" in first.fix


def test_a_third_party_refusal_of_a_zero_stage_names_the_stage_key() -> None:
    answer = explain_text('  raise ValueError("DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized models.")\n'
                          "ValueError: DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized models.")
    first = answer.causes[0]
    assert (first.keys, first.action, answer.layer) == (["zero_optimization.stage"], "set_value", "other")


def test_a_traceback_flattened_onto_one_line_keeps_its_code_and_exception() -> None:
    answer = explain_text('File "xxx/deepspeed/runtime/lr_schedules.py", line 661, in __init__ self.warmup_num_steps = '
                          "max(2, warmup_num_steps) TypeError: '>' not supported between instances of 'str' and 'int'")
    assert answer.causes[0].keys == ["scheduler.params.warmup_num_steps"], answer.as_json()


def test_a_division_by_zero_on_a_line_reading_a_key_names_the_key() -> None:
    """pytest's rendering of the failure (the "> " source line, "E " exception, "path:line: Kind")."""
    answer = explain_text("        self.warmup_num_steps = warmup_num_steps\n"
                          ">       self.inverse_log_warm_up = 1.0 / math.log(warmup_num_steps)\n"
                          "E       ZeroDivisionError: float division by zero\n\n"
                          "DeepSpeed/deepspeed/runtime/lr_schedules.py:710: ZeroDivisionError")
    first = answer.causes[0]
    assert (first.keys, first.action) == (["scheduler.params.warmup_num_steps"], "set_value"), answer.as_json()


def test_a_traceback_of_imports_only_is_not_a_config_problem() -> None:
    answer = explain_text('  File "/x/site-packages/deepspeed/ops/__init__.py", line 6, in <module>\n'
                          "    from . import adam\n"
                          '  File "/x/site-packages/deepspeed/utils/groups.py", line 28, in <module>\n'
                          "    from deepspeed import comm as dist\n"
                          '  File "/x/site-packages/deepspeed/comm/comm.py", line 30, in <module>\n    from deepspeed')
    assert answer.not_config and answer.layer == "environment" and not any(c.keys for c in answer.causes)


def test_init_inferences_validation_error_names_its_keys_and_aliases() -> None:
    """pydantic 1's nested location ("zero -> fp16") and the inference document's alias ("tp")."""
    answer = explain_text(".ValidationError: 3 validation errors for DeepSpeedInferenceConfig\ntp\n"
                          "  value is not a valid dict (type=type_error.dict)\nzero -> fp16\n"
                          "  extra fields not permitted (type=value_error.extra)\n")
    assert [(c.keys, c.action) for c in answer.causes] == [(["tensor_parallel"], "set_value"),
                                                           (["zero.fp16"], "remove_key")], answer.as_json()
