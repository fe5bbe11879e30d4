"""``dsfields estimate``: the arithmetic on hand-made inputs, the config read through the snapshot, and the
model states against DeepSpeed 0.19.8's own estimators (and, on a GPU, against what torch allocates)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import REPO, requires_deepspeed

from dsfields.cli import main
from dsfields.estimate import (
    CITATIONS,
    CITED_RELEASE,
    SETTING_PATHS,
    Model,
    Parallel,
    Settings,
    autotp_share,
    change_first,
    compute,
    count,
    oom_list,
    persistent_numel,
    zero2_model_states,
    zero3_model_states,
)
from dsfields.model.errors import UsageError
from dsfields.model.store import load as load_snapshot

VERSION = "0.19.8"
unit = pytest.mark.unit
data = pytest.mark.data
integration = pytest.mark.integration


def _terms(estimate) -> dict:
    return {t.name: t for t in estimate.buffers}


def _settings(**overrides) -> Settings:
    """Settings for the arithmetic tests: arbitrary round values given here (the command takes every one from the
    release's snapshot, which a unit test does not read); each test overrides what it is about."""
    values = dict(stage=0, offload_optimizer="none", offload_param="none", optimizer_pin=True, param_pin=True,
                  optimizer_buffer_count=4, param_buffer_count=5, param_buffer_size=10**8, max_in_cpu=10**9,
                  reduce_bucket_size=5 * 10**8, allgather_bucket_size=5 * 10**8, overlap_comm=False,
                  contiguous_gradients=True, prefetch_bucket_size=5 * 10**7, max_live_parameters=10**9,
                  max_reuse_distance=10**9, param_persistence_threshold=10**5, model_persistence_threshold=2**63 - 1,
                  sub_group_size=10**9, aio_intra_op_parallelism=1, aio_use_gds=False, cpu_checkpointing=False,
                  partition_activations=False)
    return Settings(**(values | overrides))


# ---------------------------------------------------------------- unit: the arithmetic


@unit
def test_zero2_model_states_by_hand():
    # no offload: 2 B of 16-bit params whole + 18 B partitioned over 4 ranks; host: 4 B × 4 ranks × 1.5
    assert zero2_model_states(1000, 4, 1, cpu_offload=False) == (24_000, 2000 + 4500)
    # offload: 2 B on the GPU; host: max(4 × 4, 16) B × 1.5
    assert zero2_model_states(1000, 4, 1, cpu_offload=True) == (24_000, 2000)


@unit
def test_zero3_model_states_by_hand():
    # no offload: 4 B of the largest layer + 18 B partitioned over 2 nodes × 2 GPUs; host (zero.Init): 4 B × 2 × 1.5
    assert zero3_model_states(1000, 10, 2, 2, False, False, True) == (120, 40 + 4500)
    # everything offloaded: the GPU holds the largest layer; host 18 B per param per node (1 / nodes) × 1.5
    assert zero3_model_states(1000, 10, 2, 2, True, True, True) == (13_500, 40)
    # optimizer only: 2 B of params partitioned stay on the GPU; host 16 B / nodes × 1.5
    assert zero3_model_states(1000, 10, 2, 2, True, False, True) == (12_000, 40 + 500)


@unit
@pytest.mark.parametrize("overlap, buffers", [(True, 2), (False, 1)])
def test_stage2_reduce_bucket_doubles_with_overlap_comm(overlap, buffers):
    settings = _settings(stage=2, overlap_comm=overlap, reduce_bucket_size=1000)
    terms = _terms(compute(settings, Model(params=10**6, gpus_per_node=4)))
    assert terms["reduce_bucket"].bytes == buffers * 1000 * 2
    assert terms["allgather_bucket"].bytes == 0  # gathered in place: the bucket size allocates nothing


@unit
def test_stage3_reduce_bucket_is_one_buffer_whatever_overlap_comm():
    for overlap in (True, False):
        settings = _settings(stage=3, overlap_comm=overlap, reduce_bucket_size=1000)
        assert _terms(compute(settings, Model(params=10**6, largest_layer=10)))["reduce_bucket"].bytes == 2000


@unit
def test_no_contiguous_gradients_no_reduce_bucket():
    assert "reduce_bucket" not in _terms(compute(_settings(stage=2, contiguous_gradients=False), Model(params=10**6)))


@unit
def test_stage3_prefetch_stops_at_the_live_parameter_budget():
    model = Model(params=10_000, largest_layer=100)
    # retained for reuse: min(400 / 2, 10 000 - 100) = 200; prefetch room: 1000 - 100 - 200 = 700
    settings = _settings(stage=3, prefetch_bucket_size=5000, max_live_parameters=1000, max_reuse_distance=400)
    terms = _terms(compute(settings, model))
    assert terms["stage3_reuse_retained"].bytes == 200 * 2
    assert terms["stage3_prefetch"].bytes == 700 * 2
    roomy = _terms(compute(replace(settings, max_live_parameters=10**9), model))
    assert roomy["stage3_prefetch"].bytes == 5000 * 2


@unit
def test_persistent_parameters_on_a_tiny_shape():
    model = Model(params=1000, hidden=10, layers=2)
    # per layer: six tensors of H (norms, attention-out and MLP-down biases) ≤ 10; 3H and 4H are not; + final norm
    assert persistent_numel(model, threshold=10, cap=2**63) == 2 * 6 * 10 + 20
    assert persistent_numel(model, threshold=10, cap=100) == 100  # stage3_model_persistence_threshold caps it
    assert persistent_numel(model, threshold=0, cap=2**63) == 0
    assert persistent_numel(Model(params=1000), threshold=10, cap=100) is None


@unit
def test_nvme_swap_buffers_follow_buffer_count_size_and_aio_alignment():
    settings = _settings(stage=3, offload_optimizer="nvme", offload_param="nvme", optimizer_buffer_count=4,
                        param_buffer_count=5, param_buffer_size=1000, sub_group_size=3000,
                        aio_intra_op_parallelism=2)
    model = Model(params=8000, largest_layer=10, gpus_per_node=2)
    terms = _terms(compute(settings, model))
    # alignment: 1024 B × intra_op_parallelism 2 → 1024 elements of 2 B, 512 of 4 B
    assert terms["nvme_param_swap_buffers"].bytes == 5 * 1024 * 2
    # optimizer: one buffer per count of the largest sub-group, min(3000, partition 4000) → aligned 3072, fp32
    assert terms["nvme_optimizer_swap_buffers"].bytes == 4 * 3072 * 4
    assert terms["nvme_param_swap_buffers"].device == "cpu"
    gds = _terms(compute(replace(settings, aio_use_gds=True), model))
    assert gds["nvme_param_swap_buffers"].device == "gpu"


@unit
def test_nvme_moves_optimizer_states_off_the_host():
    model = Model(params=10**6, largest_layer=10)
    cpu = compute(_settings(stage=3, offload_optimizer="cpu", offload_param="cpu"), model)
    nvme = compute(_settings(stage=3, offload_optimizer="nvme", offload_param="cpu"), model)
    assert nvme.gpu_model_states == cpu.gpu_model_states
    assert nvme.nvme_model_states == 12 * 10**6
    assert cpu.cpu_model_states - nvme.cpu_model_states == int(12 * 10**6 * 1.5)


@unit
def test_activations_with_and_without_checkpointing():
    model = Model(params=1000, hidden=8, layers=2, seq_len=4, micro_batch=1)
    est = compute(_settings(stage=2), model)
    per_layer = 4 * 1 * 8 * 34
    assert [t.bytes for t in est.activations] == [2 * per_layer]
    assert [t.bytes for t in est.activation_ckpt] == [2 * 2 * 4 * 8, per_layer]
    with_heads = compute(_settings(stage=2), replace(model, heads=2))
    assert with_heads.activations[0].bytes == 2 * int(4 * 8 * (34 + 5 * 2 * 4 / 8))
    on_host = compute(_settings(stage=2, cpu_checkpointing=True), model)
    assert on_host.activation_ckpt[0].device == "cpu"
    assert on_host.gpu_total(True) == est.gpu_total(True) - 2 * 2 * 4 * 8


@unit
def test_totals_add_only_terms_in_total():
    est = compute(_settings(stage=3, offload_optimizer="cpu"), Model(params=10**6, largest_layer=10, gpus_per_node=2))
    gpu_terms = sum(t.bytes for t in est.buffers if t.device == "gpu" and t.in_total)
    assert est.gpu_total() == est.gpu_model_states + gpu_terms
    assert not _terms(est)["sub_group_fp32_gradients"].in_total  # inside DeepSpeed's 4 B/param of fp32 gradients
    assert est.cpu_total(2) == est.cpu_model_states  # pinned memory is part of the host model states


@unit
def test_oom_list_is_ranked_and_leaves_out_what_saves_nothing():
    settings = _settings(stage=2, overlap_comm=True, reduce_bucket_size=10**8)
    # 2 GPUs: DeepSpeed's host figure grows with offload (at 8 it is 4 B × 8 ranks either way)
    model = Model(params=10**9, gpus_per_node=2, hidden=1024, layers=8, seq_len=512, micro_batch=4)
    savings = oom_list(settings, model)
    saved = [s.gpu_saved for s in savings]
    assert saved == sorted(saved, reverse=True)
    assert all(s.gpu_saved > 0 or s.cpu_delta < 0 for s in savings)
    paths = [s.knob.path for s in savings]
    assert "zero_optimization.offload_optimizer.device" in paths
    assert "zero_optimization.overlap_comm" in paths
    assert "zero_optimization.stage3_prefetch_bucket_size" not in paths  # a stage-3 knob at stage 2
    overlap = next(s for s in savings if s.knob.path == "zero_optimization.overlap_comm")
    assert overlap.gpu_saved == 10**8 * 2
    offload = next(s for s in savings if s.knob.path == "zero_optimization.offload_optimizer.device")
    assert offload.cpu_delta > 0  # offloading costs host memory
    for item in savings:
        assert item.knob.cost_en and item.knob.cost_zh and item.knob.cost_class in (1, 2, 3)


@unit
def test_change_first_is_the_cheapest_change_worth_five_percent():
    settings = _settings(stage=3, reduce_bucket_size=10**9, max_live_parameters=10**9)
    model = Model(params=10**9, largest_layer=10**6, gpus_per_node=8)
    savings = oom_list(settings, model)
    total = compute(settings, model).gpu_total()
    first = change_first(savings, total)
    assert first is not None and first.gpu_saved * 20 >= total
    assert first.knob.cost_class == min(s.knob.cost_class for s in savings if s.gpu_saved * 20 >= total)
    assert change_first([], total) is None


@unit
@pytest.mark.parametrize("text, value", [("7B", 7 * 10**9), ("1.3B", 1_300_000_000), ("7e9", 7 * 10**9),
                                         ("350M", 350 * 10**6), ("64k", 64_000), ("1_000", 1000)])
def test_counts_read_as_people_write_them(text, value):
    assert count("--params", text) == value


@unit
@pytest.mark.parametrize("text", ["-1", "0", "abc", "1.5", "inf", "nan", ""])
def test_bad_counts_are_refused(text):
    with pytest.raises(UsageError):
        count("--params", text)


@unit
@pytest.mark.parametrize("args", [["x.json"], ["x.json", "--params", "-7e9"], ["x.json", "--params", "7B",
                                                                              "--gpus-per-node", "0"]])
def test_bad_command_lines_are_one_line_and_exit_2(args, capsys):
    try:
        code = main(["estimate", *args])
    except SystemExit as exc:  # argparse's own refusal, worded in one line by the command
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dsfields estimate: ")


# ---------------------------------------------------------------- data: the config through the snapshot


@pytest.fixture
def config_file(tmp_path: Path):
    def write(config: dict) -> Path:
        path = tmp_path / "ds_config.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        return path
    return write


def _estimate(capsys, path: Path, *args: str) -> dict:
    assert main(["estimate", str(path), "--format", "json", "--version", VERSION, *args]) == 0
    return json.loads(capsys.readouterr().out)


@data
def test_every_setting_is_a_key_of_the_release():
    fields = load_snapshot(VERSION).fields
    assert [path for path in SETTING_PATHS.values() if path not in fields] == []


@data
def test_defaults_come_from_the_snapshot(config_file, capsys):
    """An empty ZeRO-3 section: the buckets are the release's defaults, overlap_comm its stage-3 effective default."""
    fields = load_snapshot(VERSION).fields
    answer = _estimate(capsys, config_file({"zero_optimization": {"stage": 3}, "bf16": {"enabled": True}}),
                       "--params", "1e9", "--largest-layer-params", "1e7")
    bucket = answer["buffers"]["reduce_bucket"]
    assert bucket["bytes"] == int(fields["zero_optimization.reduce_bucket_size"].default) * 2
    assert bucket["config"]["zero_optimization.reduce_bucket_size"]["source"] == "default"
    prefetch = answer["buffers"]["stage3_prefetch"]["config"]
    assert prefetch["zero_optimization.stage3_prefetch_bucket_size"]["value"] == \
        fields["zero_optimization.stage3_prefetch_bucket_size"].default
    stage2 = _estimate(capsys, config_file({"zero_optimization": {"stage": 2}, "bf16": {"enabled": True}}),
                       "--params", "1e9")
    overlap = stage2["buffers"]["reduce_bucket"]["config"]["zero_optimization.overlap_comm"]
    assert overlap == {"value": fields["zero_optimization.overlap_comm"].effective_default["2"],
                       "source": "effective default"}


@data
def test_written_values_are_used(config_file, capsys):
    answer = _estimate(capsys, config_file({"zero_optimization": {"stage": 2, "reduce_bucket_size": 1000,
                                                                  "overlap_comm": True}, "fp16": {"enabled": True}}),
                       "--params", "1e6")
    assert answer["buffers"]["reduce_bucket"]["bytes"] == 2 * 1000 * 2


@data
def test_json_shape_and_every_term_cited(config_file, capsys):
    config = {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/n"},
                                    "offload_param": {"device": "nvme", "nvme_path": "/n"}},
              "bf16": {"enabled": True}, "train_micro_batch_size_per_gpu": 1}
    answer = _estimate(capsys, config_file(config), "--params", "7B", "--gpus-per-node", "8", "--hidden-size",
                       "4096", "--layers", "32", "--seq-len", "2048")
    assert {"model_states", "buffers", "activations", "total", "assumptions", "oom", "change_first"} <= set(answer)
    assert isinstance(answer["model_states"]["gpu_bytes_per_rank"], int)
    assert isinstance(answer["model_states"]["cpu_bytes_per_node"], int)
    cited = re.compile(r"^deepspeed/[\w/]+\.py:\d+(-\d+)?$")
    assert cited.match(answer["model_states"]["source"])
    assert {"nvme_param_swap_buffers", "nvme_optimizer_swap_buffers", "stage3_persistent"} <= set(answer["buffers"])
    for term in answer["buffers"].values():
        assert isinstance(term["bytes"], int) and cited.match(term["source"]), term
    for kind in ("without_checkpointing", "with_checkpointing"):
        for term in answer["activations"][kind].values():
            assert "arXiv:2205.05198" in term["source"] and isinstance(term["bytes"], int)
    assert answer["total"]["gpu_bytes_per_rank_with_activation_checkpointing"] < answer["total"]["gpu_bytes_per_rank"]
    assert answer["inputs"]["micro_batch"] == 1  # from the config's train_micro_batch_size_per_gpu


@data
def test_an_older_release_reads_its_own_keys(config_file, capsys):
    """0.8.0's deprecated cpu_offload is carried to offload_optimizer, as DeepSpeed does."""
    answer = _estimate(capsys, config_file({"zero_optimization": {"stage": 2, "cpu_offload": True},
                                            "fp16": {"enabled": True}}), "--params", "1.3B", "--version", "0.8.0")
    assert answer["version"] == "0.8.0"
    assert answer["model_states"]["config"]["zero_optimization.offload_optimizer.device"]["value"] == "cpu"
    assert answer["model_states"]["gpu_bytes_per_rank"] == 2 * 1_300_000_000


@data
def test_chinese_output(config_file, capsys):
    path = config_file({"zero_optimization": {"stage": 2}, "bf16": {"enabled": True}})
    assert main(["estimate", str(path), "--params", "1.3B", "--lang", "zh", "--version", VERSION]) == 0
    out = capsys.readouterr().out
    assert "OOM 清单" in out and "首先修改" in out and "代价" in out
    answer = _estimate(capsys, path, "--params", "1.3B", "--lang", "zh")
    assert all(item["cost"] == item["cost_zh"] for item in answer["oom"])


@data
@pytest.mark.parametrize("config, why", [
    ({"zero_optimization": {"stage": 3}}, "--largest-layer-params"),
    ({"zero_optimization": {"stage": "three"}}, "not a number"),
    ({"zero_optimization": {"stage": 2, "reduce_bucket_size": -5}}, "negative"),
])
def test_unusable_configs_are_one_line_and_exit_2(config_file, capsys, config, why):
    assert main(["estimate", str(config_file(config)), "--params", "7B", "--version", VERSION]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err


@data
def test_unreadable_file_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    assert main(["estimate", str(path), "--params", "7B", "--version", VERSION]) == 2
    assert capsys.readouterr().err.count("\n") == 1


README_EXAMPLE = re.compile(r"^## Memory estimate\n.*?^```bash\n(?P<cmd>dsfields estimate [^\n]+)\n```\n\n"
                            r"```text\n(?P<out>.*?)^```", re.DOTALL | re.MULTILINE)


@data
def test_readme_example_is_the_commands_real_output(capsys, monkeypatch):
    """The README's 7B ZeRO-3 offload example is what the command prints (the docs never go stale)."""
    match = README_EXAMPLE.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert match, "README.md: the estimate example (a bash block, then its text block) is missing"
    monkeypatch.chdir(REPO)
    argv = shlex.split(match["cmd"])
    assert "zero_optimization" in (REPO / argv[2]).read_text(encoding="utf-8")
    assert main(argv[1:]) == 0
    out = capsys.readouterr().out
    assert out == match["out"]
    assert "OOM list" in out and "What to change first" in out


# ---------------------------------------------------------------- integration: DeepSpeed 0.19.8 itself


def _deepspeed_version() -> str:
    from importlib import metadata

    return metadata.version("deepspeed")


@integration
@requires_deepspeed
@pytest.mark.parametrize("params, largest", [(1_300_000_000, 2048 * 50257), (7_000_000_000, 4096 * 32000)],
                         ids=["1.3B", "7B"])
@pytest.mark.parametrize("gpus", [1, 8])
@pytest.mark.parametrize("stage, offload", [(2, "none"), (2, "cpu"), (3, "none"), (3, "cpu"), (3, "optimizer")])
def test_model_states_agree_with_deepspeeds_estimators(config_file, capsys, params, largest, gpus, stage, offload):
    zero: dict = {"stage": stage}
    if offload != "none":
        zero["offload_optimizer"] = {"device": "cpu"}
    if offload == "cpu" and stage == 3:
        zero["offload_param"] = {"device": "cpu"}
    answer = _estimate(capsys, config_file({"zero_optimization": zero, "bf16": {"enabled": True}}),
                       "--params", str(params), "--largest-layer-params", str(largest), "--gpus-per-node", str(gpus))
    if stage == 2:
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

        cpu, gpu = estimate_zero2_model_states_mem_needs(params, num_gpus_per_node=gpus, num_nodes=1,
                                                         cpu_offload=offload != "none")
    else:
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

        cpu, gpu, _ = estimate_zero3_model_states_mem_needs(params, largest, num_gpus_per_node=gpus, num_nodes=1,
                                                            cpu_offload=offload != "none",
                                                            cpu_offload_params=offload == "cpu", zero_init=True)
    ours = answer["model_states"]
    assert ours["gpu_bytes_per_rank"] == pytest.approx(gpu, rel=0.05)
    assert ours["cpu_bytes_per_node"] == pytest.approx(cpu, rel=0.05)


@integration
@requires_deepspeed
@pytest.mark.parametrize("key", sorted(k for k, c in CITATIONS.items() if c.first))
def test_citations_point_at_the_code_they_name(key):
    """Every cited line range of DeepSpeed holds the code the formula follows (checked in the cited release)."""
    if _deepspeed_version() != CITED_RELEASE:
        pytest.skip(f"citations are to DeepSpeed {CITED_RELEASE}, {_deepspeed_version()} is installed")
    import importlib.util

    spec = importlib.util.find_spec("deepspeed")
    assert spec is not None and spec.origin
    citation = CITATIONS[key]
    lines = (Path(spec.origin).parent / citation.file).read_text(encoding="utf-8").splitlines()
    assert citation.snippet in "\n".join(lines[citation.first - 1:citation.last or citation.first])


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@integration
@requires_deepspeed
@pytest.mark.skipif(not _cuda_available(), reason="no CUDA device: the allocator comparison needs a GPU")
def test_estimate_brackets_what_torch_allocates_on_a_gpu(config_file, capsys, monkeypatch):
    """A tiny model, ZeRO-2 on one GPU: the estimate (model states + buffers + activations) against the peak
    torch.cuda.max_memory_allocated after two steps. Within 35%: the estimate leaves out the allocator's
    rounding, kernels' workspaces and autograd's temporaries (see docs/estimate.md)."""
    import deepspeed
    import torch

    for name, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517", "RANK": "0", "LOCAL_RANK": "0",
                        "WORLD_SIZE": "1"}.items():
        monkeypatch.setenv(name, value)
    hidden, layers, seq, micro = 1024, 4, 128, 2
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(), torch.nn.Linear(4 * hidden, hidden)]
    model = torch.nn.Sequential(*blocks)
    params = sum(p.numel() for p in model.parameters())
    config = {"train_micro_batch_size_per_gpu": micro, "bf16": {"enabled": True},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
              "zero_optimization": {"stage": 2, "reduce_bucket_size": 10**6, "overlap_comm": False}}
    answer = _estimate(capsys, config_file(config), "--params", str(params), "--largest-layer-params",
                       str(4 * hidden * hidden + 4 * hidden))
    torch.cuda.reset_peak_memory_stats()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    for _ in range(2):
        x = torch.randn(micro, seq, hidden, device=engine.device, dtype=torch.bfloat16)
        loss = engine(x).float().pow(2).mean()
        engine.backward(loss)
        engine.step()
    peak = torch.cuda.max_memory_allocated()
    # the MLP's activations: the inputs and outputs of each Linear and GELU kept for backward, 16-bit
    activations = layers * micro * seq * (hidden + 4 * hidden + 4 * hidden) * 2
    estimate = answer["total"]["gpu_bytes_per_rank"] + activations
    assert estimate == pytest.approx(peak, rel=0.35)


@data
def test_auto_buckets_are_filled_as_the_hf_trainer_fills_them(config_file, capsys):
    """ "auto" is the HF Trainer's: with --hidden-size it is H² (reduce) and 0.9·H² (prefetch); without, the
    release's default, and the assumptions say which."""
    fields = load_snapshot(VERSION).fields
    path = config_file({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto",
                                              "stage3_prefetch_bucket_size": "auto"}, "bf16": {"enabled": "auto"}})
    filled = _estimate(capsys, path, "--params", "1e9", "--hidden-size", "1000", "--largest-layer-params", "1e6")
    bucket = filled["buffers"]["reduce_bucket"]
    assert bucket["bytes"] == 1000 * 1000 * 2  # "auto" precision is 16-bit under the Trainer
    assert bucket["config"]["zero_optimization.reduce_bucket_size"]["source"].startswith("auto → HF Trainer")
    assert filled["buffers"]["stage3_prefetch"]["config"]["zero_optimization.stage3_prefetch_bucket_size"][
        "value"] == 900_000
    plain = _estimate(capsys, path, "--params", "1e9", "--largest-layer-params", "1e6")
    assert plain["buffers"]["reduce_bucket"]["bytes"] == int(fields["zero_optimization.reduce_bucket_size"].default) * 2
    assert any("reduce_bucket_size" in note and "auto" in note for note in plain["assumptions"])


@unit
def test_stages_0_and_1_partition_less_than_stage_2():
    model = Model(params=1000, gpus_per_node=4)
    by_stage = {stage: compute(_settings(stage=stage), model).gpu_model_states for stage in (0, 1, 2)}
    assert by_stage[2] == 2000 + 4500  # DeepSpeed's zero2 formula
    assert by_stage[1] == by_stage[2] + 2000 - 500  # 16-bit gradients whole again
    assert by_stage[0] == 20 * 1000
    # without ZeRO there is no offload: the setting changes nothing
    assert compute(_settings(stage=0, offload_optimizer="cpu"), model).gpu_model_states == by_stage[0]


@unit
def test_host_only_savings_follow_the_gpu_ones():
    """NVMe optimizer offload: sub_group_size sizes pinned swap buffers on the host, not on the GPU."""
    settings = _settings(stage=3, offload_optimizer="nvme", offload_param="cpu", sub_group_size=10**6)
    model = Model(params=10**8, largest_layer=10**5, gpus_per_node=2)
    savings = oom_list(settings, model)
    sub_group = next(s for s in savings if s.knob.path == "zero_optimization.sub_group_size")
    assert sub_group.gpu_saved == 0
    # half the sub-group: 4 buffers of fp32, aligned to 256 elements (1024 B), on each of the 2 ranks of the node
    assert sub_group.cpu_delta == -(4 * (1_000_192 - 500_224) * 4 * 2)
    assert savings.index(sub_group) > max(i for i, s in enumerate(savings) if s.gpu_saved > 0)


@data
def test_settings_a_release_lacks_are_exactly_the_absent_features():
    """Every setting some snapshotted release has no key for has its "not there" value, and no other setting does:
    the rest come from each release's snapshot."""
    from dsfields.estimate import NOT_IN_RELEASE
    from dsfields.model.generated import available_versions

    lacking = {name for version in available_versions() for name, path in SETTING_PATHS.items()
               if path not in load_snapshot(version).fields}
    assert lacking == set(NOT_IN_RELEASE)


@data
@pytest.mark.parametrize("version", ["0.9.2", "0.14.0", VERSION])
def test_left_out_sections_take_the_releases_own_defaults(version):
    """A config that leaves every section out: each setting is that release's default (the OOM list's what-ifs
    turn offload on with the release's own pin_memory: false in 0.9.2 and 0.14.0, true in 0.19.8)."""
    from dsfields.estimate import NOT_IN_RELEASE, settings_from_config
    from dsfields.resolve import Resolver

    snapshot = load_snapshot(version)
    settings, _, _ = settings_from_config({"zero_optimization": {"stage": 3}}, Resolver(snapshot), Model(params=1), [])
    for name, path in SETTING_PATHS.items():
        record = snapshot.fields.get(path)
        if name in ("stage", "offload_optimizer", "offload_param"):
            continue
        if record is None:
            assert getattr(settings, name) == NOT_IN_RELEASE[name][0]
        elif not record.effective_default:
            assert getattr(settings, name) == record.default, (version, path)
    assert settings.parallel == Parallel()


# ---------------------------------------------------------------- parallelism, the world, the verdict (issue 40)


@unit
def test_autotp_divides_the_replicated_model_states_at_stage_2():
    """ZeRO-2 keeps whole 16-bit params on every rank: AutoTP 2 halves them and ZeRO partitions the rest over the
    4 data-parallel ranks left of 8 (2·P/2 + 18·(P/2)/4)."""
    model = Model(params=8000, gpus_per_node=8)
    plain = compute(_settings(stage=2), model).gpu_model_states
    tp = compute(_settings(stage=2, parallel=Parallel(tp=2)), model)
    assert plain == 2 * 8000 + 18 * 8000 // 8
    assert tp.gpu_model_states == 2 * 4000 + 18 * 4000 // 4
    saved = {t.name: t for t in tp.parallelism}["model_parallel_sharding"]
    assert saved.bytes == plain - tp.gpu_model_states and not saved.in_total


@unit
def test_autotp_keeps_the_input_embedding_and_the_norms_whole():
    """With the shape given, AutoTP's rank 0 holds the input embedding (V·H) and the norms (H per norm, two a
    layer and the final one) whole and 1/tp of the rest: the whole-model share is more than P/tp."""
    v, h, layers, p = 1000, 64, 2, 200_000
    model = Model(params=p, gpus_per_node=8, hidden=h, layers=layers, vocab=v)
    whole = v * h + h * (2 * layers + 1)
    share, words = autotp_share(model, 4)
    assert share == whole + -(-(p - whole) // 4)
    assert "input_embedding=V·H" in words
    settings = _settings(stage=2, parallel=Parallel(tp=4))
    assert compute(settings, model).gpu_model_states == 2 * share + 18 * share // 2  # ZeRO-2 over 8 / 4 ranks
    assert autotp_share(replace(model, vocab=None, hidden=None, layers=None), 4)[0] == p // 4  # no shape: P/tp


@unit
def test_autotp_splits_attention_by_key_value_heads():
    """Two key/value heads over 8 ranks: rank 0 holds one of them, half of the attention, not an eighth."""
    h, layers, heads, kv = 256, 4, 4, 2
    attention = layers * (2 * h * h + 2 * h * (h // heads) * kv)
    model = Model(params=10**7, gpus_per_node=8, hidden=h, layers=layers, heads=heads, kv_heads=kv, vocab=4096)
    whole = 4096 * h + h * (2 * layers + 1)
    assert autotp_share(model, 8)[0] == whole + -(-(10**7 - whole - attention) // 8) + attention // 2
    even = autotp_share(model, 2)[0]  # 2 ranks divide 2 heads: an even split
    assert even == whole + -(-(10**7 - whole) // 2)


@data
def test_kv_heads_need_heads(tmp_path, capsys):
    path = tmp_path / "ds.json"
    path.write_text("{}")
    assert main(["estimate", str(path), "--params", "1B", "--kv-heads", "3", "--heads", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--kv-heads needs --heads" in err


@unit
def test_hpz_adds_a_secondary_partition_of_the_16bit_params():
    model = Model(params=8000, largest_layer=10, gpus_per_node=8, nodes=2)
    plain = compute(_settings(stage=3), model)
    hpz = compute(_settings(stage=3, parallel=Parallel(hpz=8)), model)
    term = _terms(hpz)["hpz_secondary_partition"]
    assert term.bytes == 8000 // 8 * 2 and term.device == "gpu"
    assert hpz.gpu_total() - plain.gpu_total() == term.bytes
    offloaded = compute(_settings(stage=3, offload_param="cpu", parallel=Parallel(hpz=8)), model)
    assert _terms(offloaded)["hpz_secondary_partition"].device == "cpu"  # where the params live


@unit
def test_mics_partitions_within_its_shard_group():
    model = Model(params=16000, largest_layer=10, gpus_per_node=8, nodes=2)
    mics = compute(_settings(stage=3, parallel=Parallel(mics=4)), model).gpu_model_states
    assert mics == 4 * 10 + 18 * 16000 // 4


@unit
def test_ulysses_and_tensor_parallel_shrink_the_activations():
    model = Model(params=10**6, gpus_per_node=8, hidden=64, layers=2, seq_len=128, micro_batch=1, heads=4)
    one = compute(_settings(stage=2), model).activations[0].bytes
    sp = compute(_settings(stage=2, parallel=Parallel(sp=4)), model).activations[0].bytes
    tp = compute(_settings(stage=2, parallel=Parallel(tp=2)), model).activations[0].bytes
    assert sp < one / 4 + 1  # a quarter of the sequence, and attention's s² term by 16
    assert tp == int(128 * 64 * (10 + 24 / 2 + 5 * 4 * 128 / (64 * 2))) * 2  # Korthikanti eq. 2
    assert tp < one


@unit
def test_autoep_shards_only_the_expert_parameters():
    model = Model(params=10_000, expert_params=8_000, gpus_per_node=8)
    ep = compute(_settings(stage=2, parallel=Parallel(ep=4)), model).gpu_model_states
    dense, experts = 2_000, 8_000 // 4
    assert ep == (2 * dense + 18 * dense // 8) + (2 * experts + 18 * experts // 2)


@unit
@pytest.mark.parametrize(("text", "gib"), [("80GB", 80), ("24GiB", 24), ("81920MiB", 80), ("A100-40GB", 40),
                                           ("a100-80gb", 80), ("H100", 80), ("RTX4090", 24), ("L40S-48GB", 48),
                                           ("V100-32GB", 32), ("48", 48)])
def test_gpu_memory_reads_sizes_and_gpu_names(text, gib):
    from dsfields.estimate import gpu_memory

    assert gpu_memory("--gpu-memory", text)[0] == gib << 30


@unit
@pytest.mark.parametrize("text", ["", "-80GB", "0GB", "80XB", "nosuchgpu", "9" * 400, "1e400GB", "2000000TB"])
def test_bad_gpu_memory_is_refused(text):
    from dsfields.estimate import gpu_memory

    with pytest.raises(UsageError):
        gpu_memory("--gpu-memory", text)


@unit
def test_verdict_gives_the_margin_or_the_cheapest_change_that_fits():
    from dsfields.estimate import RESERVE, verdict

    settings = _settings(stage=2, reduce_bucket_size=10**6)
    model = Model(params=10**9, gpus_per_node=8, largest_layer=10**7)
    est = compute(settings, model)
    roomy = verdict(est, settings, model, (est.gpu_total() + RESERVE + (5 << 30), "x"), "en")
    assert roomy["fits"] and roomy["margin"] == 5 << 30 and roomy["changes"] == []
    # just too small: ZeRO-3 (cost 2) fits, so offload (cost 3) is not proposed
    tight = verdict(est, settings, model, (est.gpu_total() + RESERVE - (1 << 20), "x"), "en")
    assert not tight["fits"] and tight["fits_after_changes"]
    assert [c["path"] for c in tight["changes"]] == ["zero_optimization.stage"]
    assert tight["margin_after_changes"] >= 0


@unit
def test_hf_advice_is_the_trainers_flag():
    from dsfields.estimate import candidate_changes

    model = Model(params=10**9, gpus_per_node=8, hidden=1024, layers=8, seq_len=512, micro_batch=4)
    plain = {k.path for k, _, _ in candidate_changes(_settings(stage=2), model)}
    hf = {k.path for k, _, _ in candidate_changes(_settings(stage=2), replace(model, hf=True))}
    assert "activation_checkpointing" in plain and "--gradient_checkpointing" in hf
    assert "activation_checkpointing" not in hf and "--per_device_train_batch_size" in hf
    on = {k.path for k, _, _ in candidate_changes(_settings(stage=2, checkpointing=True), replace(model, hf=True))}
    assert "activation_checkpointing.cpu_checkpointing" not in on


@data
def test_the_world_is_inferred_from_the_batch_sizes_and_said(config_file, capsys):
    """The seed guide's 7B example: train_batch_size 64 = 2 × 8 × 4 GPUs."""
    path = config_file({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2,
                        "gradient_accumulation_steps": 8, "bf16": {"enabled": True}, "zero_optimization": {"stage": 2}})
    answer = _estimate(capsys, path, "--params", "7B")
    assert answer["inputs"]["gpus_per_node"] == 4 and answer["inputs"]["nodes"] == 1
    assert any("inferred from the batch sizes" in note for note in answer["assumptions"])
    given = _estimate(capsys, path, "--params", "7B", "--gpus-per-node", "2")
    assert given["inputs"]["gpus_per_node"] == 2
    alone = _estimate(capsys, config_file({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}}),
                      "--params", "7B")
    assert alone["inputs"]["gpus_per_node"] == 1 and any("world: 1 GPU" in n for n in alone["assumptions"])


@data
def test_the_issues_autotp_and_hpz_config_is_no_longer_data_parallel_only(config_file, capsys):
    """Issue 40: autotp_size 2 and zero_hpz_partition_size 8 were reported as "no tensor parallelism … no hpZ"."""
    path = config_file({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
                        "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8},
                        "tensor_parallel": {"autotp_size": 2}})
    answer = _estimate(capsys, path, "--params", "13B", "--largest-layer-params", "100M", "--gpus-per-node", "8",
                       "--nodes", "2", "--gpu-memory", "A100-80GB")
    assert not any("data parallel only" in note for note in answer["assumptions"])
    hpz = answer["buffers"]["hpz_secondary_partition"]
    assert hpz["bytes"] == 13_000_000_000 // 2 // 8 * 2
    assert hpz["config"]["zero_optimization.zero_hpz_partition_size"]["value"] == 8
    assert hpz["source"].startswith("deepspeed/runtime/zero/partition_parameters.py:")
    assert answer["parallelism"]["model_parallel_sharding"]["source"].startswith("deepspeed/runtime/engine.py:")
    assert answer["verdict"]["fits"] is True and answer["verdict"]["margin"] > 0


@data
def test_mics_is_read_only_where_the_release_has_it(config_file, capsys):
    path = config_file({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
                        "zero_optimization": {"stage": 3, "mics_shard_size": 4}})
    args = ("--params", "1e9", "--largest-layer-params", "1e6", "--gpus-per-node", "8", "--nodes", "2")
    old = _estimate(capsys, path, *args, "--version", "0.19.6")
    new = _estimate(capsys, path, *args)
    assert old["model_states"]["gpu_bytes_per_rank"] == 4 * 10**6 + 18 * 10**9 // 4
    assert new["model_states"]["gpu_bytes_per_rank"] == 4 * 10**6 + 18 * 10**9 // 16
    assert any("mics_shard_size: not a key of DeepSpeed 0.19.8" in note for note in new["assumptions"])


@data
def test_verdict_in_chinese_has_no_english_sentence(config_file, capsys):
    path = config_file({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
                        "zero_optimization": {"stage": 2}})
    assert main(["estimate", str(path), "--params", "13B", "--gpus-per-node", "8", "--gpu-memory", "24GB",
                 "--version", VERSION, "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    verdict = out[out.index("结论"):out.index("假设")]
    assert "放不下" in verdict and "Verdict" not in verdict and "cost" not in verdict


@unit
def test_persistent_parameters_take_bounded_time_for_any_layer_count():
    """Whole layers are counted by arithmetic: 10**12 layers answer at once, and the cap still binds."""
    huge = Model(params=10**18, hidden=10, layers=10**12)
    assert persistent_numel(huge, threshold=100, cap=2**63 - 1) == (6 * 10 + 3 * 10 + 4 * 10) * 10**12 + 20
    small = Model(params=1, hidden=10, layers=3)
    assert persistent_numel(small, threshold=100, cap=200) == 200  # one layer (130), then 10s and the 30 up to the cap


@data
def test_pipeline_stages_are_read_from_the_section_deepspeed_passes_whole(config_file, capsys):
    path = config_file({"pipeline": {"stages": 2}, "zero_optimization": {"stage": 1}, "bf16": {"enabled": True}})
    answer = _estimate(capsys, path, "--params", "1e9", "--gpus-per-node", "8")
    assert "per rank with parallelism: dense 1000000000 / (autotp_size 1 × pipeline stages 2)" in \
        answer["model_states"]["formula"]
    assert answer["model_states"]["gpu_bytes_per_rank"] == 4 * 500_000_000 + 16 * 500_000_000 // 4
