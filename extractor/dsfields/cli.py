"""The ``dsfields`` command line: one subcommand per module, each a typed function returning an exit code.

Exit codes everywhere: 0 success, 1 "found something" (no match, findings, changes with
--fail-on), 2 unusable input (unknown version, unreadable file, DeepSpeed missing). Every refusal is
a :class:`~dsfields.model.errors.DsfieldsError`, caught once here and printed as one line.
Subcommand modules keep heavy imports inside their functions so ``dsfields lookup`` starts fast.

This is the top layer: the only module that may import both the consumers and :mod:`dsfields.extract`.
Where a consumer needs something only the extractor can give (``diff installed``, ``check --runtime``),
it is imported here and passed in, so consumers never import DeepSpeed.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Sequence

from dsfields import __version__
from dsfields.model import chinese
from dsfields.model.errors import DsfieldsError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and argparse cost lookup's start-up milliseconds; annotations are strings anyway
    import argparse
    from typing import Any, NoReturn

# name -> module defining `add_arguments(parser)` and `run(args, ...) -> int`, and the one-line help.
COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("dsfields.extract.extract_command", "extract the installed DeepSpeed's config fields into a snapshot"),
    "snapshot": ("dsfields.extract.snapshot_command", "extract other DeepSpeed releases, each in its own runtime"),
    "lookup": ("dsfields.lookup", "what a config field is: default, type, auto, deprecation, source"),
    "diff": ("dsfields.diff", "what changed in ds_config.json between two DeepSpeed versions"),
    "check": ("dsfields.check", "find what DeepSpeed would reject, ignore or misread in ds_config files"),
    "resolve": ("dsfields.resolve", "every key DeepSpeed will read for a config: its value and where it comes from"),
    "migrate": ("dsfields.migrate", "rewrite a config for another DeepSpeed release: renames, conversions, removals"),
    "upgrade": ("dsfields.upgrade", "what upgrading DeepSpeed from U to V changes for one config file"),
    "schema": ("dsfields.schema", "write the JSON Schema (Draft 2020-12) of ds_config for one DeepSpeed version"),
    "docs": ("dsfields.docs.docs_command",
             "render the field dictionary of every snapshot and build (or serve) the site"),
    # issue 28: memory a config needs for a model of N parameters, and which knobs save the most
    "estimate": ("dsfields.estimate", "GPU and host memory a config needs for N parameters, and its OOM list"),
    # issue 41: the commands above as Model Context Protocol tools for agent clients (needs dsfields[mcp])
    "mcp": ("dsfields.mcp_server", "serve the commands as MCP tools over stdio, for coding agents (read-only)"),
    # issue 38: from a pasted error, warning or symptom to the key, the releases and the fix
    "explain": ("dsfields.explain", "from a pasted error, warning or symptom to the key at fault and the fix"),
    # issue 40: a config for a situation, chosen by the estimate
    "init": ("dsfields.init", "write a ds_config for a model and its GPUs: the cheapest in compute that fits"),
    # issue 40: accelerate's YAML <-> the ds_config its DeepSpeedPlugin builds, per accelerate release
    "convert": ("dsfields.convert", "accelerate YAML <-> the ds_config accelerate's DeepSpeedPlugin builds from it"),
}


def chosen_command(args: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first word not an option), if it is one."""
    for arg in args:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def _help_formatter(lang: str = "en") -> type[argparse.HelpFormatter]:
    """argparse's formatter, told the width up front: its own default imports shutil (bz2, lzma), which
    costs a command ~3 ms of start-up although no help is printed."""
    import argparse

    class HelpFormatter(argparse.HelpFormatter):
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            if width is None:
                import os

                try:
                    width = int(os.environ.get("COLUMNS", "")) - 2
                except ValueError:
                    try:
                        width = os.get_terminal_size().columns - 2
                    except OSError:
                        width = 78
            super().__init__(prog, indent_increment, max_help_position, max(width, 40))

        def add_usage(self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None) -> None:
            if prefix is None and lang == "zh":
                prefix = chinese.text("cli.usage_prefix")  # argparse's "usage: " (issue 28: --help in Chinese)
            super().add_usage(usage, actions, groups, prefix)

        def _format_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None) -> str:
            text = super()._format_usage(usage, actions, groups, prefix)
            # argparse indents wrapped lines by len(prefix): these 3 characters take 6 columns
            if lang == "zh" and prefix == chinese.text("cli.usage_prefix"):  # (an English run reads no catalogue)
                text = text.replace("\n" + " " * len("dsfields"), "\n" + " " * (len("dsfields") + 3))
            return text

    return HelpFormatter


def get_parser(load: Collection[str] | None = None, lang: str = "en", only: bool = False) -> argparse.ArgumentParser:
    """The full parser; with ``load``, only those subcommands' modules are imported (the others get
    their help line but no options), so that running one subcommand never imports the others; with ``only``
    too, the others are left out (for a command line that runs one of them and prints no top-level help).
    ``lang``: the language of argparse's refusals (the usage line stays argparse's)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            if lang != "zh":
                super().error(message)
            from dsfields.model.messages import localize

            self.print_usage(sys.stderr)
            self.exit(2, chinese.text("cli.self_prog_v1", self_prog=self.prog, v1=localize(message, lang,
                'error.argparse.')))

    formatter = _help_formatter(lang)
    parser = Parser(
        prog="dsfields",
        description="The source-derived dictionary of every DeepSpeed config field.",
        formatter_class=formatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"dsfields {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if only and load is not None and name not in load:
            # A named subcommand is the only one parsed: the others' parsers (each a few gettext look-ups and
            # regex-laden formatters) would cost a quick command milliseconds and change nothing it prints.
            continue
        command_parser = sub.add_parser(name, help=help_text, description=help_text, formatter_class=formatter)
        # `dsfields lookup` must start about as fast as grep, whatever the other subcommands import.
        if load is None or name in load:
            module = importlib.import_module(module_name)
            module.add_arguments(command_parser)
            command_parser.set_defaults(_module=module)
    if lang == "zh":
        _help_in_chinese(parser)
    return parser


class _Defaults:
    """Takes a subcommand's ``add_argument`` calls as argparse would and keeps what parsing a command line of
    positionals only needs: each option's destination and default, and the positionals in order. Anything it does
    not model (an option group, a positional with choices) raises AttributeError or is marked, and argparse parses."""

    def __init__(self) -> None:
        self.defaults: dict[str, Any] = {}
        self.positionals: list[tuple[str, Any, Any]] = []
        self.modelled = True

    def add_argument(self, *names: str, **options: Any) -> None:
        action = options.get("action")
        if names[0].startswith("-"):
            long = next((n for n in names if n.startswith("--")), names[0])
            dest = options.get("dest") or long.lstrip("-").replace("-", "_")
            if action in ("store_true", "store_false"):
                self.defaults[dest] = options.get("default", action == "store_false")
            elif action in (None, "store", "append", "count"):
                self.defaults[dest] = options.get("default")
            else:
                self.modelled = False
        elif action not in (None, "store") or "choices" in options or options.get("nargs") not in (None, "+"):
            self.modelled = False
        else:
            self.positionals.append((options.get("dest") or names[0], options.get("nargs"), options.get("type")))

    def set_defaults(self, **values: Any) -> None:
        self.defaults.update(values)


def plain_arguments(argv: Sequence[str]) -> Any | None:
    """The namespace argparse would give for ``QUICK_COMMAND VALUE...`` (no option anywhere), without importing or
    building argparse (its import, gettext and parser cost ``lookup`` ~5 ms of a grep-sized budget); None for any
    other command line, which argparse then parses (and refuses or helps with) as usual."""
    if len(argv) < 2 or argv[0] not in QUICK_COMMANDS or any(arg.startswith("-") or not arg for arg in argv[1:]):
        return None
    from types import SimpleNamespace

    module = importlib.import_module(COMMANDS[argv[0]][0])
    recorder = _Defaults()
    try:
        module.add_arguments(recorder)
    except AttributeError:  # a call argparse knows and the recorder does not model
        return None
    values = list(argv[1:])
    if not recorder.modelled or len(recorder.positionals) != 1:
        return None
    dest, nargs, kind = recorder.positionals[0]
    if nargs is None and len(values) != 1:
        return None
    converted = [kind(value) if kind else value for value in values]
    namespace = {"verbose": False, **recorder.defaults, "command": argv[0], "_module": module,
                 dest: converted if nargs == "+" else converted[0]}
    return SimpleNamespace(**namespace)


def _help_in_chinese(parser: argparse.ArgumentParser) -> None:
    """Every help string, description and section title of ``parser`` and its subcommands in Chinese
    (the ``help`` group of :mod:`dsfields.model.chinese`); an option the catalogue lacks keeps its English."""
    import argparse

    from dsfields.model.chinese import help_zh, table

    parser.description = help_zh(parser.description)
    for group in parser._action_groups:
        group.title = table("argparse").get(group.title or "", group.title)
    for action in parser._actions:
        if action.help is not argparse.SUPPRESS:
            action.help = help_zh(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = help_zh(choice.help)
            for sub in {id(p): p for p in action.choices.values()}.values():
                _help_in_chinese(sub)


def providers(opts: argparse.Namespace) -> dict[str, Callable[..., Any]]:
    """What the extractor lends a consumer for this invocation (imported only when asked for)."""
    if opts.command == "diff" and "installed" in (opts.old, opts.new):
        from dsfields.extract.installed import installed_snapshot

        return {"installed": installed_snapshot}
    if opts.command == "check":
        lent: dict[str, Callable[..., Any]] = {}
        if opts.runtime:
            from dsfields.extract.oracle import build_deepspeed_config

            lent["build"] = build_deepspeed_config
        if getattr(opts, "launch", False):  # check --launch: deepspeed.initialize in a worker subprocess
            from dsfields.launch.client import LaunchClient

            lent["launcher"] = LaunchClient.for_check  # sandboxed, start and builds bounded, builds shown
        return lent
    return {}


QUICK_COMMANDS = ("lookup", "check")
"""Commands that must answer about as fast as grep."""

EXIT_AT_ONCE = ("extract",)
"""Commands whose process ends without interpreter finalization once their files are written.

After ``extract`` the process holds DeepSpeed, torch and thousands of pydantic models; tearing the
modules down costs ~1 s (measured: 6.7 s against 5.7 s for the whole run) and writes nothing. Every
file the command writes is complete and renamed into place before it returns (``write_atomic``).
"""


def main(args: Sequence[str] | None = None) -> int:
    # Run as the process's own command (the console script, python -m), a quick command makes no cyclic
    # garbage worth collecting: the collector's passes over the start-up's ~100 000 objects, during the run
    # and again at exit, cost it ~6 ms. Called with ``args`` (tests, other code), nothing changes.
    chosen = chosen_command(sys.argv[1:]) if args is None else None
    if chosen in EXIT_AT_ONCE:
        code = _guarded_main(args)
        _exit_now(code)
    quick = chosen in QUICK_COMMANDS
    if quick:
        import gc

        gc.disable()
        try:
            return _guarded_main(args)
        finally:
            gc.freeze()  # what is left is freed at exit without a last full collection
    return _guarded_main(args)


def _exit_now(code: int) -> NoReturn:
    """End the process with ``code`` after flushing the standard streams, skipping finalization."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach the reader
            pass
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()  # what atexit would do for handlers that buffer (files given by the user's logging)
    os._exit(code)


def _guarded_main(args: Sequence[str] | None) -> int:
    from dsfields.model import termsafe

    with termsafe.guarded_streams():
        try:
            code = _main(args)
            termsafe.flush_stdout()
            return code
        except KeyboardInterrupt:
            termsafe.report("dsfields: interrupted")
            return 130
        except BrokenPipeError:
            termsafe.silence_stdout()
            return 0
        except termsafe.OutputError as exc:
            termsafe.report(f"dsfields: {exc}")
            termsafe.silence_stdout()
            return 2
        except OSError as exc:  # the environment (unwritable target, full disk): one line, not a traceback
            where = f"{exc.filename}: " if exc.filename else ""
            termsafe.report(f"dsfields: {where}{exc.strerror or exc}")
            return 2


def _main(args: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    chosen = chosen_command(argv)
    from dsfields.model.errors import UsageError, refuse_two_dashes
    from dsfields.model.messages import requested_language

    try:
        refuse_two_dashes(argv)
    except UsageError as exc:
        from dsfields.model import termsafe

        termsafe.report(termsafe.shown(f"dsfields {chosen}: {exc}" if chosen else f"dsfields: {exc}"))
        return 2
    # Only the named subcommand's parser when nothing before it could print the top-level help (which lists all).
    only = chosen is not None and all(arg in ("-v", "--verbose") for arg in argv[:argv.index(chosen)])
    opts = plain_arguments(argv) or get_parser([chosen] if chosen else [], requested_language(argv),
                                               only).parse_args(argv)
    # A subcommand that logs has imported logging by now; the others (lookup) skip its ~6 ms import.
    if opts.verbose or "logging" in sys.modules:
        import logging

        logging.basicConfig(
            level=logging.INFO if opts.verbose else logging.WARNING,
            format="dsfields: %(message)s",
            stream=sys.stderr,
        )
    if not getattr(opts, "command", None):
        from dsfields.model.messages import requested_language

        get_parser([], requested_language(argv)).print_help(sys.stderr)
        return 2
    try:
        return int(opts._module.run(opts, **providers(opts)))
    except DsfieldsError as exc:
        from dsfields.model import termsafe
        from dsfields.model.messages import localize, requested_language

        # issue 28: the one line in --lang (else the locale's language); the exit code is the same
        termsafe.report(f"dsfields {opts.command}: {localize(str(exc), requested_language(argv), 'error.')}")
        return exc.exit_code
