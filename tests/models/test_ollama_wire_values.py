"""Odd values from an Ollama server: every one a `ModelError` naming what came.

The real ``ollama`` client reads each NDJSON stream from a real local HTTP server; it checks each
line against its pydantic types, and `OllamaModel` checks the rest (counts, durations, depth).
A value Ollama's API does not allow ends the answer with one message naming the field and the
value (cut short); the conversation is kept and the next run works. A count sent as the text of a
whole number ("26") is read as that number, as pydantic reads it: it can only mean one thing.
"""

from __future__ import annotations

import json

import pytest
from werkzeug import Response

from meowgent_nb import Agent, ToolCall
from meowgent_nb.models import ModelChunk, ModelError, ModelRequest, OllamaModel, Usage
from tests.models.test_ollama_model import REQUEST, allow_requests, get_weather, host, serve_chat  # noqa: F401
from tests.support.model_streams import collect_stream
from tests.support.ollama_wire import FINAL, MODEL, ndjson, part

HUGE = 10**400
TOOLS = ModelRequest(messages=REQUEST.messages, tools=[get_weather])


def wire_error(host: str, problem: str, doing: str = f"answering as '{MODEL}'") -> str:
    kept = (
        " This answer was dropped and the conversation is kept: try again."
        if doing.startswith("answering")
        else ""
    )
    return (
        f"The Ollama server at {host} sent what Ollama's API does not allow, {doing}: {problem}.{kept}"
        " If it recurs, the server (or a proxy in front of it) is not Ollama, or not a version this client"
        " reads: check its version and its log."
    )


def final(**fields) -> dict:
    return {**FINAL, **fields}


def calling(name, arguments) -> dict:
    return part(tool_calls=[{"function": {"name": name, "arguments": arguments}}])


CASES = {
    "a number": ("5\n", "a line that is 5, not a JSON object"),
    "null": ("null\n", "a line that is None, not a JSON object"),
    "a list": ('[{"done": true}]\n', "a line that is [{'done': True}], not a JSON object"),
    "an error that is an object": (
        '{"error": {"message": "x"}}\n',
        "a line the ollama client cannot read (TypeError: 'the JSON object must be str, bytes or bytearray, not dict')",
    ),
    "content a number": (
        ndjson({**part(), "message": {"role": "assistant", "content": 42}}),
        "message.content is 42 (Input should be a valid string)",
    ),
    "message null": (
        ndjson({**part(), "message": None}),
        "message is None (Input should be a valid dictionary or instance of Message)",
    ),
    "a numeric tool name": (
        ndjson(calling(7, {})),
        "message.tool_calls.0.function.name is 7 (Input should be a valid string)",
    ),
    "a tool name of 10 MB": (
        ndjson(calling("n" * 10_000_000, {})),
        f"message.tool_calls.0.function.name is 10,000,000 characters long ('{'n' * 37}...{'n' * 38}'), more than any tool's (at most 1,000)",
    ),
    "content with half a surrogate pair": (
        '{"message": {"role": "assistant", "content": "a \\ud800 b"}, "done": false}\n',
        "in message.content, '\\ud800' is half of a UTF-16 surrogate pair, which is not text",
    ),
    "arguments with half a surrogate pair": (
        ndjson(calling("get_weather", {"city": "\udc00"})),
        "in message.tool_calls.0.function.arguments, '\\udc00' is half of a UTF-16 surrogate pair, which is not text",
    ),
    "arguments as text": (
        ndjson(calling("get_weather", '{"city": "Paris"}')),
        'message.tool_calls.0.function.arguments is \'{"city": "Paris"}\' (Input should be a valid dictionary)',
    ),
    "done_reason a number": (
        ndjson(final(done_reason=1)),
        "done_reason is 1 (Input should be a valid string)",
    ),
    "done_reason 10,000 characters": (
        ndjson(final(done_reason="s" * 10_000)),
        f"done_reason is '{'s' * 37}...{'s' * 38}', longer than 100 characters",
    ),
    "eval_count a fraction": (
        ndjson(final(eval_count=26.5)),
        "eval_count is 26.5 (Input should be a valid integer, got a number with a fractional part)",
    ),
    "eval_count a word": (
        ndjson(final(eval_count="many")),
        "eval_count is 'many' (Input should be a valid integer, unable to parse string as an integer)",
    ),
    "eval_count negative": (
        ndjson(final(eval_count=-1)),
        "eval_count is -1, not a count of tokens (a whole number from 0)",
    ),
    "prompt_eval_count 401 digits": (
        ndjson(final(prompt_eval_count=HUGE)),
        "prompt_eval_count is 1000000000...00000 (401 digits), not a count of tokens (a whole number from 0)",
    ),
    "total_duration 401 digits": (
        ndjson(final(total_duration=HUGE)),
        "total_duration is 1000000000...00000 (401 digits), not a duration in nanoseconds (a whole number from 0)",
    ),
    "eval_duration negative": (
        ndjson(final(eval_duration=-5)),
        "eval_duration is -5, not a duration in nanoseconds (a whole number from 0)",
    ),
    "arguments 101 levels deep": (
        ndjson(calling("get_weather", {"city": json.loads("[" * 100 + "]" * 100)})),
        "message.tool_calls.0.function.arguments of 'get_weather' nest deeper than 100 levels",
    ),
    "a line nested 100,000 deep": (
        '{"message": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "a line whose JSON nests deeper than it can be read",
    ),
    "a 5,000-digit number": (
        '{"eval_count": ' + "9" * 5000 + "}\n",
        "a line the ollama client cannot read (ValueError: 'Exceeds the limit (4300 digits) for i...max_str_digits() to increase the limit')",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_value_the_api_does_not_allow_is_a_model_error_naming_it(httpserver, host, allow_requests, case):
    body, problem = CASES[case]
    serve_chat(httpserver, ndjson(part("Hel")) + body + ndjson(FINAL))
    chunks, error = collect_stream(OllamaModel(MODEL, host=host), TOOLS)
    assert chunks == [ModelChunk(text="Hel")]  # what came before is kept
    assert (type(error), str(error)) == (ModelError, wire_error(host, problem))


def test_a_count_as_the_text_of_a_number_is_that_number_and_100_levels_are_read(
    httpserver, host, allow_requests
):
    arguments = {"city": json.loads("[" * 99 + "]" * 99)}
    serve_chat(
        httpserver,
        ndjson(
            calling("get_weather", arguments), final(prompt_eval_count="26", eval_count=0, done_reason="")
        ),
    )
    chunks, error = collect_stream(OllamaModel(MODEL, host=host), TOOLS)
    assert error is None
    assert chunks[0] == ModelChunk(tool_calls=(ToolCall("get_weather", arguments, id=""),))
    assert chunks[1].usage == Usage(26, 0, 2.5, 0.25, 0.5, 1.75)
    assert chunks[1].finish_reason is None


def test_a_10_mb_error_line_is_cut(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson({"error": "e" * 10_000_000}))
    _, error = collect_stream(OllamaModel(MODEL, host=host), REQUEST)
    assert str(error) == (
        f"The Ollama server at {host} reported an error mid-answer: {'e' * 500} [... 9,999,500 more characters]"
    )


def test_a_model_list_that_is_not_ollama_s_is_a_model_error(httpserver, host, allow_requests):
    import asyncio

    httpserver.expect_request("/api/tags").respond_with_json({"models": [{"model": 5}]})
    with pytest.raises(ModelError) as caught:
        asyncio.run(OllamaModel(MODEL, host=host).list_models())
    assert str(caught.value) == wire_error(
        host, "models.0.model is 5 (Input should be a valid string)", "listing its models"
    )
    httpserver.clear()
    httpserver.expect_request("/api/tags").respond_with_json([1, 2])
    with pytest.raises(ModelError) as caught:
        asyncio.run(OllamaModel(MODEL, host=host).list_models())
    assert str(caught.value) == wire_error(
        host,
        "a line the ollama client cannot read (TypeError: 'ollama._types.ListResponse() argument after ** must be a mapping, not list')",
        "listing its models",
    )


def test_after_a_malformed_answer_the_conversation_is_kept_and_the_next_run_works(
    httpserver, host, allow_requests
):
    answers = iter([ndjson(part("Hel"), final(eval_count=-1)), ndjson(part("Sunny."), FINAL)])
    bodies: list[dict] = []

    def handler(request):
        bodies.append(json.loads(request.get_data()))
        return Response(next(answers), content_type="application/x-ndjson")

    httpserver.expect_request("/api/chat").respond_with_handler(handler)
    agent = Agent(model=OllamaModel(MODEL, host=host), tools=[get_weather], protocol="native")
    with pytest.raises(ModelError) as caught:
        agent.run("Weather in Paris?")
    assert str(caught.value) == wire_error(
        host, "eval_count is -1, not a count of tokens (a whole number from 0)"
    )
    assert agent.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Hel\n[this answer was cut off: ModelError]"},
    ]
    assert agent.run("And now?").text == "Sunny."
    assert [m["content"] for m in bodies[1]["messages"][1:]] == [
        "Weather in Paris?",
        "Hel\n[this answer was cut off: ModelError]",
        "And now?",
    ]
