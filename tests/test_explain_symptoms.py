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
if not SEEDS.is_dir():
    SEEDS = Path("/work/shared/seeds")
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
        assert entry["action"] in ("set_value", "set_auto", "remove_key", "move_key", "rename_key"), path
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
