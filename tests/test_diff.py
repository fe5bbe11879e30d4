"""The diff engine (one table of snapshot fragments → expected changes) and ``dsfields diff``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsfields.cli import main
from dsfields.diff import Change, ChangeKind, diff_snapshots, parse_kinds
from dsfields.model.store import FORMAT_VERSION, dumps

pytestmark = pytest.mark.unit

K = ChangeKind


def field(path: str, **attrs: Any) -> dict[str, Any]:
    """A field record with the defaults of a plain pydantic key; ``attrs`` override."""
    section, _, key = path.rpartition(".")
    record: dict[str, Any] = {
        "path": path, "section": section, "key": key, "python_name": key, "reader": "pydantic",
        "type": "int", "json_types": ["integer"], "default": 1, "default_repr": None, "constraints": {},
        "choices": None, "required": False, "deprecated": None, "effective_default": None,
        "description": "A key.", "is_section": False,
    }
    record.update(attrs)
    return record


def snap(*fields: dict[str, Any], removed: dict[str, str] | None = None,
         sections: dict[str, str] | None = None, version: str = "0.0.0") -> dict[str, Any]:
    """A snapshot fragment; ``removed`` maps path → message, ``sections`` path → unknown_keys."""
    return {
        "format_version": FORMAT_VERSION,
        "deepspeed_version": version,
        "fields": {f["path"]: f for f in fields},
        "removed": {p: {"path": p, "section": p.rpartition(".")[0], "key": p.rpartition(".")[2], "message": m}
                    for p, m in (removed or {}).items()},
        "sections": {p: {"kind": "model" if u == "error" else "dict", "unknown_keys": u, "strict": u == "error"}
                     for p, u in (sections or {}).items()},
    }


ZERO = {"0": False, "1": False, "2": False, "3": True}

# (old fragment, new fragment, expected (kind, path, old, new) in output order); descriptions off.
CASES = [
    pytest.param(snap(field("a.x")), snap(field("a.x")), [], id="unchanged"),
    pytest.param(snap(), snap(field("a.x")), [(K.ADDED, "a.x", None, 1)], id="added"),
    pytest.param(snap(field("a.x")), snap(), [(K.REMOVED, "a.x", 1, None)], id="removed"),
    pytest.param(
        snap(field("z.cpu_offload", type="bool", default=False)),
        snap(field("z.cpu_offload", type="bool", default=False,
                   deprecated={"new_param": "offload_optimizer", "converts_value": True}),
             field("z.offload_optimizer", type="Optional[Cfg]", default=None)),
        [(K.RENAMED, "z.cpu_offload", "z.cpu_offload", "z.offload_optimizer")],
        id="renamed-deprecated-alias",
    ),
    pytest.param(
        snap(field("z.stage3_foo", python_name="foo")),
        snap(field("z.foo_limit", python_name="foo", default=2)),
        [(K.DEFAULT_CHANGED, "z.foo_limit", 1, 2), (K.RENAMED, "z.stage3_foo", "z.stage3_foo", "z.foo_limit")],
        id="renamed-new-alias-same-python-name",
    ),
    pytest.param(snap(field("a.x", default=1)), snap(field("a.x", default=2)),
                 [(K.DEFAULT_CHANGED, "a.x", 1, 2)], id="default"),
    pytest.param(snap(field("a.x", default=9223372036854775807)),
                 snap(field("a.x", default=9223372036854775807, default_repr="sys.maxsize")),
                 [(K.DEFAULT_CHANGED, "a.x", 9223372036854775807, 9223372036854775807)], id="default-repr"),
    pytest.param(snap(field("z.overlap", default=None, effective_default={**ZERO, "3": False})),
                 snap(field("z.overlap", default=None, effective_default=ZERO)),
                 [(K.DEFAULT_CHANGED, "z.overlap", {**ZERO, "3": False}, ZERO)], id="effective-default"),
    pytest.param(snap(field("a.x", type="int")), snap(field("a.x", type="Optional[int]")),
                 [(K.TYPE_CHANGED, "a.x", "int", "Optional[int]")], id="type"),
    pytest.param(snap(field("a.x", type="any", json_types=[])),
                 snap(field("a.x", type="any", json_types=["integer"])),
                 [(K.TYPE_CHANGED, "a.x", [], ["integer"])], id="json-types"),
    pytest.param(snap(field("a.x", constraints={"ge": 0})), snap(field("a.x", constraints={"gt": 0})),
                 [(K.CONSTRAINT_CHANGED, "a.x", {"ge": 0, "gt": None}, {"ge": None, "gt": 0})], id="bounds"),
    pytest.param(snap(field("a.x", choices=[1, 2])), snap(field("a.x", choices=[1, 2, 3])),
                 [(K.CONSTRAINT_CHANGED, "a.x", {"choices": [1, 2]}, {"choices": [1, 2, 3]})], id="choices"),
    pytest.param(snap(field("a.x"), field("a.y")), snap(field("a.x", deprecated={"new_param": "y"}), field("a.y")),
                 [(K.DEPRECATED, "a.x", None, {"new_param": "y"})], id="deprecated"),
    pytest.param(snap(field("a.x", deprecated={"deprecated_msg": "old"})), snap(field("a.x")),
                 [(K.UNDEPRECATED, "a.x", {"deprecated_msg": "old"}, None)], id="undeprecated"),
    pytest.param(snap(field("z.mics_shard_size", default=-1)), snap(removed={"z.mics_shard_size": "MiCS removed"}),
                 [(K.BECAME_REMOVED, "z.mics_shard_size", None, "MiCS removed")], id="became-removed"),
    pytest.param(snap(field("nebula", is_section=True), field("nebula.enabled")),
                 snap(removed={"nebula": "Nebula removed"}),
                 [(K.BECAME_REMOVED, "nebula", None, "Nebula removed"),
                  (K.BECAME_REMOVED, "nebula.enabled", None, "Nebula removed")], id="became-removed-section"),
    pytest.param(snap(), snap(field("eigenvalue", reader="dict"), removed={"eigenvalue": "MoQ removed"}),
                 [(K.BECAME_REMOVED, "eigenvalue", None, "MoQ removed")], id="newly-rejected-not-read-before"),
    pytest.param(snap(removed={"amp": "gone"}), snap(field("amp")),
                 [(K.ADDED, "amp", None, 1)], id="reintroduced"),
    pytest.param(snap(field("amp"), removed={"amp": "gone"}), snap(field("amp")),
                 [(K.ADDED, "amp", None, 1)], id="reintroduced-was-read-to-reject"),
    pytest.param(snap(removed={"amp": "gone"}), snap(), [(K.REMOVED, "amp", "gone", None)], id="no-longer-rejected"),
    pytest.param(snap(sections={"fp16": "ignored"}), snap(sections={"fp16": "error"}),
                 [(K.STRICTNESS_CHANGED, "fp16", "ignored", "error")], id="strictness"),
    pytest.param(snap(field("a.x", description="Old.")), snap(field("a.x", description="New.")), [],
                 id="description-off-by-default"),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_diff_snapshots(old: dict[str, Any], new: dict[str, Any], expected: list[tuple[Any, ...]]) -> None:
    changes = diff_snapshots(old, new)
    assert [(c.kind, c.path, c.old, c.new) for c in changes] == expected


def test_description_changes_are_opt_in() -> None:
    changes = diff_snapshots(snap(field("a.x", description="Old.")), snap(field("a.x", description="New.")),
                             descriptions=True)
    assert [(c.kind, c.old, c.new) for c in changes] == [(K.DESCRIPTION_CHANGED, "Old.", "New.")]


def test_every_kind_is_covered_by_the_table() -> None:
    seen = {kind for case in CASES for kind, *_ in case.values[2]} | {K.DESCRIPTION_CHANGED}
    assert seen == set(ChangeKind)


def test_sorted_by_section_path_kind_and_details_say_what_changed() -> None:
    old = snap(field("b.y"), field("a.x", default=1, type="int"), field("x"))
    new = snap(field("b.y", default=5), field("a.x", default=2, type="float"), field("x", default=3))
    changes = diff_snapshots(old, new)
    assert [(c.section, c.path, c.kind) for c in changes] == [
        ("", "x", K.DEFAULT_CHANGED), ("a", "a.x", K.DEFAULT_CHANGED), ("a", "a.x", K.TYPE_CHANGED),
        ("b", "b.y", K.DEFAULT_CHANGED)]
    assert changes[1].detail == "1 → 2"
    effective = diff_snapshots(snap(field("z.o", default=None, effective_default={**ZERO, "3": False})),
                               snap(field("z.o", default=None, effective_default=ZERO)))[0]
    assert effective.detail == "effective default at ZeRO stage 3: false → true"
    symbolic = diff_snapshots(snap(field("a.x", default=7)),
                              snap(field("a.x", default=9223372036854775807, default_repr="sys.maxsize")))[0]
    assert symbolic.detail == "7 → sys.maxsize (9223372036854775807)"


def test_removed_key_says_what_its_section_does_now() -> None:
    strict = diff_snapshots(snap(field("fp16.x")), snap(sections={"fp16": "error"}))[0]
    assert strict.detail == "no longer read; a value here is now rejected as an unknown key"
    lax = diff_snapshots(snap(field("aio.x")), snap(sections={"aio": "ignored"}))[0]
    assert "silently ignored" in lax.detail


def test_explain_styles() -> None:
    change = Change(K.DEFAULT_CHANGED, "a.x", "a", 1, 2, "1 → 2")
    assert change.explain("text") == "a.x: Default value was changed: 1 → 2"
    assert change.explain("markdown") == "- `a.x`: **Default value was changed** — 1 → 2"
    tricky = Change(K.BECAME_REMOVED, "z.k", "z", None, "50%\nno, gone", "50%\nno, gone")
    assert tricky.explain("github") == (
        "::notice title=dsfields%3A Field was removed and is now rejected::z.k: 50%25%0Ano, gone")
    assert Change(K.ADDED, "", "", None, None).explain("text") == "(top level): Field was added"
    assert change.as_dict() == {"kind": "default_changed", "message": "Default value was changed", "path": "a.x",
                                "section": "a", "old": 1, "new": 2, "detail": "1 → 2"}
    with pytest.raises(ValueError, match="not a valid OutputStyle"):
        change.explain("html")


@pytest.mark.parametrize(("text", "kinds"), [
    ("defaults", {K.DEFAULT_CHANGED}),
    ("default", {K.DEFAULT_CHANGED}),
    ("default_changed,TYPES", {K.DEFAULT_CHANGED, K.TYPE_CHANGED}),
    ("became-removed, un-deprecated", {K.BECAME_REMOVED, K.UNDEPRECATED}),
    ("Default value was changed", {K.DEFAULT_CHANGED}),
])
def test_parse_kinds(text: str, kinds: set[ChangeKind]) -> None:
    assert parse_kinds(text) == kinds


def test_parse_kinds_names_the_accepted_spellings() -> None:
    with pytest.raises(ValueError, match="accepted: added, removed, renamed, defaults"):
        parse_kinds("defualts")


# ---------------------------------------------------------------- the command


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Two releases: 1.0.0 → 1.1.0 changes a default, adds a key and rejects another."""
    old = snap(field("zero_optimization.a", default=1), field("zero_optimization.gone"), version="1.0.0")
    new = snap(field("zero_optimization.a", default=2), field("zero_optimization.b"),
               removed={"zero_optimization.gone": "Gone: use b."}, version="1.1.0")
    for version, data in (("1.0.0", old), ("1.1.0", new)):
        (tmp_path / version).mkdir()
        (tmp_path / version / "fields.json").write_text(dumps(data), encoding="utf-8")
    return tmp_path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["diff", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_is_grouped_by_section(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree))
    assert code == 0
    assert out == (
        "DeepSpeed 1.0.0 → 1.1.0: 3 changes\n\nzero_optimization\n"
        "  zero_optimization.a: Default value was changed: 1 → 2\n"
        "  zero_optimization.b: Field was added: default 1\n"
        "  zero_optimization.gone: Field was removed and is now rejected: Gone: use b.\n")


def test_env_var_points_at_a_tree(tree: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tree))
    code, out, _ = run_cli(capsys, "1.0.0", "1.1.0", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["old"] == "1.0.0" and data["generated_by"] == "dsfields diff"
    assert [(c["kind"], c["path"]) for c in data["changes"]] == [
        ("default_changed", "zero_optimization.a"), ("added", "zero_optimization.b"),
        ("became_removed", "zero_optimization.gone")]


def test_markdown_and_github(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree), "--format", "markdown")
    assert out.startswith("## DeepSpeed 1.0.0 → 1.1.0: 3 changes\n\n### `zero_optimization`\n\n- `zero_optimization.a`")
    _, out, _ = run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree), "--format", "github")
    assert out.splitlines()[0] == "::notice title=dsfields%3A Default value was changed::zero_optimization.a: 1 → 2"
    assert len(out.splitlines()) == 3


def test_only_accepts_friendly_names(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree), "--only", "defaults,became-removed")
    assert code == 0
    assert "zero_optimization.a:" in out and "zero_optimization.gone:" in out and "zero_optimization.b:" not in out
    _, out, _ = run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree), "--only", "strictness")
    assert out == "no changes of the kinds asked for from DeepSpeed 1.0.0 to 1.1.0\n"


@pytest.mark.parametrize(("fail_on", "expected"), [("became-removed", 1), ("defaults", 1), ("strictness", 0)])
def test_fail_on_exit_code(tree: Path, capsys: pytest.CaptureFixture[str], fail_on: str, expected: int) -> None:
    assert run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree), "--fail-on", fail_on)[0] == expected


def test_fail_on_ignores_only(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --only narrows what is shown, not what CI fails on.
    args = ("--generated", str(tree), "--only", "added", "--fail-on", "became-removed")
    assert run_cli(capsys, "1.0.0", "1.1.0", *args)[0] == 1


def test_no_changes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "1.1.0", "1.1.0", "--generated", str(tree), "--fail-on", "added")
    assert (code, out) == (0, "no changes from DeepSpeed 1.1.0 to 1.1.0\n")


def test_unknown_version_lists_available(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "1.0.0", "9.9.9", "--generated", str(tree))
    assert (code, out) == (2, "")
    assert err == "dsfields diff: no snapshot for DeepSpeed 9.9.9 (available: 1.0.0, 1.1.0, or installed)\n"


def test_unknown_kind_exits_2(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "1.0.0", "1.1.0", "--generated", str(tree), "--only", "nope")
    assert code == 2 and err.startswith("dsfields diff: unknown change kind 'nope'") and err.count("\n") == 1


def test_installed_without_deepspeed_is_one_line(tree: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import dsfields.extract.extract_command

    monkeypatch.setattr(dsfields.extract.extract_command, "import_failure", lambda: "ModuleNotFoundError: deepspeed")
    code, out, err = run_cli(capsys, "1.0.0", "installed", "--generated", str(tree))
    assert (code, out) == (2, "")
    assert err == ("dsfields diff: cannot import DeepSpeed (ModuleNotFoundError: deepspeed); "
                   "install it: pip install dsfields[extract]\n")


def test_diff_imports_no_deepspeed_torch_or_pydantic(tree: Path) -> None:
    code = (
        "import sys\nfrom dsfields.cli import main\n"
        f"rc = main(['diff', '1.0.0', '1.1.0', '--generated', {str(tree)!r}])\n"
        "heavy = sorted(m for m in ('deepspeed', 'torch', 'pydantic') if m in sys.modules)\n"
        "print('HEAVY', heavy, rc)\n"
    )
    src = str(Path(__file__).resolve().parent.parent / "extractor")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"})
    assert proc.stdout.splitlines()[-1] == "HEAVY [] 0"
