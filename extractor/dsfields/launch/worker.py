"""The launch worker: a process answering launch requests as JSON lines, one verdict per line.

``python -m dsfields.launch --jsonl`` (:func:`serve_worker`) reads requests on stdin and writes
:class:`~dsfields.launch.verdict.LaunchVerdict` lines on stdout, after one ``ready`` line; while an op
builds, ``building`` / ``built`` notices go out first. It is started by
:class:`~dsfields.launch.client.LaunchClient` as a subprocess, or forked by :class:`ForkedWorker` from
a process that has not imported DeepSpeed yet. A launch changes process-wide state: this is why launches run
here and never in the caller.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from typing import Any

from dsfields.launch.forked import fork
from dsfields.launch.launcher import Launcher
from dsfields.launch.ops import BUILD_NOTICES
from dsfields.launch.verdict import DEFAULT_TIMEOUT
from dsfields.launch.world import World


def answer_stream() -> Any:
    """The process's stdout, for answers only: from now on everything DeepSpeed, torch and the JIT loaders print
    (C++ included) goes to stderr."""
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return results


def serve_worker(warm_up: bool = True, world: World | None = None) -> int:
    """``python -m dsfields.launch --jsonl``: a ``ready`` line, then :func:`serve` stdin until it ends.

    Whatever the worker starts (ninja, compilers) ends with it or with its client (the lifeline); builds during
    start-up (shm_comm, the warm-up's fused_adam) extend the client's wait too (:func:`tell_builds`).
    """
    from dsfields.launch.process_tree import hold_lifeline

    hold_lifeline()
    results = answer_stream()
    tell_builds(results)
    launcher = Launcher(warm_up=warm_up, world=world)
    results.write(json.dumps({"ready": True, "import_seconds": round(launcher.import_seconds, 3),
                              "start_seconds": round(launcher.start_seconds, 3), "about": launcher.about(),
                              "support": launcher.support}) + "\n")
    results.flush()
    serve(sys.stdin, results, launcher)
    return 0


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
    """Answer JSON-line requests (config, style, optimizer_from_code, fill_auto, assume_fp16, hf_pair, trace,
    timeout).

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
                                  bool(request.get("assume_fp16")), request.get("hf_pair"))
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
    """The launch worker (:func:`serve_worker`) forked from this process, as ``subprocess.Popen`` is used.

    Made by :meth:`start` before this process imports DeepSpeed, after :data:`PRELOADED`: the child takes
    ``env`` as its environment (and any ``PYTHONPATH`` entry it adds, e.g. the CPU stubs, on ``sys.path``) and
    imports DeepSpeed itself, as a fresh ``python -m dsfields.launch --jsonl`` would.
    """

    def __init__(self, pid: int, stdin: Any, stdout: Any, errors: Any, lifeline: int | None = None) -> None:
        self.pid = pid
        self.lifeline = lifeline
        """The write end of the worker's lifeline (:mod:`dsfields.launch.process_tree`), taken over by its client."""
        self.stdin = stdin
        self.stdout = stdout
        self.errors = errors
        """The worker's stderr (a temporary file): its last line says why a start failed."""
        self.returncode: int | None = None

    @classmethod
    def start(cls, env: dict[str, str], warm_up: bool = True, world: World | None = None) -> ForkedWorker | None:
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
                from dsfields.launch.process_tree import LIFELINE_ENV

                os.environ[LIFELINE_ENV] = str(life_read)
                sys.path[1:1] = [p for p in added if p not in sys.path]
                code = serve_worker(warm_up, world)
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

