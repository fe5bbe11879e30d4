"""Choice lists inside pydantic validators: ``if self.select_strategy not in ["auto", "step", "epoch"]: raise``.

A pydantic field declared ``str`` whose allowed values are checked by an after-validator has no ``Literal``
or enum for :mod:`dsfields.extract.models` to read, and the static witness does not follow ``self`` inside a
model. Here each model validator and field validator of every placed model is read (its source, with
``ast``) for a membership test of one of the model's own fields against a literal list, inside an ``if`` that
raises or an ``assert``; each candidate is confirmed like the static choices are (the first allowed value
accepted and a value outside the list refused, each a full ``DeepSpeedConfig`` build on the field's probe
base) before it becomes the field's ``choices``; ``coverage.witnesses.choices`` lists each with its line.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import TYPE_CHECKING, Any

from dsfields.extract.probes import probe_base
from dsfields.model.dotted import set_path

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction

_NOT_A_CHOICE = "__dsfields_not_a_choice__"


def _validator_functions(cls: type) -> list[Any]:
    decorators = getattr(cls, "__pydantic_decorators__", None)  # pydantic 2; pydantic 1 models have none
    if decorators is None:
        return []
    found = []
    for group in (decorators.model_validators, decorators.field_validators):
        for info in group.values():
            func = getattr(info, "func", None)
            found.append(getattr(func, "__func__", func))
    return [f for f in found if f is not None]


def _raises(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Raise | ast.Assert) for n in ast.walk(node))


def _membership_tests(tree: ast.AST) -> list[tuple[str, list[Any], int]]:
    """``(self attribute, literal values, line)`` of each ``self.X in/not in [...]`` guarding a raise."""
    out = []
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If | ast.Assert) else None
        if test is None or (isinstance(node, ast.If) and not any(_raises(s) for s in node.body)):
            continue
        for compare in ast.walk(test):
            if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1
                    and isinstance(compare.ops[0], ast.In | ast.NotIn)):
                continue
            left, right = compare.left, compare.comparators[0]
            if not (isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self"):
                continue
            if not isinstance(right, ast.List | ast.Tuple | ast.Set):
                continue
            values = [e.value for e in right.elts if isinstance(e, ast.Constant)]
            if values and len(values) == len(right.elts):
                out.append((left.attr, values, compare.lineno))
    return out


def validator_choices(ex: Extraction) -> list[str]:
    """Set ``choices`` of pydantic fields their validators check against a literal list; one note per candidate."""
    notes: list[str] = []
    for section, cls in sorted(ex.model_classes.items()):
        by_name = {r.get("python_name"): r for r in ex.fields.values()
                   if r["section"] == section and r["reader"] == "pydantic" and not r["is_section"]}
        for func in _validator_functions(cls):
            try:
                source = textwrap.dedent(inspect.getsource(func))
                first = inspect.getsourcelines(func)[1]
                filename = ex.source.relative(inspect.getsourcefile(func) or "")
            except (OSError, TypeError):
                continue
            for attr, values, line in _membership_tests(ast.parse(source)):
                record = by_name.get(attr)
                if record is None or record["choices"]:
                    continue
                where = f"{filename}:{first + line - 1}"
                base = probe_base(ex, record)
                key = record["key"]
                good = ex.prober.run(set_path(base, section, key, values[0]), trace=False)
                bad = ex.prober.run(set_path(base, section, key, _NOT_A_CHOICE), trace=False)
                if good.error is None and bad.error is not None:
                    record["choices"] = list(values)
                    notes.append(f"{record['path']}: {values} confirmed ({where}, a validator of {cls.__name__})")
                else:
                    why = "allowed value rejected" if good.error is not None else "disallowed value accepted"
                    notes.append(f"{record['path']}: {values} not confirmed by DeepSpeedConfig ({why}; {where})")
    return notes
