"""Legacy forms DeepSpeed converts in code, as data keyed by JSON path, each with the DeepSpeed source it follows.

Most of what ``migrate`` does comes from the snapshots alone (deprecations with their replacement,
removed keys and their messages, defaults, which sections reject unknown keys). What follows is the
rest: conversions DeepSpeed performs in a function body rather than in a declared deprecation, read
from the source named in each entry. Every path named here (the legacy key and every key it writes)
is checked against the snapshots of the releases the entry applies to by ``tests/test_migrate_upgrade.py``,
so an entry cannot name a key those releases do not have.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsfields.model.records import Snapshot, Source


@dataclass(frozen=True)
class Legacy:
    """One legacy form and what DeepSpeed makes of it."""

    path: str
    """The legacy JSON path."""
    kind: str
    """``"bool-section"``, ``"alias"``, ``"carry"``, ``"moved"`` or ``"section-map"`` (see :data:`LEGACY`)."""
    source: str
    """What the DeepSpeed code this conversion follows does (our words); its file and line are the witness's."""
    witness: str = ""
    """A JSON path whose record in a snapshot points at that code (its reader, its rejection, or the class its
    section is passed to): :func:`located` prints the release's own file and line."""
    functions: tuple[str, ...] = ()
    """The function the witness's reader must be (any release: names changed), checked by the tests."""
    targets: tuple[str, ...] = ()
    """JSON paths the conversion writes."""
    keys: tuple[tuple[str, str], ...] = ()
    """``section-map``: legacy key (relative to :attr:`path`) → target key (relative to :attr:`targets[0]`,
    ``{type}`` standing for the value of :attr:`name_key`)."""
    name_key: str | None = None
    """``section-map``: the legacy key whose value names the entry under the target (a metric name)."""
    needs: tuple[str, ...] = ()
    """``section-map``: keys under the target the new reader requires and the legacy form has no value for."""
    lost: str = ""
    """What the legacy form did that the target does not (a report line, our wording)."""


LEGACY: dict[str, Legacy] = {
    "zero_optimization": Legacy(
        "zero_optimization", "bool-section",
        "stage = 1 if the value else 0; at stage 1 allgather_bucket_size = allgather_size (default 5e8)",
        witness="allgather_size", functions=("read_zero_config_deprecated",),
        targets=("zero_optimization.stage", "zero_optimization.allgather_bucket_size", "allgather_size"),
    ),
    "bfloat16": Legacy(
        "bfloat16", "alias", "bf16 is read, and bfloat16 only when bf16 is absent",
        witness="bfloat16", functions=("get_bfloat16_config", "get_bfloat16_enabled"),
        targets=("bf16",),
    ),
    "zero_optimization.cpu_offload_use_pin_memory": Legacy(
        "zero_optimization.cpu_offload_use_pin_memory", "carry",
        "DeepSpeedZeroConfig.cpu_offload_use_pin_memory is deprecated with new_param 'offload_param or "
        "offload_optimizer' and set_new_param=False: the value is not carried",
        witness="zero_optimization.cpu_offload_use_pin_memory",
        targets=("zero_optimization.offload_optimizer.pin_memory", "zero_optimization.offload_param.pin_memory"),
    ),
    "optimizer.params.max_grad_norm": Legacy(
        "optimizer.params.max_grad_norm", "moved",
        "deepspeed.initialize raises on it among the optimizer's params (the engine's basic-optimizer setup) and "
        "names gradient_clipping, which clips by the same global norm", witness="optimizer",
        targets=("gradient_clipping",),
    ),
    "curriculum_learning": Legacy(
        "curriculum_learning", "section-map",
        "the legacy section went whole to CurriculumScheduler, the class the data sampler builds for each of "
        "curriculum_metrics (0.10.3 runtime/data_pipeline/data_sampling/data_sampler.py:87): one class reads "
        "min_difficulty, max_difficulty, schedule_type and schedule_config in both",
        witness="curriculum_learning",
        targets=("data_efficiency.enabled", "data_efficiency.data_sampling.enabled",
                 "data_efficiency.data_sampling.curriculum_learning.enabled",
                 "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics"),
        keys=(("enabled", "enabled"),
              ("min_difficulty", "curriculum_metrics.{type}.min_difficulty"),
              ("max_difficulty", "curriculum_metrics.{type}.max_difficulty"),
              ("schedule_type", "curriculum_metrics.{type}.schedule_type"),
              ("schedule_config", "curriculum_metrics.{type}.schedule_config")),
        name_key="curriculum_type",
        needs=("curriculum_metrics.{type}.difficulty_type", "curriculum_metrics.{type}.clustering_type"),
        lost="the legacy scheduler ran in the engine and passed curriculum_seqlen to the model's forward "
             "(0.10.3 runtime/engine.py:1779-1782, curriculum_type \"seqlen\"); the data sampler that reads the "
             "new section orders samples by a metric the data analyzer computed and needs, per metric, "
             "difficulty_type (\"value\" or \"percentile\"), clustering_type (\"single_cluster\" or "
             "\"schedule_based\") and, unless single_cluster, index_to_sample_path and index_to_metric_path "
             "(0.10.3 data_sampler.py:86-101)",
    ),
}
"""Legacy JSON path → how DeepSpeed converts it. Kinds:

* ``bool-section``: a section given as ``true``/``false``; rewritten to the dict DeepSpeed builds from it.
* ``alias``: an old spelling DeepSpeed reads only when the new one is absent; renamed (or deleted when both
  are given, since DeepSpeed then ignores it).
* ``carry``: a deprecated key DeepSpeed ignores although its replacement is named; its value is written to
  the replacements that exist in the file (the user's intent), and the change from what the old release did
  is reported.
* ``moved``: a key DeepSpeed rejects with a message naming its replacement; the value moves there.
* ``section-map``: a removed section whose replacement DeepSpeed names; values are mapped key by key where
  one DeepSpeed class reads both (:attr:`Legacy.keys`), and what is lost is reported.
"""


def located(rule: Legacy, snapshot: Snapshot) -> str:
    """``file:line (function)`` of the code ``rule`` follows, as ``snapshot``'s release has it; ``""`` if unknown."""
    path = rule.witness
    # most specific first: the catalog's own check, the rejection, the class a section goes to, the reader
    sources: list[Source | None] = []
    if path in snapshot.catalogs:
        sources.append(snapshot.catalogs[path].source)
    if path in snapshot.removed:
        sources.append(snapshot.removed[path].source)
    for source in sources:
        if source is not None:
            return _place(source)
    section = snapshot.sections.get(path)
    for receiver in section.passed_to if section is not None else []:
        if receiver.get("kind") == "class":
            return f"{receiver.get('file')}:{receiver.get('line')} ({receiver.get('to')})"
    record = snapshot.fields.get(path)
    return _place(record.source) if record is not None and record.source is not None else ""


def _place(source: Source) -> str:
    where = f"{source.file}:{source.line}" if source.line else source.file
    named = source.function or source.table
    return f"{where} ({named})" if named else where

def cite(rule: Legacy, snapshot: Snapshot, *others: Snapshot) -> str:
    """What the code does and where, in each release given (``snapshot`` first)."""
    places = []
    for release in (snapshot, *others):
        where = located(rule, release)
        if where and all(where not in p for p in places):
            places.append(f"{release.version} {where}")
    return rule.source + (f"; {'; '.join(places)}" if places else "")
