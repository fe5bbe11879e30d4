"""``check --trainer-args``: the HF Trainer with the user's own arguments, judged before the job runs.

:func:`dsfields.hf.trainer.trainer_run` predicts what transformers' Trainer and accelerate do with
the config and the flags (:mod:`dsfields.hf.arguments`). Its refusals become findings here, each
quoting what the real run raises: the mismatch list of ``trainer_config_finalize`` (one finding per key,
both values), accelerate's ``--mixed_precision`` clash, its "auto not found in kwargs", and DeepSpeed's
batch assertion on the values the Trainer filled in. Flags ``TrainingArguments`` lacks are warnings.
Where the run says more than the launch rules' generic HF verdicts, those verdicts are dropped.

Imports: ``dsfields.model`` and ``dsfields.check.findings`` only.
"""

from __future__ import annotations

from dsfields.check.findings import Finding, Kind, Severity
from dsfields.hf.arguments import mirror_note, suggest
from dsfields.hf.trainer import trainer_run
from dsfields.launch import catalogue
from dsfields.model.dotted import at_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HF_RULES = frozenset(rule.id for rule in catalogue.RULES if rule.raised_by != "deepspeed")
DEEPSPEED_RULES = frozenset(rule.id for rule in catalogue.RULES if rule.raised_by == "deepspeed")

TRAINER_RULES = {
    "hf-mirror": "what --trainer-args could not read or verify in the Trainer's release",
    "hf-accelerate-key": "an --accelerate-config key accelerate does not read",
    "hf-unknown-flag": "a --trainer-args flag TrainingArguments does not have",
    "hf-unknown-value": "a value the Trainer fills that dsfields cannot know before the run",
    "hf-mismatch": "a ds_config value that disagrees with the Trainer's flag (trainer_config_finalize)",
    "hf-refusal": "a refusal the Trainer or accelerate raises on this config and these flags",
    "hf-swap-refusal": "an offload device the Trainer's run refuses",
    "hf-batch": "the batch the Trainer fills in, checked by DeepSpeed's batch assertion",
    "hf-config": "a file that looks like an HF Trainer config (\"auto\" values) checked without --hf",
    "hf-fill-type": "a value the Trainer fills whose type DeepSpeed refuses",
    "hf-autotuning-exit": "autotuning.enabled: the engine is an autotuning trial that exits after end_profile_step + 1 "
                          "steps, before the Trainer's run ends",
}
"""The rules of this module (the ``rule`` of its findings) and what each says: their codes (DSFnnnnn) and the
long form ``dsfields explain DSFnnnnn`` prints come from here (a test reads every ``rule=`` of this module)."""


def _line(config: Any, path: str) -> int:
    return (config.line_of(tuple(path.split("."))) if path else None) or 1


def trainer_findings(config: Any, trainer: Any, accelerate: dict[str, Any], findings: list[Finding],
                     deepspeed_version: str | None = None) -> list[Finding]:
    """``findings`` (the static check with ``--hf``) with the Trainer run's verdict on ``config``."""
    data = config.data
    if not isinstance(data, dict):
        return findings
    run = trainer_run(data, trainer, accelerate, deepspeed=deepspeed_version)
    version = trainer.transformers_version
    out = [f for f in findings if f.rule not in HF_RULES and not _judged_on_default_fill(f, data, run)]
    note = mirror_note(trainer)
    if note:
        out.append(Finding("", Severity.INFO, Kind.LIMITATION, note, "", 1, rule="hf-mirror"))
    for line in run.notes:
        if "could not be" in line:  # a rule of the user's release not read, a class not verified: said, never dropped
            out.append(Finding("", Severity.INFO, Kind.LIMITATION, line, "", 1, rule="hf-mirror"))
    for line in accelerate.get("unknown", []):  # read against the pair's accelerate source (its launch, its plugin)
        out.append(Finding("", Severity.WARNING, Kind.LIMITATION, f"--accelerate-config: {line}", "", 1,
                           rule="hf-accelerate-key"))
    for flag in trainer.unknown:
        if not flag.startswith("--"):
            continue
        close = suggest(flag, trainer.fields)
        out.append(Finding("", Severity.WARNING, Kind.LIMITATION,
                           f"--trainer-args: {flag} is not a TrainingArguments flag (transformers {version}); "
                           "HfArgumentParser refuses it unless the script's own dataclasses take it",
                           f"did you mean {close}?" if close else "", 1, rule="hf-unknown-flag"))
    for path, why in sorted(run.unknown.items()):
        out.append(Finding(path, Severity.INFO, Kind.LIMITATION, f"the Trainer's value here is not known: {why}",
                           "", _line(config, path), rule="hf-unknown-value"))
    error = run.error
    if error is None:
        out += _batch(run, trainer, config)
        out += _filled_refusals(run, config, deepspeed_version)
        out += _swap_refusal(run, config, deepspeed_version)
        out += _autotuning_exit(run, trainer, config, deepspeed_version)
        return out
    text = str(error)
    if run.mismatches and error.raised_by == "transformers" and error.exc_type == "ValueError":
        for line in run.mismatches:
            path = line[len("- ds "):].split("=", 1)[0]
            out.append(Finding(path, Severity.ERROR, Kind.LAUNCH,
                               f"the HF Trainer refuses it (transformers {version} trainer_config_finalize raises "
                               f'ValueError "{text.splitlines()[0]} …"): {line}',
                               'write "auto", or the value of the argument', _line(config, path),
                               rule="hf-mismatch"))
        return out
    out.append(Finding(error.key or "", Severity.ERROR, Kind.LAUNCH,
                       f"under the HF Trainer with these arguments, {error.raised_by} raises {error.exc_type}: "
                       f'"{text}"', "", _line(config, error.key or ""), rule="hf-refusal"))
    return out


def _judged_on_default_fill(finding: Finding, data: dict[str, Any], run: Any) -> bool:
    """A launch rule's verdict on an ``"auto"`` key judged ``check --hf``'s way, on the value the pair fills with
    its *default* arguments (4.x: ``warmup_num_steps`` 0 without ``--warmup_steps``). With the user's own
    arguments the Trainer fills it from them (``run.origins``): that value is judged again by
    :func:`_filled_refusals`, and the default's verdict would be a false alarm (``--warmup_steps 5``)."""
    return (finding.kind is Kind.LAUNCH and finding.rule in DEEPSPEED_RULES and finding.path in run.origins
            and at_path(data, finding.path) == "auto")


def _filled_refusals(run: Any, config: Any, version: str | None) -> list[Finding]:
    """DeepSpeed's confirmed launch rules on the config the Trainer hands it, where the refused value is one the
    HF layers put there (a file's own literals are the static check's): e.g. transformers 4.x fills an "auto"
    ``warmup_num_steps`` with 0 without warmup, which DeepSpeed 0.19.6+ refuses when it builds the scheduler."""
    if version is None or run.config is None:
        return []
    active = catalogue.confirmed(catalogue.load_launch(version))
    rules = tuple(r for r in catalogue.RULES if r.id in active and r.raised_by == "deepspeed")
    fired = catalogue.evaluate(run.config, "plain", run.optimizer != "config", rules)
    out = []
    for rule, key in fired:
        if key not in run.origins:
            continue
        entry = active[rule.id]
        value = at_path(run.config, key)
        out.append(Finding(key, Severity.ERROR, Kind.LAUNCH,
                           f"{run.origins[key]} ({value!r}), then deepspeed.initialize raises "
                           f"{entry.get('exc_type') or 'an error'}: \"{entry.get('message') or rule.message}\" "
                           f"(DeepSpeed {version}, {rule.source})", rule.fix, _line(config, key), rule=rule.id))
    return out


def _autotuning_exit(run: Any, trainer: Any, config: Any, version: str | None) -> list[Finding]:
    """``autotuning.enabled`` outside the autotuner: DeepSpeed's engine is then one of the autotuner's trial jobs,
    which measures the steps up to ``end_profile_step``, writes its metrics and calls ``exit()`` when
    ``global_steps == end_profile_step + 1`` (``DeepSpeedEngine._autotuning_exit``, read in 0.19.8's
    ``runtime/engine.py``; the real Trainer ends there, seen in bench/hf_trainer_differential.py). With the
    Trainer's step count known, a run that long never finishes. The field and its default are the release's
    (its snapshot); without them (a release with no autotuning), nothing is said."""
    from dsfields.hf.trainer import training_steps
    from dsfields.model.store import load_indexed

    section = (run.config or {}).get("autotuning")
    if version is None or not isinstance(section, dict) or section.get("enabled") is not True:
        return []
    field = load_indexed(version).fields.get("autotuning.end_profile_step")
    end = section.get("end_profile_step", field.default if field is not None else None)
    steps = training_steps(trainer)
    if field is None or not isinstance(end, int) or isinstance(end, bool) or steps is None or steps <= end:
        return []
    key = "autotuning.enabled"
    return [Finding(key, Severity.ERROR, Kind.LAUNCH,
                    f"with autotuning.enabled the engine runs as an autotuning trial: after step {end + 1} "
                    f"(end_profile_step {end} + 1) it writes its metrics and ends the process (exit(), "
                    f"DeepSpeedEngine._autotuning_exit, DeepSpeed {version}); the Trainer's {steps} steps never "
                    "finish", "remove the autotuning section to train (it is for `deepspeed --autotuning run`)",
                    _line(config, key), rule="hf-autotuning-exit")]


def _swap_refusal(run: Any, config: Any, version: str | None) -> list[Finding]:
    """accelerate's ZeRO-Offload swap builds the DeepSpeed CPU optimizer with keywords of its own (1.2+:
    ``adamw_mode`` for every class): one its ``__init__`` does not take is a TypeError at ``prepare``. The class's
    parameters are DeepSpeed's, from its snapshot's optimizer catalog (``optimizers.names``)."""
    if version is None or run.optimizer != "ds_cpu_adam" or not run.swap_kwargs or not run.optimizer_class:
        return []
    from dsfields.model.store import load_indexed

    catalog = (load_indexed(version).raw.get("optimizers") or {}).get("names") or {}
    name = run.optimizer_class.rpartition(".")[2]
    record = next((c for entry in catalog.values() if isinstance(entry, dict) for c in entry.get("classes") or []
                   if isinstance(c, dict) and str(c.get("class", "")).rpartition(".")[2] == name), None)
    if record is None or record.get("var_keyword") or not isinstance(record.get("params"), dict):
        return []
    refused = [k for k in run.swap_kwargs if k not in record["params"]]
    if not refused:
        return []
    source = (record.get("source") or {}).get("file", "")
    return [Finding("zero_optimization.offload_optimizer.device", Severity.ERROR, Kind.LAUNCH,
                    f"under ZeRO-Offload accelerate swaps the Trainer's optimizer for {name} "
                    f"({run.built_from.get('swap', 'accelerate')}) passing {refused[0]}="
                    f"{run.swap_kwargs[refused[0]]!r}, which {name}.__init__ does not take (DeepSpeed {version} "
                    f"{source}): TypeError \"{name}.__init__() got an unexpected keyword argument "
                    f"'{refused[0]}'\"", "use another --optim (adamw_torch), or no offload_optimizer",
                    _line(config, "zero_optimization.offload_optimizer.device"), rule="hf-swap-refusal")]


def _batch(run: Any, trainer: Any, config: Any) -> list[Finding]:
    """DeepSpeedConfig._batch_assertion on the batch triple as the Trainer left it: each size greater than 0 (the
    Trainer fills ``--per_device_train_batch_size 0`` or ``--gradient_accumulation_steps -1`` as given), then the
    product (:func:`dsfields.model.batch.assertion`)."""
    from dsfields.model.batch import assertion as batch_assertion

    cfg = run.config or {}
    tbs, micro, gas = (cfg.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                             "gradient_accumulation_steps"))
    numbers = [v for v in (tbs, micro, gas) if isinstance(v, int) and not isinstance(v, bool)]
    failed = batch_assertion(tbs, micro, gas, trainer.world_size) if len(numbers) == 3 else None
    if failed is None:
        return []
    key, words = failed
    if key == "train_batch_size" and (micro <= 0 or gas <= 0):  # their product: the factor is the cause
        key = "train_micro_batch_size_per_gpu" if micro <= 0 else "gradient_accumulation_steps"
    origin = (run.origins or {}).get(key)
    if key != "train_batch_size" and origin:
        return [Finding(key, Severity.ERROR, Kind.LAUNCH,
                        f"{origin} ({cfg[key]!r}), then DeepSpeed raises AssertionError: \"{words}\"",
                        "give the Trainer a batch of at least 1", _line(config, key), rule="hf-batch")]
    return [Finding(key, Severity.ERROR, Kind.LAUNCH,
                    f'with these Trainer arguments DeepSpeed raises AssertionError: "{words}"',
                    'write "auto" for the batch keys', _line(config, key), rule="hf-batch")]


def hf_hint(config: Any, checker: Any, findings: list[Finding]) -> list[Finding]:
    """Without ``--hf``: one note when the file looks written for the HF Trainer (``"auto"`` where it fills),
    saying what ``--hf`` would change. The checker's fill list is asked only of a file with ``"auto"`` values."""
    autos = _auto_paths(config.data)
    if not autos:
        return findings
    fills = checker.hf_fills
    version = checker.hf_version
    filled = [p for p in autos if p in (fills or {})]
    if not filled:
        return findings
    judged = [f for f in findings if f.kind is Kind.AUTO and f.path in filled]
    errors = sum(1 for f in judged if f.severity is Severity.ERROR)
    change = (f"{len(judged)} of the \"auto\" findings below ({errors} errors) would go" if judged else
              "nothing below would change")
    shown = ", ".join(filled[:4]) + (f", … ({len(filled)} in all)" if len(filled) > 4 else "")
    return [*findings, Finding("", Severity.INFO, Kind.AUTO,
                               f'looks like an HF Trainer config: {len(autos)} "auto" values, {len(filled)} of them '
                               f"filled by the Trainer (transformers {version}): {shown}. With --hf they are "
                               f"judged as filled: {change}; --trainer-args=\"...\" also checks them against your "
                               "Trainer flags", "add --hf if the Trainer runs this file", 1, rule="hf-config")]


def fill_type_findings(checker: Any, config: Any, options: Any, findings: list[Finding]) -> list[Finding]:
    """``--hf``: the values the chosen pair's Trainer and accelerate fill into ``"auto"`` judged against this
    release's fields, as DeepSpeed will judge them (issue 42: transformers <= 4.44 fills
    ``stage3_prefetch_bucket_size`` with the float 0.9 × hidden_size², which DeepSpeed >= 0.15 refuses).

    The fills come from :func:`dsfields.hf.trainer.hf_plan` (the pair's extracted programs); the verdict on
    each filled value is the static check's own on the planned config, so the types are the release's facts."""
    data = config.data
    if not options.hf or not isinstance(data, dict):
        return findings
    import json

    from dsfields.configfile import ConfigFile
    from dsfields.hf.trainer import HIDDEN_SIZE, PlanError, hf_plan

    try:
        plan = hf_plan(data, pair=options.hf_pair)
    except (PlanError, ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):
        return findings  # the HF layers' refusal is reported by the launch rules
    filled = {path for path in _auto_paths(data) if at_path(plan.config, path) not in ("auto", None)}
    if not filled:
        return findings
    from dsfields.check.findings import Options

    planned = ConfigFile("<hf fills>", plan.config, "json")
    judged = checker.check(planned, Options())
    pair = options.hf_pair
    who = f"transformers {pair[0]} / accelerate {pair[1]}" if pair else "the HF Trainer"
    out = list(findings)
    for found in judged:
        if found.path not in filled or found.severity is not Severity.ERROR or found.kind not in (
                Kind.WRONG_TYPE, Kind.CONSTRAINT, Kind.CHOICE, Kind.COERCED):
            continue
        value = json.dumps(at_path(plan.config, found.path), default=str)
        out.append(Finding(found.path, Severity.ERROR, Kind.AUTO,
                           f'under the HF Trainer, {who} fills "auto" with {value} (at the hidden size {HIDDEN_SIZE} '
                           f"this check assumes), which DeepSpeed {checker.version} refuses: {found.message}",
                           f'write the value yourself instead of "auto", or use a transformers release whose fill '
                           f"DeepSpeed {checker.version} takes (--hf-version)", _line(config, found.path),
                           rule="hf-fill-type"))
    return out


def _auto_paths(data: Any, prefix: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if value == "auto":
                out.append(path)
            else:
                out += _auto_paths(value, path)
    return out
