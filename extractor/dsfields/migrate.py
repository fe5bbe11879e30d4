"""``dsfields migrate``: rewrite a config for another DeepSpeed release, saying every change it makes.

Deprecated keys are renamed to their replacement (with the value's new shape where DeepSpeed converts
it: ``cpu_offload: true`` → ``offload_optimizer: {"device": "cpu"}``), removed keys are dropped with
DeepSpeed's own message, and what the release would ignore or reject is reported, not touched (unless
``--drop-ignored``). The file is edited as text at each key's position, so key order, formatting and
hjson comments survive; only the edited members change.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsfields.check import Checker, Kind, Options, Severity
from dsfields.configfile import ConfigFile, ConfigFileError, Path_, dotted, load, parse
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.records import Snapshot, join
from dsfields.model.store import load_requested, write_atomic
from dsfields.resolve import CONVERSIONS


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
class Plan:
    edits: list[Edit]
    notes: list[str]
    """What needs the user's attention and is left alone (ignored keys, rejected values)."""


def plan(config: ConfigFile, snapshot: Snapshot, drop_ignored: bool = False) -> Plan:
    """The edits that make ``config`` right for ``snapshot``'s release, and what is left to the user."""
    edits: list[Edit] = []
    notes: list[str] = []
    version = snapshot.version
    _walk_section(config.data, "", (), snapshot, edits, notes, drop_ignored, version)
    return Plan(edits, notes)


def _walk_section(obj: dict[str, Any], section: str, where: Path_, snapshot: Snapshot, edits: list[Edit],
                  notes: list[str], drop_ignored: bool, version: str) -> None:
    record = snapshot.sections.get(section)
    if record is None or record.passthrough:
        return
    catalog = snapshot.catalogs.get(section)
    for key, value in obj.items():
        path = join(section, key)
        here = (*where, key)
        if catalog and key == catalog.params_key:
            continue
        if path in snapshot.removed:
            edits.append(Edit(here, "delete", f"{path}: removed in DeepSpeed {version}, deleted "
                                              f"(DeepSpeed: {snapshot.removed[path].message})"))
            continue
        field = snapshot.field_by_name(section, key)
        if field is None:
            if record.unknown_keys == "passed":
                continue  # handed on whole (random_ltd's keys are copied for the engine): not ignored, never dropped
            if record.unknown_keys == "ignored" and key.startswith(("_", "//", "#")) and not drop_ignored:
                continue  # "_comment": the usual way to annotate JSON, harmless where DeepSpeed ignores keys
            if drop_ignored and record.unknown_keys != "error":
                edits.append(Edit(here, "delete", f"{path}: DeepSpeed {version} ignores it, deleted (--drop-ignored)"))
            elif record.unknown_keys == "error":
                notes.append(f"{path}: not a key of DeepSpeed {version}, which rejects it here; left alone")
            else:
                notes.append(f"{path}: DeepSpeed {version} ignores it; left alone (--drop-ignored deletes it)")
            continue
        info = field.deprecated
        if info is not None:
            _deprecated(obj, section, key, value, here, snapshot, edits, notes, version)
            continue
        if field.is_section and isinstance(value, dict) and field.path in snapshot.sections:
            _walk_section(value, field.path, here, snapshot, edits, notes, drop_ignored, version)


def _deprecated(obj: dict[str, Any], section: str, key: str, value: Any, here: Path_, snapshot: Snapshot,
                edits: list[Edit], notes: list[str], version: str) -> None:
    field = snapshot.field_by_name(section, key)
    assert field is not None and field.deprecated is not None
    info = field.deprecated
    path = field.path
    target = snapshot.field_by_name(section, info.new_param) if info.new_param else None
    if target is None or not info.set_new_param:
        instead = f"; use {info.new_param}" if info.new_param else ""
        edits.append(Edit(here, "delete", f"{path}: deprecated, and DeepSpeed {version} ignores its value{instead}; "
                                          "deleted"))
        return
    if target.key in obj or (target.python_name and target.python_name in obj):
        why = ("DeepSpeed asserts they are not given together" if field.is_pydantic
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
            text = text[:value_start] + json.dumps(edit.new_value, ensure_ascii=False) + text[value_end:]
        if edit.new_key is not None:
            quote = text[key_start] if text[key_start] in "\"'" else ""
            text = text[:key_start] + f"{quote}{edit.new_key}{quote}" + text[key_end:]
    return text


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


# ---------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="a ds_config file (JSON or hjson)")
    parser.add_argument("--to", required=True, metavar="V", help="the DeepSpeed release to migrate to")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", type=Path, metavar="OUT", help="write the migrated config here")
    out.add_argument("--in-place", action="store_true", help="rewrite FILE (atomically)")
    parser.add_argument("--diff", action="store_true", help="print a unified diff of the changes")
    parser.add_argument("--drop-ignored", action="store_true",
                        help="also delete keys the release ignores (default: report them)")


def remaining(text: str, snapshot: Snapshot, name: str) -> list[str]:
    """What the release still rejects in the migrated text (wrong values etc.): reported, never edited."""
    try:
        config = parse(text, name, "deepspeed")
    except ConfigFileError as exc:
        return [f"the migrated text does not parse ({exc}); please report this"]
    # Launch rules depend on how the config is launched (optimizer from code or not), not on the release's keys.
    handled = {Kind.UNKNOWN_KEY, Kind.DEPRECATED_KEY, Kind.REMOVED_KEY, Kind.LAUNCH}
    out = []
    for finding in Checker(snapshot).check(config, Options()):
        if finding.severity is Severity.ERROR and finding.kind not in handled:
            out.append(f"{finding.path or '(file)'}: {finding.message}; left alone")
    return out


def run(args: argparse.Namespace) -> int:
    snapshot = load_requested(args.to)
    try:
        config = load(args.file, "deepspeed")
        text = args.file.read_text(encoding="utf-8")
    except ConfigFileError as exc:
        raise DsfieldsError(str(exc)) from None
    if args.in_place and args.output:
        raise UsageError("give -o OUT or --in-place, not both")
    result = plan(config, snapshot, args.drop_ignored)
    new_text = apply(text, config, result.edits)
    notes = result.notes + remaining(new_text, snapshot, str(args.file))
    writes = args.output or (args.file if args.in_place else None)
    text_to_stdout = writes is None and not args.diff
    report = sys.stderr if text_to_stdout else sys.stdout
    for edit in result.edits:
        print(f"{args.file}: {edit.message}", file=report)
    for note in notes:
        print(f"{args.file}: needs attention: {note}", file=report)
    if not result.edits and not notes:
        print(f"{args.file}: nothing to migrate for DeepSpeed {snapshot.version}", file=report)
    if args.diff:
        sys.stdout.writelines(difflib.unified_diff(
            text.splitlines(keepends=True), new_text.splitlines(keepends=True),
            fromfile=str(args.file), tofile=str(writes or args.file)))
    if writes is not None and (new_text != text or writes != args.file):
        write_atomic(writes, new_text)
    elif text_to_stdout:
        sys.stdout.write(new_text)
    return 1 if notes else 0
