"""A served value as MCP content: text, images, audio and embedded resources, for results and prompts.

`content_blocks` makes the blocks of what a served tool returns (or a prompt message holds):
images and audio found by the converter every tool shares (`meowgent_nb.tools.media`, bytes by
their first bytes), a `ResourceContent` embedded, one block per item of a list, and anything else
as the text the model would read. The rules a person reads are in docs/guides/mcp.md.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ...tools.media import media_type, medium

# media_type lives in tools.media; it is still importable from here.
__all__ = ["ResourceContent", "block", "content_blocks", "has_media", "media_type"]


@dataclass(frozen=True)
class ResourceContent:
    """A resource's content at ``uri``, to embed in a tool's result or a prompt (`Resource.embed`)."""

    uri: str
    content: str | bytes
    """Text, or bytes (sent base64-encoded as a blob)."""
    mime_type: str | None = None

    def contents(self) -> Any:
        """The MCP ``TextResourceContents`` / ``BlobResourceContents`` of it."""
        import base64

        import mcp_types as types

        if isinstance(self.content, (bytes, bytearray)):
            blob = base64.b64encode(bytes(self.content)).decode("ascii")
            return types.BlobResourceContents(uri=self.uri, mime_type=self.mime_type, blob=blob)
        return types.TextResourceContents(uri=self.uri, mime_type=self.mime_type, text=str(self.content))


def _media(value: Any) -> tuple[str, bytes] | ResourceContent | None:
    """(mime type, bytes) of an image or audio value (`tools.media.medium`), a `ResourceContent`, or None."""
    if isinstance(value, ResourceContent):
        return value
    found = medium(value)
    return (found.mime_type, found.data) if found is not None else None


def has_media(value: Any) -> bool:
    """Whether ``value`` (or an item of a list or tuple) is an image, audio or a resource."""
    if isinstance(value, (list, tuple)):
        return any(_media(item) is not None for item in value)
    return _media(value) is not None


def content_blocks(value: Any, text: str) -> list[Any]:
    """The MCP content blocks of ``value``; ``text`` (the model's text of it) where it holds no media."""
    import mcp_types as types

    if not has_media(value):
        return [types.TextContent(type="text", text=text)]
    items = value if isinstance(value, (list, tuple)) else [value]
    return [block(item) for item in items]


def block(item: Any) -> Any:
    """One content block for ``item`` (text for what is no media: a string as it is, else its JSON)."""
    import mcp_types as types

    media = _media(item)
    if isinstance(media, ResourceContent):
        return types.EmbeddedResource(type="resource", resource=media.contents())
    if media is not None:
        kind, data = media
        encoded = base64.b64encode(data).decode("ascii")
        if kind.startswith("audio/"):
            return types.AudioContent(type="audio", data=encoded, mime_type=kind)
        return types.ImageContent(type="image", data=encoded, mime_type=kind)
    if isinstance(item, str):
        return types.TextContent(type="text", text=item)
    from ...tools.output import output_text

    return types.TextContent(type="text", text=output_text(item, None))
