"""World rules in ``check --world-size N``: refusals that fire only at some world sizes, where the release's
``world.json`` confirms them (:mod:`dsfields.launch.world_rules`).

Each finding names the key, quotes the refusal DeepSpeed gave on the rule's example (launched as rank 0 and the
last rank of a world of 8 in torch's fake process group), the rank that refused it and the source line. Without
``--world-size`` only the rules that read no world size (``any_world``: ZenFlow, Muon, DeepCompile set-up refusals)
are judged; with it, a release without ``world.json`` gets one note.

Imports: ``dsfields.model`` and ``dsfields.check.findings`` only.
"""

from __future__ import annotations

from dsfields.check.findings import Finding, Kind, Options, Severity
from dsfields.launch import world_rules as catalogue

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations are strings
    from typing import Any

NOT_CONFIRMED = "world rules not confirmed for this release"


def world_rule_findings(checker: Any, config: Any, options: Options, findings: list[Finding],
                        record: dict[str, Any] | None | bool = False) -> list[Finding]:
    """``findings`` plus the confirmed world rules' verdicts on ``config`` at ``options.world_size`` ranks."""
    world = options.world_size
    data = config.data
    if not isinstance(data, dict):
        return findings
    if record is False:
        record = _record(checker)
    if record is None:
        if not world:
            return findings
        return [*findings, Finding("", Severity.INFO, Kind.LIMITATION,
                                   f"{NOT_CONFIRMED} (DeepSpeed {checker.version} has no world.json): hpZ, AutoTP, "
                                   "AutoEP, qgZ, MiCS, ZenFlow, Muon and DeepCompile rules not applied",
                                   "python -m dsfields.extract.world_witness --release "
                                   f"{checker.version} --out generated/{checker.version}/world.json", 1)]
    if record.get("environment", {}).get("launched") is False:  # static: read in the source, never launched
        found = sorted(rule_id for rule_id, entry in record["rules"].items()
                       if isinstance(entry, dict) and entry.get("in_source"))
        if not world or not found:
            return findings
        return [*findings, Finding("", Severity.INFO, Kind.LIMITATION,
                                   f"world rules found in DeepSpeed {checker.version}'s source but not confirmed by "
                                   f"launch (static world.json), not applied: {', '.join(found)}",
                                   "python -m dsfields.extract.world_witness --release "
                                   f"{checker.version} --out generated/{checker.version}/world.json", 1)]
    active = catalogue.confirmed(record)
    rules = tuple(rule for rule in catalogue.RULES if rule.id in active and (world or rule.any_world))
    if not rules:
        return findings
    out = list(findings)
    taken = {f.path for f in findings if f.severity is Severity.ERROR}
    for rule, key in catalogue.evaluate(data, world or 1, options.gpus_per_node, rules, _defaults(checker, data)):
        if key in taken:
            continue
        entry = active[rule.id]
        rank = entry.get("rank")
        probe = catalogue.PROBE_WORLD
        who = f"rank {rank} of {probe}" if rank is not None else f"every rank played of {probe}"
        where = entry.get("site") or rule.source  # the line in this release, as its probe saw it raised
        at = f"at world size {world}" if world and not rule.any_world else "at any world size"
        # the probe's words name its own key: for another key of the same rule, the rule's words
        said = entry.get("message") if key == rule.key else None
        message = (f"{at}, deepspeed.initialize raises {entry.get('exc_type') or 'an error'}: "
                   f"\"{said or rule.message}\" (DeepSpeed {record.get('deepspeed_version')}, "
                   f"{where}; {rule.enforces}; seen on {who} in its probe)")
        line = (config.line_of(tuple(key.split("."))) if key else None) or 1
        out.append(Finding(key, Severity.ERROR, Kind.LAUNCH, message, rule.fix, line, related=rule.related,
                           rule=rule.id))
    return out


def _defaults(checker: Any, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The release's defaults of the sections a rule computes with (elasticity), from its snapshot."""
    out: dict[str, dict[str, Any]] = {}
    for section in ("elasticity",):
        if isinstance(data.get(section), dict):
            records = checker.snapshot.by_section.get(section, {})
            out[section] = {key: record.default for key, record in records.items()}
    return out


def _record(checker: Any) -> dict[str, Any] | None:
    cached = getattr(checker, "_world_record", False)
    if cached is False:
        cached = catalogue.load_world(checker.version)
        try:
            checker._world_record = cached
        except AttributeError:
            pass
    return cached
