"""The launch witness: what ``deepspeed.initialize`` itself says about a config, on this CPU machine.

``DeepSpeedConfig`` is not the whole launch: ``deepspeed.initialize`` also builds the optimizer,
the scheduler and the ZeRO engine, and the HF Trainer / accelerate rewrite the config and choose
the optimizer before it. This module runs the real launch — ``DS_ACCELERATOR=cpu``, one gloo
process group of world size 1, a tiny ``torch.nn.Linear`` — in one of two calling styles:

* ``plain``: ``deepspeed.initialize(model=m, model_parameters=m.parameters(), config=cfg)``, the
  optimizer built by DeepSpeed from ``cfg`` (or a ``torch.optim.AdamW`` passed from code);
* ``hf``: what transformers' Trainer and accelerate pass (:func:`dsfields.model.hf_trainer.hf_plan`, every
  rule cited; pure Python, shared with ``dsfields check``).

and returns a :class:`LaunchVerdict`: launched, ``config_error`` (DeepSpeed, accelerate or the
Trainer refuses the config, with its own first line and the JSON path it is about when it can be
found) or ``machine_error`` (this CPU machine cannot run it: no fp16, CUDA-only ops, async_io not
built, too few ranks, ...). A machine error is never agreement with anything.

Many configs run in one process (:class:`Launcher` resets what DeepSpeed keeps between calls);
``python -m dsfields.extract.launch --jsonl`` is a worker reading requests as JSON lines and
writing verdicts as JSON lines, and :class:`LaunchClient` drives it with a timeout per config, so
one bad config never takes the batch down.

Imports: this module lives in ``dsfields.extract``, the only package allowed to import DeepSpeed,
torch and pydantic; it imports them lazily (inside :class:`Launcher`), so :class:`LaunchVerdict` and
:class:`LaunchClient` work without them. From dsfields it imports ``dsfields.model.hf_trainer`` (the
calling styles), ``dsfields.model.launch_rules`` (the rule catalogue, for ``--rules``) and
``dsfields.extract.trace`` / ``dsfields.extract.discover`` (the tracing dicts).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import json
import logging
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, SimpleNamespace
from typing import Any, Literal

from dsfields.extract.forked import fork
from dsfields.extract.ops import (  # noqa: F401 (re-exported: the worker, check --launch and tests name them here)
    BUILD_NOTICES,
    CPU_OPS,
    OP_DIRS,
    OPS_CACHE_ENV,
    OPS_MANIFEST,
    _building,
    _own_extensions_root,
    _release_root,
    find_shared_op,
    guard_ops_dir,
    op_key,
    own_extensions_dir,
    pin_ninja,
    remember_cpu_info,
    share_built_ops,
    write_op_manifest,
)
from dsfields.model.errors import DsfieldsError
from dsfields.model.hf_trainer import (  # noqa: F401  (re-exported: the launch witness's calling styles)
    BATCH_KEYS,
    HF_ARGS,
    HIDDEN_SIZE,
    NUM_TRAINING_STEPS,
    Plan,
    PlanError,
    at_one_rank,
    hf_plan,
    plain_plan,
)

Outcome = Literal["launched", "config_error", "machine_error"]
Style = Literal["plain", "hf"]

DEFAULT_TIMEOUT = 60.0
"""Seconds one launch may take in the worker (the first ZeRO-Offload launch loads cpu_adam: ~4 s cached)."""
BUILD_TIMEOUT = 900.0
"""Seconds the client waits for one JIT op build (outside the launch's budget; 1-2 min each on 2 busy cores)."""


# ---------------------------------------------------------------- the record


@dataclass(frozen=True)
class LaunchVerdict:
    """What one ``deepspeed.initialize`` did with one config."""

    outcome: Outcome
    style: Style = "plain"
    exc_type: str | None = None
    """Exception class name (``ZeRORuntimeException``, ``ValidationError``, ``AssertionError``, ...)."""
    message: str | None = None
    """The first line of the raiser's own message."""
    key: str | None = None
    """Dotted JSON path the failure is about, when it can be found (the message, pydantic's loc, a rule)."""
    raised_by: str | None = None
    """``deepspeed``, ``accelerate``, ``transformers`` (the HF layers, mirrored here) or ``dsfields`` (timeout)."""
    reason: str | None = None
    """For machine errors, a tag: ``fp16-on-cpu``, ``cuda-only``, ``async-io``, ``world-size``, ``op-build``,
    ``missing-package``, ``timeout``, ``worker-died``."""
    site: str | None = None
    """``file:line`` of the innermost raising frame in the raiser's package (``deepspeed/runtime/engine.py:1602``)."""
    optimizer: str | None = None
    """The class of the optimizer the engine ended up with (launched only)."""
    passed: tuple[str, ...] = ()
    """What was passed besides model and config (``optimizer=AdamW``, ``lr_scheduler=callable``, ...)."""
    assumed: tuple[str, ...] = ()
    """What this machine lacks and the launch pretended to have (``fp16``: the CPU accelerator said it
    supports fp16). Such a verdict tests the config path, not the kernels: never the real thing."""
    seconds: float = 0.0
    reads: frozenset[str] = frozenset()
    """JSON paths the launch looked at (traced runs only; ``a.b.*`` = section ``a.b`` iterated whole)."""

    @property
    def ok(self) -> bool:
        return self.outcome == "launched"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "outcome": self.outcome, "style": self.style}
        for name in ("exc_type", "message", "key", "raised_by", "reason", "site", "optimizer"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.passed:
            out["passed"] = list(self.passed)
        if self.assumed:
            out["assumed"] = list(self.assumed)
        out["seconds"] = round(self.seconds, 4)
        if self.reads:
            out["reads"] = sorted(self.reads)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LaunchVerdict:
        return cls(outcome=data["outcome"], style=data.get("style", "plain"), exc_type=data.get("exc_type"),
                   message=data.get("message"), key=data.get("key"), raised_by=data.get("raised_by"),
                   reason=data.get("reason"), site=data.get("site"), optimizer=data.get("optimizer"),
                   passed=tuple(data.get("passed", ())), assumed=tuple(data.get("assumed", ())),
                   seconds=float(data.get("seconds", 0.0)),
                   reads=frozenset(data.get("reads", ())))


# ---------------------------------------------------------------- classifying failures

_MACHINE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (reason, re.compile(pattern, re.IGNORECASE)) for reason, pattern in (
        ("fp16-on-cpu", r"Type fp16 is not supported|fp16 is not supported on your device|"
                        r"half.*not implemented for 'cpu'|\"?\w+\"? not implemented for 'Half'"),
        ("async-io", r"async_io|AsyncIOBuilder|libaio|aio_handle|\baio\b|gds_op|GDSBuilder"),
        ("missing-tool", r"No such file or directory: '(numactl|nvidia-smi|nvcc|ninja|lscpu)'"),
        ("cuda-only", r"cuda|nccl|nvcc|cupy|triton|Torch not compiled with|requires a gpu|"
                      r"is not supported on cpu|not available on cpu|implemented on CPU|CPU accelerator|"
                      r"cpu_accelerator"),
        ("op-build", r"Error building extension|Unable to JIT load|ninja|op_builder|is not compatible with|"
                     r"op, which failed to build|failed to build/load|"
                     r"shared object|torch_extensions|\.so\b"),
        ("world-size", r"world[_ ]size|more ranks|number of (gpus|ranks|processes)|dp_world_size|"
                       r"must be divisible by .*(world|ranks)"),
    )
)
_CONFIG_PATTERNS = re.compile(
    # Batch arithmetic mentions world_size, but at_one_rank already fixed every triple that fits some
    # world size: what is left is wrong on any number of ranks.
    r"Check batch related parameters|Either train_batch_size or train_micro_batch_size_per_gpu")
_OPTIONAL_PACKAGES = ("tensorboard", "wandb", "comet_ml", "mpi4py", "transformer_engine", "apex", "cupy", "triton",
                      "intel_extension_for_pytorch", "oneccl", "bitsandbytes", "msamp", "deepep", "nixl")


def classify(exc: BaseException, source: str = "") -> tuple[Outcome, str | None]:
    """``machine_error`` with a reason when this CPU machine (not the config) is what failed.

    ``source`` is the raising line's code: a bare ``assert`` says what it checks only there.
    """
    text = f"{type(exc).__name__}: {exc} {source}"
    if isinstance(exc, LaunchTimeout):
        return "machine_error", "timeout"
    if isinstance(exc, ImportError):
        name = getattr(exc, "name", None) or ""
        if any(name.startswith(p) or p in str(exc) for p in _OPTIONAL_PACKAGES):
            return "machine_error", "missing-package"
    if type(exc).__name__ in ("ValidationError", "ZeRORuntimeException") or _CONFIG_PATTERNS.search(text):
        return "config_error", None  # the config is judged; nothing here depends on the machine
    for reason, pattern in _MACHINE_PATTERNS:
        if pattern.search(text):
            return "machine_error", reason
    return "config_error", None


def raise_site(exc: BaseException, package: str = "") -> tuple[str | None, str]:
    """(``pkg/path.py:line``, that line's code) of the innermost frame inside an installed package.

    ``package``: only frames of that package (``deepspeed``: the DeepSpeed line that called into torch).
    """
    import linecache

    tb = exc.__traceback__
    site, source = None, ""
    release = _release_root()
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        relative = _importable_path(filename, release)
        if relative and relative.startswith(package):
            site = f"{relative}:{tb.tb_lineno}"
            source = linecache.getline(filename, tb.tb_lineno).strip()
        tb = tb.tb_next
    return site, source


def _importable_path(filename: str, release: Path | None) -> str:
    """``filename`` as its import path (``deepspeed/runtime/engine.py``), or "" outside any package folder.

    An installed package lies below ``site-packages``; the DeepSpeed of a release runtime is its unpacked sdist
    on ``PYTHONPATH`` (``dsfields snapshot``), found as the folder holding the importable ``deepspeed``.
    """
    marker = filename.rfind("site-packages/")
    if marker >= 0:
        return filename[marker + len("site-packages/"):]
    if release is not None:
        for path in (filename, os.path.realpath(filename)):  # the release root is resolved, the frame may not be
            if path.startswith(str(release) + os.sep):
                return path[len(str(release)) + 1:]
    return ""


def first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    if type(exc).__name__ == "ValidationError" and len(lines) >= 3:
        # pydantic: "1 validation error for Model" / "loc" / "  message [type=...]": keep all three.
        return " | ".join(line.strip() for line in lines[:3])
    return lines[0].strip() if lines else ""


def _leaves(data: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from _leaves(value, path)


def _has(config: dict[str, Any], path: str) -> bool:
    node: Any = config
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


# Launch rules whose message does not name the key, by message: the key to report (first present wins).
_RULE_KEYS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"ZeRO-Offload with a client provided optimizer"),
     ("zero_optimization.offload_optimizer.device", "zero_optimization.offload_optimizer",
      "zero_optimization.cpu_offload", "zero_force_ds_cpu_optimizer")),
    (re.compile(r"untested optimizer|zero_allow_untested_optimizer"),
     ("optimizer.type", "zero_allow_untested_optimizer")),
    (re.compile(r"requires dynamic loss scaling"), ("fp16.loss_scale", "optimizer.type")),
    (re.compile(r"'max_grad_norm' is not supported as an optimizer parameter"), ("optimizer.params.max_grad_norm",)),
    (re.compile(r"requires an optimizer|optimizer.*required|no optimizer", re.IGNORECASE),
     ("zero_optimization.stage", "zero_optimization", "optimizer")),
    (re.compile(r"fp16 and bf16|bf16 and fp16|bfloat16 and fp16|both.*fp16.*bf16|at the same time|"
                r"simultaneously enabled", re.IGNORECASE),
     ("bf16.enabled", "bfloat16.enabled", "fp16.enabled")),
    (re.compile(r"train_batch_size is not equal|batch related parameters"), BATCH_KEYS),
    (re.compile(r"is not a supported DeepSpeed Optimizer"), ("optimizer.type",)),
    (re.compile(r"does not recognize LR scheduler"), ("scheduler.type",)),
    (re.compile(r"Either train_batch_size or train_micro_batch_size_per_gpu"),
     ("train_batch_size", "train_micro_batch_size_per_gpu")),
    # engine.py:2718-2719 (0.19.8): ZeRO-3 with hpZ and no optimizer calls a method only the ZeRO-3
    # optimizer has; fails at any world size.
    (re.compile(r"_set_zero_group_parallelism"), ("zero_optimization.zero_hpz_partition_size",)),
)
PARALLEL_KEYS = ("tensor_parallel.autotp_size", "tensor_parallel.tp_size", "sequence_parallel_size",
                 "data_parallel_size", "expert_parallel.autoep_size", "zero_optimization.zero_hpz_partition_size",
                 "zero_optimization.mics_shard_size", "pipeline.stages")
"""Degrees of parallelism: above 1 they need that many ranks (this machine has one)."""


def wants_ranks(config: dict[str, Any]) -> str | None:
    """The first parallel degree above 1 in ``config`` (its path), or None."""
    for path in PARALLEL_KEYS:
        node: Any = config
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, (int, float)) and not isinstance(node, bool) and node > 1:
            return path
    return None


def locate(exc: BaseException, config: dict[str, Any], source: str = "") -> str | None:
    """The JSON path ``exc`` is about: pydantic's loc, a known launch rule, or a key the message names."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and getattr(exc, "title", None):
        with contextlib.suppress(Exception):
            for err in errors():
                loc = [str(p) for p in err.get("loc", ()) if isinstance(p, (str, int))]
                if loc:
                    found = _find_loc(config, loc)
                    if found:
                        return found
    text = str(exc) or source
    for pattern, keys in _RULE_KEYS:
        if pattern.search(text):
            return next((k for k in keys if _has(config, k)), keys[-1])
    missing = re.search(r"(\w+)\.__init__\(\) (?:missing \d+ required \w+ argument|got an unexpected keyword "
                        r"argument): '(\w+)'", text)
    if missing:  # an optimizer / scheduler built from its params dict
        scheduler = isinstance(config.get("scheduler"), dict) and config["scheduler"].get("type") == missing[1]
        return f"{'scheduler' if scheduler else 'optimizer'}.params.{missing[2]}"
    leaves = list(_leaves(config))
    exact = [p for p in leaves if "." in p and re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", text)]
    if exact:
        return max(exact, key=len)
    named = [p for p in leaves if len(p.rsplit(".", 1)[-1]) > 3
             and re.search(rf"(?<![\w.]){re.escape(p.rsplit('.', 1)[-1])}(?!\w)", text)]
    # The most specific name wins ("communication_data_type" over a "fp16" among the choices listed).
    return max(named, key=lambda p: len(p.rsplit(".", 1)[-1])) if named else None


def _find_loc(config: dict[str, Any], loc: list[str]) -> str | None:
    """The config path whose dict holds pydantic's ``loc`` (the section is not named in the error)."""
    tail = ".".join(loc)
    hits = [p for p in _leaves(config) if p == tail or p.endswith("." + tail)]
    if hits:
        return min(hits, key=len)
    parent = ".".join(loc[:-1])
    sections = [p for p in _leaves(config) if parent and (p == parent or p.endswith("." + parent))]
    if sections:
        return f"{min(sections, key=len)}.{loc[-1]}"
    return None


# ---------------------------------------------------------------- running DeepSpeed


class LaunchTimeout(Exception):
    """The launch took longer than its budget (SIGALRM in the worker)."""


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

    def __init__(self, workdir: Path | None = None, warm_up: bool = True) -> None:
        started = time.perf_counter()
        os.environ["DS_ACCELERATOR"] = "cpu"
        own_extensions_dir()
        for name, value in (("MASTER_ADDR", "127.0.0.1"), ("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"),
                            ("LOCAL_WORLD_SIZE", "1")):
            os.environ[name] = value
        os.environ["MASTER_PORT"] = str(free_port())
        # Monitors (csv_monitor, tensorboard) write below the cwd: keep it out of the caller's tree.
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="dsfields-launch-"))
        if workdir is None:  # ours: gone when the worker exits (a killed worker leaves it to the tmp cleaner)
            import atexit
            import shutil

            atexit.register(shutil.rmtree, self.workdir, True)
            from dsfields.extract.process_tree import OWN_FOLDERS

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
        if not torch_dist.is_initialized():
            torch_dist.init_process_group("gloo", rank=0, world_size=1)
        from deepspeed.accelerator import get_accelerator

        self.get_accelerator = get_accelerator  # deepspeed.get_accelerator only exists from 0.9 on
        accelerator = get_accelerator()
        if accelerator.communication_backend_name() == "ccl" and hasattr(accelerator, "_communication_backend_name"):
            # 0.9.3-0.14.0's CPU accelerator names oneCCL, whose op needs an installed oneCCL (CCL_ROOT): at
            # world size 1 the gloo group set up above is all a launch communicates over.
            accelerator._communication_backend_name = "gloo"
        ds_comm.init_distributed(dist_backend=accelerator.communication_backend_name(), auto_mpi_discovery=False,
                                 verbose=False)
        self.support = pin_support(accelerator)
        self.import_seconds = time.perf_counter() - started
        self.gc_enabled = gc.isenabled()
        if warm_up:  # loads the JIT-built fused_adam and shm_comm ops once (~4 s), before the baseline
            self.launch({"train_batch_size": 1, "optimizer": {"type": "Adam", "params": {"lr": 1e-3}}})
        self.baseline = _Globals.capture()
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
        return {"deepspeed": str(self.deepspeed.__version__).strip(), "torch": self.torch.__version__.split("+")[0],
                "python": ".".join(map(str, sys.version_info[:2])),
                "accelerator": str(getattr(self.get_accelerator(), "_name", "unknown")),
                "accelerator_support": dict(self.support)}

    # -- one launch

    def launch(self, config: dict[str, Any], style: Style = "plain", optimizer_from_code: bool = False,
               trace: bool = False, timeout: float = DEFAULT_TIMEOUT, fill_auto: bool = False,
               assume_fp16: bool = False) -> LaunchVerdict:
        """Launch ``config`` as ``style`` calls it; never raises for what DeepSpeed does with it.

        ``assume_fp16``: the CPU accelerator claims fp16 support (engine.py:2004 then lets fp16 configs
        through to the optimizer and ZeRO construction); the verdict says so in ``assumed``.
        """
        started = time.perf_counter()
        try:
            plan = hf_plan(config) if style == "hf" else plain_plan(config, optimizer_from_code, fill_auto)
        except PlanError as exc:
            return LaunchVerdict("config_error", style, exc.exc_type, str(exc), exc.key, exc.raised_by,
                                 seconds=time.perf_counter() - started)
        recorder = None
        data: dict[str, Any] = plan.config
        if trace:
            from dsfields.extract.discover import wrap
            from dsfields.extract.trace import Recorder

            recorder = Recorder()
            data = wrap(plan.config, "", recorder)
        engine = None
        passed: list[str] = []
        accelerator = type(self.get_accelerator())
        claims = vars(accelerator).get("is_fp16_supported", _UNSET)  # absent before 0.9: fp16 was CUDA's
        if assume_fp16:
            accelerator.is_fp16_supported = lambda _self: True  # type: ignore[method-assign]
        previous = signal.signal(signal.SIGALRM, _alarm) if timeout else None
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            kwargs, passed = self._arguments(plan, data)
            engine, optimizer, _, _ = self.deepspeed.initialize(**kwargs)
            verdict = LaunchVerdict("launched", style, optimizer=type(optimizer).__name__ if optimizer else None,
                                    passed=tuple(passed))
        except Exception as exc:  # every complaint is a verdict: asserts, ValueErrors, DeepSpeed's own errors
            site, source = raise_site(exc)
            outcome, reason = classify(exc, source)
            parallel = wants_ranks(plan.config)
            if outcome == "config_error" and parallel and site and site.startswith("torch/distributed/"):
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
            key = locate(exc, plan.config, source) or (parallel if reason == "world-size" else None)
            verdict = LaunchVerdict(outcome, style, type(exc).__name__, message, key, by, reason, site,
                                    passed=tuple(passed))
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
        model = torch.nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        model.config = _TinyConfig(hidden_size=HIDDEN_SIZE)  # type: ignore[assignment]
        params = [p for p in model.parameters() if p.requires_grad]
        kwargs: dict[str, Any] = {"model": model, "config": data}
        passed: list[str] = []
        if plan.optimizer == "config":
            kwargs["model_parameters"] = params
        else:
            # The Trainer's create_optimizer: decay / no-decay groups, AdamW (transformers trainer.py:1272-1285).
            groups = [{"params": [model.weight], "weight_decay": HF_ARGS.weight_decay},
                      {"params": [model.bias], "weight_decay": 0.0}]
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
        """Undo what one initialize leaves behind (see :class:`_Globals` for the list and why)."""
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


def build_ops() -> dict[str, str]:
    """JIT-build (or load) every CPU op, outside any launch timeout (:func:`guard_ops_dir` first).

    A first build takes ~1 min per op on 2 cores; interrupted by a launch timeout it leaves a broken
    cache (``cannot open shared object file``). ``python -m dsfields.extract.launch --build-ops``
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


# What DeepSpeed 0.19.8 keeps between deepspeed.initialize calls in one process, found by diffing every
# deepspeed.* module global before and after each launch of the shared corpus and its mutations
# (bench/launch_corpus.py --leaks) and by running the corpus forwards and backwards (--order-check):
#   utils/groups.py           _ZERO_PARAM_INTRA_PARALLEL_GROUP (hpZ), _EXPERT_PARALLEL_GROUP{,_RANKS} /
#                             _EXPERT_DATA_PARALLEL_GROUP{,_RANKS} (dicts filled in place), _WORLD_GROUP,
#                             _DATA_PARALLEL_GROUP, mpu, mesh_device: a ZeRO-3 config with
#                             zero_hpz_partition_size > 1 and no optimizer fails with AttributeError
#                             (engine.py:2719) in a fresh process but launches after a config that
#                             created the hpZ group;
#   module_inject/layers.py   DEEPSPEED_AUTOTP_MODE, set by initialize() for tensor_parallel.autotp_size;
#   runtime/zero/partition_parameters.py  zero_init_context / top_level_context when initialize() raises
#                             between shutdown_init_context() and restore_init_context();
#   comm/comm.py              comms_logger, configured from the config's comms_logger section;
#   runtime/python_gc.py      python_gc_manager, whose engine count disable_python_gc raises;
#   torch.distributed         the subgroups DeepSpeed created (hpZ, expert, sequence parallel):
#                             destroyed after each launch (Launcher._clean_up).
# Rather than a list that goes stale with each release, every global of every deepspeed.* module is put
# back after each launch: rebound to the object it held after the warm-up launch, and containers
# (dict / list / set) refilled with the items they held then. Modules first imported during a launch
# are captured after it (their import-time state plus that one launch).
_LEAKED_OBJECTS: tuple[tuple[str, str], ...] = (
    ("deepspeed.comm.comm", "comms_logger"),
    ("deepspeed.runtime.python_gc", "python_gc_manager"),
)
_CONTAINERS = (dict, list, set)


def _data_globals(module: Any) -> Iterator[tuple[str, Any]]:
    import types

    for key, value in list(vars(module).items()):
        if key.startswith("__") or isinstance(value, (types.ModuleType, type, types.FunctionType,
                                                      types.BuiltinFunctionType, logging.Logger)):
            continue
        yield key, value


@dataclass
class _Globals:
    """Every ``deepspeed.*`` module global as it was, and attribute dicts of :data:`_LEAKED_OBJECTS`."""

    values: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    """module name -> global -> (object, shallow copy of its items if a container)."""
    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def capture(cls) -> _Globals:
        state = cls()
        state._capture_new()
        for module, name in _LEAKED_OBJECTS:
            obj = getattr(sys.modules.get(module), name, None)
            if obj is not None:
                state.objects[(module, name)] = {k: copy.copy(v) for k, v in vars(obj).items()
                                                 if not k.startswith("_lock")}
        return state

    def _capture_new(self) -> None:
        for name, module in list(sys.modules.items()):
            if module is None or name in self.values or not (name == "deepspeed" or name.startswith("deepspeed.")):
                continue
            self.values[name] = {key: (value, copy.copy(value) if type(value) in _CONTAINERS else None)
                                 for key, value in _data_globals(module)}

    def restore(self) -> None:
        for name, saved in self.values.items():
            module = sys.modules.get(name)
            if module is None:
                continue
            for key, (value, items) in saved.items():
                if vars(module).get(key, _UNSET) is not value:
                    setattr(module, key, value)
                if items is not None and not _same_items(value, items):
                    value.clear()
                    value.update(items) if isinstance(value, (dict, set)) else value.extend(items)
        for (module, name), attributes in self.objects.items():
            obj = getattr(sys.modules[module], name)
            for key, value in attributes.items():
                setattr(obj, key, copy.copy(value))
        self._capture_new()


_UNSET: Any = object()


def _same_items(now: Any, then: Any) -> bool:
    """Identity of items, never ``==`` on them (tensors compare elementwise)."""
    if len(now) != len(then):
        return False
    if isinstance(now, dict):
        return all(key in now and now[key] is value for key, value in then.items())
    if isinstance(now, list):
        return all(a is b for a, b in zip(now, then, strict=True))
    return {id(x) for x in now} == {id(x) for x in then}


def module_state(prefix: str = "deepspeed") -> dict[str, str]:
    """Fingerprint of every ``prefix.*`` module global that is data (not a module, class or function).

    For finding leaks: diff it before and after a launch (bench/launch_corpus.py --leaks).
    """
    state: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        if not (name == prefix or name.startswith(prefix + ".")) or module is None:
            continue
        for key, value in _data_globals(module):
            try:
                text = repr(value) if isinstance(value, (int, float, str, bool, tuple, type(None))) else (
                    f"{type(value).__name__}#{id(value)}:{len(value) if hasattr(value, '__len__') else ''}")
            except Exception:
                text = f"{type(value).__name__}#{id(value)}"
            state[f"{name}:{key}"] = text[:200]
    return state


# ---------------------------------------------------------------- the worker and its client


def tell_builds(out: Any) -> None:
    """Write each build notice (:data:`BUILD_NOTICES`) to ``out`` as a JSON line (once per ``out``)."""
    if any(getattr(notice, "out", None) is out for notice in BUILD_NOTICES):
        return

    def notice(event: dict[str, Any]) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    notice.out = out  # type: ignore[attr-defined]
    BUILD_NOTICES.append(notice)


def serve(lines: Iterable[str], out: Any, launcher: Launcher) -> None:
    """Answer JSON-line requests (config, style, optimizer_from_code, fill_auto, assume_fp16, trace, timeout).

    While an op builds, ``{"building": name}`` lines go out first (:func:`tell_builds`): the client waits.
    """
    tell_builds(out)
    for line in lines:
        if not line.strip():
            continue
        request = json.loads(line)
        verdict = launcher.launch(request["config"], request.get("style", "plain"),
                                  bool(request.get("optimizer_from_code")), bool(request.get("trace")),
                                  float(request.get("timeout", DEFAULT_TIMEOUT)), bool(request.get("fill_auto")),
                                  bool(request.get("assume_fp16")))
        out.write(json.dumps({"id": request.get("id"), **verdict.as_dict()}, default=str) + "\n")
        out.flush()


PRELOADED = ("torch", "torch._dynamo", "transformers")
"""What ``import deepspeed`` spends most of its time on, imported once before :class:`ForkedWorker` forks.

The extraction and its launch worker each imported them (~6 s of a ~9 s ``import deepspeed`` in 0.9-0.16);
forked after them, the worker imports only DeepSpeed itself, with its own environment. None of them is
DeepSpeed: which accelerator, which stubs and which environment variables DeepSpeed sees is still decided in
the worker. From 0.9.0 on ``import deepspeed`` loads all three anyway; 0.8.x loads none, and its snapshots
and ``launch.json`` come out byte-identical either way (all 77 releases regenerated and compared)."""


class ForkedWorker:
    """The launch worker (:func:`main` ``--jsonl``) forked from this process, as ``subprocess.Popen`` is used.

    Made by :meth:`start` before this process imports DeepSpeed, after :data:`PRELOADED`: the child takes
    ``env`` as its environment (and any ``PYTHONPATH`` entry it adds, e.g. the CPU stubs, on ``sys.path``) and
    imports DeepSpeed itself, as a fresh ``python -m dsfields.extract.launch --jsonl`` would.
    """

    def __init__(self, pid: int, stdin: Any, stdout: Any, errors: Any, lifeline: int | None = None) -> None:
        self.pid = pid
        self.lifeline = lifeline
        """The write end of the worker's lifeline (:mod:`dsfields.extract.process_tree`), taken over by its client."""
        self.stdin = stdin
        self.stdout = stdout
        self.errors = errors
        """The worker's stderr (a temporary file): its last line says why a start failed."""
        self.returncode: int | None = None

    @classmethod
    def start(cls, env: dict[str, str], warm_up: bool = True) -> ForkedWorker | None:
        """Fork the worker; None where that is not safe (another thread, DeepSpeed already imported)."""
        import importlib

        if not hasattr(os, "fork") or "deepspeed" in sys.modules:
            return None
        try:
            for name in PRELOADED:
                importlib.import_module(name)
        except Exception:
            return None
        import threading

        # A forked child gets only this thread: a lock another Python thread held would stay locked. Native
        # threads are allowed: numpy's OpenBLAS starts its idle pool at import and handles fork itself.
        if threading.active_count() != 1:
            return None
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        life_read, life_write = os.pipe()
        errors = tempfile.TemporaryFile()

        def child() -> int:
            try:
                import atexit

                os.setsid()  # a session of its own, as a subprocess worker: killed as one group with its builds
                os.close(life_write)
                os.dup2(request_read, 0)
                os.dup2(answer_write, 1)
                os.dup2(errors.fileno(), 2)
                for fd in (request_read, request_write, answer_read, answer_write):
                    os.close(fd)
                sys.stdin = open(0, encoding="utf-8", closefd=False)
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
                added = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                         if p and p not in os.environ.get("PYTHONPATH", "").split(os.pathsep)]
                os.environ.clear()
                os.environ.update(env)
                from dsfields.extract.process_tree import LIFELINE_ENV

                os.environ[LIFELINE_ENV] = str(life_read)
                sys.path[1:1] = [p for p in added if p not in sys.path]
                code = main(["--jsonl", *([] if warm_up else ["--no-warm-up"])])
                atexit._run_exitfuncs()  # the worker's own: its working directory goes
                return code
            except BaseException:
                import traceback

                traceback.print_exc()  # into the worker's stderr file: the client's one line says why
                return 1

        pid = fork(child)
        os.close(request_read)
        os.close(answer_write)
        os.close(life_read)
        return cls(pid, os.fdopen(request_write, "w", encoding="utf-8"), os.fdopen(answer_read, encoding="utf-8"),
                   errors, life_write)

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == 0:
                    return None
                self.returncode = os.waitstatus_to_exitcode(status)
            if self.returncode is None:
                self.returncode = -1  # reaped elsewhere
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("launch worker", timeout or 0.0)
            time.sleep(0.05)
        return self.returncode if self.returncode is not None else -1

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class LaunchWorkerError(DsfieldsError):
    """The launch worker did not start (DeepSpeed's import hangs or fails, an op build over its bound)."""


START_TIMEOUT = 300.0
"""Seconds a worker may take to start besides its op builds (the extraction's; ``check --launch`` has 45)."""
CHECK_START_TIMEOUT = 45.0
"""``check --launch``: a DeepSpeed whose import hangs is given up on with one line well within a minute."""
CHECK_BUILD_BUDGET = 1200.0
"""``check --launch``: seconds all op builds of one run may take together (six ops: ~5 min on 2 busy cores)."""
PROGRESS_EVERY = 30.0
"""Seconds between two progress lines while one op builds."""


def _cache_megabytes(folder: Path) -> float:
    total = 0
    for path, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(path, name)).st_size
    return total / 1e6


class LaunchClient:
    """Runs :func:`main` ``--jsonl`` as a subprocess; restarts it when a launch kills or hangs it.

    ``forked``: a :class:`ForkedWorker` already started, used for the first start (a restart is a subprocess).

    A subprocess worker is sandboxed (``sandbox``): it runs in a session of its own with its working folder,
    ``HOME`` and ``TMPDIR`` in a ``dsfields-launch-*`` folder of the caller's temp folder (dsfields' op cache is
    passed by name, :data:`OPS_CACHE_ENV`), and holds a lifeline to this process
    (:mod:`dsfields.extract.process_tree`): on a timeout, on :meth:`close`, on SIGINT/SIGTERM here, and when this
    process dies, the worker and everything it started (ninja, compilers) are killed and the folder removed.
    Config paths are pointed into the folder by the caller (:func:`dsfields.check.launch_check.redirect_paths`:
    relative paths land in the worker's working folder).
    """

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None,
                 start_timeout: float = START_TIMEOUT, warm_up: bool = True, forked: ForkedWorker | None = None,
                 sandbox: bool = True, progress: Callable[[str], None] | None = None,
                 build_budget: float | None = None) -> None:
        self.forked = forked
        self.warm_up = warm_up
        """False for one launch (``check --launch``): no warm-up launch, ~4 s less to the first verdict."""
        self.python = python
        self.env = env
        self.start_timeout = start_timeout
        self.sandbox = sandbox
        self.progress = progress
        """Told one line before the first op build, one per op built, and one every :data:`PROGRESS_EVERY` s."""
        self.build_budget = build_budget
        """Seconds all op builds may take together (None: :data:`BUILD_TIMEOUT` per op, no total)."""
        self.proc: subprocess.Popen[str] | None = None
        self.start_seconds: float | None = None
        self.starts = 0
        self.builds: list[str] = []
        """Ops the worker built (not found built from the same files), in order."""
        self.build_seconds = 0.0
        self.folder: Path | None = None
        """The running worker's sandbox folder."""
        self.gave_up: str | None = None
        """Why the last answer did not come: ``timeout``, ``build`` (the build bound), ``died``."""
        self._lifeline: int | None = None
        self._signals: dict[int, Any] = {}
        self._cache_before: tuple[Path, float] | None = None
        self._busy = False
        """A request (or the start) is in flight: an interrupted client closes at once, not gracefully."""
        self.support: dict[str, Any] = {}
        """The started worker's accelerator's answers: ``fp16``, ``bf16`` (True/False/None) and ``pinned``."""

    @classmethod
    def for_check(cls) -> LaunchClient:
        """``check --launch``: one launch, a start bounded to :data:`CHECK_START_TIMEOUT`, builds shown on stderr."""
        def progress(line: str) -> None:
            print(f"dsfields check --launch: {line}", file=sys.stderr, flush=True)

        return cls(warm_up=False, start_timeout=CHECK_START_TIMEOUT, progress=progress,
                   build_budget=CHECK_BUILD_BUDGET)

    # -- the worker's environment

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ if self.env is None else self.env)
        own = str(Path(__file__).resolve().parents[2])
        # The worker runs in another folder: relative entries (PYTHONPATH=extractor) would no longer resolve.
        paths = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(paths if own in paths else [*paths, own])
        if self.folder is not None:
            home = env.get("HOME") or str(Path.home())
            if not env.get(OPS_CACHE_ENV):  # the op cache keeps its place although HOME moves
                xdg = env.get("XDG_CACHE_HOME")
                env[OPS_CACHE_ENV] = str((Path(xdg).expanduser() if xdg else Path(home).expanduser() / ".cache")
                                         / "dsfields")
            for name in ("TORCH_EXTENSIONS_DIR", "DSFIELDS_CACHE", "XDG_CACHE_HOME"):
                if env.get(name):
                    env[name] = os.path.abspath(os.path.expanduser(env[name]))
            env.pop("XDG_CACHE_HOME", None)  # other caches (and anything else under ~/.cache) go to the sandbox
            for name in ("home", "tmp", "work"):
                (self.folder / name).mkdir(exist_ok=True)
            env["HOME"] = str(self.folder / "home")
            for name in ("TMPDIR", "TMP", "TEMP"):
                env[name] = str(self.folder / "tmp")
            env["PWD"] = str(self.folder / "work")
            from dsfields.extract.process_tree import SANDBOX_ENV

            env[SANDBOX_ENV] = str(self.folder)
        return env

    def _start(self) -> None:
        started = time.perf_counter()
        errors: Any = None
        if self.forked is not None:
            self.proc, self.forked = self.forked, None  # type: ignore[assignment]
            errors = self.proc.errors  # type: ignore[attr-defined]
            self._lifeline = self.proc.lifeline  # type: ignore[attr-defined]
            self._guard_signals()
        else:
            from dsfields.extract.process_tree import LIFELINE_ENV

            if self.sandbox:
                self.folder = Path(tempfile.mkdtemp(prefix="dsfields-launch-"))
            env = self._child_env()
            argv = [self.python, "-m", "dsfields.extract.launch", "--jsonl",
                    *([] if self.warm_up else ["--no-warm-up"])]
            read_end, self._lifeline = os.pipe()
            env[LIFELINE_ENV] = str(read_end)
            # stderr to a file, not a pipe nobody reads (DeepSpeed is chatty): its last line says why a start failed.
            errors = tempfile.TemporaryFile()
            try:
                self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                             text=True, env=env, pass_fds=(read_end,), start_new_session=True,
                                             cwd=self.folder / "work" if self.folder is not None else None)
            finally:
                os.close(read_end)
            self._guard_signals()
        self._busy = True
        ready = self._read(self.start_timeout)
        self._busy = False
        if ready is None or not ready.get("ready"):
            why = self.gave_up
            self.close(graceful=False)
            lines: list[str] = []
            if errors is not None:
                errors.seek(0)
                lines = [line for line in errors.read().decode(errors="replace").splitlines() if line.strip()]
                errors.close()
            last = f": {lines[-1].strip()[:300]}" if lines else ""
            if why == "timeout":
                raise LaunchWorkerError(f"the launch worker did not start in {self.start_timeout:.0f} s "
                                        f"(DeepSpeed's import or set-up hangs){last}")
            if why == "build":
                raise LaunchWorkerError(f"DeepSpeed's CPU ops did not build in {self.build_budget:.0f} s "
                                        "(stopped; python -m dsfields.extract.launch --build-ops builds them ahead)")
            raise LaunchWorkerError("the launch worker did not start" + last)
        if errors is not None:
            errors.close()  # the worker keeps writing to the file, unlinked: it goes when the worker does
        self.start_seconds = time.perf_counter() - started
        self.worker_start = ready
        self.support = dict(ready.get("support") or {})
        self.starts += 1

    def _guard_signals(self) -> None:
        """SIGTERM/SIGHUP here unwind like Ctrl-C does, so the worker's tree and folder go (``close``)."""
        if self._signals or not threading_main():
            return

        def unwind(signum: int, frame: FrameType | None) -> None:
            raise SystemExit(128 + signum)

        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(ValueError, OSError):
                self._signals[sig] = signal.signal(sig, unwind)

    def _read(self, timeout: float) -> dict[str, Any] | None:
        """The worker's next answer; each op-build notice before it gives :data:`BUILD_TIMEOUT` more
        (within :attr:`build_budget`). None when it does not come: why in :attr:`gave_up`."""
        assert self.proc is not None and self.proc.stdout is not None
        self.gave_up = None
        deadline = time.monotonic() + timeout
        building: tuple[str, float] | None = None
        shown = 0.0
        while True:
            now = time.monotonic()
            wait = max(0.0, deadline - now)
            if building is not None and self.progress is not None:
                wait = min(wait, PROGRESS_EVERY)
            ready, _, _ = select.select([self.proc.stdout], [], [], wait)
            if not ready:
                now = time.monotonic()
                if now < deadline and building is not None:
                    if self.progress is not None and now - shown >= PROGRESS_EVERY - 0.5:
                        shown = now
                        self.progress(f"still building {building[0]} ({now - building[1]:.0f} s)")
                    continue
                over_budget = building is not None and self.build_budget is not None and \
                    self.build_seconds + now - building[1] >= self.build_budget
                self.gave_up = "build" if over_budget else "timeout"
                return None
            line = self.proc.stdout.readline()
            answer = json.loads(line) if line else None
            if answer is None:
                self.gave_up = "died"
                return None
            if not isinstance(answer, dict) or not ({"building", "built"} & answer.keys()):
                return answer
            now = time.monotonic()
            if "building" in answer:
                building = (str(answer["building"]), now)
                shown = now
                self.builds.append(building[0])
                self._tell_build(answer)
                deadline = max(deadline, now + BUILD_TIMEOUT)
                if self.build_budget is not None:
                    deadline = min(deadline, now + max(0.0, self.build_budget - self.build_seconds))
            else:
                if building is not None:
                    self.build_seconds += now - building[1]
                building = None
                if self.progress is not None:
                    self.progress(f"built {answer['built']} in {float(answer.get('seconds', 0)):.0f} s")
                deadline = max(deadline, now + timeout)

    def _tell_build(self, notice: dict[str, Any]) -> None:
        if self.progress is None:
            return
        estimate = notice.get("estimate") or {}
        if len(self.builds) == 1:
            cache = Path(str(estimate.get("cache", "")))
            self._cache_before = (cache, _cache_megabytes(cache))
            pch = int(estimate.get("pch_megabytes") or 0)
            more = f"; up to {pch / 1000:.1f} GB more if torch's headers are precompiled" if pch else ""
            ops = list(estimate.get("ops") or [])
            self.progress(f"building DeepSpeed's CPU ops for the first launch: about {estimate.get('minutes', '?')} "
                          f"min, {estimate.get('megabytes', '?')} MB in {cache} at most ({len(ops)} of {len(OP_DIRS)} "
                          f"ops not built yet, the launch builds those it needs{more}); stopped after "
                          f"{(self.build_budget or BUILD_TIMEOUT) / 60:.0f} min")
        self.progress(f"building {notice['building']} ({len(self.builds)}/{len(OP_DIRS)} at most)")

    def launch(self, config: dict[str, Any], style: Style = "plain", optimizer_from_code: bool = False,
               trace: bool = False, timeout: float = DEFAULT_TIMEOUT, fill_auto: bool = False,
               assume_fp16: bool = False) -> LaunchVerdict:
        """As :meth:`Launcher.launch`, in the worker; a worker that dies or hangs is a machine error.

        Every path the config names is pointed into the worker's folder first (``check --launch`` has done so
        already, to name them in its verdict): no launch through a client writes where a config says."""
        from dsfields.model.launch_paths import redirect_paths

        if isinstance(config, dict):
            config = redirect_paths(config)[0]
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        request = {"config": config, "style": style, "optimizer_from_code": optimizer_from_code, "trace": trace,
                   "timeout": timeout, "fill_auto": fill_auto, "assume_fp16": assume_fp16}
        started = time.perf_counter()
        self._busy = True
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            answer = self._read(timeout + 15.0)
        except (BrokenPipeError, ValueError):
            answer = None
            self.gave_up = "died"
        self._busy = False
        self._tell_cache()
        if answer is None:
            why = self.gave_up
            dead = why == "died" or self.proc.poll() is not None
            self.close(graceful=False)
            if why == "build":
                return LaunchVerdict("machine_error", style, message=f"DeepSpeed's CPU ops did not build in "
                                     f"{self.build_budget:.0f} s (stopped)", raised_by="dsfields", reason="op-build",
                                     seconds=time.perf_counter() - started)
            return LaunchVerdict("machine_error", style, message="the launch worker " + (
                "died" if dead else "did not answer in time"), raised_by="dsfields",
                reason="worker-died" if dead else "timeout", seconds=time.perf_counter() - started)
        answer.pop("id", None)
        return LaunchVerdict.from_dict(answer)

    def _tell_cache(self) -> None:
        if self._cache_before is None or self.progress is None:
            return
        cache, before = self._cache_before
        self._cache_before = None
        self.progress(f"ops built in {self.build_seconds:.0f} s: {cache} grew by "
                      f"{_cache_megabytes(cache) - before:.0f} MB")

    def close(self, graceful: bool = True) -> None:
        """End the worker: at end of input when idle (``graceful``), else at once; its tree and folder go too."""
        from dsfields.extract.process_tree import end_tree, remove_folder

        proc, self.proc = self.proc, None
        graceful = graceful and not self._busy
        self._busy = False
        try:
            if proc is not None:
                with contextlib.suppress(Exception):
                    # A worker with a lifeline ends at once when it closes (its folders removed, no finalization:
                    # seconds of torch's and DeepSpeed's teardown saved); one without is asked by end of input.
                    if graceful and self._lifeline is None and proc.poll() is None and proc.stdin is not None:
                        proc.stdin.close()  # the worker returns and cleans up after itself
                        proc.wait(10)
                if self._lifeline is not None:  # the worker ends its own tree (it is their subreaper), then exits
                    os.close(self._lifeline)
                    self._lifeline = None
                    with contextlib.suppress(Exception):
                        proc.wait(5)
                if proc.poll() is None:  # it did not: the whole tree from here, the worker stopped first
                    with contextlib.suppress(Exception):
                        os.kill(proc.pid, signal.SIGSTOP)
                    # Stopped, it is still the subreaper: what its killed children leave comes to it, found next round.
                    end_tree(proc.pid)
                    with contextlib.suppress(Exception):
                        os.killpg(proc.pid, signal.SIGKILL)
                    with contextlib.suppress(Exception):
                        proc.kill()
                with contextlib.suppress(Exception):
                    proc.wait(5)
                for stream in (proc.stdin, proc.stdout):
                    with contextlib.suppress(Exception):
                        if stream is not None:
                            stream.close()
        finally:
            if self._lifeline is not None:
                with contextlib.suppress(OSError):
                    os.close(self._lifeline)
                self._lifeline = None
            remove_folder(self.folder)
            self.folder = None
            for sig, previous in self._signals.items():
                with contextlib.suppress(Exception):
                    signal.signal(sig, previous)
            self._signals.clear()

    def __enter__(self) -> LaunchClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(graceful=exc[0] is None)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


# ---------------------------------------------------------------- confirming the launch rules (launch.json)

LAUNCH_FORMAT = 1


def _brief(verdict: LaunchVerdict, example: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"style": example.style, "optimizer_from_code": example.optimizer_from_code,
                           "outcome": verdict.outcome}
    for name in ("exc_type", "message", "key", "raised_by", "reason", "site"):
        if getattr(verdict, name) is not None:
            out[name] = getattr(verdict, name)
    return out


def confirm_rule(rule: Any, launch: Callable[[Any], LaunchVerdict]) -> dict[str, Any]:
    """Run one :class:`~dsfields.model.launch_rules.LaunchRule`'s examples; is the rule what this release does?

    ``raises`` rules are confirmed when every trigger fails for a config reason with a message containing
    ``rule.message`` and every control launches (or fails for this machine only); ``accepts`` rules when
    every trigger launches. A trigger that fails for a machine reason leaves the rule unconfirmed.
    """
    triggers = [(example, launch(example)) for example in rule.triggers]
    controls = [(example, launch(example)) for example in rule.controls]
    why: list[str] = []
    for example, verdict in triggers:
        if rule.effect == "accepts":
            if not verdict.ok:
                why.append(f"{example.style} trigger did not launch: {verdict.exc_type}: {verdict.message}")
        elif verdict.outcome == "machine_error":
            why.append(f"{example.style} trigger failed for a machine reason ({verdict.reason})")
        elif verdict.outcome == "launched":
            why.append(f"{example.style} trigger launched")
        elif rule.message not in (verdict.message or ""):
            why.append(f"{example.style} trigger failed otherwise: {verdict.exc_type}: {verdict.message}")
    for example, verdict in controls:
        if verdict.outcome == "config_error":
            why.append(f"{example.style} control failed: {verdict.exc_type}: {verdict.message}")
    record: dict[str, Any] = {"confirmed": not why, "effect": rule.effect,
                              "triggers": [_brief(v, e) for e, v in triggers],
                              "controls": [_brief(v, e) for e, v in controls]}
    failing = next((v for _, v in triggers if v.outcome == "config_error"), None)
    if failing is not None:
        record.update({"message": failing.message, "exc_type": failing.exc_type, "site": failing.site,
                       "raised_by": failing.raised_by})
    if why:
        record["why_not"] = why
    return record


def probe_rules(launcher: Launcher, rules: Iterable[Any] | None = None) -> dict[str, Any]:
    """``launch.json`` for the DeepSpeed this process runs: every launch rule confirmed or not, with messages."""
    from dsfields.model import launch_rules

    def launch(example: Any) -> LaunchVerdict:
        return launcher.launch(example.config, example.style, example.optimizer_from_code)

    return rules_document(launcher.about(), launch, rules or launch_rules.RULES)


def rules_document(about: dict[str, Any], launch: Callable[[Any], LaunchVerdict],
                   rules: Iterable[Any]) -> dict[str, Any]:
    """``launch.json``: ``about`` is the worker's :meth:`Launcher.about`, ``launch`` runs one example untraced."""
    return {
        "format_version": LAUNCH_FORMAT,
        "generated_by": "python -m dsfields.extract.launch --rules",
        "deepspeed_version": about["deepspeed"],
        "environment": {"python": about["python"], "torch": about["torch"],
                        "accelerator": about["accelerator"], "world_size": 1, "backend": "gloo",
                        "accelerator_support": about.get("accelerator_support"),
                        "hf_layers": "transformers 5.24.0 / accelerate 1.15.0, mirrored (dsfields.model.hf_trainer)"},
        "rules": {rule.id: confirm_rule(rule, launch) for rule in rules},
    }


# ---------------------------------------------------------------- the launch witness of `dsfields extract --launch`


def witness_examples() -> list[Any]:
    """The configs the launch witness runs: every launch rule's triggers and controls, each once, in catalogue order.

    They span what ``deepspeed.initialize`` builds beyond ``DeepSpeedConfig`` (each ZeRO stage, offload, every
    optimizer family the rules name, a scheduler, both calling styles); nothing is listed here by hand.
    """
    from dsfields.model import launch_rules

    seen: set[str] = set()
    out: list[Any] = []
    for rule in launch_rules.RULES:
        for example in (*rule.triggers, *rule.controls):
            key = json.dumps(example.as_dict(), sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                out.append(example)
    return out


def witness_paths(reads: Iterable[str]) -> set[str]:
    """The JSON paths of a traced launch that name a key (iterations ``a.*`` and the probe key left out)."""
    from dsfields.extract.discover import PROBE_KEY

    return {p for p in reads if not {"*", PROBE_KEY} & set(p.split("."))}


def launch_witness(client: LaunchClient | None = None, timeout: float = DEFAULT_TIMEOUT,
                   rules: bool = False) -> dict[str, Any]:
    """Witness 4 of issue 15: the paths ``deepspeed.initialize`` reads, on tracing dicts, over :func:`witness_examples`.

    Runs in a worker process (:class:`LaunchClient`: a launch changes process-wide state). Returns
    ``{"paths": sorted paths, "configs": n, "outcomes": {outcome: count}}`` for
    :func:`dsfields.extract.reconcile.merge`; a machine error still contributes the reads made before it.

    ``rules``: also confirm the launch rules in the same worker (``extract --launch --launch-rules``), each
    example launched again untraced as ``--rules`` does; the document is ``"launch_json"``. One worker start
    (DeepSpeed's import, the gloo group, the warm-up launch) instead of two.
    """
    own = client is None
    client = client or LaunchClient(env=witness_env())
    paths: set[str] = set()
    outcomes: dict[str, int] = {}
    examples = witness_examples()
    document = None
    try:
        for example in examples:
            verdict = client.launch(example.config, example.style, example.optimizer_from_code, trace=True,
                                    timeout=timeout)
            outcomes[verdict.outcome] = outcomes.get(verdict.outcome, 0) + 1
            paths |= witness_paths(verdict.reads)
        if rules:
            from dsfields.model import launch_rules

            def launch(example: Any) -> LaunchVerdict:
                return client.launch(example.config, example.style, example.optimizer_from_code, timeout=timeout)

            document = rules_document(client.worker_start["about"], launch, launch_rules.RULES)
    finally:
        if own:
            client.close()
    report: dict[str, Any] = {"paths": sorted(paths), "configs": len(examples),
                              "outcomes": dict(sorted(outcomes.items()))}
    if document is not None:
        report["launch_json"] = document
    return report


# ---------------------------------------------------------------- older releases (their runtime from releases.py)

_CPU_STUBS = {
    "intel_extension_for_pytorch": '"""dsfields stub: DS_ACCELERATOR=cpu needs this import in 0.9.3-0.14.0."""\n',
    "oneccl_bindings_for_pytorch": '"""dsfields stub: imported by their cpu_accelerator.py; the launch uses gloo."""\n',
}


def needs_cpu_stubs(source: Path) -> bool:
    """Whether this release's CPU accelerator demands intel_extension_for_pytorch (0.9.3-0.14.0)."""
    try:
        text = (source / "deepspeed" / "accelerator" / "real_accelerator.py").read_text(encoding="utf-8")
    except OSError:
        return False
    return "CPU_Accelerator requires intel_extension_for_pytorch" in text


def cpu_stub_dir() -> Path:
    """Empty ``intel_extension_for_pytorch`` / ``oneccl_bindings_for_pytorch`` packages, for older releases'
    CPU accelerator: it only imports them; everything the launch runs is torch's gloo and DeepSpeed's own ops."""
    from dsfields.extract.releases import cache_dir

    root = cache_dir() / "launch-cpu-stubs"
    for name, text in _CPU_STUBS.items():
        init = root / name / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(text, encoding="utf-8")
    return root


def witness_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a launch worker started from this process (``extract --launch``, ``--launch-rules``).

    This process's own, plus the CPU-accelerator stubs when the DeepSpeed it imports needs them: inside a
    release runtime of 0.9.3-0.14.0 (``dsfields snapshot --launch``) the worker's ``DS_ACCELERATOR=cpu``
    would otherwise fail at import, and every launch would be a machine error for a reason no user has.
    Found from the importable DeepSpeed's own source, so it holds for an installed release too.
    """
    import importlib.util

    env = dict(os.environ if environ is None else environ)
    env.setdefault(PIN_SUPPORT_ENV, "1")  # a committed record: the same from any CPU
    spec = importlib.util.find_spec("deepspeed")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if locations and needs_cpu_stubs(Path(locations[0]).parent):
        stubs = str(cpu_stub_dir())
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if stubs not in paths:
            env["PYTHONPATH"] = os.pathsep.join([*paths, stubs])
    return env


def release_launch_env(version: str) -> dict[str, str]:
    """The environment of a launch worker for release ``version`` (``releases.release_env`` plus the CPU
    accelerator, and the stubs where that release needs them)."""
    from dsfields.extract.releases import fetch_source, release_env

    source = fetch_source(version)
    extra = [cpu_stub_dir()] if needs_cpu_stubs(source) else []
    env = release_env(version, extra)
    env["DS_ACCELERATOR"] = "cpu"
    env.setdefault(PIN_SUPPORT_ENV, os.environ.get(PIN_SUPPORT_ENV, "1"))  # its launch.json: the same from any CPU
    return env


def probe_release(version: str, out: Path, timeout: float = 1800.0) -> int:
    """``--rules`` in release ``version``'s runtime: writes ``out`` (its launch.json)."""
    from dsfields.extract.releases import environment_for

    python = environment_for(version)
    # The CPU ops first, outside any launch timeout (an interrupted JIT build leaves a broken cache).
    subprocess.run([str(python), "-P", "-m", "dsfields.extract.launch", "--build-ops"], env=release_launch_env(version),
                   capture_output=True, text=True, timeout=timeout, check=False)
    result = subprocess.run([str(python), "-P", "-m", "dsfields.extract.launch", "--rules", "--out", str(out)],
                            env=release_launch_env(version), capture_output=True, text=True, timeout=timeout,
                            check=False)
    tail = (result.stderr or "").strip().splitlines()[-1:] or [""]
    print(f"{version}: exit {result.returncode}: {tail[0]}", file=sys.stderr)
    return result.returncode


def launch_json_text(data: dict[str, Any]) -> str:
    """``launch.json`` as written, whether by ``--rules`` or by the launch witness's worker."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.launch",
                                     description="Run deepspeed.initialize on CPU for ds_config files or JSON lines.")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--jsonl", action="store_true", help="serve requests as JSON lines on stdin")
    parser.add_argument("--no-warm-up", action="store_true", help="skip the warm-up launch (one launch only)")
    parser.add_argument("--hf", action="store_true", help="as the HF Trainer / accelerate would call it")
    parser.add_argument("--optimizer-from-code", action="store_true")
    parser.add_argument("--fill-auto", action="store_true", help='plain style: fill the HF Trainer\'s "auto" first')
    parser.add_argument("--trace", action="store_true", help="record the JSON paths the launch reads")
    parser.add_argument("--build-ops", action="store_true", help="JIT-build DeepSpeed's CPU ops once, then exit")
    parser.add_argument("--rules", action="store_true",
                        help="confirm every launch rule (dsfields.model.launch_rules) on this DeepSpeed; write --out")
    parser.add_argument("--out", type=Path, default=None, help="--rules: where to write launch.json (else stdout)")
    parser.add_argument("--release", default=None, metavar="VERSION",
                        help="--rules: run in that release's runtime (dsfields.extract.releases) instead of here")
    args = parser.parse_args(argv)
    if args.jsonl:  # a worker: whatever it starts (ninja, compilers) ends with it or with its client
        from dsfields.extract.process_tree import hold_lifeline

        hold_lifeline()
    if args.rules and args.release:
        from dsfields.model.launch_rules import launch_path

        return probe_release(args.release, (args.out or launch_path(args.release)).resolve())
    if args.build_ops:
        for name, status in build_ops().items():
            print(f"{name}: {status}")
        return 0
    files = [path.resolve() for path in args.files]  # the Launcher moves to its own working directory
    # Results go to the original stdout; everything DeepSpeed, torch and the JIT loaders print
    # (C++ included) goes to stderr.
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out = args.out.resolve() if args.out else None
    if args.jsonl:  # builds during start-up (shm_comm, the warm-up's fused_adam) extend the client's wait too
        tell_builds(results)
    if args.rules:
        os.environ.setdefault(PIN_SUPPORT_ENV, "1")  # launch.json is committed: the same from any CPU
    launcher = Launcher(warm_up=not args.no_warm_up)
    if args.rules:
        data = probe_rules(launcher)
        text = launch_json_text(data)
        if out is not None:
            from dsfields.model.store import write_atomic

            write_atomic(out, text)
        else:
            results.write(text)
        results.flush()
        confirmed = sum(r["confirmed"] for r in data["rules"].values())
        print(f"{confirmed}/{len(data['rules'])} launch rules confirmed on DeepSpeed {data['deepspeed_version']}",
              file=sys.stderr)
        return 0
    if args.jsonl:
        results.write(json.dumps({"ready": True, "import_seconds": round(launcher.import_seconds, 3),
                                  "start_seconds": round(launcher.start_seconds, 3), "about": launcher.about(),
                                  "support": launcher.support}) + "\n")
        results.flush()
        serve(sys.stdin, results, launcher)
        return 0
    failed = 0
    for path in files:
        verdict = launcher.launch(json.loads(path.read_text(encoding="utf-8")), "hf" if args.hf else "plain",
                                  args.optimizer_from_code, args.trace, fill_auto=args.fill_auto)
        failed += not verdict.ok
        results.write(json.dumps({"file": str(path), **verdict.as_dict()}) + "\n")
    results.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
