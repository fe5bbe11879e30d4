"""Reconcile the witnesses of issue 15 into one snapshot, with provenance per field.

Witnesses:

* ``trace``: :mod:`discover` built ``DeepSpeedConfig`` on tracing dicts and saw the read (pydantic
  fields count as traced: the trace placed their model);
* ``static``: :mod:`dsfields.extract.static` found the read in the source;
* ``probe``: the read was only triggered by a probe config built to satisfy a static condition
  (:func:`explore`, "conditional exploration"), or DeepSpeed gave verdicts on value probes;
* ``launch``: ``deepspeed.initialize`` on tracing dicts (``extract/launch_witness.py``
  :func:`~dsfields.extract.launch_witness.launch_witness`, run by ``dsfields extract --launch``): :func:`merge` takes
  its report as ``launch``.

:func:`explore` runs before the dict-read fields are built (its reads become ordinary trace
events, with their real defaults); :func:`merge` runs after and adds what only the static
witness knows: static-only keys, ``*`` pattern paths, sections passed on whole, accepted
alternative shapes, per-release choices (each confirmed by building ``DeepSpeedConfig``), and the
witness report stored in ``coverage.witnesses``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsfields.extract.discover import BASE_CONFIG, PROBE_KEY
from dsfields.extract.jsonvalue import to_json
from dsfields.extract.static import MISSING, Choices, StaticRead, StaticReport, Test
from dsfields.extract.static.results import SURE_DICT_KINDS
from dsfields.launch.trace import ReadEvent, join
from dsfields.model.dotted import at_path, delete_in_place, put_in_place, set_path
from dsfields.model.records import Field

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction

NEW_FIELD_KEYS = {
    "witnesses": [],
    "condition": None,
    "conditions": [],
    "pattern": False,
    "alternatives": [],
    "choices_normalized": None,
    "truthiness": False,
    "probes": None,
}
"""Field keys added by format 2, with the value a record gets when no witness says more."""

NEW_SECTION_KEYS = {"passed_to": None, "pattern": False}

_DEFAULT_OPS = ("get_scalar_param", "get_dict_param", "get_list_param", "get", "merged_default", "pop", "setdefault")
_UNFOLLOWED = ("attribute", "call", "class", "unpacked", "merge")
"""PassedWhole kinds whose receiver reads the keys where the scanner does not record them."""


@dataclass
class Exploration:
    """What conditional exploration did: configs run, and which static paths they made the trace read."""

    configs: int = 0
    triggered: dict[str, str] = field(default_factory=dict)
    """path -> the condition text whose probe config made the trace read it"""
    bases: dict[str, dict[str, Any]] = field(default_factory=dict)
    """path -> the probe config under which the trace read it (value probes start from it)"""


def dict_paths(report: StaticReport) -> set[str]:
    """Paths the static witness knows hold a dict: parents of reads, and dicts validated, merged or unpacked whole.

    (A value merely passed on to a callee may be a scalar: ``fp16.loss_scale_window`` is handed to
    ``DynamicLossScaler``.)
    """
    # `for x in d[K]` reads K.* the same way whether K holds a dict or a list (0.16.9's random_ltd_layer_id, a list
    # of layer numbers): a parent only iterated, with nothing read by key below it, is not known to be a dict
    keyed = {r.section for r in report.reads if r.section and r.op != "iterate"}
    keyed |= {r.section.rpartition(".")[0] for r in report.reads if r.section.endswith(".*")}
    out = {r.section for r in report.reads if r.section and (r.op != "iterate" or r.section in keyed)}
    scalar = {r.path for r in report.reads
              if r.default is not MISSING and r.default is not None and not isinstance(r.default, (dict, list))}
    out |= {p.path for p in report.passed_whole if p.kind in SURE_DICT_KINDS and p.path and p.path not in scalar}
    return out


def flat_tests(read: StaticRead) -> list[Test]:
    return [t for c in read.conditions for t in c.tests]


def tests_json(tests: list[Test]) -> list[dict[str, Any]]:
    out = []
    for t in tests:
        value, _ = to_json(t.value)
        out.append({"op": t.op, "path": t.path, "value": value})
    return out


def _wild(path: str) -> bool:
    return "*" in path.split(".")


def satisfying_config(tests: list[Test], sections: set[str], defaults: dict[str, Any],
                      base: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A probe config under which every test holds (as far as a single value can make it hold)."""
    config = copy.deepcopy(base if base is not None else BASE_CONFIG)
    for t in tests:
        if _wild(t.path):
            return None
        value: Any = MISSING
        if t.op == "truthy":
            value = True
        elif t.op == "falsy":
            value = False
        elif t.op in ("present", "is not"):
            if at_path(config, t.path, MISSING) is not MISSING:
                continue
            value = {} if t.path in sections else defaults.get(t.path, True)
            if value is None or value is MISSING:
                value = True
        elif t.op == "absent":
            delete_in_place(config, t.path)
            continue
        elif t.op == "==":
            value = t.value
        elif t.op == "in" and isinstance(t.value, (list, tuple)) and t.value:
            value = t.value[0]
        elif t.op == "isinstance":
            shapes = {"bool": True, "dict": {}, "list": [], "str": "x", "int": 1, "float": 1.0}
            value = shapes.get(str(t.value), MISSING)
        if value is MISSING:
            continue  # `!=`, `not in`, `is None`: the default (absence) usually satisfies them
        if isinstance(value, dict) and isinstance(at_path(config, t.path, MISSING), dict):
            continue
        if put_in_place(config, t.path, copy.deepcopy(value)) is None:
            return None
    return config


def _static_defaults(report: StaticReport) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in report.reads:
        if r.op in _DEFAULT_OPS and r.default is not MISSING and r.path not in out:
            out[r.path] = r.default
    return out


def traced_paths(events: list[ReadEvent]) -> set[str]:
    return {join(e.section, e.key) for e in events if e.key not in ("*", PROBE_KEY)}


def explore(ex: Extraction, report: StaticReport) -> Exploration:
    """Witness 2: drive the trace through each static condition it has not met yet.

    For every conditional static read the trace never saw, build the config that satisfies its
    tests (enabled flags true, ``mode``/``method``/``type`` equal to the compared value, the key
    itself present so ``any(k in d ...)`` guards pass) and trace ``DeepSpeedConfig`` again. The
    reads are appended to the discovery's events, so they become fields with their real defaults.
    """
    d = ex.discovery
    result = Exploration()
    seen = traced_paths(d.events)
    sections = dict_paths(report) | set(d.dict_sections) | set(d.model_sections)
    defaults = _static_defaults(report)
    under_model = sorted(p for p in d.model_sections if p)
    configs: dict[str, tuple[dict[str, Any], list[str], str]] = {}
    for r in report.reads:
        if r.op == "iterate" or _wild(r.path) or r.path in seen or not r.conditions:
            continue
        if any(r.path.startswith(m + ".") for m in under_model):
            continue  # a model validates it: the trace cannot see inside, the model already says
        tests = flat_tests(r)
        config = satisfying_config(tests, sections, defaults)
        if config is None:
            continue
        if r.default is not MISSING and at_path(config, r.path, MISSING) is MISSING and r.path not in sections:
            with_key = put_in_place(copy.deepcopy(config), r.path, copy.deepcopy(r.default))
            config = with_key if with_key is not None else config
        key = json.dumps(config, sort_keys=True, default=repr)
        configs.setdefault(key, (config, [], r.condition or ""))[1].append(r.path)
    for key in sorted(configs):
        config, wanted, condition = configs[key]
        run = ex.prober.run(config)
        result.configs += 1
        events = run.recorder.events
        d.events.extend(events)
        found = traced_paths(events)
        for event in events:  # sections first met here (e.g. sparse_attention per mode)
            path = join(event.section, event.key)
            if event.section and event.section not in d.dict_sections and event.section not in d.model_sections \
                    and not any(event.section.startswith(m + ".") or event.section == m for m in under_model):
                parent, _, last = event.section.rpartition(".")
                reveal = next((e for e in events if e.section == parent and e.key == last), event)
                d.dict_sections[event.section] = reveal
            del path
        for path in sorted(found - seen):  # every key this probe config made DeepSpeedConfig read first
            result.triggered.setdefault(path, condition if path in wanted else "")
            result.bases.setdefault(path, config)
        seen |= found
    return result


# ---------------------------------------------------------------- merge


def _site(r: Any) -> dict[str, Any]:
    return {"file": r.file, "line": r.line, "function": r.function}


def _json_type(value: Any) -> list[str]:
    if isinstance(value, bool):
        return ["boolean"]
    if isinstance(value, int):
        return ["integer"]
    if isinstance(value, float):
        return ["integer", "number"]
    for py, js in ((str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, py):
            return [js]
    return []


def _best_read(reads: list[StaticRead]) -> StaticRead:
    """The read that documents a key: unconditional first, then one with a default, then the first."""
    return sorted(reads, key=lambda r: (bool(r.conditions), r.default is MISSING, r.op not in _DEFAULT_OPS,
                                        len(flat_tests(r)), r.file, r.line, _tie(r)))[0]


def _tie(read: StaticRead) -> tuple[int, str]:
    """The last sort key between reads of one line: the scan reaches a line on several paths (a loop copying the
    user's keys, or not), in an order that follows set iteration, so the reads' own tests decide (fewest first)."""
    tests = tests_json(flat_tests(read))
    return len(tests), json.dumps([read.condition, tests, read.op], sort_keys=True, default=str)


def _condition_of(reads: list[StaticRead]) -> tuple[str | None, list[dict[str, Any]]]:
    """The condition a key is read under, when every static read of it is conditional (the simplest one)."""
    if not reads or any(not r.conditions for r in reads):
        return None, []
    best = sorted(reads, key=lambda r: (len(r.conditions), len(r.condition or ""), r.file, r.line, _tie(r)))[0]
    return best.condition, tests_json(flat_tests(best))


def _ensure_section(ex: Extraction, path: str, site: dict[str, Any] | None, pattern: bool) -> None:
    if path in ex.sections or not path:
        return
    parent = path.rpartition(".")[0]
    _ensure_section(ex, parent, site, pattern or _wild(parent)) if parent else None
    ex.sections[path] = {
        "kind": "dict",
        "model": None,
        "parent": parent,
        "passthrough": False,
        "source": site,
        "description": None,
        "strict": False,
        "unknown_keys": "ignored",
        "passed_to": None,
        "pattern": _wild(path),
    }
    if path not in ex.fields:
        section, _, key = path.rpartition(".")
        ex.fields[path] = _static_record(path, section, key, [], is_section=True, site=site)


def _static_record(path: str, section: str, key: str, reads: list[StaticRead], *, is_section: bool,
                   site: dict[str, Any] | None) -> dict[str, Any]:
    best = _best_read(reads) if reads else None
    default: Any = None
    symbolic = None
    has_default = False
    for r in sorted(reads, key=lambda r: (bool(r.conditions), r.file, r.line)):
        if r.op in _DEFAULT_OPS and r.default is not MISSING:
            default, symbolic = to_json(r.default)
            symbolic = r.default_repr or symbolic
            has_default = True
            break
        if r.op in _DEFAULT_OPS and r.default_repr:
            symbolic, has_default = r.default_repr, True
            break
    if is_section and isinstance(default, dict) and not default:
        default = None
    record = Field.new(**{
        "path": path,
        "section": section,
        "key": key,
        "python_name": None,
        "reader": "dict",
        "type": type(default).__name__ if default is not None else ("dict" if is_section else "any"),
        "json_types": _json_type(default) if default is not None else (["object"] if is_section else []),
        "default": default,
        "default_repr": symbolic,
        "default_factory": None,
        "required": False,
        "read_without_default": not has_default,
        "constraints": {},
        "choices": None,
        "enum": None,
        "deprecated": None,
        "effective_default": None,
        "description": None,
        "source": _site(best) if best else site,
        "constant": None,
        "is_section": is_section,
        "auto": None,
    }).raw
    record.update(copy.deepcopy(NEW_FIELD_KEYS))
    return record


def merge(ex: Extraction, report: StaticReport, explored: Exploration, removed: dict[str, Any],
          launch: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add the static witness to the fields; return the witness report for ``coverage.witnesses``.

    ``launch`` is the launch witness's report (:func:`dsfields.extract.launch_witness.launch_witness`) or None when
    it was not run: fields whose path ``deepspeed.initialize`` was seen to read get the ``launch`` witness.
    """
    launch_paths = set(launch["paths"]) if launch else set()
    by_path: dict[str, list[StaticRead]] = {}
    for r in report.reads:
        if r.op != "iterate":
            by_path.setdefault(r.path, []).append(r)
    static_sections = dict_paths(report)
    model_roots = {p for p, s in ex.sections.items() if s["kind"] == "model" and p}
    traced = set(ex.fields)
    for record in ex.fields.values():
        for k, v in NEW_FIELD_KEYS.items():
            record.setdefault(k, copy.deepcopy(v))
    for section in ex.sections.values():
        for k, v in NEW_SECTION_KEYS.items():
            section.setdefault(k, copy.deepcopy(v))
    disagreements: list[dict[str, Any]] = []
    under_model: list[str] = []
    static_only: list[str] = []
    for path in sorted(by_path):
        reads = by_path[path]
        if path in removed:
            continue
        if path in ex.fields:
            continue
        owner = next((m for m in sorted(model_roots, key=len, reverse=True) if path.startswith(m + ".")), None)
        if owner is not None:
            under_model.append(path)  # the model owns this path: a key it does not declare is not a field
            continue
        section, _, key = path.rpartition(".")
        best = _best_read(reads)
        if section:
            _ensure_section(ex, section, _site(best), _wild(section))
        is_section = path in static_sections or path in ex.sections
        ex.fields[path] = _static_record(path, section, key, reads, is_section=is_section, site=_site(best))
        if is_section:
            _ensure_section(ex, path, _site(best), _wild(path))
        static_only.append(path)
    truth_tested = {t.path for r in report.reads for t in flat_tests(r) if t.op in ("truthy", "falsy")}
    for path, record in ex.fields.items():
        reads = by_path.get(path, [])
        witnesses = set()
        if path in traced:
            witnesses.add("trace")
        if path in explored.triggered:
            witnesses.add("probe")
        if reads:
            witnesses.add("static")
        if path in launch_paths:
            witnesses.add("launch")
        record["witnesses"] = sorted(witnesses) or (["trace"] if path in traced else ["static"])
        record["pattern"] = _wild(path)
        condition, tests = _condition_of(reads)
        if path in explored.triggered and condition is None:
            condition = explored.triggered[path] or None
        record["condition"], record["conditions"] = condition, tests
        record["truthiness"] = record["reader"] == "dict" and path in truth_tested
        if reads and "trace" not in witnesses and record["reader"] == "dict" and path not in explored.triggered \
                and condition is not None:
            disagreements.append({"path": path, "condition": condition, "source": record["source"]})
    _passed_whole(ex, report)
    _alternatives(ex, report)
    _legacy_aliases(ex)
    choice_notes = _choices(ex, report)
    per: dict[str, set[str]] = {}
    for path, record in ex.fields.items():
        for w in record["witnesses"]:
            per.setdefault(w, set()).add(path)
    only = {w: sorted(p for p in ps if ex.fields[p]["witnesses"] == [w]) for w, ps in per.items()}
    return {
        "found": {w: len(ps) for w, ps in sorted(per.items())},
        "only": {w: len(ps) for w, ps in sorted(only.items())},
        "only_static": only.get("static", []),
        "triggered_by_probes": sorted(explored.triggered),
        "exploration_configs": explored.configs,
        "not_triggered": sorted(disagreements, key=lambda d: d["path"]),
        "static_under_model": sorted(under_model),
        "choices": choice_notes,
        "unplaced": sorted({f"{u.file}:{u.line} {u.function}: {u.expr} [{u.reason}]" for u in report.unplaced}),
        "launch": _launch_report(ex, launch, removed) if launch else
        "not run (dsfields extract --launch)",
    }


def _launch_report(ex: Extraction, launch: dict[str, Any], removed: dict[str, Any]) -> dict[str, Any]:
    """What the launch witness ran and found, and where it disagrees with the others.

    ``only``: paths ``deepspeed.initialize`` read that no other witness made a field (nor a removed
    key); ``not_read``: dict-read fields the trace read on the bare base config (no condition, no
    exploration config) in a section the launch read a key of, that no launch read, although every
    launch config builds ``DeepSpeedConfig``.
    """
    paths = set(launch["paths"])
    entered = {p.rpartition(".")[0] for p in paths}
    not_read = sorted(
        path for path, record in ex.fields.items()
        if "trace" in record["witnesses"] and record["reader"] == "dict" and record["condition"] is None
        and path not in ex.bases and path not in paths and record["section"] in entered)
    return {
        "configs": launch["configs"],
        "outcomes": launch["outcomes"],
        "paths": len(paths),
        "only": sorted(p for p in paths if p not in ex.fields and p not in removed),
        "removed_keys_read": sorted(p for p in paths if p in removed),
        "not_read": not_read,
    }


def _passed_whole(ex: Extraction, report: StaticReport) -> None:
    """Sections handed on whole: ``passed_to`` names the receivers, ``unknown_keys`` becomes ``"passed"``."""
    receivers: dict[str, list[dict[str, Any]]] = {}
    for p in report.passed_whole:
        if p.kind not in _UNFOLLOWED or p.path not in ex.sections:
            continue
        if ex.sections[p.path]["kind"] != "dict":
            continue
        entry = {"to": p.to, "kind": p.kind, "file": p.file, "line": p.line}
        if entry not in receivers.setdefault(p.path, []):
            receivers[p.path].append(entry)
    iterated: dict[str, list[dict[str, Any]]] = {}
    for r in report.reads:
        # `for key, val in section.items(): output[key] = val` (get_random_ltd, get_curriculum_learning): every key
        # of the section is copied into DeepSpeed's own config, where the engine reads the ones it knows. They are
        # not "silently ignored": removing one (random_ltd_layer_num) breaks the run (issue 25).
        owner = r.path.rpartition(".")[0]
        if r.op != "iterate" or r.key != "*" or owner not in ex.sections or ex.sections[owner]["kind"] != "dict":
            continue
        entry = {"to": "iteration over the whole dict", "kind": "iterate", "file": r.file, "line": r.line}
        if entry not in iterated.setdefault(owner, []):
            iterated[owner].append(entry)
    for owner, entries in iterated.items():
        if owner not in receivers and not ex.sections[owner].get("passthrough"):
            receivers[owner] = entries  # a section merged or handed on already names its receivers
    for path, section in ex.sections.items():
        if section.get("passthrough") and path not in receivers:
            site = section.get("source") or {}
            receivers[path] = [{"to": "iteration over the whole dict", "kind": "iterate",
                                "file": site.get("file"), "line": site.get("line")}]
    for path, entries in receivers.items():
        section = ex.sections[path]
        section["passed_to"] = sorted(entries, key=lambda e: (e["file"] or "", e["line"] or 0, e["to"]))
        section["unknown_keys"] = "passed"


def _legacy_aliases(ex: Extraction) -> None:
    """A section read only when a sibling section is absent, into the same model, is that section's legacy
    spelling: ``bfloat16`` (``get_bfloat16_config`` reads it only when ``bf16`` is None). It gets a structured
    deprecation (``new_param``: the sibling), so ``check`` warns and ``migrate`` renames it (issue 25)."""
    for path, record in ex.fields.items():
        conditions = record.get("conditions") or []
        section = ex.sections.get(path)
        if not record["is_section"] or record.get("deprecated") or section is None or len(conditions) != 1:
            continue
        test = conditions[0]
        if not (test["op"] == "is" and test["value"] is None) and test["op"] != "absent":
            continue
        other = ex.sections.get(test["path"])
        owner = test["path"].rpartition(".")[0]
        if other is None or owner != record["section"] or not section.get("model") or (
                section.get("model") != other.get("model")):
            continue
        new = test["path"].rpartition(".")[2]
        record["deprecated"] = {
            "new_param": new,
            "deprecated_msg": f'legacy spelling: DeepSpeed reads "{record["key"]}" only when "{new}" is absent, '
                              f"into the same {section['model'].rpartition('.')[2]}",
            "set_new_param": True,  # its value is used as the replacement's, unconverted
            "converts_value": False,
        }


def _alternatives(ex: Extraction, report: StaticReport) -> None:
    """A section DeepSpeed also accepts in another JSON shape (``"zero_optimization": true``), confirmed by running."""
    names = {"bool": "boolean", "int": "integer", "float": "number", "str": "string", "list": "array"}
    seen: set[tuple[str, str]] = set()
    for r in report.reads:
        for t in flat_tests(r):
            if t.op != "isinstance" or str(t.value) not in names or t.path not in ex.fields:
                continue
            if (t.path, str(t.value)) in seen:
                continue
            seen.add((t.path, str(t.value)))
            json_type = names[str(t.value)]
            samples = {"boolean": [True, False], "integer": [1], "number": [1.0], "string": ["x"], "array": [[]]}
            sample = samples[json_type]
            verdicts = []
            for value in sample:
                section, _, key = t.path.rpartition(".")
                run = ex.prober.run(set_path(BASE_CONFIG, section, key, value), trace=False)
                verdicts.append((value, run.error))
            if any(err is not None for _, err in verdicts):
                continue
            given = " and ".join(json.dumps(v) for v, _ in verdicts)
            ex.fields[t.path]["alternatives"].append({
                "json_type": json_type,
                "means": f"{given} accepted by DeepSpeedConfig: read by {r.function} instead of the section's keys",
                "source": _site(r),
            })


def _choices(ex: Extraction, report: StaticReport) -> list[str]:
    """Per-release choices of keys checked against a list in code, each confirmed by building DeepSpeedConfig."""
    from dsfields.extract.requirements import satisfying_base  # it imports the probes, which import this module

    notes: list[str] = []
    grouped: dict[str, list[Choices]] = {}
    for c in report.choices:
        grouped.setdefault(c.path, []).append(c)
    for path, entries in sorted(grouped.items()):
        record = ex.fields.get(path)
        if record is None or record["is_section"] or _wild(path):
            continue
        if record["reader"] == "pydantic" and record["choices"]:
            continue
        validated = [c for c in entries if c.raises]
        if not validated:
            continue
        # The longest list first: an `if method == "snip_momentum": ... raise` elsewhere is one branch, not the
        # list the config's own assert checks (0.16.9 sparse pruning: [l1, topk, snip_momentum]).
        chosen = max(validated, key=lambda c: len(c.values))
        values = [v for v in chosen.values if not isinstance(v, bool) or record["reader"] != "dict"]
        if not values:
            continue
        base = _base_for(ex, path)
        section, _, key = path.rpartition(".")
        good = ex.prober.run(set_path(base, section, key, values[0]), trace=False)
        if good.error is not None:
            # Refused for want of another key (pruning ``method`` without ``different_groups``)? Confirm the
            # list on a config that gives it, as DeepSpeed's users do.
            satisfied = satisfying_base(ex, base, section, key, values[0])
            if satisfied is not None:
                base = satisfied
                good = ex.prober.run(set_path(base, section, key, values[0]), trace=False)
        bad_value = "__dsfields_not_a_choice__"
        bad = ex.prober.run(set_path(base, section, key, bad_value), trace=False)
        other = [] if isinstance(values[0], str) else "x"  # another JSON type: a closed list rejects it too
        odd = ex.prober.run(set_path(base, section, key, other), trace=False)
        if good.error is None and bad.error is not None and odd.error is not None:
            record["choices"] = [to_json(v)[0] for v in values]
            record["choices_normalized"] = chosen.normalized
            if chosen.normalized:
                folded = values[0].swapcase() if isinstance(values[0], str) else values[0]
                again = ex.prober.run(set_path(base, section, key, folded), trace=False)
                if again.error is not None:
                    record["choices_normalized"] = None
            notes.append(f"{path}: {record['choices']} confirmed ({chosen.file}:{chosen.line})")
        else:
            why = ("allowed value rejected" if good.error is not None else "disallowed value accepted"
                   if bad.error is None else f"a {type(other).__name__} is accepted too")
            where = f"{chosen.file}:{chosen.line}"
            notes.append(f"{path}: {list(values)} not confirmed by DeepSpeedConfig ({why}; {where})")
    return notes


def _base_for(ex: Extraction, path: str) -> dict[str, Any]:
    """The config a probe of ``path`` starts from: where exploration triggered it, else the bare base."""
    bases = getattr(ex, "bases", {})
    if path in bases:
        return bases[path]
    return BASE_CONFIG
