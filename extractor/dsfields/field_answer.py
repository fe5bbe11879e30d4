"""The answer to a field query: the paths a query names, and the answer as text or JSON.

``dsfields lookup KEY`` (and ``--inference``) answer with these; searching and formatting are pure functions
of the snapshot (``find``, ``suggest``, ``format_answer``, ``match_json``) so that tests and other consumers
(the package face, the inference document) can use them without the command line.
Stdlib only, like ``lookup``.
"""

from __future__ import annotations

from functools import cache

from dsfields.model import chinese, prose, termsafe
from dsfields.model.records import Field, Removed, Section, Snapshot, Source
from dsfields.model.wording import (
    allowed_text,
    at_source,
    auto_text,
    constraints_text,
    default_text,
    deprecation_text,
    effective_text,
    source_text,
    strictness_text,
    type_text,
    value_text,
)
from dsfields.terminal import LABEL_WIDTH, Style, paragraphs, wrap

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and the history engine cost start-up time; annotations are strings anyway
    from typing import Any

    from dsfields.model.history import HistoryEvent


class Match:
    """One answer to a query: a field, a section (with its fields) or a removed key."""

    __slots__ = ("path", "kind", "field", "section", "removed", "children", "removed_children", "concrete")

    def __init__(self, path: str, kind: str, field: Field | None = None, section: Section | None = None,
                 removed: Removed | None = None, children: tuple[Field, ...] = (),
                 removed_children: tuple[Removed, ...] = ()) -> None:
        self.path = path
        self.concrete: str | None = None
        """The path as asked when it names a user-named group of a pattern path (``path`` has ``*``)."""
        self.kind = kind
        """``"field"``, ``"section"`` or ``"removed"``."""
        self.field = field
        self.section = section
        self.removed = removed
        self.children = children
        """For sections: the field records directly inside, by key."""
        self.removed_children = removed_children
        """For sections: the keys DeepSpeed rejects inside, with its message."""


def make_match(snapshot: Snapshot, path: str) -> Match:
    """The match for a snapshot path, or for a concrete path of a pattern (``different_groups.wq1.params``)."""
    pattern = snapshot.resolve(path)
    if pattern != path:
        match = make_match(snapshot, pattern)
        match.concrete = path
        return match
    if path in snapshot.removed:
        return Match(path, "removed", field=snapshot.fields.get(path), removed=snapshot.removed[path])
    if path in snapshot.sections:
        children = tuple(sorted(snapshot.by_section.get(path, {}).values(), key=lambda r: r.key))
        gone = tuple(sorted(snapshot.removed_by_section.get(path, {}).values(), key=lambda r: r.key))
        return Match(path, "section", field=snapshot.fields.get(path), section=snapshot.sections[path],
                     children=children, removed_children=gone)
    return Match(path, "field", field=snapshot.fields[path])


def find_paths(names: list[tuple[str, str, str | None]], query: str) -> list[str]:
    """Every path ``query`` names, case-insensitively, from ``(path, key, python path)`` search names.

    A dotted query is a path: exact, else a path written with python names, else the tail of a
    longer path (``offload_param.device``). A plain word is compared with every key and python
    name, so a key used in several sections (``enabled``) yields each of them.
    """
    wanted = query.strip().lower()
    if not wanted:
        return []
    if "." in wanted:
        hits = [p for p, _, _ in names if p.lower() == wanted]
        if not hits:
            # A concrete group name (different_groups.wq1.params) answers with its pattern path.
            for candidate in dict.fromkeys((query.strip(), wanted)):
                pattern = _pattern_for(names, candidate)
                if pattern is not None:
                    return [pattern]
        if not hits:
            hits = [
                p for p, _, pp in names
                if p.lower().endswith("." + wanted) or (pp is not None and (pp == wanted or pp.endswith("." + wanted)))
            ]
        return hits
    return [p for p, key, pp in names if key == wanted or (pp or "").rpartition(".")[2] == wanted]


def _pattern_for(names: list[tuple[str, str, str | None]], path: str) -> str | None:
    """The pattern path (``*`` for a user-named key) that ``path`` is an instance of, most specific first."""
    parts = path.split(".")
    patterns = sorted((p for p, _, _ in names if "*" in p), key=lambda p: (p.count("*"), p))
    for pattern in patterns:
        segments = pattern.split(".")
        if len(segments) == len(parts) and all(s in ("*", q) for s, q in zip(segments, parts, strict=True)):
            return pattern
    return None


def find(snapshot: Snapshot, query: str) -> list[Match]:
    """Every path ``query`` names (:func:`find_paths`), as matches with their records."""
    matches = []
    for path in find_paths(snapshot.names, query):
        match = make_match(snapshot, path)
        if "*" in path and "*" not in query:
            match.concrete = query.strip()
        matches.append(match)
    return matches


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


def suggest(snapshot: Snapshot, query: str, limit: int = 5) -> list[str]:
    """Paths whose key, path or python name is closest to ``query`` (typos), then those containing it."""
    wanted = query.strip().lower()[:200]  # a typo is short; a pasted paragraph must not cost quadratic time
    if not wanted:
        return []
    max_distance = max(2, len(wanted) // 4)
    scored: list[tuple[int, str]] = []
    containing: list[str] = []
    for path, key, python_path in snapshot.names:
        names = {path.lower(), key}
        if python_path:
            names |= {python_path, python_path.rpartition(".")[2]}
        distance = min(edit_distance(wanted, name, max_distance) for name in names)
        if distance <= max_distance:
            scored.append((distance, path))
        elif len(wanted) >= 3 and any(wanted in name for name in names):
            containing.append(path)
    ranked = [path for _, path in sorted(scored, key=lambda s: (s[0], s[1].count("."), s[1]))]
    # the same words reordered or split otherwise (comm_overlap → zero_optimization.overlap_comm), at any level
    from dsfields.model.wording import same_words

    section, _, leaf = wanted.rpartition(".")
    reordered = [path for path, key, _ in snapshot.names if same_words(leaf, [key]) and (
        not section or path.lower().startswith(section + "."))]
    return list(dict.fromkeys(reordered + ranked + containing))[:limit]  # a path listed again under its alias: once


@cache
def _row_labels_zh() -> dict[str, str]:
    """issue 28: the row labels of a lookup answer in Chinese (``"auto"`` stays: it is the value); read when a
    Chinese answer is written (an English one never parses the catalogue)."""
    return {"key": chinese.text("field_answer.key"), "python name": chinese.text("field_answer.python_name"),
            "aliases": chinese.text("field_answer.aliases"), "read at": chinese.text("field_answer.read_at"),
            "section": chinese.text("field_answer.section"), "effective": chinese.text("field_answer.effective"),
            "also read": chinese.text("field_answer.also_read"),
            "constraints": chinese.text("field_answer.constraints"), "allowed": chinese.text("field_answer.allowed"),
            "requires": chinese.text("field_answer.requires"), "defined at": chinese.text("field_answer.defined_at"),
            "constant": chinese.text("field_answer.constant"), "snapshot": chinese.text("field_answer.snapshot"),
            "rejected at": chinese.text("field_answer.rejected_at"),
            "official": chinese.text("field_answer.official"), "section of": chinese.text("field_answer.section_of"),
            "model": chinese.text("field_answer.model"), "unknown keys": chinese.text("field_answer.unknown_keys"),
            "checked by": chinese.text("field_answer.checked_by")}


def _row(label: str, text: str, width: int, style: Style, lang: str = "en") -> list[str]:
    indent = " " * (2 + LABEL_WIDTH)
    if lang == "zh":  # our words in the row (what "auto" does, ...) in Chinese before wrapping
        from dsfields.model.messages import localize

        text = localize(text, lang, "lookup.")
    lines = wrap(text, width, indent, indent) or [indent]
    if lang == "zh":
        label = _row_labels_zh().get(label, label)
    # padded by display width: a Chinese character takes two columns
    pad = LABEL_WIDTH - sum(2 if "\u2e80" <= char <= "\uffef" else 1 for char in label)
    lines[0] = "  " + style.label(label + " " * max(pad, 1)) + lines[0][len(indent):]
    return lines



def _header(text: str, path: str, width: int, style: Style) -> list[str]:
    lines = wrap(text, width, "", "    ")
    if lines and lines[0].startswith(path):
        lines[0] = style.bold(path) + lines[0][len(path):]
    return lines


def _section_name(path: str) -> str:
    return path if path else "(top level)"


_DOCSTRING_LABEL = chinese.ByLanguage("DeepSpeed's docstring:", lambda: chinese.text("field_answer.docstring_label"))


def _docstring_label(lang: str) -> str:
    return _DOCSTRING_LABEL.get(lang, _DOCSTRING_LABEL["en"])


def _explanation(snapshot: Snapshot, path: str, lang: str, width: int) -> list[str]:
    """Our own explanation (summary, body, pitfall) as it holds for the snapshot's release, before
    DeepSpeed's docstring."""
    from dsfields.model.inference_prose import explain_for  # each document its own prose (issue 29)

    text = explain_for(snapshot.document, path, lang, prose.Scope.of_snapshot(snapshot))
    if text is None:
        return []
    lines = paragraphs(text.summary, width)
    if text.body:
        lines += [""] + paragraphs(text.body, width)
    if text.pitfall:
        pitfall = chinese.text("field_answer.pitfall") if lang == "zh" else "Pitfall: "
        lines += [""] + paragraphs(pitfall + text.pitfall, width)
    return lines + [""]


def format_field(snapshot: Snapshot, match: Match, width: int, style: Style, lang: str = "en") -> list[str]:
    record = match.field
    assert record is not None
    enum = snapshot.enum_of(record)
    lines = _header(f"{match.path}: {type_text(record, lang)} {default_text(record, enum)}", match.path, width, style)
    lines += _pattern_note(match, width)
    if record.deprecated:
        said = deprecation_text(record.deprecated)
        if lang == "zh":  # before wrapping, so a phrase is whole; DeepSpeed's own message marked as such
            from dsfields.model.messages import ORIGINAL, localize

            message = str(record.deprecated.message or "")
            said = localize(said.replace("; " + message,
                                         "；" + ORIGINAL + message) if message else said,
                            lang, "lookup.")
        lines += [style.warn(line) for line in wrap(said, width, "  ", "    ")]
    lines.append("")
    lines += _explanation(snapshot, match.path, lang, width)
    if record.description:
        lines += [_docstring_label(lang)] + paragraphs(record.description, width) + [""]
    section = snapshot.sections.get(record.section)
    rows: list[tuple[str, str | None]] = [
        ("key", record.key),
        ("python name", _python_name_text(record, section)),
        ("aliases", ", ".join(record.raw.get("aliases") or ()) or None),
        ("read at", _read_at_text(record.raw.get("read_at"))),
        ("section", f"{_section_name(record.section)} — {strictness_text(section)}"),
        ("effective", effective_text(record)),
        ("also read", _other_defaults_text(record)),
        ("constraints", constraints_text(record.constraints)),
        ("allowed", allowed_text(record, enum)),
        ('"auto"', auto_text(record.auto, record.truthiness, record.type, record.key)),
        ("requires", requires_text(record)),
        ("checked by", checked_by_text(record)),
        ("defined at", source_text(record.source)),
        ("constant", _constant_text(record.constant)),
        ("official", _official_text(snapshot, record)),
        ("snapshot", f"DeepSpeed {snapshot.version}"),
    ]
    for label, text in rows:
        if text:
            lines += _row(label, text, width, style, lang)
    return lines


def _official_text(snapshot: Snapshot, record: Field) -> str | None:
    """Where DeepSpeed's official config page (read at the release's tag) disagrees with its code about the key."""
    from dsfields.model import official_docs

    if snapshot.document != "training":
        return None
    said = []
    for d in official_docs.disagreements_of(record.path, record.raw, official_docs.load(snapshot.version)):
        where = f"{d.source.get('file')}:{d.source.get('line')}" if d.source.get("file") else "?"
        what = "type" if d.kind == "type" else "default"
        shown = str if d.kind == "type" else value_text
        said.append(f"the official page ({d.docs_ref}) says the {what} is {shown(d.docs)}; the code's is "
                    f"{shown(d.code)} ({where})")
    return "; ".join(said) or None


def _read_at_text(reads: Any) -> str | None:
    """Inference document: where ``init_inference``'s engine reads the field outside the model (static witness)."""
    if not reads:
        return None
    first = ", ".join(f"{r['file']}:{r['line']}" for r in reads[:3])
    return first + (f" (+{len(reads) - 3} more)" if len(reads) > 3 else "")


def _pattern_note(match: Match, width: int) -> list[str]:
    if not match.concrete:
        return []
    group = next((c for c, p in zip(match.concrete.split("."), match.path.split("."), strict=False) if p == "*"), "")
    return wrap(f'{termsafe.shown(match.concrete)} resolves to the pattern path {match.path}: '
                f'"{termsafe.shown(group)}" is a user-named group '
                "(any name works there)", width, "  ", "    ")


def _python_name_text(record: Field, section: Section | None) -> str:
    if record.python_name:
        model = section.model_name if section else None
        return record.python_name + (f" ({model})" if model else "")
    function = record.source.function if record.source else None
    return "none: read from the dict" + (f" by {function}()" if function else "")


def _other_defaults_text(record: Field) -> str | None:
    seen: set[tuple[str, str]] = set()
    parts = []
    for other in record.other_defaults:
        text = value_text(other.get("default"))
        where = source_text(Source(other["source"]) if isinstance(other.get("source"), dict) else None) or "?"
        # The same read site can be recorded more than once; say each one once.
        if (text, where) not in seen:
            seen.add((text, where))
            parts.append(f"with default {text} at {where}")
    return "; ".join(parts) or None


def requires_text(record: Any) -> str | None:
    """The keys of the section some values of this key need (``enabled: true`` requires ``max_tokens``)."""
    parts = []
    for requirement in record.requires:
        when = requirement.get("when")
        values = "a true value" if when == "truthy" else " or ".join(when or []) or "some values"
        where = at_source(requirement.get("source"))
        beside = requirement.get("with")
        only = f" and {', '.join(beside)} is set" if isinstance(beside, list) and beside else ""
        parts.append(f'"{requirement["key"]}" when set to {values}{only}{where}')
    for needed in getattr(record, "requires_values", ()):  # another section's key, one of a few values
        where = at_source(needed.get("source"))
        values = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in needed["values"])
        parts.append(f'"{needed["path"]}" in {values} when set to a true value{where}')
    group = getattr(record, "required_in_group", None)  # every entry of a user-named group must give this key
    if group:
        parts.append(f"this key, in every entry of the user-named group{at_source(group.get('source'))}")
    present = getattr(record, "required_with_section", None)  # once its section is given, DeepSpeed needs it
    if present:
        parts.append(f"this key, whenever its section is given{at_source(present.get('source'))}")
    for fact in getattr(record, "compared_with", ()):  # schedule_offset_end >= schedule_offset
        parts.append(f'a value {fact["op"]} "{fact["key"]}"{at_source(fact.get("source"))}')
    return "; ".join(parts) or None


def checked_by_text(record: Any) -> str | None:
    """Where a choice list is checked outside DeepSpeedConfig: the class DeepSpeed builds from the section."""
    built = getattr(record, "choices_source", None)
    if not built:
        return None
    return f"the allowed values, when DeepSpeed builds {built.get('built')}{at_source(built)}"


def _constant_text(constant: dict[str, Any] | None) -> str | None:
    if not constant:
        return None
    text = f"{constant['name']} ({constant['file']}:{constant['line']})"
    if constant.get("default_name"):
        text += f", default {constant['default_name']} (line {constant.get('default_line')})"
    return text


def format_removed(snapshot: Snapshot, match: Match, width: int, style: Style, lang: str = "en") -> list[str]:
    removed = match.removed
    assert removed is not None
    lines = _header(f"{match.path}: removed", match.path, width, style)
    lines += [""] + ([chinese.text("field_answer.deepspeed")] if lang == "zh" else [])
    lines += [style.error(line) for line in paragraphs(removed.message, width)] + [""]
    lines += _explanation(snapshot, match.path, lang, width)
    lines += _row("key", removed.key, width, style, lang)
    lines += _row("section", _section_name(removed.section), width, style, lang)
    lines += _row("rejected at", source_text(removed.source) or "?", width, style, lang)
    lines += _row("snapshot", f"DeepSpeed {snapshot.version} raises this message if the key is set",
                  width, style, lang)
    return lines


def one_line(snapshot: Snapshot, path: str, width: int, name: str, name_width: int = 0, lang: str = "en") -> str:
    """``name  type (default: …)`` cut to ``width``: for section listings and ambiguous answers (``lang``: our words
    in it, "(default: …)", in that language)."""
    record = snapshot.fields.get(path)
    if path in snapshot.removed:
        detail = "removed"
    elif path in snapshot.sections:
        detail = f"section, {len(snapshot.by_section.get(path, {}))} fields"
    elif record is None:
        detail = "?"
    else:
        detail = f"{type_text(record, compact=True)} {default_text(record, compact=True)}"
        if record.deprecated:
            # First, so that cutting the line to the terminal width never hides it.
            new = record.deprecated.new_param
            if new and lang != "en":  # DeepSpeed's own words ("offload_param or offload_optimizer"): quoted
                new = f'"{new}"'
            detail = (f"deprecated → {new}; " if new else "deprecated; ") + detail
    if lang != "en":
        from dsfields.model.messages import localize

        detail = localize(detail, lang, "lookup.")
    line = f"  {name.ljust(name_width)}  {detail}"
    return line if len(line) <= width else line[: width - 1] + "…"


def format_section(snapshot: Snapshot, match: Match, width: int, style: Style, lang: str = "en") -> list[str]:
    section = match.section
    assert section is not None
    described = match.field
    lines = _header(f"{match.path}: section, {len(match.children)} fields", match.path, width, style)
    lines += _pattern_note(match, width) + [""]
    lines += _explanation(snapshot, match.path, lang, width)
    description = section.description or (described.description if described else None)
    if description:
        lines += [_docstring_label(lang)] + paragraphs(description, width) + [""]
    lines += _row("section of", _section_name(section.parent or ""), width, style, lang)
    if section.model:
        module, _, name = section.model.rpartition(".")
        lines += _row("model", f"{name} ({module})", width, style, lang)
    lines += _row("unknown keys", strictness_text(section), width, style, lang)
    if described and described.python_name:
        lines += _row("python name", described.python_name, width, style, lang)
    lines += _row("defined at", source_text(section.source) or "?", width, style, lang)
    lines += _row("snapshot", f"DeepSpeed {snapshot.version}", width, style, lang)
    entries: list[Field | Removed] = [*match.children, *match.removed_children]
    if entries:
        name_width = min(max(len(r.key) for r in entries), width - 36)
        lines += ["", "fields:"]
        lines += [one_line(snapshot, r.path, width, r.key, name_width, lang) for r in entries]
    return lines


def format_choices(snapshot: Snapshot, query: str, matches: list[Match], width: int, lang: str = "en") -> list[str]:
    if query.strip() == "*":
        lines = [f'"{termsafe.shown(query)}" stands for a key you name; DeepSpeed {snapshot.version} has '
                 f'{len(matches)} such path{"s" if len(matches) != 1 else ""}; ask for one by its path:']
    else:
        lines = [f'"{termsafe.shown(query)}" names {len(matches)} fields in DeepSpeed {snapshot.version}; '
                 "ask for one by its path:"]
    if lang != "en":
        from dsfields.model.messages import localize

        lines = [localize(lines[0], lang, "lookup.")]
    name_width = min(max(len(m.path) for m in matches), width - 36)
    for m in matches:
        lines.append(one_line(snapshot, m.path, width, m.path, name_width, lang))
    return lines


def history_lines(events: list[HistoryEvent], versions: list[str], width: int, lang: str = "en") -> list[str]:
    """One line per version range: the release a change appeared in, up to the release before the next
    (``lang`` zh: each range's text in Chinese before it is wrapped)."""
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
        text = f"{span.ljust(span_width)}  {'; '.join(texts)}"
        if lang == "zh":
            from dsfields.model.messages import localize

            text = localize(text, lang, "lookup.")
        lines += wrap(text, width, "  ", " " * (4 + span_width))
    return lines


def _event_text(event: HistoryEvent, first: bool) -> str:
    from dsfields.model.history import EventKind

    if event.kind in (EventKind.INTRODUCED, EventKind.REINTRODUCED):
        new = event.new if isinstance(event.new, dict) else {}
        what = f"{new.get('type') or 'any'} (default: {value_text(new.get('default'))})"
        if event.kind is EventKind.INTRODUCED and first:
            return f"present in the oldest snapshot: {what}"
        return f"{event.kind.message}: {what}"
    if event.kind in (EventKind.DEFAULT_CHANGED, EventKind.TYPE_CHANGED):
        show = value_text if event.kind is EventKind.DEFAULT_CHANGED else str
        return f"{event.kind.message}: {show(event.old)} → {show(event.new)}"
    if event.kind is EventKind.CONSTRAINTS_CHANGED:
        from dsfields.model.wording import constraints_text

        before = constraints_text(event.old or {}) or "none"
        after = constraints_text(event.new or {}) or "none"
        return f"constraints changed: {before} → {after}"
    if event.kind is EventKind.CHOICES_CHANGED:
        return f"choices changed: {_choices(event.old)} → {_choices(event.new)}"
    if event.kind is EventKind.DEPRECATED:
        new = event.new.get("new_param") if isinstance(event.new, dict) else None
        return f"deprecated → {new}" if new else "deprecated"
    if event.kind is EventKind.BECAME_REMOVED:
        return f"{event.kind.message}" + (f": {event.new}" if event.new else "")
    if event.kind is EventKind.RENAMED:
        return f"renamed: {event.old} → {event.new}"
    return event.kind.message


def _choices(choices: Any) -> str:
    """A choice list as history shows it: the values, or "any" where the key had none."""
    if not isinstance(choices, list):
        return "any"
    return ", ".join(value_text(c) for c in choices)


# --- JSON ---------------------------------------------------------------------------------------


def match_json(snapshot: Snapshot, match: Match, lang: str = "en") -> dict[str, Any]:
    """The snapshot's own records, untouched, so a script gets exactly what the snapshot says; our
    explanation beside them (``null`` where we have none)."""
    enum = snapshot.enum_of(match.field) if match.field else None
    from dsfields.model.inference_prose import explain_for

    explanation = explain_for(snapshot.document, match.path, lang, prose.Scope.of_snapshot(snapshot))
    return {
        "explanation": explanation.as_dict() if explanation else None,
        "path": match.path,
        "concrete_path": match.concrete,
        "kind": match.kind,
        "field": match.field.raw if match.field else None,
        "section": match.section.raw if match.section else None,
        "removed": match.removed.raw if match.removed else None,
        "enum": enum.raw if enum else None,
        "fields": {r.path: r.raw for r in match.children},
        "removed_fields": {r.path: r.raw for r in match.removed_children},
    }



def format_answer(snapshot: Snapshot, query: str, matches: list[Match], width: int, style: Style,
                  lang: str = "en") -> list[str]:
    """The text answer: one match in full, one line per match when ambiguous, suggestions for a miss."""
    if not matches:
        config = "" if snapshot.document == "training" else "'s inference config"
        lines = [f'no field "{termsafe.shown(query)}" in DeepSpeed {snapshot.version}{config}']
        suggestions = suggest(snapshot, query)
        if suggestions:
            lines[0] += "; did you mean:"
            lines += [f"  {path}" for path in suggestions]
        else:
            lines.append("  (a section name, e.g. zero_optimization, lists the fields inside it)")
        return lines
    # A bare wildcard names no one key: the paths it stands in are listed, never one of them picked.
    if len(matches) > 1 or query.strip() == "*":
        return format_choices(snapshot, query, matches, width, lang)
    formatter = {"field": format_field, "section": format_section, "removed": format_removed}
    return formatter[matches[0].kind](snapshot, matches[0], width, style, lang)
