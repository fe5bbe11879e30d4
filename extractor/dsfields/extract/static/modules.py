"""A lazy index of a package's modules with a constants resolver, built on plain ``ast``.

DeepSpeed names every config key through constants (``FP16 = "fp16"``) reached by chains of
``from .constants import *``, re-exports and string concatenation. Reading a key means resolving
those names to strings without importing DeepSpeed (any release, no torch). Parsing all ~750 files
of a release takes about two seconds, so files are read as text up front and parsed only when the
scanner needs them (a module that is imported from, or whose text mentions a config reader).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SENTINEL = object()


class NotConstant(Exception):
    """The expression is not a compile-time constant (its source text is kept for a repr)."""


@dataclass(frozen=True)
class Def:
    """A module-level function or class definition, with the module that holds it."""

    module: Module
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    qualname: str

    def __hash__(self) -> int:
        return hash((self.module.name, self.qualname))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Def) and (self.module.name, self.qualname) == (other.module.name, other.qualname)


@dataclass(eq=False)
class Module:
    """One parsed file: its top-level names, imports and star imports."""

    name: str
    path: Path
    rel: str
    is_package: bool
    tree: ast.Module
    assigns: dict[str, ast.expr] = field(default_factory=dict)
    assign_lines: dict[str, int] = field(default_factory=dict)
    defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """local name -> (module, attribute or None for the module itself)"""
    stars: list[str] = field(default_factory=list)


class Package:
    """All ``.py`` files under one package directory, parsed on demand."""

    def __init__(self, package_dir: Path) -> None:
        self.root = package_dir.resolve()
        self.base = self.root.parent
        self.top = self.root.name
        self.files: dict[str, Path] = {}
        for path in sorted(self.root.rglob("*.py")):
            rel = path.relative_to(self.base)
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.files[".".join(parts)] = path
        self._text: dict[str, str] = {}
        self._modules: dict[str, Module | None] = {}
        self._const: dict[tuple[str, str], Any] = {}
        self._resolving: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ files
    def text(self, name: str) -> str:
        if name not in self._text:
            self._text[name] = self.files[name].read_text(encoding="utf-8", errors="replace")
        return self._text[name]

    def grep(self, pattern: re.Pattern[str], literals: tuple[str, ...] = ()) -> list[str]:
        """Module names whose source matches ``pattern`` (no parsing).

        ``literals``: strings one of which every match contains; a file holding none is skipped
        without running the regex (a substring test is many times faster than an alternation).
        """
        return [name for name in self.files
                if (not literals or any(w in self.text(name) for w in literals)) and pattern.search(self.text(name))]

    @property
    def parsed(self) -> int:
        return sum(1 for m in self._modules.values() if m is not None)

    def module(self, name: str) -> Module | None:
        if name in self._modules:
            return self._modules[name]
        path = self.files.get(name)
        mod = None
        if path is not None:
            try:
                tree = ast.parse(self.text(name), filename=str(path))
            except (SyntaxError, ValueError):
                tree = None
            if tree is not None:
                mod = Module(
                    name=name,
                    path=path,
                    rel=path.relative_to(self.base).as_posix(),
                    is_package=path.name == "__init__.py",
                    tree=tree,
                )
                self._index(mod, tree.body)
        self._modules[name] = mod
        return mod

    def _index(self, mod: Module, body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        mod.assigns[target.id] = stmt.value
                        mod.assign_lines[target.id] = stmt.lineno
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                mod.assigns[stmt.target.id] = stmt.value
                mod.assign_lines[stmt.target.id] = stmt.lineno
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                mod.defs[stmt.name] = stmt
            elif isinstance(stmt, ast.ImportFrom):
                source = self._absolute(mod, stmt.module, stmt.level)
                for alias in stmt.names:
                    if alias.name == "*":
                        mod.stars.append(source)
                    else:
                        mod.imports[alias.asname or alias.name] = (source, alias.name)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        mod.imports[alias.asname] = (alias.name, None)
                    else:
                        head = alias.name.split(".")[0]
                        mod.imports[head] = (head, None)
            elif isinstance(stmt, ast.If | ast.Try):
                self._index(mod, stmt.body)
                for handler in getattr(stmt, "handlers", []):
                    self._index(mod, handler.body)
                self._index(mod, stmt.orelse)
                self._index(mod, getattr(stmt, "finalbody", []))

    def _absolute(self, mod: Module, name: str | None, level: int) -> str:
        if not level:
            return name or ""
        parts = mod.name.split(".")
        if not mod.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join([*parts, name] if name else parts)

    # ------------------------------------------------------------ resolution
    def lookup(self, modname: str, name: str, _seen: frozenset[str] = frozenset()) -> tuple[str, Any] | None:
        """What ``name`` means in module ``modname``.

        Returns ``("assign", (Module, expr))``, ``("def", Def)``, ``("module", name)`` or ``None``
        (unknown, or outside the package).
        """
        if modname in _seen:
            return None
        mod = self.module(modname)
        if mod is None:
            return None
        if name in mod.defs:
            return ("def", Def(mod, mod.defs[name], name))
        if name in mod.assigns:
            return ("assign", (mod, mod.assigns[name]))
        if name in mod.imports:
            source, attr = mod.imports[name]
            if attr is None:
                return ("module", source)
            sub = f"{source}.{attr}"
            if sub in self.files:
                return ("module", sub)
            return self.lookup(source, attr, _seen | {modname})
        if not name.startswith("_"):
            for star in reversed(mod.stars):
                found = self.lookup(star, name, _seen | {modname})
                if found is not None:
                    return found
        return None

    def constant(self, modname: str, name: str) -> Any:
        """The value of constant ``name`` in ``modname``; raises :class:`NotConstant`."""
        key = (modname, name)
        if key in self._const:
            value = self._const[key]
            if value is _SENTINEL:
                raise NotConstant(name)
            return value
        if key in self._resolving:
            raise NotConstant(name)
        self._resolving.add(key)
        try:
            found = self.lookup(modname, name)
            if found is None or found[0] != "assign":
                raise NotConstant(name)
            mod, expr = found[1]
            value = self.evaluate(mod.name, expr)
        except NotConstant:
            self._const[key] = _SENTINEL
            raise
        finally:
            self._resolving.discard(key)
        self._const[key] = value
        return value

    def where(self, modname: str, name: str) -> tuple[str, int] | None:
        """``(file, line)`` of the assignment that defines constant ``name`` as seen from ``modname``."""
        found = self.lookup(modname, name)
        if found is None or found[0] != "assign":
            return None
        mod, expr = found[1]
        for key, value in mod.assigns.items():
            if value is expr:
                return mod.rel, mod.assign_lines[key]
        return None

    def evaluate(self, modname: str, node: ast.expr) -> Any:
        """Evaluate a constant expression in ``modname`` (literals, names, ``+``, f-strings...)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.constant(modname, node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found = self.lookup(modname, node.value.id)
            if found is not None and found[0] == "module":
                return self.constant(found[1], node.attr)
            if found is not None and found[0] == "def" and isinstance(found[1].node, ast.ClassDef):
                # `class ValidationMode: WARN = "WARN"` (a plain class of constants, not an Enum)
                defn = found[1]
                if not any(_base_name(b).endswith("Enum") for b in defn.node.bases):
                    for stmt in defn.node.body:
                        if (
                            isinstance(stmt, ast.Assign)
                            and len(stmt.targets) == 1
                            and isinstance(stmt.targets[0], ast.Name)
                            and stmt.targets[0].id == node.attr
                        ):
                            return self.evaluate(defn.module.name, stmt.value)
            raise NotConstant(ast.unparse(node))
        if isinstance(node, ast.Tuple):
            return tuple(self.evaluate(modname, e) for e in node.elts)
        if isinstance(node, ast.List):
            return [self.evaluate(modname, e) for e in node.elts]
        if isinstance(node, ast.Set):
            return {self.evaluate(modname, e) for e in node.elts}
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise NotConstant("**")
            pairs = zip(node.keys, node.values, strict=True)
            return {self.evaluate(modname, k): self.evaluate(modname, v) for k, v in pairs}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            operand = self.evaluate(modname, node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            if not isinstance(operand, int | float) or isinstance(operand, bool):
                raise NotConstant(ast.unparse(node))
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            left, right = self.evaluate(modname, node.left), self.evaluate(modname, node.right)
            try:
                return _binop(node.op, left, right)
            except Exception as exc:
                raise NotConstant(ast.unparse(node)) from exc
        if isinstance(node, ast.JoinedStr):
            out = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    out.append(str(part.value))
                elif isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1:
                    out.append(str(self.evaluate(modname, part.value)))
                else:
                    raise NotConstant(ast.unparse(node))
            return "".join(out)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("list", "tuple", "set", "frozenset")
            and len(node.args) == 1
            and not node.keywords
        ):
            inner = self.evaluate(modname, node.args[0])
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[node.func.id](inner)
        raise NotConstant(ast.unparse(node))


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _binop(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right
    if isinstance(op, ast.Pow):
        return left**right
    if isinstance(op, ast.Div):
        return left / right
    if isinstance(op, ast.FloorDiv):
        return left // right
    if isinstance(op, ast.Mod):
        return left % right
    if isinstance(op, ast.LShift):
        return left << right
    if isinstance(op, ast.BitOr):
        return left | right
    raise NotConstant(type(op).__name__)
