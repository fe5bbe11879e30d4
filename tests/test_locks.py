"""safewrite.lock_file, the one lock of the extractor's builds and caches: exclusive across processes, and a holder
that dies (SIGKILL, as a killed op build) never blocks the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from dsfields.model.safewrite import lock_file

pytestmark = pytest.mark.unit

EXTRACTOR = str(Path(__file__).resolve().parent.parent / "extractor")
HOLDER = """
import sys, time
from dsfields.model.safewrite import lock_file
with lock_file(sys.argv[1]):
    print("held", flush=True)
    time.sleep(600)
"""


def _holder(path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=EXTRACTOR)
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    return child


def test_a_held_lock_excludes_another_process_and_a_killed_holder_releases_it(tmp_path):
    path = tmp_path / "locks" / "src-0.19.8.lock"  # the folder is made by lock_file
    child = _holder(path)
    try:
        with pytest.raises(Timeout):
            FileLock(str(path), timeout=0).acquire()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with lock_file(path):  # the kernel dropped the dead holder's flock
        assert path.exists()
