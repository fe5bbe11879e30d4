"""``check --launch``: run ``deepspeed.initialize`` itself on the config, and report its verdict on the key.

The launch needs DeepSpeed, which only :mod:`dsfields.extract` may import: the command line passes
:class:`dsfields.launch.client.LaunchClient` in as ``client`` (a worker subprocess on CPU: gloo, world
size 1, a tiny model; with ``--world-size N``, one worker per rank played, rank 0 and the last, each in torch's
fake process group of N: :mod:`dsfields.launch.world`). The config is launched as the HF Trainer /
accelerate pass it (``--hf``) or as plain code does (with ``--optimizer-from-code``, an AdamW passed in). A
failure this machine causes (no fp16 kernels, CUDA-only ops, async_io, too few ranks) is said as "not checked
on this machine", never as agreement; for fp16 the launch is tried again with the CPU claiming fp16, so the config path
past the device check is still judged.

Imports: ``dsfields.model`` and ``dsfields.check`` only; the client is any object with the
``LaunchClient.launch`` contract returning a verdict with ``outcome``, ``exc_type``, ``message``,
``key``, ``reason``, ``site`` and ``raised_by`` (tests pass fakes).
"""

from __future__ import annotations

from dsfields.check.findings import Finding, Kind, Options, Severity
from dsfields.launch.paths import PATH_NAME, REDIRECTED, redirect_paths  # noqa: F401  (the check's face)
from dsfields.model.store import installed_deepspeed_version

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from typing import Any

LAUNCH_TIMEOUT = 30.0
"""Seconds for the one launch, op builds apart (the worker's start comes on top). A first launch takes 2-4 s on an
idle 2-core machine and 14 s at a load of 15 on it (measured): 15 s made a loaded machine's verdict a timeout."""

def path_keys(version: str) -> list[str]:
    """The release's fields whose name says they are a path (``*`` for a user-named key), from its snapshot."""
    import re

    from dsfields.model.store import load_indexed

    name = re.compile(PATH_NAME)
    return sorted(p for p in load_indexed(version).fields if name.search(p.rsplit(".", 1)[-1]))


def _line(config: Any, path: str | None) -> int:
    return (config.line_of(tuple(path.split("."))) if path else None) or 1


def version_mismatch(version: str) -> str | None:
    installed = installed_deepspeed_version()
    if installed == version:
        return None
    return (f"--launch skipped: the installed DeepSpeed is {installed or 'none'}, not {version} "
            f"(pip install deepspeed=={version}, or pass --version {installed})" if installed else
            f"--launch skipped: DeepSpeed is not installed (pip install deepspeed=={version})")


FAKE_GROUP_UNSEEN = ("not judged by a launch at world size {n} in one process (torch's fake process group): no "
                     "collective runs (an all-reduce, broadcast or all-gather returns with no data moved), so values "
                     "exchanged between ranks, NCCL/CUDA-only paths, the memory and time of {n} real ranks and the "
                     "ranks other than {played} are not checked")
"""What the fake group cannot show, said beside every verdict at N > 1 (never guessed)."""


def played(world_size: int, rank: int, gpus_per_node: int | None) -> str:
    """How a verdict names the rank it played (``rank 7 of 8, 8 per node``)."""
    per_node = min(gpus_per_node or world_size, world_size)
    return f"rank {rank} of {world_size}, {per_node} per node" if world_size > 1 else "world size 1"


def ranks_to_play(world_size: int | None) -> tuple[int, ...]:
    """Rank 0 and the last rank: some refusals hit only the ranks left outside a mesh (``device_mesh.py``)."""
    return (0, world_size - 1) if world_size and world_size > 1 else (0,)


def _verdict(client: Any, data: Any, style: str, code: bool, pair: dict[str, Any]) -> tuple[Any, str]:
    verdict = client.launch(data, style, code, timeout=LAUNCH_TIMEOUT, **pair)
    if verdict.outcome == "machine_error" and verdict.reason == "fp16-on-cpu":
        again = client.launch(data, style, code, timeout=LAUNCH_TIMEOUT, assume_fp16=True, **pair)
        if again.outcome != "machine_error":
            return again, " (this CPU has no fp16: launched with fp16 assumed, so the config path is judged, not " \
                          "the kernels)"
    return verdict, ""


def launch_findings(version: str, config: Any, options: Options, client: Any) -> list[Finding]:
    """DeepSpeed's own verdict on ``config`` (a :class:`~dsfields.configfile.ConfigFile`) as findings.

    ``client``: one launch client (world size 1), or a mapping rank -> client, each playing that rank of a world of
    ``options.world_size`` (``check --launch --world-size N``: rank 0 and the last, :func:`ranks_to_play`). The
    first rank that refuses gives the verdict; a rank that launched where another refused is named.
    """
    style = "hf" if options.hf else "plain"
    code = options.optimizer_from_code and not options.hf
    how = "as the HF Trainer passes it" if options.hf else (
        "from plain code with an optimizer passed in" if code else "from plain code, optimizer from the config")
    if not isinstance(config.data, dict):
        return []
    clients = dict(client) if isinstance(client, dict) else {0: client}
    world = options.world_size or 1
    per_node = options.gpus_per_node
    data, redirected = redirect_paths(config.data, path_keys(version))
    pair = {"hf_pair": options.hf_pair} if options.hf and options.hf_pair else {}  # the chosen pair's programs
    verdicts = {rank: _verdict(each, data, style, code, pair) for rank, each in sorted(clients.items())}
    refused = [rank for rank, (v, _) in verdicts.items() if v.outcome == "config_error"]
    machine = [rank for rank, (v, _) in verdicts.items() if v.outcome == "machine_error"]
    rank = refused[0] if refused else machine[0] if machine else min(verdicts)
    verdict, assumed = verdicts[rank]
    if redirected:  # a dry run writes nowhere the config says (nvme swap folders, monitor logs)
        assumed += f" (paths pointed into the launch's temp folder: {', '.join(redirected)})"
    if world > 1:
        launched = [r for r, (v, _) in verdicts.items() if v.outcome == "launched"]
        if refused and launched:
            assumed += f" (rank {', '.join(map(str, launched))} launched: only some ranks refuse)"
        where = (f"deepspeed.initialize (DeepSpeed {version}, CPU, {played(world, rank, per_node)}, "
                 f"torch's fake process group) {how}")
    else:
        where = f"deepspeed.initialize (DeepSpeed {version}, CPU, world size 1) {how}"
    unseen = [Finding("", Severity.INFO, Kind.LIMITATION, FAKE_GROUP_UNSEEN.format(
        n=world, played=" and ".join(f"rank {r}" for r in sorted(verdicts))), "", 1)] if world > 1 else []
    if verdict.outcome == "launched":
        ranks = " and ".join(f"rank {r}" for r in sorted(verdicts))
        said = f"{where}: launched{assumed}" if world == 1 else f"{where}: launched on {ranks}{assumed}"
        return [Finding("", Severity.INFO, Kind.LAUNCH_VERDICT, said, "", 1), *unseen]
    if verdict.outcome == "machine_error":
        return [Finding(verdict.key or "", Severity.INFO, Kind.LIMITATION,
                        f"not checked on this machine ({verdict.reason}): {where} failed for a reason of this "
                        f"machine, not of the config: {verdict.exc_type}: {verdict.message}{assumed}",
                        "run check --launch where the job runs (GPU, enough ranks)", _line(config, verdict.key)),
                *unseen]
    raiser = verdict.raised_by or "deepspeed"
    at = f" at {verdict.site}" if verdict.site else ""
    return [Finding(verdict.key or "", Severity.ERROR, Kind.LAUNCH_VERDICT,
                    f"{where}: {raiser} raises {verdict.exc_type}{at}: {verdict.message}{assumed}",
                    "see the other findings for this key" if verdict.key else "see DeepSpeed's message",
                    _line(config, verdict.key)), *unseen]
