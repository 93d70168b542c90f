"""An MCP toolbox's context besides tools: resources, templates, prompts, completions, instructions.

`ServerContext` is the part of `McpToolbox` that reads them; each method is one request (or one
listing, all pages) on the box's session, with the box's call timeout. The values they return
are described in `context`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...errors import SettingsError
from .._thread import BackgroundLoop
from ._session import McpServerError, McpToolError, _Connection
from .context import (
    ATTACH_MAX_CHARS,
    argument_list,
    claims,
    context_text,
    fill_template,
    instructions_block,
    prompt_messages,
    resource_value,
)
from .tool import McpTool

__all__ = ["READ_TOOL", "ServerContext"]

READ_TOOL = "read_resource"
"""The name (after the box's prefix) of the tool that lets the model read the server's resources."""


class ServerContext:
    """Resources, prompts, completions and instructions of an `McpToolbox`'s server."""

    name: str
    call_timeout: float
    use_instructions: bool
    instructions: str | None
    _connection: _Connection
    _loop: BackgroundLoop
    _redact: Callable[[str], str]

    # --- resources ------------------------------------------------------------------------------

    def resources(self) -> list[Any]:
        """The server's resources: the SDK's ``Resource`` (``uri``, ``name``, ``title``,
        ``mime_type``, ``description``); [] when the server has none."""
        return self._listing("resources", "list_resources", "resources")

    def resource_templates(self) -> list[Any]:
        """The server's resource templates: the SDK's ``ResourceTemplate`` (``uri_template``,
        ``name``, ...); fill one with ``read(template, name=value)``."""
        return self._listing("resources", "list_resource_templates", "resource_templates")

    def read(self, uri: str, /, **values: str) -> Any:
        """A resource's content, as a Python value.

        Text is a ``str``, a JSON type a parsed object, a blob ``bytes``, an image an `McpImage`
        (the notebook shows it). A read with several contents gives a list of them.

        Args:
            uri: The resource's URI, or a resource template (``notes://{name}``) to fill.
            values: The template's values, e.g. ``name="groceries"``.

        Raises:
            ValueError: The values do not fit the template.
            McpServerError: The server refused the read (an unknown URI) or could not be reached.
        """
        values_ = [resource_value(content) for content in self.contents(uri, **values)]
        return values_[0] if len(values_) == 1 else values_

    def owns(self, uri: str) -> bool:
        """Whether ``uri`` is this server's: listed, filling one of its templates, or linked to by
        one of its tools' results."""
        if uri in self._connection.linked:
            return True
        return claims(uri, self.resources(), self.resource_templates())

    def contents(self, uri: str, /, **values: str) -> list[Any]:
        """A read's contents as the SDK gives them (``TextResourceContents`` with ``text``,
        ``BlobResourceContents`` with base64 ``blob``; each with ``uri`` and ``mime_type``);
        arguments and errors as for `read`."""
        if values:
            uri = fill_template(uri, {k: str(v) for k, v in values.items()})
        result = self._request(f"the read of {uri}", lambda: self._connection.client.read_resource(uri))
        return list(result.contents)

    def _read_for_model(self, uri: str) -> str:
        """The ``read_resource`` tool: a resource of this server as text (a refusal says which URIs)."""
        if not self.owns(uri):
            listed = ", ".join(str(r.uri) for r in self.resources()[:20]) or "none is listed"
            raise McpToolError(
                f"{uri} is not a resource of the MCP server {self.name!r}; its resources: {listed}"
            )
        return "\n".join(context_text(content, ATTACH_MAX_CHARS) for content in self.contents(uri))

    def _reader(self, name: str, approval: bool, timeout: float | None) -> McpTool:
        description = (
            f"Read a resource of the MCP server {self.name!r} by its URI, for example a resource link"
            " in a result of one of its tools."
        )
        schema = {
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource's URI."}},
            "required": ["uri"],
        }
        made = McpTool.from_schema(
            name, description, schema, self._read_for_model, approval=approval, timeout=timeout
        )
        made.remote_name = None  # not a server tool: no tools/call
        return made

    # --- prompts --------------------------------------------------------------------------------

    def prompts(self) -> list[Any]:
        """The server's prompts: the SDK's ``Prompt`` (``name``, ``title``, ``description``,
        ``arguments``: each with ``name``, ``description``, ``required``)."""
        return self._listing("prompts", "list_prompts", "prompts")

    def prompt(self, name: str, /, **arguments: Any) -> list[dict[str, str]]:
        """A prompt's messages, as chat messages (``{"role": "user", "content": "..."}``).

        Their text is escaped like tool results (see `context.prompt_messages`).

        Raises:
            ValueError: No such prompt, or a required argument is missing or an unknown one given
                (the message lists the prompt's arguments).
            McpServerError: The server refused or could not be reached.
        """
        listed = {p.name: p for p in self.prompts()}
        if name not in listed:
            raise ValueError(
                f"the MCP server {self.name!r} has no prompt {name!r}; its prompts: {', '.join(listed) or 'none'}"
            )
        specs = list(listed[name].arguments or [])
        known = {a.name for a in specs}
        missing = [a.name for a in specs if a.required and a.name not in arguments]
        unknown = [key for key in arguments if key not in known]
        if missing or unknown:
            problem = f"needs {', '.join(missing)}" if missing else f"has no argument {', '.join(unknown)}"
            raise ValueError(
                f"the prompt {self.name}/{name} {problem}; its arguments: {argument_list(specs)}"
            )
        texts = {key: _text(key, value) for key, value in arguments.items()}
        result = self._request(
            f"the prompt {name}", lambda: self._connection.client.get_prompt(name, texts or None)
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
        """The server's completions of an argument of a prompt or a resource template.

        Example: ``box.complete("name", "gr", prompt="summarize")`` -> ``["groceries"]``.

        Args:
            argument: The argument's name.
            value: What is typed so far.
            prompt: The prompt's name; give this or ``template``.
            template: The resource template (``notes://note/{name}``).
            context: Arguments already chosen, for servers that complete one from the others.

        Returns:
            The suggested values; [] when the server offers no completions.
        """
        from mcp.types import PromptReference, ResourceTemplateReference

        if (prompt is None) == (template is None):
            raise SettingsError("complete: give prompt=NAME or template=URI_TEMPLATE (one of them)")
        if not self._connection.offers("completions"):
            return []
        ref: Any = (
            PromptReference(type="ref/prompt", name=prompt)
            if prompt is not None
            else ResourceTemplateReference(type="ref/resource", uri=str(template))
        )
        result = self._request(
            f"the completion of {argument}",
            lambda: self._connection.client.complete(
                ref, {"name": argument, "value": value}, dict(context) if context else None
            ),
        )
        return [str(v) for v in result.completion.values]

    # --- instructions ---------------------------------------------------------------------------

    def instructions_block(self) -> str:
        """The server's instructions as a delimited, escaped block for a system prompt ("" if none).

        ``%%agent`` adds it when the box was made with ``use_instructions=True``; in Python, put
        it in `Agent`'s ``system=`` yourself.
        """
        return instructions_block(self.name, self.instructions) if self.instructions else ""

    # --- the session ----------------------------------------------------------------------------

    def _listing(self, capability: str, method: str, field: str) -> list[Any]:
        if not self._connection.offers(capability):
            return []
        limit = self.call_timeout
        return self._run(self._connection.listing(method, field, limit), limit * 2 + 5.0)

    def _request(self, what: str, send: Any) -> Any:
        limit = self.call_timeout
        return self._run(self._connection.request(what, send, limit), limit + 5.0)

    def _run(self, request: Any, timeout: float) -> Any:
        try:
            return self._loop.run(request, timeout=timeout)
        except McpServerError as error:  # a server may quote its token back, as in a tool call
            raise McpServerError(self._redact(str(error))) from None


def _text(key: str, value: Any) -> str:
    if isinstance(value, (str, int, float, bool)):
        return str(value)
    raise ValueError(f"the prompt argument {key} must be text, got {type(value).__name__}")
