"""accelerate's own ds_config for accelerate YAML files: what ``dsfields convert`` is held to.

For each YAML, exactly what ``accelerate launch --config_file X.yaml`` and the script's ``Accelerator`` do up to the
ds_config: ``launch_command_parser`` and ``_validate_launch_command`` read the YAML, ``launch_command``'s list of
the YAML's DeepSpeed fields, ``prepare_deepspeed_cmd_env`` exports the variables, then, in that environment,
``DeepSpeedPlugin()`` and ``set_mixed_precision`` (as ``AcceleratorState`` calls it). A relative
``deepspeed_config_file`` is read from the YAML's folder (the launch runs there). Uses the installed accelerate.

    python bench/accelerate_reference.py FILE.yaml... [--json OUT]
Prints one JSON list: ``{"file", "accelerate", "config"}`` or ``{"file", "accelerate", "error": {type, message}}``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
import warnings
from typing import Any


def reference(path: str, flags: list[str] | None = None) -> dict[str, Any]:
    """accelerate's ds_config for the YAML at ``path`` with the ``accelerate launch`` options ``flags`` (run with
    the YAML's folder as the current one)."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import DeepSpeedPlugin
    from accelerate.utils.launch import prepare_deepspeed_cmd_env

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    path = os.path.abspath(path)
    os.chdir(os.path.dirname(path))
    try:
        args = launch_command_parser().parse_args(["--config_file", path, *(flags or []), "train.py"])
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            args, defaults, mp_from_config = _validate_launch_command(args)
            fields = list(defaults.deepspeed_config.keys()) if defaults else []
            if mp_from_config:
                fields.append("mixed_precision")
            args.deepspeed_fields_from_accelerate_config = ",".join(fields)
            _cmd, env = prepare_deepspeed_cmd_env(args)
        os.environ.clear()
        os.environ.update(env)
        plugin = DeepSpeedPlugin()
        plugin.set_mixed_precision(env["ACCELERATE_MIXED_PRECISION"])
        return {"config": plugin.deepspeed_config,
                "zero3_init_flag": bool(plugin.zero3_init_flag)}
    except Exception as exc:
        return {"error": {"type": type(exc).__name__, "message": str(exc)}}
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--json", default=None)
    parser.add_argument("--launch-args", default=None, help="accelerate launch options given with every file")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    import shlex

    import accelerate

    flags = shlex.split(args.launch_args) if args.launch_args else None
    rows = [{"file": f, "accelerate": accelerate.__version__, **reference(f, flags)} for f in args.files]
    text = json.dumps(rows, indent=1)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
