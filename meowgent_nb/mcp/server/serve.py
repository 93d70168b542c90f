"""`ToolServer`: notebook tools served over MCP streamable HTTP on 127.0.0.1 behind a bearer token.

Each call goes through the agent's own validate -> approve -> run (`agent.call_runner.CallRunner`,
a batch of one), with the notebook's rules first; it comes back as content (`content.served`)
and, for an object return type, structured content (`_serve_types`); a failure, denial or timeout
is an ``isError`` result. A tool's `ToolContext` talks to the client (`served_context`,
`served_rounds`); resources and prompts are `published_handlers`', change notifications
`served_events`'. The server runs on the background loop of `_thread`; the rules a person reads
are in docs/guides/mcp.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import itertools
import secrets
import socket
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ...agent.approvals import ApprovalRequest, Approver, DenyAll
from ...agent.call_runner import CallRunner, RunSettings
from ...agent.rules import Rules
from ...agent.tracing import tracer_provider_of
from ...errors import SettingsError
from ...policy import PolicyError, current_policy
from ...tools.context import context_backend
from ...tools.core import Tool, ToolCall, ToolResult
from ...tools.render import tool_json_schema
from .._thread import background_loop
from ..content.served import content_blocks
from ._serve_types import annotations_of, output_schema_of, structured_content
from ._token_gate import RequireToken
from .published import Prompt, Resource
from .published_handlers import Published
from .served_context import ClientLevels, ServedContext
from .served_events import ServedEvents
from .served_rounds import ServedCall

__all__ = ["SERVED_CLIENT", "ToolServer"]

SERVED_CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "meowgent_served_client", default=None
)
"""While a served call is approved: the name its client gave in its initialize request (None: it gave none)."""

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect of every served tool's arguments (they are validated as draft 2020-12)."""
_HOST = "127.0.0.1"
_UNKNOWN_STATE = (
    "Error: no call waits for this answer: its request_state is unknown, answered already or expired;"
    " call the tool again"
)
_START_WAIT = 10.0  # seconds for uvicorn to start listening


class ToolServer:
    """Serve tools over MCP streamable HTTP at ``http://127.0.0.1:PORT/mcp``.

    Every request must carry ``Authorization: Bearer TOKEN`` (the random `token`); others get
    403 with the reason. Stop it with `stop`.

    Args:
        tools: The tools to serve (names must be unique).
        port: The port; 0 picks a free one.
        include_approval_tools: Serve tools marked ``approval=True`` too, asking ``approver``.
        always_serve: Names of tools served even when they need approval (``%tools serve
            --notebook``'s), asking ``approver``.
        approver: Decides on calls that need approval (default: deny them).
        approval_loop: The event loop ``approver`` runs on (the kernel's); None: the server's.
        approve: Which calls ask ``approver``: ``"ask"`` (those that need it) or ``"every"``.
        rules: The notebook's `Rules`, asked about every call before the approver; None: none.
        timeout: Seconds a call, read or prompt may take when its tool sets no timeout.
        name: The server name clients see.
        resources: `Resource` objects (``@resource``) to publish.
        prompts: `Prompt` objects (``@prompt``) to publish.
        watch: Seconds between looks at watched resources for changes (None: only `changed`).
        tracer_provider: An OpenTelemetry ``TracerProvider`` each served call's ``execute_tool``
            span goes to, a child of the caller's span when its request carried a W3C
            ``traceparent`` in ``_meta``; None: the global one, where a person set one, else
            calls are not traced.

    Raises:
        OSError: The port cannot be listened on (it is in use).
        SettingsError: Two tools share a name, or ``approve`` is neither ``"ask"`` nor ``"every"``.
        PolicyError: The site's policy (`meowgent_nb.policy`) refuses ``approver`` (one that allows
            alone, `AutoApprove`), ``approve`` or ``timeout``, as it refuses them for `Agent`.

    Attributes:
        url: The endpoint to give an MCP client.
        token: The bearer token clients must send.
        tools: The tools served, in order.
        left_out: Tools not served because they need approval.
    """

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        port: int = 0,
        include_approval_tools: bool = False,
        always_serve: Iterable[str] = (),
        approver: Approver | None = None,
        approval_loop: asyncio.AbstractEventLoop | None = None,
        approve: Literal["ask", "every"] = "ask",
        ask_every: bool | None = None,
        timeout: float = 30.0,
        name: str = "meowgent-notebook",
        resources: Iterable[Resource] = (),
        prompts: Iterable[Prompt] = (),
        rules: Rules | None = None,
        watch: float | None = 1.0,
        tracer_provider: Any = None,
    ):
        import uvicorn
        from mcp.server.lowlevel import NotificationOptions, Server

        self.include_approval_tools = include_approval_tools
        self.always_serve = frozenset(always_serve)
        self._output_schemas: dict[str, Any] = {}
        self._listing: list[dict[str, Any]] | None = None  # the tools listing `update` last compared
        self._serve(tools)
        self.approver = approver or DenyAll("no one approves calls from outside the notebook")
        self.approval_loop = approval_loop
        if ask_every is not None:
            new = "every" if ask_every else "ask"
            message = f"ToolServer(ask_every={ask_every}) is deprecated; write ToolServer(approve={new!r})"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            approve = new
        if approve not in ("ask", "every"):
            raise SettingsError(
                f"ToolServer(approve={approve!r}): approve must be 'ask' or 'every'; to run or deny calls"
                " without asking anyone, give an approver that does (AutoApprove, DenyAll)."
            )
        _check_policy(approver, approve, timeout)
        self.approve = approve
        """Which calls ask the approver: ``"ask"`` (those of tools that need approval) or ``"every"``."""
        self.ask_every = approve == "every"
        self.rules = rules
        self.tracer_provider = tracer_provider
        self.timeout = timeout
        self.token = secrets.token_urlsafe(32)
        self._ids = itertools.count(1)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((_HOST, port))  # OSError (port in use) reaches the caller here
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self.port = listener.getsockname()[1]
        self.url = f"http://{_HOST}:{self.port}/mcp"
        self.resources, self.prompts = list(resources), list(prompts)
        self._published = Published(self.resources, self.prompts, timeout)
        self._events = ServedEvents(self._published.read, self._published.publishes, watch)
        self._levels = ClientLevels()
        self._parked: dict[str, ServedCall] = {}  # calls waiting for their client's answer, by request_state
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging/setLevel is deprecated in the 2026 protocol only
            mcp = Server(
                name,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_set_logging_level=self._levels.set_level,
                **self._published.handlers(),
                **self._events.handlers(resources=bool(self.resources)),
            )
        # 2025 clients are told of list changes too (`served_events`): the handshake says so.
        told = NotificationOptions(
            prompts_changed=bool(self.prompts), resources_changed=bool(self.resources), tools_changed=True
        )
        # This server's handshake options, for the SDK's app that asks for them with no arguments.
        mcp.create_initialization_options = functools.partial(  # pyright: ignore[reportAttributeAccessIssue]
            mcp.create_initialization_options, told
        )
        app = RequireToken(mcp.streamable_http_app(host=_HOST), self.token)
        config = uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._loop = background_loop()
        self._done = self._loop.submit(self._server.serve(sockets=[listener]))
        self._listener = listener
        deadline = time.monotonic() + _START_WAIT
        while not self._server.started and not self._done.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self._server.started:
            self.stop()
            raise RuntimeError(f"the MCP tool server on {self.url} did not start within {_START_WAIT:g} s")
        self._loop.on_exit(self, self._astop)

    @property
    def running(self) -> bool:
        """Whether the server still accepts connections."""
        return not self._done.done()

    def changed(self, uri: str) -> None:
        """Tell the clients watching the resource at ``uri`` that it changed, unless its content is
        what they were last told."""
        self._events.changed(uri)

    def update(
        self,
        tools: Iterable[Tool] | None = None,
        *,
        resources: Iterable[Resource] | None = None,
        prompts: Iterable[Prompt] | None = None,
    ) -> None:
        """Serve these tools, resources and prompts from now on (None: keep those served), and tell
        the clients once about each list whose listing changed.

        Raises:
            SettingsError: Two tools share a name (nothing changes).
        """
        from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

        told: list[Any] = []
        if tools is not None:
            before = self._listing if self._listing is not None else _dumped(self._listed())
            self._serve(tools)
            self._listing = _dumped(self._listed())  # kept: the next update compares with it
            told += [ToolsListChanged()] if self._listing != before else []
        resources_changed, prompts_changed = self._published.update(
            None if resources is None or not self.resources else list(resources),
            None if prompts is None or not self.prompts else list(prompts),
        )
        self.resources, self.prompts = self._published.resources, self._published.prompts
        told += [ResourcesListChanged()] if resources_changed else []
        told += [PromptsListChanged()] if prompts_changed else []
        for event in told:  # in this order, on the server's loop
            with contextlib.suppress(RuntimeError):  # the server stopped
                self._loop.submit(self._events.publish(event))

    def _serve(self, tools: Iterable[Tool]) -> None:
        tools = list(tools)
        names = [t.name for t in tools]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise SettingsError(f"ToolServer: two tools share a name: {', '.join(twice)}; serve one of each")
        served = [
            t for t in tools if self.include_approval_tools or not t.approval or t.name in self.always_serve
        ]
        known = {
            id(t): self._output_schemas[t.name]
            for t in getattr(self, "tools", ())
            if t.name in self._output_schemas
        }
        self._output_schemas = {
            t.name: known[id(t)] if id(t) in known else output_schema_of(t) for t in served
        }
        self.tools, self.left_out = served, [t for t in tools if t not in served]

    def stop(self) -> None:
        """Stop serving (open connections get two seconds to finish)."""
        self._loop.on_exit(self, None)
        self._loop.submit(self._events.stop())
        self._server.should_exit = True
        try:
            self._done.result(timeout=10)
        except BaseException:  # stopping anyway
            self._server.force_exit = True
        self._listener.close()

    async def _astop(self) -> None:
        self._server.should_exit = True
        await asyncio.wrap_future(self._done)

    # --- MCP handlers (on the background loop) ------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        self._events.heard(ctx)  # a 2025 client that lists the tools is told when they change
        return types.ListToolsResult(tools=self._listed())

    def _listed(self) -> list[Any]:
        import mcp_types as types

        # A tool's examples go as the schema's "examples" keyword, which MCP clients (ours too) read.
        return [
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=_input_schema(t),
                output_schema=self._output_schemas.get(t.name),
                annotations=types.ToolAnnotations.model_validate(annotations_of(t)),
            )
            for t in self.tools
        ]

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        state = getattr(params, "request_state", None)
        if state is not None:  # a retry with the answer to the tool's question (2026-07-28)
            served = self._parked.get(state)
            if served is None or not served.answers(ctx):  # another client's call is not this one's to answer
                return _result([_text(_UNKNOWN_STATE)], True)
            del self._parked[state]
            return await served.resume(ctx, dict(getattr(params, "input_responses", None) or {}))
        served = ServedCall(ctx, asyncio.get_running_loop(), self._parked)
        running = asyncio.ensure_future(self._answer(served, params))
        running.add_done_callback(lambda task: served.finish(_outcome(task)))
        return await served.next()

    async def _answer(self, served: ServedCall, params: Any) -> Any:
        # The loop's own validate -> approve -> run (a batch of one): what runs is what was approved.
        call = ToolCall(params.name, dict(params.arguments or {}), id=f"mcp_{next(self._ids)}")
        settings = RunSettings(
            approve="every" if self.ask_every else "ask",
            max_turns=1,
            max_workers=1,
            tool_timeout=self.timeout,
            max_output_chars=None,
            repeat_calls=True,
            max_repeated_failures=None,
            deny_if_approver_fails=True,
        )
        runner = CallRunner(settings, approver=_OnLoop(self.approver, self.approval_loop), rules=self.rules)
        results: dict[int, ToolResult] = {}
        SERVED_CLIENT.set(_client_name(served.request))  # this call's task only: the approver names it
        level = self._levels.level(served.request)
        spans = _served_spans(self.tracer_provider, params)
        with context_backend(lambda tool: ServedContext(served, level, tool)):  # the tool's ToolContext
            try:
                async for event in runner.run([(call, None)], self.tools, False, results):
                    if spans is not None:
                        spans.see(event)
            except BaseException as error:
                if spans is not None:
                    spans.fail(error)
                raise
            finally:
                if spans is not None:
                    spans.close()
        result = results[0]
        if not result.ok:
            return _result([_text(result.output)], True)
        content = content_blocks(result.value, result.output)
        schema = self._output_schemas.get(result.call.name)
        if schema is None:
            return _result(content, False)
        data, problem = structured_content(result.value, schema)
        if problem is not None:
            return _result([_text(f"Error: {problem}")], True)
        return _result(content, False, data)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"ToolServer({self.url!r}, {state}, tools={[t.name for t in self.tools]!r})"


class _OnLoop:
    """``approver``, asked on ``loop`` (the kernel's, where its buttons are) when that is running."""

    def __init__(self, approver: Approver, loop: asyncio.AbstractEventLoop | None):
        self.approver, self.loop = approver, loop

    async def approve(self, requests: Sequence[ApprovalRequest]) -> Any:
        if self.loop is not None and self.loop.is_running():
            asking = _ask(self.approver, requests, SERVED_CLIENT.get())
            pending = asyncio.run_coroutine_threadsafe(asking, self.loop)
            return await asyncio.wrap_future(pending)
        return await self.approver.approve(requests)

    def __repr__(self) -> str:
        return repr(self.approver)


async def _ask(approver: Approver, requests: Sequence[ApprovalRequest], client: str | None) -> Any:
    SERVED_CLIENT.set(client)  # in this task's own context, on the approver's loop
    return await approver.approve(requests)


def _served_spans(given: Any, params: Any) -> Any:
    """The spans of one served call (`agent.tracing.spans.ServedSpans`), or None: not traced.

    Their parent is the caller's span: the MCP SDK's server span of the request makes it current
    (from the ``traceparent`` in its ``_meta``); without that SDK span, it is read from ``_meta``.
    """
    provider = tracer_provider_of(given)
    if provider is None:
        return None
    from opentelemetry import context, propagate, trace

    from ...agent.tracing.spans import ServedSpans

    parent = context.get_current()
    if not trace.get_current_span(parent).get_span_context().is_valid:
        meta = getattr(params, "meta", None)
        parent = propagate.extract(meta if isinstance(meta, dict) else {})
    return ServedSpans(provider.get_tracer("meowgent_nb"), parent)


def _client_name(request: Any) -> str | None:
    """The name the client gave in its initialize request, or None (it gave none, or there was none)."""
    params = getattr(getattr(request, "session", None), "client_params", None)
    name = getattr(getattr(params, "client_info", None), "name", None)
    return name if isinstance(name, str) and name else None


def _result(content: list[Any], is_error: bool, structured: dict[str, Any] | None = None) -> Any:
    import mcp_types as types

    return types.CallToolResult(content=content, is_error=is_error, structured_content=structured)


def _outcome(task: asyncio.Task[Any]) -> Any:
    """A served call's result, or an error result saying why it has none."""
    if task.cancelled():
        return _result([_text("Error: the call was cancelled (the server is stopping)")], True)
    error = task.exception()
    if error is not None:
        return _result(
            [_text(f"Error: the server failed to run the call: {type(error).__name__}: {error}")], True
        )
    return task.result()


def _dumped(listed: list[Any]) -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json", by_alias=True, exclude_none=True) for entry in listed]


def _text(text: str) -> Any:
    import mcp_types as types

    return types.TextContent(type="text", text=text)


def _input_schema(tool: Tool) -> dict[str, Any]:
    """The tool's parameters with its ``examples`` and ``$schema`` (draft 2020-12)."""
    return {"$schema": DIALECT, **tool_json_schema(tool)["function"]["parameters"]}


def _check_policy(approver: Approver | None, approve: str, timeout: float) -> None:
    """Refuse a server looser than the site's policy (`meowgent_nb.policy`), as `Agent` does: an
    approver that allows alone (`AutoApprove`), approval looser than its limit, a longer time limit.

    Raises:
        PolicyError: One line per setting, naming the policy file and key.
    """
    policy = current_policy()
    if not policy.applies:
        return
    alone = getattr(approver, "decides_alone", None)
    refusals = [
        policy.approval_refusal("allow", f"ToolServer(approver={approver!r})") if alone == "allow" else None,
        policy.approval_refusal(approve, f"ToolServer(approve={approve!r})"),
        policy.timeout_refusal(timeout, f"ToolServer(timeout={timeout:g})"),
    ]
    lines = [refusal for refusal in refusals if refusal is not None]
    if lines:
        raise PolicyError("\n".join(lines))
