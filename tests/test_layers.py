"""The layers of dsfields, enforced on every import statement (lazy ones inside functions included).

    model/      bottom: typed records, storage, wording, history, prose — stdlib only
    extract/    the only package that may import DeepSpeed, torch, pydantic, griffe, transformers
    consumers   lookup, diff, check/, schema, resolve, migrate, estimate, configfile, links, termsafe, docs/
    cli         top: the only module that may import both extract/ and the consumers

A consumer that needs DeepSpeed gets it passed in from the CLI (``check --runtime``, ``diff installed``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "extractor" / "dsfields"
HEAVY = {"deepspeed", "torch", "pydantic", "griffe", "transformers", "accelerate"}
"""Third-party packages only extraction may import (``pip install dsfields`` pulls none of them)."""
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
    if module == "dsfields.cli" or module == "dsfields.__main__":
        return "cli"
    if module.startswith("dsfields.model"):
        return "model"
    if module.startswith("dsfields.extract"):
        return "extract"
    if module == "dsfields":
        return "face"
    return "consumer"


def allowed(importer: str, imported: str) -> bool:
    top = imported.split(".")[0]
    kind = layer(importer)
    if top != "dsfields":
        if top in sys.stdlib_module_names or top == "__future__":
            return True
        if kind == "extract":
            return True
        if kind == "consumer":
            if importer.startswith("dsfields.docs"):
                return top in SITE_ONLY | CONSUMER_THIRD_PARTY
            return top in CONSUMER_THIRD_PARTY | OPTIONAL_EXTRA.get(importer, set())
        return top in MODEL_THIRD_PARTY.get(importer, ())  # model, cli and the package face: stdlib only
    target = layer(imported) if imported != "dsfields" else "face"
    if target == "face":
        return True  # __version__
    return {
        "model": target == "model",
        "extract": target in ("model", "extract"),
        "consumer": target in ("model", "consumer"),
        "cli": True,
        # The public face (load_snapshot, lookup_key, check_file, diff_releases) serves committed snapshots
        # through the consumers; never through extract/, so `import dsfields` stays free of DeepSpeed.
        "face": target in ("model", "consumer"),
    }[kind]


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


USER_RUN_LAUNCH = ("launch_verdict", "launch_reset", "launcher", "launch_worker", "launch_client")
"""``extract/`` modules a user's ``check --launch`` runs: the client in ``dsfields check``, the worker it starts."""
SNAPSHOT_FACTORY = ("launch_witness", "build", "reconcile", "command", "snapshot_command", "releases", "static",
                    "probes", "absent")
"""``extract/`` modules only the making of snapshots runs (``dsfields extract``, ``snapshot``, ``--rules``)."""


def _reached(start: str) -> set[str]:
    """Every dsfields module ``start`` imports, directly or through others (lazy imports included)."""
    known = {module_name(p): p for p in MODULES}

    def named(path: Path) -> set[str]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out = {name for _, name in imports(path)}
        for node in ast.walk(tree):  # `from dsfields.extract import ops` imports the module dsfields.extract.ops
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                out |= {f"{node.module}.{alias.name}" for alias in node.names}
        return {name for name in out if name in known}

    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += named(known[module])
    return seen


@pytest.mark.parametrize("module", USER_RUN_LAUNCH)
def test_the_user_run_launch_never_imports_the_snapshot_factory(module):
    factory = {f"dsfields.extract.{name}" for name in SNAPSHOT_FACTORY}
    reached = _reached(f"dsfields.extract.{module}")
    wrong = sorted(m for m in reached if m in factory or any(m.startswith(f + ".") for f in factory))
    assert wrong == [], f"dsfields.extract.{module} reaches the snapshot factory's {wrong}"
    assert "dsfields.extract.launch_witness" in _reached("dsfields.extract.launch")  # the checker sees lazy imports
