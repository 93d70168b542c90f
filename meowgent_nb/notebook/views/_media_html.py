"""The images, audio and links a tool's value carried, in the call's card.

The media are what `tools.media.media_of` finds (an MCP server's result's, or a notebook tool's
own PIL image, ``IPython.display.Image``, image bytes, or a list holding them); links come from
an MCP result.

A server is not trusted: only raster images and common audio types are shown, from data that
decoded as base64, up to `MEDIA_MAX_BYTES` each; SVG is not drawn (it can carry scripts);
only ``http`` / ``https`` links are clickable, and they open in a new tab. Everything else is
named in a muted line. text/plain never changes: the output already says ``[image: image/png]``.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any
from urllib.parse import urlsplit

from ..._html import note_html
from ..._visible import visible, visible_html
from ...tools.media import McpAudio, McpImage, McpLink, media_of

__all__ = ["MEDIA_MAX_BYTES", "media_html"]

MEDIA_MAX_BYTES = 2_000_000
"""The largest image or audio clip a card shows (a notebook keeps every output it shows)."""
_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_AUDIO = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/flac", "audio/mp4"})


def media_html(value: Any) -> str:
    """HTML for the media (`media_of`) and ``links`` (see `McpText`) of ``value``; "" if none."""
    parts = []
    for item in media_of(value):
        if isinstance(item, McpImage):
            parts.append(_shown(item, "image", _IMAGES, '<img class="meowgent-media" alt="an image from the tool"'
                                ' style="max-width: 100%; max-height: 24em; display: block; margin: 0.3em 0" src="{}">'))
        elif isinstance(item, McpAudio):
            parts.append(_shown(item, "audio clip", _AUDIO, '<audio class="meowgent-media" controls src="{}"></audio>'))
    links = [link for link in getattr(value, "links", None) or () if isinstance(link, McpLink)]
    parts.extend(_link(link) for link in links)
    return "".join(parts)


def _shown(item: Any, what: str, allowed: frozenset[str], tag: str) -> str:
    mime = str(item.mime_type)
    if mime not in allowed:
        why = "SVG can carry scripts" if mime == "image/svg+xml" else "not a type the card shows"
        return note_html("meowgent-media-skipped", f"an {what} of type {visible(mime)}, not shown ({why})")
    if len(item.data) > MEDIA_MAX_BYTES:
        return note_html(
            "meowgent-media-skipped", f"an {what} of {len(item.data):,} bytes, not shown (over {MEDIA_MAX_BYTES:,})"
        )
    source = f"data:{mime};base64,{base64.b64encode(item.data).decode('ascii')}"
    return tag.format(escape(source))


def _link(link: Any) -> str:
    name = link.name or link.uri
    if urlsplit(link.uri).scheme.lower() in ("http", "https"):
        shown = (
            f'<a href="{escape(link.uri)}" target="_blank" rel="noopener noreferrer">{visible_html(name)}</a>'
        )
    else:
        shown = f"{visible_html(name)} <code>{visible_html(link.uri)}</code>"
    return f'<div class="meowgent-link" style="font-size: 0.85em">link: {shown}</div>'
