"""``dsfields resolve``: the config DeepSpeed will actually run — every key it reads, its value, and why.

DeepSpeed prints its resolved config only after launch, on the GPUs, under Python attribute names.
This answers from the snapshot alone: for every key a release reads for one config, the value it
will use and where that value comes from (the file, a default, a default another key decides, the
batch arithmetic, an ``"auto"`` DeepSpeed drops or the HF Trainer fills, a deprecated key carried to
its replacement, a section passed on whole, or nothing: an ignored key). Values in pydantic sections
are shown as pydantic coerces them (:func:`dsfields.check.values.accepts`).

Verified against ``DeepSpeedConfig`` 0.19.8 on the real-config corpus by ``tests/test_resolve.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsfields.check.values import accepts
from dsfields.configfile import ConfigFile, ConfigFileError
from dsfields.hf.trainer import FILL_ARGUMENTS, fill_list
from dsfields.model import batch
from dsfields.model.batch import BATCH_KEYS
from dsfields.model.dotted import at_path, join
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.records import Field, Snapshot
from dsfields.model.store import load_requested
from dsfields.model.termsafe import shown
from dsfields.model.wording import json_text

WRITTEN = "written"
DEFAULT = "default"
EFFECTIVE_DEFAULT = "effective default"
DERIVED = "derived"
AUTO_DEFAULT = "auto → default"
AUTO_KEPT = "auto → kept"
AUTO_HF = "auto → HF Trainer"
DEPRECATED = "deprecated → replacement"
PASSED_ON = "passed on whole"
IGNORED = "ignored"
REMOVED = "removed"
NOT_GIVEN = "not given"
SET_HF = "set by the HF Trainer"
BUILT = "built"
SOURCES = (WRITTEN, DEFAULT, EFFECTIVE_DEFAULT, DERIVED, AUTO_DEFAULT, AUTO_KEPT, AUTO_HF, DEPRECATED, PASSED_ON,
           IGNORED, REMOVED, NOT_GIVEN, SET_HF, BUILT)
"""Every ``source`` a resolved key can have (``--format json`` prints these strings)."""

_MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()


def _hf_filled() -> set[str]:
    """The paths whose ``"auto"`` the HF Trainer fills (:func:`dsfields.hf.trainer.fill_list`; none without one)."""
    hf = fill_list()
    return set(hf.paths) if hf is not None else set()

_STAGE3 = re.compile(r"ZeRO-?3|stage ?3|stage3", re.IGNORECASE)
_STAGE12 = re.compile(r"stage 1(/| and )2|stage 1 or 2", re.IGNORECASE)


@dataclass
class Resolved:
    """One key as DeepSpeed will use it."""

    path: str
    value: Any
    source: str
    """One of :data:`SOURCES`."""
    written: bool = False
    """The user's file has this key (whatever happens to it)."""
    note: str = ""
    """Why: the key that decides an effective default, the HF argument, the replacement, the message."""
    section: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "source": self.source, "written": self.written}
        if self.note:
            out["note"] = self.note
        return out


class Resolver:
    """Resolves configs against one snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.fields = snapshot.fields
        self.sections = snapshot.sections

    def resolve(self, data: dict[str, Any], *, hf: bool = False, world_size: int = 1,
                stage_only: bool = False) -> list[Resolved]:
        run = _Run(self, data, hf, world_size)
        run.section("", data)
        if self.snapshot.document == "training":  # init_inference has no batch sizes
            run.batch()
        run.forced()
        out = run.out
        if stage_only:
            out = [r for r in out if self.relevant(r.path, run.stage)]
        return out

    def relevant(self, path: str, stage: int | None) -> bool:
        """Whether ``path`` matters at ZeRO ``stage`` (non-ZeRO keys always do)."""
        if not path.startswith("zero_optimization.") or stage is None:
            return True
        if path == "zero_optimization.stage":
            return True
        if stage == 0:
            return False
        top = ".".join(path.split(".")[:2])
        record = self.fields.get(top)
        key = top.rpartition(".")[2]
        words = (record.description or "") if record else ""
        stage3 = key.startswith("stage3_") or key in ("offload_param", "cpu_offload_param") or (
            bool(_STAGE3.search(words)) and not _STAGE12.search(words))
        stage12 = bool(_STAGE12.search(words)) and not _STAGE3.search(words)
        return not stage3 if stage in (1, 2) else not stage12


class _Run:
    def __init__(self, resolver: Resolver, data: dict[str, Any], hf: bool, world_size: int) -> None:
        self.r = resolver
        self.snapshot = resolver.snapshot
        self.data = data
        self.hf = hf
        self.hf_paths = _hf_filled() if hf else set()
        self.world_size = world_size
        self.out: list[Resolved] = []
        self.stage = self.zero_stage()
        self.carried: dict[str, tuple[Any, str]] = {}
        """Replacement path → (value, deprecated key) for deprecated keys DeepSpeed carries over."""

    def zero_stage(self) -> int | None:
        zero = self.data.get("zero_optimization", _MISSING)
        if zero is _MISSING or not isinstance(zero, dict):
            return 0 if zero is _MISSING else (1 if zero else 0)
        stage = zero.get("stage", _MISSING)
        if stage is _MISSING or stage == "auto":
            return int(self.r.fields["zero_optimization.stage"].default or 0) \
                if "zero_optimization.stage" in self.r.fields else 0
        ok, coerced, _ = accepts(["integer"], stage)
        if not ok or isinstance(coerced, bool):
            return None
        # An int of any size as it is (float() of a 400-digit int overflows); a float only if integral.
        return coerced if isinstance(coerced, int) else (int(coerced) if coerced.is_integer() else None)

    def add(self, path: str, value: Any, source: str, written: bool, note: str = "") -> None:
        self.out.append(Resolved(path, value, source, written, note, path.rpartition(".")[0]))

    def forced(self) -> None:
        """Keys whose parsed value another key sets (the snapshot's ``forced_by``, measured)."""
        by_path = {item.path: item for item in self.out}
        for item in self.out:
            field = self.r.fields.get(item.path)
            for rule in field.forced_by if field is not None else []:
                other = by_path.get(rule["path"])
                if other is None or other.source == AUTO_HF or not _same(other.value, rule.get("when")):
                    continue
                if not _same(item.value, rule.get("value")):
                    item.value, item.source = rule.get("value"), DERIVED
                item.note = f"{rule['path']} is {json_text(rule.get('when'))}: DeepSpeed sets it"
                break

    # ------------------------------------------------------------ sections

    def section(self, section: str, obj: dict[str, Any]) -> None:
        snapshot = self.snapshot
        record = self.r.sections.get(section)
        own = snapshot.by_section.get(section, {})
        names = {**snapshot.by_python_name.get(section, {}), **snapshot.by_alias.get(section, {})}
        catalog = snapshot.catalogs.get(section)
        shadowed = section == "bfloat16" and self.data.get("bf16") not in (_MISSING, None)
        self.deprecations(section, obj)
        handled: set[str] = set()
        for key, value in obj.items():
            path = join(section, key)
            if catalog and key == catalog.params_key:
                self.params(path, value)
                handled.add(key)
                continue
            if path in snapshot.removed:
                self.add(path, value, REMOVED, True, snapshot.removed[path].message)
                continue
            field = own.get(key) or names.get(key)
            if field is None:
                why = "DeepSpeed raises on it (unknown key)" if record and record.unknown_keys == "error" else (
                    "kept, never read" if record and record.unknown_keys == "kept" else "not a key DeepSpeed reads")
                self.add(path, value, IGNORED, True, why)
                continue
            handled.add(field.key)
            if shadowed:
                self.add(field.path, value, IGNORED, True, '"bf16" is present: DeepSpeed reads only that')
                continue
            self.key(field, value, written=True)
        if shadowed:
            return
        for key, field in own.items():
            if key in handled or (catalog and key == catalog.params_key):
                continue
            if section == "" and (key == "bfloat16" or key == "bf16" and "bfloat16" in obj):
                continue  # DeepSpeed reads bf16, else the legacy bfloat16: list the one it uses
            self.key(field, _MISSING, written=False)

    def params(self, path: str, value: Any) -> None:
        """optimizer/scheduler ``params``: handed to the class as keyword arguments, as written."""
        if not isinstance(value, dict):
            self.add(path, value, WRITTEN if value != "auto" else AUTO_KEPT, True)
            return
        for key, item in value.items():
            param = join(path, key)
            if item == "auto" and param in self.hf_paths:
                self.add(param, None, AUTO_HF, True, FILL_ARGUMENTS.get(param, "filled by the HF Trainer"))
            else:
                self.add(param, item, WRITTEN, True, "passed to the class as a keyword argument")

    def deprecations(self, section: str, obj: dict[str, Any]) -> None:
        """Deprecated keys DeepSpeed carries to their replacement (``_process_deprecated_field``)."""
        snapshot = self.snapshot
        for key, value in obj.items():
            field = snapshot.field_by_name(section, key)
            info = field.deprecated if field else None
            if field is None or info is None or not info.new_param or not info.set_new_param:
                continue
            target = snapshot.field_by_name(section, info.new_param)
            if target is None or value == "auto":
                continue
            self.carried[target.path] = (convert(field.path, value), key)

    def key(self, field: Field, value: Any, written: bool) -> None:
        path = field.path
        info = field.deprecated
        if written and info is not None:
            target = self.snapshot.field_by_name(field.section, info.new_param or "") if info.new_param else None
            if target is not None and info.set_new_param:
                self.add(path, value, DEPRECATED, True, f"carried to {target.path}")
            else:
                note = f"deprecated; DeepSpeed ignores the value (use {info.new_param})" if info.new_param else \
                    "deprecated; DeepSpeed ignores the value"
                self.add(path, value, IGNORED, True, note)
            return
        if not written and info is not None:
            return  # a deprecated key nobody wrote: DeepSpeed reads its replacement
        section_record = self.r.sections.get(path) if field.is_section else None
        if section_record is not None:
            self.sub_section(field, value, section_record.passthrough)
            return
        if path in BATCH_KEYS:
            return  # the batch trio is resolved together in batch()
        if not written and path in self.carried:
            carried, old = self.carried[path]
            self.add(path, carried, DEPRECATED, False, f"from {join(field.section, old)}")
            return
        if written and value == "auto":
            self.auto(field)
            return
        if not written:
            self.absent(field)
            return
        self.add(path, self.coerced(field, value), WRITTEN, True, self.type_note(field, value))
        if self.out[-1].note:
            self.out[-1].value = value.lower()

    def type_note(self, field: Field, value: Any) -> str:
        """DeepSpeedConfig lower-cases the names of its own optimizers (measured: ``case_insensitive``)."""
        catalog = self.snapshot.catalogs.get(field.section)
        if catalog is None or field.key != catalog.type_key or not isinstance(value, str):
            return ""
        entry = catalog.names.get(value.lower())
        if entry is not None and entry.case_insensitive and value != value.lower():
            return "DeepSpeed lower-cases the name"
        return ""

    def sub_section(self, field: Field, value: Any, passthrough: bool) -> None:
        path = field.path
        written = value is not _MISSING
        if passthrough:
            if written:
                self.add(path, value, PASSED_ON, True, "DeepSpeed hands the whole object on")
            elif field.when_absent == "value":
                self.add(path, field.absent_value, DEFAULT, False, "DeepSpeed's built-in object")
            else:
                self.add(path, field.default, DEFAULT, False)
            return
        if not written and path in self.carried:
            carried, old = self.carried[path]
            note = f"from {join(field.section, old)}"
            if isinstance(carried, dict):
                self.section(path, {})
                self.overlay(path, carried, note)
            else:
                self.add(path, carried, DEPRECATED, False, note)
            return
        if written and value == "auto":
            self.auto(field)
            return
        if isinstance(value, dict):
            self.section(path, value)
            return
        if written:
            self.add(path, value, WRITTEN, True)
            return
        absent = field.when_absent
        if absent == "none" or absent is None and field.is_pydantic and field.default is None:
            self.add(path, None, DEFAULT, False, "absent: DeepSpeed keeps None for the section" if absent else "")
            return
        self.section(path, {})

    def overlay(self, section: str, values: dict[str, Any], note: str) -> None:
        """Mark the keys a converted deprecated value sets inside ``section``."""
        for item in self.out:
            if item.section == section and item.path.rpartition(".")[2] in values:
                item.value = values[item.path.rpartition(".")[2]]
                item.source, item.note = DEPRECATED, note

    # ------------------------------------------------------------ values

    def coerced(self, field: Field, value: Any) -> Any:
        if field.is_pydantic:
            ok, coerced, _ = accepts(field.json_types, value)
            if ok:
                if isinstance(coerced, float) and "integer" in field.json_types and "number" not in \
                        field.json_types and coerced.is_integer():
                    return int(coerced)
                return coerced
        return value

    def auto(self, field: Field) -> None:
        path = field.path
        if path in self.hf_paths:
            self.add(path, None, AUTO_HF, True, FILL_ARGUMENTS.get(path, "filled by the HF Trainer"))
            return
        auto = field.auto
        if auto is not None and auto.accepted and auto.becomes == "default":
            value, _, note = self.default_of(field)
            self.add(path, value, AUTO_DEFAULT, True, "DeepSpeed drops \"auto\"" + (f"; {note}" if note else ""))
            return
        if auto is not None and not auto.accepted:
            self.add(path, "auto", AUTO_KEPT, True, f"DeepSpeed rejects it: {auto.error}")
            return
        if field.truthiness:  # a dict reader's `if enabled:` takes the non-empty string for true
            self.add(path, "auto", AUTO_KEPT, True, 'DeepSpeed stores the string "auto", which counts as true')
            return
        self.add(path, "auto", AUTO_KEPT, True, 'DeepSpeed stores the string "auto"')

    def default_of(self, field: Field) -> tuple[Any, str, str]:
        effective = field.effective_default
        if effective:
            if "any" in effective:
                return effective["any"], EFFECTIVE_DEFAULT, "decided by a validator"
            stage = self.stage
            if stage is not None and str(stage) in effective:
                return effective[str(stage)], EFFECTIVE_DEFAULT, f"zero_optimization.stage is {stage}"
        if field.when_absent == "value":
            return field.absent_value, DEFAULT, "what the reader returns when the key is absent"
        if field.when_absent == "sentinel":
            return None, NOT_GIVEN, "DeepSpeed keeps a private marker meaning \"not given\""
        if field.default is None and field.default_repr is not None:
            return field.default_repr, DEFAULT, "a Python value, not JSON"
        return field.default, DEFAULT, ""

    def absent(self, field: Field) -> None:
        value, source, note = self.default_of(field)
        self.add(field.path, value, source, False, note)

    # ------------------------------------------------------------ batch

    def batch(self) -> None:
        """DeepSpeedConfig._set_batch_related_parameters at ``world_size``."""
        given: dict[str, Any] = {}
        hf: dict[str, str] = {}
        for key in BATCH_KEYS:
            if key not in self.r.fields:
                continue
            value = self.data.get(key, _MISSING)
            if value == "auto" and key in self.hf_paths:
                hf[key] = FILL_ARGUMENTS.get(key, "filled by the HF Trainer")
            elif value is not _MISSING and value is not None and value != "auto":
                given[key] = value
            elif value == "auto":
                given[key] = "auto"
        if hf:
            for key in BATCH_KEYS:
                if key in hf:
                    self.add(key, None, AUTO_HF, True, hf[key])
                elif key in given:
                    self.add(key, given[key], WRITTEN, True)
                else:
                    self.add(key, None, DERIVED, False, "from the values the HF Trainer fills")
            return
        numbers = {k: v for k, v in given.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if len(numbers) != len(given):
            for key in BATCH_KEYS:
                if key in numbers:
                    self.add(key, numbers[key], WRITTEN, True)
                elif key in given:
                    self.add(key, given[key], AUTO_KEPT if given[key] == "auto" else WRITTEN, True,
                             "not a number: DeepSpeed fails on the batch arithmetic")
                else:
                    self.add(key, None, DERIVED, False, "cannot be derived from a value that is not a number")
            return
        tbs, micro, gas = (numbers.get(k) for k in BATCH_KEYS)
        world = self.world_size
        completed = batch.complete(*(None if v is None else int(v) for v in (tbs, micro, gas)), world)
        derived = {key: value for key, value in zip(BATCH_KEYS, completed or (), strict=False) if key not in numbers}
        for key in BATCH_KEYS:
            if key in numbers:
                self.add(key, numbers[key], WRITTEN, True)
            elif key in derived:
                self.add(key, derived[key], DERIVED, False, f"at world size {world}")
            else:
                self.add(key, None, DEFAULT, False, "DeepSpeed needs train_batch_size or "
                                                    "train_micro_batch_size_per_gpu")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def convert(path: str, value: Any) -> Any:
    """The value DeepSpeed gives a deprecated key's replacement (its ``new_param_fn``)."""
    conversion = CONVERSIONS.get(path)
    return conversion(value) if conversion else value


def _offload_cpu(value: Any) -> Any:
    return {"device": "cpu"} if value else None


CONVERSIONS = {
    "zero_optimization.cpu_offload": _offload_cpu,
    "zero_optimization.cpu_offload_param": _offload_cpu,
}
"""Deprecated JSON path → its ``new_param_fn`` as JSON (read from ``deepspeed/runtime/zero/config.py``: both
build an offload config with ``device=OffloadDeviceEnum.cpu`` when true, else ``None``). Only paths whose
snapshot deprecation says ``converts_value``; ``tests/test_migrate.py`` checks that."""


# ---------------------------------------------------------------- the HF Trainer with the user's arguments


def resolve_trainer(resolver: Resolver, data: dict[str, Any], trainer: Any, accelerate: dict[str, Any], *,
                    stage_only: bool = False) -> tuple[list[Resolved], Any]:
    """``resolve --trainer-args``: the config DeepSpeed receives from the Trainer (every "auto" concrete, the
    sections accelerate adds), resolved as DeepSpeed reads it, each value the Trainer or accelerate set
    saying so; then the classes built (``optimizer.class``, ``scheduler.class``) and the precision that runs.
    Returns the run too: with ``run.error`` set, the Trainer refuses the config and the list is empty."""
    from dsfields.hf.trainer import trainer_run

    run = trainer_run(data, trainer, accelerate, deepspeed=resolver.snapshot.version)
    for line in run.notes:
        if "could not be" in line:  # a rule of the user's release not read statically: said, never dropped
            print(f"dsfields: note: {line}", file=sys.stderr)
    if run.error is not None or run.config is None:
        return [], run
    final = {k: v for k, v in run.config.items() if k != "steps_per_print"}  # inf: DeepSpeed never logs
    out = resolver.resolve(final, world_size=trainer.world_size, stage_only=stage_only)
    for item in out:
        origin = run.origins.get(item.path)
        item.written = _has(data, item.path)
        if origin is None:
            continue
        item.source = AUTO_HF if _get(data, item.path) == "auto" else SET_HF
        item.note = origin
        if item.path in run.unknown:
            item.value = None
    out = [item for item in out if item.path != "steps_per_print"]
    out.append(Resolved("steps_per_print", None, SET_HF, _has(data, "steps_per_print"),
                        "set by accelerate to float(\"inf\") (not JSON): DeepSpeed never logs"))
    where = {k: f" ({v})" for k, v in run.built_from.items()}  # the release's source that decided the class
    out.append(Resolved("optimizer.class", run.optimizer_class, BUILT, False, {
        "config": "DeepSpeed builds it from the optimizer section",
        "code": f"the Trainer's --optim {trainer.optim}{where.get('optimizer', '')}",
        "ds_cpu_adam": f"the Trainer's --optim {trainer.optim}{where.get('optimizer', '')}, swapped by accelerate "
                       f"for ZeRO-Offload{where.get('swap', '')}"}[run.optimizer], "optimizer"))
    out.append(Resolved("scheduler.class", run.scheduler_class, BUILT, False, {
        "config": "DeepSpeed builds it from the scheduler section",
        "callable": f"the Trainer's --lr_scheduler_type {trainer.lr_scheduler_type}{where.get('scheduler', '')}, "
                    "built inside deepspeed.initialize",
        "none": f"the Trainer's --lr_scheduler_type {trainer.lr_scheduler_type}{where.get('scheduler', '')}, built "
                "after deepspeed.initialize"}[run.scheduler], "scheduler"))
    lr = _get(run.config, "optimizer.params.lr") if run.optimizer == "config" else trainer.learning_rate
    out.append(Resolved("optimizer.lr", None if lr is _MISSING else lr, BUILT, False,
                        "from the optimizer section" if run.optimizer == "config" else trainer.origin("learning_rate"),
                        "optimizer"))
    out.append(Resolved("precision", run.precision, BUILT, False, "what trains: fp16.enabled / bf16.enabled as "
                        "DeepSpeed receives them"))
    return out, run


def _get(data: Any, path: str) -> Any:
    return at_path(data, path, _MISSING)


def _has(data: Any, path: str) -> bool:
    return _get(data, path) is not _MISSING


# ---------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE",
                        help="a ds_config file (JSON or hjson), or an accelerate YAML config")
    parser.add_argument("--version", default=None,
                        help="DeepSpeed version (default: the installed one if snapshotted, else the newest)")
    parser.add_argument("--hf", action="store_true",
                        help='the file is for the HF Trainer: name the argument that fills each "auto"')
    parser.add_argument("--world-size", type=int, default=1, metavar="N",
                        help="data-parallel ranks, for the batch-size arithmetic (default 1)")
    parser.add_argument("--stage-only", action="store_true",
                        help="only the ZeRO keys that matter at the config's ZeRO stage")
    parser.add_argument("--only", action="append", default=[], metavar="PATH",
                        help="only this key or section (repeatable), e.g. --only zero_optimization")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    from dsfields.hf.arguments import add_cli_arguments

    add_cli_arguments(parser)  # --trainer-args & co. (issue 27)
    parser.add_argument("--lang", default=None, metavar="LANG",
                        help="en or zh for text (default: zh when LANG is a zh locale, else en; json stays English)")
    parser.add_argument("--inference", action="store_true",
                        help="the file is an init_inference config (DeepSpeedInferenceConfig), not ds_config")


def run(args: argparse.Namespace) -> int:
    from dsfields.model.messages import localize
    from dsfields.model.prose import language

    lang = language(getattr(args, "lang", None))
    if args.world_size < 1:
        raise UsageError("--world-size must be at least 1")
    only = [p.strip() for p in args.only]
    if any(not p.strip(".,* \t") for p in only):
        raise UsageError("--only needs a key or section path, e.g. --only zero_optimization")
    from dsfields.hf.arguments import from_cli, wants_trainer

    trainer = None
    if wants_trainer(args):
        args.hf = True
        trainer, accelerate = from_cli(args)
        from dsfields.hf.arguments import mirror_note

        if mirror_note(trainer):
            print(f"dsfields: note: {mirror_note(trainer)}", file=sys.stderr)
        for line in accelerate.get("unknown", []):
            print(f"dsfields: warning: --accelerate-config: {line}", file=sys.stderr)
    if getattr(args, "inference", False):  # issue 29: the init_inference document
        from dsfields.model.store import load_inference

        snapshot = load_inference(args.version)
    else:
        snapshot = load_requested(args.version)
    from dsfields.convert import load_as_ds_config

    try:
        config, args.hf = load_as_ds_config(args.file, args.hf, getattr(args, "lang", None))
    except ConfigFileError as exc:
        raise DsfieldsError(str(exc)) from None
    if trainer is not None:
        if not isinstance(config.data, dict):
            raise DsfieldsError(f"{shown(config.name)}: not a JSON object")
        resolved, trained = resolve_trainer(Resolver(snapshot), config.data, trainer, accelerate,
                                            stage_only=args.stage_only)
        if trained.error is not None:
            error = trained.error
            print(f"{shown(config.name)}: the HF Trainer (transformers {trainer.transformers_version}) refuses it: "
                  f"{error.raised_by} raises {error.exc_type}: {shown(str(error))}", file=sys.stderr)
            if args.format == "json":
                print(json.dumps({"error": trained.as_dict()["error"]}, indent=1, ensure_ascii=False))
            return 1
    else:
        resolved = Resolver(snapshot).resolve(config.data, hf=args.hf, world_size=args.world_size,
                                              stage_only=args.stage_only)
    if only:
        unknown = [p for p in only if p not in snapshot.fields and p not in snapshot.sections
                   and not any(r.path == p or r.path.startswith(p + ".") for r in resolved)]
        if unknown:
            raise UsageError(f"--only {shown(unknown[0])}: no key or section of DeepSpeed {snapshot.version} "
                             "(lookup finds paths)")
        resolved = [r for r in resolved if any(r.path == p or r.path.startswith(p + ".") for p in only)]
    if args.format == "json":
        print(json.dumps({r.path: r.as_dict() for r in resolved}, indent=1, ensure_ascii=False))
    else:
        print(localize(render_text(resolved, config, snapshot.version), lang, "resolve."))
    return 0


def render_text(resolved: list[Resolved], config: ConfigFile, version: str) -> str:
    """Grouped by top-level section; ``*`` marks the keys the file has."""
    groups: dict[str, list[Resolved]] = {}
    for item in resolved:
        top = item.path.split(".")[0] if "." in item.path else ""
        groups.setdefault(top, []).append(item)
    lines = [f"{shown(config.name)}: as DeepSpeed {version} reads it (* = written in the file)"]
    order = sorted(groups, key=lambda g: (g != "", g))
    for group in order:
        lines.append("")
        lines.append(f"[{group or 'top level'}]")
        items = groups[group]
        width = min(max(len(shown(i.path)) for i in items), 56)
        for item in sorted(items, key=lambda i: i.path):
            mark = "*" if item.written else " "
            value = "(set later)" if item.source == AUTO_HF and item.value is None else shown(json_text(item.value))
            if len(value) > 60:
                value = value[:57] + "..."
            note = f" ({shown(item.note)})" if item.note else ""
            lines.append(f"{mark} {shown(item.path):<{width}}  {value}  [{item.source}]{note}")
    return "\n".join(lines)
