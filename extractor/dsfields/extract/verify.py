"""Differential checks of a snapshot against the DeepSpeed it came from.

For every field: (a) *explicit default* — writing the snapshot's default must parse to the same
state as leaving the key out; (b) *liveness* — writing another valid value must change the parsed
state (proof the key is really read at that path). Fields where either cannot hold are reported
with the reason; the report for each version is committed, so a change in DeepSpeed's behaviour
or in the extractor shows up as a diff.
"""

from __future__ import annotations

from typing import Any

from dsfields.extract.build import with_section
from dsfields.extract.discover import BASE_CONFIG, Prober
from dsfields.extract.state import parsed_state
from dsfields.model.dotted import at_path, join, set_path

PROBE_TEXT = "dsfields-probe"


def alternative(record: dict[str, Any]) -> list[Any]:
    """Values other than the default that should be valid for this field, most plausible first."""
    default = record["default"]
    types = set(record["json_types"])
    out: list[Any] = []
    for choice in record.get("choices") or []:
        if choice != default:
            out.append(choice)
    if isinstance(default, bool) or "boolean" in types:
        out.append(not default if isinstance(default, bool) else True)
    if (isinstance(default, int) and not isinstance(default, bool)) or "integer" in types:
        base = default if isinstance(default, int) and not isinstance(default, bool) else 0
        limits = record.get("constraints") or {}
        candidate = base + 2 if base == 0 else base + 1  # 2, not 1: the probe config already holds 1s
        if "le" in limits and candidate > limits["le"] or "lt" in limits and candidate >= limits["lt"]:
            candidate = base - 1
        out.append(max(candidate, limits.get("ge", candidate), limits.get("gt", candidate - 1) + 1))
    if isinstance(default, float) or "number" in types:
        out.append(default * 2 if isinstance(default, float) and default else 0.5)
    if isinstance(default, str) or "string" in types:
        out.append(f"{default}-{PROBE_TEXT}" if isinstance(default, str) and default else PROBE_TEXT)
    if isinstance(default, list) or "array" in types:
        out.append([PROBE_TEXT] if not default or isinstance(default[0], str) else [*default, default[-1]])
    if isinstance(default, dict) or "object" in types:
        out.append({PROBE_TEXT: 1})
    if not out:
        out.extend([2, True, PROBE_TEXT])
    return out


def verify(snapshot: dict[str, Any], config_cls: Any, package: str = "deepspeed") -> dict[str, Any]:
    prober = Prober(config_cls, package)
    references: dict[str, Any] = {}

    def state(config: dict[str, Any]) -> tuple[Any, str | None]:
        run = prober.run(config)
        if run.error is not None:
            return None, f"{type(run.error).__name__}: {str(run.error).splitlines()[0][:200] if str(run.error) else ''}"
        return parsed_state(run.config, package), None

    explicit: dict[str, str] = {}
    liveness: dict[str, str] = {}
    checked = 0
    for path, record in sorted(snapshot["fields"].items()):
        if record["is_section"] or record["required"]:
            continue
        checked += 1
        section, key = record["section"], record["key"]
        if section not in references:
            references[section] = state(with_section(BASE_CONFIG, section))
        reference, ref_error = references[section]
        if ref_error:
            explicit[path] = liveness[path] = f"the section alone does not parse: {ref_error}"
            continue
        base = with_section(BASE_CONFIG, section)
        if record["default_repr"] and record["default"] is None:
            explicit[path] = f"default {record['default_repr']} has no JSON spelling"
        else:
            got, error = state(set_path(base, section, key, record["default"]))
            if error:
                explicit[path] = f"writing the default {record['default']!r} fails: {error}"
            elif got != reference:
                explicit[path] = "writing the default changes the parsed state"
        reasons = []
        present = at_path(base, join(section, key))
        for value in [v for v in alternative(record) if v != present] or alternative(record):
            got, error = state(set_path(base, section, key, value))
            if error is None and got != reference:
                break
            reasons.append(f"{value!r}: {error or 'no change'}")
        else:
            liveness[path] = "; ".join(reasons)
    return {
        "generated_by": "dsfields extract --verify",
        "deepspeed_version": snapshot["deepspeed_version"],
        "checked": checked,
        "explicit_default_differs": explicit,
        "not_live": liveness,
    }
