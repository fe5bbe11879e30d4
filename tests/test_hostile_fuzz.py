"""Property-based tests over every command's inputs (issue 10): hostile texts, keys and arguments.

* The config parser agrees with DeepSpeed's own loader (``hjson.loads`` with DeepSpeed's
  duplicate-raising hook) and with json.load for ``--hf``, on token soups that hit hjson's odd
  corners (quoteless values with ``}``, NaN on its own line, ``'''``, comments) and on mutated JSON.
* Every command (check, lookup, diff, schema), run in-process on random arguments and files:
  exit in {0, 1, 2}, no traceback, no raw control character on stdout/stderr, bounded time.

Derandomized with fixed example counts, so CI runs the same cases in well under a minute.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import hjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dsfields.cli import main
from dsfields.configfile import ConfigFileError, parse
from dsfields.model.store import available_versions

pytestmark = pytest.mark.lane("data")  # the tests below without a lane mark of their own

_BASE = settings(derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def fuzz(examples: int) -> settings:
    return settings(_BASE, max_examples=examples)
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
VERSIONS = available_versions()
VERSION = "0.19.8" if "0.19.8" in VERSIONS else (VERSIONS[-1] if VERSIONS else None)
needs_snapshots = pytest.mark.skipif(VERSION is None, reason="no committed snapshots")


# ---------------------------------------------------------------- the parser against hjson and json


def deepspeed_oracle(text: str) -> tuple[str, Any]:
    """What DeepSpeed 0.19.8's ``hjson.load(f, object_pairs_hook=dict_raise_error_on_duplicate_keys)`` gives."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            raise ValueError("Duplicate keys in DeepSpeed config")
        return result

    try:
        value = hjson.loads(text, object_pairs_hook=hook)
    except Exception:  # any exception is DeepSpeed refusing the file
        return "error", None
    return ("ok", value) if isinstance(value, dict) else ("error", None)


def ours(text: str, consumer: str = "deepspeed") -> tuple[str, Any]:
    try:
        config = parse(text, consumer=consumer)
    except ConfigFileError as exc:
        assert "\n" not in str(exc)
        return "error", None
    if consumer == "deepspeed" and config.duplicates:
        return "error", None  # recorded rather than raised; check reports them as errors
    return "ok", config.data


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types (1 is not 1.0: hjson's int rule matters), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


TOKENS = st.sampled_from([
    "{", "}", "[", "]", ",", ":", " ", "\n", "\t", '"a"', '"b"', "'c'", "key", "k2", '"\\ud800"', '"\\u001b"',
    "1", "-0", "01", "1.0", "1e9", "1e10", "2.5", "1e400", "-1e400", "1e-400", "9" * 30, "NaN", "Infinity",
    "-Infinity", "nan", "true", "false", "null", "x}y", "a b", "#c\n", "//c\n", "/*c*/", "/*", "'''ml'''", "'''",
    '"', "'", "\\", "\ufeff", "\r\n", "é", "\x01", "\u202e",
])
SOUP = st.lists(TOKENS, max_size=24).map("".join)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@st.composite
def mutated_json(draw: st.DrawFn) -> str:
    """Valid JSON of an object, then a few characters inserted or deleted."""
    text = json.dumps(draw(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=4)),
                      indent=draw(st.sampled_from([None, 1, 2])), ensure_ascii=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()) and at < len(text):
            text = text[:at] + text[at + 1:]
        else:
            text = text[:at] + draw(st.sampled_from(list('{}[],:"\' \n#/*x1eN\\'))) + text[at:]
    return text


@pytest.mark.unit
@fuzz(500)
@given(text=SOUP | mutated_json())
def test_parse_agrees_with_deepspeeds_hjson_loader(text: str) -> None:
    expected, got = deepspeed_oracle(text), ours(text)
    assert expected[0] == got[0], (text, expected, got)
    if expected[0] == "ok":
        assert same(expected[1], got[1]), (text, expected[1], got[1])


@pytest.mark.unit
@fuzz(300)
@given(text=SOUP | mutated_json())
def test_parse_for_hf_agrees_with_json_load(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    try:
        config = parse(text, consumer="hf")
    except ConfigFileError:
        assert expected is None or not isinstance(expected, dict), text
        return
    if isinstance(expected, dict):
        assert config.parse_note is None and same(expected, config.data), text
    else:
        assert config.parse_note, text  # json.load fails; the values are read as hjson to still check them


IDENT = st.from_regex(r"[a-z_]{1,6}", fullmatch=True)


@pytest.mark.unit
@fuzz(150)
@given(data=st.recursive(st.integers(0, 9) | st.just("v"),
                         lambda inner: st.dictionaries(IDENT, inner, min_size=1, max_size=3), max_leaves=10)
       .filter(lambda v: isinstance(v, dict)),
       indent=st.sampled_from([1, 2, 4]), hjsonish=st.booleans())
def test_every_key_gets_its_own_line(data: dict[str, Any], indent: int, hjsonish: bool) -> None:
    text = json.dumps(data, indent=indent)
    if hjsonish:  # quoteless keys and a comment line: DeepSpeed's hjson path
        text = "# a comment\n" + re.sub(r'"([a-z_]+)":', r"\1:", text)
    config = parse(text)
    lines = text.splitlines()

    def walk(node: Any, path: tuple[str, ...]) -> None:
        for key, value in node.items():
            line = config.lines[(*path, key)]
            assert re.match(rf'\s*"?{key}"?:', lines[line - 1]), (text, path, key, line)
            if isinstance(value, dict):
                walk(value, (*path, key))

    walk(data, ())


@pytest.mark.unit
def test_duplicates_after_a_quoteless_value_with_a_brace_are_found() -> None:
    # The old separate scanner lost track after `x}y` and missed the repeated key.
    config = parse("a: x}y\nb: 1\nc: {d: 1, d: 2}\nb: 3\n")
    assert config.data == {"a": "x}y", "b": 3, "c": {"d": 2}}
    assert config.duplicates == [(("c", "d"), 3), (("b",), 4)]
    assert config.lines[("b",)] == 4


# ---------------------------------------------------------------- every command, in-process


def run_main(args: list[str], encoding: str = "utf-8") -> tuple[int, str, str, float]:
    """``dsfields.cli.main(args)`` with stdout/stderr captured as bytes (so nothing is hidden by a decoder)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict", newline="\n")
    err = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict", newline="\n")
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    started = time.perf_counter()
    try:
        try:
            code = main(args)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdout, sys.stderr = saved
    seconds = time.perf_counter() - started
    out.flush()
    err.flush()
    return code, out.buffer.getvalue().decode(encoding), err.buffer.getvalue().decode(encoding), seconds


def assert_well_behaved(args: list[str], limit: float = 10.0) -> tuple[int, str, str]:
    code, out, err, seconds = run_main(args)
    assert code in (0, 1, 2), (args, code, err)
    for stream in (out, err):
        assert "Traceback" not in stream, (args, stream)
        raw = RAW_CONTROL.search(stream)
        assert raw is None, (args, repr(raw.group()) if raw else None, stream[:500])
    assert seconds < limit, (args, seconds)
    return code, out, err


HOSTILE = st.text(st.characters(exclude_categories=()), max_size=12) | st.sampled_from([
    "\x1b]0;pwned\x07\x1b[2J", "\u202eevil", "\ud800", "../../etc/passwd", "-", "--", "0.19.8", "stage", "",
    "zero_optimization.stage", "\x00", "a\nb", "%0A::error::x",
])
OPTION_TEXT = st.text(st.characters(exclude_categories=(), exclude_characters="\x00"), max_size=8)


@st.composite
def config_text(draw: st.DrawFn) -> str:
    keys = st.sampled_from(["train_batch_size", "zero_optimization", "stage", "optimizer", "type", "params",
                            "fp16", "enabled", "gradient_clipping", "train_micro_batch_size_per_gpu"]) | HOSTILE
    values = st.recursive(
        st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.sampled_from([10**18, -1, 0, 10**400])
        | st.floats(allow_nan=False, allow_infinity=False) | HOSTILE | st.sampled_from(["auto", "AdamW", "cpu"]),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3), max_leaves=10)
    text = json.dumps(draw(st.dictionaries(keys, values, max_size=5)), indent=draw(st.sampled_from([None, 1])),
                      ensure_ascii=draw(st.booleans()))
    return draw(st.sampled_from([text, text.replace('"', "", 2), "{" + text, text + draw(SOUP)])) \
        if draw(st.booleans()) else text


@needs_snapshots
@fuzz(150)
@given(text=config_text() | SOUP, options=st.lists(st.sampled_from(
    ["--hf", "--strict", "--format=json", "--format=github", "--format=text", "--world-size=3",
     "--world-size=0", "--world-size=1000000000000", f"--version={VERSION}", "--version=../x"]), max_size=3),
    name=st.sampled_from(["c.json", "\x1b[2Jc.json", "c\u202e.json", "c\n.json"]))
def test_check_is_bounded_and_terminal_safe(text: str, options: list[str], name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(text.encode("utf-8", "surrogatepass"))  # lone surrogates: not UTF-8, refused
        code, out, _ = assert_well_behaved(["check", *options, str(path)])
        formats = [o for o in options if o.startswith("--format=")]
        if formats and formats[-1] == "--format=json" and out:
            json.loads(out)  # escaping keeps JSON output valid


@needs_snapshots
@fuzz(150)
@given(args=st.lists(HOSTILE | st.sampled_from(["--json", "--history", "--version", VERSION or "x"]), max_size=3))
def test_lookup_is_bounded_and_terminal_safe(args: list[str]) -> None:
    assert_well_behaved(["lookup", *args])


@needs_snapshots
@fuzz(100)
@given(old=st.sampled_from(VERSIONS[:3] + VERSIONS[-2:] or ["x"]) | HOSTILE,
       new=st.sampled_from(VERSIONS[-3:] or ["x"]) | HOSTILE,
       options=st.lists(st.sampled_from(["--format=github", "--format=json", "--format=markdown",
                                         "--only=added", "--only=\x1b[2J", "--fail-on=removed",
                                         "--descriptions"]), max_size=2))
def test_diff_is_bounded_and_terminal_safe(old: str, new: str, options: list[str]) -> None:
    assert_well_behaved(["diff", *options, old, new], limit=20)


@needs_snapshots
@fuzz(60)
@given(version=HOSTILE | st.just(VERSION or "x"), name=OPTION_TEXT, strict=st.booleans())
def test_schema_is_bounded_and_terminal_safe(version: str, name: str, strict: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / (name or "s") / "schema.json"
        args = ["schema", "--version", version, "-o", str(target)] + (["--strict-unknown"] if strict else [])
        code, _, _ = assert_well_behaved(args)
        if code == 2:
            assert not any(p.is_file() for p in Path(folder).rglob("*")), "nothing half-written"


@needs_snapshots
@fuzz(100)
@given(argv=st.lists(OPTION_TEXT | st.sampled_from(["check", "lookup", "diff", "schema", "--version", "-o",
                                                    "--format", "--help", "-v", VERSION or "x"]), max_size=4))
def test_random_command_lines(argv: list[str]) -> None:
    if "docs" in argv or "extract" in argv or "snapshot" in argv:
        return  # these build or install; they have their own tests
    with tempfile.TemporaryDirectory() as folder:
        argv = [str(Path(folder) / "out.json") if a == "-o" else a for a in argv]
        assert_well_behaved(argv)


# ---------------------------------------------------------------- issue 23: resolve, migrate's writes, the pty


@needs_snapshots
@fuzz(120)
@given(text=config_text() | SOUP, options=st.lists(st.sampled_from(
    ["--hf", "--stage-only", "--format=json", "--format=text", "--world-size=3", "--world-size=0",
     "--only=zero_optimization", "--only=", "--only=,,,", "--only=\x1b[8m", f"--version={VERSION}", "--version="]),
    max_size=3), name=st.sampled_from(["c.json", "\x1b[8mc.json", "c\u202e.json", "c\n.json"]))
def test_resolve_is_bounded_and_terminal_safe(text: str, options: list[str], name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        code, out, err = assert_well_behaved(["resolve", *options, str(path)])
        formats = [o for o in options if o.startswith("--format=")]
        if code == 0 and formats and formats[-1] == "--format=json":
            json.loads(out)
        if code == 2:
            assert out == "" and err.count("\n") == 1, (options, out, err)


TARGETS = ["new", "plain", "mode600", "mode444", "symlink", "hardlink", "fifo", "null", "full", "crlf", "cr"]
"""What ``migrate -o``/``--in-place`` writes to: a new name, regular files of several modes and line endings,
a symlink, a hard link, a FIFO nobody reads, device nodes (``mknod``, as root)."""


def _make_target(folder: Path, kind: str, text: str) -> Path:
    target = folder / "target.json"
    if kind == "new":
        return target
    if kind in ("fifo", "null", "full"):
        if kind == "fifo":
            os.mkfifo(target)
        else:
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3 if kind == "null" else 7))
        return target
    body = {"crlf": text.replace("\n", "\r\n"), "cr": text.replace("\n", "\r")}.get(kind, text)
    real = folder / "real.json" if kind == "symlink" else target
    real.write_bytes(body.encode("utf-8", "surrogatepass"))
    real.chmod({"mode600": 0o600, "mode444": 0o444}.get(kind, 0o644))
    if kind == "symlink":
        target.symlink_to("real.json")
    if kind == "hardlink":
        os.link(target, folder / "other-link.json")
    return target


def _identity(path: Path) -> tuple[Any, ...]:
    st_ = path.lstat()
    return stat.S_IFMT(st_.st_mode), stat.S_IMODE(st_.st_mode), st_.st_ino, st_.st_nlink, st_.st_rdev


@needs_snapshots
@fuzz(150)
@given(text=config_text() | st.sampled_from([
           '{\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": 2, "cpu_offload": true}\n}\n',
           '{\n  "zero_optimization": {"cpu_offload": false, "stage": 1},\n  "x\\u001b[8m": 1\n}\n']),
       kind=st.sampled_from(TARGETS), how=st.sampled_from(["-o", "--in-place", "stdout", "--diff"]),
       force=st.booleans(), drop=st.booleans())
def test_migrate_never_destroys_its_target_and_is_terminal_safe(text: str, kind: str, how: str, force: bool,
                                                                drop: bool) -> None:
    if kind in ("null", "full") and os.geteuid() != 0:
        kind = "plain"  # mknod needs root
    if how == "--in-place" and kind in ("new", "fifo", "null", "full"):
        how = "-o"  # the input must be a readable regular file
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        source = folder / "source.json"
        source.write_bytes(text.encode("utf-8", "surrogatepass"))
        target = _make_target(folder, kind, text)
        config = target if how == "--in-place" else source
        before = _identity(target) if kind != "new" else None
        content = (folder / "real.json" if kind == "symlink" else target).read_bytes() \
            if kind not in ("new", "fifo", "null", "full") else None
        args = ["migrate", "--from", VERSION or "x", "--to", VERSION or "x", str(config)]
        args += {"-o": ["-o", str(target)], "--in-place": ["--in-place"], "--diff": ["--diff"], "stdout": []}[how]
        args += (["--force"] if force else []) + (["--drop-ignored"] if drop else [])
        code, out, err = assert_well_behaved(args)
        event(f"exit {code}")
        if before is not None and kind != "hardlink":
            assert _identity(target)[0] == before[0], "the target kept its kind (link, FIFO, device, file)"
            if kind in ("fifo", "null", "full", "symlink"):
                assert _identity(target) == before, "never replaced"
        if kind == "hardlink":
            assert (folder / "other-link.json").stat().st_ino == target.stat().st_ino, "the link holds"
            if not force:
                assert target.read_bytes() == content
        if kind == "mode444" and not force:
            assert target.read_bytes() == content
        if kind in ("mode600", "mode444", "plain") and how in ("-o", "--in-place"):
            assert stat.S_IMODE(target.stat().st_mode) == before[1], "mode kept"  # type: ignore[index]
        if kind in ("crlf", "cr") and how == "--in-place" and code in (0, 1):
            written = target.read_bytes().decode("utf-8", "surrogatepass")
            ending = "\r\n" if kind == "crlf" else "\r"
            assert written.replace("\r\n", "\n").replace("\r", "\n").replace("\n", ending) == written
        leftover = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
        assert leftover == [], leftover
        if code == 2:
            assert err.count("\n") == 1, err


def _on_pty(args: list[str]) -> tuple[int, str]:
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "extractor"), "TERM": "xterm"}
    child = subprocess.Popen([sys.executable, "-m", "dsfields", *args], stdin=subprocess.DEVNULL, stdout=slave,
                             stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return child.wait(60), b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@needs_snapshots
@fuzz(30)
@given(before=st.binary(max_size=12), after=st.binary(max_size=12), where=st.sampled_from(["", "optimizer"]),
       command=st.sampled_from(["check", "resolve", "migrate"]))
def test_random_bytes_in_keys_never_reach_a_terminal_raw(before: bytes, after: bytes, where: str,
                                                        command: str) -> None:
    # Every byte as the character of that code (latin-1): ESC, C1 controls, CR, NUL; then a newline that
    # would start a forged line if it reached the terminal.
    key = before.decode("latin-1") + "\nZQX forged" + after.decode("latin-1") + "\x1b[8m"
    data: dict[str, Any] = {key: 1, "train_batch_size": 8}
    if where:
        data = {"train_batch_size": 8, "optimizer": {"type": key, "params": {key: 1}}}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (before.decode("latin-1").replace("/", "_").replace("\x00", "") + "c.json")
        path.write_text(json.dumps(data))
        args = [command, str(path)] + (["--from", VERSION or "x", "--to", VERSION or "x"] if command == "migrate" else
                                       ["--version", VERSION or "x"])
        code, shown = _on_pty(args)
    assert code in (0, 1, 2) and "Traceback" not in shown, shown
    assert "\x1b" not in shown and "\r" not in shown and RAW_CONTROL.search(shown) is None, repr(shown)
    assert not any(line.startswith("ZQX") for line in shown.split("\n")), shown
