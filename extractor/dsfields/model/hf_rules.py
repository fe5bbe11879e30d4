"""The HF layers' rules for one transformers / accelerate pair, read from their snapshots (``generated/hf/``).

:func:`dsfields.model.hf_trainer.trainer_run` follows transformers 5.24.0 / accelerate 1.15.0 line by line.
The rules that change between releases — which keys the Trainer fills from which argument and with what
expression, which it mismatch-checks, its messages, accelerate's plugin settings, precision sections and clash —
are data here (extracted by :mod:`dsfields.extract.hf_rules`), so the run follows the user's own pair. What a
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
"""The pair whose rules :mod:`dsfields.model.hf_trainer` also spells out in code (checked against the real
Trainer by ``tests/test_hf_trainer_differential.py``)."""


class Unreadable(Exception):
    """An expression this evaluator does not take (a call or name it has no meaning for)."""


_CALLS = {"int": int, "float": float, "max": max, "min": min, "bool": bool, "len": len, "math.ceil": math.ceil}


def evaluate(expr: str, names: dict[str, Any]) -> Any:
    """The value of one extracted expression (``args.world_size * args.per_device_train_batch_size``).

    Only what the HF rules are written with: constants, names, ``args.X``, arithmetic, ``and``/``or``/``not``,
    comparisons, ``int``/``max``/``min``, lists, and the calls given in ``names`` (``args.get_warmup_steps``).
    """
    return _eval(ast.parse(expr, mode="eval").body, names)


def _eval(node: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise Unreadable(node.id)
        return names[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        key = f"{node.value.id}.{node.attr}"
        if key not in names:
            raise Unreadable(key)
        return names[key]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, names) for e in node.elts]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, names), _eval(node.right, names)
        ops = {ast.Add: lambda: left + right, ast.Sub: lambda: left - right, ast.Mult: lambda: left * right,
               ast.Div: lambda: left / right, ast.FloorDiv: lambda: left // right}
        if type(node.op) not in ops:
            raise Unreadable(ast.unparse(node))
        return ops[type(node.op)]()
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, names) for v in node.values]
        if isinstance(node.op, ast.Or):
            return next((v for v in values if v), values[-1])
        return next((v for v in values if not v), values[-1])
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, names)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _eval(node.left, names), _eval(node.comparators[0], names)
        op = node.ops[0]
        table = {ast.Eq: lambda: left == right, ast.NotEq: lambda: left != right, ast.In: lambda: left in right,
                 ast.NotIn: lambda: left not in right, ast.Gt: lambda: left > right, ast.Lt: lambda: left < right,
                 ast.GtE: lambda: left >= right, ast.LtE: lambda: left <= right}
        if type(op) not in table:
            raise Unreadable(ast.unparse(node))
        return table[type(op)]()
    if isinstance(node, ast.Call) and not node.keywords:
        name = ast.unparse(node.func)
        func = names.get(name) or _CALLS.get(name)
        if func is None:
            raise Unreadable(name)
        return func(*[_eval(a, names) for a in node.args])
    raise Unreadable(ast.unparse(node))


def accelerate_snapshot_path(version: str, generated: str | None = None) -> str:
    from dsfields.model.store import generated_root

    return os.path.join(generated or generated_root(), "hf", f"accelerate-{version}.json")


def accelerate_versions(generated: str | None = None) -> list[str]:
    from dsfields.model.store import generated_root, version_key

    try:
        names = os.listdir(os.path.join(generated or generated_root(), "hf"))
    except OSError:
        return []
    return sorted((n[len("accelerate-"):-len(".json")] for n in names if n.startswith("accelerate-")
                   and n.endswith(".json")), key=version_key)


def load_accelerate_snapshot(version: str, generated: str | None = None) -> dict[str, Any] | None:
    try:
        with open(accelerate_snapshot_path(version, generated), encoding="utf-8") as handle:
            return json.load(handle)
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
