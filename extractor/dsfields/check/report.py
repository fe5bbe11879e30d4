"""``check``'s output: every file's findings in one :class:`~dsfields.model.style.OutputStyle`."""

from __future__ import annotations

import json

from dsfields.check.findings import FileReport, Options, counts
from dsfields.model.style import OutputStyle, github_data, github_property
from dsfields.model.termsafe import shown


def render(reports: list[FileReport], version: str, style: OutputStyle, options: Options) -> str:
    if style is OutputStyle.JSON:
        return render_json(reports, version, options)
    if style is OutputStyle.GITHUB:
        return render_github(reports, version)
    return render_text(reports, version)


def unusable_lines(reports: list[FileReport]) -> list[str]:
    """One line per file that could not be checked (text output puts them on stderr, not among the results)."""
    return [shown(r.error if r.error.startswith(r.name) else f"{r.name}: {r.error}") for r in reports if r.error]


def render_text(reports: list[FileReport], version: str) -> str:
    """The checked files' findings and a summary of those files; unusable ones are :func:`unusable_lines`."""
    lines: list[str] = []
    checked = [report for report in reports if not report.error]
    for report in checked:
        name = shown(report.name)
        if not report.findings:
            lines.append(f"{name}: ok")
            continue
        lines.append(name)
        lines += [f.explain(OutputStyle.TEXT) for f in report.findings]
    if reports and not checked:
        return ""  # every file was unusable: no summary to contradict the exit code (2)
    totals = counts(checked)
    unusable = len(reports) - len(checked)
    lines.append(f"{len(checked)} file{'s' if len(checked) != 1 else ''} checked against DeepSpeed {version}: "
                 f"{totals['error']} errors, {totals['warning']} warnings, {totals['info']} notes"
                 + (f"; {unusable} not checked (unusable: see stderr)" if unusable else ""))
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
