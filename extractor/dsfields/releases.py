"""Run code against any DeepSpeed PyPI release without installing it.

Installing each DeepSpeed release into its own environment is slow (torch alone is gigabytes) and may
try to build CUDA ops. Instead, every release is *imported from its unpacked sdist*:

* :func:`fetch_source` downloads a release's sdist once (``pip download --no-deps``) and unpacks it
  into the user cache (see :func:`cache_dir`); the ``deepspeed`` package is then importable by putting
  the returned directory on ``PYTHONPATH``.
* :func:`environment_for` returns the Python of a *shared* virtualenv holding what releases import:
  ``torch==2.13.0`` (CPU, from local disk), DeepSpeed's light runtime dependencies as the release's own
  ``requirements/requirements.txt`` lists them, and what the extractor needs (griffe, jinja2, hjson).
  Releases whose requirements forbid pydantic 2 get a pydantic-1 environment, the others a pydantic-2
  one; environments are keyed by their full specification, so a release needing a dependency no other
  release needs gets an environment of its own, built automatically.
* :func:`run_in_release` runs ``python -m ...`` in that environment with ``PYTHONPATH`` set to
  ``<shim>:<release source>:<dsfields source>``. The shim directory holds a generated
  ``sitecustomize.py`` that loads :mod:`dsfields.extract.compat` (by file path, so no package
  ``__init__`` runs first) and calls its ``install()`` before anything can import DeepSpeed: older
  releases import a few names that the shared environment's newer torch/numpy removed, and the shim
  adds back exactly those names, never touching DeepSpeed's own code.

Everything created is cached and created atomically: work happens in a temporary sibling directory
that is renamed into place only once complete (a marker file inside records completion), under a
per-item file lock, so concurrent callers (threads or processes) build each item once and a crash
leaves nothing half-done behind.

Console scripts inside the environments are not usable (they are built in a temporary directory
and moved); always run ``<env python> -m <module>``, which is what :func:`run_in_release` does.

This module needs ``packaging`` (a DeepSpeed dependency, so present wherever extraction runs) and
``pip`` in the interpreter running it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

log = logging.getLogger(__name__)

PACKAGE = "deepspeed"
"""The PyPI project whose releases this module serves."""

TORCH_REQUIREMENT = "torch==2.13.0"
"""The one torch every environment gets. It is on local disk (a CPU wheel); any other version would
be a multi-gigabyte download, so it is also passed as a constraint that no dependency can override."""

EXTRACTOR_REQUIREMENTS: tuple[str, ...] = ("griffe>=1.0", "jinja2>=3.1", "hjson>=3.1")
"""What dsfields' extractor itself imports inside a release environment."""

BASE_REQUIREMENTS: tuple[str, ...] = (
    "einops",
    "hjson",
    "msgpack",
    "ninja",
    "numpy",
    "packaging",
    "psutil",
    "py-cpuinfo",
    "tqdm",
)
"""The union of DeepSpeed's light runtime dependencies (other than torch and pydantic) over the
releases served. Every environment gets all of them, so that releases share environments; a release
that requires a name missing here gets its own environment (see :func:`environment_for`)."""

IGNORED_REQUIREMENTS = frozenset({"torch"})
"""Release requirements never installed from the release's own line (torch is pinned above)."""

SOURCE_MARKER = ".dsfields-complete"
ENV_MARKER = "dsfields-env.json"
SHIM_MODULE = "sitecustomize.py"
COMPAT_ENV_VAR = "DSFIELDS_COMPAT_FILE"
COMPAT_ADDED_ENV_VAR = "DSFIELDS_COMPAT_ADDED"

_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)*([a-z0-9.+-]*)$", re.IGNORECASE)
_DSFIELDS_SOURCE = Path(__file__).resolve().parent.parent
_COMPAT_FILE = Path(__file__).resolve().parent / "extract" / "compat.py"
_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


# --------------------------------------------------------------------------- cache & locking


def cache_dir() -> Path:
    """Return (creating it) the user cache holding sources, environments and the shim.

    ``$DSFIELDS_CACHE`` if set, else ``$XDG_CACHE_HOME/dsfields``, else ``~/.cache/dsfields``: always
    outside the repository.
    """
    explicit = os.environ.get("DSFIELDS_CACHE")
    if explicit:
        root = Path(explicit).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "dsfields"
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """Hold an exclusive lock called ``name``, across threads of this process and across processes."""
    with _thread_locks_guard:
        thread_lock = _thread_locks.setdefault(name, threading.Lock())
    lock_dir = cache_dir() / "locks"
    lock_dir.mkdir(exist_ok=True)
    with thread_lock, open(lock_dir / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _publish(tmp: Path, final: Path) -> None:
    """Atomically move the finished ``tmp`` directory to ``final`` (replacing an incomplete leftover)."""
    if final.exists():
        log.warning("removing incomplete %s", final)
        shutil.rmtree(final)
    os.rename(tmp, final)


def _run(cmd: Sequence[str | os.PathLike[str]], what: str, **kwargs: object) -> str:
    """Run a helper command, returning its stdout; raise RuntimeError with its output if it fails."""
    log.debug("running %s", " ".join(map(str, cmd)))
    proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {' '.join(map(str, cmd))}\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return str(proc.stdout)


# --------------------------------------------------------------------------- releases


def _check_version(version: str) -> str:
    if not _VERSION_RE.match(version):
        raise ValueError(f"not a release version: {version!r}")
    return version


def _yanked_versions() -> set[str] | None:
    """Versions of :data:`PACKAGE` whose files are all yanked, from the index's JSON Simple API.

    ``pip index versions`` lists yanked releases too. Returns None (and logs why) when the index can't
    be asked, in which case nothing is filtered.
    """
    index = os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"
    url = f"{index.rstrip('/')}/{PACKAGE}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            data = json.load(response)
    except (OSError, ValueError) as exc:
        log.warning("could not read yanked status from %s (%s); yanked releases are not filtered", url, exc)
        return None
    files_by_version: dict[str, list[bool]] = {}
    prefix = f"{PACKAGE}-"
    for entry in data.get("files", []):
        filename: str = entry.get("filename", "")
        if not filename.lower().startswith(prefix):
            continue
        rest = filename[len(prefix):]
        if rest.endswith(".tar.gz"):
            file_version = rest[: -len(".tar.gz")]
        elif rest.endswith((".whl", ".zip")):
            file_version = rest.split("-")[0].removesuffix(".zip")
        else:
            continue
        files_by_version.setdefault(file_version, []).append(bool(entry.get("yanked")))
    return {v for v, yanked in files_by_version.items() if all(yanked)}


def list_releases(min_version: str = "0.8.0", max_version: str | None = None) -> list[str]:
    """Return DeepSpeed's PyPI releases in ``[min_version, max_version]``, oldest first.

    The list comes from ``pip index versions`` (so it honours pip's configuration and leaves out
    pre-releases); releases whose every file is yanked are dropped when the index says so.
    """
    out = _run([sys.executable, "-m", "pip", "index", "versions", PACKAGE], "pip index versions")
    line = next((ln for ln in out.splitlines() if ln.startswith("Available versions:")), None)
    if line is None:
        raise RuntimeError(f"unexpected `pip index versions` output:\n{out}")
    low = Version(min_version)
    high = Version(max_version) if max_version is not None else None
    found: list[Version] = []
    for text in line.split(":", 1)[1].split(","):
        try:
            version = Version(text.strip())
        except InvalidVersion:
            log.debug("skipping unparsable version %r", text)
            continue
        if version.is_prerelease or version < low or (high is not None and version > high):
            continue
        found.append(version)
    yanked = _yanked_versions() or set()
    result = []
    for version in sorted(found):
        if str(version) in yanked:
            log.info("skipping yanked release %s", version)
            continue
        result.append(str(version))
    return result


# --------------------------------------------------------------------------- sources


def _source_root(version: str) -> Path:
    return cache_dir() / "src" / _check_version(version)


def fetch_source(version: str) -> Path:
    """Download and unpack release ``version``'s sdist (once) and return the dir to put on PYTHONPATH.

    The cache entry ``src/<version>/`` holds ``sdist/`` (the unpacked sdist minus its ``deepspeed``
    package: requirements, setup.py, csrc...) and ``lib/deepspeed`` (the package); ``lib`` is returned,
    so nothing but ``deepspeed`` becomes importable.
    """
    root = _source_root(version)
    lib = root / "lib"
    if (root / SOURCE_MARKER).exists():
        return lib
    with _locked(f"src-{version}"):
        if (root / SOURCE_MARKER).exists():
            return lib
        root.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        tmp = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root.parent))
        try:
            download = tmp / "download"
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", PACKAGE,
                  "--disable-pip-version-check", "--no-input", "-d", download, f"{PACKAGE}=={version}"],
                 f"downloading {PACKAGE} {version}")
            archives = sorted(download.glob("*.tar.gz"))
            if len(archives) != 1:
                raise RuntimeError(f"expected one sdist for {PACKAGE} {version}, got {archives}")
            archive = archives[0]
            unpacked = tmp / "unpacked"
            with tarfile.open(archive) as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(unpacked, filter="data")
                else:  # pragma: no cover - Pythons without PEP 706
                    tar.extractall(unpacked)
            tops = [p for p in unpacked.iterdir() if p.is_dir()]
            if len(tops) != 1 or not (tops[0] / PACKAGE / "__init__.py").is_file():
                raise RuntimeError(f"unexpected layout in {archive.name}: {tops}")
            (tmp / "lib").mkdir()
            os.rename(tops[0] / PACKAGE, tmp / "lib" / PACKAGE)
            os.rename(tops[0], tmp / "sdist")
            digest = hashlib.sha256(archive.read_bytes()).hexdigest()
            shutil.rmtree(download)
            unpacked.rmdir()
            (tmp / SOURCE_MARKER).write_text(json.dumps(
                {"version": version, "archive": archive.name, "sha256": digest}, indent=1) + "\n")
            _publish(tmp, root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log.info("fetched %s %s in %.1fs", PACKAGE, version, time.monotonic() - started)
    return lib


def release_requirements(version: str) -> list[Requirement]:
    """The runtime requirements release ``version`` declares (its ``requirements/requirements.txt``).

    Lines with an environment marker that doesn't hold here are dropped. Falls back to the sdist's
    ``PKG-INFO`` ``Requires-Dist`` entries without extras when the file is absent.
    """
    fetch_source(version)
    sdist = _source_root(version) / "sdist"
    lines: list[str] = []
    req_file = sdist / "requirements" / "requirements.txt"
    if req_file.is_file():
        lines = req_file.read_text().splitlines()
    else:
        for line in (sdist / "PKG-INFO").read_text(errors="replace").splitlines():
            if line.startswith("Requires-Dist:") and "extra ==" not in line:
                lines.append(line.split(":", 1)[1])
    requirements = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            log.warning("%s %s: ignoring unparsable requirement %r", PACKAGE, version, line)
            continue
        if requirement.marker is None or requirement.marker.evaluate():
            requirements.append(requirement)
    return requirements


# --------------------------------------------------------------------------- environments


def _pydantic_major(requirements: Sequence[Requirement]) -> int:
    """2 if the release accepts pydantic 2 (what a fresh install would pick), else 1."""
    for requirement in requirements:
        if canonicalize_name(requirement.name) == "pydantic":
            if requirement.specifier.contains("2.999", prereleases=True):
                return 2
            if requirement.specifier.contains("1.999", prereleases=True):
                return 1
            raise RuntimeError(f"pydantic requirement {requirement} accepts neither 1.x nor 2.x")
    return 2


def environment_spec(version: str) -> dict[str, object]:
    """The shared-environment specification release ``version`` needs (see :func:`environment_for`)."""
    requirements = release_requirements(version)
    major = _pydantic_major(requirements)
    names = {canonicalize_name(n) for n in BASE_REQUIREMENTS}
    extra = sorted(
        canonicalize_name(r.name) for r in requirements
        if canonicalize_name(r.name) not in names | IGNORED_REQUIREMENTS | {"pydantic"}
    )
    install = [TORCH_REQUIREMENT, f"pydantic>={major},<{major + 1}", *BASE_REQUIREMENTS, *extra,
               *EXTRACTOR_REQUIREMENTS]
    return {
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "pydantic": major,
        "install": install,
        "constraints": [TORCH_REQUIREMENT],
    }


def _env_name(spec: Mapping[str, object]) -> str:
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    return f"py{spec['python']}-pydantic{spec['pydantic']}-{digest}"


def environment_for(version: str) -> Path:
    """Return the Python of the shared virtualenv that release ``version`` runs in (built once).

    The environment holds :data:`TORCH_REQUIREMENT`, pydantic 1 or 2 (2 unless the release's own
    requirements exclude it), :data:`BASE_REQUIREMENTS`, any further requirement of the release, and
    :data:`EXTRACTOR_REQUIREMENTS`. It is named after a hash of that specification and built in a
    temporary directory renamed into place when complete, so releases with the same specification
    share it and a half-built environment is never used.
    """
    spec = environment_spec(version)
    name = _env_name(spec)
    envs = cache_dir() / "envs"
    final = envs / name
    python = final / "bin" / "python"
    if (final / ENV_MARKER).exists():
        return python
    with _locked(f"env-{name}"):
        if (final / ENV_MARKER).exists():
            return python
        envs.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        log.info("building environment %s for %s %s", name, PACKAGE, version)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=envs))
        try:
            _run([sys.executable, "-m", "venv", tmp], "creating a virtualenv")
            constraints = tmp / "dsfields-constraints.txt"
            constraints.write_text("\n".join(spec["constraints"]) + "\n")  # type: ignore[arg-type]
            tmp_python = tmp / "bin" / "python"
            _run([tmp_python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                  "-c", constraints, *spec["install"]],  # type: ignore[misc]
                 f"installing environment {name}")
            check = "import torch, pydantic; print(torch.__version__, pydantic.VERSION)"
            probe = _run([tmp_python, "-c", check], f"checking environment {name}").split()
            if not probe[0].startswith(TORCH_REQUIREMENT.split("==")[1]):
                raise RuntimeError(f"environment {name} got torch {probe[0]}, not {TORCH_REQUIREMENT}")
            freeze = _run([tmp_python, "-m", "pip", "freeze", "--all"], "pip freeze").splitlines()
            (tmp / ENV_MARKER).write_text(json.dumps({"spec": spec, "freeze": freeze}, indent=1) + "\n")
            _publish(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log.info("built environment %s (torch %s, pydantic %s) in %.0fs",
                 name, probe[0], probe[1], time.monotonic() - started)
    return python


# --------------------------------------------------------------------------- running

_SITECUSTOMIZE = '''\
"""Generated by dsfields.releases: install dsfields' compatibility shim at interpreter start-up.

Loads dsfields/extract/compat.py by file path (named by ${var}) so that no package __init__ can
import DeepSpeed before the shim is in place, calls its install(), and records the names it added
in the ${added} environment variable.
"""
import os as _os

_path = _os.environ.get("${var}")
if _path:
    import importlib.util as _util

    _spec = _util.spec_from_file_location("_dsfields_compat", _path)
    _module = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    _os.environ["${added}"] = ",".join(_module.install())
    del _util, _spec, _module
del _os, _path
'''


def shim_dir() -> Path:
    """Return the directory holding the generated ``sitecustomize.py`` (content-addressed, immutable)."""
    text = _SITECUSTOMIZE.replace("${var}", COMPAT_ENV_VAR).replace("${added}", COMPAT_ADDED_ENV_VAR)
    directory = cache_dir() / "shim" / hashlib.sha256(text.encode()).hexdigest()[:10]
    if not (directory / SHIM_MODULE).exists():
        directory.mkdir(parents=True, exist_ok=True)
        handle, tmp_name = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(handle, "w") as tmp:
            tmp.write(text)
        os.replace(tmp_name, directory / SHIM_MODULE)
    return directory


def release_env(version: str, extra_paths: Sequence[Path] = ()) -> dict[str, str]:
    """The process environment :func:`run_in_release` uses for release ``version``."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH"}}
    paths = [shim_dir(), fetch_source(version), _DSFIELDS_SOURCE, *extra_paths]
    env.update({
        "PYTHONPATH": os.pathsep.join(str(p) for p in paths),
        "PYTHONNOUSERSITE": "1",
        COMPAT_ENV_VAR: str(_COMPAT_FILE),
        "DS_ACCELERATOR": "cpu",  # never probe for CUDA/XPU/NPU devices
        "CUDA_VISIBLE_DEVICES": "",
        "DS_BUILD_OPS": "0",  # never JIT-build or pre-build C++/CUDA ops
        "DSFIELDS_RELEASE": version,
    })
    return env


def run_in_release(
    version: str,
    argv: list[str],
    timeout: float,
    *,
    extra_paths: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m <argv...>`` against release ``version`` and return the finished process.

    The interpreter is :func:`environment_for`'s; ``PYTHONPATH`` is ``<shim>:<release source>:
    <dsfields source>`` followed by ``extra_paths``; ``env`` adds or overrides variables. Output is
    captured as text; a non-zero exit is *not* an error here (check ``returncode``), but exceeding
    ``timeout`` seconds kills the process and raises :class:`subprocess.TimeoutExpired`.
    """
    python = environment_for(version)
    process_env = release_env(version, extra_paths)
    if env:
        process_env.update(env)
    return subprocess.run([str(python), "-m", *argv], env=process_env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False)
