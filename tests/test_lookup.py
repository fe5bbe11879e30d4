"""`dsfields lookup`: each query kind, ambiguity, did-you-mean, versions, JSON, the 80-column output.

Answers come from the committed 0.19.8 snapshot (what users get), pinned with ``--version 0.19.8``
so that committing newer snapshots does not move these tests; version selection and ``--history``
use fixture snapshot trees.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_python
from test_history import field_record, removed_record, write_snapshot

from dsfields.cli import main
from dsfields.model import store as snapshot_module
from dsfields.model import wording
from dsfields.model.records import Field
from dsfields.model.store import load, repo_generated_dir
from dsfields.terminal import Style

pytestmark = pytest.mark.lane("data")  # the tests below without a lane mark of their own

REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
V = "0.19.8"
MAX_LIVE = "zero_optimization.stage3_max_live_parameters"


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """An 80-column terminal reading the checkout's snapshots, whatever the developer's shell says."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("DSFIELDS_GENERATED", raising=False)


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return load(V, repo_generated_dir())


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lookup", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lookup_ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run(capsys, *args, "--version", V)
    assert (code, err) == (0, "")
    return out


# --- the answers users rely on ------------------------------------------------------------------


def test_json_key_gives_default_python_name_description_and_source(capsys, snapshot) -> None:
    out = lookup_ok(capsys, "stage3_max_live_parameters")
    record = snapshot.raw["fields"][MAX_LIVE]
    assert out.startswith(f"{MAX_LIVE}: int (default: 1000000000 (1e9))\n")
    assert "python name  max_live_parameters" in out
    assert "The maximum number of parameters resident per GPU before releasing." in " ".join(out.split())
    assert f"deepspeed/runtime/zero/config.py:{record['source']['line']}" in out
    assert "constraints  >= 0" in out
    assert "strict: an unknown key is an error" in out


def test_golden_output_at_80_columns(capsys) -> None:
    out = lookup_ok(capsys, "stage3_max_live_parameters")
    golden = GOLDEN / "lookup_stage3_max_live_parameters.txt"
    if os.environ.get("DSFIELDS_UPDATE_GOLDEN"):
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")
    assert "\033[" not in out


@pytest.mark.parametrize("query", [
    "max_live_parameters",  # python name
    "STAGE3_Max_Live_Parameters",  # case-insensitive
    MAX_LIVE,  # dotted path
    "zero_optimization.max_live_parameters",  # dotted path written with the python name
])
def test_every_query_kind_finds_the_same_field(capsys, query: str) -> None:
    assert lookup_ok(capsys, query).startswith(f"{MAX_LIVE}: int")


def test_dotted_path_shows_enum_members_with_values(capsys) -> None:
    out = lookup_ok(capsys, "Zero_Optimization.Offload_Param.DEVICE")
    assert out.startswith('zero_optimization.offload_param.device: OffloadDeviceEnum (default: "none")')
    assert 'allowed      OffloadDeviceEnum: "none", "cpu", "nvme"' in out
    # A path's tail is enough when it is unambiguous.
    assert lookup_ok(capsys, "offload_param.device") == out
    stage = lookup_ok(capsys, "zero_optimization.stage")
    assert "(default: 0 (ZeroStageEnum.disabled))" in stage
    assert "3 (weights, max_stage)" in stage


def test_section_lists_each_field_once_with_its_default(capsys, snapshot) -> None:
    out = lookup_ok(capsys, "zero_optimization")
    listing = out.split("\nfields:\n", 1)[1].splitlines()
    children = sorted(r["key"] for r in snapshot.raw["fields"].values() if r["section"] == "zero_optimization")
    removed = sorted(r["key"] for r in snapshot.raw["removed"].values() if r["section"] == "zero_optimization")
    assert [line.split()[0] for line in listing] == children + removed
    by_key = {line.split()[0]: line for line in listing}
    assert "(default: 1000000000 (1e9))" in by_key["stage3_max_live_parameters"]
    assert "deprecated → offload_optimizer" in by_key["cpu_offload"]
    inside = sum(1 for r in snapshot.raw["fields"].values() if r["section"] == "zero_optimization.offload_param")
    assert by_key["offload_param"].endswith(f"section, {inside} fields")
    assert by_key["mics_shard_size"].endswith("removed")
    assert "DeepSpeedZeroConfig" in out and "strict: an unknown key is an error" in out


@pytest.mark.parametrize("key", ["enabled", "pin_memory", "device"])
def test_ambiguous_key_lists_every_path(capsys, snapshot, key: str) -> None:
    out = lookup_ok(capsys, key)
    expected = {p for p, r in snapshot.raw["fields"].items() if r["key"] == key}
    assert len(expected) > 1
    listing, _, note = out.partition("\n\n")  # after the listing: the inference config's note (issue 29)
    header, *lines = listing.splitlines()
    assert header.startswith(f'"{key}" names {len(expected)} fields')
    assert not note or note.startswith("Also a key of the inference config")
    assert {line.split()[0] for line in lines} == expected
    assert len(lines) == len(expected)


def test_deprecated_field_names_its_replacement(capsys) -> None:
    out = lookup_ok(capsys, "cpu_offload")
    assert out.splitlines()[1].strip().startswith("deprecated → offload_optimizer")


def test_removed_key_shows_deepspeeds_message(capsys, snapshot) -> None:
    out = lookup_ok(capsys, "nebula")
    assert out.startswith("nebula: removed\n")
    assert " ".join(snapshot.raw["removed"]["nebula"]["message"].split()) in " ".join(out.split())


@pytest.mark.parametrize(("query", "expected"), [
    ("overlap_comm", "false at ZeRO stages 0–2, true at ZeRO stage 3"),
    ("stage3_model_persistence_threshold", "(default: sys.maxsize = 9223372036854775807)"),
    ("tensor_parallel.dtype", "(default: torch.float16)"),
    ("train_batch_size", '"auto"       rejected (TypeError'),
    ("gradient_clipping", 'kept as the string "auto"'),
    ("steps_per_print", "lenient: an unknown key is silently ignored"),
    ("steps_per_print", "deepspeed/runtime/config.py:253 in get_steps_per_print()"),
    ("stage3_max_reuse_distance", '"auto"       accepted: dropped, the default is used'),
])
def test_answer_details(capsys, query: str, expected: str) -> None:
    # Compare whitespace-normalised: where a long line wraps is not what this test is about.
    assert " ".join(expected.split()) in " ".join(lookup_ok(capsys, query).split())


@pytest.mark.parametrize("query", ["stage3_max_live_parameters", "cpu_offload", "nebula", "zero_optimization",
                                   "enabled", "overlap_comm", "stage"])
def test_fits_80_columns(capsys, query: str) -> None:
    assert max(len(line) for line in lookup_ok(capsys, query).splitlines()) <= 80


# --- misses and errors --------------------------------------------------------------------------


@pytest.mark.parametrize(("typo", "meant"), [
    ("stage3_max_live_paramters", MAX_LIVE),
    ("zero_optimization.offload_parm.device", "zero_optimization.offload_param.device"),
    ("max_live_paramters", MAX_LIVE),
    ("live_param", MAX_LIVE),
])
def test_no_match_suggests_closest_and_exits_1(capsys, typo: str, meant: str) -> None:
    code, out, _ = run(capsys, typo, "--version", V)
    assert code == 1
    assert out.startswith(f'no field "{typo}" in DeepSpeed {V}; did you mean:')
    assert f"  {meant}" in out.splitlines()


def test_no_match_without_suggestion(capsys) -> None:
    code, out, _ = run(capsys, "xyzzy", "--version", V)
    assert code == 1 and "did you mean" not in out


@pytest.mark.unit
def test_unknown_version_lists_available_and_exits_2(capsys, tmp_path, monkeypatch) -> None:
    for version in ("0.10.0", "0.9.0"):
        write_snapshot(tmp_path, version, [field_record(MAX_LIVE)])
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    code, out, err = run(capsys, "stage3_max_live_parameters", "--version", "9.9.9")
    assert (code, out) == (2, "")
    assert err == "dsfields lookup: no snapshot for DeepSpeed 9.9.9 (available: 0.9.0, 0.10.0)\n"


@pytest.mark.unit
def test_snapshot_of_another_format_exits_2_in_one_line(capsys, tmp_path, monkeypatch) -> None:
    write_snapshot(tmp_path, "1.0.0", [field_record(MAX_LIVE)], format_version=99)
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    code, out, err = run(capsys, "stage3_max_live_parameters")
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "re-extract" in err


@pytest.mark.unit
def test_default_version_is_installed_if_snapshotted_else_newest(capsys, tmp_path, monkeypatch) -> None:
    for version, default in (("0.9.0", 9), ("0.10.0", 10)):
        write_snapshot(tmp_path, version, [field_record(MAX_LIVE, default=default)])
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    monkeypatch.setattr(snapshot_module, "installed_deepspeed_version", lambda: "0.9.0")
    assert "(default: 9)" in run(capsys, "stage3_max_live_parameters")[1]
    monkeypatch.setattr(snapshot_module, "installed_deepspeed_version", lambda: "0.11.0")
    assert "(default: 10)" in run(capsys, "stage3_max_live_parameters")[1]


@pytest.mark.unit
def test_fast_installed_version_probe_agrees_with_importlib_metadata() -> None:
    from importlib import metadata

    try:
        expected: str | None = metadata.version("deepspeed").strip()
    except metadata.PackageNotFoundError:
        expected = None
    assert snapshot_module.installed_deepspeed_version() == expected


# --- JSON, history ------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["stage3_max_live_parameters", "zero_optimization.offload_param.device",
                                   "nebula", "offload_param", "pin_memory"])
def test_json_round_trips_the_snapshot_records(capsys, snapshot, query: str) -> None:
    payload = json.loads(lookup_ok(capsys, query, "--json"))
    assert payload["deepspeed_version"] == V and payload["query"] == query and payload["matches"]
    for match in payload["matches"]:
        path = match["path"]
        assert match["field"] == snapshot.raw["fields"].get(path)
        assert match["removed"] == snapshot.raw["removed"].get(path)
        assert match["section"] == snapshot.raw["sections"].get(path)
        assert match["fields"] == {p: r for p, r in snapshot.raw["fields"].items() if r["section"] == path}
        if match["field"] and match["field"]["enum"]:
            assert match["enum"] == snapshot.raw["enums"][match["field"]["enum"]]


def test_json_miss_carries_suggestions(capsys) -> None:
    code, out, _ = run(capsys, "stage3_max_live_paramters", "--version", V, "--json")
    assert code == 1
    assert json.loads(out)["matches"] == [] and MAX_LIVE in json.loads(out)["suggestions"]


@pytest.fixture
def history_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = f"{MAX_LIVE}"
    write_snapshot(tmp_path, "0.1.0", [field_record(path, default=1_000_000_000)])
    write_snapshot(tmp_path, "0.2.0", [field_record(path, default=1_000_000_000)])
    write_snapshot(tmp_path, "0.3.0", [field_record(path, default=500_000_000)])
    write_snapshot(tmp_path, "0.4.0", [field_record(path, default=500_000_000,
                                                    deprecated={"new_param": "max_live"})])
    write_snapshot(tmp_path, "0.5.0", [], removed=[removed_record(path, "Gone for good.")])
    monkeypatch.setenv("DSFIELDS_GENERATED", str(tmp_path))
    return tmp_path


@pytest.mark.unit
def test_history_one_line_per_version_range(capsys, history_tree) -> None:
    code, out, _ = run(capsys, MAX_LIVE, "--version", "0.4.0", "--history")
    assert code == 0
    assert out.split("\n\nhistory", 1)[1].splitlines() == [
        " (5 snapshots: 0.1.0 … 0.5.0):",
        "  0.1.0–0.2.0  present in the oldest snapshot: int (default: 1000000000 (1e9))",
        "  0.3.0        default changed: 1000000000 (1e9) → 500000000 (5e8)",
        "  0.4.0        deprecated → max_live",
        "  0.5.0        removed and rejected: Gone for good.",
    ]


@pytest.mark.unit
def test_history_in_json(capsys, history_tree) -> None:
    code, out, _ = run(capsys, MAX_LIVE, "--version", "0.5.0", "--history", "--json")
    match = json.loads(out)["matches"][0]
    assert (code, match["kind"]) == (0, "removed")
    # Rejected with a message is "became_removed" (the old snapshot walk said "removed", the old index
    # "became_removed"; one engine now), told apart from "removed": no longer read, no message.
    assert [e["kind"] for e in match["history"]] == ["introduced", "default_changed", "deprecated", "became_removed"]
    assert match["history"][1] == {"version": "0.3.0", "kind": "default_changed",
                                   "old": 1_000_000_000, "new": 500_000_000}


# --- formatting helpers -------------------------------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize(("number", "expected"), [
    (1_000_000_000, "1e9"), (500_000_000, "5e8"), (1_500_000, "1.5e6"), (100_000, "1e5"),
    (-1_000_000, "-1e6"), (12_345, None), (123_456_789, None), (10_000, None), (0, None), (True, None),
])
def test_scientific(number: int, expected: str | None) -> None:
    assert wording.scientific(number) == expected


@pytest.mark.unit
@pytest.mark.parametrize(("overrides", "expected"), [
    ({"required": True}, "(required)"),
    ({"default_factory": "builtins.list", "default": []}, "(default factory: list → [])"),
    ({"default_factory": "deepspeed.runtime.zero.leaf_module_config.LeafConfig.<lambda>", "default": []},
     "(default factory: LeafConfig.<lambda> → [])"),
    ({"read_without_default": True, "reader": "dict"}, "(no default: absent means not set)"),
    ({"default": 0.5}, "(default: 0.5)"),
    ({"default": "cpu"}, '(default: "cpu")'),
])
def test_default_text(overrides: dict[str, Any], expected: str) -> None:
    assert wording.default_text(Field(field_record("x.y", **overrides))) == expected


@pytest.mark.unit
def test_colour_only_on_a_tty_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert Style.for_stream(Tty()).enabled
    assert not Style.for_stream(io.StringIO()).enabled
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Style.for_stream(Tty()).enabled


def test_terminal_without_unicode_still_gets_the_answer(snapshot, monkeypatch) -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stream)
    assert main(["lookup", "cpu_offload", "--version", V]) == 0
    # This field's description has non-ASCII characters: JSON falls back to \u escapes, losslessly.
    path = "zero_optimization.stage3_gather_16bit_weights_on_model_save"
    assert main(["lookup", path, "--version", V, "--json"]) == 0
    stream.flush()
    text, payload = stream.buffer.getvalue().decode("ascii").split("\n{", 1)
    assert "deprecated ? offload_optimizer" in text
    assert json.loads("{" + payload)["matches"][0]["field"] == snapshot.raw["fields"][path]


@pytest.mark.unit
def test_lookup_imports_no_deepspeed_torch_pydantic_jinja2_nor_other_subcommands() -> None:
    # In a fresh interpreter: these imports are what would make lookup slower than grep.
    code = (
        "import sys; from dsfields.cli import COMMANDS, main; main(['lookup', 'stage3_max_live_parameters']); "
        "heavy = ['deepspeed', 'torch', 'pydantic', 'jinja2'] + [m for m, _ in COMMANDS.values()]; "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    assert fresh_python(code).stdout.splitlines()[-1] == "['dsfields.lookup']"


@pytest.mark.unit
def test_a_key_lookup_imports_neither_typing_nor_tomllib_nor_pathlib() -> None:
    """What the start-up of a plain key lookup (``fp16``, ``zero_optimization.stage``) does not need: typing (and
    the ``re`` it imports) for ``import dsfields``, tomllib for goals.toml (read only when the word may be a goal),
    pathlib for the inference document beside the snapshot."""
    code = (
        "import sys; from dsfields.cli import main; main(['lookup', 'fp16']); "
        "main(['lookup', 'zero_optimization.stage']); "
        "print(sorted(m for m in ('typing', 'tomllib', 'pathlib') if m in sys.modules))"
    )
    assert fresh_python(code).stdout.splitlines()[-1] == "[]"


def test_compact_indexes_are_current():
    """generated/<v>/paths.json must describe exactly the committed fields.json (rewrite: python -m
    dsfields.model.paths_index)."""
    from dsfields.model import paths_index

    root = repo_generated_dir()
    for version in snapshot_module.available_versions(root):
        target = root / version / paths_index.INDEX_NAME
        text = (root / version / "fields.json").read_text(encoding="utf-8")
        assert target.read_text(encoding="utf-8") == paths_index.build(text), version


@pytest.mark.parametrize("query", ["stage3_max_live_parameters", "zero_optimization", "enabled", "nebula",
                                   "offload_param.device", "stage3_max_live_paramters", "optimizer"])
def test_answer_is_the_same_with_and_without_the_compact_index(capsys, tmp_path, monkeypatch, query) -> None:
    """The index only saves time: text and JSON answers equal those from the whole snapshot, and a
    stale index (its snapshot edited since) is ignored."""
    import shutil

    source = repo_generated_dir() / V
    plain = tmp_path / "plain" / V
    stale = tmp_path / "stale" / V
    shutil.copytree(source, plain)
    (plain / "paths.json").unlink()
    shutil.copytree(source, stale)
    with open(stale / "fields.json", "a", encoding="utf-8") as handle:
        handle.write("\n")  # another size: the index no longer describes it
    answers = []
    for root in (source.parent, plain.parent, stale.parent):
        monkeypatch.setenv("DSFIELDS_GENERATED", str(root))
        answers.append([run(capsys, query, "--version", V), run(capsys, query, "--version", V, "--json")])
    assert answers[0] == answers[1] == answers[2]


@pytest.mark.parametrize("lang, said", [("en", "not judged"), ("zh", "未判定")])
def test_an_auto_probe_stopped_by_another_missing_key_is_not_a_rejection(capsys, lang, said):
    """The "auto" probe of ``schedule_offset`` stopped on the section's missing ``different_groups`` (a KeyError naming
    another key) before reading the value: "not judged", never "rejected" (the 0.15.4 and 0.18.5 audits); a KeyError
    naming the key probed stays a rejection."""
    from dsfields.model.wording import blocked_by

    code, out, err = run(capsys, "compression_training.sparse_pruning.shared_parameters.schedule_offset",
                         "--version", "0.18.5", "--lang", lang)
    assert (code, err) == (0, "")
    row = next(line for line in out.splitlines() if line.lstrip().startswith('"auto"'))
    assert said in row and "rejected" not in row and "拒绝" not in row
    assert blocked_by("KeyError: 'different_groups'", "schedule_offset") == "different_groups"
    assert blocked_by("KeyError: 'schedule_offset'", "schedule_offset") is None


def test_a_scheduler_text_is_scoped_to_the_release_that_clamps():
    """WarmupCosineLR clamps its cosine progress from 0.19.3 on: before, the lr climbs back after total_num_steps,
    so no text shown for 0.18.5 says the floor holds afterwards (the 0.18.5 audit), in either language."""
    from dsfields.model import prose
    from dsfields.model.store import load

    for version, clamps in (("0.18.5", False), ("0.19.8", True)):
        scope = prose.Scope.of_snapshot(load(version))
        for lang, afterwards in (("en", "afterwards"), ("zh", "之后")):
            entry = prose.explain_type("scheduler", "WarmupCosineLR", lang, scope)
            assert (afterwards in entry.params["cos_min_ratio"]) is clamps, (version, lang)
            assert ("0.19.3" in entry.body or "clamped to 1" in entry.body or "上限截到 1" in entry.body) is clamps
