"""`Published`: `ToolServer`'s answers about resources, prompts and completions of their arguments.

Reads and prompts run their function on a worker thread within the server's time limit; an
unknown prompt, template or argument completes to nothing. Who hears of changes is `served_events`'.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..content.served import block
from .published import Prompt, Resource, UnsafeSegment, completions

__all__ = ["Published"]


class Published:
    """The resources and prompts of one `ToolServer`.

    Args:
        resources: The `Resource` objects, fixed ones and templates.
        prompts: The `Prompt` objects.
        timeout: Seconds a resource read or a prompt may take.
    """

    def __init__(self, resources: list[Resource], prompts: list[Prompt], timeout: float):
        self.resources, self.prompts, self.timeout = resources, prompts, timeout

    def handlers(self) -> dict[str, Any]:
        """The SDK's ``on_...`` handlers for what is published."""
        handlers: dict[str, Any] = {}
        if self.resources:
            handlers.update(
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_templates,
                on_read_resource=self._read_resource,
            )
        if self.prompts:
            handlers.update(on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        if self.resources or self.prompts:
            handlers.update(on_completion=self._complete)
        return handlers

    def update(
        self, resources: list[Resource] | None = None, prompts: list[Prompt] | None = None
    ) -> tuple[bool, bool]:
        """Publish these resources and prompts from now on (None: keep those published).

        Returns:
            Whether what ``resources/list`` (with templates) answers changed, and whether what
            ``prompts/list`` answers did.
        """
        before = _dumped(self._resources() + self._templates()), _dumped(self._prompts())
        if resources is not None:
            self.resources = list(resources)
        if prompts is not None:
            self.prompts = list(prompts)
        return before[0] != _dumped(self._resources() + self._templates()), before[1] != _dumped(
            self._prompts()
        )

    def publishes(self, uri: str) -> bool:
        """Whether a published resource (or template, with plain values) has ``uri``."""
        for each in self.resources:
            try:
                if each.match(uri) is not None:
                    return True
            except UnsafeSegment:
                continue
        return False

    # --- resources ----------------------------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListResourcesResult(resources=self._resources())

    async def _list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListResourceTemplatesResult(resource_templates=self._templates())

    def _resources(self) -> list[Any]:
        import mcp_types as types

        return [
            types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in self.resources
            if not r.template
        ]

    def _templates(self) -> list[Any]:
        import mcp_types as types

        return [
            types.ResourceTemplate(
                uri_template=r.uri, name=r.name, description=r.description, mime_type=r.mime_type
            )
            for r in self.resources
            if r.template
        ]

    async def _read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        content, mime = await self.read(uri)
        from ..content.served import ResourceContent

        return types.ReadResourceResult(contents=[ResourceContent(uri, content, mime).contents()])

    async def read(self, uri: str) -> tuple[str | bytes, str]:
        """The content at ``uri`` and its MIME type, read on a worker thread within the time limit.

        Raises:
            MCPError: Nothing publishes ``uri`` (or a value in it is not one plain segment), or the
                read failed or took too long.
        """
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

    # --- prompts and completions --------------------------------------------------------------

    async def _list_prompts(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListPromptsResult(prompts=self._prompts())

    def _prompts(self) -> list[Any]:
        import mcp_types as types

        return [
            types.Prompt(
                name=p.name,
                description=p.description,
                arguments=[
                    types.PromptArgument(name=name, required=required) for name, required in p.arguments
                ],
            )
            for p in self.prompts
        ]

    async def _get_prompt(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp import MCPError

        found = next((p for p in self.prompts if p.name == params.name), None)
        if found is None:
            names = ", ".join(p.name for p in self.prompts)
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"no prompt named {params.name!r}; the prompts are: {names}",
            )
        arguments = dict(params.arguments or {})
        messages = await self._in_thread(
            f"prompt {found.name!r}", found.messages, arguments, invalid=ValueError
        )
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
            owner = next(
                (r for r in self.resources if r.template and r.uri == getattr(ref, "uri", None)), None
            )
        values, total = [], 0
        if owner is not None:  # a function of what is typed is the notebook's code: off the loop, in time
            what = f"completing {argument.name!r}"
            values, total = await self._in_thread(
                what, completions, owner.complete, argument.name, argument.value
            )
        return types.CompleteResult(
            completion=types.Completion(values=values, total=total, has_more=total > len(values))
        )

    async def _in_thread(
        self, what: str, function: Any, *args: Any, invalid: type[Exception] | None = None
    ) -> Any:
        """``function(*args)`` on a worker thread within the time limit.

        Raises:
            MCPError: A timeout or a failure, naming ``what``.
        """
        import mcp_types as types
        from mcp import MCPError

        try:
            return await asyncio.wait_for(asyncio.to_thread(function, *args), self.timeout)
        except asyncio.TimeoutError:
            raise MCPError(
                code=types.INTERNAL_ERROR, message=f"{what} took over {self.timeout:g} s"
            ) from None
        except Exception as exc:  # the function's failure: the client reads it
            if invalid is not None and isinstance(exc, invalid):
                raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
            raise MCPError(
                code=types.INTERNAL_ERROR, message=f"{what} failed: {type(exc).__name__}: {exc}"
            ) from None


def _dumped(listed: list[Any]) -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json", by_alias=True, exclude_none=True) for entry in listed]
