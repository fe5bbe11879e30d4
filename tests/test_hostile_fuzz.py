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


# ---------------------------------------------------------------- issue 43: upgrade and estimate, exact exit codes


def _config_file(folder: str, name: str, text: str) -> str:
    path = Path(folder) / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return str(path)


JSON_ONLY = st.sampled_from(['{"train_batch_size": 8,\n "train_batch_size": 16}',
                             '{"zero_optimization": {"stage": 1, "stage": 2}}', '{"gradient_clipping": NaN}',
                             '{"a": 1e400}'])
"""DeepSpeed's hjson refuses them (duplicate keys, NaN, a float beyond the double range); the HF Trainer's
json.load takes them."""
HJSON_ONLY = st.sampled_from(["{\n  # a comment\n  train_batch_size: 8\n}\n", "{train_batch_size: 8}",
                              "{\n  \"a\": 1, // note\n}\n", ""])
"""Files DeepSpeed reads (hjson; an empty file is {} to it) and the HF Trainer's json.load refuses."""
UNUSABLE_TEXTS = st.sampled_from(["[1, 2]", '"a string"', "42", "{", '{"a": 1 "b": 2}', "\ud800",
                                  "{" * 200 + "}" * 200])
"""Files neither loader can use (not an object, malformed, not UTF-8, nested past the bound): exit 2."""
JSON_OBJECTS = st.dictionaries(
    st.sampled_from(["train_batch_size", "zero_optimization", "optimizer", "fp16", "bf16", "steps_per_print",
                     "gradient_clipping", "wall_clock_breakdown", "train_micro_batch_size_per_gpu"]) | HOSTILE,
    st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | HOSTILE
                 | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["auto", "cpu"]),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
                 max_leaves=8), max_size=5)
"""Any JSON object (values of every type under known and hostile keys): upgrade reports on every one."""
BAD_VERSIONS = ["", " ", "x", "../x", "0.1\n", "\x1b[2J", "9.9.9", "0.19.8\x00"]
UPGRADE_VERSIONS = st.sampled_from((VERSIONS[:2] + VERSIONS[-2:]) * 4 + BAD_VERSIONS)
"""Snapshotted releases four times as often as names that are none."""


@needs_snapshots
@fuzz(120)
@given(content=st.one_of(JSON_OBJECTS.map(lambda d: ("ok", json.dumps(d))),
                         UNUSABLE_TEXTS.map(lambda t: ("unusable", t)), JSON_ONLY.map(lambda t: ("json", t)),
                         HJSON_ONLY.map(lambda t: ("hjson", t))),
       source=UPGRADE_VERSIONS, target=UPGRADE_VERSIONS, hf=st.booleans(),
       fmt=st.sampled_from(["text", "markdown", "json"]), lang=st.sampled_from(["en", "zh"]),
       name=st.sampled_from(["c.json", "\x1b[2Jc.json", "c\u202e.json", "c\n.json: ok"]))
def test_upgrade_exit_codes_are_exact(content: tuple[str, str], source: str, target: str, hf: bool, fmt: str,
                                      lang: str, name: str) -> None:
    kind, text = content
    loadable = kind == "ok" or (kind == "hjson" and not hf) or (kind == "json" and hf)
    with tempfile.TemporaryDirectory() as folder:
        path = _config_file(folder, name, text)
        # a file both releases can take is reported on, with check --version TARGET's exit (1: it refuses it)
        expected = run_main(["check", "--version", target, path, *(["--hf"] if hf else [])])[0] \
            if loadable and source in VERSIONS and target in VERSIONS else 2
        args = ["upgrade", path, "--from", source, "--to", target, "--format", fmt, "--lang", lang]
        code, out, err = assert_well_behaved(args + (["--hf"] if hf else []), limit=20)
        event(f"exit {code}")
        assert code == expected, (kind, text[:80], source, target, hf, code, err)
        if code == 2:
            assert out == "" and err.count("\n") == 1, (out, err)
        elif fmt == "json":
            assert json.loads(out)["to"] == target


COUNTS = {"params": 10**15, "largest-layer-params": 10**15, "gpus-per-node": 1024, "nodes": 1_000_000,
          "hidden-size": 2**20, "layers": 100_000, "seq-len": 100_000_000, "micro-batch": 1_000_000, "heads": 2**20}
"""estimate's count options and the bound each has (dsfields.estimate.COUNT_BOUNDS, by option name)."""
BAD_COUNTS = st.sampled_from(["0", "-1", "abc", "", "1.5", "nan", "inf", "1e400", "7X", "1e307", "9" * 5000,
                              "\x1b[2J", "0.5", "1e-10B"])


@st.composite
def count_value(draw: st.DrawFn, bound: int) -> tuple[bool, str]:
    """(valid, text) for one count option: a whole number from 1 to its bound (plain, with _ or a suffix), or
    beyond it, or not a count at all."""
    choice = draw(st.integers(0, 11))  # one in six is not a count
    if choice == 0:
        return False, draw(BAD_COUNTS)
    if choice == 1:
        return False, str(bound + draw(st.integers(1, 10**20)))
    number = draw(st.integers(1, min(bound, 10**6) if choice % 2 else bound))
    if choice == 2 and number % 10**6 == 0 and number // 10**6 < 10**6:
        return True, f"{number // 10**6}M"
    return True, f"{number:_}" if draw(st.booleans()) else str(number)


@st.composite
def estimate_config(draw: st.DrawFn) -> tuple[bool, int | None, str]:
    """(valid, ZeRO stage, text): the keys estimate reads, with values DeepSpeed takes or refuses."""
    invalid = draw(st.integers(0, 3)) == 0
    stage = draw(st.integers(0, 3))
    zero: dict[str, Any] = {"stage": stage}
    config: dict[str, Any] = {"zero_optimization": zero}
    if draw(st.booleans()):
        zero["reduce_bucket_size"] = draw(st.integers(0, 2**63 - 1) | st.just("auto"))
    if draw(st.booleans()):
        zero["offload_optimizer"] = {"device": draw(st.sampled_from(["cpu", "none"]))}
    if draw(st.booleans()):
        config["train_micro_batch_size_per_gpu"] = draw(st.integers(1, 10**6) | st.just("auto"))
    if draw(st.booleans()):
        config[draw(st.sampled_from(["fp16", "bf16"]))] = {"enabled": draw(st.booleans())}
    if draw(st.booleans()):
        config[draw(HOSTILE)] = draw(st.integers() | HOSTILE)  # a key estimate does not read
    if not invalid:
        return True, stage, json.dumps(config)
    broken = draw(st.sampled_from(["stage", "negative", "int64", "string", "micro", "micro0", "text"]))
    if broken == "stage":
        zero["stage"] = draw(st.integers(4, 10**6))
    elif broken == "negative":
        zero["reduce_bucket_size"] = -draw(st.integers(1, 10**30))
    elif broken == "int64":
        zero["reduce_bucket_size"] = 2**63 + draw(st.integers(0, 10**30))
    elif broken == "string":
        zero["reduce_bucket_size"] = draw(st.sampled_from(["abc", "", "1e3x"]))
    elif broken == "micro":
        config["train_micro_batch_size_per_gpu"] = 10**6 + draw(st.integers(1, 10**30))
    elif broken == "micro0":
        config["train_micro_batch_size_per_gpu"] = -draw(st.integers(0, 10**6))
    else:
        return False, None, draw(UNUSABLE_TEXTS | JSON_ONLY)  # estimate reads the file as DeepSpeed does
    return False, None, json.dumps(config)


@needs_snapshots
@fuzz(150)
@given(config=estimate_config(), given_counts=st.dictionaries(
           st.sampled_from(sorted(set(COUNTS) - {"params"})), st.just(None), max_size=4),
       data=st.data(), fmt=st.sampled_from(["text", "json"]), lang=st.sampled_from(["en", "zh"]))
def test_estimate_exit_codes_are_exact(config: tuple[bool, int | None, str], given_counts: dict[str, None],
                                       data: st.DataObject, fmt: str, lang: str) -> None:
    valid, stage, text = config
    options: list[str] = []
    counts_valid = True
    for option in ["params", *sorted(given_counts)]:
        ok, value = data.draw(count_value(COUNTS[option]), label=option)
        counts_valid &= ok
        options.append(f"--{option}={value}")
    needs_layer = stage == 3 and not {"largest-layer-params", "hidden-size"} & set(given_counts)
    expected = 0 if valid and counts_valid and not needs_layer else 2
    with tempfile.TemporaryDirectory() as folder:
        path = _config_file(folder, "c.json", text)
        args = ["estimate", path, "--version", str(VERSION), *options, "--format", fmt, "--lang", lang]
        code, out, err = assert_well_behaved(args, limit=20)
        event(f"exit {code}")
        assert code == expected, (text[:200], options, code, err)
        if code == 2:
            assert out == "" and err.count("\n") == 1, (out, err)
        elif fmt == "json":
            json.loads(out)


# ---------------------------------------------------------------- explain: pasted text of any size and bytes

PASTE_PARTS = st.sampled_from([
    "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
    "gradient_acc_step * world_size 16 != 1 * 8 * 1",
    "5 validation errors for DeepSpeedBF16Config\nloss_scale\n  Extra inputs are not permitted [type=extra_forbidden, "
    "input_value=0, input_type=int]",
    "[rank0]: Traceback (most recent call last):", '  File "/x/deepspeed/runtime/config.py", line 602, in f',
    "\x1b[31mRuntimeError\x1b[0m: NCCL error", "my offload does nothing", "显存不够", "\r\n", "\t", "\x00",
    "\x1b]0;pwned\x07", "\u202e", "DS00001", "zero_optimization", "%s %d {x}",
]) | HOSTILE


@needs_snapshots
@fuzz(80)
@given(parts=st.lists(PASTE_PARTS, max_size=6), json_format=st.booleans(), lang=st.sampled_from(["en", "zh"]))
def test_explain_is_bounded_and_terminal_safe(parts: list[str], json_format: bool, lang: str) -> None:
    """Any paste: exit 0 with an answer or 1 with one line saying it cannot place it, never 2 (a paste is always
    usable input; only a message ID no release has is refused), no traceback, no raw control character, JSON of
    the documented shape."""
    text = "".join(parts)
    args = ["explain", "--version", VERSION, "--lang", lang, *(["--format", "json"] if json_format else []), "--", text]
    code, out, err = assert_well_behaved(args, limit=30.0)
    an_id = re.fullmatch(r"(?i)DS\d{5}", text.strip()) is not None  # an ID no release has is a usage error
    assert code in ((0, 2) if an_id else (0, 1)), (text, code, err)
    if code != 0 and not json_format:
        assert (out + err).strip() and "\n" not in (out + err).strip(), (text, out, err)  # one line
    if json_format and out and not an_id:
        answer = json.loads(out)
        assert answer["format"] == 1 and isinstance(answer["causes"], list)
        assert (code == 0) == bool(answer["causes"] or answer["not_config"]), (text, answer)


# ---------------------------------------------------------------- init: any situation, on a closed stdin

INIT_COUNTS = st.sampled_from(["7B", "1.3B", "70B", "180B", "1e307", "-1", "0", "nan", "1e400", "7 B", "½"]) | HOSTILE
INIT_MEMORY = st.sampled_from(["80GB", "24GB", "A100-80GB", "H100", "RTX4090", "0GB", "1e30GB", "-80GB", "banana"])


@needs_snapshots
@fuzz(60)
@given(params=INIT_COUNTS, gpus=st.sampled_from(["8", "1", "0", "1e9", "x"]) | HOSTILE, memory=INIT_MEMORY | HOSTILE,
       hf=st.booleans(), extra=st.lists(st.sampled_from(["--nodes=8", "--nodes=0", "--seq-len=1e12", "--seq-len=4096",
                                                           "--micro-batch=0", "--micro-batch=4", "--lang=zh",
                                                           "--precision=fp16"]), max_size=2))
def test_init_is_bounded_terminal_safe_and_writes_only_its_output(params: str, gpus: str, memory: str, hf: bool,
                                                                   extra: list[str]) -> None:
    """Any situation, stdin closed (no questions asked): exit 0 with a config that is JSON, 1 when nothing fits, 2
    with one line for unusable input; nothing written but -o's file, and that only on exit 0."""
    with tempfile.TemporaryDirectory() as folder:
        out_file = Path(folder) / "ds_config.json"
        args = ["init", f"--params={params}", f"--gpus-per-node={gpus}", f"--gpu-memory={memory}",
                f"--version={VERSION}", *(["--hf"] if hf else []), *extra, "-o", str(out_file)]
        saved = sys.stdin
        sys.stdin = io.StringIO("")  # a pipe that is already closed: no questions
        try:
            code, out, err = assert_well_behaved(args, limit=30.0)
        finally:
            sys.stdin = saved
        assert code in (0, 1, 2), (args, code, err)
        if code == 2:
            assert err.strip() and "\n" not in err.strip(), (args, err)
        written = sorted(p.name for p in Path(folder).iterdir())
        assert written == (["ds_config.json"] if code == 0 else []), (args, code, written, err)
        if code == 0:
            json.loads(out_file.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- the MCP server's tools, in process

MCP_TEXT = HOSTILE | st.sampled_from(['{"train_batch_size": 8}', '{"zero_optimization": {"stage": 9}}', "{", "[]",
                                      '{"a": 1, "a": 2}', "x" * 5000])


@needs_snapshots
@fuzz(80)
@given(tool=st.sampled_from(["lookup", "check", "resolve", "estimate", "diff", "upgrade", "schema", "explain"]),
       text=MCP_TEXT, version=st.sampled_from([VERSION or "x", "0.10.3", "9.9.9"]) | HOSTILE,
       lang=st.sampled_from([None, "en", "zh"]))
def test_every_mcp_tool_answers_or_refuses_in_one_line(tool: str, text: str, version: str, lang: str | None) -> None:
    """A tool called with anything answers the command's output or refuses with its one line (ToolFailure); it
    never raises anything else, never writes a file and never prints a raw control character."""
    pytest.importorskip("mcp")
    from dsfields import mcp_server

    calls = {
        "lookup": lambda: mcp_server.lookup(text or "x", version=version, lang=lang),
        "check": lambda: mcp_server.check(config_text=text or "{}", version=version, lang=lang),
        "resolve": lambda: mcp_server.resolve(config_text=text or "{}", version=version, lang=lang),
        "estimate": lambda: mcp_server.estimate("7B", config_text=text or "{}", version=version, lang=lang),
        "diff": lambda: mcp_server.diff(version, text or "x", lang=lang),
        "upgrade": lambda: mcp_server.upgrade(version, config_text=text or "{}", lang=lang),
        "schema": lambda: mcp_server.schema(version=version, lang=lang),
        "explain": lambda: mcp_server.explain(text or "x", version=version, lang=lang),
    }
    with tempfile.TemporaryDirectory() as folder:
        before = os.getcwd()
        os.chdir(folder)
        try:
            try:
                answer = calls[tool]()
            except mcp_server.ToolFailure as exc:
                answer = str(exc)
                assert answer and "\n" not in answer.strip(), (tool, answer)
        finally:
            os.chdir(before)
        assert list(Path(folder).iterdir()) == [], tool
    assert isinstance(answer, str) and "Traceback" not in answer
    assert RAW_CONTROL.search(answer) is None, (tool, answer[:300])


# ---------------------------------------------------------------- convert: hostile YAML and targets

ACCELERATE_CORPUS = Path(__file__).resolve().parent / "fixtures" / "accelerate-yaml"
YAML_SAMPLES = [p.read_text(encoding="utf-8") for p in sorted(ACCELERATE_CORPUS.glob("*.yaml"))[5:12]]
YAML_WORDS = st.sampled_from(["zero_stage", "deepspeed_config", "mixed_precision", "offload_optimizer_device",
                              "gradient_clipping", "gradient_accumulation_steps", "zero3_init_flag",
                              "deepspeed_config_file", "distributed_type", "num_processes"]) | HOSTILE
YAML_VALUES = st.sampled_from(["3", "9", "-1", "1e400", "nvme", "cpu", "auto", "'no'", "no", "fp16", "bf16", "fp8",
                               "true", "&a [1]", "*a", "!!python/object:os.system", "[]", "{}", "- x", "", "~",
                               "DEEPSPEED", "/dev/zero", "../../etc/passwd", "1.0", "nan"]) | HOSTILE


@st.composite
def accelerate_yaml(draw: st.DrawFn) -> str:
    """A real YAML with a few lines changed, added or indented wrong."""
    lines = draw(st.sampled_from(YAML_SAMPLES)).splitlines()
    for _ in range(draw(st.integers(0, 4))):
        line = f"{' ' * draw(st.sampled_from([0, 1, 2, 4, 7]))}{draw(YAML_WORDS)}: {draw(YAML_VALUES)}"
        if draw(st.booleans()) and lines:
            lines[draw(st.integers(0, len(lines) - 1))] = line
        else:
            lines.insert(draw(st.integers(0, len(lines))), line)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\n" + "  a:\n" * 40]))


@needs_snapshots
@fuzz(120)
@given(text=accelerate_yaml() | SOUP, to=st.sampled_from([[], ["--to", "ds_config"], ["--lang", "zh"],
                                                         ["--launch-args", "--zero_stage 9"],
                                                         ["--launch-args", "'unbalanced"],
                                                         ["--launch-args", "--zero_stage"],
                                                         ["--launch-args", "--mixed_precision fp8 --zero3_init_flag x"],
                                                         ["--launch-args", "--gradient_clipping nan --num_processes 0"],
                                                         ["--launch-args", "--offload_optimizer_device \x1b[2J"]]),
       name=st.sampled_from(["a.yaml", "\x1b[2Ja.yaml", "a\u202e.yml", "a\n.yaml"]), out=st.booleans())
def test_convert_is_bounded_terminal_safe_and_writes_only_on_success(text: str, to: list[str], name: str,
                                                                      out: bool) -> None:
    """Any YAML: exit 0 with JSON written (or printed), 1 when accelerate itself refuses it, 2 with one line for
    unusable input; nothing written but -o's file, and that only on exit 0."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        target = Path(folder) / "ds_config.json"
        args = ["convert", str(path), "--accelerate-version=1.15.0", *to, *(["-o", str(target)] if out else [])]
        code, stdout, err = assert_well_behaved(args)
        event(f"exit {code}")
        if code in (1, 2):
            assert err.strip() and "\n" not in err.strip(), (args, err)
        written = sorted(p.name for p in Path(folder).iterdir() if p != path)
        assert written == (["ds_config.json"] if code == 0 and out else []), (code, written, err)
        if code == 0:
            json.loads(target.read_text(encoding="utf-8") if out else stdout)


def _alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 12)]
    return "\n".join(lines) + "\ndistributed_type: DEEPSPEED\n"


CONVERT_INPUTS = {
    "fifo": None, "directory": None, "binary": b"\x00\x01\x02\xff" * 64,
    "non-utf8": b"distributed_type: DEEP\xffSPEED\n",
    "huge": b"distributed_type: DEEPSPEED\n" + b"# " + b"x" * (2 * 1024 * 1024) + b"\n",
    "alias bomb": _alias_bomb().encode(), "deep": ("x:\n" + "".join(" " * i + "y:\n" for i in range(1, 60))).encode(),
    "list": b"distributed_type: DEEPSPEED\ndeepspeed_config:\n  - zero_stage: 2\n", "empty": b"",
    "dev zero": None,
}


@needs_snapshots
@pytest.mark.parametrize("case", sorted(CONVERT_INPUTS))
@pytest.mark.parametrize("to", ["ds_config", "accelerate"])
def test_convert_refuses_an_unusable_input_in_one_line(tmp_path, case, to):
    if case == "dev zero":
        source = Path("/dev/zero")
    else:
        source = tmp_path / ("in.yaml" if to == "ds_config" else "in.json")
        if case == "fifo":
            os.mkfifo(source)
        elif case == "directory":
            source.mkdir()
        else:
            source.write_bytes(CONVERT_INPUTS[case])
    target = tmp_path / "out"
    started = time.perf_counter()
    code, out, err = assert_well_behaved(["convert", str(source), "--to", to, "-o", str(target)])
    assert code == 2 and err.count("\n") == 1 and out == "", (case, code, out, err)
    assert not target.exists() and time.perf_counter() - started < 10


def _wait_until_reading(pid: int, path: Path, limit: float = 30.0) -> None:
    """Until process ``pid`` is a reader of the FIFO ``path``: blocked opening it (the kernel's wait for a writer,
    where it already counts as a reader) or holding it open; at most ``limit`` seconds."""
    import time

    deadline = time.monotonic() + limit
    wanted = os.path.realpath(path)
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/wchan", encoding="ascii") as handle:
                if handle.read().strip() == "wait_for_partner":
                    return
            if any(os.path.realpath(f"/proc/{pid}/fd/{fd}") == wanted for fd in os.listdir(f"/proc/{pid}/fd")):
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise AssertionError(f"{pid} did not start reading {path} within {limit} s")


@needs_snapshots
@pytest.mark.parametrize("kind", ["symlink", "fifo", "null", "full", "directory", "mode444", "hardlink"])
def test_convert_output_onto_a_link_device_or_folder_never_replaces_it(tmp_path, kind):
    if kind in ("null", "full") and os.geteuid() != 0:
        pytest.skip("mknod needs root")
    source = sorted(ACCELERATE_CORPUS.glob("*.yaml"))[10]
    folder = tmp_path / "t"
    folder.mkdir()
    if kind == "directory":
        target = folder / "dir"
        target.mkdir()
    else:
        target = _make_target(folder, kind, "{}\n")
    before = _identity(target)
    if kind == "fifo":  # a reader, so the write can finish
        reader = subprocess.Popen(["cat", str(target)], stdout=subprocess.PIPE)
        _wait_until_reading(reader.pid, target)  # (a FIFO nobody reads yet is refused; on a busy machine cat is slow)
    code, out, err = assert_well_behaved(["convert", str(source), "--accelerate-version=1.15.0", "-o", str(target)])
    if kind == "fifo":
        got = reader.communicate(timeout=10)[0]
        assert code == 0 and json.loads(got)["zero_optimization"]
    expected = {"symlink": 0, "fifo": 0, "null": 0, "full": 2, "directory": 2, "mode444": 2, "hardlink": 2}[kind]
    assert code == expected, (kind, code, err)
    if code == 2:
        assert err.count("\n") == 1
    assert _identity(target) == before or kind in ("mode444", "hardlink") and _identity(target)[0] == before[0]
    if kind == "symlink":
        assert json.loads((folder / "real.json").read_text(encoding="utf-8"))["zero_optimization"]
    if kind in ("mode444", "hardlink"):
        assert target.read_text(encoding="utf-8") == "{}\n"
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []
