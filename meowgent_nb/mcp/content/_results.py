"""A server tool's result (``CallToolResult``) -> the value a tool call returns, and its text.

The model always reads the server's content blocks as text (`result_text`); the call's value is
the ``structuredContent`` where there is one (`result_value`: a `StructuredResult` dict, or the
value the SDK wrapped as ``{"result": value}``), with images, audio and links alongside.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ...tools.media import McpAudio, McpImage, McpLink, McpText

__all__ = [
    "StructuredList",
    "StructuredResult",
    "result_text",
    "result_value",
    "value_schema",
    "wraps_result",
]


class StructuredResult(dict):  # type: ignore[type-arg]
    """A tool's ``structuredContent``: a dict (use it as one), which reads to a model as ``text``.

    Attributes:
        text: What the server wrote for the model (its content blocks), or the JSON of the dict
            when it wrote nothing else.
    """

    text: str
    media: tuple[Any, ...] = ()
    links: tuple[McpLink, ...] = ()

    def __init__(self, value: Mapping[str, Any], text: str):
        super().__init__(value)
        self.text = text

    def _repr_llm_(self) -> str:
        return self.text


class StructuredList(list):  # type: ignore[type-arg]
    """A tool's structured result that is a list (the SDK's wrapped ``list[...]``), which reads to a
    model as ``text``; see `StructuredResult`."""

    text: str
    media: tuple[Any, ...] = ()
    links: tuple[McpLink, ...] = ()

    def __init__(self, value: list[Any], text: str):
        super().__init__(value)
        self.text = text

    def _repr_llm_(self) -> str:
        return self.text


def result_text(result: Any) -> str:
    """The text of a ``CallToolResult``: its content blocks, or its structured content as JSON."""
    parts = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {block.mime_type}]")
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            parts.append(text if text is not None else f"[resource: {block.resource.uri}]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.uri}]")
        else:
            parts.append(f"[{kind} content]")
    structured = _structured(result)
    if not parts and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)


def result_value(result: Any, wrapped: bool = False) -> Any:
    """What a call returns: the structured content where the server sent an object, else the text.

    With ``wrapped`` (see `wraps_result`) the wrapped value itself (a list as `StructuredList`).
    """
    text = result_text(result)
    media, links = _attachments(result)
    structured = _structured(result)
    if not isinstance(structured, Mapping):
        return McpText(text, media, links) if media or links else text
    made: StructuredResult | StructuredList
    if wrapped and set(structured) == {"result"}:
        value = structured["result"]
        if isinstance(value, Mapping):
            made = StructuredResult(value, text)
        elif isinstance(value, list):
            made = StructuredList(value, text)
        else:
            return value
    else:
        made = StructuredResult(structured, text)
    made.media, made.links = media, links
    return made


def _attachments(result: Any) -> tuple[tuple[Any, ...], tuple[McpLink, ...]]:
    """The images and audio (whose data is valid base64) and the resource links of a result."""
    media: list[Any] = []
    links: list[McpLink] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind in ("image", "audio"):
            try:
                data = base64.b64decode(block.data, validate=True)
            except (binascii.Error, ValueError, TypeError):
                continue  # the text still says "[image: ...]"; there is nothing to show
            media.append(
                McpImage(data, block.mime_type) if kind == "image" else McpAudio(data, block.mime_type)
            )
        elif kind == "resource_link":
            links.append(McpLink(str(getattr(block, "name", "") or ""), str(block.uri)))
    return tuple(media), tuple(links)


def wraps_result(schema: Mapping[str, Any] | None) -> bool:
    """Whether an output schema is the SDK's or FastMCP's ``{"result": ...}`` wrapper around a value
    that is not an object."""
    if not isinstance(schema, Mapping):
        return False
    if schema.get("x-fastmcp-wrap-result") is True:
        return True
    properties = schema.get("properties")
    return (
        isinstance(properties, Mapping)
        and set(properties) == {"result"}
        and schema.get("required") == ["result"]
        and str(schema.get("title", "")).endswith("Output")
    )


def value_schema(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The schema of the values a tool's calls return (the wrapped value's, for a wrapper), or None
    where the value is the text."""
    if not isinstance(schema, Mapping):
        return None
    if wraps_result(schema):
        inner = schema["properties"]["result"]
        if not isinstance(inner, Mapping) or {k: v for k, v in inner.items() if k != "title"} == {
            "type": "string"
        }:
            return None
        return dict(inner)
    return dict(schema)


def _structured(result: Any) -> Any:
    value = getattr(result, "structured_content", None)
    return value if value is not None else getattr(result, "structuredContent", None)
