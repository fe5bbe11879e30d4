"""Issue 38 on the committed snapshots: the message catalogue (``generated/<V>/messages.json``, ``generated/hf/
messages.json``) and ``dsfields explain`` on real pasted messages (the 22 shared examples and our own corpus)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from dsfields.cli import main
from dsfields.explain import JSON_FORMAT, catalogue, explain_text
from dsfields.extract.message_catalogue import literal_text
from dsfields.model.store import available_versions, repo_generated_dir

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO.parent / "shared" / "explain-examples" / "cases.jsonl"
CORPUS = REPO / "bench" / "explain_corpus.jsonl"
GENERATED = repo_generated_dir()
VERSIONS = available_versions(GENERATED)
ALIASES = (("stage3_", ""), ("bfloat16", "bf16"))
"""DeepSpeed's pydantic aliases count as the same key (the examples' README says so)."""


def same_key(key: str, answers: list[str]) -> bool:
    def plain(path: str) -> str:
        for old, new in ALIASES:
            path = path.replace(old, new)
        return path

    return plain(key) in {plain(a) for a in answers}


def cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def right(case: dict) -> bool:
    release = case.get("release")
    answer = explain_text(case["pasted"], version=release if release in VERSIONS else None).as_json()
    if case["not_config"]:
        return answer["not_config"] and not any(c["keys"] for c in answer["causes"])
    first = answer["causes"][0] if answer["causes"] else None
    return bool(first and first["keys"] and same_key(first["keys"][0], case["answer_keys"])
                and first["action"] in case["fix_actions"])


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.skipif(not EXAMPLES.is_file(), reason="the shared explain examples are not here")
def test_the_22_examples_name_the_right_key_and_fix() -> None:
    results = {case["id"]: right(case) for case in cases(EXAMPLES)}
    assert len(results) == 22
    assert sum(results.values()) >= 20, [k for k, ok in results.items() if not ok]
    for case in cases(EXAMPLES):
        if case["not_config"]:
            assert results[case["id"]], case["id"]


def test_our_own_corpus_of_pasted_messages() -> None:
    """Real messages from public threads the examples do not hold (bench/explain_corpus.jsonl, with their URLs)."""
    results = {case["id"]: right(case) for case in cases(CORPUS)}
    assert sum(results.values()) >= 17, [k for k, ok in results.items() if not ok]


def test_json_is_the_documented_shape() -> None:
    code, out, _ = run("explain", "AssertionError: zero stage 2 requires an optimizer", "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["format"] == JSON_FORMAT
    assert set(document) >= {"format", "not_config", "layer", "causes"}
    cause = document["causes"][0]
    assert set(cause) == {"keys", "action", "fix", "releases", "raised_at", "message_id"}
    assert cause["keys"][0] in ("optimizer", "zero_optimization.stage")
    assert re.fullmatch(r"deepspeed/runtime/engine\.py:\d+", cause["raised_at"])
    assert re.fullmatch(r"0\.8\.0-0\.19\.8", cause["releases"])


def test_a_traceback_line_pins_the_release_range() -> None:
    paste = ('  File ".../deepspeed/runtime/engine.py", line 1080, in _do_sanity_check\n'
             '    raise ValueError("Type fp16 is not supported.")\nValueError: Type fp16 is not supported.')
    answer = explain_text(paste)
    assert answer.pinned and answer.pinned.startswith("0.15.")
    assert answer.causes[0].keys[0] == "fp16.enabled"


def test_an_id_prints_its_long_form_and_an_unknown_id_is_refused() -> None:
    code, out, _ = run("explain", "AssertionError: zero stage 2 requires an optimizer", "--format", "json")
    message_id = json.loads(out)["causes"][0]["message_id"]
    code, out, _ = run("explain", message_id)
    assert code == 0 and out.startswith(message_id) and "zero stage" in out
    code, out, err = run("explain", "DS00000000" if "DS00000000" not in catalogue() else "DS00000001")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1


def test_a_message_it_cannot_place_is_one_line_and_exit_1() -> None:
    code, out, err = run("explain", "the quick brown fox jumps over the lazy dog")
    assert code == 1 and len(out.strip().splitlines()) == 1 and not err


def test_chinese_explanations_have_no_english_sentence() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_zh_every_command import latin_sentences

    pastes = [case["pasted"] for case in (cases(EXAMPLES) if EXAMPLES.is_file() else []) + cases(CORPUS)]
    for paste in pastes + ["my offload does nothing", "grad_norm above max_grad_norm", "no idea what this is"]:
        code, out, _ = run("explain", paste, "--lang", "zh")
        assert not latin_sentences(out), (paste[:80], latin_sentences(out))


@pytest.mark.parametrize("paste", [
    "x" * (1 << 20),
    "\x1b[31m" + "AssertionError: zero stage 2 requires an optimizer\x1b[0m\n" * 20000,
    bytes(range(256)).decode("latin-1") * 4000,
])
def test_hostile_pastes_get_one_answer_in_bounded_time(paste: str) -> None:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "dsfields", "explain", "-"], input=paste.encode("utf-8", "replace"),
                          capture_output=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO / "extractor")})
    assert time.monotonic() - started < 30
    assert proc.returncode in (0, 1) and b"Traceback" not in proc.stderr
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", proc.stdout.replace(b"\x1b", b"")), proc.stdout[:200]


def test_every_catalogue_file_is_sorted_and_headed() -> None:
    assert len([v for v in VERSIONS if (GENERATED / v / "messages.json").is_file()]) == len(VERSIONS)
    for version in VERSIONS:
        document = json.loads((GENERATED / version / "messages.json").read_text())
        assert document["format"] == 1
        assert document["generated_by"].startswith("python -m dsfields.extract.message_catalogue")
        entries = document["messages"]
        assert entries == sorted(entries, key=lambda e: (e["file"], e["line"], e["id"]))
        for entry in entries:
            assert len(re.sub(r"\W", "", literal_text(entry["pattern"]))) >= 8


def _sdist(version: str) -> Path | None:
    folder = Path(os.environ.get("DSFIELDS_CACHE", Path.home() / ".cache" / "dsfields")) / "sdist" / version
    found = sorted(folder.glob("*.tar.gz")) if folder.is_dir() else []
    return found[0] if found else None


@pytest.mark.skipif(not any(_sdist(v) for v in VERSIONS), reason="no release sdist in the cache")
def test_every_entry_is_found_at_its_own_source_line() -> None:
    """Each entry's literal words are in the statement at its ``file:line`` (or the function it sits in, where the
    message is a variable) of the release it claims, read from that release's sdist; all extracted releases."""
    missing: list[str] = []
    checked = 0
    for version in VERSIONS:
        archive = _sdist(version)
        if archive is None:
            continue
        entries = json.loads((GENERATED / version / "messages.json").read_text())["messages"]
        with tarfile.open(archive) as tar:
            files = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if m.isfile() and "/" in m.name}
            texts: dict[str, list[str]] = {}
            for entry in entries:
                if entry["file"] not in texts:
                    texts[entry["file"]] = tar.extractfile(files[entry["file"]]).read().decode().splitlines()
                lines = texts[entry["file"]]
                window = " ".join(lines[max(entry["line"] - 60, 0):entry["line"] + 20])
                # implicit concatenation: "device mesh" f"api" is the message's "device meshapi"
                window = re.sub(r"[\"']\s*[frbFRB]*[\"']", "", window)
                words = re.findall(r"[A-Za-z]{4,}", literal_text(entry["pattern"]))
                if not all(w in window for w in words):
                    missing.append(f"{version} {entry['file']}:{entry['line']} {entry['id']}")
                checked += 1
    assert checked > 10000 and not missing, missing[:10]


def test_hf_catalogue_holds_the_refusals_about_deepspeed_with_their_keys() -> None:
    messages = catalogue()
    hf = [m for m in messages.values() if m.layer in ("transformers", "accelerate")]
    assert {m.layer for m in hf} == {"transformers", "accelerate"}
    zero3 = [m for m in hf if "ZeRO inference only makes sense" in m.pattern]
    assert zero3 and zero3[0].newest.keys == ["zero_optimization.stage"]


def test_diff_lists_the_messages_a_release_added_and_removed() -> None:
    code, out, _ = run("diff", "0.19.7", "0.19.8", "--messages", "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["added"] and document["removed"]
    old = {e["id"] for e in json.loads((GENERATED / "0.19.7" / "messages.json").read_text())["messages"]}
    new = {e["id"] for e in json.loads((GENERATED / "0.19.8" / "messages.json").read_text())["messages"]}
    assert {e["id"] for e in document["added"]} == new - old
    assert {e["id"] for e in document["removed"]} == old - new
    code, out, _ = run("diff", "0.16.7", "0.16.8", "--messages", "--lang", "zh")
    assert code == 0 and out.startswith("消息 0.16.7 -> 0.16.8")


def test_lookup_hands_a_pasted_message_to_explain_and_lands_a_class_name_on_its_section() -> None:
    code, out, _ = run("lookup", "AssertionError: zero stage 2 requires an optimizer")
    assert code == 0 and "dsfields explain" in out and "optimizer" in out
    code, out, _ = run("lookup", "DeepSpeedBF16Config", "--version", "0.19.8")
    assert code == 0 and out.startswith("bf16: section")
    code, out, _ = run("lookup", "DeepSpeedZeroConfig", "--version", "0.8.0")
    assert code == 0 and out.startswith("zero_optimization: section")


@pytest.mark.parametrize(("paste", "key", "action"), [
    ("my offload does nothing", "zero_optimization.offload_", "move_key"),
    ("grad_norm stays above max_grad_norm", "gradient_clipping", "set_auto"),
    ('"zero_optimization": {"stage": 2},\n"offload_optimizer": {"device": "cpu"}\nit does not seem to do anything',
     "zero_optimization.offload_optimizer", "move_key"),
])
def test_silent_symptoms_are_matched_by_words(paste: str, key: str, action: str) -> None:
    cause = explain_text(paste).as_json()["causes"][0]
    assert cause["keys"][0].startswith(key) and cause["action"] == action


def test_config_ranks_the_keys_the_file_writes_first(tmp_path: Path) -> None:
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"gradient_accumulation_steps": 8, "train_micro_batch_size_per_gpu": 1}))
    paste = ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
             "gradient_acc_step * world_size 16 != 1 * 8 * 1")
    code, out, _ = run("explain", paste, "--config", str(config), "--format", "json")
    keys = json.loads(out)["causes"][0]["keys"]
    assert code == 0 and set(keys[:2]) == {"gradient_accumulation_steps", "train_micro_batch_size_per_gpu"}
    code, _, err = run("explain", paste, "--config", str(tmp_path / "missing.json"))
    assert code == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("paste", [
    "MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
    "ModuleNotFoundError: No module named 'deepspeed'",
    "KeyError: 'input_ids'",
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
])
def test_errors_about_no_key_name_no_key(paste: str) -> None:
    """Confidently wrong is worse than "cannot place": an unrelated error names no ds_config key."""
    answer = explain_text(paste).as_json()
    assert not any(cause["keys"] for cause in answer["causes"]), answer


def test_a_message_cut_short_by_the_paste_is_still_placed() -> None:
    cause = explain_text("AssertionError: Check batch related parameters").as_json()["causes"][0]
    assert cause["keys"][0] == "train_batch_size" and cause["action"] == "set_value"


def test_an_equality_the_message_printed_is_solved_with_its_own_values() -> None:
    paste = ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
             "gradient_acc_step * world_size 256 != 2 * 18 * 7")
    fix = explain_text(paste).as_json()["causes"][0]["fix"]
    assert fix.startswith("set `train_batch_size` to 252 ")


# A string where DeepSpeed computes with a number (the unfilled "auto" of a plain launch): hand-written tracebacks
# in the shape Python prints, at lines of the newest release's own engine and scheduler code.
AUTO_CLIP = '''Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 2400, in _take_model_step
    if self.gradient_clipping() > 0.0:
TypeError: '>' not supported between instances of 'str' and 'float'
'''
AUTO_WARMUP = '''  File "/venv/lib/python3.11/site-packages/deepspeed/runtime/lr_schedules.py", line 700, in __init__
    self.warmup_num_steps = max(2, warmup_num_steps)
TypeError: '>' not supported between instances of 'str' and 'int'
'''


@pytest.mark.parametrize(("paste", "key"), [(AUTO_CLIP, "gradient_clipping"),
                                           (AUTO_WARMUP, "scheduler.params.warmup_num_steps")])
def test_a_string_where_deepspeed_computes_with_a_number_names_the_key_the_line_reads(paste: str, key: str) -> None:
    for lang in ("en", "zh"):
        answer = explain_text(paste, lang=lang)
        first = answer.causes[0]
        assert (first.keys[0], first.action, answer.not_config) == (key, "set_value", False)
        assert '"auto"' in first.fix and first.raised_at.startswith("deepspeed/runtime/")


@pytest.mark.parametrize(("paste", "layer"), [
    # the launcher's ssh probe failed: the deepest DeepSpeed frame is the launcher's, a subprocess frame follows
    ('  File "/env/site-packages/deepspeed/launcher/runner.py", line 437, in main\n'
     '    subprocess.check_call(ssh_check_cmd, shell=True)\n'
     '  File "/usr/lib/python3.11/subprocess.py", line 413, in check_call\n'
     '    raise CalledProcessError(retcode, cmd)\n'
     "subprocess.CalledProcessError: Command 'ssh node2 hostname' returned non-zero exit status 255.", "launcher"),
    # raised in the user's own training script, naming no config key
    ('  File "/home/me/train.py", line 88, in build\n    total = args.steps * world\n'
     "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'", "other")])
def test_an_error_deepspeed_did_not_raise_about_its_config_is_not_a_config_problem(paste: str, layer: str) -> None:
    answer = explain_text(paste)
    assert (answer.not_config, answer.layer, [c.keys for c in answer.causes]) == (True, layer, [[]])


@pytest.mark.parametrize(("paste", "keys", "action"), [
    # another library built on DeepSpeed refusing a key it sets itself (hand-written, in the usual shape)
    ("mylib.errors.ConfigError: Do not set `train_micro_batch_size_per_gpu` in the DeepSpeed config: it is taken "
     "from the loader's batch_size.", ["train_micro_batch_size_per_gpu"], "remove_key"),
    ("ValueError: 'steps_per_print' must be a positive number in this trainer", ["steps_per_print"], "set_value"),
    ("ValueError: 'banana' is not a valid choice", [], None),
])
def test_an_error_from_another_library_quoting_a_key_names_it(paste: str, keys: list[str], action: str) -> None:
    answer = explain_text(paste)
    first = answer.causes[0] if answer.causes else None
    assert (first.keys if first else []) == keys
    if action:
        assert first.action == action


@pytest.mark.parametrize("paste", [
    "ModuleNotFoundError: No module named 'torch._six'",
    "ImportError: cannot import name 'log' from 'torch.distributed.elastic.agent.server.api'",
    "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
])
def test_an_environment_error_is_not_a_config_problem(paste: str) -> None:
    answer = explain_text(paste)
    assert (answer.not_config, answer.layer, [c.keys for c in answer.causes]) == (True, "environment", [[]])


def test_a_message_asking_to_remove_a_key_from_the_config_asks_for_remove_key() -> None:
    paste = ("ValueError: You cannot specify an optimizer in the config file and in the code at the same time. "
             "Please remove the optimizer from the config file or create `accelerate.utils.DummyOptim` in the code.")
    first = explain_text(paste).causes[0]
    assert (first.keys[:1], first.action) == (["optimizer"], "remove_key")


def test_a_short_variable_name_in_another_sections_module_is_not_a_key() -> None:
    """zero.Init's "finished initializing model - num_params = {num_params}" prints a count, not
    autotuning.model_info.num_params (an outside audit found the site saying so)."""
    from dsfields.model.store import load_messages

    for version in ("0.14.4", VERSIONS[-1]):
        for entry in (load_messages(version, GENERATED) or {})["messages"]:
            if entry["pattern"].startswith("finished initializing model"):
                assert "autotuning.model_info.num_params" not in entry["keys"], (version, entry)


def _entry(version: str, start: str) -> dict:
    from dsfields.model.store import load_messages

    found = [e for e in (load_messages(version, GENERATED) or {})["messages"] if e["pattern"].startswith(start)
             and e["keys"]]
    assert found, (version, start)
    return found[0]


def test_the_key_a_check_tests_comes_before_the_switch_that_guards_it() -> None:
    """0.12.6's "NUmber of GPUs per node cannot be less than 1" is raised inside ``if self.elasticity_enabled``
    when ``self.num_gpus_per_node < 1`` (read from the elasticity dict without a named constant): the errors page
    said "change elasticity.enabled" (an outside audit)."""
    entry = _entry("0.12.6", "NUmber of GPUs per node")
    assert entry["keys"] == ["elasticity.num_gpus_per_node", "elasticity.enabled"]


def test_a_message_spelling_out_minimum_names_the_min_key() -> None:
    """"Current loss scale already at minimum" is about the floor fp16.min_loss_scale (an outside audit found the
    page naming only fp16.loss_scale)."""
    for version in ("0.10.3", VERSIONS[-1]):
        entry = _entry(version, "Current loss scale already at minimum")
        assert entry["keys"][0] == "fp16.min_loss_scale", (version, entry)


def test_a_check_on_what_the_run_brings_says_so_beside_its_key() -> None:
    """The AutoEP checkpoint refusal fails on the loaded checkpoint's metadata; checkpoint.load_universal only decides
    whether DeepSpeed looks (an outside audit: "points the user at the wrong knob"). A device that lacks fp16 is
    the same shape; a validator's values are the config's, never "the run"."""
    entry = _entry(VERSIONS[-1], "AutoEP ZeRO-3 partition-native checkpoint metadata")
    assert entry["keys"] == ["checkpoint.load_universal"] and entry["state"] == "not allowed_missing_keys"
    assert _entry(VERSIONS[-1], "Type fp16 is not supported on your device")["state"] == (
        "not get_accelerator().is_fp16_supported()")
    assert "state" not in _entry(VERSIONS[-1], "fp16.loss_scale must be >= 0")  # a validator's own value
    answer = explain_text("RuntimeError: AutoEP ZeRO-3 partition-native checkpoint metadata did not identify any "
                          "live expert parameters to restore from ZeRO shards.").as_json()
    first = answer["causes"][0]
    assert first["keys"] == ["checkpoint.load_universal"]
    assert "or what the run brings" in first["fix"] and "`not allowed_missing_keys`" in first["fix"], first
    zh = explain_text("Type fp16 is not supported on your device.", lang="zh").as_json()["causes"][0]["fix"]
    assert "运行本身带来的条件" in zh and "`not get_accelerator().is_fp16_supported()`" in zh, zh


def test_another_librarys_bare_fp16_is_its_own_flag_not_the_section() -> None:
    """transformers' "At most one of fp16 and bf16 can be True" is about its --fp16/--bf16 flags: in another
    library's text a bare section name is no ds_config key (in DeepSpeed's own text it is); the committed HF
    catalogue is what the reader writes."""
    from dsfields.extract.message_catalogue import KeyMap

    text = "At most one of fp16 and bf16 can be True, but not both"
    assert KeyMap(paths={"fp16", "bf16", "fp16.enabled"}, plain_words=False).paths_in_text(text, None) == []
    assert KeyMap(paths={"fp16", "bf16", "fp16.enabled"}).paths_in_text(text, None) == ["fp16", "bf16"]
    document = json.loads((GENERATED / "hf" / "messages.json").read_text(encoding="utf-8"))
    kept = [e for entries in document["releases"].values() for e in entries if e["pattern"].startswith(
        "At most one of fp16 and bf16")]
    assert not kept  # no key and nothing about DeepSpeed: not in the HF catalogue


def test_an_attribute_a_module_assigns_from_the_config_stands_for_its_key_there() -> None:
    """The NVMe swapper assigns ``self.swap_config = ds_config.zero_config.offload_param`` and then
    ``self.elements_per_buffer = self.swap_config.buffer_size``: its "More elements ... than buffer size" assert is
    about zero_optimization.offload_param.buffer_size (a real pasted message placed nowhere before)."""
    entry = _entry("0.12.6", "More elements {numel} than buffer size")
    assert entry["keys"] == ["zero_optimization.offload_param.buffer_size"]
    answer = explain_text("AssertionError: More elements 524709888 than buffer size 100,000,000").as_json()
    first = answer["causes"][0]
    assert first["keys"][0] == "zero_optimization.offload_param.buffer_size" and first["action"] == "set_value"


def test_a_message_built_in_steps_before_it_is_logged_is_caught_whole() -> None:
    """DynamicLossScaler builds "[deepspeed] OVERFLOW! Rank 0 Skipping step." and adds " Attempted loss scale: ..."
    under ``if self.dtype == torch.half`` before logging it: the catalogue holds the whole message, so the common
    fp16 overflow line is placed (information: dynamic scaling at work), not confused with another."""
    entry = _entry(VERSIONS[-1], "[deepspeed] OVERFLOW! Rank {dist.get_rank()} Skipping step. Attempted loss scale")
    assert entry["kind"] == "log" and entry["file"].endswith("loss_scaler.py")
    pasted = ("[2024-09-11 17:52:32,563] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 "
              "Skipping step. Attempted loss scale: 2147483648, reducing to 1073741824")
    first = explain_text(pasted).as_json()["causes"][0]
    assert first["keys"][0] == "fp16.loss_scale" and first["action"] == "no_change", first


def test_what_was_raised_ranks_above_a_warning_logged_before_it() -> None:
    """A deprecation warning logged at start-up, then the traceback's own "ValueError: Type fp16 is not
    supported.": the answer is the error that stopped the run, not the older warning (a blind corpus found it
    answering ``cpu_offload``)."""
    pasted = ("[2023-06-01 10:00:03,214] [WARNING] [config_utils.py:69:_process_deprecated_field] Config parameter "
              "cpu_offload is deprecated use offload_optimizer instead\nTraceback (most recent call last):\n"
              '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 240, in __init__\n'
              "    self._do_sanity_check()\nValueError: Type fp16 is not supported.")
    first = explain_text(pasted, version="0.14.0").as_json()["causes"][0]
    assert first["keys"][0] == "fp16.enabled" and first["action"] == "set_value", first


def test_the_trainers_mismatch_list_cut_short_still_names_its_keys() -> None:
    """The Trainer's "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:"
    with its list but without the closing sentence: the keys are the list's, not the command line's flags above
    it (it answered gradient_accumulation_steps from "--gradient_accumulation_steps 2")."""
    pasted = ("deepspeed train.py --deepspeed zero2.json --gradient_accumulation_steps 2 --learning_rate 2e-5\n"
              "ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments "
              "values:\n[rank0]: - ds bf16.enabled=True vs hf bf16|bf16_full_eval=False")
    first = explain_text(pasted).as_json()["causes"][0]
    assert first["keys"][:2] == ["bf16.enabled", "hf:--bf16"], first


@pytest.mark.parametrize("paste", [
    "RuntimeError: Ninja is required to load C++ extensions",
    "E           RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to "
    "hardware/software issue.",
])
def test_an_op_that_cannot_be_built_is_the_build_layer(paste: str) -> None:
    answer = explain_text(paste).as_json()
    assert answer["not_config"] and answer["layer"] == "build" and not any(c["keys"] for c in answer["causes"])


def test_a_module_constant_spelling_a_top_level_key_stands_for_it_in_every_release() -> None:
    """Issue 39 (an outside audit of 0.14.4): the autotuner's "runable with ZERO 2" was catalogued for 0.9.3–0.19.6
    only, while 0.19.7 and 0.19.8 say it too. Their snapshot records ``zero_optimization`` as read first by
    ``_reject_removed_config_keys`` (no constant), so the ``ZERO_OPTIMIZATION`` the autotuner imports stood for no
    key and the info line was dropped; ``ZERO_OPTIMIZATION = "zero_optimization"`` in the source now stands for it."""
    message = next(m for m in catalogue().values() if m.pattern.startswith("The model might be runable with ZERO 2"))
    versions = {o.version for o in message.occurrences}
    assert {"0.14.4", "0.19.6", "0.19.7", "0.19.8"} <= versions
    assert _entry("0.19.8", "The model might be runable with ZERO 2")["keys"] == ["zero_optimization"]


def test_one_line_of_the_trainers_mismatch_list_pasted_alone_is_the_trainers_message() -> None:
    """A real paste (InternVL issue 372) is the Trainer's mismatch line without the message around it. The HF
    catalogue records the lines the message joins from ``self.mismatches`` (``parts``); the line is that message,
    its fields its keys: the ds_config key and the Trainer's flag."""
    message = next(m for m in catalogue().values() if m.parts and m.layer == "transformers")
    assert "vs hf" in message.parts[0] and "mismatch TrainingArguments" in message.pattern
    cause = explain_text("ds fp16.enabled=True vs hf fp16|fp16_full_eval+fp16_backend(amp)=False\nI want to train "
                         "with fp16, set fp16 enabled true, but get this error?").as_json()["causes"][0]
    assert cause["keys"][:2] == ["fp16.enabled", "hf:--fp16"] and cause["action"] == "set_auto", cause
