"""The statements of a function body: assignments, branches, loops, and what each name holds after them.

A branch is read twice (body under its condition, ``else`` under its negation) and the names joined after
it; a loop over known keys is unrolled key by key; an early ``return`` leaves the rest of the block under the
negated test. Values come from the expressions layer above (:meth:`~.frame.Frame.ev`).
"""

from __future__ import annotations

import ast
from typing import Any

from .abstract_values import (
    Const,
    DefaultOf,
    Imported,
    Items,
    IterKey,
    KeySet,
    LocalFunc,
    Shape,
    ShapeItems,
    Tracked,
    join,
    paths_of,
)
from .frame import Frame
from .results import Store

_DEAD = object()
"""What a statement returns when the rest of its block is never run (a taken branch that ends in ``continue``,
``return``, ``raise`` or ``break``)."""

MAX_UNROLL = 24
"""Keys a loop is unrolled over at most."""


class Statements(Frame):
    """A frame reading statements."""

    def block(self, stmts: list[ast.stmt]) -> None:
        pushed = 0
        for stmt in stmts:
            guard = self.stmt(stmt)
            if guard is _DEAD:
                break  # a test known at scan time left the block (`if LAYER_REDUCTION in method: continue`)
            if guard is not None:
                self.conds.append(guard)
                pushed += 1
        del self.conds[len(self.conds) - pushed :]

    def stmt(self, stmt: ast.stmt) -> Any:
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
            if isinstance(stmt.target, ast.Name):
                self.env.pop(stmt.target.id, None)  # `count += 1`: no longer the constant it started as
                self.counted.add(stmt.target.id)
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

    def branch(self, stmt: ast.If) -> Any:
        test = self.ev(stmt.test)
        known = self.known_test(stmt.test)
        if known is not None:
            # A test of constants only (a loop unrolled over known keys: `if LAYER_REDUCTION in method`): only the
            # branch it takes is read; reads on the other would be reads DeepSpeed never makes
            taken = stmt.body if known else stmt.orelse
            self.block(taken)
            return _DEAD if _terminates(taken) else None
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
            self.env = self.joined(env_a, env_b)
        if _terminates(stmt.body) and not stmt.orelse and not isinstance(stmt.body[-1], ast.Raise):
            return neg  # an early `return`/`raise`: the rest of the block runs only when the test failed
        return None

    def known_test(self, node: ast.expr) -> bool | None:
        """The truth of ``node`` where it compares two values known at scan time (``==``, ``!=``, ``in``,
        ``not in`` on strings and numbers), else None."""
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            return None
        sides = [node.left, node.comparators[0]]
        if not all(isinstance(n, ast.Name | ast.Constant | ast.Attribute) for n in sides):
            return None  # evaluating anything else again could record its reads twice
        left, right = (self.ev(n) for n in sides)
        if not (isinstance(left, Const) and isinstance(right, Const)):
            return None
        a, b, op = left.value, right.value, node.ops[0]
        if isinstance(op, ast.Eq | ast.NotEq) and all(isinstance(v, str | int | float) for v in (a, b)):
            return (a == b) == isinstance(op, ast.Eq)
        if isinstance(op, ast.In | ast.NotIn) and isinstance(a, str) and isinstance(b, str | list | tuple):
            return (a in b) == isinstance(op, ast.In)
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
        self.env = self.joined(before, self.env)
        self.block(stmt.orelse)

    def joined(self, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        """The names after two paths (a branch's two sides, a loop run or not); a name changed in place on
        either (``count += 1`` in a loop) holds no known constant after them (``count`` is not ``0``)."""
        both = {k: join(a.get(k), b.get(k)) for k in a.keys() | b.keys()}
        return {k: v for k, v in both.items() if k not in self.counted or not isinstance(v, Const)}

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
                    for path in paths_of(value):
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
        if isinstance(key, IterKey) and value == key.of.child("*") and (
                isinstance(current, Shape) or (isinstance(current, Const) and current.value == {})):
            # `out = {...}; for k, v in user.items(): out[k] = v` copies every key of the user's dict: reading
            # out[K] later reads user[K] (0.16.4's get_curriculum_learning, whose curriculum_metrics the data
            # sampler then iterates), as `{**user}` does
            items = current.items if isinstance(current, Shape) else ()
            base = key.of if not isinstance(current, Shape) or current.base is None else join(current.base, key.of)
            self.env[holder.id] = Shape(base, items)
        elif isinstance(current, Shape) and isinstance(key, Const) and isinstance(key.value, str):
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


def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)
