"""A recorded MCP server in real kernels: recorded in one kernel with the SDK-written demo server,
replayed in another whose server command cannot run (and would leave a mark if it were run)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from meowgent_nb.recording.cassette import Cassette
from tests.support.kernel_driver import Kernel

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
CALLS = (
    '<tool_call>{"name": "demo_forecast", "arguments": {"city": "Paris"}}</tool_call>'
    '<tool_call>{"name": "demo_stats", "arguments": {"numbers": [3, 1.5, 9]}}</tool_call>'
    '<tool_call>{"name": "demo_refuse", "arguments": {"reason": "no key sk-Secret42"}}</tool_call>'
)
SETUP = """
%load_ext meowgent_nb
from meowgent_nb import ScriptedModel
scripted = ScriptedModel({turns!r})
%config AgentMagics.cassette = "mcp.cassette.json"
%config AgentMagics.cassette_mode = {mode!r}
%config AgentMagics.cassette_mask = [r"sk-[A-Za-z0-9]+"]
"""
CELL = "%%agent --model-object scripted --approve allow -o result\nThe weather in Paris, and some numbers?"
RESULTS = "print([(r.call.name, r.kind, type(r.value).__name__, r.value) for r in result.tool_results])"


def transcript(run) -> str:
    return run.of_type("display_data", "update_display_data")[-1]["data"]["text/plain"]


@pytest.fixture
def folder(tmp_path):
    return tmp_path


def test_an_mcp_toolbox_recorded_in_one_kernel_replays_in_another_without_its_server(folder):
    recorder = Kernel(str(folder))
    try:
        recorder.ok(SETUP.format(turns=[CALLS, "Sunny in Paris; 1.5 to 9."], mode="all"))
        added = recorder.ok(f"%tools mcp add demo --record -- {sys.executable} {SERVER}").stdout
        recorded = recorder.ok(CELL)
        recorded_values = recorder.ok(RESULTS).stdout
    finally:
        recorder.shutdown()
    assert added.splitlines()[0] == f"demo (stdio: python {SERVER}): recorded in mcp.cassette.json, 8 tools"
    cassette = Cassette(folder / "mcp.cassette.json")
    assert [entry.toolbox for entry in cassette.listings] == ["demo"]
    assert [t.name for t in cassette.listings[0].listing] == [
        "demo_add",
        "demo_forecast",
        "demo_wipe",
        "demo_note",
        "demo_refuse",
        "demo_stats",
        "demo_slow",
        "demo_crash",
    ]
    assert [(e.tool, e.arguments) for e in sorted(cassette.tool_entries, key=lambda e: e.tool)] == [
        ("demo_forecast", {"city": "Paris", "unit": "C"}),
        ("demo_refuse", {"reason": "no key ***"}),
        ("demo_stats", {"numbers": [3, 1.5, 9]}),
    ]
    assert "Secret42" not in (folder / "mcp.cassette.json").read_text()

    mark = folder / "server-started"
    unrunnable = shlex.join(["sh", "-c", f"touch {mark}; exit 1"])
    replayer = Kernel(str(folder))
    try:
        replayer.ok(SETUP.format(turns=[], mode="none"))  # the model has no answers: replay only
        again = replayer.ok(f"%tools mcp add demo --record -- {unrunnable}").stdout
        replayed = replayer.ok(CELL)
        replayed_values = replayer.ok(RESULTS).stdout
        state = replayer.ok(
            'box = get_ipython().magics_manager.registry["AgentMagics"].toolboxes[0]\n'
            "print(box.connected, box.replayed_from is not None, box.log_path)"
        ).stdout
    finally:
        replayer.shutdown()
    assert not mark.exists()
    assert state == "False True None\n"
    assert again.splitlines()[1:] == added.splitlines()[1:]
    assert again.splitlines()[0] == f"demo (stdio: {unrunnable}): recorded in mcp.cassette.json, 8 tools"
    assert transcript(replayed) == transcript(recorded).replace(
        "sk-Secret42", "***"
    )  # masked in the answer too
    assert transcript(replayed) == (
        "[tool] demo_forecast(city='Paris') -> done\n  Sunny in Paris, 21 C\n"
        '[tool] demo_stats(numbers=[3, 1.5, 9]) -> done\n  {\n    "min": 1.5,\n    "max": 9.0\n  }\n'
        "[tool] demo_refuse(reason='no key ***') -> error\n"
        "  Error: McpToolError: Error executing tool refuse: cannot do that: no key ***\n"
        "Sunny in Paris; 1.5 to 9."
    )
    assert replayed_values == recorded_values.replace("sk-Secret42", "***")
    assert replayed_values == (
        "[('demo_forecast', 'ok', 'str', 'Sunny in Paris, 21 C'), ('demo_stats', 'ok', 'StructuredResult',"
        " {'min': 1.5, 'max': 9.0}), ('demo_refuse', 'error', 'NoneType', None)]\n"
    )
    assert cassette.listings[0].listing[1].parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"default": "C", "enum": ["C", "F"], "type": "string"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_replay_without_a_recorded_listing_says_so_and_starts_nothing(folder):
    (folder / "mcp.cassette.json").write_text(
        '{"tool": "x", "arguments": {}, "result": {"kind": "ok", "output": "x"}}\n'
    )
    mark = folder / "server-started"
    kernel = Kernel(str(folder))
    try:
        kernel.ok(SETUP.format(turns=[], mode="none"))
        run = kernel.execute(f"%tools mcp add demo --record -- {shlex.join(['sh', '-c', f'touch {mark}'])}")
    finally:
        kernel.shutdown()
    assert run.reply["status"] == "error"
    assert run.reply["ename"] == "UsageError"
    assert run.reply["evalue"] == (
        f"%tools mcp add demo: The cassette {folder / 'mcp.cassette.json'} has no recording of the tools of the"
        " toolbox 'demo', so they cannot be offered without starting its server; it has none.\n"
        "To record it, run in mode record (`%%agent --record PATH`, or MEOWGENT_CASSETTE_MODE=record;"
        " restart the kernel first), or in mode auto to add only what is missing, and commit the cassette."
    )
    assert not mark.exists()
