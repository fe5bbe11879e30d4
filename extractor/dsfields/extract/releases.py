"""Run code against any DeepSpeed PyPI release without installing it.

Installing each DeepSpeed release into its own environment is slow (torch alone is gigabytes) and may
try to build CUDA ops. Instead, every release is *imported from its unpacked sdist*:

* :func:`fetch_source` downloads a release's sdist once (straight from the index pip uses, hash
  checked; ``pip download --no-deps`` as fallback) and unpacks and byte-compiles it into the user
  cache (see :func:`cache_dir`); the ``deepspeed`` package is then importable by putting the returned
  directory on ``PYTHONPATH``. Nothing of the release (setup.py, op builds) is ever executed.
* :func:`environment_for` returns the Python of a *shared* virtualenv holding what releases import:
  ``torch==2.13.0`` (CPU, from local disk), DeepSpeed's light runtime dependencies as the release's own
  ``requirements/requirements.txt`` lists them, and what the extractor needs (griffe, jinja2, hjson).
  Releases that can't run on pydantic 2 (:func:`pydantic_major`: 0.8.0-0.11.1) get a pydantic-1
  environment, the others (0.11.2 on) a pydantic-2 one; environments are keyed by their full
  specification, so a release needing a dependency no other release needs gets an environment of its
  own, built automatically.
* :func:`list_releases` lists the releases (``pip index versions``, minus pre-releases and yanked).
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

import compileall
import contextlib
import functools
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
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from dsfields.model.safewrite import lock_file

log = logging.getLogger(__name__)

PACKAGE = "deepspeed"
"""The PyPI project whose releases this module serves."""

TORCH_REQUIREMENT = "torch==2.13.0"
"""The one torch every environment gets. It is on local disk (a CPU wheel); any other version would
be a multi-gigabyte download, so it is also passed as a constraint that no dependency can override."""

EXTRACTOR_REQUIREMENTS: tuple[str, ...] = ("griffe>=1.0", "jinja2>=3.1", "hjson>=3.1")
"""What dsfields' extractor itself imports inside a release environment."""


def same_transformers() -> tuple[str, ...]:
    """The transformers installed beside this dsfields, pinned, if any.

    Format-2 snapshots recorded which keys the HF Trainer fills, so every release environment got the extracting
    interpreter's own transformers; format 3 keeps that list in ``generated/hf/`` only, and nothing a release
    environment extracts reads transformers any more. The pin is kept so that the existing shared environments
    (keyed by this specification) stay valid; transformers needs no torch of its own, so the torch pin holds.
    """
    from importlib import metadata

    try:
        return (f"transformers=={metadata.version('transformers')}",)
    except metadata.PackageNotFoundError:
        return ()


BASE_REQUIREMENTS: tuple[str, ...] = (
    "einops",
    "hjson",
    "msgpack",
    "ninja",
    "numpy",
    "nvidia-ml-py",
    "packaging",
    "psutil",
    "py-cpuinfo",
    "tqdm",
)
"""The union of DeepSpeed's light runtime dependencies (other than torch and pydantic) over the
releases served. Every environment gets all of them, so that releases share environments; a release
that requires a name missing here gets its own environment (see :func:`environment_for`)."""

PYDANTIC_2_RELEASED = datetime(2023, 6, 30, tzinfo=UTC)
"""When pydantic 2.0 was published: releases made before it can only have meant pydantic 1."""

IGNORED_REQUIREMENTS = frozenset({"torch"})
"""Release requirements never installed from the release's own line (torch is pinned above)."""

REQUIREMENT_ALIASES: dict[str, str] = {"pynvml": "nvidia-ml-py"}
"""Requirements satisfied by another distribution providing the same modules. The ``pynvml``
distribution (required by 0.11.2-0.14.2) is today an empty, deprecated wrapper around
``nvidia-ml-py`` (required by 0.14.3-0.14.5), which provides the ``pynvml`` module; installing the
wrapper would only make torch warn at every import."""

SOURCE_MARKER = ".dsfields-complete"
ENV_MARKER = "dsfields-env.json"
SHIM_MODULE = "sitecustomize.py"
COMPAT_ENV_VAR = "DSFIELDS_COMPAT_FILE"
COMPAT_ADDED_ENV_VAR = "DSFIELDS_COMPAT_ADDED"

_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)*([a-z0-9.+-]*)$", re.IGNORECASE)
_DSFIELDS_SOURCE = Path(__file__).resolve().parent.parent.parent
_COMPAT_FILE = Path(__file__).resolve().parent / "compat.py"


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
    with lock_file(cache_dir() / "locks" / f"{name}.lock"):
        yield


def _remove_stale(parent: Path, name: str) -> None:
    """Remove temporary ``.<name>-*`` build dirs a crashed run left in ``parent`` (call under the lock)."""
    for stale in parent.glob(f".{name}-*"):
        log.info("removing leftover %s", stale)
        shutil.rmtree(stale, ignore_errors=True)


def _publish(tmp: Path, final: Path) -> None:
    """Atomically move the finished ``tmp`` directory to ``final`` (replacing an incomplete leftover)."""
    if final.exists():
        log.warning("removing incomplete %s", final)
        shutil.rmtree(final)
    os.rename(tmp, final)


def _run(cmd: Sequence[str | os.PathLike[str]], what: str) -> str:
    """Run a helper command, returning its stdout; raise RuntimeError with its output if it fails."""
    log.debug("running %s", " ".join(map(str, cmd)))
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {' '.join(map(str, cmd))}\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


# --------------------------------------------------------------------------- releases


def _check_version(version: str) -> str:
    if not _VERSION_RE.match(version):
        raise ValueError(f"not a release version: {version!r}")
    return version


@functools.cache
def _index_url() -> str:
    """The package index pip is configured with (``$PIP_INDEX_URL``, pip's config, else PyPI)."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        proc = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                              capture_output=True, text=True, check=False)
        url = proc.stdout.strip() if proc.returncode == 0 else ""
    return (url or "https://pypi.org/simple").rstrip("/")


def _sdist_version(filename: str) -> str | None:
    """The version in an sdist file name of :data:`PACKAGE` (``deepspeed-0.8.0.tar.gz``), else None."""
    match = re.fullmatch(rf"{PACKAGE}-(.+)\.tar\.gz", filename, re.IGNORECASE)
    return match.group(1) if match else None


@functools.cache
def _index_files() -> tuple[dict[str, Any], ...]:
    """The file entries of :data:`PACKAGE`'s project page in the index's JSON Simple API (PEP 691).

    Each entry has ``filename``, absolute ``url``, ``hashes`` and ``yanked``. Raises OSError/ValueError
    when the index can't be read as JSON.
    """
    page = f"{_index_url()}/{PACKAGE}/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        data = json.load(response)
    files = []
    for entry in data.get("files", []):
        entry = dict(entry)
        entry["url"] = urllib.parse.urljoin(page, str(entry.get("url", "")))
        files.append(entry)
    return tuple(files)


def _yanked_versions() -> set[str] | None:
    """Versions of :data:`PACKAGE` whose sdists are all yanked, per the index's JSON Simple API.

    ``pip index versions`` lists yanked releases too. Returns None (and logs why) when the index can't
    be asked, in which case nothing is filtered.
    """
    try:
        files = _index_files()
    except (OSError, ValueError) as exc:
        log.warning("could not read yanked status from %s (%s); yanked releases are not filtered",
                    _index_url(), exc)
        return None
    yanked_by_version: dict[str, list[bool]] = {}
    for entry in files:
        version = _sdist_version(str(entry.get("filename", "")))
        if version is not None:
            yanked_by_version.setdefault(version, []).append(bool(entry.get("yanked")))
    return {version for version, yanked in yanked_by_version.items() if all(yanked)}


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


def _download_sdist(version: str, into: Path) -> Path:
    """Download release ``version``'s sdist into ``into`` and return the archive.

    The archive is fetched straight from the index (URL and sha256 from its JSON Simple API) rather
    than with ``pip download``: pip would also build the sdist's metadata, which runs DeepSpeed's
    setup.py, and that fails without torch for some releases (0.11.0, 0.13.0 import torch through
    op_builder). ``pip download --no-deps`` remains the fallback for indexes without the JSON API.
    """
    into.mkdir(parents=True, exist_ok=True)
    try:
        files = _index_files()
    except (OSError, ValueError) as exc:
        log.warning("index JSON API unavailable (%s); falling back to pip download", exc)
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", PACKAGE,
              "--disable-pip-version-check", "--no-input", "-d", into, f"{PACKAGE}=={version}"],
             f"downloading {PACKAGE} {version}")
        archives = sorted(into.glob("*.tar.gz"))
        if len(archives) != 1:
            raise RuntimeError(f"expected one sdist for {PACKAGE} {version}, got {archives}") from None
        return archives[0]
    matches = [e for e in files if _sdist_version(str(e.get("filename", ""))) == version]
    if not matches:
        raise RuntimeError(f"{PACKAGE} {version} has no sdist on {_index_url()}")
    entry = matches[0]
    archive = into / Path(str(entry["filename"])).name
    expected = (entry.get("hashes") or {}).get("sha256")
    digest = hashlib.sha256()
    with urllib.request.urlopen(str(entry["url"]), timeout=300) as response, open(archive, "wb") as out:
        while chunk := response.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if expected and digest.hexdigest() != expected:
        raise RuntimeError(f"sha256 mismatch for {archive.name}: {digest.hexdigest()} != {expected}")
    return archive


def fetch_source(version: str) -> Path:
    """Download and unpack release ``version``'s sdist (once) and return the dir to put on PYTHONPATH.

    The cache entry ``src/<version>/`` holds ``sdist/`` (the unpacked sdist minus its ``deepspeed``
    package: requirements, setup.py, csrc...) and ``lib/deepspeed`` (the package); ``lib`` is returned,
    so nothing but ``deepspeed`` becomes importable. Nothing of the release is executed.
    """
    root = _source_root(version)
    lib = root / "lib"
    if (root / SOURCE_MARKER).exists():
        return lib
    with _locked(f"src-{version}"):
        if (root / SOURCE_MARKER).exists():
            return lib
        root.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(root.parent, version)
        started = time.monotonic()
        tmp = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root.parent))
        try:
            archive = _download_sdist(version, tmp / "download")
            unpacked = tmp / "unpacked"
            with tarfile.open(archive) as tar:
                built = max((m.mtime for m in tar.getmembers() if m.name.endswith("/PKG-INFO")), default=0)
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
            shutil.rmtree(tmp / "download")
            unpacked.rmdir()
            # Byte-compile now, recording the final paths in the code objects (tracebacks, inspect): the
            # environments are made from this same interpreter, and they'd otherwise recompile at every
            # run wherever PYTHONDONTWRITEBYTECODE is set. Files that don't compile are left to Python.
            compileall.compile_dir(tmp / "lib", quiet=2, stripdir=str(tmp), prependdir=str(root), workers=1)
            (tmp / SOURCE_MARKER).write_text(json.dumps(
                {"version": version, "archive": archive.name, "sha256": digest,
                 "built": datetime.fromtimestamp(built, UTC).isoformat()}, indent=1) + "\n")
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


def release_built(version: str) -> datetime:
    """When release ``version``'s sdist was built (its ``PKG-INFO`` timestamp): about its release date."""
    root = fetch_source(version).parent
    marker = json.loads((root / SOURCE_MARKER).read_text())
    if "built" in marker:
        return datetime.fromisoformat(marker["built"])
    return datetime.fromtimestamp((root / "sdist" / "PKG-INFO").stat().st_mtime, UTC)


def pydantic_major(version: str) -> int:
    """The pydantic major version release ``version`` runs with: what a fresh install would have picked.

    That is 2 if the release's requirement admits pydantic 2 *and* the release was made after pydantic
    2.0 existed, else 1. The date matters: 0.8.0-0.9.0 require a bare ``pydantic`` but were written
    for pydantic 1 (``from pydantic import BaseModel, validator``), 0.9.1-0.11.1 say ``pydantic<2.0.0``;
    0.11.2-0.14.x admit 2 (they reach the v1 API through ``deepspeed.pydantic_v1`` -> ``pydantic.v1``)
    and 0.15.0 on require ``pydantic>=2.0.0``.
    """
    admits: set[int] = {1, 2}
    for requirement in release_requirements(version):
        if canonicalize_name(requirement.name) == "pydantic":
            admits = {m for m in (1, 2) if requirement.specifier.contains(f"{m}.999", prereleases=True)}
    if 2 in admits and release_built(version) < PYDANTIC_2_RELEASED:
        admits.discard(2)
    if not admits:
        raise RuntimeError(f"{PACKAGE} {version} admits neither pydantic 1 nor pydantic 2")
    return max(admits)


@dataclass(frozen=True)
class EnvSpec:
    """What a shared release environment contains; environments are named after a hash of it."""

    python: str
    """``major.minor`` of the interpreter (the one running this module) the environment is made from."""
    pydantic: int
    """The pydantic major version (see :func:`pydantic_major`)."""
    install: tuple[str, ...]
    """The requirements ``pip install`` gets."""
    constraints: tuple[str, ...]
    """The ``pip install -c`` constraints (pins that no dependency may override)."""

    @property
    def name(self) -> str:
        """The environment's directory name, e.g. ``py3.11-pydantic2-<hash>``."""
        digest = hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:10]
        return f"py{self.python}-pydantic{self.pydantic}-{digest}"


def environment_spec(version: str) -> EnvSpec:
    """The shared-environment specification release ``version`` needs (see :func:`environment_for`)."""
    major = pydantic_major(version)
    have = {canonicalize_name(n) for n in BASE_REQUIREMENTS} | IGNORED_REQUIREMENTS | {"pydantic"}
    names = (canonicalize_name(r.name) for r in release_requirements(version))
    extra = sorted({REQUIREMENT_ALIASES.get(n, n) for n in names} - have)
    return EnvSpec(
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        pydantic=major,
        install=(TORCH_REQUIREMENT, f"pydantic>={major},<{major + 1}", *BASE_REQUIREMENTS, *extra,
                 *EXTRACTOR_REQUIREMENTS, *same_transformers()),
        constraints=(TORCH_REQUIREMENT,),
    )


def environment_for(version: str) -> Path:
    """Return the Python of the shared virtualenv that release ``version`` runs in (built once).

    The environment holds :data:`TORCH_REQUIREMENT`, pydantic 1 or 2 (2 unless the release's own
    requirements exclude it), :data:`BASE_REQUIREMENTS`, any further requirement of the release, and
    :data:`EXTRACTOR_REQUIREMENTS`. It is named after a hash of that specification and built in a
    temporary directory renamed into place when complete, so releases with the same specification
    share it and a half-built environment is never used.
    """
    spec = environment_spec(version)
    name = spec.name
    envs = cache_dir() / "envs"
    final = envs / name
    python = final / "bin" / "python"
    if (final / ENV_MARKER).exists():
        return python
    with _locked(f"env-{name}"):
        if (final / ENV_MARKER).exists():
            return python
        envs.mkdir(parents=True, exist_ok=True)
        _remove_stale(envs, name)
        started = time.monotonic()
        log.info("building environment %s for %s %s", name, PACKAGE, version)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=envs))
        try:
            _run([sys.executable, "-m", "venv", tmp], "creating a virtualenv")
            constraints = tmp / "dsfields-constraints.txt"
            constraints.write_text("\n".join(spec.constraints) + "\n")
            tmp_python = tmp / "bin" / "python"
            _run([tmp_python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                  "-c", constraints, *spec.install],
                 f"installing environment {name}")
            check = "import torch, pydantic; print(torch.__version__, pydantic.VERSION)"
            probe = _run([tmp_python, "-c", check], f"checking environment {name}").split()
            if not probe[0].startswith(TORCH_REQUIREMENT.split("==")[1]):
                raise RuntimeError(f"environment {name} got torch {probe[0]}, not {TORCH_REQUIREMENT}")
            freeze = _run([tmp_python, "-m", "pip", "freeze", "--all"], "pip freeze").splitlines()
            record = {"spec": asdict(spec), "freeze": freeze}
            (tmp / ENV_MARKER).write_text(json.dumps(record, indent=1) + "\n")
            _publish(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log.info("built environment %s (torch %s, pydantic %s) in %.0fs",
                 name, probe[0], probe[1], time.monotonic() - started)
    return python


# --------------------------------------------------------------------------- running

_SITECUSTOMIZE = '''\
"""Generated by dsfields.extract.releases: install dsfields' compatibility shim at interpreter start-up.

Loads dsfields/extract/compat.py by file path (named by ${var}) so that no package __init__ can
import DeepSpeed before the shim is in place, calls its install(), and records the names it added
in the ${added} environment variable. Then runs the sitecustomize this file shadows, if any.
"""
import os as _os
import sys as _sys
import importlib.machinery as _machinery
import importlib.util as _util


def _dsfields_load(name, spec):
    module = _util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if _os.environ.get("${var}"):
    _compat = _dsfields_load("_dsfields_compat", _util.spec_from_file_location(
        "_dsfields_compat", _os.environ["${var}"]))
    _os.environ["${added}"] = ",".join(_compat.install())

_here = _os.path.dirname(_os.path.abspath(__file__))
_next = _machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in _sys.path if _os.path.abspath(p or ".") != _here])
if _next is not None:
    _dsfields_load("_dsfields_next_sitecustomize", _next)
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
        "DSFIELDS_RELEASE": version,
        "DSFIELDS_RELEASE_SOURCE": str(paths[1]),
    })
    # DS_ACCELERATOR is deliberately left as the caller has it: unset, each release auto-detects its
    # accelerator as a real install on this machine would (CPU-only torch: "cpu" from 0.14 on, "cuda"
    # before). Forcing "cpu" breaks 0.9.3-0.14.0, whose CPU accelerator requires
    # intel_extension_for_pytorch.
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
    <dsfields source>`` followed by ``extra_paths``; ``$DSFIELDS_RELEASE`` and
    ``$DSFIELDS_RELEASE_SOURCE`` tell the process which release it runs and where its source lies;
    ``env`` adds or overrides variables. Output is
    captured as text; a non-zero exit is *not* an error here (check ``returncode``), but exceeding
    ``timeout`` seconds kills the process and raises :class:`subprocess.TimeoutExpired`.
    """
    python = environment_for(version)
    process_env = release_env(version, extra_paths)
    if env:
        process_env.update(env)
    # -P: don't put the working directory first on sys.path, where a stray ``deepspeed/`` would shadow
    # the release's.
    return subprocess.run([str(python), "-P", "-m", *argv], env=process_env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False)
