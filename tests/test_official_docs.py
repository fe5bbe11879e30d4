"""DeepSpeed's official config page against its code, per release (generated/<v>/official_docs.json)."""

from __future__ import annotations

import json

import pytest

from dsfields.model import official_docs
from dsfields.model.store import available_versions, repo_generated_dir

pytestmark = pytest.mark.data

ROOT = repo_generated_dir()


def _snapshot(version: str) -> dict:
    return json.loads((ROOT / version / "fields.json").read_text(encoding="utf-8"))


def test_only_facts_of_the_page_are_kept():
    """Key, line, stated type and stated default: never the page's text."""
    for version in available_versions():
        docs = official_docs.load(version)
        if docs is None:
            continue
        fields = _snapshot(version)
        known = set(fields["fields"]) | set(fields["sections"])
        source = docs["source"]
        if source.get("untagged"):  # released after the clone: its newest page, said with commit and date
            assert source["ref"] == "main@" + source["commit"][:12] and source.get("date"), version
        else:
            assert source["ref"] == f"v{version}"
        for path, stated in docs["keys"].items():
            assert path in known, (version, path)
            assert set(stated) <= {"line", "type", "default"}, (version, path)
            assert not isinstance(stated.get("default"), str) or len(stated["default"]) < 40


def test_the_known_disagreements_are_found():
    """The three the issue found by reading: overlap_comm (stage 3 differs), offload device, prefetch bucket."""
    found = {d.path: d for d in official_docs.disagreements(_snapshot("0.19.5"), official_docs.load("0.19.5"))}
    assert found["zero_optimization.overlap_comm"].code["3"] is True
    assert found["zero_optimization.offload_optimizer.device"].docs == "cpu"
    assert found["zero_optimization.stage3_prefetch_bucket_size"].code == 50000000
    assert all(d.source.get("file") and d.source.get("line") for d in found.values())


def test_agreeing_keys_are_not_reported():
    found = {d.path for d in official_docs.disagreements(_snapshot("0.19.5"), official_docs.load("0.19.5"))}
    assert "gradient_clipping" not in found  # 1.0 on the page and in the code from 0.19.3 on
    assert "zero_optimization.reduce_bucket_size" not in found


def test_types_are_compared_where_both_are_plain():
    docs = official_docs.load("0.19.5")
    snapshot = _snapshot("0.19.5")
    assert [d for d in official_docs.disagreements(snapshot, docs) if d.kind == "type"] == []
    # Mutation: the page calling an integer key a boolean is reported.
    wrong = json.loads(json.dumps(docs))
    wrong["keys"]["zero_optimization.stage"] = {"line": 1, "type": "boolean"}
    wrong["keys"]["aio.block_size"] = {"line": 2, "type": "boolean"}
    found = [d.path for d in official_docs.disagreements(snapshot, wrong) if d.kind == "type"]
    assert found == ["aio.block_size"]  # stage is a ZeroStageEnum: not a plain type, not compared


def test_every_release_is_compared_and_the_newest_ones_with_the_newest_page():
    """Releases newer than the clone's last tag (0.19.6-0.19.8) are compared with the newest page the clone holds,
    which names its commit and date; an older release is compared at its own tag only. steps_per_print (the page
    says 10, the code None) is found in them too."""
    untagged = []
    for version in available_versions():
        docs = official_docs.load(version)
        assert docs is not None, f"{version}: no official page compared"
        if docs["source"].get("untagged"):
            untagged.append(version)
            found = {d.path for d in official_docs.disagreements(_snapshot(version), docs)}
            assert "steps_per_print" in found, version
    assert untagged and untagged == sorted(untagged, key=lambda v: tuple(map(int, v.split("."))))
    newest_tagged = max((v for v in available_versions() if v not in untagged),
                        key=lambda v: tuple(map(int, v.split("."))))
    assert all(tuple(map(int, v.split("."))) > tuple(map(int, newest_tagged.split("."))) for v in untagged)


def test_a_top_level_section_is_placed_before_a_nested_one_of_the_same_name():
    """The page's curriculum_learning headings belong to the legacy top-level section, not to
    data_efficiency.data_sampling.curriculum_learning, and its schedule_config keys are placed inside it."""
    docs = official_docs.load("0.19.5")
    assert "curriculum_learning.max_difficulty" in docs["keys"]
    assert "curriculum_learning.schedule_config.total_curriculum_step" in docs["keys"]


def test_a_key_qualified_by_its_section_is_placed_and_compared():
    """The page writes some headings as ``**fp16:loss_scale**: [float]``: placed at ``fp16.loss_scale`` and compared
    (the 0.11.2 audit: the page's float against the code's integer was not counted, the fp16 headings unplaced)."""
    docs = official_docs.load("0.11.2")
    assert {"fp16.loss_scale", "fp16.initial_scale_power", "bf16.enabled"} <= set(docs["keys"])
    found = {(d.path, d.kind) for d in official_docs.disagreements(_snapshot("0.11.2"), docs)}
    assert ("fp16.loss_scale", "type") in found


def test_a_batch_key_derived_by_deepspeed_is_no_disagreement():
    """``gradient_accumulation_steps`` has no default of its own: DeepSpeed derives it (1 where only the micro batch
    is given), so the page's 1 is not set against a null (the 0.15.4 audit)."""
    for version in ("0.15.4", "0.19.5"):
        found = {d.path for d in official_docs.disagreements(_snapshot(version), official_docs.load(version))}
        assert not found & {"gradient_accumulation_steps", "train_batch_size", "train_micro_batch_size_per_gpu"}
        assert "steps_per_print" in found or version == "0.19.5"  # a null that is the code's answer still counts


def test_a_path_default_of_a_string_key_is_compared():
    """The page gives ``nvme_path`` the default ``/local_nvme`` (a bare path, not a JSON string); the code's is None:
    a disagreement the 0.19.2 audit found missing. "N/A" is no default."""
    found = {d.path: d for d in official_docs.disagreements(_snapshot("0.19.2"), official_docs.load("0.19.2"))}
    assert found["zero_optimization.offload_param.nvme_path"].docs == "/local_nvme"
    assert found["zero_optimization.offload_param.nvme_path"].code is None
    assert not any(d.docs == "N/A" for d in found.values())
