"""What bytes are, by their first bytes (their "magic number", never a name), and an image's size.

`media_type` names the image or audio type bytes begin as; `image_size` reads the width and
height a PNG, JPEG, GIF or WebP header declares, without decoding the image (and without Pillow).
"""

from __future__ import annotations

import re
import struct

__all__ = ["IMAGE_TYPES", "image_size", "media_type"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The raster types displayed and given to a vision model (SVG never: it is a document, not a picture)."""

_MAX_STEPS = 10_000
"""Blocks read looking for a header's size (a real image has a few before it)."""
_NOT_FILL = re.compile(rb"[^\xff]")
_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_AUDIO = (
    (b"ID3", "audio/mpeg"),
    (b"\xff\xfb", "audio/mpeg"),
    (b"\xff\xf3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)


def media_type(data: bytes) -> str | None:
    """The image or audio type ``data`` begins as (PNG, JPEG, GIF, WebP, WAV, MP3, Ogg, FLAC), else None."""
    if data[:4] == b"RIFF" and data[8:12] in (b"WAVE", b"WEBP"):
        return "audio/wav" if data[8:12] == b"WAVE" else "image/webp"
    return next((kind for magic, kind in (*_IMAGES, *_AUDIO) if data.startswith(magic)), None)


def image_size(data: bytes) -> tuple[int, int] | None:
    """The width and height a PNG, JPEG, GIF or WebP image's header declares (None if it does not).

    A GIF's frames may reach past its screen, as browsers draw them: the size covers each frame.
    """
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n"):
            return _png_size(data)
        if data.startswith((b"GIF87a", b"GIF89a")):
            return _gif_size(data)
        if data.startswith(b"\xff\xd8\xff"):
            return _jpeg_size(data)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
    except (struct.error, IndexError, ValueError):  # a header cut short (ValueError: bytes.index)
        return None
    return None


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[12:16] != b"IHDR":
        return None
    return _positive(*struct.unpack(">II", data[16:24]))


def _gif_size(data: bytes) -> tuple[int, int] | None:
    width, height, flags = struct.unpack("<HHB", data[6:11])
    at = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)  # past the global colour table
    inside = False  # within an extension's sub-blocks
    for _ in range(_MAX_STEPS):  # extensions, then the first frame: browsers grow the screen to it
        if inside:
            inside = data[at] != 0
            at += data[at] + 1
        elif data[at] == 0x21:  # an extension: its label, then sub-blocks ending in an empty one
            at, inside = at + 2, True
        elif data[at] == 0x2C:
            left, top, w, h = struct.unpack("<HHHH", data[at + 1 : at + 9])
            return _positive(max(width, left + w), max(height, top + h))
        else:  # the trailer, or not a GIF block: no frame
            return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    for _ in range(_MAX_STEPS):  # segments up to the frame header
        at = data.index(b"\xff", at)  # bytes between segments: decoders skip them
        found = _NOT_FILL.search(data, at)  # past the fill bytes, to the marker
        if found is None:
            return None
        at, marker = found.end(), data[found.start()]
        if marker == 0xD8 or 0xD0 <= marker <= 0xD7 or marker == 0x01:  # a marker without a length
            continue
        if marker in (0xD9, 0xDA):  # the end, or the scan, before any frame header
            return None
        (length,) = struct.unpack(">H", data[at : at + 2])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a frame header
            height, width = struct.unpack(">HH", data[at + 3 : at + 7])
            return _positive(width, height)
        at += length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return _positive(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and data[20] == 0x2F:
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None
