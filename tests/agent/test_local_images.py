"""A notebook tool's own images (PIL, IPython's Image, image bytes, a list mixing them with text) take
the path MCP images take: the model reads placeholders, a model that can see gets the images, and
what the model reads is what an MCP client reads of the same value served by `%tools serve`."""

from __future__ import annotations

import base64
import io
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.display import Audio
from IPython.display import Image as IPythonImage
from PIL import Image

from meowgent_nb import Agent, FunctionModel, tool
from meowgent_nb.agent._images import result_images
from meowgent_nb.mcp.content._results import result_text
from meowgent_nb.mcp.content.served import content_blocks
from meowgent_nb.tools.calls import ToolCall, ToolResult
from meowgent_nb.tools.media import MAX_IMAGE_BYTES, McpAudio, McpImage, media_of, medium
from meowgent_nb.tools.output import output_text


def png_of(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


RED = Image.new("RGB", (2, 2), "red")
RED_PNG = png_of(RED)
JPEG = b"\xff\xd8\xff\xe0" + b"\x01" * 12
GIF = b"GIF89a" + b"\x00" * 10
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8
WAV = b"RIFF\x10\x00\x00\x00WAVEfmt " + b"\x00" * 8


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def ran(value) -> ToolResult:
    return ToolResult(ToolCall("snap", {}), output_text(value, None), value=value)


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (RED, McpImage(RED_PNG, "image/png")),
        (IPythonImage(data=RED_PNG), McpImage(RED_PNG, "image/png")),
        (IPythonImage(data=JPEG, format="jpeg"), McpImage(JPEG, "image/jpeg")),
        (RED_PNG, McpImage(RED_PNG, "image/png")),
        (bytearray(JPEG), McpImage(JPEG, "image/jpeg")),
        (memoryview(GIF), McpImage(GIF, "image/gif")),
        (WEBP, McpImage(WEBP, "image/webp")),
        (WAV, McpAudio(WAV, "audio/wav")),
        (Audio(data=WAV), McpAudio(WAV, "audio/wav")),
        (b"%PDF-1.7", None),
        (b"", None),
        ("\x89PNG\r\n\x1a\n as text", None),
        ({"data": RED_PNG, "mimetype": "image/png"}, None),
        (IPythonImage(url="https://example.com/a.png"), None),
    ],
)
def test_one_converter_reads_every_kind_of_image_a_tool_may_return(value, found):
    assert medium(value) == found


def test_a_pil_image_png_cannot_hold_and_one_pil_cannot_write_are_still_handled():
    cmyk = medium(Image.new("CMYK", (2, 2)))
    assert cmyk is not None and Image.open(io.BytesIO(cmyk.data)).mode == "RGBA"
    assert medium(Image.new("RGB", (0, 0))) is None
    assert output_text(Image.new("RGB", (0, 0)), None).startswith("<PIL.Image.Image image mode=RGB size=0x0")


def test_the_model_reads_placeholders_one_line_per_item_of_a_mixed_list():
    value = ["A red square:", RED, {"side": 2}, 3, JPEG, Audio(data=WAV)]
    assert output_text(value, None) == (
        'A red square:\n[image: image/png]\n{"side": 2}\n3\n[image: image/jpeg]\n[audio: audio/wav]'
    )
    assert output_text(RED, None) == "[image: image/png]"
    assert media_of(value) == (
        McpImage(RED_PNG, "image/png"),
        McpImage(JPEG, "image/jpeg"),
        McpAudio(WAV, "audio/wav"),
    )
    assert result_images(ran(value)) == [b64(RED_PNG), b64(JPEG)]


ITEMS = st.sampled_from(
    ["caption", "", RED, RED_PNG, JPEG, WAV, {"a": [1, 2]}, 7, None, "[image: image/png]"]
)


@settings(max_examples=150, deadline=None)
@given(st.one_of(ITEMS, st.lists(ITEMS, max_size=5), st.lists(ITEMS, max_size=5).map(tuple)))
def test_a_local_tool_reads_to_the_model_as_an_mcp_client_reads_the_same_value_served(value):
    import mcp_types as types

    served = types.CallToolResult(content=content_blocks(value, output_text(value, None)))
    assert output_text(value, None) == result_text(served)


def test_images_from_every_source_keep_the_limits_raster_only_2_mb_at_most():
    big = b"\x89PNG\r\n\x1a\n" + b"\x00" * MAX_IMAGE_BYTES
    svg = McpImage(b"<svg onload='alert(1)'/>", "image/svg+xml")
    value = [big, svg, RED, IPythonImage(data=JPEG, format="jpeg")]
    assert output_text(value, None) == (
        "[image: image/png]\n[image: image/svg+xml]\n[image: image/png]\n[image: image/jpeg]"
    )
    assert result_images(ran(value)) == [b64(RED_PNG), b64(JPEG)]
    assert result_images(ToolResult(ToolCall("snap", {}), "Error: x", kind="error", value=RED)) == []
    lying = [McpImage(b"<svg onload='alert(1)'/>", "image/png"), McpImage(JPEG, "image/png")]
    assert result_images(ran(lying)) == [b64(JPEG)]  # what the bytes are decides, with what was said


def test_an_image_whose_header_declares_over_25_megapixels_is_not_given_to_a_model():
    def header(width: int, height: int) -> bytes:  # a PNG's signature and IHDR: all a decoder sizes it by
        body = b"IHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([1, 0, 0, 0, 0])
        return b"\x89PNG\r\n\x1a\n\0\0\0\x0d" + body + zlib.crc32(body).to_bytes(4, "big")

    value = [header(20_000, 20_000), header(5_000, 5_000), McpImage(header(5_001, 5_000), "image/png")]
    assert output_text(value, None) == "[image: image/png]\n[image: image/png]\n[image: image/png]"
    assert result_images(ran(value)) == [b64(header(5_000, 5_000))]


@tool
def squares(count: int) -> list:
    """Draw red squares with a caption."""
    return ["Squares:", *[Image.new("RGB", (2, 2), (255, i, 0)) for i in range(count)]]


def answers(messages, tools):
    if messages[-1]["role"] == "user" and "<tool_response" in messages[-1]["content"]:
        return "Red squares."
    return '<tool_call>{"name": "squares", "arguments": {"count": 6}}</tool_call>'


@pytest.mark.parametrize("sees", [True, False])
def test_a_local_tools_images_reach_a_model_that_sees_four_at_most_and_the_other_reads_text(sees):
    model = FunctionModel(answers)
    model.accepts_images = sees
    agent = Agent(model, tools=[squares])
    assert agent.run("Draw six").text == "Red squares."
    carried = model.requests[1].messages[-1]
    assert carried["content"] == (
        '<tool_response name="squares">\nSquares:\n' + "[image: image/png]\n" * 6 + "</tool_response>\n"
        "Use these results to answer the user's question in plain text."
    )
    sent = [b64(png_of(Image.new("RGB", (2, 2), (255, i, 0)))) for i in range(4)]
    assert carried.get("images") == (sent if sees else None)
    assert json.dumps(model.requests[1].messages).count(sent[0]) == (1 if sees else 0)
