"""The launch worker's process tree: everything it starts (ninja, sh, g++, cc1plus) ends with it.

A launch worker may be mid-build when its client gives up (a timeout, Ctrl-C, SIGTERM, or the client killed
outright): ninja runs each compile in a process group of its own, so killing the worker's group alone left
``sh``/``g++``/``cc1plus`` running with parent 1. Here:

* the worker is a child subreaper (Linux ``prctl``): a compile whose parent dies is re-parented to the worker,
  not to init, so :func:`descendants` always finds the whole tree while the worker lives;
* :func:`end_tree` kills that tree until none of it is left (stopped first, so nothing forks meanwhile);
* the client holds the write end of a *lifeline* pipe (:func:`hold_lifeline`): when it closes, because the
  client is done or because it died (the kernel closes a dead process's pipes), a thread of the worker ends
  the tree, removes the worker's sandbox folder and exits. SIGTERM to the worker does the same.

Stdlib only: this runs in the worker before DeepSpeed (or anything slow) is imported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

LIFELINE_ENV = "DSFIELDS_LIFELINE"
"""The file descriptor of the lifeline's read end in the worker."""
SANDBOX_ENV = "DSFIELDS_SANDBOX"
"""The worker's sandbox folder, removed by the worker when its client is gone."""


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live (not zombie) process, from ``/proc``."""
    out: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 2 and fields[0] not in ("Z", "X"):
            out[int(name)] = int(fields[1])
    return out


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children first found, then theirs)."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def end_tree(root: int, reap: bool = False, rounds: int = 100) -> list[int]:
    """Kill every process below ``root`` until none is left; the pids killed.

    Each round stops the tree it sees (a stopped process forks nothing), then kills it: a process orphaned
    meanwhile comes back to ``root`` when ``root`` is a subreaper and is found in the next round.
    ``reap``: ``root`` is this process, which collects its dead children itself.
    """
    killed: list[int] = []
    for _ in range(rounds):
        tree = descendants(root)
        if not tree:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in tree:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        killed.extend(tree)
        if reap:
            _reap()
        time.sleep(0.02)
    return killed


def become_subreaper() -> bool:
    """Orphans of this process's descendants come to it, not to init (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


OWN_FOLDERS: list[Path] = []
"""Folders of this worker removed when it is abandoned (its working folder: atexit does not run then)."""


def _abandon(code: int) -> None:
    """The client is gone: end the tree, remove the sandbox, exit at once (no finalizers that could hang)."""
    end_tree(os.getpid(), reap=True)
    for folder in [*OWN_FOLDERS, os.environ.get(SANDBOX_ENV)]:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    os._exit(code)


def hold_lifeline() -> None:
    """In the worker: end everything when the client's end of the lifeline closes, or on SIGTERM/SIGHUP."""
    become_subreaper()
    fd = os.environ.pop(LIFELINE_ENV, None)
    if fd is not None and fd.isdigit():
        with contextlib.suppress(OSError):
            os.set_inheritable(int(fd), False)  # the worker's own: nothing it starts holds it

        def watch(fd: int = int(fd)) -> None:
            with contextlib.suppress(OSError):
                while os.read(fd, 1):
                    pass
            _abandon(3)

        threading.Thread(target=watch, name="dsfields-lifeline", daemon=True).start()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda signum, frame: _abandon(128 + signum))


def remove_folder(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
