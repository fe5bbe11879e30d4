"""Our output sentences in English and Chinese (the ``messages`` group of ``prose/chinese.json``), applied at render
time.

Every command builds its English text as before (English output stays byte-identical: :func:`localize`
returns it untouched for ``en``). For ``zh`` the rendered text is rewritten template by template: each
entry's English template, with ``{name}`` placeholders, matches a phrase of one line, and its Chinese
template re-uses the captured values (paths, values, versions, DeepSpeed's own messages) unchanged. So a
print site changes by one call, and engine code (check's findings, diff's details) keeps building English.

DeepSpeed's own words (exception texts, docstrings, removal messages) stay verbatim in both languages;
in Chinese they are preceded by ``原文：`` ("original text") as ``lookup`` marks DeepSpeed's docstring.

Machine formats (json, github, sarif) are not passed through here: their keys, codes and messages stay
English so CI filters keep working (docs/check-output.md).

Only the standard library: every layer may import this module.
"""

from __future__ import annotations

import re
from functools import cache

from dsfields.model import chinese


def __getattr__(name: str) -> str:
    """``ORIGINAL`` (原文：, before DeepSpeed's own words) read from the catalogue when first asked for."""
    if name == "ORIGINAL":
        return chinese.text("model.messages.original")
    raise AttributeError(name)


# The catalogue as data (the ``messages`` group of ``prose/chinese.json``, :mod:`dsfields.model.chinese`): key ->
# ``{"en": template, "zh": template}`` (a key starting with ``#`` is a note), in three groups applied in order:
# ``before`` (longer forms of phrases a ``catalogue`` entry would take first), ``catalogue``, ``after``;
# ``diff_kinds_zh`` names diff's change kinds. Order matters: a longer phrase comes before a shorter one it
# contains. A placeholder at the very end of an English template runs to the end of the line (to the end of its line
# with a final ``$``); elsewhere it takes as little as lets the rest match.


@cache
def catalogue() -> dict[str, dict[str, str]]:
    """Every entry of the ``messages`` group in the order they are applied, with diff's Markdown forms; read on
    first use (English output never needs it)."""
    tables = chinese.messages()

    def entries(group: str) -> dict[str, dict[str, str]]:
        return {key: entry for key, entry in tables[group].items() if not key.startswith("#")}

    main = entries("catalogue")
    main |= _markdown_forms(main, entries("diff_kinds_zh"))
    out = entries("before")
    out.update(main)
    out.update(entries("after"))
    return out


def _markdown_forms(entries: dict[str, dict[str, str]], kinds_zh: dict[str, str]) -> dict[str, dict[str, str]]:
    """diff's Markdown lines say ``**Kind** — detail`` where text says ``: Kind: detail``: the same entries."""
    out: dict[str, dict[str, str]] = {}
    for key, entry in entries.items():
        kind, colon, rest = entry["en"].removeprefix(": ").partition(": ")
        if not (key.startswith("diff.") and entry["en"].startswith(": ") and kind in kinds_zh):
            continue
        zh_kind = kinds_zh[kind]
        zh_rest = entry["zh"].removeprefix("：" + zh_kind).removeprefix("：")
        out[f"diff.md.{key}"] = {"en": f"**{kind}**" + (f" — {rest}" if colon else ""),
                                 "zh": f"**{zh_kind}**" + (f" — {zh_rest}" if colon else "")}
    for kind, zh_kind in kinds_zh.items():
        out[f"diff.md.kind.{kind}"] = {"en": f"**{kind}**", "zh": f"**{zh_kind}**"}
    return out


TOKENS = frozenset({"v", "low", "high", "n", "version"})
"""Placeholders that hold one word (a release, a count): they end where the word ends."""


def _pattern(template: str) -> re.Pattern[str]:
    at_end = template.endswith("$")  # the phrase ends its line: its last placeholder takes all it can
    parts = re.split(r"\{(\w+)\}", template.removesuffix("$"))
    out: list[str] = []
    seen: set[str] = set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif part in seen:
            out.append(f"(?P={part})")
        else:
            seen.add(part)
            last = i == len(parts) - 2 and (parts[-1] == "" or at_end)
            if part in TOKENS:
                out.append(f"(?P<{part}>[\\w.+-]+)")
            elif part in SHAPED:  # a placeholder that takes one shape only (a type list, a release, a path)
                out.append(f"(?P<{part}>{SHAPED[part]})")
            else:
                out.append(f"(?P<{part}>[^\\n]*)" if last else f"(?P<{part}>[^\\n]+?)")
    return re.compile("".join(out) + ("$" if at_end else ""), re.MULTILINE)


@cache
def _compiled(prefix: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((_pattern(entry["en"]), entry["zh"]) for key, entry in catalogue().items()
                 if key.startswith(prefix) and entry["en"] != entry["zh"])


def localize(text: str, lang: str, *groups: str) -> str:
    """``text`` in ``lang``: unchanged for English; for Chinese every phrase of the catalogue entries whose
    key starts with one of ``groups`` (``"diff."``) rewritten, values kept as they are."""
    if lang != "zh" or not text:
        return text
    # check's stable-ID tag ends a finding's line ("... [DSF35214 batch-size]"): set aside while the templates,
    # some anchored at the line's end, are applied, then put back on the same line
    lines = text.split("\n")
    tags = [_ID_TAG.search(line) for line in lines]
    if any(tags):
        text = "\n".join(line[:t.start()] if t else line for line, t in zip(lines, tags, strict=True))
    for group in groups:
        for pattern, zh in _compiled(group):
            text = pattern.sub(lambda match, zh=zh: zh.format(**_zh_values(match.groupdict())), text)
    if any(tags):
        out = text.split("\n")
        if len(out) == len(tags):
            text = "\n".join(line + (t.group() if t else "") for line, t in zip(out, tags, strict=True))
    return _close_full_width(text)


_ID_TAG = re.compile(r" \[(?:DS\d{8}|DSF\d{5})(?: [\w.-]+)?\]$")


def _close_full_width(text: str) -> str:
    """A Chinese template opens "（" where the English opened "(", and the ASCII ")" that closed it comes later in
    the same line, outside the template: it becomes "）", so every bracket closes in the form it opened. ASCII
    pairs inside (a ``file:line (function)``) are left as they are."""
    if "（" not in text:
        return text
    out, stack = [], []
    for char in text:
        if char == "\n":
            stack.clear()
        elif char in "（(":
            stack.append(char)
        elif char in "）)" and stack:
            if stack.pop() == "（":
                char = "）"
        out.append(char)
    return "".join(out)


def requested_language(argv: list[str] | tuple[str, ...]) -> str:
    """The language of refusals: ``--lang`` on the command line when it names one we speak, else the locale's.

    Never raises: it chooses the words of an error line, which must be printed whatever ``--lang`` says.
    """
    from dsfields.model.prose import language  # prose is stdlib-only too; imported late: lookup's start-up

    requested = None
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            requested = argv[i + 1]
        elif arg.startswith("--lang="):
            requested = arg.partition("=")[2]
    try:
        return language(requested)
    except Exception:  # an unknown --lang: the locale decides the refusal's words
        return language(None)


def say(key: str, lang: str, **values: object) -> str:
    """One catalogue entry in ``lang``, its placeholders filled."""
    entry = catalogue()[key]
    return (entry["zh"] if lang == "zh" else entry["en"]).format(**values)


def english_templates(*groups: str) -> list[str]:
    """The fixed English words of each entry (placeholders and Chinese removed, two words or more): what
    Chinese output must not contain."""
    out: list[str] = []
    for key, entry in catalogue().items():
        if key.startswith(groups) and entry["en"] != entry["zh"]:
            for part in re.split(r"\{\w+\}", entry["en"].removesuffix("$")):
                words = re.sub(r"[^\x00-\x7f]", "", part).strip(" :;(),.")
                if len(words) > 8 and len(re.findall(r"[A-Za-z]{2,}", words)) >= 2:
                    out.append(words)
    return out


# ------------------------------------------------------------ issue 28: the English left in zh output (appended)
@cache
def _json_types_zh() -> dict[str, str]:
    return {"integer": chinese.text("model.messages.integer"), "number": chinese.text("model.messages.number"),
            "string": chinese.text("model.messages.string"), "boolean": chinese.text("model.messages.boolean"),
            "object": chinese.text("model.messages.object"), "array": chinese.text("model.messages.array"),
            "any": chinese.text("model.messages.any")}


# (JSON type names in Chinese sentences; ``null`` stays: it is the value. Read from the catalogue when first
# needed: an English run never parses it.)

_TYPE_WORD = r"(?:integer|number|string|boolean|object|array|null|any)"
TYPE_LIST = rf"(?:an? )?{_TYPE_WORD}(?:(?: or |, | / | \| ){_TYPE_WORD})*(?: \([A-Za-z]\w*\))?"
"""What a ``{types}`` placeholder matches: a list of JSON types, with an enum's name after it."""


def json_types_zh(text: str) -> str:
    """``an integer or null`` → ``整数或 null``: the type words of ``text`` outside its quoted values."""
    parts = re.split(r'("[^"]*")', text)
    for i in range(0, len(parts), 2):
        part = re.sub(r"^an? (?=" + _TYPE_WORD + ")", "", parts[i])
        part = re.sub(r"\b" + _TYPE_WORD + r"\b", lambda m: _json_types_zh().get(m.group(), m.group()), part)
        parts[i] = re.sub(r" or (?=\S)", chinese.text("model.messages.or"), part)
    return "".join(parts)


@cache
def _strictness_zh() -> dict[str, str]:
    return {"ignored": chinese.text("model.messages.ignored"), "error": chinese.text("model.messages.error"),
            "passed": chinese.text("model.messages.passed"), "lenient": chinese.text("model.messages.lenient"),
            "strict": chinese.text("model.messages.strict")}


# (how a section treats unknown keys, diff's strictness change, in Chinese)


def _zh_values(values: dict[str, str]) -> dict[str, str]:
    """The captured values as they go into a Chinese template: type lists (``types``, ``what``) and strictness
    words (``word``) in Chinese, everything else (paths, values, DeepSpeed's words) as captured."""
    out = {}
    for name, value in values.items():
        if name in ("types", "what") and value:
            value = json_types_zh(value)
        elif name in ("word", "word2"):
            value = _strictness_zh().get(value, value)
        out[name] = value
    return out


TOKENS = TOKENS | {"m", "k", "t", "nb"}
SHAPED = {"types": TYPE_LIST, "release": r"\d+\.\d+\.\d+\w*", "dotted": r"(?=[\w.-]*[._])[\w-]+(?:\.[\w-]+)*",
          "fn": r"[\w.<>]+", "word": r"[A-Za-z_][\w-]*", "word2": r"[A-Za-z_][\w-]*", "flag": r"\w+", "flag2": r"\w+"}
"""Placeholders that match one shape only, so a short template cannot take a phrase it does not mean."""
