# The message catalogue (issue 38): every message a release can raise, assert or log about its config, read by ast.
"""Witness for ``dsfields explain``: the messages a DeepSpeed release prints about its config, found without running it.

Users arrive with what their run printed, not with a key. This pass reads every ``.py`` file of a release's
sdist (straight from the archive, nothing executed or unpacked) under the config-facing packages and records
each ``raise X(msg)``, ``assert cond, msg``, ``logger.warning/error(msg)`` and ``warnings.warn(msg)`` whose message
has literal text, with:

* the message as a *pattern*: literal text kept, every f-string field, ``%``-format spec and ``.format`` field
  written as ``{source text}`` (literal braces doubled, as in ``str.format``), so the consumer compiles it to a
  regular expression;
* the key(s) it is about: names in the condition, the enclosing ``if`` tests and the message's fields that the
  release's own snapshot (``fields.json``) maps to JSON paths — constants (``TRAIN_BATCH_SIZE``), pydantic
  attribute names of a section's model class, ``DeepSpeedConfig`` attributes assigned from a reader function or a
  model attribute, and engine accessors returning them — plus dotted paths and unique key names quoted in the
  message's literal text;
* the condition text, ``file:line``, function, exception type and a stable ID (a hash of kind, type and pattern).

Entry points: :func:`release_messages` (one release → the ``messages.json`` document) and ``python -m
dsfields.extract.message_catalogue [--versions V ...]`` which writes ``generated/<V>/messages.json`` for the releases
given (default: every release with a snapshot). May import: the stdlib and ``dsfields.model``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsfields.model.message_ids import RAISED, RAISED_MARKER
from dsfields.model.store import MESSAGES_FILE, dumps, repo_generated_dir, write_atomic

FORMAT = 1
"""Format of ``messages.json``; bump on any change a consumer could notice."""

SCANNED = ("deepspeed/runtime/", "deepspeed/moe/", "deepspeed/compression/", "deepspeed/elasticity/",
           "deepspeed/monitor/", "deepspeed/autotuning/", "deepspeed/ops/adam/", "deepspeed/ops/lamb/",
           "deepspeed/ops/lion/", "deepspeed/ops/adagrad/", "deepspeed/comm/", "deepspeed/utils/",
           "deepspeed/checkpoint/", "deepspeed/nvme/", "deepspeed/compile/", "deepspeed/__init__.py",
           "deepspeed/pipe/", "deepspeed/inference/config.py")
"""Package parts that read or act on ds_config (the launcher and ops builders are other layers)."""

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
IMPORT_FAILED = "import_failed"
"""The condition's word for "inside ``except ImportError``": the message is about a package that is missing."""

LOG_METHODS = frozenset({"warning", "warn", "error", "critical", "warning_once", "exception", "info"})
"""Logger methods whose message is a user-visible complaint; ``info`` counts only when it names a key ("Did not
save the model ... because `stage3_gather_16bit_weights_on_model_save` is False"), else it is progress."""

_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa%]")
_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


# ----------------------------------------------------------------------------------------------- patterns


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _wild(node: ast.AST) -> str:
    text = ast.unparse(node)
    return "{" + _escape(text).replace("{{", "(").replace("}}", ")")[:80] + "}"


def _percent(template: str, args: list[ast.AST]) -> str:
    out, pos, index = [], 0, 0
    for match in _SPEC.finditer(template):
        out.append(_escape(template[pos:match.start()]))
        if match.group() == "%%":
            out.append("%")
        else:
            out.append(_wild(args[index]) if index < len(args) else "{}")
            index += 1
        pos = match.end()
    out.append(_escape(template[pos:]))
    return "".join(out)


def _dot_format(template: str, args: list[ast.AST], keywords: dict[str, ast.AST]) -> str:
    out, pos, index = [], 0, 0
    for match in _FORMAT_FIELD.finditer(template):
        out.append(_escape(template[pos:match.start()]))
        token = match.group()
        if token in ("{{", "}}"):
            out.append(token)
        else:
            name = token[1:-1].split("!")[0].split(":")[0]
            if name in keywords:
                out.append(_wild(keywords[name]))
            elif name.isdigit() and int(name) < len(args):
                out.append(_wild(args[int(name)]))
            elif not name and index < len(args):
                out.append(_wild(args[index]))
                index += 1
            else:
                out.append("{" + _escape(name) + "}")
        pos = match.end()
    out.append(_escape(template[pos:]))
    return "".join(out)


class _Patterns:
    """Turns a message expression into a pattern, following local string variables of the function."""

    def __init__(self, assigned: dict[str, list[ast.AST]]) -> None:
        self.assigned = assigned

    def render(self, node: ast.AST, depth: int = 0) -> str:
        if depth > 6:
            return _wild(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _escape(node.value)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(_escape(str(value.value)))
                elif isinstance(value, ast.FormattedValue):
                    parts.append(_wild(value.value))
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.render(node.left, depth + 1) + self.render(node.right, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
            args = list(node.right.elts) if isinstance(node.right, ast.Tuple) else [node.right]
            return _percent(node.left.value, args)  # type: ignore[attr-defined]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
                and _is_str(node.func.value)):
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            return _dot_format(node.func.value.value, list(node.args), keywords)  # type: ignore[attr-defined]
        if isinstance(node, ast.Name) and len(self.assigned.get(node.id, ())) == 1:
            return self.render(self.assigned[node.id][0], depth + 1)
        return _wild(node)


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def literal_text(pattern: str) -> str:
    """The pattern's literal text, fields dropped (what a paste must contain)."""
    return _FORMAT_FIELD.sub(lambda m: m.group()[0] if m.group() in ("{{", "}}") else " ", pattern)


def message_id(kind: str, exc: str, pattern: str) -> str:
    """A stable ID: the same message text (fields blanked) from the same kind of statement keeps its ID.

    Eight digits: five gave 11 pairs of different messages one ID among the ~1,470 of 77 releases (a test requires
    every ID to name one message over every release and the HF releases; a new collision fails it)."""
    shape = re.sub(r"\s+", " ", _FORMAT_FIELD.sub(lambda m: m.group() if m.group() in ("{{", "}}") else "{}",
                                                  pattern)).strip()
    digest = hashlib.sha256(f"{kind}|{exc}|{shape}".encode()).hexdigest()
    return f"DS{int(digest[:16], 16) % 100_000_000:08d}"


# ----------------------------------------------------------------------------------------------- keys


@dataclass
class KeyMap:
    """Names in the source → JSON paths, learnt from one release's snapshot and its own source."""

    constants: dict[str, list[str]] = field(default_factory=dict)
    functions: dict[str, list[str]] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    """Model class name → section path."""
    attributes: dict[str, list[str]] = field(default_factory=dict)
    """``DeepSpeedConfig``/engine attribute or accessor name → paths."""
    section_attrs: dict[str, dict[str, str]] = field(default_factory=dict)
    """Section → Python attribute name → path."""
    paths: set[str] = field(default_factory=set)
    sections: set[str] = field(default_factory=set)
    folders: dict[str, str] = field(default_factory=dict)
    """Source folder → the section most of the fields read there belong to."""
    leaves: dict[str, list[str]] = field(default_factory=dict)
    plain_words: bool = True
    """Whether a path spelt as a plain word ("fp16") in message text counts (not in other libraries' text)."""

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> KeyMap:
        keys = cls()
        for path, record in snapshot["fields"].items():
            keys.paths.add(path)
            keys.leaves.setdefault(record.get("key") or path.rsplit(".", 1)[-1], []).append(path)
            constant = record.get("constant") or {}
            if constant.get("name"):
                keys.constants.setdefault(constant["name"], []).append(path)
            function = (record.get("source") or {}).get("function")
            if function:
                keys.functions.setdefault(function.rsplit(".", 1)[-1], []).append(path)
            name = record.get("python_name")
            section = record.get("section") or ""
            if name:
                keys.section_attrs.setdefault(section, {})[name] = path
        counts: dict[str, dict[str, int]] = {}
        for path, record in snapshot["fields"].items():
            file = (record.get("source") or {}).get("file") or ""
            top = path.split(".", 1)[0]
            if "/" in file and top != path:
                folder = counts.setdefault(file.rsplit("/", 1)[0], {})
                folder[top] = folder.get(top, 0) + 1
        keys.folders = {f: max(sorted(c), key=lambda s: c[s]) for f, c in counts.items()
                        if f != "deepspeed/runtime"}
        keys.sections = set(snapshot["sections"])
        for path, section in snapshot["sections"].items():
            if section.get("model"):
                keys.models.setdefault(section["model"].rsplit(".", 1)[-1], path)
        return keys

    def attribute_value(self, node: ast.AST) -> list[str]:
        """Paths the expression ``node`` (assigned to a config attribute) stands for."""
        if isinstance(node, ast.Call):
            name = _callee(node)
            if name in self.functions:
                return self.functions[name]
            if name in self.models:
                return [self.models[name]]
            for arg in node.args:
                if isinstance(arg, ast.Name) and arg.id in self.constants:
                    return self.constants[arg.id]
        if isinstance(node, ast.Attribute):
            owner = self.attributes.get(_last(node.value))
            if owner and owner[0] in self.section_attrs:
                found = self.section_attrs[owner[0]].get(node.attr)
                return [found] if found else []
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.attributes.get(_last(node), [])
        return []

    def section_constants(self, trees: Any) -> None:
        """A module-level ``NAME = "zero_optimization"`` whose string is a top-level key of the snapshot stands for
        that key, where the snapshot names no constant for it: the section's record may point at another reader
        (0.19.7's ``zero_optimization`` at ``_reject_removed_config_keys``, which spells the string), and the
        messages of every module that imports the constant (the autotuner's "runable with ZERO 2") lost their key.
        Only a top-level key: ``ENABLED = "enabled"`` names a key of many sections."""
        for tree in trees:
            for node in tree.body:
                if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                        and _is_str(node.value) and "." not in node.value.value  # type: ignore[attr-defined]
                        and node.value.value in self.paths  # type: ignore[attr-defined]
                        and node.targets[0].id not in self.constants):
                    self.constants[node.targets[0].id] = [node.value.value]  # type: ignore[attr-defined]

    def model_builders(self, trees: Any) -> None:
        """Functions returning a section's model (``get_zero_config`` → ``DeepSpeedZeroConfig(...)``) read it."""
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name not in self.functions:
                    for sub in ast.walk(node):
                        if (isinstance(sub, ast.Return) and isinstance(sub.value, ast.Call)
                                and _callee(sub.value) in self.models):
                            self.functions[node.name] = [self.models[_callee(sub.value)]]
                            break

    def chain(self, node: ast.Attribute) -> str | None:
        """``x.zero_config.offload_param.nvme_path`` → ``zero_optimization.offload_param.nvme_path``: the first
        name that stands for a section, then each attribute through that section's model."""
        parts: list[str] = []
        current: ast.AST = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        parts.reverse()
        for start, name in enumerate(parts[:-1]):
            base = self.attributes.get(name, [])
            if base and base[0] in self.sections:
                path = base[0]
                for attr in parts[start + 1:]:
                    nested = self.section_attrs.get(path, {}).get(attr)
                    if nested is None:
                        break
                    path = nested
                return path if path != base[0] else None
        return None

    def learn(self, modules: dict[str, ast.Module]) -> None:
        """Config attributes (``self.A = reader(...)`` / ``self.A = self.B.C``) and engine accessors, to a fixpoint."""
        for _ in range(3):
            for tree in modules.values():
                for node in ast.walk(tree):
                    if (isinstance(node, ast.Assign) and len(node.targets) == 1
                            and isinstance(node.targets[0], ast.Attribute)
                            and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"):
                        paths = self.attribute_value(node.value)
                        name = node.targets[0].attr
                        if paths and name not in self.attributes:
                            self.attributes[name] = sorted(set(paths), key=lambda p: (p.count("."), p))
                    elif isinstance(node, ast.FunctionDef) and len(node.body) <= 3:
                        returns = [s for s in node.body if isinstance(s, ast.Return) and s.value is not None]
                        if len(returns) == 1 and node.name not in self.attributes:
                            value = returns[0].value
                            if isinstance(value, ast.Attribute):
                                paths = self.attribute_value(value)
                                if paths:
                                    self.attributes[node.name] = paths

    def for_module(self, tree: ast.Module) -> KeyMap:
        """This map with what ``tree``'s own classes assign learnt too (``self.swap_config =
        ds_config.zero_config.offload_param`` then ``self.elements_per_buffer = self.swap_config.buffer_size`` in the
        NVMe swapper): an attribute stands for a path in the module that assigns it, not in every other."""
        import dataclasses

        own = dataclasses.replace(self, attributes=dict(self.attributes))
        own.learn({"": tree})
        return own

    def names_in(self, node: ast.AST, section: str | None, local: dict[str, list[ast.AST]] | None = None,
                 depth: int = 0, domain: str | None = None,
                 anchors: frozenset[str] = frozenset()) -> list[str | tuple[str, ...]]:
        """Paths for the names an expression mentions, in source order (a local assigned once is followed).

        A constant several sections share (``DIFFERENT_GROUPS``, ``..._ENABLED = "enabled"``) is given as the tuple of
        its paths, for :meth:`narrow` to choose among by what else the message reads: the first two in alphabetical
        order were ``amp.enabled`` and ``bf16.enabled`` for a compression check.

        ``anchors`` are the sections the message is known to concern: an attribute named like one of their keys
        (``self.num_gpus_per_node`` beside ``self.elasticity_enabled``) stands for that key when nothing else maps
        it, as a value read from the section's dict without a named constant."""
        found: list[str | tuple[str, ...]] = []
        # a key of a module's own state (``_TP_MODEL_INIT_ARGS["tp_size"]``, ``.get("tp_group")``: the arguments of
        # an earlier call) is no config key, though spelled like one, and what the state was assigned is not followed
        state = {id(key) for s in ast.walk(node) for key in _state_keys(s)}
        for sub in ast.walk(node):
            paths: list[str | tuple[str, ...]] = []
            if id(sub) in state:
                continue
            if isinstance(sub, ast.Name):
                constant = self.constants.get(sub.id, [])
                paths = [tuple(constant)] if len(constant) > 1 else list(constant)
                if not paths and local is not None and depth < 3 and len(local.get(sub.id, ())) == 1 \
                        and not _module_state(sub):
                    paths = self.names_in(local[sub.id][0], section, local, depth + 1, domain, anchors)
            elif isinstance(sub, ast.Attribute):
                deep = self.chain(sub)
                paths = [deep] if deep else list(self.attributes.get(sub.attr, []))
                if not paths and section is not None:
                    paths = [p for p in [self.section_attrs.get(section, {}).get(sub.attr)] if p]
                if not paths and anchors and "_" in sub.attr:
                    under = [p for p in self.leaves.get(sub.attr, []) if p.split(".", 1)[0] in anchors]
                    paths = under if len(under) == 1 else []
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                paths = list(self.attributes.get(sub.func.id, []))
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                paths = list(self.paths_in_text(sub.value, section or domain))
            for path in paths[:2]:
                if path not in found:
                    found.append(path)
        return found

    @staticmethod
    def narrow(found: list[str | tuple[str, ...]], domain: str | None) -> list[str]:
        """:meth:`names_in`'s paths with each shared constant resolved: the one of its paths under the deepest path
        the message names for sure (``param_dict[ACTIVATION_QUANTIZATION][DIFFERENT_GROUPS]`` →
        ``compression_training.activation_quantization.different_groups``), else the one under the module's section;
        a constant still ambiguous names no key (a guess would blame an unrelated section)."""
        known = [p for p in found if isinstance(p, str)]
        chosen: dict[tuple[str, ...], str] = {}
        for _ in range(len(found)):  # a name resolved anchors the next (SHARED_PARAMETERS, then its ENABLED)
            progress = False
            for group in (g for g in found if isinstance(g, tuple) and g not in chosen):
                anchors = sorted(known, key=lambda p: -p.count(".")) + ([domain] if domain else [])
                for anchor in anchors:
                    under = [p for p in group if p.startswith(anchor + ".")]
                    if under:
                        if len(under) == 1:
                            chosen[group] = under[0]
                            known.append(under[0])
                            progress = True
                        break
            if not progress:
                break
        out: list[str] = []
        for item in found:
            path = chosen.get(item) if isinstance(item, tuple) else item
            if path and path not in out:
                out.append(path)
        return out

    def domain(self, file: str) -> str | None:
        """The section a module serves: its folder is named after a section, or the section most of its folder's
        reads belong to (``deepspeed/runtime/fp16/`` → ``fp16``; ``runtime/zero/`` → ``zero_optimization``)."""
        folder = file.rsplit("/", 1)[0]
        if folder in self.folders:
            return self.folders[folder]
        name = folder.rsplit("/", 1)[-1]
        if name in self.sections:
            return name
        return None

    def words_to_keys(self, text: str, section: str) -> list[str]:
        """Fields of ``section`` whose name words (at least two, two thirds of them) the message uses."""
        from dsfields.model.wording import keys_named_by_words

        return keys_named_by_words(text, section, self.paths)

    def paths_in_text(self, text: str, section: str | None) -> list[str]:
        """Dotted paths, ``section.key`` and unique key names quoted in literal message text."""
        found: list[str] = []
        for match in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", text):
            word = match.group()
            # a plain English word that is also a key ("checkpoint", "optimizer") counts only quoted, as a key
            quoted = match.start() > 0 and text[match.start() - 1] in "`'\""
            plain = "." not in word and "_" not in word and not any(c.isdigit() for c in word)
            # in another library's text a section's bare name ("fp16", "bf16") is its own flag or a dtype
            spelt = self.plain_words or "." in word or "_" in word
            if word in self.paths and spelt and (not plain or quoted):
                found.append(word)
                continue
            leaf = word.rsplit(".", 1)[-1]
            if "_" not in leaf and "." not in word:
                continue  # a plain English word ("stage", "type") is not evidence of a key
            candidates = self.leaves.get(leaf, [])
            if section is not None:
                local = [p for p in candidates if p.startswith(section + ".")]
                top = section.split(".", 1)[0]
                if (not local and "." not in word and not quoted and leaf.count("_") < 2
                        and not any(p == top or p.startswith(top + ".") for p in candidates)):
                    # a short variable name in another section's module ("num_params = {num_params}" is zero.Init's
                    # count, not autotuning.model_info.num_params); a longer one is taken as the key it spells
                    continue
                candidates = local or candidates
            if len(candidates) == 1:
                found.append(candidates[0])
        return found


def _callee(node: ast.Call) -> str:
    return _last(node.func)


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _last(node.func)
    return ""


# ----------------------------------------------------------------------------------------------- scan


_OPPOSITE: dict[type, type] = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
                               ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
                               ast.IsNot: ast.Is}


def negated(test: ast.expr) -> ast.expr:
    """``test`` failing, spelt as the source would (``a != b``, ``k not in d``, ``x`` for ``not x``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return ast.Compare(left=test.left, ops=[_OPPOSITE[type(test.ops[0])]()], comparators=test.comparators)
    return ast.UnaryOp(op=ast.Not(), operand=test)



class _Locals(dict[str, list[ast.AST]]):
    """A function's local assignments (name → values), collected on first use: most functions raise nothing."""

    def __init__(self, function: ast.AST | None = None) -> None:
        super().__init__()
        self.function = function

    def _fill(self) -> None:
        function, self.function = self.function, None
        if function is None:
            return
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.setdefault(node.target.id, []).append(node.value)

    def get(self, key: str, default: Any = None) -> Any:
        self._fill()
        return super().get(key, default)

    def __getitem__(self, key: str) -> list[ast.AST]:
        self._fill()
        return super().__getitem__(key)


@dataclass
class _Context:
    file: str
    function: str = ""
    cls: str = ""
    tests: list[ast.AST] = field(default_factory=list)
    assigned: _Locals = field(default_factory=_Locals)


class _Scanner:
    def __init__(self, keys: KeyMap, deepspeed: bool = True) -> None:
        self.keys = keys
        self.entries: list[dict[str, Any]] = []
        self.states = deepspeed
        """Whether entries carry ``state``: DeepSpeed's only; in transformers/accelerate their own flags
        (``mixed_precision``) are no ds_config key but no fact of the run either."""
        self.items: dict[str, list[ast.expr]] = {}
        """The current module's list items (:func:`_list_items`)."""
        self.own_modules = deepspeed
        """Whether each module's own attribute assignments are learnt for it (:meth:`KeyMap.for_module`): DeepSpeed's
        modules; transformers/accelerate are read through :func:`hf_keymap`'s own learning."""

    def module(self, file: str, tree: ast.Module) -> None:
        shared = self.keys
        if self.own_modules:
            self.keys = shared.for_module(tree)
        self.items = _list_items(tree)
        try:
            self._body(tree.body, _Context(file))
        finally:
            self.keys = shared

    def _parts(self, message: ast.AST, ctx: _Context) -> list[str]:
        """The patterns of the items a message joins from a list its module fills elsewhere (the Trainer's
        ``"\\n".join(self.mismatches)``, each ``- ds {ds_key_long}={ds_val} vs hf {hf_key}={hf_val}`` appended by
        ``fill_match``): one such line, pasted without the message around it, is the message's."""
        out: list[str] = []
        for node in ast.walk(message):
            if isinstance(node, ast.Name) and len(ctx.assigned.get(node.id, ())) == 1:
                node = ctx.assigned[node.id][0]
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
                    and _is_str(node.func.value) and len(node.args) == 1):
                for item in self.items.get(_last(node.args[0]), []):
                    pattern = _Patterns({}).render(item)
                    # two words of its own at least ("ds", "vs hf"): a line of fields alone matches anything
                    if len(re.findall(r"[A-Za-z]{2,}", literal_text(pattern))) >= 2 and pattern not in out:
                        out.append(pattern)
        return out

    def _section(self, ctx: _Context) -> str | None:
        if ctx.cls in self.keys.models:
            return self.keys.models[ctx.cls]
        return None

    def _body(self, body: list[ast.stmt], ctx: _Context) -> None:
        built: dict[str, ast.expr] = {}
        for stmt in body:
            built = _built_strings(stmt, built)
            self._stmt(_with_built(stmt, built), ctx)

    def _stmt(self, stmt: ast.stmt, ctx: _Context) -> None:
        if isinstance(stmt, ast.ClassDef):
            self._body(stmt.body, _Context(ctx.file, ctx.function, stmt.name, []))
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assigned = _Locals(stmt)
            name = f"{ctx.cls}.{stmt.name}" if ctx.cls else stmt.name
            decorators = [d for d in stmt.decorator_list if isinstance(d, ast.Call)
                          and _last(d.func) in ("validator", "field_validator", "root_validator", "model_validator")]
            self._body(stmt.body, _Context(ctx.file, name, ctx.cls, list(decorators), assigned))
            return
        if isinstance(stmt, ast.If):
            self._body(stmt.body, _Context(ctx.file, ctx.function, ctx.cls, [*ctx.tests, stmt.test], ctx.assigned))
            otherwise = negated(stmt.test)
            self._body(stmt.orelse, _Context(ctx.file, ctx.function, ctx.cls, [*ctx.tests, otherwise], ctx.assigned))
            return
        if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call) and stmt.exc.args:
            self._record("raise", _callee(stmt.exc), stmt.exc.args[0], None, stmt, ctx)
        elif isinstance(stmt, ast.Assert) and stmt.msg is not None:
            self._record("assert", "AssertionError", stmt.msg, stmt.test, stmt, ctx)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.args:
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and _last(func.value) in (
                    "logger", "logging", "log", "LOGGER"):
                message = call.args[0]
                if len(call.args) > 1 and _is_str(message):  # logging's own %-formatting of its arguments
                    message = ast.BinOp(left=message, op=ast.Mod(), right=ast.Tuple(elts=call.args[1:]))
                self._record("log", func.attr.replace("warn", "warning").replace("warninging", "warning"),
                             message, None, stmt, ctx)
            elif isinstance(func, ast.Attribute) and func.attr == "warn" and _last(func.value) == "warnings":
                self._record("log", "warning", call.args[0], None, stmt, ctx)
            elif isinstance(func, ast.Name) and func.id in ("log_dist", "print_rank_0", "logger_warning_once"):
                pass  # progress messages, not complaints
        for attr in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, attr, None)
            if isinstance(inner, list) and not isinstance(stmt, ast.If):
                for child in inner:
                    if isinstance(child, ast.ExceptHandler):
                        caught = child.type.elts if isinstance(child.type, ast.Tuple) else [child.type]
                        if {_last(c) for c in caught if c is not None} & IMPORT_ERRORS:
                            # said because a package is missing (`except ImportError: logger.error("Install mup")`)
                            failed = ast.Name(id=IMPORT_FAILED, ctx=ast.Load())
                            self._body(child.body, _Context(ctx.file, ctx.function, ctx.cls, [*ctx.tests, failed],
                                                            ctx.assigned))
                        else:
                            # said because the try block raised (``except: logger.error("Failed to create ...")``
                            # after ``os.makedirs``): that is part of when, not only the enclosing ifs
                            raised = ast.Name(id=_raised_marker(stmt, child), ctx=ast.Load())
                            self._body(child.body, _Context(ctx.file, ctx.function, ctx.cls, [*ctx.tests, raised],
                                                            ctx.assigned))
                    elif isinstance(child, ast.stmt):
                        self._stmt(child, ctx)

    def _record(self, kind: str, exc: str, message: ast.AST, test: ast.AST | None, stmt: ast.stmt,
                ctx: _Context) -> None:
        pattern = _Patterns(ctx.assigned).render(message)
        if len(re.sub(r"\W", "", literal_text(pattern))) < 8:
            return  # no literal text worth matching ("{msg}", "x")
        section = self._section(ctx)
        domain = section or self.keys.domain(ctx.file)
        # An info line is about the keys its words or its branch name, not about the values it prints
        # ("Partition Activations {PARTITION_ACTIVATIONS}" reports a setting; nothing in it is refused).
        said = ast.Constant(literal_text(pattern)) if exc == "info" else message
        sources = ([test] if test is not None else []) + [said] + list(reversed(ctx.tests))
        found: list[str | tuple[str, ...]] = []
        anchors: frozenset[str] = frozenset()
        for _ in range(2):  # again, with the sections the first pass found as anchors for unmapped attributes
            found = []
            for source in sources:
                for item in self.keys.names_in(source, section, ctx.assigned, domain=domain, anchors=anchors):
                    if item not in found:
                        found.append(item)
            anchors = frozenset(p.split(".", 1)[0] for p in found if isinstance(p, str))
            if not anchors:
                break
        keys = self.keys.narrow(found, domain)
        for decorator in ctx.tests:
            if isinstance(decorator, ast.Call) and section is not None:
                for arg in decorator.args:
                    if _is_str(arg):
                        path = self.keys.section_attrs.get(section, {}).get(arg.value)  # type: ignore[attr-defined]
                        if path and path not in keys:
                            keys.append(path)
        keys = [k for k in keys if not any(o.startswith(k + ".") for o in keys)]  # the field, not its section
        if not keys and domain is not None:
            keys = self.keys.words_to_keys(literal_text(pattern), domain)
        if exc == "info" and not keys:
            return
        # One meaning for every kind: when the message appears. An assert's test is what must hold, so it is
        # negated and put beside the enclosing tests (joined as they were, "not pipeline and not managed()" read
        # as the requirement, when DeepSpeed asks for "managed() or not pipeline").
        conditions = [ast.unparse(negated(test))] if test is not None else []
        conditions += [ast.unparse(t) for t in ctx.tests if not isinstance(t, ast.Call)][-3:]
        state = self._state(test, ctx, section, domain, anchors) if keys and self.states else None
        entry = {
            "id": message_id(kind, exc, pattern),
            "kind": kind,
            "type": exc,
            "pattern": pattern,
            "keys": keys[:8],
            "condition": " and ".join(f"({c})" if " or " in c else c for c in conditions)[:400] or None,
            "file": ctx.file,
            "line": stmt.lineno,
            "function": ctx.function or None,
        }
        if domain is not None:
            entry["section"] = domain
        if state:
            entry["state"] = state
        parts = self._parts(message, ctx)
        if parts:
            entry["parts"] = parts
        self.entries.append(entry)

    def _state(self, test: ast.AST | None, ctx: _Context, section: str | None, domain: str | None,
               anchors: frozenset[str]) -> str | None:
        """The part of the deciding test that no config key stands in, where a key stands in another part (of it or
        of an enclosing ``if``): what the run brings (a loaded checkpoint's ``ckpt_version``, the device's
        ``is_fp16_supported()``, an ``mpu`` passed in). The message is then about that as much as about the key,
        which decides whether DeepSpeed looks. The deciding test is an assert's own (its failing form), else the
        innermost ``if``. A part that calls a section's accessor (``zero_use_cpu_optimizer()``) is config, mapped
        or not; a part naming only ``self`` attributes is the object's state, not a value passed in."""
        tests = [t for t in ctx.tests if not isinstance(t, ast.Call)][-3:]
        if test is not None:
            deciding = [negated(v) for v in test.values] if isinstance(test, ast.BoolOp) and isinstance(
                test.op, ast.Or) else [negated(test)]  # type: ignore[arg-type]
        elif tests:
            deciding = _conjuncts(tests.pop())
        else:
            return None
        words = tuple(f"{s.split('_', 1)[0]}_" for s in self.keys.sections if "." not in s) + tuple(
            f"{s}_" for s in self.keys.sections if "." not in s)
        if any(isinstance(t, ast.Call) for t in ctx.tests):
            return None  # a validator's arguments are the config's values
        keyed = [p for t in tests for p in _conjuncts(t)] + deciding
        if not any(self.keys.names_in(p, section, ctx.assigned, domain=domain, anchors=anchors) for p in keyed):
            return None
        free = []
        for part in deciding:
            if self.keys.names_in(part, section, ctx.assigned, domain=domain, anchors=anchors):
                continue
            names = [n for n in ast.walk(part) if isinstance(n, (ast.Name, ast.Attribute))]
            if any(_last(n).startswith(words) or _last(n) in self.keys.leaves or _last(n) == IMPORT_FAILED
                   or "rank" in _last(n) or "config" in _last(n) for n in names):
                continue  # a section's accessor, a key's own name or a config object; a package missing; said on
                # one rank only
            if any(isinstance(n, ast.Subscript) and _constant_key(n.slice) or isinstance(n, ast.Call)
                   and _last(n.func) == "get" and n.args and _constant_key(n.args[0]) for n in ast.walk(part)):
                continue  # a value read from the config's dict (``output[METHOD]``, ``values.get('stage')``)
            if any(isinstance(n, ast.Name) and n.id != "self" and not n.id.isupper() for n in names):
                free.append(part)
        return " and ".join(ast.unparse(p) for p in free)[:200] or None


_MARKER = re.compile(rf"\b(?:{RAISED_MARKER.pattern})\b")
"""A :func:`_raised_marker` in a condition, as a whole word."""


def _raised_marker(stmt: ast.stmt, handler: ast.ExceptHandler) -> str:
    """The name standing for "the try block ``stmt`` raised what ``handler`` catches" in a condition
    (:data:`~dsfields.model.message_ids.RAISED`)."""
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    named = [_last(c) for c in caught if c is not None and _last(c) not in ("Exception", "BaseException", "")]
    if named:
        return "_".join([RAISED, *named])
    body = getattr(stmt, "body", None) or []
    call = next((n for n in ast.walk(body[0]) if isinstance(n, ast.Call)), None) if body else None
    name = _last(call.func) if call is not None else ""
    return f"{name}_{RAISED}" if name.isidentifier() else f"{RAISED}_Exception"


def _module_state(node: ast.AST) -> bool:
    """A module-level variable in capitals (``_TP_MODEL_INIT_ARGS``): state the module keeps, not a config dict."""
    return isinstance(node, ast.Name) and node.id.strip("_").isupper()


def _state_keys(node: ast.AST) -> list[ast.AST]:
    """The key expressions ``node`` reads from module state (:func:`_module_state`): ``STATE[key]``,
    ``STATE.get(key)``."""
    if isinstance(node, ast.Subscript) and _module_state(node.value):
        return [node.slice]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and _module_state(node.func.value) and node.args:
        return [node.args[0]]
    return []


def _constant_key(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.Name) and (
        node.id.isupper())


def _string_like(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or _is_str(node) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
            _string_like(node.left) or _string_like(node.right)))


def _built_strings(stmt: ast.stmt, built: dict[str, ast.expr]) -> dict[str, ast.expr]:
    """A message a block builds in steps before saying it (``msg = f"OVERFLOW! ..."``, then ``if half: msg +=
    f" Attempted loss scale ..."``, then ``logger.info(msg)``): the local's text so far, each addition joined,
    also one made under an ``if`` (the longest form is what a log shows at its fullest)."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and _string_like(stmt.value)):
        return {**built, stmt.targets[0].id: stmt.value}
    additions: list[ast.stmt] = [stmt]
    if isinstance(stmt, ast.If) and not stmt.orelse:
        additions = stmt.body
    grown = dict(built)
    for add in additions:
        if (isinstance(add, ast.AugAssign) and isinstance(add.op, ast.Add) and isinstance(add.target, ast.Name)
                and add.target.id in grown and _string_like(add.value)):
            grown[add.target.id] = ast.BinOp(left=grown[add.target.id], op=ast.Add(), right=add.value)
    return grown


def _with_built(stmt: ast.stmt, built: dict[str, ast.expr]) -> ast.stmt:
    """``stmt`` with a built-up message local (:func:`_built_strings`) in place of its name where ``stmt`` is a call
    saying it (``logger.info(msg)``, the form such messages were found in); any other statement as it is."""
    if not built:
        return stmt
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.args
            and isinstance(stmt.value.args[0], ast.Name) and stmt.value.args[0].id in built
            and isinstance(built[stmt.value.args[0].id], ast.BinOp)):
        call = stmt.value
        said = ast.Call(func=call.func, args=[built[call.args[0].id], *call.args[1:]], keywords=call.keywords)
        return ast.copy_location(ast.Expr(value=ast.copy_location(said, call)), stmt)
    return stmt


def _list_items(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """What a module appends to its lists, by the list's last name (``self.mismatches.append(f"- ds ...")``): the
    strings only (a list of values is no message's)."""
    items: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                and len(node.args) == 1 and _string_like(node.args[0])
                and isinstance(node.func.value, (ast.Name, ast.Attribute))):
            items.setdefault(_last(node.func.value), []).append(node.args[0])
    return items


def _conjuncts(test: ast.AST) -> list[ast.AST]:
    return list(test.values) if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]


# ----------------------------------------------------------------------------------------------- releases


def sdist_modules(archive: Path) -> Iterator[tuple[str, str]]:
    """``(deepspeed/..., source text)`` for the scanned modules of an sdist, read from the archive itself."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            if len(parts) != 2 or not member.isfile() or not parts[1].endswith(".py"):
                continue
            relative = parts[1]
            if not relative.startswith(SCANNED):
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                yield relative, handle.read().decode("utf-8", "replace")


_TREES: dict[str, ast.Module | None] = {}
"""Parsed modules by content hash: most files are unchanged from one release to the next (parsing is half the
time of a release; the trees are only read)."""


def _parsed(name: str, text: str) -> ast.Module | None:
    digest = hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()
    if digest not in _TREES:
        if len(_TREES) > 3000:
            _TREES.clear()
        try:
            _TREES[digest] = ast.parse(text, name)
        except SyntaxError:
            _TREES[digest] = None
    return _TREES[digest]


def scan_modules(sources: dict[str, str], snapshot: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Catalogue entries for ``sources`` (relative path → text) and the files that did not parse."""
    entries, failed, _ = scan_release(sources, snapshot)
    return entries, failed


def scan_release(sources: dict[str, str], snapshot: dict[str, Any]
                 ) -> tuple[list[dict[str, Any]], list[str], dict[str, list[str]]]:
    """:func:`scan_modules` plus the names (config attributes, engine accessors) learnt to stand for paths."""
    keys = KeyMap.from_snapshot(snapshot)
    trees: dict[str, ast.Module] = {}
    failed = []
    for name, text in sorted(sources.items()):
        tree = _parsed(name, text)
        if tree is None:
            failed.append(name)
        else:
            trees[name] = tree
    keys.section_constants(trees.values())
    keys.model_builders(trees.values())
    keys.learn({n: t for n, t in trees.items() if n.endswith(("runtime/config.py", "runtime/engine.py"))})
    scanner = _Scanner(keys)
    for name, tree in trees.items():
        scanner.module(name, tree)
    unique: dict[tuple[str, int, str], dict[str, Any]] = {}
    for entry in scanner.entries:
        unique.setdefault((entry["file"], entry["line"], entry["id"]), entry)
    entries = sorted(unique.values(), key=lambda e: (e["file"], e["line"], e["id"]))
    return entries, failed, dict(sorted(keys.attributes.items()))


def sdist_archive(version: str) -> Path:
    """The release's sdist, downloaded once into ``~/.cache/dsfields/sdist/<version>/``."""
    from dsfields.extract import releases

    root = releases.cache_dir() / "sdist"
    final = root / version
    found = sorted(final.glob("*.tar.gz")) if final.is_dir() else []
    if found:
        return found[0]
    tmp = root / f".{version}-{time.monotonic_ns()}"
    archive = releases._download_sdist(version, tmp)
    tmp.rename(final)
    return final / archive.name


def release_messages(version: str, generated: Path) -> dict[str, Any]:
    """The ``messages.json`` document of ``version`` (its snapshot must exist in ``generated``)."""
    snapshot = json.loads((generated / version / "fields.json").read_text())
    sources = dict(sdist_modules(sdist_archive(version)))
    entries, failed, names = scan_release(sources, snapshot)
    return {
        "format": FORMAT,
        "generated_by": "python -m dsfields.extract.message_catalogue",
        "deepspeed_version": version,
        "scanned": sorted({"/".join(n.split("/")[:3]) if n.count("/") > 2 else n for n in sources}),
        "unparsed": failed,
        "messages": entries,
        "names": names,
    }


HF_FILES = {
    "transformers": ("transformers/integrations/deepspeed.py", "transformers/deepspeed.py",
                     "transformers/modeling_utils.py", "transformers/trainer.py", "transformers/training_args.py"),
    "accelerate": ("accelerate/utils/dataclasses.py", "accelerate/accelerator.py", "accelerate/utils/deepspeed.py",
                   "accelerate/state.py"),
}
"""The modules of transformers and accelerate that refuse a ds_config or a Trainer flag about DeepSpeed."""

_ABOUT_DEEPSPEED = re.compile(r"deepspeed|zero|ds_config|hf_ds_config", re.IGNORECASE)


def hf_sources(archive: Path, dist: str) -> dict[str, str]:
    """``{transformers/..., text}`` for :data:`HF_FILES` read from an sdist (``src/`` layout)."""
    found = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 2)
            if len(parts) == 3 and parts[1] == "src" and parts[2] in HF_FILES[dist] and member.isfile():
                handle = tar.extractfile(member)
                if handle is not None:
                    found[parts[2]] = handle.read().decode("utf-8", "replace")
    return found


def hf_keymap(all_sources: list[dict[str, str]], snapshot: dict[str, Any]) -> KeyMap:
    """Names in transformers/accelerate that stand for ds_config paths, learnt from all the given releases.

    An attribute assigned from an expression spelling a path (``self._stage = self.get_value(
    "zero_optimization.stage")``) stands for it, and so does a function using such a name or calling such a
    function (``is_deepspeed_zero3_enabled`` → ``is_zero3`` → ``_stage``), across both libraries (transformers'
    ``HfDeepSpeedConfig`` lives in accelerate).
    """
    keys = KeyMap.from_snapshot(snapshot)
    keys.plain_words = False  # "checkpoint" in a transformers message is the model's, not the section
    trees = []
    for sources in all_sources:
        for name, text in sorted(sources.items()):
            try:
                trees.append(ast.parse(text, name))
            except SyntaxError:
                continue
    functions: dict[str, ast.AST] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
                spelt = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and c.value in keys.paths]
                if spelt:
                    keys.attributes.setdefault(node.targets[0].attr, spelt[:1])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(node.body) <= 12:
                functions.setdefault(node.name, node)
    for _ in range(4):
        for name, node in functions.items():
            paths: list[str] = []
            for sub in ast.walk(node):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in keys.paths:
                    paths.append(sub.value)
                elif isinstance(sub, ast.Call) and _callee(sub) in keys.attributes and _callee(sub) != name:
                    paths.extend(keys.attributes[_callee(sub)])
                elif isinstance(sub, ast.Attribute) and sub.attr in keys.attributes and sub.attr != name:
                    paths.extend(keys.attributes[sub.attr])
            if paths and name not in keys.attributes:
                keys.attributes[name] = sorted(set(paths), key=lambda p: (p.count("."), p))[:3]
    return keys


def hf_messages(sources: dict[str, str], keys: KeyMap) -> list[dict[str, Any]]:
    """Catalogue entries of a transformers/accelerate release about DeepSpeed (keys through :func:`hf_keymap`)."""
    scanner = _Scanner(keys, deepspeed=False)
    for name, text in sorted(sources.items()):
        try:
            scanner.module(name, ast.parse(text, name))
        except SyntaxError:
            continue
    kept = {}
    for entry in scanner.entries:
        # the try block a message is said after is no sign of its topic (``is_deepspeed_zero3_enabled_raised``)
        condition = _MARKER.sub("", entry["condition"] or "")
        about = " ".join([entry["pattern"], condition, entry["function"] or ""])
        if entry["keys"] or _ABOUT_DEEPSPEED.search(about):
            kept.setdefault((entry["file"], entry["line"], entry["id"]), entry)
    return sorted(kept.values(), key=lambda e: (e["file"], e["line"], e["id"]))


def hf_catalogue(archives: list[Path], generated: Path) -> dict[str, Any]:
    """``generated/hf/messages.json``: every given transformers/accelerate sdist's entries, keyed ``dist-version``."""
    from dsfields.model.store import available_versions, version_key

    newest = max(available_versions(generated), key=version_key)
    snapshot = json.loads((generated / newest / "fields.json").read_text())
    named = {}
    for archive in archives:
        dist, version = archive.name[: -len(".tar.gz")].rsplit("-", 1)
        named[f"{dist}-{version}"] = hf_sources(archive, dist)
    keys = hf_keymap(list(named.values()), snapshot)
    releases = {release: hf_messages(sources, keys) for release, sources in named.items()}
    return {"format": FORMAT, "generated_by": "python -m dsfields.extract.message_catalogue --hf SDIST...",
            "keys_from": newest, "releases": releases}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.message_catalogue",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--versions", nargs="*", help="releases (default: every release with a snapshot)")
    parser.add_argument("--generated", type=Path, default=None)
    parser.add_argument("--hf", nargs="+", type=Path, metavar="SDIST",
                        help="write generated/hf/messages.json from these transformers/accelerate sdists instead")
    args = parser.parse_args(argv)
    generated = args.generated or repo_generated_dir()
    if args.hf:
        document = hf_catalogue(sorted(args.hf), generated)
        write_atomic(generated / "hf" / MESSAGES_FILE, dumps(document))
        for release, entries in document["releases"].items():
            print(f"{release}: {len(entries)} messages", file=sys.stderr)
        return 0
    from dsfields.model.store import available_versions

    versions = args.versions or available_versions(generated)
    for version in versions:
        started = time.monotonic()
        document = release_messages(version, generated)
        write_atomic(generated / version / MESSAGES_FILE, dumps(document))
        keyed = sum(1 for e in document["messages"] if e["keys"])
        print(f"{version}: {len(document['messages'])} messages ({keyed} with keys) in "
              f"{time.monotonic() - started:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
