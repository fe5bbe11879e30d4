"""The Trainer's command-line flags as ``HfArgumentParser`` builds them, read from transformers' source.

``dsfields check/resolve --trainer-args`` parse the flags a user gives the Trainer without importing
transformers (slow, and it pulls torch). The flags, their types, choices and defaults are the fields of
``TrainingArguments`` (``transformers/training_args.py``); a hand-kept copy would go stale with each
release, so they are read here with :mod:`ast` and written as data into ``generated/hf/`` (the HF
snapshot of that transformers release, beside the fill list of :mod:`dsfields.extract.hf.fills`).

How a field's annotation becomes a flag follows ``HfArgumentParser._parse_dataclass_field``
(``hf_argparser.py``): ``X | str`` keeps ``X``, ``X | None`` keeps ``X`` (except ``bool | None``), an
``Enum`` or ``Literal`` gives choices, ``bool`` takes an optional value (``--bf16``, ``--bf16 false``)
and gets a ``--no_X`` twin when its default is true, ``list[X]`` takes one or more values; every flag
with an underscore also has its dashed spelling.

``python -m dsfields.extract.hf.flags`` writes the installed release's HF snapshot; ``--wheel W`` another
release's, read from its wheel (``pip download --no-deps transformers==V``).
"""

from __future__ import annotations

import argparse
import ast
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from dsfields.extract.hf.fills import fill_calls, transformers_dir
from dsfields.model.errors import MissingExtra, standalone

ARGS_FILE = "training_args.py"
ENUM_FILES = ("training_args.py", "trainer_utils.py", "debug_utils.py", "utils/generic.py")
"""Where the Enum classes TrainingArguments' annotations name are defined."""
SCALARS = {"bool": "bool", "int": "int", "float": "float", "str": "str", "dict": "str", "Dict": "str"}
"""Annotation name → how HfArgumentParser's ``type=`` reads the text (``dict`` fields take JSON text)."""
FORMAT = 1


def enum_choices(sources: list[str]) -> dict[str, list[str]]:
    """Every ``class X(str, Enum)`` / ``ExplicitEnum`` in ``sources``: its values in definition order."""
    found: dict[str, list[str]] = {}
    for code in sources:
        for node in ast.walk(ast.parse(code)):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in
                     node.bases}
            if not bases & {"Enum", "ExplicitEnum"} and not (found.keys() & bases):
                continue
            values = [stmt.value.value for stmt in node.body if isinstance(stmt, ast.Assign)
                      and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)]
            found[node.name] = values
    return found


def _members(annotation: ast.expr) -> list[ast.expr]:
    """The members of a union, spelt ``X | Y`` (5.x) or ``Optional[X]`` / ``Union[X, Y]`` (4.x)."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _members(annotation.left) + _members(annotation.right)
    if isinstance(annotation, ast.Subscript) and _name(annotation.value) == "Optional":
        return [*_members(annotation.slice), ast.Constant(None)]
    if isinstance(annotation, ast.Subscript) and _name(annotation.value) == "Union":
        items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        return [m for item in items for m in _members(item)]
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a string annotation
        return _members(ast.parse(annotation.value, mode="eval").body)
    return [annotation]


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return ast.unparse(node)


def flag_kind(annotation: ast.expr, enums: dict[str, list[str]]) -> dict[str, Any]:
    """``{"type": bool|int|float|str|choice, "choices"?, "nargs"?}`` as HfArgumentParser reads the annotation."""
    members = _members(annotation)
    names = [_name(m) for m in members]
    if len(members) > 1:  # the Union filtering of _parse_dataclass_field
        if "None" not in names:
            keep = members[0] if names[1] == "str" else members[1]
            members = [keep]
        elif "bool" not in names:
            keep = members[0] if names[1] == "None" else members[1]
            members = [keep]
        else:
            members = [m for m in members if _name(m) == "bool"]
    node = members[0]
    name = _name(node)
    if name == "Literal" and isinstance(node, ast.Subscript):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return {"type": "choice", "choices": [ast.literal_eval(i) for i in items]}
    if name in enums:
        return {"type": "choice", "choices": enums[name]}
    if name == "list" and isinstance(node, ast.Subscript):
        inner = flag_kind(node.slice, enums)
        return {**inner, "nargs": "+"}
    if name == "List" and isinstance(node, ast.Subscript):  # typing.List[X] (4.x)
        return {**flag_kind(node.slice, enums), "nargs": "+"}
    return {"type": SCALARS.get(name, "str"), **({"python_type": name} if name not in SCALARS else {})}


def _constants(body: list[ast.stmt]) -> dict[str, list[Any]]:
    """Class-level ``name = <constant>`` assignments, in source order, nested ``if`` blocks included."""
    out: dict[str, list[Any]] = {}
    for node in body:
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    out.setdefault(stmt.targets[0].id, []).append(ast.literal_eval(stmt.value))
                except ValueError:
                    continue
    return out


def training_arguments(code: str, enums: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Every ``TrainingArguments`` field: its flag kind, default (JSON), source line and help text."""
    tree = ast.parse(code)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "TrainingArguments")
    constants = _constants(cls.body)
    out: dict[str, dict[str, Any]] = {}
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if _name(stmt.annotation) == "ClassVar":
            continue
        record: dict[str, Any] = {**flag_kind(stmt.annotation, enums), "line": stmt.lineno,
                                  "annotation": ast.unparse(stmt.annotation)}
        default: ast.expr | None = stmt.value
        factory = None
        help_text = None
        if isinstance(default, ast.Call) and _name(default.func) == "field":
            keywords = {k.arg: k.value for k in default.keywords}
            default = keywords.get("default")
            factory = keywords.get("default_factory")
            meta = keywords.get("metadata")
            if isinstance(meta, ast.Dict):
                for key, value in zip(meta.keys, meta.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "help" and isinstance(value, ast.Constant):
                        help_text = value.value
        if default is not None:
            if isinstance(default, ast.Name) and default.id in constants:
                # e.g. ``default_optim``: "adamw_torch", then "adamw_torch_fused" when torch >= 2.8 (the
                # torch dsfields' users train with); the earlier values are kept as alternatives.
                values = constants[default.id]
                record["default"] = values[-1]
                record["default_alternatives"] = values[:-1]
                record["default_from"] = default.id
            else:
                try:
                    record["default"] = ast.literal_eval(default)
                except ValueError:
                    record["default_expr"] = ast.unparse(default)
        elif factory is not None:
            record["default_expr"] = ast.unparse(factory) + "()"
            if isinstance(factory, ast.Name) and factory.id in ("list", "dict"):
                record["default"] = [] if factory.id == "list" else {}
        else:
            record["required"] = True
        if record["type"] == "bool":
            # nargs="?" / const=True only for a plain ``bool`` or a non-None default: ``bool | None = None``
            # (gradient_checkpointing) needs its value written out.
            plain = len(_members(stmt.annotation)) == 1
            record["value_optional"] = plain or record.get("default") is not None
            if record.get("default") is True:
                record["no_flag"] = True
        if help_text:
            record["help"] = help_text
        out[stmt.target.id] = record
    return out


def fill_sources(code: str) -> dict[str, dict[str, Any]]:
    """Every ``fill_match`` / ``fill_only`` call of ``HfTrainerDeepSpeedConfig``: beside what
    :func:`dsfields.extract.hf.fills.fill_calls` records, the value expression it fills with (``args.learning_rate``)
    and the argument name the mismatch message shows (``hf_key``: ``- ds KEY=… vs hf HF_KEY=…``)."""
    found = fill_calls(code)
    for node in ast.walk(ast.parse(code)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and node.func.attr in ("fill_match", "fill_only")):
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or first.value not in found:
            continue
        record = found[first.value]
        if record["line"] != node.lineno:
            continue
        if len(node.args) > 1:
            record["value"] = ast.unparse(node.args[1])
        hf_key = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "hf_key"),
                                                              None)
        if isinstance(hf_key, ast.Constant):
            record["hf_key"] = hf_key.value
    return found


def hf_snapshot(root: Path | None = None, version: str | None = None) -> dict[str, Any] | None:
    """The HF snapshot of the transformers at ``root`` (default: the installed one), or None."""
    root = root or transformers_dir()
    if root is None or not (root / ARGS_FILE).is_file():
        return None
    if version is None:
        try:
            version = metadata.version("transformers")
        except metadata.PackageNotFoundError:
            version = None
    enums = enum_choices([(root / f).read_text(encoding="utf-8") for f in ENUM_FILES if (root / f).is_file()])
    integration = root / "integrations" / "deepspeed.py"
    return {
        "format_version": FORMAT,
        "generated_by": "python -m dsfields.extract.hf.flags",
        "transformers_version": version,
        "training_arguments": {
            "source": {"file": f"transformers/{ARGS_FILE}"},
            "fields": training_arguments((root / ARGS_FILE).read_text(encoding="utf-8"), enums),
        },
        "fills": {"source": {"file": "transformers/integrations/deepspeed.py"},
                  "paths": fill_sources(integration.read_text(encoding="utf-8")) if integration.is_file() else {}},
    }


def from_wheel(wheel: Path) -> dict[str, Any] | None:
    """The HF snapshot of a transformers wheel (``pip download --no-deps transformers==V``), read from the zip:
    any release, without installing it."""
    import tempfile
    import zipfile

    version = wheel.name.split("-")[1]
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as archive:
        wanted = [f"transformers/{f}" for f in (*ENUM_FILES, "integrations/deepspeed.py")]
        for name in archive.namelist():
            if name in wanted:
                archive.extract(name, tmp)
        return hf_snapshot(Path(tmp) / "transformers", version)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.hf.flags", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write (default generated/hf/transformers-<version>.json)")
    parser.add_argument("--wheel", type=Path, default=None,
                        help="a transformers wheel to read instead of the installed release")
    args = parser.parse_args(argv)
    snap = from_wheel(args.wheel) if args.wheel else hf_snapshot()
    if snap is None:
        raise MissingExtra("transformers", message="transformers is not installed here: no HF snapshot to write")
    from dsfields.hf.arguments import hf_snapshot_path
    from dsfields.model.store import write_atomic

    out = args.out or hf_snapshot_path(snap["transformers_version"])
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(snap, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(standalone(main, "dsfields"))
