"""What changed in ``ds_config.json`` between two DeepSpeed releases, computed from their snapshots.

Upgrading DeepSpeed silently changes defaults, drops keys (dict readers ignore them, so nothing
fails) or starts rejecting them; release notes rarely say. Comparing two snapshots answers it
exactly. Modelled on ``griffe check``: a ``str`` enum of change kinds whose value is the human
message, one :class:`Change` per change, one ``explain(style)`` per output style. Only the
standard library is imported here: ``dsfields diff`` runs without DeepSpeed, torch or pydantic.
``installed`` (diff against the DeepSpeed importable here) is extracted by the command line, which
hands the snapshot in: this module never imports the extractor.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from dsfields.model import chinese
from dsfields.model.errors import SnapshotError, UsageError
from dsfields.model.messages import localize
from dsfields.model.prose import language
from dsfields.model.records import Field, Removed, Snapshot
from dsfields.model.renames import replacement_of
from dsfields.model.store import available_versions, dumps, load, repo_generated_dir, version_listing
from dsfields.model.style import OutputStyle, github_data, github_property
from dsfields.model.wording import effective_at, short_json, stage_label, symbolic_default

INSTALLED = "installed"
"""The OLD/NEW spelling that means "extract the DeepSpeed importable here" instead of a snapshot."""


class ChangeKind(StrEnum):
    """Kinds of change to a ``ds_config.json`` key; the value is the message shown to users."""

    ADDED = "Field was added"
    REMOVED = "Field was removed"
    RENAMED = "Field was renamed"
    DEFAULT_CHANGED = "Default value was changed"
    TYPE_CHANGED = "Type was changed"
    CONSTRAINT_CHANGED = "Constraint was changed"
    DEPRECATED = "Field was deprecated"
    UNDEPRECATED = "Field was un-deprecated"
    BECAME_REMOVED = "Field was removed and is now rejected"
    STRICTNESS_CHANGED = "Unknown-key handling of the section was changed"
    DESCRIPTION_CHANGED = "Description was changed"

    @property
    def key(self) -> str:
        """Stable machine name (``default_changed``): JSON output and index events use it."""
        return self.name.lower()

    @property
    def short(self) -> str:
        """The name ``--only`` / ``--fail-on`` list it under (``defaults``)."""
        return _SHORT[self]


_SHORT: dict[ChangeKind, str] = {
    ChangeKind.ADDED: "added",
    ChangeKind.REMOVED: "removed",
    ChangeKind.RENAMED: "renamed",
    ChangeKind.DEFAULT_CHANGED: "defaults",
    ChangeKind.TYPE_CHANGED: "types",
    ChangeKind.CONSTRAINT_CHANGED: "constraints",
    ChangeKind.DEPRECATED: "deprecated",
    ChangeKind.UNDEPRECATED: "undeprecated",
    ChangeKind.BECAME_REMOVED: "became-removed",
    ChangeKind.STRICTNESS_CHANGED: "strictness",
    ChangeKind.DESCRIPTION_CHANGED: "descriptions",
}
_ORDER = {kind: i for i, kind in enumerate(ChangeKind)}


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")


def _kind_names() -> dict[str, ChangeKind]:
    """Every spelling a user may type for a kind: short name, singular, member name, message."""
    names: dict[str, ChangeKind] = {}
    for kind in ChangeKind:
        for spelling in (kind.short, kind.short.removesuffix("s"), kind.key, kind.value):
            names[_norm(spelling)] = kind
    return names


def parse_kinds(text: str) -> set[ChangeKind]:
    """``"defaults,became-removed"`` → kinds; :class:`ValueError` names the accepted spellings."""
    names = _kind_names()
    kinds: set[ChangeKind] = set()
    for part in text.split(","):
        if not part.strip():
            continue
        kind = names.get(_norm(part))
        if kind is None:
            accepted = ", ".join(kind.short for kind in ChangeKind)
            raise ValueError(f"unknown change kind {part.strip()!r} (accepted: {accepted})")
        kinds.add(kind)
    return kinds


show = short_json
"""A value as JSON on one line, shortened: details must stay one line per change."""


@dataclass
class Change:
    """One change to one JSON path between two snapshots."""

    kind: ChangeKind
    """What happened."""
    path: str
    """JSON path of the key (a section path for strictness changes; ``""`` is the top level)."""
    section: str
    """Section the path belongs to (for strictness changes: the section itself)."""
    old: Any = None
    """The value before (JSON): default, type, deprecation record, ... depending on ``kind``."""
    new: Any = None
    """The value after (JSON)."""
    detail: str = ""
    """One human line saying what changed, values included."""

    def sort_key(self) -> tuple[str, str, int]:
        return (self.section, self.path, _ORDER[self.kind])

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.key,
            "message": self.kind.value,
            "path": self.path,
            "section": self.section,
            "old": self.old,
            "new": self.new,
            "detail": self.detail,
        }

    def explain(self, style: OutputStyle = OutputStyle.TEXT) -> str:
        """This change in one output style: one text line, a Markdown list item, a JSON object, a GitHub notice."""
        where = self.path or "(top level)"
        style = OutputStyle(style)
        if style is OutputStyle.MARKDOWN:
            return f"- `{where}`: **{self.kind.value}**" + (f" — {self.detail}" if self.detail else "")
        if style is OutputStyle.GITHUB:
            title = github_property(f"dsfields: {self.kind.value}")
            body = github_data(f"{where}: {self.detail}" if self.detail else where)
            return f"::notice title={title}::{body}"
        if style is OutputStyle.JSON:
            return json.dumps(self.as_dict(), ensure_ascii=False, sort_keys=True)
        return f"{where}: {self.kind.value}" + (f": {self.detail}" if self.detail else "")


# ---------------------------------------------------------------- the engine

def _compare_defaults(path: str, section: str, old: Field, new: Field) -> Iterator[Change]:
    if (old.default, old.default_repr) != (new.default, new.default_repr):
        yield Change(ChangeKind.DEFAULT_CHANGED, path, section, old.default, new.default,
                     f"{symbolic_default(old)} → {symbolic_default(new)}")
    old_eff, new_eff = old.effective_default, new.effective_default
    if (old_eff or new_eff) and old_eff != new_eff:
        # A validator may pick another value than the declared default (overlap_comm at ZeRO stage 3):
        # say at which stage the value a user really gets has moved.
        stages = sorted(set(old_eff or {}) | set(new_eff or {}))
        moved = [f"{stage_label(s)}: {show(effective_at(old, s))} → {show(effective_at(new, s))}"
                 for s in stages if effective_at(old, s) != effective_at(new, s)]
        detail = "; ".join(moved) if moved else "same values, now decided by a validator"
        yield Change(ChangeKind.DEFAULT_CHANGED, path, section, old_eff, new_eff, f"effective default {detail}")


def _compare_types(path: str, section: str, old: Field, new: Field) -> Iterator[Change]:
    if old.raw.get("type") != new.raw.get("type"):
        yield Change(ChangeKind.TYPE_CHANGED, path, section, old.raw.get("type"), new.raw.get("type"),
                     f"{old.raw.get('type')} → {new.raw.get('type')}")
    elif sorted(old.json_types) != sorted(new.json_types):
        yield Change(ChangeKind.TYPE_CHANGED, path, section, old.raw.get("json_types"), new.raw.get("json_types"),
                     f"JSON types {show(old.raw.get('json_types'))} → {show(new.raw.get('json_types'))}")


def _compare_constraints(path: str, section: str, old: Field, new: Field) -> Iterator[Change]:
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    old_c, new_c = old.constraints, new.constraints
    for name in sorted(set(old_c) | set(new_c)):
        if old_c.get(name) != new_c.get(name):
            before[name], after[name] = old_c.get(name), new_c.get(name)
    # Allowed values and requiredness narrow what a config may say, just like bounds do.
    for name in ("choices", "required"):
        if old.raw.get(name) != new.raw.get(name):
            before[name], after[name] = old.raw.get(name), new.raw.get(name)
    if before or after:
        detail = "; ".join(f"{name}: {show(before[name])} → {show(after[name])}" for name in before)
        yield Change(ChangeKind.CONSTRAINT_CHANGED, path, section, before, after, detail)




def _deprecation_text(record: Field, replacement: str | None) -> str:
    dep = record.deprecated
    target = replacement or (dep.new_param if dep else None)
    text = f"use {target} instead" if target else ""
    if dep and dep.message:
        text = f"{text} ({dep.message})" if text else str(dep.message)
    return text or "deprecated"


def _compare_fields(path: str, section: str, old: Field, new: Field, *, new_fields: dict[str, Field],
                    descriptions: bool, deprecation: bool = True) -> Iterator[Change]:
    """Attribute changes of one key present in both snapshots (or of a renamed pair)."""
    yield from _compare_defaults(path, section, old, new)
    yield from _compare_types(path, section, old, new)
    yield from _compare_constraints(path, section, old, new)
    old_dep, new_dep = old.raw.get("deprecated"), new.raw.get("deprecated")
    if deprecation and new_dep and new_dep != old_dep:
        text = _deprecation_text(new, replacement_of(new_fields, path, new))
        yield Change(ChangeKind.DEPRECATED, path, section, old_dep, new_dep,
                     f"deprecation changed: {text}" if old_dep else text)
    elif deprecation and old_dep and not new_dep:
        yield Change(ChangeKind.UNDEPRECATED, path, section, old_dep, None, "no longer deprecated")
    if descriptions and old.description != new.description:
        yield Change(ChangeKind.DESCRIPTION_CHANGED, path, section, old.description,
                     new.description, "description text changed")


def _strictness(old: Snapshot, new: Snapshot) -> Iterator[Change]:
    for path in sorted(set(old.sections) & set(new.sections)):
        before, after = old.sections[path], new.sections[path]
        if before.raw.get("unknown_keys") == after.raw.get("unknown_keys"):
            continue
        detail = f"unknown keys: {before.raw.get('unknown_keys')} → {after.raw.get('unknown_keys')}"
        if after.unknown_keys == "error":
            became_model = (before.raw.get("kind"), after.raw.get("kind")) == ("dict", "model")
            how = "dict reader → pydantic model; " if became_model else ""
            detail += f" ({how}a typo that was silently ignored now raises)"
        elif before.unknown_keys == "error":
            detail += " (a typo is no longer reported)"
        yield Change(ChangeKind.STRICTNESS_CHANGED, path, path, before.raw.get("unknown_keys"),
                     after.raw.get("unknown_keys"), detail)


def _fate(record: Field | Removed, new: Snapshot) -> str:
    """What NEW does with a value under a key it stopped reading: the key's section decides."""
    section = new.sections.get(record.section)
    if section is None:
        return "ignored (its section is not read either)"
    if section.unknown_keys == "error":
        return "rejected as an unknown key"
    if section.unknown_keys == "kept" or section.passthrough:
        return "passed on but unused"
    return "silently ignored"


class _Differ:
    """One diff in progress: which paths are accounted for, and the changes found so far."""

    def __init__(self, old: Snapshot, new: Snapshot, descriptions: bool) -> None:
        self.old, self.new, self.descriptions = old, new, descriptions
        self.old_fields = old.fields
        self.new_fields = new.fields
        self.old_removed = old.removed
        self.new_removed = new.removed
        self.changes: list[Change] = []
        self.done_old: set[str] = set()
        self.done_new: set[str] = set()

    def compare(self, path: str, old: Field, new: Field, *, deprecation: bool = True) -> None:
        self.changes.extend(_compare_fields(path, new.section, old, new, new_fields=self.new_fields,
                                            descriptions=self.descriptions, deprecation=deprecation))

    def became_removed(self) -> None:
        newly = sorted(set(self.new_removed) - set(self.old_removed))
        # Rejection outranks whatever else NEW's field record says about the key (it may still be read).
        for path in newly:
            record = self.new_removed[path]
            detail = record.message.strip()
            if path not in self.old_fields:
                detail = f"{detail} (was not read before)".strip()
            self.changes.append(Change(ChangeKind.BECAME_REMOVED, path, record.section,
                                       None, record.raw.get("message"), detail))
            self.done_old.add(path)
            self.done_new.add(path)
        # DeepSpeed raises on the section, so every key inside a newly rejected section goes with it.
        for path in sorted(set(self.old_fields) - set(self.new_fields) - self.done_old):
            owner = next((p for p in newly if path.startswith(p + ".")), None)
            if owner is not None:
                self.changes.append(Change(ChangeKind.BECAME_REMOVED, path, self.old_fields[path].section,
                                           None, self.new_removed[owner].raw.get("message"),
                                           f"rejected with its section {owner}"))
                self.done_old.add(path)

    def renamed(self, gone: list[str], came: list[str]) -> None:
        """Pair keys so a rename is one change, not removed + added (+ deprecated); updates the lists."""
        # A deprecated alias: X was a plain key; NEW still accepts X, deprecated, pointing at a new Y.
        for path in sorted(set(self.old_fields) & set(self.new_fields) - self.done_old):
            before, after = self.old_fields[path], self.new_fields[path]
            target = replacement_of(self.new_fields, path, after)
            if after.deprecated and not before.deprecated and target in came:
                self.changes.append(Change(ChangeKind.RENAMED, path, after.section, path, target,
                                           f"{path} → {target}; the old key is still accepted, deprecated"))
                self.compare(path, before, after, deprecation=False)
                came.remove(target)
                self.done_old.add(path)
        # A new alias: the same pydantic attribute of the same section under another JSON key.
        for path in list(gone):
            before = self.old_fields[path]
            name, section = before.python_name, before.section
            match = next((p for p in came if name and self.new_fields[p].python_name == name
                          and self.new_fields[p].section == section), None)
            if match is not None:
                self.changes.append(Change(ChangeKind.RENAMED, path, section, path, match,
                                           f"{path} → {match} (same pydantic field {name}); "
                                           f"the old key is now {_fate(before, self.new)}"))
                self.compare(match, before, self.new_fields[match])
                gone.remove(path)
                came.remove(match)

    def run(self) -> list[Change]:
        self.became_removed()
        gone = sorted(set(self.old_fields) - set(self.new_fields) - self.done_old)
        # A key NEW no longer rejects is back even if OLD read it too (to raise): removal outranked that read.
        back = set(self.new_fields) & set(self.old_removed) - set(self.new_removed)
        came = sorted((set(self.new_fields) - set(self.old_fields) | back) - self.done_new)
        self.done_new.update(back)
        self.renamed(gone, came)
        for path in gone:
            record = self.old_fields[path]
            self.changes.append(Change(ChangeKind.REMOVED, path, record.section, record.default,
                                       None, f"no longer read; a value here is now {_fate(record, self.new)}"))
        for path in came:
            new_record = self.new_fields[path]
            detail = "new section" if new_record.is_section else f"default {symbolic_default(new_record)}"
            if path in self.old_removed:
                detail = f"reintroduced, was rejected: {self.old_removed[path].raw.get('message')}; {detail}"
            self.changes.append(Change(ChangeKind.ADDED, path, new_record.section, None,
                                       new_record.default, detail))
        # No longer rejected and not read either: the message users relied on is gone.
        for path in sorted(set(self.old_removed) - set(self.new_removed) - set(self.new_fields)):
            removed = self.old_removed[path]
            detail = f"no longer rejected with a message; a value here is now {_fate(removed, self.new)}"
            self.changes.append(Change(ChangeKind.REMOVED, path, removed.section, removed.raw.get("message"),
                                       None, detail))
        for path in sorted(set(self.old_fields) & set(self.new_fields) - self.done_old - self.done_new):
            self.compare(path, self.old_fields[path], self.new_fields[path])
        self.changes.extend(_strictness(self.old, self.new))
        return sorted(self.changes, key=Change.sort_key)


def diff_snapshots(old: Snapshot | dict[str, Any], new: Snapshot | dict[str, Any], *,
                   descriptions: bool = False) -> list[Change]:
    """Every change from snapshot ``old`` to ``new``, sorted by (section, path, kind).

    A key gone from NEW that NEW rejects with a message (its ``removed`` table) is *became
    removed*, as is any key NEW newly rejects and every key inside a newly rejected section. A
    rename is one change, not removed + added: a deprecated alias pointing at a new key, or one
    pydantic attribute under a new alias. Works on fragments (plain dicts): records need only the keys compared.
    """
    return _Differ(_snapshot_of(old), _snapshot_of(new), descriptions).run()


def _snapshot_of(value: Snapshot | dict[str, Any]) -> Snapshot:
    return value if isinstance(value, Snapshot) else Snapshot(value)


# ---------------------------------------------------------------- rendering


def _fold(changes: list[Change]) -> tuple[list[Change], dict[str, int]]:
    """Hide the keys inside a removed section behind the section's own line: they went with it.

    Returns the changes to show and, per folded section path, how many keys were hidden.
    """
    gone = {ChangeKind.REMOVED, ChangeKind.BECAME_REMOVED}
    # Sorted, an ancestor comes before its descendants, so the first match is the outermost one.
    heads = sorted({c.path for c in changes if c.kind in gone and c.path})
    shown: list[Change] = []
    hidden: dict[str, int] = {}
    for change in changes:
        owner = next((h for h in heads if change.path.startswith(h + ".")), None)
        if owner is None or change.kind not in gone:
            shown.append(change)
        else:
            hidden[owner] = hidden.get(owner, 0) + 1
    return shown, hidden


def _by_section(changes: Iterable[Change]) -> dict[str, list[Change]]:
    groups: dict[str, list[Change]] = {}
    for change in sorted(changes, key=Change.sort_key):
        groups.setdefault(change.section, []).append(change)
    return groups


def render(changes: list[Change], fmt: OutputStyle | str, old_label: str, new_label: str, *,
           filtered: bool = False) -> str:
    """The whole report in ``text``, ``markdown``, ``json`` or ``github`` (one annotation per change).

    ``filtered``: ``changes`` is a selection (``--only``), so "no changes" must not claim more.
    """
    fmt = OutputStyle(fmt)
    if fmt is OutputStyle.JSON:
        return dumps({
            "generated_by": "dsfields diff",
            "old": old_label,
            "new": new_label,
            "changes": [c.as_dict() for c in changes],
        }).rstrip("\n")
    if fmt is OutputStyle.GITHUB:
        return "\n".join(c.explain(OutputStyle.GITHUB) for c in changes)
    if not changes:
        return f"no changes{' of the kinds asked for' if filtered else ''} from DeepSpeed {old_label} to {new_label}"
    shown, inside = _fold(changes)
    lines: list[str] = []
    if fmt is OutputStyle.MARKDOWN:
        lines.append(f"## DeepSpeed {old_label} → {new_label}: {_count(changes)}")
    else:
        lines.append(f"DeepSpeed {old_label} → {new_label}: {_count(changes)}")
    for section, group in _by_section(shown).items():
        title = section or "(top level)"
        lines.append(f"\n### `{title}`\n" if fmt is OutputStyle.MARKDOWN else f"\n{title}")
        for change in group:
            line = change.explain(fmt)
            if change.kind in (ChangeKind.REMOVED, ChangeKind.BECAME_REMOVED) and change.path in inside:
                line += f" (and {inside[change.path]} keys inside it)"
            lines.append(line if fmt is OutputStyle.MARKDOWN else f"  {line}")
    return "\n".join(lines)


def _count(changes: list[Change]) -> str:
    return f"{len(changes)} change" + ("" if len(changes) == 1 else "s")


# ---------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = ", ".join(kind.short for kind in ChangeKind)
    parser.add_argument("old", metavar="OLD", help=f"a snapshotted DeepSpeed version, or {INSTALLED!r}")
    parser.add_argument("new", metavar="NEW", help=f"a snapshotted DeepSpeed version, or {INSTALLED!r}")
    parser.add_argument("--format", choices=[s.value for s in OutputStyle], default="text",
                        help="output format (default: text, grouped by section)")
    parser.add_argument("--only", metavar="KIND,...", default=None, help=f"show only these kinds ({kinds})")
    parser.add_argument("--descriptions", action="store_true", help="also report changed descriptions")
    parser.add_argument("--hf", action="store_true",
                        help="OLD and NEW are HF releases T[,A] (transformers, accelerate): the Trainer's flags and "
                             "the Trainer's and accelerate's rules that changed (generated/hf/)")
    parser.add_argument("--inference", action="store_true",
                        help="compare the init_inference config (DeepSpeedInferenceConfig) instead of ds_config")
    parser.add_argument("--messages", action="store_true",
                        help="compare the message catalogues instead (generated/<V>/messages.json): the errors, "
                             "asserts and warnings each release added or removed, with their IDs")
    parser.add_argument("--fail-on", metavar="KIND,...", default=None,
                        help="exit 1 when a change of these kinds exists (for CI)")
    parser.add_argument("--generated", type=Path, default=None,
                        help="snapshot tree to read (default: $DSFIELDS_GENERATED, else generated/)")
    parser.add_argument("--lang", default=None, metavar="LANG",
                        help="en or zh for text and markdown (default: zh when LANG is a zh locale, else en)")


InstalledSnapshot = Callable[[], Snapshot]
"""Extracts the DeepSpeed importable here (the command line passes the extractor's in)."""


def _snapshot(version: str, root: Path, installed: InstalledSnapshot | None,
              cache: dict[str, Snapshot]) -> tuple[Snapshot, str]:
    if version == INSTALLED:
        if installed is None:
            raise UsageError(f"{INSTALLED!r} needs the extractor (pip install dsfields[extract])")
        if INSTALLED not in cache:
            cache[INSTALLED] = installed()
        snap = cache[INSTALLED]
        return snap, f"installed ({snap.version})"
    if version not in available_versions(root):
        raise SnapshotError(f"no snapshot for DeepSpeed {version} "
                            f"(available: {version_listing(available_versions(root))}, or {INSTALLED})")
    return load(version, root), version


def run(args: argparse.Namespace, installed: InstalledSnapshot | None = None) -> int:
    """Compare two snapshots; ``installed`` extracts the importable DeepSpeed when OLD or NEW says so."""
    lang = language(getattr(args, "lang", None))
    try:
        only = parse_kinds(args.only) if args.only is not None else set(ChangeKind)
        fail_on = parse_kinds(args.fail_on) if args.fail_on is not None else set()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for option, given, kinds in (("--only", args.only, only), ("--fail-on", args.fail_on, fail_on)):
        if given is not None and not kinds:  # '' or ',,,' names no kind: refused alike, never "every kind"
            accepted = ", ".join(kind.short for kind in ChangeKind)
            raise UsageError(f"{option} needs a change kind, e.g. {option} defaults (accepted: {accepted})")
    if getattr(args, "hf", False):  # issue 27: two HF snapshots (flags and rules)
        from dsfields.hf.arguments import run_hf_diff

        return run_hf_diff(args.old, args.new, args.format, bool(fail_on))
    root = args.generated or repo_generated_dir()
    if getattr(args, "messages", False):  # issue 38: what a release can say about its config
        from dsfields.explain import render_message_changes

        for version in (args.old, args.new):
            if version not in available_versions(root):
                raise SnapshotError(f"no snapshot for DeepSpeed {version} "
                                    f"(available: {version_listing(available_versions(root))})")
        text, changed = render_message_changes(args.old, args.new, root, args.format, lang)
        if text:
            print(text)
        return 1 if changed and fail_on else 0
    cache: dict[str, Snapshot] = {}
    if getattr(args, "inference", False):  # issue 29: the init_inference document of each release
        from dsfields.model.store import load_inference

        document = chinese.text("diff.inference_config") if lang == "zh" and args.format in ("text",
            "markdown") else " (inference config)"
        old, old_label = load_inference(args.old, root), f"{args.old}{document}"
        new, new_label = load_inference(args.new, root), f"{args.new}{document}"
    else:
        old, old_label = _snapshot(args.old, root, installed, cache)
        new, new_label = _snapshot(args.new, root, installed, cache)
    # Asking to see or fail on description changes implies computing them.
    wanted_descriptions = ChangeKind.DESCRIPTION_CHANGED in fail_on or (
        args.only is not None and ChangeKind.DESCRIPTION_CHANGED in only)
    changes = diff_snapshots(old, new, descriptions=bool(args.descriptions) or wanted_descriptions)
    output = render([c for c in changes if c.kind in only], args.format, old_label, new_label,
                    filtered=args.only is not None)
    if output:
        if args.format in ("text", "markdown"):  # json and github keep English messages for CI filters
            output = localize(output, lang, "diff.")
        print(output)
    return 1 if any(c.kind in fail_on for c in changes) else 0


__all__ = ["Change", "ChangeKind", "diff_snapshots", "parse_kinds", "render", "show"]
