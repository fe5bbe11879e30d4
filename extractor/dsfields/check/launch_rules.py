"""Launch rules in ``check``: what ``deepspeed.initialize`` refuses, applied where the launch probe confirmed it.

The catalogue is :mod:`dsfields.launch.catalogue` (shared with the extractor, which confirms each
rule per release by running its examples through the real ``deepspeed.initialize`` and writes
``generated/<version>/launch.json``). Here a rule is applied to a config only when that release's
``launch.json`` says it was confirmed; without the file, no rule is applied and one info finding says
so. The calling style decides which rules apply: ``--hf`` is the HF Trainer / accelerate
(:func:`dsfields.hf.trainer.hf_plan`: the chosen pair's programs, ``Options.hf_pair``: their fills, their
own AdamW when the config has no optimizer, accelerate's DeepSpeedCPUAdam swap); otherwise plain code calling
``deepspeed.initialize`` itself, with ``--optimizer-from-code`` when it passes an optimizer.

Each finding names the key, quotes the message the release's DeepSpeed (or accelerate) gave on the
rule's example, as recorded in ``launch.json``, and says what to change.

Imports: ``dsfields.model`` and ``dsfields.check.findings`` only.
"""

from __future__ import annotations

from dsfields.check.findings import Finding, Kind, Options, Severity
from dsfields.launch import catalogue
from dsfields.model.dotted import at_path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from typing import Any

NOT_CONFIRMED = "launch rules not confirmed for this release"


def _line(config: Any, path: str) -> int:
    return (config.line_of(tuple(path.split("."))) if path else None) or 1


def launch_rule_findings(checker: Any, config: Any, options: Options, findings: list[Finding],
                         record: dict[str, Any] | None | bool = False) -> list[Finding]:
    """``findings`` plus the confirmed launch rules' verdicts on ``config`` (a :class:`ConfigFile`).

    ``record``: the launch record to use (tests); by default ``generated/<version>/launch.json``.
    A rule that says the launch *accepts* a form the static check refuses (``"zero_optimization": true``
    in plain code) replaces that finding.
    """
    if record is False:
        record = checker_launch_record(checker)
    data = config.data
    if not isinstance(data, dict):
        return findings
    if record is None:
        return [*findings, Finding("", Severity.INFO, Kind.LIMITATION,
                                   f"{NOT_CONFIRMED} (DeepSpeed {checker.version} has no launch.json): "
                                   "optimizer, offload, scheduler and HF Trainer launch rules not applied",
                                   "python -m dsfields.extract.launch_witness --rules --out generated/"
                                   f"{checker.version}/launch.json (in that release's runtime)", 1)]
    active = catalogue.confirmed(record)
    rules = tuple(rule for rule in catalogue.RULES if rule.id in active)
    style = "hf" if options.hf else "plain"
    pair = options.hf_pair if options.hf else None
    fired = catalogue.evaluate(data, style, options.optimizer_from_code and not options.hf, rules, pair)
    out = list(findings)
    version = record.get("deepspeed_version", checker.version)
    for rule, key in fired:
        entry = active[rule.id]
        if rule.effect == "accepts":
            stage = 1 if data.get(key) is True else 0
            # The launch rule says it all (accepted, deprecated, refused by the HF Trainer): it replaces the
            # static verdict on that key, a wrong-type error or the snapshot's "older form" note alike.
            out = [f for f in out if not (f.path == key and f.kind in (Kind.WRONG_TYPE, Kind.COERCED))]
            out.append(Finding(key, Severity.WARNING, Kind.DEPRECATED_KEY,
                               f"legacy boolean: DeepSpeed {version} reads it as ZeRO stage {stage} (deprecated; "
                               "the HF Trainer refuses it)", rule.fix, _line(config, key), rule=rule.id))
            continue
        if rule.raised_by == "deepspeed":
            said = _missing_key_message(entry.get("exc_type"), entry.get("message") or rule.message, key)
            who = f"deepspeed.initialize raises {entry.get('exc_type') or 'an error'}"
        else:  # the HF layers: their message on this very config (dsfields.hf.trainer mirrors them)
            said = _refusal(data, pair) or entry.get("message") or rule.message
            who = f"under the HF Trainer, {rule.raised_by} raises {entry.get('exc_type') or 'an error'}"
            # The launch rule says it all (accepted, deprecated, refused by the HF Trainer): it replaces the
            # static verdict on that key, a wrong-type error or the snapshot's "older form" note alike.
            out = [f for f in out if not (f.path == key and f.kind in (Kind.WRONG_TYPE, Kind.COERCED))]
        if rule.restates:
            out = [f for f in out if f.rule not in rule.restates]
        message = f'{who}: "{said}" (DeepSpeed {version}, {rule.source}; {rule.enforces})'
        if style == "hf" and at_path(data, key) == "auto":  # the value DeepSpeed judged is the HF layers' fill
            filled = catalogue.Launch(data, "hf", pair=pair).get(key, "auto")
            who_fills = f"transformers {pair[0]} / accelerate {pair[1]}" if pair else "the HF Trainer"
            message += f'; its "auto" is filled with {_json(filled)} by {who_fills} (--hf-version to choose)'
        if style == "plain" and rule.id == "zero-requires-optimizer":
            message += "; plain code without --optimizer-from-code is assumed"
        out.append(Finding(key, Severity.ERROR, Kind.LAUNCH, message, rule.fix, _line(config, key), rule=rule.id))
    return out


def _json(value: Any) -> str:
    import json

    return json.dumps(value, default=str)


def _missing_key_message(exc_type: Any, said: str, key: str) -> str:
    """A KeyError's message is the missing key: recorded on the rule's example (``'theta'`` missing), it is
    restated for the key this config lacks (``'gamma'``), or it would name a key the config gives."""
    leaf = key.rpartition(".")[2]
    quoted = said.strip().strip("\"")
    if exc_type == "KeyError" and quoted.startswith("'") and quoted.endswith("'") and quoted[1:-1] != leaf:
        return f"'{leaf}'"
    return said


def _refusal(data: dict[str, Any], pair: tuple[str, str] | None = None) -> str | None:
    launch = catalogue.Launch(data, "hf", pair=pair)
    return str(launch.refused) if launch.refused is not None else None


def checker_launch_record(checker: Any) -> dict[str, Any] | None:
    """The launch record of the checker's release (cached on the checker: one read per run)."""
    cached = getattr(checker, "_launch_record", False)
    if cached is False:
        cached = catalogue.load_launch(checker.version)
        try:
            checker._launch_record = cached
        except AttributeError:
            pass
    return cached
