"""Find every key ``DeepSpeedConfig`` reads, and which model serves each section, by running it.

Nothing here is listed by hand: the probe starts from ``{"train_batch_size": 1}``, records every
read (:mod:`dsfields.launch.trace`), and expands each key that might hold a section by trying it
as ``{}`` (do reads happen inside it? then it is a dict-read section) and as ``{PROBE_KEY: 1}``
(does a pydantic model reject the unknown key? then that model serves this path). Repeat until no
new key appears.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pydantic

from dsfields.extract.models import nested_models
from dsfields.launch.trace import ReadEvent, Recorder, join, wrap
from dsfields.model.dotted import set_path

log = logging.getLogger(__name__)

PROBE_KEY = "__dsfields_probe__"
BASE_CONFIG: dict[str, Any] = {"train_batch_size": 1}
"""The smallest config DeepSpeedConfig accepts on one process (a batch size is mandatory)."""


@dataclass
class Run:
    recorder: Recorder
    error: BaseException | None
    config: Any


@dataclass
class Discovery:
    events: list[ReadEvent] = field(default_factory=list)
    dict_sections: dict[str, ReadEvent] = field(default_factory=dict)
    """Dict-read sections by path, with the read that revealed them ("" is the top level)."""
    model_sections: dict[str, type] = field(default_factory=dict)
    """Root placements: path → the pydantic model that validates it (found by its rejection)."""
    passthrough: set[str] = field(default_factory=set)
    """Sections DeepSpeed copies whole (``items()``): any key is kept, none is checked."""
    unresolved_models: dict[str, str] = field(default_factory=dict)
    """Paths that raised a validation error naming a model we could not find: path → model name."""


class Prober:
    """Builds ``DeepSpeedConfig`` on traced dicts; counts runs for the coverage report."""

    def __init__(self, config_cls: Callable[[Any], Any], package: str = "deepspeed") -> None:
        self.config_cls = config_cls
        self.package = package
        self.runs = 0
        self._sites: dict[tuple[Any, ...], tuple[str, int, str]] = {}

    def run(self, config: dict[str, Any], trace: bool = True) -> Run:
        """Build the config; ``trace=False`` skips recording for runs that only need the verdict."""
        recorder = Recorder(sites=self._sites)
        self.runs += 1
        try:
            data = wrap(config, "", recorder) if trace else copy.deepcopy(config)
            return Run(recorder, None, self.config_cls(data))
        except Exception as exc:  # DeepSpeed raises asserts, ValueErrors, its own errors: all are verdicts
            return Run(recorder, exc, None)


def _pydantic_bases() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """BaseModel and ValidationError of pydantic, plus those of ``pydantic.v1`` where it exists.

    DeepSpeed < 0.15 declares its models on pydantic 1; pydantic 2 still ships that API as
    ``pydantic.v1``, which lets the fixture tests exercise both on one interpreter.
    """
    models: list[type] = [pydantic.BaseModel]
    errors: list[type] = [pydantic.ValidationError]
    try:
        from pydantic import v1
    except ImportError:
        pass
    else:
        if v1.BaseModel is not pydantic.BaseModel:
            models.append(v1.BaseModel)
            errors.append(v1.ValidationError)
    return tuple(models), tuple(errors)


def all_model_classes() -> list[type]:
    seen: dict[int, type] = {}
    stack = [sub for base in _pydantic_bases()[0] for sub in base.__subclasses__()]
    while stack:
        cls = stack.pop()
        if id(cls) not in seen:
            seen[id(cls)] = cls
            stack.extend(cls.__subclasses__())
    return sorted(seen.values(), key=lambda c: (c.__module__, c.__qualname__))


def _validation_error(exc: BaseException | None) -> BaseException | None:
    while exc is not None:
        if isinstance(exc, _pydantic_bases()[1]):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def model_rejecting_probe(
    exc: BaseException | None, classes: list[type], package: str = "deepspeed"
) -> tuple[type | None, str | None]:
    """The model class that rejected ``PROBE_KEY`` (following the error's location into nested fields).

    Returns ``(cls, None)`` when found, ``(None, name)`` when a model by that name rejected it but could
    not be resolved, ``(None, None)`` when no model rejected the probe key.
    """
    error = _validation_error(exc)
    if error is None:
        return None, None
    root: type | None = getattr(error, "model", None)  # pydantic 1 carries the class itself
    title = getattr(error, "title", None) or (root.__name__ if root else "")
    if root is None:
        named = [c for c in classes if c.__name__ == title]
        preferred = [c for c in named if c.__module__.startswith(package)]
        named = preferred or named
        root = named[0] if len(named) == 1 else None
    for err in error.errors():
        loc = tuple(err.get("loc", ()))
        if not loc or loc[-1] != PROBE_KEY:
            continue
        if root is None:
            return None, title
        cls: type | None = root
        for part in loc[:-1]:
            cls = _field_model(cls, part)
            if cls is None:
                return None, f"{title}.{'.'.join(map(str, loc[:-1]))}"
        return cls, None
    return None, None


def _field_model(cls: type | None, key: Any) -> type | None:
    if cls is None or not isinstance(key, str):
        return cls  # list indices and union tags do not change the model
    fields = getattr(cls, "model_fields", None) or getattr(cls, "__fields__", {})
    for name, f in fields.items():
        if key in (name, getattr(f, "alias", None)):
            annotation = getattr(f, "annotation", None) or getattr(f, "outer_type_", None)
            found = nested_models(annotation)
            return found[0] if len(found) == 1 else None
    return None


def _candidate(event: ReadEvent, sections: set[str]) -> bool:
    if event.present or event.key == "*" or event.section not in sections:
        return False
    if event.op in ("contains", "getitem"):
        return True
    return event.op == "get" and (event.default is None or isinstance(event.default, dict))


def discover(prober: Prober) -> Discovery:
    """Explore until no new section appears.

    Besides the growing probe config, every boolean read with default ``False`` is also tried as
    ``True`` once: many readers only look at their other keys when a feature is enabled.
    """
    classes = all_model_classes()
    found = Discovery()
    probe = copy.deepcopy(BASE_CONFIG)
    first = prober.run(probe)
    if first.error is not None:
        raise RuntimeError(f"DeepSpeedConfig rejects the base probe {BASE_CONFIG}: {first.error!r}")
    found.dict_sections[""] = first.recorder.events[0] if first.recorder.events else ReadEvent("", "", "get", True)
    tried: set[tuple[str, str]] = set()
    enabled: set[tuple[str, str]] = set()
    work: list[tuple[dict[str, Any], Run]] = [(probe, first)]
    while work:
        state, current = work.pop(0)
        found.events.extend(current.recorder.events)
        for event in current.recorder.events:
            pair = (event.section, event.key)
            if pair in tried or not _candidate(event, set(found.dict_sections)):
                continue
            tried.add(pair)
            kept = _classify(prober, classes, found, state, event)
            if kept is not None:
                # Keep exploring from the state the section was found in: a section reached only
                # with a feature enabled (e.g. quantize_training.eigenvalue) has reads of its own.
                grown = set_path(state, event.section, event.key, kept)
                work.append((grown, prober.run(grown)))
        for event in current.recorder.events:
            pair = (event.section, event.key)
            if event.default is False and event.section in found.dict_sections and pair not in enabled:
                enabled.add(pair)
                flipped = set_path(state, event.section, event.key, True)
                work.append((flipped, prober.run(flipped)))
    return found


def _model_by_value(prober: Prober, classes: list[type], state: dict[str, Any], event: ReadEvent) -> type | None:
    """Place a model whose rejection of the probe key was masked (e.g. a pydantic-1 root validator
    of the enclosing model raising AttributeError first, as in DeepSpeed 0.14's monitor config).

    Candidates are models some other model declares under this very key; one is confirmed only if
    writing a non-default value for one of its boolean fields under the path makes an instance of
    it carry that value in the parsed config.
    """
    from dsfields.extract.models import describe_model
    from dsfields.extract.state import instances_of

    candidates: list[type] = []
    for owner in classes:
        if not owner.__module__.startswith(prober.package):
            continue
        for f in describe_model(owner).fields:
            if f.key == event.key:
                candidates.extend(m for m in nested_models(f.annotation) if m not in candidates)
    for model in candidates:
        flags = [f for f in describe_model(model).fields if f.default is False and not f.required]
        if not flags:
            continue
        run = prober.run(set_path(state, event.section, event.key, {flags[0].key: True}), trace=False)
        if run.error is None and any(
            getattr(obj, flags[0].name, None) is True for obj in instances_of(run.config, model, prober.package)
        ):
            return model
    return None


def _classify(
    prober: Prober, classes: list[type], found: Discovery, state: dict[str, Any], event: ReadEvent
) -> dict[str, Any] | None:
    """Decide whether ``event``'s key is a model section, a dict section, or a plain value.

    Returns what exploration keeps at a new section (``{}`` unless only a non-empty dict gets read),
    or None when there is nothing to explore from.
    """
    path = join(event.section, event.key)
    # A non-empty probe first: dict readers guarded by `if not d:` only read a non-empty
    # section, and strict models name themselves by rejecting the unknown key.
    rejected = prober.run(set_path(state, event.section, event.key, {PROBE_KEY: 1}))
    as_dict = prober.run(set_path(state, event.section, event.key, {}))
    found.events.extend(rejected.recorder.events)
    found.events.extend(as_dict.recorder.events)
    model, unresolved = model_rejecting_probe(rejected.error, classes, prober.package)
    # Reads inside count even when the run then fails: a section whose reader needs a nested key
    # (compression_training.weight_quantization[shared_parameters]) fails empty, yet is a section.
    inner_empty = any(e.section == path for e in as_dict.recorder.events)
    inner_probe = any(e.section == path for e in rejected.recorder.events)
    kept: dict[str, Any] = {PROBE_KEY: 1} if inner_probe and not inner_empty else {}
    if model is not None:
        found.model_sections[path] = model
        return kept if as_dict.error is None else None
    if unresolved:
        found.unresolved_models[path] = unresolved
        return None
    if as_dict.error is None and not inner_empty:
        model = _model_by_value(prober, classes, state, event)
        if model is not None:
            found.model_sections[path] = model
            return kept
    if inner_empty or inner_probe:
        found.dict_sections[path] = event
        if any(e.section == path and e.op == "iterate" for r in (as_dict, rejected) for e in r.recorder.events):
            found.passthrough.add(path)
        return kept
    return None
