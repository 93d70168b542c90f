"""What MCP servers give besides tools, as notebook values and as text a model reads.

`resource_value` makes a read a Python value; `context_block`, `instructions_block` and
`prompt_messages` make text for a model, escaped by `inert` like tool results so a server's text
can never open or close a block of the prompt's structure.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ...protocols.prompt import context_block as shared_context_block
from ...protocols.prompt import inert, inert_attribute
from ...tools.media import McpImage
from ._session import _field

__all__ = [
    "argument_list",
    "claims",
    "context_block",
    "context_text",
    "fill_template",
    "instructions_block",
    "prompt_messages",
    "resource_value",
]

ATTACH_MAX_CHARS = 20_000
"""Characters of one resource a model reads by default; the rest is cut, with a note."""
INSTRUCTIONS_MAX_CHARS = 4_000
"""Characters of a server's instructions put in the system prompt; the rest is cut, with a note."""


def resource_value(content: Any) -> Any:
    """One content of a resource read as a Python value: ``str``, parsed JSON (for a JSON type
    that parses), ``bytes``, or an `McpImage` for an ``image/*`` blob."""
    mime = _field(content, "mime_type", "mimeType") or ""
    text = getattr(content, "text", None)
    if text is not None:
        if _is_json(mime):
            try:
                return json.loads(text)
            except ValueError:
                return text
        return text
    data = _blob(content)
    if mime.startswith("image/"):
        return McpImage(data, mime, str(getattr(content, "uri", "") or ""))
    return data


def context_text(content: Any, max_chars: int = ATTACH_MAX_CHARS) -> str:
    """What a model reads of one content of a resource read: its text cut to ``max_chars``, or a
    blob named (``[image/png, 68 bytes: not text]``)."""
    text = getattr(content, "text", None)
    if text is None:
        mime = _field(content, "mime_type", "mimeType") or "binary data"
        return f"[{mime}, {len(_blob(content)):,} bytes: not text]"
    return _cut(text, max_chars, "the resource")


def context_block(source: str, text: str) -> str:
    """``text`` as a ``<context source="...">`` block; neither can end the block or forge another."""
    return shared_context_block("source", source, text)


def instructions_block(server: str, text: str, max_chars: int = INSTRUCTIONS_MAX_CHARS) -> str:
    """A server's instructions as a ``<server_instructions server="...">`` block for the system prompt."""
    body = inert(_cut(text.strip(), max_chars, "the instructions"))
    return f'<server_instructions server="{inert_attribute(server)}">\n{body}\n</server_instructions>'


def prompt_messages(result: Any, max_chars: int = ATTACH_MAX_CHARS) -> list[dict[str, str]]:
    """A ``GetPromptResult``'s messages as escaped chat messages; an embedded resource becomes a
    `context_block`, other media are named in brackets as in tool results."""
    messages = []
    for message in result.messages:
        block = message.content
        kind = getattr(block, "type", "")
        if kind == "text":
            text = inert(block.text)
        elif kind == "resource":
            source = str(getattr(block.resource, "uri", "") or "")
            text = context_block(source, context_text(block.resource, max_chars))
        elif kind == "resource_link":
            text = f"[resource link: {inert(str(block.uri))}]"
        elif kind in ("image", "audio"):
            text = f"[{kind}: {inert(str(block.mime_type))}]"
        else:
            text = f"[{inert(str(kind))} content]"
        messages.append({"role": str(message.role), "content": text})
    return messages


def argument_list(specs: list[Any]) -> str:
    """A prompt's arguments in one line: ``name (required), style``."""
    return ", ".join(f"{a.name} (required)" if a.required else a.name for a in specs) or "none"


def claims(uri: str, resources: Iterable[Any], templates: Iterable[Any]) -> bool:
    """Whether a server's listing has ``uri``: a listed resource, or a template it fills."""
    from mcp.shared.uri_template import UriTemplate

    if any(str(resource.uri) == uri for resource in resources):
        return True
    for template in templates:
        try:
            if UriTemplate.parse(template.uri_template).match(uri) is not None:
                return True
        except ValueError:  # a template the SDK cannot read fills nothing
            continue
    return False


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """The URI a resource template makes with these values (RFC 6570, as the SDK reads it).

    Raises:
        ValueError: The template is not valid, or a value it needs is missing.
    """
    from mcp.shared.uri_template import UriTemplate

    parsed = UriTemplate.parse(template)
    missing = [name for name in parsed.variable_names if name not in values]
    if missing:
        raise ValueError(f"the template {template} needs {', '.join(missing)}")
    unknown = [name for name in values if name not in parsed.variable_names]
    if unknown:
        raise ValueError(
            f"the template {template} has no {', '.join(unknown)};"
            f" it takes {', '.join(parsed.variable_names) or 'nothing'}"
        )
    return parsed.expand(dict(values))


def _is_json(mime: str) -> bool:
    base = mime.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


def _blob(content: Any) -> bytes:
    try:
        return base64.b64decode(getattr(content, "blob", "") or "", validate=False)
    except (binascii.Error, ValueError):
        return b""


def _cut(text: str, max_chars: int, what: str) -> str:
    if len(text) <= max_chars:
        return text
    return (
        f"{text[:max_chars]}\n[cut: {what} has {len(text):,} characters; the first {max_chars:,} are shown]"
    )
