"""``%tools mcp ...`` and ``%tools serve ...`` through a real IPython shell, with real MCP servers."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import Approved, Denied, ScriptedModel, tool
from meowgent_nb.mcp.client import McpServerError, McpToolbox, McpToolError

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
ADD = f"mcp add demo -- {shlex.quote(sys.executable)} {shlex.quote(SERVER)}"
LISTING = f"""demo (stdio: python {shlex.quote(SERVER)}): connected, 8 tools
  demo_add       runs without asking
  demo_forecast  runs without asking
  demo_wipe      asks first
  demo_note      asks first
  demo_refuse    runs without asking
  demo_stats     runs without asking
  demo_slow      runs without asking
  demo_crash     runs without asking
"""


@tool(name="t_echo")
def _echo(text: str) -> str:
    """Say it back."""
    return text


@tool(approval=True)
def t_remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


class Recording:
    def __init__(self, *decisions):
        self.decisions, self.asked = list(decisions), []

    async def approve(self, requests):
        self.asked.extend(r.tool.name for r in requests)
        return [self.decisions.pop(0) for _ in requests]


def magics(shell):
    return shell.magics_manager.registry["AgentMagics"]


def tools(ip, line: str) -> str:
    with capture_output() as out:
        ip.run_line_magic("tools", line)
    return out.stdout


def test_add_list_use_in_a_cell_and_remove(ip):
    assert tools(ip, "mcp list") == (
        "No MCP servers. Add one with %tools mcp add NAME -- COMMAND ARGS... or %tools mcp add NAME --url URL.\n"
    )
    options = "mcp add demo --no-approval note --approval add -- "
    assert tools(ip, ADD.replace("mcp add demo -- ", options)) == LISTING.replace(
        "demo_add       runs without asking", "demo_add       asks first"
    ).replace("demo_note      asks first", "demo_note      runs without asking")
    box = magics(ip).toolboxes[-1]
    assert isinstance(box, McpToolbox) and box.call_timeout == magics(ip).tool_timeout
    assert [t.name for t in magics(ip).available_tools()][-8:] == box.names
    ip.user_ns["model"] = ScriptedModel(
        [
            '<tool_call>{"name": "demo_forecast", "arguments": {"city": "Rome"}}</tool_call>',
            "Sunny in Rome.",
        ]
    )
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --approve none -o result", "Weather in Rome?")
    assert [(r.kind, r.output) for r in ip.user_ns["result"].tool_results] == [("ok", "Sunny in Rome, 21 C")]
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", ADD)
    assert str(caught.value) == "%tools mcp add: 'demo' is already added; first %tools mcp remove demo."
    assert tools(ip, "mcp remove demo") == "Removed the MCP server 'demo' and its 8 tools.\n"
    assert box.connected is False and box not in magics(ip).toolboxes
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "mcp remove demo")
    assert str(caught.value) == "%tools mcp remove: no MCP server named 'demo'; none is added."


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "mcp",
            "%tools mcp: cannot read ''; use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | list | remove NAME"
            " | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]",
        ),
        (
            "mcp start x",
            "%tools mcp: cannot read 'start x'; use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | list | remove NAME"
            " | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]",
        ),
        ("mcp add x", "%tools mcp add x: give the server's command after ' -- ', or --url URL (not both)."),
        (
            "mcp add x --",
            "%tools mcp add x: give the server's command after ' -- ', or --url URL (not both).",
        ),
        (
            "mcp add x --url http://127.0.0.1:1/mcp -- python s.py",
            "%tools mcp add x: give the server's command after ' -- ', or --url URL (not both).",
        ),
        (
            "mcp add x.y -- python s.py",
            "%tools mcp add: 'x.y' is not a usable name; use letters, digits, '_' and '-' (at most 32).",
        ),
        (
            "mcp add x --token t -- python s.py",
            "%tools mcp add x: --token goes with --url (a stdio server needs none).",
        ),
        ("serve --stop", "%tools serve --stop: nothing is being served."),
        (
            "serve --port 70000",
            "%tools serve: --port must be from 1 to 65535 (or 0 for a free one), got 70000.",
        ),
        (
            "mcp add x --timeout 0 -- python s.py",
            "%tools mcp add x: McpToolbox 'x': timeout must be a positive number of seconds, got 0.0",
        ),
    ],
)
def test_bad_input_is_a_usage_error(ip, line, message):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", line)
    assert str(caught.value) == message


def test_a_server_that_fails_to_start_is_a_usage_error(ip):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "mcp add gone -- /nonexistent/server --flag")
    assert str(caught.value) == (
        "%tools mcp add gone: could not connect to the MCP server 'gone' (/nonexistent/server --flag):"
        " [Errno 2] No such file or directory: '/nonexistent/server'.\n"
        "Check the command, and that the server starts on its own in a terminal."
    )
    assert magics(ip).toolboxes == []


def test_a_crashed_server_is_listed_as_stopped_and_can_be_added_again(ip):
    tools(ip, ADD)
    crashed = magics(ip).toolboxes[-1]
    with pytest.raises(McpServerError):
        crashed["demo_crash"].run({})
    assert tools(ip, "mcp list").startswith(
        f"demo (stdio: python {shlex.quote(SERVER)}): stopped (remove it, or add it again), 8 tools\n"
    )
    assert tools(ip, ADD) == LISTING
    assert magics(ip).toolboxes == [magics(ip)._mcp_servers["demo"]]
    assert magics(ip).toolboxes[0]["demo_add"].run({"a": 1}) == "3"


def test_the_listing_names_a_tool_that_runs_only_as_a_task_and_why_it_is_not_offered(ip):
    server = str(Path(__file__).parents[1] / "mcp_servers" / "task_server.py")
    listing = f"""tasks (stdio: python {shlex.quote(server)}): connected, 3 tools
  tasks_resize  asks first
  tasks_crop    asks first
  tasks_rotate  asks first
  not offered: render (it needs MCP task mode, which meowgent_nb does not support yet)
"""
    assert tools(ip, f"mcp add tasks -- {shlex.quote(sys.executable)} {shlex.quote(server)}") == listing
    assert tools(ip, "mcp list") == listing


def test_unload_closes_the_sessions_and_stops_serving(ip):
    tools(ip, ADD)
    box = magics(ip).toolboxes[-1]
    ip.user_ns["t_echo"] = _echo
    out = tools(ip, "serve")
    server = magics(ip)._mcp_serving
    assert out == (
        f"Serving 1 notebook tool over MCP at {server.url}\n"
        f"Token: {server.token}  (clients send the header  Authorization: Bearer TOKEN)\n"
        "Tools: t_echo\n"
        "Stop with %tools serve --stop.\n"
    )
    ip.run_line_magic("unload_ext", "meowgent_nb")
    assert (box.connected, server.running) == (False, False)
    ip.run_line_magic("load_ext", "meowgent_nb")


def test_serve_the_notebook_tools_and_stop(ip):
    ip.user_ns.update(t_echo=_echo, t_remove=t_remove)
    out = tools(ip, "serve")
    server = magics(ip)._mcp_serving
    assert out.endswith(
        "Tools: t_echo\n"
        "Not served (they need approval; --include-approval-tools serves them): t_remove\n"
        "Stop with %tools serve --stop.\n"
    )
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "serve")
    assert str(caught.value) == f"%tools serve: already serving at {server.url}; %tools serve --stop first."
    assert tools(ip, "serve --stop") == f"Stopped serving at {server.url}.\n"
    approver = Recording(Approved("yes"), Denied("no"))
    magics(ip)._approver = approver
    tools(ip, "serve --include-approval-tools")
    server = magics(ip)._mcp_serving
    assert [t.name for t in server.tools] == ["t_echo", "t_remove"]
    # The same shell as the client: %tools mcp add --url --token (serving leaves MCP tools out).
    assert tools(ip, f"mcp add nb --url {server.url} --token {server.token}") == (
        f"nb (http: {server.url}): connected, 2 tools\n"
        "  nb_t_echo    asks first\n"  # served tools carry no annotations: an outside server asks
        "  nb_t_remove  asks first\n"
    )
    box = magics(ip)._mcp_servers["nb"]
    assert box["nb_t_remove"].run({"path": "x"}) == "removed x"
    with pytest.raises(McpToolError) as caught:
        box["nb_t_remove"].run({"path": "y"})
    assert str(caught.value) == "Denied: no"
    assert box["nb_t_echo"].run({"text": "hi"}) == "hi"
    assert approver.asked == ["t_remove", "t_remove"]
    tools(ip, "mcp remove nb")
    tools(ip, "serve --stop")


def test_serve_needs_a_tool_and_a_free_port(ip):
    ip.user_ns["t_remove"] = t_remove
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "serve")
    assert (
        str(caught.value)
        == "%tools serve: no tools to serve; define one with @tool (or add --include-approval-tools)."
    )
    ip.user_ns["t_echo"] = _echo
    tools(ip, "serve")
    port = magics(ip)._mcp_serving.port
    try:
        magics(ip)._mcp_serving, running = None, magics(ip)._mcp_serving
        with pytest.raises(UsageError) as caught:
            ip.run_line_magic("tools", f"serve --port {port}")
        assert str(caught.value) == f"%tools serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    finally:
        running.stop()
