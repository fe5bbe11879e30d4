"""A SchemaStore-ready entry for ds_config (issue 41): ``python -m dsfields.schemastore -o schemastore``.

`SchemaStore <https://www.schemastore.org/>`_ hands every editor that reads its catalog (VS Code, JetBrains,
Neovim's schemastore.nvim) the schema of a file whose name matches the entry's ``fileMatch``, with no setting.
This writes what a pull request to ``SchemaStore/schemastore`` adds, in that repository's layout:

* ``catalog-entry.json``: the entry for ``src/api/json/catalog.json`` (name, description, :data:`FILE_MATCH`,
  the schema's URL on json.schemastore.org, which serves the files of ``src/schemas/json/``);
* ``src/schemas/json/deepspeed.json``: the newest release's ``--hf`` schema (most ds_configs in the wild are
  written for the HF Trainer and use ``"auto"``), its ``$id`` that URL;
* ``src/test/deepspeed/*.json``: configs the schema must accept (the seed's templates A/B/C, as the schema's
  snippets give them);
* ``src/negative_test/deepspeed/*.json``: configs it must reject (an unknown key where DeepSpeed rejects one, a
  wrong type, a value outside the choices, a removed key), each rejected by ``dsfields check`` too.

:data:`FILE_MATCH` was measured against real repository paths (``schemastore/measured-paths.json``: the shared
real-config corpus's original paths and every JSON file of several repositories, each judged a ds_config or not
by its keys; see :func:`is_ds_config`); ``tests/test_schemastore.py`` recomputes the hit rate and holds it.

Imports: stdlib, the model and the schema (a consumer).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

NAME = "deepspeed"
URL = f"https://json.schemastore.org/{NAME}.json"
"""Where json.schemastore.org serves ``src/schemas/json/deepspeed.json`` once the entry is merged."""

FILE_MATCH = (
    "ds_config*.json",
    "*.ds_config.json",
    "*.ds-config.json",
    "ds_z[0-3]_*.json",
    "ds_zero*.json",
    "ds_*_config.json",
    "deepspeed.json",
    "deepspeed_config*.json",
    "deepspeed_*_config*.json",
    "*_deepspeed_config.json",
    "ds_stage[0-3]*.json",
    "*_ds_zero*.json",
    "zero_stage[0-3]*.json",
    "zero[0-3].json",
    "zero[0-3]_*.json",
    "**/deepspeed_configs/*.json",
    "**/deepspeed_config_templates/*.json",
    "**/ds_configs/*.json",
    "**/ds_config/*.json",
    "**/dsconfigs/*.json",
)
"""The entry's ``fileMatch``: VS Code globs; one without a ``/`` matches a file name anywhere. Chosen on the measured
paths for no false positive there: ``config.json``, ``test.json`` or a whole folder ``deepspeed/`` (ms-swift keeps
its own ``sft.json`` there) are not DeepSpeed's alone; ``zero2.json`` and ``zero3_offload.json`` are, in practice
(LMFlow, ms-swift, LLaVA, VILA, axolotl name their ds_configs so)."""

NEGATIVE = {
    "unknown-key-in-zero-optimization": {"zero_optimization": {"stage": 3, "stage3_max_live_paramters": 1000000000}},
    "wrong-type": {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2, "reduce_bucket_size": "big"}},
    "offload-device-not-a-choice": {"zero_optimization": {"stage": 3, "offload_param": {"device": "gpu"}}},
    "removed-key": {"zero_optimization": {"stage": 3, "mics_shard_size": 8}},
}
"""Configs the schema must reject, each for a reason ``dsfields check`` gives too (tests/test_schemastore.py)."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A VS Code ``fileMatch`` glob as a regex over a ``/``-separated path: ``**/`` any folders, ``*`` and ``?``
    within a name, ``[0-3]`` a class; a pattern without ``/`` matches the file name in any folder."""
    if "/" not in pattern:
        pattern = "**/" + pattern
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.index("]", i)
            out.append(pattern[i:end + 1])
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, patterns: tuple[str, ...] | list[str] = FILE_MATCH) -> bool:
    """Whether an editor applying ``patterns`` gives ``path`` (repository-relative) the schema."""
    return any(glob_regex(pattern).match(path) for pattern in patterns)


def is_ds_config(data: Any, top_level: set[str], sections: set[str]) -> bool:
    """The measurement's judge of a JSON file: an object with at least two top-level keys of some release (or one
    section) and at least half of its keys DeepSpeed's (``top_level``/``sections`` from the committed history)."""
    if not isinstance(data, dict) or not data:
        return False
    known = set(data) & top_level
    return (len(known) >= 2 or bool(known & sections)) and 2 * len(known) >= len(data)


def hit_rate(paths: list[dict[str, Any]], patterns: tuple[str, ...] | list[str] = FILE_MATCH) -> dict[str, Any]:
    """Recall on the ds_configs of ``paths`` and the non-configs ``patterns`` would wrongly match."""
    configs = [p for p in paths if p["ds_config"]]
    hits = [p for p in configs if matches(p["path"], patterns)]
    wrong = [p for p in paths if not p["ds_config"] and matches(p["path"], patterns)]
    return {"configs": len(configs), "matched": len(hits), "rate": round(len(hits) / len(configs), 3) if configs else
            None, "missed": sorted(f"{p['repo']}:{p['path']}" for p in configs if p not in hits),
            "false_positives": sorted(f"{p['repo']}:{p['path']}" for p in wrong), "others": len(paths) - len(configs)}


def files(version: str | None = None) -> dict[str, str]:
    """Every file of the entry, by path under the output folder."""
    from dsfields.model.generated import available_versions
    from dsfields.model.store import dumps, load_requested
    from dsfields.schema import build_schema, committed_history

    snapshot = load_requested(version or available_versions()[-1])
    schema = build_schema(snapshot, hf=True, site_url=None, history=committed_history())
    schema = {"$schema": schema["$schema"], "$id": URL} | {k: v for k, v in schema.items() if k != "$schema"}
    schema["$comment"] = schema["$comment"].replace("`dsfields schema", "`python -m dsfields.schemastore -o DIR` "
                                                                        "(`dsfields schema")
    entry = {
        "name": "DeepSpeed config",
        "description": "DeepSpeed training configuration (ds_config.json), derived from DeepSpeed's source by "
                       "dsfields",
        "fileMatch": list(FILE_MATCH),
        "url": URL,
    }
    out = {"catalog-entry.json": json.dumps(entry, indent=2) + "\n",
           f"src/schemas/json/{NAME}.json": dumps(schema)}
    for snippet in schema.get("defaultSnippets", []):
        name = snippet["label"].split(":")[0].split()[-1].lower()
        out[f"src/test/{NAME}/template-{name}.json"] = json.dumps(snippet["body"], indent=2) + "\n"
    for name, config in NEGATIVE.items():
        out[f"src/negative_test/{NAME}/{name}.json"] = json.dumps(config, indent=2) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the entry's files into ``-o DIR`` (default ``schemastore/``), each atomically."""
    from dsfields.model.errors import DsfieldsError
    from dsfields.model.store import write_atomic

    parser = argparse.ArgumentParser(prog="python -m dsfields.schemastore", description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=Path("schemastore"))
    parser.add_argument("--version", default=None, help="DeepSpeed release (default: the newest snapshot)")
    args = parser.parse_args(argv)
    try:
        for name, text in files(args.version).items():
            write_atomic(args.output / name, text)
    except DsfieldsError as exc:
        print(f"dsfields schemastore: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
