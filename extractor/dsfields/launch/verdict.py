"""What one ``deepspeed.initialize`` did with one config (:class:`LaunchVerdict`), and how a failure is read.

A launch (:mod:`dsfields.launch.launcher`) ends launched, ``config_error`` (DeepSpeed, accelerate or the
Trainer refuses the config, with its own first line and the JSON path it is about when it can be found) or
``machine_error`` (this CPU machine cannot run it: no fp16, CUDA-only ops, async_io not built, too few ranks,
...). A machine error is never agreement with anything. This module holds the record and the reading of an
exception into it (:func:`classify`, :func:`locate`, :func:`raise_site`); it imports neither DeepSpeed nor
torch, so the client of a launch worker and ``check --launch`` use it without them.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dsfields.launch.ops import _release_root
from dsfields.model.batch import BATCH_KEYS
from dsfields.model.dotted import at_path

_ABSENT = object()
"""A path the config does not write (a written null is there)."""

Outcome = Literal["launched", "config_error", "machine_error"]
Style = Literal["plain", "hf"]

DEFAULT_TIMEOUT = 60.0
"""Seconds one launch may take in the worker (the first ZeRO-Offload launch loads cpu_adam: ~4 s cached)."""


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
    ``witness-model`` (the launch's tiny model lacks what a feature looks for: MoE layers for AutoEP),
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
        # the witness's tiny model, not the config: AutoEP finds no MoE layers in it (a config refusal of AutoEP
        # before that point is still seen)
        ("witness-model", r"AutoEP: no MoE layers detected|Not able to determine model policy"),
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


def classify(exc: BaseException, source: str = "", ranks: int = 1) -> tuple[Outcome, str | None]:
    """``machine_error`` with a reason when this CPU machine (not the config) is what failed.

    ``source`` is the raising line's code: a bare ``assert`` says what it checks only there. ``ranks``: the world
    the launch played (:mod:`dsfields.launch.world`); above one, a refusal about the world size is the
    config's at that world, not this machine's lack of ranks.
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
            if reason == "world-size" and ranks > 1:
                return "config_error", None
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
    # runtime/config.py:598 (0.19.8): train_batch_size < world size leaves a micro batch of 0
    (re.compile(r"Micro batch size per gpu: 0"), BATCH_KEYS),
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


def names_world(exc: BaseException, source: str = "") -> bool:
    """Whether a refusal speaks of the world size or the ranks (its key is then the config's parallel degree)."""
    return bool(dict(_MACHINE_PATTERNS)["world-size"].search(f"{exc} {source}"))


def wants_ranks(config: dict[str, Any]) -> str | None:
    """The first parallel degree above 1 in ``config`` (its path), or None."""
    for path in PARALLEL_KEYS:
        node = at_path(config, path)
        if isinstance(node, (int, float)) and not isinstance(node, bool) and node > 1:
            return path
    return None


def degree_named(config: dict[str, Any], message: str) -> str | None:
    """The config's parallel degree (above 1) whose value the refusal's message names, when exactly one does
    (``8 is not divisible by 3`` at utils/groups.py for ``zero_hpz_partition_size: 3`` in a world of 8)."""
    named = []
    for path in PARALLEL_KEYS:
        node = at_path(config, path)
        if isinstance(node, int) and not isinstance(node, bool) and node > 1 and \
                re.search(rf"(?<![\d.]){node}(?![\d.])", message):
            named.append(path)
    return named[0] if len(named) == 1 else None


def locate(exc: BaseException, config: dict[str, Any], source: str = "") -> str | None:
    """The JSON path ``exc`` is about: pydantic's loc, a known launch rule, or a key the message names."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and getattr(exc, "title", None):
        with contextlib.suppress(Exception):
            for err in errors():
                loc = [str(p) for p in err.get("loc", ()) if isinstance(p, (str, int))]
                if loc:
                    found = _find_loc(config, loc, str(getattr(exc, "title", "")))
                    if found:
                        return found
    text = str(exc) or source
    for pattern, keys in _RULE_KEYS:
        if pattern.search(text):
            return next((k for k in keys if at_path(config, k, _ABSENT) is not _ABSENT), keys[-1])
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


def _find_loc(config: dict[str, Any], loc: list[str], title: str = "") -> str | None:
    """The config path whose dict holds pydantic's ``loc`` (the section is not named in the error). Where several
    sections hold it (``loss_scale`` in fp16 and bf16), the one the refusing model's ``title`` names wins
    (``DeepSpeedBF16Config``: bf16; ``TPTrainingConfig``: tensor_parallel, by its initials)."""
    tail = ".".join(loc)
    hits = [p for p in _leaves(config) if p == tail or p.endswith("." + tail)]
    if len(hits) > 1 and title:
        named = [p for p in hits if _title_names(title, p[:-len(tail) - 1] if p != tail else "")]
        hits = named or hits
    if hits:
        return min(hits, key=len)
    parent = ".".join(loc[:-1])
    sections = [p for p in _leaves(config) if parent and (p == parent or p.endswith("." + parent))]
    if sections:
        return f"{min(sections, key=len)}.{loc[-1]}"
    return None


def _title_names(title: str, section: str) -> bool:
    """Whether a pydantic model's title (``DeepSpeedBF16Config``, ``TPTrainingConfig``) names ``section``: its
    last part, underscores dropped, or the initials of its words at the title's start (DeepSpeed prefix dropped)."""
    name = section.rsplit(".", 1)[-1].lower()
    if not name:
        return False
    words = title.lower().removeprefix("deepspeed")
    initials = "".join(word[:1] for word in name.split("_") if word)
    return name.replace("_", "") in words or (len(initials) > 1 and words.startswith(initials))


class LaunchTimeout(Exception):
    """The launch took longer than its budget (SIGALRM in the worker)."""

