"""The inference document against the real installed DeepSpeed: current, and agreeing with check --inference.

Drift: re-extracting the installed release gives the committed ``generated/<version>/inference.json`` byte for
byte. Differential: for every field and every probed value of the committed document, ``check --inference`` has
an error exactly when ``DeepSpeedInferenceConfig(**cfg)`` raises. Launch: ``deepspeed.init_inference`` on a tiny
``torch.nn`` model on CPU takes what check accepts and refuses the typo check names.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest
from conftest import REPO, requires_deepspeed

from dsfields.model.store import dumps

pytestmark = [requires_deepspeed, pytest.mark.integration]


@pytest.fixture(scope="module")
def fresh() -> dict:
    from dsfields.extract.inference_witness import extract_installed

    document = extract_installed()
    assert document is not None, "the installed DeepSpeed has no DeepSpeedInferenceConfig"
    return document


@pytest.fixture(scope="module")
def committed_path(fresh):
    path = REPO / "generated" / fresh["deepspeed_version"] / "inference.json"
    assert path.is_file(), f"no committed inference document for DeepSpeed {fresh['deepspeed_version']}"
    return path


def test_committed_inference_document_equals_a_fresh_extraction(fresh, committed_path):
    assert dumps(fresh) == committed_path.read_text()


def test_inference_document_matches_the_snapshot_schema(committed_path):
    import jsonschema

    schema = json.loads((REPO / "extractor" / "dsfields" / "snapshot.schema.json").read_text())
    jsonschema.validate(json.loads(committed_path.read_text()), schema)


def _probe_configs(document: dict):
    from dsfields.extract.inference_witness import _probe_values
    from dsfields.model.dotted import set_path

    values = dict((pid, v) for pid, v in _probe_values(_module()))
    for path, record in sorted(document["fields"].items()):
        for pid in sorted(record.get("probes") or {}):
            yield path, pid, set_path({}, record["section"], record["key"], copy.deepcopy(values[pid]))


def _module():
    import deepspeed.inference.config as module

    return module


def test_check_inference_agrees_with_deepspeed_on_every_probed_value(committed_path):
    from dsfields.check.engine import Checker, check_text
    from dsfields.check.findings import Options, Severity
    from dsfields.model.records import Snapshot

    document = json.loads(committed_path.read_text())
    checker = Checker(Snapshot.from_dict(document))
    cls = _module().DeepSpeedInferenceConfig
    disagreements, total = [], 0
    for path, pid, cfg in _probe_configs(document):
        total += 1
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                cls(**copy.deepcopy(cfg))
            deepspeed_ok = True
        except Exception:
            deepspeed_ok = False
        report = check_text(json.dumps(cfg), checker, Options())
        check_ok = not any(f.severity is Severity.ERROR for f in report.findings)
        if check_ok != deepspeed_ok:
            disagreements.append(f"{path} = {pid}: DeepSpeed {'accepts' if deepspeed_ok else 'rejects'}, "
                                 f"check {'accepts' if check_ok else 'rejects'} {[f.message for f in report.findings]}")
    assert total > 1000  # every leaf field times every probe value
    assert disagreements == []


@pytest.mark.parametrize("config", [
    {"dtype": "fp32", "replace_with_kernel_inject": False},
    {"dtype": "bf16", "tensor_parallel": {"tp_size": 1}, "max_out_tokens": 16},
    {"dtype": "float32", "tp": {"tp_size": 1}, "kernel_inject": False, "max_tokens": 8},
])
def test_init_inference_runs_what_check_accepts(config, committed_path):
    import deepspeed
    import torch

    from dsfields.check.engine import Checker, check_text
    from dsfields.check.findings import Options, Severity
    from dsfields.model.records import Snapshot

    checker = Checker(Snapshot.from_dict(json.loads(committed_path.read_text())))
    report = check_text(json.dumps(config), checker, Options())
    assert not [f for f in report.findings if f.severity is Severity.ERROR]
    engine = deepspeed.init_inference(torch.nn.Sequential(torch.nn.Linear(4, 4)), config=copy.deepcopy(config))
    want = {"fp32": torch.float32, "float32": torch.float32, "bf16": torch.bfloat16}[config["dtype"]]
    assert next(engine.module.parameters()).dtype == want
    assert engine(torch.ones(1, 4, dtype=want)).shape == (1, 4)


def test_init_inference_refuses_the_typo_check_names(committed_path):
    import deepspeed
    import torch

    from dsfields.check.engine import Checker, check_text
    from dsfields.check.findings import Options, Severity
    from dsfields.model.records import Snapshot

    config = {"replace_with_kernel_injct": True}
    checker = Checker(Snapshot.from_dict(json.loads(committed_path.read_text())))
    errors = [f for f in check_text(json.dumps(config), checker, Options()).findings if f.severity is Severity.ERROR]
    assert len(errors) == 1 and 'did you mean "replace_with_kernel_inject"' in errors[0].fix
    with pytest.raises(Exception, match="replace_with_kernel_injct"):
        deepspeed.init_inference(torch.nn.Linear(4, 4), config=config)


CORPUS = REPO / "tests" / "fixtures" / "inference-corpus"


def test_check_inference_agrees_with_deepspeed_on_the_real_config_corpus(committed_path):
    from dsfields.check.engine import Checker, check_file
    from dsfields.check.findings import Options, Severity
    from dsfields.model.records import Snapshot

    checker = Checker(Snapshot.from_dict(json.loads(committed_path.read_text())))
    cls = _module().DeepSpeedInferenceConfig
    files = sorted(CORPUS.glob("*/*.json"))
    disagreements = []
    for path in files:
        config = json.loads(path.read_text())
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                cls(**copy.deepcopy(config))
            deepspeed_ok = True
        except Exception:
            deepspeed_ok = False
        errors = [f for f in check_file(path, checker, Options()).findings if f.severity is Severity.ERROR]
        if deepspeed_ok == bool(errors):
            disagreements.append(f"{path.name}: DeepSpeed {'accepts' if deepspeed_ok else 'rejects'}, check "
                                 f"{[f.message for f in errors]}")
    assert len(files) >= 20
    assert disagreements == []


@pytest.mark.parametrize("config", [{"mp_size": 2, "tensor_parallel": {"tp_size": 2}},
                                    {"mp_size": 1, "tp": {"tp_size": 1}}])
def test_deprecated_key_and_its_dotted_replacement_together(config, committed_path):
    from dsfields.check.engine import Checker, check_text
    from dsfields.check.findings import Options, Severity
    from dsfields.model.records import Snapshot

    checker = Checker(Snapshot.from_dict(json.loads(committed_path.read_text())))
    errors = [f for f in check_text(json.dumps(config), checker, Options()).findings if f.severity is Severity.ERROR]
    assert [f.path for f in errors] == ["mp_size"] and "both set" in errors[0].message
    with pytest.raises(Exception, match="together"):
        _module().DeepSpeedInferenceConfig(**config)
