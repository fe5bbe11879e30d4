"""Terminal text for lookup's answers: width, colour, wrapping (Chinese aware) and the one writer.

Shared by every kind of answer (fields, optimizer/scheduler types, goals, the inference document), so it sits
below all of them; stdlib only and cheap to import, since ``dsfields lookup`` must start about as fast as grep.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from dsfields.model import termsafe

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time; annotations are strings anyway
    from typing import Any

LABEL_WIDTH = 13
"""Width of the row labels (``python name``, ``constraints``...) in a single answer."""

MIN_WIDTH, MAX_WIDTH = 40, 100
"""Wrap at the terminal width, but never so narrow it is unreadable nor so wide lines are hard to follow."""


class Style:
    """ANSI colour on a terminal only; plain text when piped or when ``NO_COLOR`` is set."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: Any) -> Style:
        tty = bool(getattr(stream, "isatty", lambda: False)())
        return cls(tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb")

    def _wrap(self, code: str, text: str) -> str:
        # Tokens, not ESC: the guarded stdout makes only dsfields' own colour a sequence (termsafe.sgr).
        return f"{termsafe.sgr(code)}{text}{termsafe.sgr('0')}" if self.enabled and text else text

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


def wrap(text: str, width: int, indent: str, hanging: str) -> list[str]:
    """Every answer's wrapping: :func:`fill`, or for Chinese text a break between any two CJK characters.

    Never split a token: a cut URL, dotted name or number is worse than a long line."""
    if any("\u2e80" <= char <= "\uffef" for char in text):
        return _wrap_wide(text, width, indent, hanging)
    return fill(text, width, indent, hanging)


_SPACES = str.maketrans({c: " " for c in "\t\n\x0b\x0c\r"})


def fill(text: str, width: int, indent: str = "", hanging: str = "") -> list[str]:
    """``text`` in lines of ``width`` (``indent`` before the first, ``hanging`` before the others), never
    breaking a word or at a hyphen: what ``textwrap.wrap(..., break_long_words=False, break_on_hyphens=False)``
    gives (tests/test_terminal_wrap.py holds the two equal), without textwrap's import and its regexes, which cost
    ``lookup`` a millisecond of a grep-sized budget."""
    if width <= 0:
        raise ValueError(f"invalid width {width!r} (must be > 0)")
    chunks = [chunk for chunk in re.split(r"( +)", text.expandtabs().translate(_SPACES)) if chunk]
    chunks.reverse()
    lines: list[str] = []
    while chunks:
        prefix = hanging if lines else indent
        room = width - len(prefix)
        if lines and not chunks[-1].strip():  # a line after the first does not start with spaces
            chunks.pop()
        line: list[str] = []
        used = 0
        while chunks and used + len(chunks[-1]) <= room:
            used += len(chunks[-1])
            line.append(chunks.pop())
        if chunks and not line and len(chunks[-1]) > room:  # a word longer than the line: alone, unbroken
            line.append(chunks.pop())
        if line and not line[-1].strip():
            line.pop()
        if line:
            lines.append(prefix + "".join(line))
    return lines


def dedent(text: str) -> str:
    """``text`` without the leading spaces and tabs all its non-blank lines share; lines of only spaces and tabs
    become empty (as ``textwrap.dedent``, which tests/test_terminal_wrap.py compares it with)."""
    lines = ["" if not line.strip(" \t") else line for line in text.split("\n")]
    margins = [line[:len(line) - len(line.lstrip(" \t"))] for line in lines if line]
    common = os.path.commonprefix(margins) if margins else ""
    return "\n".join(line[len(common):] for line in lines)


def display_width(text: str) -> int:
    """Terminal columns of ``text``: CJK characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrap_wide(text: str, width: int, indent: str, hanging: str) -> list[str]:
    """Wrap Chinese text: a line may break between any two CJK characters or at a space, never inside a
    Latin token (a key like ``stage3_prefetch_bucket_size`` stays whole)."""
    tokens = re.findall(r"[\u2e80-\uffef]|[^\s\u2e80-\uffef]+|\s+", text)
    lines: list[str] = []
    line, used = indent, display_width(indent)
    for token in tokens:
        if token.isspace():
            token = " "
        size = display_width(token)
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = hanging, display_width(hanging)
            if token == " ":
                continue
        line += token
        used += size
    if line.strip():
        lines.append(line.rstrip())
    return lines


def paragraphs(text: str, width: int, indent: str = "  ") -> list[str]:
    """Rewrap a docstring: its hard line breaks were made for source code, not this terminal.

    Unindented prose lines are joined and refilled; bullets and indented lines (examples, option
    lists) keep their own line and indentation.
    """
    lines: list[str] = []
    for block in dedent(text.strip("\n")).split("\n\n"):
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
            lines.extend(wrap(item, width, indent + " " * lead, indent + " " * lead + bullet))
    return lines


def write(text: str, ascii_text: Callable[[], str] | None = None, lang: str = "en") -> None:
    """Print an answer to stdout (``lang`` zh: its fixed words in Chinese); ``ascii_text`` for a terminal whose
    encoding cannot show it (else the unshowable characters replaced)."""
    if lang == "zh":  # issue 28: our fixed words (defaults, strictness, "auto", history) in Chinese
        from dsfields.model.messages import localize

        text = localize(text, lang, "lookup.")
    try:
        termsafe.write_strict(text)
    except UnicodeEncodeError:
        # A terminal that cannot show → or — (e.g. a legacy code page) still gets the answer.
        encoding = getattr(sys.stdout, "encoding", None) or "ascii"
        sys.stdout.write(ascii_text() if ascii_text else text.encode(encoding, "replace").decode(encoding))
