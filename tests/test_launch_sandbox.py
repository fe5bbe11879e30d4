"""`check --launch` under a DeepSpeed that hangs, and killed: bounded, and nothing of it is left behind.

A fixture DeepSpeed (``deepspeed-0.19.8.dist-info`` and a ``deepspeed`` package first on ``PYTHONPATH``) whose
import starts two long-running shells (the stand-ins for the ``sh``/``g++``/``cc1plus`` of an op build: one in the
worker's process group, one in a group of its own, as ninja runs each compile) and then sleeps. Every process is
found as a tester would, by a marker in its environment (children inherit it), in ``/proc``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import REPO, default_signals

pytestmark = pytest.mark.integration

MARK = "DSFIELDS_TEST_MARK"

FAKE_DEEPSPEED = '''
import os, subprocess, time
build = os.environ.get("FAKE_DEEPSPEED_BUILD")
if build:  # an op build through dsfields' own build notice, a shell standing for the compiler
    from dsfields.launch.ops import _building  # the worker's own: its notices go to the worker's client
    with _building("cpu_adam"):
        subprocess.run(["sh", "-c", f"sleep {build}; :"])
    raise ImportError("fake DeepSpeed: built, then nothing to import")
# What an op build leaves running when its worker is killed: compilers in the worker's group and in their own.
subprocess.Popen(["sh", "-c", "sleep 300; :"])
subprocess.Popen(["sh", "-c", "sleep 300; :"], start_new_session=True)
ready = os.environ.get("FAKE_DEEPSPEED_READY")
if ready:
    with open(ready, "w") as handle:
        handle.write(str(os.getpid()))
if os.environ.get("FAKE_DEEPSPEED_GIL"):  # hung in C holding the GIL: the worker cannot even end its own tree
    import re

    re.match(r"(a*)*b", "a" * 64)
time.sleep(600)
'''


def marked(mark: str) -> list[str]:
    """``pid command`` of every live process whose environment holds ``mark``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_text()
            command = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and stat[stat.rfind(")") + 2] not in "ZX":
            found.append(f"{name} {command.strip()}")
    return found


def settle(mark: str, seconds: float = 20.0) -> list[str]:
    """The marked processes once none is left, or what is still there after ``seconds`` (not a timing)."""
    deadline = time.monotonic() + seconds
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.fixture()
def hanging(tmp_path: Path) -> dict[str, object]:
    fake = tmp_path / "fake"
    (fake / "deepspeed").mkdir(parents=True)
    (fake / "deepspeed" / "__init__.py").write_text(FAKE_DEEPSPEED)
    (fake / "deepspeed-0.19.8.dist-info").mkdir()
    (fake / "deepspeed-0.19.8.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: deepspeed\n"
                                                                   "Version: 0.19.8\n\n")
    config = tmp_path / "ds.json"
    config.write_text('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}}')
    (tmp_path / "tmp").mkdir()
    mark = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k not in ("DS_ACCELERATOR", "TORCH_EXTENSIONS_DIR")}
    env.update({MARK: mark, "TMPDIR": str(tmp_path / "tmp"), "FAKE_DEEPSPEED_READY": str(tmp_path / "ready"),
                "DSFIELDS_OPS_CACHE": str(tmp_path / "cache"),
                "PYTHONPATH": os.pathsep.join([str(fake), str(REPO / "extractor")])})
    argv = [sys.executable, "-m", "dsfields", "check", "--launch", "--version", "0.19.8", str(config)]
    return {"env": env, "argv": argv, "mark": mark, "tmp": tmp_path / "tmp", "ready": tmp_path / "ready"}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_killed_check_launch_leaves_no_process_and_no_folder(hanging, sig):
    check = subprocess.Popen(hanging["argv"], env=hanging["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 120
        while not hanging["ready"].exists() and check.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hanging["ready"].exists(), check.communicate(timeout=30)
        # check, its worker, two shells and their sleeps: the tree that must go. A shell forks before its child
        # execs sleep, so on a busy machine the sleeps may appear a moment after the ready file: wait for them.
        deadline = time.monotonic() + 30
        running = marked(hanging["mark"])
        while [p.split(" ", 1)[1] for p in running].count("sleep 300") < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            running = marked(hanging["mark"])
        assert [p.split(" ", 1)[1] for p in running].count("sleep 300") == 2, running
        assert list(hanging["tmp"].glob("dsfields-launch-*"))
        check.send_signal(sig)
        _, err = check.communicate(timeout=60)
    finally:
        if check.poll() is None:
            check.kill()
    assert settle(hanging["mark"]) == []
    assert not list(hanging["tmp"].iterdir())  # the sandbox folder (and the worker's own) removed
    if sig == signal.SIGKILL:
        return
    assert check.returncode == (130 if sig == signal.SIGINT else 128 + sig)
    assert "Traceback" not in err, err


def test_a_deepspeed_that_hangs_at_import_is_one_line_and_exit_2(hanging):
    from dsfields.launch.client import CHECK_START_TIMEOUT, LaunchClient

    assert CHECK_START_TIMEOUT <= 50  # the bound a user waits (python's own start and the teardown on top)
    assert LaunchClient.for_check().start_timeout == CHECK_START_TIMEOUT  # without --launch-timeout
    # the same bound, shortened with --launch-timeout (what a slow shared file system lengthens): the test waits
    # 4 s, not 45
    argv = [*hanging["argv"][:-1], "--launch-timeout", "4", hanging["argv"][-1]]
    done = subprocess.run(argv, env=hanging["env"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("dsfields check: the launch worker did not start in 4 s"), lines
    assert "hangs" in lines[0]
    assert settle(hanging["mark"]) == []
    assert not list(hanging["tmp"].iterdir())


@pytest.mark.parametrize("value", ["0", "nan", "inf", "5000", "-3", "soon"])
def test_a_launch_timeout_out_of_range_is_one_line_and_exit_2(hanging, value):
    argv = [*hanging["argv"][:-1], "--launch-timeout", value, hanging["argv"][-1]]
    done = subprocess.run(argv, env=hanging["env"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    if value == "soon":  # not a number: argparse's usage, then its one error line, as for every option
        assert lines[-1] == "dsfields check: error: argument --launch-timeout: invalid float value: 'soon'", lines
    else:
        assert lines == ["dsfields check: --launch-timeout must be 1 to 3600 seconds and needs --launch"], lines
    assert not list(hanging["tmp"].iterdir())  # refused before any launch


def test_a_launch_timeout_without_launch_is_refused(hanging):
    argv = [a for a in hanging["argv"] if a != "--launch"]
    done = subprocess.run([*argv[:-1], "--launch-timeout", "60", argv[-1]], env=hanging["env"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip() == (
        "dsfields check: --launch-timeout must be 1 to 3600 seconds and needs --launch"), done.stderr


@pytest.mark.parametrize("seconds", [1, 300])
def test_an_op_build_is_announced_with_its_cost_shown_as_it_goes_and_bounded(hanging, seconds, monkeypatch):
    import re

    from dsfields.launch.client import LaunchClient, LaunchWorkerError

    lines: list[str] = []
    env = hanging["env"] | {"FAKE_DEEPSPEED_BUILD": str(seconds)}
    monkeypatch.setenv("TMPDIR", str(hanging["tmp"]))
    client = LaunchClient(env=env, warm_up=False, start_timeout=60, progress=lines.append, build_budget=5)
    with pytest.raises(LaunchWorkerError) as failed:
        client.launch({"train_micro_batch_size_per_gpu": 1})
    client.close()
    first = re.fullmatch(r"building DeepSpeed's CPU ops for the first launch: about (\d+) min, (\d+) MB in (\S+) at "
                         r"most \((\d) of 6 ops not built yet, the launch builds those it needs"
                         r"(; up to [\d.]+ GB more if torch's headers are precompiled)?\); stopped after \d+ min",
                         lines[0])
    assert first, lines
    assert int(first[1]) >= 1 and int(first[2]) > 0 and first[3] == str(Path(env["DSFIELDS_OPS_CACHE"]))
    assert first[4] == "6"  # a fresh cache: none built
    assert lines[1] == "building cpu_adam (1/6 at most)"
    if seconds == 1:  # built: said so, then the start fails for the fake's own reason
        assert re.fullmatch(r"built cpu_adam in \d+ s", lines[2]), lines
        assert "nothing to import" in str(failed.value)
    else:  # over the bound: stopped, and the compiler's stand-in with it
        assert str(failed.value).startswith("DeepSpeed's CPU ops did not build in 5 s (stopped"), failed.value
    assert settle(hanging["mark"]) == []
    assert not list(hanging["tmp"].iterdir())


def test_a_worker_hung_holding_the_gil_is_killed_with_its_tree_from_outside(hanging):
    # The lifeline's thread cannot run in a worker stuck in C code: its client kills the tree itself.
    env = hanging["env"] | {"FAKE_DEEPSPEED_GIL": "1"}
    check = subprocess.Popen(hanging["argv"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 120
        while not hanging["ready"].exists() and check.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hanging["ready"].exists(), check.communicate(timeout=30)
        check.send_signal(signal.SIGTERM)
        check.communicate(timeout=60)
    finally:
        if check.poll() is None:
            check.kill()
    assert check.returncode == 128 + signal.SIGTERM
    assert settle(hanging["mark"]) == []
    assert not list(hanging["tmp"].iterdir())


def test_an_answer_sent_with_a_build_notice_in_one_write_is_read_at_once():
    # ops.py's "built" notice and the launch's answer can reach the pipe in one chunk: a buffered readline after
    # select kept the answer where select could not see it, and the client waited out its timeout (0.17.6's
    # DeepCompile op build hung the world witness that way)
    from dsfields.launch.client import LaunchClient

    client = LaunchClient(warm_up=False)
    script = ("import sys, time; sys.stdout.write('{\"building\": \"dc\"}\\n{\"built\": \"dc\"}\\n{\"ok\": 1}\\n'); "
              "sys.stdout.flush(); time.sleep(30)")
    client.proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        assert client._read(20) == {"ok": 1}
        assert time.monotonic() - started < 10
    finally:
        client.proc.kill()
        client.proc.wait()
        client.proc.stdout.close()
        client.proc = None
