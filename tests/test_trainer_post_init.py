"""The Trainer's own argument checks per release, and its warmup fill, as ``check --trainer-args`` judges them.

Issue 42, point 4: every refusal of ``TrainingArguments.__post_init__`` (and the methods it calls) about
DeepSpeed, the batch, warmup or precision that a release's snapshot holds, and that the words alone decide, is
triggered here by flags built from the check's own condition (a small solver over the recorded ``when`` source:
no hand-kept list of flags or messages), in every snapshotted transformers release: ``check`` must exit 1 and
quote that very message. A condition that asks the machine or the installed packages (a call such as
``is_torch_bf16_gpu_available()``) is not the words' to decide and is left out, as ``check`` leaves it.

The integration test makes the same triggers in the installed transformers: the real ``TrainingArguments``
must raise the message ``check`` quotes.

The warmup fill (issue 42's false alarms): on 4.x an ``"auto"`` ``warmup_num_steps`` is filled with
``get_warmup_steps``, 0 without a warmup flag (DeepSpeed 0.19.6+ refuses 0 when it builds the scheduler); with
``--warmup_steps``/``--warmup_ratio`` it is the flag's value, and ``check`` must not say "filled with 0".
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from dsfields.cli import main

pytestmark = pytest.mark.lane("data")  # the tests below without a lane mark of their own

REPO = Path(__file__).resolve().parents[1]
HF = REPO / "generated" / "hf"
TOPIC = re.compile(r"deepspeed|batch|warmup|fp16|bf16|half|precision|accumulation", re.I)
"""The subjects point 4 names: the checks whose condition or message speaks of one of them."""
CONFIG = {"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto",
          "gradient_accumulation_steps": "auto", "train_batch_size": "auto"}


class Unsolved(Exception):
    """A condition the words alone do not decide (a call, a comparison with no value that meets it)."""


def _solve(node: ast.AST, fields: dict, want: bool, out: dict) -> None:
    """Values of ``self.<field>`` that make ``node`` come out ``want``."""
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And) == want:  # and→True / or→False: every operand
            for value in node.values:
                _solve(value, fields, want, out)
            return
        for value in node.values:  # or→True / and→False: the first operand that can be made so
            trial = dict(out)
            try:
                _solve(value, fields, want, trial)
            except Unsolved:
                continue
            out.update(trial)
            return
        raise Unsolved(ast.unparse(node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _solve(node.operand, fields, not want, out)
        return
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance" and want is False:
        name = _field(node.args[0], fields)
        kind = ast.unparse(node.args[1])
        if kind == "int" and fields[name].get("type") in ("int", "float"):
            out[name] = 0.5
            return
        raise Unsolved(ast.unparse(node))
    if isinstance(node, ast.Attribute):
        name = _field(node, fields)
        if fields[name].get("type") != "bool":
            raise Unsolved(ast.unparse(node))
        _set(out, name, want)
        return
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and want:
        name = _field(node.left, fields)
        try:
            bound = ast.literal_eval(node.comparators[0])
        except ValueError:
            raise Unsolved(ast.unparse(node)) from None
        op = node.ops[0]
        numeric = isinstance(bound, (int, float)) and not isinstance(bound, bool)
        if isinstance(op, ast.Eq) or isinstance(op, ast.In) and isinstance(bound, (list, tuple)) and bound:
            _set(out, name, bound if isinstance(op, ast.Eq) else bound[0])
        elif numeric and isinstance(op, (ast.Lt, ast.LtE)):
            _set(out, name, bound - 1)
        elif numeric and isinstance(op, (ast.Gt, ast.GtE)):
            _set(out, name, bound + 0.5 if fields[name].get("type") == "float" else bound + 1)
        else:
            raise Unsolved(ast.unparse(node))
        return
    raise Unsolved(ast.unparse(node))


def _field(node: ast.AST, fields: dict) -> str:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
            and node.attr in fields:
        return node.attr
    raise Unsolved(ast.unparse(node))


def _set(out: dict, name: str, value) -> None:
    if name in out and out[name] != value:
        raise Unsolved(f"{name}: {out[name]!r} and {value!r}")
    out[name] = value


def _words(values: dict, fields: dict) -> list[str] | None:
    words: list[str] = []
    for name, value in values.items():
        if fields[name].get("type") == "bool":
            if value is True:
                words.append(f"--{name}")
            elif fields[name].get("default") is not False:
                words += [f"--{name}", "false"]
            continue
        if fields[name].get("type") == "int" and isinstance(value, float) and not value.is_integer():
            return None  # HfArgumentParser refuses it before __post_init__ runs: not the check's to say
        words += [f"--{name}", str(value)]
    return words


def triggers(version: str) -> list[tuple[list[str], str, int]]:
    """(flags, the message's literal head, line) for each topical raise of ``__post_init__`` the words decide."""
    data = json.loads((HF / f"transformers-{version}.json").read_text(encoding="utf-8"))
    fields = data["training_arguments"]["fields"]
    post_init = data["rules"]["programs"]["post_init"]
    found = []
    for program in post_init["programs"].values():
        for step in program.get("steps", []):
            if step.get("op") != "raise" or not step.get("when"):
                continue
            source = " and ".join(f"({w})" for w in step["when"])
            message = str(step.get("message") or "")
            if not TOPIC.search(source + " " + message):
                continue
            head = message.split("{", 1)[0].strip()
            if len(head) < 12:  # a message made at run time says nothing to compare
                continue
            values: dict = {}
            try:
                _solve(ast.parse(source, mode="eval").body, fields, True, values)
            except (Unsolved, SyntaxError):
                continue
            words = _words(values, fields)
            if words:
                found.append((words, head, step["line"]))
    return found


def _releases() -> list[str]:
    return sorted(p.name[len("transformers-"):-len(".json")] for p in HF.glob("transformers-*.json"))


def _check(tmp_path: Path, words: list[str], version: str, config: dict | None = None) -> tuple[int, str]:
    import shlex

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(config or CONFIG), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", str(path), f"--trainer-args={shlex.join(words)}", "--hf-version", version,
                     "--format", "json"])
    return code, out.getvalue()


@pytest.mark.parametrize("version", _releases())
def test_each_topical_training_arguments_refusal_is_quoted(version, tmp_path):
    found = triggers(version)
    # the fp16-with-bf16 check exists in every release: the solver reads at least that one
    assert any("--fp16" in words and "--bf16" in words for words, _, _ in found), found
    wrong = []
    for words, head, line in found:
        code, out = _check(tmp_path, words, version)
        messages = [f.get("message", "") for f in json.loads(out)["files"][0]["findings"]] if out.strip() else []
        if code != 1 or not any(head in m and f"training_args.py:{line})" in m for m in messages):
            wrong.append((words, head, line, code, messages[:2]))
    assert not wrong


def test_triggers_are_made_from_the_release_conditions():
    """The solver reads 4.x's warmup ratio range (its integer check on warmup_steps is argparse's first: a float
    never reaches it), and 5.x's one warmup check."""
    old = {tuple(w) for w, _, _ in triggers("4.44.2")}
    assert ("--warmup_ratio", "-1") in old and not any("--warmup_steps" in w for w in old)
    new = {tuple(w) for w, _, _ in triggers("5.24.0")}
    assert ("--warmup_steps", "-1") in new and not any("--warmup_ratio" in w for w in new)


@pytest.mark.integration
def test_the_installed_training_arguments_raise_what_check_quotes(tmp_path):
    transformers = pytest.importorskip("transformers")
    version = transformers.__version__
    if not (HF / f"transformers-{version}.json").is_file():
        pytest.skip(f"transformers {version} has no snapshot")
    import transformers.training_args as training_args
    from transformers import HfArgumentParser, TrainingArguments

    training_args.is_torch_bf16_gpu_available = lambda: True  # the witness's one lifted machine limit
    found = triggers(version)
    assert found
    for words, head, _line in found:
        with pytest.raises(ValueError) as raised:
            HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
                args=[*words, "--output_dir", str(tmp_path), "--report_to", "none"])
        assert head in str(raised.value), (words, head)


WARMUP_AUTO = {**CONFIG, "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
               "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                            "warmup_num_steps": "auto"}}}


@pytest.mark.parametrize("version", ["4.44.2", "4.57.6"])
@pytest.mark.parametrize("words, refused", [
    (["--max_steps", "10"], True),  # 4.x fills 0 without warmup: DeepSpeed 0.19.8's scheduler refuses it
    (["--max_steps", "10", "--warmup_steps", "5"], False),
    (["--max_steps", "100", "--warmup_ratio", "0.1"], False),
    (["--max_steps", "1", "--warmup_ratio", "0.1"], False),  # ceil(1 x 0.1) = 1
])
def test_4x_warmup_fill_is_judged_on_the_flags(version, words, refused, tmp_path):
    code, out = _check(tmp_path, words, version, WARMUP_AUTO)
    said = [f["message"] for f in json.loads(out)["files"][0]["findings"] if f.get("severity") == "error"]
    assert (code == 1) == refused, said
    assert all("filled with 0" not in m for m in said) or refused


@pytest.mark.parametrize("words, warmup", [(["--max_steps", "10"], 1), (["--max_steps", "10", "--warmup_steps",
                                                                         "0.5"], 5),
                                           (["--max_steps", "1", "--warmup_steps", "0.1"], 1)])
def test_5x_warmup_fill_is_at_least_one(words, warmup, tmp_path):
    code, _ = _check(tmp_path, words, "5.24.0", WARMUP_AUTO)
    assert code == 0
    path = tmp_path / "ds.json"
    out = io.StringIO()
    import shlex

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["resolve", str(path), f"--trainer-args={shlex.join(words)}", "--hf-version", "5.24.0",
              "--format", "json"])
    assert json.loads(out.getvalue())["scheduler.params.warmup_num_steps"]["value"] == warmup


AUTOTUNING = {**CONFIG, "zero_optimization": {"stage": 3}, "bf16": {"enabled": True},
              "autotuning": {"enabled": True, "start_profile_step": 3, "end_profile_step": 7}}


@pytest.mark.parametrize("words, refused", [(["--bf16", "--max_steps", "7"], False),
                                            (["--bf16", "--max_steps", "8"], True),
                                            (["--bf16", "--num_train_epochs", "20"], None)])
def test_autotuning_trial_ends_the_trainers_run_after_end_profile_step(words, refused, tmp_path):
    """Seen with the real Trainer (bench/hf_trainer_differential.py, LLaMA-Factory's ds_z3_e4_autotune.json): with
    autotuning.enabled, 7 steps train and 8 end in the engine's exit(). Epochs without --dataset-size: the step
    count is not known, and nothing is said."""
    code, out = _check(tmp_path, words, "5.24.0", AUTOTUNING)
    rules = [f["rule"] for f in json.loads(out)["files"][0]["findings"] if f.get("severity") == "error"]
    assert ("hf-autotuning-exit" in rules) is bool(refused)
    assert code == (1 if refused else 0), rules
