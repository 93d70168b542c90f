"""`ToolServer`'s answers about what a notebook publishes besides tools: resources, prompts,
completions of their arguments, and subscriptions to resources.

- ``resources/list``, ``resources/templates/list``, ``resources/read``: the `Resource` objects; a
  read runs the function on a worker thread within the server's time limit.
- ``prompts/list``, ``prompts/get``: the `Prompt` objects; a message's content is text, or an
  image, audio or an embedded resource (`content.block`).
- ``completion/complete``: a prompt's argument or a resource template's placeholder, from its
  ``complete=`` or its ``Literal`` / ``Enum`` type (`published.completions`); an unknown
  prompt, template or argument completes to nothing.
- ``resources/subscribe`` / ``unsubscribe``: a client subscribed to a URI gets
  ``notifications/resources/updated`` when `Published.changed` is called with it, and when the
  resource's content differs from the last time it was looked at: subscribed resources are read
  again every ``watch`` seconds while someone is subscribed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import Any

from .content import block
from .published import Prompt, Resource, UnsafeSegment, completions

__all__ = ["Published"]


class Published:
    """The resources and prompts of one `ToolServer`, and who subscribed to which resource.

    Args:
        resources: The `Resource` objects, fixed ones and templates.
        prompts: The `Prompt` objects.
        timeout: Seconds a resource read or a prompt may take.
        watch: Seconds between looks at a subscribed resource's content (None: only `changed`).
    """

    def __init__(self, resources: list[Resource], prompts: list[Prompt], timeout: float, watch: float | None = 1.0):
        self.resources, self.prompts, self.timeout, self.watch = resources, prompts, timeout, watch
        self._subscribers: dict[str, dict[Any, Any]] = {}  # uri -> {session key: session}
        self._seen: dict[str, str] = {}  # uri -> digest of its content when last looked at
        self._watcher: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def handlers(self) -> dict[str, Any]:
        """The SDK's ``on_...`` handlers for what is published."""
        handlers: dict[str, Any] = {}
        if self.resources:
            handlers.update(
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_templates,
                on_read_resource=self._read_resource,
                on_subscribe_resource=self._subscribe,
                on_unsubscribe_resource=self._unsubscribe,
            )
        if self.prompts:
            handlers.update(on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        if self.resources or self.prompts:
            handlers.update(on_completion=self._complete)
        return handlers

    # --- resources ----------------------------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        listed = [
            types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in self.resources
            if not r.template
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
        import mcp_types as types

        uri = str(params.uri)
        content, mime = await self._read(uri)
        from .content import ResourceContent

        return types.ReadResourceResult(contents=[ResourceContent(uri, content, mime).contents()])

    async def _read(self, uri: str) -> tuple[str | bytes, str]:
        import mcp_types as types
        from mcp import MCPError

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
        return await self._in_thread(f"reading {uri}", found.read, uri)

    # --- subscriptions ------------------------------------------------------------------------

    async def _subscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        await self._read(uri)  # a URI nothing publishes is refused as a read of it would be
        self._subscribers.setdefault(uri, {})[_session_key(ctx)] = ctx.session
        self._loop = asyncio.get_running_loop()
        if self.watch is not None and (self._watcher is None or self._watcher.done()):
            self._watcher = asyncio.ensure_future(self._watch())
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        sessions = self._subscribers.get(uri, {})
        sessions.pop(_session_key(ctx), None)
        if not sessions:
            self._subscribers.pop(uri, None)
            self._seen.pop(uri, None)
        return types.EmptyResult()

    def subscribed(self, uri: str) -> int:
        """How many clients are subscribed to ``uri``."""
        return len(self._subscribers.get(uri, {}))

    def changed(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` that it changed (from any thread)."""
        loop = self._loop
        if loop is not None and self._subscribers.get(uri):
            with contextlib.suppress(RuntimeError):  # the server stopped
                asyncio.run_coroutine_threadsafe(self._tell(uri), loop)

    async def _tell(self, uri: str) -> None:
        for key, session in list(self._subscribers.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # noqa: BLE001 - a client that went away is no longer subscribed
                self._subscribers.get(uri, {}).pop(key, None)

    async def _watch(self) -> None:
        while self._subscribers:
            for uri in list(self._subscribers):
                try:
                    content, _ = await self._read(uri)
                except Exception:  # noqa: BLE001 - a read that fails now tells nothing new
                    continue
                digest = hashlib.sha256(content if isinstance(content, bytes) else content.encode()).hexdigest()
                before = self._seen.get(uri)
                self._seen[uri] = digest
                if before is not None and before != digest:
                    await self._tell(uri)
            await asyncio.sleep(self.watch or 1.0)

    async def stop(self) -> None:
        """Stop looking at subscribed resources (on the server's loop)."""
        self._subscribers.clear()
        if self._watcher is not None:
            self._watcher.cancel()

    # --- prompts and completions --------------------------------------------------------------

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
            messages=[types.PromptMessage(role=role, content=block(content)) for role, content in messages],
        )

    async def _complete(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        ref, argument = params.ref, params.argument
        if getattr(ref, "type", None) == "ref/prompt":
            owner: Any = next((p for p in self.prompts if p.name == ref.name), None)
        else:
            owner = next((r for r in self.resources if r.template and r.uri == getattr(ref, "uri", None)), None)
        values, total = [], 0
        if owner is not None:  # a function of what is typed is the notebook's code: off the loop, in time
            what = f"completing {argument.name!r}"
            values, total = await self._in_thread(what, completions, owner.complete, argument.name, argument.value)
        return types.CompleteResult(completion=types.Completion(values=values, total=total, has_more=total > len(values)))

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


def _session_key(ctx: Any) -> Any:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else id(ctx.session)
