"""`ServerResources`: the part of `McpToolbox` that reads resources, templates, prompts and
completions, and makes the ``read_resource`` tool.

Each method is one request (or one listing, all pages) on the box's connection within its call
timeout; the box's methods of the same names delegate here, and `resources` shapes the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import SettingsError
from ._session import McpToolError
from .resources import (
    ATTACH_MAX_CHARS,
    argument_list,
    claims,
    context_text,
    fill_template,
    prompt_messages,
    resource_value,
)
from .tool import McpTool

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["READ_TOOL", "ServerResources"]

READ_TOOL = "read_resource"
"""The name (after the box's prefix) of the tool that lets the model read the server's resources."""


class ServerResources:
    """Resources, prompts and completions of an `McpToolbox`'s server.

    Args:
        connection: The box's connection.
    """

    def __init__(self, connection: Connection):
        self.connection = connection

    # --- resources ------------------------------------------------------------------------------

    def resources(self) -> list[Any]:
        """The server's resources (see `McpToolbox.resources`)."""
        return self._listing("resources", "list_resources", "resources")

    def resource_templates(self) -> list[Any]:
        """The server's resource templates (see `McpToolbox.resource_templates`)."""
        return self._listing("resources", "list_resource_templates", "resource_templates")

    def read(self, uri: str, /, **values: str) -> Any:
        """A resource's content, as a Python value (see `McpToolbox.read`)."""
        values_ = [resource_value(content) for content in self.contents(uri, **values)]
        return values_[0] if len(values_) == 1 else values_

    def owns(self, uri: str) -> bool:
        """Whether ``uri`` is this server's (see `McpToolbox.owns`)."""
        if uri in self.connection.linked:
            return True
        return claims(uri, self.resources(), self.resource_templates())

    def contents(self, uri: str, /, **values: str) -> list[Any]:
        """A read's contents as the SDK gives them (see `McpToolbox.contents`)."""
        if values:
            uri = fill_template(uri, {k: str(v) for k, v in values.items()})
        result = self._request(f"the read of {uri}", lambda: self.connection.client.read_resource(uri))
        return list(result.contents)

    def read_for_model(self, uri: str) -> str:
        """The ``read_resource`` tool: a resource of this server as text (a refusal says which URIs)."""
        if not self.owns(uri):
            listed = ", ".join(str(r.uri) for r in self.resources()[:20]) or "none is listed"
            raise McpToolError(
                f"{uri} is not a resource of the MCP server {self.connection.name!r}; its resources: {listed}"
            )
        return "\n".join(context_text(content, ATTACH_MAX_CHARS) for content in self.contents(uri))

    def reader(self, name: str, approval: bool, timeout: float | None) -> McpTool:
        """The box's ``read_resource`` tool, called ``name`` (see `read_for_model`)."""
        description = (
            f"Read a resource of the MCP server {self.connection.name!r} by its URI, for example a resource link"
            " in a result of one of its tools."
        )
        schema = {
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource's URI."}},
            "required": ["uri"],
        }
        made = McpTool.from_schema(
            name, description, schema, self.read_for_model, approval=approval, timeout=timeout
        )
        made.remote_name = None  # not a server tool: no tools/call
        return made

    # --- prompts --------------------------------------------------------------------------------

    def prompts(self) -> list[Any]:
        """The server's prompts (see `McpToolbox.prompts`)."""
        return self._listing("prompts", "list_prompts", "prompts")

    def prompt(self, name: str, /, **arguments: Any) -> list[dict[str, str]]:
        """A prompt's messages, as chat messages (see `McpToolbox.prompt`)."""
        listed = {p.name: p for p in self.prompts()}
        if name not in listed:
            raise ValueError(
                f"the MCP server {self.connection.name!r} has no prompt {name!r}; its prompts: {', '.join(listed) or 'none'}"
            )
        specs = list(listed[name].arguments or [])
        known = {a.name for a in specs}
        missing = [a.name for a in specs if a.required and a.name not in arguments]
        unknown = [key for key in arguments if key not in known]
        if missing or unknown:
            problem = f"needs {', '.join(missing)}" if missing else f"has no argument {', '.join(unknown)}"
            raise ValueError(
                f"the prompt {self.connection.name}/{name} {problem}; its arguments: {argument_list(specs)}"
            )
        texts = {key: _text(key, value) for key, value in arguments.items()}
        result = self._request(
            f"the prompt {name}", lambda: self.connection.client.get_prompt(name, texts or None)
        )
        return prompt_messages(result)

    def complete(
        self,
        argument: str,
        value: str = "",
        *,
        prompt: str | None = None,
        template: str | None = None,
        context: Mapping[str, str] | None = None,
    ) -> list[str]:
        """The server's completions of an argument (see `McpToolbox.complete`)."""
        from mcp.types import PromptReference, ResourceTemplateReference

        if (prompt is None) == (template is None):
            raise SettingsError("complete: give prompt=NAME or template=URI_TEMPLATE (one of them)")
        if not self.connection.session.offers("completions"):
            return []
        ref: Any = (
            PromptReference(type="ref/prompt", name=prompt)
            if prompt is not None
            else ResourceTemplateReference(type="ref/resource", uri=str(template))
        )
        result = self._request(
            f"the completion of {argument}",
            lambda: self.connection.client.complete(
                ref, {"name": argument, "value": value}, dict(context) if context else None
            ),
        )
        return [str(v) for v in result.completion.values]

    # --- the session ----------------------------------------------------------------------------

    def _listing(self, capability: str, method: str, field: str) -> list[Any]:
        session, limit = self.connection.session, self.connection.call_timeout
        if not session.offers(capability):
            return []
        return self.connection.run(session.listing(method, field, limit), limit * 2 + 5.0)

    def _request(self, what: str, send: Any) -> Any:
        session, limit = self.connection.session, self.connection.call_timeout
        return self.connection.run(session.request(what, send, limit), limit + 5.0)


def _text(key: str, value: Any) -> str:
    if isinstance(value, (str, int, float, bool)):
        return str(value)
    raise ValueError(f"the prompt argument {key} must be text, got {type(value).__name__}")
