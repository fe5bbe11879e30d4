"""``dsfields migrate``: rewrite a config for another DeepSpeed release, saying every change it makes.

Deprecated keys are renamed to their replacement (with the value's new shape where DeepSpeed converts
it: ``cpu_offload: true`` → ``offload_optimizer: {"device": "cpu"}``), removed keys are dropped with
DeepSpeed's own message, and what the release would ignore or reject is reported, not touched (unless
``--drop-ignored``). The file is edited as text at each key's position, so key order, formatting and
hjson comments survive; only the edited members change.

With the release the file was written for (``--from U``, else guessed from keys only some releases read:
:func:`dsfields.upgrade.infer_release`), it also keeps the meaning: every key the file does not set whose
value DeepSpeed U and DeepSpeed V differ on (defaults that changed) is pinned to U's value
(``--keep-behaviour``, the default) or reported (``--adopt-defaults``), and listed either way; legacy forms
are rewritten as DeepSpeed converts them (:mod:`dsfields.legacy`); keys U ignored and V rejects are
removed with the reason; what cannot be carried (a removed feature, an optimizer V lacks) is a report line
and a non-zero exit under ``--strict``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsfields.check import Checker, Kind, Options, Severity
from dsfields.configfile import ConfigFile, ConfigFileError, Path_, dotted, load, parse, read_config_bytes
from dsfields.legacy import LEGACY, cite
from dsfields.model.dotted import join
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.messages import localize
from dsfields.model.prose import language
from dsfields.model.records import Snapshot
from dsfields.model.safewrite import check_target, target_lock, write_text
from dsfields.model.store import load_requested
from dsfields.model.termsafe import shown
from dsfields.model.wording import json_text
from dsfields.resolve import CONVERSIONS, DERIVED
from dsfields.upgrade import ValueChange, choices_for, choose_source, compare, pinnable, written_paths


@dataclass
class Edit:
    """One change to the text, with the line it prints."""

    path: Path_
    action: str
    """``"rename"``, ``"delete"`` or ``"replace"`` (the value)."""
    message: str
    new_key: str | None = None
    new_value: Any = None


@dataclass
class Insert:
    """A member written into an object of the (already edited) text: a pinned default or a carried value."""

    parent: Path_
    key: str
    value: Any
    message: str


@dataclass
class Plan:
    edits: list[Edit]
    notes: list[str]
    """What needs the user's attention and is left alone (ignored keys, rejected values)."""
    inserts: list[Insert] = field(default_factory=list)
    """Members to add after the edits (values carried to a replacement that is already in the file)."""
    losses: list[str] = field(default_factory=list)
    """What cannot be carried to the new release (a removed feature, an optimizer it lacks): reported,
    and a non-zero exit under ``--strict``."""
    changes: list[ValueChange] = field(default_factory=list)
    """Every value DeepSpeed U (on the file) and V (on the migration) differ on, pinned ones included."""
    unkept: list[str] = field(default_factory=list)
    """``--keep-behaviour``: keys whose old value could not be pinned (V rejects it there, or derives it);
    a non-zero exit under ``--strict``."""
    source: Snapshot | None = None


def plan(config: ConfigFile, snapshot: Snapshot, drop_ignored: bool = False, *,
         source: Snapshot | None = None) -> Plan:
    """The edits that make ``config`` right for ``snapshot``'s release, and what is left to the user.

    ``source``: the release the file was written for; it enables what depends on it (keys it ignored and the
    new release rejects, features and optimizers it had, values carried from keys it ignored)."""
    result = Plan([], [], source=source)
    version = snapshot.version
    _legacy_top(config.data, snapshot, source, result)
    _moved(config.data, snapshot, result)
    _walk_section(config.data, "", (), snapshot, result, drop_ignored, version)
    if source is not None:
        _optimizers(config.data, source, snapshot, result)
    return result


def _walk_section(obj: dict[str, Any], section: str, where: Path_, snapshot: Snapshot, result: Plan,
                  drop_ignored: bool, version: str) -> None:
    edits, notes, source = result.edits, result.notes, result.source
    record = snapshot.sections.get(section)
    if record is None or record.passthrough:
        return
    catalog = snapshot.catalogs.get(section)
    carried: list[tuple[str, Any, Path_]] = []
    for key, value in obj.items():
        path = join(section, key)
        here = (*where, key)
        if catalog and key == catalog.params_key:
            continue
        if any(edit.path == here for edit in edits):
            continue  # rewritten by a legacy rule already
        if path in snapshot.removed:
            if path in LEGACY and LEGACY[path].kind == "section-map":
                _section_map(obj, key, value, here, snapshot, source, result)
                continue
            edits.append(Edit(here, "delete", f"{path}: removed in DeepSpeed {version}, deleted "
                                              f"(DeepSpeed: {snapshot.removed[path].message})"))
            if source is not None and path in source.fields and path not in source.removed \
                    and not _disabled(value):
                result.losses.append(f"{path}: DeepSpeed {source.version} used it; DeepSpeed {version} has no "
                                     f"such feature, so it cannot be carried (DeepSpeed: "
                                     f"{snapshot.removed[path].message})")
            continue
        field_ = snapshot.field_by_name(section, key)
        if field_ is None:
            if record.unknown_keys == "passed":
                continue  # handed on whole (random_ltd's keys are copied for the engine): not ignored, never dropped
            if record.unknown_keys == "ignored" and key.startswith(("_", "//", "#")) and not drop_ignored:
                continue  # "_comment": the usual way to annotate JSON, harmless where DeepSpeed ignores keys
            if source is not None and record.unknown_keys == "error" and _ignored_by(source, section, key):
                edits.append(Edit(here, "delete", f"{path}: DeepSpeed {source.version} ignored it (its "
                                                  f"{section or 'top-level'} section was read key by key); "
                                                  f"DeepSpeed {version} rejects unknown keys there; deleted"))
                continue
            if source is not None and record.unknown_keys == "error" and source.field_by_name(section, key):
                edits.append(Edit(here, "delete", f"{path}: read by DeepSpeed {source.version}, not a key of "
                                                  f"DeepSpeed {version}, which rejects it here; deleted"))
                result.losses.append(f"{path}: DeepSpeed {version} no longer has it; what it set in DeepSpeed "
                                     f"{source.version} cannot be carried")
                continue
            if drop_ignored and record.unknown_keys != "error":
                edits.append(Edit(here, "delete", f"{path}: DeepSpeed {version} ignores it, deleted (--drop-ignored)"))
            elif record.unknown_keys == "error":
                notes.append(f"{path}: not a key of DeepSpeed {version}, which rejects it here; left alone")
            else:
                notes.append(f"{path}: DeepSpeed {version} ignores it; left alone (--drop-ignored deletes it)")
            continue
        info = field_.deprecated
        if info is not None:
            if field_.path in LEGACY and LEGACY[field_.path].kind == "carry":
                carried.append((key, value, here))  # after the loop: its targets may be converted further down
                continue
            _deprecated(obj, section, key, value, here, snapshot, edits, notes, version)
            continue
        if field_.is_section and isinstance(value, dict) and field_.path in snapshot.sections:
            _walk_section(value, field_.path, here, snapshot, result, drop_ignored, version)
        if source is not None and not field_.is_section:
            _rejected_value(field_.path, value, source, snapshot, notes)
    for key, value, here in carried:
        _carry(obj, key, value, here, snapshot, result)


def _disabled(value: Any) -> bool:
    """A feature section switched off in the file: deleting it loses nothing."""
    return isinstance(value, dict) and value.get("enabled") is False or value is False


def _ignored_by(source: Snapshot, section: str, key: str) -> bool:
    """The old release had no such key and read this section with dict.get: the key was ignored."""
    old = source.sections.get(section)
    return old is not None and old.unknown_keys in ("ignored", "kept") and source.field_by_name(section, key) is None


def _rejected_value(path: str, value: Any, source: Snapshot, target: Snapshot, notes: list[str]) -> None:
    """A fractional number where the new release takes an integer: no lossless rewrite, say what to choose."""
    choose = choices_for(target, path, value)
    if not choose or not isinstance(value, float):
        return
    options = " or ".join(json.dumps(c) for c in choose)
    notes.append(f"{path}: {json.dumps(value)} was taken as written by DeepSpeed {source.version}; DeepSpeed "
                 f"{target.version} takes only an integer here and no integer equals it: choose {options} "
                 f"(both accepted by DeepSpeed {target.version}; default {json_text(target.fields[path].default)})"
                 "; left alone")


def _legacy_top(data: dict[str, Any], snapshot: Snapshot, source: Snapshot | None, result: Plan) -> None:
    """Top-level legacy forms (:data:`dsfields.legacy.LEGACY`): boolean ZeRO, ``bfloat16``."""
    version = snapshot.version
    zero = data.get("zero_optimization")
    rule = LEGACY["zero_optimization"]
    if isinstance(zero, bool) and "zero_optimization.stage" in snapshot.fields:
        new: dict[str, Any] = {"stage": 1 if zero else 0}
        if zero:
            size = data.get("allgather_size", _default(source or snapshot, "allgather_size"))
            new["allgather_bucket_size"] = int(size) if isinstance(size, float) and size.is_integer() else size
        result.edits.append(Edit(("zero_optimization",), "replace",
                                 f"zero_optimization: {json.dumps(zero)} → {json.dumps(new)} (the dict DeepSpeed "
                                 f"builds from the boolean form: {cite(rule, snapshot)})", new_value=new))
        if "allgather_size" in data:
            now = "now zero_optimization.allgather_bucket_size" if zero else "unread when it is false"
            result.edits.append(Edit(("allgather_size",), "delete",
                                     f"allgather_size: read only for the boolean zero_optimization, {now}; deleted"))
    alias = LEGACY["bfloat16"]
    if "bfloat16" in data and "bf16" in snapshot.fields:
        if "bf16" in data:
            result.edits.append(Edit(("bfloat16",), "delete", f"bfloat16: bf16 is also given and DeepSpeed {version} "
                                                              f"reads only bf16 then ({cite(alias, snapshot)}); "
                                                              "deleted"))
        else:
            result.edits.append(Edit(("bfloat16",), "rename", f"bfloat16 → bf16 (the legacy spelling; "
                                                              f"{cite(alias, snapshot)})", new_key="bf16"))


def _moved(data: dict[str, Any], snapshot: Snapshot, result: Plan) -> None:
    """Optimizer params DeepSpeed rejects naming their replacement (``max_grad_norm`` → ``gradient_clipping``)."""
    for rule in LEGACY.values():
        if rule.kind != "moved":
            continue
        section, params_key, param = rule.path.split(".")
        catalog = snapshot.catalogs.get(section)
        params = _lookup(data, (section, params_key))
        if catalog is None or param not in catalog.rejected_params or not isinstance(params, dict) \
                or param not in params:
            continue
        target = rule.targets[0]
        value = params[param]
        here = (section, params_key, param)
        if target in data and not _same(data[target], value):
            result.notes.append(f"{rule.path}: DeepSpeed {snapshot.version} rejects it and names {target}, which the "
                                f"file sets to {json_text(data[target])}, not {json_text(value)}: keep one; left alone")
            continue
        result.edits.append(Edit(here, "delete", f"{rule.path}: {json.dumps(value)} → {target} (DeepSpeed "
                                                 f"{snapshot.version}: {catalog.rejected_params[param]}; "
                                                 f"{cite(rule, snapshot)})"))
        if target not in data:
            result.inserts.append(Insert((), target, value, f"{target}: {json.dumps(value)} (from {rule.path})"))


def _same(a: Any, b: Any) -> bool:
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _default(snapshot: Snapshot, path: str) -> Any:
    record = snapshot.fields.get(path)
    return record.default if record is not None else None


def _carry(obj: dict[str, Any], key: str, value: Any, here: Path_, snapshot: Snapshot, result: Plan) -> None:
    """``cpu_offload_use_pin_memory``: deleted, its value written to the offload sections the file has."""
    rule = LEGACY[join(".".join(str(p) for p in here[:-1]), key)]
    targets = []
    for target in rule.targets:
        section, _, leaf = target.rpartition(".")
        parent_key = section.rpartition(".")[2]
        converted = [e for e in result.edits if e.new_key == parent_key and e.path[:-1] == here[:-1]]
        if converted and isinstance(converted[0].new_value, dict):
            converted[0].new_value.setdefault(leaf, value)
            targets.append(target)
        elif isinstance(obj.get(parent_key), dict):
            if leaf not in obj[parent_key]:
                result.inserts.append(Insert((*here[:-1], parent_key), leaf, value,
                                             f"{target}: {json.dumps(value)} (carried from {key})"))
            targets.append(target)
    old = result.source.version if result.source else "the old release"
    if targets:
        result.edits.append(Edit(here, "delete", f"{rule.path}: {json.dumps(value)} carried to {', '.join(targets)} "
                                                 f"(DeepSpeed {old} ignored this key: {cite(rule, snapshot)}); "
                                                 "deleted"))
    else:
        result.edits.append(Edit(here, "delete", f"{rule.path}: deprecated and ignored ({cite(rule, snapshot)}); "
                                                 "the file offloads nothing it could be carried to; deleted"))


def _section_map(obj: dict[str, Any], key: str, value: Any, here: Path_, snapshot: Snapshot,
                 source: Snapshot | None, result: Plan) -> None:
    """Legacy top-level ``curriculum_learning`` → ``data_efficiency.data_sampling.curriculum_learning``."""
    rule = LEGACY[key]
    message = snapshot.removed[key].message
    target_top = rule.targets[0].split(".")[0]
    if not isinstance(value, dict) or target_top in obj:
        why = "it is not an object" if not isinstance(value, dict) else f"{target_top} is also in the file"
        result.notes.append(f"{key}: removed in DeepSpeed {snapshot.version} (DeepSpeed: {message}); not moved "
                            f"because {why}: merge it into {rule.targets[-1].rpartition('.')[0]} by hand")
        return
    if _disabled(value) or "enabled" not in value and not _default(source or snapshot, f"{key}.enabled"):
        result.edits.append(Edit(here, "delete", f"{key}: removed in DeepSpeed {snapshot.version}, and off in the "
                                                 f"file; deleted (DeepSpeed: {message})"))
        return
    name = value.get(rule.name_key or "")
    if not isinstance(name, str):
        result.notes.append(f"{key}: removed in DeepSpeed {snapshot.version} (DeepSpeed: {message}); it has no "
                            f"{rule.name_key} to name the metric under curriculum_metrics; left alone")
        return
    inner: dict[str, Any] = {}
    mapped = []
    for old_key, new_key in rule.keys:
        if old_key not in value:
            continue
        node = inner
        parts = new_key.format(type=name).split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value[old_key]
        mapped.append(f"{key}.{old_key} → {rule.targets[2].rpartition('.')[0]}.{new_key.format(type=name)}")
    enabled = inner.get("enabled", True)
    inner["enabled"] = enabled
    new = {"enabled": enabled, "data_sampling": {"enabled": enabled, "curriculum_learning": inner}}
    result.edits.append(Edit(here, "rename", f"{key} → {target_top} (DeepSpeed {snapshot.version}: {message}); "
                                             f"{'; '.join(mapped)}; "
                                             f"{cite(rule, snapshot, *([source] if source else []))}",
                             new_key=target_top, new_value=new))
    unmapped = [k for k in value if k not in {o for o, _ in rule.keys} and k != rule.name_key]
    if unmapped:
        result.losses.append(f"{key}: {', '.join(unmapped)} have no counterpart in {rule.targets[-1]}; not carried")
    needs = ", ".join(n.format(type=name) for n in rule.needs)
    result.losses.append(f"{key}: moved, but not equivalent: {rule.lost}; fill in {needs} under "
                         f"{rule.targets[2].rpartition('.')[0]}")


def _optimizers(data: dict[str, Any], source: Snapshot, target: Snapshot, result: Plan) -> None:
    """An optimizer (or scheduler) the old release had and the new one does not: it cannot be carried."""
    for section, catalog in source.catalogs.items():
        new = target.catalogs.get(section)
        value = data.get(section)
        if new is None or not isinstance(value, dict) or not isinstance(value.get(catalog.type_key), str):
            continue
        name = value[catalog.type_key]
        old_name = name if name in catalog.names else name.lower()
        if old_name in catalog.names and name not in new.names and name.lower() not in new.names:
            names = ", ".join(sorted(n for n in new.names if n.islower()))
            result.losses.append(f"{section}.{catalog.type_key}: {name}: DeepSpeed {source.version} has this "
                                 f"{section}, DeepSpeed {target.version} does not; it cannot be carried: choose one "
                                 f"DeepSpeed {target.version} has ({names}) or pass your own from code")


def _deprecated(obj: dict[str, Any], section: str, key: str, value: Any, here: Path_, snapshot: Snapshot,
                edits: list[Edit], notes: list[str], version: str) -> None:
    field_ = snapshot.field_by_name(section, key)
    assert field_ is not None and field_.deprecated is not None
    info = field_.deprecated
    path = field_.path
    target = snapshot.field_by_name(section, info.new_param) if info.new_param else None
    if target is None or not info.set_new_param:
        instead = f"; use {info.new_param}" if info.new_param else ""
        edits.append(Edit(here, "delete", f"{path}: deprecated, and DeepSpeed {version} ignores its value{instead}; "
                                          "deleted"))
        return
    if target.key in obj or (target.python_name and target.python_name in obj):
        why = ("DeepSpeed asserts they are not given together" if field_.is_pydantic
               else "DeepSpeed reads only the replacement")
        notes.append(f"{path}: deprecated, and its replacement {target.path} is also set ({why}); left alone: "
                     "keep one")
        return
    if info.converts_value and path not in CONVERSIONS:
        notes.append(f"{path}: deprecated; DeepSpeed converts its value for {target.path} in a way dsfields does "
                     "not know; left alone")
        return
    new_value = CONVERSIONS[path](value) if path in CONVERSIONS else value
    if path in CONVERSIONS and new_value is None:
        edits.append(Edit(here, "delete", f"{path}: deprecated; {json.dumps(value)} means no {target.key} "
                                          f"(DeepSpeed sets it to null, the default); deleted"))
        return
    converted = path in CONVERSIONS
    message = f"{path} → {target.path} (deprecated, renamed)"
    if converted:
        message = (f"{path}: {json.dumps(value)} → {target.path}: {json.dumps(new_value)} "
                   "(deprecated; the value DeepSpeed derives from it)")
    edits.append(Edit(here, "rename", message, new_key=target.key, new_value=new_value if converted else None))


# ---------------------------------------------------------------- text edits


class TextEditError(DsfieldsError):
    """A key could not be located in the text (the key-line index has no entry, or the line is ambiguous)."""


def apply(text: str, config: ConfigFile, edits: list[Edit]) -> str:
    """``text`` with ``edits`` applied at their keys' positions, bottom-up so earlier offsets stay valid."""
    spans = []
    for edit in edits:
        key_start, key_end, value_start, value_end = _locate(text, config, edit.path)
        spans.append((key_start, key_end, value_start, value_end, edit))
    for key_start, key_end, value_start, value_end, edit in sorted(spans, key=lambda s: s[0], reverse=True):
        if edit.action == "delete":
            text = _delete_member(text, key_start, value_end)
            continue
        if edit.new_value is not None:
            text = text[:value_start] + _render(edit.new_value, text, value_start, value_end) + text[value_end:]
        if edit.new_key is not None:
            quote = text[key_start] if text[key_start] in "\"'" else ""
            text = text[:key_start] + f"{quote}{edit.new_key}{quote}" + text[key_end:]
    return text


def _render(value: Any, text: str, value_start: int, value_end: int) -> str:
    """A new value as JSON: inline where the old one was inline and the new one is short, else laid out over
    lines with the file's own indentation step, under the member's indentation."""
    inline = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)) or "\n" not in text[value_start:value_end] and len(inline) <= 80:
        return inline
    line_start = text.rfind("\n", 0, value_start) + 1
    indent = re.match(r"[ \t]*", text[line_start:]).group(0)  # type: ignore[union-attr]  # always matches
    first = re.search(r"\n([ \t]+)\S", text)
    step: int | str = 2 if first is None else ("\t" if first.group(1).startswith("\t") else len(first.group(1)))
    return json.dumps(value, ensure_ascii=False, indent=step).replace("\n", "\n" + indent)


def _lookup(data: Any, path: Path_) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _uses_commas(text: str, config: ConfigFile) -> bool:
    """JSON always separates members with commas; hjson may use newlines alone."""
    return config.syntax == "json" or re.search(r",[ \t]*(?://[^\n]*|#[^\n]*)?\r?\n", text) is not None


def insert_member(text: str, config: ConfigFile, parent: Path_, key: str, value: Any) -> str:
    """``text`` with ``key: value`` added after the last member of the object at ``parent`` (``()``: the root),
    indented like that member, quoted like it, and with a comma where the file uses them."""
    if parent:
        _, _, start, end = _locate(text, config, parent)
    else:
        start = _skip_space(text, 0)
        end = _value_end(text, start)
    if text[start:start + 1] != "{" or text[end - 1:end] != "}":
        raise TextEditError(f"{dotted(parent) or 'the file'} is not an object in the text; add {key} by hand")
    rendered = json.dumps(value, ensure_ascii=False)
    obj = _lookup(config.data, parent)
    close = end - 1
    if not obj:
        return text[:start + 1] + f'"{key}": {rendered}' + text[close:]
    key_start, _, _, value_end = _locate(text, config, (*parent, list(obj)[-1]))
    quote = text[key_start] if text[key_start] in "\"'" else ""
    member = f"{quote}{key}{quote}: {rendered}"
    after = _skip_space(text, value_end)
    has_comma = text[after:after + 1] == ","
    comma = "" if has_comma or not _uses_commas(text, config) else ","
    line_start = text.rfind("\n", 0, key_start) + 1
    indent = text[line_start:key_start]
    if "\n" not in text[start:close] or indent.strip():  # members on one line (or the last one not first on its)
        at = after + 1 if has_comma else value_end
        return text[:at] + (" " if has_comma else ", ") + member + text[at:]
    close_line = text.rfind("\n", 0, close) + 1
    if not text[close_line:close].strip() and close_line > value_end:
        text = text[:close_line] + f"{indent}{member}\n" + text[close_line:]
        return text[:value_end] + comma + text[value_end:]
    return text[:value_end] + comma + f"\n{indent}{member}" + text[value_end:]


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for match in re.finditer("\n", text):
        offsets.append(match.end())
    return offsets


def _locate(text: str, config: ConfigFile, path: Path_) -> tuple[int, int, int, int]:
    line = config.lines.get(path)
    if line is None:
        raise TextEditError(f"cannot find {dotted(path)} in the text; edit it by hand")
    offsets = _line_offsets(text)
    start = offsets[line - 1]
    end = offsets[line] if line < len(offsets) else len(text)
    key = str(path[-1])
    pattern = re.compile(r"(?<![\w$])(?:\"" + re.escape(json.dumps(key)[1:-1]) + r"\"|'" + re.escape(key) + r"'|"
                         + re.escape(key) + r")\s*:")
    matches = list(pattern.finditer(text, start, end))
    if len(matches) != 1:
        raise TextEditError(f"{dotted(path)}: {len(matches)} candidates on line {line}; edit it by hand")
    match = matches[0]
    key_end = match.end() - 1
    while text[key_end - 1].isspace():
        key_end -= 1
    value_start = _skip_space(text, match.end())
    return match.start(), key_end, value_start, _value_end(text, value_start)


def _skip_space(text: str, i: int) -> int:
    while i < len(text):
        if text[i] in " \t\r\n":
            i += 1
        elif text[i] == "#" or text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        else:
            break
    return i


def _string_end(text: str, i: int) -> int:
    quote = text[i]
    i += 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _value_end(text: str, i: int) -> int:
    if i >= len(text):
        return i
    if text[i] in "\"'":
        return _string_end(text, i)
    if text[i] in "{[":
        depth = 0
        while i < len(text):
            c = text[i]
            if c in "\"'":
                i = _string_end(text, i)
                continue
            if c == "#" or text.startswith("//", i) or text.startswith("/*", i):
                i = _skip_space(text, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i
    end = i
    while end < len(text) and text[end] not in ",}]\n#" and not text.startswith("//", end):
        end += 1
    while end > i and text[end - 1].isspace():
        end -= 1
    return end


def _delete_member(text: str, start: int, end: int) -> str:
    """Remove one ``key: value`` and its separating comma; a line left blank goes too."""
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        end = after + 1
    else:  # the last member: take the comma before it
        before = start
        while before > 0 and text[before - 1] in " \t\r\n":
            before -= 1
        if before > 0 and text[before - 1] == ",":
            start = before - 1
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        return text[:line_start] + text[line_end + 1:]
    if not text[end:line_end].strip():
        # the member ended its line: drop trailing spaces, keep the newline
        return text[:start].rstrip(" \t") + text[line_end:]
    return text[:start] + text[end:].lstrip(" \t") if text[start - 1:start] in " \t" else text[:start] + text[end:]


# ---------------------------------------------------------------- keeping the behaviour


SKIP_PIN = {DERIVED}
"""Resolve sources not pinned: a value DeepSpeed computes from other keys (the batch arithmetic, a key another
one forces) is kept by keeping those keys."""


def migrate(text: str, config: ConfigFile, target: Snapshot, source: Snapshot | None = None, *,
            keep_behaviour: bool = True, drop_ignored: bool = False, hf: bool = False) -> tuple[str, Plan]:
    """The migrated text and its plan. With ``source`` (the release the file was written for), every value
    DeepSpeed ``source`` and ``target`` differ on is listed in ``plan.changes``; with ``keep_behaviour``, the
    ones the file does not set are pinned to ``source``'s value wherever the target accepts it and the key's
    section is in the file."""
    result = plan(config, target, drop_ignored, source=source)
    new_text = apply(text, config, result.edits)
    for item in result.inserts:
        new_text = insert_member(new_text, _reparse(new_text, config.name), item.parent, item.key, item.value)
    if source is None:
        return new_text, result
    changes = compare(config.data, source, _reparse(new_text, config.name).data, target, hf)
    pinned: list[ValueChange] = []
    original = set(written_paths(config.data))
    for change in changes:
        if change.written:
            change.note = "written in the file"
            continue
        if change.path in original:
            change.note = "the file's own key, rewritten or deleted above"
            continue
        parent = tuple(change.path.split(".")[:-1])
        current = _reparse(new_text, config.name)
        if parent and not isinstance(_lookup(current.data, parent), dict):
            change.note = f"not pinned: {'.'.join(parent)} is not in the file"
            continue
        if not keep_behaviour:
            change.note = "not pinned (--adopt-defaults)"
            continue
        if change.old_source in SKIP_PIN or change.new_source in SKIP_PIN:
            change.note = f"not pinned: DeepSpeed derives it ({change.old_source} → {change.new_source})"
            result.unkept.append(change.path)
            continue
        if not pinnable(target, change.path, change.old):
            change.note = f"not pinned: DeepSpeed {target.version} does not accept {json_text(change.old)} there"
            result.unkept.append(change.path)
            continue
        new_text = insert_member(new_text, current, parent, change.path.rpartition(".")[2], change.old)
        change.pinned = True
        change.note = "pinned (--keep-behaviour)"
        pinned.append(change)
    rest = compare(config.data, source, _reparse(new_text, config.name).data, target, hf)
    notes = {c.path: c.note for c in changes}
    for change in rest:
        change.note = notes.get(change.path, change.note)
    result.changes = pinned + rest
    return new_text, result


def _reparse(text: str, name: str) -> ConfigFile:
    try:
        return parse(text, name, "deepspeed")
    except ConfigFileError as exc:
        raise TextEditError(f"the migrated text does not parse ({exc}); please report this") from None


def change_line(change: ValueChange, old: str, new: str) -> str:
    """One listed value change: what each release uses, where its reader is, and what migrate did."""
    first = f"{change.path}: DeepSpeed {old} used {json_text(change.old)} ({change.old_source}"
    first += f", {change.old_where})" if change.old_where else ")"
    second = f"DeepSpeed {new} uses {json_text(change.new)} ({change.new_source}"
    second += f", {change.new_where})" if change.new_where else ")"
    if change.pinned:
        second = f"DeepSpeed {new} would use {json_text(change.new)}; {json_text(change.old)} written to keep it"
    return f"{first}; {second}" + (f"; {change.note}" if change.note and not change.pinned else "")


# ---------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="a ds_config file (JSON or hjson)")
    parser.add_argument("--to", required=True, metavar="V", help="the DeepSpeed release to migrate to")
    parser.add_argument("--from", dest="source", metavar="U", default=None,
                        help="the DeepSpeed release the file was written for (default: guessed from keys only "
                             "some releases read; exit 2 if they do not tell)")
    keep = parser.add_mutually_exclusive_group()
    keep.add_argument("--keep-behaviour", dest="keep_behaviour", action="store_true", default=True,
                      help="write U's value for every key the file does not set whose default changed (default)")
    keep.add_argument("--adopt-defaults", dest="keep_behaviour", action="store_false",
                      help="take V's defaults; every value that changes is still listed")
    parser.add_argument("--hf", action="store_true",
                        help='the file is for the HF Trainer: an "auto" it fills is not a value change; with '
                             "--trainer-args, every literal the Trainer refuses (its mismatch list) is set to "
                             '"auto", as transformers advises')
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when something cannot be carried (a removed feature, an optimizer V lacks, "
                             "a behaviour that could not be pinned)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", type=Path, metavar="OUT", help="write the migrated config here")
    out.add_argument("--in-place", action="store_true", help="rewrite FILE (atomically, keeping its line endings, "
                                                             "mode and owner; a symlink's target is rewritten)")
    parser.add_argument("--force", action="store_true",
                        help="also write a read-only or hard-linked target (a hard-linked one in place)")
    parser.add_argument("--diff", action="store_true", help="print a unified diff of the changes")
    parser.add_argument("--drop-ignored", action="store_true",
                        help="also delete keys the release ignores (default: report them)")
    from dsfields.hf.arguments import add_cli_arguments

    add_cli_arguments(parser, world_size=True)  # --trainer-args & co. (issue 27)
    parser.add_argument("--lang", default=None, metavar="LANG",
                        help="en or zh for the report (default: zh when LANG is a zh locale, else en)")


def trainer_edits(text: str, name: str, trainer: Any, accelerate: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """``migrate --hf --trainer-args``: the mismatched literals set to ``"auto"`` (what transformers' own message
    advises), then the Trainer run again on the result: (new text, edit messages, what it still refuses)."""
    from dsfields.hf.trainer import trainer_run

    config = parse(text, name, "hf")
    run = trainer_run(config.data, trainer, accelerate) if isinstance(config.data, dict) else None
    if run is None:
        return text, [], []
    edits = []
    for line in run.mismatches:
        key = line[len("- ds "):].split("=", 1)[0]
        edits.append(Edit(tuple(key.split(".")), "replace", f'{key}: → "auto" (the HF Trainer refuses it: {line})',
                          new_value="auto"))
    new_text = apply(text, config, edits) if edits else text
    after = trainer_run(parse(new_text, name, "hf").data, trainer, accelerate)
    left = [] if after.error is None else [f"under the HF Trainer, {after.error.raised_by} raises "
                                           f"{after.error.exc_type}: {after.error}; left alone"]
    return new_text, [e.message for e in edits], left


def remaining(text: str, snapshot: Snapshot, name: str, hf: bool = False) -> list[str]:
    """What the release still rejects in the migrated text (wrong values etc.): reported, never edited."""
    try:
        config = parse(text, name, "hf" if hf else "deepspeed")
    except ConfigFileError as exc:
        return [f"the migrated text does not parse ({exc}); please report this"]
    # Launch rules depend on how the config is launched (optimizer from code or not), not on the release's keys.
    handled = {Kind.UNKNOWN_KEY, Kind.DEPRECATED_KEY, Kind.REMOVED_KEY, Kind.LAUNCH}
    out = []
    for finding in Checker(snapshot).check(config, Options(hf=hf)):
        if finding.severity is Severity.ERROR and finding.kind not in handled:
            out.append(f"{finding.path or '(file)'}: {finding.message}; left alone")
    return out


def line_endings(raw: str) -> str | None:
    """How to write the edited text back so that its line endings stay the file's: ``None`` when the raw
    text itself can be edited (LF, or a mix of LF and CRLF: the key lines count ``\\n``), else the ending
    that replaces each ``\\n`` of the universal-newline text (all CRLF, so that inserted lines get CRLF
    too; CR-only files; a mix with lone CRs takes its most common ending)."""
    crlf = raw.count("\r\n")
    lone_cr = raw.count("\r") - crlf
    if not lone_cr:
        return "\r\n" if crlf and raw.count("\n") == crlf else None
    lone_lf = raw.count("\n") - crlf
    return max((lone_cr, "\r"), (crlf, "\r\n"), (lone_lf, "\n"))[1]


def universal(text: str) -> str:
    """``text`` with universal newlines, as Python's text mode (and so DeepSpeed's loader) reads it."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def run(args: argparse.Namespace) -> int:
    if args.in_place:  # read, migrate and write under the file's lock: parallel runs migrate one after another
        with target_lock(args.file):
            return _run(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    lang = language(getattr(args, "lang", None))
    snapshot = load_requested(args.to)
    try:
        config = load(args.file, "deepspeed")
        raw = read_config_bytes(args.file).decode("utf-8")  # the file's own line endings
    except ConfigFileError as exc:
        raise DsfieldsError(str(exc)) from None
    except UnicodeError as exc:  # changed since load read it
        raise DsfieldsError(f"{args.file}: cannot read ({exc})") from None
    # A UTF-8 byte order mark (Windows editors write one; DeepSpeed's hjson reads past it) is not part of the
    # text the edits see: it is kept in front of the migrated text.
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    raw = raw[len(bom):]
    if args.in_place and args.output:
        raise UsageError("give -o OUT or --in-place, not both")
    from dsfields.hf.arguments import from_cli, wants_trainer

    trainer = accelerate = None
    if wants_trainer(args):
        args.hf = True
        trainer, accelerate = from_cli(args)
    source, how = choose_source(config.data, args.source)
    ending = line_endings(raw)
    text = universal(raw)
    new_text, result = migrate(raw if ending is None else text, config, snapshot, source,
                               keep_behaviour=args.keep_behaviour, drop_ignored=args.drop_ignored, hf=args.hf)
    left: list[str] = []
    if trainer is not None:
        new_text, messages, left = trainer_edits(new_text, str(args.file), trainer, accelerate)
        result.edits += [Edit((), "replace", m) for m in messages]
    if ending is None:  # LF, or a mix of LF and CRLF: the raw text was edited, the mix stays as it was
        new_raw, new_text = new_text, universal(new_text)
    else:
        new_raw = new_text.replace("\n", ending)
    notes = result.notes + [n for n in remaining(new_text, snapshot, str(args.file), args.hf)
                            if not any(n.startswith(o.split(":")[0] + ":") for o in result.notes)] + left
    writes = args.output or (args.file if args.in_place else None)
    if writes is not None:
        check_target(writes, force=args.force)  # refused before the report says what would be written
    text_to_stdout = writes is None and not args.diff
    report = sys.stderr if text_to_stdout else sys.stdout
    name = shown(str(args.file))

    def tell(line: str) -> None:  # the report in --lang (the migrated text itself is never translated)
        print(localize(line, lang, "migrate.", "check.", "error."), file=report)

    tell(f"{name}: from DeepSpeed {source.version} ({shown(how)}) to {snapshot.version}")
    for edit in result.edits:
        tell(f"{name}: {shown(edit.message)}")
    for item in result.inserts:
        tell(f"{name}: {shown(item.message)}")
    for change in result.changes:
        tell(f"{name}: value changes: {shown(change_line(change, source.version, snapshot.version))}")
    for loss in result.losses:
        tell(f"{name}: cannot be carried: {shown(loss)}")
    for note in notes:
        tell(f"{name}: needs attention: {shown(note)}")
    if not result.edits and not notes and not result.changes and not result.losses:
        tell(f"{name}: nothing to migrate for DeepSpeed {snapshot.version}")
    if args.diff:
        sys.stdout.writelines(difflib.unified_diff(
            text.splitlines(keepends=True), new_text.splitlines(keepends=True),
            fromfile=shown(str(args.file)), tofile=shown(str(writes or args.file))))
    if writes is not None and (new_raw != raw or writes != args.file):
        write_text(writes, bom + new_raw, force=args.force)
    elif text_to_stdout:
        sys.stdout.write(new_text)
    if notes or (args.strict and (result.losses or result.unkept)):
        return 1
    return 0
