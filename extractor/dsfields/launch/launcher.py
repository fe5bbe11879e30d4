"""The launch itself: ``deepspeed.initialize`` on this CPU machine, many configs in one process.

``DeepSpeedConfig`` is not the whole launch: ``deepspeed.initialize`` also builds the optimizer, the scheduler
and the ZeRO engine, and the HF Trainer / accelerate rewrite the config and choose the optimizer before it.
:class:`Launcher` runs the real launch (``DS_ACCELERATOR=cpu``, one gloo process group of world size 1, a tiny
``torch.nn.Linear``) in one of two calling styles:

* ``plain``: ``deepspeed.initialize(model=m, model_parameters=m.parameters(), config=cfg)``, the
  optimizer built by DeepSpeed from ``cfg`` (or a ``torch.optim.AdamW`` passed from code);
* ``hf``: what transformers' Trainer and accelerate pass (:func:`dsfields.hf.trainer.hf_plan`: a pair's
  programs read from its source into ``generated/hf/``; pure Python, shared with ``dsfields check``).

and returns a :class:`~dsfields.launch.verdict.LaunchVerdict`. Between launches it puts back what
DeepSpeed keeps (:mod:`dsfields.launch.reset`). It runs in the launch worker
(:mod:`dsfields.launch.worker`), the process a user's ``check --launch`` and the launch witness both
start; DeepSpeed and torch are imported inside :class:`Launcher`, never at import.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, SimpleNamespace
from typing import Any

from dsfields.hf.trainer import HF_ARGS, HIDDEN_SIZE, NUM_TRAINING_STEPS, Plan, PlanError, hf_plan, plain_plan
from dsfields.launch.ops import CPU_OPS, guard_ops_dir, own_extensions_dir
from dsfields.launch.reset import ModuleGlobals
from dsfields.launch.verdict import (
    DEFAULT_TIMEOUT,
    LaunchTimeout,
    LaunchVerdict,
    Style,
    classify,
    degree_named,
    first_line,
    locate,
    names_world,
    raise_site,
    wants_ranks,
)
from dsfields.launch.world import World, disable_shm_allreduce, join_fake_group

_UNSET: Any = object()
"""No ``is_fp16_supported`` on the accelerator class itself (before 0.9): :meth:`Launcher.launch` removes its own."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _TinyConfig(SimpleNamespace):
    """``model.config`` of an HF model: the Trainer and accelerate read ``hidden_size`` from it."""


CPU_FP16_ENV = "DSFIELDS_CPU_FP16"
"""``1`` / ``0``: the worker's accelerator answers fp16 support as a CPU with / without it would (DeepSpeed's CPU
accelerator asks mkldnn, which says yes where the CPU has avx512_fp16 or AMX-FP16): both outcomes testable anywhere."""
PIN_SUPPORT_ENV = "DSFIELDS_PIN_SUPPORT"
"""``1``: the accelerator answers :data:`RECORD_SUPPORT`, whatever the CPU (and :data:`CPU_FP16_ENV`) says. Set for
every committed record (``--rules``, the launch witness), so launch.json and the snapshots are the same bytes from
any machine; ``check --launch`` leaves it unset and judges the user's config on the user's CPU."""
RECORD_SUPPORT = {"fp16": False, "bf16": True}
"""What the CPU accelerator answers on a CPU without avx512_fp16: the answers every committed record was made with."""


def _answer(value: bool) -> Callable[[Any], bool]:
    def answer(self: Any) -> bool:
        return value

    return answer


def pin_support(accelerator: Any) -> dict[str, Any]:
    """Apply :data:`CPU_FP16_ENV` and :data:`PIN_SUPPORT_ENV` to ``accelerator``'s class; its answers now.

    The answers are recorded in ``launch.json`` (``environment.accelerator_support``) and told to the client
    (``support`` of the worker's ready line), so tests assert the outcome that matches them.
    """
    cls = type(accelerator)
    simulated = os.environ.get(CPU_FP16_ENV)
    if simulated in ("0", "1"):
        cls.is_fp16_supported = _answer(simulated == "1")
    pinned = os.environ.get(PIN_SUPPORT_ENV) == "1"
    if pinned:
        for dtype, value in RECORD_SUPPORT.items():
            setattr(cls, f"is_{dtype}_supported", _answer(value))
    answers: dict[str, Any] = {}
    for dtype in ("bf16", "fp16"):
        method = getattr(accelerator, f"is_{dtype}_supported", None)
        value = None
        with contextlib.suppress(Exception):
            value = bool(method()) if callable(method) else None
        answers[dtype] = value
    answers["pinned"] = pinned
    return answers


class Launcher:
    """One process's DeepSpeed on CPU: the gloo group set up once, then :meth:`launch` per config."""

    def __init__(self, workdir: Path | None = None, warm_up: bool = True, world: World | None = None) -> None:
        started = time.perf_counter()
        self.world = world or World(1)
        """The rank this process plays (:mod:`dsfields.launch.world`): above one rank, a fake group."""
        os.environ["DS_ACCELERATOR"] = "cpu"
        own_extensions_dir()
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ.update(self.world.env())
        os.environ["MASTER_PORT"] = str(free_port())
        # Monitors (csv_monitor, tensorboard) write below the cwd: keep it out of the caller's tree.
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="dsfields-launch-"))
        if workdir is None:  # ours: gone when the worker exits (a killed worker leaves it to the tmp cleaner)
            import atexit
            import shutil

            atexit.register(shutil.rmtree, self.workdir, True)
            from dsfields.launch.process_tree import OWN_FOLDERS

            OWN_FOLDERS.append(self.workdir)  # and when its client gives up on it
        os.chdir(self.workdir)
        # Before DeepSpeed: its comm set-up loads the shm_comm op (share_built_ops), and releases up to 0.18
        # bind cpuinfo.get_cpu_info at import (remember_cpu_info).
        guard_ops_dir()  # stale torch build locks would hang the first launch that loads an op
        import deepspeed
        import torch
        import torch.distributed as torch_dist
        from deepspeed import comm as ds_comm

        self.torch = torch
        self.deepspeed = deepspeed
        logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
        if self.world.fake:  # before DeepSpeed's set-up: it then builds every group on the fake one
            join_fake_group(self.world)
            disable_shm_allreduce()
        elif not torch_dist.is_initialized():
            torch_dist.init_process_group("gloo", rank=0, world_size=1)
        from deepspeed.accelerator import get_accelerator

        self.get_accelerator = get_accelerator  # deepspeed.get_accelerator only exists from 0.9 on
        accelerator = get_accelerator()
        if accelerator.communication_backend_name() == "ccl" and hasattr(accelerator, "_communication_backend_name"):
            # 0.9.3-0.14.0's CPU accelerator names oneCCL, whose op needs an installed oneCCL (CCL_ROOT): at
            # world size 1 the gloo group set up above is all a launch communicates over (the fake one above 1).
            accelerator._communication_backend_name = "gloo"
        ds_comm.init_distributed(dist_backend=accelerator.communication_backend_name(), auto_mpi_discovery=False,
                                 verbose=False)
        self.support = pin_support(accelerator)
        self.import_seconds = time.perf_counter() - started
        self.gc_enabled = gc.isenabled()
        if warm_up:  # loads the JIT-built fused_adam and shm_comm ops once (~4 s), before the baseline
            self.launch({"train_batch_size": self.world.size, "optimizer": {"type": "Adam", "params": {"lr": 1e-3}}})
        self.baseline = ModuleGlobals.capture()
        from torch.distributed import distributed_c10d

        self.groups = set(distributed_c10d._world.pg_map)
        # Every launch collects garbage several times (ours in _clean_up; DeepSpeed's see_memory_usage, up to
        # 0.18, in each ZeRO set-up): a full pass over torch's and DeepSpeed's millions of objects, ~0.3 s
        # each, which made a 0.18.7 launch 1.3 s instead of 0.3 s. What exists now lives as long as the
        # worker, so it is moved out of the collector's sight; a launch's own garbage is still collected.
        gc.collect()
        gc.freeze()
        self.start_seconds = time.perf_counter() - started

    def about(self) -> dict[str, Any]:
        """What ``launch.json`` records of this worker: DeepSpeed, torch, Python, the accelerator and its
        fp16/bf16 answers (:func:`pin_support`)."""
        about = {"deepspeed": str(self.deepspeed.__version__).strip(), "torch": self.torch.__version__.split("+")[0],
                 "python": ".".join(map(str, sys.version_info[:2])),
                 "accelerator": str(getattr(self.get_accelerator(), "_name", "unknown")),
                 "accelerator_support": dict(self.support)}
        if self.world.fake:  # a committed record at world size 1 keeps its bytes
            about["world"] = {"size": self.world.size, "rank": self.world.rank, "per_node": self.world.per_node}
        return about

    # -- one launch

    def launch(self, config: dict[str, Any], style: Style = "plain", optimizer_from_code: bool = False,
               trace: bool = False, timeout: float = DEFAULT_TIMEOUT, fill_auto: bool = False,
               assume_fp16: bool = False, hf_pair: tuple[str, str] | None = None) -> LaunchVerdict:
        """Launch ``config`` as ``style`` calls it; never raises for what DeepSpeed does with it.

        ``hf_pair``: the transformers / accelerate releases whose programs plan the ``hf`` style and ``fill_auto``
        (``check --launch --hf-version``); None: :data:`~dsfields.hf.trainer.WITNESS_PAIR`, as every
        committed record.

        ``assume_fp16``: the CPU accelerator claims fp16 support (engine.py:2004 then lets fp16 configs
        through to the optimizer and ZeRO construction); the verdict says so in ``assumed``.
        """
        started = time.perf_counter()
        try:
            pair = tuple(hf_pair) if hf_pair else None
            plan = hf_plan(config, pair=pair, world_size=self.world.size) if style == "hf" else plain_plan(
                config, optimizer_from_code, fill_auto, pair, self.world.size)  # type: ignore[arg-type]
        except PlanError as exc:
            return LaunchVerdict("config_error", style, exc.exc_type, str(exc), exc.key, exc.raised_by,
                                 seconds=time.perf_counter() - started)
        recorder = None
        data: dict[str, Any] = plan.config
        if trace:
            from dsfields.launch.trace import Recorder, wrap

            recorder = Recorder()
            data = wrap(plan.config, "", recorder)
        engine = None
        passed: list[str] = []
        accelerator = type(self.get_accelerator())
        claims = vars(accelerator).get("is_fp16_supported", _UNSET)  # absent before 0.9: fp16 was CUDA's
        if assume_fp16:
            accelerator.is_fp16_supported = lambda _self: True  # type: ignore[method-assign]
        previous = signal.signal(signal.SIGALRM, _alarm) if timeout else None

        def judged(exc: Exception) -> LaunchVerdict:  # every complaint is a verdict: asserts, ValueErrors, ...
            site, source = raise_site(exc)
            outcome, reason = classify(exc, source, ranks=self.world.size)
            parallel = wants_ranks(plan.config)
            if outcome == "config_error" and parallel and site and site.startswith("torch/distributed/") \
                    and not self.world.fake:
                # torch's device mesh / new_group refusing a layout larger than world size 1 (a bare
                # assert in torch/distributed/_pycute for tensor_parallel.autotp_size 2).
                outcome, reason = "machine_error", "world-size"
            # A bare ``assert`` has no message: its code is the message (e.g. "assert tp_size <= world_size"),
            # and for a bare raise in torch, the DeepSpeed line that called it too.
            message = first_line(exc) or source
            if not first_line(exc) and site and not site.startswith("deepspeed/"):
                ds_site, ds_source = raise_site(exc, "deepspeed/")
                message = f"{source} (in {site}, called from {ds_site}: {ds_source})"
            by = site.split("/", 1)[0] if site else "deepspeed"
            about_world = reason == "world-size" or (self.world.fake and names_world(exc, source))
            key = locate(exc, plan.config, source) or (parallel if about_world else None) or (
                degree_named(plan.config, message) if self.world.fake else None)
            return LaunchVerdict(outcome, style, type(exc).__name__, message, key, by, reason, site,
                                 passed=tuple(passed))

        try:
            try:
                if timeout:  # armed inside the try: an alarm at once (a budget of 1 ms) is a verdict too
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                kwargs, passed = self._arguments(plan, data)
                engine, optimizer, _, _ = self.deepspeed.initialize(**kwargs)
                verdict = LaunchVerdict("launched", style,
                                        optimizer=type(optimizer).__name__ if optimizer else None,
                                        passed=tuple(passed))
                if self.world.fake and _autoep_idle(plan.config, engine):
                    # AutoEP found nothing to convert in the tiny model: its MoE checks (the ZeRO-3 refusals of
                    # hpZ, sequence parallelism, quantized gradients) were never reached: "launched" is no verdict
                    verdict = LaunchVerdict("machine_error", style, "NotJudged", AUTOEP_IDLE, "expert_parallel",
                                            "dsfields", "witness-model", passed=tuple(passed))
            except Exception as exc:  # every complaint is a verdict: asserts, ValueErrors, DeepSpeed's own errors
                verdict = judged(exc)
        except LaunchTimeout as late:  # the one-shot alarm fired while another failure was being judged
            verdict = judged(late)
        finally:
            if timeout:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            if claims is _UNSET:
                with contextlib.suppress(AttributeError):
                    del accelerator.is_fp16_supported
            else:
                accelerator.is_fp16_supported = claims  # type: ignore[method-assign]
            self._clean_up(engine)
        reads = frozenset(_read_paths(recorder)) if recorder is not None else frozenset()
        return _replace(verdict, seconds=time.perf_counter() - started, reads=reads,
                        assumed=("fp16",) if assume_fp16 else ())

    def _arguments(self, plan: Plan, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        torch = self.torch
        torch.manual_seed(0)
        model = _layered_model(torch) if self.world.fake else torch.nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        model.config = _TinyConfig(hidden_size=HIDDEN_SIZE)  # type: ignore[assignment]
        params = [p for p in model.parameters() if p.requires_grad]
        kwargs: dict[str, Any] = {"model": model, "config": data}
        passed: list[str] = []
        if plan.optimizer == "config":
            kwargs["model_parameters"] = params
        else:
            # The Trainer's create_optimizer: decay / no-decay groups, AdamW (transformers trainer.py:1272-1285).
            named = list(model.named_parameters())
            groups = [{"params": [p for n, p in named if not n.endswith("bias")], "weight_decay": HF_ARGS.weight_decay},
                      {"params": [p for n, p in named if n.endswith("bias")], "weight_decay": 0.0}]
            adamw = torch.optim.AdamW(groups, lr=HF_ARGS.learning_rate, betas=(HF_ARGS.adam_beta1, HF_ARGS.adam_beta2),
                                      eps=HF_ARGS.adam_epsilon)
            if plan.optimizer == "ds_cpu_adam":
                # accelerate utils/deepspeed.py:29-62 map_pytorch_optim_to_deepspeed: lr and weight_decay
                # from defaults, adamw_mode for AdamW, the same param groups.
                from deepspeed.ops.adam import DeepSpeedCPUAdam

                kwargs["optimizer"] = DeepSpeedCPUAdam(adamw.param_groups, lr=HF_ARGS.learning_rate,
                                                       weight_decay=HF_ARGS.weight_decay, adamw_mode=True)
                passed.append("optimizer=DeepSpeedCPUAdam")
            else:
                kwargs["optimizer"] = adamw
                passed.append("optimizer=AdamW")
        if plan.scheduler == "callable":
            # accelerator.py:2370-2371: the Trainer's scheduler as a callable of the engine's optimizer
            # (its default: linear decay with warmup, a LambdaLR).
            def scheduler(optimizer: Any) -> Any:
                return torch.optim.lr_scheduler.LambdaLR(
                    optimizer, lambda step: max(0.0, 1.0 - step / NUM_TRAINING_STEPS))

            kwargs["lr_scheduler"] = scheduler
            passed.append("lr_scheduler=callable")
        return kwargs, passed

    def _clean_up(self, engine: Any) -> None:
        """Undo what one initialize leaves behind (the list and why: :mod:`dsfields.launch.reset`)."""
        if engine is not None:
            with contextlib.suppress(Exception):
                engine.destroy()
        del engine
        with contextlib.suppress(Exception):  # what destroy() does for the model names, for failed launches too
            from deepspeed.utils.debug import debug_clear_module_and_param_names

            debug_clear_module_and_param_names()
        if hasattr(self, "baseline"):
            self.baseline.restore()
            # Subgroups a launch created (hpZ, expert, sequence parallel) stay registered in torch after
            # DeepSpeed's references to them are reset: destroy them, or they pile up launch after launch.
            from torch.distributed import distributed_c10d

            for group in [g for g in distributed_c10d._world.pg_map if g not in self.groups]:
                with contextlib.suppress(Exception):
                    distributed_c10d.destroy_process_group(group)
        if self.gc_enabled and not gc.isenabled():
            gc.enable()
        gc.collect()


AUTOEP_IDLE = ("expert_parallel is enabled but the launch's tiny model has no MoE layers, so AutoEP converted "
               "nothing and its MoE checks were not reached (not judged)")


def _autoep_idle(config: dict[str, Any], engine: Any) -> bool:
    section = config.get("expert_parallel") if isinstance(config, dict) else None
    return isinstance(section, dict) and section.get("enabled") is True and not getattr(engine, "has_moe_layers",
                                                                                           False)


def _layered_model(torch: Any) -> Any:
    """The model of a launch at N ranks: AutoTP (``tensor_parallel.autotp_size``) shards only a model it finds a
    policy for (module_inject/auto_tp.py ``supported``: a class named ``...Model`` holding an ``nn.ModuleList`` of
    blocks of linear layers), so its mesh and ZeRO checks are reached. Blocks of ``q_proj``/``o_proj`` as in a
    decoder layer; one ``nn.Linear`` at world size 1, as every committed record was made."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q_proj = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
            self.o_proj = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)

    class TinyModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([Block(), Block()])

    return TinyModel()


def build_ops() -> dict[str, str]:
    """JIT-build (or load) every CPU op, outside any launch timeout (:func:`guard_ops_dir` first).

    A first build takes ~1 min per op on 2 cores; interrupted by a launch timeout it leaves a broken
    cache (``cannot open shared object file``). ``python -m dsfields.launch --build-ops``
    builds them ahead, once per machine (dev/test.sh does).
    """
    guard_ops_dir()
    return _load_ops()


def _load_ops() -> dict[str, str]:
    from deepspeed.accelerator import get_accelerator

    done: dict[str, str] = {}
    for name in CPU_OPS:
        started = time.perf_counter()
        try:
            builder = get_accelerator().create_op_builder(name)
            if builder is None or not builder.is_compatible():
                done[name] = "not compatible"
                continue
            builder.load()
            done[name] = f"ok {time.perf_counter() - started:.1f}s"
        except Exception as exc:  # a build failure is this machine's, reported per op
            done[name] = f"failed: {type(exc).__name__}: {first_line(exc)}"
    return done


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise LaunchTimeout("the launch did not finish in time")


def _replace(verdict: LaunchVerdict, **changes: Any) -> LaunchVerdict:
    from dataclasses import replace

    return replace(verdict, **changes)


def _read_paths(recorder: Any) -> Iterator[str]:
    for event in recorder.events:
        if not isinstance(event.key, str):
            continue
        yield f"{event.section}.{event.key}" if event.section else event.key


