"""``dsfields lookup``: the instant answer to "what is this DeepSpeed config field?".

Grepping DeepSpeed's source finds where a key is spelled, not what it means: the default may sit in
a ``*_DEFAULT`` constant, depend on the ZeRO stage, or be swallowed by a section that ignores
unknown keys. This answers from a committed snapshot instead — default, type, constraints, "auto",
deprecation, removal and the defining line — and must be about as quick as grep to be used like it.
So this module and everything it imports are stdlib only: no DeepSpeed, torch, pydantic or jinja2.

Searching and formatting are pure functions of the snapshot (``find``, ``suggest``,
``format_answer``, ``match_json``) so that tests and other consumers can use them without the
command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple

from dsfields import termsafe
from dsfields.history import EventKind, HistoryEvent, field_history
from dsfields.snapshot import SnapshotError, available_versions, load_requested, repo_generated_dir

Record = dict[str, Any]

LABEL_WIDTH = 13
"""Width of the row labels (``python name``, ``constraints``...) in a single answer."""

MIN_WIDTH, MAX_WIDTH = 40, 100
"""Wrap at the terminal width, but never so narrow it is unreadable nor so wide lines are hard to follow."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query",
        metavar="QUERY",
        help="a JSON key (stage3_max_live_parameters), python name (max_live_parameters), "
        "dotted path (zero_optimization.offload_param.device) or section (zero_optimization)",
    )
    parser.add_argument(
        "--version",
        dest="deepspeed_version",
        metavar="V",
        default=None,
        help="DeepSpeed version of the snapshot to answer from "
        "(default: the installed DeepSpeed's if snapshotted, else the newest)",
    )
    parser.add_argument("--json", action="store_true", help="print the snapshot records as JSON")
    parser.add_argument(
        "--history", action="store_true", help="also show in which releases the field changed"
    )


# --- finding ------------------------------------------------------------------------------------


class Match(NamedTuple):
    """One answer to a query: a field, a section (with its fields) or a removed key."""

    path: str
    kind: str
    """``"field"``, ``"section"`` or ``"removed"``."""
    field: Record | None = None
    section: Record | None = None
    removed: Record | None = None
    children: tuple[Record, ...] = ()
    """For sections: the field records directly inside, by key."""
    removed_children: tuple[Record, ...] = ()
    """For sections: the keys DeepSpeed rejects inside, with its message."""


def _all_paths(snapshot: Record) -> list[str]:
    paths = set(snapshot["fields"]) | set(snapshot.get("removed", {})) | set(snapshot["sections"])
    paths.discard("")
    # Shallow paths first: for an ambiguous key, the top-level reading is the likelier one.
    return sorted(paths, key=lambda p: (p.count("."), p))


def _record(snapshot: Record, path: str) -> Record:
    """The record holding ``key``/``python_name`` for ``path`` (field, else removed, else section)."""
    if path in snapshot["fields"]:
        return snapshot["fields"][path]
    if path in snapshot.get("removed", {}):
        return snapshot["removed"][path]
    parent, _, key = path.rpartition(".")
    return {"key": key, "section": parent, "python_name": None}


def _python_path(record: Record) -> str | None:
    name = record.get("python_name")
    if not name:
        return None
    section = record.get("section") or ""
    return f"{section}.{name}".lower() if section else name.lower()


def make_match(snapshot: Record, path: str) -> Match:
    fields: dict[str, Record] = snapshot["fields"]
    removed: dict[str, Record] = snapshot.get("removed", {})
    if path in removed:
        return Match(path, "removed", field=fields.get(path), removed=removed[path])
    if path in snapshot["sections"]:
        children = tuple(sorted((r for r in fields.values() if r["section"] == path), key=lambda r: r["key"]))
        gone = tuple(sorted((r for r in removed.values() if r["section"] == path), key=lambda r: r["key"]))
        return Match(path, "section", field=fields.get(path), section=snapshot["sections"][path],
                     children=children, removed_children=gone)
    return Match(path, "field", field=fields[path])


def find(snapshot: Record, query: str) -> list[Match]:
    """Every path ``query`` names, case-insensitively; empty when nothing matches.

    A dotted query is a path: exact, else a path written with python names, else the tail of a
    longer path (``offload_param.device``). A plain word is compared with every key and python
    name, so a key used in several sections (``enabled``) yields each of them.
    """
    wanted = query.strip().lower()
    if not wanted:
        return []
    paths = _all_paths(snapshot)
    if "." in wanted:
        hits = [p for p in paths if p.lower() == wanted]
        if not hits:
            hits = [
                p for p in paths
                if p.lower().endswith("." + wanted)
                or ((pp := _python_path(_record(snapshot, p))) is not None
                    and (pp == wanted or pp.endswith("." + wanted)))
            ]
    else:
        hits = []
        for path in paths:
            record = _record(snapshot, path)
            if record["key"].lower() == wanted or (record.get("python_name") or "").lower() == wanted:
                hits.append(path)
    return [make_match(snapshot, p) for p in hits]


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, or ``limit + 1`` as soon as it must exceed ``limit`` (keeps misses fast)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def suggest(snapshot: Record, query: str, limit: int = 5) -> list[str]:
    """Paths whose key, path or python name is closest to ``query`` (typos), then those containing it."""
    wanted = query.strip().lower()
    if not wanted:
        return []
    max_distance = max(2, len(wanted) // 4)
    scored: list[tuple[int, str]] = []
    containing: list[str] = []
    for path in _all_paths(snapshot):
        record = _record(snapshot, path)
        names = {path.lower(), record["key"].lower()}
        if pp := _python_path(record):
            names |= {pp, pp.rpartition(".")[2]}
        distance = min(edit_distance(wanted, name, max_distance) for name in names)
        if distance <= max_distance:
            scored.append((distance, path))
        elif len(wanted) >= 3 and any(wanted in name for name in names):
            containing.append(path)
    ranked = [path for _, path in sorted(scored, key=lambda s: (s[0], s[1].count("."), s[1]))]
    return (ranked + containing)[:limit]


# --- values -------------------------------------------------------------------------------------


def scientific(number: int) -> str | None:
    """``1e9`` for 1000000000, ``5e8``, ``1.5e6``: big round numbers are checked faster this way."""
    if isinstance(number, bool) or not isinstance(number, int):
        return None
    digits = str(abs(number))
    significant = digits.rstrip("0")
    exponent = len(digits) - 1
    if exponent < 5 or len(significant) > 3:
        return None
    mantissa = significant[0] + ("." + significant[1:] if len(significant) > 1 else "")
    return f"{'-' if number < 0 else ''}{mantissa}e{exponent}"


def value_text(value: Any, enum: Record | None = None) -> str:
    """A JSON value as written in ds_config.json, with ``(1e9)`` for big round ints and enum names."""
    text = json.dumps(value, ensure_ascii=False)
    if (short := scientific(value)) is not None:
        text += f" ({short})"
    if enum is not None:
        names = [m["name"] for m in enum["members"] if m["value"] == value and m["name"] != value]
        if names:
            text += f" ({enum['name']}.{names[0]})"
    return text


def short_factory(name: str) -> str:
    """``DeepSpeedZeroLeafModuleConfig.<lambda>`` for the dotted factory name: the module path is noise."""
    parts = name.split(".")
    start = 0
    while start < len(parts) - 1 and parts[start].islower():
        start += 1
    return ".".join(parts[start:])


def enum_of(snapshot: Record, record: Record) -> Record | None:
    name = record.get("enum")
    return snapshot.get("enums", {}).get(name) if name else None


def default_text(record: Record, enum: Record | None = None, compact: bool = False) -> str:
    """pydantic-settings style: ``(required)``, ``(default: …)``, ``(default factory: …)``.

    ``compact`` (one-line listings) keeps what fits: the symbolic spelling, no enum member name.
    """
    if record.get("required"):
        return "(required)"
    if record.get("read_without_default"):
        return "(no default: absent means not set)"
    value = value_text(record.get("default"), None if compact else enum)
    if record.get("default_factory"):
        factory = short_factory(record["default_factory"])
        return f"(default: {value})" if compact else f"(default factory: {factory} → {value})"
    symbolic = record.get("default_repr")
    if symbolic is not None:
        # `sys.maxsize` says why the number is what it is; `torch.float16` has no JSON form at all.
        if compact or record.get("default") is None:
            return f"(default: {symbolic})"
        return f"(default: {symbolic} = {value})"
    return f"(default: {value})"


def effective_text(record: Record) -> str | None:
    """What DeepSpeed really uses when the key is absent, where a validator makes it differ."""
    effective = record.get("effective_default")
    if not effective:
        return None
    default = record.get("default")
    if set(effective) == {"any"}:
        value = effective["any"]
        return None if value == default else f"{value_text(value)} (a validator sets it when absent)"
    if all(value == default for value in effective.values()):
        return None
    ordered = sorted(effective, key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s))
    groups: list[tuple[list[str], Any]] = []
    for stage in ordered:
        if groups and groups[-1][1] == effective[stage] and stage.isdigit() and groups[-1][0][-1].isdigit():
            groups[-1][0].append(stage)
        else:
            groups.append(([stage], effective[stage]))
    parts = []
    for members, value in groups:
        stages = f"stage {members[0]}" if len(members) == 1 else f"stages {members[0]}–{members[-1]}"
        parts.append(f"{value_text(value)} at ZeRO {stages}")
    return ", ".join(parts) + " (the stage decides when the key is absent)"


def constraints_text(constraints: Record) -> str | None:
    symbols = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
    parts = []
    for name, value in constraints.items():
        if name in symbols:
            parts.append(f"{symbols[name]} {value_text(value)}")
        elif name == "multiple_of":
            parts.append(f"multiple of {value_text(value)}")
        elif name == "min_length":
            parts.append(f"length >= {value}")
        elif name == "max_length":
            parts.append(f"length <= {value}")
        elif name == "pattern":
            parts.append(f"matches {value}")
        else:
            parts.append(f"{name} {value_text(value)}")
    return ", ".join(parts) or None


def allowed_text(record: Record, enum: Record | None) -> str | None:
    """Allowed values; enum members as ``0 (disabled)``, aliases grouped under their value."""
    if enum is not None:
        by_value: dict[str, tuple[Any, list[str]]] = {}
        for member in enum["members"]:
            key = json.dumps(member["value"])
            by_value.setdefault(key, (member["value"], []))[1].append(member["name"])
        items = []
        for value, names in by_value.values():
            names = [n for n in names if n != value]
            items.append(value_text(value) + (f" ({', '.join(names)})" if names else ""))
        return f"{enum['name']}: " + ", ".join(items)
    choices = record.get("choices")
    if choices:
        return ", ".join(value_text(c) for c in choices)
    return None


def auto_text(auto: Record | None) -> str | None:
    if not auto:
        return None
    if not auto.get("accepted"):
        error = auto.get("error")
        return "rejected" + (f" ({error})" if error else "")
    if auto.get("becomes") == "kept":
        # DeepSpeed stores the string: something else (e.g. the HF Trainer) must replace it.
        return 'accepted but kept as the string "auto": DeepSpeed does not resolve it'
    return "accepted: dropped, the default is used"


def deprecation_text(deprecated: Record) -> str:
    """``deprecated → new_key``, then what DeepSpeed does with the old key's value."""
    new = deprecated.get("new_param")
    text = f"deprecated → {new}" if new else "deprecated"
    details = []
    if new and deprecated.get("set_new_param", True) is False:
        details.append(f"its value is not carried over to {new}")
    elif new:
        how = "converted and copied" if deprecated.get("converts_value") else "copied"
        details.append(f"its value is {how} to {new} (setting both is an error)")
    if deprecated.get("deprecated_msg"):
        details.append(str(deprecated["deprecated_msg"]))
    return text + ("; " + "; ".join(details) if details else "")


def unknown_keys_text(section: Record | None) -> str:
    if section is None:
        return "unknown keys: not recorded"
    if section.get("passthrough"):
        return "any key is passed on as is"
    return {
        "error": "strict: an unknown key is an error",
        "ignored": "lenient: an unknown key is silently ignored",
        "kept": "unknown keys are kept",
    }.get(section.get("unknown_keys", ""), f"unknown keys: {section.get('unknown_keys')}")


def source_text(source: Record | None) -> str | None:
    if not source:
        return None
    text = f"{source['file']}:{source['line']}"
    where = source.get("function") or source.get("table")
    return f"{text} in {where}" + ("()" if source.get("function") else "") if where else text


def type_text(record: Record) -> str:
    kind = record.get("type") or "any"
    if kind == "any" and record.get("json_types"):
        return f"any ({' | '.join(record['json_types'])})"
    return kind


# --- output -------------------------------------------------------------------------------------


class Style:
    """ANSI colour on a terminal only; plain text when piped or when ``NO_COLOR`` is set."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: Any) -> Style:
        tty = bool(getattr(stream, "isatty", lambda: False)())
        return cls(tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb")

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and text else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def label(self, text: str) -> str:
        return self._wrap("36", text)

    def warn(self, text: str) -> str:
        return self._wrap("33", text)

    def error(self, text: str) -> str:
        return self._wrap("31", text)


def terminal_width() -> int:
    """``$COLUMNS`` (how tests pin the width), else the terminal's, else 80; clamped to stay readable.

    Same rule as ``shutil.get_terminal_size``, without importing shutil (and its compression modules).
    """
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(MIN_WIDTH, min(MAX_WIDTH, columns or 80))


def _row(label: str, text: str, width: int, style: Style) -> list[str]:
    indent = " " * (2 + LABEL_WIDTH)
    lines = _wrap(text, width, indent, indent) or [indent]
    lines[0] = "  " + style.label(label.ljust(LABEL_WIDTH)) + lines[0][len(indent):]
    return lines


def _wrap(text: str, width: int, indent: str, hanging: str) -> list[str]:
    # Never split a token: a cut URL, dotted name or number is worse than a long line.
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hanging,
                         break_long_words=False, break_on_hyphens=False)


def _paragraphs(text: str, width: int, indent: str = "  ") -> list[str]:
    """Rewrap a docstring: its hard line breaks were made for source code, not this terminal.

    Unindented prose lines are joined and refilled; bullets and indented lines (examples, option
    lists) keep their own line and indentation.
    """
    lines: list[str] = []
    for block in textwrap.dedent(text.strip("\n")).split("\n\n"):
        items: list[tuple[int, str]] = []
        for line in block.splitlines():
            stripped = line.strip()
            lead = len(line) - len(line.lstrip())
            if not stripped:
                continue
            if items and lead == 0 and items[-1][0] == 0 and not stripped.startswith(("- ", "* ")):
                items[-1] = (0, items[-1][1] + " " + stripped)
            else:
                items.append((lead, stripped))
        if lines and items:
            lines.append("")
        for lead, item in items:
            bullet = "  " if item.startswith(("- ", "* ")) else ""
            lines.extend(_wrap(item, width, indent + " " * lead, indent + " " * lead + bullet))
    return lines


def _header(text: str, path: str, width: int, style: Style) -> list[str]:
    lines = _wrap(text, width, "", "    ")
    if lines and lines[0].startswith(path):
        lines[0] = style.bold(path) + lines[0][len(path):]
    return lines


def _section_name(path: str) -> str:
    return path if path else "(top level)"


def format_field(snapshot: Record, match: Match, width: int, style: Style) -> list[str]:
    record = match.field
    assert record is not None
    enum = enum_of(snapshot, record)
    lines = _header(f"{match.path}: {type_text(record)} {default_text(record, enum)}", match.path, width, style)
    if record.get("deprecated"):
        lines += [style.warn(line) for line in _wrap(deprecation_text(record["deprecated"]), width, "  ", "    ")]
    lines.append("")
    if record.get("description"):
        lines += _paragraphs(record["description"], width) + [""]
    section = snapshot["sections"].get(record["section"])
    rows: list[tuple[str, str | None]] = [
        ("key", record["key"]),
        ("python name", _python_name_text(record, section)),
        ("section", f"{_section_name(record['section'])} — {unknown_keys_text(section)}"),
        ("effective", effective_text(record)),
        ("also read", _other_defaults_text(record)),
        ("constraints", constraints_text(record.get("constraints") or {})),
        ("allowed", allowed_text(record, enum)),
        ('"auto"', auto_text(record.get("auto"))),
        ("defined at", source_text(record.get("source"))),
        ("constant", _constant_text(record.get("constant"))),
        ("snapshot", f"DeepSpeed {snapshot['deepspeed_version']}"),
    ]
    for label, text in rows:
        if text:
            lines += _row(label, text, width, style)
    return lines


def _python_name_text(record: Record, section: Record | None) -> str:
    if record.get("python_name"):
        model = (section or {}).get("model")
        return record["python_name"] + (f" ({model.rpartition('.')[2]})" if model else "")
    function = (record.get("source") or {}).get("function")
    return "none: read from the dict" + (f" by {function}()" if function else "")


def _other_defaults_text(record: Record) -> str | None:
    seen: set[tuple[str, str]] = set()
    parts = []
    for other in record.get("other_defaults") or []:
        text = value_text(other.get("default"))
        where = source_text(other.get("source")) or "?"
        # The same read site can be recorded more than once; say each one once.
        if (text, where) not in seen:
            seen.add((text, where))
            parts.append(f"with default {text} at {where}")
    return "; ".join(parts) or None


def _constant_text(constant: Record | None) -> str | None:
    if not constant:
        return None
    text = f"{constant['name']} ({constant['file']}:{constant['line']})"
    if constant.get("default_name"):
        text += f", default {constant['default_name']} (line {constant.get('default_line')})"
    return text


def format_removed(snapshot: Record, match: Match, width: int, style: Style) -> list[str]:
    removed = match.removed
    assert removed is not None
    lines = _header(f"{match.path}: removed", match.path, width, style)
    lines += [""] + [style.error(line) for line in _paragraphs(removed["message"], width)] + [""]
    lines += _row("key", removed["key"], width, style)
    lines += _row("section", _section_name(removed["section"]), width, style)
    lines += _row("rejected at", source_text(removed.get("source")) or "?", width, style)
    lines += _row("snapshot", f"DeepSpeed {snapshot['deepspeed_version']} raises this message if the key is set",
                  width, style)
    return lines


def one_line(snapshot: Record, record: Record, width: int, name: str, name_width: int = 0) -> str:
    """``name  type (default: …)`` cut to ``width``: for section listings and ambiguous answers."""
    path = record.get("path", "")
    if path in snapshot.get("removed", {}):
        detail = "removed"
    elif path in snapshot["sections"]:
        count = sum(1 for r in snapshot["fields"].values() if r["section"] == path)
        detail = f"section, {count} fields"
    else:
        detail = f"{type_text(record)} {default_text(record, compact=True)}"
        if record.get("deprecated"):
            # First, so that cutting the line to the terminal width never hides it.
            new = record["deprecated"].get("new_param")
            detail = (f"deprecated → {new}; " if new else "deprecated; ") + detail
    line = f"  {name.ljust(name_width)}  {detail}"
    return line if len(line) <= width else line[: width - 1] + "…"


def format_section(snapshot: Record, match: Match, width: int, style: Style) -> list[str]:
    section = match.section
    assert section is not None
    described = match.field or {}
    lines = _header(f"{match.path}: section, {len(match.children)} fields", match.path, width, style) + [""]
    description = section.get("description") or described.get("description")
    if description:
        lines += _paragraphs(description, width) + [""]
    lines += _row("section of", _section_name(section.get("parent") or ""), width, style)
    if section.get("model"):
        module, _, name = section["model"].rpartition(".")
        lines += _row("model", f"{name} ({module})", width, style)
    lines += _row("unknown keys", unknown_keys_text(section), width, style)
    if described.get("python_name"):
        lines += _row("python name", described["python_name"], width, style)
    lines += _row("defined at", source_text(section.get("source")) or "?", width, style)
    lines += _row("snapshot", f"DeepSpeed {snapshot['deepspeed_version']}", width, style)
    entries = [*match.children, *match.removed_children]
    if entries:
        name_width = min(max(len(r["key"]) for r in entries), width - 36)
        lines += ["", "fields:"]
        lines += [one_line(snapshot, r, width, r["key"], name_width) for r in entries]
    return lines


def format_choices(snapshot: Record, query: str, matches: list[Match], width: int) -> list[str]:
    lines = [f'"{query}" names {len(matches)} fields in DeepSpeed {snapshot["deepspeed_version"]}; '
             "ask for one by its path:"]
    name_width = min(max(len(m.path) for m in matches), width - 36)
    for m in matches:
        lines.append(one_line(snapshot, m.removed or m.field or {"path": m.path}, width, m.path, name_width))
    return lines


def history_lines(events: list[HistoryEvent], versions: list[str], width: int) -> list[str]:
    """One line per version range: the release a change appeared in, up to the release before the next."""
    if not events:
        return ["history: not in any committed snapshot"]
    if len(versions) > 1:
        lines = [f"history ({len(versions)} snapshots: {versions[0]} … {versions[-1]}):"]
    else:
        lines = [f"history (1 snapshot: {versions[0]}):" if versions else "history:"]
    order = {v: i for i, v in enumerate(versions)}
    grouped: dict[str, list[HistoryEvent]] = {}
    for event in events:
        grouped.setdefault(event.version, []).append(event)
    starts = sorted(grouped, key=lambda v: order.get(v, len(versions)))
    spans = []
    for i, start in enumerate(starts):
        if start in order and i + 1 < len(starts) and starts[i + 1] in order:
            end = versions[order[starts[i + 1]] - 1]
        elif start in order and i + 1 == len(starts):
            end = versions[-1]
        else:
            end = start
        spans.append(start if end == start else f"{start}–{end}")
    span_width = max(len(s) for s in spans)
    for span, start in zip(spans, starts, strict=True):
        texts = [_event_text(e, first=bool(versions) and e.version == versions[0]) for e in grouped[start]]
        lines += _wrap(f"{span.ljust(span_width)}  {'; '.join(texts)}", width, "  ", " " * (4 + span_width))
    return lines


def _event_text(event: HistoryEvent, first: bool) -> str:
    if event.kind in (EventKind.INTRODUCED, EventKind.REINTRODUCED):
        new = event.new if isinstance(event.new, dict) else {}
        what = f"{new.get('type') or 'any'} (default: {value_text(new.get('default'))})"
        if event.kind is EventKind.INTRODUCED and first:
            return f"present in the oldest snapshot: {what}"
        return f"{event.kind.message}: {what}"
    if event.kind in (EventKind.DEFAULT_CHANGED, EventKind.TYPE_CHANGED):
        show = value_text if event.kind is EventKind.DEFAULT_CHANGED else str
        return f"{event.kind.message}: {show(event.old)} → {show(event.new)}"
    if event.kind is EventKind.DEPRECATED:
        new = event.new.get("new_param") if isinstance(event.new, dict) else None
        return f"deprecated → {new}" if new else "deprecated"
    if event.kind is EventKind.REMOVED:
        return "removed" + (f": {event.new}" if event.new else "")
    return event.kind.message


# --- JSON ---------------------------------------------------------------------------------------


def match_json(snapshot: Record, match: Match) -> Record:
    """The snapshot's own records, untouched, so a script gets exactly what the snapshot says."""
    record = match.field or {}
    return {
        "path": match.path,
        "kind": match.kind,
        "field": match.field,
        "section": match.section,
        "removed": match.removed,
        "enum": enum_of(snapshot, record),
        "fields": {r["path"]: r for r in match.children},
        "removed_fields": {r["path"]: r for r in match.removed_children},
    }


# --- command ------------------------------------------------------------------------------------


def format_answer(snapshot: Record, query: str, matches: list[Match], width: int, style: Style) -> list[str]:
    """The text answer: one match in full, one line per match when ambiguous, suggestions for a miss."""
    if not matches:
        lines = [f'no field "{query}" in DeepSpeed {snapshot["deepspeed_version"]}']
        suggestions = suggest(snapshot, query)
        if suggestions:
            lines[0] += "; did you mean:"
            lines += [f"  {path}" for path in suggestions]
        else:
            lines.append("  (a section name, e.g. zero_optimization, lists the fields inside it)")
        return lines
    if len(matches) > 1:
        return format_choices(snapshot, query, matches, width)
    formatter = {"field": format_field, "section": format_section, "removed": format_removed}
    return formatter[matches[0].kind](snapshot, matches[0], width, style)


def run(args: argparse.Namespace) -> int:
    generated = repo_generated_dir()
    try:
        snapshot = load_requested(args.deepspeed_version, generated)
    except SnapshotError as exc:
        print(f"dsfields: {exc}", file=sys.stderr)
        return 2
    matches = find(snapshot, args.query)
    histories = {m.path: field_history(m.path, generated) for m in matches} if args.history else {}
    if args.json:
        payload: Record = {
            "deepspeed_version": snapshot["deepspeed_version"],
            "query": args.query,
            "matches": [match_json(snapshot, m) for m in matches],
            "suggestions": [] if matches else suggest(snapshot, args.query),
        }
        if args.history:
            for item in payload["matches"]:
                item["history"] = [e.as_dict() for e in histories[item["path"]]]
        # \u escapes only if the terminal needs them: still valid JSON, so scripts lose nothing.
        _write(json.dumps(payload, indent=1, ensure_ascii=False) + "\n",
               lambda: json.dumps(payload, indent=1) + "\n")
        return 0 if matches else 1
    width = terminal_width()
    lines = format_answer(snapshot, args.query, matches, width, Style.for_stream(sys.stdout))
    if args.history:
        versions = available_versions(generated)
        for m in matches:
            lines += [""] + ([m.path] if len(matches) > 1 else [])
            lines += history_lines(histories[m.path], versions, width)
    _write("\n".join(line.rstrip() for line in lines) + "\n")
    return 0 if matches else 1


def _write(text: str, ascii_text: Callable[[], str] | None = None) -> None:
    try:
        termsafe.write_strict(text)
    except UnicodeEncodeError:
        # A terminal that cannot show → or — (e.g. a legacy code page) still gets the answer.
        encoding = getattr(sys.stdout, "encoding", None) or "ascii"
        sys.stdout.write(ascii_text() if ascii_text else text.encode(encoding, "replace").decode(encoding))
