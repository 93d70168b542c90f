"""Answers the embedded model really wrote, read by the ``xml`` protocol's parser.

Each answer below was recorded from Qwen2.5-Coder-0.5B-Instruct (the default embedded model) on a
BFCL v4 ``live_*`` question, with ``python benchmarks/bfcl.py --dump FILE``, and is kept here
verbatim (the answer's case id is given). The model's output changes with its version and the
prompt, so recording is how a test can pin what the parser makes of what such a model writes.
"""

from __future__ import annotations

from meowgent_nb import Agent, ScriptedModel, Tool, ToolCall
from meowgent_nb.events import TextDelta
from meowgent_nb.protocols.parsing import ToolCallParser

# live_parallel_5-2-0: the call as the product closes it (the grammar's arguments, then " }").
CLOSED_BY_THE_PRODUCT = '```json\n{\n  "name": "get_current_weather",\n  "arguments":{"location": "Boston, MA", "unit": "celsius"} }\n```'

# live_multiple_1035-263-0: an unfenced call on its own line ends an answer that began as prose.
UNFENCED_AFTER_PROSE = 'Certainly! Here\'s a JSON object with the function name "api_token_api_APITokenApi_get_api_tokens" and its arguments:\n\n{"name": "api_token_api_APITokenApi_get_api_tokens", "arguments": {"user_id": "12345", "include_expired": false}}'

# live_multiple_356-134-1 (as far as it was read): the same, then an explanation.
UNFENCED_THEN_EXPLAINED = 'Certainly! Here\'s a JSON object that represents the function call for the movie "Lawrence Bender and Directed by Quentin Tarantino":\n{"name": "Movies_3_FindMovies", "arguments": {"directed_by": "Lawrence Bender", "genre": "Drama", "cast": "Quentin Tarantino"}}\nThis function call will search for movies'

# live_parallel_13-9-0: two fenced calls, prose between and after them.
FENCED_AND_EXPLAINED = 'Certainly! Below is a JSON object that provides the current weather in Boston, MA and in San Francisco:\n\n```json\n{\n  "name": "get_current_weather",\n  "arguments": {\n    "location": "Boston, MA",\n    "unit": "celsius"\n  }\n}\n```\n\nAnd for San Francisco:\n\n```json\n{\n  "name": "get_current_weather",\n  "arguments": {\n    "location": "San Francisco, CA",\n    "unit": "celsius"\n  }\n}\n```\n\nThese JSON objects contain the function name and the arguments required to retrieve the current weather in Boston, MA and in San Francisco.'

# live_simple_220-117-12: a call to a tool that does not exist (the genre, for Movies_3_FindMovies).
MADE_UP_TOOL = '```json\n{\n  "name": "Thriller",\n  "arguments": {\n    "directed_by": "Alexander Mackendrick"\n  }\n}\n```'

# live_multiple_343-133-7: a string argument looping ("dontcare, dontcare, ..."), stopped by the
# grammar's 200-character bound and closed, so the call is read (and validated) instead of lost.
BOUNDED_LOOP = '```json\n{\n  "name": "Music_3_PlayMedia",\n  "arguments":{"track": "The Martin Garrix Experience album", "artist": "House", "device": "Living room", "album": "Martin Garrix Experience album, 2019-2020, House, Rock, Metal, Dubstep, Country, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare, dontcare," } }\n```'


def read(answer: str, offered: list[str]) -> list:
    parser = ToolCallParser(offered=offered)
    events = parser.feed(answer) + parser.close("stop")
    merged: list = []
    for event in events:  # text comes in pieces; what matters here is the text and the calls
        if isinstance(event, TextDelta) and merged and isinstance(merged[-1], str):
            merged[-1] += event.text
        else:
            merged.append(event.text if isinstance(event, TextDelta) else event)
    return merged


def test_a_call_the_product_closed_is_one_call():
    assert read(CLOSED_BY_THE_PRODUCT, ["get_current_weather"]) == [
        ToolCall("get_current_weather", {"location": "Boston, MA", "unit": "celsius"})
    ]


def test_an_unfenced_call_that_ends_an_answer_after_prose_is_a_call_to_an_offered_tool():
    offered = ["CustomDashboardsApi_get_shareable_api_tokens", "api_token_api_APITokenApi_get_api_tokens"]
    prose = UNFENCED_AFTER_PROSE[: UNFENCED_AFTER_PROSE.index("{")].rstrip()  # the call drops the separator
    assert read(UNFENCED_AFTER_PROSE, offered) == [
        prose,
        ToolCall("api_token_api_APITokenApi_get_api_tokens", {"user_id": "12345", "include_expired": False}),
    ]
    # Not offered: the answer is text, as written.
    assert read(UNFENCED_AFTER_PROSE, ["CustomDashboardsApi_get_shareable_api_tokens"]) == [
        UNFENCED_AFTER_PROSE
    ]


def test_calls_explained_in_prose_are_calls_and_the_explanation_text():
    # Issue 31: a call-shaped object naming an offered tool is never silent text. Both answers
    # asked for what the question wanted (live_parallel_13-9-0 expects both weather calls).
    offered = ["Movies_3_FindMovies", "get_current_weather"]
    intro = UNFENCED_THEN_EXPLAINED[: UNFENCED_THEN_EXPLAINED.index("{")].rstrip()  # as above
    assert read(UNFENCED_THEN_EXPLAINED, offered) == [
        intro,
        ToolCall(
            "Movies_3_FindMovies",
            {"directed_by": "Lawrence Bender", "genre": "Drama", "cast": "Quentin Tarantino"},
        ),
        "\nThis function call will search for movies",
    ]
    weather = ToolCall("get_current_weather", {"location": "Boston, MA", "unit": "celsius"})
    weather_sf = ToolCall("get_current_weather", {"location": "San Francisco, CA", "unit": "celsius"})
    assert read(FENCED_AND_EXPLAINED, offered) == [
        FENCED_AND_EXPLAINED[: FENCED_AND_EXPLAINED.index("```")].rstrip(),
        weather,
        "\n\nAnd for San Francisco:",
        weather_sf,
        "\n\nThese JSON objects contain the function name and the arguments required to retrieve"
        " the current weather in Boston, MA and in San Francisco.",
    ]


def test_a_made_up_tool_is_answered_as_unknown_and_nothing_runs():
    ran = []
    find_movies = Tool.from_schema(
        "Movies_3_FindMovies",
        "Find movies by genre and director.",
        {"type": "object", "properties": {"directed_by": {"type": "string"}, "genre": {"type": "string"}}},
        lambda **arguments: ran.append(arguments) or "found",
    )
    model = ScriptedModel([MADE_UP_TOOL, "I could not search."])
    result = Agent(model, tools=[find_movies]).run("Find a thriller by Alexander Mackendrick.")
    assert [(r.call.name, r.kind) for r in result.tool_results] == [("Thriller", "unknown_tool")]
    assert ran == []


def test_a_looping_argument_the_grammar_bounded_is_read_whole():
    offered = ["Media_3_FindMovies", "Media_3_PlayMovie", "Music_3_PlayMedia", "Music_3_LookupMusic"]
    (call,) = read(BOUNDED_LOOP, offered)
    assert call.name == "Music_3_PlayMedia"
    assert call.arguments["album"].endswith("dontcare, dontcare,")
    assert len(call.arguments["album"]) == 200
