"""The client of a launch worker: what ``check --launch`` and the launch witness call to launch a config.

:class:`LaunchClient` starts ``python -m dsfields.launch --jsonl``
(:func:`dsfields.launch.worker.serve_worker`) sandboxed, sends one request per config with a timeout
each, and restarts the worker when a launch kills or hangs it, so one bad config never takes the batch down.
It imports neither DeepSpeed nor torch: the worker does.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from dsfields.launch.ops import OP_DIRS, OPS_CACHE_ENV
from dsfields.launch.verdict import DEFAULT_TIMEOUT, LaunchVerdict, Style
from dsfields.launch.world import World
from dsfields.model.errors import DsfieldsError

if TYPE_CHECKING:  # the client never runs the worker's code in its own process
    from dsfields.launch.worker import ForkedWorker

BUILD_TIMEOUT = 900.0
"""Seconds the client waits for one JIT op build (outside the launch's budget; 1-2 min each on 2 busy cores)."""


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
    """Runs the launch worker (``python -m dsfields.launch --jsonl``) as a subprocess; restarts it when a
    launch kills or hangs it.

    ``forked``: a :class:`~dsfields.launch.worker.ForkedWorker` already started, used for the first start
    (a restart is a subprocess).

    A subprocess worker is sandboxed (``sandbox``): it runs in a session of its own with its working folder,
    ``HOME`` and ``TMPDIR`` in a ``dsfields-launch-*`` folder of the caller's temp folder (dsfields' op cache is
    passed by name, :data:`OPS_CACHE_ENV`), and holds a lifeline to this process
    (:mod:`dsfields.launch.process_tree`): on a timeout, on :meth:`close`, on SIGINT/SIGTERM here, and when this
    process dies, the worker and everything it started (ninja, compilers) are killed and the folder removed.
    Config paths are pointed into the folder by the caller (:func:`dsfields.check.launch_check.redirect_paths`:
    relative paths land in the worker's working folder).
    """

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None,
                 start_timeout: float = START_TIMEOUT, warm_up: bool = True, forked: ForkedWorker | None = None,
                 sandbox: bool = True, progress: Callable[[str], None] | None = None,
                 build_budget: float | None = None, world: World | None = None) -> None:
        self.forked = forked
        self.world = world or World(1)
        """The rank the worker plays (:mod:`dsfields.launch.world`); every restart plays it again."""
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
        self._pending = b""  # what was read from the worker's pipe past the last whole line
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
    def for_check(cls, world: tuple[int, int, int | None] | None = None,
                  start_timeout: float = CHECK_START_TIMEOUT) -> LaunchClient:
        """``check --launch``: one launch, a start bounded to :data:`CHECK_START_TIMEOUT` (``--launch-timeout``),
        builds shown on stderr; ``world``: (N, rank, ranks per node or None) of ``check --launch --world-size N``
        (check passes plain values: it may not import this package)."""
        def progress(line: str) -> None:
            print(f"dsfields check --launch: {line}", file=sys.stderr, flush=True)

        return cls(warm_up=False, start_timeout=start_timeout, progress=progress,
                   build_budget=CHECK_BUILD_BUDGET, world=World(*world) if world else None)

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
            from dsfields.launch.process_tree import SANDBOX_ENV

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
            from dsfields.launch.process_tree import LIFELINE_ENV

            if self.sandbox:
                self.folder = Path(tempfile.mkdtemp(prefix="dsfields-launch-"))
            env = self._child_env()
            argv = [self.python, "-m", "dsfields.launch", "--jsonl",
                    *([] if self.warm_up else ["--no-warm-up"]), *(self.world.argv() if self.world.fake else [])]
            read_end, self._lifeline = os.pipe()
            env[LIFELINE_ENV] = str(read_end)
            # stderr to a file, not a pipe nobody reads (DeepSpeed is chatty): its last line says why a start failed.
            errors = tempfile.TemporaryFile()
            try:
                self._pending = b""  # a new worker: nothing of the last one's pipe
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
                                        "(stopped; python -m dsfields.launch --build-ops builds them ahead)")
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

    def _buffered_line(self) -> str | None:
        """A whole line already read from the worker's pipe, or None. The pipe is read with ``os.read`` into our own
        buffer: a buffered ``readline`` after ``select`` keeps a second line (an op's ``built`` notice and the
        answer, sent together) where ``select`` cannot see it, and the answer then waited for its timeout."""
        pending = getattr(self, "_pending", b"")
        if b"\n" not in pending:
            return None
        line, _, self._pending = pending.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"

    def _raw_line(self) -> str | None:
        """Read what the pipe holds: a whole line (``""`` at end of file), or None while a line is incomplete."""
        assert self.proc is not None and self.proc.stdout is not None
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            rest, self._pending = getattr(self, "_pending", b""), b""
            return rest.decode("utf-8", "replace") if rest else ""
        self._pending = getattr(self, "_pending", b"") + chunk
        return self._buffered_line()

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
            line = self._buffered_line()
            ready = [self.proc.stdout] if line is not None else select.select([self.proc.stdout], [], [], wait)[0]
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
            if line is None:
                line = self._raw_line()
                if line is None:  # part of a line: wait for the rest
                    continue
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
               assume_fp16: bool = False, hf_pair: tuple[str, str] | None = None) -> LaunchVerdict:
        """As :meth:`~dsfields.launch.launcher.Launcher.launch`, in the worker; a worker that dies or hangs is a
        machine error.

        Every path the config names is pointed into the worker's folder first (``check --launch`` has done so
        already, to name them in its verdict): no launch through a client writes where a config says."""
        from dsfields.launch.paths import redirect_paths

        if isinstance(config, dict):
            config = redirect_paths(config)[0]
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        request = {"config": config, "style": style, "optimizer_from_code": optimizer_from_code, "trace": trace,
                   "timeout": timeout, "fill_auto": fill_auto, "assume_fp16": assume_fp16}
        if hf_pair:  # only when chosen: a committed record's requests stay as they were
            request["hf_pair"] = list(hf_pair)
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
        from dsfields.launch.process_tree import end_tree, remove_folder

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
