"""Sentences issue 39 found wrong, each as DeepSpeed's source of the release shown says (data lane).

Every case names what was read: the sdists of the releases cited (``pip download --no-deps --no-binary :all:
deepspeed==V``). A case runs ``lookup`` (or ``check``/``resolve``) the way a reader would, in both languages, and
fails on the old sentence.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from dsfields.cli import main

pytestmark = pytest.mark.data


def ask(*args: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        main(list(args))
    return " ".join(out.getvalue().split())


def explanation(path: str, version: str, lang: str) -> str:
    data = json.loads(ask("lookup", path, "--version", version, "--lang", lang, "--json"))
    ex = data["matches"][0]["explanation"] or {}
    return " ".join(str(ex.get(part) or "") for part in ("summary", "body", "pitfall"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prof_all_names_functions_that_exist(lang):
    """``deepspeed.comm`` has no ``start_profiling_comms``: the methods are the CommsLogger's
    (``deepspeed.comm.comms_logger``), and ``deepspeed.comm.configure(prof_all=...)`` sets it (0.9.5, 0.19.8).
    ``stop_profiling_comms`` set ``prof_all = True`` up to 0.19.2 and False from 0.19.3 on (0.19.2/0.19.3 read)."""
    for version in ("0.9.5", "0.19.2", "0.19.3", "0.19.8"):
        text = explanation("comms_logger.prof_all", version, lang)
        assert "deepspeed.comm.start_profiling_comms" not in text
        assert "deepspeed.comm.configure(prof_all=" in text and "comms_logger.start_profiling_comms()" in text
        warns = "configure(prof_all=False)" in text
        assert warns == (version in ("0.9.5", "0.19.2")), version


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_min_difficulty_rounds_down_until_0_19_7(lang):
    """CurriculumScheduler.__fixed_root_get_difficulty floors to a multiple of difficulty_step (0.19.6 read), which
    can go below min_difficulty; 0.19.7 raises it to the first multiple at or above min_difficulty."""
    old = explanation("curriculum_learning.min_difficulty", "0.19.6", lang)
    new = explanation("curriculum_learning.min_difficulty", "0.19.7", lang)
    assert "56" in old and "56" not in new
    never_below = "at or above `min_difficulty`" if lang == "en" else "不小于 `min_difficulty`"
    assert never_below in new and never_below not in old


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_module_depth_minus_one_leaves_out_the_innermost_level(lang):
    """print_model_aggregated_profile: ``depth = len(info) - 1`` then ``range(depth)`` (0.19.8)."""
    text = explanation("flops_profiler.module_depth", "0.19.8", lang)
    assert ("-1 means all" not in text) and ("-1 表示全部" not in text)
    assert "except the innermost" in text if lang == "en" else "除最内层" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nebula_skips_every_load_of_the_first_tag(lang):
    """NebulaCheckpointEngine.load: ``first_load_flag = self.tag_flag is None or self.tag_flag == tag`` (0.9.5,
    0.19.2): every file of the first tag loaded goes to torch.load, not only the first call."""
    text = explanation("nebula.enable_nebula_load", "0.19.2", lang)
    assert "tag" in text
    assert "On the first load call" not in text and "第一次调用 load 时" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_layer_reduction_has_no_shared_parameters(lang):
    """compression_training.layer_reduction has neither shared_parameters nor different_groups (its keys in the
    snapshot are enabled, teacher_layer, module_name_prefix, other_module_name)."""
    from dsfields.model.store import load

    snapshot = load("0.19.6")
    keys = [p for p in snapshot.fields if p.startswith("compression_training.layer_reduction.")]
    assert keys and not any("shared_parameters" in p or "different_groups" in p for p in keys)
    text = explanation("compression_training", "0.19.6", lang)
    assert "`layer_reduction`" in text and "`teacher_layer`" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_key_already_in_its_own_section_is_deleted_not_moved(tmp_path: Path, lang):
    """bf16.loss_scale next to an fp16 section that has loss_scale: moving it would write the key twice."""
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": 8, "fp16": {"enabled": false, "loss_scale": 0}, '
                    '"bf16": {"enabled": true, "loss_scale": 0, "initial_scale_power": 16}}')
    out = ask("check", str(path), "--version", "0.19.8", "--lang", lang)
    if lang == "en":
        assert '"loss_scale" belongs in "fp16", which already sets it: delete it here' in out
        assert '"initial_scale_power" belongs in "fp16": move it there' in out
    else:
        assert '"loss_scale" 属于 "fp16"，而那里已经设置了它：删除这里的' in out
        assert '"initial_scale_power" 属于 "fp16"：移到那里' in out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_old_auto_string_is_truthy_where_the_release_tests_its_truth(tmp_path: Path, lang):
    """0.14.4 reads fp16.enabled with a dict getter and tests ``if self.fp16_enabled`` (its snapshot's truthiness):
    "auto" stays a non-empty string, which switches fp16 on; 0.19.8 drops it for the default."""
    from dsfields.model.store import load

    assert load("0.14.4").fields["fp16.enabled"].truthiness and not load("0.19.8").fields["fp16.enabled"].truthiness
    old = ask("lookup", "fp16.enabled", "--version", "0.14.4", "--lang", lang)
    new = ask("lookup", "fp16.enabled", "--version", "0.19.8", "--lang", lang)
    truthy = "counts as true" if lang == "en" else "按真值处理"
    assert truthy in old and truthy not in new
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": 8, "fp16": {"enabled": "auto"}}')
    assert truthy in ask("resolve", str(path), "--version", "0.14.4", "--lang", lang)


def test_a_source_constant_label_names_the_readers_own_constant():
    """The extraction matched constants by value: ``fp16.enabled`` (read in runtime/config.py) carries
    compression/constants.py's ACTIVATION_QUANTIZATION_ENABLED in 52 snapshots. Shown constants come from the
    reader's own package, in every release; lookup no longer names the compression constant."""
    from dsfields.model.store import available_versions, load

    shown = 0
    for version in available_versions():
        for record in load(version).fields.values():
            constant, source = record.constant, record.source
            if constant is not None and source is not None:
                assert constant["file"].split("/")[:2] == source.file.split("/")[:2], (version, record.path)
                shown += 1
    assert shown  # constants are still shown where they are the reader's
    for lang in ("en", "zh"):
        assert "ACTIVATION_QUANTIZATION_ENABLED" not in ask("lookup", "fp16.enabled", "--version", "0.14.4",
                                                            "--lang", lang)


def test_the_official_page_disagreement_on_steps_per_print_is_found_and_shown():
    """The official page says steps_per_print defaults to 10; the code's default is None from 0.15.2 on (nothing is
    printed). Every release whose page and code say so gets the disagreement, and lookup shows it (en and zh)."""
    from dsfields.model import official_docs
    from dsfields.model.store import available_versions, load

    found = []
    for version in available_versions():
        docs = official_docs.load(version)
        stated = ((docs or {}).get("keys") or {}).get("steps_per_print") or {}
        record = load(version).fields.get("steps_per_print")
        if record is None or stated.get("default") != 10 or record.default is not None:
            continue
        assert [d.code for d in official_docs.disagreements_of("steps_per_print", record.raw, docs)] == [None]
        found.append(version)
    assert len(found) >= 30, found  # 0.15.2 … 0.19.5 in the committed snapshots
    assert "says the default is 10; the code's is null" in ask("lookup", "steps_per_print", "--version", found[-1])
    assert "写的默认值是 10；代码中是 null" in ask("lookup", "steps_per_print", "--version", found[-1], "--lang", "zh")


def test_the_seed_guides_scheduler_mistake_is_reported_in_chinese(tmp_path: Path):
    """The seed guide's 7B example writes warmup_min_ratio (a WarmupCosineLR parameter) under WarmupDecayLR:
    ``check --lang zh`` says so in Chinese, the hint included, with no English sentence of ours."""
    from test_zh_every_command import latin_sentences

    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": 8, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "foo_bar": 1}}, '
                    '"scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_ratio": 0.1, '
                    '"total_num_steps": 100}}}')
    out = io.StringIO()
    with redirect_stdout(out):
        main(["check", str(path), "--version", "0.19.8", "--lang", "zh"])
    text = out.getvalue()
    assert "不是 WarmupDecayLR 的参数" in text and "是 WarmupCosineLR 的参数" in text
    assert "删除它；AdamW 接受的参数" in text
    from dsfields.model.store import load

    params = {str(k) for c in load("0.19.8").catalogs["optimizer"].names["adamw"].classes for k in c.params or {}}
    english = [run for run in latin_sentences(text) if not set(re.findall(r"[A-Za-z_]{2,}", run)) <= params]
    assert english == []  # the wrapped list of AdamW's parameters is names, not English
