"""Every check rule with its stable code (DSFnnnnn), and the stable ID of each finding (issue 38).

The rules are the finding kinds (:class:`~dsfields.check.findings.Kind`), the cross-field rules
(:data:`dsfields.check.rules.RULES`), the launch and world rules (:mod:`dsfields.launch`) and the HF Trainer's
(:data:`dsfields.check.trainer_check.TRAINER_RULES`). A finding that quotes DeepSpeed's own message carries that
message's catalogue ID (DSnnnnnnnn) instead; the computation lives in :mod:`dsfields.model.message_ids`.
"""

from __future__ import annotations

from functools import cache

from dsfields.check.findings import FileReport, Kind
from dsfields.model.message_ids import finding_code

QUOTING = frozenset({Kind.LAUNCH, Kind.LAUNCH_VERDICT, Kind.RUNTIME})
"""The kinds whose findings quote DeepSpeed's (or the library's) own words: their ID is the catalogue's."""


@cache
def check_rules() -> dict[str, tuple[str, str]]:
    """Every rule ``check`` can report: name → (what it says, where it comes from)."""
    from dsfields.check.rules import RULES
    from dsfields.check.trainer_check import TRAINER_RULES
    from dsfields.launch import catalogue, world_rules

    found: dict[str, tuple[str, str]] = {kind.name.lower(): (kind.value, "finding kind") for kind in Kind}
    for rule in RULES:
        found[rule.id] = (rule.summary, rule.source)
    for rule in catalogue.RULES:
        found[rule.id] = (rule.enforces, f"{rule.raised_by} {rule.source}")
    for rule in world_rules.RULES:
        found[rule.id] = (rule.enforces, f"deepspeed {rule.source}")
    for name, summary in TRAINER_RULES.items():
        found[name] = (summary, "HF Trainer")
    return found


def assign_ids(reports: list[FileReport], version: str) -> None:
    """Give every finding of ``reports`` its stable ID (in place)."""
    for report in reports:
        report.findings = [f._replace(id=finding_code(f.kind.name.lower(), f.rule, f.message, version,
                                                      deepspeed_message=f.kind in QUOTING))
                           for f in report.findings]
