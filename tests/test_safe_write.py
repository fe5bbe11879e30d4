"""Issue 23, R4 and R9: every file dsfields writes goes through model/safewrite.py, which never destroys.

Symlinks are followed, devices and FIFOs written into (never replaced), hard-linked and read-only targets
refused unless --force, mode, owner and line endings kept, the umask honoured, and no temp file survives
a failure or a signal (a SIGKILL's leftover goes with the next write). The writer's own tests are ``unit``;
those that run ``migrate``/``schema`` against a committed snapshot are ``data``.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import default_signals

from dsfields.cli import main
from dsfields.docs.docs_command import build_into, relay_messages
from dsfields.model import safewrite
from dsfields.model.safewrite import UnsafeTarget, write_text
from dsfields.model.store import available_versions

REPO = Path(__file__).resolve().parents[1]
VERSIONS = available_versions()
VERSION = "0.19.8" if "0.19.8" in VERSIONS else (VERSIONS[-1] if VERSIONS else None)
unit = pytest.mark.unit
data = pytest.mark.data
needs_snapshots = pytest.mark.skipif(VERSION is None, reason="no committed snapshots")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="device nodes and chown need root")

OLD = '{\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": 2, "cpu_offload": true}\n}\n'
"""A config whose migration to 0.19.8 renames (and converts) one key."""
NEW_VALUE = '"offload_optimizer": {"device": "cpu"}'


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def migrate(capsys: pytest.CaptureFixture[str], path: Path | str, *extra: str) -> tuple[int, str, str]:
    return run_cli(capsys, "migrate", str(path), "--from", str(VERSION), "--to", str(VERSION), *extra)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


def one_line_refusal(err: str, *words: str) -> None:
    assert err.count("\n") == 1 and all(word in err for word in words), err


# ---------------------------------------------------------------- the writer itself


@unit
def test_a_new_file_honours_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        write_text(tmp_path / "new.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o600
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "other.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "other.json").stat().st_mode) == 0o644 and leftovers(tmp_path) == []


@unit
def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "c.json"
    target.write_text("old")
    for mode in (0o600, 0o640, 0o755, 0o4711 & 0o777):
        target.chmod(mode)
        write_text(target, f"mode {mode:o}")
        assert stat.S_IMODE(target.stat().st_mode) == mode and target.read_text() == f"mode {mode:o}"


@unit
@root_only
def test_a_replaced_file_keeps_its_owner(tmp_path):
    target = tmp_path / "c.json"
    target.write_text("old")
    os.chown(target, 4321, 4322)
    write_text(target, "new")
    assert (target.stat().st_uid, target.stat().st_gid) == (4321, 4322) and target.read_text() == "new"


@unit
def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o600


@unit
def test_hard_links_are_refused_unless_forced_then_every_link_sees_the_text(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text("old")
    os.link(first, second)
    with pytest.raises(UnsafeTarget, match="2 hard links"):
        write_text(first, "new")
    assert first.read_text() == second.read_text() == "old"
    write_text(first, "new text", force=True)
    assert first.read_text() == second.read_text() == "new text"
    assert first.stat().st_ino == second.stat().st_ino and first.stat().st_nlink == 2


@unit
def test_read_only_files_are_refused_even_for_root_unless_forced(tmp_path):
    target = tmp_path / "ro.json"
    target.write_text("old")
    target.chmod(0o444)
    with pytest.raises(UnsafeTarget, match="read-only"):
        write_text(target, "new")
    assert target.read_text() == "old"
    write_text(target, "new", force=True)
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o444


@unit
def test_directories_and_sockets_are_refused_in_one_line(tmp_path):
    with pytest.raises(OSError, match="it is a directory"):
        write_text(tmp_path, "x")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(UnsafeTarget, match="is a socket"):
            write_text(tmp_path / "sock", "x")
    finally:
        server.close()
    assert stat.S_ISSOCK((tmp_path / "sock").lstat().st_mode)


@unit
def test_a_fifo_is_written_into_and_one_nobody_reads_is_refused_at_once(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    started = time.perf_counter()
    with pytest.raises(UnsafeTarget, match="nobody reads"):
        write_text(fifo, "x")
    assert time.perf_counter() - started < 10  # refused, not blocked
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    for _ in range(100):  # the reader must have opened its end before a non-blocking writer can
        try:
            write_text(fifo, "through the pipe\n")
            break
        except UnsafeTarget:
            time.sleep(0.05)
    reader.join(10)
    assert got == [b"through the pipe\n"] and stat.S_ISFIFO(fifo.lstat().st_mode) and leftovers(tmp_path) == []


@unit
@root_only
def test_device_nodes_are_written_into_or_refused_never_replaced(tmp_path):
    null, full, block = tmp_path / "null", tmp_path / "full", tmp_path / "block"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    os.mknod(block, 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    write_text(null, "into the void\n")
    with pytest.raises(OSError, match="No space left on device") as caught:
        write_text(full, "x" * 10000)
    assert caught.value.errno == errno.ENOSPC
    with pytest.raises(UnsafeTarget, match="is a block device"):
        write_text(block, "x")
    assert stat.S_ISCHR(null.lstat().st_mode) and stat.S_ISCHR(full.lstat().st_mode)
    assert stat.S_ISBLK(block.lstat().st_mode) and leftovers(tmp_path) == []


@unit
def test_dev_stdout_writes_to_the_open_descriptor():
    # The plan is asserted before anything is written: a regression must fail here, not replace the
    # machine's /dev/stdout (as the old writer did).
    code = ("import sys; from dsfields.model.safewrite import _plan, write_text; print('before', flush=True); "
            "assert _plan('/dev/stdout', False)[0] == 'descriptor'; "
            "write_text('/dev/stdout', 'the text\\n'); write_text('/proc/self/fd/1', 'again\\n'); print('after')")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO / "extractor")},
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0 and done.stdout == "before\nthe text\nagain\nafter\n" and done.stderr == ""


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@unit
def test_a_leftover_of_a_killed_writer_goes_with_the_next_write_a_live_one_stays(tmp_path):
    import fcntl

    target = tmp_path / "c.json"
    target.write_text("old")
    boot = safewrite.boot_id()
    dead = tmp_path / f".c.json.{boot}-{_dead_pid()}-abcd1234.tmp"
    dead.write_text("half")
    other_boot = tmp_path / f".c.json.{'0' * 8 if boot != '0' * 8 else 'f' * 8}-{os.getpid()}-abcd1234.tmp"
    other_boot.write_text("half, before a reboot")
    live = tmp_path / f".c.json.{boot}-{_dead_pid()}-live5678.tmp"  # its writer is in another pid namespace
    live.write_text("being written")
    running = tmp_path / f".c.json.{boot}-{os.getpid()}-runs1234.tmp"  # created, not locked yet: its writer runs
    running.write_text("being created")
    mine = tmp_path / ".c.json.tmp"  # not a name dsfields makes: never touched
    mine.write_text("the user's")
    with open(live, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # its writer is at work
        write_text(target, "new")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, running.name, ".c.json.tmp",
                                                                     "c.json"])
    assert target.read_text() == "new" and mine.read_text() == "the user's"


_SLOW_WRITER = """
import sys, time
from dsfields.model import safewrite
real = safewrite._write_fd
def slow(fd, data):
    real(fd, data[:10])
    print("ready", flush=True)
    time.sleep(60)
    real(fd, data[10:])
safewrite._write_fd = slow
safewrite.write_text(sys.argv[1], "x" * 100)
"""


def _slow_write(target: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target)], stdout=subprocess.PIPE, text=True,
                             preexec_fn=default_signals,
                             env={**os.environ, "PYTHONPATH": str(REPO / "extractor")}, stderr=subprocess.DEVNULL)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


@unit
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1])
def test_a_caught_signal_during_a_write_leaves_the_old_file_and_no_temp_file(tmp_path, signum):
    target = tmp_path / "c.json"
    target.write_text("old")
    child = _slow_write(target)
    assert len(leftovers(tmp_path)) == 1  # mid-write: the temp file exists
    child.send_signal(signum)
    code = child.wait(20)
    child.stdout.close()  # type: ignore[union-attr]
    assert code == -signum  # the process still dies of that signal (SIGINT: after its KeyboardInterrupt)
    assert target.read_text() == "old" and leftovers(tmp_path) == []


@unit
def test_a_sigkill_during_a_write_leaves_a_temp_file_the_next_write_removes(tmp_path):
    target = tmp_path / "c.json"
    target.write_text("old")
    child = _slow_write(target)
    child.kill()
    child.wait(20)
    child.stdout.close()  # type: ignore[union-attr]
    assert target.read_text() == "old" and len(leftovers(tmp_path)) == 1
    write_text(target, "new")
    assert target.read_text() == "new" and leftovers(tmp_path) == []


# ---------------------------------------------------------------- migrate and schema through it


def _tree(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / f"{name}.json" for name in ("plain", "real", "hard", "ro")}
    for path in paths.values():
        path.write_text(OLD)
    paths["link"] = tmp_path / "link.json"
    paths["link"].symlink_to("real.json")
    os.link(paths["hard"], tmp_path / "hard2.json")
    paths["ro"].chmod(0o444)
    paths["real"].chmod(0o600)
    return paths


@data
@needs_snapshots
def test_migrate_in_place_on_a_symlink_migrates_the_target_and_keeps_the_link(tmp_path, capsys):
    paths = _tree(tmp_path)
    code, _, _ = migrate(capsys, paths["link"], "--in-place")
    assert code == 0 and paths["link"].is_symlink() and NEW_VALUE in paths["real"].read_text()
    assert stat.S_IMODE(paths["real"].stat().st_mode) == 0o600 and leftovers(tmp_path) == []


@data
@needs_snapshots
def test_migrate_refuses_hard_links_and_read_only_files_before_reporting(tmp_path, capsys):
    paths = _tree(tmp_path)
    for name, words in (("hard", ("2 hard links", "--force")), ("ro", ("read-only", "--force"))):
        code, out, err = migrate(capsys, paths[name], "--in-place")
        assert code == 2 and out == "" and paths[name].read_text() == OLD
        one_line_refusal(err, *words)
    code, _, _ = migrate(capsys, paths["hard"], "--in-place", "--force")
    assert code == 0 and NEW_VALUE in (tmp_path / "hard2.json").read_text()
    assert paths["hard"].stat().st_ino == (tmp_path / "hard2.json").stat().st_ino
    code, _, _ = migrate(capsys, paths["ro"], "--in-place", "--force")
    assert code == 0 and NEW_VALUE in paths["ro"].read_text() and stat.S_IMODE(paths["ro"].stat().st_mode) == 0o444


@data
@needs_snapshots
@pytest.mark.parametrize("ending", ["\r\n", "\r", "\n"])
def test_migrate_keeps_the_files_line_endings(tmp_path, capsys, ending):
    path = tmp_path / "c.json"
    path.write_bytes(OLD.replace("\n", ending).encode())
    code, _, _ = migrate(capsys, path, "--in-place")
    new = path.read_bytes().decode()
    assert code == 0 and NEW_VALUE in new
    assert new == new.replace("\r\n", "\n").replace("\r", "\n").replace("\n", ending)  # only that ending
    assert new.count(ending) == OLD.count("\n")


@data
@needs_snapshots
def test_migrate_keeps_a_mix_of_crlf_and_lf_exactly(tmp_path, capsys):
    path = tmp_path / "c.json"
    mixed = '{\r\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": 2, "cpu_offload": true}\r\n}\n'
    path.write_bytes(mixed.encode())
    assert migrate(capsys, path, "--in-place")[0] == 0
    assert path.read_bytes() == mixed.replace('"cpu_offload": true', NEW_VALUE).encode()


@data
@needs_snapshots
@root_only
def test_migrate_into_device_nodes_never_replaces_them(tmp_path, capsys):
    source = tmp_path / "c.json"
    source.write_text(OLD)
    null, full = tmp_path / "null", tmp_path / "full"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    assert migrate(capsys, source, "-o", str(null))[0] == 0
    code, _, err = migrate(capsys, source, "-o", str(full))
    assert code == 2 and "No space left on device" in err and err.count("\n") == 1
    assert stat.S_ISCHR(null.lstat().st_mode) and stat.S_ISCHR(full.lstat().st_mode) and leftovers(tmp_path) == []


@data
@needs_snapshots
def test_schema_to_dev_null_and_a_fifo_never_replaces_them(tmp_path, capsys):
    assert safewrite._plan(os.devnull, False)[0] == "special"  # else stop before touching the real one
    assert run_cli(capsys, "schema", "--version", str(VERSION), "-o", os.devnull)[0] == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "schema.fifo"
    os.mkfifo(fifo)
    code, _, err = run_cli(capsys, "schema", "--version", str(VERSION), "-o", str(fifo))
    assert code == 2 and stat.S_ISFIFO(fifo.lstat().st_mode)
    one_line_refusal(err, "nobody reads")


# ---------------------------------------------------------------- the docs site


def _site_writer(text: str, pause: float = 0.0):
    def build(folder: Path) -> int:
        (folder / "index.html").write_text(text)
        if pause:
            print("ready", flush=True)
            time.sleep(pause)
        return 0

    return build


@unit
def test_site_dir_that_is_a_regular_file_is_refused_and_kept(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("the user's")
    with pytest.raises(UnsafeTarget, match="is a regular file, not a folder"):
        build_into(afile, _site_writer("site"))
    assert afile.read_text() == "the user's" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@data
@needs_snapshots
def test_docs_build_refuses_a_site_dir_file_before_rendering(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("the user's")
    started = time.perf_counter()
    code, out, err = run_cli(capsys, "docs", "build", "--site-dir", str(afile))
    assert code == 2 and afile.read_text() == "the user's" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    one_line_refusal(err, "not a folder")
    assert time.perf_counter() - started < 20  # refused up front, not after the render


@unit
def test_a_symlinked_site_dir_gets_the_site_in_its_target_and_keeps_its_mode_and_owner(tmp_path):
    real = tmp_path / "real-site"
    real.mkdir()
    real.chmod(0o750)
    (real / "index.html").write_text("old")
    link = tmp_path / "site"
    link.symlink_to("real-site")
    if os.geteuid() == 0:
        os.chown(real, 4321, 4322)
    assert build_into(link, _site_writer("new")) == 0
    assert link.is_symlink() and (real / "index.html").read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o750
    if os.geteuid() == 0:
        assert (real.stat().st_uid, real.stat().st_gid) == (4321, 4322)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real-site", "site"]


@unit
def test_a_terminated_docs_build_leaves_no_staging_folder(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("old")
    code = ("import sys, time; from pathlib import Path; from dsfields.docs.docs_command import build_into\n"
            "def build(folder):\n (folder / 'index.html').write_text('half'); print('ready', flush=True)\n"
            " time.sleep(60); return 0\n"
            f"build_into(Path({str(site)!r}), build)\n")
    child = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO / "extractor")},
                             stdout=subprocess.PIPE, text=True, preexec_fn=default_signals)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    assert any(p.name.startswith(".site.build-") for p in tmp_path.iterdir())
    child.send_signal(signal.SIGTERM)
    assert child.wait(20) == -signal.SIGTERM
    child.stdout.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"] and (site / "index.html").read_text() == "old"


@unit
def test_mkdocs_tracebacks_become_one_line():
    crashes: list[str] = []
    lines = ["INFO    -  Building documentation...\n", "Traceback (most recent call last):\n",
             '  File "x.py", line 1, in <module>\n', "    build()\n", "KeyError: 'x'\n", "\n",
             "During handling of the above exception, another exception occurred:\n", "\n",
             "Traceback (most recent call last):\n", '  File "y.py", line 2, in build\n',
             "PermissionError: [Errno 13] Permission denied: 'site/x'\n"]
    read, write = os.pipe()
    saved = sys.stderr
    with os.fdopen(write, "w") as sink:
        sys.stderr = sink
        try:
            relay_messages(iter(lines), crashes)
        finally:
            sys.stderr = saved
    with os.fdopen(read) as source:
        relayed = source.read()
    assert crashes == ["PermissionError: [Errno 13] Permission denied: 'site/x'"]
    assert relayed == "INFO    -  Building documentation...\n"


@data
@needs_snapshots
def test_an_invalid_mkdocs_yml_is_refused_before_the_render(tmp_path, capsys):
    pytest.importorskip("mkdocs")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\ntheme:\n  name: no-such-theme\n")
    started = time.perf_counter()
    code, out, err = run_cli(capsys, "docs", "build", "--config-file", str(config), "--site-dir", str(tmp_path / "s"))
    assert code == 2 and "no-such-theme" in err and err.count("\n") == 1
    assert not (tmp_path / "docs").exists() and not (tmp_path / "s").exists()
    assert time.perf_counter() - started < 60  # before rendering any page


@unit
def test_safewrite_is_the_only_writer_in_the_consumers():
    """No consumer renames a temp file of its own over a target: they all call safewrite."""
    package = REPO / "extractor" / "dsfields"
    offenders = []
    for path in package.rglob("*.py"):
        if {"extract", "launch"} & set(path.relative_to(package).parts) or path.name in ("safewrite.py", "hooks.py"):
            continue  # the extractor's and the launch's build caches (its CPU ops); hooks.py writes into mkdocs'
            # own fresh build folder
        text = path.read_text(encoding="utf-8")
        if "os.replace(" in text or ".replace(target)" in text or "mkstemp(" in text:
            offenders.append(path.name)
    assert offenders == [], safewrite.__doc__


_MKDOCS_STAND_IN = """
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(f"grandchild {grandchild.pid}", file=sys.stderr, flush=True)
time.sleep(60)
"""
_INTERRUPTED_BUILD = """
import sys
from pathlib import Path
from dsfields.docs.docs_command import run_mkdocs
try:
    run_mkdocs([sys.executable, "-c", sys.argv[1]], Path("."), {}, [])
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@unit
def test_an_interrupted_mkdocs_is_killed_with_its_children(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    parent = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_BUILD, _MKDOCS_STAND_IN], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    assert parent.stderr is not None and parent.stdout is not None
    line = parent.stderr.readline()  # relayed from the stand-in's stderr
    assert line.startswith("grandchild "), line
    grandchild = int(line.split()[1])
    parent.send_signal(signal.SIGINT)  # Ctrl-C reaches dsfields; mkdocs runs in its own process group
    assert parent.stdout.readline() == "interrupted\n"
    parent.wait(20)
    parent.stdout.close()
    parent.stderr.close()
    for _ in range(100):  # the group was SIGKILLed; its last member is reaped by init
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        try:
            with open(f"/proc/{grandchild}/stat") as handle:
                if handle.read().split(") ")[1].startswith("Z"):
                    break  # a zombie: dead, waiting for its reaper
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"mkdocs' child {grandchild} survived the interrupt")


@unit
@root_only
def test_another_users_file_is_refused_unless_forced_then_rewritten_in_place_keeping_its_owner():
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's tmp_path is root-only (0700) for the other user
    try:
        folder.chmod(0o777)
        target = folder / "c.json"
        target.write_text("old")
        target.chmod(0o666)
        # Everything imported before the privileges go: the interpreter's own files are root's here.
        code = ("import os, sys, fcntl, tempfile, signal, threading, shutil, pathlib\n"
                "from dsfields.model.safewrite import UnsafeTarget, write_text\n"
                "os.setgid(65534); os.setuid(65534)\n"
                "try:\n write_text(sys.argv[1], 'new')\nexcept UnsafeTarget as exc:\n print(exc.reason)\n"
                "write_text(sys.argv[1], 'forced', force=True)\n")
        done = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=20,
                              env={**os.environ, "PYTHONPATH": str(REPO / "extractor")})
        assert done.returncode == 0, done.stderr
        assert "belongs to another user" in done.stdout and target.read_text() == "forced"
        assert target.stat().st_uid == 0 and stat.S_IMODE(target.stat().st_mode) == 0o666
        assert [p.name for p in folder.iterdir()] == ["c.json"]
    finally:
        shutil.rmtree(folder)


# ---------------------------------------------------------------- writers racing (issue 43, cause 1)


def _dsfields(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    return subprocess.Popen([sys.executable, "-m", "dsfields", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)


@data
@needs_snapshots
def test_twenty_parallel_writers_each_leave_one_complete_result_and_no_temp_file(tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "c.json").write_text(OLD)
    assert _dsfields("migrate", str(alone / "c.json"), "--from", str(VERSION), "--to", str(VERSION),
                     "--in-place").wait(60) == 0
    assert _dsfields("schema", "--version", str(VERSION), "-o", str(alone / "schema.json")).wait(60) == 0
    migrated, schema = (alone / "c.json").read_text(), (alone / "schema.json").read_text()
    assert NEW_VALUE in migrated and json.loads(schema)

    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "c.json").write_text(OLD)
    children = [_dsfields("migrate", str(folder / "c.json"), "--from", str(VERSION), "--to", str(VERSION),
                          "--in-place") for _ in range(20)]
    # half into their own files, half into one file, all in the folder the migrations write into
    names = [f"schema-{n}.json" for n in range(10)] + ["schema.json"] * 10
    children += [_dsfields("schema", "--version", str(VERSION), "-o", str(folder / name)) for name in names]
    failures = []
    for child in children:
        _, err = child.communicate(timeout=300)
        if child.returncode != 0:
            failures.append((child.args[3], child.returncode, err))
    assert failures == []
    assert (folder / "c.json").read_text() == migrated  # one migration's whole text, none lost or mixed
    for name in set(names):
        assert (folder / name).read_text() == schema, name
    assert sorted(p.name for p in folder.iterdir()) == sorted({"c.json", *names})  # no temp file left
