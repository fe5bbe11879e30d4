"""The static reader scan: follow ds_config through DeepSpeed's functions and record every read.

Why: ``DeepSpeedConfig`` under probes only shows the reads a probe triggers. Many keys are read
only when a feature is on (``fp16.loss_scale_window``), per ``mode`` (``sparse_attention``), after
a section was copied whole into the engine (``progressive_layer_drop.theta``), or never at all
because the user's dict is merged into a literal default dict (``pipeline``). Reading the source
finds them in every release without running it.

How: each function is read once per calling context, statement by statement, keeping what each
local name holds (:mod:`.values`). Entries are the functions whose parameters are named like the
ds_config dict (``param_dict``, ``ds_config``...) and ``DeepSpeedConfig.__init__``; calls are
followed into the package with the arguments' values, so ``ElasticityConfig(param_dict)`` called
with ``ds_config["elasticity"]`` reads under ``elasticity``. A function reached that way is no
longer taken as a root entry. Dicts stored on ``self`` are followed to whoever reads the attribute
(``self._config.pld_params``), in rounds until nothing new is stored.

Where: this module is the driver (the entries, the rounds, the :class:`Scanner` caching each function's
result per context). A function body is read by a :class:`~.calls.FunctionReader`, built in layers, one
module each: :mod:`.frame` (its state, its conditions, the records it makes), :mod:`.statements`,
:mod:`.expressions` and :mod:`.calls`. :mod:`.classes` resolves the package's classes, :mod:`.names` says
how DeepSpeed names the ds_config, :mod:`.findings` holds what is found and what it becomes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from .abstract_values import Instance, Shape, Tracked, dotted, join, paths_of
from .calls import FunctionReader
from .classes import ClassIndex, FuncNode, is_static
from .modules import Module, Package
from .names import ENTRY_SEEDS, GENERIC_ATTRS, READERS, ROOT_CLASSES, SEED_PARAMS
from .read_records import StaticRead
from .results import Result, known_sections, sweep_unresolved

_DEBUG = bool(__import__("os").environ.get("DSFIELDS_STATIC_DEBUG"))
MAX_DEPTH = 14
MAX_ROUNDS = 5


class Scanner:
    """One round of the scan: function results cached per (function, arguments, conditions)."""

    def __init__(self, pkg: Package, class_attrs: dict[tuple[str, str, str], Any], cross_attrs: dict[str, Any]) -> None:
        self.pkg = pkg
        self.classes = ClassIndex(pkg)
        self.class_attrs = class_attrs
        self.cross_attrs = cross_attrs
        self.memo: dict[Any, Result] = {}
        self.local_defs: dict[tuple[str, str], FuncNode] = {}
        self.raises: dict[int, bool] = {}
        self.rendered: dict[int, str] = {}
        self.analyzed = 0

    def analyze(
        self,
        module: Module,
        node: FuncNode,
        qualname: str,
        cls: str | None,
        bindings: dict[str, Any],
        stack: tuple[tuple[str, str], ...],
    ) -> Result:
        ident = (module.name, qualname)
        key = (ident, node.lineno, tuple(sorted(bindings.items(), key=lambda kv: kv[0])))
        if key in self.memo:
            return self.memo[key]
        if ident in stack or len(stack) > MAX_DEPTH:
            return Result()
        self.memo[key] = Result()  # recursion through another context: empty
        self.analyzed += 1
        frame = FunctionReader(self, module, qualname, cls, dict(bindings), [], stack + (ident,), node)
        frame.block(node.body)
        result = frame.result
        rets = [r for r in frame.returns if r is not None]
        ret = None
        for r in rets:
            ret = join(ret, r)
        result.ret = ret
        self.memo[key] = result
        return result

    def function_raises(self, node: ast.AST) -> bool:
        if id(node) not in self.raises:
            self.raises[id(node)] = any(isinstance(n, ast.Raise | ast.Assert) for n in ast.walk(node))
        return self.raises[id(node)]


# ---------------------------------------------------------------------- entries
@dataclass(frozen=True)
class Entry:
    module: str
    qualname: str
    cls: str | None
    node: FuncNode
    seeds: tuple[str, ...]


def entries_of(mod: Module) -> list[Entry]:
    """Every function and method of a module, with the parameters that hold the whole ds_config."""
    out: list[Entry] = []

    def visit(body: list[ast.stmt], prefix: str, cls: str | None) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                if stmt.name in READERS and cls is None:
                    continue  # the helpers themselves: their calls are the reads
                params = [a.arg for a in stmt.args.posonlyargs + stmt.args.args + stmt.args.kwonlyargs]
                seeds = [p for p in params if p in SEED_PARAMS]
                if cls in ROOT_CLASSES and stmt.name == "__init__" and len(params) > 1:
                    seeds.append(params[1])
                seeds.extend(p for p in ENTRY_SEEDS.get((mod.name, prefix + stmt.name), ()) if p in params)
                out.append(Entry(mod.name, prefix + stmt.name, cls, stmt, tuple(dict.fromkeys(seeds))))
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, f"{prefix}{stmt.name}.", f"{prefix}{stmt.name}")

    visit(mod.tree.body, "", None)
    return out


_SEED_RE = re.compile(r"\b(" + "|".join(sorted(SEED_PARAMS | READERS | ROOT_CLASSES)) + r")\b")


def _dead(pkg: Package, entry: Entry, memo: dict[str, bool]) -> bool:
    """A ``get_*(param_dict)`` helper of ``runtime/config.py`` the package never mentions but where it is
    defined: its ``param_dict`` is whatever a caller would pass, not the root (0.14.4's
    ``get_sparse_attention_type`` read a top-level "attention"). Elsewhere an uncalled function may be
    public API (``_init_group_wise_weight_quantization(model, ds_config)``) and keeps its reads."""
    if entry.cls is not None or "." in entry.qualname or not entry.module.endswith("runtime.config"):
        return False
    name = entry.qualname
    if name not in memo:
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        memo[name] = sum(len(pattern.findall(pkg.text(m))) for m in pkg.files if name in pkg.text(m)) <= 1
    return memo[name]


def scan(pkg: Package) -> tuple[Result, int]:
    """Scan ``pkg`` in rounds until the dicts stored on objects stop changing; returns the kept result.

    Round 1 reads every function of the modules that mention a ds_config parameter name or a
    reader. Dicts stored on ``self`` (sections, not scalars) become known attributes; the next round
    also reads the modules that mention those attributes, and re-reads (memo dropped) only modules
    whose text names an attribute that changed. Known attributes only grow, so rounds converge.
    """
    class_attrs: dict[tuple[str, str, str], Any] = {}
    cross_attrs: dict[str, Any] = {}
    ambiguous: set[str] = set(GENERIC_ATTRS)
    modules = list(pkg.grep(_SEED_RE, tuple(sorted(SEED_PARAMS | READERS | ROOT_CLASSES))))
    scanner = Scanner(pkg, class_attrs, cross_attrs)
    results: dict[tuple[str, str], tuple[Entry, Result]] = {}
    stale: set[str] = set(modules)
    kept = Result()
    dead: dict[str, bool] = {}
    dead_reads: set[StaticRead] = set()
    for _round in range(MAX_ROUNDS):
        for name in modules:
            if name not in stale:
                continue
            mod = pkg.module(name)
            if mod is None:
                continue
            for entry in entries_of(mod):
                bindings: dict[str, Any] = {seed: Tracked.at(()) for seed in entry.seeds}
                params = entry.node.args.posonlyargs + entry.node.args.args
                if entry.cls and params and not is_static(entry.node):
                    bindings[params[0].arg] = Instance(entry.module, entry.cls)
                result = scanner.analyze(mod, entry.node, entry.qualname, entry.cls, bindings, ())
                results[(entry.module, entry.qualname)] = (entry, result)
        reached: set[tuple[str, str]] = set()
        for _entry, result in results.values():
            reached |= result.reached
        kept = Result()
        for ident, (entry, result) in results.items():
            root = entry.cls in ROOT_CLASSES and entry.qualname.endswith("__init__")
            if entry.seeds and ident in reached and not root:
                continue  # a callee reached with a traced argument: its reads are placed by the caller
            if entry.seeds and not root and _dead(pkg, entry, dead):
                # never called (0.14.4's get_sparse_attention_type): its param_dict is no ds_config. Its
                # findings still feed the rounds (sections it knows); only its own reads are dropped below.
                dead_reads |= {r for r in result.reads if r.function == entry.qualname}
            kept.merge(result)
        sections = known_sections(kept)
        changed: set[str] = set()
        owners: dict[str, set[str]] = {}
        for store in sorted(kept.stores, key=repr):
            if not isinstance(store.value, Shape) and not any(
                dotted(p) in sections or not p for p in paths_of(store.value)
            ):
                continue  # a scalar: conditions on it stay text
            key = (store.module, store.cls, store.attr)
            value = join(class_attrs.get(key), store.value)
            if value != class_attrs.get(key):
                class_attrs[key] = value
                changed.add(store.attr)
            owners.setdefault(store.attr, set()).add(f"{store.module}.{store.cls}")
        for attr, who in owners.items():
            if len(who) > 1 and attr not in ambiguous:
                ambiguous.add(attr)
                cross_attrs.pop(attr, None)
                changed.add(attr)
            elif attr not in ambiguous:
                (owner,) = who
                value = next(v for (m, c, a), v in class_attrs.items() if a == attr and f"{m}.{c}" == owner)
                if cross_attrs.get(attr) != value:
                    cross_attrs[attr] = value
                    changed.add(attr)
        if _DEBUG:
            print(
                f"round {_round}: {len(modules)} modules, {len(stale)} read, changed {sorted(changed)}",
                f"parsed {pkg.parsed}",
                f"analyzed {scanner.analyzed}",
            )
        if not changed:
            break
        # An attribute followed only within its own class (ambiguous, not DeepSpeedConfig's) is read through
        # ``self`` or an instance of that class: only modules naming one of its owners can see it change.
        local = {a for a in changed if a in ambiguous and not any(
            c in ROOT_CLASSES for (_m, c, attr) in class_attrs if attr == a)}
        stale = set()
        if changed - local:
            words = sorted(changed - local)
            stale = set(pkg.grep(re.compile(r"\.(" + "|".join(map(re.escape, words)) + r")\b"),
                                 tuple("." + w for w in words)))
        for attr in sorted(local):
            names = sorted({c.rpartition(".")[2] for (_m, c, a) in class_attrs if a == attr})
            named = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
            stale |= {m for m in pkg.grep(re.compile(rf"\.{re.escape(attr)}\b"), ("." + attr,))
                      if named.search(pkg.text(m))}
        modules = list(dict.fromkeys(modules + sorted(stale)))
        scanner.memo = {k: v for k, v in scanner.memo.items() if k[0][0] not in stale}
    kept.reads -= dead_reads
    sweep_unresolved(kept)
    return kept, scanner.analyzed
