"""The inference extractor on a fixture package imitating deepspeed.inference.config (pydantic 2, no DeepSpeed).

Names and aliases, a deprecation with a dotted replacement, a tuple-valued enum whose spellings only the probes
find, a ``mode="before"`` validator, and the static witness over ``inference/`` and ``module_inject/``.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

CONFIG = '''
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class DtypeEnum(Enum):
    fp16 = ("fp16", "half")
    fp32 = ("fp32", "float")

    @classmethod
    def from_str(cls, value):
        for member in cls:
            if value in member.value:
                return member
        raise ValueError(f"{value!r} is not a valid DtypeEnum")


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TPConfig(Model):
    """Tensor parallelism."""

    tp_size: int = 1


class InferenceConfig(Model):
    """The fixture's inference config."""

    replace_with_kernel_inject: bool = Field(False, alias="kernel_inject")
    """Inject kernels."""
    tensor_parallel: TPConfig = Field({}, alias="tp")
    dtype: Any = "fp16"
    mp_size: int = Field(1, json_schema_extra={"deprecated": True, "new_param": "tensor_parallel.tp_size"})
    max_out_tokens: int = Field(1024, gt=0)

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, value):
        if isinstance(value, str):
            return DtypeEnum.from_str(value).value[0]
        raise TypeError("dtype must be a string")


DeepSpeedInferenceConfig = InferenceConfig
'''

ENGINE = '''
class Engine:
    def __init__(self, config):
        self._config = config
        if self._config.replace_with_kernel_inject:
            size = config.tensor_parallel.tp_size
'''


@pytest.fixture
def document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    from dsfields.extract.inference_witness import extract_inference

    package = tmp_path / "fakeinference"
    (package / "inference").mkdir(parents=True)
    (package / "module_inject").mkdir()
    (package / "__init__.py").write_text("")
    (package / "inference" / "__init__.py").write_text("")
    (package / "inference" / "config.py").write_text(textwrap.dedent(CONFIG))
    (package / "inference" / "engine.py").write_text(textwrap.dedent(ENGINE))
    (package / "module_inject" / "__init__.py").write_text("config = None\nx = config.dtype\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("fakeinference.inference.config")
        yield extract_inference(module, "1.2.3", package="fakeinference")
    finally:
        for name in [n for n in sys.modules if n == "fakeinference" or n.startswith("fakeinference.")]:
            del sys.modules[name]


def test_fields_are_keyed_by_attribute_name_with_aliases(document: dict) -> None:
    fields = document["fields"]
    assert document["document"] == "inference" and document["deepspeed_version"] == "1.2.3"
    kernel = fields["replace_with_kernel_inject"]
    assert (kernel["default"], kernel["aliases"]) == (False, ["kernel_inject"])
    assert kernel["description"] == "Inject kernels."
    assert fields["tensor_parallel"]["aliases"] == ["tp"] and fields["tensor_parallel.tp_size"]["default"] == 1
    assert document["sections"]["tensor_parallel"]["strict"] is True
    assert fields["mp_size"]["deprecated"]["new_param"] == "tensor_parallel.tp_size"
    assert fields["max_out_tokens"]["constraints"] == {"gt": 0}


def test_probes_find_the_spellings_a_validator_takes(document: dict) -> None:
    dtype = document["fields"]["dtype"]
    assert dtype["choices"] == ["float", "fp16", "fp32", "half"]
    assert dtype["json_types"] == ["string"]
    assert dtype["probes"]['"half"'] == {"ok": True, "as": "fp16"}
    assert dtype["probes"]["1"]["ok"] is False
    assert document["fields"]["max_out_tokens"]["probes"]["0"]["ok"] is False
    assert document["fields"]["mp_size"]["probes"]["1"] == {"ok": True}


def test_static_witness_places_attribute_reads_of_the_built_config(document: dict) -> None:
    fields = document["fields"]
    assert [r["file"] for r in fields["replace_with_kernel_inject"]["read_at"]] == ["fakeinference/inference/engine.py"]
    assert fields["tensor_parallel.tp_size"]["witnesses"] == ["model", "static"]
    assert fields["dtype"]["read_at"] == [{"file": "fakeinference/module_inject/__init__.py", "line": 2}]
    assert "mp_size" in document["coverage"]["witnesses"]["not_read_outside_the_model"]
