"""Odd values from an OpenAI-compatible server: every one a `ModelError` naming what came.

The real ``openai`` client reads each stream from a real local HTTP server (pytest-httpserver),
which sends exactly the bytes given. What the API does not allow (a non-JSON event, a null delta,
a numeric tool name, usage as text...) ends the answer with one message naming the field, the
value (cut short) and the server; the conversation is kept and the next run works. Tool-call
arguments sent as a JSON object instead of its text are read as that object.
"""

from __future__ import annotations

import json

import pytest
from werkzeug import Response

from meowgent_nb import Agent, ToolCall
from meowgent_nb.models import ModelChunk, ModelError, ModelRequest, OpenAIModel, Usage
from tests.models.test_openai_wire import MODEL, REQUEST, allow_requests, base_url, event, get_weather, sse  # noqa: F401
from tests.support.model_streams import collect_stream

TOOLS = ModelRequest(messages=REQUEST.messages, tools=[get_weather])


def wire_error(base_url: str, problem: str, doing: str = f"answering as '{MODEL}'") -> str:
    kept = (
        " This answer was dropped and the conversation is kept: try again."
        if doing.startswith("answering")
        else ""
    )
    return (
        f"The OpenAI-compatible server at {base_url} sent what the Chat Completions API does not allow,"
        f" {doing}: {problem}.{kept} If it recurs, the server (or a proxy in front of it) does not speak"
        " the API correctly: check its version and its log."
    )


def data(value) -> str:
    return f"data: {json.dumps(value)}\n\n"


def chunk(**fields) -> dict:
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL, **fields}


def choice(delta, finish_reason=None) -> dict:
    return chunk(choices=[{"index": 0, "delta": delta, "finish_reason": finish_reason}])


def tool_call_delta(**fields) -> dict:
    return choice({"tool_calls": [{"index": 0, "id": "c1", "type": "function", **fields}]})


HUGE = 10**400
CALL = "choices[0].delta.tool_calls[0]"
CASES = {
    "not JSON": (
        "data: {'content': 'Hi'}\n\n",
        "an event whose data is not JSON (Expecting property name enclosed in double quotes at character 1): \"{'content': 'Hi'}\"",
    ),
    "a number": (data(5), "an event that is 5, not a JSON object"),
    "null": ("data: null\n\n", "an event that is None, not a JSON object"),
    "choices null": (data(chunk(choices=None)), "choices is None, not a list"),
    "choices text": (data(chunk(choices="stop")), "choices is 'stop', not a list"),
    "a choice that is a number": (data(chunk(choices=[7])), "choices[0] is 7, not an object"),
    "delta null": (data(choice(None)), "choices[0].delta is None, not an object"),
    "delta a list": (data(choice(["Hi"])), "choices[0].delta is ['Hi'], not an object"),
    "content a number": (data(choice({"content": 42})), "choices[0].delta.content is 42, not text or null"),
    "content a list": (
        data(choice({"content": [{"type": "text", "text": "Hi"}]})),
        "choices[0].delta.content is [{'text': 'Hi', 'type': 'text'}], not text or null",
    ),
    "reasoning an object": (
        data(choice({"reasoning_content": {"a": 1}})),
        "choices[0].delta.reasoning_content is {'a': 1}, not text or null",
    ),
    "finish_reason a number": (data(choice({}, 1)), "choices[0].finish_reason is 1, not text or null"),
    "finish_reason 10,000 characters": (
        data(choice({}, "s" * 10_000)),
        f"choices[0].finish_reason is '{'s' * 37}...{'s' * 38}', longer than 100 characters",
    ),
    "tool_calls an object": (
        data(choice({"tool_calls": {"name": "x"}})),
        "choices[0].delta.tool_calls is {'name': 'x'}, not a list",
    ),
    "a tool call that is text": (
        data(choice({"tool_calls": ["get_weather"]})),
        f"{CALL} is 'get_weather', not an object",
    ),
    "a numeric tool name": (
        data(tool_call_delta(function={"name": 7, "arguments": "{}"})),
        f"{CALL}.function.name is 7, not text or null",
    ),
    "a numeric call id": (
        data(tool_call_delta(id=12345, function={"name": "get_weather"})),
        f"{CALL}.id is 12345, not text or null",
    ),
    "an index as text": (
        data(tool_call_delta(index="0", function={"name": "get_weather"})),
        f"{CALL}.index is '0', not a call's position (a whole number from 0 to 255)",
    ),
    "a negative index": (
        data(tool_call_delta(index=-1, function={"name": "get_weather"})),
        f"{CALL}.index is -1, not a call's position (a whole number from 0 to 255)",
    ),
    "a 401-digit index": (
        data(tool_call_delta(index=HUGE, function={"name": "get_weather"})),
        f"{CALL}.index is 1000000000...00000 (401 digits), not a call's position (a whole number from 0 to 255)",
    ),
    "a boolean index": (
        data(tool_call_delta(index=True, function={"name": "get_weather"})),
        f"{CALL}.index is True, not a call's position (a whole number from 0 to 255)",
    ),
    "a tool name of 10 MB": (
        data(tool_call_delta(function={"name": "n" * 10_000_000, "arguments": "{}"})),
        f"{CALL}.function.name is 10,000,000 characters long ('{'n' * 37}...{'n' * 38}'), more than any tool's (at most 1,000)",
    ),
    "a call id of 1,001 characters": (
        data(tool_call_delta(id="i" * 1001, function={"name": "get_weather"})),
        f"{CALL}.id is 1,001 characters long ('{'i' * 37}...{'i' * 38}'), more than any tool's (at most 1,000)",
    ),
    "a name grown past 1,000 characters in pieces": (
        data(tool_call_delta(function={"name": "n" * 600}))
        + data(tool_call_delta(function={"name": "m" * 600})),
        f"the name of tool call 0 is 1,200 characters long ('{'n' * 37}...{'m' * 38}'), more than any tool's (at most 1,000)",
    ),
    "257 calls": (
        data(choice({"tool_calls": [{"id": f"c{i}", "function": {"name": "now"}} for i in range(257)]})),
        "more than 256 tool calls in one answer",
    ),
    "content with half a surrogate pair": (
        'data: {"choices": [{"delta": {"content": "a \\ud800 b"}}]}\n\n',
        "in choices[0].delta.content, '\\ud800' is half of a UTF-16 surrogate pair, which is not text",
    ),
    "a name with half a surrogate pair": (
        data(tool_call_delta(function={"name": "get\udfffweather"})),
        f"in {CALL}.function.name, '\\udfff' is half of a UTF-16 surrogate pair, which is not text",
    ),
    "arguments with half a surrogate pair": (
        data(tool_call_delta(function={"name": "get_weather", "arguments": '{"city": "\\ud83d"}'}))
        + data(choice({}, "tool_calls")),
        "in the arguments of the tool call 'get_weather', '\\ud83d' is half of a UTF-16 surrogate pair, which is not text",
    ),
    "function text": (
        data(tool_call_delta(function="get_weather({})")),
        f"{CALL}.function is 'get_weather({{}})', not an object",
    ),
    "arguments a number": (
        data(tool_call_delta(function={"name": "get_weather", "arguments": 3})),
        f"{CALL}.function.arguments is 3, not text or null",
    ),
    "arguments a list": (
        data(tool_call_delta(function={"name": "get_weather", "arguments": ["Paris"]})),
        f"{CALL}.function.arguments is ['Paris'], not text or null",
    ),
    "usage text": (data(chunk(choices=[], usage="26")), "usage is '26', not an object"),
    "prompt_tokens text": (
        data(chunk(choices=[], usage={"prompt_tokens": "26", "completion_tokens": 1})),
        "usage.prompt_tokens is '26', not a count of tokens (a whole number from 0)",
    ),
    "prompt_tokens negative": (
        data(chunk(choices=[], usage={"prompt_tokens": -1})),
        "usage.prompt_tokens is -1, not a count of tokens (a whole number from 0)",
    ),
    "completion_tokens a fraction": (
        data(chunk(choices=[], usage={"completion_tokens": 26.5})),
        "usage.completion_tokens is 26.5, not a count of tokens (a whole number from 0)",
    ),
    "prompt_tokens 401 digits": (
        data(chunk(choices=[], usage={"prompt_tokens": HUGE})),
        "usage.prompt_tokens is 1000000000...00000 (401 digits), not a count of tokens (a whole number from 0)",
    ),
    "prompt_tokens true": (
        data(chunk(choices=[], usage={"prompt_tokens": True})),
        "usage.prompt_tokens is True, not a count of tokens (a whole number from 0)",
    ),
    "a 5,000-digit number": (
        'data: {"usage": {"prompt_tokens": ' + "9" * 5000 + "}}\n\n",
        "an event whose JSON cannot be read: 'Exceeds the limit (4300 digits) for i...max_str_digits() to increase the limit'",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_value_the_api_does_not_allow_is_a_model_error_naming_it(
    httpserver, base_url, allow_requests, case
):
    body, problem = CASES[case]
    first = data(choice({"content": "Hel"}))
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        first + body + data(choice({}, "stop")) + "data: [DONE]\n\n", content_type="text/event-stream"
    )
    chunks, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), TOOLS)
    assert chunks == [ModelChunk(text="Hel")]  # what came before is kept
    assert (type(error), str(error)) == (ModelError, wire_error(base_url, problem))


def test_bytes_that_are_not_utf8_are_a_model_error(httpserver, base_url, allow_requests):
    body = b'data: {"choices": [{"delta": {"content": "caf\xe9"}}]}\n\n'
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        body, content_type="text/event-stream"
    )
    chunks, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), REQUEST)
    problem = 'bytes that are not UTF-8 text (b\'a": {"content": "caf\\xe9"}}]}\')'
    assert (chunks, str(error)) == ([], wire_error(base_url, problem))


def test_arguments_sent_as_an_object_are_read_as_that_object(httpserver, base_url, allow_requests):
    # Unambiguous: the object is what the text would have said, so the call is not refused.
    arguments = {"city": "Paris", "unit": "celsius"}
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        data(tool_call_delta(function={"name": "get_weather", "arguments": arguments}))
        + data(choice({}, "tool_calls")),
        content_type="text/event-stream",
    )
    assert collect_stream(OpenAIModel(MODEL, base_url=base_url), TOOLS) == (
        [
            ModelChunk(tool_calls=(ToolCall("get_weather", arguments, id="c1"),)),
            ModelChunk(done=True, finish_reason="tool_calls"),
        ],
        None,
    )


def test_null_and_absent_fields_are_nothing_and_zero_counts_are_counts(httpserver, base_url, allow_requests):
    body = (
        data(
            chunk(choices=[{"index": 0, "delta": {"content": None, "role": "assistant", "tool_calls": None}}])
        )
        + data(chunk(choices=[{"index": 0, "finish_reason": "stop"}]))  # no delta at all
        + data(chunk(usage={"prompt_tokens": 0, "completion_tokens": None}))  # no choices at all
        + "data: [DONE]\n\n"
    )
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        body, content_type="text/event-stream"
    )
    assert collect_stream(OpenAIModel(MODEL, base_url=base_url), REQUEST) == (
        [ModelChunk(done=True, usage=Usage(0, None), finish_reason="stop")],
        None,
    )


def test_a_key_given_twice_in_arguments_never_runs(httpserver, base_url, allow_requests):
    text = '{"city": "Paris", "city": "Oslo", "unit": "celsius"}'
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        data(tool_call_delta(function={"name": "get_weather", "arguments": text}))
        + data(choice({}, "tool_calls")),
        content_type="text/event-stream",
    )
    assert collect_stream(OpenAIModel(MODEL, base_url=base_url), TOOLS)[0][0] == ModelChunk(
        text=f'<tool_call>{{"name": "get_weather", "arguments": {text}}}</tool_call>'
    )


# --- size and depth ----------------------------------------------------------------------------------


def test_arguments_nested_100000_deep_are_refused_saying_so(httpserver, base_url, allow_requests):
    deep = "[" * 100_000 + "]" * 100_000
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        data(tool_call_delta(function={"name": "get_weather", "arguments": '{"city": ' + deep + "}"}))
        + data(choice({}, "tool_calls")),
        content_type="text/event-stream",
    )
    chunks, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), TOOLS)
    problem = (
        "the arguments of the tool call 'get_weather' nest deeper than 100 levels (200,010 characters:"
        f" '{{\"city\": {'[' * 28}...{']' * 37}}}')"
    )
    assert (chunks, str(error)) == ([], wire_error(base_url, problem))
    for levels in (99, 100):  # with the object around them: 100 levels are read, 101 are not
        httpserver.clear()
        text = '{"city": ' + "[" * levels + "]" * levels + "}"
        httpserver.expect_request("/v1/chat/completions").respond_with_data(
            data(tool_call_delta(function={"name": "get_weather", "arguments": text}))
            + data(choice({}, "tool_calls")),
            content_type="text/event-stream",
        )
        chunks, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), TOOLS)
        if levels == 99:
            assert (error, chunks[0].tool_calls[0].name) == (None, "get_weather")
        else:
            problem = (
                "the arguments of the tool call 'get_weather' nest deeper than 100 levels (210 characters:"
                f" '{{\"city\": {'[' * 28}...{']' * 37}}}')"
            )
            assert str(error) == wire_error(base_url, problem)


def test_an_event_nested_100000_deep_is_refused_saying_so(httpserver, base_url, allow_requests):
    body = 'data: {"choices": ' + "[" * 100_000 + "]" * 100_000 + "}\n\n"
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        body, content_type="text/event-stream"
    )
    _, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), REQUEST)
    assert str(error) == wire_error(base_url, "an event whose JSON nests deeper than it can be read")


def test_a_10_mb_line_that_is_not_json_is_named_in_a_short_message(httpserver, base_url, allow_requests):
    body = "data: " + "x" * 10_000_000 + "\n\n"
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        body, content_type="text/event-stream"
    )
    _, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), REQUEST)
    assert str(error) == wire_error(
        base_url,
        f"an event whose data is not JSON (Expecting value at character 0): '{'x' * 37}...{'x' * 38}'",
    )


def test_an_error_event_with_a_10_mb_message_is_cut(httpserver, base_url, allow_requests):
    body = data({"error": {"message": "e" * 10_000_000}})
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        body, content_type="text/event-stream"
    )
    _, error = collect_stream(OpenAIModel(MODEL, base_url=base_url), REQUEST)
    assert str(error) == (
        f"The OpenAI-compatible server at {base_url} reported an error: {'e' * 500} [... 9,999,500 more characters]"
    )


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"data": [{"id": 5}]}, "data[0] is {'id': 5}, not a model with an id"),
        ({"data": ["a"]}, "data[0] is 'a', not a model with an id"),
        ({"data": None}, "a list of models that is {'data': None}, not an object with a data list"),
        ([1, 2], "a list of models that is [1, 2], not an object with a data list"),
    ],
)
def test_a_model_list_that_is_not_the_api_s_is_a_model_error(
    httpserver, base_url, allow_requests, answer, problem
):
    import asyncio

    httpserver.expect_request("/v1/models").respond_with_json(answer)
    with pytest.raises(ModelError) as caught:
        asyncio.run(OpenAIModel(MODEL, base_url=base_url).list_models())
    assert str(caught.value) == wire_error(base_url, problem, "listing its models")


# --- the conversation survives ------------------------------------------------------------------------


def test_after_a_malformed_answer_the_conversation_is_kept_and_the_next_run_works(
    httpserver, base_url, allow_requests
):
    answers = iter([data(choice(None)), data(choice({"content": "Sunny."})) + data(choice({}, "stop"))])
    bodies: list[dict] = []

    def handler(request):
        bodies.append(json.loads(request.get_data()))
        return Response(next(answers), content_type="text/event-stream")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    agent = Agent(model=OpenAIModel(MODEL, base_url=base_url), tools=[get_weather], protocol="native")
    with pytest.raises(ModelError) as caught:
        agent.run("Weather in Paris?")
    assert str(caught.value) == wire_error(base_url, "choices[0].delta is None, not an object")
    assert agent.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "\n[this answer was cut off: ModelError]"},
    ]
    assert agent.run("And now?").text == "Sunny."
    assert [m["content"] for m in bodies[1]["messages"][1:]] == [
        "Weather in Paris?",
        "\n[this answer was cut off: ModelError]",
        "And now?",
    ]
    assert agent.messages[-1] == {"role": "assistant", "content": "Sunny."}


def test_in_a_notebook_the_error_is_one_line_and_the_next_cell_continues(
    ip, httpserver, base_url, allow_requests, monkeypatch
):
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    answers = iter(
        [data(choice({"content": 7})), data(choice({"content": "Hello again."})) + data(choice({}, "stop"))]
    )
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(
        lambda request: Response(next(answers), content_type="text/event-stream")
    )
    with pytest.raises(ModelError) as caught:
        ip.run_cell_magic("agent", "-m openai:qwen-test --new", "Hello")
    problem = "choices[0].delta.content is 7, not text or null"
    assert caught.value._render_traceback_() == [
        f"\x1b[31mModelError\x1b[0m: {wire_error(base_url, problem)}",
        "(the full traceback: %agent traceback)",
    ]
    with capture_output() as captured:
        ip.run_cell_magic("agent", "-m openai:qwen-test", "Again?")
    assert "Hello again." in captured.outputs[-1].data["text/plain"]
