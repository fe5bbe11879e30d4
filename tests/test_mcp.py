"""``dsfields mcp`` driven by the ``mcp`` SDK's own stdio client (issue 41).

The server is started as an agent client starts it (``python -m dsfields mcp``, spoken to over its stdin and
stdout); every tool is called on a real config of ../shared/realworld-configs and must answer exactly what the
command line prints with ``--format json`` (``lookup --json``); hostile calls get the command line's own one-line
refusal as a tool error and the server keeps answering; a client that hangs up mid-call ends the server cleanly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "realworld-configs"
VERSION = "0.19.8"
ZERO3 = CORPUS / "001_huggingface_transformers_ds_config_zero3.json"  # HF Trainer template: "auto" values
PLAIN = CORPUS / "018_microsoft_DeepSpeedExamples_ds_zero-offload_10B_config.json"  # no "auto"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "extractor"), env.get("PYTHONPATH", "")) if p)
    env.pop("LANG", None)  # the default language is the locale's: the CLI and the server see the same
    return env


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsfields", *args], capture_output=True, text=True, env=_env(),
                          timeout=300)


def _text(result: Any) -> str:
    assert len(result.content) == 1, result
    return result.content[0].text


def session_run(body: Any) -> Any:
    """Run ``body(session)`` against a fresh ``dsfields mcp`` over stdio."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "dsfields", "mcp"], env=_env())

    async def main() -> Any:
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            await session.initialize()
            return await body(session)

    return anyio.run(main)


# (tool, its arguments, the command line that must print the same JSON)
CALLS = [
    ("lookup", {"query": "stage3_max_live_parameters", "version": VERSION},
     ["lookup", "stage3_max_live_parameters", "--json", "--version", VERSION]),
    ("lookup", {"query": "memory", "version": VERSION, "lang": "zh"},  # a goal, in Chinese
     ["lookup", "memory", "--json", "--version", VERSION, "--lang", "zh"]),
    ("lookup", {"query": "optimizer:AdamW", "version": VERSION},  # a catalogue entry
     ["lookup", "optimizer:AdamW", "--json", "--version", VERSION]),
    ("check", {"path": str(ZERO3), "version": VERSION, "hf": True},
     ["check", str(ZERO3), "--format", "json", "--version", VERSION, "--hf"]),
    ("check", {"path": str(PLAIN), "version": "0.14.4", "world_size": 8},
     ["check", str(PLAIN), "--format", "json", "--version", "0.14.4", "--world-size", "8"]),
    ("check", {"path": str(ZERO3), "version": VERSION, "trainer_args": "--bf16 --per_device_train_batch_size 4",
               "hidden_size": 4096},
     ["check", str(ZERO3), "--format", "json", "--version", VERSION,
      "--trainer-args=--bf16 --per_device_train_batch_size 4", "--hidden-size", "4096"]),
    ("resolve", {"path": str(ZERO3), "version": VERSION, "hf": True, "stage_only": True},
     ["resolve", str(ZERO3), "--format", "json", "--version", VERSION, "--hf", "--stage-only"]),
    ("estimate", {"path": str(ZERO3), "params": "6.74B", "gpus_per_node": 8, "hidden_size": 4096, "layers": 32,
                  "seq_len": 4096, "version": VERSION},
     ["estimate", str(ZERO3), "--params", "6.74B", "--gpus-per-node", "8", "--hidden-size", "4096", "--layers", "32",
      "--seq-len", "4096", "--format", "json", "--version", VERSION]),
    ("diff", {"old": "0.14.4", "new": VERSION},
     ["diff", "0.14.4", VERSION, "--format", "json"]),
    ("upgrade", {"path": str(PLAIN), "source": "0.10.3", "to": VERSION, "lang": "zh"},
     ["upgrade", str(PLAIN), "--from", "0.10.3", "--to", VERSION, "--format", "json", "--lang", "zh"]),
    ("schema", {"version": VERSION, "hf": True},
     ["schema", "--version", VERSION, "--hf"]),
    ("explain", {"text": "AssertionError: Check batch related parameters. train_batch_size is not equal to "
                         "micro_batch_per_gpu * gradient_acc_step * world_size 16 != 1 * 8 * 1", "version": VERSION},
     ["explain", "AssertionError: Check batch related parameters. train_batch_size is not equal to "
                 "micro_batch_per_gpu * gradient_acc_step * world_size 16 != 1 * 8 * 1", "--format", "json",
      "--version", VERSION]),
    ("explain", {"text": "5 validation errors for DeepSpeedBF16Config", "path": str(ZERO3), "lang": "zh"},
     ["explain", "5 validation errors for DeepSpeedBF16Config", "--config", str(ZERO3), "--format", "json",
      "--lang", "zh"]),
]


def test_every_tool_answers_what_the_command_line_prints():
    expected = {}
    for index, (_, _, argv) in enumerate(CALLS):
        done = cli(*argv)
        assert done.returncode in (0, 1), (argv, done.stderr)
        expected[index] = done.stdout

    async def body(session: ClientSession) -> dict[str, Any]:
        tools = (await session.list_tools()).tools
        answers = {i: await session.call_tool(name, arguments) for i, (name, arguments, _) in enumerate(CALLS)}
        return {"tools": tools, "answers": answers}

    got = session_run(body)
    names = [tool.name for tool in got["tools"]]
    assert names == ["lookup", "check", "resolve", "estimate", "diff", "upgrade", "schema", "explain"]
    schemas = {tool.name: tool.input_schema for tool in got["tools"]}
    # typed inputs: an integer is an integer, a language is en or zh, the key is required
    assert schemas["lookup"]["required"] == ["query"]
    world = schemas["check"]["properties"]["world_size"]
    assert {"type": "integer"} in world["anyOf"]
    assert {"enum": ["en", "zh"], "type": "string"} in schemas["resolve"]["properties"]["lang"]["anyOf"]
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in got["tools"])
    for index, (name, arguments, argv) in enumerate(CALLS):
        result = got["answers"][index]
        assert not result.is_error, (name, arguments, _text(result))
        text = _text(result)
        assert json.loads(text) == json.loads(expected[index]), (name, argv)
        assert text == expected[index], (name, argv)  # byte for byte, not only the same JSON


def test_a_config_given_as_text_is_read_like_the_file():
    text = ZERO3.read_text(encoding="utf-8")

    async def body(session: ClientSession) -> Any:
        return [await session.call_tool("check", {"config_text": text, "name": str(ZERO3), "version": VERSION}),
                await session.call_tool("resolve", {"config_text": text, "name": str(ZERO3), "version": VERSION})]

    checked, resolved = session_run(body)
    assert json.loads(_text(checked)) == json.loads(cli("check", str(ZERO3), "--format", "json",
                                                        "--version", VERSION).stdout)
    assert json.loads(_text(resolved)) == json.loads(cli("resolve", str(ZERO3), "--format", "json",
                                                         "--version", VERSION).stdout)


def test_hostile_calls_get_the_command_lines_refusal_and_the_server_goes_on(tmp_path):
    malformed = tmp_path / "ds_config.json"
    malformed.write_text('{"zero_optimization": {"stage": 3,}', encoding="utf-8")
    cli_malformed = cli("check", str(malformed), "--version", VERSION)
    cli_version = cli("lookup", "stage", "--json", "--version", "9.9.9")
    cli_params = cli("estimate", str(ZERO3), "--params", "lots", "--format", "json", "--version", VERSION)
    for done in (cli_malformed, cli_version, cli_params):
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done

    async def body(session: ClientSession) -> dict[str, Any]:
        calls = {
            "not json": ("check", {"config_text": malformed.read_text(encoding="utf-8"), "name": str(malformed),
                                   "version": VERSION}),
            "unknown version": ("lookup", {"query": "stage", "version": "9.9.9"}),
            "bad params": ("estimate", {"path": str(ZERO3), "params": "lots", "version": VERSION}),
            "wrong type": ("check", {"path": str(ZERO3), "world_size": "eight"}),
            "unknown argument": ("lookup", {"query": "stage", "output": "/tmp/x"}),
            "missing argument": ("lookup", {}),
            "both sources": ("check", {"path": str(ZERO3), "config_text": "{}"}),
            "neither source": ("resolve", {}),
            "huge key": ("lookup", {"query": "a" * 1_000_000}),
            "huge config": ("check", {"config_text": " " * (9 * 1024 * 1024) + "{}"}),
            "option as value": ("lookup", {"query": "--help"}),
            "unknown tool": ("migrate", {"path": str(ZERO3)}),
            "bad language": ("upgrade", {"path": str(ZERO3), "to": VERSION, "lang": "fr"}),
            "a directory": ("check", {"path": str(tmp_path)}),
        }
        answers = {}
        for label, (name, arguments) in calls.items():
            started = time.monotonic()
            answers[label] = (await session.call_tool(name, arguments), time.monotonic() - started)
        answers["after"] = (await session.call_tool("lookup", {"query": "stage", "version": VERSION}), 0.0)
        return answers

    answers = session_run(body)
    for label, (result, seconds) in answers.items():
        if label in ("after", "option as value"):
            continue
        assert result.is_error, label
        line = _text(result)
        assert "\n" not in line and "Traceback" not in line, (label, line)
        assert seconds < 30, (label, seconds)
    assert _text(answers["not json"][0]) == cli_malformed.stderr.strip()
    assert _text(answers["unknown version"][0]) == cli_version.stderr.strip()
    assert _text(answers["bad params"][0]) == cli_params.stderr.strip()
    assert "at most 4096" in _text(answers["huge key"][0])
    assert "larger than 8 MiB" in _text(answers["huge config"][0])
    assert "is a directory" in _text(answers["a directory"][0])
    # '--help' is a query like any other, not an option of the command (the answer: no match, suggestions)
    assert json.loads(_text(answers["option as value"][0]))["query"] == "--help"
    after = answers["after"][0]
    assert not after.is_error and json.loads(_text(after))["deepspeed_version"] == VERSION


def _message(payload: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **payload}) + "\n").encode()


def test_a_client_that_hangs_up_mid_call_ends_the_server_cleanly():
    server = subprocess.Popen([sys.executable, "-m", "dsfields", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(_message({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        server.stdin.write(_message({"method": "notifications/initialized"}))
        # the slowest tool, then the client is gone: its pipes closed before the answer
        server.stdin.write(_message({"id": 2, "method": "tools/call", "params": {
            "name": "schema", "arguments": {"version": VERSION}}}))
        server.stdin.flush()
        server.stdin.close()
        server.stdout.close()
        code = server.wait(timeout=60)
        errors = server.stderr.read().decode() if server.stderr else ""
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert code == 0, errors
    assert "Traceback" not in errors, errors


def test_the_readme_registration_snippet_starts_this_server():
    import re
    import tomllib

    from dsfields.cli import COMMANDS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Agents: `dsfields mcp`"):]
    snippet = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    entry = snippet["mcpServers"]["dsfields"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts[entry["command"]] == "dsfields.cli:main"
    assert entry["args"][0] in COMMANDS and COMMANDS[entry["args"][0]][0] == "dsfields.mcp_server"


def test_each_tool_runs_the_module_the_command_line_runs():
    """The tools' command modules are the ones ``dsfields.cli.COMMANDS`` names (one table, checked, not two)."""
    from dsfields.cli import COMMANDS
    from dsfields.mcp_server import COMMAND_MODULES, TOOLS

    assert [tool.__name__ for tool in TOOLS] == list(COMMAND_MODULES)
    assert {name: COMMANDS[name][0] for name in COMMAND_MODULES} == COMMAND_MODULES


def test_malformed_json_rpc_on_the_wire_is_answered_or_dropped_never_a_crash(tmp_path):
    """Bytes that are no JSON-RPC (not JSON, a cut-off object, NUL and invalid UTF-8) and an unknown method: the
    server answers the unknown method with JSON-RPC's "Method not found", drops the rest, writes no file, and ends
    with exit 0 and no traceback when its input ends."""
    junk = (b'not json at all\n{"jsonrpc":"2.0","id":1,"method":"nope"}\n{"jsonrpc": "2.0", "id": 2\n'
            b"\x00\xff\xfe\n" + b"[" * 10_000 + b"\n")
    done = subprocess.run([sys.executable, "-m", "dsfields", "mcp"], input=junk, capture_output=True, env=_env(),
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines() if line.strip()]
    assert answers == [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found",
                                                               "data": "nope"}}]
    assert list(tmp_path.iterdir()) == []
