"""`OllamaModel` through the real ``ollama`` client, against real local HTTP servers.

Well-formed answers and HTTP errors come from pytest-httpserver, which streams NDJSON in the
shape Ollama's ``/api/chat`` sends. Failures werkzeug cannot produce (a chunked stream cut
mid-answer, a server that goes silent) come from `RawServer`, a one-connection socket server
that sends exactly the bytes it is given.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import TYPE_CHECKING, Annotated, Literal

import httpx
import pytest

import meowgent_nb.models
from meowgent_nb import ToolCall, tool
from meowgent_nb.models import ModelChunk, ModelError, ModelRequest, OllamaModel, Usage
from meowgent_nb.models.ollama import DEFAULT_HOST
from tests.support.model_streams import collect_stream, first_chunk
from tests.support.ollama_wire import CREATED, FINAL, FINAL_CHUNK, FINAL_USAGE, MODEL, ndjson, part

if TYPE_CHECKING:
    from typing_extensions import Self

REQUEST = ModelRequest(messages=[{"role": "user", "content": "Hi"}])


@tool
def get_weather(city: Annotated[str, "The city, e.g. Paris"], unit: Literal["celsius", "fahrenheit"]) -> str:
    """Get the current weather in a city."""
    return f"Sunny in {city}"


def collect(
    model: OllamaModel, request: ModelRequest = REQUEST
) -> tuple[list[ModelChunk], ModelError | None]:
    """Every chunk the model streamed, and the `ModelError` that ended the stream, if any."""
    return collect_stream(model, request)


def cut_off(host: str, detail: str) -> str:
    return (
        f"The connection to the Ollama server at {host} was cut off mid-answer ({detail}):"
        " the server may have stopped, restarted or crashed (check its log); Ollama queues"
        " requests, so another student's request does not do this."
    )


@pytest.fixture
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    # These servers are local test servers, so the suite-wide guard may let requests through.
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)


@pytest.fixture
def host(httpserver) -> str:
    return f"http://{httpserver.host}:{httpserver.port}"


def serve_chat(httpserver, body: str, status: int = 200, content_type: str = "application/x-ndjson") -> None:
    httpserver.expect_request("/api/chat", method="POST").respond_with_data(
        body, status=status, content_type=content_type
    )


# --- streamed answers ----------------------------------------------------------------------------


def test_content_streams_chunk_by_chunk_and_ends_with_usage(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(part("Hel"), part("lo!"), FINAL))
    assert collect(OllamaModel(MODEL, host=host)) == (
        [ModelChunk(text="Hel"), ModelChunk(text="lo!"), FINAL_CHUNK],
        None,
    )


def test_thinking_streams_apart_from_the_answer(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(part(thinking="Greet"), part(thinking=" back."), part("Hi!"), FINAL))
    assert collect(OllamaModel(MODEL, host=host)) == (
        [
            ModelChunk(thinking="Greet"),
            ModelChunk(thinking=" back."),
            ModelChunk(text="Hi!"),
            FINAL_CHUNK,
        ],
        None,
    )


def test_native_tool_calls_become_tool_call_values(httpserver, host, allow_requests):
    calls = [
        {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}},
        {"function": {"name": "get_weather", "arguments": {"city": "Oslo", "unit": "fahrenheit"}}},
    ]
    serve_chat(httpserver, ndjson(part(tool_calls=calls), FINAL))
    expected_calls = (
        ToolCall("get_weather", {"city": "Paris", "unit": "celsius"}),
        ToolCall("get_weather", {"city": "Oslo", "unit": "fahrenheit"}),
    )
    assert collect(OllamaModel(MODEL, host=host)) == (
        [ModelChunk(tool_calls=expected_calls), FINAL_CHUNK],
        None,
    )


def test_a_final_part_without_durations_gives_what_it_has(httpserver, host, allow_requests):
    # Ollama omits zero metrics (Go's omitempty); a "load" answer has none at all.
    final = {
        "model": MODEL,
        "created_at": CREATED,
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": "load",
    }
    serve_chat(httpserver, ndjson(final))
    assert collect(OllamaModel(MODEL, host=host)) == (
        [ModelChunk(done=True, usage=Usage(), finish_reason="load")],
        None,
    )


def test_an_answer_cut_at_the_token_limit_ends_with_finish_reason_length(httpserver, host, allow_requests):
    # What Ollama sends when num_predict (or the context) runs out mid-answer.
    cut = {**FINAL, "done_reason": "length"}
    serve_chat(httpserver, ndjson(part('{"name": "get_'), part("weather"), cut))
    assert collect(OllamaModel(MODEL, host=host)) == (
        [
            ModelChunk(text='{"name": "get_'),
            ModelChunk(text="weather"),
            ModelChunk(done=True, usage=FINAL_USAGE, finish_reason="length"),
        ],
        None,
    )


def test_a_final_part_without_done_reason_has_no_finish_reason(httpserver, host, allow_requests):
    # Older servers send no done_reason; nothing is made up for them.
    final = {key: value for key, value in FINAL.items() if key != "done_reason"}
    serve_chat(httpserver, ndjson(part("Hi"), final))
    assert collect(OllamaModel(MODEL, host=host)) == (
        [ModelChunk(text="Hi"), ModelChunk(done=True, usage=FINAL_USAGE)],
        None,
    )


# --- what the server receives --------------------------------------------------------------------


def test_the_request_body_carries_messages_tools_think_and_merged_options(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(FINAL))
    model = OllamaModel(MODEL, host=host, options={"temperature": 0.0, "seed": 1}, think=False)
    request = ModelRequest(
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
                ],
            },
            {"role": "tool", "content": "Sunny in Paris", "tool_name": "get_weather"},
        ],
        tools=[get_weather],
        think=True,
        options={"seed": 42, "num_ctx": None},
    )
    assert collect(model, request) == ([FINAL_CHUNK], None)
    [(received, _)] = httpserver.log
    assert (received.method, received.path) == ("POST", "/api/chat")
    assert received.get_json() == {
        "model": MODEL,
        "stream": True,
        "think": True,  # the request's think wins over the model's
        # defaults < the model's options < the request's; None drops an option
        "options": {"temperature": 0.0, "seed": 42},
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            # The ollama client drops empty values, so the empty content is not sent.
            {
                "role": "assistant",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
                ],
            },
            {"role": "tool", "content": "Sunny in Paris", "tool_name": "get_weather"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Get the current weather in a city.",
                    # ollama 0.6's Tool model keeps only type/required/properties here: the
                    # schema's "additionalProperties": false does not reach the server.
                    "parameters": {
                        "type": "object",
                        "required": ["city", "unit"],
                        "properties": {
                            "city": {"type": "string", "description": "The city, e.g. Paris"},
                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                        },
                    },
                },
            }
        ],
    }


def test_defaults_send_the_default_options_and_no_think(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(FINAL))
    collect(OllamaModel(MODEL, host=host))
    [(received, _)] = httpserver.log
    assert received.get_json() == {
        "model": MODEL,
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
        "options": {"num_ctx": 16384, "temperature": 0.1},
        "tools": [],  # the ollama client always sends the list, empty when there are no tools
    }


def test_the_model_think_applies_when_the_request_leaves_it_open(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(FINAL))
    collect(OllamaModel(MODEL, host=host, think=False))
    assert httpserver.log[0][0].get_json()["think"] is False


def test_ollama_host_is_read_when_the_model_is_made(httpserver, host, allow_requests, monkeypatch):
    serve_chat(httpserver, ndjson(part("Hi"), FINAL))
    monkeypatch.setenv("OLLAMA_HOST", host)
    model = OllamaModel(MODEL)
    monkeypatch.delenv("OLLAMA_HOST")
    assert model.host == host
    assert collect(model)[0][0] == ModelChunk(text="Hi")


@pytest.mark.parametrize("env", [None, ""])
def test_without_host_or_ollama_host_the_default_address_is_used(monkeypatch, env):
    if env is None:
        monkeypatch.delenv("OLLAMA_HOST", raising=False)
    else:
        monkeypatch.setenv("OLLAMA_HOST", env)
    assert repr(OllamaModel("qwen2.5:0.5b")) == "OllamaModel('qwen2.5:0.5b', host='http://127.0.0.1:11434')"
    assert OllamaModel("qwen2.5:0.5b").host == DEFAULT_HOST


def test_a_repr_leaves_the_hosts_credentials_out():
    # A notebook shows the repr of `model` alone in a cell, and tracebacks show it too.
    model = OllamaModel("qwen2.5:0.5b", host="http://ann:s3cret@gpu:11434")
    assert repr(model) == "OllamaModel('qwen2.5:0.5b', host='http://gpu:11434')"
    assert model.host == "http://ann:s3cret@gpu:11434"


def test_list_models_names_the_models_the_server_has(httpserver, host, allow_requests):
    details = {
        "parent_model": "",
        "format": "gguf",
        "family": "qwen3",
        "families": ["qwen3"],
        "parameter_size": "751.63M",
        "quantization_level": "Q4_K_M",
    }
    models = [
        {
            "name": name,
            "model": name,
            "modified_at": "2025-05-01T10:00:00.123456789+02:00",
            "size": 522653767,
            "digest": "7df6b6e09427a8fb",
            "details": details,
        }
        for name in (MODEL, "qwen2.5:0.5b")
    ]
    httpserver.expect_request("/api/tags", method="GET").respond_with_json({"models": models})
    assert asyncio.run(OllamaModel(MODEL, host=host).list_models()) == [MODEL, "qwen2.5:0.5b"]


# --- the guard -----------------------------------------------------------------------------------


def test_no_request_leaves_while_model_requests_are_not_allowed(httpserver, host):
    serve_chat(httpserver, ndjson(FINAL))
    model = OllamaModel(MODEL, host=host)
    chunks, error = collect(model)
    assert chunks == []
    assert str(error).startswith(f"Refusing to contact the Ollama server at {host}: ")
    with pytest.raises(ModelError, match=r"^Refusing to contact the Ollama server at "):
        asyncio.run(model.list_models())
    assert httpserver.log == []


# --- errors, translated --------------------------------------------------------------------------


def test_a_model_the_server_lacks_says_how_to_pull_it(httpserver, host, allow_requests):
    # Ollama's own answer for an unknown model, status and body.
    serve_chat(httpserver, json.dumps({"error": f"model '{MODEL}' not found"}), 404, "application/json")
    chunks, error = collect(OllamaModel(MODEL, host=host))
    assert chunks == []
    assert str(error) == (
        f"Model '{MODEL}' is not available on the Ollama server at {host}: pull it with `ollama pull {MODEL}`."
    )
    assert error.__cause__.status_code == 404


def test_a_404_that_is_not_about_the_model_is_reported_as_is(httpserver, host, allow_requests):
    serve_chat(httpserver, "404 page not found", 404, "text/plain")
    assert str(collect(OllamaModel(MODEL, host=host))[1]) == (
        f"The Ollama server at {host} answered HTTP 404: 404 page not found"
    )


def test_a_server_error_gives_the_status_and_the_server_s_words(httpserver, host, allow_requests):
    body = json.dumps({"error": "llama runner process has terminated: exit status 2"})
    serve_chat(httpserver, body, 500, "application/json")
    assert str(collect(OllamaModel(MODEL, host=host))[1]) == (
        f"The Ollama server at {host} answered HTTP 500: llama runner process has terminated: exit status 2"
    )


@pytest.mark.parametrize(
    ("server_error", "hint"),
    [
        (
            f"registry.ollama.ai/library/{MODEL} does not support tools",
            " (use the `xml` tool protocol, which works with any model)",
        ),
        (f'"{MODEL}" does not support thinking', " (pass think=None or False, or use a thinking model)"),
    ],
)
def test_a_capability_the_model_lacks_comes_with_a_hint(httpserver, host, allow_requests, server_error, hint):
    serve_chat(httpserver, json.dumps({"error": server_error}), 400, "application/json")
    assert str(collect(OllamaModel(MODEL, host=host))[1]) == (
        f"The Ollama server at {host} answered HTTP 400: {server_error}{hint}"
    )


def test_an_error_line_mid_stream_keeps_what_came_before(httpserver, host, allow_requests):
    error_line = {"error": "an error was encountered while running the model: unexpected EOF"}
    serve_chat(httpserver, ndjson(part("Hel"), error_line))
    chunks, error = collect(OllamaModel(MODEL, host=host))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == (
        f"The Ollama server at {host} reported an error mid-answer:"
        " an error was encountered while running the model: unexpected EOF"
    )


def test_a_refused_connection_says_to_start_the_server(allow_requests):
    with socket.socket() as probe:  # a port that was free a moment ago, so nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OllamaModel(MODEL, host=f"http://127.0.0.1:{port}")
    expected = (
        f"Cannot reach the Ollama server at http://127.0.0.1:{port}: is it running?"
        " Start it with `ollama serve` (or set OLLAMA_HOST to where it runs)."
    )
    chunks, error = collect(model)
    assert (chunks, str(error)) == ([], expected)
    # A streamed request lets httpx's error through ...
    assert type(error.__cause__) is httpx.ConnectError
    with pytest.raises(ModelError) as listed:
        asyncio.run(model.list_models())
    assert str(listed.value) == expected
    # ... while a plain one turns it into ollama's own ConnectionError.
    assert type(listed.value.__cause__) is ConnectionError


def test_a_stream_without_its_final_part_is_reported_cut_off(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(part("Hel"), part("lo")))
    chunks, error = collect(OllamaModel(MODEL, host=host))
    assert chunks == [ModelChunk(text="Hel"), ModelChunk(text="lo")]
    assert str(error) == cut_off(host, "the stream ended without its final `done` message")
    assert error.__cause__ is None


def test_an_incomplete_last_line_is_reported_cut_off(httpserver, host, allow_requests):
    serve_chat(httpserver, ndjson(part("Hel")) + '{"model": "qwen3:0.6b", "created_at": "2025-')
    chunks, error = collect(OllamaModel(MODEL, host=host))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == cut_off(host, "its last line was incomplete")
    assert isinstance(error.__cause__, json.JSONDecodeError)


def test_an_answer_that_is_not_ndjson_points_at_the_host(httpserver, host, allow_requests):
    serve_chat(httpserver, "<html><body>Please log in</body></html>", content_type="text/html")
    assert str(collect(OllamaModel(MODEL, host=host))[1]) == (
        f"The server at {host} did not answer like an Ollama server"
        " (it sent '<html><body>Please log in</body></html>'): check the host= you passed or OLLAMA_HOST."
    )


# --- failures only a raw socket can produce ------------------------------------------------------

CHUNKED_HEADERS = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def chunk(data: str | dict) -> bytes:
    """One HTTP/1.1 chunk, as Ollama's server frames each streamed part."""
    raw = (ndjson(data) if isinstance(data, dict) else data).encode()
    return b"%x\r\n%s\r\n" % (len(raw), raw)


class RawServer:
    """Accepts one connection, reads the request, sends ``pieces``, then hangs up, or, with
    ``hold``, stays silent until the client hangs up (at most 5 s)."""

    def __init__(self, *pieces: bytes, hold: bool = False):
        self.pieces = pieces
        self.hold = hold
        self.client_hung_up = False
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.host = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, name="raw-ollama", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._listener.close()
        assert not self._thread.is_alive()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                received = b""
                while b"\r\n\r\n" not in received:
                    received += conn.recv(65536)
                head, _, body = received.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(b"".join(self.pieces))
                if self.hold:
                    try:
                        self.client_hung_up = conn.recv(1) == b""
                    except TimeoutError:
                        pass
            return


def test_a_connection_closed_mid_answer_is_reported_cut_off(allow_requests):
    # The server dies after one part and half of the next: no closing zero-length chunk.
    pieces = CHUNKED_HEADERS, chunk(part("Hel")), chunk('{"model": "qwen3:0.6b", "created_at": "2025-')
    with RawServer(*pieces) as server:
        chunks, error = collect(OllamaModel(MODEL, host=server.host))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == cut_off(server.host, "the connection closed before the answer was complete")
    assert isinstance(error.__cause__, httpx.RemoteProtocolError)


def test_a_silent_server_times_out_with_the_limit_and_how_to_raise_it(allow_requests):
    with RawServer(CHUNKED_HEADERS, chunk(part("Hel")), hold=True) as server:
        chunks, error = collect(OllamaModel(MODEL, host=server.host, timeout=0.2))
    assert chunks == [ModelChunk(text="Hel")]
    assert str(error) == (
        f"Timed out talking to the Ollama server at {server.host}: no data arrived for 0.2 s while"
        " waiting for the answer. The model may still be loading, or the machine is slow:"
        f" allow longer with OllamaModel('{MODEL}', timeout=0.4)."
    )
    assert isinstance(error.__cause__, httpx.ReadTimeout)
    assert server.client_hung_up


def test_stopping_early_closes_the_connection(allow_requests):
    with RawServer(CHUNKED_HEADERS, chunk(part("Hel")), hold=True) as server:
        assert asyncio.run(first_chunk(OllamaModel(MODEL, host=server.host), REQUEST)) == ModelChunk(
            text="Hel"
        )
    assert server.client_hung_up


# --- images in tool results (vision models) --------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20


@tool
def snapshot() -> str:
    """Take a picture."""
    from meowgent_nb.tools.media import McpImage, McpText

    return McpText("Here it is:\n[image: image/png]", media=(McpImage(PNG, "image/png"),))


def serve_vision(httpserver, capabilities: list[str]) -> list[dict]:
    """/api/show with these capabilities; /api/chat calls snapshot, then answers. Returns the chat bodies."""
    from werkzeug.wrappers import Response

    bodies: list[dict] = []
    httpserver.expect_request("/api/show", method="POST").respond_with_json(
        {
            "modelfile": "",
            "parameters": "",
            "template": "",
            "details": {},
            "model_info": {},
            "capabilities": capabilities,
        }
    )

    def chat(request):
        bodies.append(json.loads(request.data))
        text = (
            '<tool_call>{"name": "snapshot", "arguments": {}}</tool_call>'
            if len(bodies) % 2
            else "A small PNG."
        )
        return Response(ndjson(part(text), FINAL), content_type="application/x-ndjson")

    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(chat)
    return bodies


@pytest.mark.parametrize(
    ("capabilities", "sent"), [(["completion", "vision"], True), (["completion", "tools"], False)]
)
def test_a_vision_model_is_sent_a_results_image_as_ollama_takes_it_and_the_server_is_asked_once(
    httpserver, host, allow_requests, capabilities, sent
):
    from meowgent_nb import Agent

    bodies = serve_vision(httpserver, capabilities)
    model = OllamaModel(MODEL, host=host)
    agent = Agent(model, tools=[snapshot], protocol="xml")  # the results go back as text, their images beside
    assert agent.run("What do you see?").text == "A small PNG."
    assert agent.run("And now?").text == "A small PNG."
    import base64

    for body in (bodies[1], bodies[3]):
        carried = next(m for m in reversed(body["messages"]) if "<tool_response" in m["content"])
        assert carried.get("images") == ([base64.b64encode(PNG).decode()] if sent else None)
    shows = [r for r, _ in httpserver.log if r.path == "/api/show"]
    assert [json.loads(r.data) for r in shows] == [{"model": MODEL}]


def test_a_model_told_it_sees_is_not_asked_and_one_whose_server_is_down_reads_text(allow_requests):
    assert asyncio.run(OllamaModel(MODEL, host="http://127.0.0.1:9", images=True).accepts_images()) is True
    assert asyncio.run(OllamaModel(MODEL, host="http://127.0.0.1:9").accepts_images()) is False
