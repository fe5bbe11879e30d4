"""Requirements on another key's value, learned by probing it: "fp16_master_weights_and_grads: true needs
zero_optimization.stage in [2]".

DeepSpeedConfig refuses some switches unless a key of *another* section holds one of a few values
(``_do_error_check``: ``assert self.zero_enabled and self.zero_optimization_stage == ZeroStageEnum.gradients,
"Fp16_master_weights_and_grads is only supported with ZeRO Stage 2 for now."``; from 0.18.3 stages 1-3). The
refusal names no key, so :mod:`dsfields.extract.requirements` cannot follow it, and which values lift it changes
between releases. Here every switch (a key whose default is ``false``) that DeepSpeed refuses when turned on, on
a config where it is read, is turned on again beside each allowed value of every key with a choice list (an enum
such as ``zero_optimization.stage``); where some of those values lift the refusal and the key's default does
not, the values that do are recorded as ``requires_values: [{path, values, when, message, source}]``, the
release's own answer, which ``check`` applies (``check/rules.py``, zero-stage-requirements).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from dsfields.extract.probes import error_line, probe_base
from dsfields.extract.requirements import _names, _raised_at
from dsfields.model.dotted import at_path, join, set_path

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction


def read_base(ex: Extraction, record: dict[str, Any]) -> dict[str, Any]:
    """The probe base of ``record``, with the conditions it is read under made to hold where the base does not.

    A dict reader behind a condition the exploration met before the static witness asked for it (0.16.9's
    ``fp16_master_weights_and_grads``, read only ``if get_fp16_enabled(param_dict)``) has no exploration base:
    set alone on the neutral one it is never read, and every probe passes.
    """
    from dsfields.extract.reconcile import satisfying_config
    from dsfields.extract.static.read_records import Test

    base = probe_base(ex, record)
    tests = [Test(c["path"], c["op"], c.get("value")) for c in record.get("conditions") or []
             if isinstance(c, dict) and isinstance(c.get("path"), str) and isinstance(c.get("op"), str)]
    if not tests:
        return base
    config = satisfying_config(tests, set(ex.sections), {}, base=base)
    return config if config is not None and ex.prober.run(config, trace=False).error is None else base


def _accepted(ex: Extraction, config: dict[str, Any], section: str, switches: set[str]) -> bool:
    """Whether DeepSpeed accepts ``config``, once a sibling switch its refusal names is turned on too (0.19.8's
    ``bf16_optimizer_states`` needs ZeRO stage 1-3 *and* ``bf16_master_weights_and_grads``)."""
    for _ in range(len(switches) + 1):
        run = ex.prober.run(config, trace=False)
        if run.error is None:
            return True
        named = [k for k in _names(f"{type(run.error).__name__}: {run.error}", switches)
                 if at_path(config, join(section, k)) is not True]
        if not named:
            return False
        config = set_path(config, section, named[0], True)
    return False


def learn_value_requirements(ex: Extraction) -> list[str]:
    """Record ``requires_values`` on every switch a choice of another key lifts; one note per fact found."""
    chooser = [r for _, r in sorted(ex.fields.items()) if isinstance(r.get("choices"), list) and r["choices"]
               and not r["is_section"] and not r.get("pattern") and "trace" in r["witnesses"]]
    by_section: dict[str, set[str]] = {}
    for record in ex.fields.values():
        by_section.setdefault(record["section"], set()).add(record["key"])
    notes: list[str] = []
    for path, record in sorted(ex.fields.items()):
        if record["is_section"] or record.get("pattern") or record.get("default") is not False \
                or "trace" not in record["witnesses"] or record.get("requires"):
            continue
        section, key = record["section"], record["key"]
        base = read_base(ex, record)
        on = set_path(base, section, key, True)
        refused = ex.prober.run(on, trace=False).error
        if refused is None or ex.prober.run(base, trace=False).error is not None:
            continue
        message = error_line(refused)
        if message.startswith("ValidationError") or _names(f"{type(refused).__name__}: {refused}",
                                                          by_section.get(section, set()) - {key}):
            continue  # the key's own type, or a sibling it needs (the requirements witness follows those)
        siblings = {k for k in by_section.get(section, set()) - {key}
                    if (ex.fields.get(f"{section}.{k}" if section else k) or {}).get("default") is False}
        found = []
        for other in chooser:
            if other["section"] == section or other["path"] == path:
                continue
            lifting = [v for v in other["choices"] if _accepted(
                ex, set_path(on, other["section"], other["key"], copy.deepcopy(v)), section, siblings)]
            if lifting and other.get("default") not in lifting:
                found.append({"path": other["path"], "values": lifting, "when": "truthy", "message": message,
                              "source": _raised_at(refused, ex)})
        if found:
            record["requires_values"] = found
            notes.extend(f"{path}: true requires {f['path']} in {f['values']} (each of its choices probed)"
                         for f in found)
    return notes
