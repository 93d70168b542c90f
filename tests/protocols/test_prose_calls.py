"""Calls inside prose (issue 31): every call-shaped object naming an offered tool is a call or a
`MalformedCall` that says why, never silent text.

The issue's example came from the embedded model through a real OpenAI-compatible server: prose,
a bare call on its own line, then a stray fence. Each answer here has exact events, and is also
parsed split in two at every character and one character at a time.
"""

from __future__ import annotations

import pytest

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.events import TextDelta, ThinkingDelta
from meowgent_nb.protocols.parsing import MalformedCall, ToolCallParser, parse_tool_calls
from tests.support.tool_calls import parsed_call

F = "```"
SHAPE = '{"name": "TOOL", "arguments": {...}}'
OFFERED = ("get_weather", "gcd", "delete_file")
PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
LONDON = '{"name": "get_weather", "arguments": {"city": "London"}}'
GCD1 = '{"name": "gcd", "arguments": {"a": 45, "b": 60}}'
GCD2 = '{"name": "gcd", "arguments": {"a": 81, "b": 63}}'


def parse(chunks, finish_reason=None, offered=OFFERED):
    parser = ToolCallParser(offered=offered)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    merged = []
    for event in events + parser.close(finish_reason):
        if merged and isinstance(event, (TextDelta, ThinkingDelta)) and type(merged[-1]) is type(event):
            merged[-1] = type(event)(merged[-1].text + event.text)
        else:
            merged.append(event)
    return merged


def every_split(text, expected, finish_reason=None):
    assert parse([text], finish_reason) == expected
    for at in range(len(text) + 1):
        assert parse([text[:at], text[at:]], finish_reason) == expected, at
    assert parse(list(text), finish_reason) == expected


CALLS = {
    # The issue's example: a bare call after prose, then a stray fence.
    f"Here is the response:\n{PARIS}\n{F}": [
        TextDelta("Here is the response:"),
        parsed_call("get_weather", city="Paris"),
    ],
    # The same class: other prose, other tools, stray or unbalanced fences and closers.
    f"Sure thing.\n\n{GCD1}\n{F}\n{F}": [TextDelta("Sure thing."), parsed_call("gcd", a=45, b=60)],
    f"Sure thing.\n{GCD1}}}\n]": [TextDelta("Sure thing."), parsed_call("gcd", a=45, b=60)],
    f"Here: {PARIS} ok": [TextDelta("Here:"), parsed_call("get_weather", city="Paris"), TextDelta(" ok")],
    f"Calling:\n{F}JSON\n{PARIS}": [
        TextDelta("Calling:"),
        parsed_call("get_weather", city="Paris"),
    ],  # left open
    f"Calling:\n{F}python\n{PARIS}\n{F}": [TextDelta("Calling:"), parsed_call("get_weather", city="Paris")],
    f"To check, I call:\n{F}json\n{PARIS}\n{F}\n": [
        TextDelta("To check, I call:"),
        parsed_call("get_weather", city="Paris"),
    ],
    f'Note:\n{F}json\n{{"name": "get_weather", "arguments": {{"city": "{F} }}"}}}}\n{F}': [
        TextDelta("Note:"),
        parsed_call("get_weather", city=f"{F} }}"),
    ],
    # Several: one fence, several fences, a list, calls with prose between them.
    f"Both:\n{F}json\n{PARIS}\n{LONDON}\n{F}": [
        TextDelta("Both:"),
        parsed_call("get_weather", city="Paris"),
        parsed_call("get_weather", city="London"),
    ],
    f"Two gcds:\n{F}json\n{GCD1}\n{F}\n{F}\n{GCD2}\n{F}": [
        TextDelta("Two gcds:"),
        parsed_call("gcd", a=45, b=60),
        parsed_call("gcd", a=81, b=63),
    ],
    f"Two gcds: [{GCD1}, {GCD2}]": [
        TextDelta("Two gcds:"),
        parsed_call("gcd", a=45, b=60),
        parsed_call("gcd", a=81, b=63),
    ],
    f"Two gcds:\n{F}json\n[\n  {GCD1},\n  {GCD2}\n]\n{F}\nDone.": [
        TextDelta("Two gcds:"),
        parsed_call("gcd", a=45, b=60),
        parsed_call("gcd", a=81, b=63),
        TextDelta("\nDone."),
    ],
    f"For example {F}json {PARIS}{F} asks for Paris. Now:\n{F}json\n{LONDON}\n{F}": [
        TextDelta("For example"),
        parsed_call("get_weather", city="Paris"),
        TextDelta(" asks for Paris. Now:"),
        parsed_call("get_weather", city="London"),
    ],
    # Followed by an explanation (recorded answers of the 0.5B model go on like this).
    f"You would write {F}json\n{PARIS}\n{F}\nto get the weather in Paris.": [
        TextDelta("You would write"),
        parsed_call("get_weather", city="Paris"),
        TextDelta("\nto get the weather in Paris."),
    ],
    # Read with the rules of a call inside <tool_call>: "parameters", mended punctuation.
    'Try {"name": "gcd", "parameters": {"a": 1, "b": 2}}': [TextDelta("Try"), parsed_call("gcd", a=1, b=2)],
    f'Try {F}json\n{{"name": "delete_file", "arguments": {{"path": "a",}}}}\n{F}': [
        TextDelta("Try"),
        parsed_call("delete_file", path="a"),
    ],
    'Try {"name": "delete_file"}': [TextDelta("Try"), parsed_call("delete_file")],
    # The keys in another order, or in single quotes (mended as inside tags).
    'Ok: {"arguments": {"a": 2, "b": 4}, "name": "gcd"} done': [
        TextDelta("Ok:"),
        parsed_call("gcd", a=2, b=4),
        TextDelta(" done"),
    ],
    "Ok: {'name': 'gcd', 'arguments': {'a': 2, 'b': 4}}": [TextDelta("Ok:"), parsed_call("gcd", a=2, b=4)],
    # A call in tags after one in prose: both.
    f"First {PARIS} then <tool_call>{LONDON}</tool_call>": [
        TextDelta("First"),
        parsed_call("get_weather", city="Paris"),
        TextDelta(" then"),
        parsed_call("get_weather", city="London"),
    ],
}

EXTRA = 'the call has keys besides "name" and "arguments" ("id"); write it as ' + SHAPE
MALFORMED = {
    f'Try {F}json\n{{"name": "delete_file", "arguments": {{"path": "/"}}, "id": 1}}\n{F}': [
        TextDelta("Try"),
        MalformedCall('{"name": "delete_file", "arguments": {"path": "/"}, "id": 1}', EXTRA),
    ],
    '{"name": "delete_file", "arguments": {"path": "/"}, "id": 1}': [  # at the answer's start
        MalformedCall('{"name": "delete_file", "arguments": {"path": "/"}, "id": 1}', EXTRA),
    ],
    f'Try {F}json\n{{"name": "delete_file", "arguments": "/"}}\n{F}': [
        TextDelta("Try"),
        MalformedCall(
            '{"name": "delete_file", "arguments": "/"}',
            'the "arguments" string does not hold a JSON object; give them as an object {"arg": value}',
        ),
    ],
    f'Try {F}json\n{{"name": "delete_file", "arguments": {{"path": "a", "path": "/"}}}}\n{F}': [
        TextDelta("Try"),
        MalformedCall(
            '{"name": "delete_file", "arguments": {"path": "a", "path": "/"}}',
            f'the JSON gives the key "path" twice in one object; give each key once, as {SHAPE}',
        ),
    ],
    'So: {"name": "gcd", "arguments": {"a": 1 "b" 2}} done': [
        TextDelta("So:"),
        MalformedCall(
            '{"name": "gcd", "arguments": {"a": 1 "b" 2}}',
            "the JSON is broken at line 1 column 38 (Expecting ',' delimiter) and could not be repaired;"
            f" write the call as {SHAPE}",
        ),
        TextDelta(" done"),
    ],
    f'So:\n{GCD1}\n{{"name": "gcd", "arguments": {{"a": 8': [
        TextDelta("So:"),
        parsed_call("gcd", a=45, b=60),
        MalformedCall(
            '{"name": "gcd", "arguments": {"a": 8',
            f"the answer ended before this call was complete, so it was not run; write the whole call as {SHAPE}",
        ),
    ],
}

TEXT = [
    "It's {'a': 1} and {\"arguments\": 1} and {'name': 'x'}",
    # Not naming an offered tool, or not a call's shape.
    f'Try {F}json\n{{"name": "rm_rf", "arguments": {{}}}}\n{F}',
    'Try {"name": "rm_rf", "arguments": {}} or [{"name": "x"}]',
    'The tool {"name": "get_weather", "description": "the weather"} exists.',
    'Data: {"text": "{\\"name\\": \\"get_weather\\", \\"arguments\\": {}}"}',  # quoted in a string
    f"Try {F}json\n{F}",
    "Plain `code` and ``more`` and a lone ` tick, [a link](x), {braces} and [1, 2]",
]


@pytest.mark.parametrize(("text", "expected"), CALLS.items())
def test_a_call_to_an_offered_tool_in_prose_is_a_call(text, expected):
    every_split(text, expected)


@pytest.mark.parametrize(("text", "expected"), MALFORMED.items())
def test_a_call_shaped_object_naming_an_offered_tool_that_cannot_run_says_why(text, expected):
    every_split(text, expected)


@pytest.mark.parametrize("text", TEXT)
def test_other_objects_and_fences_in_prose_are_text(text):
    every_split(text, [TextDelta(text)])


def test_a_prose_call_cut_off_by_the_token_limit_never_runs_and_a_complete_one_does():
    text = f'Calling:\n{F}json\n{PARIS}\n{{"name": "gcd", "arguments": {{"a": 1'
    every_split(
        text,
        [
            TextDelta("Calling:"),
            parsed_call("get_weather", city="Paris"),
            MalformedCall(
                '{"name": "gcd", "arguments": {"a": 1',
                "the answer hit the token limit before this call was complete, so it was not run;"
                " write the call again, with shorter arguments",
            ),
        ],
        "length",
    )


def test_a_prose_call_with_its_name_last_that_the_answer_ends_inside_never_runs():
    text = 'Ok: {"arguments": {"a": 2}, "name": "gcd"'
    every_split(
        text,
        [
            TextDelta("Ok:"),
            MalformedCall(
                '{"arguments": {"a": 2}, "name": "gcd"',
                f"the answer ended before this call was complete, so it was not run; write the whole call as {SHAPE}",
            ),
        ],
    )


def test_without_offered_names_a_prose_call_is_text():
    text = f"You can use the following JSON object: {F}json {PARIS}{F}"
    assert parse_tool_calls(text) == [TextDelta(text)]


def test_a_call_in_thinking_is_thinking():
    text = f"<think>I could send {F}json\n{PARIS}\n{F}</think>Sunny, I think."
    every_split(text, [ThinkingDelta(f"I could send {F}json\n{PARIS}\n{F}"), TextDelta("Sunny, I think.")])


def test_a_tool_result_quoted_back_is_a_call_and_approval_still_applies():
    # The parser cannot tell a quoted result from the model's own call: the tool's approval
    # setting, not the parser, stands between it and a dangerous action.
    text = f'The page says:\n{F}json\n{{"name": "delete_file", "arguments": {{"path": "/"}}}}\n{F}'
    assert parse([text + "\nI will not do that."]) == [
        TextDelta("The page says:"),
        parsed_call("delete_file", path="/"),
        TextDelta("\nI will not do that."),
    ]


def test_text_before_a_prose_call_streams_and_only_the_call_is_held():
    parser = ToolCallParser(offered=OFFERED)
    assert parser.feed("Calling now: `") == [TextDelta("Calling now:")]  # the space waits
    assert parser.feed('``json\n{"name"') == []
    assert parser.feed(': "get_weather", "arguments": {"city": "Paris"}}\n```') == []
    assert parser.close() == [parsed_call("get_weather", city="Paris")]
    assert parser.feed("Use `x` here, {y} and [z]") + parser.close() == [
        TextDelta("Use `x` here, {y} and [z]")
    ]


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def test_the_xml_protocol_runs_the_issues_example_and_the_model_reads_the_result():
    answer = f'Here is the response:\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n{F}'
    model = ScriptedModel([answer, "Sunny."])
    result = Agent(model, tools=[get_weather]).run("What is the weather in Paris?")
    assert [(r.call.name, r.call.arguments, r.output) for r in result.tool_results] == [
        ("get_weather", {"city": "Paris"}, "Sunny in Paris")
    ]
    assert result.text == "Sunny."


def test_the_xml_protocol_answers_a_broken_prose_call_with_a_parse_error():
    answer = 'Here: {"name": "get_weather", "arguments": {"city": "Paris"}, "id": 7}'
    model = ScriptedModel([answer, "Sorry."])
    result = Agent(model, tools=[get_weather]).run("What is the weather in Paris?")
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("parse_error", f"Error: could not read a tool call: {EXTRA}\nThe text was: {answer[6:]}")
    ]
