"""The ``dsfields`` command line: one subcommand per module, each returning an exit code.

Exit codes everywhere: 0 success, 1 "found something" (no match, findings, changes with
--fail-on), 2 unusable input (unknown version, unreadable file, DeepSpeed missing). Subcommand
modules keep heavy imports inside their functions so ``dsfields lookup`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from dsfields import __version__

# name -> module defining `add_arguments(parser)` and `run(args) -> int`, and the one-line help.
COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("dsfields.extract.command", "extract the installed DeepSpeed's config fields into a snapshot"),
    "lookup": ("dsfields.lookup", "what a config field is: default, type, auto, deprecation, source"),
    "diff": ("dsfields.diff", "what changed in ds_config.json between two DeepSpeed versions"),
}


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dsfields",
        description="The source-derived dictionary of every DeepSpeed config field.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"dsfields {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(command_parser)
        command_parser.set_defaults(_module=module)
    return parser


def main(args: Sequence[str] | None = None) -> int:
    parser = get_parser()
    opts = parser.parse_args(args)
    logging.basicConfig(
        level=logging.INFO if opts.verbose else logging.WARNING,
        format="dsfields: %(message)s",
        stream=sys.stderr,
    )
    if not getattr(opts, "command", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(opts._module.run(opts))
    except KeyboardInterrupt:
        print("dsfields: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
