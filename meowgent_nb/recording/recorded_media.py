"""The images and audio a tool's value carried, in a cassette: one form for every tool, local or MCP.

A recorded call's value keeps its media as ``media`` entries (`_schema.MediaFields`): an image's
or audio clip's bytes (masked and written as base64 by the cassette's `Mask`), its type, and the
URI it came from. A notebook tool's value that holds media (a PIL image, an ``IPython.display.Image``,
a list mixing them with text; see `tools.media`) is recorded as the text the model read plus its
media, and replays as an `McpText` of both: the model reads the same text and the card shows the
same images. An MCP tool's codec (`mcp.content._recorded_values`) writes its media the same way.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from ..tools.media import McpAudio, McpImage, McpText, media_of

__all__ = ["media_fields", "media_value", "media_values", "replayed_media"]


def media_fields(media: Iterable[Any]) -> list[dict[str, Any]] | None:
    """``media`` as cassette ``media`` entries (bytes left as bytes for the mask), or None for an
    item that is no image or audio."""
    fields = []
    for item in media:
        if isinstance(item, McpImage):
            encoded = {"image": item.data, "mime_type": item.mime_type}
            fields.append({**encoded, "uri": item.uri} if item.uri else encoded)
        elif isinstance(item, McpAudio):
            fields.append({"audio": item.data, "mime_type": item.mime_type})
        else:
            return None
    return fields


def media_values(fields: Iterable[Any]) -> tuple[McpImage | McpAudio, ...]:
    """The media cassette ``media`` entries (`_schema.MediaFields`) describe.

    Raises:
        binascii.Error: An entry's bytes are not base64.
    """
    return tuple(
        McpImage(base64.b64decode(m.image, validate=True), m.mime_type, m.uri)
        if m.image is not None
        else McpAudio(base64.b64decode(m.audio or "", validate=True), m.mime_type)
        for m in fields
    )


def media_value(value: Any, text: str) -> dict[str, Any] | None:
    """A notebook tool's value that holds media as cassette value fields (``text``, ``media``); None
    for a value without media (or bytes, which are recorded as bytes)."""
    if isinstance(value, (bytes, bytearray)):
        return None
    media = media_of(value)
    fields = media_fields(media) if media else None
    return {"text": text, "media": fields} if fields else None


def replayed_media(fields: Any) -> McpText:
    """The value recorded by `media_value`: the text the model read, carrying its media."""
    return McpText(fields.text or "", media_values(fields.media))
