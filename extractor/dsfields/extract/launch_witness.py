"""What the snapshot factory records of the launch: the launch witness's paths and ``launch.json``.

Maintainer-only: ``dsfields extract --launch`` (:func:`launch_witness`, witness 4 of issue 15: the JSON paths
``deepspeed.initialize`` reads, on tracing dicts) and the confirmation of the launch rules
(:mod:`dsfields.launch.catalogue`) that ``generated/<version>/launch.json`` holds, written by ``python -m
dsfields.extract.launch_witness --rules`` (:func:`probe_rules`, :func:`write_rules`) or by ``extract --launch
--launch-rules`` in the witness's own worker. Every record is made with the accelerator's answers pinned
(:data:`~dsfields.launch.launcher.PIN_SUPPORT_ENV`), so it is the same bytes from any CPU; older releases run
in their own runtime (:func:`release_launch_env`, the CPU-accelerator stubs 0.9.3-0.14.0 need). A user's
``check --launch`` uses none of this: it goes through :class:`~dsfields.launch.client.LaunchClient`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dsfields.hf.trainer import WITNESS_PAIR
from dsfields.launch.client import LaunchClient
from dsfields.launch.launcher import PIN_SUPPORT_ENV, Launcher
from dsfields.launch.verdict import DEFAULT_TIMEOUT, LaunchVerdict

# ---------------------------------------------------------------- confirming the launch rules (launch.json)

LAUNCH_FORMAT = 1


def _brief(verdict: LaunchVerdict, example: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"style": example.style, "optimizer_from_code": example.optimizer_from_code,
                           "outcome": verdict.outcome}
    for name in ("exc_type", "message", "key", "raised_by", "reason", "site"):
        if getattr(verdict, name) is not None:
            out[name] = getattr(verdict, name)
    return out


def confirm_rule(rule: Any, launch: Callable[[Any], LaunchVerdict]) -> dict[str, Any]:
    """Run one :class:`~dsfields.launch.catalogue.LaunchRule`'s examples; is the rule what this release does?

    ``raises`` rules are confirmed when every trigger fails for a config reason with a message containing
    ``rule.message`` and every control launches (or fails for this machine only); ``accepts`` rules when
    every trigger launches. A trigger that fails for a machine reason leaves the rule unconfirmed.
    """
    triggers = [(example, launch(example)) for example in rule.triggers]
    controls = [(example, launch(example)) for example in rule.controls]
    why: list[str] = []
    for example, verdict in triggers:
        if rule.effect == "accepts":
            if not verdict.ok:
                why.append(f"{example.style} trigger did not launch: {verdict.exc_type}: {verdict.message}")
        elif verdict.outcome == "machine_error":
            why.append(f"{example.style} trigger failed for a machine reason ({verdict.reason})")
        elif verdict.outcome == "launched":
            why.append(f"{example.style} trigger launched")
        elif rule.message not in (verdict.message or ""):
            why.append(f"{example.style} trigger failed otherwise: {verdict.exc_type}: {verdict.message}")
    for example, verdict in controls:
        if verdict.outcome == "config_error":
            why.append(f"{example.style} control failed: {verdict.exc_type}: {verdict.message}")
    record: dict[str, Any] = {"confirmed": not why, "effect": rule.effect,
                              "triggers": [_brief(v, e) for e, v in triggers],
                              "controls": [_brief(v, e) for e, v in controls]}
    failing = next((v for _, v in triggers if v.outcome == "config_error"), None)
    if failing is not None:
        record.update({"message": failing.message, "exc_type": failing.exc_type, "site": failing.site,
                       "raised_by": failing.raised_by})
    if why:
        record["why_not"] = why
    return record


def probe_rules(launcher: Launcher, rules: Iterable[Any] | None = None) -> dict[str, Any]:
    """``launch.json`` for the DeepSpeed this process runs: every launch rule confirmed or not, with messages."""
    from dsfields.launch import catalogue as launch_rules

    def launch(example: Any) -> LaunchVerdict:
        return launcher.launch(example.config, example.style, example.optimizer_from_code)

    return rules_document(launcher.about(), launch, rules or launch_rules.RULES)


def rules_document(about: dict[str, Any], launch: Callable[[Any], LaunchVerdict],
                   rules: Iterable[Any]) -> dict[str, Any]:
    """``launch.json``: ``about`` is the worker's :meth:`~dsfields.launch.launcher.Launcher.about`, ``launch``
    runs one example untraced."""
    return {
        "format_version": LAUNCH_FORMAT,
        "generated_by": "python -m dsfields.extract.launch_witness --rules",
        "deepspeed_version": about["deepspeed"],
        "environment": {"python": about["python"], "torch": about["torch"],
                        "accelerator": about["accelerator"], "world_size": 1, "backend": "gloo",
                        "accelerator_support": about.get("accelerator_support"),
                        # the same bytes as before the plan came from the pair's snapshots (every record unchanged)
                        "hf_layers": f"transformers {WITNESS_PAIR[0]} / accelerate {WITNESS_PAIR[1]}, mirrored "
                                     "(dsfields.hf.trainer)"},
        "rules": {rule.id: confirm_rule(rule, launch) for rule in rules},
    }


# ---------------------------------------------------------------- the launch witness of `dsfields extract --launch`


def witness_examples() -> list[Any]:
    """The configs the launch witness runs: every launch rule's triggers and controls, each once, in catalogue order.

    They span what ``deepspeed.initialize`` builds beyond ``DeepSpeedConfig`` (each ZeRO stage, offload, every
    optimizer family the rules name, a scheduler, both calling styles); nothing is listed here by hand.
    """
    from dsfields.launch import catalogue as launch_rules

    seen: set[str] = set()
    out: list[Any] = []
    for rule in launch_rules.RULES:
        for example in (*rule.triggers, *rule.controls):
            key = json.dumps(example.as_dict(), sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                out.append(example)
    return out


def witness_paths(reads: Iterable[str]) -> set[str]:
    """The JSON paths of a traced launch that name a key (iterations ``a.*`` and the probe key left out)."""
    from dsfields.extract.discover import PROBE_KEY

    return {p for p in reads if not {"*", PROBE_KEY} & set(p.split("."))}


def launch_witness(client: LaunchClient | None = None, timeout: float = DEFAULT_TIMEOUT,
                   rules: bool = False) -> dict[str, Any]:
    """Witness 4 of issue 15: the paths ``deepspeed.initialize`` reads, on tracing dicts, over :func:`witness_examples`.

    Runs in a worker process (:class:`LaunchClient`: a launch changes process-wide state). Returns
    ``{"paths": sorted paths, "configs": n, "outcomes": {outcome: count}}`` for
    :func:`dsfields.extract.reconcile.merge`; a machine error still contributes the reads made before it.

    ``rules``: also confirm the launch rules in the same worker (``extract --launch --launch-rules``), each
    example launched again untraced as ``--rules`` does; the document is ``"launch_json"``. One worker start
    (DeepSpeed's import, the gloo group, the warm-up launch) instead of two.
    """
    own = client is None
    client = client or LaunchClient(env=witness_env())
    paths: set[str] = set()
    outcomes: dict[str, int] = {}
    examples = witness_examples()
    document = None
    try:
        for example in examples:
            verdict = client.launch(example.config, example.style, example.optimizer_from_code, trace=True,
                                    timeout=timeout)
            outcomes[verdict.outcome] = outcomes.get(verdict.outcome, 0) + 1
            paths |= witness_paths(verdict.reads)
        if rules:
            from dsfields.launch import catalogue as launch_rules

            def launch(example: Any) -> LaunchVerdict:
                return client.launch(example.config, example.style, example.optimizer_from_code, timeout=timeout)

            document = rules_document(client.worker_start["about"], launch, launch_rules.RULES)
    finally:
        if own:
            client.close()
    report: dict[str, Any] = {"paths": sorted(paths), "configs": len(examples),
                              "outcomes": dict(sorted(outcomes.items()))}
    if document is not None:
        report["launch_json"] = document
    return report


# ---------------------------------------------------------------- older releases (their runtime from releases.py)

_CPU_STUBS = {
    "intel_extension_for_pytorch": '"""dsfields stub: DS_ACCELERATOR=cpu needs this import in 0.9.3-0.14.0."""\n',
    "oneccl_bindings_for_pytorch": '"""dsfields stub: imported by their cpu_accelerator.py; the launch uses gloo."""\n',
}


def needs_cpu_stubs(source: Path) -> bool:
    """Whether this release's CPU accelerator demands intel_extension_for_pytorch (0.9.3-0.14.0)."""
    try:
        text = (source / "deepspeed" / "accelerator" / "real_accelerator.py").read_text(encoding="utf-8")
    except OSError:
        return False
    return "CPU_Accelerator requires intel_extension_for_pytorch" in text


def cpu_stub_dir() -> Path:
    """Empty ``intel_extension_for_pytorch`` / ``oneccl_bindings_for_pytorch`` packages, for older releases'
    CPU accelerator: it only imports them; everything the launch runs is torch's gloo and DeepSpeed's own ops."""
    from dsfields.extract.releases import cache_dir

    root = cache_dir() / "launch-cpu-stubs"
    for name, text in _CPU_STUBS.items():
        init = root / name / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(text, encoding="utf-8")
    return root


def witness_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a launch worker started from this process (``extract --launch``, ``--launch-rules``).

    This process's own, plus the CPU-accelerator stubs when the DeepSpeed it imports needs them: inside a
    release runtime of 0.9.3-0.14.0 (``dsfields snapshot --launch``) the worker's ``DS_ACCELERATOR=cpu``
    would otherwise fail at import, and every launch would be a machine error for a reason no user has.
    Found from the importable DeepSpeed's own source, so it holds for an installed release too.
    """
    import importlib.util

    env = dict(os.environ if environ is None else environ)
    env.setdefault(PIN_SUPPORT_ENV, "1")  # a committed record: the same from any CPU
    spec = importlib.util.find_spec("deepspeed")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if locations and needs_cpu_stubs(Path(locations[0]).parent):
        stubs = str(cpu_stub_dir())
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if stubs not in paths:
            env["PYTHONPATH"] = os.pathsep.join([*paths, stubs])
    return env


def release_launch_env(version: str) -> dict[str, str]:
    """The environment of a launch worker for release ``version`` (``releases.release_env`` plus the CPU
    accelerator, and the stubs where that release needs them)."""
    from dsfields.extract.releases import fetch_source, release_env

    source = fetch_source(version)
    extra = [cpu_stub_dir()] if needs_cpu_stubs(source) else []
    env = release_env(version, extra)
    env["DS_ACCELERATOR"] = "cpu"
    env.setdefault(PIN_SUPPORT_ENV, os.environ.get(PIN_SUPPORT_ENV, "1"))  # its launch.json: the same from any CPU
    return env


def probe_release(version: str, out: Path, timeout: float = 1800.0) -> int:
    """``--rules`` in release ``version``'s runtime: writes ``out`` (its launch.json)."""
    from dsfields.extract.releases import environment_for

    python = environment_for(version)
    # The CPU ops first, outside any launch timeout (an interrupted JIT build leaves a broken cache).
    subprocess.run([str(python), "-P", "-m", "dsfields.launch", "--build-ops"], env=release_launch_env(version),
                   capture_output=True, text=True, timeout=timeout, check=False)
    result = subprocess.run([str(python), "-P", "-m", "dsfields.extract.launch_witness", "--rules",
                             "--out", str(out)], env=release_launch_env(version), capture_output=True, text=True,
                            timeout=timeout, check=False)
    tail = (result.stderr or "").strip().splitlines()[-1:] or [""]
    print(f"{version}: exit {result.returncode}: {tail[0]}", file=sys.stderr)
    return result.returncode


def launch_json_text(data: dict[str, Any]) -> str:
    """``launch.json`` as written, whether by ``--rules`` or by the launch witness's worker."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def write_rules(launcher: Launcher, out: Path | None, results: Any) -> int:
    """``--rules``: ``launch.json`` of the DeepSpeed ``launcher`` runs, to ``out`` (else to ``results``)."""
    data = probe_rules(launcher)
    text = launch_json_text(data)
    if out is not None:
        from dsfields.model.store import write_atomic

        write_atomic(out, text)
    else:
        results.write(text)
    results.flush()
    confirmed = sum(r["confirmed"] for r in data["rules"].values())
    print(f"{confirmed}/{len(data['rules'])} launch rules confirmed on DeepSpeed {data['deepspeed_version']}",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.extract.launch_witness --rules``: confirm every launch rule, write ``launch.json``."""
    import argparse

    from dsfields.launch.catalogue import launch_path
    from dsfields.launch.worker import answer_stream

    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.launch_witness",
                                     description="Confirm the launch rules on a DeepSpeed release: launch.json.")
    parser.add_argument("--rules", action="store_true", required=True,
                        help="confirm every launch rule (dsfields.launch.catalogue) on this DeepSpeed; write --out")
    parser.add_argument("--out", type=Path, default=None, help="where to write launch.json (else stdout)")
    parser.add_argument("--release", default=None, metavar="VERSION",
                        help="run in that release's runtime (dsfields.extract.releases) instead of here")
    parser.add_argument("--no-warm-up", action="store_true", help="skip the warm-up launch")
    args = parser.parse_args(argv)
    if args.release:
        return probe_release(args.release, (args.out or launch_path(args.release)).resolve())
    out = args.out.resolve() if args.out else None
    results = answer_stream()
    os.environ.setdefault(PIN_SUPPORT_ENV, "1")  # launch.json is committed: the same from any CPU
    return write_rules(Launcher(warm_up=not args.no_warm_up), out, results)


if __name__ == "__main__":
    sys.exit(main())
