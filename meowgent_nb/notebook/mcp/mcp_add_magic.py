"""``%tools mcp add NAME ...``: one MCP server's tools in the notebook, kept as an `McpToolbox`.

`mcp_add` reads the options (``%tools mcp help`` lists them) and keeps the toolbox under NAME in
the session, so every ``%%agent`` cell offers its tools; `show_link` shows an OAuth authorization
link as a button in the running cell.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, cast

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from ..._html import escape
from ...mcp.client.oauth import OAuthWaitError
from ...mcp.client.progress import LOG_LEVELS
from ...mcp.client.toolbox import McpServerError, McpToolbox, OAuth
from ...mcp.config import SERVER_NAME
from ...recording.cassette import CassetteError
from ..magics._cassette_choice import session_tape
from ..magics._collected_tools import collected_tools
from ..magics._options import value_attached
from .mcp_listing import server_listing as _listing

if TYPE_CHECKING:
    from ..magics.session import NotebookSession

__all__ = ["add", "mcp_add", "show_link"]


@magic_arguments()
@argument("name", help="What to call the server here; its tools are named NAME_TOOL.")
@argument("--url", help="A streamable-HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.")
@argument("--token", help="A bearer token to send with --url.")
@argument(
    "--oauth",
    action="store_true",
    help="Authorize with OAuth (a server that answers 401): the link is a button in the cell; the"
    " tokens are kept per server, outside the notebook.",
)
@argument(
    "--client-id", metavar="ID", help="With --oauth: a client registered beforehand (default: register)."
)
@argument("--no-prefix", action="store_true", help="Keep the server's tool names as they are.")
@argument("--prefix", metavar="P", help="Start the tool names with P instead of NAME_ (e.g. gh_).")
@argument("--include", metavar="A,B", help="Offer only these of the server's tools (its names).")
@argument("--exclude", metavar="A,B", help="Offer all the server's tools but these (its names).")
@argument(
    "--env",
    action="append",
    metavar="K=V",
    help="An environment variable for a stdio server (repeat for more); its value is never shown.",
)
@argument("--cwd", metavar="DIR", help="The working directory of a stdio server.")
@argument("--approval", metavar="A,B", help="Ask before these tools run, whatever their annotations say.")
@argument("--no-approval", metavar="A,B", help="Run these tools without asking.")
@argument(
    "--timeout",
    type=float,
    metavar="S",
    help="Seconds each call may take (default: AgentMagics.tool_timeout).",
)
@argument(
    "--connect-timeout",
    type=float,
    metavar="S",
    default=30.0,
    help="Seconds to wait for the server to start and list its tools (default 30).",
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
@argument(
    "--sampling",
    choices=("ask", "allow", "deny"),
    default="ask",
    metavar="MODE",
    help="When the server asks to use the model: ask (the person, in the cell; default), allow or deny.",
)
@argument(
    "--root",
    action="append",
    metavar="DIR",
    help="A folder offered to the server as a root (repeat for more; '.' is the working directory). A server"
    " such as server-filesystem then works there instead of in the folders its command names; none given:"
    " no roots are offered.",
)
@argument(
    "--log-level",
    choices=LOG_LEVELS,
    default="info",
    metavar="LEVEL",
    help="The least severe server log messages kept for %%tools mcp log: debug, info (default), notice,"
    " warning, error, critical, alert, emergency.",
)
@argument(
    "--record",
    action="store_true",
    help="Record the server's tools and calls in the cassette (AgentMagics.cassette) and replay them"
    " from it: in replay the server is not started.",
)
def mcp_add(session: NotebookSession, line: str) -> None:
    """%tools mcp add NAME [options] -- COMMAND ARGS...  or  %tools mcp add NAME --url URL [--token T]"""


def add(session: NotebookSession, words: list[str]) -> None:
    """``%tools mcp add`` with ``words`` (those after ``add``)."""
    cut = words.index("--") if "--" in words else len(words)
    options, command = words[:cut], (words[cut + 1 :] if cut < len(words) else None)
    args = mcp_add.parser.parse_args(value_attached(options, "--token"))  # pyright: ignore[reportFunctionMemberAccess]  (IPython's @magic_arguments sets it, undeclared)
    name = args.name
    if not SERVER_NAME.fullmatch(name):
        raise UsageError(
            f"%tools mcp add: {name!r} is not a usable name; use letters, digits, '_' and '-' (at most 32)."
        )
    if (args.url is None) == (command is None) or command == []:
        raise UsageError(
            f"%tools mcp add {name}: give the server's command after ' -- ', or --url URL (not both)."
        )
    if (args.token or args.oauth) and args.url is None:
        given = "--token" if args.token else "--oauth"
        raise UsageError(f"%tools mcp add {name}: {given} goes with --url (a stdio server needs none).")
    if args.client_id is not None and not args.oauth:
        raise UsageError(f"%tools mcp add {name}: --client-id goes with --oauth.")
    if args.url is not None and (args.env or args.cwd is not None):
        raise UsageError(
            f"%tools mcp add {name}: --env and --cwd go with a stdio server's command, not --url."
        )
    if args.prefix is not None and args.no_prefix:
        raise UsageError(f"%tools mcp add {name}: give --prefix P or --no-prefix, not both.")
    env = _env(name, args.env or [])
    servers = _servers(session)
    old = servers.get(name)
    if old is not None and old.connected:
        raise UsageError(f"%tools mcp add: {name!r} is already added; first %tools mcp remove {name}.")
    approval = dict.fromkeys(_names(args.approval), True) | dict.fromkeys(_names(args.no_approval), False)
    try:
        box = McpToolbox(
            name,
            command,
            url=args.url,
            headers={"Authorization": f"Bearer {args.token}"} if args.token else None,
            oauth=OAuth(client_id=args.client_id, show=show_link) if args.oauth else None,
            prefix=args.prefix if args.prefix is not None else not args.no_prefix,
            approval=approval,
            include=_names(args.include) if args.include is not None else None,
            exclude=_names(args.exclude) if args.exclude is not None else None,
            timeout=args.timeout,
            call_timeout=session.settings.tool_timeout,
            env=env,
            cwd=os.path.expanduser(args.cwd) if args.cwd is not None else None,
            connect_timeout=args.connect_timeout,
            read_resources=args.read_resources,
            use_instructions=args.instructions,
            sampling=args.sampling,
            roots=_roots(name, args.root or []),
            log_level=args.log_level,
            record=args.record,
        )
        if args.record:  # with a cassette set for the session: replayed from it, or recorded now
            box.use_tape(session_tape(session))
    except (McpServerError, ValueError) as error:
        raise UsageError(f"%tools mcp add {name}: {error}") from None
    except CassetteError as error:  # only use_tape raises it, so box is made
        box.close()  # pyright: ignore[reportPossiblyUnboundVariable]
        raise UsageError(f"%tools mcp add {name}: {error}") from None
    _keep(session, name, box)
    print(_listing({name: box}))
    if box.asks.roots:  # the server may now work in these instead of the folders its command names
        roots = cast("list[str]", box.asks.roots)  # resolved to path strings by ServerAsks
        print(f"Roots offered to {name}: {', '.join(roots)}")


def _roots(name: str, folders: list[str]) -> list[str]:
    """The ``--root`` folders, each an existing directory (a typo is caught here, not by the server)."""
    missing = [folder for folder in folders if not os.path.isdir(os.path.expanduser(folder))]
    if missing:
        raise UsageError(
            f"%tools mcp add {name}: --root {missing[0]!r} is not a folder; give an existing directory."
        )
    return folders


def _env(name: str, pairs: list[str]) -> dict[str, str]:
    """``--env K=V`` options as a dict; a malformed one is refused without quoting its value."""
    env = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            shown = repr(key[:40]) if equals else "one without '='"
            raise UsageError(
                f"%tools mcp add {name}: --env takes NAME=VALUE (NAME of letters, digits and '_'); got {shown}."
            )
        env[key] = value
    return env


def show_link(name: str, link: str) -> None:
    """Show the authorization link of the server ``name`` in the running cell, as a button.

    Called on the MCP loop in the context of the cell that connects, so the output lands there.

    Raises:
        OAuthWaitError: The cell runs headless (nbval, papermill): no person can authorize.
    """
    from IPython.display import display

    from ..approvals.policy_approvals import is_headless

    if is_headless():
        raise OAuthWaitError(
            f"no person can authorize {name!r} in a headless run; run the cell once in Jupyter"
            " (the tokens are kept for the next runs)"
        )
    button = (
        f'<a href="{escape(link)}" target="_blank" rel="noopener" class="meowgent-oauth-link" style="display:inline-block;'
        'padding:4px 12px;border-radius:4px;background:#1976d2;color:#fff;text-decoration:none">'
        f'Authorize {escape(name)}</a> <span style="opacity:0.7">opens the server\'s sign-in page; this cell'
        " continues when you have allowed access</span>"
    )
    plain = f"Authorize {name}: open {link}"
    display({"text/html": button, "text/plain": plain}, raw=True)


def _keep(session: NotebookSession, name: str, box: McpToolbox, what: str = "") -> None:
    """Add ``box`` under ``name``, in place of a stopped server of that name (crashed, or cut off).

    Raises:
        UsageError: One of its tools has the name of another tool (see `_collected_tools`); the
            box is closed.
    """
    servers = _servers(session)
    old = servers.get(name)
    if not (box.record and box.tape_path is None and not box.connected):  # else its tools are not known yet
        namespace = [v for k, v in session.shell.user_ns.items() if not k.startswith("_") and v is not old]
        try:
            collected_tools(
                namespace,
                [*(b for b in session.toolboxes if b is not old), box],
                what or f"%tools mcp add {name}",
            )
        except UsageError:
            box.close()
            raise
    if old is not None:
        old.close()
        session.toolboxes = [b for b in session.toolboxes if b is not old]
    servers[name] = box
    session.toolboxes = [*session.toolboxes, box]


def _servers(session: NotebookSession) -> dict[str, McpToolbox]:
    return session.mcp_servers


def _names(value: str | None) -> list[str]:
    return [n.strip() for n in (value or "").split(",") if n.strip()]
