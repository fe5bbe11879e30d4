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


@dataclass(frozen=True)
class Legacy:
    """One legacy form and what DeepSpeed makes of it."""

    path: str
    """The legacy JSON path."""
    kind: str
    """``"bool-section"``, ``"alias"``, ``"carry"``, ``"moved"`` or ``"section-map"`` (see :data:`LEGACY`)."""
    source: str
    """The DeepSpeed code this conversion follows (``file:function`` or ``file:line``, in the release named)."""
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
        "deepspeed/runtime/zero/config.py:read_zero_config_deprecated (0.8.0 … 0.19.8): "
        "stage = 1 if the value else 0; at stage 1 allgather_bucket_size = allgather_size (default 5e8)",
        targets=("zero_optimization.stage", "zero_optimization.allgather_bucket_size", "allgather_size"),
    ),
    "bfloat16": Legacy(
        "bfloat16", "alias",
        "deepspeed/runtime/precision_config.py:get_bfloat16_config (0.19.8; runtime/config.py:get_bfloat16_enabled "
        "before): bf16 is read, and bfloat16 only when bf16 is absent",
        targets=("bf16",),
    ),
    "zero_optimization.cpu_offload_use_pin_memory": Legacy(
        "zero_optimization.cpu_offload_use_pin_memory", "carry",
        "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.cpu_offload_use_pin_memory: deprecated with "
        "new_param 'offload_param or offload_optimizer' and set_new_param=False (the value is not carried)",
        targets=("zero_optimization.offload_optimizer.pin_memory", "zero_optimization.offload_param.pin_memory"),
    ),
    "optimizer.params.max_grad_norm": Legacy(
        "optimizer.params.max_grad_norm", "moved",
        "deepspeed/runtime/config.py DeepSpeedConfig optimizer params check (the snapshot's optimizers "
        "rejected_params): DeepSpeed raises on it and names gradient_clipping, which clips by the same global norm",
        targets=("gradient_clipping",),
    ),
    "curriculum_learning": Legacy(
        "curriculum_learning", "section-map",
        "0.10.3 deepspeed/runtime/engine.py:1624 CurriculumScheduler(curriculum_params_legacy) and "
        "runtime/data_pipeline/data_sampling/data_sampler.py:87 CurriculumScheduler(curriculum_metrics[metric]): "
        "one scheduler class reads min_difficulty, max_difficulty, schedule_type and schedule_config in both; "
        "0.19.8 runtime/config.py _REMOVED_TOP_LEVEL_CONFIG_KEYS names "
        "data_efficiency.data_sampling.curriculum_learning",
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
