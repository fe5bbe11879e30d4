"""The "Errors and warnings" index (issue 38): every catalogued DeepSpeed message that names a config key, once.

One document serves every release and both languages (the site is near its size bound, so nothing is repeated
per release): each entry is a message ID with its words, its key(s), the releases it exists in (as runs of the
release list), the fix in English and Chinese, where it is raised in the newest release that has it, and — where
one is known — a minimal config that makes ``dsfields check`` report that very ID (taken from the launch rules'
trigger examples, :mod:`dsfields.launch.catalogue`, and checked by a test). A release's page shows the entries whose
runs include it.

``python -m dsfields.docs.errors_index [OUT]`` writes it (default: stdout).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import Any

FORMAT = 1


def _runs(versions: list[str], universe: list[str]) -> list[list[int]]:
    """The releases as ``[first, last]`` index runs of ``universe`` (consecutive releases merged)."""
    index = {v: i for i, v in enumerate(universe)}
    runs: list[list[int]] = []
    for i in sorted(index[v] for v in versions if v in index):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


@cache
def minimal_configs() -> dict[str, dict[str, Any]]:
    """Message ID → a minimal config (and how it is launched) for which ``check`` of the newest release reports
    that ID: the trigger examples of the launch rules DeepSpeed raises, each judged by ``check`` here."""
    from dsfields.check.check_command import checker_for, file_findings
    from dsfields.check.codes import assign_ids
    from dsfields.check.findings import FileReport, Options
    from dsfields.configfile import parse
    from dsfields.launch import catalogue
    from dsfields.model.store import available_versions, load_indexed

    newest = available_versions()[-1]
    checker = checker_for(load_indexed(newest), False)
    found: dict[str, dict[str, Any]] = {}
    for rule in catalogue.RULES:
        if rule.raised_by != "deepspeed":
            continue
        for example in rule.triggers:
            if example.style != "plain":
                continue
            options = Options(optimizer_from_code=example.optimizer_from_code)
            report = FileReport("<example>", file_findings(checker, parse(json.dumps(example.config)), options))
            assign_ids([report], newest)
            for finding in report.findings:
                if finding.id and not finding.id.startswith("DSF") and finding.id not in found:
                    found[finding.id] = {"config": example.config,
                                         "optimizer_from_code": example.optimizer_from_code, "release": newest}
    return found


def build() -> dict[str, Any]:
    """The index document (see the module docstring)."""
    from dsfields.explain import _fix, catalogue
    from dsfields.model.store import available_versions

    universe = available_versions()
    configs = minimal_configs()
    entries = []
    for message in sorted(catalogue().values(), key=lambda m: m.id):
        if message.layer != "deepspeed":
            continue
        occurrence = message.newest
        keys = list(dict.fromkeys(k for o in message.occurrences for k in o.keys))
        if not keys:
            continue
        action, fix_en, _ = _fix(message, occurrence, occurrence.keys or keys, "en")
        _, fix_zh, _ = _fix(message, occurrence, occurrence.keys or keys, "zh")
        entry: dict[str, Any] = {"id": message.id, "type": message.type, "message": message.pattern[:300],
                                 "keys": keys, "releases": _runs([o.version for o in message.occurrences], universe),
                                 "raised_at": f"{occurrence.file}:{occurrence.line}@{occurrence.version}",
                                 "action": action, "fix": {"en": fix_en, "zh": fix_zh}}
        if message.id in configs:
            entry["config"] = configs[message.id]
        entries.append(entry)
    return {"format": FORMAT, "generated_by": "python -m dsfields.docs.errors_index", "releases": universe,
            "entries": entries}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = json.dumps(build(), ensure_ascii=False, separators=(",", ":")) + "\n"
    if argv:
        from dsfields.model.safewrite import write_text

        write_text(argv[0], text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
