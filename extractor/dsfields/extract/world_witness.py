"""The world rules' confirmation: their examples launched as rank 0 and the last rank of a world of N.

``python -m dsfields.extract.world_witness [--out FILE] [--release VERSION]`` writes
``generated/<version>/world.json`` (:mod:`dsfields.launch.world_rules`): one launch worker per rank played, each in
torch's fake process group (:mod:`dsfields.launch.world`), so the record says which rank refused. A rule is
confirmed when every trigger is refused by some rank with the rule's message and every control launches on every
rank played (a machine failure of a control leaves it unjudged, of a trigger unconfirmed).
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


def _brief(verdicts: dict[int, LaunchVerdict]) -> dict[str, Any]:
    return {str(rank): {k: v for k, v in verdict.as_dict().items() if k in ("outcome", "exc_type", "message", "site",
                                                                              "reason")}
            for rank, verdict in sorted(verdicts.items())}


def probe_world(python: str | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``world.json`` for the DeepSpeed ``python`` runs (default: this interpreter's)."""
    from dsfields.launch import world_rules

    world = World(world_rules.PROBE_WORLD)
    clients = {rank: LaunchClient(**({"python": python} if python else {}), env=env,
                                  world=World(world.size, rank)) for rank in world.ranks_to_play()}
    try:
        def launch(config: dict[str, Any]) -> dict[int, LaunchVerdict]:
            return {rank: client.launch(config, "plain") for rank, client in clients.items()}

        rules = {rule.id: confirm_world_rule(rule, launch) for rule in world_rules.RULES}
        about = dict(clients[0].worker_start.get("about") or {}) if getattr(clients[0], "worker_start", None) else {}
    finally:
        for client in clients.values():
            client.close()
    for record in rules.values():
        record["world_size"] = world.size
    return {"format_version": world_rules.WORLD_FORMAT, "generated_by": "python -m dsfields.extract.world_witness",
            "deepspeed_version": str(about.get("deepspeed", "unknown")),
            "environment": {"torch": about.get("torch"), "python": about.get("python"), "backend": "fake",
                            "world_size": world.size, "ranks_played": list(world.ranks_to_play()),
                            "not_judged": UNSEEN},
            "rules": rules}


def write_world(out: Path | None, release: str | None = None) -> int:
    """Write ``world.json`` (to ``out``, else stdout); ``release``: in its runtime."""
    python = env = None
    if release:
        from dsfields.extract.launch_witness import release_launch_env
        from dsfields.extract.releases import environment_for

        python, env = str(environment_for(release)), release_launch_env(release)
    data = probe_world(python, env)
    text = json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"
    if out is not None:
        from dsfields.model.store import write_atomic

        write_atomic(out, text)
    else:
        sys.stdout.write(text)
    confirmed = sum(r["confirmed"] for r in data["rules"].values())
    print(f"{confirmed}/{len(data['rules'])} world rules confirmed on DeepSpeed {data['deepspeed_version']} "
          f"at world size {data['environment']['world_size']}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.extract.world_witness [--out FILE] [--release VERSION]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.world_witness",
                                     description="Confirm the world rules at N=8, ranks 0 and 7: world.json.")
    parser.add_argument("--out", type=Path, default=None, help="where to write world.json (else stdout)")
    parser.add_argument("--release", default=None, metavar="VERSION",
                        help="run in that release's runtime (dsfields.extract.releases) instead of here")
    args = parser.parse_args(argv)
    return write_world(args.out.resolve() if args.out else None, args.release)


if __name__ == "__main__":
    sys.exit(main())
