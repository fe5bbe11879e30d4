"""Shared test fixtures: paths, and the miniature DeepSpeed package under tests/fixtures."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest_plugins = ("lanes",)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
SHARED = REPO.parent / "shared"
CORPUS = Path(os.environ.get("DSFIELDS_CORPUS") or SHARED / "realworld-configs")
"""The shared real-world configs: beside the checkout (or the worktree), or where ``DSFIELDS_CORPUS`` points."""


def corpus_configs() -> list[Path]:
    """Every config of :data:`CORPUS` (its ``index.json`` aside). A missing corpus skips the test (fails under CI):
    never an empty loop that passes."""
    files = sorted(p for p in CORPUS.glob("*.json") if p.name != "index.json")
    if not files:
        message = f"the real-config corpus is missing at {CORPUS} (set DSFIELDS_CORPUS)"
        if os.environ.get("CI"):
            raise AssertionError(message)
        pytest.skip(message)
    return files


SIGNALS_TESTED = (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM, signal.SIGUSR1)
"""The signals the suite sends to a child to test what it does on them."""


def default_signals() -> None:
    """``preexec_fn`` of a child that a test signals: :data:`SIGNALS_TESTED` at their default disposition,
    none blocked, as an interactive shell starts a command.

    A suite started under ``nohup`` or as a background job (``… &``) inherits SIGHUP, or SIGINT and SIGQUIT,
    ignored, and an ignored disposition survives ``exec``: the child would never see the signal the test sends.
    The test is of what dsfields does when the user presses Ctrl-C or closes the terminal, so the child gets the
    dispositions the user's shell gives it, whatever the suite's own are.
    """
    for number in SIGNALS_TESTED:
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS_TESTED)


def deepspeed_available() -> bool:
    try:
        from importlib import metadata

        metadata.version("deepspeed")
    except Exception:
        return False
    return True


requires_deepspeed = pytest.mark.skipif(
    not deepspeed_available() and not os.environ.get("CI"),
    reason="DeepSpeed not installed (integration tests run in dev/test.sh and CI)",
)


@pytest.fixture(scope="session")
def fake_snapshot() -> dict:
    """The snapshot dsfields extracts from tests/fixtures/fakeds (pydantic v1 and v2, dict readers)."""
    sys.path.insert(0, str(FIXTURES))
    try:
        import fakeds
        import fakeds.runtime.config as config_module

        from dsfields.extract.build import extract

        return extract(config_module, version=fakeds.__version__, package="fakeds")
    finally:
        sys.path.remove(str(FIXTURES))


@pytest.fixture(autouse=True)
def english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output language follows the locale (zh_* → Chinese): pin it, so goldens hold on every machine."""
    for variable in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``python -m http.server`` for ``folder`` on 127.0.0.1, in its own process, yielding its URL.

    In-process, pytest's warnings-as-errors turns the server threads' harmless ResourceWarnings into
    failed requests (the search index then never loads); a child process keeps the server plain.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=10)
