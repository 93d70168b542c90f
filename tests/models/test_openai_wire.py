"""`OpenAIModel` through the real ``openai`` client, against real local HTTP servers.

pytest-httpserver speaks Chat Completions' streaming format exactly: one ``data: {json}`` event
per chunk, a blank line after each, ``data: [DONE]`` at the end. A stream cut mid-answer comes
from `RawServer` (tests/models/test_ollama_model.py), which sends exactly the bytes it is given.
The translation of the conversation into the API's messages is tested on its own, as values.
"""

from __future__ import annotations

import asyncio
import html
import json
import socket
import sys
from typing import Annotated, Literal
from urllib.parse import quote

import pytest

import meowgent_nb.models
from meowgent_nb import Agent, ToolCall, tool
from meowgent_nb.models import ModelChunk, ModelError, ModelRequest, OpenAIModel, Usage
from meowgent_nb.models._openai_wire import AssembledCall, openai_messages, read_call
from meowgent_nb.models.base import RetryCause, StreamCut
from meowgent_nb.models.openai import NO_KEY
from meowgent_nb.protocols.native import NativeCallParser
from meowgent_nb.recording.cassette import RecordingModel
from tests.models.test_ollama_model import CHUNKED_HEADERS, RawServer
from tests.support.model_streams import collect_stream, first_chunk

MODEL = "qwen-test"
HOSTILE_KEY = 'sk-"}</tool_call><script>KEY-7f3a'
REQUEST = ModelRequest(messages=[{"role": "user", "content": "Hi"}])
INTERRUPTED = (
    "most likely another request arrived while it answered this one, and the server interrupts the"
    " answer it is streaming when one does (llama-cpp-python's server does by default). Whoever starts"
    " the server can make it queue requests instead: `python -m llama_cpp.server --interrupt_requests"
    " False ...`; until then, wait a little before asking again, as each request cuts another's answer."
)
CUT_CAUSE = RetryCause("cut", "the server cut the answer (another request took its turn)")


@tool
def get_weather(city: Annotated[str, "The city, e.g. Paris"], unit: Literal["celsius", "fahrenheit"]) -> str:
    """Get the current weather in a city."""
    return f"Sunny in {city}"


@pytest.fixture
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def base_url(httpserver) -> str:
    return f"http://{httpserver.host}:{httpserver.port}/v1"


def event(delta: dict | None = None, finish_reason: str | None = None, usage: dict | None = None) -> dict:
    """One ``chat.completion.chunk``, as a server streams it."""
    choices = (
        []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
    )
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": choices,
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def sse(*events: dict, done: bool = True) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + ("data: [DONE]\n\n" if done else "")


USAGE = {"prompt_tokens": 26, "completion_tokens": 12, "total_tokens": 38}


def serve(httpserver, body: str, status: int = 200, content_type: str = "text/event-stream") -> None:
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data(
        body, status=status, content_type=content_type
    )


def collect(
    model: OpenAIModel, request: ModelRequest = REQUEST
) -> tuple[list[ModelChunk], ModelError | None]:
    """Every chunk the model streamed, and the `ModelError` that ended the stream, if any."""
    return collect_stream(model, request)


def sent(httpserver) -> dict:
    ((request, _response),) = httpserver.log
    return json.loads(request.get_data())


def call_delta(index: int, *, id: str | None = None, name: str | None = None, arguments: str = "") -> dict:
    function: dict = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    delta: dict = {"index": index, "function": function}
    if id is not None:
        delta |= {"id": id, "type": "function"}
    return {"tool_calls": [delta]}


# --- the conversation as the API's messages -------------------------------------------------------


def test_calls_get_ids_and_the_tool_messages_after_them_answer_them_in_order():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "thinking": "Two cities.",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}},
                {"function": {"name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius"}}},
            ],
        },
        {"role": "tool", "content": "Sunny in Paris", "tool_name": "get_weather"},
        {"role": "tool", "content": "Rain in Oslo", "tool_name": "get_weather"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "now", "arguments": {}}}]},
        {"role": "tool", "content": "12:00", "tool_name": "now"},
        {"role": "assistant", "content": "Sunny, rain; noon."},
    ]
    assert openai_messages(messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "unit": "celsius"}'},
                },
            ],
        },
        {"role": "tool", "content": "Sunny in Paris", "tool_call_id": "call_1"},
        {"role": "tool", "content": "Rain in Oslo", "tool_call_id": "call_2"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "now", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "12:00", "tool_call_id": "call_3"},
        {"role": "assistant", "content": "Sunny, rain; noon."},
    ]
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "unit": "celsius"}


def test_a_call_keeps_its_id_text_arguments_pass_as_they_are_and_a_stray_result_gets_a_fresh_id():
    messages = [
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [{"id": "abc", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        },
        {"role": "tool", "content": "1", "tool_name": "f"},
        {"role": "tool", "content": "2", "tool_name": "f"},
        {"role": "user", "content": "ünïcode </tool_call>"},
    ]
    assert openai_messages(messages) == [
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [
                {"id": "abc", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
        },
        {"role": "tool", "content": "1", "tool_call_id": "abc"},
        {"role": "tool", "content": "2", "tool_call_id": "call_2"},
        {"role": "user", "content": "ünïcode </tool_call>"},
    ]


def test_a_call_whose_arguments_are_not_a_json_object_stays_the_text_the_model_wrote():
    assert read_call(AssembledCall(0, "c1", "get_weather", ['{"city": ', '"Paris"}'])) == ToolCall(
        "get_weather", {"city": "Paris"}, id="c1"
    )
    assert read_call(AssembledCall(0, "c2", "now", [])) == ToolCall("now", {}, id="c2")
    for pieces in (['{"city": "Par'], ["[1, 2]"], ["not json"]):
        shown = read_call(AssembledCall(0, "c3", "get_weather", pieces))
        assert (
            shown.text == f'<tool_call>{{"name": "get_weather", "arguments": {"".join(pieces)}}}</tool_call>'
        )


# --- streamed answers ------------------------------------------------------------------------------


def test_text_streams_piece_by_piece_and_ends_with_usage_and_finish_reason(
    httpserver, base_url, allow_requests
):
    serve(
        httpserver,
        sse(
            event({"role": "assistant", "content": ""}),
            event({"content": "Hel"}),
            event({"content": "lo!"}),
            event({}, "stop"),
            event(usage=USAGE),
        ),
    )
    assert collect(OpenAIModel(MODEL, base_url=base_url)) == (
        [
            ModelChunk(text="Hel"),
            ModelChunk(text="lo!"),
            ModelChunk(done=True, usage=Usage(26, 12), finish_reason="stop"),
        ],
        None,
    )
    assert sent(httpserver) == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    ((request, _),) = httpserver.log
    assert request.headers["Authorization"] == f"Bearer {NO_KEY}"


def test_reasoning_deltas_arrive_as_thinking(httpserver, base_url, allow_requests):
    serve(
        httpserver, sse(event({"reasoning_content": "Greet."}), event({"content": "Hi!"}), event({}, "stop"))
    )
    assert collect(OpenAIModel(MODEL, base_url=base_url))[0] == [
        ModelChunk(thinking="Greet."),
        ModelChunk(text="Hi!"),
        ModelChunk(done=True, finish_reason="stop"),
    ]


def test_tool_call_deltas_split_across_chunks_and_two_parallel_calls_are_joined_by_index(
    httpserver, base_url, allow_requests
):
    serve(
        httpserver,
        sse(
            event({"role": "assistant", "content": None}),
            event(call_delta(0, id="call_a", name="get_weather")),
            event(call_delta(0, arguments='{"ci')),
            event(call_delta(1, id="call_b", name="get_weather", arguments='{"city": "Oslo", ')),
            event(call_delta(0, arguments='ty": "Paris", "unit"')),
            event(call_delta(1, arguments='"unit": "fahrenheit"}')),
            event(call_delta(0, arguments=': "celsius"}')),
            event({}, "tool_calls"),
            event(usage=USAGE),
        ),
    )
    request = ModelRequest(messages=REQUEST.messages, tools=[get_weather])
    model = OpenAIModel(
        MODEL, base_url=base_url, tool_choice="auto", options={"temperature": 0.0, "num_predict": 64}
    )
    assert collect(model, request) == (
        [
            ModelChunk(
                tool_calls=(ToolCall("get_weather", {"city": "Paris", "unit": "celsius"}, id="call_a"),)
            ),
            ModelChunk(
                tool_calls=(ToolCall("get_weather", {"city": "Oslo", "unit": "fahrenheit"}, id="call_b"),)
            ),
            ModelChunk(done=True, usage=Usage(26, 12), finish_reason="tool_calls"),
        ],
        None,
    )
    body = sent(httpserver)
    assert body["tools"] == [get_weather.to_json_schema()]
    assert (body["tool_choice"], body["temperature"], body["max_tokens"]) == ("auto", 0.0, 64)


def test_a_call_cut_by_the_token_limit_is_shown_as_text_and_never_runs(httpserver, base_url, allow_requests):
    serve(
        httpserver,
        sse(event(call_delta(0, id="c", name="get_weather", arguments='{"city": "Par')), event({}, "length")),
    )
    request = ModelRequest(messages=REQUEST.messages, tools=[get_weather])
    assert collect(OpenAIModel(MODEL, base_url=base_url), request) == (
        [
            ModelChunk(text='<tool_call>{"name": "get_weather", "arguments": {"city": "Par}</tool_call>'),
            ModelChunk(done=True, finish_reason="length"),
        ],
        None,
    )


def test_an_answer_cut_at_the_token_limit_ends_with_finish_reason_length(
    httpserver, base_url, allow_requests
):
    serve(httpserver, sse(event({"content": "1, 2,"}), event({}, "length"), event(usage=USAGE)))
    assert collect(OpenAIModel(MODEL, base_url=base_url))[0][-1] == ModelChunk(
        done=True, usage=Usage(26, 12), finish_reason="length"
    )


def test_calls_a_server_returns_as_text_are_read_by_the_request_s_call_parser(
    httpserver, base_url, allow_requests
):
    # llama-cpp-python's server, for Qwen: the call comes as bare JSON in content, not tool_calls.
    pieces = ['{"name": "get_weather", ', '"arguments": {"city": "Paris", ', '"unit": "celsius"}}']
    serve(httpserver, sse(*(event({"content": p}) for p in pieces), event({}, "stop")))
    request = ModelRequest(messages=REQUEST.messages, tools=[get_weather], call_parser=NativeCallParser)
    assert collect(OpenAIModel(MODEL, base_url=base_url), request) == (
        [
            ModelChunk(tool_calls=(ToolCall("get_weather", {"city": "Paris", "unit": "celsius"}),)),
            ModelChunk(done=True, finish_reason="stop"),
        ],
        None,
    )


def test_a_json_schema_goes_as_response_format_in_either_form(httpserver, base_url, allow_requests):
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    request = ModelRequest(messages=REQUEST.messages, format=schema)
    for schema_format, expected in [
        ("json_schema", {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}),
        ("json_object", {"type": "json_object", "schema": schema}),
    ]:
        httpserver.clear()
        serve(httpserver, sse(event({"content": '{"answer": 5}'}), event({}, "stop")))
        chunks, error = collect(OpenAIModel(MODEL, base_url=base_url, schema_format=schema_format), request)
        assert (error, chunks[0]) == (None, ModelChunk(text='{"answer": 5}'))
        assert sent(httpserver)["response_format"] == expected


def test_an_agent_runs_a_native_call_and_sends_the_result_back_under_the_call_s_id(
    httpserver, base_url, allow_requests
):
    answers = iter(
        [
            sse(
                event(
                    call_delta(
                        0, id="x1", name="get_weather", arguments='{"city": "Paris", "unit": "celsius"}'
                    )
                ),
                event({}, "tool_calls"),
            ),
            sse(event({"content": "Sunny."}), event({}, "stop")),
        ]
    )
    bodies: list[dict] = []

    def handler(request):
        from werkzeug import Response

        bodies.append(json.loads(request.get_data()))
        return Response(next(answers), content_type="text/event-stream")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    agent = Agent(model=OpenAIModel(MODEL, base_url=base_url), tools=[get_weather], protocol="native")
    assert agent.run("Weather in Paris?").text == "Sunny."
    assert bodies[1]["messages"][-2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'},
                }
            ],
        },
        {"role": "tool", "content": "Sunny in Paris", "tool_call_id": "call_1"},
    ]


# --- options, names and the key ----------------------------------------------------------------------


def test_an_unknown_option_names_the_ones_accepted(allow_requests):
    with pytest.raises(ModelError) as caught:
        OpenAIModel(MODEL, options={"num_ctx": 4096})
    expected = (
        f"OpenAIModel('{MODEL}') does not understand the option(s) num_ctx; it reads temperature, seed,"
        " num_predict, max_tokens, top_p, stop. The context size is set where the server is started."
    )
    assert str(caught.value) == expected
    chunks, error = collect(
        OpenAIModel(MODEL), ModelRequest(messages=REQUEST.messages, options={"num_ctx": 1})
    )
    assert (chunks, str(error)) == ([], expected)


def test_base_url_and_key_come_from_the_environment_and_the_key_is_never_shown(
    httpserver, base_url, allow_requests, monkeypatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", base_url + "/")
    monkeypatch.setenv("OPENAI_API_KEY", HOSTILE_KEY)
    model = OpenAIModel(MODEL)
    assert model.base_url == base_url
    assert repr(model) == f"OpenAIModel('{MODEL}', base_url='{base_url}')"
    assert model.description == f"{MODEL} via OpenAI-compatible server at {base_url}"
    # A server that echoes the key it was sent: the error says what failed, not the key.
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": f"Incorrect API key provided: {HOSTILE_KEY}", "code": "invalid_api_key"}},
        status=401,
    )
    chunks, error = collect(model)
    ((request, _),) = httpserver.log
    assert chunks == []
    assert request.headers["Authorization"] == f"Bearer {HOSTILE_KEY}"
    assert str(error) == (
        f"The OpenAI-compatible server at {base_url} refused the API key (HTTP 401): set"
        f" OPENAI_API_KEY, or pass OpenAIModel('{MODEL}', api_key=...)."
    )
    assert error.__cause__ is None  # the client's exception quotes the key
    httpserver.clear()
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": f"bad request for key {HOSTILE_KEY}"}}, status=400
    )
    _, error = collect(model)
    assert (
        str(error)
        == f"The OpenAI-compatible server at {base_url} answered HTTP 400: bad request for key [api key]"
    )


def test_the_key_is_hidden_in_an_error_however_the_server_escaped_it(httpserver, base_url, allow_requests):
    # The one redaction helper (meowgent_nb._redact) finds the key percent-, JSON- or HTML-escaped too.
    model = OpenAIModel(MODEL, base_url=base_url, api_key=HOSTILE_KEY)
    echoed = f"{quote(HOSTILE_KEY)} or {html.escape(HOSTILE_KEY)} or {json.dumps(HOSTILE_KEY)[1:-1]}"
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": f"bad request for key {echoed}"}}, status=400
    )
    _, error = collect(model)
    assert str(error) == (
        f"The OpenAI-compatible server at {base_url} answered HTTP 400:"
        " bad request for key [api key] or [api key] or [api key]"
    )
    assert error.__cause__ is None


@pytest.mark.parametrize("via", ["OPENAI_API_KEY", "api_key="])
def test_neither_the_key_nor_credentials_in_base_url_enter_a_cassette(
    httpserver, base_url, allow_requests, monkeypatch, tmp_path, via
):
    # The model repeats the key it was shown, and the prompt quotes it: both are scrubbed.
    serve(httpserver, sse(event({"content": f"Your key is {HOSTILE_KEY}."}), event({}, "stop")))
    with_credentials = base_url.replace("http://", "http://alice:s3cret-pw@")
    if via == "OPENAI_API_KEY":
        monkeypatch.setenv("OPENAI_API_KEY", HOSTILE_KEY)
    model = OpenAIModel(MODEL, base_url=with_credentials, api_key=HOSTILE_KEY if via == "api_key=" else None)
    path = tmp_path / "c.json"
    request = ModelRequest(messages=[{"role": "user", "content": f"Is {HOSTILE_KEY} my key?"}])
    chunks, error = collect(RecordingModel(model, path), request)
    assert (error, chunks[0].text) == (None, f"Your key is {HOSTILE_KEY}.")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    text = path.read_text()
    for secret in (HOSTILE_KEY, "KEY-7f3a", "s3cret", "alice"):
        assert secret not in text
    assert '{"content": "Is  my key?", "role": "user"}' in text


def test_credentials_in_base_url_are_not_shown(allow_requests):
    model = OpenAIModel(MODEL, base_url="https://user:pa55@box.example/v1", api_key="sk-1")
    assert model.description == f"{MODEL} via OpenAI-compatible server at https://box.example/v1"
    assert "pa55" not in repr(model) and "sk-1" not in repr(model)


def test_no_request_leaves_while_model_requests_are_not_allowed(httpserver, base_url):
    chunks, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert chunks == []
    assert str(error).startswith(f"Refusing to contact the OpenAI-compatible server at {base_url}:")
    assert httpserver.log == []


# --- failures ---------------------------------------------------------------------------------------


def test_an_unknown_model_says_to_use_a_served_name(httpserver, base_url, allow_requests):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": f"The model `{MODEL}` does not exist.", "type": "NotFoundError", "code": 404}},
        status=404,
    )
    _, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert str(error) == (
        f"Model '{MODEL}' is not served by the OpenAI-compatible server at {base_url} (The model"
        f" `{MODEL}` does not exist.): use one of the names its /models lists (OpenAIModel.list_models())."
    )


def test_a_server_that_is_not_openai_points_at_base_url(httpserver, base_url, allow_requests):
    httpserver.expect_request("/v1/chat/completions").respond_with_data("404 page not found", status=404)
    _, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert str(error) == (
        f"The OpenAI-compatible server at {base_url} has no Chat Completions endpoint (HTTP 404: 404"
        " page not found): check base_url / OPENAI_BASE_URL, which usually ends in /v1."
    )
    httpserver.clear()
    serve(httpserver, "<html><body>Please log in</body></html>", content_type="text/html")
    _, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert str(error) == (
        f"The server at {base_url} did not answer like an OpenAI-compatible server (its answer had no"
        " Chat Completions events): check base_url / OPENAI_BASE_URL, which usually ends in /v1."
    )


def test_a_context_too_long_says_to_shorten_the_conversation(httpserver, base_url, allow_requests):
    words = "This model's maximum context length is 2048 tokens. However, you requested 2533 tokens."
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": words, "type": "invalid_request_error", "code": "context_length_exceeded"}},
        status=400,
    )
    _, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert str(error) == (
        f"The conversation does not fit the context of '{MODEL}' on the OpenAI-compatible server at"
        f" {base_url} ({words}): start a new conversation, lower num_predict, or serve the model with a"
        " larger context."
    )


def test_an_error_event_mid_stream_keeps_what_came_before(httpserver, base_url, allow_requests):
    serve(httpserver, sse(event({"content": "Hel"}), {"error": {"message": "engine died"}}, done=False))
    chunks, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == f"The OpenAI-compatible server at {base_url} reported an error: engine died"


def test_an_event_stream_without_events_is_reported_cut_off(httpserver, base_url, allow_requests):
    serve(httpserver, "")
    chunks, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert chunks == []
    assert str(error).startswith(
        f"The OpenAI-compatible server at {base_url} ended its answer before it began (the server sent"
        " no events): either the conversation (about 8 tokens) is longer than the model's context,"
    )
    assert (type(error), error.retry) == (
        ModelError,
        RetryCause("cut", "the server ended the answer before it began (another request, or a full context)"),
    )


def test_a_stream_without_finish_reason_is_reported_cut_off(httpserver, base_url, allow_requests):
    serve(httpserver, sse(event({"content": "Hel"}), done=False))
    chunks, error = collect(OpenAIModel(MODEL, base_url=base_url))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == (
        f"The OpenAI-compatible server at {base_url} ended its answer early (the stream ended without"
        f" a finish_reason): {INTERRUPTED}"
    )
    assert (type(error), error.retry) == (StreamCut, CUT_CAUSE)


def test_a_cut_answer_near_the_context_window_is_put_down_to_it_and_not_asked_again(
    httpserver, base_url, allow_requests
):
    serve(httpserver, sse(event({"content": "Hel"}), done=False))
    long = ModelRequest(messages=[{"role": "user", "content": "word " * 800}])  # about 1,000 tokens
    _chunks, error = collect(OpenAIModel(MODEL, base_url=base_url, n_ctx=1100), long)
    assert str(error) == (
        f"The OpenAI-compatible server at {base_url} ended its answer early (the stream ended without"
        " a finish_reason): the conversation (about 1,008 tokens) is near the model's context window"
        " of 1,100 tokens, and a server that runs out of it stops this way. Start a new conversation"
        " (%agent reset, or agent.reset()), or serve the model with a larger context."
    )
    assert (type(error), error.retry) == (StreamCut, None)


def test_a_connection_closed_mid_answer_is_reported_cut_off(allow_requests):
    first = f"data: {json.dumps(event({'content': 'Hel'}))}\n\n".encode()
    pieces = CHUNKED_HEADERS, b"%x\r\n%s\r\n" % (len(first), first), b'40\r\ndata: {"id": "chat'
    with RawServer(*pieces) as server:
        chunks, error = collect(OpenAIModel(MODEL, base_url=server.host + "/v1"))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == (
        f"The OpenAI-compatible server at {server.host}/v1 ended its answer early (the connection"
        f" closed before the answer was complete): {INTERRUPTED}"
    )
    assert (type(error), error.retry) == (StreamCut, CUT_CAUSE)


def test_a_silent_server_times_out_with_the_limit_and_how_to_raise_it(allow_requests):
    with RawServer(CHUNKED_HEADERS, hold=True) as server:
        chunks, error = collect(OpenAIModel(MODEL, base_url=server.host + "/v1", timeout=0.2))
    assert chunks == []
    assert str(error) == (
        f"Timed out talking to the OpenAI-compatible server at {server.host}/v1: no answer within 0.2 s."
        f" The model may still be loading, or the server is busy: allow longer with"
        f" OpenAIModel('{MODEL}', timeout=0.4)."
    )


def test_stopping_early_closes_the_connection(allow_requests):
    first = f"data: {json.dumps(event({'content': 'Hel'}))}\n\n".encode()
    with RawServer(CHUNKED_HEADERS, b"%x\r\n%s\r\n" % (len(first), first), hold=True) as server:
        model = OpenAIModel(MODEL, base_url=server.host + "/v1")
        assert asyncio.run(first_chunk(model, REQUEST)) == ModelChunk(text="Hel")
    assert server.client_hung_up


def test_without_the_openai_client_the_error_says_how_to_install_it(allow_requests, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # as if not installed
    chunks, error = collect(OpenAIModel(MODEL, base_url="http://127.0.0.1:9/v1"))
    assert (chunks, str(error)) == (
        [],
        'OpenAIModel needs the openai client: pip install "meowgent-nb[openai]"',
    )


def test_a_refused_connection_says_to_start_the_server(allow_requests):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _, error = collect(OpenAIModel(MODEL, base_url=f"http://127.0.0.1:{port}/v1"))
    assert str(error) == (
        f"Cannot reach the OpenAI-compatible server at http://127.0.0.1:{port}/v1: is it running? Start"
        " it (e.g. `vllm serve MODEL` or `python -m llama_cpp.server --model FILE`), or set base_url= /"
        " OPENAI_BASE_URL to where it runs."
    )


def test_list_models_names_what_the_server_serves(httpserver, base_url, allow_requests):
    httpserver.expect_request("/v1/models").respond_with_json(
        {
            "object": "list",
            "data": [
                {"id": "a", "object": "model", "owned_by": "me"},
                {"id": "b", "object": "model", "owned_by": "me"},
            ],
        }
    )
    assert asyncio.run(OpenAIModel(MODEL, base_url=base_url).list_models()) == ["a", "b"]


# --- the spec, from a notebook and from code --------------------------------------------------------


def test_agent_and_the_agent_cell_reach_the_server_named_by_openai_base_url(
    ip, httpserver, base_url, allow_requests, monkeypatch
):
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    agent = Agent(model="openai:served-model")
    assert (type(agent.model), agent.model.base_url) == (OpenAIModel, base_url)
    serve(httpserver, sse(event({"content": "Hi from the server."}), event({}, "stop")))
    assert agent.run("Hello").text == "Hi from the server."
    httpserver.clear()
    serve(httpserver, sse(event({"content": "Hi from the server."}), event({}, "stop")))
    with capture_output() as captured:
        ip.run_cell_magic("agent", "-m openai:served-model --new", "Hello")
    assert "Hi from the server." in captured.outputs[-1].data["text/plain"]
    body = sent(httpserver)
    # %%agent's temperature goes to the server; its context size (num_ctx) is the server's own.
    assert (body["model"], body["messages"][-1], body["temperature"]) == (
        "served-model",
        {"role": "user", "content": "Hello"},
        0.1,
    )
    assert "num_ctx" not in body


def test_the_agent_cells_openai_base_url_setting_wins_over_the_environment(
    ip, httpserver, base_url, allow_requests, monkeypatch
):
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    serve(httpserver, sse(event({"content": "Hi from the configured server."}), event({}, "stop")))
    ip.run_line_magic("config", f"AgentMagics.openai_base_url = {base_url!r}")
    try:
        with capture_output() as captured:
            ip.run_cell_magic("agent", "-m openai:served-model --new", "Hello")
    finally:
        ip.run_line_magic("config", "AgentMagics.openai_base_url = ''")
    assert "Hi from the configured server." in captured.outputs[-1].data["text/plain"]
    assert sent(httpserver)["model"] == "served-model"


def test_making_a_model_imports_no_client():
    import subprocess

    code = (
        "import sys, meowgent_nb; from meowgent_nb.models.resolve import resolve_model;"
        " m = resolve_model('openai:x'); print(type(m).__name__, 'openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "OpenAIModel False\n"


def test_a_known_window_lets_a_served_model_be_compacted_and_a_bad_one_is_refused():
    from meowgent_nb.agent.window import context_window

    assert context_window(OpenAIModel(MODEL, base_url="http://127.0.0.1:9/v1")) is None
    assert context_window(OpenAIModel(MODEL, base_url="http://127.0.0.1:9/v1", n_ctx=32768)) == 32768
    for bad in (0, -5, True, 2.5, "8k"):
        with pytest.raises(ModelError) as caught:
            OpenAIModel(MODEL, n_ctx=bad)
        assert (
            str(caught.value)
            == f"n_ctx must be a positive number of tokens (the server's context window), not {bad!r}."
        )
