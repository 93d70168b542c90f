"""The images, audio and links a tool's value carried, in the call's card (`media_html`).

A server is not trusted: an image is drawn only when `tools.media.shown_image` finds it fit
(never SVG, which can carry scripts), audio only of common types, each within `MEDIA_MAX_BYTES`
and each output within its `MediaBudget`; only ``http``/``https`` links are clickable. What is
left out is named in a muted line; text/plain never changes.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any
from urllib.parse import urlsplit

from ..._html import note_html
from ..._visible import visible, visible_html
from ...tools.media import McpAudio, McpImage, McpLink, MediaBudget, NotShown, media_of, shown_image

__all__ = ["MEDIA_MAX_BYTES", "media_html"]

MEDIA_MAX_BYTES = 2_000_000
"""The largest image or audio clip a card shows (a notebook keeps every output it shows)."""
_AUDIO = frozenset(
    {"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/flac", "audio/mp4"}
)
_AUDIO_TYPES = "only WAV, MP3, Ogg, WebM, FLAC and MP4 audio is played"
_IMG = (
    '<img class="meowgent-media" alt="an image from the tool"'
    ' style="max-width: 100%; max-height: 24em; display: block; margin: 0.3em 0" src="{}">'
)
_PLAYER = '<audio class="meowgent-media" controls src="{}"></audio>'


def media_html(value: Any, budget: MediaBudget | None = None) -> str:
    """HTML for the media (`media_of`) and ``links`` (see `McpText`) of ``value``; "" if none.

    Args:
        value: A tool's value.
        budget: What the output this card is part of may still show (spent here); a budget of
            its own if None.
    """
    budget = MediaBudget() if budget is None else budget
    parts = []
    for item in media_of(value):
        if isinstance(item, McpImage):
            parts.append(_image(item, budget))
        elif isinstance(item, McpAudio):
            parts.append(_audio(item, budget))
    parts.extend(_skipped(note) for note in budget.notes())
    links = [link for link in getattr(value, "links", None) or () if isinstance(link, McpLink)]
    parts.extend(_link(link) for link in links)
    return "".join(parts)


def _image(item: McpImage, budget: MediaBudget) -> str:
    shown = shown_image(item.data, str(item.mime_type))
    if isinstance(shown, NotShown):
        return _skipped(shown)
    if len(shown.data) > MEDIA_MAX_BYTES:
        return _skipped(_too_big(shown.mime_type, len(shown.data)))
    if not budget.take("image", len(shown.data), shown.width * shown.height):
        return ""  # counted: the card's last media line says how many were left out
    return _IMG.format(escape(_data_url(shown.mime_type, shown.data)))


def _audio(item: McpAudio, budget: MediaBudget) -> str:
    mime, data = str(item.mime_type), item.data
    if mime not in _AUDIO or not isinstance(data, bytes):
        return _skipped(NotShown(f"{visible(mime)} not played: {_AUDIO_TYPES}"))
    if len(data) > MEDIA_MAX_BYTES:
        return _skipped(_too_big(mime, len(data)))
    if not budget.take("audio clip", len(data)):
        return ""
    return _PLAYER.format(escape(_data_url(mime, data)))


def _too_big(mime: str, size: int) -> NotShown:
    most = f"a card shows images and audio of at most {MEDIA_MAX_BYTES:,} bytes"
    return NotShown(f"{mime} of {size:,} bytes not shown: {most}")


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _skipped(note: NotShown) -> str:
    return note_html("meowgent-media-skipped", note.text)


def _link(link: Any) -> str:
    name = link.name or link.uri
    if urlsplit(link.uri).scheme.lower() in ("http", "https"):
        shown = (
            f'<a href="{escape(link.uri)}" target="_blank" rel="noopener noreferrer">{visible_html(name)}</a>'
        )
    else:
        shown = f"{visible_html(name)} <code>{visible_html(link.uri)}</code>"
    return f'<div class="meowgent-link" style="font-size: 0.85em">link: {shown}</div>'
