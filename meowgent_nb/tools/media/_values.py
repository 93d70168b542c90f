"""Images, audio and links a tool or a server gives (in tool results, resources, prompts), as values.

Each shows itself in the notebook (`_repr_mimebundle_`); a tool's card shows them too (see
`meowgent_nb.notebook.views._media_html`). The model reads only their one-line descriptions.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

__all__ = ["McpAudio", "McpImage", "McpLink", "McpText"]


class McpImage:
    """An image a server gave (a resource or prompt content); the notebook shows it.

    Attributes:
        data: The image's bytes.
        mime_type: Its type, e.g. ``image/png``.
        uri: Where it came from ("" when the server did not say).
    """

    def __init__(self, data: bytes, mime_type: str, uri: str = ""):
        self.data, self.mime_type, self.uri = data, mime_type, uri

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # As IPython's own Image: binary data base64-encoded (the Jupyter wire's form), SVG as text.
        if self.mime_type == "image/svg+xml":
            shown = self.data.decode("utf-8", "replace")
        else:
            shown = base64.b64encode(self.data).decode("ascii")
        return {self.mime_type: shown, "text/plain": repr(self)}

    def _repr_png_(self) -> bytes | None:
        return self.data if self.mime_type == "image/png" else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, McpImage) and (other.data, other.mime_type) == (self.data, self.mime_type)

    def __repr__(self) -> str:
        source = f" from {self.uri}" if self.uri else ""
        return f"<McpImage {self.mime_type}, {len(self.data):,} bytes{source}>"


class McpAudio:
    """Audio a server gave (a tool result's ``audio`` content); the notebook shows a player.

    Attributes:
        data: The audio's bytes.
        mime_type: Its type, e.g. ``audio/wav``.
    """

    def __init__(self, data: bytes, mime_type: str):
        self.data, self.mime_type = data, mime_type

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from html import escape

        encoded = base64.b64encode(self.data).decode("ascii")
        player = f'<audio controls src="data:{escape(self.mime_type)};base64,{encoded}"></audio>'
        return {"text/html": player, "text/plain": repr(self)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, McpAudio) and (other.data, other.mime_type) == (self.data, self.mime_type)

    def __repr__(self) -> str:
        return f"<McpAudio {self.mime_type}, {len(self.data):,} bytes>"


@dataclass(frozen=True)
class McpLink:
    """A ``resource_link`` in a tool result: the resource's name and URI."""

    name: str
    uri: str


class McpText(str):
    """A tool result's text (what the model reads) that also carried images, audio or links.

    It is the ``str`` it looks like; ``media`` holds the `McpImage` / `McpAudio` values and
    ``links`` the `McpLink` ones, in the server's order, for the notebook and the call's card.
    """

    media: tuple[Any, ...]
    links: tuple[McpLink, ...]

    def __new__(cls, text: str, media: tuple[Any, ...] = (), links: tuple[McpLink, ...] = ()) -> McpText:
        made = super().__new__(cls, text)
        made.media, made.links = media, links
        return made
