"""The names each release's DeepSpeed source defines, so that prose naming code is checked against its release.

A sentence on a release's page may name a function (``_configure_master_weights``), a module file
(``deepspeed/checkpoint/ds_to_universal.py``), a public call (``deepspeed.comm.log_summary``) or a feature whose classes
carry its name (``AutoEP``: ``AutoEPConfig``, ``AutoEPMoELayer``). The snapshot records only what the config touches;
this index records every name the release's source defines, read from the unpacked sdists the snapshot factory keeps
(``~/.cache/dsfields/sdist/<version>/``). It is read by ``dsfields.model.source_names`` and written, for every
committed release at once, by ``python -m dsfields.extract.source_index`` to ``generated/source-names.json``.

Names are read with regular expressions, not an AST: a file a release cannot parse with today's Python still
defines its names, and this is an index of spellings, not of semantics.
"""

from __future__ import annotations

import json
import re
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

from dsfields.model.source_names import FILE_NAME, FORMAT, index_runs

DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.M)
"""A function, method or class defined anywhere in a module: what a release *has* that another may lack."""
SPELLED = re.compile(r"(?<!\w)[A-Za-z_]\w*")
"""Every name a module spells, code, strings and comments alike: a release "has" a name its source writes anywhere
(a torch method it calls, a variable of a formula), so that only a name its source never writes is a finding."""
TOP_LEVEL = re.compile(r"^(?:(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)"
                       r"|([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=))", re.M)
"""A name bound at a module's top level: def, class or assignment."""
IMPORTED = re.compile(r"^(?:from[ \t]+\S+[ \t]+)?import[ \t]+\(?([^\n()]*(?:\n[^\n()]*)*?)\)?[ \t]*$", re.M)
"""A top-level import statement; its names (``a``, ``b as c``) are bound in the module."""


def _imported_names(text: str) -> set[str]:
    out = set()
    for match in IMPORTED.finditer(text):
        for part in match.group(1).replace("\\\n", " ").split(","):
            words = part.split("#")[0].split()
            if not words or words[0] == "*":
                continue
            out.add(words[-1].split(".")[0] if len(words) != 3 else words[2])
    return out


def names_of(package: Path) -> tuple[set[str], set[str], set[str], set[str]]:
    """(every name spelled anywhere, every name defined (function, class, module), every qualified module-level name,
    every module) of the ``deepspeed`` package under ``package``.

    Qualified names are ``deepspeed.a.b`` for each module and package, ``deepspeed.a.b.X`` for each name bound at the
    top of ``deepspeed/a/b.py`` (or ``b/__init__.py``), and also ``deepspeed.a.X`` for a name bound at the top of a
    module directly inside package ``deepspeed/a/`` (a package usually re-exports its modules' names with ``*``)."""
    names: set[str] = set()
    defined: set[str] = set()
    qualified: set[str] = set()
    modules: set[str] = set()
    root = package / "deepspeed"
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        else:
            names.add(parts[-1])
            defined.add(parts[-1])
        module = ".".join(parts)
        text = path.read_text(encoding="utf-8", errors="replace")
        names.update(SPELLED.findall(text))
        defined.update(DEFINED.findall(text))
        top = {a or b for a, b in TOP_LEVEL.findall(text)} | _imported_names(text)
        qualified.add(module)
        modules.add(module)
        qualified.update(f"{module}.{n}" for n in top)
        if path.name != "__init__.py" and len(parts) > 1:
            qualified.update(f"{'.'.join(parts[:-1])}.{n}" for n in top)
    return names, defined, qualified, modules


def build(versions: list[str], package_of: Callable[[str], Path]) -> dict:
    """The index over ``versions`` (oldest first); ``package_of(version)`` is the folder holding its ``deepspeed/``."""
    names: dict[str, list[int]] = {}
    defined: dict[str, list[int]] = {}
    qualified: dict[str, list[int]] = {}
    modules: dict[str, list[int]] = {}
    for at, version in enumerate(versions):
        found, defs, dotted, packages = names_of(package_of(version))
        for table, these in ((names, found), (defined, defs), (qualified, dotted), (modules, packages)):
            for name in these:
                table.setdefault(name, []).append(at)
    return {"generated_by": "python -m dsfields.extract.source_index", "format": FORMAT, "releases": versions,
            "names": {n: index_runs(r) for n, r in sorted(names.items())},
            "defined": {n: index_runs(r) for n, r in sorted(defined.items())},
            "qualified": {n: index_runs(r) for n, r in sorted(qualified.items())},
            "modules": {n: index_runs(r) for n, r in sorted(modules.items())}}


def _unpacked(version: str, cache: Path, work: Path) -> Path:
    """The folder holding ``deepspeed/`` of the release's sdist (unpacked once under ``work``)."""
    target = work / version
    if not (target / "deepspeed").is_dir():
        archive = cache / version / f"deepspeed-{version}.tar.gz"
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if "/deepspeed/" in m.name and m.isfile() and m.name.endswith(".py")]
            for member in members:
                member.name = member.name.split("/", 1)[1]
            tar.extractall(target, members=members, filter="data")
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.extract.source_index [--sdists DIR]``: write ``generated/source-names.json``."""
    import argparse
    import tempfile

    from dsfields.model.store import available_versions, repo_generated_dir

    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.source_index")
    parser.add_argument("--sdists", type=Path, default=Path.home() / ".cache" / "dsfields" / "sdist",
                        help="folder of <version>/deepspeed-<version>.tar.gz (the snapshot factory's cache)")
    args = parser.parse_args(argv)
    versions = available_versions()
    with tempfile.TemporaryDirectory(prefix="dsfields-source-names-") as work:
        index = build(versions, lambda v: _unpacked(v, args.sdists, Path(work)))
    target = repo_generated_dir() / FILE_NAME
    target.write_text(json.dumps(index, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    counts = ", ".join(f"{len(index[k])} {k}" for k in ("names", "defined", "qualified", "modules"))
    print(f"{target}: {counts}, {len(versions)} releases",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
