"""``check --format sarif``: SARIF 2.1.0, the format code-scanning UIs (GitHub, GitLab, Azure DevOps) ingest.

GitHub workflow annotations (``--format github``) vanish with the run; a SARIF upload lands in the
repository's code-scanning tab, where findings are tracked across commits and dismissed one by one.
One run, one rule per finding kind (or per named DeepSpeed rule), one result per finding with the
file, line and JSON path; a file that cannot be read is a tool execution notification, as SARIF
intends for "the tool could not analyse this". Structure follows OASIS SARIF 2.1.0 (errata 01).
"""

from __future__ import annotations

import json
from typing import Any

from dsfields import __version__
from dsfields.check.findings import FileReport, Finding, Options, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def rule_id(finding: Finding) -> str:
    """The finding's stable ID (DSnnnnnnnn or DSFnnnnn, :mod:`dsfields.check.codes`); its rule name, else its kind,
    when no ID was given."""
    return finding.id or finding.rule or finding.kind.name.lower()


def _uri(name: str) -> str:
    """A relative URI reference for a file name as the user gave it (SARIF wants ``/`` and no ``./``): its bytes
    percent-encoded, those of a name that is not UTF-8 (``surrogateescape``d by Python) too, as RFC 3986 wants."""
    import os
    from urllib.parse import quote

    return quote(os.fsencode(name.replace("\\", "/").removeprefix("./")), safe="/:")


def render_sarif(reports: list[FileReport], version: str, options: Options) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    notifications = []
    for report in reports:
        if report.error:
            notifications.append({
                "level": "error",
                "message": {"text": report.error},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(report.name)}}}],
            })
            continue
        for finding in report.findings:
            ident = rule_id(finding)
            if ident not in rules:
                rules[ident] = {
                    "id": ident,
                    "name": "".join(part.title() for part in (finding.rule or finding.kind.name.lower())
                                    .replace("-", "_").split("_")),
                    "shortDescription": {"text": f"{finding.kind.value} (DeepSpeed {version})"},
                    "defaultConfiguration": {"level": LEVEL[finding.severity]},
                }
            text = f"{finding.path or '(file)'}: {finding.message}" + (f" Fix: {finding.fix}" if finding.fix else "")
            location: dict[str, Any] = {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(report.name)},
                    "region": {"startLine": finding.line or 1},
                },
            }
            if finding.path:
                location["logicalLocations"] = [{"fullyQualifiedName": finding.path, "kind": "member"}]
            results.append({
                "ruleId": ident,
                "ruleIndex": list(rules).index(ident),
                "level": LEVEL[finding.severity],
                "message": {"text": text},
                "locations": [location],
                "properties": {"path": finding.path, "kind": finding.kind.name.lower(), "rule": finding.rule,
                               "fix": finding.fix,
                               "related": list(finding.related)},
            })
    run = {
        "tool": {"driver": {
            "name": "dsfields",
            "version": __version__,
            "rules": list(rules.values()),
        }},
        "invocations": [{"executionSuccessful": not notifications,
                         "toolExecutionNotifications": notifications}],
        "results": results,
        "properties": {"deepspeed_version": version, "hf": options.hf, "world_size": options.world_size},
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}, indent=1,
                      ensure_ascii=False)
