"""Choice lists DeepSpeed checks only when it builds a class from a section: curriculum ``schedule_type``.

``CurriculumScheduler(config)`` compares ``config["schedule_type"]`` with ``fixed_discrete``, ``fixed_root``,
``fixed_linear`` and ``custom`` in an ``if``/``elif`` chain that ends in ``raise RuntimeError``. DeepSpeedConfig
never builds it (the engine does, for the legacy top-level ``curriculum_learning``; the data sampler does, for
each ``data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.<metric>``), so a value probe
accepts any word. The static witness reads the chain (a ``Choices`` in ``Cls.__init__``) and where the section
is handed whole to that class (``PassedWhole`` of kind ``class``): that maps the class's config to the JSON
paths. Here the class itself, from the release being extracted, is built with a dict for the section: one
allowed value is set and the keys its refusals name (``Curriculum learning requires the config
'min_difficulty'``) are given candidate values until it is built; then a value outside the list and a value of
another JSON type are set on that same dict, and both must be refused with a message naming no key of the
section. The confirmed list becomes the field's ``choices``, with ``choices_source`` ``{file, line, function,
built, message}``: the chain's line, the class built, and its refusal of a value outside the list.
"""

from __future__ import annotations

import copy
import importlib
import io
import logging
from contextlib import redirect_stderr, redirect_stdout
from typing import TYPE_CHECKING, Any

from dsfields.extract.probes import error_line
from dsfields.extract.requirements import CANDIDATES, MAX_STEPS, _names
from dsfields.model.dotted import put_path

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction
    from dsfields.extract.static import StaticReport

_NOT_A_CHOICE = "__dsfields_not_a_choice__"


def _build(cls: type, config: dict[str, Any]) -> BaseException | None:
    """``cls(config)``: None when it is built, else what it raised (its log lines kept off the output)."""
    quiet = io.StringIO()
    logging.disable(logging.WARNING)
    try:
        with redirect_stdout(quiet), redirect_stderr(quiet):
            cls(copy.deepcopy(config))
    except Exception as exc:
        return exc
    finally:
        logging.disable(logging.NOTSET)
    return None


def _keys_of(ex: Extraction, section: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Key name -> (its section relative to ``section``, its record), for every key at or below it."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    below = [r for p, r in ex.fields.items() if p.startswith(section + ".")]
    for record in sorted(below, key=lambda r: (r["path"].count("."), r["path"])):
        out.setdefault(record["key"], (record["section"][len(section):].lstrip("."), record))
    return out


def _candidates(record: dict[str, Any]) -> list[Any]:
    first: list[Any] = [{}] if record.get("is_section") else []
    return first + [c for c in CANDIDATES if c not in first]


def _satisfy(cls: type, key: str, value: Any, keys: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    config: dict[str, Any] = {key: value}
    tried: dict[str, int] = {}
    last: str | None = None
    for _ in range(MAX_STEPS):
        exc = _build(cls, config)
        if exc is None:
            return config
        full = f"{type(exc).__name__}: {exc}"
        named = [k for k in _names(full, set(keys) - {key}) if tried.get(k, 0) < len(_candidates(keys[k][1]))]
        if not named and last is not None and tried[last] < len(_candidates(keys[last][1])):
            named = [last]
        if not named:
            return None
        required = last = named[0]
        relative, record = keys[required]
        config = put_path(config, relative, required, copy.deepcopy(_candidates(record)[tried.get(required, 0)]))
        tried[required] = tried.get(required, 0) + 1
    return None


def _class_of(ex: Extraction, file: str, function: str) -> type | None:
    name, _, method = function.partition(".")
    if method != "__init__" or not file.endswith(".py"):
        return None
    module_name = file.removesuffix(".py").replace("/", ".")
    if module_name.split(".", 1)[0] != ex.package:
        return None
    try:
        module = importlib.import_module(module_name)
    except Exception:
        return None
    cls = getattr(module, name, None)
    return cls if isinstance(cls, type) else None


def built_choices(ex: Extraction, report: StaticReport) -> list[str]:
    """Confirm the choice lists of classes DeepSpeed builds from a whole section; one note per candidate."""
    notes: list[str] = []
    built = {(p.path, p.to) for p in report.passed_whole if p.kind == "class"}
    for choice in sorted(report.choices, key=lambda c: (c.path, c.line)):
        record = ex.fields.get(choice.path)
        if record is None or record["is_section"] or record.get("choices") or not choice.raises:
            continue
        class_name = choice.function.partition(".")[0]
        section, key = record["section"], record["key"]
        if (section, class_name) not in built:
            continue
        cls = _class_of(ex, choice.file, choice.function)
        where = f"{choice.file}:{choice.line}"
        if cls is None:
            notes.append(f"{choice.path}: {list(choice.values)} not confirmed ({class_name} not importable; {where})")
            continue
        keys = _keys_of(ex, section)
        config = next((c for c in (_satisfy(cls, key, v, keys) for v in choice.values) if c is not None), None)
        if config is None:
            notes.append(f"{choice.path}: {list(choice.values)} not confirmed (no allowed value built {class_name}; "
                         f"{where})")
            continue
        bad = _build(cls, {**config, key: _NOT_A_CHOICE})
        odd = _build(cls, {**config, key: [] if isinstance(choice.values[0], str) else "x"})
        siblings = set(keys) - {key}
        if bad is None or odd is None or _names(f"{type(bad).__name__}: {bad}", siblings):
            why = "a value outside the list is built" if bad is None or odd is None else "its refusal names a key"
            notes.append(f"{choice.path}: {list(choice.values)} not confirmed by building {class_name} "
                         f"({why}; {where})")
            continue
        record["choices"] = list(choice.values)
        record["choices_normalized"] = choice.normalized
        record["choices_source"] = {"built": class_name, "file": choice.file, "function": choice.function,
                                    "line": choice.line, "message": error_line(bad)}
        notes.append(f"{choice.path}: {record['choices']} confirmed by building {class_name} ({where})")
    return notes
