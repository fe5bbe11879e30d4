"""Instrumented dicts that record every key DeepSpeed's dict readers look at.

DeepSpeed's older config readers (``get_scalar_param(d, KEY, KEY_DEFAULT)``, ``d.get(KEY, {})``,
``KEY in d.keys()``) leave no declaration behind: the only complete record of which keys they read,
and with which default, is the read itself. Feeding ``DeepSpeedConfig`` a :class:`TracingDict`
captures both, including the default argument really passed at the call site.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import KeysView
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsfields.model.dotted import join

_MISSING: Any = object()
_THIS_FILE = str(Path(__file__).resolve())


@dataclass(frozen=True)
class ReadEvent:
    """One look at one key of one (possibly nested) section of the probe config."""

    section: str
    """Dotted JSON path of the dict that was read ("" is the top level)."""
    key: str
    op: str
    """``get`` (with a default), ``getitem``, ``contains`` or ``iterate`` (whole section passed on)."""
    present: bool
    """Whether the probe config held the key at that moment."""
    default: Any = _MISSING
    """The default passed to ``get``; ``_MISSING`` for the other operations."""
    site: tuple[str, int, str] = ("", 0, "")
    """(file, line, function) of the DeepSpeed code that made the read."""

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING


@dataclass
class Recorder:
    """Collects :class:`ReadEvent` s in order; ``skip_files`` are helpers whose caller is the read site."""

    events: list[ReadEvent] = field(default_factory=list)
    sites: dict[tuple[Any, ...], tuple[str, int, str]] = field(default_factory=dict)
    """Read sites already located, shared across runs: walking frames is the costly part of a read."""
    skip_functions: frozenset[str] = frozenset({"get_scalar_param", "get_list_param", "get_dict_param"})

    def site(self) -> tuple[str, int, str]:
        # Walk out of this module and out of DeepSpeed's one-line get_*_param wrappers: the
        # useful location is the reader that names the key (e.g. runtime/config.py:get_gradient_clipping).
        frame = sys._getframe(2)
        while frame is not None and (
            frame.f_code.co_filename == _THIS_FILE or frame.f_code.co_name in self.skip_functions
        ):
            frame = frame.f_back
        if frame is None:
            return ("", 0, "")
        return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)

    def record(self, section: str, key: object, op: str, present: bool, default: Any = _MISSING) -> None:
        if isinstance(key, str):
            # Same key, same operation, same default: almost always the same call site.
            plain = default is None or isinstance(default, (str, int, float, bool))
            memo = (section, key, op, present, default if plain else type(default).__name__)
            site = self.sites.get(memo)
            if site is None:
                site = self.sites[memo] = self.site()
            if isinstance(default, (dict, list)):
                # DeepSpeed may fill the very default object it passed (data_sampling's {} gains a
                # curriculum_learning entry): keep the default as it was at the read.
                default = copy.deepcopy(default)
            self.events.append(ReadEvent(section, key, op, present, default, site))


class _TracingKeys(KeysView):  # type: ignore[type-arg]
    """``d.keys()`` view whose membership tests are recorded (``KEY in d.keys()`` is common in DeepSpeed)."""

    def __init__(self, owner: TracingDict) -> None:
        super().__init__(owner)
        self._owner = owner

    def __contains__(self, key: object) -> bool:
        return self._owner.__contains__(key)


class TracingDict(dict):  # type: ignore[type-arg]
    """A dict that reports reads to a :class:`Recorder` and wraps nested plain dicts on access.

    ``__iter__`` is deliberately not overridden: CPython then keeps the fast path for ``Model(**d)``,
    so pydantic models built from a section do not show up as reads (models are described from
    their own field declarations instead).
    """

    def __init__(self, data: dict[str, Any], section: str, recorder: Recorder) -> None:
        super().__init__(data)
        self.section = section
        self.recorder = recorder

    def _wrap(self, key: str, value: Any) -> Any:
        # Nested plain dicts (including ones DeepSpeed itself inserts, e.g. data_efficiency) are
        # wrapped on first access so that reads below them are traced too.
        if type(value) is dict:
            value = TracingDict(value, join(self.section, key), self.recorder)
            dict.__setitem__(self, key, value)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        present = dict.__contains__(self, key)
        self.recorder.record(self.section, key, "get", present, default)
        return self._wrap(key, dict.__getitem__(self, key)) if present else default

    def __getitem__(self, key: Any) -> Any:
        present = dict.__contains__(self, key)
        self.recorder.record(self.section, key, "getitem", present)
        return self._wrap(key, dict.__getitem__(self, key))

    def __contains__(self, key: object) -> bool:
        present = dict.__contains__(self, key)
        self.recorder.record(self.section, key, "contains", present)
        return present

    def keys(self) -> _TracingKeys:  # type: ignore[override]
        return _TracingKeys(self)

    def items(self) -> Any:
        self.recorder.record(self.section, "*", "iterate", True)
        return [(k, self._wrap(k, v)) for k, v in dict.items(self)]

    def values(self) -> Any:
        self.recorder.record(self.section, "*", "iterate", True)
        return [self._wrap(k, v) for k, v in dict.items(self)]

    def __copy__(self) -> TracingDict:
        return TracingDict(dict(self), self.section, self.recorder)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        # A deep copy leaves DeepSpeed's parsing (e.g. datastates keeps a private copy): plain data.
        return {k: copy.deepcopy(v, memo) for k, v in dict.items(self)}


def wrap(data: dict[str, Any], section: str, recorder: Recorder) -> TracingDict:
    """``data`` with every dict in it (at any depth) a :class:`TracingDict` reporting to ``recorder``."""
    wrapped = {k: wrap(v, join(section, k), recorder) if isinstance(v, dict) else v for k, v in data.items()}
    return TracingDict(wrapped, section, recorder)
