"""Comparisons between two keys of a section: ``assert schedule_offset <= schedule_offset_end``.

A key whose value probes are refused with one message naming a sibling key (``Invalid schedule_offset and
schedule_offset_end values``) may be compared with that sibling. Set alone, every probe is measured against
the sibling's default (``schedule_offset`` 1000): the verdicts say nothing of a value given beside the sibling.
Here both are set, to three pairs (the key below, above and equal to the sibling), each a full
``DeepSpeedConfig`` build on the key's probe base; where the verdicts are exactly those of one of ``<=``,
``<``, ``>=``, ``>`` and every refusal is the message first seen, the comparison is recorded on the key as
``compared_with: [{key, op, message, source}]`` (``op`` reads "this key op that key"), with the line that
raised it. ``check`` applies it where both values are known (given, or the sibling's default) and the key's
read conditions hold, and no longer takes those probe refusals as verdicts on the value.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from dsfields.extract.probes import error_line, probe_base
from dsfields.extract.requirements import _names, _raised_at, satisfying_base
from dsfields.model.dotted import set_path

if TYPE_CHECKING:
    from dsfields.extract.extraction import Extraction

PAIRS: tuple[tuple[int, int], ...] = ((5, 10), (10, 5), (5, 5))
"""``(this key, the sibling)``: below, above, equal."""

OPS: dict[tuple[bool, bool, bool], str] = {
    (True, False, True): "<=", (True, False, False): "<", (False, True, True): ">=", (False, True, False): ">",
}
"""The verdicts on :data:`PAIRS` (accepted or not) -> the comparison DeepSpeed makes."""


def _paired_base(ex: Extraction, base: dict[str, Any], section: str, key: str,
                 sibling: str) -> dict[str, Any] | None:
    """A config on which one of the pairs passes (the parent's other keys given one refusal at a time, as
    pruning's ``different_groups`` is): the three pairs are then set on it. None when neither order passes."""
    for mine, theirs in PAIRS[:2]:
        paired = satisfying_base(ex, set_path(base, section, sibling, theirs), section, key, mine)
        if paired is not None:
            return paired
    return None


def learn_comparisons(ex: Extraction) -> list[str]:
    """Record ``compared_with`` on keys DeepSpeed compares with a sibling; one note per comparison found."""
    notes: list[str] = []
    by_section: dict[str, set[str]] = {}
    for record in ex.fields.values():
        if not record.get("pattern") and not record["is_section"]:
            by_section.setdefault(record["section"], set()).add(record["key"])
    for path, record in sorted(ex.fields.items()):
        probes = record.get("probes") or {}
        if record["is_section"] or record.get("pattern") or record.get("requires") or not probes:
            continue
        section, key = record["section"], record["key"]
        refusals = {str(v.get("error")) for pid, v in probes.items() if not v.get("ok") and pid in ("0", "1", "-1")}
        if len(refusals) != 1:
            continue
        refusal = refusals.pop()
        siblings = sorted(_names(refusal, by_section.get(section, set()) - {key}))
        if not siblings:
            continue
        for sibling in siblings:
            base = _paired_base(ex, probe_base(ex, record), section, key, sibling)
            if base is None:
                continue
            verdicts = []
            exc = None
            for mine, theirs in PAIRS:
                config = set_path(set_path(base, section, sibling, theirs), section, key, mine)
                run = ex.prober.run(copy.deepcopy(config), trace=False)
                verdicts.append(run.error is None)
                if run.error is not None:
                    if error_line(run.error) != refusal:
                        verdicts = []
                        break
                    exc = run.error
            op = OPS.get(tuple(verdicts)) if len(verdicts) == len(PAIRS) else None
            if op is None or exc is None:
                continue
            fact: dict[str, Any] = {"key": sibling, "op": op, "message": refusal, "source": _raised_at(exc, ex)}
            record.setdefault("compared_with", []).append(fact)
            where = fact["source"] or {}
            notes.append(f"{path}: {op} {sibling} ({where.get('file')}:{where.get('line')})")
    return notes
