"""A notebook tool's images reach a vision model behind Ollama as the message's ``images``, the exact
request body through the real ``ollama`` client: base64 once, raster only, four at most; a model
without the vision capability gets the same request with text alone."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from meowgent_nb import Agent, tool
from meowgent_nb.models import OllamaModel
from meowgent_nb.tools.media import McpImage
from tests.models.test_ollama_model import allow_requests, host  # noqa: F401
from tests.support.ollama_wire import FINAL, MODEL, ndjson, part, show


def png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), (shade, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


@tool
def album() -> list:
    """Six photos, a drawing and the caption."""
    return [
        "Photos:",
        *[Image.new("RGB", (2, 2), (shade, 0, 0)) for shade in range(6)],
        McpImage(b"<svg onload='alert(1)'/>", "image/svg+xml"),
    ]


@pytest.mark.parametrize("capabilities", [("completion", "vision"), ("completion", "tools")])
def test_the_request_carries_the_tools_images_once_for_a_vision_model_and_text_alone_otherwise(
    httpserver,
    host,
    allow_requests,
    capabilities,
):
    from werkzeug.wrappers import Response

    bodies: list[dict] = []
    httpserver.expect_request("/api/show", method="POST").respond_with_json(show(*capabilities))

    def chat(request):
        bodies.append(json.loads(request.data))
        text = (
            '<tool_call>{"name": "album", "arguments": {}}</tool_call>' if len(bodies) == 1 else "Red ones."
        )
        return Response(ndjson(part(text), FINAL), content_type="application/x-ndjson")

    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(chat)
    agent = Agent(OllamaModel(MODEL, host=host), tools=[album], protocol="xml")  # results as text
    assert agent.run("What is in the album?").text == "Red ones."
    carried = bodies[1]["messages"][-1]
    text = "Photos:\n" + "[image: image/png]\n" * 6 + "[image: image/svg+xml]"
    assert carried["content"] == (
        f'<tool_response name="album">\n{text}\n</tool_response>\n'
        "Use these results to answer the user's question in plain text."
    )
    sent = [base64.b64encode(png(shade)).decode("ascii") for shade in range(4)]
    if "vision" in capabilities:
        assert carried == {"role": "user", "content": carried["content"], "images": sent}
    else:
        assert carried == {"role": "user", "content": carried["content"]}
    assert json.dumps(bodies[1]).count(sent[0]) == (1 if "vision" in capabilities else 0)
    assert "svg" not in json.dumps(carried.get("images", []))
