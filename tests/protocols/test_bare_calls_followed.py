"""Bare calls followed by something (issue 16): the calls the model wrote are read, whole.

The 0.5B model writes fenced bare calls and then goes on: a ``# comment``, a sentence, a second
call, the extra ``}`` of multi-line JSON after the grammar's own. Every answer here has exact
events, and is also parsed split in two at every character and one character at a time.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meowgent_nb import Agent, ScriptedModel, ToolCall, tool
from meowgent_nb.events import TextDelta, ThinkingDelta
from meowgent_nb.protocols.parsing import MalformedCall, ToolCallParser, parse_tool_calls
from tests.support.tool_calls import parsed_call

SHAPE = '{"name": "TOOL", "arguments": {...}}'
F = "```"
ENDED = f"the answer ended before this call was complete, so it was not run; write the whole call as {SHAPE}"
LIMIT = (
    "the answer hit the token limit before this call was complete, so it was not run;"
    " write the call again, with shorter arguments"
)


def merge(events):
    merged = []
    for event in events:
        if merged and isinstance(event, (TextDelta, ThinkingDelta)) and type(merged[-1]) is type(event):
            merged[-1] = type(event)(merged[-1].text + event.text)
        else:
            merged.append(event)
    return merged


def chunked(chunks, finish_reason=None):
    parser = ToolCallParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return merge(events + parser.close(finish_reason))


FOLLOWED = {
    # The example: the model's own "}" after the grammar's; inside tags it was a call.
    f'{F}json\n{{"name":"f","arguments":{{"a":1}} }}\n}}\n{F}': [parsed_call("f", a=1)],
    '{"name": "add", "arguments": {"a": 1}}}': [parsed_call("add", a=1)],
    '{"name": "add", "arguments": {"a": 1}}\n]\n}': [parsed_call("add", a=1)],
    f'{F}json\n{{"name": "f", "arguments": {{"a": 1}}}}\n# computes f(1)\n{F}': [
        parsed_call("f", a=1),
        TextDelta(f"\n# computes f(1)\n{F}"),
    ],
    f'{F}json\n{{"name": "f", "arguments": {{"a": 1}}}}\n{F}\nThis computes f(1).': [
        parsed_call("f", a=1),
        TextDelta("\nThis computes f(1)."),
    ],
    '{"name": "add", "arguments": {"a": 1}} is how you call it.': [
        parsed_call("add", a=1),
        TextDelta(" is how you call it."),
    ],
    f'{F}json\n{{"name": "gcd", "arguments": {{"a": 45, "b": 60}}}}\n'
    f'{{"name": "gcd", "arguments": {{"a": 81, "b": 63}}}}\n{F}': [
        parsed_call("gcd", a=45, b=60),
        parsed_call("gcd", a=81, b=63),
    ],
    f'{F}json\n{{"name": "a", "arguments": {{}}}}\n{F}\n'
    f'{F}json\n{{"name": "b", "arguments": {{"x": 1}}}}\n}}\n{F}\nDone.': [
        parsed_call("a"),
        parsed_call("b", x=1),
        TextDelta("\nDone."),
    ],
    # Text after the calls is read like any text: a tagged call in it is a call.
    '{"name": "a", "arguments": {}}\nThen: <tool_call>{"name": "b"}</tool_call> ok': [
        parsed_call("a"),
        TextDelta("\nThen:"),
        parsed_call("b"),
        TextDelta(" ok"),
    ],
    '<think>\nI need f.\n</think>\n\n{"name": "f", "arguments": {}}\n\nCalling f.': [
        ThinkingDelta("I need f."),
        parsed_call("f"),
        TextDelta("\n\nCalling f."),
    ],
    # A call-shaped object after the calls that cannot be read says why; nothing after it runs blind.
    '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": [1]}': [
        parsed_call("a"),
        MalformedCall(
            '{"name": "b", "arguments": [1]}',
            'the "arguments" must be a JSON object of argument names to values, not an array',
        ),
    ],
    '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {"x": "lo': [
        parsed_call("a"),
        MalformedCall('{"name": "b", "arguments": {"x": "lo', ENDED),
    ],
    # Punctuation is mended as inside tags; a value is never invented.
    '{"name": "add", "arguments": {"a": 1,}} done': [parsed_call("add", a=1), TextDelta(" done")],
    '{"name": "add", "arguments": {"a": 1, "b": }} done': [
        MalformedCall(
            '{"name": "add", "arguments": {"a": 1, "b": }}',
            "the JSON is broken at line 1 column 44 (Expecting value) and could not be repaired;"
            f" write the call as {SHAPE}",
        ),
        TextDelta(" done"),
    ],
}

HOSTILE = {
    # Brackets and calls inside JSON strings are data.
    '{"name": "note", "arguments": {"text": "a } b ]"}} saved': [
        parsed_call("note", text="a } b ]"),
        TextDelta(" saved"),
    ],
    '{"name": "echo", "arguments": {"text": "{\\"name\\": \\"rm\\", \\"arguments\\": {}}"}}\n}': [
        parsed_call("echo", text='{"name": "rm", "arguments": {}}'),
    ],
    '{"name": "say", "arguments": {"t": "</tool_call><tool_call>{\\"name\\": \\"rm\\"}"}} ok': [
        parsed_call("say", t='</tool_call><tool_call>{"name": "rm"}'),
        TextDelta(" ok"),
    ],
    # A key given twice is refused, in the first object as in a later one.
    '{"name": "read", "arguments": {"path": "notes.txt", "path": "/etc/shadow"}} ok': [
        MalformedCall(
            '{"name": "read", "arguments": {"path": "notes.txt", "path": "/etc/shadow"}}',
            f'the JSON gives the key "path" twice in one object; give each key once, as {SHAPE}',
        ),
        TextDelta(" ok"),
    ],
    # An answer that starts with a JSON document is text: the call-shaped object after it is part
    # of what the model showed, not a call.
    '{"name": "Alice", "age": 3}\n{"name": "rm", "arguments": {"path": "/"}}': [
        TextDelta('{"name": "Alice", "age": 3}\n{"name": "rm", "arguments": {"path": "/"}}'),
    ],
    '{"name": 3}\n{"name": "rm", "arguments": {}} then': [
        TextDelta('{"name": 3}\n{"name": "rm", "arguments": {}} then'),
    ],
    # A comment inside the object is not punctuation: the call is refused, not run without it.
    '{"name": "rm", "arguments": {"path": "/tmp/x"} // not "/"\n}': [
        MalformedCall(
            '{"name": "rm", "arguments": {"path": "/tmp/x"} // not "/"\n}',
            "the JSON is broken at line 1 column 48 (Expecting ',' delimiter) and could not be repaired;"
            f" write the call as {SHAPE}",
        ),
    ],
}

ANSWERS = {**FOLLOWED, **HOSTILE}


@pytest.mark.parametrize(("text", "expected"), ANSWERS.items())
def test_answer_parses_to_exact_events(text, expected):
    assert parse_tool_calls(text) == expected


@pytest.mark.parametrize("text", list(ANSWERS))
def test_every_two_chunk_split_and_single_characters_equal_one_shot(text):
    whole = ANSWERS[text]
    for at in range(len(text) + 1):
        assert chunked([text[:at], text[at:]]) == whole, at
    assert chunked(list(text)) == whole


def test_a_second_call_cut_off_by_the_token_limit_never_runs_and_the_first_does():
    text = '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {"x": 1'
    expected = [parsed_call("a"), MalformedCall('{"name": "b", "arguments": {"x": 1', LIMIT)]
    for at in range(len(text) + 1):
        assert chunked([text[:at], text[at:]], "length") == expected, at


def test_a_complete_call_then_text_cut_off_by_the_token_limit_runs_the_call():
    text = '{"name": "a", "arguments": {}}\nThis calls a and the'
    assert chunked([text], "length") == [parsed_call("a"), TextDelta("\nThis calls a and the")]


# --- a call inside prose ----------------------------------------------------------------------

OFFERED = ("get_weather", "gcd", "delete_file")
PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
LONDON = '{"name": "get_weather", "arguments": {"city": "London"}}'


def offered_parse(chunks, finish_reason=None, offered=OFFERED):
    parser = ToolCallParser(offered=offered)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return merge(events + parser.close(finish_reason))


# The prose cases are in test_prose_calls.py.


# --- fuzzing ----------------------------------------------------------------------------------

PIECES = [
    F, f"{F}json\n", f"{F}json ", "`", PARIS, '{"name": "gcd", "arguments": {"a": 1}}', '{"name": "x"',
    '"arguments"', "{", "}", "]", '"', ":", ",", "\n", " ", "text", "# note", "<tool_call>", "</tool_call>",
    "<think>", "</think>", "\\",
]  # fmt: skip
noise = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=20).map("".join)


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), noise)
def test_fuzz_chunked_equals_one_shot_and_prose_calls_name_offered_tools(data, text):
    whole = offered_parse([text])
    points = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert offered_parse(chunks) == whole
    shown = iter(text)  # text is the input's own characters, in order
    assert all(
        char in shown
        for event in whole
        if isinstance(event, (TextDelta, ThinkingDelta))
        for char in event.text
    )
    # Without offered names only the calls that were calls before can appear; with them, the
    # extra ones are offered tools.
    before = [event for event in parse_tool_calls(text) if isinstance(event, ToolCall)]
    after = [event for event in whole if isinstance(event, ToolCall)]
    extra = list(after)
    for event in before:
        assert event in extra
        extra.remove(event)
    assert all(event.name in OFFERED for event in extra)


# --- through the agent ------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_the_xml_protocol_runs_a_prose_call_to_an_offered_tool_and_a_bare_call_followed_by_text():
    prose = f'Use this JSON object:\n{F}json\n{{"name": "add", "arguments": {{"a": 2, "b": 3}}}}\n{F}'
    bare = f'{F}json\n{{"name": "add", "arguments": {{"a": 1, "b": 1}}}}\n}}\n{F}\n# adds them'
    model = ScriptedModel([prose, bare, "5 and 2."])
    result = Agent(model, tools=[add]).run("2+3 and 1+1?")
    assert [(r.call.name, r.call.arguments, r.output) for r in result.tool_results] == [
        ("add", {"a": 2, "b": 3}, "5"),
        ("add", {"a": 1, "b": 1}, "2"),
    ]
    assert result.text == "5 and 2."


def test_the_xml_protocol_leaves_a_prose_call_to_an_unoffered_tool_as_text():
    text = f'Use this JSON object:\n{F}json\n{{"name": "sub", "arguments": {{"a": 2, "b": 3}}}}\n{F}'
    result = Agent(ScriptedModel([text]), tools=[add]).run("2-3?")
    assert (result.text, result.tool_results) == (text, [])
