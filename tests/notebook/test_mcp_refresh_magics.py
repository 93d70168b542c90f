"""``%tools mcp refresh`` and the refresh a ``%%agent`` cell does by itself after a server said its
tools changed, through a real IPython shell with a real MCP server (changing_server.py)."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel
from meowgent_nb.mcp import McpToolbox
from tests.support.tool_calls import call

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "changing_server.py")
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(SERVER)}"


def tools(ip, line: str) -> str:
    with capture_output() as out:
        ip.run_line_magic("tools", line)
    return out.stdout


def refused(ip, line: str) -> str:
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", line)
    return str(caught.value)


def servers(ip) -> dict[str, McpToolbox]:
    return ip.magics_manager.registry["AgentMagics"]._mcp_servers


def test_refresh_by_hand_names_what_changed(ip):
    tools(ip, f"mcp add ch -- {COMMAND} legacy quiet")
    box = servers(ip)["ch"]
    assert box["ch_add_tool"](name="fresh") == "added fresh"
    assert (
        tools(ip, "mcp refresh ch")
        == "The MCP server 'ch' changed its tools: +ch_fresh; it offers 9 tools.\n"
    )
    assert tools(ip, "mcp refresh ch") == "The MCP server 'ch' has the same 9 tools.\n"
    assert "ch_fresh" in [t.name for t in ip.magics_manager.registry["AgentMagics"].available_tools()]


def test_refresh_all_and_the_errors(ip):
    assert refused(ip, "mcp refresh ch") == "%tools mcp refresh: no MCP server named 'ch'; none is added."
    assert refused(ip, "mcp refresh --all") == (
        "%tools mcp refresh --all: no MCP server is added; add one with %tools mcp add NAME -- COMMAND ARGS..."
    )
    tools(ip, f"mcp add one -- {COMMAND} legacy quiet")
    tools(ip, f"mcp add two -- {COMMAND} legacy quiet")
    servers(ip)["two"]["two_remove_tool"](name="echo")
    assert tools(ip, "mcp refresh --all") == (
        "The MCP server 'one' has the same 8 tools.\n"
        "The MCP server 'two' changed its tools: -two_echo; it offers 7 tools.\n"
    )
    assert refused(ip, "mcp refresh three") == (
        "%tools mcp refresh: no MCP server named 'three'; the servers are: one, two."
    )
    servers(ip)["one"].close()  # stopped, still listed (as after a crash)
    assert refused(ip, "mcp refresh one") == (
        "%tools mcp refresh one: the MCP server 'one' is stopped; %tools mcp reconnect one starts it again."
    )
    assert tools(ip, "mcp refresh --all") == (
        "The MCP server 'one' is stopped (%tools mcp reconnect one starts it again).\n"
        "The MCP server 'two' has the same 7 tools.\n"
    )
    assert refused(ip, "mcp refresh one two").startswith("%tools mcp: cannot read 'refresh one two'; use: ")


def test_a_box_made_in_the_notebook_is_refreshed_by_its_name(ip):
    box = McpToolbox("mine", [sys.executable, SERVER, "legacy", "quiet"])
    ip.user_ns["mine"] = box
    try:
        box["mine_add_tool"](name="fresh")
        assert tools(ip, "mcp refresh mine") == (
            "The MCP server 'mine' changed its tools: +mine_fresh; it offers 9 tools.\n"
        )
    finally:
        box.close()


def test_after_the_server_says_its_tools_changed_the_next_cell_offers_the_new_ones(ip):
    tools(ip, f"mcp add ch --no-approval add_tool -- {COMMAND}")
    box = servers(ip)["ch"]
    first = ScriptedModel([call("ch_add_tool", name="fresh", newlines=True), "Added."])
    ip.user_ns["first"] = first
    with capture_output() as out:
        ip.run_cell_magic("agent", "--model-object first --approve deny -o result", "Add a tool.")
    assert [(r.kind, r.output) for r in ip.user_ns["result"].tool_results] == [("ok", "added fresh")]
    assert "ch_fresh" not in [t.name for t in first.requests[-1].offered]  # not in the middle of the run
    for _ in range(200):
        if box.stale:
            break
        time.sleep(0.05)
    assert box.stale is True

    second = ScriptedModel([call("ch_fresh", text="hi", newlines=True), "Said hi."])
    ip.user_ns["second"] = second
    with capture_output() as out:
        ip.run_cell_magic("agent", "--model-object second --approve deny -o result", "Use it.")
    assert (
        out.stdout.splitlines()[0] == "The MCP server 'ch' changed its tools: +ch_fresh; it offers 9 tools."
    )
    assert out.stdout.count("changed its tools") == 1
    assert [(r.kind, r.output) for r in ip.user_ns["result"].tool_results] == [("ok", "fresh: hi")]
    assert "ch_fresh" in [t.name for t in second.requests[0].offered]


def test_help_names_refresh(ip):
    out = tools(ip, "mcp help").splitlines()
    assert out[5:7] == [
        "%tools mcp refresh NAME   list a server's tools again (--all: every server); done by itself",
        "                          before the next cell when the server says its tools changed",
    ]
