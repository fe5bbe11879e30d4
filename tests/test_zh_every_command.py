"""Issue 28 point 3, the last English: every command run in Chinese (``--lang zh``, and a zh locale without it) over
the corpus and over mutations of it prints no English sentence of its own.

What may stay Latin: code (anything with ``_ . / = `` or a digit, backticks), keys and values (quoted), names
(DeepSpeed, ZeRO, HF Trainer, GPU …) and DeepSpeed's own words, marked ``原文：`` (they run to the end of the line,
or to the full-width bracket that closes them). Everything else — a sentence of two English words or more with no
Chinese character — is counted, and none is allowed.

The corpus is shared/realworld-configs next to the checkout (``DSFIELDS_CORPUS`` overrides).
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from functools import cache
from pathlib import Path

import pytest

from dsfields import load_snapshot
from dsfields.cli import COMMANDS, main
from dsfields.model.messages import ORIGINAL

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("DSFIELDS_CORPUS") or REPO.parent / "shared" / "realworld-configs")
CONFIGS = sorted(p for p in CORPUS.glob("*.json") if p.name != "index.json") if CORPUS.is_dir() else []
NEEDS_CORPUS = pytest.mark.skipif(not CONFIGS, reason=f"no corpus at {CORPUS} (set DSFIELDS_CORPUS)")

CJK = re.compile(r"[\u3400-\u9fff\uff08-\uff1f\u3001-\u3011]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Names, not sentences: they stay Latin in Chinese text (as on the zh site).
NAMES = frozenset("""
DeepSpeed DeepSpeedConfig ZeRO HF Trainer TrainingArguments GPU GPUs CPU NVMe JSON hjson JSONL SARIF PyTorch
torch NCCL CUDA MiB GiB KiB TiB MB GB KB Adam AdamW Lamb pydantic accelerate transformers dsfields VS Code
SchemaStore Schema Draft Markdown markdown json text github sarif en zh LANG FILE OUT DIR URL API ok true
false null auto None True False fp16 bf16 fp32 hpZ MoE MiCS ZenFlow aio zero Init deepspeed initialize OOM
Autotuner memory communication speed offload checkpoint logits PCIe none cpu nvme installed Python any dict
int float str bool list tuple Optional Path Union Literal ge gt le lt stderr stdout schema diff check resolve
migrate upgrade estimate lookup docs extract snapshot usage mcp explain init convert
""".split())
_TOKEN = r"[^\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef]"
TERMS = ("(?:Random )?layer-token drop", "pre-commit", r"mkdocs \w+", "world size", "micro batch", "weight decay",
         "fused kernel", "all-gather", "all-reduce", "reduce-scatter", "all-to-all", "flash attention")
"""Terms Chinese ML writing keeps in English (the zh site's prose uses them too)."""
CODE = re.compile(r"\b[A-Z][\w-]*(?: [A-Z][\w-]*)+\b|" + "|".join(TERMS) + r"|\w+…|`[^`]*`|\"[^\"]*(?:\"|$)|'[^']*'|"
                  r"https?://\S+|"
                  rf"(?<![\w-])--?[\w-]+|{_TOKEN}*[\d_./=<>{{}}\[\]|·×≤≥→←*+]{_TOKEN}*")
"""Code, paths, numbers, options, quoted keys and values, names (Title Case runs: Progressive Layer Drop), and terms
Chinese text writes in English."""


LISTING = re.compile(r"^\W*[\w-]+(?:, [\w-]+)+\W*$")
"""A comma-separated list of single words (choices, class names): values, not a sentence."""


def strip_original(line: str) -> str:
    """``line`` without DeepSpeed's verbatim words: from each ``原文：`` to the full-width bracket that closes it,
    or to the end of the line."""
    while ORIGINAL in line:
        before, _, after = line.partition(ORIGINAL)
        close = after.find("）")
        line = before + (after[close:] if close >= 0 else "")
    return line


@cache
def identifiers() -> frozenset[str]:
    """Keys, python names, sections, optimizer and scheduler names and enum values of a few releases: they stay
    as DeepSpeed spells them."""
    names: set[str] = set()
    for version in ("0.8.0", "0.14.4", "0.19.8"):
        snapshot = load_snapshot(version)
        for path in [*snapshot.all_paths, *snapshot.by_python_name]:
            names.update(path.split("."))
        for catalog in snapshot.catalogs.values():
            names.update(catalog.names)
        for enum in snapshot.enums.values():
            names.update(str(member.get("name")) for member in enum.raw.get("members") or ())
    return frozenset(names)


def is_identifier(word: str) -> bool:
    """Class, exception and enum names (CamelCase, ALLCAPS) and DeepSpeed's keys are not English words."""
    return (word in NAMES or word in identifiers() or bool(re.search(r"[a-z][A-Z]|^[A-Z]{2,}[a-z]?$", word)))


ONE_WORD_SLIPS = frozenset("""
a an and are as at be but by for from in is it its no not of on or than that the then this to was were which with
add delete move remove replace use write set pass see takes fix error warning note nothing none default
""".split())
"""English words that are never a name: one of them alone in a Chinese sentence is an English slip ("删除 it")."""


SENTENCE_END = re.compile(r"[。；：！？]|[.;:!?](?=\s|$)")


def latin_sentences(text: str) -> list[str]:
    """The English of ``text``, outside code, quoted keys and values, names and DeepSpeed's marked words: each
    sentence with no Chinese character and an English word ("DeepSpeed 0.19.8 raises:"), and in a Chinese
    sentence each English phrase of two words or more ("删除 x and use y"). A line ending in ``（原文）：``
    opens a block of DeepSpeed's words: its indented lines."""
    found = []
    block = None
    for line in text.splitlines():
        lead = len(line) - len(line.lstrip())
        if block is not None and line.strip() and lead > block:
            continue
        opens = line.rstrip().endswith(("（原文）：", ORIGINAL)) or (
            ORIGINAL in line and "）" not in line.rpartition(ORIGINAL)[2])  # DeepSpeed's words wrapped on
        block = lead if opens else None
        kept = CODE.sub(" ", strip_original(line))
        for sentence in SENTENCE_END.split(kept):
            chinese = CJK.search(sentence)
            for run in CJK.split(sentence):
                words = [w for w in LATIN_WORD.findall(run) if not is_identifier(w)]
                slip = chinese and len(words) == 1 and words[0].lower() in ONE_WORD_SLIPS
                if (len(words) >= (2 if chinese else 1) or slip) and not LISTING.match(run):
                    found.append(run.strip())
    return found


def test_the_counter_counts_english_and_skips_code_keys_and_quoted_words() -> None:
    """The counter can fail: English counts; code, keys, values, names and DeepSpeed's marked words do not."""
    assert latin_sentences("  x：默认值 1 (10 in all)") == ["in all)"]
    assert latin_sentences('修改：删除 "max_grad_norm" and use "gradient_clipping"') == ["and use"]
    assert latin_sentences("修改：删除 it；然后重试") == ["it"]  # one English word in a Chinese sentence counts
    assert latin_sentences("修改：删除它；offload 到 cpu") == []  # a term Chinese writes in English does not
    assert latin_sentences("在 DeepSpeed 0.19.8 中移除: DeepSpeed 0.19.8 raises: 原文：Legacy key removed.") == [
        "DeepSpeed   raises"]
    assert latin_sentences("  estimate_zero3_model_states_mem_needs(total_params=6740000000, zero_init=True)") == []
    assert latin_sentences("  a：DeepSpeed 会报错：原文：Elastic training has been removed. See the docs.") == []
    assert latin_sentences("  b：DeepSpeed 会报错（原文：extra inputs are not permitted）；默认值 true") == []
    assert latin_sentences("DeepSpeed 源码中的说明（原文）：\n  The maximum number of parameters.\n\nkey  x") == [
        "key  x"]
    assert latin_sentences("  c：优化器卸载 cpu，阶段 3；HF Trainer 填入 \"auto\"；(adam, adamw, lamb)") == []
    assert schema_english("说明。\n\n原文：Some docstring.\n\nExample:\n  x\n\n默认值：`1`") == []
    assert schema_english("Removed: gone") == ["Removed", "gone"]


# ------------------------------------------------------------------ what is run
def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's help and refusals
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def mutations(base: dict, folder: Path) -> list[Path]:
    """Representative mistakes on a real config: a typo, a wrong type, a string boolean, a removed key, a
    deprecated key, a removed optimizer, "auto" outside the Trainer, a value out of range, an unknown section key,
    a legacy form, comments (hjson), malformed JSON, a top-level array."""
    def variant(name: str, change) -> Path:
        config = json.loads(json.dumps(base))
        change(config)
        path = folder / f"{name}.json"
        path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        return path

    zero = lambda c: c.setdefault("zero_optimization", {})  # noqa: E731
    out = [
        variant("typo", lambda c: zero(c).update(stage3_max_live_paramters=1)),
        variant("wrong_type", lambda c: zero(c).update(stage="three")),
        variant("string_bool", lambda c: c.update(fp16={"enabled": "false"})),
        variant("removed", lambda c: c.update(amp={"enabled": True}, curriculum_learning={"enabled": False})),
        variant("deprecated", lambda c: zero(c).update(cpu_offload=True)),
        variant("onebit", lambda c: c.update(optimizer={"type": "OneBitAdam", "params": {"lr": 1e-4,
                                                                                       "max_grad_norm": 1.0}})),
        variant("bad_optimizer", lambda c: c.update(optimizer={"type": "AdamWW", "params": {"lr": 1e-4}})),
        variant("auto", lambda c: c.update(train_batch_size="auto", gradient_clipping="auto")),
        variant("range", lambda c: zero(c).update(stage=7)),
        variant("section_key", lambda c: zero(c).update(offload_param={"device": "cpu", "pin_memoryy": True})),
        variant("scheduler", lambda c: c.update(scheduler={"type": "WarmupDecayLR", "params": {"warmup_max_lr": 1}})),
        variant("legacy", lambda c: c.update(zero_optimization=True, bfloat16={"enabled": True})),
        variant("batch", lambda c: c.update(train_batch_size=7, train_micro_batch_size_per_gpu=2,
                                            gradient_accumulation_steps=2)),
    ]
    (folder / "comments.hjson").write_text("{\n  // a comment\n  train_batch_size: 8\n  fp16: {enabled: true}\n}\n")
    (folder / "broken.json").write_text('{"train_batch_size": 8,,}\n')
    (folder / "array.json").write_text("[1, 2]\n")
    return [*out, folder / "comments.hjson", folder / "broken.json", folder / "array.json"]


def runs(folder: Path) -> Iterator[tuple[str, ...]]:
    """Every command's common forms: over the corpus, the mutations, the help of each subcommand."""
    base = json.loads(next(p for p in CONFIGS if "z3_offload" in p.name).read_text(encoding="utf-8"))
    mutated = [str(p) for p in mutations(base, folder)]
    corpus = [str(p) for p in CONFIGS]
    yield ("check", *corpus)
    yield ("check", "--hf", *corpus)
    yield ("check", *mutated)
    yield ("check", "--hf", *mutated)
    # the accelerate and Trainer paths (issue 39.6): a typo'd accelerate key, an unknown top-level key, a Trainer
    # flag that does not exist, a mixed-precision clash, and a flag given without its value (a refusal)
    accelerate = folder / "accelerate.yaml"
    accelerate.write_text("distributed_type: DEEPSPEED\nmixed_precision: fp16\ndeepspeed_config:\n  zero_stag: 3\n"
                          "  gradient_accumulation_steps: 2\nnonsense_key: 1\n", encoding="utf-8")
    yield ("check", *corpus[:4], "--accelerate-config", str(accelerate))
    yield ("check", *corpus[:4], "--trainer-args=--bf16 --fp16 --deepspeed_bogus 1 --per_device_train_batch_size 4")
    yield ("check", corpus[0], "--trainer-args=--gradient_checkpointing")
    for path in corpus + mutated:
        yield ("resolve", path)
        yield ("migrate", path, "--to", "0.19.8")
    for path in corpus[::4] + mutated:
        yield ("resolve", "--hf", path)
        yield ("migrate", path, "--to", "0.19.8", "--from", "0.8.0")
        yield ("upgrade", path, "--from", "0.10.3", "--to", "0.19.8")
        yield ("upgrade", path, "--from", "0.14.0", "--to", "0.19.8", "--format", "markdown")
        yield ("estimate", path, "--params", "7B", "--largest-layer-params", "200M", "--gpus-per-node", "8",
               "--hidden-size", "4096", "--layers", "32", "--seq-len", "2048")
    yield ("estimate", corpus[0], "--params", "1.3B")
    # convert (issue 40): an accelerate YAML both ways, and check/resolve/estimate reading one
    yaml = Path(__file__).parent / "fixtures" / "accelerate-yaml" / "010-alignment-handbook-deepspeed-zero2.yaml"
    yield ("convert", str(yaml), "--accelerate-version", "1.15.0")
    yield ("convert", str(yaml), "--accelerate-version", "1.15.0", "-o", os.devnull)
    yield ("check", str(yaml))
    yield ("estimate", str(yaml), "--params", "7B")
    yield ("diff", "0.8.0", "0.19.8", "--descriptions")
    yield ("diff", "0.14.0", "0.16.0", "--format", "markdown")
    yield ("diff", "0.19.7", "0.19.8", "--only", "zero_optimization")
    for words in ("stage3_max_live_parameters", "optimizer:AdamW", "Lamb", "OneBitAdam", "scheduler:WarmupDecayLR",
                  "memory", "OOM", "显存", "通信", "speed", "offload", "zero_optimization", "optimizer",
                  "stage3_max_live_paramters", "amp"):
        yield ("lookup", words)
    yield ("lookup", "cpu_offload", "--history")
    yield ("lookup", "OneBitAdam", "--history")
    yield ("lookup", "zero_optimization.stage", "--version", "0.10.3")
    yield ("schema", "-o", os.devnull)
    # the init_inference document (issue 29): its corpus, a typo and a deprecated alias, its lookups and diff
    inference = sorted(str(p) for p in (Path(__file__).parent / "fixtures" / "inference-corpus").rglob("*.json"))
    typo = folder / "inference-typo.json"
    typo.write_text('{"replace_with_kernel_injct": true, "mp_size": 2, "dtype": "fp17"}', encoding="utf-8")
    yield ("check", "--inference", *inference, str(typo))
    for path in inference[:3]:
        yield ("resolve", "--inference", path)
    for words in ("tensor_parallel.tp_size", "replace_with_kernel_inject", "mp_size"):
        yield ("lookup", "--inference", words)
    yield ("diff", "--inference", "0.14.4", "0.19.8")
    yield ("--help",)
    for command in COMMANDS:
        yield (command, "--help")
    # refusals
    yield ("check", str(folder / "nope.json"))
    yield ("diff", "9.9", "0.19.8")
    yield ("estimate", corpus[0])
    yield ("migrate", corpus[0], "--to", "0.19.8", "--from", "0.8.0", "-o", "x", "--in-place")
    yield ("check", "--format", "bogus", corpus[0])
    ddp = folder / "ddp.yaml"
    ddp.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\n", encoding="utf-8")
    yield ("convert", str(ddp))
    yield ("convert", str(Path(__file__).parent / "fixtures" / "accelerate-yaml" / "055-accelerate-deepspeed.yaml"))
    yield ("init", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "80GB", "--accelerate")


def english_in(argv: tuple[str, ...]) -> list[str]:
    """The English of one run. migrate writes the migrated file to stdout: that is the user's own text."""
    _, out, err = run(*argv)
    return latin_sentences(err if argv[0] == "migrate" else out + err)


@NEEDS_CORPUS
def test_every_command_in_chinese_prints_no_english_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    found: dict[str, list[str]] = {}
    for argv in runs(tmp_path):
        sentences = english_in((*argv, "--lang", "zh"))
        if sentences:
            found[" ".join(argv)[:120]] = sorted(set(sentences))[:5]
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


@NEEDS_CORPUS
def test_a_zh_locale_without_lang_is_chinese_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``LANG=zh_CN.UTF-8`` and no ``--lang``: the same Chinese, help included."""
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.setenv("COLUMNS", "100")
    corpus = [str(p) for p in CONFIGS]
    found: dict[str, list[str]] = {}
    for argv in (("check", *corpus), ("resolve", corpus[2]), ("migrate", corpus[10], "--to", "0.19.8"),
                 ("estimate", corpus[2], "--params", "7B", "--largest-layer-params", "200M"),
                 ("upgrade", corpus[2], "--from", "0.10.3", "--to", "0.19.8"), ("diff", "0.14.0", "0.16.0"),
                 ("lookup", "显存"), ("--help",), ("check", "--help"), ("estimate", "--help")):
        code, out, err = run(*argv)
        assert CJK.search(out + err), argv
        assert run(*argv, "--lang", "zh") == (code, out, err), argv
        if latin_sentences(out + err):
            found[" ".join(argv)[:80]] = latin_sentences(out + err)[:5]
    assert not found, found


def schema_english(text: str) -> list[str]:
    """The Latin-only sentences of one schema description. DeepSpeed's docstring there is one paragraph part
    that may hold blank lines: marked ``原文：``, it runs to our next part (已弃用, 默认值, Docs) or the end;
    quoted Markdown lines (``>``) are the docstring too."""
    text = re.sub(ORIGINAL + r".*?(?=\n\n(?:已弃用|默认值|Docs:|\[文档\])|\Z)", "", text, flags=re.S)
    found = []
    for line in text.splitlines():
        if line.startswith(">"):
            continue
        for sentence in SENTENCE_END.split(CODE.sub(" ", line)):
            words = [w for w in LATIN_WORD.findall(sentence) if not is_identifier(w)]
            if words and not CJK.search(sentence) and not LISTING.match(sentence):
                found.append(sentence.strip())
    return found


@pytest.mark.parametrize("flags", [(), ("--hf",), ("--version", "0.10.3"), ("--inference",),
                                   ("--inference", "--version", "0.8.0")])
def test_the_chinese_schema_describes_in_chinese(flags: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """What an editor shows on hover (``description``, ``markdownDescription``) with ``schema --lang zh``: no
    English sentence of ours; DeepSpeed's docstrings are marked 原文."""
    code, out, _ = run("schema", *flags, "--lang", "zh")
    assert code == 0
    found: dict[str, list[str]] = {}

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("description", "markdownDescription") and isinstance(value, str):
                    if schema_english(value):
                        found[f"{where}.{key}"] = schema_english(value)
                else:
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    walk(json.loads(out), "")
    assert not found, json.dumps(dict(list(found.items())[:10]), ensure_ascii=False, indent=1)


def test_every_help_string_has_its_chinese() -> None:
    """``--help`` in Chinese is complete: each option's help, each description, each subcommand line of every
    subcommand (loaded all at once) is in the ``help`` group of :mod:`dsfields.model.chinese`; an option added or
    reworded in English fails here until its Chinese follows."""
    import argparse

    from dsfields.cli import get_parser
    from dsfields.model.chinese import table

    HELP_ZH, ARGPARSE_ZH = table("help"), table("argparse")

    missing: list[str] = []

    def walk(parser: argparse.ArgumentParser) -> None:
        for text in [parser.description] + [a.help for a in parser._actions]:
            if text and text is not argparse.SUPPRESS and text not in HELP_ZH and text not in ARGPARSE_ZH:
                missing.append(text)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing.extend(c.help for c in action._choices_actions if c.help and c.help not in HELP_ZH)
                for sub in action.choices.values():
                    walk(sub)

    walk(get_parser())
    assert not missing, sorted(set(missing))
    code, out, _ = run("check", "--help", "--lang", "zh")
    assert code == 0 and out.startswith("用法：dsfields check") and "选项" in out and "options:" not in out
    assert run("check", "--help")[1].startswith("usage: dsfields check")  # English stays the default


def test_every_launch_rule_and_legacy_note_has_its_chinese() -> None:
    """The curated sentences check and migrate print (what each launch rule enforces, each legacy form's
    conversion and loss) are matched by a catalogue entry: reworded in English, they fail here until their
    Chinese follows."""
    from dsfields.launch.catalogue import RULES
    from dsfields.legacy import LEGACY
    from dsfields.model import messages

    def translated(text: str, *groups: str) -> bool:
        return not messages.localize(text, "zh", *groups) == text

    assert [r.id for r in RULES if not translated(r.enforces, "check.")] == []
    from dsfields.launch.world_rules import RULES as WORLD_RULES

    assert [r.id for r in WORLD_RULES if not (translated(r.enforces, "check.") and translated(r.fix, "check."))] == []
    notes = [t for rule in LEGACY.values() for t in (rule.source, rule.lost) if t]
    assert [t for t in notes if not translated(t, "migrate.", "check.", "error.")] == []
