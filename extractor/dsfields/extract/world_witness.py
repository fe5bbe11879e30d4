"""The world rules' confirmation: their examples launched as rank 0 and the last rank of a world of N.

``python -m dsfields.extract.world_witness [--out FILE] [--release VERSION]`` writes
``generated/<version>/world.json`` (:mod:`dsfields.launch.world_rules`): one launch worker per rank played, each in
torch's fake process group (:mod:`dsfields.launch.world`), so the record says which rank refused. A rule is
confirmed when every trigger is refused by some rank with the rule's message and every control launches on every
rank played (a machine failure of a control leaves it unjudged, of a trigger unconfirmed).

Every rule's record also says where the release's source has it (``in_source``, read statically from the release's
committed ``messages.json`` and ``paths.json``: :func:`dsfields.launch.world_rules.in_source`). ``--static``
writes only that, for a release whose runtime is not built here: no rule is then confirmed, and each one found in
the source says "not confirmed by launch".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dsfields.launch.client import LaunchClient
from dsfields.launch.verdict import LaunchVerdict
from dsfields.launch.world import UNSEEN, World


def _said(verdict: LaunchVerdict) -> str:
    return f"{verdict.message or ''} {verdict.site or ''}"


def confirm_world_rule(rule: Any, launch: Any) -> dict[str, Any]:
    """One rule's record: ``launch(config)`` gives {rank: verdict} for the ranks played."""
    why: list[str] = []
    triggers = [launch(config) for config in rule.triggers]
    controls = [launch(config) for config in rule.controls]
    refusal: tuple[int, LaunchVerdict] | None = None
    for verdicts in triggers:
        refused = [(rank, v) for rank, v in sorted(verdicts.items()) if v.outcome == "config_error"]
        if not refused:
            machine = [v.reason for v in verdicts.values() if v.outcome == "machine_error"]
            why.append(f"trigger failed for a machine reason ({machine[0]})" if machine else "trigger launched")
        elif not any(rule.message in _said(v) for _, v in refused):
            rank, v = refused[0]
            why.append(f"trigger refused otherwise on rank {rank}: {v.exc_type}: {v.message}")
        else:
            refusal = refusal or next((rank, v) for rank, v in refused if rule.message in _said(v))
    for verdicts in controls:
        for rank, v in sorted(verdicts.items()):
            if v.outcome == "config_error":
                why.append(f"control refused on rank {rank}: {v.exc_type}: {v.message}")
    record: dict[str, Any] = {"confirmed": not why, "source": rule.source, "world_size": None,
                              "triggers": [_brief(v) for v in triggers], "controls": [_brief(v) for v in controls]}
    if refusal is not None:
        rank, v = refusal
        refusing = sorted(r for r, each in triggers[0].items() if each.outcome == "config_error")
        record.update({"rank": rank, "message": v.message, "exc_type": v.exc_type, "site": v.site,
                       "ranks_refusing": refusing})
    if why:
        record["why_not"] = why
    return record


NOT_LAUNCHED = "not confirmed by launch (static world.json: read in this release's source, never launched)"


def static_sites(version: str, generated: Path | None = None) -> dict[str, dict[str, Any] | None]:
    """Each rule's place in ``version``'s source (:func:`~dsfields.launch.world_rules.in_source`), from the committed
    ``messages.json`` and ``paths.json``: rule id -> ``{"site", "function"}`` / ``{}`` (torch's) / None (absent)."""
    from dsfields.launch import world_rules
    from dsfields.model.store import read_generated, repo_generated_dir

    root = (generated or repo_generated_dir()) / version
    messages = json.loads(read_generated(str(root / "messages.json")).decode("utf-8"))["messages"]
    paths = json.loads(read_generated(str(root / "paths.json")).decode("utf-8"))["fields"]
    return {rule.id: world_rules.in_source(rule, messages, paths) for rule in world_rules.RULES}


def static_world(version: str, generated: Path | None = None) -> dict[str, Any]:
    """``world.json`` for a release not launched: each rule where its source has it, none confirmed."""
    from dsfields.launch import world_rules

    sites = static_sites(version, generated)
    rules: dict[str, Any] = {}
    for rule in world_rules.RULES:
        found = sites[rule.id]
        record: dict[str, Any] = {"confirmed": False, "source": rule.source, "in_source": found is not None}
        if found is not None:
            record.update({"static_site": found.get("site"), "why_not": [NOT_LAUNCHED]})
        rules[rule.id] = record
    return {"format_version": world_rules.WORLD_FORMAT,
            "generated_by": f"python -m dsfields.extract.world_witness --static --release {version}",
            "deepspeed_version": version,
            "environment": {"launched": False, "not_judged": NOT_LAUNCHED}, "rules": rules}


def _brief(verdicts: dict[int, LaunchVerdict]) -> dict[str, Any]:
    return {str(rank): {k: v for k, v in verdict.as_dict().items() if k in ("outcome", "exc_type", "message", "site",
                                                                              "reason")}
            for rank, verdict in sorted(verdicts.items())}


def probe_world(python: str | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``world.json`` for the DeepSpeed ``python`` runs (default: this interpreter's)."""
    from dsfields.launch import world_rules

    world = World(world_rules.PROBE_WORLD, gpus_per_node=world_rules.PROBE_PER_NODE)
    clients = {rank: LaunchClient(**({"python": python} if python else {}), env=env,
                                  world=World(world.size, rank, world.gpus_per_node))
               for rank in world.ranks_to_play()}
    try:
        def launch(config: dict[str, Any]) -> dict[int, LaunchVerdict]:
            return {rank: client.launch(config, "plain") for rank, client in clients.items()}

        rules = {rule.id: confirm_world_rule(rule, launch) for rule in world_rules.RULES}
        about = dict(clients[0].worker_start.get("about") or {}) if getattr(clients[0], "worker_start", None) else {}
    finally:
        for client in clients.values():
            client.close()
    sites = static_sites(str(about.get("deepspeed", "unknown"))) if _has_snapshot(about) else {}
    for rule_id, record in rules.items():
        record["world_size"] = world.size
        if rule_id in sites:
            found = sites[rule_id]
            record["in_source"] = found is not None
            if found:
                record["static_site"] = found.get("site")
    return {"format_version": world_rules.WORLD_FORMAT, "generated_by": "python -m dsfields.extract.world_witness",
            "deepspeed_version": str(about.get("deepspeed", "unknown")),
            "environment": {"torch": about.get("torch"), "python": about.get("python"), "backend": "fake",
                            "world_size": world.size,
                            "gpus_per_node": world.per_node, "ranks_played": list(world.ranks_to_play()),
                            "not_judged": UNSEEN},
            "rules": rules}


def _has_snapshot(about: dict[str, Any]) -> bool:
    from dsfields.model.store import repo_generated_dir

    return (repo_generated_dir() / str(about.get("deepspeed", "unknown")) / "messages.json").is_file()


def write_world(out: Path | None, release: str | None = None, static: bool = False) -> int:
    """Write ``world.json`` (to ``out``, else stdout); ``release``: in its runtime (``static``: read, not launched)."""
    python = env = None
    if static:
        if not release:
            print("--static needs --release VERSION", file=sys.stderr)
            return 2
        return _emit(static_world(release), out)
    if release:
        from dsfields.extract.launch_witness import release_launch_env
        from dsfields.extract.releases import environment_for

        python, env = str(environment_for(release)), release_launch_env(release)
    return _emit(probe_world(python, env), out)


def _emit(data: dict[str, Any], out: Path | None) -> int:
    text = json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"
    if out is not None:
        from dsfields.model.store import write_atomic

        write_atomic(out, text)
    else:
        sys.stdout.write(text)
    confirmed = sum(r["confirmed"] for r in data["rules"].values())
    found = sum(bool(r.get("in_source")) for r in data["rules"].values())
    at = (f"at world size {data['environment']['world_size']}" if data["environment"].get("launched", True)
          else "(not launched: static)")
    print(f"{confirmed}/{len(data['rules'])} world rules confirmed on DeepSpeed {data['deepspeed_version']} {at}; "
          f"{found} in its source", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.extract.world_witness [--out FILE] [--release VERSION]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.world_witness",
                                     description="Confirm the world rules at N=8, ranks 0 and 7: world.json.")
    parser.add_argument("--out", type=Path, default=None, help="where to write world.json (else stdout)")
    parser.add_argument("--release", default=None, metavar="VERSION",
                        help="run in that release's runtime (dsfields.extract.releases) instead of here")
    parser.add_argument("--static", action="store_true",
                        help="launch nothing: record where the release's source has each rule (not confirmed)")
    args = parser.parse_args(argv)
    return write_world(args.out.resolve() if args.out else None, args.release, args.static)


if __name__ == "__main__":
    sys.exit(main())
