"""The launch witness: the HF Trainer / accelerate plan (unit) and deepspeed.initialize on CPU (integration)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import requires_deepspeed

from dsfields.hf.trainer import PlanError, at_one_rank, hf_plan
from dsfields.launch.client import LaunchClient
from dsfields.launch.verdict import LaunchVerdict, classify, locate

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

REPO = Path(__file__).resolve().parent.parent

ZERO2 = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}
ADAMW = {"type": "AdamW", "params": {"lr": 1e-4}}
OFFLOAD_MESSAGE = ("You are using ZeRO-Offload with a client provided optimizer (<class 'torch.optim.adamw.AdamW'>) "
                   "which in most cases will yield poor performance.")


def with_zero(**zero: object) -> dict:
    config = copy.deepcopy(ZERO2)
    config["zero_optimization"].update(zero)
    return config


# ---------------------------------------------------------------- hf_plan: what the Trainer and accelerate pass


# hf_plan evaluates the pair's programs from generated/hf/ (one source of truth with check/resolve --hf)
@pytest.mark.data
def test_hf_plan_legacy_cpu_offload_keeps_the_trainers_optimizer():
    # accelerate swaps in DeepSpeedCPUAdam only for offload_optimizer.device: cpu_offload keeps torch AdamW.
    plan = hf_plan(with_zero(cpu_offload=True))
    assert plan.optimizer == "code"
    assert plan.config["zero_allow_untested_optimizer"] is True


@pytest.mark.data
def test_hf_plan_offload_optimizer_device_swaps_in_ds_cpu_adam():
    assert hf_plan(with_zero(offload_optimizer={"device": "cpu"})).optimizer == "ds_cpu_adam"
    assert hf_plan(with_zero(offload_optimizer={"device": "none"})).optimizer == "code"
    forced_off = with_zero(offload_optimizer={"device": "cpu"}) | {"zero_force_ds_cpu_optimizer": False}
    assert hf_plan(forced_off).optimizer == "code"


@pytest.mark.data
def test_hf_plan_config_optimizer_is_built_by_deepspeed_with_the_trainers_scheduler():
    plan = hf_plan(ZERO2 | {"optimizer": ADAMW})
    assert (plan.optimizer, plan.scheduler) == ("config", "callable")
    assert "zero_allow_untested_optimizer" not in plan.config
    with_scheduler = hf_plan(ZERO2 | {"optimizer": ADAMW, "scheduler": {"type": "WarmupLR", "params": {}}})
    assert with_scheduler.scheduler == "config"


@pytest.mark.data
def test_hf_plan_fills_auto_and_refuses_what_accelerate_refuses():
    plan = hf_plan({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                    "train_batch_size": "auto", "gradient_clipping": "auto", "bf16": {"enabled": "auto"},
                    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto"}},
                    "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto",
                                          "stage3_gather_16bit_weights_on_model_save": "auto"}})
    config = plan.config
    assert (config["train_micro_batch_size_per_gpu"], config["train_batch_size"], config["gradient_clipping"]) == (
        1, 1, 1.0)
    assert config["optimizer"]["params"] == {"lr": 5e-5, "betas": [0.9, 0.999]}
    assert config["bf16"]["enabled"] is False and config["fp16"] == {"enabled": False}
    assert config["zero_optimization"]["reduce_bucket_size"] == 64
    assert config["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is False
    with pytest.raises(PlanError, match="ZeRO optimization config") as missing:
        hf_plan({"train_micro_batch_size_per_gpu": 1})
    assert missing.value.key == "zero_optimization"
    with pytest.raises(PlanError, match="not found in kwargs") as unfilled:
        hf_plan(with_zero(sub_group_size="auto"))
    assert (unfilled.value.raised_by, unfilled.value.key) == ("accelerate", "zero_optimization.sub_group_size")
    with pytest.raises(PlanError, match="mixed_precision"):
        hf_plan(ZERO2 | {"fp16": {"enabled": True}, "bf16": {"enabled": True}})
    with pytest.raises(PlanError, match="'bool' object has no attribute 'get'"):
        hf_plan({"train_micro_batch_size_per_gpu": 1, "zero_optimization": True})


def test_at_one_rank_keeps_triples_that_fit_no_world_size():
    assert at_one_rank({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
                        "gradient_accumulation_steps": 2})["train_batch_size"] == 4
    assert at_one_rank({"train_batch_size": 3, "train_micro_batch_size_per_gpu": 2,
                        "gradient_accumulation_steps": 1})["train_batch_size"] == 3


@pytest.mark.parametrize(("exc", "expected"), [
    (ValueError("Type fp16 is not supported on your device."), ("machine_error", "fp16-on-cpu")),
    (ValueError("Type fp16 is not supported."), ("machine_error", "fp16-on-cpu")),  # 0.10-0.14 wording
    (ValueError("This op had not been implemented on CPU backend."), ("machine_error", "cuda-only")),
    (ImportError("libaio.so: cannot open shared object file"), ("machine_error", "async-io")),
    (ModuleNotFoundError("No module named 'tensorboard'", name="tensorboard"), ("machine_error", "missing-package")),
    (FileNotFoundError(2, "No such file or directory: 'numactl'"), ("machine_error", "missing-tool")),  # 0.14 MiCS
    (RuntimeError("DeepSpeedCPUAdam requires the cpu_adam op, which failed to build/load."), ("machine_error",
                                                                                               "op-build")),
    (AssertionError("zero stage 2 requires an optimizer"), ("config_error", None)),
])
def test_classify(exc, expected):
    assert classify(exc) == expected


def test_classify_a_bare_assert_by_its_code():
    assert classify(AssertionError(), "assert tp_size <= dist.get_world_size()") == ("machine_error", "world-size")


def test_locate_names_the_offload_key_for_the_client_optimizer_rule():
    exc = RuntimeError(OFFLOAD_MESSAGE)
    assert locate(exc, with_zero(cpu_offload=True)) == "zero_optimization.cpu_offload"
    assert locate(exc, with_zero(offload_optimizer={"device": "cpu"})) == "zero_optimization.offload_optimizer.device"


def test_verdict_round_trips_through_json():
    verdict = LaunchVerdict("config_error", "hf", "AssertionError", "m", "a.b", "deepspeed", None,
                            "deepspeed/x.py:1", reads=frozenset({"a", "a.b"}))
    assert LaunchVerdict.from_dict(verdict.as_dict()) == verdict


# ---------------------------------------------------------------- deepspeed.initialize, one worker for all


@pytest.fixture(scope="module")
def client():
    with LaunchClient() as launch_client:
        yield launch_client


@requires_deepspeed
@pytest.mark.deepspeed
def test_a_good_config_launches_in_both_styles(client):
    plain = client.launch(ZERO2 | {"optimizer": ADAMW}, trace=True)
    assert plain.ok, plain
    assert plain.optimizer == "DeepSpeedZeroOptimizer"
    assert {"optimizer.type", "zero_optimization", "train_micro_batch_size_per_gpu"} <= plain.reads
    hf = client.launch(ZERO2 | {"train_micro_batch_size_per_gpu": "auto"}, style="hf")
    assert hf.ok and hf.passed == ("optimizer=AdamW",), hf


@requires_deepspeed
@pytest.mark.deepspeed
def test_legacy_cpu_offload_with_an_optimizer_from_code_fails_on_its_key(client):
    for verdict in (client.launch(with_zero(cpu_offload=True), optimizer_from_code=True),
                    client.launch(with_zero(cpu_offload=True), style="hf")):
        assert verdict.outcome == "config_error", verdict
        assert verdict.exc_type == "ZeRORuntimeException"
        assert "zero_force_ds_cpu_optimizer" in verdict.message
        assert verdict.key == "zero_optimization.cpu_offload"
        assert verdict.site and verdict.site.startswith("deepspeed/")


FP16 = ZERO2 | {"optimizer": ADAMW, "fp16": {"enabled": True}}


def fp16_outcome(supported: bool) -> tuple[str, str | None]:
    """What an fp16 launch gives where the accelerator says fp16 is (not) supported: never agreement without it."""
    return ("launched", None) if supported else ("machine_error", "fp16-on-cpu")


@requires_deepspeed
@pytest.mark.deepspeed
def test_fp16_launches_exactly_where_the_accelerator_says_this_cpu_supports_it(client):
    verdict = client.launch(FP16)
    assert client.support["fp16"] in (True, False) and not client.support["pinned"]  # asked in the worker
    assert (verdict.outcome, verdict.reason) == fp16_outcome(client.support["fp16"]), verdict


@requires_deepspeed
@pytest.mark.deepspeed
@pytest.mark.parametrize("fp16", [False, True], ids=["fp16-off", "fp16-on"])
def test_fp16_support_forced_either_way_gives_its_outcome(fp16):
    from dsfields.launch.launcher import CPU_FP16_ENV

    with LaunchClient(env=os.environ | {CPU_FP16_ENV: str(int(fp16))}, warm_up=False) as forced:
        verdict = forced.launch(FP16)
        assert forced.support["fp16"] is fp16
    assert (verdict.outcome, verdict.reason) == fp16_outcome(fp16), verdict


@requires_deepspeed
@pytest.mark.deepspeed
def test_the_committed_records_are_the_same_bytes_whatever_fp16_the_cpu_has():
    # launch.json and the launch witness's reads, made as `dsfields extract --launch --launch-rules` makes them,
    # on a CPU claiming fp16 and on one that does not: the committed records are the same from either.
    from dsfields.extract.launch_witness import launch_json_text, launch_witness, witness_env
    from dsfields.launch.catalogue import launch_path
    from dsfields.launch.launcher import CPU_FP16_ENV

    made = {}
    for fp16 in ("0", "1"):
        with LaunchClient(env=witness_env(os.environ | {CPU_FP16_ENV: fp16})) as witness:
            made[fp16] = launch_witness(witness, rules=True)
    assert made["0"]["paths"] == made["1"]["paths"] and made["0"]["outcomes"] == made["1"]["outcomes"]
    committed = launch_path("0.19.8").read_text(encoding="utf-8")
    assert launch_json_text(made["1"]["launch_json"]) == launch_json_text(made["0"]["launch_json"]) == committed
    assert made["1"]["launch_json"]["environment"]["accelerator_support"] == {"bf16": True, "fp16": False,
                                                                               "pinned": True}


@requires_deepspeed
@pytest.mark.deepspeed
def test_a_launch_over_its_time_is_a_machine_error_and_the_worker_goes_on(client):
    slow = client.launch(with_zero(stage=3) | {"optimizer": ADAMW}, timeout=0.001)
    assert (slow.outcome, slow.reason) == ("machine_error", "timeout")
    # an alarm due at once fires anywhere, right after it is armed too: each is a timeout verdict, and the worker
    # lives on (armed before its try, the alarm once escaped the launch and killed the worker: "worker-died")
    starts = client.starts
    for _ in range(25):
        at_once = client.launch(ZERO2 | {"optimizer": ADAMW}, timeout=1e-6)
        assert (at_once.outcome, at_once.reason) == ("machine_error", "timeout"), at_once.as_dict()
    assert client.starts == starts
    assert client.launch(ZERO2 | {"optimizer": ADAMW}).ok


# Seeded mutations of ZERO2 + AdamW: (name, config, launch kwargs, outcome, exc_type, key).
MUTATIONS = [
    ("typo in a pydantic section", with_zero(overlap_com=True) | {"optimizer": ADAMW}, {},
     "config_error", "ValidationError", "zero_optimization.overlap_com"),
    ("typo at top level is ignored", ZERO2 | {"optimizer": ADAMW, "gradient_cliping": 1.0}, {},
     "launched", None, None),
    ("removed key", with_zero(stage=3, mics_shard_size=2) | {"optimizer": ADAMW}, {},
     "config_error", "DeepSpeedConfigError", "zero_optimization.mics_shard_size"),
    ("wrong type", with_zero(stage="two") | {"optimizer": ADAMW}, {},
     "config_error", "ValidationError", "zero_optimization.stage"),
    ("misspelt optimizer param", ZERO2 | {"optimizer": {"type": "AdamW", "params": {"betaz": [0.9, 0.9]}}}, {},
     "config_error", "TypeError", "optimizer.params.betaz"),
    ("stage 2 without optimizer", ZERO2, {}, "config_error", "AssertionError", "zero_optimization.stage"),
    ("stage 3 without optimizer", with_zero(stage=3), {}, "launched", None, None),
    ("untested optimizer with ZeRO", ZERO2 | {"optimizer": {"type": "SGD", "params": {"lr": 0.1}}}, {},
     "config_error", "AssertionError", "optimizer.type"),
    ("offload without optimizer", with_zero(offload_optimizer={"device": "cpu"}), {},
     "config_error", "AssertionError", "zero_optimization.stage"),
    ("offload_optimizer with an optimizer from code", with_zero(offload_optimizer={"device": "cpu"}),
     {"optimizer_from_code": True}, "config_error", "ZeRORuntimeException",
     "zero_optimization.offload_optimizer.device"),
    ("fp16 and bf16 both on", ZERO2 | {"optimizer": ADAMW, "fp16": {"enabled": True}, "bf16": {"enabled": True}},
     {}, "config_error", "AssertionError", "bf16.enabled"),
    ("warmup_num_steps 0", ZERO2 | {"optimizer": ADAMW, "scheduler": {"type": "WarmupLR",
                                                                      "params": {"warmup_num_steps": 0}}}, {},
     "config_error", "ValueError", "scheduler.params.warmup_num_steps"),
    ("legacy zero_optimization: true", ZERO2 | {"optimizer": ADAMW, "zero_optimization": True}, {},
     "launched", None, None),
]


@requires_deepspeed
@pytest.mark.deepspeed
def test_mutation_corpus_in_one_worker(client):
    starts = client.starts
    wrong = []
    for name, config, kwargs, outcome, exc_type, key in MUTATIONS:
        verdict = client.launch(config, **kwargs)
        if (verdict.outcome, verdict.exc_type, verdict.key) != (outcome, exc_type, key):
            wrong.append((name, verdict.as_dict()))
    assert not wrong
    assert client.starts == starts == 1  # one worker for the whole module, the timeout included


FORKED_SCRIPT = """
import json, os, sys
from dsfields.launch.client import LaunchClient
from dsfields.extract.launch_witness import witness_env
from dsfields.launch.worker import ForkedWorker
configs = json.loads(sys.argv[1])
worker = ForkedWorker.start(witness_env())
assert worker is not None, "the worker was not forked"
# The fork came before any DeepSpeed import here; the accelerator is the worker's own choice.
assert "deepspeed" not in sys.modules and "DS_ACCELERATOR" not in os.environ
with LaunchClient(forked=worker, warm_up=False) as client:
    verdicts = [client.launch(c["config"], **c["kwargs"]).as_dict() for c in configs]
    assert client.starts == 1
print(json.dumps(verdicts))
"""

FORKED_CASES = [
    (ZERO2 | {"optimizer": ADAMW}, {"trace": True}),
    (with_zero(cpu_offload=True), {"optimizer_from_code": True}),
    (ZERO2 | {"optimizer": ADAMW, "fp16": {"enabled": True}}, {}),
    (with_zero(overlap_com=True) | {"optimizer": ADAMW}, {}),
]


@requires_deepspeed
@pytest.mark.deepspeed
def test_a_worker_forked_before_deepspeed_is_imported_gives_the_verdicts_of_its_own_process(client, tmp_path):
    from dsfields.launch.launcher import PIN_SUPPORT_ENV

    # Unpinned, as the fixture's client: both answer fp16 as this CPU does.
    env = {k: v for k, v in os.environ.items() if k != "DS_ACCELERATOR"} | {"TMPDIR": str(tmp_path),
                                                                            PIN_SUPPORT_ENV: "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1] / "extractor"),
                                         *filter(None, [env.get("PYTHONPATH")])])
    cases = [{"config": config, "kwargs": kwargs} for config, kwargs in FORKED_CASES]
    done = subprocess.run([sys.executable, "-c", FORKED_SCRIPT, json.dumps(cases)], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    forked = [LaunchVerdict.from_dict(v) for v in json.loads(done.stdout.splitlines()[-1])]
    own = [client.launch(config, **kwargs) for config, kwargs in FORKED_CASES]
    fields = ("outcome", "reason", "exc_type", "key", "site", "message", "reads")
    assert [[getattr(v, f) for f in fields] for v in forked] == [[getattr(v, f) for f in fields] for v in own]
    assert [v.outcome for v in forked] == ["launched", "config_error", fp16_outcome(client.support["fp16"])[0],
                                           "config_error"]
    assert not list(tmp_path.glob("dsfields-launch-*"))  # the forked worker removed its working directory


def test_no_worker_is_forked_once_deepspeed_is_imported_or_another_thread_runs(monkeypatch):
    import threading

    from dsfields.launch.worker import ForkedWorker

    monkeypatch.setitem(sys.modules, "deepspeed", sys)
    assert ForkedWorker.start(dict(os.environ)) is None
    monkeypatch.delitem(sys.modules, "deepspeed")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert ForkedWorker.start(dict(os.environ)) is None
    finally:
        stop.set()
        other.join()


def test_wants_ranks_names_the_first_parallel_degree_above_one():
    from dsfields.launch.verdict import wants_ranks

    assert wants_ranks({"tensor_parallel": {"autotp_size": 4}}) == "tensor_parallel.autotp_size"
    assert wants_ranks(with_zero(zero_hpz_partition_size=8)) == "zero_optimization.zero_hpz_partition_size"
    assert wants_ranks(with_zero(zero_hpz_partition_size=1)) is None


@pytest.mark.parametrize(("message", "key"), [
    ("WarmupDecayLR.__init__() missing 1 required positional argument: 'total_num_steps'",
     "scheduler.params.total_num_steps"),
    ("FusedAdam.__init__() got an unexpected keyword argument 'betaz'", "optimizer.params.betaz"),
    ("Invalid communication_data_type. Supported data types: ['fp16', 'bf16', 'fp32']. Got: bfp16",
     "communication_data_type"),
    ("OneBitAdam is not a supported DeepSpeed Optimizer", "optimizer.type"),
    ("MiCS ZeRO-3 sharding has been removed; 'zero_optimization.mics_shard_size' is no longer supported.",
     "zero_optimization.mics_shard_size"),
])
def test_locate_from_the_message(message, key):
    config = {"optimizer": {"type": "AdamW", "params": {"betaz": 1}}, "communication_data_type": "bfp16",
              "scheduler": {"type": "WarmupDecayLR", "params": {}}, "fp16": {"enabled": True},
              "zero_optimization": {"stage": 3, "mics_shard_size": 2}}
    assert locate(RuntimeError(message), config) == key


def _guard(tmp_path: Path, hold: bool) -> bool:
    """Run guard_ops_dir in a fresh process over an extensions dir with a stale torch lock; is the lock gone?"""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_EXTENSIONS_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(REPO / "extractor"))
    code = ("import os; from pathlib import Path; from dsfields.launch.ops import own_extensions_dir;"
            "own_extensions_dir(); root = Path(os.environ['TORCH_EXTENSIONS_DIR']);"
            "(root / 'cpu_adam').mkdir(parents=True, exist_ok=True); (root / 'cpu_adam' / 'lock').touch()")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    holder = None
    if hold:  # another dsfields process alive (it may be building): its locks must survive
        holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from dsfields.launch.ops import "
                                   "guard_ops_dir; guard_ops_dir(); print('held', flush=True); time.sleep(60)"],
                                  env=env, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        subprocess.run([sys.executable, "-c", code], env=env, check=True)  # the lock again, after its check
    try:
        subprocess.run([sys.executable, "-c", "from dsfields.launch.ops import guard_ops_dir; guard_ops_dir()"],
                       env=env, check=True, timeout=60)
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
    return not list(tmp_path.glob("dsfields/torch_extensions/*/cpu_adam/lock"))


def test_a_stale_torch_build_lock_is_cleared_only_when_no_other_process_may_be_building(tmp_path):
    assert _guard(tmp_path / "alone", hold=False)
    assert not _guard(tmp_path / "shared", hold=True)


# ---------------------------------------------------------------- ops shared between releases built from the same files


@pytest.mark.integration
def test_a_ccache_on_path_is_not_put_before_dsfields_own_compiler_wrapper(tmp_path):
    """torch puts a ccache found on PATH before the compiler; before quickcxx it would reorder the wrapper's
    arguments (the source last) and no precompiled header would apply. dsfields' own builds turn that off."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "ccache").write_text("#!/bin/sh\nexit 1\n")
    (tools / "ccache").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_EXTENSIONS_DIR", "TORCH_NO_COMPILER_WRAPPER")}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(REPO / "extractor"),
               PATH=os.pathsep.join([str(tools), env.get("PATH", "")]))
    code = ("import json, os; from torch.utils import cpp_extension as c; from dsfields.launch.ops import "
            "guard_ops_dir; before = c._wrap_compiler(['g++']); guard_ops_dir(); "
            "print(json.dumps([before, c._wrap_compiler([os.environ['CXX']]), os.environ['CXX']]))")
    probe = "from torch.utils import cpp_extension as c; raise SystemExit(not hasattr(c, '_wrap_compiler'))"
    if subprocess.run([sys.executable, "-c", probe], env=env, check=False).returncode:
        pytest.skip("this torch puts no compiler wrapper before the compiler")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    before, after, cxx = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == ["ccache", "g++"]  # the fake ccache is seen: the test would catch a prepended one
    assert Path(cxx).name == "g++" and Path(cxx).parent.parent == tmp_path / "dsfields" / "cxx"
    assert after == [cxx]


def _release(root: Path, header: str) -> Path:
    """A release tree with one op: ``op.c`` including ``inc/x.h`` (found through the include path)."""
    csrc = root / "deepspeed" / "ops" / "csrc"
    (csrc / "inc").mkdir(parents=True)
    (csrc / "op.c").write_text('#include "x.h"\nint op(void) { return X; }\n')
    (csrc / "inc" / "x.h").write_text(header)
    return root


def _ninja_build(build: Path, root: Path) -> None:
    """Compile the release's op with ninja as torch does (gcc depfiles kept in ninja's deps log)."""
    csrc = root / "deepspeed" / "ops" / "csrc"
    build.mkdir(parents=True, exist_ok=True)
    (build / "build.ninja").write_text(
        f"rule cc\n  command = cc -MMD -MF $out.d -I{csrc}/inc -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n"
        f"build op.o: cc {csrc}/op.c\n")
    subprocess.run(["ninja", "-C", str(build)], check=True, capture_output=True)
    (build / "op.so").write_bytes(b"")  # stands for the linked module


@pytest.mark.build
@pytest.mark.skipif(not all(map(shutil.which, ("ninja", "cc"))), reason="needs ninja and a C compiler")
def test_an_op_built_by_one_release_is_shared_only_with_releases_whose_files_are_identical(tmp_path):
    from dsfields.launch.ops import OPS_MANIFEST, find_shared_op, op_key, write_op_manifest

    first = _release(tmp_path / "0.1.0", "#define X 1\n")
    same = _release(tmp_path / "0.1.1", "#define X 1\n")
    changed = _release(tmp_path / "0.2.0", "#define X 2\n")  # only the header differs
    extensions = tmp_path / "extensions"
    build = extensions / "aaaa" / "op"
    _ninja_build(build, first)
    kwargs = {"extra_cflags": ["-O3"], "extra_include_paths": [str(first / "deepspeed/ops/csrc/inc")]}
    key = op_key("op", [str(first / "deepspeed/ops/csrc/op.c")], kwargs, first)
    write_op_manifest(build, key, first)
    deps = json.loads((build / OPS_MANIFEST).read_text())["deps"]
    assert set(deps) == {"deepspeed/ops/csrc/op.c", "deepspeed/ops/csrc/inc/x.h"}  # ninja's list, header included
    # The key is the same from another release's paths: they are compared relative to each release.
    same_kwargs = {"extra_cflags": ["-O3"], "extra_include_paths": [str(same / "deepspeed/ops/csrc/inc")]}
    assert op_key("op", [str(same / "deepspeed/ops/csrc/op.c")], same_kwargs, same) == key
    # A release passing torch's default explicitly (with_cuda=None from 0.16.7 on) asks for the same build.
    explicit = {**same_kwargs, "with_cuda": None}
    assert op_key("op", [str(same / "deepspeed/ops/csrc/op.c")], explicit, same, {"with_cuda": None}) == key
    assert op_key("op", [str(same / "deepspeed/ops/csrc/op.c")], explicit, same) != key
    assert find_shared_op("op", key, same, extensions) == build
    assert find_shared_op("op", key, changed, extensions) is None
    assert find_shared_op("op", op_key("op", [], {"extra_cflags": ["-O2"]}, same), same, extensions) is None
    (build / "op.so").unlink()  # a build that did not finish is never shared
    assert find_shared_op("op", key, same, extensions) is None


@pytest.mark.integration
@pytest.mark.skipif(not all(map(shutil.which, ("ninja", "cc"))), reason="needs ninja and a C compiler")
def test_the_wrapped_torch_load_builds_once_and_imports_the_shared_build_for_an_identical_release(
        tmp_path, monkeypatch):
    pytest.importorskip("torch")
    import torch.utils.cpp_extension as cpp_extension

    from dsfields.launch import ops

    built: list[Path] = []
    imported: list[str] = []

    def fake_load(name, sources, **kwargs):  # torch's load: builds into $TORCH_EXTENSIONS_DIR/<name>
        root = Path(sources[0]).parents[3]
        _ninja_build(Path(os.environ["TORCH_EXTENSIONS_DIR"]) / name, root)
        built.append(root)
        return "built"

    monkeypatch.setattr(cpp_extension, "load", fake_load)
    monkeypatch.setattr(cpp_extension, "_import_module_from_library", lambda name, path, _: imported.append(path))
    monkeypatch.setattr(ops, "_own_extensions_root", lambda: tmp_path / "extensions")
    ops.share_built_ops()
    for version, header in (("0.1.0", "#define X 1\n"), ("0.1.1", "#define X 1\n"), ("0.2.0", "#define X 2\n")):
        root = _release(tmp_path / version, header)
        monkeypatch.setattr(ops, "_release_root", lambda root=root: root)
        monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "extensions" / version))
        cpp_extension.load(name="op", sources=[str(root / "deepspeed/ops/csrc/op.c")], extra_cflags=["-O3"])
    assert [r.name for r in built] == ["0.1.0", "0.2.0"]
    assert imported == [str(tmp_path / "extensions" / "0.1.0" / "op")]


@pytest.mark.integration
@pytest.mark.skipif(not all(map(shutil.which, ("ninja", "cc"))), reason="needs ninja and a C compiler")
def test_two_builders_of_one_op_at_once_compile_it_once(tmp_path, monkeypatch):
    # Two releases extracted side by side (snapshot --jobs 2) load the same op at the same moment.
    pytest.importorskip("torch")
    import threading

    import torch.utils.cpp_extension as cpp_extension

    from dsfields.launch import ops

    built: list[str] = []
    imported: list[str] = []
    started = threading.Event()

    def slow_load(name, sources, **kwargs):  # torch's load: a build that takes a while
        started.set()
        time.sleep(0.5)  # the other builder asks for the op meanwhile
        _ninja_build(Path(os.environ["TORCH_EXTENSIONS_DIR"]) / name, Path(sources[0]).parents[3])
        built.append(threading.current_thread().name)
        return "built"

    monkeypatch.setattr(cpp_extension, "load", slow_load)
    monkeypatch.setattr(cpp_extension, "_import_module_from_library", lambda name, path, _: imported.append(path))
    monkeypatch.setattr(ops, "_own_extensions_root", lambda: tmp_path / "extensions")
    root = _release(tmp_path / "0.1.0", "#define X 1\n")
    monkeypatch.setattr(ops, "_release_root", lambda: root)
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "extensions" / "0.1.0"))
    ops.share_built_ops()

    def load() -> None:
        cpp_extension.load(name="op", sources=[str(root / "deepspeed/ops/csrc/op.c")], extra_cflags=["-O3"])

    first = threading.Thread(target=load, name="first")
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=load, name="second")
    second.start()
    first.join(30)
    second.join(30)
    assert built == ["first"]
    assert imported == [str(tmp_path / "extensions" / "0.1.0" / "op")]


@pytest.mark.parametrize("old", [True, False])
def test_a_launch_worker_started_inside_an_old_release_gets_its_cpu_accelerator_stubs(tmp_path, old):
    # A fake release: only its real_accelerator.py matters (0.9.3-0.14.0 demand intel_extension_for_pytorch).
    accelerator = tmp_path / "release" / "deepspeed" / "accelerator"
    accelerator.mkdir(parents=True)
    (accelerator.parent / "__init__.py").write_text("")
    (accelerator / "real_accelerator.py").write_text(
        'raise ImportError("CPU_Accelerator requires intel_extension_for_pytorch")\n' if old else "")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(DSFIELDS_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path / "release"), str(REPO / "extractor")]))
    code = "from dsfields.extract.launch_witness import witness_env; print(witness_env()['PYTHONPATH'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    stubs = str(tmp_path / "cache" / "launch-cpu-stubs")
    assert (stubs in out.strip().split(os.pathsep)) is old


def test_the_raise_site_is_found_in_a_release_runtimes_sdist_as_in_site_packages(tmp_path, monkeypatch):
    # `dsfields snapshot` imports each release from its unpacked sdist: no site-packages in the path.
    import importlib.util

    from dsfields.launch import verdict as launch_verdict

    module = tmp_path / "lib" / "deepspeed" / "runtime" / "engine.py"
    module.parent.mkdir(parents=True)
    module.write_text("def configure(config):\n    assert config['stage'] < 4, 'bad stage'\n")
    spec = importlib.util.spec_from_file_location("fake_engine", module)
    engine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(engine)
    with pytest.raises(AssertionError) as caught:
        engine.configure({"stage": 5})
    monkeypatch.setattr(launch_verdict, "_release_root", lambda: (tmp_path / "lib").resolve())
    assert launch_verdict.raise_site(caught.value, "deepspeed/") == (
        "deepspeed/runtime/engine.py:2", "assert config['stage'] < 4, 'bad stage'")
    monkeypatch.setattr(launch_verdict, "_release_root", lambda: None)  # not the importable DeepSpeed: no site
    assert launch_verdict.raise_site(caught.value, "deepspeed/") == (None, "")


def test_ops_are_built_with_the_ninja_beside_the_interpreter_whatever_path_the_caller_has(tmp_path, monkeypatch):
    from dsfields.launch.ops import pin_ninja

    # Two ninjas rebuild each other's ops from scratch (their build logs differ in version).
    ours, system = tmp_path / "env" / "bin", tmp_path / "usr" / "bin"
    for folder in (ours, system):
        folder.mkdir(parents=True)
        (folder / "ninja").write_text("#!/bin/sh\n")
        (folder / "ninja").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(system), os.environ.get("PATH", "")]))
    pin_ninja(ours)
    assert shutil.which("ninja") == str(ours / "ninja")
    pin_ninja(ours)  # idempotent: not added twice
    assert os.environ["PATH"].split(os.pathsep).count(str(ours)) == 1
    pin_ninja(tmp_path / "no-ninja-here")  # an environment without one leaves PATH alone
    assert shutil.which("ninja") == str(ours / "ninja")
