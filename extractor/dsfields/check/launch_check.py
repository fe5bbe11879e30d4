"""``check --launch``: run ``deepspeed.initialize`` itself on the config, and report its verdict on the key.

The launch needs DeepSpeed, which only :mod:`dsfields.extract` may import: the command line passes
:class:`dsfields.launch.client.LaunchClient` in as ``client`` (a worker subprocess on CPU: gloo, world
size 1, a tiny model). The config is launched as the HF Trainer / accelerate pass it (``--hf``) or as
plain code does (with ``--optimizer-from-code``, an AdamW passed in). A failure this machine causes
(no fp16 kernels, CUDA-only ops, async_io, too few ranks) is said as "not checked on this machine",
never as agreement; for fp16 the launch is tried again with the CPU claiming fp16, so the config path
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


def launch_findings(version: str, config: Any, options: Options, client: Any) -> list[Finding]:
    """DeepSpeed's own verdict on ``config`` (a :class:`~dsfields.configfile.ConfigFile`) as findings."""
    style = "hf" if options.hf else "plain"
    code = options.optimizer_from_code and not options.hf
    how = "as the HF Trainer passes it" if options.hf else (
        "from plain code with an optimizer passed in" if code else "from plain code, optimizer from the config")
    if not isinstance(config.data, dict):
        return []
    data, redirected = redirect_paths(config.data, path_keys(version))
    pair = {"hf_pair": options.hf_pair} if options.hf and options.hf_pair else {}  # the chosen pair's programs
    verdict = client.launch(data, style, code, timeout=LAUNCH_TIMEOUT, **pair)
    assumed = ""
    if verdict.outcome == "machine_error" and verdict.reason == "fp16-on-cpu":
        again = client.launch(data, style, code, timeout=LAUNCH_TIMEOUT, assume_fp16=True, **pair)
        if again.outcome != "machine_error":
            verdict, assumed = again, " (this CPU has no fp16: launched with fp16 assumed, so the config path " \
                                      "is judged, not the kernels)"
    if redirected:  # a dry run writes nowhere the config says (nvme swap folders, monitor logs)
        assumed += f" (paths pointed into the launch's temp folder: {', '.join(redirected)})"
    where = f"deepspeed.initialize (DeepSpeed {version}, CPU, world size 1) {how}"
    if verdict.outcome == "launched":
        return [Finding("", Severity.INFO, Kind.LAUNCH_VERDICT, f"{where}: launched{assumed}", "", 1)]
    if verdict.outcome == "machine_error":
        return [Finding(verdict.key or "", Severity.INFO, Kind.LIMITATION,
                        f"not checked on this machine ({verdict.reason}): {where} failed for a reason of this "
                        f"machine, not of the config: {verdict.exc_type}: {verdict.message}{assumed}",
                        "run check --launch where the job runs (GPU, enough ranks)", _line(config, verdict.key))]
    raiser = verdict.raised_by or "deepspeed"
    at = f" at {verdict.site}" if verdict.site else ""
    return [Finding(verdict.key or "", Severity.ERROR, Kind.LAUNCH_VERDICT,
                    f"{where}: {raiser} raises {verdict.exc_type}{at}: {verdict.message}{assumed}",
                    "see the other findings for this key" if verdict.key else "see DeepSpeed's message",
                    _line(config, verdict.key))]
