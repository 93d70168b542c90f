"""Images in tool results reach a model behind an OpenAI-compatible server that takes them, as
``image_url`` content parts, and only then; the server is asked once where it says (llama-server's
``/props``, Ollama's ``/api/show``, LM Studio's ``/api/v0/models``). Real ``openai`` client, real
local HTTP server speaking the exact wire format."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from PIL import Image

from meowgent_nb import Agent, tool
from meowgent_nb.models import OpenAIModel
from meowgent_nb.models._openai_wire import TOOL_IMAGES_NOTE, openai_messages
from meowgent_nb.tools.media import McpImage
from tests.models.test_openai_wire import MODEL, allow_requests, base_url, call_delta, event, sse  # noqa: F401

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
JPEG = b"\xff\xd8\xff\xe0" + b"\x01" * 12
SVG = b"<svg onload='alert(1)'/>"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def part(data: bytes, kind: str) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{kind};base64,{b64(data)}"}}


def test_tool_messages_keep_text_and_their_images_follow_in_one_user_message_four_at_most():
    calls = [{"function": {"name": "snap", "arguments": {}}}, {"function": {"name": "snap", "arguments": {}}}]
    sent = openai_messages(
        [
            {"role": "user", "content": "Look"},
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "content": "[image: image/png]", "images": [b64(PNG), b64(SVG), "not base64!"]},
            {"role": "tool", "content": "five", "images": [b64(JPEG)] * 5},
            {"role": "assistant", "content": "I see."},
        ]
    )
    assert sent[2:] == [
        {"role": "tool", "content": "[image: image/png]", "tool_call_id": "call_1"},
        {"role": "tool", "content": "five", "tool_call_id": "call_2"},
        {
            "role": "user",
            "content": [{"type": "text", "text": TOOL_IMAGES_NOTE}, part(PNG, "image/png")]
            + [part(JPEG, "image/jpeg")] * 3,
        },
        {"role": "assistant", "content": "I see."},
    ]


def test_a_user_message_carrying_results_gets_its_images_as_parts_after_its_text():
    sent = openai_messages(
        [
            {"role": "user", "content": "<tool_response>...", "images": [b64(JPEG)] * 6},
            {"role": "user", "content": "only svg", "images": [b64(SVG)]},
            {"role": "user", "content": "no images"},
        ]
    )
    assert sent == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<tool_response>..."}] + [part(JPEG, "image/jpeg")] * 4,
        },
        {"role": "user", "content": "only svg"},
        {"role": "user", "content": "no images"},
    ]


RED = Image.new("RGB", (2, 2), "red")


@tool
def snap() -> list:
    """Take a picture."""
    return ["A red square:", RED, McpImage(SVG, "image/svg+xml")]


def red_png() -> bytes:
    import io

    buffer = io.BytesIO()
    RED.save(buffer, format="PNG")
    return buffer.getvalue()


def serve_agent(httpserver, probes: dict[str, dict | None]) -> list[dict]:
    """Chat Completions that calls ``snap`` natively, then answers; each probe path answers its JSON (None: 404)."""
    from werkzeug import Response

    bodies: list[dict] = []

    def chat(request):
        bodies.append(json.loads(request.get_data()))
        if len(bodies) % 2:
            return Response(
                sse(event(call_delta(0, id="c", name="snap", arguments="{}")), event({}, "tool_calls")),
                content_type="text/event-stream",
            )
        return Response(sse(event({"content": "Red."}), event({}, "stop")), content_type="text/event-stream")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(chat)
    for path, answer in probes.items():
        if answer is None:
            httpserver.expect_request(path).respond_with_json({"error": "not found"}, status=404)
        else:
            httpserver.expect_request(path).respond_with_json(answer)
    return bodies


PROBES = ["/props", "/api/show", f"/api/v0/models/{MODEL}"]
LLAMA_SERVER_VISION = {"/props": {"modalities": {"vision": True, "audio": False}, "total_slots": 1}}
OLLAMA_VISION = {"/props": None, "/api/show": {"capabilities": ["completion", "vision"]}}
LM_STUDIO_VLM = {"/props": None, "/api/show": None, f"/api/v0/models/{MODEL}": {"id": MODEL, "type": "vlm"}}
SAYS_NOTHING = dict.fromkeys(PROBES)  # vLLM, llama-cpp-python's server
LLAMA_SERVER_TEXT = {"/props": {"modalities": {"vision": False}}}


@pytest.mark.parametrize(
    ("probes", "sees"),
    [
        (LLAMA_SERVER_VISION, True),
        (OLLAMA_VISION, True),
        (LM_STUDIO_VLM, True),
        (SAYS_NOTHING, False),
        (LLAMA_SERVER_TEXT, False),
    ],
)
def test_the_server_is_asked_once_and_a_model_that_sees_gets_the_image_after_the_tool_message(
    httpserver, base_url, allow_requests, probes, sees
):
    bodies = serve_agent(httpserver, probes)
    agent = Agent(OpenAIModel(MODEL, base_url=base_url), tools=[snap], protocol="native")
    assert agent.run("What is it?").text == "Red."
    assert agent.run("And again?").text == "Red."
    tool_message = {
        "role": "tool",
        "content": "A red square:\n[image: image/png]\n[image: image/svg+xml]",
        "tool_call_id": "call_1",
    }
    images = {
        "role": "user",
        "content": [{"type": "text", "text": TOOL_IMAGES_NOTE}, part(red_png(), "image/png")],
    }
    after_call = bodies[1]["messages"][[m["role"] for m in bodies[1]["messages"]].index("tool") :]
    assert after_call == ([tool_message, images] if sees else [tool_message])
    assert json.dumps(bodies[1]).count(b64(red_png())) == (1 if sees else 0)  # base64 once, never in the text
    assert json.dumps(bodies[3]).count(b64(red_png())) == (
        2 if sees else 0
    )  # each result's, from the history
    asked = [(r.method, r.path) for r, _ in httpserver.log if not r.path.startswith("/v1/")]
    expected = [("GET", "/props"), ("POST", "/api/show"), ("GET", f"/api/v0/models/{MODEL}")][: len(probes)]
    assert asked == expected
    shows = [json.loads(r.get_data()) for r, _ in httpserver.log if r.path == "/api/show"]
    assert shows == ([{"model": MODEL}] if "/api/show" in probes else [])


def test_told_whether_it_sees_the_server_is_not_asked_and_text_only_is_the_same_request(
    httpserver, base_url, allow_requests
):
    told = serve_agent(httpserver, {})
    Agent(OpenAIModel(MODEL, base_url=base_url, images=False), tools=[snap], protocol="native").run("What?")
    text_only = told[1]
    told.clear()
    Agent(OpenAIModel(MODEL, base_url=base_url, images=True), tools=[snap], protocol="native").run("What?")
    assert [r.path for r, _ in httpserver.log] == ["/v1/chat/completions"] * 4
    assert told[1]["messages"][:-1] == text_only["messages"]
    assert told[1]["messages"][-1]["content"][1] == part(red_png(), "image/png")
    assert "images" not in json.dumps(text_only)


def test_a_server_that_cannot_be_reached_means_text_only_and_is_asked_again_later(allow_requests):
    model = OpenAIModel(MODEL, base_url="http://127.0.0.1:9/v1")
    assert asyncio.run(model.accepts_images()) is False
    assert model.images is None
