"""`dsfields convert` against accelerate's own DeepSpeedPlugin, on the committed corpus of real YAML files.

The corpus (tests/fixtures/accelerate-yaml/, PROVENANCE.json: repository, path, commit, blob of each) is every
distinct version of every DeepSpeed YAML in the history of accelerate, LLaMA-Factory, alignment-handbook and trl,
and the YAML blocks of accelerate's DeepSpeed docs (bench/accelerate_yaml_collect.py). accelerate's answer comes
from bench/accelerate_reference.py (its launch, then ``DeepSpeedPlugin()`` and ``set_mixed_precision``, the
installed release) in a fresh interpreter; dsfields' from the snapshot of that release, accelerate never imported.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.lane("integration")

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fixtures" / "accelerate-yaml"


def corpus() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml"))


def reference(paths: list[Path], tmp_path: Path, launch_args: str | None = None) -> dict[str, dict]:
    """accelerate's own answer for each YAML (the installed release; ``launch_args``: accelerate launch options
    given with each), by file path."""
    out = tmp_path / f"reference-{len(list(tmp_path.iterdir()))}.json"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "accelerate_reference.py"), *map(str, paths),
                           "--json", str(out), *(["--launch-args", launch_args] if launch_args else [])],
                          capture_output=True, text=True, timeout=600,
                          env=os.environ | {"PYTHONPATH": str(REPO / "extractor")})
    assert done.returncode == 0 and out.is_file(), done.stderr[-3000:]
    return {row["file"]: row for row in json.loads(out.read_text(encoding="utf-8"))}


def installed_accelerate() -> str:
    from importlib.metadata import version

    return version("accelerate")


def ours(path: Path, version: str, launch_args: str | None = None):
    import shlex

    from dsfields.hf import plugin
    from dsfields.hf.arguments import parse_accelerate_yaml

    data = parse_accelerate_yaml(path.read_text(encoding="utf-8"), str(path))
    flags = plugin.launch_flags(shlex.split(launch_args), plugin.accelerate_rules(version)[1], version) \
        if launch_args else None
    cwd = os.getcwd()
    os.chdir(path.parent)  # accelerate reads a relative deepspeed_config_file from where it is launched
    try:
        return plugin.build(data, version, name=str(path), flags=flags)
    except plugin.AccelerateRefusal as exc:
        return exc
    finally:
        os.chdir(cwd)


def agrees(row: dict, mine) -> bool:
    from dsfields.hf.plugin import AccelerateRefusal

    if "error" in row:
        return isinstance(mine, AccelerateRefusal) and (mine.kind, mine.message) == (row["error"]["type"],
                                                                                       row["error"]["message"])
    return not isinstance(mine, AccelerateRefusal) and mine.config == row["config"] and \
        mine.attributes.get("zero3_init_flag") == row["zero3_init_flag"]


@pytest.mark.unit
def test_the_corpus_is_fifty_real_files_with_provenance():
    provenance = json.loads((CORPUS / "PROVENANCE.json").read_text(encoding="utf-8"))
    files = {item["file"]: item for item in provenance["files"]}
    assert len(corpus()) >= 50 and set(files) == {p.name for p in corpus()}
    assert len({item["repo"] for item in files.values()}) >= 4
    for item in files.values():
        assert len(item["commit"]) == 40 and item["path"]
        for rewrite in item["rewrites"]:
            assert (CORPUS / rewrite["to"]).is_file()


def test_every_corpus_yaml_gives_accelerate_s_own_ds_config(tmp_path):
    pytest.importorskip("accelerate")
    version = installed_accelerate()
    rows = reference(corpus(), tmp_path)
    wrong = []
    built = 0
    for path in corpus():
        row, mine = rows[str(path)], ours(path, version)
        built += "config" in row
        if not agrees(row, mine):
            wrong.append((path.name, row.get("config", row.get("error")), getattr(mine, "config", mine)))
    assert not wrong
    assert built >= 50  # accelerate builds a ds_config for at least 50 (the rest it refuses, and so do we)


def test_a_grid_of_plugin_settings_gives_accelerate_s_own_ds_config(tmp_path):
    """Settings the corpus rarely has (nvme, offload of parameters at stage 3, clipping, fp16, launch-only keys)."""
    pytest.importorskip("accelerate")
    version = installed_accelerate()
    grid = itertools.product((0, 1, 2, 3), ("none", "cpu", "nvme"), ("none", "cpu", "nvme"), ("no", "fp16", "bf16"),
                             (None, 4, "auto"), (None, 1.0), (None, True, False))
    paths = []
    for number, (stage, opt, param, mixed, gas, clip, save16) in enumerate(grid):
        if number % 23:  # every 23rd of the 1,944 combinations: 85 files
            continue
        lines = ["compute_environment: LOCAL_MACHINE", "distributed_type: DEEPSPEED", f"mixed_precision: '{mixed}'",
                 "num_processes: 2", "deepspeed_config:", f"  zero_stage: {stage}",
                 f"  offload_optimizer_device: {opt}", f"  offload_param_device: {param}",
                 "  offload_optimizer_nvme_path: /nvme/opt", "  deepspeed_multinode_launcher: standard",
                 f"  zero3_init_flag: {'true' if number % 2 else 'false'}"]
        lines += [f"  gradient_accumulation_steps: {gas}"] if gas is not None else []
        lines += [f"  gradient_clipping: {clip}"] if clip is not None else []
        lines += [f"  zero3_save_16bit_model: {str(save16).lower()}"] if save16 is not None else []
        path = tmp_path / f"grid-{number:04d}.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    for number, legacy in enumerate(("fp16: true", "fp16: false")):  # the old YAML's fp16 key
        path = tmp_path / f"legacy-{number}.yaml"
        path.write_text(f"compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n{legacy}\n"
                        "num_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n", encoding="utf-8")
        paths.append(path)
    rows = reference(paths, tmp_path)
    wrong = [p.name for p in paths if not agrees(rows[str(p)], ours(p, version))]
    assert len(paths) == 87 and not wrong
    assert rows[str(paths[-2])]["config"]["fp16"]["enabled"] is True


LAUNCH_ARGS = ["--zero_stage 3 --offload_param_device cpu --zero3_init_flag true",
               "--mixed_precision fp16 --gradient_accumulation_steps 8 --gradient_clipping 0.5",
               "--zero_stage=1 --offload_optimizer_device=cpu --mixed_precision=bf16 --zero3_save_16bit_model true"]


@pytest.mark.parametrize("launch_args", LAUNCH_ARGS)
def test_launch_flags_over_the_corpus_give_accelerate_s_own_ds_config(tmp_path, launch_args):
    """``accelerate launch --config_file X.yaml --zero_stage 3 ...``: the flags win over the YAML, as accelerate's
    own launch has them (and a config file beside them is refused alike)."""
    pytest.importorskip("accelerate")
    version = installed_accelerate()
    paths = corpus()[::4]
    rows = reference(paths, tmp_path, launch_args)
    wrong = [p.name for p in paths if not agrees(rows[str(p)], ours(p, version, launch_args))]
    assert len(paths) == 14 and not wrong
    assert sum("config" in rows[str(p)] for p in paths) >= 10


def test_both_directions_round_trip(tmp_path):
    """YAML → ds_config → YAML gives accelerate the same ds_config; ds_config → YAML → what accelerate builds
    is the ds_config itself when the YAML is plugin-only, and accelerate's reading of the file otherwise."""
    pytest.importorskip("accelerate")
    from dsfields.cli import main

    version = installed_accelerate()
    firsts = reference(corpus(), tmp_path)
    backs, ds_files = [], {}
    for number, path in enumerate(corpus()):
        if "config" not in firsts[str(path)]:
            continue
        ds = tmp_path / f"{number:03d}.json"
        cwd = os.getcwd()
        os.chdir(path.parent)
        try:
            assert main(["convert", str(path), "-o", str(ds), "--accelerate-version", version]) == 0
        finally:
            os.chdir(cwd)
        back = tmp_path / f"{number:03d}-back.yaml"
        assert main(["convert", str(ds), "--to", "accelerate", "-o", str(back), "--accelerate-version",
                     version]) == 0
        backs.append((path, back))
        ds_files[back] = ds
    seconds = reference([b for _p, b in backs], tmp_path)
    plugin_only = 0
    for path, back in backs:
        first, second = firsts[str(path)], seconds[str(back)]
        assert "config" in second, (path.name, second)
        assert second["config"] == first["config"], path.name
        written = json.loads(ds_files[back].read_text(encoding="utf-8"))
        rebuilt = {k: v for k, v in second["config"].items() if k != "steps_per_print"}
        assert math.isinf(second["config"]["steps_per_print"])
        if "deepspeed_config_file" not in back.read_text(encoding="utf-8"):
            plugin_only += 1
            assert rebuilt == written, path.name
    assert plugin_only >= 40  # most real YAMLs are plugin-only, and come back as plugin-only YAMLs


@pytest.mark.data
def test_convert_writes_the_file_and_says_what_does_not_carry_over(tmp_path, capsys):
    from dsfields.cli import main

    source = next(p for p in corpus() if "offload_optimizer_device: cpu" in p.read_text(encoding="utf-8"))
    yaml = tmp_path / "acc.yaml"
    yaml.write_text(source.read_text(encoding="utf-8") + "", encoding="utf-8")
    text = yaml.read_text(encoding="utf-8").replace("deepspeed_config:\n", "deepspeed_config:\n"
                                                    "  offload_param_nvme_path: /nvme\n", 1)
    yaml.write_text(text, encoding="utf-8")
    out = tmp_path / "ds.json"
    assert main(["convert", str(yaml), "-o", str(out), "--accelerate-version", "1.15.0"]) == 0
    said = capsys.readouterr().out
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert "steps_per_print" not in written and "steps_per_print: accelerate sets it to infinity" in said
    assert "deepspeed_config.offload_param_nvme_path: accelerate 1.15.0's launch never passes it on" in said
    assert "num_processes:" in said
    assert main(["convert", str(yaml), "--accelerate-version", "1.15.0", "--lang", "zh"]) == 0
    zh = capsys.readouterr().err
    assert "不是 ds_config 的键" in zh or "不影响 ds_config" in zh


@pytest.mark.data
def test_accelerate_s_refusal_is_a_finding_and_bad_input_exit_2(tmp_path, capsys):
    from dsfields.cli import main

    refused = CORPUS / "055-accelerate-deepspeed.yaml"  # accelerate's own docs: a config file and mixed_precision
    cwd = os.getcwd()
    os.chdir(CORPUS)
    try:
        assert main(["convert", refused.name, "--accelerate-version", "1.15.0"]) == 1
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "accelerate refuses this config with ValueError" in err[0]
    plain = tmp_path / "ddp.yaml"
    plain.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\n", encoding="utf-8")
    assert main(["convert", str(plain)]) == 2
    assert "not DEEPSPEED" in capsys.readouterr().err
    assert main(["convert", str(CORPUS / corpus()[10].name), "--accelerate-version", "0.0.1"]) == 2
    assert "no snapshot of that accelerate release" in capsys.readouterr().err


@pytest.mark.data
def test_every_snapshotted_release_converts_the_corpus():
    """The rules of every accelerate release in generated/hf/ evaluate on every corpus file (no rule unreadable),
    and the plugin-only files give a ds_config with the YAML's stage."""
    from dsfields.hf.pair_rules import accelerate_versions
    from dsfields.hf.plugin import AccelerateRefusal

    versions = accelerate_versions()
    assert len(versions) >= 30
    for version in versions:
        for path in corpus():
            mine = ours(path, version)
            if isinstance(mine, AccelerateRefusal):  # accelerate's docs example (a config file + precision), and
                # a top-level key the release's ClusterConfig lacks (enable_cpu_affinity, parallelism_config)
                assert path.name == "055-accelerate-deepspeed.yaml" and "deepspeed_config_file" in mine.message \
                    or "unknown keys" in mine.message or "unexpected keyword argument" in mine.message, mine.message
                continue
            if "deepspeed_config_file" not in path.read_text(encoding="utf-8"):
                text = path.read_text(encoding="utf-8")
                stage = next((int(line.split(":")[1]) for line in text.splitlines()
                              if line.strip().startswith("zero_stage:")), 2)
                assert mine.config["zero_optimization"]["stage"] == stage, (version, path.name)


@pytest.mark.data
@pytest.mark.parametrize("command", [["check"], ["resolve"], ["estimate", "--params", "7B"]])
def test_check_resolve_and_estimate_read_a_yaml_as_the_ds_config_accelerate_builds(tmp_path, capsys, command):
    """The YAML gives the same answer as its converted ds_config under --hf, and one line says so."""
    from dsfields.cli import main

    source = CORPUS / "010-alignment-handbook-deepspeed-zero2.yaml"
    yaml = tmp_path / "acc.yaml"
    yaml.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    ds = tmp_path / "acc.json"
    assert main(["convert", str(yaml), "-o", str(ds)]) == 0
    capsys.readouterr()
    world = ["--gpus-per-node", "8", "--nodes", "1"] if command[0] == "estimate" else []
    code_yaml = main([*command, str(yaml)])
    got = capsys.readouterr()
    code_json = main([*command, "--hf", str(ds), *world])
    want = capsys.readouterr()
    assert code_yaml == code_json
    said = [line for line in got.err.splitlines() if "an accelerate YAML, read as the ds_config accelerate" in line]
    assert len(said) == 1 and "under --hf" in said[0]
    mine = got.out.replace(str(yaml), "F")
    theirs = want.out.replace(str(ds), "F")
    if command[0] == "estimate":  # the world came from the YAML's num_processes, said among the assumptions
        assert "on 1 × 8 GPUs" in mine and "world from the accelerate YAML: num_processes 8" in mine
        totals = [[x for x in text.splitlines() if x.startswith(("total:", "F: memory for"))]
                  for text in (mine, theirs)]
        assert totals[0] == totals[1] and len(totals[0]) == 2
    else:
        assert mine == theirs


@pytest.mark.data
def test_check_says_in_one_line_why_a_yaml_cannot_be_checked(capsys):
    from dsfields.cli import main

    cwd = os.getcwd()
    os.chdir(CORPUS)
    try:
        assert main(["check", "055-accelerate-deepspeed.yaml", "010-alignment-handbook-deepspeed-zero2.yaml"]) == 2
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert "055-accelerate-deepspeed.yaml: accelerate refuses this config with ValueError" in err


def test_init_accelerate_writes_a_yaml_accelerate_launches_with_that_config(tmp_path):
    """``init --accelerate``: accelerate's own plugin, given the YAML, holds the ds_config init wrote (plus what
    accelerate itself adds), and dsfields' reading of the YAML is the same."""
    pytest.importorskip("accelerate")
    from dsfields.cli import main

    version = installed_accelerate()
    situations = [["--params", "13B", "--gpus-per-node", "8", "--gpu-memory", "80GB", "--hf"],
                  ["--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "24GB"],
                  ["--params", "70B", "--gpus-per-node", "8", "--nodes", "8", "--gpu-memory", "80GB", "--hf"],
                  ["--params", "1B", "--gpus-per-node", "1", "--gpu-memory", "40GB"]]
    yamls, written = [], {}
    for number, situation in enumerate(situations):
        ds = tmp_path / f"init{number}.json"
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            assert main(["init", *situation, "--accelerate", "--accelerate-version", version, "-o", ds.name]) == 0
        finally:
            os.chdir(cwd)
        yaml = tmp_path / f"init{number}.accelerate.yaml"
        assert yaml.is_file()
        yamls.append(yaml)
        written[str(yaml)] = json.loads(ds.read_text(encoding="utf-8"))
    rows = reference(yamls, tmp_path)
    for yaml in yamls:
        row = rows[str(yaml)]
        assert "config" in row, row
        assert agrees(row, ours(yaml, version))
        held = row["config"]
        for key, value in written[str(yaml)].items():
            if key in ("fp16", "bf16") and value.get("enabled") == "auto":  # filled from the mixed precision
                assert held[key] == {**value, "enabled": False}, (yaml.name, key)  # none in a file YAML: said
                continue
            assert held[key] == value, (yaml.name, key)
    for yaml, situation in zip(yamls, situations, strict=True):
        gpus = int(situation[situation.index("--gpus-per-node") + 1])
        nodes = int(situation[situation.index("--nodes") + 1]) if "--nodes" in situation else 1
        text = yaml.read_text(encoding="utf-8")
        assert f"num_processes: {gpus * nodes}\n" in text and f"num_machines: {nodes}\n" in text


@pytest.mark.data
def test_init_accelerate_needs_an_output(capsys):
    from dsfields.cli import main

    assert main(["init", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "80GB", "--accelerate"]) == 2
    assert "init --accelerate needs -o FILE" in capsys.readouterr().err


@pytest.mark.data
def test_a_config_file_found_only_beside_the_yaml_is_read_there_and_said(tmp_path, capsys):
    from dsfields.cli import main

    yaml = CORPUS / "002-accelerate-deepspeed.yaml"
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)  # the JSON is not here: read beside the YAML, and said
        assert main(["convert", str(yaml), "--accelerate-version", "1.15.0"]) == 0
        assert "is not found from the current folder, so it was read beside the YAML" in capsys.readouterr().err
        os.chdir(CORPUS)  # launched where the JSON is: nothing to say
        assert main(["convert", yaml.name, "--accelerate-version", "1.15.0"]) == 0
        assert "not found from the current folder" not in capsys.readouterr().err
    finally:
        os.chdir(cwd)


@pytest.mark.data
def test_a_yaml_without_num_processes_is_refused_as_accelerate_launch_refuses_it(tmp_path, capsys):
    from dsfields.cli import main

    yaml = tmp_path / "a.yaml"
    yaml.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n", encoding="utf-8")
    assert main(["convert", str(yaml), "--accelerate-version", "1.15.0"]) == 1
    assert "You need to manually pass in `--num_processes`" in capsys.readouterr().err
    assert main(["convert", str(yaml), "--accelerate-version", "1.15.0", "--launch-args", "--num_processes 4"]) == 0
