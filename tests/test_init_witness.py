"""``dsfields init``'s configs launched at their own world size (issue 40): a sample of the init grid, each config
given to ``dsfields check --launch --world-size N`` (``deepspeed.initialize`` on CPU as rank 0 and rank N-1 of torch's
fake process group), as plain DeepSpeed or as the HF Trainer hands it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, requires_deepspeed

pytestmark = [pytest.mark.integration, requires_deepspeed]

VERSION = "0.19.8"

SAMPLE = [
    ("1B", "24GB", "256GB", 8, 1, False),  # ZeRO-1
    ("13B", "40GB", "1TB", 8, 8, False),  # ZeRO-3 over 64 ranks
    ("13B", "24GB", "2TB", 8, 1, True),  # ZeRO-3 with optimizer offload, the Trainer's "auto"
    ("70B", "80GB", "2TB", 8, 8, True),  # ZeRO-3, 64 ranks, HF
]
"""(params, GPU memory, host memory, GPUs per node, nodes, HF Trainer): one situation per kind of answer."""


def _dsfields(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    return subprocess.run([sys.executable, "-m", "dsfields", *args], capture_output=True, text=True, timeout=600,
                          env=env)


@pytest.mark.parametrize(("params", "memory", "host", "gpus", "nodes", "hf"), SAMPLE)
def test_init_configs_launch_at_their_world_size(tmp_path, params, memory, host, gpus, nodes, hf):
    out = tmp_path / "ds_config.json"
    made = _dsfields("init", "--params", params, "--gpus-per-node", str(gpus), "--nodes", str(nodes), "--gpu-memory",
                     memory, "--host-memory", host, "--version", VERSION, "-o", str(out), *(["--hf"] if hf else []))
    assert made.returncode == 0, made.stderr
    world = gpus * nodes
    done = _dsfields("check", "--launch", "--world-size", str(world), "--gpus-per-node", str(gpus), "--version",
                     VERSION, "--format", "json", str(out), *(["--hf"] if hf else []))
    assert done.returncode == 0, (out.read_text(), done.stdout[-3000:], done.stderr[-2000:])
    findings = json.loads(done.stdout)["files"][0]["findings"]
    launched = [f["message"] for f in findings if "deepspeed.initialize" in f["message"]]
    assert launched and f"rank 0 of {world}" in launched[0] and f"launched on rank 0 and rank {world - 1}" in \
        launched[0], findings
