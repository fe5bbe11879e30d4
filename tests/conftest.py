"""Shared test fixtures: paths, and the miniature DeepSpeed package under tests/fixtures."""

from __future__ import annotations

import os
import sys
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
