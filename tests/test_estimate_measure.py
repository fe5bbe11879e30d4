"""``bench/estimate_measure.py``: ``estimate``'s model states against the bytes DeepSpeed really allocates on rank 0
of a fake world of N ranks (real DeepSpeed, torch and transformers on CPU), and the CUDA mode's clean skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, requires_deepspeed

pytestmark = [pytest.mark.integration, requires_deepspeed]

BENCH = REPO / "bench" / "estimate_measure.py"

SMALL_GRID = [
    ("llama", 8, 2, False, 1, 1),
    ("llama", 8, 3, False, 4, 1),  # hpZ: the secondary partition
    ("gpt2", 1, 1, True, 1, 1),
    ("qwen2", 8, 3, True, 1, 1),
    ("llama", 8, 1, False, 1, 8),  # AutoTP over more ranks than key/value heads: rank 0 holds one of the two
    ("qwen2", 8, 3, True, 1, 2),  # AutoTP with ZeRO-3 and offload: the embedding whole, the rest split
]
"""One configuration per ZeRO stage, with and without optimizer offload, N ∈ {1, 8}, hpZ, AutoTP, three
architectures."""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.parametrize(("model", "world", "stage", "offload", "hpz", "tp"), SMALL_GRID)
def test_model_states_are_within_five_percent_of_deepspeeds_allocation(model, world, stage, offload, hpz, tp):
    done = _run("--one", "--model", model, "--world", str(world), "--stage", str(stage), "--hpz", str(hpz),
                "--tp", str(tp), *(["--offload"] if offload else []))
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    # AutoTP rows take no optimizer step (the fake group cannot answer its batch check): no optimizer states
    assert set(row["measured"]) >= {"params16", "fp32_master"} | ({"optimizer_states"} if tp == 1 else set())
    if hpz > 1:
        assert row["measured"]["hpz_secondary"] > 0
    for term, error in row["errors"].items():
        assert abs(error) <= 0.05, (term, row)
    assert abs(row["total_error"]) <= 0.05, row
    assert row["estimate_consistent"], row  # the shares compared add up to estimate's own GPU figure


def test_cuda_mode_skips_cleanly_without_cuda():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the CUDA mode would run, not skip")
    done = _run("--cuda")
    assert done.returncode == 0 and done.stdout.strip() == "estimate_measure: no CUDA device: the CUDA mode is skipped"
    assert "Traceback" not in done.stderr
