"""Read a ``ds_config`` file the way its consumer will, and remember the line of every key.

DeepSpeed 0.19.8 opens a config path with ``hjson.load(open(path), object_pairs_hook=
dict_raise_error_on_duplicate_keys)``; the HF Trainer (accelerate's ``HfDeepSpeedConfig``) opens
it with ``json.load`` and hands DeepSpeed a dict. ``check`` must judge the values the consumer
really gets, so the parse *is* the consumer's parser: hjson's (or json's) own decoder, with only
its object and array steps wrapped to record where each key starts, to bound the nesting depth
and to note repeated keys. One pass gives the values, the key lines and the duplicates; nothing
is ever executed, included or followed.

What DeepSpeed's loader does with edge cases, and so what :func:`parse` does (``consumer="hf"``
in brackets, as json.load):

* ``NaN``, ``Infinity`` after a key on the same line: hjson reads ``NaN}`` as the start of a
  quoteless string and fails at the end of the file -> rejected (json: accepted as floats). On a
  line of its own, ``NaN`` is the *string* ``"NaN"`` to hjson, which DeepSpeed then gets.
* ``1e400`` (any float literal beyond the double range): hjson raises OverflowError -> rejected
  (json: ``inf``). ``1e-400`` is ``0``.
* integers of more than 4300 digits: Python's ``int()`` limit, ValueError -> rejected (same).
* duplicate keys at any depth: DeepSpeed raises ValueError; here they are recorded with the line
  of the repetition (``check`` reports them as errors) and the last value is kept (json: kept).
* lone surrogates (``"\\ud800"``): accepted by both, and kept; output escapes them.
* integral floats below 1e10 (``1e9``, ``1.0``) are ints to hjson (json: floats).

Limits of dsfields' own (the consumer has none, but a CI job must stay bounded): files of at
most :data:`MAX_BYTES` (8 MiB, about a thousand times a large real config), regular files only
(a FIFO, device or directory is refused before it is opened, and it is opened non-blocking),
nesting at most :data:`MAX_DEPTH` deep (DeepSpeed's hjson fails with RecursionError a few
hundred levels down).
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
import math
import re

from dsfields.model.readfile import MAX_BYTES, UnreadableFile, read_bytes, too_large

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib cost check's start-up milliseconds; annotations are strings anyway
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

Path_ = tuple[str | int, ...]
"""A key path: object keys and array indices from the top of the file."""

YAML_SUFFIXES = (".yaml", ".yml")
"""The names of an accelerate config (``accelerate config`` writes ``default_config.yaml``)."""


def is_accelerate_yaml(path: Any) -> bool:
    """Whether a file given where a ds_config is expected is an accelerate YAML: by its name (``.yaml``/``.yml``),
    never by opening it (a ds_config is JSON or hjson). Here, beside the ds_config reader, so that ``check`` asks
    it without importing ``dsfields.convert``."""
    import os

    return os.path.splitext(os.fspath(path))[1].lower() in YAML_SUFFIXES


MAX_DEPTH = 100
"""Deepest nesting of objects and arrays accepted (real ds_configs nest 3 or 4 levels)."""
INT_DIGITS = 4300
"""Python's default ``int_max_str_digits``: the DeepSpeed process cannot read a longer integer."""


class ConfigFileError(Exception):
    """The file cannot be used at all (missing, undecodable, malformed, not an object): one line."""


class ConfigFile:
    """A parsed config with the line of every key (a plain class: ``dataclasses`` costs start-up time)."""

    __slots__ = ("name", "data", "syntax", "lines", "duplicates", "parse_note")

    def __init__(self, name: str, data: dict[str, Any], syntax: str, lines: dict[Path_, int] | None = None,
                 duplicates: list[tuple[Path_, int]] | None = None, parse_note: str | None = None) -> None:
        self.name = name
        self.data = data
        self.syntax = syntax
        """``"json"`` when read with json's decoder (consumer ``hf``), else ``"hjson"``."""
        self.lines = lines if lines is not None else {}
        self.duplicates = duplicates if duplicates is not None else []
        """Keys repeated inside one object, with the line of the repetition."""
        self.parse_note = parse_note
        """Why the chosen consumer would not read the text as given (e.g. HF's json.load on hjson)."""

    def line_of(self, path: Path_) -> int | None:
        """Line of ``path``'s key, else of its nearest ancestor present in the file."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


# ---------------------------------------------------------------- reading the file


_INLINE: dict[int, tuple[str, bytes]] = {}
"""Config texts given in memory (``dsfields mcp``: a client sends the text, no file is written), by thread:
thread id -> (the name the text stands for, its bytes). Set only inside :func:`inline_config`."""


class inline_config:
    """Within, on this thread, reading the config ``name`` reads ``text`` instead of a file (same size limit).

    A plain class, not ``contextlib``: ``check`` and ``lookup`` import this module and must start fast."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.data = name, text.encode("utf-8", "surrogatepass")
        if len(self.data) > MAX_BYTES:
            raise _too_large(name)

    def __enter__(self) -> None:
        import threading

        self.ident = threading.get_ident()
        _INLINE[self.ident] = (self.name, self.data)

    def __exit__(self, *exc: object) -> None:
        _INLINE.pop(self.ident, None)


def read_config_bytes(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most :data:`MAX_BYTES`, else ConfigFileError
    (:func:`dsfields.model.readfile.read_bytes`, the one reader of a file a user names). A text given with
    :func:`inline_config` is returned as it is."""
    if _INLINE:
        import threading

        given = _INLINE.get(threading.get_ident())
        if given is not None and given[0] == str(path):
            return given[1]
    try:
        return read_bytes(path)
    except UnreadableFile as exc:
        raise ConfigFileError(str(exc)) from None


def _too_large(name: object) -> ConfigFileError:
    return ConfigFileError(str(too_large(name)))


def load(path: Path, consumer: str = "deepspeed") -> ConfigFile:
    raw = read_config_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    # Both consumers open the file in text mode: universal newlines.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return parse(text, str(path), consumer)


def load_loadable(path: Path, hf: bool = False) -> ConfigFile:
    """The file as its consumer loads it (the HF Trainer's ``json.load`` with ``hf``, else DeepSpeed's hjson), and
    refused as that loader refuses it: the one rule of every command that shows values (resolve, upgrade,
    estimate); ``check`` reports the same files as findings."""
    config = load(path, "hf" if hf else "deepspeed")
    why = unloadable(config, hf)
    if why is not None:
        raise ConfigFileError(why)
    return config


def unloadable(config: ConfigFile, hf: bool) -> str | None:
    """Why the consumer cannot load ``config`` (one line), or None: under the HF Trainer a file that is not strict
    JSON; under DeepSpeed a key repeated in one object."""
    from dsfields.model.termsafe import shown

    if hf and config.parse_note:
        return (f"{shown(config.name)}: the HF Trainer cannot load it ({shown(config.parse_note)}); "
                "dsfields check --hf says more")
    if not hf and config.duplicates:
        path, line = config.duplicates[0]
        return (f"{shown(config.name)}: line {line}: {shown(dotted(path))} is repeated in one object, "
                'and DeepSpeed refuses the file ("Duplicate keys in DeepSpeed config")')
    return None


# ---------------------------------------------------------------- parsing


def parse(text: str, name: str = "<config>", consumer: str = "deepspeed") -> ConfigFile:
    """Parse as ``consumer`` (``"deepspeed"``: hjson, ``"hf"``: json) would; duplicates are recorded, not fatal."""
    if len(text) > MAX_BYTES:
        raise _too_large(name)
    note = None
    if consumer == "hf":
        try:
            data, recorder = _parse_json(text)
            syntax = "json"
        except _Rejected as exc:
            raise ConfigFileError(f"{name}: {exc.describe(text)}") from None
        except ValueError as json_error:
            # Not JSON: json.load fails. Read it as DeepSpeed would to still check the values.
            try:
                data, recorder = _parse_hjson(text)
            except (_Rejected, ValueError, IndexError):
                raise ConfigFileError(f"{name}: malformed JSON: {_one_line(json_error)}") from None
            syntax = "hjson"
            note = f"not strict JSON, and the HF Trainer reads the file with json.load: {_one_line(json_error)}"
    else:
        try:
            # Strict JSON reads the same with json's decoder given hjson's number rules (a
            # property the fuzz tests hold against hjson itself), only faster; NaN/Infinity are
            # not JSON to hjson, so they go to hjson too, which rejects them.
            data, recorder = _parse_json(text, hjson_numbers=True)
            syntax = "json"
        except _Rejected as exc:
            raise ConfigFileError(f"{name}: {exc.describe(text)}") from None
        except ValueError:
            syntax = "hjson"
            try:
                data, recorder = _parse_hjson(text)
            except _Rejected as exc:
                raise ConfigFileError(f"{name}: {exc.describe(text)}") from None
            except (ValueError, IndexError) as exc:  # hjson raises IndexError at some unexpected ends
                raise ConfigFileError(f"{name}: {_hjson_failure(text, exc)}") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"{name}: the top level is {_json_type(data)}, not an object")
    config = ConfigFile(name, data, syntax, parse_note=note)
    config.lines, config.duplicates = recorder.key_lines(data)
    return config


class _Rejected(Exception):
    """The consumer's loader raises on this input (or it exceeds a limit): message and text offset."""

    def __init__(self, message: str, pos: int | None = None, number: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.number = number

    def locate(self, text: str, start: int) -> _Rejected:
        """Place a number's error at the number itself, searched from ``start`` (its value or array)."""
        if self.pos is None:
            found = text.find(self.number, start) if self.number else -1
            self.pos = found if found >= 0 else start
        return self

    def describe(self, text: str) -> str:
        if self.pos is None:
            return self.message
        return f"line {text.count(chr(10), 0, self.pos) + 1}: {self.message}"


def _float_number(text: str) -> float:
    """hjson's and DeepSpeed's float: one beyond the double range is an OverflowError in hjson."""
    value = float(text)
    if math.isinf(value):
        raise _Rejected(f"{_short(text)} is beyond the float range; DeepSpeed's loader (hjson) raises "
                        "OverflowError on it", number=text)
    return value


def _hjson_float(text: str) -> int | float:
    """hjson's number rule for json's decoder (decoder.scantfnns): integral and below 1e10 is an int."""
    value = _float_number(text)
    return int(value) if int(value) == value and abs(value) < 1e10 else value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _int_number(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > INT_DIGITS:
        raise _Rejected(f"an integer of {digits} digits; Python, so DeepSpeed's loader, reads at most "
                        f"{INT_DIGITS} (ValueError)", number=text)
    return int(text)


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}…{text[-10:]} ({len(text)} characters)"


class _Recorder:
    """What the wrapped object and array steps saw: each object's pairs with their key offsets."""

    def __init__(self, text: str, key_offset: Callable[[str, int], int]) -> None:
        self.text = text
        self.depth = 0
        self.key_offset = key_offset
        """Offset of the key, from the offset the wrapper recorded (the key's, or its value's)."""
        self.objects: dict[int, tuple[dict[str, Any], list[tuple[str, Any, int]]]] = {}

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Rejected(f"nested deeper than {MAX_DEPTH} levels, dsfields' limit", max(pos, 0))

    def finish(self, pairs: list[tuple[str, Any]], offsets: list[int]) -> dict[str, Any]:
        result = dict(pairs)
        # The dict itself is kept too: ids stay unique while the recorder lives.
        self.objects[id(result)] = (result, [(k, v, o) for (k, v), o in zip(pairs, offsets, strict=False)])
        return result

    def key_lines(self, data: Any) -> tuple[dict[Path_, int], list[tuple[Path_, int]]]:
        """Every key path's line (its last occurrence) and the repeated keys, in file order."""
        newlines = [m.start() for m in re.finditer("\n", self.text)]
        lines: dict[Path_, int] = {}
        duplicates: list[tuple[int, Path_, int]] = []
        stack: list[tuple[Path_, Any]] = [((), data)]
        while stack:
            path, value = stack.pop()
            if isinstance(value, list):
                stack.extend(((*path, i), item) for i, item in enumerate(value))
                continue
            entry = self.objects.get(id(value)) if isinstance(value, dict) else None
            if entry is None:
                continue
            seen: set[str] = set()
            for key, child, offset in entry[1]:  # in file order: a repeated key's last line wins
                key_path = (*path, key)
                at = self.key_offset(self.text, offset)
                line = lines[key_path] = bisect.bisect_right(newlines, at - 1) + 1
                if key in seen:
                    duplicates.append((at, key_path, line))
                seen.add(key)
                stack.append((key_path, child))
        duplicates.sort(key=lambda item: item[0])
        return lines, [(path, line) for _, path, line in duplicates]


def _parse_hjson(text: str) -> tuple[Any, _Recorder]:
    """``hjson.loads(text)`` as DeepSpeed calls it, recording key offsets; duplicates do not raise."""
    from hjson import decoder as hd

    recorder = _Recorder(text, lambda _text, offset: offset)

    def parse_object(state: tuple[str, int], encoding: str, strict: bool, scan_once: Callable[..., Any],
                     object_hook: Any, object_pairs_hook: Any, memo: Any = None,
                     objectWithoutBraces: bool = False) -> tuple[dict[str, Any], int]:
        # hjson 3.1.0's JSONObject, line for line, plus the key offsets (getNext is idempotent, so
        # calling it before scanKeyName, which calls it first thing, changes nothing).
        s, end = state
        recorder.enter(end - 1)
        try:
            pairs: list[tuple[str, Any]] = []
            offsets: list[int] = []
            ch, end = hd.getNext(s, end)
            if not objectWithoutBraces and ch == "}":
                return recorder.finish(pairs, offsets), end + 1
            while True:
                ch, end = hd.getNext(s, end)
                key_at = end
                key, end = hd.scanKeyName(s, end, encoding, strict)
                ch, end = hd.getNext(s, end)
                if ch != ":":
                    raise hd.HjsonDecodeError("Expecting ':' delimiter", s, end)
                ch, end = hd.getNext(s, end + 1)
                value_at = end
                try:
                    value, end = scan_once(s, end)
                except _Rejected as exc:
                    raise exc.locate(s, value_at) from None
                pairs.append((key, value))
                offsets.append(key_at)
                ch, end = hd.getNext(s, end)
                if ch == ",":
                    ch, end = hd.getNext(s, end + 1)
                if objectWithoutBraces:
                    if ch == "":
                        break
                elif ch == "}":
                    end += 1
                    break
                ch, end = hd.getNext(s, end)
            return recorder.finish(pairs, offsets), end
        finally:
            recorder.depth -= 1

    def parse_array(state: tuple[str, int], scan_once: Callable[..., Any]) -> tuple[list[Any], int]:
        recorder.enter(state[1] - 1)
        try:
            return hd.JSONArray(state, scan_once)
        except _Rejected as exc:
            raise exc.locate(state[0], state[1]) from None
        finally:
            recorder.depth -= 1

    decoder = hd.HjsonDecoder(parse_float=_float_number, parse_int=_int_number)
    decoder.parse_object = parse_object
    decoder.parse_array = parse_array
    decoder.scan_once, decoder.scan_object_once = hd.make_scanner(decoder)
    return decoder.decode(text), recorder


_JSON_SPACE = " \t\n\r"


def _json_key_offset(text: str, value_at: int) -> int:
    """The key's closing quote, back from its value over ``:`` and whitespace (a JSON key holds no newline)."""
    at = value_at - 1
    while at > 0 and text[at] in _JSON_SPACE:
        at -= 1
    at -= 1  # the ':'
    while at > 0 and text[at] in _JSON_SPACE:
        at -= 1
    return max(at, 0)


def _parse_json(text: str, hjson_numbers: bool = False) -> tuple[Any, _Recorder]:
    """``json.loads(text)`` as accelerate's HfDeepSpeedConfig calls it, recording where values start.

    With ``hjson_numbers``, numbers are read as hjson reads them and NaN/Infinity raise ValueError.
    """
    recorder = _Recorder(text, _json_key_offset)

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Callable[..., Any], object_hook: Any,
                     object_pairs_hook: Any, memo: Any = None) -> tuple[dict[str, Any], int]:
        recorder.enter(s_and_end[1] - 1)
        starts: list[int] = []

        def scan_value(string: str, idx: int) -> tuple[Any, int]:
            starts.append(idx)
            try:
                return scan_once(string, idx)
            except _Rejected as exc:
                raise exc.locate(string, idx) from None

        try:
            return json.decoder.JSONObject(s_and_end, strict, scan_value, object_hook,
                                           lambda pairs: recorder.finish(pairs, starts), memo)
        finally:
            recorder.depth -= 1

    def parse_array(s_and_end: tuple[str, int], scan_once: Callable[..., Any]) -> tuple[list[Any], int]:
        recorder.enter(s_and_end[1] - 1)
        try:
            return json.decoder.JSONArray(s_and_end, scan_once)
        except _Rejected as exc:
            raise exc.locate(s_and_end[0], s_and_end[1]) from None
        finally:
            recorder.depth -= 1

    if hjson_numbers:
        decoder = json.JSONDecoder(parse_int=_int_number, parse_float=_hjson_float, parse_constant=_not_json)
    else:
        decoder = json.JSONDecoder(parse_int=_int_number)
    decoder.parse_object = parse_object
    decoder.parse_array = parse_array
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder.decode(text), recorder


_NON_FINITE = r"(?<![\w\"'.])(-?Infinity|NaN)(?![\w\"'])"


def _hjson_failure(text: str, exc: BaseException) -> str:
    """Why DeepSpeed's loader rejects ``text``, in the words that name the real mistake."""
    if isinstance(exc, IndexError):  # an unterminated /* or ''' : hjson runs off the end of the text
        return f"malformed JSON/hjson: unexpected end of the file (DeepSpeed's hjson raises IndexError: {exc})"
    if not text.lstrip().startswith(("{", "[")):
        return f"malformed JSON/hjson: {_one_line(exc)}"
    # A file that looks like JSON gets json's message ("Expecting ',' delimiter: line 7"), which
    # names the real mistake; hjson's is about its own quoteless syntax.
    try:
        json.loads(text)
    except (ValueError, RecursionError) as json_error:
        # Unless json stopped at hjson's own syntax (a comment, a quoteless key, a '' string) that hjson read
        # past: the file is hjson, and hjson's message names the line where it really fails.
        at = getattr(json_error, "pos", None)
        if isinstance(at, int) and at < len(text) and (text[at] in "#/'" or re.match(r"[A-Za-z_$][\w$-]*\s*:",
                                                                                      text[at:at + 200])):
            return f"malformed hjson: {_one_line(exc)}"
        return f"malformed JSON: {_one_line(json_error)}"
    # Valid JSON that hjson rejects: NaN or Infinity (json's extensions), hjson reads them as
    # the start of a quoteless string that runs to the end of the line.
    match = re.search(_NON_FINITE, text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        return (f"line {line}: {match.group()} is not JSON, and DeepSpeed's loader (hjson) rejects it "
                f"(hjson: {_one_line(exc)})")
    return f"DeepSpeed's loader (hjson) rejects this JSON: {_one_line(exc)}"


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


def dotted(path: Path_) -> str:
    """``("zero_optimization", "stage")`` → ``zero_optimization.stage``; indices as ``[0]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out
