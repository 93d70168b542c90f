"""`Connection`: an `McpToolbox`'s link with its server: start, reconnect, run requests, retry.

The box owns one and gives it to its parts (`ServerResources`, `ToolRefresh`); it holds the
session of the moment on the background loop, the box's secrets and its time limits. Only a call
of an ``idempotentHint`` tool is retried, and never one its agent gave up (`Connection.retries`).
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Coroutine
from typing import Any

from .._thread import background_loop
from ._secrets import Secrets
from ._session import CallTimedOut, McpServerError, Session
from .asking import ServerAsks
from .oauth import OAuth, provider, refusal
from .progress import ServerNotes
from .tool import McpTool

__all__ = ["CONNECT_FIX", "MARGIN", "Connection"]

MARGIN = 1.0  # seconds: the agent's own time limit ends a slow call first, as for local tools
CONNECT_FIX = {
    "stdio": "Check the command, and that the server starts on its own in a terminal.",
    "http": "Check the URL, the token or headers (a refused token reads 'Server returned an error response'),"
    " and that the server is running.",
}


class Connection:
    """One `McpToolbox`'s link with its server, over stdio or streamable HTTP.

    Args:
        name: What the box calls the server.
        argv: The stdio server's command and arguments ([] for HTTP).
        url: The streamable-HTTP endpoint, or None for stdio.
        headers: HTTP headers to send.
        env: Extra environment variables of a stdio server.
        cwd: A stdio server's working directory.
        secrets: The box's secrets (masked in messages and in what the server sends).
        asks: The box's answers to the server's elicitation, sampling and roots requests.
        notes: The box's log of the server's messages and its calls' progress.
        oauth: How the box authorizes (an `OAuth`), or None.
        call_timeout: Seconds a request other than a call may take (and a call without a limit).
        connect_timeout: Seconds to wait for the server to start and list its tools.
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        url: str | None,
        headers: dict[str, str],
        env: dict[str, str],
        cwd: str | None,
        *,
        secrets: Secrets,
        asks: ServerAsks,
        notes: ServerNotes,
        oauth: OAuth | None,
        call_timeout: float,
        connect_timeout: float,
    ):
        self.name, self.secrets, self.asks, self.notes, self.oauth = name, secrets, asks, notes, oauth
        self.transport = "stdio" if url is None else "http"
        self.target = secrets.redact(url if url is not None else shlex.join(argv))
        """The command line or the URL, for listings and messages (secrets shown as ``***``)."""
        self.call_timeout, self.connect_timeout = call_timeout, connect_timeout
        self.log_path: str | None = None
        """Where a stdio server's stderr goes (ipykernel's stderr has no file descriptor)."""
        self.stale = False
        """Whether the server said its tools changed since they were last listed."""
        self.loop = background_loop()
        self.session = Session(self, argv, url, headers, env, cwd)
        """The session of the moment (`reconnect` makes a new one)."""
        if oauth is not None:
            self.session.auth = provider(name, str(url), oauth, secrets.add)

    # --- what the session reads of it ------------------------------------------------------------

    def masking(self, transport: Any) -> Any:
        """``transport`` with each message from the server masked (see `Secrets.masking`)."""
        return self.secrets.masking(transport)

    def tools_changed(self) -> None:
        """Take note that the server's tools changed (the session calls it, on the background loop)."""
        self.stale = True

    # --- the session of the moment ---------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Whether the session is open."""
        return self.session.alive

    @property
    def client(self) -> Any:
        """The SDK's client of the session."""
        return self.session.client

    @property
    def linked(self) -> set[str]:
        """The URIs the server's tool results linked to (its resources too)."""
        return self.session.linked

    def redact(self, text: str) -> str:
        """``text`` with the box's secrets shown as ``***``."""
        return self.secrets.redact(text)

    def run(self, request: Coroutine[Any, Any, Any], timeout: float, held: Any = None) -> Any:
        """Run ``request`` on the background loop.

        Raises:
            McpServerError: The request's, with the secrets masked (a server may quote its token).
        """
        try:
            return self.loop.run(request, timeout=timeout, held=held)
        except McpServerError as error:
            raise McpServerError(self.redact(str(error))) from None

    def start(self) -> list[Any]:
        """Start the server (stdio) or connect to it (HTTP); returns its tools as listed.

        Raises:
            McpServerError: It did not start or could not be reached (the message says the fix).
        """
        if self.transport == "stdio":
            handle, self.log_path = tempfile.mkstemp(prefix=f"meowgent-mcp-{self.name}-", suffix=".log")
            os.close(handle)
        try:
            listed = self.loop.run(self.session.start(), timeout=self._connect_limit())
        except BaseException as exc:
            self.loop.run(self.session.stop(), timeout=15)
            error = refusal(
                self.name, self.target, self.session.refused, self.oauth, exc
            ) or self.session.failure(
                f"could not connect to the MCP server {self.name!r} ({self.target})",
                exc,
                fix=CONNECT_FIX[self.transport],
            )
            self.remove_log()
            if not isinstance(exc, Exception):  # an interrupt stays an interrupt
                raise
            raise McpServerError(self.redact(str(error))) from None
        self.loop.on_exit(self, self._aclose)
        return listed

    def reconnect(self) -> None:
        """Stop the session and start a new one (a stdio server is started again).

        Raises:
            McpServerError: The server could not be reached again; the old session stays stopped.
        """
        old = self.session
        self.loop.run(old.stop(), timeout=15)
        fresh = Session(self, old.argv, old.url, old.headers, old.env, old.cwd)
        fresh.auth = old.auth  # OAuth: the same provider, with the tokens it holds
        try:
            self.loop.run(fresh.start(), timeout=self._connect_limit())
        except BaseException as exc:
            self.loop.run(fresh.stop(), timeout=15)
            if not isinstance(exc, Exception):  # an interrupt stays an interrupt
                raise
            error = refusal(self.name, self.target, fresh.refused, self.oauth, exc) or fresh.failure(
                f"could not connect to the MCP server {self.name!r} again ({self.target})",
                exc,
                fix=CONNECT_FIX[self.transport],
            )
            raise McpServerError(self.redact(str(error))) from None
        self.session = fresh
        self.loop.on_exit(self, self._aclose)

    def _connect_limit(self) -> float:
        waited = self.oauth.wait if self.oauth is not None else 0.0  # a person may have to authorize
        return self.connect_timeout + MARGIN + waited

    def retries(self, tool: McpTool | None, error: McpServerError, running: Any, was_open: bool) -> bool:
        """Whether a failed call is made once more on a new session: an ``idempotentHint`` tool's
        call that timed out or lost its connection, and that its agent has not given up.

        Raises:
            McpServerError: Only the tool is not idempotent: ``error``, saying it may have run.
        """
        lost = was_open and not self.session.alive and not self.session.stopped
        if not (lost or isinstance(error, CallTimedOut)) or getattr(running, "ended", None) is not None:
            return False
        if tool is None or not tool.idempotent:
            remote = tool.remote_name if tool else "it"
            raise type(error)(
                f"{error}\nIt was not tried again: the server does not mark {remote}"
                " idempotent (idempotentHint), so it may have run."
            ) from None
        return True

    def close(self) -> None:
        """End the session (a stdio server is stopped) and delete its stderr log."""
        self.loop.on_exit(self, None)
        self.loop.run(self.session.stop(), timeout=15)
        self.remove_log()

    async def _aclose(self) -> None:  # at interpreter exit, on the background loop
        await self.session.stop()
        self.remove_log()

    def remove_log(self) -> None:
        """Delete a stdio server's stderr log, if there is one."""
        if self.log_path and os.path.exists(self.log_path):
            os.remove(self.log_path)
