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
import re
import sys
from functools import cache
from typing import Any

from dsfields.model.message_ids import FORMAT_FIELD

FORMAT = 2
"""2: each entry's ``variants`` (its keys, fix and source per run of releases that read alike); a variant has its own
``message`` where the raises sharing the entry's ID differ in words (format fields naming different constants), and
the entry's ``message`` then shows every format field as ``{…}``."""


def _runs(versions: list[str], universe: list[str]) -> list[list[int]]:
    """The releases as ``[first, last]`` index runs of ``universe`` (consecutive releases merged; a release named
    twice, as a message raised at two places of it is, counted once)."""
    index = {v: i for i, v in enumerate(universe)}
    runs: list[list[int]] = []
    for i in sorted({index[v] for v in versions if v in index}):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


@cache
def minimal_configs(generated: str | None = None) -> dict[str, dict[str, Any]]:
    """Message ID → a minimal config (and how it is launched) for which ``check`` of the newest release reports
    that ID: the trigger examples of the launch rules DeepSpeed raises, each judged by ``check`` here
    (``generated``: the snapshot folder; None: the checkout's)."""
    from dsfields.check.check_command import checker_for, file_findings
    from dsfields.check.codes import assign_ids
    from dsfields.check.findings import FileReport, Options
    from dsfields.configfile import parse
    from dsfields.launch import catalogue
    from dsfields.model.store import available_versions, load_indexed

    universe = available_versions(generated)
    newest = universe[-1]
    checkers: dict[str, Any] = {}

    def reported(version: str, config: dict[str, Any], options: Options) -> set[str]:
        if version not in checkers:
            checkers[version] = checker_for(load_indexed(version, generated), False)
        report = FileReport("<example>", file_findings(checkers[version], parse(json.dumps(config)), options))
        assign_ids([report], version)
        return {finding.id for finding in report.findings if finding.id}

    found: dict[str, dict[str, Any]] = {}
    for rule in catalogue.RULES:
        if rule.raised_by != "deepspeed":
            continue
        for example in rule.triggers:
            if example.style != "plain":
                continue
            options = Options(optimizer_from_code=example.optimizer_from_code)
            for message_id in sorted(reported(newest, example.config, options)):
                if message_id.startswith("DSF") or message_id in found:
                    continue
                # the releases whose check reports it for this config too: the page shows the config to their readers
                # only, each told of their own release
                versions = [v for v in universe if message_id in reported(v, example.config, options)]
                found[message_id] = {"config": example.config, "optimizer_from_code": example.optimizer_from_code,
                                     "release": newest, "releases": _runs(versions, universe)}
    return found


_CONSTANT = re.compile(r"\{[A-Z][A-Z0-9_]*\}")
"""A format field naming a module constant (``{CURRICULUM_LEARNING_SCHEDULE_MAX_STEP}``): fixed words, not a value."""


def _words(pattern: str, constants: bool = True) -> str:
    """``pattern`` with each format field that stands for a run-time value as ``{…}`` (and with ``constants``
    False, every field): two raises of one ID whose words differ so are two messages to a reader."""
    return FORMAT_FIELD.sub(lambda m: m[0] if m[0] in ("{{", "}}") or (constants and _CONSTANT.fullmatch(m[0]))
                            else "{…}", pattern)


def build(generated: str | None = None) -> dict[str, Any]:
    """The index document (see the module docstring) of the snapshot folder ``generated`` (None: the checkout's)."""
    from dsfields.explain import _fix, catalogue
    from dsfields.model.store import available_versions

    universe = available_versions(generated)
    position = {version: at for at, version in enumerate(universe)}
    messages = catalogue(generated)
    configs = minimal_configs(generated) if messages else {}
    entries = []
    for message in sorted(messages.values(), key=lambda m: m.id):
        if message.layer != "deepspeed":
            continue
        keys = list(dict.fromkeys(k for o in message.occurrences for k in o.keys))
        if not keys:
            continue
        # Each release's own keys, fix and file: where the keys DeepSpeed checks with this message, the check's
        # condition or the file raising it changed between releases, the entry has one variant per run of releases
        # that read alike, so that a release's reader is never told of a key or file its release lacks.
        variants: dict[tuple[Any, ...], dict[str, Any]] = {}
        worded = len({_words(o.pattern or message.pattern) for o in message.occurrences}) > 1
        for occurrence in sorted(message.occurrences, key=lambda o: position.get(o.version, -1)):
            action, fix_en, _ = _fix(message, occurrence, list(occurrence.keys), "en")
            words = occurrence.pattern or message.pattern
            alike = (tuple(occurrence.keys), action, fix_en, occurrence.file, _words(words) if worded else "")
            if alike not in variants:  # the Chinese words once per variant, not per release
                fix_zh = _fix(message, occurrence, list(occurrence.keys), "zh")[1]
                variants[alike] = {"keys": list(occurrence.keys), "action": action,
                                   "fix": {"en": fix_en, "zh": fix_zh}, "versions": []}
                if worded:  # the ID's raises differ in words: each variant says its own, by its own line
                    variants[alike]["message"] = words[:300]
            variant = variants[alike]
            variant["versions"].append(occurrence.version)
            variant["raised_at"] = f"{occurrence.file}:{occurrence.line}@{occurrence.version}"
            variant.setdefault("lines", {})[occurrence.version] = occurrence.line  # each release's own line
        shown = sorted(variants.values(), key=lambda v: position.get(v["versions"][-1], -1))
        newest = shown[-1]
        # words shared by all of them: each format field as "{…}" where the raises' own words differ
        said = _words(message.pattern, constants=False) if worded else message.pattern
        entry: dict[str, Any] = {"id": message.id, "type": message.type, "message": said[:300],
                                 "keys": keys, "releases": _runs([o.version for o in message.occurrences], universe),
                                 "raised_at": newest["raised_at"], "action": newest["action"], "fix": newest["fix"],
                                 "variants": [{"releases": _runs(v.pop("versions"), universe), **v} for v in shown]}
        if message.id in configs:
            entry["config"] = configs[message.id]
        entries.append(entry)
    return {"format": FORMAT, "generated_by": "python -m dsfields.docs.errors_index", "releases": universe,
            "entries": entries}


def for_site(versions: list[str], lang: str, document: dict[str, Any] | None = None) -> dict[str, Any]:
    """The index as one language's site shows it (``releases/errors.json``): its runs re-counted over the site's
    releases ``versions`` (an entry of none of them left out), its fix in ``lang`` only."""
    document = build() if document is None else document
    universe = document["releases"]
    entries = []

    def recount(runs: list[list[int]]) -> list[list[int]]:
        return _runs([universe[i] for first, last in runs for i in range(first, last + 1)], versions)

    for entry in document["entries"]:
        runs = recount(entry["releases"])
        if runs:
            variants = [{**v, "releases": recount(v["releases"]), "fix": v["fix"].get(lang) or v["fix"]["en"],
                         "lines": _line_runs(v.get("lines") or {}, versions)} for v in entry["variants"]]
            shown = {**entry, "releases": runs, "fix": entry["fix"].get(lang) or entry["fix"]["en"],
                     "variants": [v for v in variants if v["releases"]]}
            if entry.get("config"):
                shown["config"] = {**entry["config"], "releases": recount(entry["config"].get("releases") or [])}
            entries.append(shown)
    return {"format": FORMAT, "generated_by": "dsfields docs build", "lang": lang, "releases": list(versions),
            "entries": entries}


def _line_runs(lines: dict[str, int], versions: list[str]) -> list[list[int]]:
    """``[first, last, line]`` runs of positions in ``versions`` whose releases raise at the same ``line`` (the
    raising file's line moves with DeepSpeed's edits): what the page's script shows its reader's release."""
    runs: list[list[int]] = []
    for at, version in enumerate(versions):
        line = lines.get(version)
        if line is None:
            continue
        if runs and runs[-1][1] == at - 1 and runs[-1][2] == line:
            runs[-1][1] = at
        else:
            runs.append([at, at, line])
    return runs


def in_release(document: dict[str, Any], version: str) -> list[dict[str, Any]]:
    """The entries of ``document`` (:func:`build`'s or :func:`for_site`'s) whose runs include ``version``."""
    if version not in document["releases"]:
        return []
    at = document["releases"].index(version)
    return [e for e in document["entries"] if any(first <= at <= last for first, last in e["releases"])]


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
