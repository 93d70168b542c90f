"""The ``decide`` protocol (issue 49): ``xml``'s prompt decides, a list after the tag writes every call.

What the embedded model does with it is in tests/models/test_llama_decode.py (the list's grammar
after the tag, on a scripted sampler) and docs/benchmarks.md (BFCL); here the prompt, the
request, the reading of answers and the turn through the agent, with exact values.
"""

from __future__ import annotations

import pytest

from meowgent_nb import Agent, ScriptedModel, ToolCall, tool
from meowgent_nb.events import TextDelta
from meowgent_nb.protocols import RequestParts, get_protocol
from meowgent_nb.protocols.decide import DecideProtocol
from meowgent_nb.protocols.list import list_schema
from meowgent_nb.protocols.parsing import PartialCall
from meowgent_nb.protocols.prompt import RESULTS_NOTICE


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


@tool
def gcd(a: int, b: int) -> int:
    """The greatest common divisor."""
    import math

    return math.gcd(a, b)


PROTOCOL = get_protocol("decide")
TOOLS = [get_weather, gcd]


def read(text, chunks=None):
    parser = PROTOCOL.parser(TOOLS)
    events = [e for chunk in (chunks or [text]) for e in parser.feed(chunk)] + parser.close("stop")
    merged = []
    for event in events:
        if isinstance(event, PartialCall):
            continue  # for display only; the complete call follows
        if merged and isinstance(event, TextDelta) and isinstance(merged[-1], TextDelta):
            merged[-1] = TextDelta(merged[-1].text + event.text)
        else:
            merged.append(event)
    return merged


def test_the_registry_names_it_decide():
    assert isinstance(PROTOCOL, DecideProtocol) and PROTOCOL.name == "decide"


def test_the_system_prompt_is_the_xml_protocols_so_the_decision_is_too():
    # Same prompt, same first tokens: the model answers in text exactly where `xml` does.
    xml = get_protocol("xml")
    assert PROTOCOL.system_prompt(TOOLS, "Be brief.") == xml.system_prompt(TOOLS, "Be brief.")
    assert PROTOCOL.system_prompt((), None) == "You are a helpful assistant."


def test_the_request_sends_the_lists_schema_after_the_tag_and_nothing_on_the_last_turn():
    assert PROTOCOL.request(TOOLS, last=False) == RequestParts(
        call_format=list_schema(TOOLS), call_tag="<tool_call>", call_grounding=True
    )
    assert PROTOCOL.request(TOOLS, last=True) == RequestParts()
    assert PROTOCOL.request((), last=False) == RequestParts()


def test_the_second_look_is_asked_for_unless_switched_off():
    from meowgent_nb.protocols.decide import DecideProtocol
    from meowgent_nb.protocols.registry import BASELINES

    unchecked = DecideProtocol(grounding=False)
    assert unchecked.request(TOOLS, last=False).call_grounding is False
    assert repr(PROTOCOL) == "DecideProtocol()"
    assert repr(unchecked) == "DecideProtocol(grounding=False)"
    assert repr(DecideProtocol(thinking_first=True)) == "DecideProtocol(thinking_first=True)"
    assert repr(BASELINES["decide-unchecked"]) == "DecideProtocol(grounding=False)"  # what benchmarks compare


PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
ROME = '{"name": "get_weather", "arguments": {"city": "Rome"}}'
GCD = '{"name": "gcd", "arguments": {"a": 12, "b": 18}}'
ANSWERS = {
    # what the embedded model writes: the tag, the list under its grammar, the tag the product closes
    f"<tool_call>[{PARIS}, {GCD}]\n</tool_call>": [
        ToolCall("get_weather", {"city": "Paris"}),
        ToolCall("gcd", {"a": 12, "b": 18}),
    ],
    f"<tool_call>[{PARIS}]\n</tool_call>": [ToolCall("get_weather", {"city": "Paris"})],
    f"Checking both.\n<tool_call>[{PARIS}, {ROME}]\n</tool_call>": [
        TextDelta("Checking both."),
        ToolCall("get_weather", {"city": "Paris"}),
        ToolCall("get_weather", {"city": "Rome"}),
    ],
    # what a backend without the grammar may get back: xml's own calls, read as xml reads them
    f"<tool_call>\n{PARIS}\n</tool_call>\n<tool_call>\n{GCD}\n</tool_call>": [
        ToolCall("get_weather", {"city": "Paris"}),
        ToolCall("gcd", {"a": 12, "b": 18}),
    ],
    "I have no tool for that; Paris is the capital of France.": [
        TextDelta("I have no tool for that; Paris is the capital of France.")
    ],
}


@pytest.mark.parametrize(("text", "expected"), ANSWERS.items())
def test_an_answer_is_text_or_the_calls_inside_the_tag(text, expected):
    assert read(text) == expected
    for at in range(len(text) + 1):
        assert read(text, [text[:at], text[at:]]) == expected, at


def test_a_list_turn_runs_every_call_and_sends_the_results_back_as_xml_does():
    answer = f"<tool_call>[{PARIS}, {ROME}]\n</tool_call>"
    model = ScriptedModel([answer, "Sunny in both."])
    result = Agent(model, tools=TOOLS, protocol="decide", system="S.").run("Weather in Paris and Rome?")
    assert [(r.call.arguments, r.output) for r in result.tool_results] == [
        ({"city": "Paris"}, "Sunny in Paris"),
        ({"city": "Rome"}, "Sunny in Rome"),
    ]
    assert (result.text, result.turns) == ("Sunny in both.", 2)
    first, second = model.requests
    assert (first.call_format, first.call_tag) == (list_schema(TOOLS), "<tool_call>")
    assert first.messages[0] == {"role": "system", "content": get_protocol("xml").system_prompt(TOOLS, "S.")}
    assert second.messages[-2:] == [
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": '<tool_response name="get_weather">\nSunny in Paris\n</tool_response>\n'
            f'<tool_response name="get_weather">\nSunny in Rome\n</tool_response>\n{RESULTS_NOTICE}',
        },
    ]


def test_a_text_answer_is_the_answer_and_runs_nothing():
    model = ScriptedModel(["Paris is the capital of France."])
    result = Agent(model, tools=TOOLS, protocol="decide").run("What is the capital of France?")
    assert (result.text, result.tool_results, result.turns) == ("Paris is the capital of France.", [], 1)
