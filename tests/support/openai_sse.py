"""Random and mutated Chat Completions event streams (hypothesis strategies), and a way to read them.

`sse_streams` draws the bytes of a whole streamed answer: events shaped like Chat Completions
chunks in which any field, at any level, may be absent, null, or any other JSON value (huge and
negative numbers, text, lists, objects); odd lines (not JSON, ``[DONE]`` early, comments,
``event:`` lines); and, for a share of streams, byte-level mutations of the whole (bytes deleted,
inserted, replaced, the stream cut). The fuzz test (tests/models/test_openai_fuzz.py) and the
benchmark (benchmarks/fuzz_openai_stream.py) feed them through `InMemory`: the real `OpenAIModel`
and ``openai`` client (its SSE decoder and JSON reading in front of ours), whose HTTP transport
is httpx2's in-memory ``MockTransport`` answering with the drawn bytes: no socket per example,
so hundreds of examples take seconds (a request to a local HTTP server costs ~0.15 s here).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from hypothesis import strategies as st

from meowgent_nb.models import OpenAIModel

ABSENT = object()
"""A field left out of its object."""

ODD_NUMBERS = st.sampled_from([10**400, -(10**400), -1, 2**63, 26.5, -0.0, 1e308, float("inf"), float("nan")])
ODD_TEXT = st.sampled_from(["\ud800", "a\udfffb", "\x00", "\u2028", "</tool_call>", "x" * 2000])
LEAVES = (
    st.none() | st.booleans() | st.integers() | ODD_NUMBERS | st.floats() | st.text(max_size=12) | ODD_TEXT
)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _field(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The well-formed value most of the time; otherwise absent, or any JSON value at all."""
    return st.integers(0, 29).flatmap(
        lambda pick: good if pick < 28 else st.just(ABSENT) if pick == 28 else JSON
    )


def _list(item: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(_field(item), max_size=2).map(lambda items: [i for i in items if i is not ABSENT])


def _object(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    made = st.fixed_dictionaries({name: _field(value) for name, value in fields.items()})
    return made.map(lambda d: {k: v for k, v in d.items() if v is not ABSENT})


NAMES = st.sampled_from(["get_weather", "now", "", "get_", "get\ud800", "n" * 1001])
ARGUMENTS = st.sampled_from(
    [
        '{"city": "Paris", "unit": "celsius"}',
        '{"ci',
        'ty": "Oslo"}',
        "{}",
        "",
        "[1]",
        '{"a": 1, "a": 2}',
        '{"city": "\\ud800"}',
        '{"city": ' + "[" * 150 + "]" * 150 + "}",
        '{"city": ' + "[" * 5000 + "]" * 5000 + "}",
    ]
)
CALL = _object(
    index=st.integers(0, 3),
    id=st.sampled_from(["call_1", "call_2", ""]),
    type=st.just("function"),
    function=_object(name=NAMES, arguments=ARGUMENTS | st.builds(json.dumps, JSON) | JSON),
)
DELTA = _object(
    role=st.just("assistant"),
    content=st.text(max_size=20) | ODD_TEXT,
    reasoning_content=st.text(max_size=10),
    tool_calls=_list(CALL),
)
CHOICE = _object(
    index=st.just(0), delta=DELTA, finish_reason=st.sampled_from(["stop", "length", "tool_calls", ""])
)
USAGE = _object(prompt_tokens=st.integers(0, 10_000), completion_tokens=st.integers(0, 10_000))
CHUNK = _object(
    id=st.just("chatcmpl-1"),
    object=st.just("chat.completion.chunk"),
    choices=_list(CHOICE),
    usage=USAGE | st.none(),
)


def _data(value: Any) -> str:
    return f"data: {json.dumps(value, allow_nan=True)}\n\n"


ODD_LINES = st.sampled_from(
    [
        "data: not json\n\n",
        "data: [DONE]\n\n",
        ": a comment\n\n",
        "event: error\ndata: {}\n\n",
        'data: {"error": {"message": "engine died"}}\n\n',
        'data: {"error": "x"}\n\n',
        "data: " + "[" * 5000 + "\n\n",
        'data: {"choices": [{"delta": {"content": "a"\n\n',
        "data:\n\n",
        "retry: 10\n\n",
    ]
)
EVENTS = st.lists(st.one_of(*[CHUNK.map(_data)] * 8, ODD_LINES, JSON.map(_data)), max_size=6)


@st.composite
def _mutated(draw: st.DrawFn, body: bytes) -> bytes:
    """``body`` with a few bytes deleted, inserted or replaced, or cut short."""
    data = bytearray(body)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "cut"]))
        if kind == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif kind == "insert":
            data[at:at] = draw(
                st.binary(min_size=1, max_size=8)
                | st.sampled_from([b"\n", b"\n\n", b"data: ", b"\r", b'"', b"\xff"])
            )
        elif kind == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at:]
    return bytes(data)


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    """The bytes of one streamed answer, as an OpenAI-compatible server (or a broken one) sends them."""
    events = draw(EVENTS)
    if draw(st.booleans()):
        events.append(_data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    body = ("".join(events) + ("data: [DONE]\n\n" if draw(st.booleans()) else "")).encode()
    return draw(_mutated(body)) if draw(st.integers(0, 3)) == 0 else body


def surprises(model: Any, request: Any) -> tuple[int, BaseException | None]:
    """Read one stream to its end: how many chunks came, and any exception other than `ModelError`
    (also when a chunk holds what JSON cannot write as UTF-8, or usage that is not a count)."""
    import asyncio
    from contextlib import aclosing

    from meowgent_nb.models import ModelError

    async def read() -> int:
        count = 0
        async with aclosing(model.stream(request)) as stream:
            async for chunk in stream:
                count += 1
                # What came can be written as UTF-8 JSON (a cassette, a message), counts are counts.
                calls = [(call.name, call.arguments, call.id) for call in chunk.tool_calls]
                json.dumps(
                    [chunk.text, chunk.thinking, calls, chunk.finish_reason], ensure_ascii=False
                ).encode()
                usage = chunk.usage
                if usage is not None and not all(
                    n is None or (type(n) is int and n >= 0)
                    for n in (usage.prompt_tokens, usage.completion_tokens)
                ):
                    raise AssertionError(f"usage {usage!r}")
        return count

    try:
        return asyncio.run(read()), None
    except ModelError:
        return 0, None
    except Exception as error:  # noqa: BLE001 - what the fuzz counts
        return 0, error


class InMemory(OpenAIModel):
    """`OpenAIModel` whose client's transport answers every request with ``body`` (an event stream)."""

    body = b""

    def _client(self) -> tuple[Any, Any]:
        import openai

        def answer(request: httpx2.Request) -> httpx2.Response:
            return httpx2.Response(200, content=self.body, headers={"content-type": "text/event-stream"})

        http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
        return openai, openai.AsyncOpenAI(
            api_key="x", base_url=self.base_url, max_retries=0, http_client=http
        )
