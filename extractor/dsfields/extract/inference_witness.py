"""The inference document: ``DeepSpeedInferenceConfig``, what ``deepspeed.init_inference`` validates, per release.

``init_inference(model, config=None, **kwargs)`` merges ``config`` and ``kwargs`` into one dict and builds
``DeepSpeedInferenceConfig(**config_dict)``; every key is validated by that pydantic model (and its nested
models), so the model is the document. It is described with the training config's machinery
(:func:`dsfields.extract.build._model_section`), keyed by attribute names (``tensor_parallel.tp_size``: what
``init_inference`` is called with and what the deprecations name) with pydantic's aliases (``tp``,
``kernel_inject``) kept beside them. Then the witnesses:

- value probes: :data:`dsfields.extract.probes.PROBES` plus every string spelling found in an enum of the
  config module (``DtypeEnum``'s ``"fp16"``, ``"half"``, ...), each one ``DeepSpeedInferenceConfig(**{key: value})``;
  a field whose declared type says nothing (``dtype: torch.dtype`` with a ``mode="before"`` validator) gets the
  JSON types and string choices the model accepted;
- the static witness: attribute reads of the built config (``config.tensor_parallel.tp_size``,
  ``self._config.dtype``) in ``deepspeed/inference/`` and ``deepspeed/module_inject/``, placed on the fields.

``python -m dsfields.extract.inference_witness [--out ROOT]`` writes ``ROOT/<version>/inference.json`` for the
installed release, importing ``deepspeed.inference.config`` only; ``--release V ...`` runs that in each
release's runtime (:func:`dsfields.extract.releases.run_in_release`), one release at a time.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import enum
import io
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from dsfields.model.errors import ExtractionError, standalone

INFERENCE_FILE = "inference.json"
MODULE = "deepspeed.inference.config"
MODEL = "DeepSpeedInferenceConfig"
STATIC_DIRS = ("inference", "module_inject")
"""Folders of the ``deepspeed`` package whose reads of the built config the static witness scans."""
CONFIG_NAMES = ("config", "_config", "ds_config", "inference_config", "ds_inference_config")
"""Names (bare, or ``self.<name>``) under which those folders hold the built ``DeepSpeedInferenceConfig``."""
NONSENSE = "__dsfields_probe__"
"""A string no validator accepts: a field that rejects it while accepting enum spellings has choices."""
RELEASE_TIMEOUT = 900.0

log = logging.getLogger(__name__)


def _probe_values(module: Any) -> list[tuple[str, Any]]:
    """The fixed probes, then every string in an enum's values defined in the config module (sorted)."""
    from dsfields.extract.probes import PROBES

    strings: set[str] = set()
    for obj in vars(module).values():
        if isinstance(obj, type) and issubclass(obj, enum.Enum) and obj.__module__ == module.__name__:
            for member in obj:
                values = member.value if isinstance(member.value, tuple) else (member.value,)
                strings.update(v for v in values if isinstance(v, str))
            # A multi-value enum (0.8-0.14 DtypeEnum's __new__): its other spellings are lookup keys only.
            strings.update(k for k in getattr(obj, "_value2member_map_", {}) if isinstance(k, str))
    seen = {pid for pid, _ in PROBES}
    extra = [(json.dumps(s), s) for s in sorted(strings) if json.dumps(s) not in seen]
    return [*PROBES, *extra, (json.dumps(NONSENSE), NONSENSE)]


def _run(cls: type, config: dict[str, Any]) -> BaseException | None:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            cls(**copy.deepcopy(config))
    except Exception as exc:  # pydantic errors, DeepSpeed's asserts and ValueErrors: all are verdicts
        return exc
    return None


def _probe(ex: Any, cls: type, values: list[tuple[str, Any]]) -> int:
    """Fill ``probes`` of every leaf field; widen ``json_types``/``choices`` of fields whose type says nothing."""
    from dsfields.extract.probes import PROBES, accepted_types, error_line
    from dsfields.model.dotted import set_path

    runs = 0
    for _, record in sorted(ex.fields.items()):
        if record["is_section"]:
            continue
        section_cls = ex.model_classes.get(record["section"])
        verdicts: dict[str, dict[str, Any]] = {}
        # The enum spellings only where a string may be meant: a declared string, an enum, or a type that says
        # nothing (dtype). Elsewhere the fixed probes' strings decide (~2/3 fewer model builds per release).
        wants_strings = not record["json_types"] or "string" in record["json_types"] or bool(record["choices"])
        for pid, value in values if wants_strings else values[:len(PROBES)]:
            error = _run(cls, set_path({}, record["section"], record["key"], copy.deepcopy(value)))
            runs += 1
            verdicts[pid] = ({"ok": False, "error": error_line(error)} if error is not None
                             else _stored(section_cls, record["python_name"], value))
        record["probes"] = verdicts
        record["auto"] = _auto(record, verdicts['"auto"'])
        strings = [v for p, v in verdicts.items() if p.startswith('"') and p != '"auto"']
        if record["json_types"] and "string" not in record["json_types"] and all(v.get("ok") for v in strings):
            # A mode="before" validator takes any string (zero.leaf_module.classes: a name becomes [name]).
            record["json_types"] = sorted({*record["json_types"], "string"})
        if record["json_types"] and "null" not in record["json_types"] and verdicts["null"].get("ok"):
            # pydantic 1 makes a field whose default is None optional without saying so in its annotation.
            record["json_types"] = sorted({*record["json_types"], "null"})
            if not record["type"].startswith("Optional["):  # spelt as pydantic 2 releases spell the same field
                record["type"] = f"Optional[{record['type']}]"
        if record["choices"] and not all(isinstance(c, (str, int, float, bool)) for c in record["choices"]):
            # An enum whose members are tuples (DtypeEnum: (torch.float16, "fp16", "half", ...)): what a user
            # writes are the spellings a validator maps to a member, found by the probes below.
            record["choices"], record["json_types"] = None, []
        if record["json_types"] or record["choices"]:
            continue  # the declared type or enum stands; the probes confirm it (tests/test_inference_deepspeed.py)
        record["json_types"] = accepted_types({p: v for p, v in verdicts.items() if p in dict(PROBES)})
        accepted = [v for p, v in values[len(PROBES):] if p in verdicts and verdicts[p].get("ok") and v != NONSENSE]
        if accepted and not verdicts.get(json.dumps(NONSENSE), {}).get("ok"):
            record["choices"] = sorted(accepted)
            record["json_types"] = sorted(set(record["json_types"]) | {"string"})
    return runs


def _stored(cls: type | None, name: str, value: Any) -> dict[str, Any]:
    """An accepted probe: what the section's model stores (``as``) where that is not the JSON given; a value
    JSON cannot hold (``torch.float16``) is given by its symbolic spelling."""
    import json

    from dsfields.extract.jsonvalue import to_json

    if cls is None:
        return {"ok": True}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            instance = cls(**{name: copy.deepcopy(value)})
    except Exception:  # the section alone needs more (its siblings): the whole config's verdict stands
        return {"ok": True}
    stored, symbolic = to_json(getattr(instance, name, None))
    if symbolic is not None:
        return {"ok": True, "as": symbolic}
    if json.dumps(stored, sort_keys=True) != json.dumps(value, sort_keys=True):
        return {"ok": True, "as": stored}
    return {"ok": True}


def _auto(record: dict[str, Any], verdict: dict[str, Any]) -> dict[str, Any]:
    """What the model does with ``"auto"``: DeepSpeedConfigModel drops it (the default is used) in most releases."""
    if not verdict.get("ok"):
        return {"accepted": False, "becomes": None, "error": verdict.get("error")}
    stored = verdict.get("as", "auto")
    kept = stored == "auto" and record["default"] != "auto"  # replace_method: "auto" is its default, kept as such
    return {"accepted": True, "becomes": "kept" if kept else "default", "error": None}


def _config_base(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in CONFIG_NAMES
    return (isinstance(node, ast.Attribute) and node.attr in CONFIG_NAMES and isinstance(node.value, ast.Name)
            and node.value.id == "self")


def static_reads(package_dir: Path, fields: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """JSON path → ``[{file, line}]``: attribute chains on a config name that spell a field's attribute path."""
    by_python: dict[tuple[str, str], str] = {(r["section"], r["python_name"]): p for p, r in fields.items()}
    reads: dict[str, list[dict[str, Any]]] = {}
    files = sorted(f for d in STATIC_DIRS for f in (package_dir / d).rglob("*.py"))
    for file in files:
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        relative = f"{package_dir.name}/{file.relative_to(package_dir).as_posix()}"
        parents: set[int] = set()
        for node in ast.walk(tree):  # only the outermost chain counts: config.a.b is one read of a.b
            if isinstance(node, ast.Attribute):
                parents.add(id(node.value))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or id(node) in parents:
                continue
            chain: list[str] = []
            cur: ast.AST = node
            while isinstance(cur, ast.Attribute) and not _config_base(cur):
                chain.append(cur.attr)
                cur = cur.value
            if not _config_base(cur) or not chain:
                continue
            section, path = "", None
            for attr in reversed(chain):
                found = by_python.get((section, attr))
                if found is None:
                    break
                path, section = found, found
            if path is not None:
                reads.setdefault(path, []).append({"file": relative, "line": node.lineno})
    return {p: sorted(v, key=lambda r: (r["file"], r["line"])) for p, v in sorted(reads.items())}


def extract_inference(module: Any, version: str, package: str = "deepspeed") -> dict[str, Any]:
    """The inference document of ``module.DeepSpeedInferenceConfig`` (DeepSpeed's, or a fixture's)."""
    from dsfields.extract.build import Extraction, _environment, _model_section
    from dsfields.extract.discover import Discovery, Prober
    from dsfields.extract.source import SourceIndex
    from dsfields.model.store import FORMAT_VERSION

    cls = getattr(module, MODEL)
    root_module = sys.modules[package]
    package_dir = Path(root_module.__file__).resolve().parent
    ex = Extraction(package, module, Prober(lambda d: cls(**d), package), SourceIndex(package_dir.parent), Discovery())
    _model_section(ex, "", cls, parent="", by_name=True)
    reads = static_reads(package_dir, ex.fields)
    for path, record in ex.fields.items():
        record.update({"alternatives": [], "choices_normalized": None, "condition": None, "conditions": [],
                       "pattern": False, "probes": None, "truthiness": False})
        record["witnesses"] = sorted({"model"} | ({"static"} if path in reads else set()))
        record["read_at"] = reads.get(path, [])
    for section in ex.sections.values():
        section.update({"passed_to": None, "pattern": False})
    runs = _probe(ex, cls, _probe_values(module))
    leaves = [p for p, r in ex.fields.items() if not r["is_section"]]
    coverage = {
        "fields": len(ex.fields),
        "sections": len(ex.sections),
        "per_section": {s: sum(1 for r in ex.fields.values() if r["section"] == s) for s in sorted(ex.sections)},
        "models_not_placed": {},
        "defaults_not_attributed": [],
        "unresolved_models": {},
        "probe_runs": runs,
        "notes": [],
        "witnesses": {
            # The training report's keys, for one schema; the exploration and launch witnesses are not run here.
            "found": {"model": len(ex.fields), "static": len(reads)},
            "only": {"model": len(ex.fields) - len(reads), "static": 0},
            "only_static": [],
            "triggered_by_probes": [],
            "exploration_configs": 0,
            "not_triggered": [],
            "static_under_model": [],
            "choices": sorted(f"{p}: {len(r['choices'])} string spellings accepted, found in the config module's "
                              "enums" for p, r in ex.fields.items() if r["choices"] and not r["enum"]),
            "unplaced": [],
            "launch": "not run (inference document)",
            "static_files": sorted(f"{package}/{d}/" for d in STATIC_DIRS),
            "static_reads": sum(len(v) for v in reads.values()),
            "not_read_outside_the_model": sorted(p for p in leaves if p not in reads),
        },
    }
    return {
        "document": "inference",
        "format_version": FORMAT_VERSION,
        "generated_by": "python -m dsfields.extract.inference_witness",
        "deepspeed_version": version.strip(),
        "environment": _environment(package),
        "model": f"{cls.__module__}.{cls.__qualname__}",
        "sections": ex.sections,
        "fields": ex.fields,
        "enums": ex.enums,
        "removed": {},
        "coverage": coverage,
    }


def extract_installed() -> dict[str, Any] | None:
    """The document of the DeepSpeed importable here; None when this release has no inference config."""
    import importlib

    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()):
        import deepspeed
        try:
            module = importlib.import_module(MODULE)
        except ImportError:
            return None
    if not hasattr(module, MODEL):
        return None
    return extract_inference(module, str(deepspeed.__version__))


def write(document: dict[str, Any], root: Path) -> Path:
    from dsfields.model.store import dumps, write_atomic

    target = root / document["deepspeed_version"] / INFERENCE_FILE
    write_atomic(target, dumps(document))
    return target


def run_releases(versions: list[str], root: Path) -> int:
    """Extract each release in its own runtime, one after the other (the machine's cores are shared)."""
    from dsfields.extract import releases

    failed = 0
    for version in versions:
        started = time.monotonic()
        try:
            done = releases.run_in_release(
                version, ["dsfields.extract.inference_witness", "--out", str(root.resolve())], timeout=RELEASE_TIMEOUT)
            ok = done.returncode == 0
            tail = (done.stdout.strip().splitlines() or [""])[-1] if ok else \
                ((done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1])
        except Exception as exc:  # download, environment or timeout: the cause is the answer
            ok, tail = False, f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
        failed += not ok
        print(f"{version}: {'ok' if ok else 'FAILED'} ({time.monotonic() - started:.0f} s) {tail}", flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    from dsfields.model.store import repo_generated_dir

    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.inference_witness",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="root of the snapshot tree (default: generated/)")
    parser.add_argument("--release", nargs="+", metavar="VERSION",
                        help="extract these releases, each in its own runtime, one at a time")
    args = parser.parse_args(argv)
    root = args.out or repo_generated_dir()
    if args.release:
        return run_releases(args.release, root)
    try:
        document = extract_installed()
    except Exception as exc:  # one line, never a traceback
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ExtractionError(f"--inference: {type(exc).__name__}: {first}") from None
    if document is None:
        raise ExtractionError(f"--inference: this DeepSpeed has no {MODULE}.{MODEL}")
    target = write(document, root)
    cov = document["coverage"]
    print(f"DeepSpeed {document['deepspeed_version']} inference: {cov['fields']} fields in {cov['sections']} sections, "
          f"{cov['witnesses']['found']['static']} read outside the model, {cov['probe_runs']} probe runs -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(standalone(main, "dsfields extract"))
