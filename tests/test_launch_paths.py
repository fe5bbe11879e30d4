"""`check --launch` points every path of the config into the launch's own folder (issue 23, R8).

The path keys are the release's own fields whose name says they hold a place (read from its committed snapshot),
so this reads generated/ (the ``data`` lane); no DeepSpeed.
"""

from __future__ import annotations

import copy

import pytest

from dsfields.check.launch_check import REDIRECTED, path_keys, redirect_paths
from dsfields.model.store import available_versions

pytestmark = pytest.mark.data

HOSTILE = {
    "train_micro_batch_size_per_gpu": 1,
    "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/nonexistent/nvme"},
                          "offload_optimizer": {"device": "nvme", "nvme_path": "/root/.ssh"}},
    "csv_monitor": {"enabled": True, "output_path": "/etc/", "job_name": "../../../tmp/x"},
    "tensorboard": {"enabled": True, "output_path": "", "job_name": "run"},
    "autotuning": {"enabled": False, "results_dir": "/var/results", "exps_dir": "exps"},
    "nebula": {"enabled": False, "persistent_storage_path": "/mnt/nebula", "nebula_load_path": None},
    "flops_profiler": {"enabled": False, "output_file": "/etc/passwd"},
}


def test_the_path_keys_come_from_the_snapshot_and_cover_every_place_the_issue_names():
    keys = set(path_keys("0.19.8"))
    assert {"zero_optimization.offload_param.nvme_path", "zero_optimization.offload_optimizer.nvme_path",
            "csv_monitor.output_path", "tensorboard.output_path", "autotuning.results_dir", "autotuning.exps_dir",
            "flops_profiler.output_file",
            "data_efficiency.data_sampling.curriculum_learning.curriculum_metrics.*.index_to_metric_path"} <= keys
    assert {"nebula.persistent_storage_path", "nebula.nebula_load_path"} <= set(path_keys("0.10.0"))
    assert not {k for k in keys if k.rsplit(".", 1)[-1] in ("profile", "enabled", "job_name")}


@pytest.mark.parametrize("version", [available_versions()[0], available_versions()[-1]])
def test_every_release_has_path_keys_to_redirect(version):
    assert any(k.endswith("nvme_path") for k in path_keys(version))


def test_every_named_place_is_redirected_into_the_launch_folder_and_listed():
    before = copy.deepcopy(HOSTILE)
    data, changed = redirect_paths(HOSTILE, path_keys("0.19.8"))
    assert HOSTILE == before  # the user's config is not changed
    assert set(changed) == {
        "zero_optimization.offload_param.nvme_path", "zero_optimization.offload_optimizer.nvme_path",
        "csv_monitor.output_path", "csv_monitor.job_name", "autotuning.results_dir", "autotuning.exps_dir",
        "nebula.persistent_storage_path", "flops_profiler.output_file"}
    for path in changed:
        node = data
        for part in path.split("."):
            node = node[part]
        assert not node.startswith("/") and ".." not in node.split("/")  # relative: inside the worker's folder
    assert data["zero_optimization"]["offload_param"]["nvme_path"].startswith(f"{REDIRECTED}/")
    # What is not a place stays as written: "" is the worker's own folder, None is no path, a plain name is kept.
    assert data["tensorboard"] == HOSTILE["tensorboard"]
    assert data["nebula"]["nebula_load_path"] is None
    assert data["zero_optimization"]["stage"] == 3


def test_a_key_named_like_a_path_is_redirected_even_where_the_snapshot_has_no_field():
    data, changed = redirect_paths({"some_section": {"save_dir": "/srv/out"}}, [])
    assert changed == ["some_section.save_dir"] and data["some_section"]["save_dir"].startswith(REDIRECTED)
