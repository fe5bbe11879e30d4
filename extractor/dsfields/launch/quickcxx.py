"""The C++ compiler dsfields' own op builds run through: DeepSpeed's CPU ops, compiled for the witness, quickly.

A launch that needs ``cpu_adam``, ``fused_adam`` or the shm communicator makes DeepSpeed JIT-build it with
torch's ``cpp_extension.load``. On this 2-core machine that was most of a new release's extraction: each
translation unit spends ~1 min just parsing ``torch/extension.h`` (the syntax-only pass alone), and DeepSpeed's
``-O3 -g`` roughly triples it. The launch witness needs an op that loads and behaves, not a fast or debuggable
one, so :func:`install` points ``CXX`` at this file, run as a script, which

* compiles at ``-O1`` without debug information (``-O2``/``-O3``/``-Ofast`` become ``-O1``, ``-g*`` is dropped);
* precompiles ``torch/extension.h`` once per set of flags (the release's own ``-I`` paths and the op's
  ``TORCH_EXTENSION_NAME`` left out: neither reaches torch's headers; torch's own path mapped away, so the same
  torch installed in every release runtime and in the dev virtualenv shares one, :func:`ensure_pch`) and hands
  it, with ``-include``, to every source that reaches ``<torch/extension.h>`` with nothing before it that could
  change torch's headers (:func:`torch_preamble`: no code, no conditional, no macro those headers name). GCC
  itself refuses a header precompiled under other flags (and falls back to the text); a release include
  directory holding a file of the same relative path as a header the precompiled one read would shadow it, so
  such a source is compiled without it;
* compiles without the precompiled header if the compile with it fails, so it never fails a build that plain
  compilation passes;
* compiles each object once (:func:`cached_compile`, like ccache's preprocessor mode): an object is keyed by the
  compiler, the flags and the preprocessed text, with the release's path mapped away (``-fmacro-prefix-map``,
  :data:`RELEASE_ENV`). ``cpu_adam_impl.cpp``, which ``cpu_adam`` and ``fused_adam`` both compile, and the sources
  a release left unchanged from another are copied from ``objects/``, not compiled again (over 0.8.0-0.19.8:
  73 compiles before, 46 objects).

Everything else (linking, ``-v``, ``-dumpversion``) goes to the real compiler unchanged. Only dsfields' own
extensions directory uses it (:func:`dsfields.launch.ops.guard_ops_dir`): a ``TORCH_EXTENSIONS_DIR`` the
caller chose keeps DeepSpeed's flags. Stdlib only: it runs as ``python -I``, outside any dsfields import.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

WRAPPER_NAME = "g++"
"""torch accepts a compiler whose path names g++ (cpp_extension.check_compiler_ok_for_platform)."""
HEADER = "dsfields_torch.h"
HEADER_TEXT = "#include <torch/extension.h>\n"
QUICK_OPT = "-O1"
_OPT_REPLACED = frozenset({"-O2", "-O3", "-Ofast"})
_DEBUG_DROPPED = frozenset({"-g", "-g1", "-g2", "-g3", "-ggdb"})


def quick_flags(args: list[str]) -> list[str]:
    """DeepSpeed's flags for one compile, at ``-O1`` and without debug information."""
    return [QUICK_OPT if a in _OPT_REPLACED else a for a in args if a not in _DEBUG_DROPPED]


def _value_after(args: list[str], flag: str) -> str | None:
    with contextlib.suppress(ValueError, IndexError):
        return args[args.index(flag) + 1]
    return None


def split_compile(args: list[str]) -> tuple[list[str], list[str], str | None]:
    """``(signature flags, user include dirs, source)`` of one ``-c`` compile as torch's ninja file spells it.

    The signature flags are what the precompiled header must share with the compile: everything but the
    outputs (``-c SRC -o OUT -MMD -MF DEP``), ``-DTORCH_EXTENSION_NAME=`` and the ``-I`` paths, which are
    returned apart (the release's own include directories).
    """
    flags: list[str] = []
    includes: list[str] = []
    source = _value_after(args, "-c")
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("-c", "-o", "-MF"):
            skip = True
            continue
        if arg == "-MMD" or arg.startswith("-DTORCH_EXTENSION_NAME="):
            continue
        if arg == "-I":
            includes.append(args[i + 1] if i + 1 < len(args) else "")
            skip = True
            continue
        if arg.startswith("-I"):
            includes.append(arg[2:])
            continue
        flags.append(arg)
    return flags, includes, source


TORCH_HEADER = "torch/extension.h"


def _directives(text: str) -> list[str]:
    """The source's lines with comments removed and continuations joined, blank ones left out."""
    out: list[str] = []
    in_comment = False
    pending = ""
    for raw in text.splitlines():
        line = raw
        if in_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_comment = False
        while "/*" in line:
            head, tail = line.split("/*", 1)
            if "*/" in tail:
                line = head + " " + tail.split("*/", 1)[1]
            else:
                line, in_comment = head, True
        line = line.split("//", 1)[0].rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            out.append(line)
    return out


def _include_target(line: str) -> tuple[str, bool] | None:
    rest = line[1:].strip()
    if not rest.startswith("include"):
        return None
    rest = rest[len("include"):].strip()
    if rest[:1] == "<" and ">" in rest:
        return rest[1:].split(">", 1)[0], False
    if rest[:1] == '"' and rest.count('"') >= 2:
        return rest[1:].split('"', 1)[0], True
    return None


def torch_preamble(source: Path, includes: list[str], _depth: int = 0) -> tuple[bool, list[str]] | None:
    """What comes before ``<torch/extension.h>`` in ``source``: ``(reached, macros defined on the way)``.

    Walked in order through the local headers it includes (``"..."``, found beside the file or in
    ``includes``). Allowed on the way: system includes, ``#pragma once``, include guards and ``#define``s
    (whose names the caller checks against the precompiled headers). Anything else (code, a conditional)
    returns None: forcing torch's header first could change what that source means.
    """
    try:
        lines = _directives(source.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    macros: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("#"):
            return None
        word = line[1:].strip().split(None, 1)[0] if line[1:].strip() else ""
        if word == "include":
            target = _include_target(line)
            if target is None:
                return None
            name, local = target
            if name == TORCH_HEADER:
                return True, macros
            found = next((d / name for d in (source.parent, *map(Path, includes)) if (d / name).is_file()), None)
            if local or found is not None:
                if found is None or _depth > 8:
                    return None
                inner = torch_preamble(found, includes, _depth + 1)
                if inner is None:
                    return None
                macros += inner[1]
                if inner[0]:
                    return True, macros
        elif word == "pragma" and line[1:].strip().split()[1:2] == ["once"]:
            pass
        elif word == "ifndef" and i + 1 < len(lines) and lines[i + 1].startswith("#") \
                and lines[i + 1][1:].split()[:2] == ["define", line[1:].split()[1]]:
            macros.append(line[1:].split()[1])  # an include guard: its #endif closes the file
            i += 1
        elif word == "define":
            name = line[1:].strip().split(None, 2)[1].split("(", 1)[0] if len(line[1:].split()) > 1 else ""
            if not name:
                return None
            macros.append(name)
        elif word == "endif" and _depth > 0 and i == len(lines) - 1:
            pass
        else:
            return None
        i += 1
    return False, macros


PCH_LAYOUT = "3"
"""Bumped when what a PCH folder holds changes (3: keyed with torch's include directory mapped away, ``torch.json``)."""
TORCH_PLACEHOLDER = "/dsfields-torch-include"
"""Stands for torch's include directory in a PCH's signature and an object's key: every release runtime (and the
dev virtualenv) installs the same torch at its own path, and one header precompiled from identical files serves all."""


def _signature_dir(root: Path, real: str, flags: list[str]) -> Path:
    digest = hashlib.sha256("\0".join([PCH_LAYOUT, real, *flags]).encode()).hexdigest()[:16]
    return root / digest


def _system_roots(flags: list[str]) -> list[Path]:
    return [Path(flags[i + 1]) for i, a in enumerate(flags[:-1]) if a == "-isystem"]


def torch_include(flags: list[str]) -> str | None:
    """The ``-isystem`` directory holding ``torch/extension.h``: where this compile's torch headers are."""
    return next((str(r) for r in _system_roots(flags) if (r / TORCH_HEADER).is_file()), None)


def map_torch(args: list[str], include: str | None) -> list[str]:
    """``args`` with torch's include directory (and the paths inside it) written as :data:`TORCH_PLACEHOLDER`."""
    if not include:
        return list(args)
    inside = include.rstrip(os.sep) + os.sep
    return [TORCH_PLACEHOLDER + a[len(include):] if a == include or a.startswith(inside) else a for a in args]


def shadowed(deps: list[str], includes: list[str], flags: list[str]) -> bool:
    """Whether a user include directory holds a file at the relative path of a header the PCH read.

    GCC searches ``-I`` before ``-isystem``: such a file would replace torch's header in a plain compile.
    """
    roots = _system_roots(flags)
    for dep in deps:
        path = Path(dep)
        for root in roots:
            if path.is_relative_to(root):
                rel = path.relative_to(root)
                if any((Path(inc) / rel).exists() for inc in includes if inc):
                    return True
    return False


def _read_deps(path: Path) -> list[str]:
    """The headers of a ``-MD`` / ``-MMD`` dependency file (``target: dep dep \\``)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    body = text.split(":", 1)[1] if ":" in text else ""
    return [d for d in body.replace("\\\n", " ").split() if d != "\\"]


def _stamp(paths: list[str]) -> list[list[object]]:
    out: list[list[object]] = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            out.append([p, None, None])
        else:
            out.append([p, st.st_size, st.st_mtime_ns])
    return out


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a file's bytes; None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _tree_digest(include: Path) -> str:
    """Every file name (and size) under torch's include directory: two trees that differ anywhere differ here.

    A file only one of them has could be found first by some ``#include``, so "the same headers" is the same tree
    as well as the same bytes of every header read.
    """
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(include):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                digest.update(f"{os.path.relpath(path, include)}\0{os.path.getsize(path)}\0".encode())
    return digest.hexdigest()


def _torch_record(include: str, read: list[str]) -> dict[str, object]:
    """What a PCH was built from under torch's include directory: the tree, and the hash of each header read."""
    base = Path(include)
    hashes = {str(Path(p).relative_to(base)): file_digest(Path(p)) for p in read if Path(p).is_relative_to(base)}
    return {"include": include, "tree": _tree_digest(base), "hashes": dict(sorted(hashes.items()))}


def _rebase(paths: list[str], old: str, new: str) -> list[str]:
    return [str(Path(new) / Path(p).relative_to(old)) if Path(p).is_relative_to(old) else p for p in paths]


def _same_torch(folder: Path, build: str, include: str) -> bool:
    """Whether torch at ``include`` is byte for byte the torch ``folder``'s header was precompiled from.

    Checked once per torch path and build (``same-*.json``, with the headers' size and mtime, like ``deps.json``).
    GCC itself recognises an already-included ``#pragma once`` header by its size and checksum, so the same bytes at
    another path are skipped as the same header.
    """
    import json

    marker = folder / f"same-{hashlib.sha256(include.encode()).hexdigest()[:16]}.json"
    try:
        saved = json.loads(marker.read_text())
        if saved["build"] == build and _stamp([s[0] for s in saved["stamps"]]) == saved["stamps"]:
            return bool(saved["same"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        record = json.loads((folder / "torch.json").read_text())
    except (OSError, ValueError):
        return False
    base = Path(include)
    same = record.get("tree") == _tree_digest(base) and all(
        file_digest(base / rel) == digest for rel, digest in dict(record.get("hashes") or {}).items())
    tmp = folder / f".{os.getpid()}.same"
    tmp.write_text(json.dumps({"build": build, "same": same,
                               "stamps": _stamp([str(base / rel) for rel in sorted(record.get("hashes") or {})])}))
    os.replace(tmp, marker)
    return same


def ensure_pch(root: Path, real: str, flags: list[str]) -> tuple[Path, list[str]] | None:
    """The precompiled header for ``flags`` (built once, under a lock) and the headers it read; None if it cannot be.

    Its folder is named by the flags with torch's include directory mapped away (:func:`map_torch`): a compile
    whose torch sits elsewhere uses it when that torch is the same tree with the same bytes in every header the
    PCH read (:func:`_same_torch`); another torch gets its own, named by its real path, as before. The headers
    returned are this compile's own copies.
    """
    include = torch_include(flags)
    found = _ensure_in(_signature_dir(root, real, map_torch(flags, include)), real, flags, include)
    if found is not None and not found.same:
        found = _ensure_in(_signature_dir(root, real, flags), real, flags, include)
    if found is None:
        return None
    if found.built_under is None or include is None:
        return found.header, found.deps
    return found.header, _rebase(found.deps, found.built_under, include)


class _Built(NamedTuple):
    """A PCH folder's header as one compile may use it (:func:`_ensure_in`)."""

    header: Path
    deps: list[str]
    """The headers it read, at the paths they were read from."""
    built_under: str | None
    """Torch's include directory it was precompiled under (None: no torch found in the flags)."""
    same: bool
    """Whether this compile's torch is that torch, or byte for byte the same (:func:`_same_torch`)."""


def _ensure_in(folder: Path, real: str, flags: list[str], include: str | None) -> _Built | None:
    """Build (once, under the folder's lock) or validate the PCH in ``folder``.

    GCC does not notice a header that changed after it was precompiled, so every header it read is kept with
    its size and mtime, and a change (torch reinstalled at the same path) builds it again. A failed build
    leaves a ``failed`` marker: every later source compiles plain at once.
    """
    import fcntl
    import json

    header = folder / HEADER
    gch = folder / (HEADER + ".gch")
    stamps = folder / "deps.json"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another build of the same signature waits, then uses it
        if (folder / "failed").exists():
            return None
        try:
            text = stamps.read_text()
            recorded = json.loads(text)
            built_under = json.loads((folder / "torch.json").read_text()).get("include") if include else None
        except (OSError, ValueError, AttributeError):
            text, recorded, built_under = "", None, None
        if not gch.is_file() or not isinstance(recorded, list) or _stamp([r[0] for r in recorded]) != recorded \
                or (include is not None and not isinstance(built_under, str)):
            header.write_text(HEADER_TEXT)
            tmp = folder / f".{os.getpid()}.gch"
            deps = folder / f".{os.getpid()}.d"
            cmd = [real, *flags, "-x", "c++-header", str(header), "-o", str(tmp), "-MD", "-MF", str(deps)]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
            read = _read_deps(deps)
            deps.unlink(missing_ok=True)
            if done.returncode != 0 or not tmp.is_file() or not read:
                tmp.unlink(missing_ok=True)
                (folder / "failed").write_text(done.stderr.decode(errors="replace")[-4000:])
                return None
            stamps.unlink(missing_ok=True)  # first: a folder without it is built again
            os.replace(tmp, gch)  # whole or absent: a killed build leaves no half header
            recorded = _stamp(read)
            (folder / "identifiers.txt").write_text("\n".join(sorted(_identifiers(read))) + "\n")
            if include is not None:
                (folder / "torch.json").write_text(json.dumps(_torch_record(include, read), indent=0))
            built_under = include
            text = json.dumps(recorded)
            stamps.write_text(text)  # last: a folder without it is built again
        paths = [str(r[0]) for r in recorded]
        if include is None or built_under == include:
            return _Built(header, paths, built_under, True)
        build = hashlib.sha256(text.encode()).hexdigest()
        return _Built(header, paths, built_under, _same_torch(folder, build, include))


def _identifiers(paths: list[str]) -> set[str]:
    import re

    names: set[str] = set()
    word = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    for p in paths:
        with contextlib.suppress(OSError):
            names.update(word.findall(Path(p).read_text(encoding="utf-8", errors="replace")))
    return names


def _uses_any(folder: Path, macros: list[str]) -> bool:
    """Whether a header the PCH read names one of ``macros`` (then defining it first could change it)."""
    if not macros:
        return False
    try:
        known = set((folder / "identifiers.txt").read_text().split())
    except OSError:
        return True
    return any(m in known for m in macros)


def compile_args(args: list[str], root: Path, real: str) -> list[str]:
    """The arguments this wrapper compiles one ``-c`` source with: quick flags, plus the PCH when it applies."""
    args = quick_flags(args)
    flags, includes, source = split_compile(args)
    preamble = torch_preamble(Path(source), includes) if source else None
    if preamble is None or not preamble[0]:
        return args
    built = ensure_pch(root, real, flags)
    if built is None or shadowed(built[1], includes, flags) or _uses_any(built[0].parent, preamble[1]):
        return args
    return [*args, "-include", str(built[0])]


BUILD_ENV = "DSFIELDS_OPS_BUILD"
"""``ccache``: compile through ccache (at :func:`quick_flags`) instead of this file's PCH and object cache, and
without ``ops.share_built_ops``; ``ccache-pch``: the same with this file's precompiled header: the switches the
ccache-versus-quickcxx measurement (bench/ops_cache.py) runs."""
RELEASE_ENV = "DSFIELDS_OPS_RELEASE"
"""The folder holding the ``deepspeed`` package being built for, as imported and resolved (``os.pathsep``
between them; set by ``guard_ops_dir``): its path is mapped away in ``__FILE__`` and in the object cache's key,
so releases at different paths share identical objects."""
RELEASE_PLACEHOLDER = "/dsfields-release"
OBJECTS_LAYOUT = "2"
"""Bumped when what an object's key covers changes (2: torch's include directory mapped away)."""


def _compiler_identity(real: str) -> str:
    import shutil

    found = shutil.which(real) or real
    try:
        resolved = Path(found).resolve()
        st = resolved.stat()
    except OSError:
        return found
    return f"{resolved}:{st.st_size}:{st.st_mtime_ns}"


def _outputs(args: list[str]) -> tuple[str | None, str | None]:
    """``(object, dependency file)`` of one ``-c`` compile."""
    return _value_after(args, "-o"), _value_after(args, "-MF")


def _without_outputs(args: list[str], drop_name: bool = False) -> list[str]:
    """A compile's arguments without ``-o``, ``-c`` and the dependency-file flags (and the op's name if asked)."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-MMD", "-MD", "-c") or (drop_name and arg.startswith("-DTORCH_EXTENSION_NAME=")):
            continue
        kept.append(arg)
    return kept


def _key_args(args: list[str], releases: list[str]) -> list[str]:
    """A compile's arguments without its outputs, the op's name or the release's path: what the object's key names.

    ``-DTORCH_EXTENSION_NAME=`` only reaches the object through the preprocessed text, which the key hashes.
    """
    kept = _without_outputs(args, drop_name=True)
    for release in releases:
        kept = [a.replace(release, RELEASE_PLACEHOLDER) for a in kept]
    # Torch's path, too: what its headers say reaches the key through the preprocessed text (or, inside the PCH,
    # through its recorded headers), so two runtimes' identical torch installs share objects.
    return map_torch(kept, torch_include(kept))


def release_paths(value: str | None) -> list[str]:
    """The release folders named by :data:`RELEASE_ENV`, longest first (a path inside another maps first)."""
    return sorted({p.rstrip(os.sep) for p in (value or "").split(os.pathsep) if p.strip(os.sep)}, key=len,
                  reverse=True)


def _pch_stamps(args: list[str]) -> str:
    """The recorded headers (size, mtime) of a precompiled header the compile includes: what its text was."""
    header = _value_after(args, "-include")
    if header is None or Path(header).name != HEADER:
        return ""
    try:
        return (Path(header).parent / "deps.json").read_text()
    except OSError:
        return "unreadable"


def object_key(args: list[str], real: str, releases: list[str]) -> tuple[str, bytes] | None:
    """The key of one compile's object, and the preprocessor's stderr; None when preprocessing fails.

    Like ccache's preprocessor mode: the object is a function of the compiler, the flags and the preprocessed
    text (``-P``: no line markers; ``__FILE__`` and ``__LINE__`` are expanded in it, so a moved line still
    counts). ``-fpch-preprocess`` keeps a precompiled torch header as one pragma naming it, and its recorded
    headers stand for its text. The dependency file ninja asks for (``-MF``) is written by this run, so an
    object taken from the cache comes with it.
    """
    obj, dep = _outputs(args)
    source = _value_after(args, "-c")
    if obj is None or source is None:
        return None
    command = [real, *_without_outputs(args), "-E", "-P", "-fpch-preprocess", "-o", "-"]
    if dep is not None:
        command += ["-MMD", "-MF", dep, "-MT", obj]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0 or not done.stdout:
        return None
    digest = hashlib.sha256()
    for part in (OBJECTS_LAYOUT, _compiler_identity(real), *_key_args(args, releases), _pch_stamps(args)):
        digest.update(part.encode() + b"\0")
    digest.update(hashlib.sha256(done.stdout).digest())
    return digest.hexdigest()[:32], done.stderr


def with_release_map(args: list[str], releases: list[str]) -> list[str]:
    """``args`` with the release's paths mapped to :data:`RELEASE_PLACEHOLDER` in ``__FILE__``."""
    return [*args, *(f"-fmacro-prefix-map={release}={RELEASE_PLACEHOLDER}" for release in releases)]


def cached_compile(args: list[str], real: str, objects: Path | None, releases: list[str],
                   capture: bool) -> tuple[int, bytes, bytes]:
    """Compile once per object key: an object another compile (op, release) made from the same text is copied.

    Returns ``(exit code, stdout, stderr)``; output is passed through (empty strings) unless ``capture``. The
    key's lock is held while compiling, so a second release needing the same object waits and copies it.
    """
    import fcntl
    import shutil

    args = with_release_map(args, releases)
    keyed = object_key(args, real, releases) if objects is not None else None
    if keyed is None or objects is None:
        done = subprocess.run([real, *args], capture_output=capture, check=False)
        return done.returncode, done.stdout or b"", done.stderr or b""
    key, notes = keyed
    obj = Path(_value_after(args, "-o") or "")
    stored = objects / key[:2] / f"{key}.o"
    stored.parent.mkdir(parents=True, exist_ok=True)
    with open(stored.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stored.is_file():
            tmp = obj.with_name(f".{obj.name}.{os.getpid()}")
            shutil.copyfile(stored, tmp)
            os.replace(tmp, obj)
            if not capture:
                sys.stderr.buffer.write(notes)
            return 0, b"", notes
        done = subprocess.run([real, *args], capture_output=capture, check=False)
        if done.returncode == 0 and obj.is_file():
            tmp = stored.with_name(f".{key}.{os.getpid()}")
            shutil.copyfile(obj, tmp)
            os.replace(tmp, stored)  # whole or absent: a killed compile stores nothing
        return done.returncode, done.stdout or b"", done.stderr or b""


def main(argv: list[str], real: str, root: Path, objects: Path | None = None) -> int:
    """Run one compiler invocation of torch's ninja file; return the compiler's exit code."""
    args = argv[1:]
    if "-c" not in args:
        return subprocess.run([real, *args], check=False).returncode
    build = os.environ.get(BUILD_ENV)
    if build == "ccache":  # the measured alternative: DeepSpeed's flags made quick, ccache
        return subprocess.run(["ccache", real, *quick_flags(args)], check=False).returncode
    if build == "ccache-pch":  # measured too: this file's precompiled header, ccache instead of its object cache
        chosen = compile_args(args, root, real)
        if chosen != quick_flags(args):
            done = subprocess.run(["ccache", real, *chosen, "-fpch-preprocess"], capture_output=True, check=False)
            if done.returncode == 0:
                sys.stdout.buffer.write(done.stdout)
                sys.stderr.buffer.write(done.stderr)
                return 0
        return subprocess.run(["ccache", real, *quick_flags(args)], check=False).returncode
    releases = release_paths(os.environ.get(RELEASE_ENV))
    quick = quick_flags(args)
    chosen = compile_args(args, root, real)
    if chosen != quick:
        code, out, err = cached_compile(chosen, real, objects, releases, capture=True)
        if code == 0:
            sys.stdout.buffer.write(out)
            sys.stderr.buffer.write(err)
            return 0
    # The PCH is never why a build fails: without it, as DeepSpeed's flags (made quick) have it.
    return cached_compile(quick, real, objects, releases, capture=False)[0]


_SCRIPT = '''#!{python} -I
"""dsfields' compiler wrapper for its own DeepSpeed op builds (see dsfields/launch/quickcxx.py)."""
import sys
from pathlib import Path

sys.path.insert(0, {module_dir!r})
from quickcxx import main

sys.exit(main(sys.argv, {real!r}, Path({pch_root!r}), Path({objects!r})))
'''


def install(cache: Path, environ: dict[str, str] | None = None) -> Path:
    """Write the wrapper into ``cache`` (once per script, interpreter and real compiler) and point ``CXX`` at it.

    The folder is named by a hash of all three and of this file, so an op built through another version of the
    wrapper has another compiler in its key (:func:`dsfields.launch.ops.op_key`) and is not reused.
    """
    env = os.environ if environ is None else environ
    real = env.get("DSFIELDS_REAL_CXX") or env.get("CXX") or "c++"
    if Path(real).name == WRAPPER_NAME and Path(real).parent.parent == cache / "cxx":
        return Path(real)  # already installed in this process's environment
    here = Path(__file__).resolve()
    digest = hashlib.sha256(here.read_bytes() + f"\0{sys.executable}\0{real}".encode()).hexdigest()[:12]
    folder = cache / "cxx" / digest
    wrapper = folder / WRAPPER_NAME
    if not wrapper.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        module = folder / f".{os.getpid()}.py"
        module.write_bytes(here.read_bytes())
        os.replace(module, folder / "quickcxx.py")  # a compile running meanwhile never imports half a file
        tmp = folder / f".{os.getpid()}.tmp"
        tmp.write_text(_SCRIPT.format(python=sys.executable, module_dir=str(folder), real=real,
                                      pch_root=str(cache / "pch"), objects=str(cache / "objects")))
        tmp.chmod(0o755)
        os.replace(tmp, wrapper)
    env["DSFIELDS_REAL_CXX"] = real
    env["CXX"] = str(wrapper)
    return wrapper
