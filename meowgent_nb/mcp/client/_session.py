"""One MCP session on the background loop: connect, list, call, read, stop (`Session`).

The session is entered and left by one task, as anyio requires; calls come from other tasks of
the same loop. Errors are translated here, once, into `McpServerError` (the server could not be
reached, crashed, or refused a call) and `McpToolError` (the tool reported an error).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, cast

from ...agent.running_call import within_limit
from ...agent.tracing import call_context
from ...errors import MeowgentError
from ..content._results import result_text
from ._given_up import _GivenUp, _until_given_up
from .asking import ServerAsks
from .progress import ProgressFn, ServerNotes, set_level

if sys.version_info < (3, 11):  # pragma: no cover  (3.10: anyio depends on the backport)
    from exceptiongroup import BaseExceptionGroup
_GROUP = BaseExceptionGroup

__all__ = ["CallTimedOut", "McpServerError", "McpToolError", "Session", "listen_for_tool_changes"]

_STDERR_TAIL = 10  # lines of a stdio server's stderr quoted when it fails
_RELISTEN = 1.0  # seconds at least between two listen streams a server ended (one that ends each at once)
_SHORT_STREAMS = 5  # streams in a row that each lasted under _RELISTEN: the server will not keep one open


class McpServerError(MeowgentError):
    """An MCP server could not be reached, crashed, or answered a call with a protocol error."""


class McpToolError(MeowgentError):
    """A server tool ran and reported an error (``isError``); the message is the tool's text."""


class CallTimedOut(McpServerError):
    """The server did not answer a call within its limit (the session may still be open)."""


class _Owner(Protocol):
    """What a session reads of the connection that owns it (a box's `_connection.Connection`)."""

    name: str
    """What the notebook calls the server (in error messages' fixes)."""
    target: str
    """The URL, or the command line, for error messages."""
    log_path: str | None
    """Where a stdio server's stderr goes, or None."""
    asks: ServerAsks
    """Its answers to the server's elicitation, sampling and roots requests."""
    notes: ServerNotes
    """Its log of the server's messages (the SDK's ``logging_callback``)."""

    def tools_changed(self) -> None:
        """The server said its tools changed (called on the background loop; it only takes note)."""

    def masking(self, transport: Any) -> Any:
        """``transport`` with each message from the server masked (`_secrets`): the one way in."""


class Session:
    """One session, entered and left by one task on the background loop (anyio needs that)."""

    def __init__(
        self,
        owner: _Owner,
        argv: list[str],
        url: str | None,
        headers: dict[str, str],
        env: dict[str, str],
        cwd: str | None,
    ):
        self.owner, self.argv, self.url, self.headers, self.env, self.cwd = (
            owner,
            argv,
            url,
            headers,
            env,
            cwd,
        )
        self.client: Any = None
        self.auth: Any = None
        """The ``httpx2`` auth of an HTTP session (the SDK's OAuth provider, see `oauth`), or None."""
        self.refused: tuple[int, str] | None = None
        """The HTTP server's 401 or 403 (status, ``WWW-Authenticate``) if its last answer was one, else None."""
        self.alive = False
        self.stopped = False
        """Set by `stop`: the session was ended here, not lost."""
        self.capabilities: Any = None
        """What the server said at the start that it offers (the SDK's ``ServerCapabilities``)."""
        self.instructions: str | None = None
        """The server's ``instructions`` from the start, or None."""
        self.linked: set[str] = set()
        """The URIs the server's tool results linked to (``resource_link``): they are its resources too."""
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._watcher: asyncio.Task[None] | None = None

    async def _transport(self, stack: contextlib.AsyncExitStack, errlog: Any) -> Any:
        if self.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            # Ours to close (the transport leaves a client it was given open): the stack does it.
            timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults
            hooks = {
                "response": [self._heard]
            }  # the SDK turns a 401 into "Server returned an error response"
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=self.headers, timeout=timeout, auth=self.auth, event_hooks=hooks)
            )
            return streamable_http_client(self.url, http_client=http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.argv[0], args=self.argv[1:], env=self.env or None, cwd=self.cwd
        )
        return stdio_client(params, errlog=errlog)

    async def _heard(self, response: Any) -> None:
        if response.status_code in (401, 403):
            self.refused = (response.status_code, response.headers.get("www-authenticate", ""))
        elif response.status_code < 400:  # authorized since: a later failure is another one
            self.refused = None

    async def start(self) -> list[Any]:
        """Connect and list every tool (following pages); runs on the background loop."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._task = asyncio.create_task(self._session(ready))
        await asyncio.shield(ready)
        # Kept now: the SDK client forgets them when its session ends (a crash, a close).
        self.capabilities, self.instructions = self.client.server_capabilities, self.client.instructions
        self._watcher = asyncio.create_task(listen_for_tool_changes(self, self.owner.tools_changed))
        await set_level(self.client, self.capabilities, self.owner.notes.level)
        tools, cursor = [], None
        for _ in range(100):  # a server whose pages never end cannot hang the notebook
            page = await self.client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _session(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        errlog = open(self.owner.log_path, "a") if self.owner.log_path else None  # noqa: SIM115 (closed below)
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = self.owner.masking(await self._transport(stack, errlog))
                asks = self.owner.asks
                callbacks: dict[str, Any] = {"elicitation_callback": asks.elicit}
                if asks.roots:  # none chosen: not declared, so a server keeps the folders it was given
                    callbacks["list_roots_callback"] = asks.list_roots
                callbacks.update(logging_callback=self.owner.notes.on_log, log_level=self.owner.notes.level)
                if asks.sampling != "deny":  # not offered at all: the server knows not to ask
                    callbacks["sampling_callback"] = asks.sample
                callbacks["message_handler"] = self._on_message  # tools/list_changed, see `_refresh`
                self.client = await stack.enter_async_context(Client(transport, cache=None, **callbacks))
                self.alive = True
                ready.set_result(None)
                await cast(asyncio.Event, self._closing).wait()  # start() made it before this task
        except BaseException as exc:  # the server went away, or never came; start() reports it
            if not ready.done():
                ready.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self.alive = False
            if errlog is not None:
                errlog.close()

    @property
    def announces_tool_changes(self) -> bool:
        """Whether the server said at the start that it tells when its tools change (``tools.listChanged``)."""
        return getattr(getattr(self.capabilities, "tools", None), "list_changed", None) is True

    async def _on_message(self, message: Any) -> None:
        """The SDK's ``message_handler``: a server's notifications (and transport errors)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.owner.tools_changed()

    async def call(
        self,
        remote: str,
        arguments: dict[str, Any],
        limit: float,
        progress: ProgressFn | None = None,
        *,
        task: bool = False,
        status: Callable[[str], Awaitable[None]] | None = None,
    ) -> Any:
        """Call ``remote`` and return the server's ``CallToolResult``; as an MCP task with ``task``
        (its status lines to ``status``). A call the agent gives up is cancelled on the server.

        Raises:
            McpToolError: The tool reported an error.
            McpServerError: The server could not be reached or refused the call.
            CallTimedOut: No answer within ``limit``.
        """
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        from ._tasks import NotATask, TaskEnded, call_as_task

        name = self.owner.name
        if not self.alive:
            raise self.not_connected()
        running = self.owner.asks.running_call()
        if task:
            send = call_as_task(self.client, remote, arguments, limit, progress, status)
        else:
            send = self.client.call_tool(remote, arguments, progress_callback=progress)
        traced = call_context(running.call) if running is not None else None
        if traced is not None:  # the SDK sends the current trace context in the request's _meta
            send = _in_context(send, traced)
        try:
            # The limit is kept here, not by the SDK: it stands still while the person answers
            # the server's form (or the model its request), see `RunningCall.hold`.
            result = await within_limit(_until_given_up(send, running), limit, running)
        except NotATask as exc:
            raise McpServerError(f"the MCP server {name!r} {exc}") from None
        except TaskEnded as exc:
            raise McpToolError(str(exc)) from None
        except _GivenUp as given_up:
            raise McpServerError(
                f"the call to {remote} was given up ({given_up}); the server was told"
            ) from None
        except asyncio.TimeoutError:
            raise CallTimedOut(
                f"the MCP server {name!r} did not answer the call to {remote} within {limit:g} s"
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.alive = False
                raise self.failure(
                    f"the MCP server {name!r} closed the connection during the call to {remote}", exc
                ) from None
            if exc.code == REQUEST_TIMEOUT:
                raise CallTimedOut(
                    f"the MCP server {name!r} did not answer the call to {remote} within {limit:g} s"
                ) from None
            raise McpServerError(
                f"the MCP server {name!r} refused the call to {remote}: {exc.message} (error {exc.code})"
            ) from None
        except (OSError, _GROUP) as exc:  # the HTTP connection broke
            self.alive = False
            raise self.failure(
                f"the connection to the MCP server {name!r} broke during the call to {remote}", exc
            ) from None
        except RuntimeError as exc:  # the SDK's check of the result against the tool's output schema
            raise McpToolError(
                f"the MCP server {name!r} answered the call to {remote} with a result its own output schema"
                f" does not allow, so it was not used: {_first_line(exc)}"
            ) from None
        self.linked.update(str(b.uri) for b in result.content if getattr(b, "type", "") == "resource_link")
        if result.is_error:
            raise McpToolError(result_text(result) or f"{remote} reported an error without a message")
        return result

    def not_connected(self) -> McpServerError:
        name = self.owner.name
        return McpServerError(
            f"the MCP server {name!r} is not connected (it was closed or stopped); start it again"
            f" with %tools mcp reconnect {name} (or box.reconnect())"
        )

    def offers(self, capability: str) -> bool:
        """Whether the server said at the start that it has ``resources``, ``prompts`` or ``completions``."""
        return getattr(self.capabilities, capability, None) is not None

    async def listing(self, method: str, field: str, limit: float) -> list[Any]:
        """Every entry of a listing (``list_resources`` -> ``resources``), following its pages."""
        entries: list[Any] = []
        cursor, send, what = (
            None,
            getattr(self.client, method),
            f"the listing of its {field.replace('_', ' ')}",
        )
        for _ in range(100):  # a server whose pages never end cannot hang the notebook
            page = await self.request(what, lambda: send(cursor=cursor), limit)  # noqa: B023 - awaited within this iteration
            entries.extend(getattr(page, field))
            cursor = page.next_cursor
            if cursor is None:
                break
        return entries

    async def request(self, what: str, send: Callable[[], Awaitable[Any]], limit: float) -> Any:
        """The answer to one request other than a tool call, with its errors translated.

        Args:
            what: What is asked, for the messages ("the read of notes://x").
            send: Makes the request (a call of one of the SDK client's methods).
            limit: Seconds to wait for the answer.

        Raises:
            McpServerError: The server refused, could not be reached, or did not answer in time.
        """
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        name = self.owner.name
        if not self.alive:
            raise self.not_connected()
        try:
            return await asyncio.wait_for(send(), limit)
        except asyncio.TimeoutError:
            raise McpServerError(
                f"the MCP server {name!r} did not answer {what} within {limit:g} s"
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.alive = False
                raise self.failure(
                    f"the MCP server {name!r} closed the connection during {what}", exc
                ) from None
            raise McpServerError(
                f"the MCP server {name!r} refused {what}: {exc.message} (error {exc.code})"
            ) from None
        except (OSError, _GROUP) as exc:  # the HTTP connection broke
            self.alive = False
            raise self.failure(
                f"the connection to the MCP server {name!r} broke during {what}", exc
            ) from None

    async def ping(self, limit: float) -> bool:
        """Whether the server still answers; a closed connection marks the session stopped."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        if not self.alive:
            return False
        try:
            # Not ping: the 2026-07-28 protocol removed it. Listing tools is cheap and always there.
            await asyncio.wait_for(self.client.list_tools(), limit)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.alive = False
        except (OSError, _GROUP):
            self.alive = False
        except asyncio.TimeoutError:  # slow is not gone: a busy server keeps its session
            pass
        return self.alive

    async def stop(self) -> None:
        self.stopped = True
        if self._watcher is not None:  # before the session closes under it; none is left running
            self._watcher.cancel()
            await asyncio.wait([self._watcher], timeout=5)
        if self._task is None:
            return
        cast(asyncio.Event, self._closing).set()  # made by start() with the task
        if not self.alive:  # still connecting (a timeout, an interrupt): nothing to close politely
            self._task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 10)
        except BaseException:  # the session ended badly or slowly: it is over either way
            self._task.cancel()
        self.alive = False

    def failure(self, what: str, exc: BaseException, fix: str | None = None) -> McpServerError:
        """One error saying what failed, the detail, the server's last stderr lines, and the fix."""
        while isinstance(exc, _GROUP) and exc.exceptions:
            exc = exc.exceptions[0]
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
            detail = "it did not answer in time"
        text = f"{what}: {detail}."
        tail = _tail(self.owner.log_path)
        if tail:
            text += f"\nIts stderr ended with:\n{tail}"
        again = f"%tools mcp reconnect {self.owner.name}, or box.reconnect()"
        fix = fix or f"Check the server ({self.owner.target}), then start it again ({again})."
        return McpServerError(f"{text}\n{fix}")


async def listen_for_tool_changes(session: Session, changed: Callable[[], None]) -> None:
    """Keep a 2026-07-28 server's ``subscriptions/listen`` stream of tool changes open while
    ``session`` lives, on the background loop.

    A stream the server ends is opened again and ``changed`` called (a change may have come while
    none was open); a server that refuses it, or keeps ending it at once, leaves refreshing by hand.
    """
    from mcp import MCPError
    from mcp.client.subscriptions import ListenNotSupportedError

    if not session.announces_tool_changes:
        return
    again, short = False, 0
    while session.alive and not session.stopped and short < _SHORT_STREAMS:
        opened = time.monotonic()
        try:
            async with session.client.listen(tools_list_changed=True) as events:
                if again:
                    changed()
                async for _ in events:  # the change itself comes through the message handler
                    pass
        except (ListenNotSupportedError, MCPError):  # an older protocol, or refused: by hand
            return
        except Exception:  # noqa: BLE001 - the stream dropped: listen again while the session lives
            pass
        again, lasted = True, time.monotonic() - opened
        short = short + 1 if lasted < _RELISTEN else 0
        await asyncio.sleep(max(0.0, _RELISTEN - lasted))


async def _in_context(send: Awaitable[Any], context: Any) -> Any:
    """``send`` awaited with ``context`` current: the MCP SDK puts its ``traceparent`` (W3C trace
    context) in the request's ``_meta``, so the served call's span is a child of the agent's."""
    from opentelemetry import context as otel

    token = otel.attach(context)
    try:
        return await send
    finally:
        otel.detach(token)


def _field(obj: Any, name: str, wire_name: str) -> Any:
    """``obj.name`` (mcp 2.x), ``obj.wireName`` (mcp 1.x), or the same keys of a dict."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(wire_name, obj.get(name))
    value = getattr(obj, name, None)
    return value if value is not None else getattr(obj, wire_name, None)


def _tail(path: str | None) -> str:
    if not path or not os.path.exists(path):
        return ""
    with open(path, errors="replace") as file:
        lines = file.read().splitlines()
    return "\n".join(lines[-_STDERR_TAIL:])


def _first_line(error: BaseException, limit: int = 300) -> str:
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."
