"""Images in tool results reach a model that can see them, as Ollama's ``images``; others read text only."""

from __future__ import annotations

import base64

import pytest

from meowgent_nb import Agent, FunctionModel, ToolCall, ToolResult, tool
from meowgent_nb.agent._images import accepts_images, attach_images, result_images
from meowgent_nb.tools.media import MAX_IMAGE_BYTES, McpAudio, McpImage, McpText

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
JPEG = b"\xff\xd8\xff" + b"\x01" * 10


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def result(value, name: str = "snap") -> ToolResult:
    return ToolResult(ToolCall(name, {}), str(value), value=value)


def test_only_raster_images_within_the_size_limit_are_taken_in_order():
    value = McpText(
        "[image: image/png]\n[image: image/svg+xml]\n[audio: audio/wav]\n[image: image/jpeg]",
        media=(
            McpImage(PNG, "image/png"),
            McpImage(b"<svg onload='alert(1)'/>", "image/svg+xml"),
            McpAudio(b"RIFF", "audio/wav"),
            McpImage(JPEG, "image/jpeg"),
            McpImage(b"x" * (MAX_IMAGE_BYTES + 1), "image/png"),
            McpImage(b"", "image/png"),
            McpImage(PNG, "image/x-made-up"),
        ),
    )
    assert result_images(result(value)) == [b64(PNG), b64(JPEG)]
    assert result_images(result("just text")) == []
    assert result_images(result({"media": "not a list of images"})) == []


def test_one_message_for_all_results_gets_their_images_in_call_order_and_at_most_four():
    many = McpText("six", media=tuple(McpImage(PNG + bytes([i]), "image/png") for i in range(6)))
    messages = [{"role": "user", "content": "<tool_response>..."}]
    results = [result(McpText("one", media=(McpImage(JPEG, "image/jpeg"),))), result(many)]
    attach_images(messages, [result_images(r) for r in results])
    assert messages[0]["images"] == [b64(JPEG)] + [b64(PNG + bytes([i])) for i in range(3)]


def test_a_message_per_result_gets_its_own_results_images():
    messages = [{"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}]
    results = [result("plain"), result(McpText("b", media=(McpImage(PNG, "image/png"),)))]
    attach_images(messages, [result_images(r) for r in results])
    assert messages == [
        {"role": "tool", "content": "a"},
        {"role": "tool", "content": "b", "images": [b64(PNG)]},
    ]


class Says:
    def __init__(self, answer):
        self.accepts_images = answer


async def _yes():
    return True


def _broken():
    raise RuntimeError("the server is down")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (Says(True), True),
        (Says(False), False),
        (Says(_yes), True),
        (Says(_broken), False),
        (Says("yes"), False),
        (object(), False),
    ],
)
def test_whether_a_model_takes_images_is_its_own_word_and_no_when_it_cannot_say(model, expected):
    import asyncio

    assert asyncio.run(accepts_images(model)) is expected


@tool
def snapshot() -> str:
    """Take a picture."""
    return McpText("Here it is:\n[image: image/png]", media=(McpImage(PNG, "image/png"),))


def answers(messages, tools):
    if messages[-1]["role"] == "user" and "<tool_response" in messages[-1]["content"]:
        return "I see it."
    return '<tool_call>{"name": "snapshot", "arguments": {}}</tool_call>'


@pytest.mark.parametrize("sees", [True, False])
def test_the_model_that_can_see_gets_the_image_with_the_text_and_the_other_the_text_alone(sees):
    model = FunctionModel(answers)
    model.accepts_images = sees
    agent = Agent(model, tools=[snapshot])
    assert agent.run("Take a picture").text == "I see it."
    carried = model.requests[1].messages[-1]
    assert carried["content"].startswith('<tool_response name="snapshot">\nHere it is:\n[image: image/png]\n')
    assert carried.get("images") == ([b64(PNG)] if sees else None)
    assert ("images" in agent.messages[-2]) is sees  # the history keeps what the model was sent
