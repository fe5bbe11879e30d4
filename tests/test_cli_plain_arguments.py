"""A quick command of positionals only (``dsfields lookup KEY``, ``dsfields check FILE...``) is parsed without
argparse (cli.plain_arguments); its namespace must be argparse's, whatever options the command grows, and any
other command line must go to argparse."""

from __future__ import annotations

import pytest

from dsfields.cli import COMMANDS, QUICK_COMMANDS, get_parser, plain_arguments

pytestmark = pytest.mark.unit

PLAIN = {"lookup": [["stage3_max_live_parameters"], ["zero_optimization.offload_param.device"]],
         "check": [["ds_config.json"], ["a.json", "b.hjson", "c.yaml"]]}


def _argparse(argv: list[str]) -> dict:
    namespace = vars(get_parser([argv[0]], "en", True).parse_args(argv))
    namespace.pop("_module")
    return namespace


@pytest.mark.parametrize("command", QUICK_COMMANDS)
def test_a_command_line_of_positionals_gets_argparses_namespace(command: str) -> None:
    for values in PLAIN[command]:
        argv = [command, *values]
        fast = plain_arguments(argv)
        assert fast is not None, argv
        got = vars(fast).copy()
        assert got.pop("_module").__name__ == COMMANDS[command][0]
        assert got == _argparse(argv)


@pytest.mark.parametrize("argv", [["lookup", "a", "b"], ["lookup"], ["check", "--hf", "x.json"],
                                  ["check", "x.json", "--version", "0.19.8"], ["lookup", "-h"], ["check", "-"],
                                  ["lookup", ""], ["diff", "0.19.7", "0.19.8"], ["-v", "lookup", "x"]])
def test_anything_else_goes_to_argparse(argv: list[str]) -> None:
    assert plain_arguments(argv) is None
