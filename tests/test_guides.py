"""The guide pages (dsfields/prose/guides/{en,zh}/*.md) and the error catalogue (prose/{en,zh}/errors.toml).

The guides are run, not just read. Conventions a page author follows (both languages alike):

* Every fenced ```json block is a config: it must parse and ``dsfields check`` must exit 0 on it with no
  error and no warning finding (notes are fine). An HTML comment right before the block, after the
  previous code block, changes that::

      <!-- check: --hf -->               check as an HF Trainer config ("auto" is filled by the Trainer)
      <!-- check: --world-size 8 -->     any other `dsfields check` options
      <!-- check: exit 1 -->             a deliberately broken config: check must exit 1 (it is caught)
      <!-- file: ds_zero2.json -->       also write the block under this name for the page's commands

  Options combine in one comment (``<!-- check: --hf exit 1 -->``).
* Every line of a ```bash block that starts with ``dsfields `` is run in-process through
  ``dsfields.cli.main`` in a temporary directory holding the page's ``file:`` blocks; it must exit 0,
  or the code a trailing ``# exit N`` comment names. Other lines (``deepspeed ...``) are not run.
* Links to a field are written ``[text](field:zero_optimization.stage)``; the site rewrites them to
  the field's page. Each must name a field, section or removed key of the newest snapshot. Pages link
  to each other by file name (``02-zero-stages.md``). No raw http(s) link outside code, no images.
* en and zh have the same pages, and each pair the same code blocks (language, markers and text).
* errors.toml: the same ids in en and zh, each with ``pattern`` (a regex, identical in both
  languages), ``cause`` and ``fix``; ``example`` (DeepSpeed's message as printed) must match
  ``pattern``; an entry with ``config`` (JSON) is built with the real ``DeepSpeedConfig`` when
  DeepSpeed is installed and must raise a message ``pattern`` matches. Every id is an anchor
  (``{#id}``) of 07-error-messages.md in both languages.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import NamedTuple

import pytest

from dsfields.cli import main
from dsfields.model.store import available_versions, load

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

PROSE = Path(__file__).resolve().parent.parent / "extractor" / "dsfields" / "prose"
GUIDES = PROSE / "guides"
LANGS = ("en", "zh")
CALCULATOR = PROSE.parent / "docs" / "assets" / "batch-calculator.js"
NEWEST = available_versions()[-1]

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*(check|file):\s*(.*?)\s*-->")
FIELD_LINK = re.compile(r"\]\(field:([^)#\s]+)\)")
EXIT_COMMENT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


class Block(NamedTuple):
    page: str
    lang: str
    kind: str
    code: str
    check: tuple[str, ...]
    file: str | None


def pages(lang: str) -> list[Path]:
    return sorted((GUIDES / lang).glob("*.md"))


def blocks(path: Path, lang: str) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    out, start = [], 0
    for match in FENCE.finditer(text):
        check: list[str] = []
        file = None
        for kind, value in MARKER.findall(text[start:match.start()]):
            if kind == "check":
                check += shlex.split(value)
            else:
                file = value
        out.append(Block(path.name, lang, match.group(1), match.group(2), tuple(check), file))
        start = match.end()
    return out


def expected_exit(options: tuple[str, ...]) -> tuple[list[str], int]:
    args, code, it = [], 0, iter(options)
    for token in it:
        if token == "exit":
            code = int(next(it))
        else:
            args.append(token)
    return args, code


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


ALL_BLOCKS = [b for lang in LANGS for p in pages(lang) for b in blocks(p, lang)]
JSON_BLOCKS = [b for b in ALL_BLOCKS if b.kind == "json"]
BASH_BLOCKS = [b for b in ALL_BLOCKS if b.kind == "bash"]


def block_id(block: Block) -> str:
    return f"{block.lang}/{block.page}#{block.file or block.code[:30].strip()}"


def test_there_are_guides():
    assert len(pages("en")) >= 7
    assert JSON_BLOCKS and BASH_BLOCKS


def test_en_and_zh_have_the_same_pages_and_code():
    assert [p.name for p in pages("en")] == [p.name for p in pages("zh")]
    for en_page in pages("en"):
        zh_page = GUIDES / "zh" / en_page.name
        en_code = [b[2:] for b in blocks(en_page, "en")]
        zh_code = [b[2:] for b in blocks(zh_page, "zh")]
        assert len(en_code) == len(zh_code), en_page.name
        for i, (a, b) in enumerate(zip(en_code, zh_code, strict=True)):
            assert a == b, f"{en_page.name}: code block {i + 1} differs between en and zh"


@pytest.mark.data
@pytest.mark.parametrize("block", JSON_BLOCKS, ids=block_id)
def test_json_blocks_pass_dsfields_check(block, tmp_path):
    json.loads(block.code)
    args, code = expected_exit(block.check)
    path = tmp_path / (block.file or "ds_config.json")
    path.write_text(block.code, encoding="utf-8")
    got, out, err = run(["check", "--format", "json", *args, str(path)])
    assert got == code, f"exit {got}, expected {code}\n{out}{err}"
    if code == 0:
        findings = json.loads(out)["files"][0]["findings"]
        loud = [f"{f['severity']} {f['path']}: {f['message']}" for f in findings
                if f["severity"] in ("error", "warning")]
        assert loud == []


def commands(block: Block) -> list[tuple[list[str], int]]:
    out = []
    for line in block.code.splitlines():
        line = line.strip()
        if not line.startswith("dsfields "):
            continue
        code = 0
        if m := EXIT_COMMENT.search(line):
            code, line = int(m.group(1)), line[:m.start()]
        out.append((shlex.split(line, comments=True)[1:], code))
    return out


COMMANDS = [(b, args, code) for b in BASH_BLOCKS for args, code in commands(b)]


@pytest.mark.data
@pytest.mark.parametrize(("block", "args", "code"), COMMANDS,
                         ids=[f"{b.lang}/{b.page}: {' '.join(a)}" for b, a, _ in COMMANDS])
def test_commands_exit_as_the_page_says(block, args, code, tmp_path, monkeypatch):
    for other in JSON_BLOCKS:
        if other.page == block.page and other.lang == block.lang and other.file:
            (tmp_path / other.file).write_text(other.code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    got, out, err = run(args)
    assert got == code, f"dsfields {' '.join(args)}: exit {got}, the page says {code}\n{out}{err}"


def test_every_command_file_is_a_block_of_the_page():
    for block, args, _ in COMMANDS:
        if args and args[0] == "check":
            files = [a for a in args[1:] if a.endswith((".json", ".hjson"))]
            named = {b.file for b in JSON_BLOCKS if b.page == block.page and b.lang == block.lang}
            assert set(files) <= named, (block.page, files)


@pytest.fixture(scope="module")
def newest_paths() -> set[str]:
    snapshot = load(NEWEST)
    return set(snapshot.fields) | set(snapshot.sections) | set(snapshot.removed)


# Its fixture reads the newest committed snapshot: a unit test only while another test made it first.
@pytest.mark.data
@pytest.mark.parametrize("lang", LANGS)
def test_field_links_name_real_fields_and_nothing_leaves_the_site(lang, newest_paths):
    for path in pages(lang):
        text = path.read_text(encoding="utf-8")
        prose_only = FENCE.sub("", text)
        prose_only = re.sub(r"`[^`\n]*`", "", prose_only)
        for target in FIELD_LINK.findall(text):
            assert target in newest_paths, f"{lang}/{path.name}: field:{target} is no {NEWEST} field"
        assert not re.search(r"https?://", prose_only), f"{lang}/{path.name}: raw external link"
        assert "![" not in prose_only, f"{lang}/{path.name}: image"
        for target in re.findall(r"\]\(([^)#:\s]+\.md)(?:#[^)]*)?\)", prose_only):
            assert (GUIDES / lang / target).is_file(), f"{lang}/{path.name}: link to missing {target}"


def test_the_batch_page_has_the_calculator_placeholder():
    for lang in LANGS:
        assert '<div class="dsf-batch-calculator"></div>' in (GUIDES / lang / "01-batch-size.md").read_text()


# ---------------------------------------------------------------- errors.toml


def errors(lang: str) -> dict[str, dict]:
    path = PROSE / lang / "errors.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)


def test_errors_toml_is_bilingual_and_complete():
    en, zh = errors("en"), errors("zh")
    assert en and set(en) == set(zh)
    for key, entry in en.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key), key
        for lang, table in (("en", en), ("zh", zh)):
            for field in ("pattern", "cause", "fix"):
                assert isinstance(table[key].get(field), str) and table[key][field].strip(), (lang, key, field)
        assert zh[key]["pattern"] == entry["pattern"], key
        assert zh[key].get("example") == entry.get("example"), key
        assert zh[key].get("config") == entry.get("config"), key
        compiled = re.compile(entry["pattern"])
        if "example" in entry:
            assert compiled.search(entry["example"]), (key, entry["example"])


def test_every_error_has_a_section_on_the_error_page():
    ids = set(errors("en"))
    for lang in LANGS:
        text = (GUIDES / lang / "07-error-messages.md").read_text(encoding="utf-8")
        anchors = set(re.findall(r"\{#([a-z0-9-]+)\}", text))
        assert ids <= anchors, (lang, sorted(ids - anchors))


def _deepspeed_config():
    try:
        from deepspeed.runtime.config import DeepSpeedConfig
    except Exception:  # not installed, or no torch
        return None
    return DeepSpeedConfig


CONFIG_ERRORS = [(k, e) for k, e in errors("en").items() if "config" in e]


@pytest.mark.deepspeed
@pytest.mark.parametrize(("key", "entry"), CONFIG_ERRORS, ids=[k for k, _ in CONFIG_ERRORS])
def test_patterns_match_what_deepspeed_raises(key, entry):
    deepspeed_config = _deepspeed_config()
    if deepspeed_config is None:
        pytest.skip("DeepSpeed not installed")
    import logging

    logging.disable(logging.CRITICAL)
    try:
        # DeepSpeed raises assertions, pydantic errors and its own exception classes
        with pytest.raises(Exception) as info:
            deepspeed_config(json.loads(entry["config"]))
    finally:
        logging.disable(logging.NOTSET)
    assert re.search(entry["pattern"], str(info.value)), (key, str(info.value))


# ---------------------------------------------------------------- the batch calculator


def test_calculator_resolves_like_deepspeed(tmp_path):
    """The calculator's resolve() against the batch rule's one home (dsfields.model.batch): the same verdict and,
    where DeepSpeed accepts, the same three values."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    from dsfields.model.batch import complete
    from dsfields.model.batch import refusal as resolve_batch

    cases = [(64, 2, None, 4), (64, None, 8, 4), (None, 2, 8, 4), (64, None, None, 8), (None, 2, None, 8),
             (64, 3, 8, 8), (10, 4, None, 1), (4, None, 8, 1), (None, None, 4, 2), (96, 4, 3, 8), (48, 2, 3, 8)]
    script = (f"const c = require({json.dumps(str(CALCULATOR))});"
              f"const cases = {json.dumps(cases)};"
              "console.log(JSON.stringify(cases.map(([t, m, g, w]) => c.resolve(t, m, g, w))));")
    result = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True,
                            env={**os.environ, "NODE_OPTIONS": ""})
    for (tbs, micro, gas, world), got in zip(cases, json.loads(result.stdout), strict=True):
        problem = resolve_batch(tbs, micro, gas, world)
        assert (got["error"] is None) == (problem is None), (tbs, micro, gas, world, got, problem)
        if problem is None:
            assert got["train_batch_size"] == got["micro"] * got["gas"] * world
            assert (got["train_batch_size"], got["micro"], got["gas"]) == complete(tbs, micro, gas, world)
            for given, name in ((tbs, "train_batch_size"), (micro, "micro"), (gas, "gas")):
                assert given is None or got[name] == given


# ---------------------------------------------------------------- what a reader of an older release is told


def test_runs_of_release_indexes():
    from dsfields.model.source_names import index_runs

    assert index_runs([0, 1, 2, 5, 7, 8]) == "0-2 5-5 7-8"
    assert index_runs([3]) == "3-3" and index_runs([]) == ""


@pytest.mark.data
def test_the_guides_scope_names_what_older_releases_lack_and_nothing_the_newest_lacks():
    """Issue 39: the names a guide spells that an older release lacks are found with the releases lacking them (the
    site marks them for that release's reader, test_docs_site.py); a sentence naming Muon is one 0.10.3 lacks."""
    from dsfields.docs.guide_scope import guide_scope
    from dsfields.docs.planning import guides
    from dsfields.model.store import available_versions, load, repo_generated_dir

    versions = available_versions()
    snapshots = {v: load(v).raw for v in versions}
    root = os.fspath(repo_generated_dir())

    def lacking(scope: dict[str, str], name: str) -> set[str]:
        out = set()
        for run in scope[name].split():
            first, last = (int(x) for x in run.split("-"))
            out.update(versions[first:last + 1])
        return out

    for lang in ("en", "zh"):
        scope = guide_scope([text for _stem, _title, text in guides(lang)], snapshots, versions, root)
        assert {"ZenFlowCPUAdam", "use_multi_rank_bucket_allreduce", "compute_grad_norm"} <= set(scope), lang
        assert "0.14.4" in lacking(scope, "ZenFlowCPUAdam") and "0.9.5" in lacking(scope, "compute_grad_norm")
        # a link names its key's whole path, though its text is "ratio" (the 0.10.1 audit: unmarked)
        assert {"0.10.1", "0.12.2"} <= lacking(scope, "zero_optimization.offload_optimizer.ratio")
        assert "0.12.3" not in lacking(scope, "zero_optimization.offload_optimizer.ratio")
        assert all(versions[-1] not in lacking(scope, name) for name in scope)
    mutated = guide_scope(["With ZeRO, `Muon` is on the tested list."], snapshots, versions, root)
    assert "0.10.3" in lacking(mutated, "Muon") and versions[-1] not in lacking(mutated, "Muon")


@pytest.mark.data
def test_a_message_the_guides_quote_is_scoped_to_the_releases_that_raise_it():
    """Issue 39 (an outside audit of 0.9.5): guide 07 quotes "Type bf16 is not supported on your device." as
    0.19.8 raises it; 0.9.5 never checks the device, so its reader is told the release lacks the message."""
    from dsfields.docs.guide_scope import message_scope
    from dsfields.docs.planning import guides
    from dsfields.model.store import available_versions, repo_generated_dir

    versions = available_versions()
    for lang in ("en", "zh"):
        quoted = message_scope([text for _stem, _title, text in guides(lang)], versions,
                               os.fspath(repo_generated_dir()))
        runs = quoted["Type bf16 is not supported on your device."]
        lacking = {versions[at] for run in runs.split() for at in range(int(run.split("-")[0]),
                                                                         int(run.split("-")[1]) + 1)}
        assert "0.9.5" in lacking and versions[-1] not in lacking, lang
