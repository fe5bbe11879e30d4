"""Issue 28 point 3: every command in Chinese (``--lang zh`` or a zh locale), English unchanged, same exit codes.

The corpus is shared/realworld-configs next to the checkout (``DSFIELDS_CORPUS`` overrides). Each command is run
in-process through :func:`dsfields.cli.main`, as the console script runs it.
"""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from dsfields.cli import main
from dsfields.model import messages

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("DSFIELDS_CORPUS") or REPO.parent / "shared" / "realworld-configs")
CONFIGS = sorted(p for p in CORPUS.glob("*.json") if p.name != "index.json") if CORPUS.is_dir() else []
NEEDS_CORPUS = pytest.mark.skipif(not CONFIGS, reason=f"no corpus at {CORPUS} (set DSFIELDS_CORPUS)")
CHINESE = re.compile("[\u4e00-\u9fff]")
OFFLOAD = next((p for p in CONFIGS if "z3_offload" in p.name), CONFIGS[0] if CONFIGS else None)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's refusals
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts from an English locale: only what it sets makes Chinese."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)


def english_left(text: str, *groups: str) -> list[str]:
    """Fixed words of the catalogue's English templates still found in ``text`` (DeepSpeed's quoted words,
    marked 原文, are cut off first: they stay English on purpose)."""
    kept = "\n".join(line.split(messages.ORIGINAL)[0] for line in text.splitlines())
    return [words for words in messages.english_templates(*groups) if words in kept]


COMMANDS = {
    "check": lambda f: ("check", str(f)),
    "check --hf": lambda f: ("check", "--hf", str(f)),
    "resolve": lambda f: ("resolve", str(f)),
    "migrate": lambda f: ("migrate", str(f), "--to", "0.19.8", "--from", "0.14.0"),
    "migrate (guessed --from)": lambda f: ("migrate", str(f), "--to", "0.19.8"),
}


@NEEDS_CORPUS
@pytest.mark.parametrize("command", list(COMMANDS))
def test_exit_codes_are_the_same_in_both_languages(command: str) -> None:
    differ = []
    for path in CONFIGS:
        argv = COMMANDS[command](path)
        en, zh = run(*argv, "--lang", "en")[0], run(*argv, "--lang", "zh")[0]
        if en != zh:
            differ.append(f"{path.name}: en {en}, zh {zh}")
    assert not differ, differ


@NEEDS_CORPUS
def test_english_is_the_default_and_unchanged_by_lang_en() -> None:
    for argv in (("check", str(OFFLOAD)), ("resolve", str(OFFLOAD)), ("diff", "0.14.0", "0.16.0"),
                 ("migrate", str(OFFLOAD), "--to", "0.19.8", "--from", "0.10.0")):
        assert run(*argv) == run(*argv, "--lang", "en")
        assert not CHINESE.search("".join(run(*argv)[1:]))


@NEEDS_CORPUS
@pytest.mark.parametrize(("argv", "groups"), [
    (("check", "CORPUS"), ("check.", "error.")),
    (("check", "--hf", "CORPUS"), ("check.", "error.")),
    (("resolve", "OFFLOAD"), ("resolve.",)),
    (("resolve", "--hf", "OFFLOAD"), ("resolve.",)),
    (("migrate", "OFFLOAD", "--to", "0.19.8", "--from", "0.8.0"), ("migrate.",)),
    (("diff", "0.8.0", "0.19.8", "--descriptions"), ("diff.",)),
    (("diff", "0.14.0", "0.16.0", "--format", "markdown"), ("diff.md.",)),
])
def test_zh_output_is_chinese_with_no_english_template_left(argv: tuple[str, ...], groups: tuple[str, ...]) -> None:
    args: list[str] = []
    for arg in argv:
        args += [str(p) for p in CONFIGS] if arg == "CORPUS" else [str(OFFLOAD)] if arg == "OFFLOAD" else [arg]
    code_en, out_en, err_en = run(*args)
    code, out, err = run(*args, "--lang", "zh")
    assert code == code_en
    assert CHINESE.search(out + err)
    assert english_left(out + err, *groups) == []
    assert len(out.splitlines()) == len(out_en.splitlines())  # translated line by line, nothing dropped


@NEEDS_CORPUS
def test_a_zh_locale_is_followed_without_lang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    for argv in (("check", str(OFFLOAD)), ("resolve", str(OFFLOAD)), ("diff", "0.14.0", "0.16.0"),
                 ("upgrade", str(OFFLOAD), "--from", "0.14.0", "--to", "0.16.0")):
        code, out, err = run(*argv)
        assert CHINESE.search(out + err), argv
        assert run(*argv, "--lang", "en")[0] == code and not CHINESE.search("".join(run(*argv, "--lang", "en")[1:]))


@NEEDS_CORPUS
def test_estimate_in_chinese() -> None:
    """``--lang zh`` is the English report line for line: the same figures and DeepSpeed source lines, and every
    line that says something in English (two English words in a row) says it in Chinese."""
    argv = ("estimate", str(OFFLOAD), "--params", "7B", "--largest-layer-params", "200M")
    code, english, _ = run(*argv)
    zh_code, chinese, _ = run(*argv, "--lang", "zh")
    assert zh_code == code == 0
    number = re.compile(r"\d[\d,.]*\d|\d")
    source = re.compile(r"\[deepspeed/[^\]]+\]")
    prose = re.compile(r"(?<![\w.'-])[A-Za-z]{2,} [a-z]{2,}(?![\w'])")
    en_lines, zh_lines = english.splitlines(), chinese.splitlines()
    assert len(zh_lines) == len(en_lines)
    said = 0
    for en_line, zh_line in zip(en_lines, zh_lines, strict=True):
        assert number.findall(zh_line) == number.findall(en_line), (en_line, zh_line)
        assert source.findall(zh_line) == source.findall(en_line), (en_line, zh_line)
        if prose.search(en_line.replace(str(OFFLOAD), "")):
            said += 1
            assert CHINESE.search(zh_line) and not prose.search(zh_line.replace(str(OFFLOAD), "")), zh_line
    assert said >= 20  # headings, buffer explanations, costs, assumptions


@NEEDS_CORPUS
def test_machine_formats_stay_english() -> None:
    """json (and github, sarif) keep English keys and messages for CI filters: identical in both languages."""
    for argv in (("check", str(OFFLOAD), "--format", "json"), ("check", str(OFFLOAD), "--format", "sarif"),
                 ("check", str(OFFLOAD), "--format", "github"), ("resolve", str(OFFLOAD), "--format", "json"),
                 ("diff", "0.14.0", "0.16.0", "--format", "json")):
        assert run(*argv, "--lang", "zh") == run(*argv)
    json.loads(run("check", str(OFFLOAD), "--format", "json", "--lang", "zh")[1])


def test_error_lines_in_chinese_same_exit_code(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.json")
    array = tmp_path / "array.json"
    array.write_text("[1, 2]\n")
    cases = [("resolve", missing), ("check", missing), ("migrate", missing, "--to", "0.19.8"),
             ("resolve", str(array)), ("diff", "9.9", "0.16.0"),
             ("estimate", str(array), "--params", "x")]
    for argv in cases:
        code_en, _, err_en = run(*argv)
        code, _, err = run(*argv, "--lang", "zh")
        assert code == code_en == 2, argv
        assert CHINESE.search(err) and not CHINESE.search(err_en), (argv, err)
        assert len(err.splitlines()) == len(err_en.splitlines())


def test_argparse_refusals_in_chinese() -> None:
    for argv in (("check", "--format", "bogus", "x.json"), ("resolve", "--world-size", "x", "f.json"),
                 ("diff", "0.14.0")):
        code_en, _, err_en = run(*argv)
        code, _, err = run(*argv, "--lang", "zh")
        assert code == code_en == 2
        assert "错误" in err.splitlines()[-1] and "error:" not in err, err
        assert err_en.splitlines()[-1].split(": error: ")[0] == err.splitlines()[-1].split("：错误：")[0]


def test_english_text_passes_through_untouched() -> None:
    """The catalogue never rewrites English: ``localize`` is the identity for ``en``."""
    text = "  x: Field was added: default null\n  error    y: DeepSpeed drops \"auto\" here and uses the default 1"
    assert messages.localize(text, "en", "diff.", "check.") == text
    assert messages.localize(text, "zh", "diff.") .startswith("  x：新增字段：默认值 null")


def test_deepspeed_words_stay_verbatim_and_marked() -> None:
    line = ("  amp: Field was removed and is now rejected: NVIDIA Apex AMP integration has been removed. "
            "(and 1 keys inside it)")
    zh = messages.localize(line, "zh", "diff.")
    assert zh.endswith(messages.ORIGINAL + "NVIDIA Apex AMP integration has been removed.")
    assert "及其中的 1 个键" in zh


def test_versions_stay_where_the_sentence_puts_them() -> None:
    """A release placeholder takes one word: the words after it are still translated, in their place."""
    how = ("guessed 0.16.3 (aio.thread_count is read up to 0.16.3: written for a release in 0.8.0 … 0.16.3; "
           "no default this file relies on changed in between)")
    assert messages.localize(how, "zh", "error.") == (
        "推断为 0.16.3（aio.thread_count 最晚读取到 0.16.3：文件适用于 0.8.0 … 0.16.3 之间的版本；"
        "该文件依赖的默认值在此期间都没有改变）")
