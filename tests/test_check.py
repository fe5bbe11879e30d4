"""dsfields check on hand-picked configs: the examples the issue names, output formats, exit codes, fuzz.

These run from the committed 0.19.8 snapshot only (no DeepSpeed needed), except the few marked
``deepspeed`` that ask the real DeepSpeed for its verdict.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from conftest import REPO, fresh_python, requires_deepspeed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsfields.check import Checker, Finding, Kind, Options, Severity, check_text
from dsfields.check.runtime import deepspeed_verdict
from dsfields.cli import main
from dsfields.extract.oracle import build_deepspeed_config
from dsfields.model.store import load as load_snapshot

pytestmark = pytest.mark.lane("data")  # the tests below without a lane mark of their own

VERSION = "0.19.8"
SEEDS = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(load_snapshot(VERSION))


def findings(checker: Checker, config: dict[str, Any] | str, **options: Any) -> list[Finding]:
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    report = check_text(text, checker, Options(**options))
    assert report.error is None, report.error
    return report.findings


def errors(found: list[Finding]) -> dict[str, Finding]:
    return {f.path: f for f in found if f.severity is Severity.ERROR}


def at(found: list[Finding], path: str) -> Finding:
    return next(f for f in found if f.path == path)


BASE = {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 8}


# ---------------------------------------------------------------- what the issue names


def test_key_in_the_wrong_strict_section_points_to_its_section(checker):
    found = findings(checker, BASE | {"bf16": {"enabled": True, "loss_scale": 0}})
    finding = errors(found)["bf16.loss_scale"]
    assert "raises" in finding.message and '"fp16"' in finding.fix


def test_typo_in_a_dict_section_is_a_warning_with_did_you_mean(checker):
    found = findings(checker, BASE | {"gradient_clippin": 1.0})
    finding = at(found, "gradient_clippin")
    assert finding.severity is Severity.WARNING and "silently ignored" in finding.message
    assert '"gradient_clipping"' in finding.fix


def test_typo_in_a_strict_section_is_an_error(checker):
    found = findings(checker, BASE | {"zero_optimization": {"stage": 3, "stage3_param_persitance_threshold": 1}})
    assert 'did you mean "stage3_param_persistence_threshold"' in errors(found)[
        "zero_optimization.stage3_param_persitance_threshold"].fix


def test_removed_key_carries_deepspeeds_message(checker):
    found = findings(checker, BASE | {"zero_optimization": {"stage": 3, "mics_shard_size": 8}})
    assert "MiCS" in errors(found)["zero_optimization.mics_shard_size"].message


def test_deprecated_key_names_its_replacement_and_both_is_an_error(checker):
    old = {"stage": 3, "stage3_gather_fp16_weights_on_model_save": True}
    finding = at(findings(checker, BASE | {"zero_optimization": old}),
                 "zero_optimization.stage3_gather_fp16_weights_on_model_save")
    assert finding.severity is Severity.WARNING and "stage3_gather_16bit_weights_on_model_save" in finding.fix
    both = old | {"stage3_gather_16bit_weights_on_model_save": False}
    assert "both set" in errors(findings(checker, BASE | {"zero_optimization": both}))[
        "zero_optimization.stage3_gather_fp16_weights_on_model_save"].message


def test_wrong_values(checker):
    found = errors(findings(checker, BASE | {
        "communication_data_type": "bfp16",
        "zero_optimization": {"stage": 2, "reduce_bucket_size": 0, "offload_optimizer": {"device": "gpu"}},
    }))
    assert 'not one of "fp32", "fp16", "bf16"' in found["communication_data_type"].message  # from the snapshot
    assert "> 0" in found["zero_optimization.reduce_bucket_size"].message
    assert '"cpu"' in found["zero_optimization.offload_optimizer.device"].fix


def test_floats_with_zero_fraction_are_integers_as_for_pydantic(checker):
    config = BASE | {"zero_optimization": {"stage": 3, "reduce_bucket_size": 5e8, "sub_group_size": 1e9}}
    assert not errors(findings(checker, config))
    assert not errors(findings(checker, config, hf=True))  # json.load keeps 5e8 a float
    bad = BASE | {"zero_optimization": {"stage": 3, "sub_group_size": 1.5}}
    assert "zero_optimization.sub_group_size" in errors(findings(checker, bad))


def test_true_strings(checker):
    pydantic = at(findings(checker, BASE | {"fp16": {"enabled": "true"}}), "fp16.enabled")
    assert pydantic.severity is Severity.WARNING and "coerces" in pydantic.message
    unvalidated = errors(findings(checker, BASE | {"wall_clock_breakdown": "false"}))["wall_clock_breakdown"]
    assert "true" in unvalidated.message


def test_fp16_and_bf16(checker):
    found = errors(findings(checker, BASE | {"fp16": {"enabled": True}, "bf16": {"enabled": True}}))
    assert found["fp16.enabled"].rule == "fp16-bf16-exclusive" and "bf16.enabled" in found["fp16.enabled"].related


def test_batch_size_with_and_without_world_size(checker):
    config = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8}
    note = at(findings(checker, config), "train_batch_size")
    assert note.severity is Severity.INFO and "world size 4" in note.message
    assert not errors(findings(checker, config, world_size=4))
    wrong = errors(findings(checker, config, world_size=8))["train_batch_size"]
    assert "64 != 2 (micro) * 8 (accumulation) * 8" in wrong.message and "128" in wrong.fix
    assert errors(findings(checker, {"train_batch_size": 63, "train_micro_batch_size_per_gpu": 2}))


def test_stage_only_option(checker):
    found = errors(findings(checker, BASE | {"zero_optimization": {"stage": 3, "compute_grad_norm": False}}))
    assert found["zero_optimization.compute_grad_norm"].rule == "zero-stage-requirements"


def test_optimizer_and_scheduler(checker):
    found = errors(findings(checker, BASE | {
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "betas": [0.9, 0.95], "weight_decy": 0.1,
                                                   "torch_adam": True}},
        "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_ratio": 0.1, "total_num_steps": 10}},
    }))
    assert set(found) == {"optimizer.params.weight_decy", "scheduler.params.warmup_min_ratio"}
    assert 'did you mean "weight_decay"' in found["optimizer.params.weight_decy"].fix
    assert "WarmupCosineLR" in found["scheduler.params.warmup_min_ratio"].fix
    unknown = errors(findings(checker, BASE | {"optimizer": {"type": "OneBitAdam", "params": {}}}))
    assert "unknown to DeepSpeed 0.19.8" in unknown["optimizer.type"].message
    torch_sgd = findings(checker, BASE | {"optimizer": {"type": "SGD", "params": {"lr": 0.1, "momentum": 0.9}}})
    assert not errors(torch_sgd)
    assert "gradient_clipping" in errors(findings(checker, BASE | {
        "optimizer": {"type": "Adam", "params": {"max_grad_norm": 1.0}}}))["optimizer.params.max_grad_norm"].fix
    missing = errors(findings(checker, BASE | {"scheduler": {"type": "WarmupDecayLR", "params": {}}}))
    assert '"total_num_steps"' in missing["scheduler.params"].message


def test_seed_7b_example_warmup_min_ratio_on_warmup_decay_lr(checker):
    text = (sorted(SEEDS.glob("001_*.txt"))[0]).read_text(encoding="utf-8") if SEEDS.is_dir() else None
    if text is None:
        pytest.skip("no seeds")
    block = json_blocks(text)[0]
    found = findings(checker, block, world_size=4)
    assert set(errors(found)) == {"scheduler.params.warmup_min_ratio"}
    assert "WarmupCosineLR" in errors(found)["scheduler.params.warmup_min_ratio"].fix


# ---------------------------------------------------------------- "auto"


def test_auto_without_hf(checker):
    found = findings(checker, {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 4,
                               "bf16": {"enabled": "auto"}, "gradient_clipping": "auto"})
    assert at(found, "train_batch_size").severity is Severity.ERROR  # DeepSpeed alone fails on it
    dropped = at(found, "bf16.enabled")
    assert dropped.severity is Severity.WARNING and "default false" in dropped.message
    # Issue 15, "types guessed from the default": DeepSpeedConfig keeps gradient_clipping unvalidated (every
    # value probe is accepted). Its default is a number and the ZeRO optimizer compares it with 0 at the
    # first step, so the string "auto" is an error that says it fails there, never a validation that
    # does not exist (tests/test_check_launch.py: the launch accepts it; FAILS_LATER).
    clipping = at(found, "gradient_clipping")
    assert clipping.severity is Severity.ERROR and "fails when it uses it" in clipping.message
    assert "reject" not in clipping.message and "validat" not in clipping.message


def test_a_number_default_read_unvalidated_is_used_as_a_number(checker):
    """Issue 15: only a number default says how an unvalidated key is used; a boolean or string one does not."""
    found = findings(checker, {"train_micro_batch_size_per_gpu": 1, "gradient_clipping": "high",
                               "flops_profiler": {"profile_step": True}, "datastates_ckpt": {},
                               "expert_parallel": {"top_k": 2}})
    clipping = at(found, "gradient_clipping")
    assert clipping.severity is Severity.ERROR and "fails later" in clipping.message and "1.0" in clipping.fix
    assert at(found, "flops_profiler.profile_step").severity is Severity.WARNING  # Python counts true as 1
    assert not [f for f in found if f.path in ("datastates_ckpt", "expert_parallel.top_k")]


def test_a_probe_refused_for_want_of_a_key_the_config_gives_is_not_a_verdict_on_the_value():
    """0.14.4 probed compression_training.weight_quantization.shared_parameters.enabled alone: every value
    failed for want of different_groups ("different_groups must be specified", KeyError). With the
    groups given (corpus 017) the launch takes true; without them the error is on the missing key, never on the
    flag (required_with_section: the section, once given, has different_groups indexed unguarded)."""
    old = Checker(load_snapshot("0.14.4"))
    shared = {"enabled": True, "schedule_offset": 0}
    groups = {"wq1": {"params": {"start_bits": 8, "target_bits": 8}, "modules": ["dense"]}}
    given = {"train_micro_batch_size_per_gpu": 1,
             "compression_training": {"weight_quantization": {"shared_parameters": shared,
                                                              "different_groups": groups}}}
    assert not errors(findings(old, given))
    alone = {"train_micro_batch_size_per_gpu": 1,
             "compression_training": {"weight_quantization": {"shared_parameters": shared}}}
    refused = errors(findings(old, alone))
    path = "compression_training.weight_quantization.different_groups"
    assert list(refused) == [path] and "KeyError: 'different_groups'" in refused[path].message


def test_auto_with_hf(checker):
    found = findings(checker, {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
                               "bf16": {"enabled": "auto"}, "bfloat16": {"enabled": "auto"},
                               "zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto"}}, hf=True)
    assert [f.path for f in found if f.kind.name == "AUTO"] == ["bfloat16.enabled",
                                                                  "zero_optimization.stage3_max_live_parameters"]
    assert "does not fill" in at(found, "zero_optimization.stage3_max_live_parameters").message


def test_without_an_hf_list_check_says_so(checker):
    found = findings(Checker(load_snapshot(VERSION), hf_trainer=None), BASE, hf=True)
    assert any(f.kind.name == "LIMITATION" and "transformers" in f.message for f in found)


def json_blocks(text: str) -> list[str]:
    """Top-level ``{ ... }`` blocks that start a line, matched by brace depth (strings ignored)."""
    blocks = []
    for match in re.finditer(r"^\{", text, flags=re.M):
        depth, in_string, escape = 0, False, False
        for index in range(match.start(), len(text)):
            char = text[index]
            if in_string:
                escape, in_string = (not escape and char == "\\"), in_string and (escape or char != '"')
                continue
            if char == '"':
                in_string = True
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                blocks.append(text[match.start():index + 1])
                break
    return blocks


def seed_templates() -> dict[str, str]:
    files = sorted(SEEDS.glob("000_*.txt")) if SEEDS.is_dir() else []
    if not files:
        if os.environ.get("CI"):
            raise AssertionError(f"seeds missing at {SEEDS}")
        return {}
    text = files[0].read_text(encoding="utf-8")
    part = text[text.index("7.11"):text.index("7.13")]
    labels = re.findall(r"^([ABC])\. ", part, flags=re.M)
    return dict(zip(labels, json_blocks(part), strict=True))


def test_seed_templates_a_and_b_are_clean_with_hf(checker):
    templates = seed_templates()
    if not templates:
        pytest.skip("no seeds")
    assert set(templates) == {"A", "B", "C"}
    # Template A leaves zero_optimization.allgather_bucket_size "auto": neither the Trainer nor accelerate
    # fills it, and accelerate's deepspeed_config_process raises for every "auto" left (the launch rule
    # hf-unfilled-auto, confirmed in generated/0.19.8/launch.json). Everything else in A and B is clean.
    for label in "AB":
        wrong = errors(findings(checker, templates[label], hf=True))
        if label == "A":
            assert wrong.pop("zero_optimization.allgather_bucket_size").rule == "hf-unfilled-auto"
        assert not wrong, label


def test_seed_template_c_misplaces_aio_and_check_says_so(checker):
    """Template C nests "aio" inside zero_optimization; DeepSpeed 0.19.8 rejects that (see the next test)."""
    templates = seed_templates()
    if not templates:
        pytest.skip("no seeds")
    found = errors(findings(checker, templates["C"], hf=True))
    assert set(found) == {"zero_optimization.aio"} and "top level" in found["zero_optimization.aio"].fix


@requires_deepspeed
@pytest.mark.deepspeed
def test_seed_template_errors_are_deepspeeds_own(checker):
    from test_check_differential import for_deepspeed

    from dsfields.configfile import parse

    for label, text in seed_templates().items():
        data = for_deepspeed(parse(text, label, "hf").data, checker)
        error, culprits = deepspeed_verdict(data, checker, build_deepspeed_config)
        # DeepSpeedConfig is the oracle here; what only the launch refuses (accelerate's unfilled "auto",
        # issue 14's launch rules) is compared with deepspeed.initialize in tests/test_check_launch.py.
        reported = {f.path for f in findings(checker, text, hf=True)
                    if f.severity is Severity.ERROR and f.kind is not Kind.LAUNCH}
        assert reported == set(culprits), (label, error, culprits, reported)


# ---------------------------------------------------------------- files, formats, exit codes


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", "--version", VERSION, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes_and_text_output(tmp_path, capsys):
    clean, bad, broken = tmp_path / "clean.json", tmp_path / "bad.json", tmp_path / "broken.json"
    clean.write_text(json.dumps(BASE))
    bad.write_text('{\n  "train_batch_size": 8,\n  "fp16": {"enabled": true, "loss_scal": 0}\n}\n')
    broken.write_text('{"train_batch_size": 8,,}')
    assert run_cli(capsys, str(clean))[0] == 0
    code, out, _ = run_cli(capsys, str(bad))
    assert code == 1 and "     3  error    fp16.loss_scal" in out and 'did you mean "loss_scale"' in out
    code, out, err = run_cli(capsys, str(broken), str(clean))
    # Unusable files on stderr only (issue 23); the summary counts the files checked and says one was not.
    assert code == 2 and "malformed JSON" in err and "malformed JSON" not in out and "Traceback" not in out + err
    assert "1 file checked" in out and "1 not checked" in out
    code, out, err = run_cli(capsys, str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err and out == ""
    assert main(["check", "--version", "0.0.0", str(clean)]) == 2
    assert "no snapshot for DeepSpeed 0.0.0" in capsys.readouterr().err


def test_strict_fails_on_warnings(tmp_path, capsys):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(BASE | {"gradient_clippin": 1.0}))
    assert run_cli(capsys, str(path))[0] == 0
    assert run_cli(capsys, "--strict", str(path))[0] == 1


def test_github_annotations_carry_the_key_line(tmp_path, capsys):
    path = tmp_path / "ds, config.json"
    path.write_text('{\n  "train_batch_size": 8,\n\n  "zero_optimization": {\n    "stage": 3,\n'
                    '    "reduce_bucket_size": 0\n  }\n}\n')
    code, out, _ = run_cli(capsys, "--format", "github", str(path))
    assert code == 1
    line = next(x for x in out.splitlines() if "reduce_bucket_size" in x)
    assert line.startswith("::error file=") and ",line=6," in line and "ds%2C config.json" in line


def test_json_output(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(BASE | {"zero_optimization": {"stage": 7}}))
    code, out, _ = run_cli(capsys, "--format", "json", str(path))
    payload = json.loads(out)
    assert code == 1 and payload["deepspeed_version"] == VERSION and payload["summary"]["error"] == 1
    finding = payload["files"][0]["findings"][0]
    assert finding["path"] == "zero_optimization.stage" and finding["kind"] == "choice" and finding["line"] == 1


def test_duplicate_keys(checker):
    text = '{\n "train_batch_size": 8,\n "train_batch_size": 16\n}'
    assert errors(findings(checker, text))["train_batch_size"].line == 3  # DeepSpeed's hjson hook raises
    assert not {p: f for p, f in errors(findings(checker, text, hf=True)).items()
                if f.kind.name != "LAUNCH"}  # json.load keeps the last (accelerate wants a zero section)


def test_hjson_is_read_as_deepspeed_does_and_flagged_for_hf(checker):
    text = "{\n  # comment\n  train_batch_size: 8\n  fp16: {enabled: true}\n}\n"
    assert not errors(findings(checker, text))
    assert errors(findings(checker, text, hf=True))[""].kind.name == "SYNTAX"


@pytest.mark.unit
def test_hook_file_is_declared():
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "- id: dsfields-check" in hooks and "entry: dsfields check" in hooks


@pytest.mark.unit
def test_check_imports_neither_deepspeed_nor_torch_nor_pydantic(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(BASE | {"optimizer": {"type": "AdamW", "params": {"lr": 1}},
                                       "zero_optimization": {"stage": 0}}))
    code = (
        "import sys\n"
        "from dsfields.cli import main\n"
        f"code = main(['check', '--version', '{VERSION}', '--hf', {str(path)!r}])\n"
        f"main(['schema', '--version', '{VERSION}', '-o', {str(tmp_path / 's.json')!r}])\n"
        "heavy = [m for m in ('deepspeed', 'torch', 'pydantic') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "sys.exit(code)\n"
    )
    env = os.environ | {"PYTHONPATH": str(REPO / "extractor")}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@requires_deepspeed
@pytest.mark.deepspeed
def test_runtime_translates_deepspeeds_verdict_to_the_key(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text('{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 2,\n'
                    '  "gradient_accumulation_steps": 8,\n  "bf16": {"enabled": true, "loss_scale": 0}\n}\n')
    code, out, _ = run_cli(capsys, "--runtime", "--format", "json", str(path))
    found = json.loads(out)["files"][0]["findings"]
    runtime = [f for f in found if f["kind"] == "runtime"]
    assert code == 1 and [(f["path"], f["line"]) for f in runtime] == [("bf16.loss_scale", 5)]


# ---------------------------------------------------------------- fuzz

KEYS = st.sampled_from(["train_batch_size", "fp16", "bf16", "enabled", "zero_optimization", "stage", "optimizer",
                        "scheduler", "type", "params", "lr", "auto", "offload_optimizer", "device", "pipeline",
                        "data_efficiency", "data_sampling", "curriculum_learning", "gradient_allreduce_op", "x"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
                    st.text(max_size=8), st.sampled_from(["auto", "true", "cpu", "WarmupLR", "AdamW", "sum"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    KEYS | st.text(max_size=6), inner, max_size=4), max_leaves=20)
CONFIGS = st.dictionaries(KEYS | st.text(max_size=6), VALUES, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=CONFIGS, hf=st.booleans(), world=st.sampled_from([None, 1, 3]))
def test_fuzzed_json_never_crashes(checker, config, hf, world):
    text = json.dumps(config)
    report = check_text(text, checker, Options(hf=hf, world_size=world))
    if not hf and re.search(r"(?<![\w\"])-?Infinity\b", text):
        # json.dumps writes inf as Infinity, which is not JSON: DeepSpeed's hjson loader rejects the file.
        assert report.error and "DeepSpeed's loader (hjson) rejects it" in report.error
        return
    assert report.error is None and all(isinstance(f, Finding) for f in report.findings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet='{}[]:,"\'#/*\n abc1.e-', max_size=60))
def test_fuzzed_text_gives_a_report_or_a_clean_refusal(checker, text):
    report = check_text(text, checker, Options())
    assert (report.error is None) or report.error.startswith("<config>: ")


@pytest.mark.parametrize(("text", "code", "said"), [
    ("[]", 2, "the top level is an array, not an object"),
    ("{", 2, "malformed JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("null", 2, "the top level is null, not an object"),
    # DeepSpeed opens the file with hjson.load: {"a": ...} and x: y are objects with one unknown key, the empty
    # file is {} (hjson.loads("") == {}): each is checked, and the missing batch size is an error.
    ('{"a": {"b": [1, {"c": null}]}}', 1, 'a: "a" is not a key of the top level'),
    ("x: y", 1, 'x: "x" is not a key of the top level'),
    ("", 1, "train_micro_batch_size_per_gpu: deepspeed.initialize raises AssertionError"),
], ids=["array", "truncated", "null", "unknown-nested", "hjson", "empty"])
def test_fuzz_exit_codes_through_the_cli(tmp_path, capsys, text, code, said):
    path = tmp_path / "f.json"
    path.write_text(text)
    assert main(["check", "--version", VERSION, str(path)]) == code
    out, err = capsys.readouterr()
    if code == 2:  # unusable: one line on stderr naming the file, nothing on stdout
        assert (out, err) == ("", f"{path}: {said}\n")
    else:
        assert said in out and err == ""
        assert out.endswith("1 file checked against DeepSpeed 0.19.8: "
                            f"1 errors, {out.count(' warning ')} warnings, 0 notes\n")


def test_finding_paths_exist_in_the_file(checker):
    """Every finding points at a key of the file (or the file itself) — never at an invented path."""
    config: dict[str, Any] = BASE | {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu",
                                                                                          "pin_memory": "yes"}}}
    found = findings(checker, config)
    assert found, "the string for pin_memory is a finding"
    for finding in found:
        node: Any = config
        for part in filter(None, finding.path.split(".")):
            assert isinstance(node, dict) and part in node, (finding.path, finding.message)
            node = node[part]


@pytest.mark.unit
def test_values_are_exactly_what_deepspeeds_hjson_load_gives():
    """DeepSpeed opens config paths with hjson.load; check must see the same values (1e9 -> int, 1e12 float)."""
    import hjson

    from dsfields.configfile import ConfigFileError, parse

    corpus = REPO.parent / "shared" / "realworld-configs"
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.json")) if p.name != "index.json"]
    texts.append('{"a": 1e9, "b": 1.0, "c": 1e12, "d": 0.5, "e": -2.0, "f": 1E3, "g": [12345678901.0, 2e-3]}')
    for text in texts:
        try:
            ours = parse(text).data
        except ConfigFileError:
            continue
        theirs = json.loads(json.dumps(hjson.loads(text)))
        assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)
        assert [type(v) for v in _scalars(ours)] == [type(v) for v in _scalars(theirs)]


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [s for k in sorted(value) for s in _scalars(value[k])]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [value]


def test_a_string_deepspeed_converts_with_int_is_judged_by_int(checker):
    """Issue 25's sampled fact (runtime/data_pipeline/config.py:101): dynamic batching's sizes are read with
    ``int(d.get(...))``, so "4" runs and "x" raises ValueError; its probes show both ("1" accepted, "auto"
    refused by int()), and check judges a string by that conversion instead of passing any string."""
    section = {"data_efficiency": {"data_sampling": {"dynamic_batching": {"min_batch_size": "x"}}}}
    path = "data_efficiency.data_sampling.dynamic_batching.min_batch_size"
    finding = errors(findings(checker, BASE | section))[path]
    assert "int()" in finding.message and "invalid literal" in finding.message and "config.py:" in finding.message
    assert "without quotes" in finding.fix
    section["data_efficiency"]["data_sampling"]["dynamic_batching"]["min_batch_size"] = "4"
    assert path not in errors(findings(checker, BASE | section))


@pytest.mark.unit
def test_checking_unknown_keys_imports_no_pathlib(tmp_path) -> None:
    """pathlib brings urllib.parse and ipaddress: a tenth of check's start-up for a file of typos, where the file
    names, the history index and the snapshots are all read through os.path."""
    config = tmp_path / "ds.json"
    config.write_text('{"train_micro_batch_size_per_gpu": 1, "trian_batch_size": 8, "steps_per_prnt": 10, '
                      '"zero_optimization": {"stage": 2, "overlap_comms": true}}', encoding="utf-8")
    code = (
        "import sys; from dsfields.cli import main\n"
        "try:\n    main(['check', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pathlib', 'urllib.parse', 'ipaddress') if m in sys.modules))"
    )
    proc = fresh_python(code, str(config))
    assert "trian_batch_size" in proc.stdout and "overlap_comms" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "[]"
