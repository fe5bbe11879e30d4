"""The expressions of a function body: what each evaluates to, reading ds_config where it indexes into it.

``d[K]``, ``K in d``, ``d == C``, ``{...}`` literals, comprehensions and boolean operators: each yields an
abstract value (:mod:`.values`) and records the reads, tests and choices it makes. Calls are the layer above
(:meth:`ev_call`, :mod:`.calls`).
"""

from __future__ import annotations

import ast
from typing import Any

from .abstract_values import (
    Const,
    Instance,
    IterKey,
    Shape,
    Tests,
    Tracked,
    dotted,
    join,
    tests_of,
)
from .modules import NotConstant
from .names import ROOT_CLASSES, constant_like, names_the_config
from .read_records import MISSING, Test
from .results import json_form
from .statements import Statements


class Expressions(Statements):
    """A frame reading expressions."""

    def ev_call(self, node: ast.Call) -> Any:
        """The value a call returns (:class:`~.calls.FunctionReader` follows it)."""
        raise NotImplementedError

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
            if not constant_like(node.id) and node.id not in self.mod.assigns:
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
                tests = tests_of(operand)
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
        if isinstance(base, ast.Name) and base.id not in self.env and constant_like(node.attr):
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
        if names_the_config(base):
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
                key, [k for k in container.value if isinstance(k, str | int | bool)], "lookup", name_of(node.value),
                node,
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
        tests = tuple(t for v in values for t in tests_of(v))
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
                self.hit(left, values, "assert" if self.in_assert else "in", name_of(rn), node)
                vals = tuple(json_form(v) for v in values)
                out += [Test(dotted(p), "in" if present else "not in", vals) for p in left.paths]
            elif right is None and not isinstance(rn, ast.Constant):
                self.unplaced_candidate(ln, left, node, "container not traced to ds_config")
        elif isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
            tracked, other = (left, right) if isinstance(left, Tracked) else (right, left)
            if isinstance(tracked, Tracked) and isinstance(other, Const):
                name = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not"}[type(op)]
                if name in ("==", "!=") and other.value is not None:
                    self.hit(tracked, [other.value], "==", None, node)
                out += [Test(dotted(p), name, json_form(other.value)) for p in tracked.paths]
        return out


def name_of(node: ast.expr) -> str | None:
    return ast.unparse(node) if isinstance(node, ast.Name | ast.Attribute) else None
