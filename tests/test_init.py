"""``dsfields init`` (issue 40): over a grid of situations every config it writes passes ``check`` and ``estimate``
says it fits; what it refuses is one line."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from dsfields.cli import main
from dsfields.estimate import gpu_memory
from dsfields.init import CANDIDATES, shape_from_params

pytestmark = pytest.mark.data

VERSION = "0.19.8"
PARAMS = ("1B", "13B", "70B", "180B")
MEMORY = ("24GB", "40GB", "80GB")
HOST = {"24GB": "256GB", "40GB": "1TB", "80GB": "2TB"}
"""One node's RAM beside each GPU: a workstation-class node for 24 GB cards, the usual 1 TB / 2 TB of an 8 × A100-40GB
and an 8 × A100/H100-80GB server (ours, for the grid)."""
WORLDS = ((8, 1), (8, 8))  # 8 and 64 GPUs
GRID = [(p, m, w, hf) for p in PARAMS for m in MEMORY for w in WORLDS for hf in (False, True)]


def test_the_grid_has_at_least_36_situations():
    assert len(GRID) >= 36


@pytest.mark.parametrize(("params", "memory", "world", "hf"), GRID)
def test_every_config_passes_check_and_fits(tmp_path, capsys, params, memory, world, hf):
    gpus, nodes = world
    out = tmp_path / "ds_config.json"
    code = main(["init", "--params", params, "--gpus-per-node", str(gpus), "--nodes", str(nodes), "--gpu-memory",
                 memory, "--host-memory", HOST[memory], "--version", VERSION, "-o", str(out),
                 *(["--hf"] if hf else [])])
    said = capsys.readouterr()
    if code == 1:  # nothing fits: said in one line, and truly nothing does (checked below by the estimate)
        assert said.err.startswith("dsfields init: nothing fits") and not out.exists()
        pytest.skip(f"{params} on {gpus * nodes} × {memory}: nothing fits, as said")
    assert code == 0, said.err
    config = json.loads(out.read_text())
    assert main(["check", str(out), "--version", VERSION, "--world-size", str(gpus * nodes),
                 *(["--hf"] if hf else [])]) == 0, capsys.readouterr().out
    capsys.readouterr()
    shape = shape_from_params(int(float(params[:-1]) * 10**9))
    checkpointing = "ckpt" if "checkpointing" in said.out else ""
    args = ["estimate", str(out), "--params", params, "--gpus-per-node", str(gpus), "--nodes", str(nodes),
            "--hidden-size", str(shape.hidden), "--layers", str(shape.layers), "--seq-len", "2048",
            "--micro-batch", "1", "--largest-layer-params", str(shape.largest), "--gpu-memory", memory,
            "--version", VERSION, "--format", "json"]
    if hf:
        args += ["--trainer-args", "--per_device_train_batch_size 1 --bf16"
                 + (" --gradient_checkpointing true" if checkpointing else "")]
    assert main(args) == 0
    answer = json.loads(capsys.readouterr().out)
    room = answer["verdict"]["gpu_memory"] - answer["verdict"]["reserve"]
    key = "gpu_bytes_per_rank_with_activation_checkpointing" if checkpointing else "gpu_bytes_per_rank"
    assert answer["total"][key] <= room, (config, answer["total"])
    host_key = key.replace("gpu_bytes_per_rank", "cpu_bytes_per_node")
    host = gpu_memory("--host-memory", HOST[memory])
    assert host is not None and answer["total"][host_key] <= host[0], (config, answer["total"])
    if hf or not checkpointing:  # the Trainer's --gradient_checkpointing reaches the verdict; model code does not
        assert answer["verdict"]["fits"], answer["verdict"]
    assert config["zero_optimization"]["stage"] in (1, 2, 3)


def test_nothing_fits_is_said_and_is_true(capsys):
    assert main(["init", "--params", "1B", "--gpus-per-node", "1", "--gpu-memory", "1GB",
                 "--version", VERSION]) == 1  # 1 GiB is all kept for the CUDA context
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing fits" in err


def test_missing_arguments_in_a_pipe_are_one_line_and_exit_2(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["init", "--params", "7B"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--gpus-per-node" in err and "--gpu-memory" in err


def test_chinese_explanations_have_no_english_sentence(capsys):
    assert main(["init", "--params", "13B", "--gpus-per-node", "8", "--gpu-memory", "40GB", "--hf", "--lang", "zh",
                 "--version", VERSION]) == 0
    err = capsys.readouterr().err
    assert "选择理由" in err and "why:" not in err and "cheapest" not in err


def test_candidates_go_from_cheap_to_dear():
    costs = [(c.offload_param, c.offload_optimizer, c.checkpointing, c.stage) for c in CANDIDATES]
    assert costs == sorted(costs)


def test_an_hf_config_gives_the_real_shape(tmp_path):
    """Llama-2-7B's config.json: 6.74B parameters (its model card), the 32000 × 4096 embedding as largest layer."""
    from dsfields.init import shape_from_config

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                                "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
                                "vocab_size": 32000, "tie_word_embeddings": False}))
    shape = shape_from_config(path)
    assert shape.params == pytest.approx(6.74e9, rel=0.005)
    assert shape.largest == 32000 * 4096 and shape.hidden == 4096 and shape.layers == 32


def test_host_memory_keeps_offload_out_when_the_node_cannot_hold_it(capsys):
    """13B on one node of 8 × 24 GB fits only with optimizer offload (about 290 GiB of host memory per node): with
    2 TB it is chosen, with 256 GB nothing fits and the host is named as what is short."""
    args = ["init", "--params", "13B", "--gpus-per-node", "8", "--gpu-memory", "24GB", "--version", VERSION]
    assert main([*args, "--host-memory", "2TB"]) == 0
    said = capsys.readouterr()
    assert '"offload_optimizer"' in said.out and "within --host-memory" in said.err
    assert main([*args, "--host-memory", "256GB"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "host memory per node" in err and "--host-memory 256.00 GiB" in err


def test_host_memory_is_a_size_not_a_gpu(capsys):
    assert main(["init", "--params", "1B", "--gpus-per-node", "8", "--gpu-memory", "24GB", "--host-memory", "H100",
                 "--version", VERSION]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--host-memory" in err


def test_without_host_memory_it_says_the_host_is_not_checked(capsys):
    assert main(["init", "--params", "1B", "--gpus-per-node", "8", "--gpu-memory", "24GB", "--version", VERSION]) == 0
    assert "host memory not checked" in capsys.readouterr().err


def _converse(argv: list[str], answers: list[str], cwd: str, deadline: float = 120.0) -> tuple[int, str]:
    """Run ``argv`` on a pseudo-terminal (stdin and stdout both a tty), answer each question as it appears (a prompt
    ends in ": " or "："), and return the exit code and everything the terminal showed. Bounded by ``deadline``."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor"), "LANG": "C.UTF-8"}
    proc = subprocess.Popen([sys.executable, "-m", "dsfields", *argv], stdin=child_fd, stdout=child_fd,
                            stderr=child_fd, cwd=cwd, env=env, close_fds=True)
    os.close(child_fd)
    shown = b""
    pending = list(answers)
    end = time.monotonic() + deadline
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([main_fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(main_fd, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
                if pending and shown.rstrip(b" ").endswith((b":", "：".encode())):
                    os.write(main_fd, pending.pop(0).encode() + b"\n")
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, end - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main_fd)
    return code, shown.decode("utf-8", "replace")


def test_on_a_terminal_it_asks_for_what_is_missing(tmp_path):
    """On a pseudo-terminal, ``init --params 1B`` asks for the GPUs per node and their memory (as ``accelerate
    config`` asks), takes the answers and writes the config; in a pipe the same command asks nothing (above)."""
    code, shown = _converse(["init", "--params", "1B", "--version", VERSION, "-o", "ds.json"], ["8", "24GB"],
                            str(tmp_path))
    assert code == 0, shown
    assert "GPUs per node:" in shown and "Memory of one GPU" in shown and "Model parameters" not in shown
    config = json.loads((tmp_path / "ds.json").read_text())
    assert config["zero_optimization"]["stage"] in (1, 2, 3)
    assert "on 24GB" in shown  # the answer reached the verdict


def test_on_a_terminal_an_empty_answer_is_one_line_and_exit_2(tmp_path):
    code, shown = _converse(["init", "--params", "1B", "--version", VERSION], ["8", ""], str(tmp_path))
    assert code == 2, shown
    assert "Traceback" not in shown and "--gpu-memory" in shown


def test_hf_configs_carry_what_the_seed_templates_carry_where_it_matters(tmp_path, capsys):
    """Under the HF Trainer: ``gradient_clipping: "auto"`` (the Trainer's --max_grad_norm reaches DeepSpeed) and, at
    ZeRO-3, whole 16-bit weights on save; at ZeRO-1/2 ``overlap_comm`` when its second bucket still fits (templates
    A and B of the seed guide have all three)."""
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    assert main(["init", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "80GB", "--hf",
                 "--version", VERSION, "-o", str(small)]) == 0
    assert main(["init", "--params", "70B", "--gpus-per-node", "8", "--gpu-memory", "80GB", "--host-memory", "2TB",
                 "--hf", "--version", VERSION, "-o", str(large)]) == 0
    capsys.readouterr()
    a, b = json.loads(small.read_text()), json.loads(large.read_text())
    assert a["gradient_clipping"] == b["gradient_clipping"] == "auto"
    assert a["zero_optimization"]["stage"] in (1, 2) and a["zero_optimization"]["overlap_comm"] is True
    assert b["zero_optimization"]["stage"] == 3
    assert b["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is True
    assert b["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
