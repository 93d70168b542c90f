"""A server that cuts a streamed answer short when the next request arrives does not end an eval (issue 36).

llama-cpp-python's server, with its default ``interrupt_requests``, sends the answer it is
streaming ``data: [DONE]`` when another request waits, with no event carrying a
``finish_reason``. `OpenAIModel` raises `StreamCut` for that; an eval running cases at once
reruns the cut cases (and those not yet started) one at a time and says so in one line. Here:
the exact wire bytes from a local HTTP server, and a model that cuts exactly as that server does;
tests/models/test_openai_server.py runs an eval four at a time against the real server, started
with its defaults.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import meowgent_nb.models
from meowgent_nb import EvalCase, FunctionModel, ModelError, evaluate, tool
from meowgent_nb.models import OpenAIModel
from meowgent_nb.models.base import StreamCut
from tests.models.test_openai_server import KEY, NAME
from tests.support.model_streams import collect_stream

ROLE_CHUNK = {
    "id": "chatcmpl-1", "model": NAME, "created": 1, "object": "chat.completion.chunk",
    "choices": [{"index": 0, "delta": {"role": "assistant"}, "logprobs": None, "finish_reason": None}],
}  # fmt: skip


def test_a_stream_ended_by_done_before_any_finish_reason_is_a_stream_cut(httpserver, monkeypatch):
    # What llama-cpp-python's server sent here to an answer cut short (seen on the wire, 0.3.36).
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    body = f"data: {json.dumps(ROLE_CHUNK)}\r\n\r\ndata: [DONE]\r\n\r\n"
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data(
        body, content_type="text/event-stream"
    )
    model = OpenAIModel(NAME, base_url=httpserver.url_for("/v1"), api_key=KEY)
    chunks, error = collect_stream(
        model, meowgent_nb.models.ModelRequest(messages=[{"role": "user", "content": "Hi"}])
    )
    assert (chunks, type(error)) == ([], StreamCut)
    assert isinstance(error, ModelError)  # caught as before by whoever catches model errors
    assert "(the stream ended without a finish_reason)" in str(error)


@tool
def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
        city: The city's name.
    """
    return f"Sunny in {city}"


def answer(city: str | None) -> str:
    if city is None:
        return "Hello!"
    return "<tool_call>" + json.dumps({"name": "get_weather", "arguments": {"city": city}}) + "</tool_call>"


CITIES = ["Paris", "Oslo", "Rome", None, "Lima"]
CASES = [
    EvalCase(f"Weather in {c}?", "get_weather", {"city": c}) if c else EvalCase("Say hi.", None)
    for c in CITIES
]


class CuttingServer:
    """Answers as llama-cpp-python's server does by default: it works on one request at a time,
    and cuts the answer it is on short (`StreamCut`) when another request is waiting."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.log: list[str] = []

    async def __call__(self, messages, tools) -> str:
        prompt = messages[-1]["content"]
        async with self.lock:
            await asyncio.sleep(0.01)  # reading the prompt, while others arrive
            if self.lock._waiters:  # noqa: SLF001 - another request waits: cut this one
                self.log.append(f"cut {prompt}")
                raise StreamCut("cut off mid-answer (the stream ended without a finish_reason)")
            self.log.append(f"answered {prompt}")
            return answer(CITIES[[c.prompt for c in CASES].index(prompt)])


def test_cut_cases_and_the_cases_after_them_run_one_at_a_time_and_the_eval_says_so():
    server, seen = CuttingServer(), []
    report = evaluate(CASES, tools=[get_weather], model=FunctionModel(server), concurrency=3,
                      on_row=lambda row, done, total: seen.append((row.prompt, done)))  # fmt: skip
    assert [(row.prompt, row.passed) for row in report.rows] == [(case.prompt, True) for case in CASES]
    assert seen == [(case.prompt, number) for number, case in enumerate(CASES, 1)]  # in order, each once
    # The first two were cut while three ran; the third then ran alone; the last two never ran at once.
    assert server.log == [
        "cut Weather in Paris?", "cut Weather in Oslo?", "answered Weather in Rome?",
        "answered Weather in Paris?", "answered Weather in Oslo?", "answered Say hi.", "answered Weather in Lima?",
    ]  # fmt: skip
    assert report.notes == [
        "The server cut 2 answers short while cases ran up to 3 at a time (a stream ended with no finish_reason),"
        " so 4 cases ran one at a time after the others; llama-cpp-python's server does this unless started"
        " with --interrupt_requests False."
    ]
    assert report.to_text().split("\n\n")[1] == report.notes[0]  # one line under the table of cases
    assert '<div class="meowgent-eval-line">The server cut 2 answers short' in report.to_html()


def test_a_stream_cut_while_nothing_else_of_the_eval_runs_ends_it_as_before():
    def cut(messages, tools):
        raise StreamCut("cut off mid-answer (the stream ended without a finish_reason)")

    for concurrency in (1, 3):  # alone from the start, or alone in the rerun
        with pytest.raises(StreamCut) as caught:
            evaluate(CASES[:2], tools=[get_weather], model=FunctionModel(cut), concurrency=concurrency)
        assert str(caught.value) == "cut off mid-answer (the stream ended without a finish_reason)"


def test_the_tools_eval_magic_reruns_cut_cases_too(ip):
    ip.user_ns.update(c_weather=get_weather, c_model=FunctionModel(CuttingServer()), c_cases=CASES)
    report = ip.run_line_magic("tools", "eval c_cases --model-object c_model --concurrency 2")
    assert [row.passed for row in report.rows] == [True] * 5
    assert report.notes[0].startswith("The server cut 1 answer short while cases ran up to 2 at a time")
