"""The ``list`` protocol (issue 31): the model answers in text or with a JSON list of calls.

What a real model writes under it is in tests/models/test_llama_list.py (``real_model``); here
the prompt, the request, the reading of answers and the turn through the agent, with exact values.
"""

from __future__ import annotations

import threading
import time

import pytest

from meowgent_nb import Agent, ScriptedModel, ToolCall, render_tools_xml, tool
from meowgent_nb.events import TextDelta
from meowgent_nb.protocols import RequestParts, get_protocol
from meowgent_nb.protocols.list import LIST_TOOL_RULES, ListProtocol, list_schema
from meowgent_nb.protocols.parsing import MalformedCall
from meowgent_nb.protocols.prompt import RESULTS_NOTICE

F = "```"


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


@tool
def gcd(a: int, b: int) -> int:
    """The greatest common divisor."""
    import math

    return math.gcd(a, b)


PROTOCOL = get_protocol("list")
TOOLS = [get_weather, gcd]


def read(text, chunks=None):
    parser = PROTOCOL.parser(TOOLS)
    events = [e for chunk in (chunks or [text]) for e in parser.feed(chunk)] + parser.close("stop")
    merged = []
    for event in events:
        if merged and isinstance(event, TextDelta) and isinstance(merged[-1], TextDelta):
            merged[-1] = TextDelta(merged[-1].text + event.text)
        else:
            merged.append(event)
    return merged


def test_the_registry_names_it_list():
    assert isinstance(PROTOCOL, ListProtocol) and PROTOCOL.name == "list"


def test_the_system_prompt_has_the_list_rules_and_the_tools_block():
    assert PROTOCOL.system_prompt(TOOLS, "Be brief.") == "Be brief.\n\n" + LIST_TOOL_RULES.replace(
        "{tools}", render_tools_xml(TOOLS)
    )
    assert PROTOCOL.system_prompt((), None) == "You are a helpful assistant."


def test_the_request_sends_the_lists_schema_and_nothing_on_the_last_turn():
    shapes = [
        {
            "type": "object",
            "properties": {"name": {"const": tool.name}, "arguments": tool.parameters},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for tool in TOOLS
    ]
    schema = {"type": "array", "items": {"anyOf": shapes}, "minItems": 1, "maxItems": 8}
    assert list_schema(TOOLS) == schema
    assert PROTOCOL.request(TOOLS, last=False) == RequestParts(call_format=schema)
    assert PROTOCOL.request(TOOLS, last=True) == RequestParts()
    assert PROTOCOL.request((), last=False) == RequestParts()


PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
GCD = '{"name": "gcd", "arguments": {"a": 12, "b": 18}}'
ANSWERS = {
    f"[{PARIS}, {GCD}]": [ToolCall("get_weather", {"city": "Paris"}), ToolCall("gcd", {"a": 12, "b": 18})],
    f"[\n  {PARIS},\n  {GCD}\n]": [
        ToolCall("get_weather", {"city": "Paris"}),
        ToolCall("gcd", {"a": 12, "b": 18}),
    ],
    f"{F}json\n[{PARIS}]\n{F}": [ToolCall("get_weather", {"city": "Paris"})],
    f"[{PARIS}": [ToolCall("get_weather", {"city": "Paris"})],  # the decoder drops a "]" held back
    f"Sure: [{GCD}]": [TextDelta("Sure:"), ToolCall("gcd", {"a": 12, "b": 18})],
    "Paris is the capital of France.": [TextDelta("Paris is the capital of France.")],
    "[1, 2] is a list.": [TextDelta("[1, 2] is a list.")],
    f'[{PARIS}, {{"name": "gcd", "arguments": {{"a": 1}}, "b": 2}}]': [
        ToolCall("get_weather", {"city": "Paris"}),
        MalformedCall(
            '{"name": "gcd", "arguments": {"a": 1}, "b": 2}',
            'the call has keys besides "name" and "arguments" ("b"); write it as {"name": "TOOL", "arguments": {...}}',
        ),
    ],
}


@pytest.mark.parametrize(("text", "expected"), ANSWERS.items())
def test_an_answer_is_text_or_a_list_of_calls(text, expected):
    assert read(text) == expected
    for at in range(len(text) + 1):
        assert read(text, [text[:at], text[at:]]) == expected, at


def test_a_list_turn_runs_its_calls_in_parallel_and_sends_the_results_back_in_order():
    started = threading.Barrier(2, timeout=5)  # both calls must be running at once to pass it

    @tool
    def slow_weather(city: str) -> str:
        """The weather, slowly."""
        started.wait()
        time.sleep(0.05 if city == "Paris" else 0)  # Paris finishes last, and still comes first
        return f"Sunny in {city}"

    answer = '[{"name": "slow_weather", "arguments": {"city": "Paris"}}, {"name": "slow_weather", "arguments": {"city": "Rome"}}]'
    model = ScriptedModel([answer, "Sunny in both."])
    result = Agent(model, tools=[slow_weather], protocol="list").run("Weather in Paris and Rome?")
    assert [(r.call.arguments, r.output) for r in result.tool_results] == [
        ({"city": "Paris"}, "Sunny in Paris"),
        ({"city": "Rome"}, "Sunny in Rome"),
    ]
    assert result.text == "Sunny in both."
    assert result.turns == 2
    results = model.requests[1].messages[-1]
    assert results == {
        "role": "user",
        "content": '<tool_response name="slow_weather">\nSunny in Paris\n</tool_response>\n'
        f'<tool_response name="slow_weather">\nSunny in Rome\n</tool_response>\n{RESULTS_NOTICE}',
    }
    assert model.requests[0].messages[0] == {
        "role": "system",
        "content": PROTOCOL.system_prompt([slow_weather], None),
    }
    assert model.requests[1].messages[-2] == {"role": "assistant", "content": answer}


def test_through_ollamas_wire_a_list_answer_runs_its_calls_and_no_format_is_sent(httpserver, monkeypatch):
    # Ollama's structured output (format=) would constrain the whole answer, and text is an
    # outcome here: the request carries no format, and the streamed list is read leniently.
    import json

    import meowgent_nb.models
    from meowgent_nb.models import OllamaModel
    from tests.support.ollama_wire import FINAL, MODEL, ndjson, part

    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    answer = f"```json\n[{PARIS},\n {GCD}]\n```"
    pieces = [answer[i : i + 7] for i in range(0, len(answer), 7)]
    bodies = iter([ndjson(*map(part, pieces), FINAL), ndjson(part("Sunny; 6."), FINAL)])
    sent = []

    def respond(request):
        from werkzeug import Response

        sent.append(json.loads(request.data))
        return Response(next(bodies), content_type="application/x-ndjson")

    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(respond)
    model = OllamaModel(MODEL, host=f"http://{httpserver.host}:{httpserver.port}")
    result = Agent(model, tools=TOOLS, protocol="list").run("Weather in Paris, and gcd of 12 and 18?")
    assert [(r.call.name, r.output) for r in result.tool_results] == [
        ("get_weather", "Sunny in Paris"),
        ("gcd", "6"),
    ]
    assert result.text == "Sunny; 6."
    assert [(body.get("format"), body.get("tools")) for body in sent] == [(None, []), (None, [])]
