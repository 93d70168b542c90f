"""Images in tool results and in the prompt (a notebook variable's), given to a model that can look at them.

The model always reads a result's text, each image a placeholder (``[image: image/png]``).
`accepts_images` says whether the model also sees them; `result_images` picks a result's raster
images (PNG, JPEG, GIF, WebP; bounded in bytes, pixels and count; never SVG) as base64, and
`attach_images` puts them on the message that carries the results (Ollama's ``images`` key).
Models that cannot see get text only, so their requests, and cassettes keyed by them, stay as
they are.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Iterable, Sequence
from typing import Any

from ..tools.core import ToolResult
from ..tools.media import (
    IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_IMAGES,
    McpAudio,
    McpImage,
    image_size,
    media_of,
    media_type,
)

__all__ = [
    "IMAGE_TYPES",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "accepts_images",
    "attach_images",
    "given_images",
    "result_images",
]


def result_images(result: ToolResult) -> list[str]:
    """The base64 text of each image a result's value carries that a model may be given."""
    return given_images(media_of(result.value) if result.ok else ())


def given_images(media: Iterable[McpImage | McpAudio]) -> list[str]:
    """The base64 text of each of ``media`` that is an image a model may be given (raster,
    bounded in bytes and pixels, its bytes of the type it claims)."""
    found = []
    for item in media:
        data, kind = item.data, item.mime_type
        fits = isinstance(data, bytes) and 0 < len(data) <= MAX_IMAGE_BYTES
        # The type the bytes begin as, too: a server may call an SVG (or anything) image/png.
        if isinstance(item, McpImage) and fits and kind in IMAGE_TYPES and media_type(data) in IMAGE_TYPES:
            size = image_size(data)  # what its header declares: a few bytes may say 20,000 x 20,000
            if size is None or size[0] * size[1] <= MAX_IMAGE_PIXELS:
                found.append(base64.b64encode(data).decode("ascii"))
    return found


async def accepts_images(model: Any) -> bool:
    """Whether ``model`` can be given images (its ``accepts_images``; False without one, or on failure)."""
    answer = getattr(model, "accepts_images", False)
    try:
        if callable(answer):
            answer = answer()
            if inspect.isawaitable(answer):
                answer = await answer
    except Exception:  # noqa: BLE001 - not knowing means text only
        return False
    return answer is True


def attach_images(messages: Sequence[dict[str, Any]], images: Sequence[Sequence[str]]) -> None:
    """Put each result's images (`result_images`, in call order) on the messages that carry them (in place).

    One message per result (the ``native`` protocol's tool messages): each gets its own
    result's images. One message for all (``xml``, ``json``): it gets theirs in call order.
    """
    if len(messages) == len(images) and len(images) > 1:
        pairs = [(message, list(found)) for message, found in zip(messages, images)]
    elif messages:
        pairs = [(messages[-1], [image for found in images for image in found])]
    else:
        pairs = []
    for message, images in pairs:
        if images:
            message["images"] = images[:MAX_IMAGES]
