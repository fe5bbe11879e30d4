"""``--trainer-args``: TrainingArguments' flags parsed without transformers, and the Trainer run predicted.

The expected behaviours are the ones the real Trainer showed (transformers 5.24.0 + accelerate 1.15.0 +
DeepSpeed 0.19.8, bench/hf_trainer_differential.py); the flag list is the committed HF snapshot.
"""

from __future__ import annotations

import json

import pytest

from dsfields.cli import main
from dsfields.hf.arguments import load_hf_snapshot, load_rules, parse_trainer_args
from dsfields.hf.trainer import MISMATCH_HEAD, trainer_run
from dsfields.model.errors import UsageError

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

# Lanes (tests/lanes.py): unit, but for the four tests that read generated/ (each marked data).

SNAP = load_hf_snapshot("5.24.0")
RULES = load_rules(SNAP, "1.15.0", explicit=True)  # read at import, as SNAP: the unit tests run the programs


def args(text: str, **kw):
    parsed = parse_trainer_args(text, SNAP, hidden_size=16, **kw)
    parsed.rules = RULES
    return parsed


def test_flags_parse_as_hfargumentparser_does():
    a = args("--bf16 --learning_rate 2e-4 --per-device-train-batch-size 4 --no_dataloader_pin_memory "
             "--max_grad_norm=0.5 --lr_scheduler_type cosine --fp16 false")
    assert (a.bf16, a.fp16, a.learning_rate, a.per_device_train_batch_size) == (True, False, 2e-4, 4)
    assert (a.dataloader_pin_memory, a.max_grad_norm, a.lr_scheduler_type) == (False, 0.5, "cosine")
    assert a.origin("learning_rate") == "--learning_rate" and a.origin("adam_beta1") == "--adam_beta1 default"
    assert a.values["optim"] == SNAP["training_arguments"]["fields"]["optim"]["default"]


def test_unknown_flags_are_reported_with_their_values():
    a = args("--warmup_ratio 0.1 --bf16")
    assert a.unknown == ["--warmup_ratio", "0.1"] and a.bf16 is True


@pytest.mark.parametrize("text", ["--learning_rate fast", "--lr_scheduler_type nope", "--bf16 maybe",
                                  "--lr_sch cosine", "--gradient_checkpointing"])
def test_values_a_flag_cannot_take_are_usage_errors(text):
    with pytest.raises(UsageError):
        args(text)


def run(config, text, **kw):
    return trainer_run(config, args(text + " --max_steps 1", **kw))


ZERO = {"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}


def test_bf16_with_fp16_auto_trains_in_bf16():
    r = run({**ZERO, "fp16": {"enabled": "auto"}}, "--bf16")
    assert r.error is None and r.precision == "bf16" and r.config["fp16"]["enabled"] is False
    assert r.config["bf16"] == {"enabled": True}


def test_fp16_adds_the_section_with_auto_cast():
    r = run(ZERO, "--fp16")
    assert r.config["fp16"] == {"enabled": True, "auto_cast": True} and r.precision == "fp16"


def test_the_mixed_precision_clash_fires_first_and_hides_the_mismatches():
    r = run({**ZERO, "fp16": {"enabled": True}, "gradient_clipping": 0}, "--bf16")
    assert r.error.raised_by == "accelerate" and "`--mixed_precision` arg cannot be set to `bf16`" in str(r.error)


@pytest.mark.parametrize("extra, text, line", [
    ({"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 500}}}, "",
     "- ds scheduler.params.warmup_num_steps=500 vs hf warmup_steps=1"),
    ({"gradient_clipping": 0}, "", "- ds gradient_clipping=0 vs hf max_grad_norm=1.0"),
    ({"fp16": {"enabled": "true"}}, "", "- ds fp16.enabled=true vs hf fp16|fp16_full_eval=False"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 3e-5}}}, "", "- ds optimizer.params.lr=3e-05 vs hf "
                                                                   "learning_rate=5e-05"),
])
def test_every_literal_needs_its_flag_typed_exactly(extra, text, line):
    r = run({**ZERO, **extra}, text)
    assert str(r.error).startswith(MISMATCH_HEAD) and line in r.mismatches


def test_accumulation_flag_ignored_without_the_key_and_max_grad_norm_without_clipping():
    r = run(ZERO, "--gradient_accumulation_steps 2 --max_grad_norm 0.3")
    assert r.error is None and r.config["gradient_accumulation_steps"] == 1
    assert "gradient_clipping" not in r.config
    r = run({**ZERO, "gradient_accumulation_steps": "auto", "train_batch_size": "auto"},
            "--gradient_accumulation_steps 2 --per_device_train_batch_size 3", world_size=2)
    assert [r.config[k] for k in ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                                  "train_batch_size")] == [3, 2, 12]


def test_optimizer_and_scheduler_classes():
    r = run({**ZERO, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}, "")
    assert r.optimizer_class == "deepspeed.ops.adam.DeepSpeedCPUAdam"
    assert r.scheduler_class == "torch.optim.lr_scheduler.LambdaLR"
    r = run({**ZERO, "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
             "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto"}}}, "")
    assert r.optimizer_class == "deepspeed.ops.adam.FusedAdam"
    assert r.scheduler_class == "deepspeed.runtime.lr_schedules.WarmupDecayLR"
    assert r.config["scheduler"]["params"]["total_num_steps"] == 1


@pytest.mark.data
def test_check_and_resolve_take_the_arguments_as_one_token(tmp_path, capsys):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({**ZERO, "fp16": {"enabled": "auto"}, "optimizer": {
        "type": "AdamW", "params": {"lr": "auto"}}}))
    assert main(["check", str(path), "--trainer-args=--bf16 --learning_rate 2e-4"]) == 0
    capsys.readouterr()
    assert main(["resolve", str(path), "--trainer-args=--bf16 --learning_rate 2e-4", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["optimizer.params.lr"]["value"] == 2e-4
    assert out["optimizer.params.lr"]["note"] == "filled by the Trainer from --learning_rate"
    # the class as the release's optimizer catalogue names it (its module), as the engine's type() says
    assert out["optimizer.class"]["value"] == "deepspeed.ops.adam.fused_adam.FusedAdam"
    assert out["scheduler.class"]["value"] == "torch.optim.lr_scheduler.LambdaLR"
    assert out["bf16.enabled"]["value"] is True and out["precision"]["value"] == "bf16"
    path.write_text(json.dumps({**ZERO, "gradient_clipping": 0}))
    assert main(["check", str(path), "--trainer-args", "--max_steps 1"]) == 1
    assert "- ds gradient_clipping=0 vs hf max_grad_norm=1.0" in capsys.readouterr().out


@pytest.mark.data
def test_check_says_once_that_a_file_looks_like_an_hf_config(tmp_path, capsys):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({**ZERO, "gradient_clipping": "auto"}))
    main(["check", str(path)])
    out = capsys.readouterr().out
    assert out.count("looks like an HF Trainer config") == 1
    main(["check", str(path), "--hf"])
    assert "looks like an HF Trainer config" not in capsys.readouterr().out


def test_accelerate_config_mixed_precision_and_refused_settings(tmp_path):
    from dsfields.hf.arguments import load_accelerate_config

    yaml = tmp_path / "acc.yaml"
    yaml.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\n"
                    "deepspeed_config:\n  zero3_init_flag: false\nnum_processes: 1\n")
    acc = load_accelerate_config(str(yaml))
    r = trainer_run({**ZERO, "fp16": {"enabled": True}}, args("--fp16 --max_steps 1"), acc)
    assert r.error is not None and "deepspeed_config_file" in str(r.error)  # mixed_precision from the YAML
    yaml.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero3_init_flag: true\n")
    r = trainer_run({**ZERO, "fp16": {"enabled": "auto"}}, args("--max_steps 1"),
                    load_accelerate_config(str(yaml)))
    assert r.error is None and r.precision == "fp32"


def test_committed_hf_snapshot_is_what_the_extractor_reads():
    from dsfields.extract.hf.flags import hf_snapshot, transformers_dir

    root = transformers_dir()
    if root is None:
        pytest.skip("transformers is not installed")
    from dsfields.extract.hf.rule_witness import package_rules

    fresh = hf_snapshot(root)
    if fresh["transformers_version"] != "5.24.0":
        pytest.skip("another transformers is installed")
    # The committed snapshot was read from the 5.24.0 sdist (hf_rules); the installed package must give the
    # same flags, fills and rules (release dates and the accelerate pairing come from the sdist only).
    for part in ("training_arguments", "fills", "transformers_version"):
        assert fresh[part] == SNAP[part]
    assert package_rules(root) == SNAP["rules"]


@pytest.mark.data
def test_migrate_sets_the_refused_literals_to_auto(tmp_path, capsys):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({**ZERO, "gradient_clipping": 0, "optimizer": {
        "type": "AdamW", "params": {"lr": 3e-5, "eps": 1e-8}}}, indent=1))
    out = tmp_path / "out.json"
    assert main(["migrate", str(path), "--from", "0.19.8", "--to", "0.19.8", "--trainer-args=--max_steps 1",
                 "-o", str(out)]) in (0, 1)
    migrated = json.loads(out.read_text())
    assert migrated["gradient_clipping"] == "auto" and migrated["optimizer"]["params"] == {"lr": "auto", "eps": 1e-8}
    assert "- ds gradient_clipping=0 vs hf max_grad_norm=1.0" in capsys.readouterr().out
    assert trainer_run(migrated, args("--max_steps 1")).error is None


def test_autotp_larger_than_the_world_is_refused_by_the_device_mesh():
    r = run({**ZERO, "tensor_parallel": {"autotp_size": 2}}, "")
    assert str(r.error) == "Mesh should not be bigger than default world size 1, but found 2 ranks!"
    assert run({**ZERO, "tensor_parallel": {"autotp_size": 2}}, "", world_size=2).error is None


def test_the_mirror_names_every_argument_as_the_extracted_source_does():
    """Each mismatch line of trainer_run names the argument (``vs hf KEY=``) that transformers' own
    fill_match call names, read from its source into the HF snapshot (``fills.paths[*].hf_key``)."""
    fills = SNAP["fills"]["paths"]
    config = {"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 7,
              "gradient_accumulation_steps": 7, "train_batch_size": 7, "gradient_clipping": 7.0,
              "optimizer": {"type": "AdamW", "params": {"lr": 7.0, "betas": [0.7, 0.7], "eps": 7.0,
                                                        "weight_decay": 7.0}},
              "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_max_lr": 7.0, "warmup_num_steps": 7,
                                                                "total_num_steps": 7}},
              "fp16": {"enabled": "yes"}, "bf16": {"enabled": "yes"}}
    r = run(config, "")
    named = {line[len("- ds "):].split("=", 1)[0]: line.split(" vs hf ")[1].rsplit("=", 1)[0]
             for line in r.mismatches}
    expected = {path: f["hf_key"] for path, f in fills.items() if f["must_match"] and "hf_key" in f}
    assert named == expected


@pytest.mark.data
def test_other_releases_flags_and_the_diff_between_two():
    from dsfields.hf.arguments import hf_diff, hf_versions

    assert {"4.36.2", "5.24.0"} <= set(hf_versions())
    old = load_hf_snapshot("4.36.2")
    a = parse_trainer_args("--warmup_ratio 0.1 --report_to none wandb", old)
    assert a.unknown == [] and a.warmup_ratio == 0.1 and a.report_to == ["none", "wandb"]
    lines = hf_diff(old, SNAP)
    assert "flag removed: --warmup_ratio" in lines
    assert 'default changed: --optim "adamw_torch" → "adamw_torch_fused"' in lines
    assert "the Trainer no longer fills: amp.enabled" in lines
