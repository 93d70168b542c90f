"""A call being written, reported as it grows (`PartialCall`), for display only.

The parser reports an open call's progress only when asked (`ToolCallParser(partial_calls=True)`,
as the ``xml`` protocol does); the other events stay exactly what they are without it, however
the answer is split, and nothing a partial call says ever runs.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from meowgent_nb import Agent, ScriptedModel, ToolCall, tool
from meowgent_nb.events import PartialCall, TextDelta, ThinkingDelta, ToolCallEvent, ToolResultEvent
from meowgent_nb.models import ModelChunk
from meowgent_nb.protocols.native import NativeCallParser
from meowgent_nb.protocols.parsing import MalformedCall, ToolCallParser, parse_tool_calls

WEATHER = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
ANSWERS = [
    WEATHER,
    "Let me look. " + WEATHER + " And Oslo: " + WEATHER.replace("Paris", "Oslo"),
    '<tool_call>\n```json\n[{"name": "a", "arguments": {}}, {"name": "b"}]\n```\n</tool_call>',
    '<tool_call>{"name": "x", "arguments": {"text": "use </tool_call> to end"}}</tool_call>',
    '<tool_call>{"name": "first"}<tool_call>{"name": "second"}</tool_call>',  # the first was never closed
    '<tool_call>{"name": "cut", "arguments": {"a": "b',  # the answer ends inside the call
    "<tool_call>not json</tool_call> then text",
    '<think>maybe <tool_call>{"name": "no"}</tool_call></think>Fine.',
    '{"name": "bare", "arguments": {"k": 1}}',
    '```json\n{"name": "fenced", "arguments": {}}\n```',
    '{"name": "Bob", "age": 3}',  # JSON that starts like a call but is an answer
    '{"answer": 42}',
    "plain text only",
]


def events(chunks, *, partial_calls=True):
    parser = ToolCallParser(partial_calls=partial_calls)
    out = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out + parser.close()


def merged(events_):
    out = []
    for event in events_:
        if out and isinstance(event, (TextDelta, ThinkingDelta)) and type(out[-1]) is type(event):
            out[-1] = type(event)(out[-1].text + event.text)
        else:
            out.append(event)
    return out


def test_a_call_fills_in_as_it_streams():
    chunks = [
        'Checking. <tool_call>{"na',
        'me": "get_weather", "argu',
        'ments": {"city": "Pa',
        'ris"}}</tool_call>',
    ]
    assert events(chunks) == [
        TextDelta("Checking."),
        PartialCall(None, '{"na'),
        PartialCall("get_weather", '{"name": "get_weather", "argu'),
        PartialCall("get_weather", '{"name": "get_weather", "arguments": {"city": "Pa'),
        ToolCall("get_weather", {"city": "Paris"}),
    ]


def test_a_call_split_into_single_characters_reports_every_step():
    body = '{"name": "now", "arguments": {}}'
    named = len('{"name": "now"')  # the name is known once its closing quote is written
    expected = [PartialCall(None, "")]  # the tag alone already says a call is being written
    expected += [PartialCall(None if i < named else "now", body[:i]) for i in range(1, len(body) + 1)]
    # "</tool_call>" is held back character by character: it adds nothing to the call's text.
    assert events(list("<tool_call>" + body + "</tool_call>")) == [*expected, ToolCall("now", {})]


@pytest.mark.parametrize("answer", ANSWERS)
def test_partial_calls_change_nothing_else_however_the_answer_is_split(answer):
    whole = parse_tool_calls(answer)
    for at in range(len(answer) + 1):
        seen = events([answer[:at], answer[at:]])
        assert merged([e for e in seen if not isinstance(e, PartialCall)]) == whole
        assert merged(events([answer[:at], answer[at:]], partial_calls=False)) == whole
    singles = events(list(answer))
    assert merged([e for e in singles if not isinstance(e, PartialCall)]) == whole


@pytest.mark.parametrize("answer", ANSWERS)
def test_a_partial_call_only_grows_and_comes_before_what_it_becomes(answer):
    seen = events(list(answer))
    previous = None
    for index, event in enumerate(seen):
        if not isinstance(event, PartialCall):
            previous = None
            continue
        if previous is not None:
            assert event.text.startswith(previous.text) and len(event.text) > len(previous.text)
            assert previous.name is None or event.name == previous.name
        previous = event
        # What follows a partial call is more of it, or what it turned out to be: never nothing.
        assert index + 1 < len(seen)


def test_which_answers_show_a_call_being_written():
    def names(answer):
        return [e.name for e in events(list(answer)) if isinstance(e, PartialCall)][-1:]

    assert names(WEATHER) == ["get_weather"]
    assert names('{"name": "bare", "arguments": {"k": 1}}') == ["bare"]
    assert names('```json\n{"name": "fenced", "arguments": {}}\n```') == ["fenced"]
    assert names('<tool_call>[{"name": "a"}, {"name": "b"}]</tool_call>') == ["a"]
    assert names('<tool_call>{"name": "get\\u005fweather"}</tool_call>') == ["get_weather"]
    assert names('<tool_call>{"arguments": {}, "name": "late"}</tool_call>') == [None]
    # A held bare answer is a call being written only once it starts like one.
    assert names('{"answer": 42}') == [] and names("plain text") == []
    assert names('{"name": "Bob", "age": 3}') == ["Bob"]  # shown, then read as text: the display drops it
    assert events(['{"name": "Bob", "age": 3}'])[-1] == TextDelta('{"name": "Bob", "age": 3}')
    # Tags inside thinking are thinking.
    assert names("<think><tool_call>{}</tool_call>") == []


def test_only_the_xml_protocol_asks_for_partial_calls():
    assert not any(isinstance(e, PartialCall) for e in events(list(WEATHER), partial_calls=False))
    native = NativeCallParser()
    seen = [e for chunk in WEATHER for e in native.feed(chunk)] + native.close()
    assert seen == [ToolCall("get_weather", {"city": "Paris"})]


ran: list[dict] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    ran.append({"a": a, "b": b})
    return a + b


def run(turns) -> list:
    async def collect():
        return [event async for event in Agent(ScriptedModel(turns), tools=[add], max_turns=2).stream("Go.")]

    return asyncio.run(collect())


def test_a_call_cut_off_while_it_was_written_never_runs():
    ran.clear()
    cut = [
        '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2',
        ModelChunk(done=True, finish_reason="length"),
    ]
    seen = run([cut, "Sorry."])
    partial = [e for e in seen if isinstance(e, PartialCall)]
    assert partial[-1] == PartialCall("add", '{"name": "add", "arguments": {"a": 1, "b": 2')
    (call,) = [e.call for e in seen if isinstance(e, ToolCallEvent)]
    assert call.name == "(unreadable)"
    (result,) = [e.result for e in seen if isinstance(e, ToolResultEvent)]
    assert result.kind == "parse_error" and ran == []


def test_the_agent_passes_partial_calls_on_in_order():
    ran.clear()
    text = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    seen = run([list(text), "3."])
    kinds = [type(e).__name__ for e in seen]
    first, last = kinds.index("PartialCall"), len(kinds) - 1 - kinds[::-1].index("PartialCall")
    assert kinds[first : last + 1] == ["PartialCall"] * (last - first + 1)
    assert kinds[last + 1] == "ToolCallEvent" and ran == [{"a": 1, "b": 2}]
    assert seen[last] == PartialCall("add", json.dumps({"name": "add", "arguments": {"a": 1, "b": 2}}))
    assert not any(isinstance(e, MalformedCall) for e in seen)
