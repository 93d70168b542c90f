"""MCP values in a cassette: a text with images, audio or links, and a structured result.

A recorded MCP tool's calls store their value in the cassette (see `recording.tool_tape`);
`MCP_VALUES` is the ``value_codec`` of such a tool: it writes what only this wing knows
(`McpText`, `StructuredResult`, `StructuredList` and their media) as the cassette's ``text``,
``structured``, ``media`` and ``links`` fields, and reads them back as the same types. The media
are written as every tool's are (`recording.recorded_media`).
"""

from __future__ import annotations

from typing import Any

from ...recording.recorded_media import media_fields, media_values
from ...tools.media import McpLink, McpText
from ._results import StructuredList, StructuredResult

__all__ = ["MCP_VALUES"]


class _McpValues:
    def encode(self, value: Any) -> dict[str, Any] | None:
        """``value`` as cassette value fields, or None for a value that is not an MCP one."""
        if not isinstance(value, (McpText, StructuredResult, StructuredList)):
            return None
        extra: dict[str, Any] = {}
        if value.media:
            media = media_fields(value.media)
            if media is None:
                return None
            extra["media"] = media
        if value.links:
            extra["links"] = [{"name": link.name, "uri": link.uri} for link in value.links]
        if isinstance(value, McpText):
            return {"text": str(value), **extra}
        plain = dict(value) if isinstance(value, StructuredResult) else list(value)
        return {"structured": plain, "text": value.text, **extra}

    def decode(self, fields: Any) -> Any:
        """The value cassette value fields (`_schema.ValueFields`) describe."""
        media = media_values(fields.media)
        links = tuple(McpLink(link.name, link.uri) for link in fields.links)
        if fields.structured is None:
            return McpText(fields.text or "", media, links)
        made: Any = (
            StructuredResult(fields.structured, fields.text or "")
            if isinstance(fields.structured, dict)
            else StructuredList(fields.structured, fields.text or "")
        )
        made.media, made.links = media, links
        return made


MCP_VALUES = _McpValues()
"""The ``value_codec`` of recorded MCP tools."""
