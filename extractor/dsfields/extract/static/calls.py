"""The calls of a function body: followed into the package with the arguments' values.

A reader helper (``get_scalar_param(d, K, DEFAULT)``) is a read; a function, method or class of the package
called with part of ds_config is read with that part bound to its parameters, its findings merged under the
call site's conditions; a pydantic model given a section validates it whole; anything else passes what it
is given on whole (``opaque_call``). :class:`FunctionReader` is the complete frame: statements, expressions
and calls.
"""

from __future__ import annotations

import ast
from typing import Any

from .abstract_values import (
    Const,
    Imported,
    Instance,
    Items,
    KeySet,
    LocalFunc,
    Shape,
    ShapeItems,
    Tests,
    Tracked,
    dotted,
    paths_of,
    tests_of,
)
from .classes import is_classmethod, is_static
from .expressions import Expressions, name_of
from .modules import Def, Module, NotConstant
from .names import READERS, ROOT_CLASSES
from .read_records import MISSING, Test, Unplaced

_CASEFOLD = frozenset({"lower", "upper", "casefold"})
_PASS_THROUGH = frozenset({"dict", "list", "tuple", "sorted", "str", "int", "float", "bool", "set", "frozenset"})


class FunctionReader(Expressions):
    """Reading one function body in one context, calls followed: the frame :meth:`~.scan.Scanner.analyze` runs."""

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
                return Tests(tests_of(value)) if tests_of(value) else None
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
            owner = self.s.classes.resolve_class(self.mod, base)
            if owner is not None:
                found = self.s.classes.find_method(owner.module.name, owner.qualname, meth)
                if found is not None:
                    mod, fn, qual = found
                    cls = qual.rpartition(".")[0]
                    if is_classmethod(fn):
                        return True, self.call_function(mod, fn, qual, cls, node, Instance(mod.name, cls))
                    return True, self.call_function(mod, fn, qual, cls if not is_static(fn) else None, node, None)
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
                        key, [k for k in obj.value if isinstance(k, str | int | bool)], "lookup", name_of(base), node
                    )
                return True, None
        if isinstance(obj, Instance):
            found = self.s.classes.find_method(obj.module, obj.cls, meth)
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
            if self.s.classes.is_model(defn):
                args = [self.ev(a) for a in node.args] + [self.ev(k.value) for k in node.keywords]
                for value in args:
                    if isinstance(value, Shape) and value.base is not None:
                        value = value.base  # its other items are the code's own (a legacy form's defaults)
                    for path in paths_of(value):
                        self.passed(path, f"{defn.module.name}.{defn.qualname}", "model", node)
                return None
            found = self.s.classes.find_method(defn.module.name, defn.qualname, "__init__")
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
        if cls is not None and params and not is_static(fn):
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
                for path in paths_of(value):
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
            for path in paths_of(value):
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
            for path in paths_of(self.ev(arg)):
                if path:
                    self.passed(path, ast.unparse(node.func), "call", node)
        for kw in node.keywords:
            for path in paths_of(self.ev(kw.value)):
                if path:
                    self.passed(path, ast.unparse(node.func), "call" if kw.arg else "unpacked", node)
        return None
