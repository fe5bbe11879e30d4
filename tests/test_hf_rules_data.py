"""The committed HF rule snapshots (generated/hf/): complete, consistent with the 5.24.0 mirror, and the
release differences a user of another transformers/accelerate gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_configs

from dsfields.cli import main
from dsfields.hf.arguments import arg_names, hf_versions, load_hf_snapshot, load_rules, parse_trainer_args
from dsfields.hf.pair_rules import accelerate_versions, load_accelerate_snapshot
from dsfields.hf.trainer import HIDDEN_KEYS, MISMATCH_HEAD, MISMATCH_TAIL, trainer_run

pytestmark = pytest.mark.data

ZERO3 = {"train_micro_batch_size_per_gpu": "auto", "train_batch_size": "auto", "gradient_accumulation_steps": "auto",
         "fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"},
         "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": "auto"}},
         "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "auto"}}


def _run(config, words, version, accelerate=None):
    snap = load_hf_snapshot(version)
    args = parse_trainer_args(words, snap, hidden_size=10)
    args.rules = load_rules(snap, accelerate, explicit=True)
    return trainer_run(config, args, {})


def test_every_release_of_the_window_is_snapshotted_and_read_whole():
    versions = hf_versions()
    minors = {tuple(map(int, v.split(".")[:2])) for v in versions}
    assert {(4, m) for m in range(36, 58)} <= minors and {(5, m) for m in range(0, 25)} <= minors
    for version in versions:
        snap = load_hf_snapshot(version)
        assert snap["rules"]["unread"] == [], version
        assert snap["rules"]["fills"] and snap["rules"]["get_warmup_steps"], version
        assert snap["release"]["accelerate_paired"] in accelerate_versions(), version
    for version in accelerate_versions():
        rules = load_accelerate_snapshot(version)["rules"]
        assert rules["unread"] == [] and rules["plugin_to_config"] and rules["mixed_precision"]["clash"], version


def test_the_mirror_constants_are_the_pinned_pairs_rules():
    rules = load_rules(load_hf_snapshot("5.24.0"), "1.15.0", explicit=True)
    assert rules.mismatch_head_tail() == (MISMATCH_HEAD, MISMATCH_TAIL)
    assert tuple(rules.hidden_size_keys()) == HIDDEN_KEYS
    from dsfields.hf.arguments import IGNORED_WITH_FILE

    assert tuple(rules.ignored_with_file()) == IGNORED_WITH_FILE


@pytest.mark.parametrize("words", ["--max_steps 7", "--bf16 --max_steps 7 --learning_rate 1e-3",
                                   "--fp16 --per_device_train_batch_size 3 --gradient_accumulation_steps 2",
                                   "--max_grad_norm 0.3 --warmup_steps 5 --save_on_each_node"])
def test_the_snapshot_rules_give_what_the_verified_mirror_gives_for_5_24(words):
    """The real-Trainer differential checks the run for 5.24.0/1.15.0; the rules read from the snapshot must give
    the same run as the mirror spelt out in code, on every corpus config."""
    snap = load_hf_snapshot("5.24.0")
    compared = 0
    for path in corpus_configs():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(config, dict):
            continue
        plain = parse_trainer_args(words, snap, hidden_size=16)
        ruled = parse_trainer_args(words, snap, hidden_size=16)
        ruled.rules = load_rules(snap, "1.15.0", explicit=True)
        a, b = trainer_run(config, plain, {}), trainer_run(config, ruled, {})
        assert (a.config, str(a.error), a.precision, a.optimizer_class) == (b.config, str(b.error), b.precision,
                                                                            b.optimizer_class), path.name
        assert not [n for n in b.notes if "could not" in n], path.name
        compared += 1
    assert compared >= 60


def test_release_differences_are_followed():
    # 4.36-4.44 fill stage3_prefetch_bucket_size with 0.9 * h * h (a float), 4.45 on with int(...)
    assert _run(ZERO3, "--max_steps 10", "4.44.2").config["zero_optimization"]["stage3_prefetch_bucket_size"] == 90.0
    assert _run(ZERO3, "--max_steps 10", "4.45.2").config["zero_optimization"]["stage3_prefetch_bucket_size"] == 90
    # 4.x warms up over warmup_ratio of the steps; 5.x has no --warmup_ratio and floors the count at 1
    assert _run(ZERO3, "--max_steps 40 --warmup_ratio 0.25", "4.57.6").config["scheduler"]["params"][
        "warmup_num_steps"] == 10
    assert _run(ZERO3, "--max_steps 40", "4.57.6").config["scheduler"]["params"]["warmup_num_steps"] == 0
    assert _run(ZERO3, "--max_steps 40", "5.24.0").config["scheduler"]["params"]["warmup_num_steps"] == 1
    # an apex "amp" section: filled by 4.x's Trainer, left "auto" by 5.x, where accelerate refuses it
    amp = {**ZERO3, "amp": {"enabled": "auto", "opt_level": "auto"}}
    assert _run(amp, "--max_steps 4", "4.57.6").config["amp"] == {"enabled": False, "opt_level": "O1"}
    refused = _run(amp, "--max_steps 4", "5.0.0").error
    assert refused is not None and str(refused).startswith("`amp.enabled` not found in kwargs")


def test_diff_hf_shows_rule_changes(capsys):
    assert main(["diff", "--hf", "4.57.6", "5.0.0"]) == 0
    out = capsys.readouterr().out
    assert "Trainer fill removed: amp.enabled" in out
    assert 'get_warmup_steps: "self.warmup_steps if self.warmup_steps > 0' in out
    assert main(["diff", "--hf", "5.0.0,1.12.0", "5.24.0,1.15.0", "--format", "json"]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert any("warmup_num_steps expression" in c and "max(1," in c for c in changes)
    assert any("mixed precision adds section added: communication_data_type" in c for c in changes)


def test_accelerate_config_keys_are_judged_by_accelerates_source(tmp_path, capsys):
    yaml = tmp_path / "acc.yaml"
    yaml.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stag: 3\n  offload_param_nvme_path: /nvme\n"
                    "  zero3_init_flag: true\nnum_proceses: 2\n", encoding="utf-8")
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}}))
    main(["check", str(config), "--accelerate-config", str(yaml), "--trainer-args=--max_steps 1",
                 "--hf-version", "5.24.0,1.15.0"])
    out = capsys.readouterr().out
    assert "deepspeed_config.zero_stag" in out and "did you mean zero_stage?" in out
    assert "offload_param_nvme_path: accelerate 1.15.0's launch never passes it on" in out
    assert "num_proceses: not a key of accelerate 1.15.0's config file" in out and "zero3_init_flag" not in out


def test_estimate_takes_the_trainers_micro_batch_and_gradient_checkpointing(tmp_path, capsys):
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                                  "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}))
    common = ["estimate", str(config), "--params", "1.3B", "--hidden-size", "2048", "--layers", "24", "--seq-len",
              "1024", "--hf-version", "5.24.0,1.15.0"]
    assert main([*common, "--trainer-args=--per_device_train_batch_size 3 --bf16 --gradient_checkpointing true"]) == 0
    out = capsys.readouterr().out
    assert "micro batch 3" in out and "1024·3·2048·34" in out
    assert "--gradient_checkpointing: activations counted with checkpointing on" in out
    assert "checkpointing: off → on" not in out  # already on: no longer a knob
    assert main([*common, "--trainer-args=--per_device_train_batch_size 3"]) == 0
    out = capsys.readouterr().out
    # issue 40: the Trainer's own flag, not the ds_config section that does nothing for an HF model
    assert "--gradient_checkpointing: off → on" in out and "\n   1. activation_checkpointing: off → on" not in out
    assert "cpu_checkpointing" not in out


def test_an_installed_pair_without_a_snapshot_is_said(monkeypatch, capsys):
    from dsfields.hf import arguments as hf_args

    monkeypatch.setattr(hf_args, "installed_transformers_version", lambda: "4.99.0")
    monkeypatch.setattr(hf_args, "installed_accelerate_version", lambda: "1.15.0")
    newest = hf_versions()[-1]
    rules = load_rules(load_hf_snapshot(newest))
    assert rules.notes[0].startswith(f"the installed transformers 4.99.0 has no HF snapshot: the rules of transformers "
                                     f"{newest} are used")
    monkeypatch.setattr(hf_args, "installed_transformers_version", lambda: "5.24.0")
    monkeypatch.setattr(hf_args, "installed_accelerate_version", lambda: "1.99.0")
    rules = load_rules(load_hf_snapshot("5.24.0"))
    paired = load_hf_snapshot("5.24.0")["release"]["accelerate_paired"]
    assert rules.accelerate_version == paired
    assert rules.notes == [f"the installed accelerate 1.99.0 has no HF snapshot: accelerate {paired}'s rules are used"]
    assert main(["diff", "--hf", "5.24.0,9.9.9", "5.25.0"]) == 2
    assert "no HF snapshot for accelerate 9.9.9" in capsys.readouterr().err


def test_a_value_the_trainer_fills_is_judged_by_deepspeed_too(tmp_path, capsys):
    """Seen with the real transformers 4.57.6 / accelerate 1.10.1 / DeepSpeed 0.19.8: an "auto" warmup_num_steps
    without warmup is filled with 0 (4.x has no max(1, .)) and DeepSpeed refuses it building the scheduler;
    5.18+ fills 1 and it trains."""
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2},
                                  "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
                                  "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": "auto"}}}))
    common = ["check", str(config), "--trainer-args=--max_steps 1", "--version", "0.19.8"]
    assert main([*common, "--hf-version", "4.57.6,1.10.1"]) == 1
    out = capsys.readouterr().out
    assert "filled by the Trainer from --warmup_steps default (0), then deepspeed.initialize raises ValueError" in out
    assert main([*common, "--hf-version", "5.24.0,1.15.0"]) == 0


def test_the_programs_of_the_pinned_pair_give_the_verified_mirrors_answers():
    """The optimizer, scheduler and steps the snapshot's programs compute for 5.24.0 / 1.15.0 are the ones the
    mirror spells out (checked against the real Trainer by the differential)."""
    from dsfields.hf.trainer import CPU_SWAP, TRAINER_OPTIMIZERS, TRAINER_SCHEDULERS

    snap = load_hf_snapshot("5.24.0")
    rules = load_rules(snap, "1.15.0", explicit=True)
    names = lambda words, **kw: arg_names(parse_trainer_args(words, snap, **kw))  # noqa: E731
    for optim, built in TRAINER_OPTIMIZERS.items():
        assert rules.optimizer_class(names(f"--optim {optim}"))[0] == built, optim
    for kind in snap["training_arguments"]["fields"]["lr_scheduler_type"]["choices"]:
        expected = TRAINER_SCHEDULERS.get(kind, "torch.optim.lr_scheduler.LambdaLR")
        if kind != "greedy":  # GreedyLR (5.4+): the mirror's table never had it
            assert rules.scheduler_class(names(f"--lr_scheduler_type {kind}"))[0] == expected, kind
    for built, swapped in {"torch.optim.AdamW": "deepspeed.ops.adam.DeepSpeedCPUAdam", **CPU_SWAP}.items():
        assert rules.cpu_optimizer(built, "0.19.8")[0] == swapped
    for words, size in (("--max_steps 9", None), ("--num_train_epochs 2", 100),
                        ("--gradient_accumulation_steps 3 --per_device_train_batch_size 4", 50)):
        args = parse_trainer_args(words, snap, dataset_size=size)
        batches = None if size is None else -(-size // args.values["per_device_train_batch_size"])
        assert rules.training_steps(arg_names(args), batches) == args.num_training_steps(), words


def test_release_differences_of_the_programs():
    offload = {**ZERO3, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    offload.pop("scheduler")
    # accelerate 1.2 swaps torch's Adagrad for DeepSpeedCPUAdagrad; before, always DeepSpeedCPUAdam
    new = _run(offload, "--max_steps 4 --optim adagrad", "4.47.1", "1.2.1")
    old = _run(offload, "--max_steps 4 --optim adagrad", "4.46.3", "1.1.1")
    assert new.optimizer_class == "deepspeed.ops.adagrad.DeepSpeedCPUAdagrad", new.notes
    assert old.optimizer_class == "deepspeed.ops.adam.DeepSpeedCPUAdam", old.notes
    # 4.52 counts a partial accumulation window as an update: ceil(10 / 4) x 3 epochs, before floor(10 / 4) x 3
    sched = {**ZERO3, "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto"}}}
    words = "--gradient_accumulation_steps 4 --per_device_train_batch_size 1"

    def steps(version):
        snap = load_hf_snapshot(version)
        args = parse_trainer_args(words, snap, hidden_size=10, dataset_size=10)
        args.rules = load_rules(snap, None, explicit=True)
        return trainer_run(sched, args, {}).config["scheduler"]["params"]["total_num_steps"]

    assert (steps("4.51.3"), steps("4.52.4")) == (6, 9)
    # TrainingArguments' own checks, each release's message
    ratio = _run(ZERO3, "--max_steps 4 --warmup_ratio 1.5", "4.57.6")
    assert str(ratio.error) == "warmup_ratio must lie in range [0,1]"
    assert str(_run(ZERO3, "--max_steps 4 --warmup_steps -1", "5.24.0").error) == (
        "Got warmup_steps = -1.0, Expected value warmup_steps >= 0")
    assert str(_run(ZERO3, "--max_steps 4 --fp16 --bf16", "4.36.2").error) == (
        "At most one of fp16 and bf16 can be True, but not both")
    assert _run(ZERO3, "--max_steps 4 --bf16", "4.36.2").error is None  # the bf16/gpu check needs the machine
    # the optimizer --optim builds: adamw_hf (transformers' own AdamW) until 4.49
    no_opt = {k: v for k, v in offload.items()}
    no_opt["zero_optimization"] = {"stage": 2}
    assert _run(no_opt, "--max_steps 4 --optim adamw_hf", "4.49.0").optimizer_class == \
        "transformers.optimization.AdamW"


def test_diff_hf_shows_what_the_programs_answer(capsys):
    assert main(["diff", "--hf", "4.51.3,1.1.1", "4.52.4,1.2.1"]) == 0
    out = capsys.readouterr().out
    assert "num_training_steps (--gradient_accumulation_steps 4 --num_train_epochs 3, 10 batches): 6 → 9" in out
    assert ('ZeRO-Offload swaps torch.optim.Adagrad for: "deepspeed.ops.adam.DeepSpeedCPUAdam" → '
            '"deepspeed.ops.adagrad.DeepSpeedCPUAdagrad"') in out


def _plan(function, config, **kw):
    from dsfields.hf.trainer import PlanError

    try:
        plan = function(config, **kw)
    except PlanError as exc:
        return ("refused", exc.raised_by, exc.exc_type, str(exc), exc.key)
    return ("plan", plan.config, plan.optimizer, plan.scheduler)


def _corpus():
    for path in corpus_configs():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(config, dict):
            yield path, config


@pytest.mark.parametrize("pair", [("4.36.2", "0.25.0"), ("4.57.6", "1.12.0"), ("5.17.0", "1.15.0"),
                                  ("5.24.0", "1.15.0")])
def test_the_launch_plan_is_what_the_trainer_run_gives_with_the_matching_flags(pair):
    """One source of truth: hf_plan (the launch witness's and check's launch rules' plan) is the pair's programs
    evaluated by trainer_run, so on every corpus config the user actually passing the flags it assumes
    (--learning_rate 5e-5, --per_device_train_batch_size 1, --max_steps 100, --fp16/--bf16 where the config
    enables it) gets the same final config from ``check/resolve --trainer-args``, where no literal mismatches."""
    from dsfields.hf.trainer import HIDDEN_SIZE, hf_plan

    snap = load_hf_snapshot(pair[0])
    rules = load_rules(snap, pair[1], explicit=True)
    same = 0
    for path, config in _corpus():
        planned = _plan(hf_plan, config, pair=pair)
        words = "--learning_rate 5e-5 --per_device_train_batch_size 1 --max_steps 100"
        fp16 = (config.get("fp16") or {}).get("enabled") is True if isinstance(config.get("fp16"), dict) else False
        bf16 = not fp16 and any(isinstance(config.get(k), dict) and config[k].get("enabled") is True
                                for k in ("bf16", "bfloat16"))
        words += " --fp16" * fp16 + " --bf16" * bf16
        args = parse_trainer_args(words, snap, world_size=1, hidden_size=HIDDEN_SIZE, hidden_size_from="the model")
        args.rules = rules
        run = trainer_run(config, args, {}, mesh_check=False)
        if run.mismatches or run.error is not None and "mismatch" in str(run.error):
            continue  # a literal the assumed flags do not equal: the plan takes the user's flags to match it
        if run.error is not None:
            assert planned[:5] == ("refused", run.error.raised_by, run.error.exc_type, str(run.error),
                                   run.error.key), path.name
        else:
            from dsfields.hf.trainer import at_one_rank

            assert planned == ("plan", at_one_rank(run.config), run.optimizer, run.scheduler), path.name
        same += 1
    assert same >= 30  # 33 of the 66 corpus configs on 4.36.2 (the rest have literals the flags do not equal)


def test_every_launch_record_was_made_with_the_witness_pairs_programs():
    """The committed launch.json files confirm the HF rules on hf_plan's default pair, which has its snapshots."""
    from dsfields.hf.trainer import WITNESS_PAIR
    from dsfields.launch.catalogue import load_launch
    from dsfields.model.store import available_versions

    assert WITNESS_PAIR[0] in hf_versions() and WITNESS_PAIR[1] in accelerate_versions()
    records = [load_launch(v) for v in available_versions()]
    assert len([r for r in records if r]) >= 70
    for record in filter(None, records):
        assert record["environment"]["hf_layers"].startswith(
            f"transformers {WITNESS_PAIR[0]} / accelerate {WITNESS_PAIR[1]},"), record["deepspeed_version"]


def test_check_hf_judges_the_launch_with_the_chosen_pairs_programs(capsys):
    """Releases before 5.18 fill an "auto" warmup_num_steps with 0 when no --warmup_steps is given (5.18+:
    max(1, ...)), which DeepSpeed 0.19.8's scheduler refuses (seen running the real 4.57.6 Trainer,
    bench/hf_release_rules.py): check --hf says so for the chosen --hf-version only, naming who filled it."""
    config = str(CORPUS / "060_FlagOpen_FlagEmbedding_ds_stage1.json")
    assert json.loads(Path(config).read_text())["scheduler"]["params"]["warmup_num_steps"] == "auto"
    assert main(["check", config, "--hf", "--version", "0.19.8", "--hf-version", "4.57.6"]) == 1
    out = capsys.readouterr().out
    assert "warmup_num_steps must be a positive integer, got 0" in out and "scheduler-invalid-args]" in out
    assert 'its "auto" is filled with 0 by transformers 4.57.6 / accelerate' in out
    assert main(["check", config, "--hf", "--version", "0.19.8", "--hf-version", "4.57.6", "--lang", "zh"]) == 1
    out = capsys.readouterr().out
    assert '其中的 "auto" 由 transformers 4.57.6 / accelerate' in out and "is filled with" not in out
    assert main(["check", config, "--hf", "--version", "0.19.8", "--hf-version", "5.24.0"]) == 0
    assert "scheduler-invalid-args]" not in capsys.readouterr().out
    # the same refusal from the user's own (default) arguments, through trainer_run's launch rules
    assert main(["check", config, "--version", "0.19.8", "--hf-version", "4.57.6", "--trainer-args=--max_steps 9"]) == 1
    assert "warmup_num_steps must be a positive integer, got 0" in capsys.readouterr().out


def test_hf_plan_follows_another_pair():
    from dsfields.hf.trainer import hf_plan

    config = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size":
                                                                         "auto"}}
    # 4.44's Trainer fills 0.9 * h * h unrounded, 5.24's int(...)
    assert _plan(hf_plan, config, pair=("4.44.2", "0.33.0"))[1]["zero_optimization"][
        "stage3_prefetch_bucket_size"] == 57.6
    assert _plan(hf_plan, config, pair=("5.24.0", "1.15.0"))[1]["zero_optimization"][
        "stage3_prefetch_bucket_size"] == 57


def test_the_zero_offload_swap_of_adagrad_is_refused_where_accelerate_passes_adamw_mode(tmp_path, capsys):
    """Seen with the real transformers 5.24.0 / accelerate 1.15.0 and 4.51.3 / 1.6.0 (bench/hf_release_rules.py):
    accelerate 1.2+ swaps Adagrad for DeepSpeedCPUAdagrad but passes it adamw_mode, which it does not take."""
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {
        "stage": 2, "offload_optimizer": {"device": "cpu"}}}))
    words = "--trainer-args=--optim adagrad --max_steps 2"
    assert main(["check", str(config), words, "--hf-version", "5.24.0,1.15.0"]) == 1
    out = capsys.readouterr().out
    assert "unexpected keyword argument 'adamw_mode'" in out and "hf-swap-refusal]" in out
    assert main(["check", str(config), words, "--hf-version", "4.46.3,1.1.1"]) == 0  # inline DeepSpeedCPUAdam
    assert main(["check", str(config), "--trainer-args=--max_steps 2", "--hf-version", "5.24.0,1.15.0"]) == 0


def test_where_the_optimizer_and_scheduler_come_from_is_the_same_in_every_release():
    """trainer_run spells out deepspeed_optim_sched's choice (DummyOptim when the config has an optimizer, else the
    Trainer's; DummyScheduler, its callable, or the Trainer's own scheduler): every snapshotted release's program
    must make the same choice under the same tests. Its refusals differ (``--adafactor`` until 4.57), and where the
    Trainer's own scheduler is built: inside it until 5.0, after it from 5.1; DeepSpeed is handed it in neither
    (accelerate passes only DeepSpeed's own scheduler classes), so both are ``run.scheduler == "none"``."""
    shapes, inside = set(), []
    for version in hf_versions():
        programs = load_hf_snapshot(version)["rules"]["programs"]["optim_sched"]["programs"]
        steps = [s for s in programs["deepspeed_optim_sched"]["steps"] if s["op"] == "assign"
                 and s["targets"][0] in ("optimizer", "lr_scheduler", "config.zero_allow_untested_optimizer")]
        if any(s["value"].startswith("trainer.create_scheduler(") for s in steps):
            inside.append(version)
        shapes.add(tuple((tuple(s["targets"]), s["value"], tuple(s["when"])) for s in steps
                         if not s["value"].startswith("trainer.create_scheduler(")))
    assert len(shapes) == 1
    assert inside == [v for v in hf_versions() if tuple(map(int, v.split("."))) <= (5, 0, 0)]
    choice = {(t[0], v): w for t, v, w in next(iter(shapes))}
    assert choice[("optimizer", "DummyOptim(params=model_parameters)")] == ("'optimizer' in config",)
    assert choice[("optimizer", "trainer.create_optimizer()")] == ("not ('optimizer' in config)",)
    assert choice[("lr_scheduler", "DummyScheduler(optimizer)")] == ("'scheduler' in config",)
    assert choice[("lr_scheduler", "DummyScheduler(optimizer, lr_scheduler_callable=_lr_scheduler_callable)")] == (
        "not ('scheduler' in config)", "isinstance(optimizer, DummyOptim)")


def test_the_class_deepspeed_builds_for_the_configs_optimizer_is_read_per_release(tmp_path, capsys):
    """A type whose branch of _configure_basic_optimizer builds one class is that class, from the release's own
    catalogue (OneBitAdam in 0.14.4, mup's MuAdam, FusedLamb); which of several (FusedAdam, DeepSpeedCPUAdam under
    offload, ...) is read by hand from 0.19.8 and is said as not verified for another release, never silently."""
    from dsfields.hf.trainer import OPTIMIZER_CHOICE_READ_IN

    assert OPTIMIZER_CHOICE_READ_IN == "0.19.8"  # the release the real-Trainer differential runs (its values agree)
    snap = load_hf_snapshot("5.24.0")

    def built(optimizer, deepspeed, zero=None):
        config = {"train_micro_batch_size_per_gpu": 1, "optimizer": optimizer,
                  "zero_optimization": zero or {"stage": 1}}
        args = parse_trainer_args("--per_device_train_batch_size 1 --max_steps 2", snap, hidden_size=10)
        args.rules = load_rules(snap, "1.15.0", explicit=True)
        run = trainer_run(config, args, {}, deepspeed=deepspeed)
        assert run.error is None, run.error
        return run.optimizer_class, [n for n in run.notes if "could not be verified" in n]

    assert built({"type": "OneBitAdam", "params": {}}, "0.14.4") == (
        "deepspeed.runtime.fp16.onebit.adam.OnebitAdam", [])
    assert built({"type": "MuAdam", "params": {}}, "0.19.8") == ("mup.MuAdam", [])
    assert built({"type": "Lamb", "params": {}}, "0.14.4") == ("deepspeed.ops.lamb.fused_lamb.FusedLamb", [])
    assert built({"type": "SGD", "params": {}}, "0.19.8") == ("torch.optim.sgd.SGD", [])
    offload = {"stage": 2, "offload_optimizer": {"device": "cpu"}}
    assert built({"type": "AdamW", "params": {}}, "0.19.8", offload) == (
        "deepspeed.ops.adam.cpu_adam.DeepSpeedCPUAdam", [])
    assert built({"type": "AdamW", "params": {}}, "0.19.8") == ("deepspeed.ops.adam.fused_adam.FusedAdam", [])
    cls, notes = built({"type": "AdamW", "params": {}}, "0.14.4", offload)
    assert cls == "deepspeed.ops.adam.cpu_adam.DeepSpeedCPUAdam" and "DeepSpeed 0.14.4" in notes[0]
    _, notes = built({"type": "Adam", "params": {}}, "0.19.8", offload | {"zenflow": {"topk_ratio": 0.1}})
    assert "ZenFlow not followed" in notes[0]  # the hand-written choice ignores ZenFlowCPUAdam
    # said where the user looks: an info finding (exit 0) in check, a note in resolve
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "AdamW", "params": {}},
                                "zero_optimization": offload}))
    words = "--trainer-args=--per_device_train_batch_size 1 --max_steps 2"
    assert main(["check", str(path), words, "--version", "0.14.4", "--hf-version", "5.24.0,1.15.0"]) == 0
    out = capsys.readouterr().out
    assert "info" in out and "could not be verified for this release [" in out and "hf-mirror]" in out
    assert main(["check", str(path), words, "--version", "0.19.8", "--hf-version", "5.24.0,1.15.0"]) == 0
    assert "could not be verified" not in capsys.readouterr().out


def test_no_snapshotted_pair_falls_back_to_the_spelt_rules(monkeypatch):
    """The 5.24.0 / 1.15.0 rules spelt out in hf_trainer are fallbacks for a program that cannot be evaluated here:
    every snapshotted transformers (with its paired accelerate) and every accelerate (with 5.24.0) runs its own
    programs through every step (the Trainer's fills and checks, accelerate's plugin, mixed precision, prepare,
    the optimizer, its ZeRO-Offload swap and the scheduler), never the spelt ones, and no note says one failed."""
    import dsfields.hf.trainer as hf

    def spelt(*args, **kwargs):
        raise AssertionError("a spelt-out rule was used")

    for name in ("_mirror_process", "_mirror_finalize", "_mirror_mixed"):
        monkeypatch.setattr(hf, name, spelt)
    configs = [ZERO3 | {"optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                                                                   "weight_decay": "auto"}},
                        "gradient_clipping": "auto"},
               {"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": "auto"},
                "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}},
               {"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True},
                "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto",
                                                                  "warmup_num_steps": "auto"}},
                "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto",
                                      "stage3_param_persistence_threshold": "auto"}}]
    words = ("--fp16 --max_steps 3 --warmup_steps 2 --per_device_train_batch_size 2",
             "--bf16 --optim adagrad --num_train_epochs 2 --per_device_train_batch_size 2 --lr_scheduler_type cosine")
    pairs = [(t, None) for t in hf_versions()] + [("5.24.0", a) for a in accelerate_versions()]
    runs = 0
    for version, accelerate in pairs:
        snap = load_hf_snapshot(version)
        rules = load_rules(snap, accelerate, explicit=True)
        for text in words:
            for config in configs:
                args = parse_trainer_args(text, snap, hidden_size=16, dataset_size=10)
                args.rules = rules
                run = trainer_run(config, args, {}, deepspeed="0.19.8")
                assert not [n for n in run.notes if "could not" in n], (version, accelerate, text, run.notes)
                runs += 1
    assert runs == len(pairs) * 6 >= 400


def test_a_fixed_accumulation_beside_an_auto_batch_is_planned_with_the_matching_flag():
    """Issue 42 (3 of 38 unseen configs at N = 8): the plan takes the Trainer's flags to match the file (the Trainer
    refuses a mismatch), so gradient_accumulation_steps 8 beside train_batch_size "auto" is filled as 8 × micro ×
    world, and the launch at 8 ranks holds the batch rule, as check --hf --world-size 8 says."""
    from dsfields.hf.trainer import hf_plan

    config = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 8,
              "zero_optimization": {"stage": 2}, "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}}
    planned = hf_plan(config, world_size=8).config
    assert planned["gradient_accumulation_steps"] == 8
    assert planned["train_batch_size"] == planned["train_micro_batch_size_per_gpu"] * 8 * 8
    fixed_micro = {**config, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "auto"}
    planned = hf_plan(fixed_micro, world_size=8).config
    assert planned["train_micro_batch_size_per_gpu"] == 4
    assert planned["train_batch_size"] == 4 * planned["gradient_accumulation_steps"] * 8
