"""Shared test fixtures: paths, and the miniature DeepSpeed package under tests/fixtures."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

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


class BuiltSite(NamedTuple):
    """The docs site built once per test run (:func:`built_site`)."""

    site: Path
    """The built site (``root/site``)."""
    generated: Path
    """The copy of the committed snapshots it was built from."""


def build_site_copy(folder: Path, versions: list[str] | None = None, files: tuple[str, ...] = ()) -> BuiltSite:
    """``dsfields docs build`` (strict) of the committed snapshots of ``versions`` (default: every one) and the
    top-level ``files`` of generated/, in a copy of the checkout's docs setup under ``folder``, so that no test
    touches the checkout's docs/ or site/, and no snapshot changes under the tests."""
    from dsfields.cli import main
    from dsfields.model.store import available_versions, repo_generated_dir

    generated = folder / "generated"
    for version in available_versions(repo_generated_dir()) if versions is None else versions:
        shutil.copytree(repo_generated_dir() / version, generated / version)
    for name in files:
        shutil.copy(repo_generated_dir() / name, generated / name)
    shutil.copytree(repo_generated_dir() / "hf", generated / "hf")  # the HF Trainer's fill list the pages show
    root = folder / "site-root"
    (root / "docs").mkdir(parents=True)
    for name in ("mkdocs.yml", "mkdocs.zh.yml"):
        shutil.copy(REPO / name, root / name)
    for page in (REPO / "docs").glob("*.md"):
        shutil.copy(page, root / "docs" / page.name)
    shutil.copytree(REPO / "docs" / "assets", root / "docs" / "assets")
    hooks = root / "extractor" / "dsfields" / "docs"
    hooks.mkdir(parents=True)
    shutil.copy(REPO / "extractor" / "dsfields" / "docs" / "hooks.py", hooks / "hooks.py")
    code = main(["docs", "build", "--config-file", str(root / "mkdocs.yml"), "--site-dir", str(root / "site"),
                 "--generated", str(generated)])
    assert code == 0, "mkdocs build --strict failed: see the captured output"
    return BuiltSite(root / "site", generated)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The whole site, built once per test run and read by every site test; never changed by a test (a test that
    rebuilds part of it works on a copy).

    Under pytest-xdist every worker asks for it: the first builds it into the run's shared temp folder under a file
    lock, the others wait and read that build (pytest-xdist's documented pattern:
    ``tmp_path_factory.getbasetemp().parent`` is the run's folder, common to its workers).
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return build_site_copy(tmp_path_factory.mktemp("built-site"))
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent / "built-site"
    shared.mkdir(exist_ok=True)
    done = shared / "done"
    with FileLock(str(shared / "lock")):
        if not done.exists():
            for leftover in ("generated", "site-root"):  # a worker's failed build: start again
                shutil.rmtree(shared / leftover, ignore_errors=True)
            build_site_copy(shared)
            done.touch()
    return BuiltSite(shared / "site-root" / "site", shared / "generated")


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


def fresh_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter on the checkout's sources and committed snapshots (no
    ``DSFIELDS_GENERATED``): what a start-up imports is seen there, not in this test process."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "extractor")}
    env.pop("DSFIELDS_GENERATED", None)
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)


def record_decoded(record: object) -> bool:
    """Whether an indexed snapshot's field record (:mod:`dsfields.model.paths_index`) has decoded its JSON: the
    lazy records' own attribute, set only on first use."""
    from dsfields.model import paths_index

    try:
        paths_index._RAW.__get__(record)
    except AttributeError:
        return False
    return True
