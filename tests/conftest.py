"""Shared test fixtures: paths, and the miniature DeepSpeed package under tests/fixtures."""

from __future__ import annotations

import os
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
