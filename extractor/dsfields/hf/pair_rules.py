"""The HF layers' rules for one transformers / accelerate pair, read from their snapshots (``generated/hf/``).

:func:`dsfields.hf.trainer.trainer_run` follows transformers 5.24.0 / accelerate 1.15.0 line by line.
The rules that change between releases — which keys the Trainer fills from which argument and with what
expression, which it mismatch-checks, its messages, accelerate's plugin settings, precision sections and clash —
are data here (extracted by :mod:`dsfields.extract.hf.rule_witness`), so the run follows the user's own pair. What a
snapshot lacks, or a rule the static reader could not read, is said in :attr:`HfRules.notes`; the 5.24.0 /
1.15.0 rule is then used and the note says so.

Imports: stdlib only (bottom layer).
"""

from __future__ import annotations

import ast
import json
import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MIRROR = ("5.24.0", "1.15.0")
"""The pair whose rules :mod:`dsfields.hf.trainer` also spells out in code (checked against the real
Trainer by ``tests/test_hf_trainer_differential.py``)."""


class Unreadable(Exception):
    """An expression this evaluator does not take (a call or name it has no meaning for)."""


_CALLS = {"int": int, "float": float, "max": max, "min": min, "bool": bool, "len": len, "math.ceil": math.ceil,
          "str": str, "abs": abs, "round": round}


class _UnknownValue:
    """One element of a returned tuple that could not be computed (the others still are)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN_VALUE = _UnknownValue()


class ClassPath(str):
    """A module, class or object named by an import (``from torch.optim import AdamW`` → ``torch.optim.AdamW``):
    an attribute of it is a longer path, calling it gives an object of that class (named by the same path)."""

    def __call__(self, *args: Any, **kwargs: Any) -> ClassPath:
        # only a class (CapWords, as the libraries name them) makes an object of itself; what a function returns
        # (``is_torchao_available()``, ``version.parse(...)``) is not known here
        if not self.rpartition(".")[2][:1].isupper():
            raise Unreadable(f"{self}(...)")
        return self


class Program:
    """A function of a release's source as :mod:`dsfields.extract.hf.rule_witness` records it (``rules.programs``): its
    parameters and its steps (assignments, imports, calls of the class's own methods, returns and raises), each
    with the ``if`` tests around it. :func:`simulate` runs it on known values; calling one from an expression
    (``return get_constant_schedule(optimizer)``) runs it and gives what it returns."""

    def __init__(self, record: dict[str, Any], programs: dict[str, Any], names: dict[str, Any]) -> None:
        self.record, self.programs, self.names = record, programs, names

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = simulate(self.record, dict(self.names), self.programs)
        if out.kind != "return":
            raise Unreadable(f"{self.record.get('name')} gives no value here ({out.kind})")
        return out.value


def evaluate(expr: str, names: dict[str, Any]) -> Any:
    """The value of one extracted expression (``args.world_size * args.per_device_train_batch_size``).

    Only what the HF rules are written with: constants, names, ``args.X`` (any dotted name given in ``names``),
    arithmetic, ``and``/``or``/``not`` (short-circuit, as Python), comparisons, ``int``/``max``/``min``, lists,
    subscripts and ``.get`` of dicts, attributes of imported paths (:class:`ClassPath`), and the calls given in
    ``names`` (``args.get_warmup_steps``).
    """
    return _eval(ast.parse(expr, mode="eval").body, names)


def truth(expr: str, names: dict[str, Any]) -> bool | None:
    """Whether a condition holds: True, False, or None when it needs what is not known (three-valued: ``a and b``
    is False as soon as one side is False, whatever the other)."""
    return _truth(ast.parse(expr, mode="eval").body, names)


def _truth(node: ast.expr, names: dict[str, Any]) -> bool | None:
    if isinstance(node, ast.BoolOp):
        values = [_truth(v, names) for v in node.values]
        decisive = isinstance(node.op, ast.Or)  # True decides an ``or``, False an ``and``
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, names)
        return None if inner is None else not inner
    try:
        return bool(_eval(node, names))
    except (Unreadable, TypeError, KeyError, ValueError, AttributeError, ZeroDivisionError, IndexError):
        return None


def _attribute(node: ast.Attribute, names: dict[str, Any]) -> Any:
    key = ast.unparse(node)
    if key in names:
        return names[key]
    base = node.value
    if isinstance(base, (ast.Name, ast.Attribute)):
        inner = names.get(ast.unparse(base)) if isinstance(base, ast.Name) else _attribute(base, names)
        if isinstance(inner, ClassPath):
            return ClassPath(f"{inner}.{node.attr}")
        if isinstance(inner, dict) and node.attr == "get":
            return inner.get
        if isinstance(inner, str) and not isinstance(inner, ClassPath) and node.attr in _STR_METHODS:
            return getattr(inner, node.attr)  # ``gas.isdigit()``
    elif not isinstance(base, ast.Constant):
        inner = _eval(base, names)
        if isinstance(inner, dict) and node.attr == "get":
            return inner.get
        if isinstance(inner, str) and node.attr in _STR_METHODS:  # ``str(args.zero3_init_flag).lower()``
            return getattr(inner, node.attr)
    raise Unreadable(key)


_STR_METHODS = frozenset({"lower", "upper", "isdigit", "strip"})
"""The string methods accelerate's launch and plugin apply to an environment variable's text."""


def _eval(node: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names or names[node.id] is UNKNOWN_VALUE:
            raise Unreadable(node.id)
        return names[node.id]
    if isinstance(node, ast.Attribute):
        value = _attribute(node, names)
        if value is UNKNOWN_VALUE:
            raise Unreadable(ast.unparse(node))
        return value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_eval(e, names) for e in node.elts]
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_eval(k, names): _eval(v, names) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.Subscript):
        container = _eval(node.value, names)
        if not isinstance(container, (dict, list, tuple, str)):
            raise Unreadable(ast.unparse(node))
        return container[_eval(node.slice, names)]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, names), _eval(node.right, names)
        ops = {ast.Add: lambda: left + right, ast.Sub: lambda: left - right, ast.Mult: lambda: left * right,
               ast.Div: lambda: left / right, ast.FloorDiv: lambda: left // right, ast.Mod: lambda: left % right}
        if type(node.op) not in ops:
            raise Unreadable(ast.unparse(node))
        return ops[type(node.op)]()
    if isinstance(node, ast.BoolOp):  # Python's short circuit: the operand deciding is the value
        value: Any = None
        for operand in node.values:
            value = _eval(operand, names)
            if bool(value) == isinstance(node.op, ast.Or):
                return value
        return value
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, names)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, names)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _eval(node.left, names), _eval(node.comparators[0], names)
        op = node.ops[0]
        identity = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
        if (isinstance(left, ClassPath) or isinstance(right, ClassPath)) and not isinstance(op, identity):
            raise Unreadable(ast.unparse(node))  # an object compared by order, or membership: not known
        table = {ast.Eq: lambda: left == right, ast.NotEq: lambda: left != right, ast.In: lambda: left in right,
                 ast.NotIn: lambda: left not in right, ast.Gt: lambda: left > right, ast.Lt: lambda: left < right,
                 ast.GtE: lambda: left >= right, ast.LtE: lambda: left <= right, ast.Is: lambda: left is right,
                 ast.IsNot: lambda: left is not right}
        if type(op) not in table:
            raise Unreadable(ast.unparse(node))
        return table[type(op)]()
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        func = names.get(name) if name in names else _CALLS.get(name)
        if func is None and isinstance(node.func, ast.Attribute):
            func = _attribute(node.func, names)
        if func is None:
            raise Unreadable(name)
        if isinstance(func, (ClassPath, Program)):  # an object of that class / what the function returns
            return func()  # (a ClassPath of a function raises Unreadable)
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            raise Unreadable(ast.unparse(node))
        return func(*[_eval(a, names) for a in node.args], **{k.arg: _eval(k.value, names) for k in node.keywords
                                                              if k.arg is not None})
    raise Unreadable(ast.unparse(node))


def _spread_keys(step: dict[str, Any] | None, names: dict[str, Any]) -> dict[str, Any]:
    """The keys a returned call spreads with ``**d`` that the program set one by one (``d["adamw_mode"] = False``):
    what accelerate passes the DeepSpeed CPU optimizer beyond the ``lr``/``weight_decay`` it copies."""
    if not step or not step.get("value"):
        return {}
    node = ast.parse(step["value"], mode="eval").body
    out: dict[str, Any] = {}
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg is None and isinstance(keyword.value, ast.Name):
                prefix = keyword.value.id + "."
                out.update({k[len(prefix):]: v for k, v in names.items() if k.startswith(prefix)})
            elif keyword.arg is not None:
                out[keyword.arg] = _value_or_none(ast.unparse(keyword.value), names)
    return out


class EnumMember(str):
    """A member of one of transformers' ``(str, Enum)`` classes: equal to its value, written as Python 3.11+ formats
    it in a message (``IntervalStrategy.STEPS``)."""

    def __new__(cls, value: str, name: str) -> EnumMember:
        made = super().__new__(cls, value)
        made.name = name  # type: ignore[attr-defined]
        return made

    def __str__(self) -> str:
        return self.name  # type: ignore[attr-defined,no-any-return]

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


class EnumClass:
    """One of transformers' enum classes: called, the member of a value (the value itself when none); ``isinstance``
    of it holds for its members only (:func:`_isinstance`)."""

    def __init__(self, name: str, by_value: dict[str, EnumMember]) -> None:
        self.name, self.by_value = name, by_value

    def __call__(self, value: Any) -> Any:
        return self.by_value.get(value, value)

    def holds(self, value: Any) -> bool:
        return isinstance(value, EnumMember) and str(value).startswith(self.name + ".")


def _isinstance(obj: Any, classes: Any) -> bool:
    """``isinstance`` as the checks write it: Python's types, transformers' enums, imported classes by path; any
    other class is not known here."""
    if isinstance(classes, (list, tuple)):
        return any(_isinstance(obj, c) for c in classes)
    if isinstance(classes, EnumClass):
        return classes.holds(obj)
    if isinstance(classes, type):
        return isinstance(obj, classes)
    if isinstance(classes, ClassPath) and isinstance(obj, ClassPath):
        return isinstance_by_path(obj, classes)
    raise Unreadable(f"isinstance(..., {classes!r})")


def isinstance_by_path(obj: Any, classes: Any) -> bool:
    """``isinstance`` between named classes (:class:`ClassPath`): the same path, or the same class name in the same
    top package (``torch.optim.AdamW`` is ``torch.optim.adamw.AdamW``)."""
    classes = classes if isinstance(classes, list) else [classes]
    return any(str(obj) == str(c) or str(obj).rpartition(".")[2] == str(c).rpartition(".")[2]
               and str(obj).split(".")[0] == str(c).split(".")[0] for c in classes)


def _value_or_none(expr: str, names: dict[str, Any]) -> Any:
    try:
        return evaluate(expr, names)
    except (Unreadable, TypeError, KeyError, ValueError, AttributeError):
        return None


class _Loader:
    """The training dataloader as the programs see it: ``len()`` is its batches per rank."""

    def __init__(self, batches: int | None) -> None:
        self.batches = batches

    def __len__(self) -> int:
        if self.batches is None:
            raise TypeError("no length")
        return self.batches


class Outcome:
    """How a :func:`simulate` run ended: ``return`` (``value``), ``raise`` (``step``, ``message`` formatted with
    the known values), ``end`` (fell off the end), ``unknown`` (a return under a condition not known)."""

    def __init__(self, kind: str, value: Any = None, step: dict[str, Any] | None = None, message: str = "") -> None:
        self.kind, self.value, self.step, self.message = kind, value, step, message

    def __repr__(self) -> str:
        return f"Outcome({self.kind}, {self.value!r}, {self.message!r})"


def _element(node: ast.expr, names: dict[str, Any]) -> Any:
    try:
        return _eval(node, names)
    except (Unreadable, TypeError, KeyError, ValueError, AttributeError, ZeroDivisionError, IndexError):
        return UNKNOWN_VALUE


def _forget(names: dict[str, Any], targets: list[str]) -> None:
    for target in targets:
        names.pop(target, None)
        for key in [k for k in names if k.startswith(target + ".")]:
            del names[key]


def fill_template(template: str, names: dict[str, Any]) -> str:
    """A message template's ``{expr}`` pieces replaced by their values where known (kept as written where not)."""
    import re

    def value(match: re.Match[str]) -> str:
        try:
            return str(evaluate(match.group(1), names))
        except (Unreadable, SyntaxError, TypeError, KeyError, ValueError, AttributeError):
            return match.group(0)

    return re.sub(r"\{([^{}]+)\}", value, template)


def simulate(program: dict[str, Any], names: dict[str, Any], programs: dict[str, Any] | None = None,
             pinned: frozenset[str] = frozenset(), depth: int = 0) -> Outcome:
    """Run an extracted function (:class:`Program`'s record) on ``names``, which it updates as the function would.

    A step whose conditions are False is skipped; one whose conditions are not known makes what it assigns
    unknown (removed from ``names``), and a raise under such conditions is not taken (it may not happen). A value
    that cannot be computed is unknown too, never guessed. ``pinned`` names keep the value given (the dataloader
    the caller describes instead of the one the function builds).
    """
    programs = programs or {}
    for step in program.get("steps", []):
        conds = [truth(c, names) for c in step.get("when", [])]
        if False in conds:
            continue
        known = None not in conds
        op = step["op"]
        targets = step.get("targets") or []
        if op == "assign":
            if any(t in pinned for t in targets):
                continue
            if not known:
                _forget(names, targets)
                continue
            try:
                value = evaluate(step["value"], names)
            except (Unreadable, TypeError, KeyError, ValueError, AttributeError, ZeroDivisionError, IndexError):
                _forget(names, targets)
                continue
            if len(targets) == 1:
                names[targets[0]] = value
                if value is UNKNOWN_VALUE:
                    _forget(names, targets)
            elif isinstance(value, (list, tuple)) and len(value) == len(targets):
                names.update(zip(targets, value, strict=True))
            else:
                _forget(names, targets)
        elif op == "import":
            if known:  # a meaning the caller gave (an enum class as its values) wins over the import
                names.update({alias: ClassPath(path) for alias, path in step["bind"].items()
                              if alias not in names or isinstance(names[alias], ClassPath)})
            else:
                _forget(names, list(step["bind"]))
        elif op == "call":
            if targets and all(t in pinned for t in targets):
                continue
            sub = programs.get(step["method"])
            if not known or sub is None or depth > 4:
                _forget(names, targets)
                continue
            for param, arg in zip(sub.get("params", []), step.get("args", []), strict=False):
                if param == arg:
                    continue
                with _suppress():
                    names[param] = evaluate(arg, names)
                for key in [k for k in names if k.startswith(arg + ".")]:
                    names[param + key[len(arg):]] = names[key]
            out = simulate(sub, names, programs, pinned, depth + 1)
            if out.kind == "raise":
                return out
            if targets and out.kind == "return" and len(targets) == 1:
                names[targets[0]] = out.value
            elif targets and out.kind == "return" and isinstance(out.value, (list, tuple)) and \
                    len(out.value) == len(targets):
                names.update(zip(targets, out.value, strict=True))
            else:
                _forget(names, targets)
        elif op == "return":
            if not known:
                return Outcome("unknown", step=step)
            node = ast.parse(step["value"], mode="eval").body if step.get("value") else None
            if isinstance(node, ast.Tuple):  # each element on its own: (AdamW, <kwargs not followed>)
                return Outcome("return", [_element(e, names) for e in node.elts], step)
            try:
                return Outcome("return", _eval(node, names) if node is not None else None, step)
            except (Unreadable, TypeError, KeyError, ValueError, AttributeError, ZeroDivisionError, IndexError):
                return Outcome("unknown", step=step)
        elif op == "raise" and known:
            return Outcome("raise", step=step, message=fill_template(step["message"], names))
    return Outcome("end")


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return exc[0] is not None and issubclass(exc[0], (Unreadable, TypeError, KeyError, ValueError,
                                                           AttributeError, ZeroDivisionError, IndexError))


def accelerate_snapshot_path(version: str, generated: str | None = None) -> str:
    from dsfields.model.store import generated_root

    return os.path.join(generated or generated_root(), "hf", f"accelerate-{version}.json")


def accelerate_versions(generated: str | None = None) -> list[str]:
    from dsfields.model.store import COMPRESSED_SUFFIX, generated_root, version_key

    try:
        names = os.listdir(os.path.join(generated or generated_root(), "hf"))
    except OSError:
        return []
    return sorted({n[len("accelerate-"):].removesuffix(COMPRESSED_SUFFIX).removesuffix(".json") for n in names
                   if n.startswith("accelerate-") and n.removesuffix(COMPRESSED_SUFFIX).endswith(".json")},
                  key=version_key)


def load_accelerate_snapshot(version: str, generated: str | None = None) -> dict[str, Any] | None:
    try:
        from dsfields.model.store import read_generated

        return json.loads(read_generated(accelerate_snapshot_path(version, generated)))  # or its .gz in a wheel
    except OSError:
        return None


class HfRules:
    """The rules of one pair: the Trainer's fills (``trainer_fills``), its messages, accelerate's plugin
    settings, mixed-precision rule and prepare kwargs; ``notes``: what could not be taken from the snapshots."""

    def __init__(self, transformers: dict[str, Any], accelerate: dict[str, Any] | None,
                 accelerate_version: str | None) -> None:
        self.transformers_version = str(transformers.get("transformers_version"))
        self.accelerate_version = accelerate_version
        self.notes: list[str] = []
        rules = transformers.get("rules")
        self.trainer = rules if isinstance(rules, dict) and "fills" in rules else None
        if self.trainer is None:
            self.notes.append(f"transformers {self.transformers_version}: its HF snapshot has no Trainer rules "
                              f"(format {transformers.get('format_version')}): the fills and checks of transformers "
                              f"{MIRROR[0]} are used")
        for item in (self.trainer or {}).get("unread", []):
            self.notes.append(f"transformers {self.transformers_version}: {item['rule']} could not be read "
                              f"statically ({item['why']}): the transformers {MIRROR[0]} rule is used")
        self.accelerate = accelerate["rules"] if accelerate else None

        if accelerate is None:
            self.notes.append(f"accelerate {accelerate_version}: no HF snapshot (generated/hf/accelerate-"
                              f"{accelerate_version}.json): accelerate {MIRROR[1]}'s rules are used")
        for item in (self.accelerate or {}).get("unread", []):
            self.notes.append(f"accelerate {accelerate_version}: {item['rule']} could not be read statically "
                              f"({item['why']}): the accelerate {MIRROR[1]} rule is used")

    # -- transformers

    def fills(self, function: str) -> list[dict[str, Any]] | None:
        """The ``fill_match``/``fill_only`` calls of ``function`` in source order, or None (use the mirror)."""
        if self.trainer is None:
            return None
        return [f for f in self.trainer["fills"] if f["function"] == function and f.get("path")]

    def mismatch_head_tail(self) -> tuple[str, str] | None:
        error = (self.trainer or {}).get("mismatch_error")
        if not error or "{mismatches}" not in error["message"]:
            return None
        head, _, tail = error["message"].partition("{mismatches}")
        return head.rstrip("\n"), tail.lstrip("\n")

    def post_init_writes(self) -> list[tuple[str, Any, int | None]] | None:
        """``DeepSpeedPlugin.__post_init__``'s writes into a DeepSpeed config given as a file or dict (path, value,
        source line of accelerate's utils/dataclasses.py), as read from this accelerate's source; None: not read."""
        writes = (self.accelerate or {}).get("post_init_writes")
        if not isinstance(writes, list):
            return None
        import json

        out = []
        for write in writes:
            try:
                value = json.loads(str(write.get("value")))
            except ValueError:
                value = write.get("value")
            out.append((str(write.get("path")), value, write.get("line")))
        return out

    def mismatch_line(self) -> str | None:
        line = (self.trainer or {}).get("mismatch_line")
        return line["template"] if line else None

    def hidden_size_keys(self) -> list[str] | None:
        keys = (self.trainer or {}).get("hidden_size_keys")
        return list(keys) if keys else None

    def warmup_expression(self) -> str | None:
        rule = (self.trainer or {}).get("get_warmup_steps")
        return rule["expression"] if rule else None

    def writes(self) -> list[dict[str, Any]]:
        return list((self.trainer or {}).get("writes", []))

    # -- accelerate

    def plugin_to_config(self) -> dict[str, str] | None:
        mapping = (self.accelerate or {}).get("plugin_to_config")
        return dict(mapping) if mapping else None

    def plugin_default(self, attribute: str) -> Any:
        record = (self.accelerate or {}).get("plugin_env", {}).get(attribute)
        return None if record is None else record.get("default")

    def ignored_with_file(self) -> list[str] | None:
        ignored = (self.accelerate or {}).get("ignored_with_config_file", {})
        return list(ignored["names"]) if ignored.get("names") else None

    def mixed_precision(self) -> dict[str, Any] | None:
        mixed = (self.accelerate or {}).get("mixed_precision")
        return mixed if mixed and mixed.get("clash") else None

    def prepare_kwargs(self) -> list[dict[str, Any]] | None:
        kwargs = (self.accelerate or {}).get("prepare_kwargs")
        return list(kwargs) if kwargs else None

    # -- the programs (rules.programs): functions of the release evaluated on the user's values

    def program(self, side: str, key: str) -> dict[str, Any] | None:
        rules = self.trainer if side == "transformers" else self.accelerate
        found = ((rules or {}).get("programs") or {}).get(key)
        return found if isinstance(found, dict) and found.get("programs") else None

    def enum_names(self) -> dict[str, Any]:
        """``IntervalStrategy.NO`` → ``"no"`` for every enum the release's checks compare with, and each enum class
        as a call giving back its (str) value (``OptimizerNames(self.optim)``: the arguments are parsed already)."""
        out: dict[str, Any] = {"isinstance": _isinstance, **{t.__name__: t for t in (str, int, float, bool, dict,
                                                                                     list, tuple)}}
        for cls, members in (((self.trainer or {}).get("programs") or {}).get("enums") or {}).items():
            by_value = {value: EnumMember(value, f"{cls}.{member}") for member, value in members.items()}
            out[cls] = EnumClass(cls, by_value)
            out.update({f"{cls}.{member}": by_value[value] for member, value in members.items()})
        return out

    def _dispatch(self, key: str, choice: str, names: dict[str, Any]) -> tuple[Any, str]:
        """Run the function a dispatch table (``_OPTIMIZER_HANDLERS``, ``TYPE_TO_SCHEDULER_FUNCTION``) picks for
        ``choice``, or the one root program: (what it returned or raised, where)."""
        found = self.program("transformers", key)
        if found is None:
            raise Unreadable(f"no {key} program in the transformers {self.transformers_version} snapshot")
        programs = found["programs"]
        scope = {**names, **self.enum_names()}
        scope.update({name: Program(p, programs, scope) for name, p in programs.items()})
        root = found.get("root")
        if found.get("table") is not None:
            root = next((fn for k, fn in found["table"] if _value_or_none(k, scope) == choice), None)
            if root is None:
                raise Unreadable(f"{choice!r} is in no entry of {found['file']}'s table")
        out = simulate(programs[root], scope, programs)
        where = f"{found['file']}:{programs[root]['line']} {root}"
        if out.kind == "raise":
            return out, where
        if out.kind != "return":
            raise Unreadable(f"{where} gives no value here")
        return out.value, where

    def optimizer_class(self, names: dict[str, Any]) -> tuple[str, str]:
        """The class ``Trainer.create_optimizer`` builds for ``--optim`` (``names``: the arguments as ``args.X``):
        (dotted class path, where it is decided). Raises :class:`Unreadable` when the release's code does not say
        here (an optional package's class behind an availability test)."""
        optim = str(names.get("args.optim"))
        scope = {**names, **{f"ctx.{k}": v for k, v in names.items() if k.startswith("args.")}}
        value, where = self._dispatch("optimizer", optim, scope)
        if isinstance(value, Outcome):
            raise Unreadable(f"{where} raises {value.step['type']}: {value.message}")  # type: ignore[index]
        built = value[0] if isinstance(value, list) and value else value
        if not isinstance(built, ClassPath):
            raise Unreadable(f"{where}: no class for --optim {optim}")
        return str(built), where

    def scheduler_class(self, names: dict[str, Any]) -> tuple[str, str]:
        """The class ``get_scheduler`` builds for ``--lr_scheduler_type``: (dotted class path, where)."""
        kind = str(names.get("args.lr_scheduler_type"))
        value, where = self._dispatch("scheduler", kind, {**names, "optimizer": ClassPath("optimizer")})
        if isinstance(value, Outcome) or not isinstance(value, ClassPath):
            raise Unreadable(f"{where}: no scheduler class for --lr_scheduler_type {kind}")
        return str(value), where

    def post_init_error(self, names: dict[str, Any]) -> Outcome | None:
        """The first check of ``TrainingArguments.__post_init__`` that raises on these arguments (None: none that
        these values decide; a check needing the machine, ``is_torch_bf16_gpu_available()``, is never taken)."""
        found = self.program("transformers", "post_init")
        if found is None:
            raise Unreadable(f"no __post_init__ program in the transformers {self.transformers_version} snapshot")
        scope = {**names, **self.enum_names()}
        out = simulate(found["programs"][found["root"]], scope, found["programs"])
        return out if out.kind == "raise" else None

    def optim_sched_error(self, names: dict[str, Any]) -> Outcome | None:
        """``deepspeed_optim_sched``'s refusals (4.x: ``--adafactor`` beside a config optimizer)."""
        found = self.program("transformers", "optim_sched")
        if found is None:
            return None
        out = simulate(found["programs"][found["root"]], dict(names), {}, frozenset({"config"}))
        return out if out.kind == "raise" else None

    def training_steps(self, names: dict[str, Any], batches: int | None) -> int:
        """``max_steps`` as the Trainer hands it to ``deepspeed_init``: the release's own computation, with a
        dataloader of ``batches`` batches per rank (None: one without a length) and no sequence parallelism."""
        found = self.program("transformers", "num_training_steps")
        if found is None:
            raise Unreadable(f"no num_training_steps program in the transformers {self.transformers_version} snapshot")
        loader = _Loader(batches)
        scope = {**names, **self.enum_names(), "train_dataloader": loader, "dataloader": loader, "sp_size": 1,
                 "has_length": lambda d: getattr(d, "batches", None) is not None, "len": len, "math.ceil": math.ceil,
                 "sys.maxsize": 2 ** 63 - 1}
        pinned = frozenset({"train_dataloader", "dataloader", "sp_size"})
        out = simulate(found["programs"][found["root"]], scope, found["programs"], pinned)
        if out.kind == "raise":
            raise Unreadable(out.message)
        steps = scope.get(found["target"])
        if not isinstance(steps, int) or isinstance(steps, bool):
            raise Unreadable(f"{found['file']}:{found['line']}: {found['target']} not known here")
        return steps

    def cpu_optimizer(self, built: str, deepspeed: str | None = None) -> tuple[str, str]:
        """accelerate's ``map_pytorch_optim_to_deepspeed`` for an optimizer of class ``built``: the DeepSpeed CPU
        optimizer it swaps in, and where (``compare_versions("deepspeed", ...)`` against ``deepspeed``, None: taken
        as new enough)."""
        swapped, where, _kwargs = self.cpu_optimizer_call(built, deepspeed)
        return swapped, where

    def cpu_optimizer_call(self, built: str, deepspeed: str | None = None) -> tuple[str, str, dict[str, Any]]:
        """:meth:`cpu_optimizer` and the keywords the swap passes that class beyond the ``lr`` / ``weight_decay``
        it copies (1.2+: ``adamw_mode``, which ``DeepSpeedCPUAdagrad`` does not take)."""
        found = self.program("accelerate", "cpu_optimizer")
        if found is None:
            raise Unreadable(f"no map_pytorch_optim_to_deepspeed program in the accelerate {self.accelerate_version} "
                             "snapshot")
        def compare_versions(dist: str, op: str, version: str) -> bool:
            if dist != "deepspeed":
                raise Unreadable(f"compare_versions({dist!r})")
            if deepspeed is None:
                return True
            from dsfields.model.store import version_key

            a, b = version_key(deepspeed), version_key(version)
            return {">=": a >= b, ">": a > b, "<": a < b, "<=": a <= b, "==": a == b, "!=": a != b}[op]

        scope: dict[str, Any] = {"optimizer": ClassPath(built), "isinstance": isinstance_by_path,
                                 "compare_versions": compare_versions,
                                 "is_bnb_available": lambda *a, **k: built.startswith("bitsandbytes")}
        out = simulate(found["programs"][found["root"]], scope, found["programs"])
        where = f"{found['file']}:{found['programs'][found['root']]['line']}"
        if out.kind != "return" or not isinstance(out.value, ClassPath):
            raise Unreadable(f"{where}: the swap for {built} is not decided here")
        return str(out.value), where, _spread_keys(out.step, scope)

    def cpu_swap(self, names: dict[str, Any]) -> bool:
        """Whether ``_prepare_deepspeed`` swaps the Trainer's optimizer (the tests around the call, on ``names``:
        ``self.deepspeed_config``, ``optimizer``, ``model``)."""
        swap = ((self.accelerate or {}).get("programs") or {}).get("cpu_swap")
        if not swap:
            raise Unreadable(f"no cpu_swap rule in the accelerate {self.accelerate_version} snapshot")
        verdicts = [truth(c, names) for c in swap["when"]]
        if None in verdicts:
            raise Unreadable(f"{swap['file']}:{swap['line']}: " + " and ".join(
                c for c, v in zip(swap["when"], verdicts, strict=True) if v is None))
        return all(verdicts)

    def dummy_defaults(self, cls: str) -> dict[str, Any] | None:
        found = (((self.accelerate or {}).get("programs") or {}).get("dummy_defaults") or {}).get(cls)
        return dict(found) if found else None


# ---------------------------------------------------------------- what changed between two releases' rules


def _changed(out: list[str], what: str, old: Any, new: Any) -> None:
    if old != new:
        out.append(f"{what}: {json.dumps(old, ensure_ascii=False)} → {json.dumps(new, ensure_ascii=False)}")


def _keyed(out: list[str], label: str, old: dict[str, Any], new: dict[str, Any], fields: tuple[str, ...]) -> None:
    out += [f"{label} added: {k}" for k in sorted(new.keys() - old.keys())]
    out += [f"{label} removed: {k}" for k in sorted(old.keys() - new.keys())]
    for key in sorted(old.keys() & new.keys()):
        for field in fields:
            _changed(out, f"{label} {key} {field}", old[key].get(field) if isinstance(old[key], dict) else old[key],
                     new[key].get(field) if isinstance(new[key], dict) else new[key])


def trainer_rules_diff(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """Rule changes between two transformers snapshots' ``rules`` (not the flags: see ``hf_args.hf_diff``)."""
    if not old or not new or "fills" not in old or "fills" not in new:
        return [] if old == new else ["Trainer rules: one side has none (an older snapshot format)"]
    out: list[str] = []
    _keyed(out, "Trainer fill", {f["path"]: f for f in old["fills"]}, {f["path"]: f for f in new["fills"]},
           ("method", "expression", "must_match", "hf_key", "when", "function"))
    _changed(out, "mismatch line", (old.get("mismatch_line") or {}).get("template"),
             (new.get("mismatch_line") or {}).get("template"))
    _changed(out, "mismatch error", (old.get("mismatch_error") or {}).get("message"),
             (new.get("mismatch_error") or {}).get("message"))
    _changed(out, "hidden_size keys", old.get("hidden_size_keys"), new.get("hidden_size_keys"))
    _changed(out, "hidden_size from", old.get("hidden_size_from"), new.get("hidden_size_from"))
    _changed(out, "get_warmup_steps", (old.get("get_warmup_steps") or {}).get("expression"),
             (new.get("get_warmup_steps") or {}).get("expression"))
    _keyed(out, "Trainer write", {w["path"]: w for w in old.get("writes", [])},
           {w["path"]: w for w in new.get("writes", [])}, ("value", "when"))
    a, b = {r["message"] for r in old.get("raises", [])}, {r["message"] for r in new.get("raises", [])}
    out += [f"Trainer raises (new): {m}" for m in sorted(b - a)] + [f"Trainer no longer raises: {m}" for m in
                                                                   sorted(a - b)]
    return out


def accelerate_rules_diff(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """Rule changes between two accelerate snapshots' ``rules``."""
    if not old or not new:
        return [] if old == new else ["accelerate rules: one side has no snapshot"]
    out: list[str] = []
    _keyed(out, "plugin attribute → config", old.get("plugin_to_config", {}), new.get("plugin_to_config", {}), ())
    for key in sorted(old.get("plugin_to_config", {}).keys() & new.get("plugin_to_config", {}).keys()):
        _changed(out, f"plugin attribute {key} fills", old["plugin_to_config"][key], new["plugin_to_config"][key])
    _keyed(out, "plugin setting", old.get("plugin_env", {}), new.get("plugin_env", {}), ("env", "default"))
    om, nm = old.get("mixed_precision", {}), new.get("mixed_precision", {})
    _changed(out, "mixed precision fills", om.get("fills"), nm.get("fills"))
    _keyed(out, "mixed precision adds section", {a["section"]: a for a in om.get("added_sections", [])},
           {a["section"]: a for a in nm.get("added_sections", [])}, ("value", "when"))
    _changed(out, "mixed precision clash", (om.get("clash") or {}).get("message"),
             (nm.get("clash") or {}).get("message"))
    _changed(out, "settings refused beside a DeepSpeed config file",
             old.get("ignored_with_config_file", {}).get("names"), new.get("ignored_with_config_file", {}).get("names"))
    _changed(out, '"auto" left unfilled error', (old.get("auto_not_filled") or {}).get("message"),
             (new.get("auto_not_filled") or {}).get("message"))
    _keyed(out, "prepare fills", {k["path"]: k for k in old.get("prepare_kwargs", [])},
           {k["path"]: k for k in new.get("prepare_kwargs", [])}, ("value", "when"))
    _keyed(out, "accelerate launch exports", old.get("launch_env", {}).get("exports", {}),
           new.get("launch_env", {}).get("exports", {}), ("env",))
    a = {r["message"] for r in old.get("post_init_raises", [])}
    b = {r["message"] for r in new.get("post_init_raises", [])}
    out += [f"DeepSpeedPlugin raises (new): {m}" for m in sorted(b - a)]
    out += [f"DeepSpeedPlugin no longer raises: {m}" for m in sorted(a - b)]
    return out


def program_facts(rules: HfRules, fields: dict[str, Any], names_of: Any) -> dict[str, Any]:
    """What the pair's programs say, evaluated, for ``diff --hf``: the class each ``--optim`` and
    ``--lr_scheduler_type`` choice builds, ``num_training_steps`` on a few fixed cases, the messages of
    TrainingArguments' checks, accelerate's CPU optimizer for each torch class and the swap's tests.
    ``names_of(words)``: the argument names of those Trainer flags (``hf_args.arg_names`` of the parse)."""
    facts: dict[str, Any] = {}
    for flag, method in (("optim", rules.optimizer_class), ("lr_scheduler_type", rules.scheduler_class)):
        for choice in (fields.get(flag) or {}).get("choices") or []:
            try:
                facts[f"--{flag} {choice} builds"] = method(names_of(f"--{flag} {choice}"))[0]
            except (Unreadable, KeyError, TypeError) as exc:
                facts[f"--{flag} {choice} builds"] = f"(not decided statically: {str(exc)[:80]})"
    for words, batches in (("--max_steps 7", 10), ("--gradient_accumulation_steps 4 --num_train_epochs 3", 10),
                           ("--gradient_accumulation_steps 3 --num_train_epochs 1.5", 7)):
        try:
            facts[f"num_training_steps ({words}, {batches} batches)"] = rules.training_steps(names_of(words), batches)
        except (Unreadable, KeyError, TypeError) as exc:
            facts[f"num_training_steps ({words}, {batches} batches)"] = f"(not known: {str(exc)[:80]})"
    found = rules.program("transformers", "post_init")
    if found is not None:
        facts["TrainingArguments checks"] = sorted({s["message"] for p in found["programs"].values()
                                                    for s in p["steps"] if s["op"] == "raise" and s["message"]})
    for built in ("torch.optim.AdamW", "torch.optim.Adagrad", "torch.optim.SGD"):
        try:
            facts[f"ZeRO-Offload swaps {built} for"] = rules.cpu_optimizer(built)[0]
        except (Unreadable, KeyError, TypeError):
            facts[f"ZeRO-Offload swaps {built} for"] = "(not known)"
    swap = ((rules.accelerate or {}).get("programs") or {}).get("cpu_swap")
    facts["ZeRO-Offload swap when"] = swap["when"] if swap else None
    return facts


def facts_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            out += [f"{key} (new): {m}" for m in b if m not in a] + [f"{key} (gone): {m}" for m in a if m not in b]
        else:
            _changed(out, key, a, b)
    return out
