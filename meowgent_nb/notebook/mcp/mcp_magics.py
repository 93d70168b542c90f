"""`McpMagics` (``%tools mcp ...``) and `ServeMagics` (``%tools serve ...``), to which ``%tools`` hands these words.

An added server is an `McpToolbox` in the session's ``toolboxes``, offered by every ``%%agent``
cell; sessions close with ``%tools mcp remove``, on ``%unload_ext`` (`close_mcp`) and at exit.
While serving, `sync_served` serves the notebook's tools, resources and prompts anew after each cell.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import magics_class
from IPython.core.magic_arguments import argument, magic_arguments

# Its documented place, which re-exports it without an __all__.
from IPython.utils.process import arg_split  # pyright: ignore[reportPrivateImportUsage]

from ...errors import SettingsError
from ...mcp.client.toolbox import McpTool, McpToolbox
from ...mcp.config import McpConfigError
from ...tools.output import counted
from ..magics.rules_magics import session_rules
from ..magics.session import SessionMagics
from . import mcp_refresh_magics, mcp_resource_magics
from .mcp_add_magic import _keep, _servers, add, mcp_add
from .mcp_listing import server_listing as _listing

if TYPE_CHECKING:
    from ..magics.session import NotebookSession

__all__ = ["McpMagics", "ServeMagics", "close_mcp", "tools_mcp", "tools_serve"]

_USAGE = (
    "use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | load PATH | list | remove NAME"
    " | refresh NAME|--all | reconnect NAME | help"
    " | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED] | log NAME"
)


@magics_class
class McpMagics(SessionMagics):
    """``%tools mcp ...``: MCP servers' tools in the notebook (``%tools`` hands it the words)."""

    def run(self, line: str) -> None:
        """Run ``%tools mcp`` with the words after ``mcp`` (see `tools_mcp`)."""
        tools_mcp(self.session, line)


@magics_class
class ServeMagics(SessionMagics):
    """``%tools serve ...``: the notebook's tools served over MCP (``%tools`` hands it the words)."""

    def run(self, line: str) -> None:
        """Run ``%tools serve`` with the words after ``serve`` (see `tools_serve`)."""
        tools_serve(self.session, line)


def tools_mcp(session: NotebookSession, line: str) -> None:
    """%tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | load PATH | list | remove NAME
    | refresh NAME|--all | reconnect NAME | help | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]
    | log NAME"""
    # Quotes group words as in a shell ('my server.py'), and are removed; on Windows a backslash
    # is a path separator, not an escape, so quotes are kept there (IPython's default).
    words = arg_split(line, posix=os.name != "nt")
    command, rest = (words[0], words[1:]) if words else ("", [])
    options = rest[: rest.index("--")] if "--" in rest else rest  # not the server's own -h
    if command in ("help", "--help", "-h") or (command == "add" and ("--help" in options or "-h" in options)):
        print(_help())
    elif command == "add":
        add(session, rest)
    elif command == "load" and len(rest) == 1:
        _load(session, rest[0])
    elif command == "list" and not rest:
        print(_listing(_servers(session)))
    elif command == "remove" and len(rest) == 1:
        box = _servers(session).pop(rest[0], None)
        if box is None:
            raise UsageError(f"%tools mcp remove: no MCP server named {rest[0]!r}; {_known(session)}")
        session.toolboxes = [b for b in session.toolboxes if b is not box]
        box.close()
        print(f"Removed the MCP server {box.name!r} and its {counted(len(box), 'tool')}.")
    elif command == "refresh" and len(rest) == 1:
        print(mcp_refresh_magics.refresh_listing(session, rest[0]))
    elif command == "reconnect" and len(rest) == 1:
        print(mcp_refresh_magics.reconnect_listing(session, rest[0]))
    elif command == "resources":
        print(mcp_resource_magics.resources_listing(session, rest))
    elif command == "prompts":
        print(mcp_resource_magics.prompts_listing(session, rest))
    elif command == "complete":
        print(mcp_resource_magics.complete_listing(session, rest))
    elif command == "log" and len(rest) == 1:
        _log(session, rest[0])
    else:
        raise UsageError(f"%tools mcp: cannot read {line.strip()!r}; {_USAGE}")


def _load(session: NotebookSession, path: str) -> None:
    """``%tools mcp load PATH``: every server of a configuration file; see `load_mcp_config`."""
    from ...mcp.load import load_mcp_config

    servers = _servers(session)
    added = {n: f"already added; first %tools mcp remove {n}" for n, box in servers.items() if box.connected}
    try:
        loaded = load_mcp_config(
            os.path.expanduser(path), skip=added, call_timeout=session.settings.tool_timeout
        )
    except McpConfigError as error:
        raise UsageError(f"%tools mcp load: {error}") from None
    for name, box in list(loaded.items()):
        try:
            _keep(session, name, box, "%tools mcp load")
        except UsageError as error:  # the others still load
            loaded.failed[name] = str(error).split(": ", 1)[1]
            del loaded[name]
    if loaded:
        print(_listing(dict(loaded)))
    if not loaded and loaded.failed:
        raise UsageError(f"%tools mcp load: no server started.\n{loaded.summary()}")
    print(loaded.summary())


def _log(session: NotebookSession, name: str) -> None:
    """``%tools mcp log NAME``: the server's last log messages, as a table (see `mcp_log`)."""
    from IPython.display import display

    from .mcp_log import LogView

    box = _servers(session).get(name)
    if box is None:
        raise UsageError(f"%tools mcp log: no MCP server named {name!r}; {_known(session)}")
    display(LogView(name, box.notes.level, box.log))


def _help() -> str:
    parser: argparse.ArgumentParser = mcp_add.parser  # pyright: ignore[reportFunctionMemberAccess]  (IPython's @magic_arguments sets it, undeclared)
    formatter = parser.formatter_class
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)  # not the terminal's
    try:
        usage = parser.format_help()
    finally:
        parser.formatter_class = formatter
    usage = usage.split("\n\n", 1)[-1]  # the option list, without argparse's usage line
    return (
        "%tools mcp add NAME [options] -- COMMAND ARGS...   a stdio server (started as a child process)\n"
        "%tools mcp add NAME --url URL [--token T]         a streamable-HTTP server\n"
        "%tools mcp load PATH      every server of an mcpServers JSON file (Claude Desktop, Cursor, VS Code)\n"
        "%tools mcp list           the servers, their tools and whether each asks first\n"
        "%tools mcp remove NAME    close a server's session and drop its tools\n"
        "%tools mcp refresh NAME   list a server's tools again (--all: every server); done by itself\n"
        "                          before the next cell when the server says its tools changed\n"
        "%tools mcp reconnect NAME   a new session with a stopped (or stuck) server: a stdio server is started again\n"
        "%tools mcp resources [NAME]   the servers' resources and resource templates\n"
        "%tools mcp prompts [NAME]     the servers' prompts and their arguments\n"
        "%tools mcp complete SERVER/PROMPT ARG [TYPED]   the server's completions (or SERVER/TEMPLATE)\n"
        "%tools mcp log NAME       the server's last log messages (those at warning and above are in cards too)\n\n"
        f"Options of add:\n{usage.split('options:', 1)[-1].strip(chr(10))}"
    )


@magic_arguments()
@argument("--port", type=int, default=0, help="The port on 127.0.0.1 (default: a free one).")
@argument(
    "--include-approval-tools",
    action="store_true",
    help="Also serve tools marked approval=True; each call asks here.",
)
@argument(
    "--notebook",
    action="store_true",
    help="Also serve the notebook's workspace tools (notebook_tools); those that need approval ask here.",
)
@argument("--stop", action="store_true", help="Stop serving.")
def tools_serve(session: NotebookSession, line: str) -> None:
    """%tools serve [--port N] [--include-approval-tools] [--notebook] | %tools serve --stop

    Serves the notebook's tools over MCP streamable HTTP on 127.0.0.1, with a random bearer token.
    A served call that needs approval asks in this cell's output (`served_approvals`).
    """
    args = tools_serve.parser.parse_args(arg_split(line))  # pyright: ignore[reportFunctionMemberAccess]  (IPython's @magic_arguments sets it, undeclared)
    running = session.served
    if args.stop:
        if running is None:
            raise UsageError("%tools serve --stop: nothing is being served.")
        _stop_serving(session)
        print(f"Stopped serving at {running.url}.")
        return
    if running is not None:
        raise UsageError(f"%tools serve: already serving at {running.url}; %tools serve --stop first.")
    if not 0 <= args.port <= 65535:
        raise UsageError(
            f"%tools serve: --port must be from 1 to 65535 (or 0 for a free one), got {args.port}."
        )
    from ...mcp.server.serve import ToolServer
    from .served_approvals import ServedApprovals

    tools, resources, prompts = _servable(session, notebook=args.notebook)
    always = [t.name for t in _notebook_tools(session)] if args.notebook else []
    if not any(args.include_approval_tools or not t.approval or t.name in always for t in tools):
        raise UsageError(
            "%tools serve: no tools to serve; define one with @tool"
            + (" (or add --include-approval-tools)." if tools else ".")
        )
    try:
        server = ToolServer(
            tools,
            resources=resources,
            prompts=prompts,
            port=args.port,
            include_approval_tools=args.include_approval_tools,
            always_serve=always,
            approver=ServedApprovals(_approver(session)),  # its box is in this cell's output
            approval_loop=_running_loop(),
            approve="every" if session.settings.approve == "every" else "ask",
            timeout=session.settings.tool_timeout,
            rules=session_rules(session),  # the notebook's rules hold here too
            tracer_provider=session.tracer_provider,
        )
    except OSError as error:
        raise UsageError(
            f"%tools serve: cannot listen on 127.0.0.1:{args.port}: {error.strerror or error}"
        ) from None
    except SettingsError as error:  # a tool of the person's is named like a notebook tool
        raise UsageError(f"%tools serve: {error}") from None
    session.served = server

    def after_each_cell(result: Any = None) -> None:
        server.tracer_provider = session.tracer_provider  # %agent trace on|off holds for served calls
        sync_served(session)

    session.serve_sync = after_each_cell  # the same object to unregister
    session.shell.events.register("post_run_cell", after_each_cell)
    count = f"{len(server.tools)} notebook tool" + ("" if len(server.tools) == 1 else "s")
    print(f"Serving {count} over MCP at {server.url}")
    print(f"Token: {server.token}  (clients send the header  Authorization: Bearer TOKEN)")
    print(f"Tools: {', '.join(t.name for t in server.tools)}")
    if resources or prompts:
        print(
            f"Resources: {', '.join(r.uri for r in resources) or 'none'}; prompts: {', '.join(p.name for p in prompts) or 'none'}"
        )
    if server.left_out:
        names = ", ".join(t.name for t in server.left_out)
        print(f"Not served (they need approval; --include-approval-tools serves them): {names}")
    print("Stop with %tools serve --stop.")


def close_mcp(session: NotebookSession) -> None:
    """Close every MCP session the magics opened and stop serving (``%unload_ext``)."""
    for box in _servers(session).values():
        try:
            box.close()
        except Exception:  # unloading: one stuck server must not keep the others open
            pass
    _servers(session).clear()
    session.toolboxes = [b for b in session.toolboxes if not isinstance(b, McpToolbox)]
    if session.served is not None:
        _stop_serving(session)


def _servable(session: NotebookSession, *, notebook: bool) -> tuple[list[Any], list[Any], list[Any]]:
    """The notebook's tools (its own and its plain toolboxes', never an MCP server's: those are not
    looked at, so a stale box is not listed again here), with ``notebook`` the workspace's tools
    after them, resources and prompts, as served."""
    from ...mcp.server.published import Prompt, Resource
    from ..magics._collected_tools import collected_tools

    published = [
        v for k, v in session.shell.user_ns.items() if not k.startswith("_") and not isinstance(v, McpToolbox)
    ]
    boxes = [box for box in session.toolboxes if not isinstance(box, McpToolbox)]
    # An MCP server's tool (it has a remote name) is the server's to serve, even one kept in a variable.
    tools = [t for t in collected_tools(published, boxes, "%tools serve") if not isinstance(t, McpTool)]
    tools += _notebook_tools(session) if notebook else []
    resources = [v for v in published if isinstance(v, Resource)]
    prompts = [v for v in published if isinstance(v, Prompt)]
    return tools, resources, prompts


def sync_served(session: NotebookSession) -> None:
    """Serve the tools, resources and prompts the notebook has now (after each cell, while serving).

    Tools that cannot be gathered now (two share a name) leave the served ones as they were.
    """
    server = session.served
    if server is None:
        return
    try:
        # Served with --notebook exactly when the server serves notebook tools however they ask.
        tools, resources, prompts = _servable(session, notebook=bool(server.always_serve))
        server.update(tools, resources=resources, prompts=prompts)
    except (UsageError, ValueError):  # the next %%agent cell says what is wrong, as it always does
        return


def _notebook_tools(session: NotebookSession) -> list[Any]:
    from ..workspace.tools import notebook_tools

    return notebook_tools(session.shell.user_ns)


def _stop_serving(session: NotebookSession) -> None:
    if session.served is not None:
        session.served.stop()
    session.served = None
    if session.serve_sync is not None:
        with contextlib.suppress(ValueError, AttributeError):  # not registered
            session.shell.events.unregister("post_run_cell", session.serve_sync)


def _approver(session: NotebookSession) -> Any:
    """The session's approver, as `AgentMagics.make_agent` picks it (one per session)."""
    from ..approvals import default_approver

    if session.settings.approve in ("allow", "deny"):
        return default_approver(session.settings.approve)
    if session.approver is None:
        session.approver = default_approver("ask", timeout=session.settings.approval_timeout)
    return session.approver


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()  # the kernel's: approval buttons are shown and clicked there
    except RuntimeError:
        return None


def _known(session: NotebookSession) -> str:
    names = ", ".join(_servers(session))
    return f"the servers are: {names}." if names else "none is added."
