"""``python -m dsfields.launch``: ``deepspeed.initialize`` on this CPU machine, from the command line.

The launch lives in six modules besides this one, user-run code apart from the snapshot factory's; each
imports only modules listed above it (and the op cache, :mod:`dsfields.launch.ops`):

* :mod:`~dsfields.launch.verdict`: the record of one launch (launched, ``config_error``,
  ``machine_error``) and how a failure is read (which JSON path, which machine reason);
* :mod:`~dsfields.launch.reset`: what DeepSpeed keeps between launches, put back after each;
* :mod:`~dsfields.launch.world`: the rank of the world a launch plays (torch's fake group above one);
* :mod:`~dsfields.launch.launcher`: the launch itself, many configs in one process, both calling styles;
* :mod:`~dsfields.launch.worker`: the worker process (``--jsonl``), started or forked;
* :mod:`~dsfields.launch.client`: its client, what ``check --launch`` and the witness call;

Only ``dsfields.extract`` may import DeepSpeed, torch and pydantic; these modules import them lazily (inside
:class:`~dsfields.launch.launcher.Launcher`), so the verdict and the client work without them. The
snapshot factory's use of the launch (the launch witness, ``launch.json``) is
:mod:`dsfields.extract.launch_witness`'s, which imports this package and is never imported by it.

    python -m dsfields.launch CONFIG.json... [--hf] [--optimizer-from-code] [--fill-auto] [--trace]
    python -m dsfields.launch --jsonl [--no-warm-up]      # the worker
    python -m dsfields.launch --jsonl --world-size 8 --rank 7 [--gpus-per-node 8]   # ... as rank 7 of 8
    python -m dsfields.launch --build-ops                 # DeepSpeed's CPU ops, ahead of any launch
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dsfields.launch.launcher import Launcher, build_ops
from dsfields.launch.worker import answer_stream, serve_worker, tell_builds
from dsfields.launch.world import World


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.launch",
                                     description="Run deepspeed.initialize on CPU for ds_config files or JSON lines.")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--jsonl", action="store_true", help="serve requests as JSON lines on stdin")
    parser.add_argument("--no-warm-up", action="store_true", help="skip the warm-up launch (one launch only)")
    parser.add_argument("--hf", action="store_true", help="as the HF Trainer / accelerate would call it")
    parser.add_argument("--optimizer-from-code", action="store_true")
    parser.add_argument("--fill-auto", action="store_true", help='plain style: fill the HF Trainer\'s "auto" first')
    parser.add_argument("--trace", action="store_true", help="record the JSON paths the launch reads")
    parser.add_argument("--world-size", type=int, default=1, metavar="N",
                        help="play a rank of a world of N (torch's fake process group; default 1: a gloo group of one)")
    parser.add_argument("--rank", type=int, default=0, metavar="R", help="with --world-size: the rank played")
    parser.add_argument("--gpus-per-node", type=int, default=None, metavar="G",
                        help="with --world-size: ranks per node (LOCAL_SIZE; default: all N on one node)")
    parser.add_argument("--build-ops", action="store_true", help="JIT-build DeepSpeed's CPU ops once, then exit")
    args = parser.parse_args(argv)
    try:
        world = World(args.world_size, args.rank, args.gpus_per_node)
    except ValueError as exc:
        parser.error(str(exc))
    if args.jsonl and not args.build_ops:
        return serve_worker(warm_up=not args.no_warm_up, world=world)
    if args.jsonl:  # a worker: whatever it starts (ninja, compilers) ends with it or with its client
        from dsfields.launch.process_tree import hold_lifeline

        hold_lifeline()
    if args.build_ops:
        for name, status in build_ops().items():
            print(f"{name}: {status}")
        return 0
    files = [path.resolve() for path in args.files]  # the Launcher moves to its own working directory
    results = answer_stream()
    if args.jsonl:  # builds during start-up (shm_comm, the warm-up's fused_adam) extend the client's wait too
        tell_builds(results)
    launcher = Launcher(warm_up=not args.no_warm_up, world=world)
    failed = 0
    for path in files:
        verdict = launcher.launch(json.loads(path.read_text(encoding="utf-8")), "hf" if args.hf else "plain",
                                  args.optimizer_from_code, args.trace, fill_auto=args.fill_auto)
        failed += not verdict.ok
        results.write(json.dumps({"file": str(path), **verdict.as_dict()}) + "\n")
    results.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
