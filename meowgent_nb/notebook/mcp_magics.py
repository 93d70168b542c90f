"""``%tools mcp ...`` and ``%tools serve ...``: MCP servers' tools in the notebook, and the notebook's
tools served over MCP. `AgentMagics.tools` hands these words to the functions here.

A server added with ``%tools mcp add`` becomes an `McpToolbox` appended to
``AgentMagics.toolboxes``, so every ``%%agent`` cell offers its tools. Sessions close with
``%tools mcp remove``, on ``%unload_ext meowgent_nb`` (`close_mcp`) and at interpreter exit.
``%tools mcp resources|prompts|complete`` read the servers' other context (`mcp_context_magics`).
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.utils.process import arg_split

from ..mcp.client import McpServerError, McpToolbox
from . import mcp_context_magics

__all__ = ["close_mcp", "tools_mcp", "tools_serve"]

_SERVER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,31}")
_USAGE = (
    "use: %tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | list | remove NAME"
    " | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]"
)
_INSTRUCTIONS_SHOWN = 300


def tools_mcp(magics: Any, line: str) -> None:
    """%tools mcp add NAME -- COMMAND ARGS... | add NAME --url URL | list | remove NAME
    | resources [NAME] | prompts [NAME] | complete SERVER/PROMPT ARG [TYPED]"""
    words = arg_split(line)
    command, rest = (words[0], words[1:]) if words else ("", [])
    if command == "add":
        _add(magics, rest)
    elif command == "list" and not rest:
        print(_listing(_servers(magics)))
    elif command == "remove" and len(rest) == 1:
        box = _servers(magics).pop(rest[0], None)
        if box is None:
            raise UsageError(f"%tools mcp remove: no MCP server named {rest[0]!r}; {_known(magics)}")
        magics.toolboxes = [b for b in magics.toolboxes if b is not box]
        box.close()
        print(f"Removed the MCP server {box.name!r} and its {len(box)} tools.")
    elif command == "resources":
        print(mcp_context_magics.resources_listing(magics, rest))
    elif command == "prompts":
        print(mcp_context_magics.prompts_listing(magics, rest))
    elif command == "complete":
        print(mcp_context_magics.complete_listing(magics, rest))
    else:
        raise UsageError(f"%tools mcp: cannot read {line.strip()!r}; {_USAGE}")


@magic_arguments()
@argument("name", help="What to call the server here; its tools are named NAME_TOOL.")
@argument("--url", help="A streamable-HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.")
@argument("--token", help="A bearer token to send with --url.")
@argument("--no-prefix", action="store_true", help="Keep the server's tool names as they are.")
@argument("--approval", metavar="A,B", help="Ask before these tools run, whatever their annotations say.")
@argument("--no-approval", metavar="A,B", help="Run these tools without asking.")
@argument(
    "--timeout",
    type=float,
    metavar="S",
    help="Seconds each call may take (default: AgentMagics.tool_timeout).",
)
@argument(
    "--read-resources",
    action="store_true",
    help="Offer the model a NAME_read_resource tool that reads this server's resources.",
)
@argument(
    "--instructions",
    action="store_true",
    help="Put the server's instructions in the system prompt of cells that offer its tools.",
)
def mcp_add(magics: Any, line: str) -> None:
    """%tools mcp add NAME [options] -- COMMAND ARGS...  or  %tools mcp add NAME --url URL [--token T]"""


def _add(magics: Any, words: list[str]) -> None:
    options, command = (
        (words[: words.index("--")], words[words.index("--") + 1 :]) if "--" in words else (words, None)
    )
    args = mcp_add.parser.parse_args(options)
    name = args.name
    if not _SERVER_NAME.fullmatch(name):
        raise UsageError(
            f"%tools mcp add: {name!r} is not a usable name; use letters, digits, '_' and '-' (at most 32)."
        )
    if (args.url is None) == (command is None) or command == []:
        raise UsageError(
            f"%tools mcp add {name}: give the server's command after ' -- ', or --url URL (not both)."
        )
    if args.token and args.url is None:
        raise UsageError(f"%tools mcp add {name}: --token goes with --url (a stdio server needs none).")
    servers = _servers(magics)
    old = servers.get(name)
    if old is not None and old.connected:
        raise UsageError(f"%tools mcp add: {name!r} is already added; first %tools mcp remove {name}.")
    approval = {n: True for n in _names(args.approval)} | {n: False for n in _names(args.no_approval)}
    try:
        box = McpToolbox(
            name,
            command,
            url=args.url,
            headers={"Authorization": f"Bearer {args.token}"} if args.token else None,
            prefix=not args.no_prefix,
            approval=approval,
            timeout=args.timeout,
            call_timeout=magics.tool_timeout,
            read_resources=args.read_resources,
            use_instructions=args.instructions,
        )
    except (McpServerError, ValueError) as error:
        raise UsageError(f"%tools mcp add {name}: {error}") from None
    if old is not None:  # it had stopped (crashed, or its connection broke): replace it
        old.close()
        magics.toolboxes = [b for b in magics.toolboxes if b is not old]
    servers[name] = box
    magics.toolboxes = [*magics.toolboxes, box]
    print(_listing({name: box}))


@magic_arguments()
@argument("--port", type=int, default=0, help="The port on 127.0.0.1 (default: a free one).")
@argument(
    "--include-approval-tools",
    action="store_true",
    help="Also serve tools marked approval=True; each call asks here.",
)
@argument("--stop", action="store_true", help="Stop serving.")
def tools_serve(magics: Any, line: str) -> None:
    """%tools serve [--port N] [--include-approval-tools] | %tools serve --stop

    Serves the notebook's tools over MCP streamable HTTP on 127.0.0.1, with a random bearer token.
    """
    args = tools_serve.parser.parse_args(arg_split(line))
    running = getattr(magics, "_mcp_serving", None)
    if args.stop:
        if running is None:
            raise UsageError("%tools serve --stop: nothing is being served.")
        running.stop()
        magics._mcp_serving = None
        print(f"Stopped serving at {running.url}.")
        return
    if running is not None:
        raise UsageError(f"%tools serve: already serving at {running.url}; %tools serve --stop first.")
    if not 0 <= args.port <= 65535:
        raise UsageError(
            f"%tools serve: --port must be from 1 to 65535 (or 0 for a free one), got {args.port}."
        )
    from ..mcp.serve import ToolServer

    remote = {
        id(t)
        for box in [*magics.toolboxes, *magics.shell.user_ns.values()]
        if isinstance(box, McpToolbox)
        for t in box
    }
    tools = [t for t in magics.available_tools() if id(t) not in remote]
    if not any(args.include_approval_tools or not t.approval for t in tools):
        raise UsageError(
            "%tools serve: no tools to serve; define one with @tool"
            + (" (or add --include-approval-tools)." if tools else ".")
        )
    try:
        server = ToolServer(
            tools,
            port=args.port,
            include_approval_tools=args.include_approval_tools,
            approver=_approver(magics),
            approval_loop=_running_loop(),
            ask_every=magics.approve == "every",
            timeout=magics.tool_timeout,
        )
    except OSError as error:
        raise UsageError(
            f"%tools serve: cannot listen on 127.0.0.1:{args.port}: {error.strerror or error}"
        ) from None
    magics._mcp_serving = server
    count = f"{len(server.tools)} notebook tool" + ("" if len(server.tools) == 1 else "s")
    print(f"Serving {count} over MCP at {server.url}")
    print(f"Token: {server.token}  (clients send the header  Authorization: Bearer TOKEN)")
    print(f"Tools: {', '.join(t.name for t in server.tools)}")
    if server.left_out:
        names = ", ".join(t.name for t in server.left_out)
        print(f"Not served (they need approval; --include-approval-tools serves them): {names}")
    print("Stop with %tools serve --stop.")


def close_mcp(magics: Any) -> None:
    """Close every MCP session the magics opened and stop serving (``%unload_ext``)."""
    for box in _servers(magics).values():
        try:
            box.close()
        except Exception:  # unloading: one stuck server must not keep the others open
            pass
    _servers(magics).clear()
    magics.toolboxes = [b for b in magics.toolboxes if not isinstance(b, McpToolbox)]
    server = getattr(magics, "_mcp_serving", None)
    if server is not None:
        server.stop()
        magics._mcp_serving = None


def _servers(magics: Any) -> dict[str, McpToolbox]:
    if getattr(magics, "_mcp_servers", None) is None:
        magics._mcp_servers = {}
    return magics._mcp_servers


def _approver(magics: Any) -> Any:
    """The session's approver, as `AgentMagics.make_agent` picks it (one per session)."""
    from .approvals import default_approver

    if magics.approve in ("all", "none"):
        return default_approver(magics.approve)
    if magics._approver is None:
        magics._approver = default_approver("ask", timeout=magics.approval_timeout)
    return magics._approver


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()  # the kernel's: approval buttons are shown and clicked there
    except RuntimeError:
        return None


def _names(value: str | None) -> list[str]:
    return [n.strip() for n in (value or "").split(",") if n.strip()]


def _known(magics: Any) -> str:
    names = ", ".join(_servers(magics))
    return f"the servers are: {names}." if names else "none is added."


def _listing(servers: dict[str, McpToolbox]) -> str:
    if not servers:
        return (
            "No MCP servers. Add one with %tools mcp add NAME -- COMMAND ARGS..."
            " or %tools mcp add NAME --url URL."
        )
    blocks = []
    for name, box in servers.items():
        target = box.target
        if box.transport == "stdio":  # the program's name only ("python"): paths differ between machines
            program, _, rest = target.partition(" ")
            program = re.sub(r"^python[\d.]*$", "python", os.path.basename(program))
            target = " ".join(filter(None, [program, rest]))
        state = "connected" if box.connected and box.ping() else "stopped (remove it, or add it again)"
        lines = [f"{name} ({box.transport}: {target}): {state}, {len(box)} tools"]
        width = max((len(t.name) for t in box), default=0)
        lines += [
            f"  {t.name:<{width}}  {'asks first' if t.approval else 'runs without asking'}" for t in box
        ]
        lines += [f"  not offered: {remote} ({why})" for remote, why in box.skipped.items()]
        if box.instructions:
            use = "in the system prompt" if box.use_instructions else "not used; --instructions adds them"
            text = re.sub(r"\s+", " ", box.instructions).strip()
            if len(text) > _INSTRUCTIONS_SHOWN:
                text = text[: _INSTRUCTIONS_SHOWN - 1] + "…"
            lines.append(f"  instructions ({use}): {text}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
