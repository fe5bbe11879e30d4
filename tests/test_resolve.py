"""resolve agrees with DeepSpeed itself: every value it resolves is the one DeepSpeedConfig parsed.

The oracle is ``DeepSpeedConfig`` 0.19.8 on the real-config corpus (after the HF Trainer's "auto"
filling, batch consistent at world size 1). Where DeepSpeed keeps a parsed value is not listed by
hand: pydantic sections are found among DeepSpeedConfig's attributes by their model class and read
by alias; dict-read keys are followed from the read site the snapshot records (``source``) to the
attribute DeepSpeed assigns there, by reading DeepSpeed's source with ``ast``.
"""

from __future__ import annotations

import ast
import copy
import enum
import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import requires_deepspeed
from test_check_differential import CORPUS, corpus_files, for_deepspeed

from dsfields.check import Checker
from dsfields.cli import main
from dsfields.configfile import ConfigFileError, load
from dsfields.hf.trainer import FILL_ARGUMENTS, fill_list
from dsfields.model.store import load as load_snapshot
from dsfields.resolve import NOT_GIVEN, SOURCES, Resolver

pytestmark = pytest.mark.lane("data")  # the tests below without a lane mark of their own

VERSION = "0.19.8"
_NOT_FOUND: Any = type("NotFound", (), {"__repr__": lambda self: "NOT_FOUND"})()


# ---------------------------------------------------------------- snapshot-only tests


def test_hf_arguments_cover_exactly_the_trainers_fill_list():
    """resolve words the Trainer's argument of every key the fill list (generated/hf/, its one home) names."""
    hf = fill_list()
    assert hf is not None
    assert set(FILL_ARGUMENTS) == set(hf.paths)


def test_sources_and_json_shape(tmp_path, capsys):
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({
        "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
        "zero_optimization": {"stage": 3, "cpu_offload": True, "reduce_bucket_size": "auto",
                              "stage3_prefetch_bucket_size": "auto"},
        "pipeline": {"stages": 2}, "typo_key": 1, "gradient_clipping": "auto",
    }))
    assert main(["resolve", str(config), "--version", VERSION, "--format", "json", "--world-size", "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(entry["source"] in SOURCES for entry in out.values())
    assert out["train_batch_size"] == {"value": 32, "source": "derived", "written": False, "note": "at world size 4"}
    assert out["zero_optimization.overlap_comm"]["source"] == "effective default"
    assert out["zero_optimization.overlap_comm"]["value"] is True
    assert out["zero_optimization.reduce_bucket_size"]["source"] == "auto → default"
    assert out["zero_optimization.offload_optimizer.device"]["value"] == "cpu"
    assert out["zero_optimization.offload_optimizer.device"]["source"] == "deprecated → replacement"
    assert out["zero_optimization.cpu_offload"]["source"] == "deprecated → replacement"
    assert out["pipeline"]["source"] == "passed on whole"
    assert out["typo_key"]["source"] == "ignored"
    assert out["gradient_clipping"]["source"] == "auto → kept"
    assert main(["resolve", str(config), "--version", VERSION, "--format", "json", "--hf"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["zero_optimization.reduce_bucket_size"]["source"] == "auto → HF Trainer"
    assert out["gradient_clipping"]["note"] == "max_grad_norm"


def test_stage_only(tmp_path, capsys):
    config = tmp_path / "ds.json"
    config.write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 2}}')
    assert main(["resolve", str(config), "--version", VERSION, "--format", "json", "--stage-only"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "zero_optimization.reduce_bucket_size" in out
    assert not [p for p in out if p.startswith("zero_optimization.stage3_")]
    assert "zero_optimization.offload_param" not in out


@pytest.fixture(scope="module")
def fixture_snapshot() -> dict[str, Any]:
    """A fresh extraction of tests/fixtures/fakeds, this module's own: the session's ``fake_snapshot``
    records whether torch was imported when it was first made, which test_extract_fixtures compares."""
    import sys

    from conftest import FIXTURES

    sys.path.insert(0, str(FIXTURES))
    try:
        import fakeds
        import fakeds.runtime.config as config_module

        from dsfields.extract.build import extract

        return extract(config_module, version=fakeds.__version__, package="fakeds")
    finally:
        sys.path.remove(str(FIXTURES))


@pytest.mark.unit
def test_parsed_state_witnesses_on_the_fixture(fixture_snapshot):
    """resolve takes what DeepSpeed holds for an absent key from the snapshot's when_absent / forced_by."""
    from dsfields.model.records import Snapshot

    snapshot = Snapshot.from_dict(fixture_snapshot)
    fields = snapshot.fields

    def resolved(data):
        return {r.path: r for r in Resolver(snapshot).resolve(data)}

    out = resolved({"train_batch_size": 1})
    assert out["pipe"].value == fields["pipe"].absent_value and out["pipe"].value  # not the null default
    assert out["optim.fusion"].value is fields["optim.fusion"].absent_value is False
    assert out["experts.w3"].source == NOT_GIVEN
    assert out["legacy"].value is None and not [p for p in out if p.startswith("legacy.")]
    assert out["aio.block_size"].value == fields["aio.block_size"].default
    assert out["wall_clock"].value is False
    on = resolved({"train_batch_size": 1, "profiler": {"enabled": True}, "wall_clock": False})
    assert (on["wall_clock"].value, on["wall_clock"].source) == (True, "derived")
    assert "profiler.enabled" in on["wall_clock"].note


def test_unusable_file_is_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    assert main(["resolve", str(bad), "--version", VERSION]) == 2
    assert "not an object" in capsys.readouterr().err


# ---------------------------------------------------------------- where DeepSpeed keeps each value


@functools.cache
def _tree(relative: str) -> ast.Module:
    import deepspeed

    root = Path(deepspeed.__file__).resolve().parent.parent
    return ast.parse((root / relative).read_text(encoding="utf-8"))


@functools.cache
def _config_assignments() -> dict[str, list[tuple[str, frozenset[str]]]]:
    """Callee name → every (DeepSpeedConfig attribute, constant names passed) assigned from it in
    ``_initialize_params`` (``get_communication_data_type`` serves two keys, told apart by their constant)."""
    out: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for node in ast.walk(_tree("deepspeed/runtime/config.py")):
        if isinstance(node, ast.FunctionDef) and node.name == "_initialize_params":
            for stmt in ast.walk(node):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Attribute)):
                    continue
                calls = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
                if calls:  # `get_x(param_dict)`, or `(get_x(param_dict) | other)` as for wall_clock_breakdown
                    names = frozenset(n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name))
                    out.setdefault(calls[0].func.id, []).append((stmt.targets[0].attr, names))
    return out


def _attribute_for(function: str, constant: str | None) -> str | None:
    candidates = _config_assignments().get(function, [])
    if len(candidates) > 1 and constant:
        candidates = [c for c in candidates if constant in c[1]] or candidates
    return candidates[0][0] if candidates else None


def _assigned_at(relative: str, line: int) -> tuple[str | None, str | None]:
    """(enclosing class, ``self.ATTR`` target) of the statement covering ``line`` of ``relative``."""
    for cls in ast.walk(_tree(relative)):
        if not isinstance(cls, ast.ClassDef):
            continue
        for stmt in ast.walk(cls):
            if (isinstance(stmt, ast.Assign) and stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)
                    and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute)):
                return cls.name, stmt.targets[0].attr
    return None, None


_DTYPES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}
"""get_communication_data_type turns the JSON spelling into a torch dtype: compare in the JSON spelling."""


_SENTINEL: Any = type("Sentinel", (), {"__repr__": lambda self: "object() (not given)"})()
"""A bare ``object()`` DeepSpeed keeps for "not given": resolve's ``not given`` must meet exactly that."""


def _normal(value: Any) -> Any:
    if type(value) is object:
        return _SENTINEL
    if type(value).__name__ == "dtype":
        return _DTYPES.get(str(value), str(value))
    if isinstance(value, enum.Enum):
        return _normal(value.value)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if hasattr(value, "model_dump"):
        return _normal(value.model_dump(by_alias=True))
    return value


_ABSENT: Any = type("SectionIsNone", (), {"__repr__": lambda self: "None (the whole section)"})()


def _walk(node: Any, parts: list[str]) -> Any:
    for index, part in enumerate(parts):
        if node is None and index:
            return _ABSENT  # DeepSpeed keeps None for the section: none of its keys has a value
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return _NOT_FOUND
    return node


class Parsed:
    """DeepSpeedConfig's parsed values, found by JSON path."""

    def __init__(self, ds: Any, snapshot: Any) -> None:
        from pydantic import BaseModel

        self.ds = ds
        self.snapshot = snapshot
        self.models: dict[str, list[Any]] = {}
        for value in vars(ds).values():
            objects = [value] + ([v for v in vars(value).values()] if hasattr(value, "__dict__") else [])
            for obj in objects:
                if isinstance(obj, BaseModel):
                    self.models.setdefault(type(obj).__name__, []).append(obj)
        self.objects = {type(v).__name__: v for v in vars(ds).values() if hasattr(v, "__dict__")}

    def model_section(self, path: str) -> str | None:
        """The outermost pydantic section containing ``path``."""
        parts = path.split(".")
        for end in range(1, len(parts)):
            section = self.snapshot.sections.get(".".join(parts[:end]))
            if section is not None and section.kind == "model":
                return ".".join(parts[:end])
        return None

    def value(self, path: str) -> Any:
        snapshot = self.snapshot
        section = self.model_section(path)
        if section is not None:
            name = snapshot.sections[section].model_name
            candidates = self.models.get(name or "", [])
            if section == "zero_optimization":
                candidates = [self.ds.zero_config]
            if not candidates and getattr(self.ds, f"{section}_config", _NOT_FOUND) is None:
                return _ABSENT
            if len(candidates) != 1:
                return _NOT_FOUND
            dumped = candidates[0].model_dump(by_alias=True)
            rel = path[len(section) + 1:].split(".")
            found = _walk(dumped, rel)
            if found is _NOT_FOUND:  # a deprecated field DeepSpeed deleted, or a python-name-only spelling
                record = snapshot.fields.get(path)
                if record and record.python_name:
                    found = getattr(candidates[0], record.python_name, _NOT_FOUND) if len(rel) == 1 else _NOT_FOUND
            return _normal(found)
        record = snapshot.fields.get(path)
        if record is None or record.source is None:
            return _NOT_FOUND
        source = record.source
        attr = _attribute_for(source.function or "", (record.constant or {}).get("name"))
        if attr is not None and hasattr(self.ds, attr):
            value = getattr(self.ds, attr)
            if isinstance(value, dict) and not record.is_section:
                return _normal(value.get(record.key, _NOT_FOUND))
            return _normal(value)
        if source.line is not None and source.function in ("_initialize", "__init__", "_initialize_params"):
            cls, attr = _assigned_at(source.file, source.line)
            owner = self.ds if cls == "DeepSpeedConfig" else self.objects.get(cls or "")
            if owner is not None and attr is not None and hasattr(owner, attr):
                return _normal(getattr(owner, attr))
        top, _, rest = path.partition(".")
        for name, value in vars(self.ds).items():  # other readers: a dict or an object named after the section
            if not name.startswith(top) or not rest:
                continue
            if isinstance(value, dict):
                found = _walk(value, rest.split("."))
            elif hasattr(value, "__dict__") and "." not in rest:
                found = vars(value).get(rest, _NOT_FOUND)
            else:
                continue
            if found is not _NOT_FOUND:
                return _normal(found)
        return _NOT_FOUND


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (a == b and type(a) is type(b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def build(data: dict[str, Any]) -> Any:
    import contextlib
    import io
    import logging

    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from deepspeed.runtime.config import DeepSpeedConfig

        logging.getLogger("DeepSpeed").setLevel(logging.CRITICAL)
        try:
            return DeepSpeedConfig(copy.deepcopy(data))
        except Exception:
            return None


KNOWN: dict[str, str] = {}
"""Disagreements whose cause is in the snapshot, not in resolve: each is printed with its count, never hidden;
any other disagreement fails the test."""

UNCOMPARED = {"ignored", "removed", "passed on whole"}
"""Sources with no parsed value to compare: DeepSpeed drops the key, raises on it, or hands it on."""


def compare_config(data: dict[str, Any], resolver: Resolver, snapshot: Any) -> tuple[int, list[str], list[str]]:
    """(values compared, disagreements, paths whose parsed value was not found) for one accepted config."""
    ds = build(data)
    assert ds is not None
    parsed = Parsed(ds, snapshot)
    compared, disagreements, unfound = 0, [], []
    for item in resolver.resolve(data):
        if item.source in UNCOMPARED or snapshot.fields.get(item.path, None) is None and not (
                item.path.startswith(("optimizer.params.", "scheduler.params."))):
            continue
        if item.path.startswith(("optimizer.params.", "scheduler.params.")):
            kind, _, key = item.path.partition(".params.")
            theirs = _normal((getattr(ds, f"{kind}_params") or {}).get(key, _NOT_FOUND))
        elif snapshot.fields[item.path].deprecated is not None:
            continue  # DeepSpeed deletes a carried deprecated attribute; its replacement is compared
        else:
            theirs = parsed.value(item.path)
        if theirs is _NOT_FOUND:
            unfound.append(item.path)
            continue
        compared += 1
        ours = _SENTINEL if item.source == NOT_GIVEN else _normal(item.value)
        if not _equal(ours, theirs):
            disagreements.append(f"{item.path}: resolve {item.value!r} [{item.source}], DeepSpeed {theirs!r}")
    return compared, disagreements, unfound


@requires_deepspeed
@pytest.mark.deepspeed
def test_resolve_agrees_with_deepspeed_on_the_corpus():
    files = corpus_files() + sorted(CORPUS.glob("*.hjson")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"no corpus at {CORPUS}")
    snapshot = load_snapshot(VERSION)
    checker = Checker(snapshot)
    resolver = Resolver(snapshot)
    configs = values = 0
    problems: list[str] = []
    unfound: set[str] = set()
    for path in files:
        try:
            config = load(path, "deepspeed")
        except ConfigFileError:
            continue
        data = for_deepspeed(config.data, checker)
        if build(data) is None:
            continue  # DeepSpeed refuses it: nothing parsed to compare with
        configs += 1
        compared, disagreements, missing = compare_config(data, resolver, snapshot)
        values += compared
        unfound.update(missing)
        problems += [f"{path.name}: {d}" for d in disagreements]
    print(f"\nresolve vs DeepSpeedConfig {VERSION}: {configs} configs, {values} values compared, "
          f"{len(problems)} disagreements; no parsed attribute found for {len(unfound)} paths: {sorted(unfound)}")
    known = [p for p in problems if any(f": {path}" in p for path in KNOWN)]
    for path, why in KNOWN.items():
        hits = sum(f": {path}" in p for p in known)
        print(f"known disagreement, {hits} values: {path}: {why}")
    new = [p for p in problems if p not in known]
    assert not new, "resolve disagrees with DeepSpeedConfig:\n" + "\n".join(new)
    assert configs >= 30 and values >= 30 * 200, (configs, values)
