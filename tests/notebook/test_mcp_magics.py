"""``%tools mcp ...`` and ``%tools serve ...`` through a real IPython shell, with real MCP servers."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import Approved, Denied, ScriptedModel, tool
from meowgent_nb.mcp import McpServerError, McpToolbox, McpToolError

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
        ip.run_cell_magic("agent", "--model-object model --approve deny -o result", "Weather in Rome?")
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
            "%tools mcp: cannot read ''; use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | load PATH | list | remove NAME"
            " | refresh NAME|--all | reconnect NAME | help | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]"
            " | log NAME",
        ),
        (
            "mcp start x",
            "%tools mcp: cannot read 'start x'; use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | load PATH | list | remove NAME"
            " | refresh NAME|--all | reconnect NAME | help | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]"
            " | log NAME",
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


def test_a_crashed_server_is_listed_as_stopped_and_reconnected_by_name(ip):
    tools(ip, ADD)
    crashed = magics(ip).toolboxes[-1]
    with pytest.raises(McpServerError):
        crashed["demo_crash"].run({})
    assert tools(ip, "mcp list").startswith(
        f"demo (stdio: python {shlex.quote(SERVER)}): stopped (%tools mcp reconnect demo starts it again), 8 tools\n"
    )
    assert (
        tools(ip, "mcp reconnect demo")
        == "Reconnected to the MCP server 'demo'. The MCP server 'demo' has the same 8 tools.\n"
    )
    assert tools(ip, "mcp list") == LISTING
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "mcp reconnect nope")
    assert str(caught.value) == "%tools mcp reconnect: no MCP server named 'nope'; the servers are: demo."
    assert magics(ip).toolboxes == [magics(ip)._mcp_servers["demo"]]
    assert magics(ip).toolboxes[0]["demo_add"].run({"a": 1}) == 3


def test_the_listing_names_a_tool_that_runs_only_as_a_task_and_why_it_is_not_offered(ip):
    server = str(Path(__file__).parents[1] / "mcp_servers" / "task_server.py")
    listing = f"""tasks (stdio: python {shlex.quote(server)}): connected, 3 tools
  tasks_resize  asks first
  tasks_crop    asks first
  tasks_rotate  asks first
  not offered: render (it runs only as an MCP task, but the server did not say it runs tool calls as tasks)
"""
    assert tools(ip, f"mcp add tasks -- {shlex.quote(sys.executable)} {shlex.quote(server)}") == listing
    assert tools(ip, "mcp list") == listing


def test_the_listing_marks_the_tools_that_run_as_tasks_where_the_server_runs_them(ip):
    server = str(Path(__file__).parents[1] / "mcp_servers" / "task_server.py")
    added = tools(
        ip,
        f"mcp add tasks --include render,resize -- {shlex.quote(sys.executable)} {shlex.quote(server)} tasks",
    )
    assert (
        added
        == f"""tasks (stdio: python {shlex.quote(server)} tasks): connected, 2 tools
  tasks_render  asks first           (runs as an MCP task: Stop cancels it)
  tasks_resize  asks first
  left out (include/exclude): crop, rotate, render_fails, render_hangs, render_at_once, render_odd, cancelled
"""
    )


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
    from meowgent_nb.mcp import prompt, resource

    note = resource("notes://today")(lambda: "Buy milk.")
    ip.user_ns.update(
        t_echo=_echo, t_remove=t_remove, t_note=note, t_ask=prompt(name="ask")(lambda topic: topic)
    )
    out = tools(ip, "serve")
    server = magics(ip)._mcp_serving
    assert out.endswith(
        "Tools: t_echo\n"
        "Resources: notes://today; prompts: ask\n"
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
        "  headers: Authorization=***\n"
        "  nb_t_echo    runs without asking\n"  # served with readOnlyHint: it needs no approval here
        "  nb_t_remove  asks first\n"  # destructiveHint: it needs approval here
    )
    box = magics(ip)._mcp_servers["nb"]
    assert (box.read("notes://today"), box.prompt("ask", topic="cats")) == (
        "Buy milk.",
        [{"role": "user", "content": "cats"}],
    )
    assert box["nb_t_remove"].run({"path": "x"}) == "removed x"
    with pytest.raises(McpToolError) as caught:
        box["nb_t_remove"].run({"path": "y"})
    assert str(caught.value) == "Denied: no"
    assert box["nb_t_echo"].run({"text": "hi"}) == "hi"
    assert approver.asked == ["t_remove", "t_remove"]
    tools(ip, "mcp remove nb")
    tools(ip, "serve --stop")


def test_a_token_that_begins_with_a_dash_is_the_tokens_value_not_an_option(ip, monkeypatch):
    # secrets.token_urlsafe starts with "-" one time in 64: CI once failed on "--token -etAcs...".
    import meowgent_nb.mcp.server.serve as serve

    monkeypatch.setattr(serve.secrets, "token_urlsafe", lambda n: "-" + "x" * 42)
    ip.user_ns["t_echo"] = _echo
    tools(ip, "serve")
    server = magics(ip)._mcp_serving
    assert server.token == "-" + "x" * 42
    try:
        for option in (f"--token {server.token}", f"--token={server.token}"):
            assert tools(ip, f"mcp add nb --url {server.url} {option}") == (
                f"nb (http: {server.url}): connected, 1 tool\n"
                "  headers: Authorization=***\n"
                "  nb_t_echo  runs without asking\n"
            )
            assert magics(ip)._mcp_servers["nb"]["nb_t_echo"].run({"text": "hi"}) == "hi"
            tools(ip, "mcp remove nb")
        with pytest.raises(UsageError) as caught:  # a missing value is still an error
            ip.run_line_magic("tools", f"mcp add nb --url {server.url} --token")
        assert "--token: expected one argument" in str(caught.value)
    finally:
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


ANNOTATED = str(Path(__file__).parents[1] / "mcp_servers" / "annotated_server.py")
TOKEN = "tok_fake_5f3a9c1e7b2d"


def test_add_with_env_cwd_prefix_exclude_shows_titles_and_never_the_env_values(ip, tmp_path):
    line = (
        f"mcp add ann --env MEOW_TOKEN={TOKEN} --env DEBUG=1 --cwd {shlex.quote(str(tmp_path))} --prefix w_"
        f" --exclude header --connect-timeout 20 -- {shlex.quote(sys.executable)} {shlex.quote(ANNOTATED)}"
    )
    listing = f"""ann (stdio: python {shlex.quote(ANNOTATED)}): connected, 4 tools
  env: MEOW_TOKEN=***, DEBUG=***
  w_search     asks first           Search the web
  w_read_note  runs without asking  Read a local note
  w_env_var    runs without asking
  w_cwd        runs without asking
  left out (include/exclude): header
"""
    assert tools(ip, line) == listing
    assert tools(ip, "mcp list") == listing
    box = magics(ip)._mcp_servers["ann"]
    assert box["w_env_var"].run({"name": "MEOW_TOKEN"}) == f"set, {len(TOKEN)} characters"
    assert box["w_cwd"].run({}) == str(tmp_path)
    view = ip.run_line_magic("tools", "")
    assert view.to_text().split("\n\n")[0] == (
        "name         title              description                                                   approval  timeout\n"
        "w_search     Search the web     Search the web (read-only, but it reaches outside).           yes       default\n"
        "w_read_note  Read a local note  Read a note (read-only, closed world; its title is in the...  no        default\n"
        "w_env_var                       Whether an environment variable is set in the server, and...  no        default\n"
        "w_cwd                           The server's working directory.                               no        default"
    )
    assert '<th style="text-align: left">title</th>' in view.to_html()
    assert TOKEN not in tools(ip, "mcp list") + repr(box) + view.to_text() + view.to_html()


def test_include_names_the_offered_tools(ip):
    out = tools(
        ip, f"mcp add ann --include search,cwd -- {shlex.quote(sys.executable)} {shlex.quote(ANNOTATED)}"
    )
    assert out.splitlines()[1:] == [
        "  ann_search  asks first           Search the web",
        "  ann_cwd     runs without asking",
        "  left out (include/exclude): read_note, env_var, header",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "--exclude search,nope",
            (
                "%tools mcp add ann: McpToolbox 'ann': exclude names unknown tools: nope;"
                " the server has: search, read_note, env_var, cwd, header"
            ),
        ),
        (
            "--include ann_search",
            (
                "%tools mcp add ann: McpToolbox 'ann': include names unknown tools: ann_search;"
                " the server has: search, read_note, env_var, cwd, header"
            ),
        ),
        (
            "--include cwd --exclude search",
            "%tools mcp add ann: McpToolbox 'ann': give include= or exclude=, not both",
        ),
    ],
)
def test_unknown_include_or_exclude_names_list_the_servers_tools(ip, options, message):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic(
            "tools", f"mcp add ann {options} -- {shlex.quote(sys.executable)} {shlex.quote(ANNOTATED)}"
        )
    assert str(caught.value) == message
    assert magics(ip).toolboxes == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "mcp add x --env TOKEN -- python s.py",
            "%tools mcp add x: --env takes NAME=VALUE (NAME of letters, digits and '_'); got one without '='.",
        ),
        (
            f"mcp add x --env 'A B={TOKEN}' -- python s.py",
            "%tools mcp add x: --env takes NAME=VALUE (NAME of letters, digits and '_'); got 'A B'.",
        ),
        (
            f"mcp add x --env ={TOKEN} -- python s.py",
            "%tools mcp add x: --env takes NAME=VALUE (NAME of letters, digits and '_'); got ''.",
        ),
        (
            f"mcp add x --url http://127.0.0.1:1/mcp --env K={TOKEN}",
            "%tools mcp add x: --env and --cwd go with a stdio server's command, not --url.",
        ),
        (
            "mcp add x --url http://127.0.0.1:1/mcp --cwd /tmp",
            "%tools mcp add x: --env and --cwd go with a stdio server's command, not --url.",
        ),
        (
            "mcp add x --prefix p_ --no-prefix -- python s.py",
            "%tools mcp add x: give --prefix P or --no-prefix, not both.",
        ),
        (
            "mcp add x --prefix '1 x' -- python s.py",
            (
                "%tools mcp add x: McpToolbox 'x': prefix must be True, False or a string of letters, digits, '_', '.'"
                " and '-' starting with a letter or '_' (at most 32), got '1 x'"
            ),
        ),
        (
            "mcp add x --connect-timeout 0 -- python s.py",
            "%tools mcp add x: McpToolbox 'x': connect_timeout must be a positive number of seconds, got 0.0",
        ),
        (
            "mcp load",
            "%tools mcp: cannot read 'load'; use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | load PATH | list | remove NAME"
            " | refresh NAME|--all | reconnect NAME | help | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]"
            " | log NAME",
        ),
    ],
)
def test_bad_new_options_are_usage_errors_that_never_quote_an_env_value(ip, line, message):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", line)
    assert str(caught.value) == message


def test_help_lists_the_commands_and_the_options_of_add(ip):
    out = tools(ip, "mcp help")
    assert out == tools(ip, "mcp --help") == tools(ip, "mcp add x --help -- python s.py")
    assert out.splitlines()[:15] == [
        "%tools mcp add NAME [options] -- COMMAND ARGS...   a stdio server (started as a child process)",
        "%tools mcp add NAME --url URL [--token T]         a streamable-HTTP server",
        "%tools mcp load PATH      every server of an mcpServers JSON file (Claude Desktop, Cursor, VS Code)",
        "%tools mcp list           the servers, their tools and whether each asks first",
        "%tools mcp remove NAME    close a server's session and drop its tools",
        "%tools mcp refresh NAME   list a server's tools again (--all: every server); done by itself",
        "                          before the next cell when the server says its tools changed",
        "%tools mcp reconnect NAME   a new session with a stopped (or stuck) server: a stdio server is started again",
        "%tools mcp resources [NAME]   the servers' resources and resource templates",
        "%tools mcp prompts [NAME]     the servers' prompts and their arguments",
        "%tools mcp complete SERVER/PROMPT ARG [TYPED]   the server's completions (or SERVER/TEMPLATE)",
        "%tools mcp log NAME       the server's last log messages (those at warning and above are in cards too)",
        "",
        "Options of add:",
        "  --url URL            A streamable-HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.",
    ]
    for option in (
        "--env K=V",
        "--cwd DIR",
        "--prefix P",
        "--include A,B",
        "--exclude A,B",
        "--connect-timeout S",
        "--sampling MODE",
        "--root DIR",
        "--log-level LEVEL",
    ):
        assert f"\n  {option} " in out


def test_load_a_configuration_file_reports_what_did_not_load_and_never_shows_a_secret(
    ip, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEOW_TOKEN", TOKEN)
    monkeypatch.delenv("MEOW_MISSING", raising=False)
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ann": {
                        "command": sys.executable,
                        "args": [ANNOTATED],
                        "env": {"SERVER_TOKEN": "${MEOW_TOKEN}"},
                    },
                    "web": {
                        "url": "http://127.0.0.1:1/mcp",
                        "headers": {"Authorization": "Bearer ${MEOW_MISSING}"},
                    },
                    "old": {"command": "x", "disabled": True},
                }
            }
        )
    )
    listing = f"""ann (stdio: python {shlex.quote(ANNOTATED)}): connected, 5 tools
  env: SERVER_TOKEN=***
  ann_search     asks first           Search the web
  ann_read_note  runs without asking  Read a local note
  ann_env_var    runs without asking
  ann_cwd        runs without asking
  ann_header     runs without asking
"""
    assert tools(ip, f"mcp load {shlex.quote(str(path))}") == listing + (
        f"Loaded from {path}: ann\n"
        "Not loaded: web: ${MEOW_MISSING} in headers.Authorization is not set in the environment; set it"
        " (in a notebook: %env MEOW_MISSING=...) or give a default, ${MEOW_MISSING:-default}\n"
        "Disabled in the file: old\n"
    )
    box = magics(ip)._mcp_servers["ann"]
    assert magics(ip).toolboxes == [box]
    assert box["ann_env_var"].run({"name": "SERVER_TOKEN"}) == f"set, {len(TOKEN)} characters"
    assert tools(ip, "mcp list") == listing
    # Loading again: the added server is reported, not started twice; nothing else started, so it fails.
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", f"mcp load {shlex.quote(str(path))}")
    assert str(caught.value) == (
        "%tools mcp load: no server started.\n"
        f"Loaded from {path}: none\n"
        "Not loaded: web: ${MEOW_MISSING} in headers.Authorization is not set in the environment; set it"
        " (in a notebook: %env MEOW_MISSING=...) or give a default, ${MEOW_MISSING:-default}\n"
        "Not loaded: ann: already added; first %tools mcp remove ann\n"
        "Disabled in the file: old"
    )
    assert magics(ip).toolboxes == [box] and box.connected
    assert TOKEN not in tools(ip, "mcp list") + str(caught.value) + repr(box)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[]",
            "%tools mcp load: {path} must be a JSON object with 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code), not a JSON list.",
        ),
        (
            "// a comment\n{}",
            "%tools mcp load: {path} is not JSON: Expecting value: line 1 column 1 (char 0). Fix the file (comments are not allowed).",
        ),
        (None, "%tools mcp load: cannot read the MCP configuration {path}: No such file or directory."),
    ],
)
def test_load_a_file_that_is_not_a_configuration_is_a_usage_error(ip, tmp_path, text, message):
    path = tmp_path / "mcp.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", f"mcp load {shlex.quote(str(path))}")
    assert str(caught.value) == message.format(path=path)
    assert magics(ip).toolboxes == []


def test_quoted_paths_with_spaces_reach_the_command_and_load(ip, tmp_path):
    folder = tmp_path / "my servers"
    folder.mkdir()
    script = folder / "annotated server.py"
    script.write_text(Path(ANNOTATED).read_text())
    out = tools(ip, f"mcp add ann --include cwd --cwd '{folder}' -- '{sys.executable}' '{script}'")
    assert out.splitlines()[0] == f"ann (stdio: python {shlex.quote(str(script))}): connected, 1 tool"
    assert magics(ip)._mcp_servers["ann"]["ann_cwd"].run({}) == str(folder)
    config = folder / "mcp config.json"
    config.write_text(json.dumps({"servers": {"two": {"command": sys.executable, "args": [str(script)]}}}))
    assert tools(ip, f'mcp load "{config}"').endswith(f"Loaded from {config}: two\n")


ASKING = str(Path(__file__).parents[1] / "mcp_servers" / "asking_server.py")


def test_add_takes_the_sampling_setting_and_roots(ip, tmp_path):
    command = f"-- {shlex.quote(sys.executable)} {shlex.quote(ASKING)}"
    tools(ip, f"mcp add asks --sampling deny --root {shlex.quote(str(tmp_path))} {command}")
    try:
        box = magics(ip).toolboxes[-1]
        assert box.asks.sampling == "deny"
        assert box.asks.roots == [str(tmp_path.resolve())]
        assert json.loads(box["asks_my_roots"].run({}))[-1] == tmp_path.resolve().as_uri()
    finally:
        tools(ip, "mcp remove asks")
    with pytest.raises(UsageError) as caught:
        tools(ip, f"mcp add asks --root {shlex.quote(str(tmp_path / 'nowhere'))} {command}")
    assert str(caught.value) == (
        f"%tools mcp add asks: --root {str(tmp_path / 'nowhere')!r} is not a folder; give an existing directory."
    )
    with pytest.raises(UsageError, match=r"argument --sampling: invalid choice: 'sometimes'"):
        tools(ip, f"mcp add asks --sampling sometimes {command}")
    assert "asks" not in magics(ip)._mcp_servers
