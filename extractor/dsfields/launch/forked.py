"""The extractor's one way to fork: :func:`fork`, and :class:`Forked`, one function's pickled result from a child.

:func:`fork` is the protocol every forked child follows (the launch worker,
:class:`~dsfields.launch.worker.ForkedWorker`, and :class:`Forked`): the parent's buffered output flushed
first, the child without the parent's exit handlers, its end an ``os._exit`` with the body's code (1 if it raised).
:class:`Forked` has two jobs: the static scan while DeepSpeed imports, and the value probes while the parsed-state
witnesses run. A plain ``fork`` and a pipe, not a process pool: the child ends itself once it has sent its result,
so a parent that exits early or at once (``dsfields extract`` skips interpreter finalization) leaves no worker
waiting for work, and :meth:`Forked.cancel` ends a child whose result is no longer wanted.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Any


def fork(child: Callable[[], int]) -> int:
    """Fork; the child runs ``child()`` and ends with its return code (1 if it raised), the parent gets its pid.

    The parent's buffered output is flushed first (or the child would write it again), the child drops the
    parent's exit handlers and ends with ``os._exit`` after flushing its own output: nothing of the parent's
    interpreter finalization runs twice. ``child`` reports its own errors (it knows where its stderr goes).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            atexit._clear()  # the parent's exit handlers are not the child's
            code = child()
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    return pid


class ForkFailed(Exception):
    """The child ended without a result (it raised, or was killed); the caller does the work itself."""


class Forked:
    """A child process computing ``fn()``; :meth:`result` waits for it, :meth:`cancel` ends it."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        read_end, write_end = os.pipe()

        def child() -> int:  # compute, send; an exception is a child without a result (ForkFailed)
            os.close(read_end)
            value = fn()
            with os.fdopen(write_end, "wb") as out:
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            return 0

        pid = fork(child)
        os.close(write_end)
        self.pid: int | None = pid
        self._read_end = read_end

    def result(self) -> Any:
        """The child's return value; :class:`ForkFailed` if it gave none."""
        if self.pid is None:
            raise ForkFailed("cancelled")
        with os.fdopen(self._read_end, "rb") as source:
            data = source.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if status != 0 or not data:
            raise ForkFailed(f"the child ended with status {status}")
        return pickle.loads(data)  # our own child's bytes, from a pipe nobody else holds

    def cancel(self) -> None:
        """End the child and reap it (its result is not wanted)."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self._read_end)
        os.waitpid(self.pid, 0)
        self.pid = None


def can_fork() -> bool:
    """Fork only where it exists and no other thread is alive (a forked child gets only this thread,
    and a lock another thread held would stay locked in it)."""
    import threading

    return hasattr(os, "fork") and threading.active_count() == 1
