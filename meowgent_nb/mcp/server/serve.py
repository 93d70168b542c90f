"""Serving notebook tools over MCP: `ToolServer`, streamable HTTP on 127.0.0.1 behind a bearer token.

Another MCP client (an IDE, another notebook, an agent) can then list and call the tools. Each
call goes through the agent's own validate -> approve -> run (`agent.calls.CallRunner`, as a
batch of one): it is validated as a model's call is, a call that needs approval runs only on an
explicit `Approved` and with exactly the arguments approved (a person's edits, validated again;
the result says so), and it runs on a tool thread within its time limit. It comes back as text
(and, for a tool whose return type is an object, as structured content too; see `_serve_types`
for that and the annotations published); a failure, a denial or a timeout is an ``isError``
result. Tools that need approval are left out unless asked for; then every outside call asks the
approver first, on ``approval_loop`` (in a notebook, the kernel's: its buttons are there). The
server runs on the same background loop as the MCP sessions (see `_thread`).
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import socket
import time
from collections.abc import Iterable, Sequence
from typing import Any

from .._thread import background_loop
from ._serve_types import annotations_of, output_schema_of, structured_content
from .published import Prompt, Resource, UnsafeSegment
from ._token_gate import RequireToken
from ...agent.approvals import ApprovalRequest, Approver, DenyAll
from ...agent.calls import CallRunner
from ...tools.core import Tool, ToolCall, ToolResult
from ...tools.render import tool_json_schema

__all__ = ["ToolServer"]

_HOST = "127.0.0.1"
_START_WAIT = 10.0  # seconds for uvicorn to start listening


class ToolServer:
    """Serve tools over MCP streamable HTTP at ``http://127.0.0.1:PORT/mcp``.

    Every request must carry ``Authorization: Bearer TOKEN`` (the random `token`); others get
    403 with the reason (see `_token_gate` for why not 401). Stop it with `stop`.

    Raises:
        OSError: The port cannot be listened on (it is in use).
        ValueError: Two tools share a name.

    Args:
        tools: The tools to serve (names must be unique).
        port: The port; 0 picks a free one.
        include_approval_tools: Serve tools marked ``approval=True`` too; each call then asks
            ``approver`` first.
        approver: Decides on calls of tools that need approval (default: deny them).
        approval_loop: The event loop ``approver`` must run on (the kernel's, for buttons in
            the notebook); None runs it on the server's loop.
        ask_every: Ask the approver about every call, not only those of tools that need approval.
        timeout: Seconds a call may take when its tool sets no timeout (and a resource read or
            a prompt).
        name: The server name clients see.
        resources: `Resource` objects (``@resource``) to publish, fixed ones and templates.
        prompts: `Prompt` objects (``@prompt``) to publish.

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
        approver: Approver | None = None,
        approval_loop: asyncio.AbstractEventLoop | None = None,
        ask_every: bool = False,
        timeout: float = 30.0,
        name: str = "meowgent-notebook",
        resources: Iterable[Resource] = (),
        prompts: Iterable[Prompt] = (),
    ):
        import uvicorn
        from mcp.server.lowlevel import Server

        tools = list(tools)
        names = [t.name for t in tools]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"ToolServer: two tools share a name: {', '.join(twice)}; serve one of each")
        self.tools = [t for t in tools if include_approval_tools or not t.approval]
        self.left_out = [t for t in tools if t not in self.tools]
        self._output_schemas = {t.name: output_schema_of(t) for t in self.tools}
        self.approver = approver or DenyAll("no one approves calls from outside the notebook")
        self.approval_loop = approval_loop
        self.ask_every = ask_every
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
        handlers: dict[str, Any] = {}
        if self.resources:
            handlers.update(
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_templates,
                on_read_resource=self._read_resource,
            )
        if self.prompts:
            handlers.update(on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        mcp = Server(name, on_list_tools=self._list_tools, on_call_tool=self._call_tool, **handlers)
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

    def stop(self) -> None:
        """Stop serving (open connections get two seconds to finish)."""
        self._loop.on_exit(self, None)
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

        # A tool's examples go as the schema's "examples" keyword, which MCP clients (ours too) read.
        listed = [
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=_input_schema(t),
                output_schema=self._output_schemas.get(t.name),
                annotations=types.ToolAnnotations.model_validate(annotations_of(t)),
            )
            for t in self.tools
        ]
        return types.ListToolsResult(tools=listed)

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        # The loop's own validate -> approve -> run (a batch of one): what runs is what was approved.
        call = ToolCall(params.name, dict(params.arguments or {}), id=f"mcp_{next(self._ids)}")
        runner = CallRunner(
            _OnLoop(self.approver, self.approval_loop),
            "every" if self.ask_every else "marked",
            max_turns=1,
            max_workers=1,
            tool_timeout=self.timeout,
            max_output_chars=None,
            repeat_calls=True,
            max_repeated_failures=None,
            deny_if_approver_fails=True,
        )
        results: dict[int, ToolResult] = {}
        async for _ in runner.run([(call, None)], self.tools, False, results):
            pass
        result = results[0]
        if not result.ok:
            return _result(result.output, True)
        schema = self._output_schemas.get(result.call.name)
        if schema is None:
            return _result(result.output, False)
        data, problem = structured_content(result.value, schema)
        if problem is not None:
            return _result(f"Error: {problem}", True)
        return _result(result.output, False, data)

    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        fixed = [r for r in self.resources if not r.template]
        listed = [
            types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type) for r in fixed
        ]
        return types.ListResourcesResult(resources=listed)

    async def _list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        listed = [
            types.ResourceTemplate(uri_template=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in self.resources
            if r.template
        ]
        return types.ListResourceTemplatesResult(resource_templates=listed)

    async def _read_resource(self, ctx: Any, params: Any) -> Any:
        import base64

        import mcp_types as types
        from mcp import MCPError

        uri = str(params.uri)
        found, refused = None, None
        for each in self.resources:  # another template may take what one refuses
            try:
                if each.match(uri) is not None:
                    found = each
                    break
            except UnsafeSegment as error:
                refused = refused or error
        if found is None:
            message = f"{refused}" if refused is not None else f"no resource at {uri}"
            raise MCPError(code=types.INVALID_PARAMS, message=message)
        content, mime = await self._in_thread(f"reading {uri}", found.read, uri)
        if isinstance(content, bytes):
            blob = base64.b64encode(content).decode("ascii")
            return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type=mime, blob=blob)])
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=content)])

    async def _list_prompts(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        listed = [
            types.Prompt(
                name=p.name,
                description=p.description,
                arguments=[types.PromptArgument(name=name, required=required) for name, required in p.arguments],
            )
            for p in self.prompts
        ]
        return types.ListPromptsResult(prompts=listed)

    async def _get_prompt(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp import MCPError

        found = next((p for p in self.prompts if p.name == params.name), None)
        if found is None:
            names = ", ".join(p.name for p in self.prompts)
            raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt named {params.name!r}; the prompts are: {names}")
        arguments = dict(params.arguments or {})
        messages = await self._in_thread(f"prompt {found.name!r}", found.messages, arguments, invalid=ValueError)
        return types.GetPromptResult(
            description=found.description,
            messages=[
                types.PromptMessage(role=role, content=types.TextContent(type="text", text=text))  # type: ignore[arg-type]
                for role, text in messages
            ],
        )

    async def _in_thread(self, what: str, function: Any, *args: Any, invalid: type[Exception] | None = None) -> Any:
        """``function(*args)`` on a worker thread within the time limit; a timeout or a failure is an
        ``MCPError`` naming ``what`` (an ``invalid`` error: the request's, its message as it is)."""
        import mcp_types as types
        from mcp import MCPError

        try:
            return await asyncio.wait_for(asyncio.to_thread(function, *args), self.timeout)
        except asyncio.TimeoutError:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"{what} took over {self.timeout:g} s") from None
        except Exception as exc:  # the function's failure: the client reads it
            if invalid is not None and isinstance(exc, invalid):
                raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
            raise MCPError(code=types.INTERNAL_ERROR, message=f"{what} failed: {type(exc).__name__}: {exc}") from None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"ToolServer({self.url!r}, {state}, tools={[t.name for t in self.tools]!r})"


class _OnLoop:
    """``approver``, asked on ``loop`` (the kernel's, where its buttons are) when that is running."""

    def __init__(self, approver: Approver, loop: asyncio.AbstractEventLoop | None):
        self.approver, self.loop = approver, loop

    async def approve(self, requests: Sequence[ApprovalRequest]) -> Any:
        if self.loop is not None and self.loop.is_running():
            pending = asyncio.run_coroutine_threadsafe(_ask(self.approver, requests), self.loop)
            return await asyncio.wrap_future(pending)
        return await self.approver.approve(requests)

    def __repr__(self) -> str:
        return repr(self.approver)


async def _ask(approver: Approver, requests: Sequence[ApprovalRequest]) -> Any:
    return await approver.approve(requests)


def _result(text: str, is_error: bool, structured: dict[str, Any] | None = None) -> Any:
    import mcp_types as types

    content = [types.TextContent(type="text", text=text)]
    return types.CallToolResult(content=content, is_error=is_error, structured_content=structured)


def _input_schema(tool: Tool) -> dict[str, Any]:
    """The tool's parameters, with its examples as their ``examples`` keyword (as in ``tools=``)."""
    return tool_json_schema(tool)["function"]["parameters"]
