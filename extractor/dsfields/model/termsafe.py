"""Output that a terminal, a CI log and any stream encoding can take: the one place that escapes it.

Config keys, optimizer names, file names, ``--version`` values and lookup queries come from files
and command lines dsfields does not control; printed raw, ``"\\u001b]0;pwned\\u0007"`` retitles the
terminal and ``\\u202e`` reverses the line. :func:`guarded_streams` (entered once by
:func:`dsfields.cli.main`) wraps ``sys.stdout``/``sys.stderr`` so that everything written goes
through :func:`escape`, is encoded to whatever the stream accepts (unencodable characters become
``\\uXXXX``, which is still valid inside a JSON string), and a failing stream (closed, broken pipe,
full disk) becomes one :class:`OutputError` instead of a traceback.

Escapes are chosen so that JSON output stays valid JSON with the same values: C0 controls (which
``json.dumps`` never leaves raw) become ``\\x1b``; DEL, C1 controls, bidi overrides, line/paragraph
separators and lone surrogates (which ``json.dumps(ensure_ascii=False)`` does leave raw, inside
strings only) become ``\\u007f``, ``\\u202e``, ``\\ud800``. ``\\n`` and ``\\t`` pass the stream
unchanged: they are how dsfields lays out its own output, so text from data (keys, values, file names,
queries, DeepSpeed's messages) goes through :func:`shown` where it is put into a line, which escapes
them too. Escaping is by origin, not by pattern: every ESC that reaches a stream is escaped, and only
the colour dsfields itself adds (:func:`sgr`, a per-process token no data can contain) becomes an SGR
sequence, on a terminal; off a terminal it is dropped.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Iterable
from functools import cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every command's start-up milliseconds; annotations are strings anyway
    import re
    from typing import Any, TextIO

UNSAFE_CLASS = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
"""C0 (but \\n, \\t), DEL, C1, bidi marks/overrides/isolates, U+2028/9, surrogates."""


@cache
def _unsafe() -> re.Pattern[str]:
    # Compiled on first need only: most output is printable text (see escape), and this class costs a
    # millisecond of start-up to compile.
    import re

    return re.compile(UNSAFE_CLASS)


_TOKEN = f"\x00sgr{os.urandom(8).hex()}:"
"""Marks dsfields' own colour in a text: NUL (which data can never bring to a stream unescaped) and 64
random bits, so no key, value or file name can spell it."""


def sgr(code: str) -> str:
    """dsfields' own colour ``ESC[<code>m``, as a token the guarded stream turns into the sequence on a
    terminal (and drops elsewhere); ``code`` is digits and ``;`` only."""
    if not code or code.strip("0123456789;"):
        raise ValueError(f"not an SGR parameter string: {code!r}")
    return f"{_TOKEN}{code}m"


def shown(text: str) -> str:
    """``text`` from data, for a line of text output: :func:`escape`, and newlines, carriage returns and
    tabs too (``\\n``): a key cannot start a line of its own (``"\\nfake.json: ok"``)."""
    if text.isprintable():
        return text
    return escape(text).replace("\n", "\\n").replace("\t", "\\t")


ERRORS = "dsfields-escape"
"""The codec error handler for what a stream's encoding lacks: ``\\uXXXX`` (valid in JSON strings too)."""


class OutputError(Exception):
    """stdout cannot take the output (closed, full disk, I/O error): one line, exit 2."""


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``text`` with every character that could steer a terminal shown as a visible escape."""
    # Every character of the unsafe class is unprintable to str.isprintable (Cc, Cf, Zl, Zp, Cs): text that
    # is printable but for newlines and tabs has none of them, and needs no pattern.
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return text
    unsafe = _unsafe()
    return unsafe.sub(_visible, text) if unsafe.search(text) else text


def with_own_colour(text: str, colour: bool) -> str:
    """:func:`escape`, with dsfields' own :func:`sgr` tokens made SGR sequences (``colour``) or dropped."""
    if _TOKEN not in text:
        return escape(text)
    parts = text.split(_TOKEN)
    out = [escape(parts[0])]
    for part in parts[1:]:
        code, _, rest = part.partition("m")
        out.append((f"\x1b[{code}m" if colour else "") + escape(rest))
    return "".join(out)


def github_data(text: str) -> str:
    """The message part of a GitHub workflow command (``::error ...::MESSAGE``)."""
    return escape(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def github_property(text: str) -> str:
    """A property value of a workflow command (``file=``, ``title=``): also ``:`` and ``,`` are reserved."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def _json_escape_errors(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each unencodable character as ``\\uXXXX`` (astral ones as a surrogate pair)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = []
    for char in error.object[error.start:error.end]:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), error.end


codecs.register_error(ERRORS, _json_escape_errors)


class SafeStream:
    """A text stream wrapper: escapes what is written; stream failures become :class:`OutputError`.

    ``stream`` is None when the process started with that descriptor closed (``>&-``). For stderr
    (``quiet=True``) failures are swallowed: there is nowhere left to report them.
    """

    def __init__(self, stream: TextIO | None, name: str, quiet: bool = False) -> None:
        self._stream = stream
        self._name = name
        self._quiet = quiet
        try:
            self._colour = bool(stream is not None and stream.isatty())
        except (OSError, ValueError):
            self._colour = False

    def _fail(self, exc: BaseException | None) -> None:
        if self._quiet:
            return
        if isinstance(exc, BrokenPipeError):
            raise exc
        reason = "it is closed" if exc is None or isinstance(exc, ValueError) else (
            exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
        raise OutputError(f"cannot write to {self._name}: {reason}") from None

    def write(self, text: str) -> int:
        return self.write_text(text, strict=False)

    def write_text(self, text: str, strict: bool) -> int:
        """Write escaped ``text``; what the encoding lacks becomes ``\\uXXXX`` unless ``strict``
        (then UnicodeEncodeError reaches the caller, which has a better fallback of its own)."""
        if self._stream is None:
            self._fail(None)
            return 0
        safe = with_own_colour(text, self._colour) if "\x00" in text else escape(text)
        try:
            try:
                self._stream.write(safe)
            except UnicodeEncodeError:
                if strict:
                    raise
                encoding = getattr(self._stream, "encoding", None) or "ascii"
                self._stream.write(safe.encode(encoding, ERRORS).decode(encoding))
        except UnicodeEncodeError:
            raise
        except (OSError, ValueError) as exc:
            self._fail(exc)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        """Each line through :meth:`write` (the wrapped stream's own writelines would bypass the escaping)."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def isatty(self) -> bool:
        return self._colour

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def silence_stdout() -> None:
    """Point fd 1 at /dev/null after a failure, so the interpreter's exit-time flush stays silent."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def report(message: str) -> None:
    """One line on stderr, whatever state stderr is in (a newline from data inside it is shown as ``\\n``)."""
    try:
        sys.stderr.write(shown(message) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError, OutputError):
        pass


class guarded_streams:  # used as a context manager, named as one
    """Within: ``sys.stdout``/``sys.stderr`` escape and encode everything written to them.

    A class rather than ``contextlib.contextmanager``: every command enters it, and contextlib's import costs
    ``lookup`` half a millisecond of its grep-sized budget."""

    def __enter__(self) -> None:
        self._saved = sys.stdout, sys.stderr
        out, err = self._saved
        sys.stdout = SafeStream(out, "stdout")  # type: ignore[assignment]
        sys.stderr = SafeStream(err, "stderr", quiet=True)  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self._saved


def flush_stdout() -> None:
    """Flush now, inside the guard, so that a full disk is reported rather than met at exit."""
    sys.stdout.flush()


def write_strict(text: str) -> None:
    """Write to stdout like :meth:`SafeStream.write`, but let UnicodeEncodeError through to the caller."""
    stream = sys.stdout
    if isinstance(stream, SafeStream):
        stream.write_text(text, strict=True)
    else:
        stream.write(text)
