"""Images, audio and links a tool or a server gives (in tool results, resources, prompts), as values.

Each shows itself in the notebook (`_repr_mimebundle_`); a tool's card shows them too (see
`meowgent_nb.notebook.views._media_html`). An image is displayed only when it is fit to be
(`tools.media.shown_image`): else it is named, with why, in one line. The model reads only
their one-line descriptions.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ._shown import MediaBudget, NotShown, ShownImage, shown_image

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
        # As IPython's own Image: the bytes base64-encoded (the Jupyter wire's form), under the type
        # they are; an image not fit to display (see `tools.media.shown_image`) is one line of text.
        shown = self._shown()
        if isinstance(shown, NotShown):
            return {"text/plain": f"{self!r}\n[{shown.text}]"}
        return {shown.mime_type: base64.b64encode(shown.data).decode("ascii"), "text/plain": repr(self)}

    def _repr_png_(self) -> bytes | None:
        # IPython asks this too, besides the bundle: the same image, only when it is fit to display.
        shown = self._shown()
        return shown.data if isinstance(shown, ShownImage) and shown.mime_type == "image/png" else None

    def _shown(self) -> ShownImage | NotShown:
        """This image as one output displays it (`shown_image`, within one `MediaBudget`)."""
        shown = shown_image(self.data, self.mime_type)
        if isinstance(shown, NotShown):
            return shown
        budget = MediaBudget()
        if not budget.take("image", len(shown.data), shown.width * shown.height):
            return budget.notes()[0]
        return shown

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
