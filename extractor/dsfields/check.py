"""``dsfields check``: find what DeepSpeed would reject, ignore or misread in a ds_config, before a job runs.

DeepSpeed reads most of its config with ``dict.get``: a typo is silently ignored, a removed key
fails only at start-up, a misspelt optimizer param fails minutes later at ``deepspeed.initialize``.
This checks a file against the snapshot of one DeepSpeed release — unknown, removed and deprecated
keys; types, enums and constraints as pydantic coerces them; ``"auto"`` as DeepSpeed alone or the
HF Trainer treats it; optimizer and scheduler names and params from the engine's own mapping; and
the cross-field rules of :mod:`dsfields.check_rules`. It reads the snapshot only: no DeepSpeed,
torch or pydantic is imported unless ``--runtime`` asks DeepSpeed itself for a second opinion.

``"auto"`` policy. With ``--hf``, keys the HF Trainer fills (the snapshot's ``hf_trainer`` list,
read from transformers' own source) are fine. Every other ``"auto"`` is judged by what DeepSpeed
alone does with it (the snapshot's ``auto`` record, measured at extraction): an *error* where
DeepSpeed raises, or stores the string where a number or boolean goes (it fails later); a
*warning* where DeepSpeed silently drops it and uses the default — the config works, but not as
its author believed, so the warning names that default. That is more truthful than calling every
``"auto"`` an error, and never stricter than DeepSpeed.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from dsfields import check_rules, termsafe
from dsfields.configfile import ConfigFile, ConfigFileError, Path_, dotted, load, parse
from dsfields.snapshot import SnapshotError, available_versions, installed_deepspeed_version, load_requested
from dsfields.snapshot import load as load_snapshot


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Kind(StrEnum):
    """What a finding is about; the value is its human title (griffe's BreakageKind style)."""

    UNKNOWN_KEY = "unknown key"
    REMOVED_KEY = "removed key"
    DEPRECATED_KEY = "deprecated key"
    ALIAS = "Python attribute name used as key"
    DUPLICATE_KEY = "duplicate key"
    SYNTAX = "syntax"
    WRONG_TYPE = "wrong type"
    COERCED = "value coerced"
    CHOICE = "value not allowed"
    CONSTRAINT = "value out of range"
    AUTO = '"auto" value'
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    RULE = "DeepSpeed rule"
    RUNTIME = "DeepSpeedConfig verdict"
    LIMITATION = "not checked"


@dataclass(frozen=True)
class Finding:
    path: str
    severity: Severity
    kind: Kind
    message: str
    fix: str
    line: int | None = None
    related: tuple[str, ...] = ()
    rule: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "severity": self.severity.value,
            "kind": self.kind.name.lower(),
            "title": self.kind.value,
            "message": self.message,
            "fix": self.fix,
            "related": list(self.related),
            "rule": self.rule,
        }


@dataclass
class Options:
    hf: bool = False
    world_size: int | None = None
    strict: bool = False
    runtime: bool = False


@dataclass
class FileReport:
    name: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    """Set when the file is unusable (exit 2); ``findings`` is then empty."""


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


# ---------------------------------------------------------------- values as pydantic sees them


_BOOL_STRINGS = {"0": False, "off": False, "f": False, "false": False, "n": False, "no": False,
                 "1": True, "on": True, "t": True, "true": True, "y": True, "yes": True}
_INT_STRING = re.compile(r"^\s*[+-]?\d+(\.0*)?\s*$")


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def coerce(kind: str, value: Any) -> tuple[bool, Any, bool]:
    """pydantic v2 lax mode for one JSON type: ``(accepted, coerced value, already the canonical type)``.

    Mirrors what DeepSpeed 0.19.8's pydantic accepts (verified in tests against DeepSpeedConfig):
    ``5e8`` for an int, ``"true"``/``1`` for a bool, ``"8"`` for an int — never stricter than DeepSpeed.
    """
    if kind == "null":
        return value is None, value, True
    if kind == "boolean":
        if isinstance(value, bool):
            return True, value, True
        if isinstance(value, (int, float)) and value in (0, 1):
            return True, bool(value), False
        if isinstance(value, str) and value.lower() in _BOOL_STRINGS:
            return True, _BOOL_STRINGS[value.lower()], False
        return False, value, False
    if kind == "integer":
        if isinstance(value, bool):
            return True, int(value), False
        if isinstance(value, int):
            return True, value, True
        if isinstance(value, float):
            # JSON has one number type: 5e8 written by hand is a float pydantic accepts for an int.
            return (math.isfinite(value) and value.is_integer()), value, True
        if isinstance(value, str) and _INT_STRING.match(value):
            return True, int(float(value)), False
        return False, value, False
    if kind == "number":
        if isinstance(value, bool):
            return True, float(value), False
        if isinstance(value, (int, float)):
            return True, value, True
        if isinstance(value, str):
            try:
                return True, float(value.strip()), False
            except ValueError:
                return False, value, False
        return False, value, False
    if kind == "string":
        return isinstance(value, str), value, True
    if kind == "array":
        return isinstance(value, list), value, True
    if kind == "object":
        return isinstance(value, dict), value, True
    return True, value, True


def accepts(types: list[str], value: Any) -> tuple[bool, Any, bool]:
    """Exact type matches win (pydantic's smart union), then lax coercions in declared order."""
    if not types:
        return True, value, True
    for kind in types:
        ok, coerced, exact = coerce(kind, value)
        if ok and exact:
            return True, coerced, True
    for kind in types:
        ok, coerced, exact = coerce(kind, value)
        if ok:
            return True, coerced, exact
    return False, value, False


# ---------------------------------------------------------------- the checker


def _join(section: str, key: str) -> str:
    return f"{section}.{key}" if section else key


def _fmt(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value is not None else "null"


class Checker:
    """Indexes one snapshot once; :meth:`check` then judges parsed configs against it."""

    def __init__(self, snapshot: dict[str, Any], hf_trainer: dict[str, Any] | None = None) -> None:
        self.snapshot = snapshot
        self.version: str = snapshot.get("deepspeed_version", "?")
        self.sections: dict[str, dict[str, Any]] = snapshot.get("sections", {})
        self.fields: dict[str, dict[str, Any]] = snapshot.get("fields", {})
        self.removed: dict[str, dict[str, Any]] = snapshot.get("removed", {})
        self.keys: dict[str, dict[str, dict[str, Any]]] = {}
        self.python_names: dict[str, dict[str, dict[str, Any]]] = {}
        self.where: dict[str, list[str]] = {}
        for path, record in self.fields.items():
            self.keys.setdefault(record["section"], {})[record["key"]] = record
            name = record.get("python_name")
            if record.get("reader") == "pydantic" and name and name != record["key"]:
                # DeepSpeedConfigModel sets populate_by_name: the attribute name is accepted too.
                self.python_names.setdefault(record["section"], {})[name] = record
            self.where.setdefault(record["key"], []).append(path)
        self.catalogs: dict[str, dict[str, Any]] = {}
        for name in ("optimizers", "schedulers"):
            catalog = snapshot.get(name)
            if isinstance(catalog, dict) and catalog.get("section"):
                self.catalogs[catalog["section"]] = catalog | {"label": name[:-1]}
        hf = snapshot.get("hf_trainer") or hf_trainer
        self.hf_fills: dict[str, Any] | None = hf.get("paths") if isinstance(hf, dict) else None
        self.hf_version: str | None = hf.get("transformers_version") if isinstance(hf, dict) else None
        self.hf_borrowed = hf is hf_trainer and hf is not None
        self.rules = check_rules.applicable(snapshot)

    # ------------------------------------------------------------ entry points

    def check(self, config: ConfigFile, options: Options) -> list[Finding]:
        run = _Run(self, config, options)
        run.file_level()
        run.section("", config.data, ())
        run.optimizers()
        run.rules()
        if options.runtime:
            run.findings.extend(runtime_findings(self, config, options))
        return sorted(run.findings, key=lambda f: (f.line or 0, _RANK[f.severity], f.path, f.message))

    def hf_filled(self, options: Options) -> frozenset[str]:
        return frozenset(self.hf_fills or ()) if options.hf else frozenset()


SUGGESTION_BUDGET = 100
"""Unknown keys per file that get a spelling suggestion (difflib, ~4 ms each): a hostile file of
a million unknown keys must not cost hours."""


class _Run:
    """One config being checked: accumulates findings with their lines."""

    def __init__(self, checker: Checker, config: ConfigFile, options: Options) -> None:
        self.c = checker
        self.config = config
        self.options = options
        self.findings: list[Finding] = []
        self.hf_filled = checker.hf_filled(options)
        self.suggestions_left = SUGGESTION_BUDGET

    def add(self, path: Path_ | str, severity: Severity, kind: Kind, message: str, fix: str,
            related: tuple[str, ...] = (), rule: str | None = None) -> None:
        key_path: Path_ = tuple(path.split(".")) if isinstance(path, str) else path
        if isinstance(path, str) and not path:
            key_path = ()
        line = self.config.line_of(key_path) if key_path else None
        self.findings.append(Finding(dotted(key_path), severity, kind, message, fix, line or 1, related, rule))

    # ------------------------------------------------------------ file level

    def file_level(self) -> None:
        if self.config.parse_note:
            self.add((), Severity.ERROR, Kind.SYNTAX, self.config.parse_note,
                     "write strict JSON (no comments, quoted keys)")
        for path, line in self.config.duplicates:
            if self.options.hf:
                self.findings.append(Finding(
                    dotted(path), Severity.WARNING, Kind.DUPLICATE_KEY,
                    "key repeated in one object; json.load (HF Trainer) silently keeps the last value",
                    "keep one of them", line))
            else:
                self.findings.append(Finding(
                    dotted(path), Severity.ERROR, Kind.DUPLICATE_KEY,
                    "key repeated in one object; DeepSpeed raises \"Duplicate keys in DeepSpeed config\"",
                    "keep one of them", line))
        if self.options.hf and self.c.hf_borrowed:
            self.add((), Severity.INFO, Kind.LIMITATION,
                     f"the {self.c.version} snapshot predates the HF Trainer fill list; using the one of "
                     f"transformers {self.c.hf_version} from a newer snapshot (the list depends on transformers, "
                     "not on DeepSpeed)", "")
        if self.options.hf and self.c.hf_fills is None:
            self.add((), Severity.INFO, Kind.LIMITATION,
                     f"the {self.c.version} snapshot has no HF Trainer fill list (transformers was not installed "
                     "at extraction): every \"auto\" is judged as DeepSpeed alone would",
                     "re-extract with transformers installed (pip install dsfields[extract])")

    # ------------------------------------------------------------ sections and keys

    def section(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        record = self.c.sections.get(section)
        if record is None or record.get("passthrough"):
            return  # DeepSpeed hands this dict on whole (e.g. pipeline): any key is kept
        catalog = self.c.catalogs.get(section)
        for key, value in obj.items():
            path = _join(section, key)
            here = (*where, key)
            if catalog and key == catalog["params_key"]:
                continue  # judged against the class's signature in optimizers()
            if path in self.c.removed:
                removed = self.c.removed[path]
                self.add(here, Severity.ERROR, Kind.REMOVED_KEY, f"removed: DeepSpeed {self.c.version} raises: "
                         f"{removed['message']}", f'delete "{key}"')
                continue
            field_record = self.c.keys.get(section, {}).get(key)
            if field_record is None:
                alias = self.c.python_names.get(section, {}).get(key)
                if alias is not None:
                    self.add(here, Severity.INFO, Kind.ALIAS,
                             f'"{key}" is the Python name of "{alias["key"]}"; DeepSpeed accepts both spellings',
                             f'write "{alias["key"]}" as the documentation does')
                    field_record = alias
                else:
                    self.unknown(section, key, here, record)
                    continue
            if field_record.get("deprecated"):
                self.deprecated(section, key, obj, field_record, here)
            self.value(field_record, value, here)
            if field_record.get("is_section") and isinstance(value, dict) and field_record["path"] in self.c.sections:
                self.section(field_record["path"], value, here)

    def unknown(self, section: str, key: str, here: Path_, record: dict[str, Any]) -> None:
        where = f'"{section}"' if section else "the top level"
        mode = record.get("unknown_keys", "ignored")
        if mode == "ignored" and key.startswith(("_", "//", "#")):
            # "_comment": "..." is the usual way to annotate JSON; where DeepSpeed ignores it, it is harmless.
            self.add(here, Severity.INFO, Kind.UNKNOWN_KEY, f'"{key}" looks like a comment key; DeepSpeed '
                     f"{self.c.version} ignores it here", "")
            return
        if mode == "error":
            severity = Severity.ERROR
            consequence = f"DeepSpeed {self.c.version} raises (extra inputs are not permitted)"
        elif mode == "kept":
            severity, consequence = Severity.WARNING, "DeepSpeed keeps it but never reads it"
        else:
            severity, consequence = Severity.WARNING, f"silently ignored by DeepSpeed {self.c.version}"
        self.suggestions_left -= 1
        fix = self.suggest(section, key) if self.suggestions_left >= 0 else (
            f"remove it or fix its spelling (no suggestions after {SUGGESTION_BUDGET} unknown keys)")
        self.add(here, severity, Kind.UNKNOWN_KEY, f'"{key}" is not a key of {where}: {consequence}', fix)

    def suggest(self, section: str, key: str) -> str:
        own = list(self.c.keys.get(section, {})) + list(self.c.python_names.get(section, {}))
        if section in self.c.catalogs:
            own.append(self.c.catalogs[section]["params_key"])
        lowered = {k.lower(): k for k in own}
        if key.lower() in lowered:
            return f'did you mean "{lowered[key.lower()]}"? (keys are case-sensitive)'
        if key.strip() in own:
            return f'remove the whitespace: "{key.strip()}"'
        close = difflib.get_close_matches(key, own, n=2, cutoff=0.75)
        elsewhere = sorted(p for p in self.c.where.get(key, []) if self.c.fields[p]["section"] != section)
        if close and not elsewhere:
            return f'did you mean "{close[0]}"?' + (f' or "{close[1]}"?' if len(close) > 1 else "")
        if elsewhere:
            target = self.c.fields[elsewhere[0]]["section"]
            place = f'"{target}"' if target else "the top level"
            also = f' (or did you mean "{close[0]}"?)' if close else ""
            return f'"{key}" belongs in {place}: move it there{also}'
        everywhere = difflib.get_close_matches(key, list(self.c.where), n=1, cutoff=0.85)
        if everywhere:
            target = self.c.fields[self.c.where[everywhere[0]][0]]
            return f'did you mean "{target["path"]}"?'
        return f'remove it (no DeepSpeed {self.c.version} key is named like it)'

    def deprecated(self, section: str, key: str, obj: dict[str, Any], record: dict[str, Any], here: Path_) -> None:
        info = record["deprecated"]
        new = info.get("new_param")
        message = f'"{key}" is deprecated' + (f'; use "{self._spelling(section, new)}" instead' if new else "")
        if info.get("deprecated_msg"):
            message += f" ({info['deprecated_msg']})"
        if new and info.get("set_new_param", True):
            replacement = self._field_by_python_name(section, new)
            spellings = {new} | ({replacement["key"]} if replacement else set())
            given = sorted(s for s in spellings if s in obj)
            if given:
                self.add(here, Severity.ERROR, Kind.DEPRECATED_KEY,
                         f'"{key}" (deprecated) and its replacement "{given[0]}" are both set; DeepSpeed asserts '
                         "they are not given together", f'delete "{key}"', related=(_join(section, given[0]),))
                return
        fix = f'rename to "{self._spelling(section, new)}"' if new and " " not in new else f'delete "{key}"'
        if info.get("converts_value"):
            fix += " (the value's form changes: check its documentation)"
        self.add(here, Severity.WARNING, Kind.DEPRECATED_KEY, message, fix)

    def _field_by_python_name(self, section: str, name: str) -> dict[str, Any] | None:
        for record in self.c.keys.get(section, {}).values():
            if record.get("python_name") == name or record["key"] == name:
                return record
        return None

    def _spelling(self, section: str, name: str) -> str:
        record = self._field_by_python_name(section, name)
        return record["key"] if record else name

    # ------------------------------------------------------------ values

    def value(self, record: dict[str, Any], value: Any, here: Path_) -> None:
        path = record["path"]
        if isinstance(value, str) and value == "auto":
            self.auto(record, here)
            return
        types: list[str] = record.get("json_types") or []
        if record.get("is_section") and path in self.c.sections and not isinstance(value, dict):
            if value is None and ("null" in types or record.get("reader") == "pydantic" and not types):
                return
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE, f"{path} is a section: it must be an object, "
                     f"got {json_type(value)}", f'write "{record["key"]}": {{ ... }}')
            return
        if record.get("reader") == "pydantic":
            ok, coerced, exact = accepts(types, value)
            if not ok:
                self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                         f"expected {' or '.join(types)} ({record.get('type')}), got {json_type(value)} {_fmt(value)}; "
                         "DeepSpeed's validation rejects it", self._type_fix(record))
                return
            if not exact:
                self.add(here, Severity.WARNING, Kind.COERCED,
                         f"{json_type(value)} {_fmt(value)} where {' or '.join(types)} is expected; pydantic coerces "
                         f"it to {_fmt(coerced)}", f"write {_fmt(coerced)}")
        else:
            if not self.dict_value(record, value, here):
                return
            coerced = value
        self.choices(record, value, coerced, here)
        self.constraints(record, coerced, here)

    def dict_value(self, record: dict[str, Any], value: Any, here: Path_) -> bool:
        """Dict-read keys are not validated by DeepSpeed: the raw value is used as is, later."""
        types: list[str] = record.get("json_types") or []
        if not types:
            return True
        if value is None:
            self.add(here, Severity.WARNING, Kind.WRONG_TYPE,
                     f"null is passed on as None (the default {_fmt(record.get('default'))} is not used)",
                     "remove the key to get the default")
            return False
        actual = json_type(value)
        if actual in types or (actual == "integer" and "number" in types):
            return True
        if actual == "number" and "integer" in types:
            if float(value).is_integer():
                return True
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE, f"expected an integer, got {_fmt(value)}",
                     self._type_fix(record))
            return False
        if "boolean" in types and actual == "integer" and value in (0, 1):
            self.add(here, Severity.WARNING, Kind.WRONG_TYPE,
                     f"{value} where a boolean is expected (DeepSpeed reads this key unvalidated; it tests its truth)",
                     f"write {'true' if value else 'false'}")
            return False
        if "boolean" in types and isinstance(value, str):
            # Unvalidated: "false" is a true string here, and some readers combine it with `|` and crash.
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                     f"the string {_fmt(value)} where a boolean is expected: DeepSpeed reads this key unvalidated "
                     "(any non-empty string counts as true)", "write true or false without quotes")
            return False
        self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                 f"expected {' or '.join(types)}, got {actual} {_fmt(value)}; DeepSpeed uses it unvalidated",
                 self._type_fix(record))
        return False

    def _type_fix(self, record: dict[str, Any]) -> str:
        default = record.get("default")
        if record.get("choices"):
            return "use one of: " + ", ".join(_fmt(c) for c in record["choices"])
        wanted = " or ".join(record.get("json_types") or ["value"])
        article = "an" if wanted[0] in "aeiou" else "a"
        if default is not None:
            return f"write {article} {wanted}, e.g. the default {_fmt(default)}"
        return f"write {article} {wanted}"

    def choices(self, record: dict[str, Any], raw: Any, coerced: Any, here: Path_) -> None:
        choices = record.get("choices")
        if not choices:
            return
        items = coerced if isinstance(coerced, list) and "array" in (record.get("json_types") or []) else [coerced]
        for item in items:
            if item is None or any(item == c and type(item) is not bool for c in choices) or (
                    isinstance(item, bool) and int(item) in choices and bool not in map(type, choices)):
                continue
            self.add(here, Severity.ERROR, Kind.CHOICE,
                     f"{_fmt(item)} is not one of {', '.join(_fmt(c) for c in choices)}",
                     f"use one of: {', '.join(_fmt(c) for c in choices)}" + self._close_choice(item, choices))
            return

    @staticmethod
    def _close_choice(item: Any, choices: list[Any]) -> str:
        if not isinstance(item, str):
            return ""
        close = difflib.get_close_matches(item.lower(), [str(c).lower() for c in choices], n=1, cutoff=0.5)
        return f' (did you mean "{close[0]}"?)' if close else ""

    def constraints(self, record: dict[str, Any], value: Any, here: Path_) -> None:
        limits = record.get("constraints") or {}
        if not limits:
            return
        tests: dict[str, Callable[[Any, Any], bool]] = {
            "gt": lambda v, b: v > b, "ge": lambda v, b: v >= b, "lt": lambda v, b: v < b, "le": lambda v, b: v <= b,
        }
        words = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for name, test in tests.items():
                if name in limits and limits[name] is not None and not test(value, limits[name]):
                    self.add(here, Severity.ERROR, Kind.CONSTRAINT,
                             f"{_fmt(value)} is out of range: DeepSpeed requires {words[name]} {_fmt(limits[name])}",
                             f"use a value {words[name]} {_fmt(limits[name])}"
                             + (f" (default {_fmt(record['default'])})" if record.get("default") is not None else ""))
                    return
            step = limits.get("multiple_of")
            if step and value % step:
                self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"{_fmt(value)} is not a multiple of {step}",
                         f"use a multiple of {step}")
        if isinstance(value, (str, list)):
            if "min_length" in limits and len(value) < limits["min_length"]:
                self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"shorter than {limits['min_length']}",
                         "give a longer value")
            if "max_length" in limits and len(value) > limits["max_length"]:
                self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"longer than {limits['max_length']}",
                         "give a shorter value")
        if isinstance(value, str) and limits.get("pattern") and not re.search(limits["pattern"], value):
            self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"does not match {limits['pattern']}", "fix the value")

    # ------------------------------------------------------------ "auto"

    def auto(self, record: dict[str, Any], here: Path_) -> None:
        path = record["path"]
        if path in self.hf_filled:
            return
        behaviour = record.get("auto")
        hf_note = ""
        if self.options.hf and self.c.hf_fills is not None:
            hf_note = f" (the HF Trainer of transformers {self.c.hf_version} does not fill this key)"
        default = self._default_text(record)
        if not behaviour:
            self.add(here, Severity.ERROR, Kind.AUTO, f'"auto" where a section (object) is expected{hf_note}',
                     f'write "{record["key"]}": {{ ... }}')
        elif not behaviour.get("accepted"):
            reason = behaviour.get("error") or "it fails"
            self.add(here, Severity.ERROR, Kind.AUTO, f'DeepSpeed alone rejects "auto" here ({reason}){hf_note}',
                     f"write a value (default {default})" if default != "none" else "write a value")
        elif behaviour.get("becomes") == "default":
            self.add(here, Severity.WARNING, Kind.AUTO,
                     f'DeepSpeed drops "auto" here and uses the default {default}{hf_note}',
                     f"write the value you want, or delete the key to get {default}")
        else:
            types = record.get("json_types") or []
            if not types or "string" in types:
                self.add(here, Severity.WARNING, Kind.AUTO,
                         f'DeepSpeed keeps the literal string "auto" here (no special meaning){hf_note}',
                         f"write the value you want (default {default})")
            else:
                self.add(here, Severity.ERROR, Kind.AUTO,
                         f'DeepSpeed stores the string "auto" where {" or ".join(types)} is expected and fails when '
                         f"it uses it{hf_note}", f"write a value (default {default})")

    def _default_text(self, record: dict[str, Any]) -> str:
        effective = record.get("effective_default")
        if isinstance(effective, dict) and effective:
            if "any" in effective:
                return _fmt(effective["any"])
            stage = check_rules.View(self.config.data, self.c.snapshot, self.hf_filled).zero_stage()
            if stage is not None and str(stage) in effective:
                return f"{_fmt(effective[str(stage)])} (at ZeRO stage {stage})"
            return "stage-dependent: " + ", ".join(f"stage {k}: {_fmt(v)}" for k, v in sorted(effective.items()))
        if record.get("default_repr"):
            return str(record["default_repr"])
        if record.get("default") is None and record.get("required"):
            return "none"
        return _fmt(record.get("default"))

    # ------------------------------------------------------------ optimizer / scheduler

    def optimizers(self) -> None:
        if not self.c.catalogs:
            for section in ("optimizer", "scheduler"):
                if isinstance(self.config.data.get(section), dict) and "params" in self.config.data[section]:
                    self.add((section,), Severity.INFO, Kind.LIMITATION,
                             f"the {self.c.version} snapshot has no optimizer/scheduler catalog: params not checked",
                             "re-extract the snapshot with this dsfields")
            return
        for section, catalog in sorted(self.c.catalogs.items()):
            block = self.config.data.get(section)
            if isinstance(block, dict):
                self.one_optimizer(section, block, catalog)

    def one_optimizer(self, section: str, block: dict[str, Any], catalog: dict[str, Any]) -> None:
        kind = Kind.OPTIMIZER if catalog["label"] == "optimizer" else Kind.SCHEDULER
        type_key, params_key = catalog["type_key"], catalog["params_key"]
        name = block.get(type_key)
        params = block.get(params_key)
        names: dict[str, Any] = catalog.get("names", {})
        if name is None:
            if params is not None:
                self.add((section, params_key), Severity.WARNING, kind,
                         f"{section}.{params_key} is ignored: DeepSpeed reads it only with {section}.{type_key}",
                         f'add "{type_key}", or delete "{params_key}"')
            return
        if not isinstance(name, str):
            self.add((section, type_key), Severity.ERROR, kind, f"{section}.{type_key} must be a string, got "
                     f"{json_type(name)}", f"name a {catalog['label']}")
            return
        entry = names.get(name)
        if entry is None and name.lower() in names and names[name.lower()].get("case_insensitive"):
            entry = names[name.lower()]
        if entry is None:
            lower = {n.lower(): n for n in names}
            close = difflib.get_close_matches(name.lower(), list(lower), n=3, cutoff=0.6)
            hint = f'did you mean "{lower[close[0]]}"?' if close else f"see `dsfields lookup {section}`"
            where = " or ".join(catalog.get("fallback_modules", []))
            self.add((section, type_key), Severity.ERROR, kind,
                     f'{catalog["label"]} "{name}" is unknown to DeepSpeed {self.c.version} (neither its own nor in '
                     f"{where}); deepspeed.initialize fails", hint)
            return
        if params is None:
            return  # "params" absent: the scheduler rule reports it where the engine needs it
        if not isinstance(params, dict):
            self.add((section, params_key), Severity.ERROR, kind, f"{section}.{params_key} must be an object",
                     f'write "{params_key}": {{ ... }}')
            return
        self.params(section, name, entry, params, catalog, kind)

    def params(self, section: str, name: str, entry: dict[str, Any], params: dict[str, Any],
               catalog: dict[str, Any], kind: Kind) -> None:
        params_key = catalog["params_key"]
        classes = entry.get("classes") or []
        importable = [c for c in classes if c.get("importable") and c.get("params") is not None]
        class_names = " / ".join(c["class"].rsplit(".", 1)[1] for c in importable) or name
        open_ended = any(c.get("var_keyword") for c in importable)
        accepted: dict[str, Any] = {}
        for cls in importable:
            accepted.update(cls["params"])
        consumed = set(entry.get("engine_params") or [])
        checkable = entry.get("params_passed") and importable and len(importable) == len(classes) and not open_ended
        if entry.get("params_passed") is False:
            self.add((section, params_key), Severity.INFO, Kind.LIMITATION,
                     f"{name}: the engine builds this {catalog['label']}'s arguments itself; params not checked", "")
        elif classes and not importable:
            missing = ", ".join(c["class"] for c in classes)
            self.add((section, params_key), Severity.INFO, Kind.LIMITATION,
                     f"{missing} was not importable at extraction; params not checked", "")
        for key, value in params.items():
            here = (section, params_key, key)
            path = f"{section}.{params_key}.{key}"
            if key in (catalog.get("rejected_params") or {}):
                self.add(here, Severity.ERROR, kind, f"DeepSpeed raises: {catalog['rejected_params'][key]}",
                         f'delete "{key}"' + (' and use "gradient_clipping"' if "gradient_clipping" in
                                              catalog["rejected_params"][key] else ""))
                continue
            if isinstance(value, str) and value == "auto" and path not in self.hf_filled:
                note = " (the HF Trainer does not fill it)" if self.options.hf else ""
                self.add(here, Severity.ERROR, Kind.AUTO,
                         f'"auto" is passed to {class_names} as the string "auto"{note}',
                         f"write a value (default {_fmt(accepted.get(key, {}).get('default'))})")
            if not checkable or key in accepted or key in consumed:
                continue
            self.add(here, Severity.ERROR, kind,
                     f'"{key}" is not a parameter of {class_names}: deepspeed.initialize fails with TypeError',
                     self._param_hint(key, name, accepted, catalog))
        if checkable:
            for key in sorted(accepted):
                if all(key in (c["params"] or {}) and c["params"][key].get("required") for c in importable) and (
                        key not in params and key not in consumed):
                    self.add((section, params_key), Severity.ERROR, kind,
                             f'{class_names} requires "{key}", which {section}.{params_key} does not give',
                             f'add "{key}"' + (' (or "auto" with the HF Trainer)'
                                               if f"{section}.{params_key}.{key}" in (self.c.hf_fills or {}) else ""))

    def _param_hint(self, key: str, name: str, accepted: dict[str, Any], catalog: dict[str, Any]) -> str:
        close = difflib.get_close_matches(key, list(accepted), n=1, cutoff=0.7)
        takers = sorted(n for n, e in catalog.get("names", {}).items() if n != name and any(
            key in (c.get("params") or {}) for c in e.get("classes") or []))
        preferred = [t for t in takers if catalog["names"][t].get("origin") == "deepspeed"] or takers
        elsewhere = f'"{key}" is a parameter of {", ".join(preferred[:3])}, not {name}' if preferred else ""
        if close:
            return f'did you mean "{close[0]}"?' + (f" ({elsewhere})" if elsewhere else "")
        if elsewhere:
            return f"delete it, or switch the type: {elsewhere}"
        return f'delete it; {name} takes: {", ".join(sorted(accepted)) or "no keyword parameters"}'

    # ------------------------------------------------------------ cross-field rules

    def rules(self) -> None:
        view = check_rules.View(self.config.data, self.c.snapshot, self.hf_filled)
        for rule, violation in check_rules.evaluate(view, self.c.rules, self.options.world_size):
            severity = Severity(violation.severity)
            first, *rest = violation.paths
            self.add(first, severity, Kind.RULE, violation.message, violation.fix, related=tuple(rest), rule=rule.id)


# ---------------------------------------------------------------- --runtime: DeepSpeed's own verdict


def hf_substitute(data: dict[str, Any], checker: Checker) -> dict[str, Any]:
    """``data`` with the HF Trainer's ``"auto"`` fills replaced by plausible values, batch kept consistent at 1 GPU."""
    out = copy.deepcopy(data)
    fills = checker.hf_fills or {}
    for path in fills:
        parts = path.split(".")
        node: Any = out
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or node.get(parts[-1]) != "auto":
            continue
        node[parts[-1]] = _placeholder(path, checker)
    return out


def at_one_rank(data: dict[str, Any]) -> dict[str, Any]:
    """DeepSpeedConfig outside a launcher sees world size 1: make train_batch_size consistent there.

    The batch arithmetic is judged by the batch-size rule (with --world-size); --runtime asks DeepSpeed
    about everything else.
    """
    out = copy.deepcopy(data)
    tbs, micro, gas = (out.get(k) for k in check_rules.BATCH_KEYS)
    numbers = [v for v in (tbs, micro, gas) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
    if len(numbers) == 3 and all(check_rules._integral(v) for v in numbers):
        out["train_batch_size"] = int(micro) * int(gas)
    return out


def _placeholder(path: str, checker: Checker) -> Any:
    if path in check_rules.BATCH_KEYS:
        return 1
    record = checker.fields.get(path)
    if record is not None:
        if "boolean" in (record.get("json_types") or []):
            return False
        if record.get("default") is not None:
            return record["default"]
    return 1


def runtime_findings(checker: Checker, config: ConfigFile, options: Options) -> list[Finding]:
    installed = installed_deepspeed_version()
    if installed != checker.version:
        return [Finding("", Severity.INFO, Kind.LIMITATION,
                        f"--runtime skipped: the installed DeepSpeed is {installed or 'none'}, not {checker.version}",
                        f"pip install deepspeed=={checker.version}", 1)]
    data = at_one_rank(hf_substitute(config.data, checker) if options.hf else config.data)
    error, culprits = deepspeed_verdict(data, checker)
    if error is None:
        return []
    findings = []
    for path in culprits or [""]:
        key_path: Path_ = tuple(path.split(".")) if path else ()
        findings.append(Finding(path, Severity.ERROR, Kind.RUNTIME, f"DeepSpeedConfig raises: {error}",
                                "see the other findings for this key", config.line_of(key_path) or 1))
    return findings


def build_deepspeed_config(data: dict[str, Any]) -> BaseException | None:
    """Construct the installed ``DeepSpeedConfig`` on ``data``; the exception it raises, or None."""
    import contextlib
    import io
    import logging
    import os

    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from deepspeed.runtime.config import DeepSpeedConfig

        logging.getLogger("DeepSpeed").setLevel(logging.CRITICAL)
        try:
            DeepSpeedConfig(copy.deepcopy(data))
        except Exception as exc:  # every DeepSpeed complaint is a verdict (asserts, ValueError, pydantic)
            return exc
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def _leaf_paths(data: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            path = _join(prefix, str(key))
            yield from _leaf_paths(value, path)
            yield path


def _delete(data: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    parts = path.split(".")
    node: Any = out
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    return out


def deepspeed_verdict(data: dict[str, Any], checker: Checker,
                      build: Callable[[dict[str, Any]], BaseException | None] = build_deepspeed_config,
                      ) -> tuple[str | None, list[str]]:
    """DeepSpeed's error on ``data`` and the key(s) it is about.

    pydantic names the key itself (``loc``); removed keys are named by their message; otherwise
    the culprits are the keys whose removal makes that error go away (asked of DeepSpeed again).
    """
    error = build(data)
    if error is None:
        return None, []
    message = _first_line(error)
    located = _pydantic_paths(error, data, checker)
    if located:
        return message, located
    for path, removed in checker.removed.items():
        if removed["message"] in str(error):
            return message, [path]
    signature = (type(error).__name__, str(error))
    culprits = []
    for path in _leaf_paths(data):
        again = build(_delete(data, path))
        if again is None or (type(again).__name__, str(again)) != signature:
            culprits.append(path)
    # Prefer the deepest keys: removing a whole section also removes its faulty key.
    deepest = [p for p in culprits if not any(q.startswith(p + ".") for q in culprits)]
    return message, deepest


def _pydantic_paths(error: BaseException, data: dict[str, Any], checker: Checker) -> list[str]:
    errors = getattr(error, "errors", None)
    title = getattr(error, "title", None)
    if not callable(errors) or not title:
        return []
    sections = [p for p, s in checker.sections.items() if (s.get("model") or "").rsplit(".", 1)[-1] == title]
    present = [p for p in sections if check_rules.View(data, checker.snapshot, frozenset()).raw(p)
               is not check_rules.MISSING] or sections
    if not present:
        return []
    paths = []
    for err in errors():
        loc = [str(part) for part in err.get("loc", ()) if isinstance(part, str)]
        paths.append(".".join([present[0], *loc]) if present[0] else ".".join(loc))
    return sorted(set(paths))


# ---------------------------------------------------------------- files and output


def check_file(path: Path, checker: Checker, options: Options) -> FileReport:
    try:
        config = load(path, "hf" if options.hf else "deepspeed")
    except ConfigFileError as exc:
        return FileReport(str(path), error=str(exc))
    return FileReport(str(path), checker.check(config, options))


def check_text(text: str, checker: Checker, options: Options, name: str = "<config>") -> FileReport:
    try:
        config = parse(text, name, "hf" if options.hf else "deepspeed")
    except ConfigFileError as exc:
        return FileReport(name, error=str(exc))
    return FileReport(name, checker.check(config, options))


def exit_code(reports: list[FileReport], strict: bool) -> int:
    if any(r.error for r in reports):
        return 2
    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    return 1 if any(f.severity in failing for r in reports for f in r.findings) else 0


def _counts(reports: list[FileReport]) -> dict[str, int]:
    counts = {s.value: 0 for s in Severity}
    for report in reports:
        for finding in report.findings:
            counts[finding.severity.value] += 1
    return counts


def render_text(reports: list[FileReport], version: str) -> str:
    lines: list[str] = []
    for report in reports:
        if report.error:
            lines.append(f"{report.name}: {report.error}" if not report.error.startswith(report.name)
                         else report.error)
            continue
        if not report.findings:
            lines.append(f"{report.name}: ok")
            continue
        lines.append(report.name)
        for f in report.findings:
            rule = f" [{f.rule}]" if f.rule else ""
            lines.append(f"  {f.line or 1:>4}  {f.severity.value:<7}  {f.path or '(file)'}: {f.message}{rule}")
            if f.fix:
                lines.append(f"  {'':>4}  {'':<7}  fix: {f.fix}")
    counts = _counts(reports)
    lines.append(f"{len(reports)} file{'s' if len(reports) != 1 else ''} checked against DeepSpeed {version}: "
                 f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes")
    return "\n".join(lines)


def render_json(reports: list[FileReport], version: str, options: Options) -> str:
    payload = {
        "deepspeed_version": version,
        "options": {"hf": options.hf, "world_size": options.world_size, "strict": options.strict,
                    "runtime": options.runtime},
        "files": [{"file": r.name, "error": r.error, "findings": [f.as_dict() for f in r.findings]} for r in reports],
        "summary": _counts(reports),
    }
    return json.dumps(payload, indent=1, ensure_ascii=False)


def _escape_data(text: str) -> str:
    return termsafe.github_data(text)


def _escape_property(text: str) -> str:
    return termsafe.github_property(text)


def render_github(reports: list[FileReport], version: str) -> str:
    """GitHub workflow commands: one ``::error file=…,line=…::`` annotation per finding."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    lines = []
    for report in reports:
        if report.error:
            lines.append(f"::error file={_escape_property(report.name)},title=dsfields check::"
                         f"{_escape_data(report.error)}")
            continue
        for f in report.findings:
            title = f"dsfields {f.kind.value} (DeepSpeed {version})"
            text = f"{f.path or '(file)'}: {f.message}" + (f" Fix: {f.fix}" if f.fix else "")
            lines.append(f"::{level[f.severity]} file={_escape_property(report.name)},line={f.line or 1},"
                         f"title={_escape_property(title)}::{_escape_data(text)}")
    return "\n".join(lines)


# ---------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="ds_config files (JSON or hjson)")
    parser.add_argument("--version", default=None,
                        help="DeepSpeed version to check against (default: the installed one if snapshotted, "
                             "else the newest snapshot)")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text")
    parser.add_argument("--hf", action="store_true",
                        help='the file is for the HF Trainer: the "auto" values it fills are fine')
    parser.add_argument("--world-size", type=int, default=None, metavar="N",
                        help="number of data-parallel ranks, to check train_batch_size exactly")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument("--runtime", action="store_true",
                        help="also build DeepSpeedConfig (needs that DeepSpeed version installed)")


def newest_hf_list() -> dict[str, Any] | None:
    """The HF Trainer fill list of the newest snapshot that has one (older snapshots predate it)."""
    for version in reversed(available_versions()):
        try:
            hf = load_snapshot(version).get("hf_trainer")
        except SnapshotError:
            continue
        if isinstance(hf, dict):
            return hf
    return None


def run(args: argparse.Namespace) -> int:
    if args.world_size is not None and args.world_size < 1:
        print("dsfields check: --world-size must be at least 1", file=sys.stderr)
        return 2
    try:
        snapshot = load_requested(args.version)
    except SnapshotError as exc:
        print(f"dsfields check: {exc}", file=sys.stderr)
        return 2
    version = snapshot["deepspeed_version"]
    borrowed = newest_hf_list() if args.hf and not snapshot.get("hf_trainer") else None
    checker = Checker(snapshot, hf_trainer=borrowed)
    options = Options(hf=args.hf, world_size=args.world_size, strict=args.strict, runtime=args.runtime)
    reports = [check_file(path, checker, options) for path in args.files]
    if args.format == "json":
        output = render_json(reports, version, options)
    elif args.format == "github":
        output = render_github(reports, version)
    else:
        output = render_text(reports, version)
    if output:
        print(output)
    return exit_code(reports, args.strict)
