"""DeepSpeed's CPU ops for dsfields' launches: where they are built, built once, outside a launch's time budget.

The op cache of the launch worker (:mod:`dsfields.launch.launcher`) and of the HF Trainer witness: one extensions
directory per DeepSpeed (:func:`own_extensions_dir`), torch's stale build locks cleared (:func:`guard_ops_dir`),
one ninja per environment, the CPU description read once, and an op one release built loaded by another with
the same files (:func:`share_built_ops`). Apart from the launch itself, which only asks for the ops.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dsfields.launch.quickcxx import BUILD_ENV as OPS_BUILD_ENV
from dsfields.launch.quickcxx import file_digest


def own_extensions_dir() -> None:
    """Give this DeepSpeed its own JIT-op cache (``TORCH_EXTENSIONS_DIR``) unless the caller chose one.

    torch keys its cache by op name only: two DeepSpeed releases (or two checkouts) building
    ``fused_adam`` into the shared ``~/.cache/torch_extensions`` rebuild each other's op on every
    start, and wait on each other's lock meanwhile (minutes). One directory per DeepSpeed source path
    keeps each release's build.
    """
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        return
    import hashlib
    import importlib.util

    spec = importlib.util.find_spec("deepspeed")
    origin = str(spec.origin) if spec is not None else "none"
    digest = hashlib.sha256(origin.encode()).hexdigest()[:10]
    os.environ["TORCH_EXTENSIONS_DIR"] = str(_own_extensions_root() / digest)


OPS_CACHE_ENV = "DSFIELDS_OPS_CACHE"
"""dsfields' op cache (``~/.cache/dsfields``), handed to a sandboxed worker whose ``HOME`` is its temp folder."""


def _own_extensions_root() -> Path:
    explicit = os.environ.get(OPS_CACHE_ENV)
    if explicit:
        return Path(explicit) / "torch_extensions"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "dsfields" / "torch_extensions"


CPU_OPS = ("CPUAdamBuilder", "FusedAdamBuilder", "CPUAdagradBuilder", "CPULionBuilder", "PinMemoryBuilder",
           "ShareMemCommBuilder")
"""The ops DeepSpeed JIT-builds on a CPU machine (accelerator/cpu_accelerator.py:326 get_op_builder)."""


_OPS_GUARD: list[Any] = []
"""The open lock file of :func:`guard_ops_dir`, kept for the process's lifetime."""


def guard_ops_dir() -> None:
    """Clear torch's stale build locks in dsfields' own extensions directory; then hold it shared, for life.

    torch guards each op's build directory with a ``lock`` file that a killed build leaves behind, and
    every later load waits on it forever. Every dsfields process that may build or load an op holds a
    shared ``flock`` on the directory for its lifetime (the kernel drops it when the process dies). One
    that gets the exclusive lock without waiting is alone, so every torch lock there was left by a dead
    build: it removes them, then holds the shared lock like the others. Ops still load lazily, when a
    launch needs them. A directory the caller chose (``TORCH_EXTENSIONS_DIR``) may be shared with
    others, so its locks are left alone.
    """
    if _OPS_GUARD:
        return
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    own_extensions_dir()
    root = Path(os.environ["TORCH_EXTENSIONS_DIR"])
    root.mkdir(parents=True, exist_ok=True)
    import fcntl

    handle = open(root / ".dsfields-ops.lock", "w")  # held open until the process exits
    if root.parent == _own_extensions_root():
        from dsfields.launch import quickcxx

        quickcxx.install(_own_extensions_root().parent)  # dsfields' own builds only: see quickcxx
        # torch puts ccache (or sccache), when on PATH, before the compiler: it would hand the wrapper its own
        # reordered arguments (the source last) and no precompiled header would apply. The wrapper decides.
        os.environ["TORCH_NO_COMPILER_WRAPPER"] = "1"
        # The release's path is mapped away, so another release's identical objects are shared: as imported (the
        # op sources' paths) and resolved (a cache reached through a symlink).
        found = _release_root(resolve=False)
        if found is not None:
            os.environ[quickcxx.RELEASE_ENV] = os.pathsep.join(dict.fromkeys([str(found), str(found.resolve())]))
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # other dsfields processes are alive: their locks may be builds in progress
        else:
            for stale in root.glob("*/lock"):
                stale.unlink(missing_ok=True)
    fcntl.flock(handle, fcntl.LOCK_SH)
    _OPS_GUARD.append(handle)
    pin_ninja(Path(sys.executable).parent)
    if os.environ.get(OPS_BUILD_ENV) in ("ccache", "ccache-pch"):
        # ccache's own store beside the ops (an empty ops cache is a cold ccache too); paths of different
        # releases left out of its hash where it can (base dir, no working-directory hash).
        os.environ.setdefault("CCACHE_DIR", str(_own_extensions_root().parent / "ccache"))
        os.environ.setdefault("CCACHE_BASEDIR", str(_own_extensions_root().parent.parent))
        os.environ.setdefault("CCACHE_NOHASHDIR", "1")
        if os.environ[OPS_BUILD_ENV] == "ccache-pch":  # what ccache's manual asks of a precompiled header
            os.environ.setdefault("CCACHE_SLOPPINESS", "pch_defines,time_macros")
    share_built_ops()
    remember_cpu_info()  # before DeepSpeed imports: releases up to 0.18 bind get_cpu_info at import


def pin_ninja(bin_dir: Path) -> None:
    """Build ops with the ninja of this interpreter's environment, whatever ``PATH`` the caller has.

    torch runs ``ninja`` from ``PATH``. The pip ``ninja`` beside torch (1.13, build log v7) and a system one
    (1.11, log v5) each find the other's ``.ninja_log`` "too old" or "invalid" and start over: every op is
    recompiled (minutes each) whenever the caller's ``PATH`` changes, e.g. with or without an activated
    virtualenv. One ninja per environment keeps the builds.
    """
    ninja = bin_dir / "ninja"
    if not (ninja.is_file() and os.access(ninja, os.X_OK)):
        return
    paths = os.environ.get("PATH", "").split(os.pathsep)
    if paths[:1] != [str(bin_dir)]:
        os.environ["PATH"] = os.pathsep.join([str(bin_dir), *(p for p in paths if p != str(bin_dir))])


def remember_cpu_info() -> None:
    """Ask py-cpuinfo once per machine, not once per op load and per ZeRO-Offload launch.

    ``cpuinfo.get_cpu_info()`` runs a Python subprocess probing the CPU (2 s idle, over 10 s on a busy
    machine). DeepSpeed calls it for every op it loads (``cpu_arch``, ``simd_width``) and, up to 0.18, in
    every ``DeepSpeedCPUAdam`` / ``DeepSpeedCPULion`` constructor: a cost of this machine, paid many times
    per worker and for every release. Its answer is kept in this process and on disk, keyed by the
    processor lines of ``/proc/cpuinfo`` (another machine, another key).
    """
    try:
        import cpuinfo
    except ImportError:
        return
    if getattr(cpuinfo.get_cpu_info, "_dsfields_remembered", False):
        return
    original = cpuinfo.get_cpu_info
    cache: dict[str, Any] = {}

    def get_cpu_info() -> Any:
        if "info" not in cache:
            cache["info"] = _cpu_info_from_disk(original)
        return copy.deepcopy(cache["info"])

    get_cpu_info._dsfields_remembered = True  # type: ignore[attr-defined]
    cpuinfo.get_cpu_info = get_cpu_info
    if hasattr(cpuinfo, "cpuinfo"):  # the package re-exports its module's function: both names
        cpuinfo.cpuinfo.get_cpu_info = get_cpu_info


def _cpu_info_from_disk(original: Callable[[], Any]) -> Any:
    import hashlib

    try:
        lines = [line for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.split(":")[0].strip() in ("vendor_id", "model name", "flags", "cpu family", "model")]
    except OSError:
        return original()
    key = hashlib.sha256("\n".join(sorted(set(lines))).encode()).hexdigest()[:16]
    path = _own_extensions_root().parent / "cpuinfo" / f"{key}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    info = original()
    with contextlib.suppress(Exception):
        from dsfields.model.store import write_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(info, sort_keys=True))
    return info


OPS_MANIFEST = "dsfields-manifest.json"
"""Written into an op's build directory after it built and loaded: what it was built from (see share_built_ops)."""


def share_built_ops() -> None:
    """Let this process load an op another release built from the same files, instead of compiling it again.

    Every release has its own extensions directory (:func:`own_extensions_dir`), so each would compile all
    six CPU ops (1-2 min each on 2 cores: most of a cold release's launch witness), although most releases
    share most op sources with a neighbour. torch cannot reuse another directory's build (its ninja file names
    the other release's source paths), so ``torch.utils.cpp_extension.load`` is wrapped: after a load, the
    build directory gets :data:`OPS_MANIFEST`, the op's key (name, sources and include paths relative to the
    release, flags, torch, Python, machine) and the hash of every file of the release it was compiled from
    (ninja's own dependency list: sources and every header they included). A later load whose key matches and
    whose release has byte-identical copies of all those files imports that build's ``.so``: the same inputs,
    the same compiler, the same op. Anything else (no manifest, a file that differs) builds as before.
    DeepSpeed calls ``from torch.utils.cpp_extension import load`` inside ``jit_load``, so the wrapper is seen.
    """
    try:
        import torch.utils.cpp_extension as cpp_extension
    except ImportError:
        return
    original = cpp_extension.load
    if getattr(original, "_dsfields_shared", False):
        return
    import inspect

    # 0.16.7 on passes with_cuda=None, earlier releases leave it out: the same build either way.
    defaults = {name: p.default for name, p in inspect.signature(original).parameters.items()
                if p.default is not inspect.Parameter.empty}

    def load(name: str, sources: Any, *args: Any, **kwargs: Any) -> Any:
        if os.environ.get(OPS_BUILD_ENV) in ("ccache", "ccache-pch"):  # measured: no sharing; ninja, ccache decide
            with _building(name):  # still outside the launch's time budget
                return original(name, sources, *args, **kwargs)
        root = _release_root()
        if root is None or args or kwargs.get("build_directory") or not os.environ.get("TORCH_EXTENSIONS_DIR"):
            return original(name, sources, *args, **kwargs)
        own = Path(os.environ["TORCH_EXTENSIONS_DIR"]) / name
        key = op_key(name, sources, kwargs, root, defaults)

        def shared() -> Path | None:
            return own if _manifest_matches(own, key, root) else find_shared_op(name, key, root, _own_extensions_root())

        found = shared()
        if found is None:
            # Neighbouring releases run side by side (`snapshot --jobs 2`, newest first) and mostly share their
            # ops: one builds while the other waits, then imports that build instead of compiling it again.
            with _building(name), _build_lock(name, key):
                found = shared()
                if found is None:
                    (own / OPS_MANIFEST).unlink(missing_ok=True)  # a build follows: the old manifest no longer holds
                    module = original(name, sources, **kwargs)
                    with contextlib.suppress(Exception):  # no manifest: this op is just not shared
                        write_op_manifest(own, key, root)
                    return module
        # Built from these very files: import it, no ninja run (~1 s per op saved).
        return cpp_extension._import_module_from_library(name, str(found), True)

    load._dsfields_shared = True  # type: ignore[attr-defined]
    cpp_extension.load = load


@contextlib.contextmanager
def _build_lock(name: str, key: str) -> Iterator[None]:
    """Held while one process builds op ``name`` with ``key``: every other builder of the same key waits.

    A ``filelock``: the kernel drops it when a builder dies, so a killed build never blocks the next one.
    """
    from dsfields.model.safewrite import lock_file

    with lock_file(_own_extensions_root() / ".build-locks" / f"{name}-{key[:24]}.lock"):
        yield


BUILD_NOTICES: list[Callable[[dict[str, Any]], None]] = []
"""Told ``{"building": op}`` when a build starts and ``{"built": op, "seconds": s}`` when it ends (the worker
tells its client, which waits longer meanwhile and shows the progress)."""

OP_DIRS = ("cpu_adam", "fused_adam", "cpu_adagrad", "cpu_lion", "pin_memory", "deepspeed_shm_comm")
"""The build folders of :data:`CPU_OPS` in an extensions directory (torch names them by the op's name)."""
OP_SECONDS = 50
"""One op's build on this 2-core machine through quickcxx, cores free (0.19.8's six: 5 min); scaled by the load."""
OP_MEGABYTES = 4
"""One op's share of the cache: its build folder (~2.3 MB) and its objects (~1.7 MB), measured for 0.19.8."""
PCH_SETS, PCH_MEGABYTES = 3, 800
"""Precompiled torch headers quickcxx may build for 0.19.8's ops (one per flag set), ~0.75 GB each."""


def build_estimate() -> dict[str, Any]:
    """What building the ops not yet in this worker's extensions directory will cost: minutes, megabytes, where."""
    own = Path(os.environ.get("TORCH_EXTENSIONS_DIR", ""))
    missing = [op for op in OP_DIRS if not (own / op / f"{op}.so").is_file()]
    cache = _own_extensions_root().parent if own.parent == _own_extensions_root() else own
    pch = cache / "pch"
    headers = 0 if own.parent != _own_extensions_root() or (pch.is_dir() and any(pch.iterdir())) else PCH_SETS
    # Compiles share the cores with whatever else runs: a machine loaded past its cores builds that much slower.
    load = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)) if hasattr(os, "getloadavg") else 1.0
    return {"ops": missing, "minutes": max(1, round(len(missing) * OP_SECONDS * load / 60)),
            "megabytes": len(missing) * OP_MEGABYTES, "pch_megabytes": headers * PCH_MEGABYTES, "cache": str(cache)}


def _notify(event: dict[str, Any]) -> None:
    for notice in BUILD_NOTICES:
        with contextlib.suppress(Exception):
            notice(event)


@contextlib.contextmanager
def _building(name: str) -> Iterator[None]:
    """An op build (1-2 min on 2 cores) runs outside the launch's time budget.

    A launch timeout that fires mid-build leaves a broken cache and turns a config that reads real keys
    into a machine error; the build is this machine's set-up, not the launch, so the launch's alarm is
    stopped for it and re-armed with what was left after it.
    """
    started = time.perf_counter()
    _notify({"building": name, "estimate": build_estimate()})
    left, _ = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        _notify({"built": name, "seconds": round(time.perf_counter() - started, 1)})
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, left)


def _release_root(resolve: bool = True) -> Path | None:
    """The folder holding the importable ``deepspeed`` package (a release's source or site-packages).

    ``resolve=False``: the absolute path as imported (symlinks kept), which DeepSpeed's op sources are named by.
    """
    import importlib.util

    spec = importlib.util.find_spec("deepspeed")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return None
    return Path(locations[0]).resolve().parent if resolve else Path(os.path.abspath(locations[0])).parent


def _relative(text: str, root: Path) -> str:
    return text.replace(str(root) + os.sep, "<release>/")


def op_key(name: str, sources: Any, kwargs: dict[str, Any], root: Path, defaults: dict[str, Any] | None = None) -> str:
    """What an op build depends on besides file contents: its name, paths within the release, flags, tools.

    An argument passed with torch's default value (``defaults``) is the same build as one left out.
    """
    import hashlib
    import platform

    import torch

    def norm(value: Any) -> Any:
        if isinstance(value, str):
            return _relative(value, root)
        if isinstance(value, (list, tuple)):
            return [norm(v) for v in value]
        return value if value is None or isinstance(value, (bool, int, float)) else repr(value)

    data = {"name": name, "sources": norm([sources] if isinstance(sources, str) else list(sources)),
            "options": {k: norm(v) for k, v in sorted(kwargs.items()) if k not in ("verbose", "keep_intermediates")
                        and not (defaults and k in defaults and defaults[k] == v)},
            "torch": torch.__version__, "python": list(sys.version_info[:3]), "machine": platform.machine(),
            "compiler": os.environ.get("CXX", "c++")}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def write_op_manifest(build_dir: Path, key: str, root: Path) -> None:
    """Record what ``build_dir``'s op was compiled from: ninja's dependencies that lie in the release."""
    listed = subprocess.run(["ninja", "-C", str(build_dir), "-t", "deps"], capture_output=True, text=True,
                            timeout=30, check=True).stdout
    deps: dict[str, str] = {}
    for line in listed.splitlines():
        if line.startswith((" ", "\t")) and line.strip():
            path = Path(line.strip()).resolve()
            if path.is_relative_to(root):
                digest = file_digest(path)
                if digest is None:
                    return  # a dependency is gone: the build cannot be vouched for
                deps[str(path.relative_to(root))] = digest
    if not deps:
        return  # no dependency list (ninja kept none): nothing to compare another release against
    from dsfields.model.store import write_atomic

    write_atomic(build_dir / OPS_MANIFEST, json.dumps({"key": key, "deps": deps}, indent=1, sort_keys=True) + "\n")


def _manifest_matches(build_dir: Path, key: str, root: Path) -> bool:
    try:
        manifest = json.loads((build_dir / OPS_MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("key") != key or not manifest.get("deps") or not (build_dir / f"{build_dir.name}.so").is_file():
        return False
    return all(file_digest(root / rel) == digest for rel, digest in manifest["deps"].items())


def find_shared_op(name: str, key: str, root: Path, extensions_root: Path) -> Path | None:
    """Another release's build directory of op ``name`` built from files identical to ``root``'s, if any."""
    for manifest in sorted(extensions_root.glob(f"*/{name}/{OPS_MANIFEST}")):
        if _manifest_matches(manifest.parent, key, root):
            return manifest.parent
    return None
