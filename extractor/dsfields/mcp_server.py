"""``dsfields mcp``: the commands as a Model Context Protocol server over stdio (issue 41).

An agent client (a coding agent, an IDE assistant) starts ``dsfields mcp`` and calls its tools; each tool is one
command (lookup, check, resolve, estimate, diff, upgrade, schema) with typed inputs, and answers with that
command's own JSON — the bytes ``dsfields <command> ... --format json`` (``lookup --json``) prints, because the
tool *is* the command: its arguments become the command's argv, parsed by the command's own parser and run by its
own ``run`` in this process, with stdout captured. Nothing spawns a shell or a process.

Read-only: no tool writes a file. ``schema`` returns the text; a config is given as a path to read or as its text
(``config_text``), which :func:`dsfields.configfile.inline_config` hands to the reader in memory. Options that
write (``schema -o``, ``migrate``), start DeepSpeed (``check --launch``/``--runtime``, ``diff installed``) or point
at another snapshot tree (``diff --generated``) are not offered.

Hostile input gets the command line's one-line refusal as a tool error (``isError``), never a crash: a malformed
argument is refused by the SDK's validation of the tool's typed inputs or by the command's own parser; strings are
bounded (:data:`MAX_ARGUMENT`, a config text by the config reader's own limit); a config that is not JSON gets the
reader's line. Calls run one at a time (the commands print to ``sys.stdout``, which each call captures).

Resources: ``dsfields://<release>/fields.json``, each release's field dictionary (the committed snapshot; its
format is docs/snapshot-format.md).

Imports: the ``mcp`` SDK (the optional extra ``dsfields[mcp]``), stdlib, and the consumers and model. To add a
tool: write a function like :func:`lookup` below that builds the command's argv and
returns :func:`call`'s text, and list it in :data:`TOOLS`.
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys
import threading
from typing import Any, Literal

from dsfields import __version__
from dsfields.model.errors import DsfieldsError, MissingExtra

MAX_ARGUMENT = 4096
"""Longest string argument taken (a key, a release, trainer flags); a config text has the reader's own limit."""

Lang = Literal["en", "zh"]

COMMAND_MODULES = {
    "lookup": "dsfields.lookup",
    "check": "dsfields.check",
    "resolve": "dsfields.resolve",
    "estimate": "dsfields.estimate",
    "diff": "dsfields.diff",
    "upgrade": "dsfields.upgrade",
    "schema": "dsfields.schema",
    "explain": "dsfields.explain",
}
"""The command each tool runs (the modules ``dsfields.cli.COMMANDS`` names)."""

INLINE_NAME = "ds_config.json"
"""The name a config given as text goes by in the answers, unless the call names it (``name``)."""


class ToolFailure(Exception):
    """A call the command refused: the message is the command line's one line (its exit code was 2)."""


_LOCK = threading.Lock()


class _Parser(argparse.ArgumentParser):
    """The command's own arguments; a refusal raises instead of printing usage and exiting."""

    def error(self, message: str) -> Any:
        raise ToolFailure(f"{self.prog}: error: {message}")


def _short(value: str | None, what: str, limit: int = MAX_ARGUMENT) -> None:
    if value is not None and len(value) > limit:
        raise ToolFailure(f"dsfields mcp: {what} is {len(value)} characters long; at most {limit} are taken")


def call(command: str, argv: list[str], config_text: str = "", name: str = INLINE_NAME) -> str:
    """Run ``dsfields <command> <argv>`` in this process and return what it printed on stdout.

    ``config_text``: the config whose name is ``name`` in ``argv`` is read from this text instead of a file.
    Exit 0 or 1 (findings, no match) returns the output; exit 2 raises :class:`ToolFailure` with the command's
    one line (its stderr; for ``check``, whose JSON carries the file's error, that error).
    """
    from dsfields.model import termsafe
    from dsfields.model.errors import UsageError, refuse_two_dashes
    from dsfields.model.messages import localize, requested_language

    for arg in argv:
        _short(arg, "an argument")
    try:
        refuse_two_dashes(argv)
    except UsageError as exc:
        raise ToolFailure(termsafe.shown(f"dsfields {command}: {exc}")) from None
    module = importlib.import_module(COMMAND_MODULES[command])
    parser = _Parser(prog=f"dsfields {command}", add_help=False)
    module.add_arguments(parser)
    if command == "estimate":  # its add_arguments installs a one-line error that prints and exits: ours instead
        parser.error = _Parser.error.__get__(parser)  # type: ignore[method-assign]
    opts = parser.parse_args(argv)
    opts.command = command
    opts.verbose = False
    out, err = io.StringIO(), io.StringIO()
    with _LOCK:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            with termsafe.guarded_streams():
                if config_text is not None:
                    from dsfields.configfile import ConfigFileError, inline_config

                    try:
                        given = inline_config(name, config_text)
                    except ConfigFileError as exc:
                        raise ToolFailure(f"dsfields {command}: {exc}") from None
                    with given:
                        code = int(module.run(opts))
                else:
                    code = int(module.run(opts))
        except DsfieldsError as exc:
            line = localize(str(exc), requested_language(argv), "error.")
            raise ToolFailure(termsafe.shown(f"dsfields {command}: {line}")) from None
        except SystemExit as exc:  # a command that ends itself (its own one-line refusal on stderr)
            code = exc.code if isinstance(exc.code, int) else 2
        finally:
            sys.stdout, sys.stderr = saved
    if code >= 2:
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        if not lines and command == "check":
            lines = _check_error(out.getvalue())
        raise ToolFailure(lines[-1] if lines else f"dsfields {command}: exit {code}")
    return out.getvalue()


def _check_error(output: str) -> list[str]:
    """The file errors in ``check --format json`` output (what the text report prints on stderr)."""
    import json

    try:
        files = json.loads(output).get("files", [])
    except (ValueError, AttributeError):
        return []
    return [str(item["error"]) for item in files if isinstance(item, dict) and item.get("error")]


def _config(path: str | None, config_text: str, name: str | None) -> tuple[str, str | None, str]:
    """The FILE argument and the text to read for it: exactly one of ``path`` and ``config_text``.

    ``config_text`` is typed plain ``str`` (empty: not given) because the SDK parses a JSON-looking string
    argument of any other type into an object before validating it: the config's own text must reach the
    reader (its lines, its duplicate keys, its hjson)."""
    if (path is None) == (not config_text):
        raise ToolFailure("dsfields mcp: give the config as path or as config_text (one of them)")
    if path is not None:
        _short(path, "path")
        return path, None, INLINE_NAME
    given = name or INLINE_NAME
    _short(given, "name")
    return given, config_text, given


def _flag(argv: list[str], flag: str, value: Any) -> None:
    """Append ``flag value`` (``--flag=value``, so a value starting with '-' stays a value), or a switch."""
    if value is None or value is False:
        return
    if value is True:
        argv.append(flag)
    elif isinstance(value, list):
        for item in value:
            _flag(argv, flag, item)
    else:
        argv.append(f"{flag}={value}")


def _run(command: str, options: dict[str, Any], positionals: list[str], config_text: str = "",
         name: str = INLINE_NAME) -> str:
    argv: list[str] = []
    for flag, value in options.items():
        _flag(argv, flag, value)
    return call(command, [*argv, "--", *positionals] if positionals else argv, config_text, name)


# ---------------------------------------------------------------- the tools

def lookup(query: str, version: str | None = None, lang: Lang | None = None, history: bool = False,
           inference: bool = False) -> str:
    """What a DeepSpeed config field is (default, type, auto, deprecation, source line) — also a section, an
    optimizer or scheduler type (optimizer:AdamW), a catalogue entry or a goal (memory, OOM, speed): the answer
    of `dsfields lookup QUERY --json`."""
    return _run("lookup", {"--json": True, "--version": version, "--lang": lang, "--history": history,
                           "--inference": inference}, [query])


def check(path: str | None = None, config_text: str = "", name: str | None = None,
          version: str | None = None, hf: bool = False, world_size: int | None = None, strict: bool = False,
          optimizer_from_code: bool = False, trainer_args: str = "", hidden_size: int | None = None,
          dataset_size: int | None = None, hf_version: str | None = None, inference: bool = False,
          lang: Lang | None = None) -> str:
    """Find what DeepSpeed would reject, ignore or misread in a ds_config (give its path, or its text as
    config_text): `dsfields check FILE --format json`. hf: the config is for the HF Trainer ("auto" is fine);
    trainer_args: the Trainer's own flags as one string (implies hf)."""
    file, text, shown_as = _config(path, config_text, name)
    return _run("check", {"--format": "json", "--version": version, "--hf": hf, "--world-size": world_size,
                          "--strict": strict, "--optimizer-from-code": optimizer_from_code,
                          "--trainer-args": trainer_args or None, "--hidden-size": hidden_size,
                          "--dataset-size": dataset_size, "--hf-version": hf_version, "--inference": inference,
                          "--lang": lang}, [file], text, shown_as)


def resolve(path: str | None = None, config_text: str = "", name: str | None = None,
            version: str | None = None, hf: bool = False, world_size: int | None = None, stage_only: bool = False,
            only: list[str] | None = None, trainer_args: str = "", hidden_size: int | None = None,
            hf_version: str | None = None, inference: bool = False, lang: Lang | None = None) -> str:
    """Every key DeepSpeed will read for a config, the value it will use and where it comes from (written,
    default, effective default, derived, "auto" filled): `dsfields resolve FILE --format json`."""
    file, text, shown_as = _config(path, config_text, name)
    return _run("resolve", {"--format": "json", "--version": version, "--hf": hf, "--world-size": world_size,
                            "--stage-only": stage_only, "--only": only or [], "--trainer-args": trainer_args or None,
                            "--hidden-size": hidden_size, "--hf-version": hf_version, "--inference": inference,
                            "--lang": lang}, [file], text, shown_as)


def estimate(params: str, path: str | None = None, config_text: str = "", name: str | None = None,
             largest_layer_params: str | None = None, gpus_per_node: int = 1, nodes: int = 1,
             hidden_size: int | None = None, layers: int | None = None, seq_len: int | None = None,
             micro_batch: int | None = None, heads: int | None = None, zero_init: bool = True,
             trainer_args: str = "", hf_version: str | None = None, version: str | None = None,
             lang: Lang | None = None) -> str:
    """GPU memory per rank and host memory per node a config needs for a model of `params` parameters (7e9, 7B,
    1.3B), every term with its DeepSpeed source line, and the OOM list of knobs ranked by bytes saved:
    `dsfields estimate FILE --params N --format json`."""
    file, text, shown_as = _config(path, config_text, name)
    return _run("estimate", {"--format": "json", "--params": params, "--largest-layer-params": largest_layer_params,
                             "--gpus-per-node": gpus_per_node, "--nodes": nodes, "--hidden-size": hidden_size,
                             "--layers": layers, "--seq-len": seq_len, "--micro-batch": micro_batch,
                             "--heads": heads, "--no-zero-init": not zero_init, "--trainer-args": trainer_args or None,
                             "--hf-version": hf_version, "--version": version, "--lang": lang},
                [file], text, shown_as)


def diff(old: str, new: str, only: str | None = None, descriptions: bool = False, hf: bool = False,
         inference: bool = False, lang: Lang | None = None) -> str:
    """What changed in ds_config between two DeepSpeed releases (added, removed, renamed, deprecated,
    re-defaulted, retyped keys): `dsfields diff OLD NEW --format json`. only: kinds, comma-separated."""
    if "installed" in (old, new):
        raise ToolFailure("dsfields mcp: diff compares snapshotted releases; 'installed' needs the command line")
    return _run("diff", {"--format": "json", "--only": only, "--descriptions": descriptions, "--hf": hf,
                         "--inference": inference, "--lang": lang}, [old, new])


def upgrade(to: str, path: str | None = None, config_text: str = "", name: str | None = None,
            source: str | None = None, hf: bool = False, lang: Lang | None = None) -> str:
    """What upgrading DeepSpeed from release `source` (default: guessed from the file's keys) to `to` changes for
    one config: `dsfields upgrade FILE --from U --to V --format json`."""
    file, text, shown_as = _config(path, config_text, name)
    return _run("upgrade", {"--format": "json", "--from": source, "--to": to, "--hf": hf, "--lang": lang},
                [file], text, shown_as)


def schema(version: str | None = None, strict_unknown: bool = False, hf: bool = False, inference: bool = False,
           lang: Lang | None = None) -> str:
    """The Draft 2020-12 JSON Schema of ds_config for one release, as text (nothing is written):
    `dsfields schema --version V`."""
    return _run("schema", {"--version": version, "--strict-unknown": strict_unknown, "--hf": hf,
                           "--inference": inference, "--lang": lang}, [])


def explain(text: str, version: str | None = None, hf_version: str | None = None, path: str | None = None,
            config_text: str = "", name: str | None = None, lang: Lang | None = None) -> str:
    """From a pasted error, warning or symptom (or a message ID such as DS07932) to the key at fault, the releases
    the message exists in and the fix: `dsfields explain TEXT --format json`. Give the user's config as path or
    config_text to rank its keys first (optional)."""
    _short(text, "text")
    if path is None and not config_text:
        return _run("explain", {"--format": "json", "--version": version, "--hf-version": hf_version,
                                "--lang": lang}, [text])
    file, given, shown_as = _config(path, config_text, name)
    return _run("explain", {"--format": "json", "--version": version, "--hf-version": hf_version,
                            "--config": file, "--lang": lang}, [text], given, shown_as)


TOOLS = (lookup, check, resolve, estimate, diff, upgrade, schema, explain)
"""The tools, in the order they are listed."""


# ---------------------------------------------------------------- the server


def _tool(function: Any) -> Any:
    """``function`` as the SDK calls it: a refusal is an ``isError`` result whose text is the command's one line
    (the SDK's own ToolError would put "Error executing tool NAME:" before it)."""
    import functools

    from mcp_types import CallToolResult, TextContent

    def failed(line: str) -> Any:
        return CallToolResult(content=[TextContent(type="text", text=line)], is_error=True)

    @functools.wraps(function)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except ToolFailure as exc:
            return failed(str(exc))
        except RecursionError:
            return failed(f"dsfields {function.__name__}: input nested too deeply")
        except Exception as exc:
            return failed(f"dsfields {function.__name__}: internal error ({type(exc).__name__}: {exc})"[:MAX_ARGUMENT])

    return tool


def _one_line(text: str) -> str:
    """``text`` as one bounded line, data's control characters shown escaped (model/termsafe)."""
    from dsfields.model.termsafe import shown

    return shown(" ".join(text.split()))[:MAX_ARGUMENT]


def _resource_reader(version: str, file: str) -> Any:
    def read() -> str:
        import os

        from dsfields.model.generated import generated_root, read_generated

        return read_generated(os.path.join(generated_root(), version, file)).decode("utf-8")

    return read


def build_server() -> Any:
    """The MCP server with every tool and resource (the ``mcp`` SDK is imported here)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp_types import ToolAnnotations
    except ImportError as exc:
        raise MissingExtra("the mcp SDK", "mcp", cause=str(exc)) from None
    from mcp.server.mcpserver.exceptions import ToolError

    from dsfields.model.generated import available_versions

    class Server(MCPServer):
        """The SDK's server, whose refusals of a call's arguments are one line like the command line's."""

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is not None and isinstance(arguments, dict):
                known = tool.parameters.get("properties", {})
                unknown = sorted(str(key) for key in arguments if key not in known)
                if unknown:
                    raise ToolError(_one_line(f"dsfields {name}: unknown argument {', '.join(map(repr, unknown))} "
                                              f"(it takes {', '.join(known)})"))
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if type(cause).__name__ == "ValidationError" and callable(getattr(cause, "errors", None)):
                    # the SDK's pydantic refusal, told by name: only extract/ imports pydantic (tests/test_layers)
                    problems = [f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                                for error in cause.errors()]
                    raise ToolError(_one_line(f"dsfields {name}: {'; '.join(problems)}")) from None
                raise

    server = Server(
        name="dsfields",
        version=__version__,
        instructions="The source-derived dictionary of every DeepSpeed ds_config field, per release: look up a "
                     "key, check or resolve a config, estimate its memory, diff releases. Every answer is the "
                     "JSON of the dsfields command of the same name.",
        log_level="WARNING",
    )
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)
    for function in TOOLS:
        server.add_tool(_tool(function), name=function.__name__, annotations=read_only, structured_output=False)
    for version in available_versions():
        server.resource(f"dsfields://{version}/fields.json", name=f"{version}/fields.json",
                        description=f"DeepSpeed {version}: the ds_config field dictionary (the committed snapshot)",
                        mime_type="application/json")(_resource_reader(version, "fields.json"))
    return server


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: the client speaks MCP over stdin/stdout."""


def run(args: argparse.Namespace) -> int:
    """Serve MCP over stdio until the client closes the connection."""
    server = build_server()
    import anyio

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # the SDK claims the real descriptors
    try:
        anyio.run(server.run_stdio_async)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass  # the client went away mid-answer: nothing left to tell it
    except KeyboardInterrupt:
        pass
    finally:
        sys.stdout, sys.stderr = saved
    return 0
