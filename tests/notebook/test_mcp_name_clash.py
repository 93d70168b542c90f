"""A server tool named like another tool: a clear error naming both, never a listing that says one
tool while the model gets the other (a real IPython shell, the real demo MCP server)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.mcp import McpToolbox

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(SERVER)}"
FIX_PREFIX = 'Add the server with a prefix (%tools mcp remove {0}, then %tools mcp add {0} --prefix P ..., or McpToolbox(..., prefix="p_"))'
RENAME = ', or rename the notebook tool (@tool(name="..."))'


def clash(what: str, first: str, second: str, name: str, server: str, notebook: bool = True) -> str:
    return (
        f"{what}: {first} and {second} have the same name, {name!r}; the model could be offered only one of"
        f" them, and which one would not be the one listed. {FIX_PREFIX.format(server)}{RENAME if notebook else ''}."
    )


@tool
def wipe(path: str) -> str:
    """Pretend to wipe (a notebook tool named like the server's destructive one)."""
    return f"notebook wipe {path}"


def magics(shell):
    return shell.magics_manager.registry["AgentMagics"]


def run(ip, line: str) -> str:
    with capture_output() as out:
        ip.run_line_magic("tools", line)
    return out.stdout


def test_adding_a_server_whose_tool_shadows_a_notebook_tool_is_refused(ip):
    ip.user_ns["wipe"] = wipe
    with pytest.raises(UsageError) as caught:
        run(ip, f"mcp add demo --no-prefix -- {COMMAND}")
    assert str(caught.value) == clash(
        "%tools mcp add demo", "the notebook tool", "the tool of the MCP server 'demo'", "wipe", "demo"
    )
    assert magics(ip).toolboxes == [] and run(ip, "mcp list").startswith("No MCP servers.")
    assert [t.name for t in magics(ip).available_tools()] == ["wipe"]
    # with a prefix the names differ, and both are offered
    assert run(ip, f"mcp add demo --prefix d_ -- {COMMAND}").splitlines()[3] == "  d_wipe      asks first"
    assert [t.name for t in magics(ip).available_tools()][:4] == ["wipe", "d_add", "d_forecast", "d_wipe"]


def test_a_notebook_tool_defined_after_the_server_fails_the_cell_naming_both(ip):
    run(ip, f"mcp add demo --no-prefix -- {COMMAND}")
    ip.user_ns["wipe"] = wipe  # the cell that defines it runs later
    ip.user_ns["model"] = ScriptedModel(
        ['<tool_call>{"name": "wipe", "arguments": {"path": "/"}}</tool_call>', "ok"]
    )
    message = clash("%%agent", "the notebook tool", "the tool of the MCP server 'demo'", "wipe", "demo")
    with capture_output():
        result = ip.run_cell("%%agent --model-object model --approve allow\nwipe /")
    assert (type(result.error_in_exec), str(result.error_in_exec)) == (UsageError, message)
    with pytest.raises(UsageError) as caught:
        run(ip, "")
    assert str(caught.value) == message.replace("%%agent", "%tools")
    del ip.user_ns["wipe"]  # renamed away: all is well again
    assert "wipe" in [t.name for t in magics(ip).available_tools()]


def test_two_servers_without_prefixes_that_share_a_tool_name_are_refused(ip):
    run(ip, f"mcp add demo --no-prefix -- {COMMAND}")
    with pytest.raises(UsageError) as caught:
        run(ip, f"mcp add again --no-prefix -- {COMMAND}")
    assert str(caught.value) == clash(
        "%tools mcp add again",
        "the tool of the MCP server 'demo'",
        "the tool of the MCP server 'again'",
        "add",
        "again",
        notebook=False,
    )
    assert [box.name for box in magics(ip).toolboxes] == ["demo"]


def test_a_box_in_the_notebook_that_shadows_a_notebook_tool_is_an_error_too(ip):
    with McpToolbox("demo", [sys.executable, SERVER], prefix=False) as box:
        ip.user_ns.update(box=box, wipe=wipe)
        with pytest.raises(UsageError) as caught:
            run(ip, "")
    assert str(caught.value) == clash(
        "%tools", "the notebook tool", "the tool of the MCP server 'demo'", "wipe", "demo"
    )


def test_load_reports_a_shadowing_server_as_not_loaded_and_loads_the_others(ip, tmp_path):
    ip.user_ns["demo_wipe"] = tool(name="demo_wipe")(wipe.function)
    path = tmp_path / "mcp.json"
    servers = {name: {"command": sys.executable, "args": [SERVER]} for name in ("demo", "other")}
    path.write_text(json.dumps({"mcpServers": servers}))
    out = run(ip, f"mcp load {path}")
    assert (
        f"Not loaded: demo: {clash('x', 'the notebook tool', 'the tool of the MCP server ' + repr('demo'), 'demo_wipe', 'demo').split(': ', 1)[1]}"
        in out.splitlines()
    )
    assert [box.name for box in magics(ip).toolboxes] == ["other"]
