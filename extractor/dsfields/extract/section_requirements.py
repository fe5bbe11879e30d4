"""Keys a section must give once it is present: compression ``weight_quantization`` needs ``different_groups``.

DeepSpeed reads some sections only when the user writes them (``if WEIGHT_QUANTIZATION not in param_dict``: a
full default is put in its place), and then indexes a key of it unguarded (0.16.9
``compression/config.py:132``, ``param_dict[DIFFERENT_GROUPS]``): ``"weight_quantization": {"shared_parameters":
{...}}`` stops the run with ``KeyError: 'different_groups'``. No value probe sees it, because a probe always sets
one key, so the section is present *with* a key; and the absent section is fine. Here each section that is no
pattern is written empty on the neutral base; where DeepSpeed refuses, naming a key of the section, the keys the
refusals name are given values one refusal at a time (as for a group entry,
:func:`~dsfields.extract.group_requirements.satisfy`) until the build passes, and each is then taken out again;
where DeepSpeed refuses that, naming the key, it is recorded on the key's record as ``required_with_section:
{message, source}``. ``check`` reports a present section without it as one error on the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsfields.extract.group_requirements import keys_below, satisfy
from dsfields.extract.probes import BASE_CONFIG, error_line
from dsfields.extract.requirements import _names, _probe_on, _raised_at, _retype
from dsfields.model.dotted import set_path, without_path

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction


def _placed(section: str, entry: dict[str, Any]) -> dict[str, Any]:
    parent, _, key = section.rpartition(".")
    return set_path(BASE_CONFIG, parent, key, entry)


def learn_section_requirements(ex: Extraction) -> list[str]:
    """Record ``required_with_section`` on the keys a present section must give; one note per key."""
    notes: list[str] = []
    for section in sorted(s for s in ex.sections if s and "*" not in s.split(".")):
        # Only the section's own keys: one below a subsection is that subsection's requirement, found there.
        keys = {k: v for k, v in keys_below(ex, section).items() if not v[0]}
        if not keys:
            continue
        run = ex.prober.run(_placed(section, {}), trace=False)
        if run.error is None or not _names(f"{type(run.error).__name__}: {run.error}", set(keys)):
            continue  # read with a default for every key, or refused for a reason no key of its own names
        satisfied = satisfy(ex, lambda entry, section=section: _placed(section, entry), keys)
        if satisfied is None:
            notes.append(f"{section}: written empty it is refused naming a key, and no accepted content was found")
            continue
        entry, met = satisfied
        required: set[str] = set()
        for key, first in sorted(met.items()):
            _, record = keys[key]
            again = ex.prober.run(_placed(section, without_path(entry, "", key)), trace=False)
            if again.error is None or key not in _names(f"{type(again.error).__name__}: {again.error}", {key}):
                continue  # needed only beside another candidate value, not by every present section
            record["required_with_section"] = {"message": error_line(again.error),
                                               "source": _raised_at(again.error, ex) or first["source"]}
            at = record["required_with_section"]["source"] or {}
            notes.append(f"{record['path']}: required once {section} is given ({at.get('file')}:{at.get('line')})")
            required.add(key)
        if required:
            notes += _probe_again(ex, section, entry, required)
    return notes


def _probe_again(ex: Extraction, section: str, entry: dict[str, Any], required: set[str]) -> list[str]:
    """The keys below ``section`` whose value probes were refused for want of a required key (0.16.9's
    ``weight_quantization.shared_parameters.enabled: true``, refused because the probe wrote no
    ``different_groups``): probed again with the section's required keys given. Such a refusal is no verdict on the
    value, and taken as one it would make ``check`` reject every valid config that turns the feature on."""
    notes = []
    for path, record in sorted(ex.fields.items()):
        probes = record.get("probes")
        if (not path.startswith(section + ".") or record["is_section"] or record.get("pattern") or not probes
                or "*" in path[len(section):].split(".")):
            continue
        if not any(not v.get("ok") and _names(str(v.get("error", "")), required) for v in probes.values()):
            continue
        verdicts = _probe_on(ex, _placed(section, entry), record["section"], record["key"], record)
        if {p: v.get("ok") for p, v in verdicts.items()} == {p: v.get("ok") for p, v in probes.items()}:
            continue
        record["probes"] = verdicts
        if record["reader"] == "dict":
            _retype(record, verdicts)
        refused = sorted(p for p, v in verdicts.items() if not v.get("ok"))
        notes.append(f"{path}: probed again with {', '.join(sorted(required))} given: refuses "
                     f"{', '.join(refused) or 'none'}")
    return notes
