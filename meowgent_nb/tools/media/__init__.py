"""Images and audio in tool values: the values (`McpImage`, `McpAudio`, `McpText`) and what finds them.

One converter for every tool, local or served: `medium` says whether a value is an image or audio
(its ``_ai_repr_()`` bundle's image, a PIL image, ``IPython.display.Image`` / ``Audio``, an object with ``_repr_png_``, bytes of a
known type), `media_of` gives the media a tool's value carries. The agent gives them to a model
that can look at them, the call's card shows them, `%tools serve` sends them as MCP content.
`shown_image` and `MediaBudget` decide which images are displayed (raster only, bounded in
pixels and, per output, in bytes).
"""

from ._found import (
    IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    MAX_IMAGES,
    bundle_image,
    media_of,
    media_text,
    media_type,
    medium,
    type_method,
)
from ._shown import (
    MAX_IMAGE_PIXELS,
    OUTPUT_MAX_BYTES,
    OUTPUT_MAX_PIXELS,
    MediaBudget,
    NotShown,
    ShownImage,
    shown_image,
)
from ._sniff import image_size
from ._values import McpAudio, McpImage, McpLink, McpText

__all__ = [
    # what finds them in a tool's value
    "IMAGE_TYPES",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    # what may be displayed
    "MAX_IMAGE_PIXELS",
    "OUTPUT_MAX_BYTES",
    "OUTPUT_MAX_PIXELS",
    # the values
    "McpAudio",
    "McpImage",
    "McpLink",
    "McpText",
    "MediaBudget",
    "NotShown",
    "ShownImage",
    "bundle_image",
    "image_size",
    "media_of",
    "media_text",
    "media_type",
    "medium",
    "shown_image",
    "type_method",
]
