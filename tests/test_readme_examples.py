"""The README's command examples run as tests (as docs/*.md's do in test_docs_examples.py): each ```bash block of
one ``dsfields`` line followed by a ```text block prints exactly that block, run from the checkout's root at 100
columns. The editor-schema example is checked the way an editor uses it: the written schema validates a real
config with ``jsonschema``, and the ``json.schemas`` patterns pick the corpus's HF Trainer templates.
"""

from __future__ import annotations

import fnmatch
import io
import json
import os
import re
import shlex
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from dsfields.cli import main

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
EXAMPLE = re.compile(r"^```bash\n(dsfields [^\n]*)\n```\n\n```text\n(.*?)^```", re.S | re.M)
CORPUS = Path(os.environ.get("DSFIELDS_CORPUS") or REPO.parent / "shared" / "realworld-configs")


def run(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(argv)
        except SystemExit:
            pass
    return out.getvalue() + err.getvalue()


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("COLUMNS", "100")
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)


def test_the_readme_shows_one_example_of_each_new_answer() -> None:
    commands = [command for command, _ in EXAMPLE.findall(README)]
    for wanted in ("dsfields estimate ", "dsfields lookup optimizer:AdamW", "dsfields lookup 通信",
                   "dsfields check --lang zh"):
        assert any(c.startswith(wanted) for c in commands), wanted
    assert "dsfields schema --version 0.19.8 --hf --lang zh -o ds_config.hf.schema.json" in README


@pytest.mark.parametrize(("command", "expected"), EXAMPLE.findall(README), ids=lambda v: v[:50])
def test_readme_example_output(command: str, expected: str, at_root: None) -> None:
    assert run(shlex.split(command)[1:]) == expected


def test_the_editor_schema_validates_a_real_config_as_vs_code_would(at_root: None, tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    command = re.search(r"^(dsfields schema [^\n]*)$", README, re.M)
    assert command
    argv = shlex.split(command.group(1))[1:]
    target = tmp_path / argv[argv.index("-o") + 1]
    argv[argv.index("-o") + 1] = str(target)
    assert run(argv) == ""
    schema = json.loads(target.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    config = json.loads((REPO / "docs/examples/zero3_offload_7b.json").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(config)) == []  # the HF Trainer's ZeRO-3 template, "auto" and all
    broken = json.loads(json.dumps(config))
    broken["zero_optimization"]["stage3_max_live_paramters"] = 1  # a typo DeepSpeed's pydantic model rejects
    assert [e.json_path for e in validator.iter_errors(broken)] == ["$.zero_optimization"]
    hover = schema["properties"]["zero_optimization"]["properties"]["stage3_max_live_parameters"]
    assert re.search("[\u4e00-\u9fff]", hover["markdownDescription"])  # --lang zh: the hover is Chinese

    settings = json.loads(re.search(r"^```json\n(\{\n  \"json.schemas\".*?)^```", README, re.S | re.M).group(1))
    patterns = settings["json.schemas"][0]["fileMatch"]

    def picked(path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatch(path if "/" in p else name, p) for p in patterns)

    assert picked("tests/deepspeed/ds_config_zero3.json")  # transformers' own templates
    assert picked("examples/deepspeed/ds_z3_offload_config.json")  # LLaMA-Factory's
    if (CORPUS / "index.json").is_file():
        paths = [e["path"] for e in json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))]
        assert sum(picked(p) for p in paths) >= 10, [p for p in paths if picked(p)]
