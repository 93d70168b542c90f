"""How the embedded model's constrained calls end, on the real default model (``real_model``).

At temperature 0 with a fixed seed the answers are exact. The requests are the ``xml``
protocol's: its system prompt, and the call schema that constrains each call's arguments.
"""

from __future__ import annotations

import asyncio

import pytest

from meowgent_nb import Tool, ToolCall
from meowgent_nb.models import LlamaCppModel, ModelChunk, ModelRequest
from meowgent_nb.protocols.parsing import ToolCallParser
from meowgent_nb.protocols.xml import XmlProtocol
from tests.models.test_llamacpp_model import real_model


@pytest.fixture(autouse=True)
def _no_gguf_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


@pytest.fixture(scope="module")
def model() -> LlamaCppModel:
    return LlamaCppModel(n_ctx=2048, max_tokens=64)


def songs_tool(album: dict) -> Tool:
    return Tool.from_schema(
        "find_songs",
        "Find songs.",
        {
            "type": "object",
            "properties": {"album": album, "genre": {"type": "string", "description": "The genre."}},
            "required": ["album", "genre"],
        },
        lambda **arguments: "",
    )


def answer(model: LlamaCppModel, tool: Tool, question: str) -> tuple[str, list[ModelChunk]]:
    protocol = XmlProtocol()
    parts = protocol.request([tool], last=False)
    request = ModelRequest(
        messages=[
            {"role": "system", "content": protocol.system_prompt([tool], None)},
            {"role": "user", "content": question},
        ],
        call_format=parts.call_format,
        call_tag=parts.call_tag,
    )

    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]

    chunks = asyncio.run(run())
    return "".join(chunk.text for chunk in chunks), chunks


def calls_in(text: str, finish_reason: str | None) -> list[tuple[str, dict]]:
    parser = ToolCallParser()
    events = parser.feed(text) + parser.close(finish_reason)
    return [(event.name, dict(event.arguments)) for event in events if isinstance(event, ToolCall)]


QUESTION = "Find songs of the album 'Dark Side of the Moon', genre rock."
# The product writes the last "}" and the closing fence (after the grammar's optional space).
MULTI_LINE = '```json\n{\n  "name": "find_songs",\n  "arguments":{"album": "Dark Side of the Moon", "genre": "rock"} }\n```'
BOUNDED = '```json\n{\n  "name": "find_songs",\n  "arguments":{"album": "Dark Side", "genre": "rock"} }\n```'


@real_model
def test_a_multi_line_call_ends_right_after_its_arguments(model):
    """The model opens the call on several lines; before, it closed it with a ``\\n}`` of its
    own after the product's ``}``, and the stray ``}`` made the answer text."""
    tool = songs_tool({"type": "string", "description": "The album's title."})
    text, chunks = answer(model, tool, QUESTION)
    assert text == MULTI_LINE
    assert chunks[-1].finish_reason == "stop"
    assert calls_in(text, "stop") == [("find_songs", {"album": "Dark Side of the Moon", "genre": "rock"})]


@real_model
def test_a_string_argument_is_bounded_and_the_call_still_closes(model):
    tool = songs_tool({"type": "string", "maxLength": 9, "description": "The album's title."})
    text, chunks = answer(model, tool, QUESTION)
    assert text == BOUNDED
    assert chunks[-1].finish_reason == "stop"
    assert calls_in(text, "stop") == [("find_songs", {"album": "Dark Side", "genre": "rock"})]
