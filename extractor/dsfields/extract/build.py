"""Assemble the snapshot of the installed DeepSpeed: runtime discovery + model metadata + source facts.

This is the only place that knows both halves: :mod:`discover` says *what* DeepSpeedConfig reads and
*where*, :mod:`models` says what each pydantic field declares, :mod:`source` says where it is
written and what its docstring says. The result is plain data in the documented snapshot format.
"""

from __future__ import annotations

import enum
import importlib
import json
import logging
import platform
import sys
from pathlib import Path
from typing import Any

from dsfields import __version__
from dsfields.extract.discover import BASE_CONFIG, PROBE_KEY, Prober, all_model_classes, discover
from dsfields.extract.extraction import Extraction, _state, with_section
from dsfields.extract.jsonvalue import stable_repr, to_json
from dsfields.extract.models import (
    DEPRECATION_KEYS,
    ModelInfo,
    describe_model,
    enums_in,
    json_types,
    literal_choices,
    nested_models,
    type_repr,
)
from dsfields.extract.source import Located, SourceIndex
from dsfields.extract.state import instances_of
from dsfields.launch.trace import ReadEvent, join
from dsfields.model.dotted import set_path
from dsfields.model.jsontypes import types_of
from dsfields.model.records import Field
from dsfields.model.store import FORMAT_VERSION

log = logging.getLogger(__name__)


def extract_installed(static: Any = None, launch: Any = None) -> dict[str, Any]:
    """Extract the snapshot of the DeepSpeed importable in this interpreter.

    ``static`` is the static witness's report, or a handle on it (:func:`start_static`, run on the
    other core while DeepSpeed imports); None scans here.
    """
    import deepspeed
    import deepspeed.runtime.config as config_module

    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    ds_logger = getattr(getattr(deepspeed, "utils", None), "logger", None)
    if ds_logger is not None:
        ds_logger.setLevel(logging.ERROR)
    from dsfields.extract.optim import with_optimizers  # + schedulers
    return with_optimizers(extract(config_module, version=str(deepspeed.__version__), static=static, launch=launch))


def start_static(package: str = "deepspeed") -> Any:
    """Start the static witness on the other core before DeepSpeed is imported; a handle on its report.

    The scan reads source text only, so it runs in a forked child (:class:`~dsfields.launch.forked.Forked`)
    while this process imports torch. Returns None when the package cannot be located or this process
    cannot fork (the scan then runs in-process).
    """
    import importlib.util

    from dsfields.launch.forked import Forked, can_fork

    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations or not can_fork():
        return None
    from dsfields.extract.static import static_report

    return Forked(lambda: static_report(Path(locations[0])))


def start_launch(rules: bool = False) -> Any:
    """Start the launch witness (``dsfields extract --launch``); a future of its report.

    Its launches run in a worker process (:class:`dsfields.launch.client.LaunchClient`), driven from a
    thread here, so the worker imports DeepSpeed and launches while this process extracts. ``rules``: the
    same worker then confirms the launch rules (its report's ``launch_json``).
    """
    from concurrent.futures import ThreadPoolExecutor

    from dsfields.extract.launch_witness import launch_witness, witness_env
    from dsfields.launch.client import LaunchClient
    from dsfields.launch.worker import ForkedWorker

    env = witness_env()
    # Forked after torch and transformers are imported here, before DeepSpeed (see ForkedWorker): one import of
    # them for both processes. Where that cannot be, the worker is its own process, as before.
    client = LaunchClient(env=env, forked=ForkedWorker.start(env))

    def witness() -> dict[str, Any]:
        with client:
            return launch_witness(client, rules=rules)

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsfields-launch")
    future = pool.submit(witness)
    pool.shutdown(wait=False)
    return future


def _static_witness(static: Any, package_dir: Path) -> Any:
    from dsfields.extract.static import StaticReport, static_report

    if isinstance(static, StaticReport):
        return static
    if static is not None:
        try:
            return static.result()
        except Exception as exc:  # the forked scan failed: scan here, so the cause (if any) is ours to see
            log.debug("static witness in a forked child failed: %s", exc)
    return static_report(package_dir)


def extract(config_module: Any, version: str, package: str = "deepspeed", static: Any = None,
            launch: Any = None) -> dict[str, Any]:
    """Extract from ``config_module.DeepSpeedConfig`` of ``package`` (DeepSpeed, or a test fixture imitating it).

    ``static``: the static witness's report (or a handle on it); ``launch``: the launch witness's report
    (:func:`dsfields.extract.launch_witness.launch_witness`, or a future of it), None when it is not run.
    """
    from dsfields.extract import (
        absent,
        built_choices,
        comparisons,
        group_requirements,
        probes,
        reconcile,
        requirements,
        section_requirements,
        validators,
        value_requirements,
    )

    root_module = sys.modules[package]
    package_root = Path(root_module.__file__).resolve().parent.parent
    prober = Prober(config_module.DeepSpeedConfig, package)
    discovery = discover(prober)
    ex = Extraction(package, config_module, prober, SourceIndex(package_root), discovery)
    report = _static_witness(static, Path(root_module.__file__).resolve().parent)
    explored = reconcile.explore(ex, report)
    ex.bases = explored.bases
    _dict_fields(ex)
    for path, cls in sorted(discovery.model_sections.items()):
        _model_section(ex, path, cls, parent=path.rpartition(".")[0])
    removed = _removed_keys(ex)
    for path in removed:
        # DeepSpeed only looks at these to reject them: they are removed keys, not fields.
        ex.fields.pop(path, None)
    if launch is not None and not isinstance(launch, dict):
        launch = launch.result()  # the launch worker ran beside this extraction
    ex.witnesses = reconcile.merge(ex, report, explored, removed, launch)
    probed = probes.value_probes_beside(ex)  # on the other core, now free: the static scan has ended
    _effective_defaults(ex)
    _auto_behaviour(ex)
    absent.when_absent(ex)
    ex.witnesses["probe_runs"] = probed()
    learned = requirements.learn_requirements(ex)  # after the probes: it re-probes the keys they found refused
    learned += value_requirements.learn_value_requirements(ex)  # switches another key's value lifts (ZeRO stage)
    learned += group_requirements.learn_group_requirements(ex)  # keys each entry of a user-named group must give
    learned += section_requirements.learn_section_requirements(ex)  # keys a present section must give
    learned += comparisons.learn_comparisons(ex)  # schedule_offset <= schedule_offset_end
    if learned:
        ex.witnesses["requirements"] = learned
    ex.witnesses["choices"] = sorted([*ex.witnesses.get("choices", []), *validators.validator_choices(ex),
                                      *built_choices.built_choices(ex, report)])
    return {
        "format_version": FORMAT_VERSION,
        "generated_by": "dsfields extract",
        "deepspeed_version": version.strip(),
        "environment": _environment(package),
        "sections": ex.sections,
        "fields": ex.fields,
        "enums": ex.enums,
        "removed": removed,
        "coverage": _coverage(ex, removed),
    }


def _environment(package: str) -> dict[str, str]:
    from importlib import metadata

    import pydantic

    try:  # the installed distribution, not sys.modules: whether torch is imported yet depends on the caller
        torch = metadata.version("torch").split("+")[0]
    except metadata.PackageNotFoundError:
        torch = "none"
    accelerator = "unknown"
    try:  # which accelerator the release chose shapes a few checks (e.g. aio.use_gds needs CUDA)
        accelerator = str(importlib.import_module(f"{package}.accelerator").get_accelerator()._name)
    except Exception:
        pass
    return {
        "accelerator": accelerator,
        "dsfields": __version__,
        "pydantic": str(pydantic.VERSION),
        "python": platform.python_version().rsplit(".", 1)[0],
        "torch": torch,
    }


# ---------------------------------------------------------------- dict-read sections


def _constant_for(ex: Extraction, event: ReadEvent) -> tuple[Located | None, str | None, Located | None]:
    """The constant naming ``event.key`` (and its ``*_DEFAULT`` sibling), found where it is assigned."""
    if not ex.modules_by_file:
        for name, mod in sorted(sys.modules.items()):
            filename = getattr(mod, "__file__", None)
            if name.startswith(ex.package) and filename:
                ex.modules_by_file[filename] = mod
                if "constants" in name:
                    ex.constant_files.append(filename)
    module = ex.modules_by_file.get(event.site[0])
    if module is None:
        return None, None, None
    names = sorted(n for n, v in vars(module).items() if n.isupper() and v == event.key and isinstance(v, str))
    candidates = [module.__file__, *ex.constant_files]
    for name in names:
        for filename in candidates:
            where = ex.source.constant(filename, name)
            if where is not None:
                default = ex.source.constant(filename, f"{name}_DEFAULT")
                return where, name, default
    return None, None, None


def _dict_fields(ex: Extraction) -> None:
    d = ex.discovery
    sections = set(d.dict_sections) | set(d.model_sections)
    by_path: dict[str, list[ReadEvent]] = {}
    for event in d.events:
        if event.key in ("*", PROBE_KEY) or event.section not in d.dict_sections:
            continue
        by_path.setdefault(join(event.section, event.key), []).append(event)
    for path, first_event in sorted(d.dict_sections.items()):
        parent = path.rpartition(".")[0] if path else None
        ex.sections[path] = {
            "kind": "dict",
            "model": None,
            "parent": parent,
            "passthrough": path in d.passthrough,
            "source": _site(ex, first_event) if path else None,
            "description": None,
            "strict": False,
            "unknown_keys": "ignored",
        }
    for path, events in sorted(by_path.items()):
        first = events[0]
        with_default = [e for e in events if e.has_default]
        default_event = with_default[0] if with_default else None
        default, symbolic = to_json(default_event.default) if default_event else (None, None)
        if path in sections and isinstance(default, dict) and not default:
            default = None  # `d.get("section", {})`: the {} only stands for "absent"
        const, const_name, const_default = _constant_for(ex, first)
        distinct_defaults = sorted({stable_repr(e.default) for e in with_default})
        record: dict[str, Any] = Field.new(**{
            "path": path,
            "section": first.section,
            "key": first.key,
            "python_name": None,
            "reader": "dict",
            "type": _value_type(default_event.default) if default_event else "any",
            "json_types": types_of(to_json(default_event.default)[0]) if default_event else [],
            "default": default,
            "default_repr": symbolic,
            "default_factory": None,
            "required": False,
            "read_without_default": default_event is None,
            "constraints": {},
            "choices": None,
            "enum": None,
            "deprecated": None,
            "effective_default": None,
            "description": const.docstring if const else None,
            "source": _site(ex, default_event or first),
            "constant": _constant_record(const, const_name, const_default),
            "is_section": path in sections,
            "auto": None,
        }).raw
        if len(distinct_defaults) > 1:
            # One entry per (default, read site): the same read recurs in every probe run.
            others: dict[str, dict[str, Any]] = {}
            first_repr = stable_repr(default_event.default if default_event else None)
            for e in with_default[1:]:
                if stable_repr(e.default) != first_repr:
                    entry = {"default": to_json(e.default)[0], "source": _site(ex, e)}
                    others.setdefault(json.dumps(entry, sort_keys=True, default=str), entry)
            record["other_defaults"] = [others[k] for k in sorted(others)]
        ex.fields[path] = record


def _constant_record(const: Located | None, name: str | None, default: Located | None) -> dict[str, Any] | None:
    if const is None or name is None:
        return None
    record: dict[str, Any] = {"name": name, "file": const.file, "line": const.line}
    if default is not None:
        record |= {"default_name": f"{name}_DEFAULT", "default_line": default.line}
    return record


def _site(ex: Extraction, event: ReadEvent) -> dict[str, Any]:
    return {"file": ex.source.relative(event.site[0]), "line": event.site[1], "function": event.site[2]}


def _value_type(value: Any) -> str:
    if value is None:
        return "any"
    if isinstance(value, enum.Enum):
        return type(value).__name__
    return type(value).__name__ if type(value).__module__ == "builtins" else stable_repr(type(value))


# ---------------------------------------------------------------- pydantic sections


def _model_section(ex: Extraction, path: str, cls: type, parent: str, by_name: bool = False) -> None:
    """``by_name``: key each field by its attribute name, its alias kept in ``aliases`` (the inference
    document: ``init_inference`` is called with attribute names, ``tensor_parallel`` rather than ``tp``)."""
    info = describe_model(cls)
    ex.placed_models.add(cls)
    ex.model_classes[path] = cls
    where, attrs = ex.source.of_class(cls)
    ex.sections[path] = {
        "kind": "model",
        "model": f"{cls.__module__}.{cls.__qualname__}",
        "parent": parent if path else None,
        "passthrough": False,
        "source": where.as_dict() if where else None,
        "description": where.docstring if where else None,
        "strict": info.strict,
        "unknown_keys": {"forbid": "error", "allow": "kept"}.get(info.extra_mode, "ignored"),
    }
    for f in info.fields:
        _model_field(ex, path, info, f, attrs.get(f.name), by_name)


def _model_field(ex: Extraction, section: str, info: ModelInfo, f: Any, where: Located | None,
                 by_name: bool = False) -> None:
    key = f.name if by_name else f.key
    path = join(section, key)
    factory = f.default_factory
    default_value = factory() if factory is not None else f.default
    default, symbolic = to_json(default_value)
    for enum_cls in enums_in(f.annotation):
        _enum(ex, enum_cls)
    choices = literal_choices(f.annotation)
    enum_names = [e.__name__ for e in enums_in(f.annotation)]
    if enum_names:
        choices = [to_json(m.value)[0] for e in enums_in(f.annotation) for m in e]
    deprecated = None
    if f.extra.get("deprecated"):
        deprecated = {k: to_json(f.extra[k])[0] for k in DEPRECATION_KEYS if k in f.extra and k != "deprecated"}
        deprecated["converts_value"] = "new_param_fn" in f.extra
    children = nested_models(f.annotation)
    ex.fields[path] = Field.new(**{
        "path": path,
        "section": section,
        "key": key,
        "python_name": f.name,
        "reader": "pydantic",
        "type": type_repr(f.annotation),
        "json_types": json_types(f.annotation),
        "default": None if f.required else default,
        "default_repr": symbolic,
        "default_factory": stable_repr(factory) if factory is not None else None,
        "required": f.required,
        "read_without_default": False,
        "constraints": dict(sorted(f.constraints.items())),
        "choices": _unique(choices) or None,
        "enum": enum_names[0] if enum_names else None,
        "deprecated": deprecated,
        "effective_default": None,
        "description": (where.docstring if where else None) or f.description,
        "source": where.as_dict() if where else None,
        "constant": None,
        "is_section": bool(children),
        "auto": None,
    }).raw
    if by_name:
        ex.fields[path]["aliases"] = [f.key] if f.key != f.name else []
    if len(children) == 1 and path not in ex.sections:
        _model_section(ex, path, children[0], parent=section, by_name=by_name)


def _unique(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def _enum(ex: Extraction, cls: type[enum.Enum]) -> None:
    if cls.__name__ in ex.enums:
        return
    where, _ = ex.source.of_class(cls)
    ex.enums[cls.__name__] = {
        "name": cls.__name__,
        "module": cls.__module__,
        "source": where.as_dict() if where else None,
        "description": where.docstring if where else None,
        # Aliases (e.g. ZeroStageEnum.max_stage = 3) are members too: __members__ keeps them.
        "members": [{"name": n, "value": to_json(m.value)[0]} for n, m in cls.__members__.items()],
    }


# ---------------------------------------------------------------- behaviour probes


def _effective_defaults(ex: Extraction) -> None:
    """Where a validator replaces the declared default (e.g. ``overlap_comm``), record what DeepSpeed uses."""
    roots = {p: c for p, c in ex.discovery.model_sections.items()}
    variants: dict[str, dict[str, Any]] = {"": BASE_CONFIG}
    # The ZeRO section is the root model with an enumerated `stage` field; its validators resolve
    # several `None` defaults per stage, so each stage DeepSpeed accepts is built once.
    zero_root = next(
        (p for p in sorted(roots) if (ex.fields.get(f"{p}.stage") or {}).get("choices") and "." not in p), None
    )
    if zero_root:
        for stage in _unique(ex.fields[f"{zero_root}.stage"]["choices"]):
            variants[str(stage)] = set_path(BASE_CONFIG, "", zero_root, {"stage": stage})
    results: dict[str, Any] = {}
    for label, config in variants.items():
        run = ex.prober.run(config, trace=False)
        if run.error is None:
            results[label] = run.config
    for path, record in ex.fields.items():
        if record["reader"] != "pydantic" or record["is_section"] or (zero_root and path == f"{zero_root}.stage"):
            continue
        root = next((p for p in roots if path.startswith(p + ".")), None)
        if root is None:
            continue
        per: dict[str, Any] = {}
        for label, cfg in results.items():
            if zero_root and root == zero_root and label == "":
                continue
            if (not zero_root or root != zero_root) and label != "":
                continue
            value = _value_at(cfg, roots[root], path[len(root) + 1 :], ex)
            if value is not _NOTFOUND:
                per[label] = to_json(value)[0]
        if per and any(v != record["default"] for v in per.values()):
            record["effective_default"] = per if (zero_root and root == zero_root) else {"any": per.get("")}


_NOTFOUND = object()


def _value_at(cfg: Any, root_cls: type, rest: str, ex: Extraction) -> Any:
    memo = (id(cfg), root_cls)
    if memo not in ex.instance_memo:  # one object-graph walk per (parsed config, root model)
        ex.instance_memo[memo] = instances_of(cfg, root_cls, ex.package)
    found = ex.instance_memo[memo]
    if len(found) != 1:
        return _NOTFOUND
    obj = found[0]
    for key in rest.split("."):
        if obj is None:
            return _NOTFOUND
        fields = getattr(type(obj), "model_fields", None) or getattr(type(obj), "__fields__", {})
        name = next((n for n, f in fields.items() if key in (n, getattr(f, "alias", None))), None)
        if name is None:
            return _NOTFOUND
        obj = getattr(obj, name, None)
    return obj


def _auto_behaviour(ex: Extraction) -> None:
    """What DeepSpeed alone does with ``"auto"`` for each key: rejects it, or parses it to the default.

    A section's keys are first tried all at once (pydantic sections drop every "auto", so one run
    usually settles the whole section); only when that batch fails or changes something is each
    key tried alone.
    """
    by_section: dict[str, list[dict[str, Any]]] = {}
    alone: list[dict[str, Any]] = []
    for record in ex.fields.values():
        if record["is_section"] or record["required"] or record.get("pattern") or "trace" not in record["witnesses"]:
            continue  # DeepSpeedConfig never reads a static-only key: "auto" there is the reader's business
        if record["path"] in ex.bases:
            alone.append(record)  # read only under a condition: tried from the config that meets it
        else:
            by_section.setdefault(record["section"], []).append(record)
    for record in alone:
        base = ex.bases[record["path"]]
        reference, _ = _state(ex, base)
        state, error = _state(ex, set_path(base, record["section"], record["key"], "auto"))
        if error is not None:
            record["auto"] = {"accepted": False, "becomes": None, "error": error.splitlines()[0][:300]}
        else:
            same = reference is not None and state == reference
            record["auto"] = {"accepted": True, "becomes": "default" if same else "kept", "error": None}
    for section, records in sorted(by_section.items()):
        base = with_section(BASE_CONFIG, section)
        reference, _ = _state(ex, base)
        batch = base
        for record in records:
            batch = set_path(batch, section, record["key"], "auto")
        state, error = _state(ex, batch)
        if reference is not None and error is None and state == reference:
            for record in records:
                record["auto"] = {"accepted": True, "becomes": "default", "error": None}
            continue
        for record in records:
            state, error = _state(ex, set_path(base, section, record["key"], "auto"))
            if error is not None:
                record["auto"] = {"accepted": False, "becomes": None, "error": error.splitlines()[0][:300]}
            else:
                same = reference is not None and state == reference
                record["auto"] = {"accepted": True, "becomes": "default" if same else "kept", "error": None}


def _removed_keys(ex: Extraction) -> dict[str, dict[str, Any]]:
    """Keys DeepSpeed rejects with a message, placed by making DeepSpeed reject them."""
    ds_config = ex.config_module
    removed: dict[str, dict[str, Any]] = {}
    tables = {n: v for n, v in vars(ds_config).items() if "REMOVED" in n.upper() and isinstance(v, dict)}
    paths = [""] + sorted(ex.sections)
    for table_name, table in sorted(tables.items()):
        where = ex.source.constant(ds_config.__file__, table_name)
        for key, message in sorted(table.items()):
            if not isinstance(key, str) or not isinstance(message, str):
                continue
            for section in paths:
                run = ex.prober.run(set_path(with_section(BASE_CONFIG, section), section, key, {}), trace=False)
                if run.error is not None and message in str(run.error):
                    path = join(section, key)
                    removed[path] = {
                        "path": path,
                        "section": section,
                        "key": key,
                        "message": message,
                        "source": {"file": where.file, "line": where.line, "table": table_name} if where else None,
                    }
                    break
            else:
                ex.notes.append(f"removed key {key!r} from {table_name} not rejected at any known section")
    return removed


# ---------------------------------------------------------------- coverage


def _coverage(ex: Extraction, removed: dict[str, Any]) -> dict[str, Any]:
    ds_models = [
        c for c in all_model_classes() if c.__module__.startswith(ex.package) and c.__name__ != "DeepSpeedConfigModel"
    ]
    unplaced: dict[str, str] = {}
    for cls in ds_models:
        if cls in ex.placed_models:
            continue
        wrapped = [m for f in describe_model(cls).fields for m in nested_models(f.annotation)]
        reason = (
            "container whose fields are placed as their own sections"
            if wrapped and all(m in ex.placed_models for m in wrapped)
            else "not built by DeepSpeedConfig from ds_config (no path rejects a probe key with it)"
        )
        unplaced[f"{cls.__module__}.{cls.__qualname__}"] = reason
    keys_read = {r["key"] for r in ex.fields.values()} | {r["key"] for r in removed.values()}
    unattributed: list[str] = []
    for name, module in sorted(list(sys.modules.items())):
        if not name.startswith(ex.package) or not name.endswith("constants"):
            continue
        for const in sorted(vars(module)):
            if not const.endswith("_DEFAULT") or not const.isupper():
                continue
            key = getattr(module, const[: -len("_DEFAULT")], None)
            if isinstance(key, str) and key not in keys_read:
                unattributed.append(f"{name}.{const} ({key!r})")
    per_section: dict[str, int] = {}
    for record in ex.fields.values():
        per_section[record["section"]] = per_section.get(record["section"], 0) + 1
    return {
        "fields": len(ex.fields),
        "sections": len(ex.sections),
        "per_section": dict(sorted(per_section.items())),
        "models_not_placed": dict(sorted(unplaced.items())),
        "defaults_not_attributed": unattributed,
        "unresolved_models": dict(sorted(ex.discovery.unresolved_models.items())),
        "probe_runs": ex.prober.runs,
        "notes": sorted(ex.notes),
        "witnesses": ex.witnesses,
    }
