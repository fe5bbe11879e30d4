"""The layers of dsfields, enforced on every import statement (lazy ones inside functions included).

A module's layer is the folder it lives in (``dsfields/<folder>/``); the folders are ordered bottom to top:

    model/      typed records, storage, wording, history, prose — stdlib only
    hf/         the HF Trainer and accelerate domain over the committed HF snapshots — stdlib only
    launch/     the user-run launch (``check --launch``): may import DeepSpeed and torch, lazily, in its worker
    extract/    the snapshot factory: the only other package that may import DeepSpeed, torch, pydantic, griffe
    consumers   every other module: lookup, diff, check/, schema, resolve, migrate, estimate, docs/ …
    cli         top: the only module that may import both extract/ and the consumers

A folder imports its own and the folders below it, never one above. A consumer may import a module of
``launch/`` only where nothing that module reaches imports a heavy package (the catalogue, the paths, the
client and the verdict): ``check --launch`` gets the launch itself passed in from the CLI.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "extractor" / "dsfields"
DOMAINS = ("model", "hf", "launch", "extract")
"""The folders that are layers, bottom first; any other folder or module of the package is a consumer."""
HEAVY = {"deepspeed", "torch", "pydantic", "griffe", "transformers", "accelerate"}
"""Third-party packages only extraction and the launch may import (``pip install dsfields`` pulls none of them)."""
MAY_IMPORT_HEAVY = ("launch", "extract")
SITE_ONLY = {"jinja2", "mkdocs", "material", "jieba"}
"""Needed by the docs build alone (the ``docs`` extra)."""
CONSUMER_THIRD_PARTY = {"hjson"}
OPTIONAL_EXTRA = {"dsfields.mcp_server": {"mcp", "mcp_types", "anyio"}}
"""A consumer module that serves an optional extra imports that extra's packages (``dsfields[mcp]``), no other."""
MODEL_THIRD_PARTY = {"dsfields.model.safewrite": {"filelock"}}
"""The model is stdlib only, but for the one module of locks and atomic writes: ``filelock`` (a base dependency)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def imports_in(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Every module an import statement names, at any depth, absolute (relative ones resolved)."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            # `from dsfields import check` imports the submodule dsfields.check
            if base == "dsfields":
                found += [(node.lineno, f"dsfields.{a.name}") for a in node.names if a.name != "__version__"]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            found.append((node.lineno, str(node.args[0].value)))
    return found


def layer(module: str) -> str:
    """The layer of a dsfields module: its folder, or consumer, cli, face."""
    if module in ("dsfields.cli", "dsfields.__main__"):
        return "cli"
    if module == "dsfields":
        return "face"
    folder = module.split(".")[1]
    return folder if folder in DOMAINS else "consumer"


def _rank(kind: str) -> int:
    return DOMAINS.index(kind) if kind in DOMAINS else len(DOMAINS)


def allowed(importer: str, imported: str) -> bool:
    top = imported.split(".")[0]
    kind = layer(importer)
    if top != "dsfields":
        if top in sys.stdlib_module_names or top == "__future__":
            return True
        if kind in MAY_IMPORT_HEAVY:
            return True
        if kind == "consumer":
            if importer.startswith("dsfields.docs"):
                return top in SITE_ONLY | CONSUMER_THIRD_PARTY
            return top in CONSUMER_THIRD_PARTY | OPTIONAL_EXTRA.get(importer, set())
        return top in MODEL_THIRD_PARTY.get(importer, ())  # model, hf, cli and the package face: stdlib only
    if imported == "dsfields":
        return True  # __version__
    target = layer(imported)
    if kind == "cli":
        return True
    if kind in DOMAINS:
        return target in DOMAINS and _rank(target) <= _rank(kind)
    if target == "extract":
        return False  # consumers and the face serve committed snapshots, never extraction
    if target == "launch":
        return kind == "consumer" and not heavy_reached(imported)
    # The public face (load_snapshot, lookup_key, check_file, diff_releases) serves committed snapshots
    # through the consumers, so `import dsfields` stays free of DeepSpeed.
    return True


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_respect_the_layers(path):
    importer = module_name(path)
    wrong = [f"line {line}: {name}" for line, name in imports(path) if not allowed(importer, name)]
    assert wrong == [], f"{importer} ({layer(importer)}) may not import: {wrong}"


def test_every_package_says_what_it_may_import():
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if init.parent == PACKAGE:
            continue  # the package face: its docstring shows the public functions instead
        assert "import" in doc.lower(), f"{init.relative_to(PACKAGE.parent)}: say in the docstring what it may import"


def test_the_rule_catches_lazy_and_relative_imports():
    """The checker itself: imports hidden in a function body of a consumer are found and refused."""
    source = ("def f():\n    import deepspeed\n    from dsfields.extract import build\n"
              "    from .extract import oracle\n    importlib.import_module('torch')\n")
    found = [name for _, name in imports_in(source, "dsfields.lookup")]
    assert found == ["deepspeed", "dsfields.extract", "dsfields.extract", "torch"]
    assert not any(allowed("dsfields.lookup", name) for name in found)
    assert all(allowed("dsfields.cli", name) for name in found if name.startswith("dsfields"))


def _known() -> dict[str, Path]:
    return {module_name(p): p for p in MODULES}


def _named(path: Path, known: dict[str, Path]) -> set[str]:
    """The dsfields modules one file imports (``from dsfields.launch import ops`` names dsfields.launch.ops)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = {name for _, name in imports(path)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in out if name in known}


def _reached(start: str) -> set[str]:
    """Every dsfields module ``start`` imports, directly or through others (lazy imports included)."""
    known = _known()
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += _named(known[module], known)
    return seen


def heavy_reached(module: str) -> list[str]:
    """The heavy packages ``module`` or anything it reaches imports (lazily too)."""
    known = _known()
    return sorted({name.split(".")[0] for reached in _reached(module) for _, name in imports(known[reached])
                   if name.split(".")[0] in HEAVY})


def test_the_launch_face_is_light_and_its_worker_is_not():
    """What consumers import of launch/ reaches no heavy package; the worker does reach DeepSpeed (lazily)."""
    consumers = [m for m in _known() if layer(m) == "consumer"]
    used = {name for m in consumers for _, name in imports(_known()[m]) if name.startswith("dsfields.launch")}
    assert used, "no consumer imports the launch: the check --launch face moved?"
    assert {m: heavy_reached(m) for m in sorted(used) if heavy_reached(m)} == {}
    assert "deepspeed" in heavy_reached("dsfields.launch.launcher")


def test_no_two_modules_share_a_file_name():
    """A file name used twice in one tree is the first sign of a domain spread over layers."""
    names: dict[str, list[str]] = {}
    for path in MODULES:
        if path.name not in ("__init__.py", "__main__.py"):
            names.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    assert {name: where for name, where in names.items() if len(where) > 1} == {}


def test_no_import_circles():
    """No group of modules imports each other in a circle (lazy imports included): ``dev/import_circles.py``'s
    own finder, so the test and the command count the same circles."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_circles", REPO / "dev" / "import_circles.py")
    assert spec is not None and spec.loader is not None
    finder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(finder)
    assert finder.package_circles() == []
