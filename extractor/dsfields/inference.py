"""The inference document (issue 29) for every consumer: ``--inference`` of lookup, check, diff, schema, resolve.

``generated/<version>/inference.json`` has the snapshot format (``document: "inference"``), so it loads as a
:class:`~dsfields.model.records.Snapshot` and the training machinery answers: lookup's finder and
formatter, check's :class:`~dsfields.check.engine.Checker` (which skips the ds_config-only rules for this
document), the history engine's :func:`~dsfields.model.history.walk_snapshots`, diff's comparison and
schema's builder. What is here is the glue: which file, which releases, and the wording that names the
other document.
"""

from __future__ import annotations

import os
import sys

from dsfields.field_answer import find, format_answer, history_lines, match_json, suggest
from dsfields.model import chinese
from dsfields.model.errors import SnapshotError
from dsfields.model.store import (
    INFERENCE_FILE,
    generated_file,
    generated_root,
    inference_versions,
    load_inference,
    repo_generated_dir,
)
from dsfields.terminal import Style, fill, terminal_width, write

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from dsfields.model.records import Snapshot

class _NoSection:
    model = None


_NO_SECTION = _NoSection()
DOCUMENT = "the inference config (DeepSpeedInferenceConfig, what deepspeed.init_inference takes)"


def inference_note(query: str, training: Snapshot, training_matches: bool) -> dict[str, Any] | None:
    """For a plain ``lookup``: the inference fields ``query`` also names, and the ``--inference`` command.

    Fields of a model the training config uses too (the inference config's ``zero`` is DeepSpeedZeroConfig)
    are left out: the training answer already describes them. Asked on every lookup, so a word the inference
    document does not name costs only its search names (the wheel's ``inference_paths.json``), not the document."""
    found = _note_document(training.version)
    if found is None:
        return None
    name, snapshot = found
    matches = find(snapshot, query)
    if not matches or snapshot.document != "inference":
        return None
    shared = {s.model for s in training.sections.values() if s.model}
    paths = [m.path for m in matches
             if (snapshot.sections.get(m.field.section if m.field else m.path) or _NO_SECTION).model not in shared]
    if not paths:
        return None
    command = f"dsfields lookup --inference {paths[0]} --version {name}"
    if training_matches:
        message = (f"Also a key of {DOCUMENT} in DeepSpeed {name}: {', '.join(paths)}; the answer above is "
                   f"the ds_config (training) field. See: {command}")
    else:
        message = (f"Not a ds_config key, but a key of {DOCUMENT} in DeepSpeed {name}: {', '.join(paths)}. "
                   f"See: {command}")
    return {"deepspeed_version": name, "paths": paths, "command": command, "message": message}


def _note_document(version: str) -> tuple[str, Snapshot] | None:
    """The release whose inference document :func:`inference_note` searches (``version``'s, else the newest) and
    that document: read through its index where there is one, else loaded whole; None if there is none."""
    root = generated_root()
    path = os.path.join(root, version, INFERENCE_FILE)
    if generated_file(path):
        name = version
    else:  # only a release without one lists them all
        versions = inference_versions()
        if not versions:
            return None
        name = versions[-1]
        path = os.path.join(root, name, INFERENCE_FILE)
    from dsfields.model.paths_index import load_indexed

    snapshot = load_indexed(path, lazy=True)
    if snapshot is None:
        try:
            snapshot = load_inference(name)
        except SnapshotError:
            return None
    return name, snapshot


def inference_snapshots() -> list[tuple[str, Snapshot]]:
    """Every release's inference document, in release order."""
    root = repo_generated_dir()
    return [(v, load_inference(v, root)) for v in inference_versions(root)]


def histories(paths: list[str]) -> dict[str, list[Any]]:
    """The history engine's events for inference paths (walked over every inference document)."""
    from dsfields.model.history import walk_snapshots

    events = walk_snapshots(inference_snapshots())
    return {p: events.get(p, []) for p in paths}


def lookup_inference(args: argparse.Namespace) -> int:
    import json

    from dsfields.model.prose import language

    snapshot = load_inference(args.deepspeed_version)
    lang = language(getattr(args, "lang", None))
    matches = find(snapshot, args.query)
    events = histories([m.path for m in matches]) if args.history else {}
    if args.json:
        payload: dict[str, Any] = {
            "document": "inference",
            "deepspeed_version": snapshot.version,
            "query": args.query,
            "matches": [match_json(snapshot, m, lang) for m in matches],
            "suggestions": [] if matches else suggest(snapshot, args.query),
        }
        for item in payload["matches"]:
            if args.history:
                item["history"] = [e.as_dict() for e in events[item["path"]]]
        write(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", lambda: json.dumps(payload, indent=1) + "\n")
        return 0 if matches else 1
    width = terminal_width()
    heading = chinese.text("inference.inference_config_deepspeedinferenceconfig_deepspeed") if lang == "zh" else \
        "inference config (DeepSpeedInferenceConfig), DeepSpeed"
    lines = [f"{heading} {snapshot.version}", ""]
    lines += format_answer(snapshot, args.query, matches, width, Style.for_stream(sys.stdout), lang)
    if args.history:
        for m in matches:
            lines += [""] + ([m.path] if len(matches) > 1 else [])
            lines += history_lines(events[m.path], inference_versions(), width)
    if not matches:
        lines += [""] + fill(chinese.text("inference.without_inference_the_ds_config_of") if lang == "zh" else
                             "(without --inference: the ds_config of deepspeed.initialize)", width)
    write("\n".join(line.rstrip() for line in lines) + "\n", lang=lang)
    return 0 if matches else 1


def inference_reports(args: argparse.Namespace) -> tuple[list[Any], str, Any]:
    """``check --inference FILE...``: each file as the ``config`` of ``init_inference`` (JSON keys = its kwargs);
    the reports, the release and the options, for ``check``'s own ending to print."""
    from dsfields.check.engine import Checker, check_file
    from dsfields.check.findings import Options

    snapshot = load_inference(args.version)
    checker = Checker(snapshot)
    options = Options(hf=False, world_size=None, strict=args.strict, runtime=False, optimizer_from_code=False,
                      launch=False)
    return [check_file(path, checker, options) for path in args.files], snapshot.version, options
