# Stable IDs (issue 38): DSnnnnnnnn for a DeepSpeed message of the catalogue, DSFnnnnn for one of our check rules.
"""The two kinds of stable ID ``check`` prints and ``explain ID`` expands.

* ``DSnnnnnnnn`` names a message DeepSpeed (or transformers/accelerate) raises, asserts or logs; it is computed by
  :func:`dsfields.extract.message_catalogue.message_id` from the message's text with its format fields blanked, so
  it is the same in every release that has the same words, and on every re-extraction.
* ``DSFnnnnn`` names one of dsfields' own check rules (a finding kind such as ``unknown_key``, or a named rule such
  as ``batch-size``); it is computed from that name alone (:func:`rule_code`), so adding a rule never renumbers
  another one.

A finding that quotes DeepSpeed's own message (``deepspeed.initialize raises AssertionError: "..."``) carries the
catalogue's ID of that message in the checked release (:func:`catalogue_id`); every other finding its rule's code.

Only the standard library: every layer may import this module.
"""

from __future__ import annotations

import re
from functools import cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up time; annotations are strings anyway
    from typing import Any

try:  # CPython's own SHA-256 (the same digest): hashlib's OpenSSL start-up costs a quick command ~2 ms
    from _sha256 import sha256 as _sha256  # Python 3.11
except ImportError:  # pragma: no cover - other interpreters and releases
    from hashlib import sha256 as _sha256

RULE_PREFIX = "DSF"
"""The prefix of a check rule's code; a catalogue message's ID is ``DS`` and eight digits."""

ID_SHAPE = re.compile(r"(?i)^(DS\d{8}|DSF\d{5})$")
"""What ``dsfields explain ID`` takes as an ID rather than a pasted message."""

RAISED = "raised"
"""A catalogue condition's word for a message said inside ``except`` (not ImportError's): ``raised_KeyError`` for a
handler of named exceptions; for a bare one (or ``Exception``'s) the try block's first call and this word
(``makedirs_raised``), or ``raised_Exception`` where its first statement calls nothing. Written by
``dsfields.extract.message_catalogue``, read by ``explain``'s fix."""

RAISED_MARKER = re.compile(rf"(?P<call>\w+)_{RAISED}|{RAISED}_(?P<caught>\w+)")
""":data:`RAISED`'s marker in a condition: ``call`` (``makedirs``) or ``caught`` (``KeyError``, ``A_B`` for two)."""

FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


def rule_code(name: str) -> str:
    """The stable code of a check rule named ``name`` (``batch-size``, ``unknown_key``): ``DSF`` and five digits
    of the name's SHA-256, so it depends on nothing but the name."""
    digest = _sha256(f"dsfields-rule|{name}".encode()).hexdigest()
    return f"{RULE_PREFIX}{int(digest[:8], 16) % 100000:05d}"


def _literal_regex(text: str) -> str:
    words = text.split()
    lead = r"\s*" if text[:1].isspace() else ""
    tail = r"\s*" if text[-1:].isspace() else ""
    return lead + r"\s+".join(re.escape(w) for w in words) + tail if words else (r"\s*" if text else "")


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A catalogue pattern (format fields as ``{name}``) as a case-insensitive regex over pasted text: each field
    takes up to 400 characters, whitespace in the literal text matches any run of whitespace (wrapped lines)."""
    parts = []
    pos = 0
    for match in FORMAT_FIELD.finditer(pattern):
        parts.append(_literal_regex(pattern[pos:match.start()]))
        token = match.group()
        parts.append(re.escape(token[0]) if token in ("{{", "}}") else r"(.{0,400}?)")
        pos = match.end()
    tail = pattern[pos:]
    if not tail.strip() and parts and parts[-1] == r"(.{0,400}?)":
        parts[-1] = r"(\S{1,400})"  # a field that ends the message takes the word printed there, not nothing
    parts.append(_literal_regex(tail))
    return re.compile("".join(parts).strip(), re.IGNORECASE)


def longest_chunk(pattern: str) -> str:
    """The longest literal run of a pattern, whitespace folded and lower-cased (a cheap test before the regex)."""
    chunks = [re.sub(r"\s+", " ", c.replace("{{", "{").replace("}}", "}")).strip().lower()
              for c in re.split(r"(?<!\{)\{[^{}]*\}(?!\})", pattern) if c.strip()]
    return max(chunks, key=len, default="")


@cache
def _indexed(version: str, root: str | None) -> tuple[tuple[str, str, str], ...]:
    from dsfields.model.store import load_messages

    document = load_messages(version, root) or {}
    seen: dict[str, tuple[str, str, str]] = {}
    for entry in document.get("messages", []):
        pattern = entry.get("pattern") or ""
        chunk = longest_chunk(pattern)
        if len(chunk) >= 12 and entry["id"] not in seen:
            seen[entry["id"]] = (entry["id"], pattern, chunk)
    return tuple(seen.values())


def catalogue_id(text: str, version: str, root: str | None = None) -> str | None:
    """The ID of the catalogue message of ``version`` that ``text`` quotes (the longest literal that matches
    wins), or None when it quotes none."""
    flat = re.sub(r"\s+", " ", text)
    low = flat.lower()
    best: tuple[int, str] | None = None
    for ident, pattern, chunk in _indexed(version, root):
        if chunk not in low or (best and len(chunk) <= best[0]):
            continue
        if pattern_regex(pattern).search(flat):
            best = (len(chunk), ident)
    return best[1] if best else None


_QUOTED = re.compile(r'raises(?: \w+)?: "(.+)"|DeepSpeedConfig raises: (.+)|raises \w+: (.+)')


def quoted_message(message: str) -> str | None:
    """DeepSpeed's own words in one of check's findings (``... raises AssertionError: "words" (DeepSpeed ...)``),
    None when the finding is worded by dsfields only."""
    found = _QUOTED.search(message)
    if not found:
        return None
    return next(g for g in found.groups() if g)


def finding_code(kind_name: str, rule: str | None, message: str, version: str, root: str | None = None,
                 deepspeed_message: bool = False) -> str:
    """The stable ID of one finding: the catalogue ID of the DeepSpeed message it quotes (``deepspeed_message``:
    its kind is one that quotes DeepSpeed), else its rule's code (the named rule, else its kind)."""
    if deepspeed_message:
        quoted = quoted_message(message)
        if quoted:
            ident = catalogue_id(quoted, version, root)
            if ident:
                return ident
    return rule_code(rule or kind_name)


def describe(rules: dict[str, tuple[str, str]], code: str) -> tuple[str, str] | None:
    """``(name, summary)`` of the rule whose code is ``code`` among ``rules`` (name → (summary, origin))."""
    for name, (summary, origin) in rules.items():
        if rule_code(name) == code.upper():
            return name, f"{summary} ({origin})" if origin else summary
    return None


def as_document(rules: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Every rule with its code, sorted by code (the error index's table of dsfields rules)."""
    return sorted(({"code": rule_code(n), "name": n, "summary": s, "origin": o} for n, (s, o) in rules.items()),
                  key=lambda r: r["code"])
