"""The static witness of the HF layers: what transformers' Trainer and accelerate do to a ds_config, per release.

``hf/trainer.py`` predicts the Trainer's fills, mismatch errors and accelerate's precision rules; which
key is filled from which TrainingArguments value, which is mismatch-checked, the message raised, the sections
accelerate adds all change between releases. They are read here with :mod:`ast` from each release's own
source (fetched by :mod:`dsfields.extract.hf.sources`), never imported, into data:

- transformers ``integrations/deepspeed.py``: every ``fill_match``/``fill_only`` of
  ``HfTrainerDeepSpeedConfig.trainer_config_process`` / ``trainer_config_finalize`` (value expression with the
  function's local names substituted, the arguments it reads, ``must_match``, the conditions around it), the
  mismatch line ``fill_match`` appends, the errors raised, the other config writes, the hidden-size sources;
- accelerate ``utils/dataclasses.py`` ``DeepSpeedPlugin``: the environment each plugin attribute is read from
  and its default, ``plugin_to_config_mapping``, the writes and refusals of ``__post_init__``,
  ``set_mixed_precision``'s sections and clash, ``_deepspeed_config_checks``' list, ``fill_match``'s "auto"
  refusal; ``accelerator.py`` ``_prepare_deepspeed``'s ``config_kwargs``; ``utils/launch.py``
  ``prepare_deepspeed_cmd_env``: which accelerate-config key becomes which environment variable.

A rule this reader cannot find is recorded under ``unread`` with the reason, never dropped.

``python -m dsfields.extract.hf.rule_witness [--transformers V...] [--accelerate V...]`` writes
``generated/hf/transformers-V.json`` (TrainingArguments' flags, the fills and these rules) and
``generated/hf/accelerate-V.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from typing import Any

from dsfields.extract.hf import sources as hf_sources
from dsfields.extract.hf.programs import message_template

FORMAT = 3
TRAINER_FUNCTIONS = ("trainer_config_process", "trainer_config_finalize")
PLUGIN_FUNCTIONS = ("__post_init__", "set_mixed_precision", "_deepspeed_config_checks", "fill_match",
                    "deepspeed_config_process")


# ---------------------------------------------------------------- generic walking


def _walk(body: list[ast.stmt], conds: tuple[str, ...] = ()) -> list[tuple[ast.stmt, tuple[str, ...]]]:
    """Every statement in ``body`` (nested blocks included) with the ``if`` tests that guard it, outermost first."""
    out: list[tuple[ast.stmt, tuple[str, ...]]] = []
    for stmt in body:
        out.append((stmt, conds))
        if isinstance(stmt, ast.If):
            test = ast.unparse(stmt.test)
            out += _walk(stmt.body, (*conds, test))
            out += _walk(stmt.orelse, (*conds, f"not ({test})"))
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                out += _walk(getattr(stmt, block, []) or [], conds)
            for handler in getattr(stmt, "handlers", []):
                out += _walk(handler.body, conds)
    return out


def _raises(fn: ast.FunctionDef) -> list[dict[str, Any]]:
    out = []
    for stmt, conds in _walk(fn.body):
        if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call) and stmt.exc.args:
            out.append({"type": ast.unparse(stmt.exc.func), "message": message_template(stmt.exc.args[0]),
                        "when": list(conds), "line": stmt.lineno})
    return out


def _functions(tree: ast.Module, cls: str) -> dict[str, ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    return {}


def _assignments(fn: ast.FunctionDef) -> dict[str, list[tuple[ast.expr, tuple[str, ...], int]]]:
    """The function's ``name = expr`` assignments, each with the ``if`` tests guarding it, in source order."""
    found: dict[str, list[tuple[ast.expr, tuple[str, ...], int]]] = {}
    for stmt, conds in _walk(fn.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            found.setdefault(stmt.targets[0].id, []).append((stmt.value, conds, stmt.lineno))
    return found


def _locals(fn: ast.FunctionDef) -> dict[str, ast.expr]:
    """The names bound once, unconditionally: what a fill's local name (``train_batch_size``) stands for. A name
    bound under conditions (4.x ``fp16_backend``) is kept as a name and its assignments recorded instead."""
    return {name: found[0][0] for name, found in _assignments(fn).items() if len(found) == 1 and not found[0][1]}


class _Substitute(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.names.get(node.id)
        # Only plain arithmetic over the arguments is inlined (train_batch_size); a name bound to a
        # lookup chain (hidden_size) stays a name, explained under ``hidden_size_from``.
        if value is not None and all(isinstance(n, (ast.BinOp, ast.Attribute, ast.Name, ast.Load, ast.operator,
                                                    ast.Constant)) for n in ast.walk(value)):
            return value
        return node


def _reads(node: ast.AST, base: str = "args") -> list[str]:
    return sorted({n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                   and n.value.id == base})


# ---------------------------------------------------------------- transformers


def transformers_rules(code: str) -> dict[str, Any]:
    """The Trainer's rules from ``transformers/integrations/deepspeed.py``."""
    tree = ast.parse(code)
    fns = _functions(tree, "HfTrainerDeepSpeedConfig")
    unread: list[dict[str, str]] = []
    fills: list[dict[str, Any]] = []
    writes: list[dict[str, Any]] = []
    raises: list[dict[str, Any]] = []
    hidden_from: list[str] = []
    hidden_keys: list[str] = []
    bound: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in TRAINER_FUNCTIONS:
        fn = fns.get(name)
        if fn is None:
            unread.append({"rule": f"HfTrainerDeepSpeedConfig.{name}", "why": "no such method in this release"})
            continue
        names = _locals(fn)
        for stmt, conds in _walk(fn.body):
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("fill_match", "fill_only")):
                fills.append(_fill_record(call, conds, names, name, unread))
            elif isinstance(stmt, ast.Assign) and any(_is_config_subscript(t) for t in stmt.targets):
                target = next(t for t in stmt.targets if _is_config_subscript(t))
                writes.append({"path": ".".join(_subscript_path(target)), "value": ast.unparse(stmt.value),
                               "reads": _reads(stmt.value), "when": list(conds), "function": name,
                               "line": stmt.lineno})
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                target = stmt.targets[0].id
                if target == "hidden_size" and not (isinstance(stmt.value, ast.Constant)):
                    hidden_from.append(ast.unparse(stmt.value))
                elif target == "hidden_size_based_keys" and isinstance(stmt.value, ast.List):
                    hidden_keys = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant)]
        raises += [{**r, "function": name} for r in _raises(fn)]
        used = {n.id for f in fills if f["function"] == name for n in ast.walk(ast.parse(
            f.get("expression", "0") + " and " + str(f["must_match"]), mode="eval")) if isinstance(n, ast.Name)}
        for local, found in _assignments(fn).items():
            if local in used and local not in names and local not in ("hidden_size",):
                bound.setdefault(name, {})[local] = [{"value": ast.unparse(v), "when": list(c), "line": line}
                                                     for v, c, line in found]
    mismatch_line = None
    fill_match = fns.get("fill_match")
    if fill_match is not None:
        for stmt, _conds in _walk(fill_match.body):
            if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                    and ast.unparse(stmt.value.func).endswith("mismatches.append") and stmt.value.args):
                mismatch_line = {"template": message_template(stmt.value.args[0]), "line": stmt.lineno}
    if mismatch_line is None:
        unread.append({"rule": "HfTrainerDeepSpeedConfig.fill_match mismatch line",
                       "why": "no self.mismatches.append(...) found"})
    mismatch = next((r for r in raises if "mismatch" in r["message"]), None)
    if mismatch is None:
        unread.append({"rule": "the mismatch error", "why": "no raise naming 'mismatch' in " +
                       "/".join(TRAINER_FUNCTIONS)})
    return {"fills": fills, "writes": writes, "raises": raises, "mismatch_line": mismatch_line,
            "mismatch_error": mismatch, "locals": bound, "hidden_size_keys": hidden_keys,
            "hidden_size_from": hidden_from,
            "unread": unread}


def _fill_record(call: ast.Call, conds: tuple[str, ...], names: dict[str, ast.expr], function: str,
                 unread: list[dict[str, str]]) -> dict[str, Any]:
    first = call.args[0] if call.args else None
    path = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    if path is None:
        unread.append({"rule": f"{function}:{call.lineno} {ast.unparse(call)}", "why": "the path is not a string"})
    value = call.args[1] if len(call.args) > 1 else None
    hf_key = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "hf_key"), None)
    match: ast.expr | None = call.args[3] if len(call.args) > 3 else next(
        (k.value for k in call.keywords if k.arg == "must_match"), None)
    if call.func.attr == "fill_only":
        must_match: bool | str = False
    elif match is None:
        must_match = True
    elif isinstance(match, ast.Constant) and isinstance(match.value, bool):
        must_match = match.value
    else:
        must_match = ast.unparse(match)  # e.g. "not auto_find_batch_size": decided by an argument
    record: dict[str, Any] = {"path": path, "method": call.func.attr, "function": function, "line": call.lineno,
                              "must_match": must_match, "when": list(conds)}
    if value is not None:
        resolved = _Substitute(names).visit(ast.parse(ast.unparse(value), mode="eval").body)
        record["value"] = ast.unparse(value)
        record["expression"] = ast.unparse(resolved)
        record["reads"] = _reads(resolved)
    if isinstance(hf_key, ast.Constant):
        record["hf_key"] = hf_key.value
    return record


def _is_config_subscript(node: ast.expr) -> bool:
    return isinstance(node, ast.Subscript) and ast.unparse(node).startswith(("self.config[", "config["))


def _subscript_path(node: ast.expr) -> list[str]:
    keys: list[str] = []
    while isinstance(node, ast.Subscript):
        key = node.slice
        keys.insert(0, key.value if isinstance(key, ast.Constant) else "{" + ast.unparse(key) + "}")
        node = node.value
    return keys


# ---------------------------------------------------------------- accelerate


def _dict_template(node: ast.Dict) -> dict[str, Any]:
    """A dict literal as data: constant keys; each value a nested template, or ``{"expr": source}`` (the
    expression as written, evaluated by the consumer on the plugin's attributes)."""
    out: dict[str, Any] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            continue
        out[key.value] = _dict_template(value) if isinstance(value, ast.Dict) else {"expr": ast.unparse(value)}
    return out


def _environ_get(node: ast.expr) -> tuple[str, Any] | None:
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Call) and ast.unparse(sub.func) in ("os.environ.get", "os.getenv") and sub.args
                and isinstance(sub.args[0], ast.Constant)):
            default: Any = None
            if len(sub.args) > 1:
                try:
                    default = ast.literal_eval(sub.args[1])
                except ValueError:
                    default = {"expr": ast.unparse(sub.args[1])}
            return str(sub.args[0].value), default
    return None


def accelerate_rules(dataclasses_code: str, accelerator_code: str, launch_code: str | None) -> dict[str, Any]:
    """accelerate's rules from ``utils/dataclasses.py``, ``accelerator.py`` and ``utils/launch.py``."""
    unread: list[dict[str, str]] = []
    fns = _functions(ast.parse(dataclasses_code), "DeepSpeedPlugin")
    for name in PLUGIN_FUNCTIONS:
        if name not in fns:
            unread.append({"rule": f"DeepSpeedPlugin.{name}", "why": "no such method in this release"})
    plugin_env: dict[str, dict[str, Any]] = {}
    mapping: dict[str, str] = {}
    writes: list[dict[str, Any]] = []
    plugin_config: dict[str, Any] = {}
    post = fns.get("__post_init__")
    if post is not None:
        local_env: dict[str, tuple[str, Any]] = {}  # gas = os.environ.get(...); self.gradient_accumulation_steps = gas
        local_value: dict[str, str] = {}
        for stmt, conds in _walk(post.body):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                local = next((n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name) and n.id in local_env),
                             None)
                found = _environ_get(stmt.value) or (local_env[local] if local else None)
                if found and isinstance(target, ast.Name):
                    local_env[target.id] = found
                    local_value[target.id] = ast.unparse(stmt.value)
                elif found and isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self":
                    # ``when``: the tests guarding the assignment (0.2x: ``gradient_clipping != 'none'``, so the
                    # default leaves the attribute None and the plugin fills nothing). ``value``: the expression
                    # assigned (how the variable's text becomes the attribute: ``int(gas) if gas.isdigit() else
                    # gas``), with ``local_value`` the local's own (``os.environ.get(...)``): ``dsfields convert``
                    # evaluates them on the variables ``accelerate launch`` exports.
                    plugin_env.setdefault(target.attr, {
                        "env": found[0], "default": found[1], "line": stmt.lineno, "when": list(conds),
                        "value": ast.unparse(stmt.value),
                        **({"local": local, "local_value": local_value[local]} if local else {})})
                elif (isinstance(target, ast.Name) and target.id == "config" and isinstance(stmt.value, ast.Dict)
                      and not plugin_config):
                    # the ds_config the plugin builds when no DeepSpeed config is given (the plugin-only YAML)
                    plugin_config.update({"value": _dict_template(stmt.value), "when": list(conds),
                                          "line": stmt.lineno})
                elif isinstance(target, ast.Name) and target.id == "plugin_to_config_mapping" and isinstance(
                        stmt.value, ast.Dict):
                    mapping = {k.value: v.value for k, v in zip(stmt.value.keys, stmt.value.values, strict=True)
                               if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
                elif isinstance(target, ast.Subscript) and "config" in ast.unparse(target.value):
                    writes.append({"path": _subscript_path(target)[-1], "value": ast.unparse(stmt.value),
                                   "when": list(conds), "line": stmt.lineno})
        if not mapping:
            unread.append({"rule": "DeepSpeedPlugin.__post_init__ plugin_to_config_mapping", "why": "no dict found"})
        if not plugin_config:
            unread.append({"rule": "DeepSpeedPlugin.__post_init__ config", "why": "no `config = {...}` dict found"})
    mixed: dict[str, Any] = {}
    setter = fns.get("set_mixed_precision")
    if setter is not None:
        sections, kwargs = [], {}
        for stmt, conds in _walk(setter.body):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript):
                try:
                    value: Any = ast.literal_eval(stmt.value)
                except ValueError:
                    value = {"expr": ast.unparse(stmt.value)}
                sections.append({"section": _subscript_path(stmt.targets[0])[-1], "value": value, "when": list(conds),
                                 "line": stmt.lineno})
            elif (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                  and stmt.targets[0].id == "kwargs" and isinstance(stmt.value, ast.Dict)):
                kwargs = {k.value: ast.unparse(v) for k, v in zip(stmt.value.keys, stmt.value.values, strict=True)
                          if isinstance(k, ast.Constant)}
        clash = next((r for r in _raises(setter) if "mixed_precision" in r["message"]), None)
        if clash is None:
            unread.append({"rule": "set_mixed_precision clash", "why": "no raise naming --mixed_precision"})
        mixed = {"added_sections": sections, "fills": kwargs, "clash": clash, "line": setter.lineno}
    checks = fns.get("_deepspeed_config_checks")
    ignored: dict[str, Any] = {}
    if checks is not None:
        for stmt, _conds in _walk(checks.body):
            if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.List) and not ignored):
                env = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant)]
                # the list is then lower-cased without ACCELERATE_/DEEPSPEED_ (the names the YAML writes)
                ignored = {"env": env, "names": [e.replace("ACCELERATE_", "").replace("DEEPSPEED_", "").lower()
                                                 for e in env], "line": stmt.lineno}
        ignored["error"] = next(iter(_raises(checks)), None)
    auto_left = next((r for r in _raises(fns["fill_match"])), None) if "fill_match" in fns else None
    return {"plugin_env": plugin_env, "plugin_to_config": mapping, "post_init_writes": writes,
            "plugin_config": plugin_config,
            "post_init_raises": _raises(post) if post is not None else [], "mixed_precision": mixed,
            "ignored_with_config_file": ignored, "auto_not_filled": auto_left,
            "prepare_kwargs": _prepare_kwargs(accelerator_code, unread),
            "launch_env": _launch_env(launch_code, unread), "unread": unread}


def config_file_checks(code: str | None) -> dict[str, Any] | None:
    """How ``load_config_from_file`` refuses a YAML (``commands/config/config_args.py``): ``from_yaml_file``'s
    unknown-keys error (``{type, message, line}``, message with ``{yaml_file}`` and ``{extra_keys}``) and the
    legacy keys ``process_config`` converts before that test (``del``/``pop``: ``fp16``, ``dynamo_backend``)."""
    if code is None:
        return None
    out: dict[str, Any] = {"legacy_keys": []}
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ClassDef) and node.name == "BaseConfig":
            fns = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
            if "from_yaml_file" in fns:
                out["unknown_keys"] = next((r for r in _raises(fns["from_yaml_file"]) if "extra_keys" in
                                            r["message"]), None)
            walked = [sub for name in ("process_config", "from_yaml_file") if name in fns
                      for sub in ast.walk(fns[name])]
            for sub in walked:
                if isinstance(sub, ast.Delete):
                    out["legacy_keys"] += [t.slice.value for t in sub.targets if isinstance(t, ast.Subscript)
                                           and isinstance(t.slice, ast.Constant)]
                elif (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "pop"
                      and sub.args and isinstance(sub.args[0], ast.Constant)):
                    out["legacy_keys"].append(sub.args[0].value)
    out["legacy_keys"] = sorted(set(out["legacy_keys"]))
    return out if out.get("unknown_keys") else None


def config_file_keys(code: str | None) -> list[str] | None:
    """The top-level keys of accelerate's YAML: the fields of ``BaseConfig`` and ``ClusterConfig``
    (``commands/config/config_args.py``), which ``load_config_from_file`` builds from the file."""
    if code is None:
        return None
    keys: list[str] = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ClassDef) and node.name in ("BaseConfig", "ClusterConfig"):
            keys += [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return sorted(set(keys)) or None


def _prepare_kwargs(code: str, unread: list[dict[str, str]]) -> list[dict[str, Any]]:
    """``Accelerator._prepare_deepspeed``'s ``config_kwargs``: each key, its value expression and conditions."""
    fn = _functions(ast.parse(code), "Accelerator").get("_prepare_deepspeed")
    if fn is None:
        unread.append({"rule": "Accelerator._prepare_deepspeed", "why": "no such method in this release"})
        return []
    out: list[dict[str, Any]] = []

    def add(key: ast.expr | None, value: ast.expr, conds: tuple[str, ...], line: int) -> None:
        if isinstance(key, ast.Constant):
            out.append({"path": key.value, "value": ast.unparse(value), "when": list(conds), "line": line})

    for stmt, conds in _walk(fn.body):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == \
                "config_kwargs" and isinstance(stmt.value, ast.Dict):
            for k, v in zip(stmt.value.keys, stmt.value.values, strict=True):
                add(k, v, conds, stmt.lineno)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript) and ast.unparse(
                stmt.targets[0].value) == "config_kwargs":
            add(stmt.targets[0].slice, stmt.value, conds, stmt.lineno)
        elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
              and ast.unparse(stmt.value.func) == "config_kwargs.update" and stmt.value.args
              and isinstance(stmt.value.args[0], ast.Dict)):
            d = stmt.value.args[0]
            for k, v in zip(d.keys, d.values, strict=True):
                add(k, v, conds, stmt.lineno)
    if not out:
        unread.append({"rule": "Accelerator._prepare_deepspeed config_kwargs", "why": "no config_kwargs dict found"})
    return out


def _launch_env(code: str | None, unread: list[dict[str, str]]) -> dict[str, Any]:
    """``prepare_deepspeed_cmd_env``: ``current_env["ENV"] = ...args.KEY...``: the accelerate-config key (a launch
    argument, which ``accelerate launch`` sets from the YAML's ``deepspeed_config`` mapping) → its variable."""
    fn = None
    if code is not None:
        fn = next((n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.FunctionDef)
                   and n.name == "prepare_deepspeed_cmd_env"), None)
    if fn is None:
        unread.append({"rule": "utils/launch.py prepare_deepspeed_cmd_env", "why": "no such function"})
        return {}
    out: dict[str, dict[str, Any]] = {}
    for stmt, conds in _walk(fn.body):
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript)
                and ast.unparse(stmt.targets[0].value) == "current_env"):
            continue
        key = stmt.targets[0].slice
        reads = _reads(stmt.value) or [r for c in conds for r in _reads(ast.parse(c, mode="eval").body)]
        if isinstance(key, ast.Constant) and str(key.value).startswith("ACCELERATE_") and reads:
            out.setdefault(reads[0], {"env": key.value, "value": ast.unparse(stmt.value), "line": stmt.lineno})
    # every launch argument the function reads (an accelerate-config key that sets none of them does nothing
    # for a DeepSpeed launch), the ones it exports as a variable with their variable
    return {"exports": dict(sorted(out.items())), "reads": _reads(fn)}


# ---------------------------------------------------------------- snapshots


def transformers_snapshot(version: str) -> dict[str, Any]:
    from dsfields.extract.hf.flags import hf_snapshot

    root = hf_sources.fetch("transformers", version)
    package = root / "src" / "transformers"
    snap = hf_snapshot(package, version)
    assert snap is not None, f"transformers {version}: no training_args.py in its sdist"
    snap["format_version"] = FORMAT
    snap["generated_by"] = "python -m dsfields.extract.hf.rule_witness"
    snap["rules"] = package_rules(package)
    meta = json.loads((root / "meta.json").read_text(encoding="utf-8"))
    snap["release"] = {"built": meta["built"], "accelerate_requires": _requirement(package)}
    return snap


def package_rules(package: Path) -> dict[str, Any]:
    """The Trainer's rules of the transformers package folder ``package`` (an sdist's ``src/transformers`` or the
    installed one)."""
    integration = package / "integrations" / "deepspeed.py"
    if not integration.is_file():
        return {"unread": [{"rule": "integrations/deepspeed.py", "why": "no such file in this release"}]}
    rules = {**transformers_rules(integration.read_text(encoding="utf-8")),
             "source": {"file": "transformers/integrations/deepspeed.py"}}
    rules["get_warmup_steps"] = warmup_rule((package / "training_args.py").read_text(encoding="utf-8"))
    from dsfields.extract.hf.programs import trainer_programs

    rules["programs"] = trainer_programs(package, rules["unread"])
    return rules


def warmup_rule(code: str) -> dict[str, Any] | None:
    """``TrainingArguments.get_warmup_steps``' returned expression (its local names substituted): the count the
    Trainer fills ``scheduler.params.warmup_num_steps`` with (4.x reads ``warmup_ratio``, 5.x a fraction of
    ``warmup_steps``)."""
    fn = _functions(ast.parse(code), "TrainingArguments").get("get_warmup_steps")
    if fn is None:
        return None
    names = _locals(fn)
    ret = next((s.value for s, _c in _walk(fn.body) if isinstance(s, ast.Return) and s.value is not None), None)
    if ret is None:
        return None
    if isinstance(ret, ast.Name) and ret.id in names:
        ret = names[ret.id]
    return {"expression": ast.unparse(ret), "line": fn.lineno}


def _requirement(package: Path) -> str | None:
    table = package / "dependency_versions_table.py"
    if not table.is_file():
        return None
    deps = ast.literal_eval(ast.parse(table.read_text(encoding="utf-8")).body[-1].value)  # type: ignore[attr-defined]
    return deps.get("accelerate")


def launch_refusals(code: str | None) -> dict[str, Any] | None:
    """``commands/launch.py`` ``_validate_launch_command``'s refusal of a YAML without ``num_processes`` (its
    ``ClusterConfig`` default -1): ``{"num_processes": {type, message, when, line}}``."""
    if code is None:
        return None
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef) and node.name == "_validate_launch_command":
            found = [r for r in _raises(node) if "--num_processes" in r["message"]
                     and any("num_processes == -1" in c for c in r["when"])]
            return {"num_processes": found[0]} if found else None
    return None


def accelerate_snapshot(version: str) -> dict[str, Any]:
    root = hf_sources.fetch("accelerate", version)
    package = root / "src" / "accelerate"
    launch = package / "utils" / "launch.py"
    config_args = package / "commands" / "config" / "config_args.py"
    rules = accelerate_rules((package / "utils" / "dataclasses.py").read_text(encoding="utf-8"),
                             (package / "accelerator.py").read_text(encoding="utf-8"),
                             launch.read_text(encoding="utf-8") if launch.is_file() else None)
    launch_command = package / "commands" / "launch.py"
    rules["launch_refusals"] = launch_refusals(launch_command.read_text(encoding="utf-8")
                                               if launch_command.is_file() else None)
    rules["config_file_checks"] = config_file_checks(config_args.read_text(encoding="utf-8")
                                                     if config_args.is_file() else None)
    rules["config_file_keys"] = config_file_keys(config_args.read_text(encoding="utf-8") if config_args.is_file()
                                                 else None)
    from dsfields.extract.hf.programs import accelerate_programs

    rules["programs"] = accelerate_programs(package, rules["unread"])
    meta = json.loads((root / "meta.json").read_text(encoding="utf-8"))
    return {"format_version": FORMAT, "generated_by": "python -m dsfields.extract.hf.rule_witness",
            "accelerate_version": version, "release": {"built": meta["built"]},
            "source": {"files": ["accelerate/utils/dataclasses.py", "accelerate/accelerator.py",
                                 "accelerate/utils/launch.py"]}, "rules": rules}


def pair(transformers: dict[str, Any], accelerate_built: dict[str, int]) -> str | None:
    """The accelerate release a transformers release was made against: the newest one built before it."""
    before = [(t, v) for v, t in accelerate_built.items() if t <= transformers["release"]["built"]]
    return max(before)[1] if before else None


def main(argv: list[str] | None = None) -> int:
    from dsfields.hf.arguments import hf_snapshot_path
    from dsfields.model.store import write_atomic

    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.hf.rule_witness",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--transformers", nargs="*", default=None, help="releases (default: the coverage window)")
    parser.add_argument("--accelerate", nargs="*", default=None, help="releases (default: the coverage window)")
    args = parser.parse_args(argv)
    acc_versions = args.accelerate if args.accelerate is not None else hf_sources.last_patches(
        hf_sources.published("accelerate"), hf_sources.FIRST["accelerate"])
    tr_versions = args.transformers if args.transformers is not None else hf_sources.last_patches(
        hf_sources.published("transformers"), hf_sources.FIRST["transformers"])
    out_dir = hf_snapshot_path("0").parent
    built: dict[str, int] = {}
    for version in acc_versions:
        snap = accelerate_snapshot(version)
        built[version] = snap["release"]["built"]
        path = out_dir / f"accelerate-{version}.json"
        write_atomic(path, json.dumps(snap, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        print(path, flush=True)
    for known in out_dir.glob("accelerate-*.json"):  # pair against every snapshotted accelerate, not only these
        data = json.loads(known.read_text(encoding="utf-8"))
        built.setdefault(data["accelerate_version"], data["release"]["built"])
    for version in tr_versions:
        snap = transformers_snapshot(version)
        snap["release"]["accelerate_paired"] = pair(snap, built)
        path = hf_snapshot_path(version)
        write_atomic(path, json.dumps(snap, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        print(path, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
