"""`dsfields check` against `deepspeed.initialize`: the differential on the shared corpus and seeded mutations.

Every config of ../shared/realworld-configs and every mutation below is checked statically (in this
process, as `dsfields check` does) and launched with `deepspeed.initialize` on CPU (one worker process,
dsfields.launch.worker) in the calling style matching the check options:

  hf     `check --hf`                    vs the HF Trainer + accelerate plan (every config)
  plain  `check`                         vs plain code, optimizer from the config (configs without "auto")
  code   `check --optimizer-from-code`   vs plain code passing an AdamW (the mutations marked so)

A config's verdicts agree when check exits 1 exactly where the launch fails for a config reason and
one of its errors names the launch's key (or a parent / child of it), and exits 0 where it launches.
Machine failures (fp16 on this CPU, async_io, world size, missing packages) are counted apart, never
as agreement; an fp16 machine failure is launched again with the CPU claiming fp16 (assume_fp16), and
that config-path verdict is judged and counted apart as "fp16 assumed". Where check is right and the
launch cannot see it (FAILS_LATER: the error comes after initialize), the class is named with its reason.

    PYTHONPATH=extractor python bench/check_launch.py [--release VERSION] [--out FILE] [--only SUBSTRING]
    PYTHONPATH=extractor python bench/check_launch.py --world-size 8 [--gpus-per-node G]   # issue 42
    PYTHONPATH=extractor python bench/check_launch.py --world-size 8 --corpus bench/unseen_configs

--world-size N checks with `check --world-size N` and launches as rank 0 and rank N-1 of a world of N (one worker
per rank, torch's fake process group: dsfields.launch.world); the first rank that refuses gives the
verdict. The multi-rank mutations (WORLD_MUTATIONS) join the corpus there.

--release runs the launches in that release's runtime (dsfields.extract.releases: the cached sdist on
the shared environment's torch, DS_ACCELERATOR=cpu, plus the CPU-accelerator stubs releases before
0.14.1 need) and checks against generated/VERSION; without it, the installed DeepSpeed and its snapshot.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

from dsfields.check import Checker, Options, Severity, check_text
from dsfields.configfile import ConfigFileError
from dsfields.launch.client import LaunchClient
from dsfields.launch.verdict import LaunchVerdict
from dsfields.model.store import load_requested

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "realworld-configs"

ADAMW = {"type": "AdamW", "params": {"lr": 1e-4}}
BASE2: dict[str, Any] = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "optimizer": ADAMW,
                         "zero_optimization": {"stage": 2}}
BASE3: dict[str, Any] = {**BASE2, "zero_optimization": {"stage": 3}}
_DELETE = object()

FAILS_LATER = {
    "wrong-type-clipping": 'gradient_clipping is read unvalidated: the string "high" reaches the first gradient '
                           "clip (engine step, clip_grad_norm_), after deepspeed.initialize returned",
}
"""Mutations where check errs and the launch succeeds because DeepSpeed fails only later, with why."""


def _with(base: dict[str, Any], *changes: tuple[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for path, value in changes:
        *parents, last = path.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        if value is _DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return out


def mutations() -> list[tuple[str, dict[str, Any], bool]]:
    """(name, config, optimizer from code): each runs as hf and as plain (plain with AdamW passed if marked)."""
    no_opt2 = _with(BASE2, ("optimizer", _DELETE))
    no_opt3 = _with(BASE3, ("optimizer", _DELETE))
    sgd = {"type": "SGD", "params": {"lr": 0.1}}
    return [
        ("base-zero2", BASE2, False),
        ("base-zero3", BASE3, False),
        ("typo-top-level", _with(BASE2, ("gradient_cliping", 1.0)), False),
        ("typo-in-zero", _with(BASE2, ("zero_optimization.overlap_com", True)), False),
        ("typo-optimizer-param", _with(BASE2, ("optimizer.params.betaz", [0.9, 0.99])), False),
        ("typo-optimizer-type", _with(BASE2, ("optimizer.type", "AdamWW")), False),
        ("typo-scheduler-type", _with(BASE2, ("scheduler", {"type": "WarmupLr", "params": {}})), False),
        ("typo-case-stage3-key", _with(BASE3, ("zero_optimization.Stage3_max_live_parameters", 1e9)), False),
        ("removed-mics_shard_size", _with(BASE3, ("zero_optimization.mics_shard_size", 2)), False),
        ("removed-progressive_layer_drop", _with(BASE2, ("progressive_layer_drop", {"enabled": True})), False),
        ("removed-key-micro-batch", _with(BASE2, ("train_micro_batch_size_per_gpu", _DELETE)), False),
        ("removed-key-zero-section", _with(BASE2, ("zero_optimization", _DELETE)), False),
        ("removed-key-optimizer", no_opt2, False),
        ("removed-key-optimizer-stage3", no_opt3, False),
        ("wrong-type-stage", _with(BASE2, ("zero_optimization.stage", "two")), False),
        ("wrong-type-micro-batch", _with(BASE2, ("train_micro_batch_size_per_gpu", "1")), False),
        ("wrong-type-clipping", _with(BASE2, ("gradient_clipping", "high")), False),
        ("wrong-type-overlap", _with(BASE2, ("zero_optimization.overlap_comm", "yes")), False),
        ("wrong-type-zero-section", _with(BASE2, ("zero_optimization", [2])), False),
        ("cpu_offload+code", _with(no_opt2, ("zero_optimization.cpu_offload", True)), True),
        ("offload_optimizer+code", _with(no_opt2, ("zero_optimization.offload_optimizer", {"device": "cpu"})), True),
        ("offload+code+no-force", _with(no_opt2, ("zero_optimization.offload_optimizer", {"device": "cpu"}),
                                        ("zero_force_ds_cpu_optimizer", False)), True),
        ("zero2-code-optimizer", no_opt2, True),
        ("offload-no-optimizer", _with(no_opt2, ("zero_optimization.offload_optimizer", {"device": "cpu"})), False),
        ("cpu_offload-config-optimizer", _with(BASE2, ("zero_optimization.cpu_offload", True)), False),
        ("untested-config-optimizer", _with(BASE2, ("optimizer", sgd)), False),
        ("untested-config-optimizer-allowed", _with(BASE2, ("optimizer", sgd),
                                                    ("zero_allow_untested_optimizer", True)), False),
        ("untested-optimizer-stage0", _with(BASE2, ("optimizer", sgd), ("zero_optimization.stage", 0)), False),
        ("fp16+bf16", _with(BASE2, ("fp16", {"enabled": True}), ("bf16", {"enabled": True})), False),
        ("bf16", _with(BASE2, ("bf16", {"enabled": True})), False),
        ("fp16", _with(BASE2, ("fp16", {"enabled": True})), False),
        ("nvme-offload", _with(BASE3, ("zero_optimization.offload_param", {"device": "nvme", "nvme_path": "/tmp"})),
         False),
        ("zero-true-legacy", _with(BASE2, ("zero_optimization", True)), False),
        ("zero-true-legacy-no-optimizer", _with(no_opt2, ("zero_optimization", True)), False),
        ("scheduler-missing-arg", _with(BASE2, ("scheduler", {"type": "WarmupDecayLR", "params": {}})), False),
        ("scheduler-bad-warmup", _with(BASE2, ("scheduler", {"type": "WarmupLR",
                                                             "params": {"warmup_num_steps": 0}})), False),
        ("scheduler-onecycle-bad-step", _with(BASE2, ("scheduler", {"type": "OneCycle", "params": {
            "cycle_min_lr": 1e-5, "cycle_max_lr": 1e-4, "cycle_first_step_size": 0}})), False),
        ("auto-unfilled", _with(BASE3, ("zero_optimization.sub_group_size", "auto")), False),
        ("auto-legacy-bfloat16", _with(BASE2, ("bfloat16", {"enabled": "auto"})), False),
        ("lamb-static-loss-scale", _with(BASE2, ("optimizer", {"type": "Lamb", "params": {"lr": 1e-3}}),
                                         ("zero_optimization.stage", 0), ("fp16", {"enabled": False,
                                                                                   "loss_scale": 128})), False),
        ("param-dtype-conflict", _with(BASE2, ("data_types", {"param_dtype": "bf16"})), False),
        ("hpz-no-optimizer", _with(no_opt3, ("zero_optimization.zero_hpz_partition_size", 2)), False),
        ("batch-inconsistent", {**BASE2, "train_batch_size": 3, "train_micro_batch_size_per_gpu": 2,
                                "gradient_accumulation_steps": 1}, False),
    ]


def world_mutations() -> list[tuple[str, dict[str, Any], bool]]:
    """Configs aimed at the rules that fire only at N > 1 ranks (issue 42), for --world-size 8."""
    z3 = BASE3
    return [
        ("hpz-not-dividing-world", _with(z3, ("zero_optimization.zero_hpz_partition_size", 3)), False),
        ("hpz-dividing-world", _with(z3, ("zero_optimization.zero_hpz_partition_size", 2)), False),
        ("batch-below-world", _with(BASE2, ("train_batch_size", 4), ("train_micro_batch_size_per_gpu", _DELETE),
                                    ("gradient_accumulation_steps", _DELETE)), False),
        ("batch-only-tbs", _with(BASE2, ("train_batch_size", 64), ("train_micro_batch_size_per_gpu", _DELETE),
                                 ("gradient_accumulation_steps", _DELETE)), False),
        ("batch-tbs-micro", _with(BASE2, ("train_batch_size", 64), ("gradient_accumulation_steps", _DELETE)), False),
        ("autotp-above-world", _with(BASE2, ("tensor_parallel", {"autotp_size": 16})), False),
        ("autotp-mesh-below-world", _with(BASE2, ("tensor_parallel", {"autotp_size": 4})), False),
        ("autotp-zero3", _with(z3, ("tensor_parallel", {"autotp_size": 2})), False),
        ("autotp-not-dividing-world", _with(BASE2, ("tensor_parallel", {"autotp_size": 3})), False),
        ("tp-size-not-autotp-size", _with(BASE2, ("tensor_parallel", {"autotp_size": 2, "tp": {"tp_size": 4}})), False),
        ("sp-not-dividing", _with(BASE2, ("sequence_parallel_size", 3)), False),
        ("sp-dividing", _with(BASE2, ("sequence_parallel_size", 2)), False),
        ("autoep-not-dividing", _with(BASE2, ("expert_parallel", {"enabled": True, "autoep_size": 3})), False),
        ("autoep-z3-hpz", _with(z3, ("expert_parallel", {"enabled": True, "autoep_size": 2}),
                                ("zero_optimization.zero_hpz_partition_size", 2)), False),
        ("mics-not-dividing", _with(z3, ("zero_optimization.mics_shard_size", 3)), False),
        ("mics-dividing", _with(z3, ("zero_optimization.mics_shard_size", 4)), False),
        ("qgz-no-reduce-scatter", _with(z3, ("zero_optimization.zero_quantized_gradients", True),
                                        ("zero_optimization.reduce_scatter", False)), False),
    ]


def items(only: str | None = None, world_size: int = 1, corpus: Path | None = None) -> list[dict[str, Any]]:
    """The corpus' configs (``corpus``: another folder of real configs, e.g. bench/unseen_configs, without the
    mutations), then the mutations."""
    out: list[dict[str, Any]] = []
    for path in sorted((corpus or CORPUS).glob("*.json")):
        if path.name in ("index.json", "provenance.json") or not path.name[:1].isalnum():
            continue
        text = path.read_text(encoding="utf-8")
        styles = [("hf", False)] + ([] if '"auto"' in text else [("plain", False)])
        out.append({"name": path.stem, "kind": "corpus", "text": text, "styles": styles})
    for name, config, code in [] if corpus else mutations() + (world_mutations() if world_size > 1 else []):
        out.append({"name": name, "kind": "mutation", "text": json.dumps(config, indent=1),
                    "styles": [("hf", False), ("plain", code)]})
    return [i for i in out if not only or only in i["name"]]


def related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def judge(errors: list[str], verdict: LaunchVerdict, name: str) -> str:
    if verdict.outcome == "machine_error":
        return "machine"
    if verdict.outcome == "launched":
        if not errors:
            return "agree"
        return "fails-later" if name in FAILS_LATER else "check-only"
    if not errors:
        return "launch-only"
    if verdict.key is None or any(related(verdict.key, e) for e in errors):
        return "agree"
    return "wrong-key"


def run(client: LaunchClient | dict[int, LaunchClient], version: str | None = None, only: str | None = None,
        log: Any = None, world_size: int = 1, gpus_per_node: int | None = None,
        corpus: Path | None = None) -> dict[str, Any]:
    snapshot = load_requested(version)
    checker = Checker(snapshot)  # the HF fill list: dsfields.hf.trainer.fill_list, one for every release
    cache: dict[str, LaunchVerdict] = {}
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()

    def launch(data: dict[str, Any], style: str, code: bool, assume_fp16: bool = False) -> LaunchVerdict:
        key = json.dumps([data, style, code, assume_fp16], sort_keys=True)
        if key not in cache:  # one verdict per (config, style) however often it is asked for
            verdicts = [each.launch(data, style, code, assume_fp16=assume_fp16)  # type: ignore[arg-type]
                        for _, each in sorted(clients.items())]
            refused = [v for v in verdicts if v.outcome == "config_error"]
            machine = [v for v in verdicts if v.outcome == "machine_error"]
            cache[key] = (refused or machine or verdicts)[0]  # the first rank that refuses gives the verdict
        return cache[key]

    clients = client if isinstance(client, dict) else {0: client}
    for item in items(only, world_size, corpus):
        for style, code in item["styles"]:
            options = Options(hf=style == "hf", optimizer_from_code=code,
                              world_size=world_size if world_size > 1 else None, gpus_per_node=gpus_per_node)
            report = check_text(item["text"], checker, options, item["name"])
            if report.error or report.config is None:
                rows.append({"name": item["name"], "style": style, "judgement": "unusable", "error": report.error})
                continue
            # An error names its key and the keys it ties in (fp16-bf16-exclusive: fp16.enabled with bf16.enabled).
            errors = sorted({p for f in report.findings if f.severity is Severity.ERROR for p in (f.path, *f.related)})
            data = report.config.data
            verdict = launch(data, style, code)
            row: dict[str, Any] = {"name": item["name"], "kind": item["kind"], "style": style, "code": code,
                                   "check_exit": 1 if errors else 0, "check_errors": errors,
                                   "judgement": judge(errors, verdict, item["name"]), **verdict.as_dict()}
            if verdict.reason == "fp16-on-cpu":
                assumed = launch(data, style, code, assume_fp16=True)
                row["fp16_assumed"] = assumed.as_dict()
                row["fp16_assumed_judgement"] = judge(errors, assumed, item["name"])
            if item["name"] in FAILS_LATER:
                row["fails_later_reason"] = FAILS_LATER[item["name"]]
            rows.append(row)
            if log is not None:
                print(f"{item['name'][:52]:52} {style:5}{'+code' if code else '     '} {verdict.outcome:13} "
                      f"check={row['check_exit']} {row['judgement']:12} {row.get('fp16_assumed_judgement', ''):12} "
                      f"{verdict.exc_type or ''}: {(verdict.message or '')[:70]}", file=log, flush=True)
    count = _count(rows, "judgement")
    fp16 = _count([r for r in rows if "fp16_assumed_judgement" in r], "fp16_assumed_judgement")
    bad = ("check-only", "launch-only", "wrong-key")
    summary = {
        "deepspeed_version": snapshot.version, "requests": len(rows), "launches": len(cache),
        "judgements": count, "agreements": count.get("agree", 0),
        "disagreements": sum(count.get(k, 0) for k in bad) + sum(fp16.get(k, 0) for k in bad),
        "machine_failures": count.get("machine", 0),
        "machine_reasons": _count([r for r in rows if r.get("judgement") == "machine"], "reason"),
        "fp16_assumed_judgements": fp16, "fails_later": count.get("fails-later", 0),
        "seconds": round(time.perf_counter() - started, 1),
        "worker_start_seconds": round(sum(c.start_seconds or 0.0 for c in clients.values()), 1),
        "worker_starts": sum(c.starts for c in clients.values()), "world_size": world_size,
        "gpus_per_node": gpus_per_node, "launch_seconds_per_config_and_rank": round(
            sum(v.seconds for v in cache.values()) / max(1, len(cache)), 3),
    }
    disagreements = [r for r in rows if r.get("judgement") in bad or r.get("fp16_assumed_judgement") in bad]
    return {"summary": summary, "disagreements": disagreements, "rows": rows}


def _count(rows: list[dict[str, Any]], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in rows:
        out[str(row.get(key))] = out.get(str(row.get(key)), 0) + 1
    return dict(sorted(out.items()))


def release_client(version: str) -> LaunchClient:
    """A launch worker running DeepSpeed ``version`` from its release runtime (dsfields.extract.releases)."""
    from dsfields.extract.launch_witness import release_launch_env
    from dsfields.extract.releases import environment_for

    return LaunchClient(python=str(environment_for(version)), env=release_launch_env(version))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", default=None, help="run the launches in this release's runtime")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--only", default=None)
    parser.add_argument("--world-size", type=int, default=1, help="check and launch at N ranks (rank 0 and N-1)")
    parser.add_argument("--gpus-per-node", type=int, default=None)
    parser.add_argument("--corpus", type=Path, default=None,
                        help="another folder of real configs (e.g. bench/unseen_configs): its configs, no mutations")
    args = parser.parse_args()
    try:
        from dsfields.launch.world import World

        if args.world_size > 1:
            clients = {rank: LaunchClient(world=World(args.world_size, rank, args.gpus_per_node))
                       for rank in World(args.world_size).ranks_to_play()}
            if args.release:
                for each in clients.values():
                    each.python, each.env = release_client(args.release).python, release_client(args.release).env
        else:
            clients = {0: release_client(args.release) if args.release else LaunchClient()}
        try:
            result = run(clients, args.release, args.only, log=sys.stdout, world_size=args.world_size,
                         gpus_per_node=args.gpus_per_node, corpus=args.corpus)
        finally:
            for each in clients.values():
                each.close()
    except ConfigFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    at = (f"-n{args.world_size}" if args.world_size > 1 else "") + (f"-{args.corpus.name}" if args.corpus else "")
    out = args.out or REPO / "test-output" / f"check-launch-{result['summary']['deepspeed_version']}{at}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(json.dumps(result["summary"], indent=1))
    for row in result["disagreements"]:
        print(f"DISAGREE {row['name']} {row['style']}: {row['judgement']} {row.get('exc_type')}: "
              f"{row.get('message')} key={row.get('key')} check={row.get('check_errors')}")
    print(f"table in {out}")
    return 1 if result["summary"]["disagreements"] else 0


if __name__ == "__main__":
    sys.exit(main())
