"""Jinja filters of the docs templates: plain functions, registered in one place (:data:`FILTERS`).

Snapshot values end up inside Markdown (often inside table cells), where a ``|``, ``<`` or ``*``
from a docstring or a regex constraint would silently break the page. Every value therefore goes
through a filter here that escapes it for its spot; templates never print raw snapshot text.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from typing import Any

from dsfields.links import anchor
from dsfields.model import chinese, wording
from dsfields.model.records import Field, reader_constant

GITHUB_BLOB = "https://github.com/deepspeedai/DeepSpeed/blob/v{version}/{file}#L{line}"
"""DeepSpeed tags its releases ``v<version>``; snapshot files are relative to site-packages."""

_CONSTRAINT_SIGNS = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤", "multiple_of": "multiple of",
                     "min_length": "min length", "max_length": "max length", "pattern": "matches"}
_BREAK_AFTER = re.compile(r"([._/,])(?=[^._/,])")
"""Where a long key, path or value may wrap: after a dot, underscore, slash or comma (``<wbr>``)."""
_CODE_SPAN = re.compile(r"``(.+?)``|`([^`]+)`")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def json_value(value: Any) -> str:
    """A value as compact JSON, as a user would write it in ``ds_config.json``."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@lru_cache(maxsize=1 << 16, typed=True)
def _hcode_cached(value: Any) -> str:
    return _hcode(value)


def hcode(value: Any) -> str:
    """Memoised :func:`_hcode` for text (the same keys and docstrings recur on every release's pages)."""
    return _hcode_cached(value) if isinstance(value, str) else _hcode(value)


def _hcode(value: Any) -> str:
    """Inline code as HTML, for raw HTML blocks; safe in table cells too (``|`` cannot split a cell)."""
    text = value if isinstance(value, str) else json_value(value)
    escaped = html.escape(text, quote=False).replace("|", "&#124;")
    return "<code>" + (_BREAK_AFTER.sub(r"\1<wbr>", escaped) if len(text) > 24 else escaped) + "</code>"


def code(value: Any, as_html: bool = False) -> str:
    """Inline code: a Markdown code span where that is safe, else the HTML form.

    Code spans are the cheaper form for Python-Markdown (the full site renders ~25 000 of them);
    text with a backtick, a pipe or edge spaces would break a span or a table cell, so it gets HTML.
    """
    text = value if isinstance(value, str) else json_value(value)
    if as_html or not text or "`" in text or "|" in text or text != text.strip() or "\n" in text:
        return hcode(text)
    return f"`{text}`"


def jcode(value: Any, as_html: bool = False) -> str:
    """A JSON value as inline code (strings quoted: ``"cpu"`` vs the number ``1``)."""
    return code(json_value(value), as_html)


def _number(value: float) -> str:
    # The seed writes 1e9: keep that spelling rather than Python's 1000000000.0.
    if value.is_integer() and abs(value) >= 1e6:
        mantissa, exponent = f"{value:e}".split("e")
        return f"{float(mantissa):g}e{int(exponent)}"
    return json.dumps(value)


def format_config(value: Any, indent: int = 0) -> str:
    """JSON with two-space indentation, key order kept, and integral large floats as ``1e9``."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        if all(not isinstance(v, dict | list) for v in value.values()) and len(value) <= 2 and indent:
            return "{ " + ", ".join(f"{json.dumps(k)}: {format_config(v)}" for k, v in value.items()) + " }"
        items = [f"{pad}{json.dumps(k)}: {format_config(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(value, float):
        return _number(value)
    return json.dumps(value, ensure_ascii=False)


def config_value(value: Any, as_html: bool = False) -> str:
    """A value from a config example as inline code, spelled as the example writes it (``1e9``)."""
    return code(format_config(value), as_html)


def _escape_text(text: str) -> str:
    # Entities for HTML's characters (Markdown has no escape for "<"), backslashes for Markdown's.
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def md_text(text: str | None, *, one_line: bool = False) -> str:
    """Docstring or comment text as Markdown: RST/Markdown code spans kept, everything else escaped.

    Line breaks inside a paragraph are joined (docstrings wrap at 80 columns); blank lines stay
    paragraph breaks unless ``one_line`` (table cells).
    """
    if not text:
        return ""
    paragraphs = [" ".join(line.strip() for line in block.splitlines() if line.strip())
                  for block in re.split(r"\n\s*\n", text.strip())]
    out = []
    for paragraph in paragraphs:
        pieces, last = [], 0
        for match in _CODE_SPAN.finditer(paragraph):
            pieces.append(_escape_text(paragraph[last:match.start()]))
            pieces.append(code(match.group(1) or match.group(2)))
            last = match.end()
        pieces.append(_escape_text(paragraph[last:]))
        out.append("".join(pieces))
    return (" " if one_line else "\n\n").join(p for p in out if p)


def md_cell(text: str | None) -> str:
    return md_text(text, one_line=True)


@lru_cache(maxsize=1 << 16, typed=True)
def _html_text_cached(value: Any) -> str:
    return _html_text(value)


def html_text(value: Any) -> str:
    """Memoised :func:`_html_text` for text (the same keys and docstrings recur on every release's pages)."""
    return _html_text_cached(value) if isinstance(value, str) else _html_text(value)


def _html_text(text: str | None) -> str:
    """Docstring or message text for a raw HTML block: one line, escaped, code spans as ``<code>``."""
    if not text:
        return ""
    flat = " ".join(str(text).split())
    pieces, last = [], 0
    for match in _CODE_SPAN.finditer(flat):
        pieces.append(html.escape(flat[last:match.start()], quote=False))
        pieces.append(hcode(match.group(1) or match.group(2)))
        last = match.end()
    pieces.append(html.escape(flat[last:], quote=False))
    return "".join(pieces)


def first_sentence(text: str | None, limit: int = 160) -> str:
    """The docstring's first sentence, for one-line table cells."""
    if not text:
        return ""
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", flat)
    sentence = flat[: match.start()] if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def source_url(source: dict[str, Any] | None, version: str) -> str:
    if not source or not source.get("file"):
        return ""
    return GITHUB_BLOB.format(version=version, file=source["file"], line=source.get("line") or 1)


def source_label(source: dict[str, Any] | None) -> str:
    if not source or not source.get("file"):
        return ""
    return f"{source['file']}:{source.get('line')}"


def source_anchor(source: dict[str, Any], version: str) -> str:
    """The link to DeepSpeed's source line as the page holds it: ``<a class="dsf-src" data-v="0.14.4">file:line</a>``.
    ``assets/dsfields.js`` gives it its href, :func:`source_url` from the label and the release (for the release
    the reader came for, on a page stored once for several): the GitHub address is not repeated in every link
    (~90 bytes each, tens of thousands on the site)."""
    return f'<a class="dsf-src" data-v="{html.escape(version)}">{html.escape(source_label(source))}</a>'


def source_a(source: dict[str, Any] | None, version: str) -> str:
    """:func:`source_link` for raw HTML blocks."""
    if not source or not source.get("file"):
        return "unknown"
    return source_anchor(source, version)


def source_link(source: dict[str, Any] | None, version: str, _: Any = None) -> str:
    """The source line's link (:func:`source_anchor`), with the reading function when there is one (worded by the
    page's translator ``_``)."""
    if not source or not source.get("file"):
        return "unknown"
    link = source_anchor(source, version)
    function = source.get("function")
    if not function:
        return link
    return (_ or str)("{source} in {function}").format(source=link, function=code(function + "()"))


def default_text(record: dict[str, Any] | Field, as_html: bool = False) -> str:
    """The default as a user reads it (worded by :func:`dsfields.model.wording.default_words`), values as code."""
    field = record if isinstance(record, Field) else Field(record)
    return "".join((source_number(text) or code(text, as_html) if as_html else code(text)) if kind == "code" else text
                   for kind, text in wording.default_words(field))


def source_number(text: str) -> str | None:
    """A round integer as the source writes it, the exact integer on hover: ``<abbr title="500000000">``
    around ``5e8`` (:func:`dsfields.model.wording.scientific`); None for any other text."""
    if not text.isdigit() and not (text.startswith("-") and text[1:].isdigit()):
        return None
    spelled = wording.scientific(int(text))
    return f'<abbr class="dsf-num" title="{text}">{hcode(spelled)}</abbr>' if spelled else None


_OWN_JSON = {"str": {"string"}, "int": {"integer"}, "float": {"number", "integer"}, "bool": {"boolean"}}
"""The JSON types a value of each python type is written as."""


def type_text(record: dict[str, Any], as_html: bool = False, lang: str = "en") -> str:
    """The type line of a key's page: its python type, and the JSON types its reader takes. A dict reader taking
    JSON types beyond its type's (``autotuning.exps_dir``: a truthiness assert, then a path) says it passes the value
    on unconverted: the types listed get past the reader, not necessarily the code that uses the value."""
    kind = record.get("type") or "any"
    json_types = record.get("json_types") or []
    text = code(kind, as_html)
    # JSON type names are spellings, shown as code like the python type (a page in Chinese keeps them).
    names = " / ".join(code(name, as_html) for name in json_types)
    if json_types and kind == "any":
        text = names
    elif json_types and record.get("reader") == "dict" and kind in _OWN_JSON \
            and not set(json_types) <= _OWN_JSON[kind]:
        if lang == "zh":
            given = chinese.text("docs.filters.read_as_given").format(names=names, kind=code(kind, as_html))
            text += f"（{given}）"
        else:
            text += (f" (read as given: JSON {names} all get past the config reader, which does not convert them to "
                     f"{code(kind, as_html)})")
    elif json_types:
        text += " (JSON " + names + ")"
    return text


integer_taking_true = wording.integer_taking_true


def integer_taking_true_text(info: dict[str, Any], lang: str = "en") -> str:
    """:func:`dsfields.model.wording.integer_taking_true_text` with HTML code spans (the same words as lookup)."""
    return wording.integer_taking_true_text(info, lang, hcode)


def constraints_text(constraints: dict[str, Any] | None) -> str:
    if not constraints:
        return ""
    return ", ".join(f"{_CONSTRAINT_SIGNS.get(name, name)} {jcode(value)}"
                     for name, value in sorted(constraints.items()))


def choices_text(choices: list[Any] | None) -> str:
    return ", ".join(jcode(choice) for choice in choices or [])


def auto_text(auto: dict[str, Any] | None, as_html: bool = False, truthy: bool = False,
              kind: str | None = None, key: str | None = None) -> str:
    """What DeepSpeed alone does with ``"auto"`` (``wording.auto_case``; the HF Trainer integration fills some in
    first), in the site's words; ``truthy``: the release's reader tests the value's truth; ``kind``: the key's
    type."""
    if not auto:
        return ""
    error = auto.get("error")
    case = wording.auto_case(bool(auto.get("accepted")), auto.get("becomes"), truthy, kind,
                             wording.blocked_by(error, key) is not None)
    if case == "rejected":
        return "rejected" + (f": {code(error, as_html)}" if error else "")  # "rejected: " is translated by prefix
    if case == "blocked":  # translated by prefix too
        return f"{NOT_JUDGED}{code(error, as_html)}"
    return {  # each whole: the Chinese catalogue's site group holds these sentences as they are said
        "default": "accepted; the default is used",
        "truthy": 'accepted and kept as the string <code>"auto"</code>, which counts as true: it switches this on',
        "number": 'the config reader accepts it but keeps the string <code>"auto"</code> where DeepSpeed expects a '
                  'number: code that uses the value as a number fails or misreads it',
        "bool": 'accepted and kept as the string <code>"auto"</code>, where DeepSpeed expects true or false',
        "kept": 'accepted and kept as the string <code>"auto"</code>',
    }.get(case, "accepted")


NOT_JUDGED = "not judged, the probe stopped first on another key: "
"""What the site says before the probe's error where it named another key than the one probed."""


def auto_short(auto: dict[str, Any] | None, kind: str | None = None, key: str | None = None) -> str:
    if not auto:
        return ""
    case = wording.auto_case(bool(auto.get("accepted")), auto.get("becomes"), False, kind,
                             wording.blocked_by(auto.get("error"), key) is not None)
    return {"rejected": "error", "blocked": "not judged", "number": "kept as string, not a number",
            "bool": "kept as string, not a boolean",
            "default": "→ default", "kept": "kept as string"}.get(case, "accepted")


def unknown_keys_text(section: dict[str, Any] | None) -> str:
    """What happens to a misspelled key in this section."""
    if not section:
        return ""
    if section.get("passthrough"):
        return "passed on as a whole: any key is kept, a typo goes unnoticed"
    return {
        "error": "rejected: DeepSpeed raises a validation error",
        "ignored": "silently ignored",
        "kept": "kept but unused: no error",
        # Handed on whole (to a constructor, a scheduler, an attribute of DeepSpeed's config): DeepSpeed checks none
        # of its keys; whether a typo fails depends on the receiver (a TypeError from a constructor's keywords, or
        # nothing at all for progressive_layer_drop, of which the engine reads only theta and gamma).
        "passed": "handed on whole, keys unchecked: a typo fails only if the code receiving it refuses it",
    }.get(section.get("unknown_keys") or "", str(section.get("unknown_keys")))


def stage_label(stage: str) -> str:
    return "when absent" if stage == "any" else f"stage {stage}"


def effective_text(effective: dict[str, Any] | None, as_html: bool = False) -> str:
    if not effective:
        return ""
    return ", ".join(f"{stage_label(stage)}: {jcode(value, as_html)}" for stage, value in sorted(effective.items()))


def section_title(path: str) -> str:
    return path if path else "top level"


def md_heading(text: str) -> str:
    """``text`` as the words of a Markdown heading: a pattern path's ``*`` (``different_groups.*.params``)
    would otherwise open emphasis and swallow the heading's ``{ #id }``."""
    return text.replace("*", "\\*")


def section_anchor(path: str) -> str:
    """Anchor of a section's table on the default-values page (hyphenated: never a key path)."""
    return "section-" + (path or "top-level")




@lru_cache(maxsize=1 << 16, typed=True)
def _hkey_cached(value: Any) -> str:
    return _hkey(value)


def hkey(value: Any) -> str:
    """Memoised :func:`_hkey` for text (the same keys and docstrings recur on every release's pages)."""
    return _hkey_cached(value) if isinstance(value, str) else _hkey(value)


SHORT_KEY = 28
"""A key of at most this many characters fits any cell as it is: it gets no break opportunities (``<wbr>`` on
every ``_`` of ``weight_decay`` in each catalogue table was page weight the site's size bound could not spare)."""


def _hkey(value: Any) -> str:
    """A key or file path as HTML code that wraps after ``.``, ``_`` and ``/`` (``<wbr>``), never inside a word;
    one of at most :data:`SHORT_KEY` characters does not wrap."""
    raw = value if isinstance(value, str) else json_value(value)
    text = html.escape(raw, quote=False).replace("|", "&#124;")
    return "<code>" + (text if len(raw) <= SHORT_KEY else _BREAK_AFTER.sub(r"\1<wbr>", text)) + "</code>"


@lru_cache(maxsize=1 << 16, typed=True)
def _html_paras_cached(value: Any) -> str:
    return _html_paras(value)


def html_paras(value: Any) -> str:
    """Memoised :func:`_html_paras` for text (the same keys and docstrings recur on every release's pages)."""
    return _html_paras_cached(value) if isinstance(value, str) else _html_paras(value)


def _html_paras(text: str | None) -> str:
    """Our prose or a docstring as HTML paragraphs (blank lines separate them), code spans kept."""
    if not text:
        return ""
    return "".join(f"<p>{html_text(block)}</p>" for block in re.split(r"\n\s*\n", str(text).strip()) if block.strip())


_ROW = re.compile(r"<tr([^>]*)>(.*?)</tr>", re.S)
_CELL = re.compile(r"<t([hd])([^>]*)>(.*?)</t[hd]>", re.S)


def drop_empty_columns(table: str) -> str:
    """Remove the columns of a generated HTML table whose body cells are all empty (or "—")."""
    rows = [(attrs, _CELL.findall(body)) for attrs, body in _ROW.findall(table)]
    body_rows = [cells for _attrs, cells in rows if cells and cells[0][0] == "d"]
    if not body_rows:
        return table
    width = max(len(cells) for cells in body_rows)
    empty = {i for i in range(width)
             if all(i >= len(cells) or cells[i][2].strip() in ("", "—") for cells in body_rows)}
    if not empty:
        return table

    def row(match: re.Match[str]) -> str:
        cells = [c for i, c in enumerate(_CELL.findall(match.group(2))) if i not in empty]
        return f"<tr{match.group(1)}>" + "".join(f"<t{k}{a}>{t}</t{k}>" for k, a, t in cells) + "</tr>"

    return _ROW.sub(row, table)


def source_html(source: dict[str, Any] | None, version: str) -> str:
    """:func:`source_a` as HTML; empty when the source is unknown. No ``<wbr>`` in the label (one per path part
    on every field was page weight): the stylesheet lets a source link wrap where it must."""
    if not source or not source.get("file"):
        return ""
    return source_anchor(source, version)


def official_code(code: Any, stage: str = "stage {n}") -> str:
    """The code's default in an official-docs disagreement: one value, or one per ZeRO stage (``stage``: the
    page language's words for "stage N")."""
    if isinstance(code, dict):
        return ", ".join(f"{jcode(v, True)} ({html.escape(stage.format(n=n))})" for n, v in code.items())
    return jcode(code, True)


def json_block(config: Any) -> str:
    """A config as an HTML code block (pretty JSON, escaped)."""
    import json

    text = html.escape(json.dumps(config, indent=2), quote=False)
    return f'<pre class="dsf-json"><code class="language-json">{text}</code></pre>'



def history_phrase(events: list[dict[str, Any]], oldest: str | None, _: Any, as_html: bool = False) -> str:
    """A key's history events (``HistoryEvent.as_dict()``) in one line, in the translator ``_``'s language:
    Markdown, or HTML for raw blocks. The training and the inference pages word history alike through it."""
    parts = []
    for event in events:
        version = f"<strong>{event['version']}</strong>" if as_html else f"**{event['version']}**"
        kind = event["kind"]
        if kind in ("introduced", "reintroduced") and event["version"] == oldest:
            parts.append(_("present in the oldest snapshot ({v})").format(v=event["version"]))
        elif kind == "introduced":
            parts.append(_("added in {v}").format(v=version))
        elif kind == "reintroduced":
            parts.append(_("back in {v}").format(v=version))
        elif kind in ("default_changed", "type_changed", "constraints_changed", "choices_changed"):
            old, new = event.get("old"), event.get("new")
            if kind == "constraints_changed":  # bounds as lookup words them (">= 0 → > 0"), not the raw maps
                change = " → ".join(code(wording.constraints_text(c or {}) or "-", as_html) for c in (old, new))
            else:
                change = f"{jcode(old, as_html)} → {jcode(new, as_html)}"
            parts.append(_("{kind} in {v}: {change}").format(kind=_(kind.replace("_", " ")), v=version,
                                                             change=change))
        elif kind == "became_removed":
            parts.append(_("rejected from {v} on").format(v=version))
        elif kind == "no_longer_rejected":
            parts.append(_("no longer rejected from {v} on").format(v=version))
        elif kind == "renamed":
            parts.append(_("renamed in {v}: {old} → {new}").format(
                v=version, old=code(str(event.get("old")), as_html), new=code(str(event.get("new")), as_html)))
        else:
            parts.append(_("{kind} in {v}").format(kind=_(kind.replace("_", " ")), v=version))
    return "; ".join(parts)

FILTERS = {
    "reader_constant": reader_constant,
    "json_block": json_block,
    "official_code": official_code,
    "json_value": json_value,
    "code": code,
    "hcode": hcode,
    "escape": lambda text: html.escape(str(text), quote=True),
    "html_plain": lambda text: html.escape(str(text), quote=False),  # element text: quotes need no escape
    "jcode": jcode,
    "config_value": config_value,
    "md_text": md_text,
    "md_cell": md_cell,
    "html_text": html_text,
    "first_sentence": first_sentence,
    "source_url": source_url,
    "source_label": source_label,
    "source_link": source_link,
    "source_a": source_a,
    "default_text": default_text,
    "type_text": type_text,
    "integer_taking_true": integer_taking_true,
    "integer_taking_true_text": integer_taking_true_text,
    "constraints_text": constraints_text,
    "choices_text": choices_text,
    "auto_text": auto_text,
    "auto_short": auto_short,
    "blocked_by": wording.blocked_by,
    "unknown_keys_text": unknown_keys_text,
    "effective_text": effective_text,
    "section_title": section_title,
    "section_anchor": section_anchor,
    "md_heading": md_heading,
    "anchor": anchor,
    "hkey": hkey,
    "html_paras": html_paras,
    "drop_empty_columns": drop_empty_columns,
    "source_html": source_html,
}
"""Every filter the templates may use, by name; :func:`dsfields.docs.views.environment` registers them."""
