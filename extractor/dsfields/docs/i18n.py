"""The site's own words in each language: English is the key, Chinese its translation (``_`` in templates).

DeepSpeed's docstrings and messages stay as DeepSpeed wrote them (quoted); our explanations come
from ``dsfields/prose``. What is left are the labels and sentences of the templates, listed here so
the Chinese site says them in Chinese; a string without a translation falls back to English.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dsfields.model import chinese

LANGUAGES = ("en", "zh")

ZH: dict[str, str] = chinese.table("site")
"""The site's interface words in Chinese, keyed by their English (the ``site`` group of ``prose/chinese.json``)."""


# ---------------------------------------------------------------- what assets/dsfields.js writes (issue 24)

SCRIPT_STRINGS: tuple[str, ...] = (
    "DeepSpeed release", "does not exist in DeepSpeed {v}", "see its history across releases",
    "Fields of DeepSpeed {v}", "Did you mean", "No matching field",
    "Key", "Release", "Change", "top level", "{n} keys changed from {a} to {b}.",
    "{n} keys", "released", "newest", "original",
    # dsfields.diff's change kinds (ChangeKind values), which the pair picker lists
    "Field was added", "Field was removed", "Field was renamed", "Default value was changed", "Type was changed",
    "Constraint was changed", "Field was deprecated", "Field was un-deprecated",
    "Field was removed and is now rejected",
    "Unknown-key handling of the section was changed", "Description was changed",
    # the errors-and-warnings page's filter
    "{n} of the {m} messages are in DeepSpeed {v}.",
    "Not in DeepSpeed {v}: the releases that have it are listed below.",
    # a guide's names the reader's release lacks (dsfields/docs/guide_scope.py)
    "Not in DeepSpeed {v}:", "from {v} on", "until {v}", "this message",
)
"""Every sentence the site's script writes; ``releases/site-data.json`` carries them in the page's language."""

SEARCH_TERMS: dict[str, dict[str, str]] = {"zh": chinese.table("search_terms")}
"""Per language, a term readers type → the English words of the keys it means (the field finder and the
Chinese full-text index both use it)."""


def script_words(lang: str) -> dict[str, str]:
    """:data:`SCRIPT_STRINGS` in ``lang`` (English: none, the script's own text is English)."""
    _ = translator(lang)
    return {text: _(text) for text in SCRIPT_STRINGS if _(text) != text}


PREFIXES = ("rejected: ", "not judged, the probe stopped first on another key: ")
"""Words a filter puts before a value (``rejected: <code>TypeError…</code>``): translated, the value kept."""
SUFFIXES = (" (factory)",)
"""Words a filter puts after a value (``<code>{}</code> (factory)``): translated, the value kept."""


def _zh(text: str) -> str:
    said = ZH.get(text)
    if said is not None:
        return said
    for prefix in PREFIXES:
        if text.startswith(prefix) and prefix in ZH:
            return ZH[prefix] + text[len(prefix):]
    for suffix in SUFFIXES:
        if text.endswith(suffix) and suffix in ZH:
            return text[: -len(suffix)] + ZH[suffix]
    return text


def translator(lang: str) -> Callable[[str], str]:
    """``_`` for the templates of ``lang``: the Chinese text where there is one (a filter's words around a value
    too: :data:`PREFIXES`, :data:`SUFFIXES`), else the English."""
    if lang == "zh":
        return _zh
    return lambda text: text


# The details dsfields.diff writes for a change (its own words, with values and key names in them): each
# shape it writes, in Chinese. DeepSpeed's own messages inside a detail are not translated (views.py
# marks them 原文); a shape missing here stays English.
_FATES_ZH = {
    "silently ignored": chinese.text("docs.i18n.silently_ignored"),
    "ignored (its section is not read either)": chinese.text("docs.i18n.ignored_its_section_is_not_read"),
    "rejected as an unknown key": chinese.text("docs.i18n.rejected_as_an_unknown_key"),
    "passed on but unused": chinese.text("docs.i18n.passed_on_but_unused"),
}
_UNKNOWN_KEYS_ZH = {"ignored": chinese.text("docs.i18n.ignored"), "passed": chinese.text("docs.i18n.passed"),
                    "error": chinese.text("docs.i18n.error"), "kept": chinese.text("docs.i18n.kept")}
_NOTES_ZH = {
    " (dict reader → pydantic model; a typo that was silently ignored now raises)":
        chinese.text("docs.i18n.dict_reader_pydantic_model_a_typo"),
    " (a typo that was silently ignored now raises)": chinese.text("docs.i18n.a_typo_that_was_silently_ignored"),
    " (a typo is no longer reported)": chinese.text("docs.i18n.a_typo_is_no_longer_reported"),
    "": "",
}
_DETAILS_ZH: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (re.compile(r"default (.+)", re.S), lambda m: chinese.text("docs.i18n.detail_default", m_1=m[1])),
    (re.compile(r"new section"), lambda m: chinese.text("docs.i18n.detail_new_section")),
    (re.compile(r"rejected with its section (.+)"),
     lambda m: chinese.text("docs.i18n.detail_rejected_with_section", m_1=m[1])),
    (re.compile(r"no longer read; a value here is now (.+)"),
     lambda m: chinese.text("docs.i18n.fates_zh_m", FATES_ZH_m_1=_FATES_ZH[m[1]]) if m[1] in _FATES_ZH else None),
    (re.compile(r"no longer rejected with a message; a value here is now (.+)"),
     lambda m: chinese.text("docs.i18n.fates_zh_m_2", FATES_ZH_m_1=_FATES_ZH[m[1]]) if m[1] in _FATES_ZH else None),
    (re.compile(r"unknown keys: (\w+) → (\w+)(.*)"),
     lambda m: chinese.text("docs.i18n.unknown_keys_zh_get_m_m", UNKNOWN_KEYS_ZH_get_m_1_m_1=_UNKNOWN_KEYS_ZH.get(m[1],
         m[1]), UNKNOWN_KEYS_ZH_get_m_2_m_2=_UNKNOWN_KEYS_ZH.get(m[2], m[2]), NOTES_ZH_m_3=_NOTES_ZH[m[3]])
     if m[3] in _NOTES_ZH else None),
    (re.compile(r"JSON types (.+)"), lambda m: chinese.text("docs.i18n.json_m", m_1=m[1])),
    (re.compile(r"effective default same values, now decided by a validator"),
     lambda m: chinese.text("docs.i18n.detail_effective_default_by_validator")),
    (re.compile(r"effective default (.+)"), lambda m: chinese.text("docs.i18n.detail_effective_default", m_1=m[1])),
    (re.compile(r"use (\S+) instead \(legacy spelling: DeepSpeed reads (\S+) only when (\S+) is absent, "
                r"into the same (\S+)\)"),
     lambda m: chinese.text("docs.i18n.m_m_deepspeed_m_m", m_1=m[1], m_3=m[3], m_2=m[2], m_4=m[4])),
    (re.compile(r"use (\S+) instead"), lambda m: chinese.text("docs.i18n.detail_use_instead", m_1=m[1])),
    (re.compile(r"no longer deprecated"), lambda m: chinese.text("docs.i18n.detail_no_longer_deprecated")),
    (re.compile(r"description text changed"), lambda m: chinese.text("docs.i18n.detail_description_changed")),
)
WAS_NOT_READ = " (was not read before)"
"""What dsfields.diff appends to DeepSpeed's message for a key that is rejected and was not read before."""


def change_detail(text: str, lang: str) -> str:
    """A change detail dsfields.diff wrote, in ``lang`` (values, types and key names stay as they are)."""
    if lang != "zh" or not text:
        return text
    if text == WAS_NOT_READ.strip():
        return chinese.text("docs.i18n.detail_was_not_read")
    for pattern, say in _DETAILS_ZH:
        match = pattern.fullmatch(text)
        if match is not None:
            said = say(match)
            if said is not None:
                return said
    return text
