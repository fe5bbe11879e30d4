"""Which ``optimizer.type`` / ``scheduler.type`` names a DeepSpeed release accepts, and their ``params``.

``DeepSpeedConfig`` stores ``optimizer`` and ``scheduler`` without looking inside; the engine later
maps the name to a class and calls it with ``**params``, so a misspelt param is a ``TypeError`` at
``deepspeed.initialize`` — minutes into a job, after the model loaded. The name → class mapping is
code, not data (an if/elif chain in ``DeepSpeedEngine._configure_basic_optimizer``, ``getattr`` on
modules in ``_scheduler_from_config``), so it is read from that code with :mod:`ast` and resolved
against the live modules; parameters and defaults come from ``inspect.signature``. Nothing is
listed by hand: a release that adds an optimizer branch or a scheduler class shows up by itself.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import logging
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from dsfields.extract.jsonvalue import to_json

log = logging.getLogger(__name__)


def optimizers_and_schedulers() -> dict[str, Any]:
    """``{"optimizers": ..., "schedulers": ...}`` for the installed DeepSpeed (JSON-able, sorted)."""
    from deepspeed.runtime import constants
    from deepspeed.runtime.engine import DeepSpeedEngine

    return {
        "optimizers": _optimizers(DeepSpeedEngine, constants),
        "schedulers": _schedulers(DeepSpeedEngine, constants),
    }


def with_optimizers(snapshot: dict[str, Any]) -> dict[str, Any]:
    """``snapshot`` plus ``optimizers`` and ``schedulers``. (The HF Trainer's fill list is not a DeepSpeed fact: it
    lives in ``generated/hf/transformers-<T>.json``, read by :func:`dsfields.hf.trainer.fill_list`.)"""
    return snapshot | optimizers_and_schedulers()


# ---------------------------------------------------------------- reading the engine's code


@dataclass
class Branch:
    """What one arm of the engine's name dispatch does with the user's ``params``."""

    classes: list[Any] = field(default_factory=list)
    """Classes called with ``**params`` (or :class:`Unimportable` placeholders)."""
    consumed: set[str] = field(default_factory=set)
    """Keys the engine ``pop``s from ``params`` itself before calling the class."""
    fallback_modules: list[ModuleType] = field(default_factory=list)
    """Modules searched with ``getattr(module, name)`` (the torch fallback)."""
    params_passed: bool = False
    """Whether any call receives ``**params``; if not, the engine builds arguments itself."""


@dataclass(frozen=True)
class Unimportable:
    """A class the engine imports lazily from a package that is not installed (e.g. ``mup``)."""

    module: str
    name: str


class CodeReader:
    """Resolves expressions in one method of a class against its module's globals and local imports."""

    def __init__(self, owner: type, method: str) -> None:
        self.owner = owner
        func = getattr(owner, method)
        self.function = func
        self.globals: dict[str, Any] = func.__globals__
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
        node = tree.body[0]
        assert isinstance(node, ast.FunctionDef), f"{owner.__name__}.{method} is not a plain method"
        self.node = node
        self.imports: dict[str, tuple[str, str | None]] = {}
        self.assigned: dict[str, list[ast.expr]] = {}
        self.unpacked: dict[str, tuple[ast.Call, int]] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
                for alias in sub.names:
                    self.imports[alias.asname or alias.name] = (sub.module, alias.name)
            elif isinstance(sub, ast.Import):
                for alias in sub.names:
                    self.imports[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
            elif isinstance(sub, ast.Assign):
                for target in sub.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(sub.value)
                    elif isinstance(target, ast.Tuple) and isinstance(sub.value, ast.Call):
                        for index, element in enumerate(target.elts):
                            if isinstance(element, ast.Name):
                                self.unpacked[element.id] = (sub.value, index)

    def constant(self, expr: ast.expr) -> Any:
        """A literal, or a module-level name's value (``ADAM_OPTIMIZER`` → ``"adam"``); None otherwise."""
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, ast.Name):
            return self.globals.get(expr.id)
        return None

    def dotted(self, expr: ast.expr) -> Any:
        """Evaluate a pure ``a.b.c`` chain against the module globals and local imports."""
        if isinstance(expr, ast.Name):
            if expr.id in self.imports:
                return _import(*self.imports[expr.id])
            return self.globals.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.dotted(expr.value)
            return getattr(base, expr.attr, None) if base is not None and not isinstance(base, Unimportable) else None
        return None

    def resolve(self, expr: ast.expr, branch: Branch, seen: frozenset[str] = frozenset()) -> list[Any]:
        """Classes (or placeholders) an expression in call position may evaluate to."""
        if isinstance(expr, ast.IfExp):
            return self.resolve(expr.body, branch, seen) + self.resolve(expr.orelse, branch, seen)
        if isinstance(expr, ast.Constant):
            return []
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr":
            module = self.dotted(expr.args[0]) if expr.args else None
            dynamic = len(expr.args) > 1 and not isinstance(expr.args[1], ast.Constant)
            if isinstance(module, ModuleType) and dynamic and module not in branch.fallback_modules:
                branch.fallback_modules.append(module)
            return []
        if isinstance(expr, ast.Name) and expr.id not in seen:
            if expr.id in self.imports:
                return [_import(*self.imports[expr.id])]
            if expr.id in self.assigned:
                return [c for value in self.assigned[expr.id] for c in self.resolve(value, branch, seen | {expr.id})]
            if expr.id in self.unpacked:
                call, index = self.unpacked[expr.id]
                return self._method_return(call, index, branch)
        value = self.dotted(expr)
        return [value] if isinstance(value, type) else []

    def _method_return(self, call: ast.Call, index: int, branch: Branch) -> list[Any]:
        """``a, b = self.helper(...)``: the ``index``-th element of each tuple the helper returns."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return []
        if not callable(getattr(self.owner, func.attr, None)):
            return []
        helper = CodeReader(self.owner, func.attr)
        param_var = helper.node.args.args[1].arg if len(helper.node.args.args) > 1 else ""
        branch.consumed |= helper.pops(helper.node, param_var)
        found: list[Any] = []
        for sub in ast.walk(helper.node):
            if isinstance(sub, ast.Return) and isinstance(sub.value, ast.Tuple) and len(sub.value.elts) > index:
                found.extend(helper.resolve(sub.value.elts[index], branch))
        return found

    def pops(self, node: ast.AST, var: str) -> set[str]:
        """String keys removed with ``var.pop(KEY, ...)`` anywhere under ``node``."""
        keys: set[str] = set()
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr == "pop"
                and isinstance(sub.func.value, ast.Name)
                and sub.func.value.id == var
                and sub.args
            ):
                key = self.constant(sub.args[0])
                if isinstance(key, str):
                    keys.add(key)
        return keys

    def branch(self, body: list[ast.stmt], param_var: str) -> Branch:
        found = Branch()
        block = ast.Module(body=body, type_ignores=[])
        found.consumed |= self.pops(block, param_var)
        for sub in ast.walk(block):
            if not isinstance(sub, ast.Call):
                continue
            if any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == param_var for k in sub.keywords):
                found.params_passed = True
                found.classes.extend(self.resolve(sub.func, found))
            elif isinstance(sub.func, ast.Name) and sub.func.id == "getattr":
                self.resolve(sub, found)
        return found


def _import(module: str, name: str | None) -> Any:
    try:
        loaded = importlib.import_module(module)
    except ImportError:
        return Unimportable(module, name or "")
    if name is None:
        return loaded
    value = getattr(loaded, name, None)
    return value if value is not None else Unimportable(module, name)


def _if_chain(node: ast.FunctionDef, marker: str) -> Iterator[tuple[ast.expr | None, list[ast.stmt]]]:
    """Walk the if/elif chain whose tests call ``self.<marker>()``: yields (test, body), then (None, else)."""
    for statement in node.body:
        if isinstance(statement, ast.If) and marker in ast.unparse(statement.test):
            current: ast.If | None = statement
            while current is not None:
                yield current.test, current.body
                orelse = current.orelse
                if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                    current = orelse[0]
                else:
                    if orelse:
                        yield None, orelse
                    current = None
            return


def _names_in_test(reader: CodeReader, test: ast.expr) -> list[str]:
    """``x in [A, B]`` / ``x == A`` → the constant values of A, B."""
    names: list[str] = []
    for sub in ast.walk(test):
        if isinstance(sub, ast.Compare):
            for op, right in zip(sub.ops, sub.comparators, strict=True):
                items = right.elts if isinstance(op, ast.In) and isinstance(right, (ast.List, ast.Tuple)) else [right]
                if isinstance(op, (ast.In, ast.Eq)):
                    names.extend(v for v in map(reader.constant, items) if isinstance(v, str))
    return names


def _params_variable(node: ast.FunctionDef, getter: str) -> str:
    """The local holding the user's params: the target of the assignment that calls ``self.<getter>()``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Assign) and getter in ast.unparse(sub.value):
            target = sub.targets[0]
            if isinstance(target, ast.Name):
                return target.id
    raise RuntimeError(f"no assignment from self.{getter}() in {node.name}")


def _rejected_params(reader: CodeReader, param_var: str) -> dict[str, str]:
    """``if "KEY" in params(.keys()): raise X("message")`` before the dispatch: keys the engine refuses."""
    rejected: dict[str, str] = {}
    for statement in reader.node.body:
        if not isinstance(statement, ast.If) or not isinstance(statement.test, ast.Compare):
            continue
        test = statement.test
        tests_params = len(test.ops) == 1 and isinstance(test.ops[0], ast.In)
        if not (tests_params and param_var in ast.unparse(test.comparators[0])):
            continue
        key = reader.constant(test.left)
        raises = [s for s in statement.body if isinstance(s, ast.Raise)]
        if isinstance(key, str) and raises and isinstance(raises[0].exc, ast.Call) and raises[0].exc.args:
            message = reader.constant(raises[0].exc.args[0])
            rejected[key] = message if isinstance(message, str) else ast.unparse(raises[0].exc.args[0])
    return rejected


# ---------------------------------------------------------------- describing classes


def _relative_file(obj: Any) -> str | None:
    try:
        filename = inspect.getsourcefile(obj)
    except TypeError:
        return None
    if not filename:
        return None
    top = importlib.import_module(obj.__module__.split(".")[0])
    root = Path(top.__file__ or "").resolve().parent.parent
    try:
        return Path(filename).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(filename).name


@functools.cache
def _file_lines(filename: str) -> tuple[str, ...]:
    try:
        return tuple(Path(filename).read_text(encoding="utf-8").splitlines())
    except OSError:
        return ()


def _class_line(cls: type) -> int | None:
    """Line of ``class Name`` in the class's file: ``inspect.getsourcelines`` tokenizes the whole
    file for each class, which was most of the extraction time for torch's long modules."""
    try:
        filename = inspect.getsourcefile(cls)
    except TypeError:
        return None
    pattern = re.compile(rf"^\s*class\s+{re.escape(cls.__name__)}\b")
    for number, text in enumerate(_file_lines(filename or ""), 1):
        if pattern.match(text):
            return number
    return None


def describe_class(cls: Any, skip_first: int = 1) -> dict[str, Any]:
    """``{class, source, params, var_keyword, importable}``; the first ``skip_first`` arguments are the engine's."""
    if isinstance(cls, Unimportable):
        return {"class": f"{cls.module}.{cls.name}", "importable": False, "params": None, "source": None,
                "var_keyword": False}
    params, var_keyword = _signature_params(cls, skip_first)
    line = _class_line(cls)
    file = _relative_file(cls)
    return {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "importable": True,
        "params": params,
        "source": {"file": file, "line": line} if file else None,
        "var_keyword": var_keyword,
    }


def _signature_params(cls: type, skip_first: int) -> tuple[dict[str, Any], bool]:
    """Keyword parameters of ``cls(...)``; ``**kwargs`` passed up to a base class are followed there."""
    params: dict[str, Any] = {}
    var_keyword = False
    signature = inspect.signature(cls)
    positional = 0
    for name, p in signature.parameters.items():
        if p.kind is p.VAR_KEYWORD:
            var_keyword = True
            continue
        if p.kind is p.VAR_POSITIONAL:
            positional += skip_first  # *args stands for the engine's positional arguments
            continue
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and positional < skip_first:
            positional += 1
            continue
        if p.kind is p.POSITIONAL_ONLY:
            continue
        default, symbolic = (None, None) if p.default is p.empty else to_json(p.default)
        params[name] = {"default": default, "default_repr": symbolic, "required": p.default is p.empty}
    if var_keyword:
        # ZenFlowCPUAdam(*args, overlap_step=False, **kwargs) hands the rest to DeepSpeedCPUAdam:
        # the accepted keys are the base's, not "anything".
        base = next((b for b in cls.__mro__[1:] if "__init__" in vars(b)), None)
        if base is not None and base.__module__.split(".")[0] == cls.__module__.split(".")[0]:
            inherited, var_keyword = _signature_params(base, skip_first)
            params = inherited | params
    return dict(sorted(params.items())), var_keyword


# ---------------------------------------------------------------- optimizers


def _optimizers(engine: type, constants: ModuleType) -> dict[str, Any]:
    reader = CodeReader(engine, "_configure_basic_optimizer")
    param_var = _params_variable(reader.node, "optimizer_params")
    names: dict[str, Any] = {}
    fallback: list[ModuleType] = []
    for test, body in _if_chain(reader.node, "optimizer_name"):
        branch = reader.branch(body, param_var)
        if test is None:
            fallback = branch.fallback_modules
            continue
        for name in _names_in_test(reader, test):
            names[name] = _entry(name, "deepspeed", branch, _constant_name(reader, test, name))
    case_insensitive = _case_insensitive(sorted(names))
    for name, entry in names.items():
        entry["case_insensitive"] = name in case_insensitive
    shadowed = {n for n in names if n in case_insensitive}
    for module in fallback:
        base = getattr(module, "Optimizer", None)
        for cls_name, cls in sorted(vars(module).items()):
            if not _public_subclass(cls_name, cls, base) or cls_name in names:
                continue
            if cls_name.lower() in shadowed:
                continue  # DeepSpeed lower-cases this name to one of its own before the fallback is reached
            branch = Branch(classes=[cls], params_passed=True)
            names[cls_name] = _entry(cls_name, module.__name__, branch, None) | {"case_insensitive": False}
    return {
        "section": constants.OPTIMIZER,
        "type_key": constants.TYPE,
        "params_key": constants.OPTIMIZER_PARAMS,
        "source": _function_source(reader),
        "rejected_params": dict(sorted(_rejected_params(reader, param_var).items())),
        "fallback_modules": [m.__name__ for m in fallback],
        "names": dict(sorted(names.items())),
    }


def _constant_name(reader: CodeReader, test: ast.expr, value: str) -> str | None:
    for sub in ast.walk(test):
        if isinstance(sub, ast.Name) and reader.globals.get(sub.id) == value:
            return sub.id
    return None


def _entry(name: str, origin: str, branch: Branch, constant: str | None) -> dict[str, Any]:
    classes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for cls in branch.classes:
        record = describe_class(cls)
        if record["class"] not in seen:
            seen.add(record["class"])
            classes.append(record)
    return {
        "classes": sorted(classes, key=lambda c: c["class"]),
        "constant": constant,
        "engine_params": sorted(branch.consumed),
        "origin": origin,
        "params_passed": branch.params_passed,
    }


def _case_insensitive(names: list[str]) -> set[str]:
    """Names DeepSpeedConfig lower-cases (measured: ``"ADAMW"`` comes back as ``"adamw"``)."""
    from deepspeed.runtime.config import DeepSpeedConfig

    found: set[str] = set()
    for name in names:
        try:
            config = DeepSpeedConfig({"train_batch_size": 1, "optimizer": {"type": name.upper(), "params": {}}})
        except Exception:  # a release whose config rejects the probe: treat the name as exact
            continue
        if getattr(config, "optimizer_name", None) == name:
            found.add(name)
    return found


def _public_subclass(name: str, cls: Any, base: Any) -> bool:
    return (
        not name.startswith("_")
        and isinstance(cls, type)
        and isinstance(base, type)
        and issubclass(cls, base)
        and cls is not base
    )


def _function_source(reader: CodeReader) -> dict[str, Any]:
    return {
        "file": _relative_file(reader.owner),
        "function": f"{reader.owner.__name__}.{reader.node.name}",
        "line": inspect.getsourcelines(reader.function)[1],
    }


# ---------------------------------------------------------------- schedulers


def _schedulers(engine: type, constants: ModuleType) -> dict[str, Any]:
    reader = CodeReader(engine, "_scheduler_from_config")
    lookup = Branch()
    for sub in ast.walk(reader.node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("getattr", "hasattr"):
            module = reader.dotted(sub.args[0]) if sub.args else None
            if isinstance(module, ModuleType) and module not in lookup.fallback_modules:
                lookup.fallback_modules.append(module)
    names: dict[str, Any] = {}
    for module in lookup.fallback_modules:
        found = {n: c for n, c in sorted(vars(module).items()) if _scheduler_class(n, c, module)}
        # The module's abstract base (torch's LRScheduler: every other scheduler derives from it)
        # cannot be built on its own, like torch.optim.Optimizer.
        bases = [n for n, c in found.items() if len(found) > 2 and all(
            issubclass(o, c) for m, o in found.items() if m != n)]
        for cls_name, cls in found.items():
            if cls_name in names or cls_name in bases:
                continue
            branch = Branch(classes=[cls], params_passed=True)
            names[cls_name] = _entry(cls_name, module.__name__, branch, None) | {"case_insensitive": False}
    return {
        "section": constants.SCHEDULER,
        "type_key": constants.TYPE,
        "params_key": constants.SCHEDULER_PARAMS,
        "source": _function_source(reader),
        "rejected_params": {},
        "fallback_modules": [m.__name__ for m in lookup.fallback_modules],
        "names": dict(sorted(names.items())),
    }


def _scheduler_class(name: str, cls: Any, module: ModuleType) -> bool:
    """A public class of ``module`` built as ``cls(optimizer, **params)``: its first argument is the optimizer."""
    if name.startswith("_") or not isinstance(cls, type) or cls.__module__ != module.__name__:
        return False
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0].name == "optimizer"

