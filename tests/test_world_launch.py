"""The launch at world size 8 (integration, marker deepspeed): rank 0 and rank 7 of torch's fake process group.

* every world rule's examples launched at N = 8 reproduce the committed generated/0.19.8/world.json;
* ``check --world-size 8`` errs on a rule's key exactly where the launch refuses, and passes where it launches;
* under the HF Trainer at 8 ranks, accelerate's inserted ``gradient_accumulation_steps: 1`` refuses the batch
  in the launch and in check alike; AutoTP with ZeRO-3 launches in 0.19.8 (the assertion was 0.16.4-0.19.3's);
* ``dsfields check --launch --world-size 8`` end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, requires_deepspeed

from dsfields.check import Checker, Options, Severity, check_text
from dsfields.extract.world_witness import confirm_world_rule
from dsfields.launch import world_rules
from dsfields.launch.client import LaunchClient
from dsfields.launch.world import World
from dsfields.model.store import load as load_snapshot

pytestmark = [requires_deepspeed, pytest.mark.deepspeed]
VERSION = "0.19.8"
N = world_rules.PROBE_WORLD
G = world_rules.PROBE_PER_NODE


@pytest.fixture(scope="module")
def ranks():
    clients = {rank: LaunchClient(world=World(N, rank, G)) for rank in World(N).ranks_to_play()}
    try:
        yield clients
    finally:
        for client in clients.values():
            client.close()


def _launch(ranks, config, style="plain"):
    return {rank: client.launch(config, style) for rank, client in ranks.items()}


@pytest.mark.parametrize("rule", world_rules.RULES, ids=lambda r: r.id)
def test_each_world_rule_is_confirmed_at_8_ranks_as_committed(ranks, rule):
    record = world_rules.load_world(VERSION)
    assert record is not None
    fresh = confirm_world_rule(rule, lambda config: _launch(ranks, config))
    committed = record["rules"][rule.id]
    # a rule read in an older release's source (read_in) is confirmed there; here it is what the probe found
    assert fresh["confirmed"] or rule.read_in != VERSION, fresh.get("why_not")
    assert fresh["confirmed"] is committed["confirmed"]
    assert (fresh.get("rank"), fresh.get("message"), fresh.get("exc_type")) == (
        committed.get("rank"), committed.get("message"), committed.get("exc_type"))


def test_check_at_8_agrees_with_the_launch_on_every_world_rule_example(ranks):
    checker = Checker(load_snapshot(VERSION))
    for rule in world_rules.RULES:
        for config in (*rule.triggers, *rule.controls):
            verdicts = _launch(ranks, config)
            refused = [v for v in verdicts.values() if v.outcome == "config_error"]
            report = check_text(json.dumps(config), checker, Options(world_size=N, gpus_per_node=G))
            flagged = {f.path for f in report.findings if f.severity is Severity.ERROR}
            # a section removed in this release (MiCS, curriculum_learning, elasticity in 0.19.8) is refused whole:
            # the finding names the section the rule's key is in
            named = any(rule.key == path or rule.key.startswith(path + ".") for path in flagged if path)
            assert bool(refused) == named, (rule.id, config, verdicts, flagged)


def test_the_trainers_batch_at_8_ranks_is_refused_by_the_launch_and_by_check(ranks):
    config = {"train_batch_size": 16, "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}
    launched = _launch(ranks, config, "hf")
    assert {v.outcome for v in launched.values()} == {"config_error"}
    assert launched[0].key == "train_batch_size" and "16 != 1 * 1 * 8" in launched[0].message
    plain = _launch(ranks, config)  # bare DeepSpeed derives 2 accumulation steps
    assert {v.outcome for v in plain.values()} == {"launched"}
    report = check_text(json.dumps(config), Checker(load_snapshot(VERSION)), Options(hf=True, world_size=N))
    assert "train_batch_size" in {f.path for f in report.findings if f.severity is Severity.ERROR}


def test_autotp_with_zero3_launches_in_0_19_8_on_every_rank_played(ranks):
    config = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 3},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "tensor_parallel": {"autotp_size": 2}}
    assert {v.outcome for v in _launch(ranks, config).values()} == {"launched"}


def test_check_launch_at_world_size_8_end_to_end(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
                                "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
                                "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 3}}))
    env = os.environ | {"PYTHONPATH": str(REPO / "extractor")}
    result = subprocess.run([sys.executable, "-m", "dsfields", "check", "--launch", "--world-size", "8", "--format",
                             "json", str(path)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    found = json.loads(result.stdout)["files"][0]["findings"]
    verdicts = [f for f in found if f["kind"] == "launch_verdict"]
    assert [(f["path"], f["severity"]) for f in verdicts] == [("zero_optimization.zero_hpz_partition_size", "error")]
    assert "rank 0 of 8" in verdicts[0]["message"] and "is not divisible by 3" in verdicts[0]["message"]
    assert any(f["kind"] == "limitation" and "no collective runs" in f["message"] for f in found)
