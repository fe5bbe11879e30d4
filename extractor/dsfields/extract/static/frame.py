"""Reading one function body in one context: its state, its enclosing conditions, and the records it makes.

A :class:`Frame` holds what each local name holds (:mod:`.values`), the conditions the current statement
sits under, and the :class:`~.findings.Result` it fills. What it reads is added in layers, each a module:
statements (:mod:`.statements`), expressions (:mod:`.expressions`) and the calls it follows
(:mod:`.calls`, whose :class:`~.calls.FunctionReader` is the complete frame the scan runs).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from .abstract_values import Const, DefaultOf, IterKey, KeySet, Opaque, Path, Tracked, dotted, join, tests_of
from .classes import ClassIndex, FuncNode
from .modules import Module, NotConstant, Package
from .read_records import MISSING, Condition, PassedWhole, StaticRead, Test, Unplaced
from .results import UNRESOLVED, ChoiceHit, Result, is_json, json_form


@dataclass(frozen=True, eq=False)
class Pending:
    """An enclosing condition while a body is read; rendered to a :class:`Condition` only if a record needs it."""

    node: ast.expr
    tests: tuple[Test, ...]
    negated: bool


class Scan(Protocol):
    """What a frame asks of the scan round it belongs to (:class:`~.scan.Scanner`)."""

    pkg: Package
    classes: ClassIndex
    class_attrs: dict[tuple[str, str, str], Any]
    cross_attrs: dict[str, Any]
    local_defs: dict[tuple[str, str], FuncNode]
    rendered: dict[int, str]

    def analyze(self, module: Module, node: FuncNode, qualname: str, cls: str | None, bindings: dict[str, Any],
                stack: tuple[tuple[str, str], ...]) -> Result: ...

    def function_raises(self, node: ast.AST) -> bool: ...


class Frame:
    """Reading one function body in one context: state, conditions and records (the reading is in subclasses)."""

    current: ast.AST
    """The expression being read (:meth:`read_iterate` records an iteration there)."""

    def __init__(
        self,
        scanner: Scan,
        module: Module,
        qualname: str,
        cls: str | None,
        env: dict[str, Any],
        conds: list[Pending],
        stack: tuple[tuple[str, str], ...],
        node: FuncNode,
    ) -> None:
        self.s = scanner
        self.pkg = scanner.pkg
        self.mod = module
        self.qualname = qualname
        self.cls = cls
        self.env = env
        self.conds = conds
        self.stack = stack
        self.node = node
        self.result = Result()
        self.returns: list[Any] = []
        self.in_assert = False
        self.argcache: dict[int, Any] = {}
        self.counted: set[str] = set()
        """Names a statement changed in place (``count += 1``): no constant after a branch or loop joins."""

    def ev(self, node: ast.expr | None) -> Any:
        """The value ``node`` holds here (:class:`~.expressions.Expressions` reads it)."""
        raise NotImplementedError

    # ------------------------------------------------------------ conditions
    def condition(self, node: ast.expr, value: Any) -> Pending:
        return Pending(node, tests_of(value), False)

    def negate(self, cond: Pending) -> Pending:
        tests = tuple(t.negated() for t in cond.tests) if len(cond.tests) == 1 else ()
        return Pending(cond.node, tests, not cond.negated)

    def frozen_conds(self) -> tuple[Condition, ...]:
        """The enclosing conditions as records (their text is rendered once per node and scan)."""
        out = []
        for cond in self.conds:
            text = self.s.rendered.get(id(cond.node))
            if text is None:
                text = self.s.rendered[id(cond.node)] = self.render(cond.node)
            if cond.negated:
                key = -id(cond.node)
                text = self.s.rendered.get(key)
                if text is None:
                    text = self.s.rendered[key] = self.render(_negated_node(cond.node))
            out.append(Condition(text, cond.tests))
        return tuple(out)

    def render(self, node: ast.expr) -> str:
        """Source text of ``node`` with the package's constants spelled as their values."""
        frame = self

        class Resolve(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                if n.id in frame.env or n.id in ("True", "False", "None"):
                    return n
                value = frame.constant_of(n)
                return ast.Constant(value) if isinstance(value, str | int | float | bool) else n

            def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
                value = frame.constant_of(n)
                if isinstance(value, str | int | float | bool):
                    return ast.Constant(value)
                self.generic_visit(n)
                return n

        try:
            return ast.unparse(Resolve().visit(copy.deepcopy(node)))
        except Exception:
            return ast.unparse(node)

    def constant_of(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id not in self.env:
            try:
                return self.pkg.constant(self.mod.name, node.id)
            except NotConstant:
                return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in self.env:
            try:
                return self.pkg.evaluate(self.mod.name, node)
            except NotConstant:
                return None
        return None

    # ---------------------------------------------------------------- records
    def where(self, node: ast.AST) -> tuple[str, int, str]:
        return self.mod.rel, getattr(node, "lineno", self.node.lineno), self.qualname

    def emit(self, container: Tracked, key: str, op: str, default: Any, node: ast.AST) -> None:
        file, line, function = self.where(node)
        if default is MISSING:
            value, rep = MISSING, None
        elif isinstance(default, Const):
            value = json_form(default.value)
            rep = default.repr if default.repr else (None if is_json(default.value) else repr(default.value))
        elif isinstance(default, Tracked):
            value, rep = None, "the value of " + ", ".join(sorted(dotted(p) for p in default.paths))
        elif isinstance(default, Opaque):
            value, rep = None, default.text
        else:
            value, rep = None, "<unknown>"
        conds = self.frozen_conds()
        for path in sorted(container.paths):
            self.result.reads.add(StaticRead(dotted(path + (key,)), key, op, value, rep, conds, file, line, function))

    def read(self, container: Tracked, key: Any, op: str, default_node: ast.expr | None | Any, node: ast.AST) -> Any:
        """Record ``op`` of ``key`` in ``container``; returns the value read."""
        default: Any = MISSING
        if default_node is not MISSING:
            default = Const(None) if default_node is None else self.ev_default(default_node)
        if isinstance(key, Const) and isinstance(key.value, str):
            self.emit(container, key.value, op, default, node)
            return container.child(key.value)
        if isinstance(key, KeySet):
            for name in key.keys:
                d = default
                if isinstance(default, DefaultOf) and key.defaults is not None:
                    d = Const(dict(key.defaults).get(name))
                self.emit(container, name, op, d, node)
            out = None
            for name in key.keys:
                out = join(out, container.child(name))
            return out
        if isinstance(key, IterKey):
            return container.child("*")
        file, line, function = self.where(node)
        expr = ast.unparse(node)
        for path in sorted(container.paths):
            self.result.unplaced.add(
                Unplaced(
                    None, expr, f"key is not a constant (container {dotted(path) or '<root>'})", file, line, function
                )
            )
        # Still a part of ds_config, at a path nobody knows (0.8-0.19.2's ``param_dict[QUANTIZE_TRAINING]``,
        # a name defined nowhere): a callee reading it must read there, not at the root its parameter's
        # name suggests. The marker keeps it tracked; :func:`sweep_unresolved` lists its reads as unplaced.
        return Tracked(frozenset((f"{UNRESOLVED}{expr} (container {dotted(path) or '<root>'}){UNRESOLVED}",)
                                 for path in container.paths))

    def ev_default(self, node: ast.expr) -> Any:
        value = self.ev(node)
        if isinstance(value, Const | DefaultOf | Tracked):
            return value
        return Opaque(ast.unparse(node))

    def read_iterate(self, container: Tracked) -> None:
        self.emit(container, "*", "iterate", MISSING, self.current)

    def passed(self, path: Path, to: str, kind: str, node: ast.AST) -> None:
        file, line, function = self.where(node)
        self.result.passed.add(PassedWhole(dotted(path), to, kind, self.frozen_conds(), file, line, function))

    def hit(self, value: Tracked, values: Iterable[Any], how: str, constant: str | None, node: ast.AST) -> None:
        file, line, function = self.where(node)
        vals = tuple(json_form(v) for v in values)
        raises = self.s.function_raises(self.node)
        for path in value.paths:
            self.result.hits.add(ChoiceHit(dotted(path), vals, how, value.norm, constant, file, line, function, raises))

    def unplaced_candidate(self, key_node: ast.expr, key: Any, node: ast.AST, reason: str) -> None:
        """A read with a config-like constant key on a container the scan could not trace."""
        if not (isinstance(key, Const) and isinstance(key.value, str) and isinstance(key_node, ast.Name)):
            return
        name = key_node.id
        found = self.pkg.lookup(self.mod.name, name)
        home = found[1][0].name if found is not None and found[0] == "assign" else ""
        has_default = self.constant_of(ast.Name(f"{name}_DEFAULT")) is not None or _has_name(
            self.pkg, self.mod.name, f"{name}_DEFAULT"
        )
        if not (has_default or (home.endswith("constants") and "config" in self.pkg.text(home).lower())):
            return
        file, line, function = self.where(node)
        self.result.unplaced.add(Unplaced(key.value, ast.unparse(node), reason, file, line, function))


_SWAP: dict[type, type] = {
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def _negated_node(node: ast.expr) -> ast.expr:
    """``not (x)`` spelled simply: ``a in b`` -> ``a not in b``, ``not x`` -> ``x``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAP:
        return ast.Compare(node.left, [_SWAP[type(node.ops[0])]()], node.comparators)
    return ast.UnaryOp(ast.Not(), node)


def _has_name(pkg: Package, modname: str, name: str) -> bool:
    try:
        pkg.constant(modname, name)
    except NotConstant:
        return pkg.lookup(modname, name) is not None
    return True
