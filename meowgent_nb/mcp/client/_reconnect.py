"""A new session with a server that went away or hangs, and the one retry of an idempotent call.

`Reconnect` is a mixin of `McpToolbox`: `reconnect` stops the old session and starts a new one
(a stdio server is started again), then lists the tools again (`ToolRefresh.refresh`), so they
keep their names and settings. A call whose connection broke, or that the server did not answer
in time, is made once more on a new session only for a tool the server marks ``idempotentHint``
(running it twice does no harm); any other such call's error says it was not, and that it may
have run. A call its agent gave up (Stop, the agent's own limit) is never retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from ._refresh import ToolChanges
from ._session import CallTimedOut, McpServerError, _Connection
from .oauth import refusal
from .tool import McpTool

if TYPE_CHECKING:
    from ._session import _Server  # which the McpToolbox this is part of is

__all__ = ["CONNECT_FIX", "MARGIN", "Reconnect"]

MARGIN = 1.0  # seconds: the agent's own time limit ends a slow call first, as for local tools
CONNECT_FIX = {
    "stdio": "Check the command, and that the server starts on its own in a terminal.",
    "http": "Check the URL, the token or headers (a refused token reads 'Server returned an error response'),"
    " and that the server is running.",
}


class Reconnect:
    """`reconnect` and the retry rule of an `McpToolbox` (see the module docstring)."""

    name: str
    target: str
    transport: str
    connect_timeout: float
    instructions: str | None
    _connection: _Connection
    _loop: Any
    _redact: Callable[[str], str]  # McpToolbox's (`Secrets`)
    _aclose: Callable[[], Awaitable[None]]  # McpToolbox's
    refresh: Callable[[], ToolChanges]  # McpToolbox's (`ToolRefresh`)

    def reconnect(self) -> ToolChanges:
        """A new session with the server (a stdio server is started again), and its tools listed again.

        For a server that stopped (it crashed, or the connection broke) or hangs. The tools keep
        their names and settings where the server lists them as before.

        Returns:
            What changed in the tools (printable; false when nothing did).

        Raises:
            McpServerError: The server could not be reached again; the box keeps its tools, stopped.
        """
        old = self._connection
        self._loop.run(old.stop(), timeout=15)
        fresh = _Connection(cast("_Server", self), old.argv, old.url, old.headers, old.env, old.cwd)
        fresh.auth = old.auth  # OAuth: the same provider, with the tokens it holds
        waited = getattr(getattr(self, "oauth", None), "wait", 0.0)  # a person may have to authorize again
        try:
            self._loop.run(fresh.start(), timeout=self.connect_timeout + MARGIN + waited)
        except BaseException as exc:
            self._loop.run(fresh.stop(), timeout=15)
            if not isinstance(exc, Exception):  # an interrupt stays an interrupt
                raise
            error = refusal(
                self.name, self.target, fresh.refused, getattr(self, "oauth", None), exc
            ) or fresh.failure(
                f"could not connect to the MCP server {self.name!r} again ({self.target})",
                exc,
                fix=CONNECT_FIX[self.transport],
            )
            raise McpServerError(self._redact(str(error))) from None
        self._connection = fresh
        self.instructions = fresh.instructions
        self._loop.on_exit(self, self._aclose)
        return self.refresh()

    def _retries(self, tool: McpTool | None, error: McpServerError, running: Any, was_open: bool) -> bool:
        """Whether a failed call is made once more, on a new session: only a call of a tool the
        server marks ``idempotentHint`` (running it twice does no harm) that timed out here or
        whose connection broke, and that its agent has not given up (Stop, its own limit)."""
        lost = was_open and not self._connection.alive and not self._connection.stopped
        if not (lost or isinstance(error, CallTimedOut)) or getattr(running, "ended", None) is not None:
            return False
        if tool is None or not tool.idempotent:
            remote = tool.remote_name if tool else "it"
            raise type(error)(
                f"{error}\nIt was not tried again: the server does not mark {remote}"
                " idempotent (idempotentHint), so it may have run."
            ) from None
        return True

    def _again(self, remote: str, error: McpServerError) -> None:
        """Reconnect before the one retry of an idempotent call; if that fails, both errors are told."""
        try:
            self.reconnect()
        except McpServerError as failed:
            raise McpServerError(
                f"{error}\nTrying {remote} again on a new session failed: {str(failed).splitlines()[0]}"
            ) from None
