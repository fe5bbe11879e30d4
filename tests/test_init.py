"""``dsfields init`` (issue 40): over a grid of situations every config it writes passes ``check`` and ``estimate``
says it fits; what it refuses is one line."""

from __future__ import annotations

import json

import pytest

from dsfields.cli import main
from dsfields.init import CANDIDATES, shape_from_params

pytestmark = pytest.mark.data

VERSION = "0.19.8"
PARAMS = ("1B", "13B", "70B", "180B")
MEMORY = ("24GB", "40GB", "80GB")
WORLDS = ((8, 1), (8, 8))  # 8 and 64 GPUs
GRID = [(p, m, w, hf) for p in PARAMS for m in MEMORY for w in WORLDS for hf in (False, True)]


def test_the_grid_has_at_least_36_situations():
    assert len(GRID) >= 36


@pytest.mark.parametrize(("params", "memory", "world", "hf"), GRID)
def test_every_config_passes_check_and_fits(tmp_path, capsys, params, memory, world, hf):
    gpus, nodes = world
    out = tmp_path / "ds_config.json"
    code = main(["init", "--params", params, "--gpus-per-node", str(gpus), "--nodes", str(nodes), "--gpu-memory",
                 memory, "--version", VERSION, "-o", str(out), *(["--hf"] if hf else [])])
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
