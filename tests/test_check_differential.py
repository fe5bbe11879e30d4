"""check agrees with DeepSpeed itself, on real configs and on generated mutations of them.

No expectation is written by hand: DeepSpeed's ``DeepSpeedConfig`` is the oracle. Whenever it
rejects a config, ``check`` must report an error naming a key DeepSpeed's error is about (pydantic's
``loc``, the removed key's message, or the keys whose removal makes the error go away). Whenever
it accepts one, no key it read may be reported unknown. The corpus is shared/realworld-configs
(real files with provenance); mutations typo one key, move one key to a wrong section, or give
one key a wrong type, chosen by a seeded RNG.
"""

from __future__ import annotations

import copy
import os
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, requires_deepspeed

from dsfields.check import Checker, Finding, Options, Severity
from dsfields.check.runtime import deepspeed_verdict, hf_substitute
from dsfields.configfile import ConfigFile, ConfigFileError, load
from dsfields.extract.oracle import build_deepspeed_config
from dsfields.model.store import load as load_snapshot

VERSION = "0.19.8"
CORPUS = REPO.parent / "shared" / "realworld-configs"
pytestmark = [requires_deepspeed, pytest.mark.deepspeed]


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        if os.environ.get("CI"):
            raise AssertionError(f"the real-config corpus is missing at {CORPUS}")
        return []
    return sorted(p for p in CORPUS.glob("*.json") if p.name != "index.json")


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(load_snapshot(VERSION))


@pytest.fixture(scope="module")
def corpus() -> list[ConfigFile]:
    files = corpus_files()
    if not files:
        pytest.skip(f"no corpus at {CORPUS}")
    loaded = []
    for path in files:
        try:
            loaded.append(load(path, "deepspeed"))
        except ConfigFileError:
            continue  # unusable for DeepSpeed too: nothing to compare
    return loaded


def for_deepspeed(data: dict[str, Any], checker: Checker) -> dict[str, Any]:
    """What DeepSpeed would receive under the HF Trainer on one GPU: "auto" filled, batch consistent."""
    out = hf_substitute(data, checker)
    if "train_batch_size" not in out and "train_micro_batch_size_per_gpu" not in out:
        out["train_micro_batch_size_per_gpu"] = 1  # accelerate supplies the micro batch when absent
    micro, gas = out.get("train_micro_batch_size_per_gpu"), out.get("gradient_accumulation_steps", 1)
    if "train_batch_size" in out and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                         for v in (micro, gas, out["train_batch_size"])):
        out["train_batch_size"] = micro * gas  # world size 1
    return out


def related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".") or not a or not b


def names_culprit(findings: list[Finding], culprits: list[str]) -> bool:
    errors = [f for f in findings if f.severity is Severity.ERROR]
    return any(related(p, c) for f in errors for p in (f.path, *f.related) for c in culprits)


def run_check(checker: Checker, data: dict[str, Any], name: str = "<mutant>") -> list[Finding]:
    return checker.check(ConfigFile(name, data, "json"), Options(hf=True))


def reads(data: dict[str, Any]) -> set[str]:
    """Every key path DeepSpeedConfig looked at (present in the config) while building it."""
    from deepspeed.runtime.config import DeepSpeedConfig

    from dsfields.launch.trace import Recorder, join, wrap

    recorder = Recorder()
    try:
        DeepSpeedConfig(wrap(copy.deepcopy(data), "", recorder))
    except Exception:  # the verdict is checked elsewhere; only the reads matter here
        pass
    return {join(e.section, e.key) for e in recorder.events if e.present and e.key != "*"}


def assert_agrees(checker: Checker, original: dict[str, Any], label: str) -> bool:
    """Compare check with DeepSpeed on one config; True when DeepSpeed accepted it."""
    findings = run_check(checker, original, label)
    data = for_deepspeed(original, checker)
    accepted = True
    for round_ in range(6):  # each round removes what DeepSpeed named, to reach its next complaint
        error, culprits = deepspeed_verdict(data, checker, build_deepspeed_config)
        if error is None:
            break
        accepted = False
        if round_:
            findings = run_check(checker, data, label)  # removing a key can cause a new error: re-check
        if not culprits:  # an absence (e.g. no batch size left): no key to name, but check must object
            assert any(f.severity is Severity.ERROR for f in findings), f"{label}: DeepSpeed raises {error!r}"
            break
        assert names_culprit(findings, culprits), (
            f"{label}: DeepSpeed raises {error!r} about {culprits}; check reported "
            f"{[(f.path, f.severity.value, f.message) for f in findings]}")
        for path in culprits:
            data = _delete(data, path)
        data = for_deepspeed(data, checker)
    read = reads(for_deepspeed(original, checker)) if accepted else set()
    wrongly_unknown = [f.path for f in findings if f.kind.name == "UNKNOWN_KEY" and f.path in read]
    assert not wrongly_unknown, f"{label}: DeepSpeed reads {wrongly_unknown}, check calls them unknown"
    return accepted


def _delete(data: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node: Any = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    if out == data and path:
        out.pop(parts[0], None)  # a culprit that is not a plain key path: drop its whole top section
    return out


def test_corpus_agrees_with_deepspeed(checker, corpus):
    rejected = sum(not assert_agrees(checker, config.data, Path(config.name).name) for config in corpus)
    assert rejected >= 10, "the corpus should exercise DeepSpeed's rejections"


# ---------------------------------------------------------------- mutations


def leaves(data: dict[str, Any], checker: Checker, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        section = checker.sections.get(prefix)
        if section is not None and section.passthrough:
            continue
        if path.startswith(("optimizer.params", "scheduler.params")):
            continue
        if isinstance(value, dict) and path in checker.sections:
            out.extend(leaves(value, checker, path))
        else:
            out.append((path, value))
    return out


def typo(key: str, rng: random.Random) -> str:
    if len(key) < 3:
        return key + "x"
    i = rng.randrange(len(key) - 1)
    choice = rng.randrange(3)
    if choice == 0:
        return key[:i] + key[i + 1] + key[i] + key[i + 2:]
    if choice == 1:
        return key[:i] + key[i + 1:]
    return key[:i] + key[i] + key[i:]


def put(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


WRONG = {"boolean": "yes please", "integer": "eight", "number": [1.5], "string": 12345, "array": "x",
         "object": 3.5, "null": {"a": 1}}


def mutants(config: dict[str, Any], checker: Checker, seed: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    candidates = leaves(config, checker)
    if not candidates:
        return []
    out = []
    for _ in range(4):
        path, value = rng.choice(candidates)
        section, _, key = path.rpartition(".")
        new_key = typo(key, rng)
        if checker.snapshot.field_by_name(section, new_key) is None:
            mutated = _delete(config, path)
            out.append((f"typo {path}->{new_key}", put(mutated, f"{section}.{new_key}" if section else new_key, value)))
        targets = [s for s in ("bf16", "fp16", "zero_optimization", "zero_optimization.offload_optimizer",
                               "activation_checkpointing", "") if s != section]
        target = rng.choice(targets)
        if checker.snapshot.field_by_name(target, key) is None:
            moved = put(_delete(config, path), f"{target}.{key}" if target else key, value)
            out.append((f"move {path}->{target or '<top>'}", moved))
        kind = "null" if value is None else next(
            t for t in ("boolean", "integer", "number", "string", "array", "object")
            if {"boolean": isinstance(value, bool), "integer": isinstance(value, int) and not isinstance(value, bool),
                "number": isinstance(value, float), "string": isinstance(value, str),
                "array": isinstance(value, list), "object": isinstance(value, dict)}[t])
        out.append((f"type {path}={WRONG[kind]!r}", put(config, path, WRONG[kind])))
    return out


def test_mutations_agree_with_deepspeed(checker, corpus):
    clean = [c for c in corpus
             if deepspeed_verdict(for_deepspeed(c.data, checker), checker, build_deepspeed_config)[0] is None]
    assert len(clean) >= 20
    checked = rejected = 0
    for index, config in enumerate(clean):
        for label, mutant in mutants(config.data, checker, seed=index):
            checked += 1
            rejected += not assert_agrees(checker, mutant, f"{Path(config.name).name}: {label}")
    assert checked >= 300 and rejected >= 60, (checked, rejected)
