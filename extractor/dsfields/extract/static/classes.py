"""The package's classes as the scan needs them: a method found through the bases, a pydantic model recognised.

One :class:`ClassIndex` per scan round answers for every frame (methods cached by class and name).
"""

from __future__ import annotations

import ast
from typing import Any

from .modules import Def, Module, Package

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


class ClassIndex:
    """Classes and methods of ``pkg``, resolved from the source (never imported)."""

    def __init__(self, pkg: Package) -> None:
        self.pkg = pkg
        self.methods: dict[tuple[str, str, str], tuple[Module, FuncNode, str] | None] = {}

    def find_method(self, modname: str, clsname: str, meth: str, depth: int = 0) -> tuple[Module, FuncNode, str] | None:
        key = (modname, clsname, meth)
        if key not in self.methods:
            self.methods[key] = self._find_method(modname, clsname, meth, depth)
        return self.methods[key]

    def _find_method(self, modname: str, clsname: str, meth: str, depth: int) -> tuple[Module, FuncNode, str] | None:
        mod = self.pkg.module(modname)
        if mod is None or depth > 6:
            return None
        cls = _class_node(mod, clsname)
        if cls is None:
            return None
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == meth:
                return mod, stmt, f"{clsname}.{meth}"
        for base in cls.bases:
            found = self.resolve_class(mod, base)
            if found is not None:
                hit = self.find_method(found.module.name, found.qualname, meth, depth + 1)
                if hit is not None:
                    return hit
        return None

    def resolve_class(self, mod: Module, expr: ast.expr) -> Def | None:
        found = None
        if isinstance(expr, ast.Name):
            found = self.pkg.lookup(mod.name, expr.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            base = self.pkg.lookup(mod.name, expr.value.id)
            if base is not None and base[0] == "module":
                found = self.pkg.lookup(base[1], expr.attr)
        if found is not None and found[0] == "def" and isinstance(found[1].node, ast.ClassDef):
            return found[1]
        return None

    def is_model(self, defn: Def, depth: int = 0) -> bool:
        """A pydantic model (``BaseModel`` / ``DeepSpeedConfigModel`` among its bases)."""
        node = defn.node
        if not isinstance(node, ast.ClassDef) or depth > 8:
            return False
        for base in node.bases:
            name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
            if name in ("BaseModel", "DeepSpeedConfigModel"):
                return True
            found = self.resolve_class(defn.module, base)
            if found is not None and self.is_model(found, depth + 1):
                return True
        return False


def _class_node(mod: Module, qualname: str) -> ast.ClassDef | None:
    parts = qualname.split(".")
    node: Any = mod.defs.get(parts[0])
    for part in parts[1:]:
        if not isinstance(node, ast.ClassDef):
            return None
        node = next((s for s in node.body if isinstance(s, ast.ClassDef) and s.name == part), None)
    return node if isinstance(node, ast.ClassDef) else None


def is_classmethod(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def is_static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
