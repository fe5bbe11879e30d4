"""Read a ``ds_config`` file the way its consumer will, and remember the line of every key.

DeepSpeed opens a config path with ``hjson.load`` and rejects duplicate keys; the HF Trainer opens
it with ``json.load`` (no comments, ``1e9`` stays a float, duplicates silently keep the last) and
hands DeepSpeed a dict. ``check`` must judge the values the consumer really gets, so the parse
mirrors the chosen consumer. Neither parser reports positions, so a small tolerant scanner walks
the text once to map each key path to its line, for editors and GitHub annotations. The file is
only ever parsed, never executed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Path_ = tuple[str | int, ...]
"""A key path: object keys and array indices from the top of the file."""


class ConfigFileError(Exception):
    """The file cannot be used at all (missing, undecodable, malformed, not an object): one line."""


@dataclass
class ConfigFile:
    name: str
    data: dict[str, Any]
    syntax: str
    """``"json"`` when strict JSON parses it, else ``"hjson"``."""
    lines: dict[Path_, int] = field(default_factory=dict)
    duplicates: list[tuple[Path_, int]] = field(default_factory=list)
    """Keys repeated inside one object, with the line of the repetition."""
    parse_note: str | None = None
    """Why the chosen consumer would not read the text as given (e.g. HF's json.load on hjson)."""

    def line_of(self, path: Path_) -> int | None:
        """Line of ``path``'s key, else of its nearest ancestor present in the file."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def load(path: Path, consumer: str = "deepspeed") -> ConfigFile:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return parse(text, str(path), consumer)


def parse(text: str, name: str = "<config>", consumer: str = "deepspeed") -> ConfigFile:
    """Parse as ``consumer`` (``"deepspeed"``: hjson, ``"hf"``: json) would; duplicates are recorded, not fatal."""
    hook = _pairs_hook()
    note = None
    syntax = "json"
    try:
        # DeepSpeed's hjson turns 1e9 and 1.0 into ints (below 1e10); json would keep floats. For
        # strict JSON, json with hjson's number rule gives DeepSpeed's values without importing
        # hjson (a third of check's start-up).
        data = json.loads(text, object_pairs_hook=hook, parse_float=_hjson_number if consumer == "deepspeed" else float)
    except (ValueError, RecursionError) as json_error:
        syntax = "hjson"
        import hjson

        try:
            data = hjson.loads(text, object_pairs_hook=hook)
        except (ValueError, RecursionError, IndexError, TypeError) as exc:
            # A file that looks like JSON gets json's message ("Expecting ',' delimiter: line 7"),
            # which names the real mistake; hjson's is about its own quoteless syntax.
            looks_json = text.lstrip().startswith(("{", "[")) and not isinstance(json_error, RecursionError)
            reason = _one_line(json_error if looks_json else exc)
            raise ConfigFileError(f"{name}: malformed {'JSON' if looks_json else 'JSON/hjson'}: {reason}") from None
        if consumer == "hf":
            note = f"not strict JSON, and the HF Trainer reads the file with json.load: {_one_line(json_error)}"
    if not isinstance(data, dict):
        raise ConfigFileError(f"{name}: the top level is {_json_type(data)}, not an object")
    config = ConfigFile(name, data, syntax, parse_note=note)
    config.lines, config.duplicates = key_lines(text)
    return config


def _pairs_hook() -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """Plain dicts, last duplicate wins (the scanner reports duplicates with their lines)."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return dict(pairs)

    return hook


def _hjson_number(text: str) -> int | float:
    """hjson's rule (decoder.scanTfnns): a number with a fraction or exponent that is integral and < 1e10 is an int."""
    value = float(text)
    if math.isfinite(value) and int(value) == value and abs(value) < 1e10:
        return int(value)
    return value


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


# ---------------------------------------------------------------- key positions


_LITERAL_END = ",}]\n\r#"


class _Scanner:
    """Recursive descent over JSON or hjson text that only records where keys are.

    Tolerant by design: it never raises on bad input (the real parsers decide validity) and
    always advances, so a fuzzed file yields partial positions rather than a crash or a hang.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.lines: dict[Path_, int] = {}
        self.duplicates: list[tuple[Path_, int]] = []

    def advance(self, count: int = 1) -> None:
        end = min(self.i + count, len(self.text))
        self.line += self.text.count("\n", self.i, end)
        self.i = end

    def peek(self, count: int = 1) -> str:
        return self.text[self.i : self.i + count]

    def skip_space(self) -> None:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in " \t\r\n\ufeff":
                self.advance()
            elif c == "#" or text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.advance((len(text) if end < 0 else end) - self.i)
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                self.advance((len(text) if end < 0 else end + 2) - self.i)
            else:
                return

    def string(self) -> str:
        quote = self.peek()
        if self.text.startswith("'''", self.i):
            end = self.text.find("'''", self.i + 3)
            end = len(self.text) if end < 0 else end + 3
            value = self.text[self.i + 3 : max(end - 3, self.i + 3)]
            self.advance(end - self.i)
            return value
        start = self.i
        self.advance()
        while self.i < len(self.text) and self.text[self.i] != quote:
            if self.text[self.i] == "\\":
                self.advance()
            if self.text[self.i : self.i + 1] == "\n":
                break
            self.advance()
        raw = self.text[start : self.i + 1]
        self.advance()
        if quote == '"':
            try:
                return str(json.loads(raw))
            except ValueError:
                return raw[1:-1]
        return raw[1:-1].replace("\\'", "'")

    def bare_key(self) -> str:
        start = self.i
        while self.i < len(self.text) and self.text[self.i] not in ":,{}[]\n" and not self.text[self.i].isspace():
            self.advance()
        return self.text[start : self.i]

    def value(self, path: Path_) -> None:
        self.skip_space()
        c = self.peek()
        if c == "{":
            self.advance()
            self.members(path, closing="}")
        elif c == "[":
            self.advance()
            self.elements(path)
        elif c in "\"'":
            self.string()
        else:
            start = self.i
            while self.i < len(self.text) and self.text[self.i] not in _LITERAL_END:
                self.advance()
            if self.i == start and self.i < len(self.text) and self.text[self.i] not in ",}]":
                self.advance()  # always make progress

    def members(self, path: Path_, closing: str | None) -> None:
        seen: set[str] = set()
        while True:
            self.skip_space()
            if self.i >= len(self.text):
                return
            c = self.peek()
            if closing and c == closing:
                self.advance()
                return
            if c in ",]}":
                self.advance()
                if c != ",":
                    return
                continue
            line = self.line
            key = self.string() if c in "\"'" else self.bare_key()
            if not key and c not in "\"'":
                self.advance()
                continue
            self.skip_space()
            if self.peek() == ":":
                self.advance()
            key_path = (*path, key)
            if key in seen:
                self.duplicates.append((key_path, line))
            seen.add(key)
            self.lines[key_path] = line
            self.value(key_path)

    def elements(self, path: Path_) -> None:
        index = 0
        while True:
            self.skip_space()
            if self.i >= len(self.text):
                return
            c = self.peek()
            if c == "]":
                self.advance()
                return
            if c == ",":
                self.advance()
                continue
            if c == "}":
                self.advance()
                return
            before = self.i
            self.value((*path, index))
            index += 1
            if self.i == before:
                self.advance()


def key_lines(text: str) -> tuple[dict[Path_, int], list[tuple[Path_, int]]]:
    """Map each key path to the (1-based) line of its key, and list repeated keys."""
    scanner = _Scanner(text)
    try:
        scanner.skip_space()
        if scanner.peek() in ("{", "["):
            scanner.value(())
        else:
            scanner.members((), closing=None)  # hjson allows omitting the root braces
    except (RecursionError, IndexError):
        pass  # partial positions are still useful; validity is the parsers' call
    return scanner.lines, scanner.duplicates


def dotted(path: Path_) -> str:
    """``("zero_optimization", "stage")`` → ``zero_optimization.stage``; indices as ``[0]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out
