"""A release's function as data: its steps and the ``if`` tests around them (:func:`dsfields.hf.pair_rules.simulate`).

Some of what the Trainer and accelerate do is not one expression but a little program: which class
``get_optimizer_cls_and_kwargs`` builds for ``--optim`` (an ``if``/``elif`` chain in 4.x, a dispatch table of
handlers in 5.x), what ``num_training_steps`` comes to, which ``TrainingArguments.__post_init__`` check raises,
which DeepSpeed CPU optimizer accelerate swaps in. Each such function is recorded here, read with :mod:`ast`
(never run), as a list of steps:

- ``assign`` (``targets``: local names, ``self.X``, or ``name.key`` for ``name["key"] = ...``; ``value``: the
  expression as written),
- ``import`` (``bind``: alias → dotted path, relative imports resolved against the module),
- ``call`` (``method``: a function of the same class or module this records too; ``args``; ``targets``),
- ``return`` (``value``) and ``raise`` (``type``, ``message`` as a template with ``{expr}`` pieces),

each with ``when`` (the ``if`` tests guarding it, outermost first; an ``else`` branch as ``not (test)``) and
``line``. A loop body or an ``except`` handler is guarded by a test no value decides (``__loop__``,
``__except__``), so what it assigns is unknown and what it raises is never taken as raised.

The module imports the function names (``AdamW``, ``torch``) are prepended as ``import`` steps.
"""

from __future__ import annotations

import ast
from typing import Any

LOOP = "__loop__"
EXCEPT = "__except__"


def message_template(node: ast.expr) -> str:
    """A message as text: f-string pieces kept, ``{expr}`` for the values (``"a" "b"`` and ``+`` joined)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return message_template(node.left) + message_template(node.right)
    return "{" + ast.unparse(node) + "}"


def module_name(relative: str) -> str:
    """``transformers/trainer.py`` → ``transformers.trainer`` (``__init__.py`` → the package)."""
    name = relative[: -len(".py")].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _bind(node: ast.Import | ast.ImportFrom, module: str) -> dict[str, str]:
    if isinstance(node, ast.Import):
        return {(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0]) for a in node.names}
    parts = module.split(".")
    base = parts[: len(parts) - node.level] if node.level else []
    full = ".".join([*base, *([node.module] if node.module else [])])
    return {(a.asname or a.name): f"{full}.{a.name}" for a in node.names if a.name != "*"}


def _walk(body: list[ast.stmt], conds: tuple[str, ...] = ()) -> list[tuple[ast.stmt, tuple[str, ...]]]:
    out: list[tuple[ast.stmt, tuple[str, ...]]] = []
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # defined, not run here
        out.append((stmt, conds))
        if isinstance(stmt, ast.If):
            test = ast.unparse(stmt.test)
            out += _walk(stmt.body, (*conds, test))
            out += _walk(stmt.orelse, (*conds, f"not ({test})"))
        elif isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)):
            out += _walk(stmt.body, (*conds, LOOP))
            out += _walk(stmt.orelse, (*conds, LOOP))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            out += _walk(stmt.body, conds)
        elif isinstance(stmt, ast.Try):
            out += _walk(stmt.body, conds) + _walk(stmt.orelse, conds) + _walk(stmt.finalbody, conds)
            for handler in stmt.handlers:
                out += _walk(handler.body, (*conds, EXCEPT))
    return out


def _target(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)):
        # ``defaults["adamw_mode"] = False``: one key of a local dict, named ``defaults.adamw_mode`` (what a
        # ``**defaults`` call then passes)
        return [f"{node.value.id}.{node.slice.value}"]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return [f"self.{node.attr}"]
    if isinstance(node, (ast.Tuple, ast.List)):
        names = [_target(e) for e in node.elts]
        return None if any(n is None or len(n) != 1 for n in names) else [n[0] for n in names]  # type: ignore[index]
    return None


def _own_call(value: ast.expr, own: set[str]) -> tuple[str, list[str]] | None:
    """``self.M(a, b)`` / ``M(a, b)`` where M is a function this records: (M, argument expressions)."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) and ast.unparse(func.value) == "self" else \
        func.id if isinstance(func, ast.Name) else None
    if name not in own:
        return None
    return name, [ast.unparse(a) for a in value.args]  # type: ignore[return-value]


def program(fn: ast.FunctionDef, module: str, module_imports: list[dict[str, Any]],
            own: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """The steps of ``fn`` (see the module doc); ``own``: the functions a ``call`` step may name."""
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    steps: list[dict[str, Any]] = [s for s in module_imports if set(s["bind"]) & used]
    for stmt, conds in _walk(fn.body):
        base = {"when": list(conds), "line": stmt.lineno}
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = _target(targets[0]) if len(targets) == 1 else None
            if names is None:
                continue  # a subscript or attribute of something else: not a value the programs read
            call = _own_call(stmt.value, own)
            if call is not None:
                steps.append({"op": "call", "method": call[0], "args": call[1], "targets": names, **base})
            else:
                steps.append({"op": "assign", "targets": names, "value": ast.unparse(stmt.value), **base})
        elif isinstance(stmt, ast.AugAssign):
            names = _target(stmt.target)
            if names is not None and len(names) == 1:
                op = ast.unparse(ast.BinOp(left=ast.Name(id="x"), op=stmt.op, right=ast.Name(id="y")))[2:-2]
                steps.append({"op": "assign", "targets": names,
                              "value": f"{names[0]} {op} ({ast.unparse(stmt.value)})", **base})
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = _own_call(stmt.value, own)
            if call is not None:
                steps.append({"op": "call", "method": call[0], "args": call[1], "targets": [], **base})
            elif (ast.unparse(stmt.value.func) == "setattr" and len(stmt.value.args) == 3
                  and ast.unparse(stmt.value.args[0]) == "self"):
                key = stmt.value.args[1]
                # setattr(self, "x", v) is an assignment; setattr(self, name, v) in a loop (5.x: the dict fields
                # parsed from JSON, the gradient_checkpointing aliases) is not followed
                if isinstance(key, ast.Constant):
                    steps.append({"op": "assign", "targets": [f"self.{key.value}"],
                                  "value": ast.unparse(stmt.value.args[2]), **base})
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            steps.append({"op": "import", "bind": _bind(stmt, module), **base})
        elif isinstance(stmt, ast.Return):
            steps.append({"op": "return", "value": ast.unparse(stmt.value) if stmt.value is not None else None,
                          **base})
        elif isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc
            if isinstance(exc, ast.Call):
                message = message_template(exc.args[0]) if exc.args else ""
                steps.append({"op": "raise", "type": ast.unparse(exc.func), "message": message, **base})
            else:
                steps.append({"op": "raise", "type": ast.unparse(exc), "message": "", **base})
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs) if a.arg not in ("self", "cls")]
    return {"name": fn.name, "params": params, "line": fn.lineno, "steps": steps}


def module_imports(tree: ast.Module, module: str) -> list[dict[str, Any]]:
    """The module-level imports as ``import`` steps (those under ``if``/``try`` with their guards)."""
    steps = []
    for stmt, conds in _walk(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            steps.append({"op": "import", "bind": _bind(stmt, module), "when": list(conds), "line": stmt.lineno})
    # the module's own classes name themselves the same way (optimization.py's GreedyLR)
    steps += [{"op": "import", "bind": {n.name: f"{module}.{n.name}"}, "when": [], "line": n.lineno}
              for n in tree.body if isinstance(n, ast.ClassDef)]
    return steps


def functions(tree: ast.Module, cls: str | None = None) -> dict[str, ast.FunctionDef]:
    """The functions of class ``cls`` (None: the module's own functions)."""
    if cls is None:
        return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    return {}


def programs(tree: ast.Module, module: str, roots: list[str], cls: str | None = None) -> dict[str, dict[str, Any]]:
    """``roots`` and every function of the same class (or module) they call, transitively, as programs."""
    fns = functions(tree, cls)
    own = set(fns)
    imports = module_imports(tree, module)
    out: dict[str, dict[str, Any]] = {}
    todo = [r for r in roots if r in fns]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out[name] = program(fns[name], module, imports, own)
        called = {s["method"] for s in out[name]["steps"] if s["op"] == "call"}
        # a function called in an expression (``return get_constant_schedule(optimizer)``) is run from there
        called |= {n.func.id for n in ast.walk(fns[name]) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in own}
        todo += sorted(called - out.keys())
    return dict(sorted(out.items()))


def table(tree: ast.Module, name: str) -> list[list[str]] | None:
    """A module-level dispatch dict (``_OPTIMIZER_HANDLERS``, ``TYPE_TO_SCHEDULER_FUNCTION``) as ``[key expression,
    function name]`` pairs; ``**dict.fromkeys(LIST, f)`` spread over LIST's elements (a module-level list)."""
    lists: dict[str, list[str]] = {}
    found: ast.Dict | None = None
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        value = getattr(stmt, "value", None)
        if not isinstance(target, ast.Name) or value is None:
            continue
        if isinstance(value, (ast.List, ast.Tuple)):
            lists[target.id] = [ast.unparse(e) for e in value.elts]
        if target.id == name and isinstance(value, ast.Dict):
            found = value
    if found is None:
        return None
    out: list[list[str]] = []
    for key, value in zip(found.keys, found.values, strict=True):
        if key is not None:
            out.append([ast.unparse(key), ast.unparse(value)])
        elif isinstance(value, ast.Call) and ast.unparse(value.func) == "dict.fromkeys" and len(value.args) == 2:
            keys = value.args[0]
            spread = lists.get(keys.id, []) if isinstance(keys, ast.Name) else [ast.unparse(e) for e in keys.elts] \
                if isinstance(keys, (ast.List, ast.Tuple)) else []
            out += [[k, ast.unparse(value.args[1])] for k in spread]
    return out


def slice_for(prog: dict[str, Any], target: str, before: int) -> dict[str, Any]:
    """The steps of ``prog`` before line ``before`` that ``target`` depends on (a backward slice by name), with the
    raises whose tests read only those names: ``_inner_training_loop`` cut down to its ``max_steps``."""
    steps = [s for s in prog["steps"] if s["line"] < before]

    def names(*exprs: str | None) -> set[str]:
        out: set[str] = set()
        for expr in exprs:
            if not expr or expr in (LOOP, EXCEPT):
                continue
            for node in ast.walk(ast.parse(expr, mode="eval")):
                if isinstance(node, ast.Name):
                    out.add(node.id)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                    out.add(f"self.{node.attr}")
        return out

    need = {target}
    keep: set[int] = set()
    changed = True
    while changed:
        changed = False
        for index, step in enumerate(steps):
            if index in keep:
                continue
            wrote = set(step.get("targets") or []) | set(step.get("bind") or {})
            if step["op"] in ("assign", "call", "import") and wrote & need:
                keep.add(index)
                need |= names(step.get("value"), *step.get("args", []), *step["when"])
                changed = True
    inputs = need | {"args", "self", "len", "max", "min", "int", "math", "has_length"}
    for index, step in enumerate(steps):
        if step["op"] == "raise" and step["when"] and names(*step["when"]) <= inputs:
            keep.add(index)
    return {**prog, "steps": [s for i, s in enumerate(steps) if i in keep]}


# ---------------------------------------------------------------- what is recorded per release


def _read(package: Any, relative: str) -> ast.Module | None:
    path = package / relative
    return ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else None


def enum_members(trees: list[ast.Module]) -> dict[str, dict[str, str]]:
    """Every ``class X(..., Enum)`` / ``ExplicitEnum``: member → value (``IntervalStrategy.NO`` → ``"no"``), what
    the checks compare the (str) arguments with."""
    out: dict[str, dict[str, str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in
                     node.bases}
            if not bases & {"Enum", "ExplicitEnum"} and not (out.keys() & bases):
                continue
            out[node.name] = {s.targets[0].id: s.value.value for s in node.body if isinstance(s, ast.Assign)
                              and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Constant)
                              and isinstance(s.value.value, str)}
    return dict(sorted(out.items()))


def trainer_programs(package: Any, unread: list[dict[str, str]]) -> dict[str, Any]:
    """The transformers package folder's programs: the optimizer ``--optim`` builds, the scheduler of each
    ``--lr_scheduler_type``, ``num_training_steps``, ``TrainingArguments.__post_init__``'s checks and
    ``deepspeed_optim_sched``'s."""
    out: dict[str, Any] = {}
    trainer = _read(package, "trainer.py")
    handlers = _read(package, "trainer_optimizer.py")
    if trainer is not None:
        # 5.x: get_optimizer_cls_and_kwargs dispatches on ``_OPTIMIZER_HANDLERS`` (trainer_optimizer.py); 4.x: one
        # if/elif chain in the method itself
        dispatch = table(handlers, "_OPTIMIZER_HANDLERS") if handlers is not None else None
        if dispatch:
            out["optimizer"] = {"file": "transformers/trainer_optimizer.py", "table": dispatch, "programs": programs(
                handlers, "transformers.trainer_optimizer", sorted({f for _k, f in dispatch}))}
        else:
            found = programs(trainer, "transformers.trainer", ["get_optimizer_cls_and_kwargs"], "Trainer")
            if found:
                out["optimizer"] = {"file": "transformers/trainer.py", "root": "get_optimizer_cls_and_kwargs",
                                    "programs": found}
        steps = _training_steps(trainer)
        if steps is not None:
            out["num_training_steps"] = steps
    if "optimizer" not in out:
        unread.append({"rule": "Trainer.get_optimizer_cls_and_kwargs", "why": "not found"})
    if "num_training_steps" not in out:
        unread.append({"rule": "Trainer num_training_steps", "why": "no deepspeed_init(num_training_steps=...) call"})
    optimization = _read(package, "optimization.py")
    schedulers = table(optimization, "TYPE_TO_SCHEDULER_FUNCTION") if optimization is not None else None
    if schedulers:
        out["scheduler"] = {"file": "transformers/optimization.py", "table": schedulers, "programs": programs(
            optimization, "transformers.optimization", sorted({f for _k, f in schedulers}))}
    else:
        unread.append({"rule": "optimization.TYPE_TO_SCHEDULER_FUNCTION", "why": "not found"})
    args = _read(package, "training_args.py")
    if args is not None:
        found = programs(args, "transformers.training_args", ["__post_init__"], "TrainingArguments")
        if found:
            out["post_init"] = {"file": "transformers/training_args.py", "root": "__post_init__", "programs": found}
    if "post_init" not in out:
        unread.append({"rule": "TrainingArguments.__post_init__", "why": "not found"})
    integration = _read(package, "integrations/deepspeed.py")
    if integration is not None:
        found = programs(integration, "transformers.integrations.deepspeed", ["deepspeed_optim_sched"])
        if found:
            out["optim_sched"] = {"file": "transformers/integrations/deepspeed.py", "root": "deepspeed_optim_sched",
                                  "programs": found}
    out["enums"] = enum_members([t for t in (args, _read(package, "trainer_utils.py"),
                                              _read(package, "debug_utils.py"), _read(package, "utils/generic.py"))
                                 if t is not None])
    return out


def _training_steps(trainer: ast.Module) -> dict[str, Any] | None:
    """The Trainer method calling ``deepspeed_init(self, num_training_steps=X)`` for training, cut down to what X
    depends on, with the methods it calls (5.x ``set_initial_training_values``). Where X is a parameter (5.x
    ``_prepare_for_training(max_steps, ...)``) the caller's argument is followed instead, up to three calls up."""
    fns = functions(trainer, "Trainer")
    found = None
    for name, fn in fns.items():
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and ast.unparse(node.func) == "deepspeed_init"
                    and not any(k.arg == "inference" for k in node.keywords)):
                steps = next((k.value for k in node.keywords if k.arg == "num_training_steps"), None)
                if isinstance(steps, ast.Name):
                    found = (name, steps.id, node.lineno)
    for _ in range(3):
        if found is None:
            return None
        name, target, line = found
        params = [a.arg for a in fns[name].args.args if a.arg != "self"]
        if target not in params:
            break
        found = None
        for caller, fn in fns.items():
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and ast.unparse(node.func) == f"self.{name}"
                        and len(node.args) > params.index(target) and isinstance(node.args[params.index(target)],
                                                                                  ast.Name)):
                    found = (caller, node.args[params.index(target)].id, node.lineno)  # type: ignore[attr-defined]
    if found is None:
        return None
    name, target, line = found
    every = programs(trainer, "transformers.trainer", [name], "Trainer")
    cut = slice_for(every[name], target, line)
    called = {s["method"] for s in cut["steps"] if s["op"] == "call"}
    kept = {name: cut, **{m: p for m, p in every.items() if m in called}}
    return {"file": "transformers/trainer.py", "root": name, "target": target, "line": line, "programs": kept}


def accelerate_programs(package: Any, unread: list[dict[str, str]]) -> dict[str, Any]:
    """accelerate's: ``map_pytorch_optim_to_deepspeed`` (the DeepSpeed CPU optimizer swapped in under
    ZeRO-Offload), the tests around that swap in ``Accelerator._prepare_deepspeed``, and ``DummyOptim`` /
    ``DummyScheduler``'s defaults."""
    out: dict[str, Any] = {}
    deepspeed = _read(package, "utils/deepspeed.py")
    if deepspeed is not None:
        found = programs(deepspeed, "accelerate.utils.deepspeed", ["map_pytorch_optim_to_deepspeed"])
        if found:
            out["cpu_optimizer"] = {"file": "accelerate/utils/deepspeed.py", "root": "map_pytorch_optim_to_deepspeed",
                                    "programs": found}
        for cls in ("DummyOptim", "DummyScheduler"):
            init = functions(deepspeed, cls).get("__init__")
            if init is not None:
                positional = init.args.args[len(init.args.args) - len(init.args.defaults):]
                defaults = {a.arg: ast.literal_eval(d) for a, d in zip(positional, init.args.defaults, strict=True)
                            if isinstance(d, ast.Constant)}
                out.setdefault("dummy_defaults", {})[cls] = defaults
    accelerator = _read(package, "accelerator.py")
    fn = functions(accelerator, "Accelerator").get("_prepare_deepspeed") if accelerator is not None else None
    if fn is not None:
        steps = program(fn, "accelerate.accelerator", module_imports(accelerator, "accelerate.accelerator"))["steps"]
        for stmt, conds in _walk(fn.body):
            if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and len(stmt.targets) == 1
                    and ast.unparse(stmt.targets[0]) == "optimizer"):
                continue
            called = ast.unparse(stmt.value.func)
            if called == "map_pytorch_optim_to_deepspeed" or "param_groups" in ast.unparse(stmt.value):
                out["cpu_swap"] = {"file": "accelerate/accelerator.py", "when": list(conds), "line": stmt.lineno}
                if called != "map_pytorch_optim_to_deepspeed" and "cpu_optimizer" not in out:
                    # before 1.2 the swap is written inline: one class (DeepSpeedCPUAdam) whatever the optimizer
                    imports = [dict(s, when=[]) for s in steps if s["op"] == "import" and called in s["bind"]]
                    out["cpu_optimizer"] = {"file": "accelerate/accelerator.py", "root": "_prepare_deepspeed",
                                            "programs": {"_prepare_deepspeed": {
                                                "name": "_prepare_deepspeed", "params": [], "line": stmt.lineno,
                                                "steps": [*imports[-1:], {"op": "return", "value": f"{called}()",
                                                                          "when": [], "line": stmt.lineno}]}}}
                break
    if "cpu_optimizer" not in out:
        unread.append({"rule": "utils/deepspeed.py map_pytorch_optim_to_deepspeed", "why": "not found"})
    if "cpu_swap" not in out:
        unread.append({"rule": "Accelerator._prepare_deepspeed map_pytorch_optim_to_deepspeed", "why": "not found"})
    return out
