"""Images reaching the screen: only raster ones, as the type their bytes are, bounded in pixels, and
bounded per output (a card, a transcript, one displayed `McpImage`); what is left out is said.

Each class of hostile input has its test here: a declared type that is not raster, bytes that are
not what was declared, a header that declares huge dimensions in a few bytes, many images in one
result, in one transcript, in one display.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from meowgent_nb import Agent, AutoApprove, ScriptedModel, tool
from meowgent_nb.notebook.views._media_html import media_html
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.tools.media import IMAGE_TYPES, McpImage, McpText, image_size

RASTER = "only PNG, JPEG, GIF and WebP images are displayed"
NOT_RASTER_BYTES = "its bytes are not a PNG, JPEG, GIF or WebP image"
SKIPPED = '<div class="meowgent-media-skipped" style="opacity: 0.65; font-size: 0.85em">'


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(width: int, height: int, rows: bool = True) -> bytes:
    """A valid black 1-bit PNG of that size (kilobytes at most); its header alone if not ``rows``."""
    header = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
    if not rows:
        return header + chunk(b"IEND", b"")
    squeeze, row = zlib.compressobj(9), b"\0" * (1 + (width + 7) // 8)
    body = b"".join(squeeze.compress(row) for _ in range(height)) + squeeze.flush()
    return header + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def saved(size: tuple[int, int], fmt: str, mode: str = "RGB", **options) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, "red").save(buffer, format=fmt, **options)
    return buffer.getvalue()


PIXEL = png(1, 1)
JPEG = saved((3, 2), "JPEG")
PADDED = png(1, 1, rows=False)  # a 1 x 1 header; padded to any size below


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def note(text: str) -> str:
    return f"{SKIPPED}{text}</div>"


def img(mime: str, data: bytes) -> str:
    return (
        '<img class="meowgent-media" alt="an image from the tool" style="max-width: 100%; max-height: 24em;'
        f' display: block; margin: 0.3em 0" src="data:{mime};base64,{b64(data)}">'
    )


# --- a declared type that is not raster ---------------------------------------------------------

MIME = st.one_of(
    st.sampled_from(["image/svg+xml", "text/html", "application/javascript", "image/x-icon", "image/PNG"]),
    st.from_regex(r"\A[a-z]{1,12}/[a-z0-9.+-]{1,20}\Z"),
).filter(lambda mime: mime not in IMAGE_TYPES)


@settings(max_examples=60, deadline=None)
@given(MIME)
def test_a_type_that_is_not_raster_is_named_not_displayed_whatever_the_bytes(mime):
    for data in (PIXEL, b"<svg onload='alert(1)'/>", b"<script>alert(1)</script>"):
        image = McpImage(data, mime)
        said = f"{mime} not shown: {RASTER}"
        assert image._repr_mimebundle_() == {"text/plain": f"{image!r}\n[{said}]"}
        assert image._repr_png_() is None
        assert media_html(McpText("x", media=(image,))) == note(said)


def test_the_shell_displays_an_svg_or_html_image_as_one_line_of_text(ip):
    for mime, data in (("image/svg+xml", b"<svg onload='alert(1)'/>"), ("text/html", PIXEL)):
        shown, _ = ip.display_formatter.format(McpImage(data, mime, "notes://x"))
        assert shown == {
            "text/plain": f"<McpImage {mime}, {len(data)} bytes from notes://x>\n[{mime} not shown: {RASTER}]"
        }


def test_a_declared_type_with_hidden_characters_is_named_with_them_shown():
    image = McpImage(PIXEL, "image/png\u202e\x1b[2J" + "x" * 100)
    assert image._repr_mimebundle_()["text/plain"].splitlines()[1] == (
        "[image/png\\u202e\\x1b[2J" + "x" * 35 + "... not shown: " + RASTER + "]"  # 60 characters at most
    )


# --- bytes that are not what was declared -------------------------------------------------------

MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


@settings(max_examples=80, deadline=None)
@given(
    st.binary(max_size=64).filter(lambda data: not data.startswith(MAGIC) and data[8:12] != b"WEBP"),
    st.sampled_from(sorted(IMAGE_TYPES)),
)
def test_bytes_that_are_no_raster_image_are_not_displayed_whatever_type_was_declared(data, mime):
    image = McpImage(data, mime)
    said = f"{mime} not shown: {NOT_RASTER_BYTES}"
    assert image._repr_mimebundle_() == {"text/plain": f"{image!r}\n[{said}]"}
    assert image._repr_png_() is None
    assert media_html(McpText("x", media=(image,))) == note(said)


def test_a_raster_image_is_displayed_as_the_type_its_bytes_are(ip):
    shown, _ = ip.display_formatter.format(McpImage(JPEG, "image/png"))  # a JPEG called a PNG
    assert shown == {"image/jpeg": b64(JPEG), "text/plain": f"<McpImage image/png, {len(JPEG)} bytes>"}
    shown, _ = ip.display_formatter.format(McpImage(PIXEL, "image/png"))
    assert shown == {"image/png": b64(PIXEL), "text/plain": "<McpImage image/png, 67 bytes>"}
    svg_called_png = McpImage(b"<svg onload='alert(1)'/>", "image/png")
    shown, _ = ip.display_formatter.format(svg_called_png)
    assert shown == {"text/plain": f"{svg_called_png!r}\n[image/png not shown: {NOT_RASTER_BYTES}]"}
    assert media_html(McpText("x", media=(McpImage(JPEG, "image/gif"),))) == img("image/jpeg", JPEG)
    headless = McpImage(b"\xff\xd8\xff\xe0" + b"\x01" * 12, "image/jpeg")  # a JPEG's start, no frame header
    assert headless._repr_mimebundle_() == {
        "text/plain": f"{headless!r}\n[image/jpeg not shown: its header does not say its width and height]"
    }


# --- a header that declares huge dimensions in a few bytes --------------------------------------


def patched(data: bytes, at: int, fmt: str, *values: int) -> bytes:
    return data[:at] + struct.pack(fmt, *values) + data[at + struct.calcsize(fmt) :]


def jpeg_of(width: int, height: int) -> bytes:
    at = JPEG.index(b"\xff\xc0") + 5  # the frame header: length, precision, then height, width
    return patched(JPEG, at, ">HH", height, width)


def gif_of(width: int, height: int) -> bytes:
    data = patched(saved((8, 8), "GIF"), 6, "<HH", width, height)  # the screen
    at = data.index(b"\x2c\x00\x00\x00\x00") + 5  # the first frame's size
    return patched(data, at, "<HH", width, height)


def framed_gif(width: int, height: int) -> bytes:
    """A GIF whose screen is 8 x 8 and whose one frame is larger: a browser grows the screen to it."""
    data = saved((8, 8), "GIF")
    at = data.index(b"\x2c\x00\x00\x00\x00") + 5
    return patched(data, at, "<HH", width, height)


def webp_of(width: int, height: int) -> bytes:
    data = saved((8, 8), "WEBP", "RGBA", save_all=True, append_images=[Image.new("RGBA", (8, 8))])
    assert data[12:16] == b"VP8X"
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return data[:24] + size + data[30:]


HUGE = [
    ("image/png", png(20_000, 20_000)),
    ("image/jpeg", jpeg_of(20_000, 20_000)),
    ("image/gif", gif_of(20_000, 20_000)),
    ("image/gif", framed_gif(20_000, 20_000)),
    ("image/webp", webp_of(20_000, 20_000)),
]


@pytest.mark.parametrize(("mime", "data"), HUGE, ids=["png", "jpeg", "gif", "gif-frame", "webp"])
def test_an_image_whose_header_declares_huge_dimensions_is_not_decoded(mime, data, ip):
    assert len(data) < 100_000 and image_size(data) == (20_000, 20_000)
    image = McpImage(data, mime)
    said = f"a 20,000 x 20,000 {mime} not shown: images of at most 25 megapixels are displayed"
    shown, _ = ip.display_formatter.format(image)
    assert shown == {"text/plain": f"{image!r}\n[{said}]"}
    assert media_html(McpText("x", media=(image,))) == note(said)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 2**31 - 1), st.integers(1, 2**31 - 1))
def test_an_image_is_displayed_up_to_25_megapixels(width, height):
    data = png(width, height, rows=False)
    bundle = McpImage(data, "image/png")._repr_mimebundle_()
    if width * height <= 25_000_000:
        assert bundle == {"image/png": b64(data), "text/plain": f"<McpImage image/png, {len(data)} bytes>"}
    else:
        assert bundle["text/plain"].endswith(
            f"[a {width:,} x {height:,} image/png not shown: images of at most 25 megapixels are displayed]"
        )
        assert list(bundle) == ["text/plain"]


SIZES = st.tuples(st.integers(1, 300), st.integers(1, 300))
FORMATS = [
    ("PNG", "RGB", {}),
    ("JPEG", "RGB", {}),
    ("GIF", "P", {}),
    ("WEBP", "RGB", {}),
    ("WEBP", "RGBA", {"lossless": True}),
    ("WEBP", "RGBA", {"save_all": True, "duration": 50}),
]


@settings(max_examples=40, deadline=None)
@given(SIZES, st.sampled_from(FORMATS))
def test_the_size_read_from_a_header_is_the_size_pillow_wrote(size, form):
    fmt, mode, options = form
    assert image_size(saved(size, fmt, mode, **options)) == size


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([*MAGIC, b"RIFF\0\0\0\0WEBPVP8 ", b"RIFF\0\0\0\0WEBPVP8L", b"RIFF\0\0\0\0WEBPVP8X"]),
    st.binary(max_size=60),
)
def test_any_bytes_after_a_magic_number_give_a_size_or_none_never_an_error(magic, rest):
    size = image_size(magic + rest)
    assert size is None or (isinstance(size, tuple) and min(size) >= 1)


@pytest.mark.parametrize("data", [PIXEL, JPEG, saved((5, 7), "GIF"), saved((5, 7), "WEBP"), webp_of(9, 4)])
def test_every_prefix_of_an_image_gives_no_size_or_its_size(data):
    whole = image_size(data)
    assert whole is not None
    assert {image_size(data[:cut]) for cut in range(len(data))} <= {None, whole}


# --- many images in one result, one transcript, one display --------------------------------------


def test_many_images_in_one_result_are_shown_up_to_8_mb_and_the_rest_counted():
    big = PADDED.ljust(1_000_001, b"\0")
    html = media_html(McpText("x", media=tuple(McpImage(big, "image/png") for _ in range(60))))
    assert html == img("image/png", big) * 7 + note(
        "53 images (53.0 MB) not shown: one output shows at most 8 MB of images and audio"
    )
    assert len(html) < 10_000_000


def test_images_in_one_result_are_shown_up_to_50_megapixels():
    large = png(5_000, 5_000)  # 25 megapixels each, a few kilobytes
    html = media_html(McpText("x", media=(McpImage(large, "image/png"),) * 3))
    assert html == img("image/png", large) * 2 + note(
        "1 image (25.0 megapixels) not shown: one output shows at most 50 megapixels of images"
    )


def test_one_displayed_image_is_one_output_of_8_mb_at_most(ip):
    image = McpImage(PADDED.ljust(9_000_000, b"\0"), "image/png")
    shown, _ = ip.display_formatter.format(image)
    assert shown == {
        "text/plain": "<McpImage image/png, 9,000,000 bytes>\n"
        "[1 image (9.0 MB) not shown: one output shows at most 8 MB of images and audio]"
    }


@tool
def gallery(seed: int) -> list:
    """Two large pictures."""
    return [f"Pictures {seed}:", *(McpImage(PADDED.ljust(1_900_000, bytes([seed])), "image/png"),) * 2]


def test_the_cards_of_one_transcript_share_its_8_mb():
    calls = [
        "<tool_call>" + json.dumps({"name": "gallery", "arguments": {"seed": seed}}) + "</tool_call>"
        for seed in (1, 2, 3)
    ]
    agent = Agent(ScriptedModel([*calls, "Done."]), tools=[gallery], approver=AutoApprove())

    async def collect():
        return [event async for event in agent.stream("Show")]

    html = Transcript.from_events(asyncio.run(collect())).to_html()
    assert len(re.findall(r"<img ", html)) == 4  # 7.6 MB: two cards' images
    left_out = "2 images (3.8 MB) not shown: one output shows at most 8 MB of images and audio"
    assert html.count(note(left_out)) == 1
    assert html.index("Pictures 3:") < html.index("2 images (3.8 MB) not shown")  # in the third card
