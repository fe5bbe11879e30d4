"""The static reader scan: follow ds_config through DeepSpeed's functions and record every read.

Why: ``DeepSpeedConfig`` under probes only shows the reads a probe triggers. Many keys are read
only when a feature is on (``fp16.loss_scale_window``), per ``mode`` (``sparse_attention``), after
a section was copied whole into the engine (``progressive_layer_drop.theta``), or never at all
because the user's dict is merged into a literal default dict (``pipeline``). Reading the source
finds them in every release without running it.

How: each function is read once per calling context, statement by statement, keeping what each
local name holds (:mod:`.values`). Entries are the functions whose parameters are named like the
ds_config dict (``param_dict``, ``ds_config``...) and ``DeepSpeedConfig.__init__``; calls are
followed into the package with the arguments' values, so ``ElasticityConfig(param_dict)`` called
with ``ds_config["elasticity"]`` reads under ``elasticity``. A function reached that way is no
longer taken as a root entry. Dicts stored on ``self`` are followed to whoever reads the attribute
(``self._config.pld_params``), in rounds until nothing new is stored.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .modules import Def, Module, NotConstant, Package
from .records import MISSING, Choices, Condition, PassedWhole, StaticRead, Test, Unplaced
from .values import (
    Const,
    DefaultOf,
    Instance,
    Items,
    IterKey,
    KeySet,
    LocalFunc,
    Opaque,
    Path,
    Shape,
    Tests,
    Tracked,
    dotted,
    join,
)

SEED_PARAMS = frozenset({"param_dict", "ds_config", "ds_config_dict", "deepspeed_config"})
"""Parameter names taken to hold the whole ds_config when no caller says otherwise."""

READERS = frozenset({"get_scalar_param", "get_dict_param", "get_list_param"})
"""DeepSpeed's dict-reader helpers (``runtime/config_utils.py``): ``(d, KEY, DEFAULT)``."""

ROOT_CLASSES = frozenset({"DeepSpeedConfig"})
ENTRY_SEEDS: dict[tuple[str, str], tuple[str, ...]] = {("deepspeed", "initialize"): ("config",)}
"""Functions whose parameter holds the whole ds_config under a name no other reader uses:
``deepspeed.initialize(config=...)`` reads ``sequence_parallel_size`` and ``data_parallel_size``
(the mesh device) before ``DeepSpeedConfig`` exists, so neither the trace nor the scan of
``runtime/`` sees them."""
"""Classes whose ``__init__``'s first argument is the ds_config itself (a dict, or a path to one)."""

GENERIC_ATTRS = frozenset({"config", "_config", "params", "cfg", "args", "data", "kwargs", "param_dict", "dict"})
"""Attribute names too common to follow across classes (followed within their own class only)."""

UNRESOLVED = "\x00"
"""Encloses the path segment standing for a key the scan could not resolve (never in a JSON key)."""

_DEBUG = bool(__import__("os").environ.get("DSFIELDS_STATIC_DEBUG"))
MAX_DEPTH = 14
MAX_UNROLL = 24
MAX_ROUNDS = 5
_CASEFOLD = frozenset({"lower", "upper", "casefold"})
_PASS_THROUGH = frozenset({"dict", "list", "tuple", "sorted", "str", "int", "float", "bool", "set", "frozenset"})


@dataclass(frozen=True)
class ChoiceHit:
    path: str
    values: tuple[Any, ...] = field(hash=False)
    how: str
    normalized: str | None
    constant: str | None
    file: str
    line: int
    function: str
    raises: bool


@dataclass(frozen=True)
class ShapeItems:
    """``d.items()`` of a dict built in code: iterated key by key."""

    shape: Shape


@dataclass(frozen=True)
class Imported:
    """A name bound by an import inside the function being read."""

    module: str
    name: str


@dataclass(frozen=True)
class Store:
    module: str
    cls: str
    attr: str
    value: Any


@dataclass
class Result:
    """What reading one function (with its callees) found, and what it returns."""

    reads: set[StaticRead] = field(default_factory=set)
    passed: set[PassedWhole] = field(default_factory=set)
    hits: set[ChoiceHit] = field(default_factory=set)
    unplaced: set[Unplaced] = field(default_factory=set)
    stores: set[Store] = field(default_factory=set)
    reached: set[tuple[str, str]] = field(default_factory=set)
    ret: Any = None

    def merge(self, other: Result, conds: tuple[Condition, ...] = ()) -> None:
        """Add a callee's findings; ``conds`` (the call site's conditions) go before the callee's own."""
        if conds:
            self.reads |= {replace(r, conditions=conds + r.conditions) for r in other.reads}
            self.passed |= {replace(p, conditions=conds + p.conditions) for p in other.passed}
        else:
            self.reads |= other.reads
            self.passed |= other.passed
        self.hits |= other.hits
        self.unplaced |= other.unplaced
        self.stores |= other.stores
        self.reached |= other.reached


FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, eq=False)
class Pending:
    """An enclosing condition while a body is read; rendered to a :class:`Condition` only if a record needs it."""

    node: ast.expr
    tests: tuple[Test, ...]
    negated: bool


class Scanner:
    """One round of the scan: function results cached per (function, arguments, conditions)."""

    def __init__(self, pkg: Package, class_attrs: dict[tuple[str, str, str], Any], cross_attrs: dict[str, Any]) -> None:
        self.pkg = pkg
        self.class_attrs = class_attrs
        self.cross_attrs = cross_attrs
        self.memo: dict[Any, Result] = {}
        self.local_defs: dict[tuple[str, str], FuncNode] = {}
        self.raises: dict[int, bool] = {}
        self.rendered: dict[int, str] = {}
        self.methods: dict[tuple[str, str, str], tuple[Module, FuncNode, str] | None] = {}
        self.analyzed = 0

    # ----------------------------------------------------------------- driver
    def analyze(
        self,
        module: Module,
        node: FuncNode,
        qualname: str,
        cls: str | None,
        bindings: dict[str, Any],
        stack: tuple[tuple[str, str], ...],
    ) -> Result:
        ident = (module.name, qualname)
        key = (ident, node.lineno, tuple(sorted(bindings.items(), key=lambda kv: kv[0])))
        if key in self.memo:
            return self.memo[key]
        if ident in stack or len(stack) > MAX_DEPTH:
            return Result()
        self.memo[key] = Result()  # recursion through another context: empty
        self.analyzed += 1
        frame = Frame(self, module, qualname, cls, dict(bindings), [], stack + (ident,), node)
        frame.block(node.body)
        result = frame.result
        rets = [r for r in frame.returns if r is not None]
        ret = None
        for r in rets:
            ret = join(ret, r)
        result.ret = ret
        self.memo[key] = result
        return result

    def function_raises(self, node: ast.AST) -> bool:
        if id(node) not in self.raises:
            self.raises[id(node)] = any(isinstance(n, ast.Raise | ast.Assert) for n in ast.walk(node))
        return self.raises[id(node)]

    # ------------------------------------------------------------ resolution
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


def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_json_default(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_json_default(v) for v in value), key=repr)
    if isinstance(value, list):
        return [_json_default(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_default(v) for k, v in value.items()}
    return value


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list | tuple | set | frozenset):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _tests_of(value: Any) -> tuple[Test, ...]:
    if isinstance(value, Tests):
        return value.tests
    if isinstance(value, Tracked):
        return tuple(Test(dotted(p), "truthy") for p in sorted(value.paths))
    return ()


class Frame:
    """Reading one function body in one context."""

    def __init__(
        self,
        scanner: Scanner,
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

    # ------------------------------------------------------------- statements
    def block(self, stmts: list[ast.stmt]) -> None:
        pushed = 0
        for stmt in stmts:
            guard = self.stmt(stmt)
            if guard is not None:
                self.conds.append(guard)
                pushed += 1
        del self.conds[len(self.conds) - pushed :]

    def stmt(self, stmt: ast.stmt) -> Condition | None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            qual = f"{self.qualname}.<locals>.{stmt.name}"
            self.s.local_defs[(self.mod.name, qual)] = stmt
            self.env[stmt.name] = LocalFunc(self.mod.name, qual, stmt.lineno)
        elif isinstance(stmt, ast.ImportFrom):
            source = self.pkg._absolute(self.mod, stmt.module, stmt.level)
            for alias in stmt.names:
                if alias.name != "*":
                    self.env[alias.asname or alias.name] = Imported(source, alias.name)
        elif isinstance(stmt, ast.Assign):
            value = self.ev(stmt.value)
            for target in stmt.targets:
                self.assign(target, value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.ev(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            self.ev(stmt.value)
        elif isinstance(stmt, ast.If):
            return self.branch(stmt)
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            self.loop(stmt)
        elif isinstance(stmt, ast.While):
            test = self.ev(stmt.test)
            self.conds.append(self.condition(stmt.test, test))
            self.block(stmt.body)
            self.conds.pop()
            self.block(stmt.orelse)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                self.ev(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, None)
            self.block(stmt.body)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            self.block(stmt.body)
            for handler in stmt.handlers:
                self.block(handler.body)
            self.block(stmt.orelse)
            self.block(stmt.finalbody)
        elif isinstance(stmt, ast.Return):
            self.returns.append(self.ev(stmt.value) if stmt.value is not None else None)
        elif isinstance(stmt, ast.Expr):
            self.ev(stmt.value)
        elif isinstance(stmt, ast.Assert):
            self.in_assert = True
            try:
                self.ev(stmt.test)
            finally:
                self.in_assert = False
            if stmt.msg is not None:
                self.ev(stmt.msg)
        elif isinstance(stmt, ast.Raise):
            if stmt.exc is not None:
                self.ev(stmt.exc)
        return None

    def branch(self, stmt: ast.If) -> Condition | None:
        test = self.ev(stmt.test)
        cond = self.condition(stmt.test, test)
        neg = self.negate(cond)
        before = dict(self.env)
        self.conds.append(cond)
        self.block(stmt.body)
        self.conds.pop()
        env_a, self.env = self.env, dict(before)
        self.conds.append(neg)
        self.block(stmt.orelse)
        self.conds.pop()
        env_b = self.env
        if _terminates(stmt.body):
            self.env = env_b
        elif stmt.orelse and _terminates(stmt.orelse):
            self.env = env_a
        else:
            self.env = {k: join(env_a.get(k), env_b.get(k)) for k in env_a.keys() | env_b.keys()}
        if _terminates(stmt.body) and not stmt.orelse and not isinstance(stmt.body[-1], ast.Raise):
            return neg  # an early `return`/`raise`: the rest of the block runs only when the test failed
        return None

    def loop(self, stmt: ast.For | ast.AsyncFor) -> None:
        it = self.ev(stmt.iter)
        before = dict(self.env)
        unrolled = self.unroll(it)
        if unrolled is not None:
            # a loop over known keys (a literal dict, a built dict): read the body once per key
            pair = isinstance(stmt.target, ast.Tuple | ast.List) and len(stmt.target.elts) == 2
            for key, value in unrolled:
                if pair:
                    self.assign(stmt.target.elts[0], Const(key))  # type: ignore[attr-defined]
                    self.assign(stmt.target.elts[1], value)  # type: ignore[attr-defined]
                else:
                    self.assign(stmt.target, Const(key))
                self.block(stmt.body)
            if isinstance(it, ShapeItems) and it.shape.base is not None:
                self.bind_loop(stmt.target, Items(it.shape.base))
                self.block(stmt.body)
        else:
            self.bind_loop(stmt.target, it)
            self.block(stmt.body)
        self.env = {k: join(before.get(k), self.env.get(k)) for k in before.keys() | self.env.keys()}
        self.block(stmt.orelse)

    def unroll(self, it: Any) -> list[tuple[str, Any]] | None:
        if isinstance(it, ShapeItems):
            return [(k, v) for k, v in it.shape.items if k != "*"][:MAX_UNROLL]
        if isinstance(it, KeySet) and len(it.keys) <= MAX_UNROLL:
            defaults = dict(it.defaults) if it.defaults is not None else None
            return [(k, Const(defaults[k]) if defaults is not None else None) for k in it.keys]
        return None

    def bind_loop(self, target: ast.expr, it: Any) -> None:
        pair = isinstance(target, ast.Tuple | ast.List) and len(target.elts) == 2
        if isinstance(it, Items):
            self.read_iterate(it.of)
            if pair:
                self.assign(target.elts[0], IterKey(it.of))  # type: ignore[attr-defined]
                self.assign(target.elts[1], it.of.child("*"))  # type: ignore[attr-defined]
            else:
                self.assign(target, None)
        elif isinstance(it, Tracked):
            self.read_iterate(it)
            self.assign(target, IterKey(it))
        elif isinstance(it, Const) and isinstance(it.value, list | tuple | set | frozenset):
            keys = (
                tuple(sorted(k for k in it.value if isinstance(k, str)))
                if isinstance(it.value, set | frozenset)
                else tuple(k for k in it.value if isinstance(k, str))
            )
            if keys and len(keys) == len(it.value) and not pair:
                self.assign(target, KeySet(keys, None, "literal"))
            else:
                self.assign(target, None)
        elif isinstance(it, KeySet):
            if pair and it.defaults is not None:
                self.assign(target.elts[0], it)  # type: ignore[attr-defined]
                self.assign(target.elts[1], DefaultOf(it))  # type: ignore[attr-defined]
            else:
                self.assign(target, it)
        else:
            self.assign(target, None)

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            if value is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.assign(elt, None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None)
        elif isinstance(target, ast.Attribute):
            if isinstance(target.value, ast.Name) and target.value.id == "self" and self.cls:
                name = f"self.{target.attr}"
                if value is None:
                    self.env.pop(name, None)
                    return
                self.env[name] = value
                if isinstance(value, Tracked | Shape):
                    self.result.stores.add(Store(self.mod.name, self.cls, target.attr, value))
                    for path in _paths_of(value):
                        if path:
                            self.passed(path, f"{self.cls}.{target.attr}", "attribute", target)
            else:
                self.ev(target.value)
        elif isinstance(target, ast.Subscript):
            self.store_item(target, value)

    def store_item(self, target: ast.Subscript, value: Any) -> None:
        key = self.ev(target.slice)
        holder = target.value
        if not isinstance(holder, ast.Name):
            self.ev(holder)
            return
        current = self.env.get(holder.id)
        if current is None and holder.id not in self.env:
            current = self.ev(holder)
        if isinstance(current, Shape) and isinstance(key, Const) and isinstance(key.value, str):
            self.env[holder.id] = current.with_item(key.value, value)
        elif isinstance(current, Shape) and isinstance(key, IterKey):
            self.env[holder.id] = current.with_item("*", value)
        elif (
            isinstance(current, Const)
            and isinstance(current.value, dict)
            and isinstance(key, IterKey)
            and current.value
        ):
            # `config = DEFAULTS; for k, v in user.items(): config[k] = v`: the defaults' keys are the fields
            for name, default in current.value.items():
                if isinstance(name, str):
                    self.emit(key.of, name, "merged_default", Const(default), target)
            for path in key.of.paths:
                self.passed(path, f"literal default dict {holder.id}", "merge", target)
        elif isinstance(current, Const) and isinstance(current.value, dict) and value is not None:
            # `out = {}; out[K] = <read>`: the literal becomes a dict built in code
            items = tuple((k, Const(v)) for k, v in current.value.items() if isinstance(k, str))
            shape = Shape(None, items)
            if isinstance(key, Const) and isinstance(key.value, str):
                self.env[holder.id] = shape.with_item(key.value, value)
            elif isinstance(key, IterKey):
                self.env[holder.id] = shape.with_item("*", value)

    # ------------------------------------------------------------ conditions
    def condition(self, node: ast.expr, value: Any) -> Pending:
        return Pending(node, _tests_of(value), False)

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
            value = _json_default(default.value)
            rep = default.repr if default.repr else (None if _is_json(default.value) else repr(default.value))
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
        vals = tuple(_json_default(v) for v in values)
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

    # ------------------------------------------------------------ expressions
    current: ast.AST

    def ev(self, node: ast.expr | None) -> Any:
        if node is None:
            return None
        if id(node) in self.argcache:
            return self.argcache[id(node)]
        self.current = node
        if isinstance(node, ast.Constant):
            return Const(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            if not _constant_like(node.id) and node.id not in self.mod.assigns:
                return None  # `torch`, `get_accelerator`: not worth parsing the module it comes from
            try:
                return Const(self.pkg.constant(self.mod.name, node.id))
            except NotConstant:
                return None
        if isinstance(node, ast.Attribute):
            return self.ev_attribute(node)
        if isinstance(node, ast.Subscript):
            return self.ev_subscript(node)
        if isinstance(node, ast.Call):
            out = self.ev_call(node)
            self.current = node
            return out
        if isinstance(node, ast.Compare):
            return self.ev_compare(node)
        if isinstance(node, ast.BoolOp):
            return self.ev_boolop(node)
        if isinstance(node, ast.UnaryOp):
            operand = self.ev(node.operand)
            if isinstance(node.op, ast.Not):
                tests = _tests_of(operand)
                return Tests(tuple(t.negated() for t in tests)) if len(tests) == 1 else None
            if isinstance(operand, Const) and isinstance(node.op, ast.USub):
                try:
                    return Const(-operand.value)
                except TypeError:
                    return None
            return None
        if isinstance(node, ast.IfExp):
            test = self.ev(node.test)
            cond = self.condition(node.test, test)
            self.conds.append(cond)
            a = self.ev(node.body)
            self.conds[-1] = self.negate(cond)
            b = self.ev(node.orelse)
            self.conds.pop()
            return join(a, b)
        if isinstance(node, ast.BinOp):
            left, right = self.ev(node.left), self.ev(node.right)
            if isinstance(left, Const) and isinstance(right, Const):
                try:
                    return Const(self.pkg.evaluate(self.mod.name, node))
                except NotConstant:
                    return None
            return None
        if isinstance(node, ast.Dict):
            return self.ev_dict(node)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            elts = [self.ev(e) for e in node.elts]
            if elts and all(isinstance(e, Const) for e in elts):
                kind = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
                try:
                    return Const(kind(e.value for e in elts))
                except TypeError:
                    return None
            return None
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    self.ev(part.value)
            return None
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return self.ev_comprehension(node)
        if isinstance(node, ast.NamedExpr):
            value = self.ev(node.value)
            self.assign(node.target, value)
            return value
        if isinstance(node, ast.Starred | ast.Await):
            return self.ev(node.value)
        if isinstance(node, ast.FormattedValue):
            return self.ev(node.value)
        return None

    def ev_attribute(self, node: ast.Attribute) -> Any:
        base = node.value
        if isinstance(base, ast.Name) and base.id not in self.env and _constant_like(node.attr):
            found = self.pkg.lookup(self.mod.name, base.id)
            if found is not None and found[0] == "module":
                try:
                    return Const(self.pkg.constant(found[1], node.attr))
                except NotConstant:
                    return None
        if isinstance(base, ast.Name) and base.id == "self" and self.cls:
            name = f"self.{node.attr}"
            if name in self.env:
                return self.env[name]
            stored = self.s.class_attrs.get((self.mod.name, self.cls, node.attr))
            if stored is not None:
                return stored
        obj = self.ev(base)
        if isinstance(obj, Instance):
            stored = self.s.class_attrs.get((obj.module, obj.cls, node.attr))
            if stored is not None:
                return stored
        if _names_the_config(base):
            # `self._config.data_efficiency_config`: the DeepSpeedConfig's attribute, even where
            # another class stores an attribute of the same name
            for (_m, cls, attr), value in self.s.class_attrs.items():
                if attr == node.attr and cls in ROOT_CLASSES:
                    return value
        return self.s.cross_attrs.get(node.attr)

    def ev_subscript(self, node: ast.Subscript) -> Any:
        container = self.ev(node.value)
        key = self.ev(node.slice)
        if isinstance(container, Tracked):
            return self.read(container, key, "getitem", MISSING, node)
        if isinstance(container, Shape):
            return self.shape_get(container, key, "getitem", MISSING, node)
        if isinstance(container, Const) and isinstance(container.value, dict) and isinstance(key, Const):
            try:
                return Const(container.value[key.value]) if key.value in container.value else None
            except TypeError:
                return None
        if isinstance(container, Const) and isinstance(container.value, dict) and isinstance(key, Tracked):
            self.hit(
                key, [k for k in container.value if isinstance(k, str | int | bool)], "lookup", _name(node.value), node
            )
            return None
        if container is None:
            self.unplaced_candidate(node.slice, key, node, "container not traced to ds_config")
        return None

    def shape_get(self, shape: Shape, key: Any, op: str, default_node: Any, node: ast.AST) -> Any:
        if isinstance(key, Const) and isinstance(key.value, str):
            item = shape.get(key.value)
            if item is not None:
                return item
        elif isinstance(key, IterKey):
            return shape.get("*")
        if shape.base is not None:
            return self.read(shape.base, key, op, default_node, node)
        return None

    def ev_dict(self, node: ast.Dict) -> Any:
        base: Tracked | None = None
        items: list[tuple[str, Any]] = []
        consts: dict[Any, Any] = {}
        literal = True
        for k, v in zip(node.keys, node.values, strict=True):
            value = self.ev(v)
            if k is None:
                literal = False
                if isinstance(value, Tracked):
                    base = value if base is None else join(base, value)
                continue
            key = self.ev(k)
            if not isinstance(key, Const):
                literal = False
                continue
            if isinstance(value, Const) and literal:
                try:
                    consts[key.value] = value.value
                except TypeError:
                    literal = False
            else:
                literal = False
            if isinstance(key.value, str) and value is not None:
                items.append((key.value, value))
        if literal:
            return Const(consts)
        return Shape(base, tuple(items))

    def ev_comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Any:
        saved = dict(self.env)
        try:
            for gen in node.generators:
                self.bind_loop(gen.target, self.ev(gen.iter))
                for cond in gen.ifs:
                    self.ev(cond)
            if isinstance(node, ast.DictComp):
                self.ev(node.key)
                value = self.ev(node.value)
                return Shape(None, (("*", value),)) if value is not None else None
            return self.ev(node.elt)
        finally:
            self.env = saved

    def ev_boolop(self, node: ast.BoolOp) -> Any:
        values = []
        pushed = 0
        for operand in node.values:
            value = self.ev(operand)
            values.append(value)
            if isinstance(node.op, ast.And):
                self.conds.append(self.condition(operand, value))
                pushed += 1
        del self.conds[len(self.conds) - pushed :]
        if isinstance(node.op, ast.Or):
            for value in values:
                if isinstance(value, Tracked | Shape):
                    return value
            return None
        tests = tuple(t for v in values for t in _tests_of(v))
        return Tests(tests) if tests else None

    def ev_compare(self, node: ast.Compare) -> Any:
        tests: list[Test] = []
        left_node, left = node.left, self.ev(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.ev(right_node)
            tests.extend(self.compare(left_node, left, op, right_node, right, node))
            left_node, left = right_node, right
        return Tests(tuple(tests)) if tests else None

    def compare(self, ln: ast.expr, left: Any, op: ast.cmpop, rn: ast.expr, right: Any, node: ast.AST) -> list[Test]:
        out: list[Test] = []
        if isinstance(op, ast.In | ast.NotIn):
            present = isinstance(op, ast.In)
            if isinstance(right, Tracked | Shape):
                if isinstance(right, Shape):
                    if isinstance(left, Const) and isinstance(left.value, str) and right.get(left.value) is not None:
                        return out
                    if right.base is None:
                        return out
                    right = right.base
                self.read(right, left, "in", MISSING, node)
                if isinstance(left, Const) and isinstance(left.value, str):
                    out += [Test(dotted(p + (left.value,)), "present" if present else "absent") for p in right.paths]
            elif (
                isinstance(left, Tracked)
                and isinstance(right, Const)
                and isinstance(right.value, list | tuple | set | frozenset | dict)
            ):
                values = (
                    sorted(right.value, key=repr) if isinstance(right.value, set | frozenset) else list(right.value)
                )
                self.hit(left, values, "assert" if self.in_assert else "in", _name(rn), node)
                vals = tuple(_json_default(v) for v in values)
                out += [Test(dotted(p), "in" if present else "not in", vals) for p in left.paths]
            elif right is None and not isinstance(rn, ast.Constant):
                self.unplaced_candidate(ln, left, node, "container not traced to ds_config")
        elif isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
            tracked, other = (left, right) if isinstance(left, Tracked) else (right, left)
            if isinstance(tracked, Tracked) and isinstance(other, Const):
                name = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not"}[type(op)]
                if name in ("==", "!=") and other.value is not None:
                    self.hit(tracked, [other.value], "==", None, node)
                out += [Test(dotted(p), name, _json_default(other.value)) for p in tracked.paths]
        return out

    # ------------------------------------------------------------------ calls
    def ev_call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id not in self.env:
            name = func.id
            if name in READERS and len(node.args) >= 2:
                container = self.ev(node.args[0])
                key = self.ev(node.args[1])
                default_node = node.args[2] if len(node.args) > 2 else None
                if isinstance(container, Tracked):
                    return self.read(container, key, name, default_node, node)
                if isinstance(container, Shape):
                    return self.shape_get(container, key, name, default_node, node)
                file, line, function = self.where(node)
                self.result.unplaced.add(
                    Unplaced(
                        key.value if isinstance(key, Const) and isinstance(key.value, str) else None,
                        ast.unparse(node),
                        "container not traced to ds_config",
                        file,
                        line,
                        function,
                    )
                )
                return None
            if name in _PASS_THROUGH and len(node.args) == 1 and not node.keywords:
                value = self.ev(node.args[0])
                if isinstance(value, Tracked | Shape | Items | KeySet):
                    return value
                if isinstance(value, Const):
                    try:
                        return Const(
                            {
                                "dict": dict,
                                "list": list,
                                "tuple": tuple,
                                "sorted": sorted,
                                "set": set,
                                "frozenset": frozenset,
                            }.get(name, lambda v: v)(value.value)
                        )
                    except (TypeError, ValueError):
                        return None
                return None
            if name == "isinstance" and len(node.args) == 2:
                value = self.ev(node.args[0])
                if isinstance(value, Tracked):
                    kind = ast.unparse(node.args[1])
                    return Tests(tuple(Test(dotted(p), "isinstance", kind) for p in value.paths))
                return None
            if name in ("any", "all") and len(node.args) == 1:
                value = self.ev(node.args[0])
                return Tests(_tests_of(value)) if _tests_of(value) else None
        if isinstance(func, ast.Name) and isinstance(self.env.get(func.id), Imported):
            ref = self.env[func.id]
            found = self.pkg.lookup(ref.module, ref.name)
            if found is not None and found[0] == "def":
                return self.call_def(found[1], node)
            return self.opaque_call(node)
        if isinstance(func, ast.Name) and isinstance(self.env.get(func.id), LocalFunc):
            local = self.env[func.id]
            fn = self.s.local_defs.get((local.module, local.qualname))
            if fn is not None:
                return self.call_function(self.mod, fn, local.qualname, self.cls, node, None)
        # Arguments are evaluated once here (callees see the cached values): a call that passes no
        # part of ds_config is followed only within the module or the object (for what it returns).
        args = [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords]
        values = [self.ev(a) for a in args]
        for arg, value in zip(args, values, strict=True):
            self.argcache[id(arg)] = value
        try:
            tracked = any(isinstance(v, Tracked | Shape) for v in values)
            if isinstance(func, ast.Attribute):
                handled, value = self.method_call(func, node, tracked)
                if handled:
                    return value
            if isinstance(func, ast.Name) and (tracked or func.id in self.mod.defs):
                target = self.resolve_callee(func)
                if target is not None:
                    return self.call_def(target, node)
            return self.opaque_call(node)
        finally:
            for arg in args:
                self.argcache.pop(id(arg), None)

    def method_call(self, func: ast.Attribute, node: ast.Call, tracked: bool) -> tuple[bool, Any]:
        meth = func.attr
        base = func.value
        if (
            isinstance(base, ast.Name)
            and base.id == "copy"
            and base.id not in self.env
            and meth in ("copy", "deepcopy")
        ):
            return True, self.ev(node.args[0]) if node.args else None
        if isinstance(base, ast.Name) and base.id not in self.env:
            found = self.pkg.lookup(self.mod.name, base.id) if tracked else None
            if found is not None and found[0] == "module":
                hit = self.pkg.lookup(found[1], meth)
                if hit is not None and hit[0] == "def":
                    return True, self.call_def(hit[1], node)
                return True, self.opaque_call(node)
        if isinstance(base, ast.Name) and base.id not in self.env and tracked:
            owner = self.s.resolve_class(self.mod, base)
            if owner is not None:
                found = self.s.find_method(owner.module.name, owner.qualname, meth)
                if found is not None:
                    mod, fn, qual = found
                    cls = qual.rpartition(".")[0]
                    if _is_classmethod(fn):
                        return True, self.call_function(mod, fn, qual, cls, node, Instance(mod.name, cls))
                    return True, self.call_function(mod, fn, qual, cls if not _is_static(fn) else None, node, None)
        obj = self.ev(base)
        if isinstance(obj, Tracked | Shape):
            if meth in ("get", "pop", "setdefault") and node.args:
                key = self.ev(node.args[0])
                default_node = node.args[1] if len(node.args) > 1 else (MISSING if meth == "pop" else None)
                op = meth
                if isinstance(obj, Shape):
                    return True, self.shape_get(obj, key, op, default_node, node)
                return True, self.read(obj, key, op, default_node, node)
            if meth in ("keys", "copy"):
                return True, obj
            if meth == "items" and isinstance(obj, Shape):
                return True, ShapeItems(obj)
            if meth == "items" and isinstance(obj, Tracked):
                return True, Items(obj)
            if meth == "values" and isinstance(obj, Tracked):
                self.read_iterate(obj)
                return True, obj.child("*")
            if meth in _CASEFOLD and isinstance(obj, Tracked):
                return True, Tracked(obj.paths, meth if meth != "casefold" else "lower")
            if meth in ("strip", "rstrip", "lstrip"):
                return True, obj
            for arg in node.args:
                self.ev(arg)
            return True, None
        if isinstance(obj, Const) and isinstance(obj.value, dict | list | tuple | set | frozenset):
            if meth in ("items", "keys") and isinstance(obj.value, dict):
                keys = tuple(k for k in obj.value if isinstance(k, str))
                defaults = tuple((k, v) for k, v in obj.value.items() if isinstance(k, str))
                return True, KeySet(keys, defaults, ast.unparse(base))
            if meth == "get" and isinstance(obj.value, dict) and node.args:
                key = self.ev(node.args[0])
                if isinstance(key, Tracked):
                    self.hit(
                        key, [k for k in obj.value if isinstance(k, str | int | bool)], "lookup", _name(base), node
                    )
                return True, None
        if isinstance(obj, Instance):
            found = self.s.find_method(obj.module, obj.cls, meth)
            if found is not None:
                mod, fn, qual = found
                return True, self.call_function(mod, fn, qual, qual.rpartition(".")[0], node, obj)
        return False, None

    def resolve_callee(self, func: ast.expr) -> Def | None:
        if isinstance(func, ast.Name) and func.id not in self.env:
            found = self.pkg.lookup(self.mod.name, func.id)
            if found is not None and found[0] == "def":
                return found[1]
        return None

    def call_def(self, defn: Def, node: ast.Call) -> Any:
        if isinstance(defn.node, ast.ClassDef) and defn.qualname in ROOT_CLASSES:
            for arg in node.args:
                self.ev(arg)
            return Instance(defn.module.name, defn.qualname)  # read as an entry of its own, at the root
        if isinstance(defn.node, ast.ClassDef):
            if self.s.is_model(defn):
                args = [self.ev(a) for a in node.args] + [self.ev(k.value) for k in node.keywords]
                for value in args:
                    if isinstance(value, Shape) and value.base is not None:
                        value = value.base  # its other items are the code's own (a legacy form's defaults)
                    for path in _paths_of(value):
                        self.passed(path, f"{defn.module.name}.{defn.qualname}", "model", node)
                return None
            found = self.s.find_method(defn.module.name, defn.qualname, "__init__")
            instance = Instance(defn.module.name, defn.qualname)
            if found is None:
                self.opaque_call(node)
                return instance
            mod, fn, qual = found
            self.call_function(mod, fn, qual, qual.rpartition(".")[0], node, instance, announce=defn.qualname)
            return instance
        return self.call_function(defn.module, defn.node, defn.qualname, None, node, None)

    def call_function(
        self,
        mod: Module,
        fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
        qualname: str,
        cls: str | None,
        node: ast.Call,
        self_value: Instance | None,
        announce: str | None = None,
    ) -> Any:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        bindings: dict[str, Any] = {}
        if cls is not None and params and not _is_static(fn):
            bindings[params[0]] = self_value if self_value is not None else Instance(mod.name, cls)
            params = params[1:]
        bound: set[str] = set(bindings)
        tracked_args = False
        for param, arg in zip(params, node.args, strict=False):
            if isinstance(arg, ast.Starred):
                self.ev(arg.value)
                break
            value = self.ev(arg)
            bound.add(param)
            if value is not None:
                bindings[param] = value
                tracked_args |= isinstance(value, Tracked | Shape)
        names = set(params) | {a.arg for a in fn.args.kwonlyargs}
        for kw in node.keywords:
            value = self.ev(kw.value)
            if kw.arg is None:
                for path in _paths_of(value):
                    self.passed(path, announce or qualname, "unpacked", node)
                continue
            if kw.arg in names:
                bound.add(kw.arg)
                if value is not None:
                    bindings[kw.arg] = value
                    tracked_args |= isinstance(value, Tracked | Shape)
        # parameter defaults (constants): `def f(d, key=FP16_KEY)`
        positional = fn.args.posonlyargs + fn.args.args
        for arg, default in zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults, strict=True):
            if arg.arg not in bound and arg.arg not in bindings:
                value = self.callee_constant(mod, default)
                if value is not None:
                    bindings[arg.arg] = value
        for arg, default in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
            if default is not None and arg.arg not in bound:
                value = self.callee_constant(mod, default)
                if value is not None:
                    bindings[arg.arg] = value
        if not tracked_args and not any(isinstance(v, Tracked | Shape) for v in bindings.values()):
            # Nothing of ds_config goes in: the callee is read once in a neutral context (its own
            # entry records its reads); only what it returns matters here (`self.pld_params()`).
            bindings = {k: v for k, v in bindings.items() if isinstance(v, Instance)}
            return self.s.analyze(mod, fn, qualname, cls, bindings, self.stack).ret
        self.result.reached.add((mod.name, qualname))
        for value in bindings.values():
            for path in _paths_of(value):
                if path:
                    self.passed(path, announce or qualname, "class" if announce else "function", node)
        result = self.s.analyze(mod, fn, qualname, cls, bindings, self.stack)
        self.result.merge(result, self.frozen_conds())
        return result.ret

    def callee_constant(self, mod: Module, node: ast.expr) -> Any:
        try:
            return Const(self.pkg.evaluate(mod.name, node))
        except NotConstant:
            return None

    def opaque_call(self, node: ast.Call) -> Any:
        """A call the scan cannot follow: evaluate its arguments; a tracked one is passed on whole."""
        self.ev(node.func) if not isinstance(node.func, ast.Name) else None
        for arg in node.args:
            for path in _paths_of(self.ev(arg)):
                if path:
                    self.passed(path, ast.unparse(node.func), "call", node)
        for kw in node.keywords:
            for path in _paths_of(self.ev(kw.value)):
                if path:
                    self.passed(path, ast.unparse(node.func), "call" if kw.arg else "unpacked", node)
        return None


def _paths_of(value: Any, depth: int = 0) -> list[Path]:
    """Paths of ds_config a value carries (a built dict carries its base and its items)."""
    if isinstance(value, Tracked):
        return sorted(value.paths)
    if isinstance(value, Shape) and depth < 4:
        out = set(value.base.paths) if value.base is not None else set()
        for _key, item in value.items:
            out.update(_paths_of(item, depth + 1))
        return sorted(out)
    return []


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


_CONFIG_NAMES = frozenset({"_config", "config", "ds_config", "_ds_config", "config_params", "deepspeed_config"})


def _names_the_config(node: ast.expr) -> bool:
    """``self._config``, ``engine.config``, ``ds_config``: an expression naming the DeepSpeedConfig object."""
    if isinstance(node, ast.Attribute):
        return node.attr in _CONFIG_NAMES
    return isinstance(node, ast.Name) and node.id in _CONFIG_NAMES


def _constant_like(name: str) -> bool:
    """DeepSpeed spells its constants in upper case (``FP16``, ``ZERO_OPTIMIZATION_STAGE``)."""
    return name == name.upper()


def _name(node: ast.expr) -> str | None:
    return ast.unparse(node) if isinstance(node, ast.Name | ast.Attribute) else None


def _is_classmethod(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def _is_static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _has_name(pkg: Package, modname: str, name: str) -> bool:
    try:
        pkg.constant(modname, name)
    except NotConstant:
        return pkg.lookup(modname, name) is not None
    return True


# ---------------------------------------------------------------------- entries
@dataclass(frozen=True)
class Entry:
    module: str
    qualname: str
    cls: str | None
    node: FuncNode
    seeds: tuple[str, ...]


def entries_of(mod: Module) -> list[Entry]:
    """Every function and method of a module, with the parameters that hold the whole ds_config."""
    out: list[Entry] = []

    def visit(body: list[ast.stmt], prefix: str, cls: str | None) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                if stmt.name in READERS and cls is None:
                    continue  # the helpers themselves: their calls are the reads
                params = [a.arg for a in stmt.args.posonlyargs + stmt.args.args + stmt.args.kwonlyargs]
                seeds = [p for p in params if p in SEED_PARAMS]
                if cls in ROOT_CLASSES and stmt.name == "__init__" and len(params) > 1:
                    seeds.append(params[1])
                seeds.extend(p for p in ENTRY_SEEDS.get((mod.name, prefix + stmt.name), ()) if p in params)
                out.append(Entry(mod.name, prefix + stmt.name, cls, stmt, tuple(dict.fromkeys(seeds))))
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, f"{prefix}{stmt.name}.", f"{prefix}{stmt.name}")

    visit(mod.tree.body, "", None)
    return out


_SEED_RE = re.compile(r"\b(" + "|".join(sorted(SEED_PARAMS | READERS | ROOT_CLASSES)) + r")\b")


def _dead(pkg: Package, entry: Entry, memo: dict[str, bool]) -> bool:
    """A ``get_*(param_dict)`` helper of ``runtime/config.py`` the package never mentions but where it is
    defined: its ``param_dict`` is whatever a caller would pass, not the root (0.14.4's
    ``get_sparse_attention_type`` read a top-level "attention"). Elsewhere an uncalled function may be
    public API (``_init_group_wise_weight_quantization(model, ds_config)``) and keeps its reads."""
    if entry.cls is not None or "." in entry.qualname or not entry.module.endswith("runtime.config"):
        return False
    name = entry.qualname
    if name not in memo:
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        memo[name] = sum(len(pattern.findall(pkg.text(m))) for m in pkg.files if name in pkg.text(m)) <= 1
    return memo[name]


def scan(pkg: Package) -> tuple[Result, int]:
    """Scan ``pkg`` in rounds until the dicts stored on objects stop changing; returns the kept result.

    Round 1 reads every function of the modules that mention a ds_config parameter name or a
    reader. Dicts stored on ``self`` (sections, not scalars) become known attributes; the next round
    also reads the modules that mention those attributes, and re-reads (memo dropped) only modules
    whose text names an attribute that changed. Known attributes only grow, so rounds converge.
    """
    class_attrs: dict[tuple[str, str, str], Any] = {}
    cross_attrs: dict[str, Any] = {}
    ambiguous: set[str] = set(GENERIC_ATTRS)
    modules = list(pkg.grep(_SEED_RE, tuple(sorted(SEED_PARAMS | READERS | ROOT_CLASSES))))
    scanner = Scanner(pkg, class_attrs, cross_attrs)
    results: dict[tuple[str, str], tuple[Entry, Result]] = {}
    stale: set[str] = set(modules)
    kept = Result()
    dead: dict[str, bool] = {}
    dead_reads: set[StaticRead] = set()
    for _round in range(MAX_ROUNDS):
        for name in modules:
            if name not in stale:
                continue
            mod = pkg.module(name)
            if mod is None:
                continue
            for entry in entries_of(mod):
                bindings: dict[str, Any] = {seed: Tracked.at(()) for seed in entry.seeds}
                params = entry.node.args.posonlyargs + entry.node.args.args
                if entry.cls and params and not _is_static(entry.node):
                    bindings[params[0].arg] = Instance(entry.module, entry.cls)
                result = scanner.analyze(mod, entry.node, entry.qualname, entry.cls, bindings, ())
                results[(entry.module, entry.qualname)] = (entry, result)
        reached: set[tuple[str, str]] = set()
        for _entry, result in results.values():
            reached |= result.reached
        kept = Result()
        for ident, (entry, result) in results.items():
            root = entry.cls in ROOT_CLASSES and entry.qualname.endswith("__init__")
            if entry.seeds and ident in reached and not root:
                continue  # a callee reached with a traced argument: its reads are placed by the caller
            if entry.seeds and not root and _dead(pkg, entry, dead):
                # never called (0.14.4's get_sparse_attention_type): its param_dict is no ds_config. Its
                # findings still feed the rounds (sections it knows); only its own reads are dropped below.
                dead_reads |= {r for r in result.reads if r.function == entry.qualname}
            kept.merge(result)
        sections = known_sections(kept)
        changed: set[str] = set()
        owners: dict[str, set[str]] = {}
        for store in sorted(kept.stores, key=repr):
            if not isinstance(store.value, Shape) and not any(
                dotted(p) in sections or not p for p in _paths_of(store.value)
            ):
                continue  # a scalar: conditions on it stay text
            key = (store.module, store.cls, store.attr)
            value = join(class_attrs.get(key), store.value)
            if value != class_attrs.get(key):
                class_attrs[key] = value
                changed.add(store.attr)
            owners.setdefault(store.attr, set()).add(f"{store.module}.{store.cls}")
        for attr, who in owners.items():
            if len(who) > 1 and attr not in ambiguous:
                ambiguous.add(attr)
                cross_attrs.pop(attr, None)
                changed.add(attr)
            elif attr not in ambiguous:
                (owner,) = who
                value = next(v for (m, c, a), v in class_attrs.items() if a == attr and f"{m}.{c}" == owner)
                if cross_attrs.get(attr) != value:
                    cross_attrs[attr] = value
                    changed.add(attr)
        if _DEBUG:
            print(
                f"round {_round}: {len(modules)} modules, {len(stale)} read, changed {sorted(changed)}",
                f"parsed {pkg.parsed}",
                f"analyzed {scanner.analyzed}",
            )
        if not changed:
            break
        # An attribute followed only within its own class (ambiguous, not DeepSpeedConfig's) is read through
        # ``self`` or an instance of that class: only modules naming one of its owners can see it change.
        local = {a for a in changed if a in ambiguous and not any(
            c in ROOT_CLASSES for (_m, c, attr) in class_attrs if attr == a)}
        stale = set()
        if changed - local:
            words = sorted(changed - local)
            stale = set(pkg.grep(re.compile(r"\.(" + "|".join(map(re.escape, words)) + r")\b"),
                                 tuple("." + w for w in words)))
        for attr in sorted(local):
            names = sorted({c.rpartition(".")[2] for (_m, c, a) in class_attrs if a == attr})
            named = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
            stale |= {m for m in pkg.grep(re.compile(rf"\.{re.escape(attr)}\b"), ("." + attr,))
                      if named.search(pkg.text(m))}
        modules = list(dict.fromkeys(modules + sorted(stale)))
        scanner.memo = {k: v for k, v in scanner.memo.items() if k[0][0] not in stale}
    kept.reads -= dead_reads
    sweep_unresolved(kept)
    return kept, scanner.analyzed


def _unresolved(path: str) -> bool:
    return path.startswith(UNRESOLVED)


def _known_tests(conditions: tuple[Condition, ...]) -> tuple[Condition, ...]:
    return tuple(replace(c, tests=tuple(t for t in c.tests if not _unresolved(t.path))) for c in conditions)


def sweep_unresolved(result: Result) -> None:
    """Reads under a key the scan could not resolve become :class:`Unplaced`; nothing else keeps the marker.

    Each such read is listed with the expression that lost the path (``param_dict[QUANTIZE_TRAINING]
    (container <root>) -> eigenvalue.enabled``); tests on those paths leave the conditions (their text stays).
    """
    for r in sorted((r for r in result.reads if _unresolved(r.path)), key=lambda r: (r.file, r.line, r.path)):
        _, head, rest = r.path.split(UNRESOLVED, 2)
        result.unplaced.add(Unplaced(r.key, f"{head} -> {rest.lstrip('.') or r.key}",
                                     "read under a key the scan cannot resolve", r.file, r.line, r.function))
    result.reads = {replace(r, conditions=_known_tests(r.conditions)) if any(
        _unresolved(t.path) for c in r.conditions for t in c.tests) else r
        for r in result.reads if not _unresolved(r.path)}
    result.passed = {replace(p, conditions=_known_tests(p.conditions)) for p in result.passed
                     if not _unresolved(p.path)}
    result.hits = {h for h in result.hits if not _unresolved(h.path)}


SURE_DICT_KINDS = frozenset({"model", "merge", "unpacked"})
"""PassedWhole kinds that prove the value is a dict (others may pass a scalar on)."""


def known_sections(result: Result) -> set[str]:
    """Paths known to hold a dict: parents of reads, and values unpacked, merged or validated whole."""
    out = {r.path.rpartition(".")[0] for r in result.reads if "." in r.path}
    out |= {p.path for p in result.passed if p.kind in SURE_DICT_KINDS}
    return out


def aggregate_choices(scanner_hits: Iterable[ChoiceHit]) -> list[Choices]:
    """One :class:`Choices` per membership test, and one per ``==`` chain (path, function)."""
    out: list[Choices] = []
    chains: dict[tuple[str, str, str, str | None], list[ChoiceHit]] = {}
    for hit in scanner_hits:
        if hit.how == "==":
            chains.setdefault((hit.path, hit.file, hit.function, hit.normalized), []).append(hit)
        else:
            out.append(
                Choices(
                    hit.path,
                    hit.values,
                    hit.how,
                    hit.normalized,
                    hit.raises,
                    hit.constant,
                    hit.file,
                    hit.line,
                    hit.function,
                )
            )
    for (path, file, function, norm), hits in chains.items():
        values: list[Any] = []
        for hit in sorted(hits, key=lambda h: h.line):
            for v in hit.values:
                if v not in values:
                    values.append(v)
        first = min(hits, key=lambda h: h.line)
        out.append(
            Choices(
                path,
                tuple(values),
                "==",
                norm,
                any(h.raises for h in hits),
                None,
                file,
                first.line,
                function,
            )
        )
    return sorted(set(out), key=lambda c: (c.path, c.file, c.line, c.how))
