"""What the hot-path stand-ins for json, textwrap and argparse buy: lookup and check with and without them.

dsfields keeps three stand-ins on the start-up path (``model/jsonlite.py`` for ``json``, ``terminal.fill`` for
``textwrap``, ``lookup.parse_fast`` for ``argparse``), and issue #22 removes them only if the start-up budget
still holds without them (lookup <= 1.0x grep, check <= 1.2x grep). This runs, alternating within each round:

  (a) dsfields lookup/check as it is;
  (b) the same command with the stand-ins' cost paid: ``json`` and ``textwrap`` imported first and argparse's
      parser built (``cli._fast_options`` off) -- a lower bound of the cost of removing them, since the real
      modules' per-call work is not counted;
  (c) grep -rn '"stage3_max_live_parameters"' <installed deepspeed package>, the named baseline

and prints each median with its ratio to grep. No assertion: figures for the decision.

    PYTHONPATH=extractor python bench/standins.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import alternate

REPO = Path(__file__).resolve().parent.parent
QUERY = "stage3_max_live_parameters"
WITHOUT = ("import json, sys, textwrap; import dsfields.cli as cli; cli._fast_options = lambda argv, chosen: None; "
           "sys.exit(cli.main(sys.argv[1:]))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (one warm-up round more)")
    opts = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "extractor"), env.get("PYTHONPATH")) if p)
    config = Path(tempfile.mkdtemp()) / "ds_config.json"
    config.write_text(json.dumps({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                                  "zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9},
                                  "bf16": {"enabled": "auto"}}))
    grep = (["grep", "-rn", f'"{QUERY}"', str(alternate.deepspeed_dir("bench/standins.py"))], dict(os.environ))
    for subject, args in (("lookup", ["lookup", QUERY]), ("check", ["check", "--hf", str(config)])):
        commands = {
            subject: ([sys.executable, "-m", "dsfields", *args], env),
            f"{subject} without stand-ins": ([sys.executable, "-c", WITHOUT, *args], env),
            "grep": grep,
        }
        found = alternate.medians("bench/standins.py", commands, opts.rounds, ok_codes=(0, 1))
        for name, value in found.items():
            print(f"  {name:28} {value * 1000:7.1f} ms   {value / found['grep']:.2f}x grep")
    return 0


if __name__ == "__main__":
    sys.exit(main())
