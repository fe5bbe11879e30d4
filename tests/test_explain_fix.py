"""Issue 38's second round on the committed snapshots: ``explain --config`` computes the fixed file and ``check``
passes on it; every ``check`` finding carries a stable ID (DSnnnnn / DSFnnnnn) that ``explain ID`` expands."""

from __future__ import annotations

import ast
import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from dsfields.check.codes import check_rules
from dsfields.cli import main
from dsfields.extract.message_catalogue import message_id
from dsfields.model.message_ids import ID_SHAPE, rule_code
from dsfields.model.store import available_versions, load_messages, repo_generated_dir

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "explain_configs.json"
SHARED = REPO.parent / "shared" / "explain-examples" / "cases.jsonl"
CASE_FILES = (SHARED, REPO / "bench" / "explain_corpus.jsonl", REPO / "bench" / "explain_blind.jsonl")
GENERATED = repo_generated_dir()
VERSIONS = available_versions(GENERATED)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def cases() -> dict[str, dict]:
    found = {}
    for path in CASE_FILES:
        if not path.is_file():
            pytest.skip(f"{path} is missing")
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                found[case["id"]] = case
    return found


def configs() -> list[tuple[str, dict]]:
    table = json.loads(FIXTURES.read_text(encoding="utf-8"))
    return [(k, v) for k, v in sorted(table.items()) if not k.startswith("#")]


@pytest.mark.parametrize(("case_id", "item"), configs(), ids=[c for c, _ in configs()])
def test_check_passes_on_the_fixed_file(case_id: str, item: dict, tmp_path: Path) -> None:
    case = cases()[case_id]
    version = item["version"] or VERSIONS[-1]
    assert version in VERSIONS
    given = tmp_path / "ds_config.json"
    given.write_text(json.dumps(item["config"]), encoding="utf-8")
    scope = ["--version", version, "--world-size", str(item["world_size"])]
    code, out, _ = run("check", str(given), *scope)
    assert code == 1, f"check does not refuse the thread's config of {case_id}:\n{out}"
    fixed = tmp_path / "fixed.json"
    code, out, err = run("explain", case["pasted"], "--config", str(given), "--fix-out", str(fixed), *scope)
    assert code == 0, err
    assert "The fixed file" in out and "`dsfields check` passes on it" in out, out
    code, out, _ = run("check", str(fixed), *scope)
    assert code == 0, f"check refuses the fixed file of {case_id}:\n{out}"
    # the first cause's first key is one the change touched
    code, out, _ = run("explain", case["pasted"], "--config", str(given), "--format", "json", *scope)
    document = json.loads(out)
    touched = {c["path"] for c in document["fixed"]["changes"]}
    assert touched & set(case["answer_keys"]) or touched & {k.replace("stage3_", "") for k in case["answer_keys"]}
    assert document["fixed"]["check_errors_after"] == 0 < document["fixed"]["check_errors_before"]


def test_fix_out_needs_a_config_and_writes_whole_files(tmp_path: Path) -> None:
    code, _, err = run("explain", "zero stage 2 requires an optimizer", "--fix-out", str(tmp_path / "x.json"))
    assert code == 2 and "--fix-out needs --config" in err
    given = tmp_path / "c.json"
    given.write_text(json.dumps({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 1,
                                 "gradient_accumulation_steps": 8,
                                 "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}), encoding="utf-8")
    paste = ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu "
             "* gradient_acc_step * world_size 16 != 1 * 8 * 1")
    code, _, err = run("explain", paste, "--config", str(given), "--fix-out", str(given / "x.json"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    out = tmp_path / "fixed.json"
    code, _, _ = run("explain", paste, "--config", str(given), "--fix-out", str(out))
    assert code == 0 and json.loads(out.read_text(encoding="utf-8"))["train_batch_size"] == 8
    assert not [p for p in tmp_path.iterdir() if p.name not in ("c.json", "fixed.json")]  # no temp file left


# ----------------------------------------------------------------------------------------------- stable IDs


def test_rule_codes_depend_on_the_name_only_and_are_unique() -> None:
    # pinned: a code printed today is the code printed after any change to the rule set
    assert rule_code("batch-size") == "DSF35214"
    assert rule_code("unknown_key") == "DSF05997"
    codes = {rule_code(name) for name in check_rules()}
    assert len(codes) == len(check_rules()), "two check rules share a code"
    assert all(re.fullmatch(r"DSF\d{5}", c) for c in codes)


def test_every_rule_check_reports_is_registered() -> None:
    named = set()
    for path in (REPO / "extractor" / "dsfields" / "check").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "rule" and isinstance(node.value, ast.Constant):
                named.add(node.value.value)
    assert named and not named - set(check_rules()), named - set(check_rules())


def test_catalogue_ids_are_stable_over_reextraction_and_releases() -> None:
    shapes: dict[str, set[str]] = {}
    checked = 0
    for version in VERSIONS:
        for entry in (load_messages(version, GENERATED) or {}).get("messages", []):
            assert message_id(entry["kind"], entry["type"], entry["pattern"]) == entry["id"], (version, entry["id"])
            shape = re.sub(r"\{[^{}]*\}", "{}", re.sub(r"\s+", " ", entry["pattern"])).strip()
            shapes.setdefault(entry["id"], set()).add(f"{entry['kind']}|{entry['type']}|{shape}")
            checked += 1
    hf = json.loads((GENERATED / "hf" / "messages.json").read_text(encoding="utf-8"))
    for release, entries in hf["releases"].items():
        for entry in entries:
            assert message_id(entry["kind"], entry["type"], entry["pattern"]) == entry["id"], (release, entry["id"])
            shape = re.sub(r"\{[^{}]*\}", "{}", re.sub(r"\s+", " ", entry["pattern"])).strip()
            shapes.setdefault(entry["id"], set()).add(f"{entry['kind']}|{entry['type']}|{shape}")
    assert checked > 10000
    assert not [i for i, s in shapes.items() if len(s) > 1], "one ID names two different messages"


def test_findings_carry_the_same_ids_in_every_output_and_release(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 1,
                                  "gradient_accumulation_steps": 8, "zero_optimization": {"stage": 2, "aio": {}}}),
                      encoding="utf-8")
    seen = {}
    for version in ("0.14.4", VERSIONS[-1]):
        code, out, _ = run("check", str(config), "--version", version, "--world-size", "1", "--format", "json")
        findings = json.loads(out)["files"][0]["findings"]
        seen[version] = {(f["path"], f["id"]) for f in findings}
        assert all(f["id"] and ID_SHAPE.fullmatch(f["id"]) for f in findings)
        by_path = {f["path"]: f["id"] for f in findings}
        assert by_path["train_batch_size"] == rule_code("batch-size")
        # DeepSpeed's own assert quoted by the launch rule: the catalogue's ID of that message
        assert re.fullmatch(r"DS\d{8}", by_path["zero_optimization.stage"])
        code, text, _ = run("check", str(config), "--version", version, "--world-size", "1")
        for _, ident in seen[version]:
            assert f"[{ident}" in text
        code, sarif, _ = run("check", str(config), "--version", version, "--world-size", "1", "--format", "sarif")
        assert {r["ruleId"] for r in json.loads(sarif)["runs"][0]["results"]} == {i for _, i in seen[version]}
    old, new = (dict(seen[v]) for v in ("0.14.4", VERSIONS[-1]))
    common = set(old) & set(new)
    assert {"train_batch_size", "zero_optimization.aio", "zero_optimization.stage"} <= common
    assert {p: old[p] for p in common} == {p: new[p] for p in common}


def test_explain_expands_both_kinds_of_id() -> None:
    code, out, _ = run("explain", rule_code("batch-size"))
    assert code == 0 and "batch-size" in out and "train_batch_size" in out
    code, out, _ = run("explain", rule_code("batch-size"), "--lang", "zh")
    assert code == 0 and "检查规则" in out and "says:" not in out
    code, out, _ = run("explain", "DS59795914")
    assert code == 0 and "requires an optimizer" in out
    code, _, err = run("explain", "DSF00000")
    assert code == 2 and "no message with ID" in err


# ----------------------------------------------------------------------------------------------- the errors index


def test_each_errors_index_variant_shows_the_words_of_its_own_raise() -> None:
    """A variant's words are those DeepSpeed raises at the line it names, in every release it is shown for: two asserts
    sharing an ID (format fields naming different constants: curriculum_scheduler.py's '{..._DIFFICULTY}' and
    '{..._MAX_STEP}') are two variants, never one's words with the other's line (the 0.14.4 audit)."""
    from dsfields.docs.errors_index import _words, build

    raised: dict[tuple[str, str, int], set[str]] = {}
    for version in VERSIONS:
        for message in (load_messages(version, str(GENERATED)) or {}).get("messages", []):
            # as the index shows them: the first 300 characters
            raised.setdefault((version, message["file"], message["line"]), set()).add(_words(message["pattern"][:300]))
    worded = 0
    for entry in build()["entries"]:
        for variant in entry["variants"]:
            words = variant.get("message") or entry["message"]
            worded += "message" in variant
            for version, line in variant["lines"].items():
                file = variant["raised_at"].rpartition("@")[0].rpartition(":")[0]
                assert _words(words) in raised[(version, file, line)], (entry["id"], version, file, line)
    assert worded >= 10  # the curriculum, elasticity and batch-key asserts


def test_errors_index_entries_and_their_minimal_configs(tmp_path: Path) -> None:
    from dsfields.docs.errors_index import build

    document = build()
    entries = {e["id"]: e for e in document["entries"]}
    assert document["releases"] == VERSIONS and len(entries) > 400
    for entry in entries.values():
        assert entry["keys"] and entry["fix"]["en"] and re.search(r"[\u4e00-\u9fff]", entry["fix"]["zh"])
        assert all(0 <= a <= b < len(VERSIONS) for a, b in entry["releases"])
    with_config = [e for e in entries.values() if "config" in e]
    assert len(with_config) >= 5
    for entry in with_config:
        config = tmp_path / f"{entry['id']}.json"
        config.write_text(json.dumps(entry["config"]["config"]), encoding="utf-8")
        extra = ["--optimizer-from-code"] if entry["config"]["optimizer_from_code"] else []
        shown = [VERSIONS[i] for first, last in entry["config"]["releases"] for i in range(first, last + 1)]
        assert entry["config"]["release"] in shown
        # the page shows the config to the readers of these releases, each told `check --version <theirs>`: the
        # newest, the oldest and a middle one of them are checked through the CLI
        for version in dict.fromkeys((shown[0], shown[len(shown) // 2], shown[-1])):
            code, out, _ = run("check", str(config), "--version", version, "--format", "json", *extra)
            ids = {f["id"] for f in json.loads(out)["files"][0]["findings"]}
            assert code == 1 and entry["id"] in ids, (entry["id"], version, ids)


def test_a_message_said_in_an_except_says_so():
    """autotuner.py logs "Failed to create {exps_dir}" in the ``except`` around ``os.makedirs``: its condition and
    fix say the creation failed, not merely that the folder is missing (the 0.14.4 audit)."""
    for version in ("0.9.5", "0.14.4"):
        entry = next(m for m in load_messages(version, str(GENERATED))["messages"] if m["id"] == "DS71778832")
        assert entry["condition"].endswith("makedirs_raised") and entry["state"] == "makedirs_raised"
    code, out, _ = run("explain", "DS71778832", "--version", "0.14.4")
    assert code == 0 and "what makes `makedirs` fail" in out and "`except`" in out


def test_module_state_spelled_like_a_key_names_no_key():
    """``record_tp_model_init_args`` compares the arguments of two ``tp_model_init`` calls, kept in the module's
    ``_TP_MODEL_INIT_ARGS``: its "Conflicting tp_model_init arguments" raises name no config key (the 0.19.5
    audit); the neighbouring checks against the config's ``tensor_parallel.tp`` keys keep theirs."""
    messages = load_messages("0.19.5", str(GENERATED))["messages"]
    conflicting = [m for m in messages if m["pattern"].startswith("Conflicting tp_model_init arguments")]
    assert len(conflicting) == 3 and all(m["keys"] == [] for m in conflicting)
    from_config = [m for m in messages if m["pattern"].startswith("Conflicting tensor_parallel.tp.tp_size")]
    assert from_config and all(m["keys"] == ["tensor_parallel.tp.tp_size"] for m in from_config)
