"""Test lanes, and the guard that keeps the unit lane honest.

Every test belongs to one lane, marked in its own module: ``pytestmark = pytest.mark.unit`` for a whole module; in a
module whose tests are in two lanes, ``pytestmark = pytest.mark.lane("unit")`` for the usual one and a mark on each
test that belongs elsewhere (``@pytest.mark.data``), next to the code that says why. No table names tests here:

- ``unit``: pure code on fixture packages and tiny hand-made snapshots. No committed snapshot is read, no
  DeepSpeed, torch or mkdocs is imported, no compiler, browser or site build runs. ``pytest -m unit``.
- ``data``: reads the committed snapshots in ``generated/``.
- ``integration``: the real DeepSpeed (and torch, transformers), its CPU launch.
- ``site``: the docs build and headless Chromium.
- ``build``: g++ and wheel builds.

The guard is an audit hook (audit hooks cannot be removed, so it is switched on per test): while a ``unit`` test
runs, opening anything under ``generated/``, importing DeepSpeed/torch/mkdocs/playwright, or starting a compiler,
browser or mkdocs raises :class:`LaneViolation`. A unit test that needs any of them fails, and so it is marked
for the lane it really belongs to. A test with no lane, or with two (its own mark and its module's, or the older
``deepspeed``/``browser`` marks implying another), fails collection.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

LANES = ("unit", "data", "integration", "site", "build")
# Marks of the rounds before lanes existed: they imply a lane.
IMPLIED = {"deepspeed": "integration", "browser": "site"}
HEAVY_MODULES = frozenset({"deepspeed", "torch", "mkdocs", "material", "playwright", "transformers", "accelerate"})
HEAVY_PROGRAMS = frozenset({"g++", "c++", "gcc", "cc", "cc1plus", "ninja", "chromium", "chromium-browser", "mkdocs"})


UNMARKED: dict[str, str] = {}
"""Modules not yet marked by their owner: their lane until they carry a ``pytestmark``. A listed module that marks
itself fails collection (delete it here)."""


class LaneViolation(RuntimeError):
    """A unit test touched what only another lane may touch."""


_GENERATED = (str(Path(__file__).resolve().parent.parent / "generated") + os.sep, )
_active = False


def _program(args: tuple) -> str:
    executable = args[0] if args else None
    if executable is None and len(args) > 1 and isinstance(args[1], (list, tuple)) and args[1]:
        executable = args[1][0]
    try:
        return os.path.basename(os.fsdecode(executable)) if executable is not None else ""
    except TypeError:
        return ""


def _audit(event: str, args: tuple) -> None:
    if not _active:
        return
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(_GENERATED):
            raise LaneViolation(f"unit test opened a committed snapshot: {path}")
    elif event in ("os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes)):
        path = os.path.abspath(os.fsdecode(args[0])) + os.sep
        if path.startswith(_GENERATED):
            raise LaneViolation(f"unit test listed the committed snapshots: {path}")
    elif event == "import" and args and isinstance(args[0], str):
        if args[0].partition(".")[0] in HEAVY_MODULES:
            raise LaneViolation(f"unit test imported {args[0]}")
    elif event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
        program = _program(args)
        if program in HEAVY_PROGRAMS:
            raise LaneViolation(f"unit test started {program}")


sys.addaudithook(_audit)


def _own_lanes(node: pytest.Item | pytest.Collector) -> set[str]:
    names = {mark.name for mark in node.own_markers}
    return {name for name in names if name in LANES} | {IMPLIED[name] for name in names if name in IMPLIED}


def lane_of(item: pytest.Item) -> list[str]:
    """The lanes marked on the test, its class and its module (one, or the test is in error); where none is, the
    nearest ``lane("…")`` default (a module whose tests are in two lanes states the usual one with it, so that
    ``pytest -m`` does not select the others by their module's mark too)."""
    lanes: set[str] = set()
    for node in item.listchain():
        lanes |= _own_lanes(node)
    if lanes:
        return sorted(lanes)
    for node in reversed(item.listchain()):
        defaults = {str(mark.args[0]) if mark.args else "" for mark in node.own_markers if mark.name == "lane"}
        if defaults:
            return sorted(defaults)
    lane = UNMARKED.get(item.path.name)
    return [lane] if lane else []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = []
    for name in sorted({item.path.name for item in items if item.path.name in UNMARKED}):
        module = next(item for item in items if item.path.name == name).getparent(pytest.Module)
        if module is not None and _own_lanes(module):
            problems.append(f"{name} marks its own lane now: delete it from UNMARKED in tests/lanes.py")
    for item in items:
        lanes = lane_of(item)
        if len(lanes) != 1:
            problems.append(f"{item.nodeid}: lanes {lanes or 'none'} (give it exactly one of {', '.join(LANES)})")
        for lane in lanes:
            item.add_marker(getattr(pytest.mark, lane))
    if problems:
        raise pytest.UsageError("tests without exactly one lane:\n  " + "\n  ".join(problems[:40]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    yield from _guarded(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    yield from _guarded(item)


def _guarded(item: pytest.Item):
    global _active
    guarded = lane_of(item) == ["unit"] and not os.environ.get("DSFIELDS_LANE_GUARD_OFF")
    _active = guarded
    try:
        yield
    finally:
        _active = False
