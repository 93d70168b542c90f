"""Which images may be displayed, and how many of them one output holds.

An image's bytes come from a tool or a server, so neither its declared type nor its size is
trusted: only raster types are displayed, as the type their bytes are (never SVG, which can carry
scripts); the size its header declares is bounded by `MAX_IMAGE_PIXELS`; and one output holds at
most `OUTPUT_MAX_BYTES` and `OUTPUT_MAX_PIXELS` of media (`MediaBudget`). What is left out is said
in one line (`NotShown.text`). The limits a person reads are in docs/guides/tools.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._sniff import IMAGE_TYPES, image_size, media_type

__all__ = [
    "MAX_IMAGE_PIXELS",
    "OUTPUT_MAX_BYTES",
    "OUTPUT_MAX_PIXELS",
    "MediaBudget",
    "NotShown",
    "ShownImage",
    "shown_image",
]

MAX_IMAGE_PIXELS = 25_000_000
"""The most pixels (width x height, as its header says) an image displayed may have."""
OUTPUT_MAX_BYTES = 8_000_000
"""The most bytes of images and audio one output shows (a notebook keeps every output it shows)."""
OUTPUT_MAX_PIXELS = 50_000_000
"""The most pixels of images one output shows (a browser decodes each into 4 bytes a pixel)."""

_RASTER = "only PNG, JPEG, GIF and WebP images are displayed"


@dataclass(frozen=True)
class ShownImage:
    """An image fit to display."""

    data: bytes
    mime_type: str
    """The type its bytes are (not the type it was declared as)."""
    width: int
    height: int


@dataclass(frozen=True)
class NotShown:
    """An image, or several, left out of an output."""

    text: str
    """One line saying what was left out and why."""


def shown_image(data: bytes, declared: str) -> ShownImage | NotShown:
    """``data`` as an image to display, or why it is not displayed.

    Args:
        data: The image's bytes.
        declared: The type the tool or server said it is.

    Returns:
        A `ShownImage` of the type the bytes are, if ``declared`` is a raster type, the bytes are
        PNG, JPEG, GIF or WebP, and their header declares at most `MAX_IMAGE_PIXELS`; else
        a `NotShown` naming ``declared``.
    """
    said = _said(declared)
    if declared not in IMAGE_TYPES:
        return NotShown(f"{said} not shown: {_RASTER}")
    real = media_type(data) if isinstance(data, bytes) else None
    if real not in IMAGE_TYPES:
        return NotShown(f"{said} not shown: its bytes are not a PNG, JPEG, GIF or WebP image")
    size = image_size(data)
    if size is None:
        return NotShown(f"{said} not shown: its header does not say its width and height")
    width, height = size
    if width * height > MAX_IMAGE_PIXELS:
        return NotShown(
            f"a {width:,} x {height:,} {said} not shown:"
            f" images of at most {MAX_IMAGE_PIXELS / 1e6:g} megapixels are displayed"
        )
    return ShownImage(data, real, width, height)


@dataclass
class MediaBudget:
    """What one output may still show: images and audio share its bytes, images its pixels.

    Each item is shown if it fits what is left (`take`); what does not fit is counted, and `notes`
    says it. One budget serves one output: a card, or every card of a transcript.
    """

    max_bytes: int = OUTPUT_MAX_BYTES
    max_pixels: int = OUTPUT_MAX_PIXELS
    used_bytes: int = field(default=0, init=False)
    used_pixels: int = field(default=0, init=False)
    _left: dict[str, dict[str, list[int]]] = field(default_factory=dict, init=False, repr=False)
    """What `take` left out: by the bound it would break ("bytes", "pixels"), then by kind of item
    ("image", "audio clip"), its count and its bytes or pixels."""

    def take(self, kind: str, size: int, pixels: int = 0) -> bool:
        """Whether an item of ``size`` bytes and ``pixels`` pixels fits; if so it is counted as shown."""
        if self.used_bytes + size > self.max_bytes:
            bound, amount = "bytes", size
        elif self.used_pixels + pixels > self.max_pixels:
            bound, amount = "pixels", pixels
        else:
            self.used_bytes += size
            self.used_pixels += pixels
            return True
        left = self._left.setdefault(bound, {}).setdefault(kind, [0, 0])
        left[0] += 1
        left[1] += amount
        return False

    def notes(self) -> list[NotShown]:
        """A line for each bound `take` left items out by since the last call; it starts afresh."""
        notes = []
        for bound, kinds in sorted(self._left.items()):
            what = " and ".join(f"{n:,} {kind}{'' if n == 1 else 's'}" for kind, (n, _) in kinds.items())
            amount = sum(left[1] for left in kinds.values()) / 1e6
            if bound == "bytes":
                size, most = f"{amount:.1f} MB", f"{self.max_bytes / 1e6:g} MB of images and audio"
            else:
                size, most = f"{amount:.1f} megapixels", f"{self.max_pixels / 1e6:g} megapixels of images"
            notes.append(NotShown(f"{what} ({size}) not shown: one output shows at most {most}"))
        self._left = {}
        return notes


def _said(declared: object) -> str:
    """A declared type as a person may read it: its hidden characters shown, at most 60 of them."""
    from ..._visible import visible

    said = visible(str(declared))
    return said if len(said) <= 60 else said[:57] + "..."
