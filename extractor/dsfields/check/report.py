"""``check``'s output: every file's findings in one :class:`~dsfields.model.style.OutputStyle`."""

from __future__ import annotations

import json

from dsfields.check.findings import FileReport, Options, counts
from dsfields.model.style import OutputStyle, github_data, github_property


def render(reports: list[FileReport], version: str, style: OutputStyle, options: Options) -> str:
    if style is OutputStyle.JSON:
        return render_json(reports, version, options)
    if style is OutputStyle.GITHUB:
        return render_github(reports, version)
    return render_text(reports, version)


def render_text(reports: list[FileReport], version: str) -> str:
    lines: list[str] = []
    for report in reports:
        if report.error:
            lines.append(f"{report.name}: {report.error}" if not report.error.startswith(report.name)
                         else report.error)
            continue
        if not report.findings:
            lines.append(f"{report.name}: ok")
            continue
        lines.append(report.name)
        lines += [f.explain(OutputStyle.TEXT) for f in report.findings]
    totals = counts(reports)
    lines.append(f"{len(reports)} file{'s' if len(reports) != 1 else ''} checked against DeepSpeed {version}: "
                 f"{totals['error']} errors, {totals['warning']} warnings, {totals['info']} notes")
    return "\n".join(lines)


JSON_FORMAT_VERSION = 1
"""``format_version`` of ``check --format json`` (docs/check-output.md): raised when a key changes meaning or
goes away; new keys may appear without a raise."""


def render_json(reports: list[FileReport], version: str, options: Options) -> str:
    payload = {
        "format_version": JSON_FORMAT_VERSION,
        "deepspeed_version": version,
        "options": {"hf": options.hf, "world_size": options.world_size, "strict": options.strict,
                    "runtime": options.runtime},
        "files": [{"file": r.name, "error": r.error, "findings": [f.as_dict() for f in r.findings]} for r in reports],
        "summary": counts(reports),
    }
    return json.dumps(payload, indent=1, ensure_ascii=False)


def render_github(reports: list[FileReport], version: str) -> str:
    """GitHub workflow commands: one ``::error file=…,line=…::`` annotation per finding."""
    lines = []
    for report in reports:
        if report.error:
            lines.append(f"::error file={github_property(report.name)},title=dsfields check::"
                         f"{github_data(report.error)}")
            continue
        lines += [f.explain(OutputStyle.GITHUB, file=report.name, version=version) for f in report.findings]
    return "\n".join(lines)
