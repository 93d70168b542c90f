"""The ``list`` protocol on the real default model (``real_model``): two calls in one turn.

Under the ``xml`` protocol the 0.5B model writes one ``<tool_call>`` and ends its answer (its next
token is end-of-text, p=0.999); asked for a list, it writes both parts of a two-part request,
under the list's grammar (offered names, each tool's arguments). At temperature 0 with a fixed
seed the answers are exact.
"""

from __future__ import annotations

import asyncio

import pytest

from meowgent_nb import ToolCall, tool
from meowgent_nb.models import LlamaCppModel, ModelChunk, ModelRequest
from meowgent_nb.protocols import get_protocol
from tests.models.test_llamacpp_model import real_model


@pytest.fixture(autouse=True)
def _no_gguf_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"Sunny in {city}"


def delete_file(path: str) -> str:
    """Delete a file."""
    return f"Deleted {path}"


TOOLS = [tool(get_weather), tool(delete_file)]


@real_model
def test_a_two_part_request_is_answered_with_two_calls_in_one_turn():
    protocol = get_protocol("list")
    request = ModelRequest(
        messages=[
            {"role": "system", "content": protocol.system_prompt(TOOLS, None)},
            {"role": "user", "content": "What is the weather in Paris and in London?"},
        ],
        call_format=protocol.request(TOOLS, last=False).call_format,
    )
    model = LlamaCppModel(n_ctx=2048, max_tokens=96, temperature=0, seed=0)

    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]

    chunks = asyncio.run(run())
    text = "".join(chunk.text for chunk in chunks)
    assert text == (
        '[{"name": "get_weather", "arguments": {"city": "Paris"}},'
        ' {"name": "get_weather", "arguments": {"city": "London"}}]'
    )
    assert chunks[-1].finish_reason == "stop"
    parser = protocol.parser(TOOLS)
    assert parser.feed(text) + parser.close("stop") == [
        ToolCall("get_weather", {"city": "Paris"}),
        ToolCall("get_weather", {"city": "London"}),
    ]


def test_the_lists_grammar_is_bounded_as_the_arguments_grammar_and_compiles():
    pytest.importorskip("llama_cpp")
    import json

    from meowgent_nb.models._llama_grammar import GrammarCache, bounded
    from meowgent_nb.protocols.list import list_schema

    schema = bounded(list_schema(TOOLS))
    assert (schema["minItems"], schema["maxItems"]) == (1, 8)
    shapes = schema["items"]["anyOf"]
    assert [shape["properties"]["name"] for shape in shapes] == [
        {"const": "get_weather"},
        {"const": "delete_file"},
    ]
    assert shapes[0]["properties"]["arguments"]["properties"]["city"] == {"type": "string", "maxLength": 200}
    cache = GrammarCache()
    assert cache.of(json.dumps(schema), "tiny") is not None


@real_model
def test_decide_keeps_xmls_opening_and_writes_both_calls_in_the_list_after_it():
    # The opening is xml's (here a fenced call object); after it the list's grammar writes both
    # calls, and the product closes the fence. Both name a city the person wrote: the second look
    # keeps them.
    protocol = get_protocol("decide")
    parts = protocol.request(TOOLS, last=False)
    request = ModelRequest(
        messages=[
            {"role": "system", "content": protocol.system_prompt(TOOLS, None)},
            {"role": "user", "content": "What is the weather in Paris and in London?"},
        ],
        call_format=parts.call_format,
        call_tag=parts.call_tag,
        call_grounding=parts.call_grounding,
    )
    assert request.call_grounding is True
    model = LlamaCppModel(n_ctx=2048, max_tokens=96, temperature=0, seed=0)

    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]

    chunks = asyncio.run(run())
    text = "".join(chunk.text for chunk in chunks)
    assert text == (
        '```json\n[{"name": "get_weather", "arguments": {"city": "Paris"}},'
        ' {"name": "get_weather", "arguments": {"city": "London"}}]\n```'
    )
    assert chunks[-1].finish_reason == "stop"
    parser = protocol.parser(TOOLS)
    calls = [e for e in parser.feed(text) + parser.close("stop") if isinstance(e, ToolCall)]
    assert calls == [ToolCall("get_weather", {"city": "Paris"}), ToolCall("get_weather", {"city": "London"})]


@real_model
def test_decide_takes_back_a_list_of_made_up_calls_and_answers_in_text():
    # "Clean up my temporary files" names no file: the model's list deletes "/tmp/file.txt", a
    # path it made up. The second look takes it back before anything is shown, and
    # the model answers again in text, with no call tag, list or brace open to it.
    protocol = get_protocol("decide")
    parts = protocol.request(TOOLS, last=False)
    messages = [
        {"role": "system", "content": protocol.system_prompt(TOOLS, None)},
        {"role": "user", "content": "Clean up my temporary files please."},
    ]
    model = LlamaCppModel(n_ctx=2048, max_tokens=24, temperature=0, seed=0)

    async def run(grounding: bool) -> list[ModelChunk]:
        request = ModelRequest(
            messages=messages,
            call_format=parts.call_format,
            call_tag=parts.call_tag,
            call_grounding=grounding,
        )
        return [chunk async for chunk in model.stream(request)]

    first_look = asyncio.run(run(False))
    assert (
        "".join(c.text for c in first_look)
        == '[{"name": "delete_file", "arguments": {"path": "/tmp/file.txt"}}]'
    )
    assert first_look[-1].usage is not None and first_look[-1].usage.completion_tokens == 11 + 20
    chunks = asyncio.run(run(True))
    text = "".join(chunk.text for chunk in chunks)
    assert text.startswith("To clean up your temporary files, you can use the `rm` command"), text
    assert "{" not in text and "<tool_call>" not in text
    parser = protocol.parser(TOOLS)
    assert [e for e in parser.feed(text) + parser.close("length") if isinstance(e, ToolCall)] == []
    usage = chunks[-1].usage
    # Counted: the object read until it named delete_file (11 tokens), the list the grammar wrote
    # from its "{" and the review took back (20), the answer (24).
    assert usage is not None and usage.completion_tokens == 11 + 20 + 24
    assert chunks[-1].finish_reason == "length"


@real_model
def test_decide_leaves_a_json_object_asked_for_as_the_answer_in_text():
    # The 0.5B answers with the object itself, "{" first, as it writes a call object. It opens no
    # list: its first key is "name" but its second is not "arguments", and "Alice" is no tool.
    protocol = get_protocol("decide")
    parts = protocol.request(TOOLS, last=False)
    request = ModelRequest(
        messages=[
            {"role": "system", "content": protocol.system_prompt(TOOLS, None)},
            {
                "role": "user",
                "content": "Write a JSON object with the keys name and age for Alice, who is 30.",
            },
        ],
        call_format=parts.call_format,
        call_tag=parts.call_tag,
        call_grounding=parts.call_grounding,
    )
    model = LlamaCppModel(n_ctx=2048, max_tokens=48, temperature=0, seed=0)

    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]

    chunks = asyncio.run(run())
    assert "".join(chunk.text for chunk in chunks) == '{"name": "Alice", "age": 30}'
    assert chunks[-1].finish_reason == "stop"
