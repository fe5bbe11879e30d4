"""``dsfields lookup optimizer:AdamW`` / ``scheduler:WarmupDecayLR``: one optimizer or scheduler type.

Which params does AdamW take, what does WarmupDecayLR require, which class actually runs under
CPU offload? The snapshots carry DeepSpeed's catalogues (every ``type`` the engine builds, the
classes behind it, their constructor params and defaults, the keys the engine pops or rejects);
this answers from them, per release, with ``--history`` across releases, and says when a type that
a release no longer has was removed. Which class runs under which setting is curated
(``prose/class_choice.toml``): the snapshot lists the classes, not the engine's branch.
Stdlib only, like ``lookup``; imported only for these answers.
"""

from __future__ import annotations

from dsfields.field_answer import edit_distance
from dsfields.model import chinese, goals, prose
from dsfields.model.messages import localize
from dsfields.model.records import Catalog, CatalogEntry, Snapshot
from dsfields.model.store import available_versions, load_indexed
from dsfields.model.termsafe import shown
from dsfields.model.wording import source_text, value_text
from dsfields.terminal import LABEL_WIDTH, display_width, paragraphs, wrap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

SECTIONS = ("optimizer", "scheduler")

_LABELS = chinese.ByLanguage(
    {
        "type": "{section} type", "classes": "classes", "class": "class",
        "section": "section", "section_text": '{section}: "{type_key}" picks the class, "{params_key}" are its '
                                              "keyword arguments",
        "built_by": "built by", "name": "name", "any_case": "matched in any letter case",
        "exact": "exact spelling required", "constant": "constant {constant}", "from": "from",
        "engine": "engine keys", "engine_text": "{keys}: read and removed by the engine before the class is built",
        "engine_key": "engine key (read by the engine, see above)",
        "rejected": "rejected", "snapshot": "snapshot", "params": "params", "required": "required",
        "default": "default: {value}", "only": "only {classes}", "runs": "runs when",
        "runs_head": "which class runs (read from DeepSpeed {read}'s engine{note}):",
        "older": "; this release may differ", "not_curated": "not curated; see the explanation above",
        "not_importable": "not importable when the snapshot was made: its params are unknown",
        "var_keyword": "also takes any other keyword (**kwargs)",
        "not_passed": "params are not passed to a class as keywords: the engine reads them itself",
        "one_class": "always (the only class)",
        "removed_head": "{label}: removed — DeepSpeed {version} has no such {section} type",
        "removed_text": "Last in DeepSpeed {last}; gone from {gone} on. `dsfields lookup {label} --version {last}` "
                        "shows it as it was.",
        "later_head": "{label}: not yet — DeepSpeed {version} has no such {section} type",
        "later_text": "Added in DeepSpeed {first}.",
        "miss": 'no {section} type "{name}" in DeepSpeed {version}', "did_you_mean": "; did you mean:",
        "spelling": "(DeepSpeed wants this exact spelling)",
        "history": "history ({count} snapshots: {first} … {last}):",
    },
    lambda: {
        "type": chinese.text("catalog_answer.type"), "classes": chinese.text("catalog_answer.classes"),
            "class": chinese.text("catalog_answer.class"),
        "section": chinese.text("catalog_answer.section"), "section_text": chinese.text("catalog_answer.section_text"),
        "built_by": chinese.text("catalog_answer.built_by"), "name": chinese.text("catalog_answer.name"),
            "any_case": chinese.text("catalog_answer.any_case"),
        "exact": chinese.text("catalog_answer.exact"), "constant": chinese.text("catalog_answer.constant"),
            "from": chinese.text("catalog_answer.from"),
        "engine": chinese.text("catalog_answer.engine"), "engine_text": chinese.text("catalog_answer.engine_text"),
        "engine_key": chinese.text("catalog_answer.engine_key"),
        "rejected": chinese.text("catalog_answer.rejected"), "snapshot": chinese.text("catalog_answer.snapshot"),
            "params": chinese.text("catalog_answer.params"), "required": chinese.text("catalog_answer.required"),
        "default": chinese.text("catalog_answer.default"), "only": chinese.text("catalog_answer.only"),
            "runs": chinese.text("catalog_answer.runs"),
        "runs_head": chinese.text("catalog_answer.runs_head"),
        "older": chinese.text("catalog_answer.older"), "not_curated": chinese.text("catalog_answer.not_curated"),
        "not_importable": chinese.text("catalog_answer.not_importable"),
        "var_keyword": chinese.text("catalog_answer.var_keyword"),
        "not_passed": chinese.text("catalog_answer.not_passed"),
        "one_class": chinese.text("catalog_answer.one_class"),
        "removed_head": chinese.text("catalog_answer.removed_head"),
        "removed_text": chinese.text("catalog_answer.removed_text"),
        "later_head": chinese.text("catalog_answer.later_head"),
        "later_text": chinese.text("catalog_answer.later_text"),
        "miss": chinese.text("catalog_answer.miss"), "did_you_mean": chinese.text("catalog_answer.did_you_mean"),
        "spelling": chinese.text("catalog_answer.spelling"),
        "history": chinese.text("catalog_answer.history"),
    },
)


def label(lang: str, key: str, **values: Any) -> str:
    text = _LABELS.get(lang, _LABELS["en"]).get(key) or _LABELS["en"][key]
    return text.format(**values) if values else text


def split_query(query: str) -> tuple[str, str] | None:
    """``optimizer:AdamW`` → ``("optimizer", "AdamW")``; None when the query has no catalogue prefix."""
    head, colon, name = query.strip().partition(":")
    head = head.strip().lower()
    if not colon or head not in SECTIONS or not name.strip():
        return None
    return head, name.strip()


def find_entry(catalog: Catalog, name: str) -> CatalogEntry | None:
    """The entry DeepSpeed builds for ``"type": name``: the exact name, else a case-insensitive entry.

    The engine lower-cases a name that is one of its own (``AdamW`` → ``adamw``, before torch.optim is
    tried); every other name must be spelled exactly.
    """
    names = catalog.names
    if name in names:
        return names[name]
    folded = name.lower()
    entry = names.get(folded)
    return entry if entry is not None and entry.case_insensitive else None


def find_types(snapshot: Snapshot, name: str, section: str | None = None) -> list[tuple[Catalog, CatalogEntry]]:
    """Every catalogue entry ``name`` selects (both catalogues unless ``section`` is given)."""
    out = []
    for catalog_section in SECTIONS if section is None else (section,):
        catalog = snapshot.catalogs.get(catalog_section)
        entry = find_entry(catalog, name) if catalog is not None else None
        if catalog is not None and entry is not None:
            out.append((catalog, entry))
    return out


def spelling_suggestions(snapshot: Snapshot, name: str, section: str) -> list[str]:
    """Names of ``section``'s catalogue that differ from ``name`` in letter case or by a small typo."""
    catalog = snapshot.catalogs.get(section)
    if catalog is None:
        return []
    wanted = name.lower()
    scored = []
    for candidate in catalog.names:
        distance = edit_distance(wanted, candidate.lower(), max(2, len(wanted) // 4))
        if distance <= max(2, len(wanted) // 4):
            scored.append((distance, candidate))
    return [c for _, c in sorted(scored)][:5]


# --- history ------------------------------------------------------------------------------------


def type_states(section: str, name: str, generated: Path | str | None = None) -> list[tuple[str, CatalogEntry | None]]:
    """``(version, entry or None)`` for every committed release, in release order (a snapshot's index
    decodes only its catalogue, so the 77 releases cost well under a second)."""
    out = []
    for version in available_versions(generated):
        snapshot = load_indexed(version, generated)
        # The one catalogue asked for: decoding the other one too costs a fifth of the walk.
        catalog = snapshot.optimizers if section == "optimizer" else snapshot.schedulers
        out.append((version, find_entry(catalog, name) if catalog is not None else None))
    return out


def _class_params(entry: CatalogEntry) -> dict[str, dict[str, Any]]:
    return {c.name: {k: (p.default, p.required) for k, p in (c.params or {}).items()} for c in entry.classes}


def type_history(states: list[tuple[str, CatalogEntry | None]]) -> list[dict[str, Any]]:
    """Events between consecutive releases: introduced, removed (``old``: the last release that had it),
    class_added / class_removed, param_added / param_removed / default_changed / required_changed
    (``class``: which class)."""
    events: list[dict[str, Any]] = []
    previous: CatalogEntry | None = None
    last_version: str | None = None
    for number, (version, entry) in enumerate(states):
        if entry is None:
            if previous is not None:
                events.append({"version": version, "kind": "removed", "old": last_version, "new": None})
        elif previous is None:
            kind = "present" if number == 0 else ("introduced" if last_version is None else "reintroduced")
            events.append({"version": version, "kind": kind, "old": None, "new": [c.name for c in entry.classes]})
        else:
            events += _entry_changes(version, previous, entry)
        if entry is not None:
            last_version = version
        previous = entry
    return events


def _entry_changes(version: str, old: CatalogEntry, new: CatalogEntry) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    before, after = _class_params(old), _class_params(new)
    for name in after.keys() - before.keys():
        events.append({"version": version, "kind": "class_added", "old": None, "new": name})
    for name in before.keys() - after.keys():
        events.append({"version": version, "kind": "class_removed", "old": name, "new": None})
    for name in sorted(before.keys() & after.keys()):
        was, now = before[name], after[name]
        for param in sorted(now.keys() - was.keys()):
            events.append({"version": version, "kind": "param_added", "class": name, "old": None, "new": param})
        for param in sorted(was.keys() - now.keys()):
            events.append({"version": version, "kind": "param_removed", "class": name, "old": param, "new": None})
        for param in sorted(was.keys() & now.keys()):
            if was[param][0] != now[param][0]:
                events.append({"version": version, "kind": "default_changed", "class": name, "param": param,
                               "old": was[param][0], "new": now[param][0]})
            if was[param][1] != now[param][1]:
                events.append({"version": version, "kind": "required_changed", "class": name, "param": param,
                               "old": was[param][1], "new": now[param][1]})
    return sorted(events, key=lambda e: (e["kind"], str(e.get("class")), str(e.get("param") or e["new"] or e["old"])))


def _event_text(event: dict[str, Any]) -> str:
    kind, short = event["kind"], _short(str(event.get("class") or ""))
    if kind == "present":
        return "present in the oldest snapshot: " + (", ".join(map(_short, event["new"])) or "no class")
    if kind in ("introduced", "reintroduced"):
        return f"{kind}: " + (", ".join(map(_short, event["new"])) or "no class")
    if kind == "removed":
        return f"removed (last in {event['old']})"
    if kind == "class_added":
        return f"class added: {event['new']}"
    if kind == "class_removed":
        return f"class removed: {event['old']}"
    if kind == "param_added":
        return f"{short}: param added: {event['new']}"
    if kind == "param_removed":
        return f"{short}: param removed: {event['old']}"
    if kind == "default_changed":
        return f"{short}: default of {event['param']}: {value_text(event['old'])} → {value_text(event['new'])}"
    return f"{short}: {event['param']} {'now required' if event['new'] else 'no longer required'}"


def history_lines(events: list[dict[str, Any]], versions: list[str], width: int, lang: str) -> list[str]:
    """One line per release range, as ``lookup --history`` shows a field's."""
    if not versions:
        return []
    lines = [label(lang, "history", count=len(versions), first=versions[0], last=versions[-1])]
    order = {v: i for i, v in enumerate(versions)}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        grouped.setdefault(event["version"], []).append(event)
    starts = sorted(grouped, key=lambda v: order[v])
    spans = []
    for i, start in enumerate(starts):
        end = versions[order[starts[i + 1]] - 1] if i + 1 < len(starts) else versions[-1]
        if grouped[start][0]["kind"] == "removed":
            end = start if i + 1 == len(starts) else end
        spans.append(start if end == start else f"{start}–{end}")
    span_width = max((len(s) for s in spans), default=0)
    for span, start in zip(spans, starts, strict=True):
        text = "; ".join(_event_text(e) for e in grouped[start])
        lines += wrap(f"{span.ljust(span_width)}  {text}", width, "  ", " " * (4 + span_width))
    return lines


def gone_from(states: list[tuple[str, CatalogEntry | None]], version: str) -> tuple[str, ...] | None:
    """For a type absent from ``version``: ``("removed", last release before it that had it, first
    release without it)`` or ``("later", first release that has it)``; None if no release has it."""
    order = [v for v, _ in states]
    at = order.index(version) if version in order else len(order)
    having = [i for i, (_, e) in enumerate(states) if e is not None]
    if not having:
        return None
    earlier = [i for i in having if i < at]
    if earlier:
        last = earlier[-1]
        return "removed", order[last], order[last + 1]
    return "later", order[having[0]]


# --- text ---------------------------------------------------------------------------------------


def _short(class_name: str) -> str:
    return class_name.rpartition(".")[2] or class_name


def format_type(snapshot: Snapshot, catalog: Catalog, entry: CatalogEntry, asked: str, width: int,
                style: Any, lang: str = "en") -> list[str]:
    """The whole answer for one type: our explanation, where it is built, the classes and which one runs,
    every param with its default (and which classes take it), the rejected keys."""
    section = catalog.section
    key = f"{section}:{entry.name}"
    classes = entry.classes
    count = label(lang, "classes" if len(classes) != 1 else "class")
    head = f"{key}: {label(lang, 'type', section=section)}, {len(classes)} {count}"
    lines = wrap(head, width, "", "    ")
    lines[0] = style.bold(key) + lines[0][len(key):]
    if asked != entry.name:
        lines += wrap(f'"{catalog.type_key}": "{asked}" → {entry.name} ({label(lang, "any_case")})',
                      width, "  ", "    ")
    lines.append("")
    scope = prose.Scope.of_snapshot(snapshot)  # the release asked for: its pieces only, as its site page shows
    ours = prose.explain_type(section, entry.name, lang, scope) or (
        prose.explain_type(section, entry.name, "en", scope) if lang != "en" else None)
    if ours is not None:
        lines += paragraphs(ours.summary, width)
        if ours.body:
            lines += [""] + paragraphs(ours.body, width)
        if ours.pitfall:
            pitfall = chinese.text("catalog_answer.pitfall") if lang == "zh" else "Pitfall: "
            lines += [""] + paragraphs(pitfall + ours.pitfall, width)
        lines.append("")
    spelling = label(lang, "any_case") if entry.case_insensitive else label(lang, "exact")
    if entry.constant:
        spelling += ", " + label(lang, "constant", constant=entry.constant)
    rows: list[tuple[str, str | None]] = [
        ("section", label(lang, "section_text", section=section, type_key=catalog.type_key,
                          params_key=catalog.params_key)),
        ("built_by", localize(source_text(catalog.source) or "", lang, "lookup.") or None),
        ("name", spelling),
        ("from", entry.origin or None),
        ("engine", label(lang, "engine_text", keys=", ".join(entry.engine_params)) if entry.engine_params else None),
    ]
    for name, message in sorted(catalog.rejected_params.items()):
        # DeepSpeed's own words, marked as such in Chinese (issue 28)
        rows.append(("rejected", f"{name}: {message}" if lang != "zh" else chinese.text("catalog_answer.name_message",
                                                                                        name=name, message=message)))
    rows.append(("snapshot", f"DeepSpeed {snapshot.version}"))
    for row_label, text in rows:
        if text:
            lines += _row_cols(label(lang, row_label), text, width, style)
    lines += _class_lines(snapshot, section, entry, width, lang)
    lines += _param_lines(entry, ours.params if ours else {}, width, lang)
    return lines


def _row_cols(row_label: str, text: str, width: int, style: Any) -> list[str]:
    """``lookup``'s label column, padded by terminal columns so that Chinese labels line up too."""
    indent = " " * (2 + LABEL_WIDTH)
    lines = wrap(text, width, indent, indent) or [indent]
    pad = " " * max(1, LABEL_WIDTH - display_width(row_label))
    lines[0] = "  " + style.label(row_label) + pad + lines[0][len(indent):]
    return lines


def _class_lines(snapshot: Snapshot, section: str, entry: CatalogEntry, width: int, lang: str) -> list[str]:
    classes = entry.classes
    if not classes:
        return ["", label(lang, "not_passed")] if not entry.params_passed else []
    read = str(goals.class_choice().get("read_from") or "?")
    note = "" if read == snapshot.version else label(lang, "older")
    lines = ["", label(lang, "runs_head", read=read, note=note)]
    for cls in classes:
        where = source_text(cls.source)
        lines += wrap(f"{_short(cls.name)}  {cls.name}" + (f" ({where})" if where else ""), width, "  ", "      ")
        if len(classes) == 1:
            when = label(lang, "one_class")
        else:
            when = goals.runs_when(section, entry.name, cls.name, lang, prose.Scope.of_snapshot(snapshot)) or label(
                lang, "not_curated")
        lines += wrap(f"{label(lang, 'runs')}: {when}", width, "    ", "      ")
        if not cls.importable or cls.params is None:
            lines += wrap(label(lang, "not_importable"), width, "    ", "      ")
        elif cls.var_keyword:
            lines += wrap(label(lang, "var_keyword"), width, "    ", "      ")
    return lines


def _param_lines(entry: CatalogEntry, ours: dict[str, str], width: int, lang: str) -> list[str]:
    """Each param once: default(s), "required", the classes that take it when not all do, our line."""
    known = [c for c in entry.classes if c.params is not None]
    if not known and not entry.engine_params:
        return []
    names = sorted({p for c in known for p in (c.params or {})} | set(entry.engine_params))
    lines = ["", label(lang, "params") + ":"]
    name_width = min(max(len(n) for n in names), 28)
    for name in names:
        takers = [c for c in known if name in (c.params or {})]
        specs = [(c.params or {})[name] for c in takers]
        if name in entry.engine_params:
            detail = label(lang, "engine_key")  # popped before any class sees it: its class default is moot
        elif all(s.required for s in specs):
            detail = label(lang, "required")
        else:
            by_default: dict[str, list[str]] = {}
            shown: dict[str, str] = {}
            for cls, spec in zip(takers, specs, strict=True):
                if not spec.required:
                    key = value_text(_same_number(spec.default))
                    shown.setdefault(key, value_text(spec.default))
                    by_default.setdefault(key, []).append(_short(cls.name))
            if len(by_default) == 1:
                detail = label(lang, "default", value=shown[next(iter(by_default))])
            else:
                detail = label(lang, "default", value=" / ".join(
                    f"{shown[v]} ({', '.join(c)})" for v, c in by_default.items()))
        if takers and len(takers) < len(known) and name not in entry.engine_params:
            detail += "; " + label(lang, "only", classes=", ".join(_short(c.name) for c in takers))
        lines += wrap(detail, width, f"  {name.ljust(name_width)}  ", " " * (4 + name_width))
        if name in ours:
            lines += wrap(ours[name], width, " " * (4 + name_width), " " * (4 + name_width))
    return lines


def _same_number(value: Any) -> Any:
    """0 and 0.0 are one default to a user (classes spell the same default either way)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def format_gone(section: str, name: str, version: str, where: tuple[str, ...], lang: str, width: int) -> list[str]:
    key = f"{section}:{shown(name)}"
    if where[0] == "removed":
        return [label(lang, "removed_head", label=key, section=section, version=version), ""] + paragraphs(
            label(lang, "removed_text", label=key, last=where[1], gone=where[2]), width)
    return [label(lang, "later_head", label=key, section=section, version=version), ""] + paragraphs(
        label(lang, "later_text", first=where[1]), width)


def format_miss(snapshot: Snapshot, section: str, name: str, lang: str) -> list[str]:
    line = label(lang, "miss", section=section, name=shown(name), version=snapshot.version)  # the user's words
    suggestions = spelling_suggestions(snapshot, name, section)
    if not suggestions:
        return [line]
    return [line + label(lang, "did_you_mean")] + [
        f"  {section}:{s}" + (f"  {label(lang, 'spelling')}" if s.lower() == name.lower() else "")
        for s in suggestions]


# --- JSON ---------------------------------------------------------------------------------------


def type_json(catalog: Catalog, entry: CatalogEntry, lang: str, snapshot: Snapshot | None = None) -> dict[str, Any]:
    """The snapshot's entry untouched, the catalogue's own keys, our explanation (as it holds for ``snapshot``'s
    release) and class choice."""
    ours = prose.explain_type(catalog.section, entry.name, lang,
                              prose.Scope.of_snapshot(snapshot) if snapshot is not None else None)
    return {
        "kind": f"{catalog.section}_type",
        "path": catalog.section,
        "type": entry.name,
        "explanation": ours.as_dict() if ours else None,
        "entry": entry.raw,
        "catalog": {k: v for k, v in catalog.raw.items() if k != "names"},
        "runs_when": {c.name: goals.runs_when(catalog.section, entry.name, c.name, lang,
                                              prose.Scope.of_snapshot(snapshot) if snapshot is not None else None)
                      for c in entry.classes},
        "runs_when_read_from": goals.class_choice().get("read_from"),
    }


def gone_json(section: str, name: str, where: tuple[str, ...]) -> dict[str, Any]:
    if where[0] == "removed":
        return {"kind": f"removed_{section}_type", "path": section, "type": name, "last_version": where[1],
                "removed_in": where[2]}
    return {"kind": f"future_{section}_type", "path": section, "type": name, "added_in": where[1]}
