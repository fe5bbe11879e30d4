"""The forked helper behind the static scan and the value probes (``dsfields.launch.forked``)."""

from __future__ import annotations

import os
import time

import pytest

from dsfields.launch.forked import Forked, ForkFailed

pytestmark = pytest.mark.unit


def test_the_result_is_the_childs_return_value():
    parent = os.getpid()
    assert Forked(lambda: {"pid": os.getpid(), "big": "x" * 1_000_000}).result()["pid"] != parent


def test_a_child_that_raises_gives_no_result():
    def fails() -> None:
        raise RuntimeError("boom")

    with pytest.raises(ForkFailed):
        Forked(fails).result()


def test_cancel_ends_a_child_at_once_and_reaps_it():
    child = Forked(lambda: time.sleep(60))
    pid = child.pid
    started = time.monotonic()
    child.cancel()
    assert time.monotonic() - started < 5
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(pid, 0)
    with pytest.raises(ForkFailed):
        child.result()
    child.cancel()  # a second cancel is harmless
