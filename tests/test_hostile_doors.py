"""Issue 43: hostile input through the doors opened last round (upgrade, estimate, --trainer-args,
--accelerate-config, --model-config, --inference, --format sarif, the docs build, snapshot), one regression test
per cause, each failing on the code before its fix.

Each asserts what a user relies on: one line on stderr, exit 2 for unusable input (1 for findings), no traceback,
no raw control character from data on the terminal, and bounded time.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dsfields.cli import main
from dsfields.model.store import available_versions

REPO = Path(__file__).resolve().parents[1]
VERSIONS = available_versions()
VERSION = "0.19.8" if "0.19.8" in VERSIONS else (VERSIONS[-1] if VERSIONS else None)
OLD_VERSION = "0.10.3" if "0.10.3" in VERSIONS else (VERSIONS[0] if VERSIONS else None)
needs_snapshots = pytest.mark.skipif(VERSION is None, reason="no committed snapshots")
unit = pytest.mark.unit
data = pytest.mark.data

CONFIG = '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}'


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def dsfields(*args: str, timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor"), **kwargs.pop("env", {})}  # type: ignore[dict-item]
    return subprocess.run([sys.executable, "-m", "dsfields", *args], env=env, text=True, timeout=timeout,
                          capture_output=True, **kwargs)  # type: ignore[call-overload]


def write(tmp_path: Path, text: str, name: str = "c.json") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def refused(code: int, out: str, err: str, *words: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr holding ``words``."""
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    assert all(word in err for word in words), err


# ---------------------------------------------------------------- cause 2: --trainer-args with unbalanced quotes


@data
@needs_snapshots
@pytest.mark.parametrize("command", ["check", "resolve", "estimate"])
@pytest.mark.parametrize("words", ["--bf16 'x", '--bf16 "x', "--bf16 x\\"])
def test_trainer_args_with_unbalanced_quotes_is_one_line(tmp_path, capsys, command, words):
    config = write(tmp_path, CONFIG)
    extra = ["--params", "7B"] if command == "estimate" else ["--hf"]
    code, out, err = run_cli(capsys, command, "--version", VERSION, config, *extra, f"--trainer-args={words}")
    refused(code, out, err, "--trainer-args")


# ---------------------------------------------------------------- cause 3: files named by options, one reader


def _alias_bomb() -> str:
    """The billion laughs in YAML: nine levels of nine aliases (9**9 strings once expanded)."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
    return "\n".join(lines) + "\n"


@data
@needs_snapshots
@pytest.mark.parametrize("option", ["--accelerate-config", "--model-config"])
@pytest.mark.parametrize(("case", "words"), [
    ("directory", "is a directory"), ("fifo", "is a FIFO"), ("device", "is a device"), ("binary", "not UTF-8"),
    ("huge", "larger than"), ("missing", "no such file"), ("bomb", ""),
])
def test_files_named_by_options_go_through_the_one_reader(tmp_path, capsys, option, case, words):
    path = tmp_path / "named"
    if case == "directory":
        path.mkdir()
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "device":
        path = Path("/dev/zero")
    elif case == "binary":
        path.write_bytes(b"\xff\xfe\x00binary: \x80\x81\n")
    elif case == "huge":
        path.write_text("mixed_precision: bf16\n" * 500_000)  # 11 MB
    elif case == "bomb":
        path.write_text(_alias_bomb())
    started = time.perf_counter()
    code, out, err = run_cli(capsys, "check", "--version", VERSION, write(tmp_path, CONFIG), option, str(path))
    assert time.perf_counter() - started < 20  # refused, never read without bound (a FIFO would block)
    refused(code, out, err, option, str(path), words)


@data
@needs_snapshots
def test_an_accelerate_config_with_anchors_and_aliases_is_refused_at_once(tmp_path, capsys):
    path = write(tmp_path, _alias_bomb(), name="accelerate.yaml")
    code, out, err = run_cli(capsys, "resolve", "--version", VERSION, write(tmp_path, CONFIG), "--accelerate-config",
                             path)
    refused(code, out, err, f"{path}:1", "anchor, alias")


# ---------------------------------------------------------------- cause 4: estimate's counts, one bounded parser


@data
@needs_snapshots
@pytest.mark.parametrize(("options", "words"), [
    (["--params", "1e307"], ["--params", "more than 1,000,000,000,000,000"]),
    (["--params", "7B", "--hidden-size", "4096", "--layers", "1e15", "--seq-len", "4096"], ["--layers", "100,000"]),
    (["--params", "7B", "--hidden-size", "4096", "--layers", "32", "--seq-len", "1e15", "--heads", "32"],
     ["--seq-len", "more than"]),
    (["--params", "7B", "--hidden-size", "4096", "--layers", "32", "--seq-len", "4096", "--micro-batch", "1e300"],
     ["--micro-batch", "more than"]),
    (["--params", "7B", "--gpus-per-node", "1e12"], ["--gpus-per-node", "more than"]),
    (["--params", "9" * 100_000], ["--params", "not a count"]),
])
def test_estimate_counts_beyond_a_real_run_are_one_line_naming_the_bound(tmp_path, capsys, options, words):
    started = time.perf_counter()
    code, out, err = run_cli(capsys, "estimate", "--version", VERSION, write(tmp_path, CONFIG), *options)
    assert time.perf_counter() - started < 20
    refused(code, out, err, *words)


@data
@needs_snapshots
@pytest.mark.parametrize(("config", "words"), [
    ('{"train_micro_batch_size_per_gpu": 1000000000000000000000000}', ["train_micro_batch_size_per_gpu", "1,000,000"]),
    ('{"zero_optimization": {"stage": 2, "reduce_bucket_size": 1e300}}', ["reduce_bucket_size", "int64"]),
])
def test_estimate_config_counts_go_through_the_same_bound(tmp_path, capsys, config, words):
    code, out, err = run_cli(capsys, "estimate", "--version", VERSION, write(tmp_path, config), "--params", "7B",
                             "--hidden-size", "4096", "--layers", "32", "--seq-len", "4096")
    refused(code, out, err, *words)


@data
@needs_snapshots
def test_estimate_at_every_bound_answers_in_bounded_time(tmp_path, capsys):
    started = time.perf_counter()
    code, out, _ = run_cli(capsys, "estimate", "--version", VERSION, write(tmp_path, CONFIG), "--params", "1e15",
                           "--largest-layer-params", "1e15", "--gpus-per-node", "1024", "--nodes", "1e6",
                           "--hidden-size", str(2**20), "--layers", "1e5", "--seq-len", "1e8", "--micro-batch", "1e6",
                           "--heads", str(2**20), "--format", "json")
    assert time.perf_counter() - started < 20
    assert code == 0 and json.loads(out)


# ---------------------------------------------------------------- cause 5: check --inference on an unusable file


@data
@needs_snapshots
@pytest.mark.parametrize(("case", "words"), [("missing", "no such file"), ("directory", "is a directory"),
                                             ("invalid", "malformed JSON")])
def test_check_inference_says_why_a_file_is_unusable(tmp_path, capsys, case, words):
    path = tmp_path / "inference.json"
    if case == "directory":
        path.mkdir()
    elif case == "invalid":
        path.write_text('{"dtype": ')
    code, out, err = run_cli(capsys, "check", "--version", VERSION, "--inference", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1 and str(path) in err and words in err, (code, out, err)


# ---------------------------------------------------------------- cause 6: batch values the Trainer fills


AUTO_BATCH = ('{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", '
              '"gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}')


@data
@needs_snapshots
@pytest.mark.parametrize(("flags", "key", "assertion"), [
    ("--per_device_train_batch_size 0", "train_micro_batch_size_per_gpu", "Train batch size: 0 has to be"),
    ("--per_device_train_batch_size -2", "train_micro_batch_size_per_gpu", "Train batch size: -2 has to be"),
    ("--gradient_accumulation_steps 0", "gradient_accumulation_steps", "Train batch size: 0 has to be"),
])
def test_check_flags_batch_values_the_trainer_fills_and_deepspeed_refuses(tmp_path, capsys, flags, key, assertion):
    code, out, _ = run_cli(capsys, "check", "--version", VERSION, "--format", "json", write(tmp_path, AUTO_BATCH),
                           f"--trainer-args={flags}")
    findings = json.loads(out)["files"][0]["findings"]
    batch = [f for f in findings if f["rule"] == "hf-batch"]
    assert code == 1 and len(batch) == 1 and batch[0]["path"] == key and batch[0]["severity"] == "error", findings
    assert assertion in batch[0]["message"] and "AssertionError" in batch[0]["message"]
    code, out, _ = run_cli(capsys, "check", "--version", VERSION, write(tmp_path, AUTO_BATCH),
                           "--trainer-args=--per_device_train_batch_size 2")
    assert code == 0, out  # a batch of at least 1 passes


# ---------------------------------------------------------------- cause 7: what DeepSpeed or the Trainer cannot load


@data
@needs_snapshots
@pytest.mark.parametrize("command", [["upgrade", "--from", str(OLD_VERSION), "--to", str(VERSION)],
                                     ["estimate", "--version", str(VERSION), "--params", "7B"]])
def test_upgrade_and_estimate_refuse_what_deepspeed_or_the_trainer_cannot_load(tmp_path, capsys, command):
    duplicated = write(tmp_path, '{"train_batch_size": 8,\n "train_batch_size": 16}', name="dup.json")
    code, out, err = run_cli(capsys, *command, duplicated)
    refused(code, out, err, "line 2", "Duplicate keys")
    hf = ["--hf"] if command[0] == "upgrade" else ["--trainer-args=--bf16"]

    def loads(*args: str) -> int:
        """The exit of a file that loads: estimate answers (0); upgrade exits as check of the new release does."""
        if command[0] == "estimate":
            return 0
        return run_cli(capsys, "check", "--version", str(VERSION), *args)[0]

    # json.load keeps the last
    assert run_cli(capsys, *command, duplicated, *hf)[0] == loads(duplicated, *hf)
    hjson_file = write(tmp_path, "{\n  # a comment\n  train_batch_size: 8\n}\n", name="h.json")
    assert run_cli(capsys, *command, hjson_file)[0] == loads(hjson_file) == 0  # DeepSpeed reads hjson
    code, out, err = run_cli(capsys, *command, hjson_file, *hf)
    refused(code, out, err, "HF Trainer cannot load it")


# ---------------------------------------------------------------- cause 8: sarif and a file name that is not UTF-8


@data
@needs_snapshots
def test_sarif_percent_encodes_a_file_name_that_is_not_utf8(tmp_path):
    name = b"bad\xff\nname.json"
    with open(os.path.join(os.fsencode(tmp_path), name), "wb") as handle:
        handle.write(b'{"train_batch_size": 8, "zero_optimization": {"stage": 7}}')
    done = subprocess.run([sys.executable, "-m", "dsfields", "check", "--version", str(VERSION), "--format", "sarif",
                           name], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "extractor")},
                          capture_output=True, timeout=60)
    assert done.returncode == 1 and done.stderr == b"", done.stderr
    run = json.loads(done.stdout)["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"bad%FF%0Aname.json"}


# ---------------------------------------------------------------- cause 9: the docs build's processes and folders


def _gone(pid: int, within: float = 15.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie nobody reaps yet) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                if handle.read().rpartition(")")[2].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def _lock_is_free(path: Path) -> bool:
    import fcntl

    with open(path, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


_RENDERING = """
import os, sys, time
from pathlib import Path
from dsfields.docs.docs_command import tree_lock
from dsfields.docs.writing import _fork_pool
with tree_lock(Path(sys.argv[1])):
    pool = _fork_pool(1)
    worker = pool.submit(os.getpid).result()
    pool.submit(time.sleep, 600)  # a render that takes long
    print(worker, flush=True)
    time.sleep(600)
"""


@unit
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("signum", [15, 9])
def test_a_render_worker_dies_with_the_build_and_never_keeps_the_trees_lock(tmp_path, signum):
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    build = subprocess.Popen([sys.executable, "-c", _RENDERING, str(config)], env=env, stdout=subprocess.PIPE,
                             text=True)
    worker = None
    try:
        assert build.stdout is not None
        worker = int(build.stdout.readline())
        assert not _lock_is_free(config)  # the build holds it
        build.send_signal(signum)
        build.wait(20)
        assert _gone(worker), "the render worker outlived its build"
        assert _lock_is_free(config)
    finally:
        build.kill()
        build.wait()
        if worker is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, 9)


_BUILDING = """
import sys, time
from pathlib import Path
from dsfields.docs.docs_command import build_into, run_mkdocs
site = Path(sys.argv[1])
# mkdocs' stand-in: writes pages into the staging folder for a minute
writer = ("import sys, time, pathlib\\nfor n in range(600):\\n"
          "    pathlib.Path(sys.argv[1], f'page{n}.html').write_text('x'); time.sleep(0.1)\\n")
def build(folder):
    print(folder, flush=True)
    return run_mkdocs([sys.executable, "-c", writer, str(folder)], Path.cwd(), {}, [])
build_into(site, build)
"""


@unit
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("signum", [15, 9])
def test_a_killed_docs_build_leaves_no_staging_folder_for_the_next_build(tmp_path, signum):
    from dsfields.docs.docs_command import build_into

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("old")
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    build = subprocess.Popen([sys.executable, "-c", _BUILDING, str(site)], env=env, stdout=subprocess.PIPE, text=True)
    assert build.stdout is not None
    staging = Path(build.stdout.readline().strip())
    deadline = time.monotonic() + 20
    while not any(staging.glob("page*.html")) and time.monotonic() < deadline:
        time.sleep(0.05)
    build.send_signal(signum)
    build.wait(20)
    time.sleep(1.0)  # an orphaned writer would go on writing into the staging folder
    if signum == 15:  # caught: the writer is killed first, then the staging folder removed
        assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    from dsfields.model.safewrite import boot_id

    live = tmp_path / f".site.build-{boot_id()}-{os.getpid()}-live"
    live.mkdir()  # a live builder's staging (another tree's build into the same folder): not a leftover
    assert build_into(site, lambda folder: (folder / "index.html").write_text("new") and 0) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "site"])
    assert (site / "index.html").read_text() == "new"


@unit
def test_docs_serve_on_a_port_in_use_is_one_line(capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        code, out, err = run_cli(capsys, "docs", "serve", "--config-file", str(REPO / "mkdocs.yml"),
                                 "--dev-addr", address)
    assert code == 2 and err.count("\n") == 1 and address in err and "in use" in err, err


@unit
def test_docs_build_release_into_a_read_only_site_is_one_line(tmp_path):
    from dsfields.docs.docs_command import _build_release
    from dsfields.model.errors import UsageError

    site = tmp_path / "site"
    (site / "0.19.8").mkdir(parents=True)
    (site / "404.html").write_text("built")
    if os.geteuid() == 0:  # root writes through a mode: make the folder immutable instead
        if subprocess.run(["chattr", "+i", str(site)], capture_output=True).returncode != 0:
            pytest.skip("no way to make a folder read-only for root here")
    else:
        site.chmod(0o555)
    try:
        with pytest.raises(UsageError, match="cannot write") as refused_:
            _build_release(tmp_path, tmp_path / "mkdocs.yml", site, "0.19.8", {}, 0.0, dict(os.environ))
        assert str(site) in str(refused_.value) and "\n" not in str(refused_.value)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(site)], capture_output=True)
        site.chmod(0o755)


# ---------------------------------------------------------------- cause 10: a failures.json of another shape


@data
@needs_snapshots
@pytest.mark.parametrize(("text", "words"), [("[]", "an array"), ('["0.19.8"]', "an array"), ('"x"', "a str"),
                                             ("{", "not JSON")])
def test_snapshot_refuses_a_failures_file_it_cannot_update_in_one_line(tmp_path, capsys, text, words):
    import shutil

    release = tmp_path / str(VERSION)
    release.mkdir()
    for name in ("fields.json", "inference.json"):  # up to date: nothing to extract
        shutil.copyfile(REPO / "generated" / str(VERSION) / name, release / name)
    (tmp_path / "failures.json").write_text(text)
    code, out, err = run_cli(capsys, "snapshot", str(VERSION), "--out", str(tmp_path))
    refused(code, out, err, "failures.json", words)
    assert (tmp_path / "failures.json").read_text() == text  # never overwritten


# ---------------------------------------------------------------- cause 11: migrate and a UTF-8 byte order mark


@data
@needs_snapshots
def test_migrate_inserts_into_a_file_with_a_bom_and_keeps_the_bom(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_bytes(b'\xef\xbb\xbf{\n  "train_batch_size": 8,\n'
                     b'  "zero_optimization": {"stage": 2, "cpu_offload": true}\n}\n')
    code, _, err = run_cli(capsys, "migrate", str(path), "--from", str(OLD_VERSION), "--to", str(VERSION), "--in-place")
    assert code == 0, err
    raw = path.read_bytes()
    assert raw.startswith(b'\xef\xbb\xbf{\n  "train_batch_size": 8,') and raw.count(b"\xef\xbb\xbf") == 1
    migrated = json.loads(raw[3:])
    assert migrated["zero_optimization"]["offload_optimizer"] == {"device": "cpu", "pin_memory": False}
    assert "gradient_clipping" in migrated  # a key inserted at the top level (its default changed)


# ---------------------------------------------------------------- cause 12: data never starts a line of its own


@data
@needs_snapshots
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_upgrade_title_escapes_a_file_name_with_a_newline(tmp_path, capsys, fmt):
    path = write(tmp_path, CONFIG, name="up\nfake.json: ok\x1b[2J")
    code, out, _ = run_cli(capsys, "upgrade", path, "--from", str(OLD_VERSION), "--to", str(VERSION), "--format", fmt)
    assert code == run_cli(capsys, "check", "--version", str(VERSION), path)[0] and "\x1b" not in out
    first = out.splitlines()[0]
    assert "up\\nfake.json: ok" in first and not any(line.startswith("fake.json") for line in out.splitlines())


@data
@needs_snapshots
def test_lookup_of_an_optimizer_query_escapes_what_it_quotes(capsys):
    code, out, err = run_cli(capsys, "lookup", "--version", VERSION, "optimizer:\x1b[31mx\nfake line")
    assert code == 1 and "\x1b" not in out + err
    assert not any(line.startswith("fake line") for line in (out + err).splitlines()), out


@data
@needs_snapshots
@pytest.mark.parametrize("option", ["--only", "--fail-on"])
@pytest.mark.parametrize("value", ["", ",,,", " , "])
def test_diff_kinds_that_name_no_kind_are_refused_alike(capsys, option, value):
    code, out, err = run_cli(capsys, "diff", str(OLD_VERSION), str(VERSION), option, value)
    refused(code, out, err, option, "needs a change kind")


@unit
@pytest.mark.parametrize("argv", [["lookup", "stage", "--version=--"], ["diff", "--only=--", "0.10.3", "0.19.8"],
                                  ["explain", "--version=--", "x"], ["estimate", "c.json", "--params=--"]])
def test_an_option_given_two_dashes_as_its_value_is_one_line(capsys, argv):
    """Python 3.11's argparse parses `--option=--` as an empty list for any option: refused in one line, exit 2
    (it was a traceback in lookup, found by the MCP fuzz test)."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and not out and err.count("\n") == 1 and "'--' is not a value" in err
