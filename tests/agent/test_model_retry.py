"""A model request asked again when the server failed in a way asking again may mend (issue 46).

Real local HTTP servers (pytest-httpserver) in front of the real ``openai`` and ``ollama``
clients: a busy server (429, 503) then an answer, a stream cut the way llama-cpp-python's server
cuts the answer it streams when another request arrives, a cut after a call began, attempts
running out. The waits are made short with ``retry_delay``; the schedule itself is tested as
the pure function it is.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest
from werkzeug import Request, Response

import meowgent_nb.models
from meowgent_nb import Agent
from meowgent_nb.agent._retry import backoff, wait_after
from meowgent_nb.errors import SettingsError
from meowgent_nb.events import FinalAnswer, ModelRetry, ModelStatus, RunStart, TextDelta, TurnEnd
from meowgent_nb.models import ModelError, OllamaModel, OpenAIModel, ScriptedModel
from meowgent_nb.models.base import RetryCause, StreamCut
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.recording import RecordingModel, ReplayModel
from tests.support.ollama_wire import FINAL, ndjson, part

MODEL = "qwen-test"
CUT_WORDS = "the server cut the answer (another request took its turn)"


@pytest.fixture
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def event(content: str | None = None, finish_reason: str | None = None) -> dict:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": MODEL, "choices": [choice]}


def sse(*events: dict, done: bool = True) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + ("data: [DONE]\n\n" if done else "")


ANSWER = sse(event("Hello "), event("there."), event(None, "stop"))
CUT = sse(event("Hel"), done=False)  # no finish_reason: how an interrupted answer ends


def answer_next(httpserver, body: str, status: int = 200, headers: dict | None = None) -> None:
    httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_data(
        body, status=status, headers=headers, content_type="text/event-stream"
    )


def run(agent: Agent, prompt: str = "Hi") -> tuple[list, BaseException | None]:
    events: list = []

    async def go() -> None:
        async for e in agent.stream(prompt):
            events.append(e)

    try:
        asyncio.run(go())
    except ModelError as error:
        return events, error
    return events, None


def openai_agent(httpserver, **settings) -> Agent:
    base_url = f"http://{httpserver.host}:{httpserver.port}/v1"
    return Agent(OpenAIModel(MODEL, base_url=base_url), retry_delay=0.01, **settings)


# --- the schedule, as values --------------------------------------------------------------------------


def test_the_waits_double_from_the_delay_within_a_half_either_way():
    assert [backoff(n, delay=1.0, draw=0.5) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 8.0]
    assert [backoff(n, delay=1.0, draw=0.0) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]
    assert [backoff(n, delay=1.0, draw=1.0) for n in (1, 2, 3, 4)] == [1.5, 3.0, 6.0, 12.0]
    assert backoff(2, delay=0.5, draw=0.25) == 0.75


def test_a_servers_retry_after_is_waited_instead():
    busy = RetryCause("busy", "the server is busy (HTTP 429)", retry_after=7.0)
    assert wait_after(3, busy, delay=1.0, draw=1.0) == 7.0
    cut = RetryCause("cut", CUT_WORDS)
    assert wait_after(3, cut, delay=1.0, draw=1.0) == 6.0


def test_the_line_a_person_reads():
    assert ModelRetry(1, 2, 5, 2.2, CUT_WORDS).text == f"{CUT_WORDS}; asking again in 2 s, 2 of 5"
    assert ModelRetry(1, 3, 5, 0.0, "the server is busy (HTTP 429)").text == (
        "the server is busy (HTTP 429); asking again now, 3 of 5"
    )


def test_bad_retry_settings_are_one_error_saying_what_each_must_be():
    with pytest.raises(SettingsError) as error:
        Agent(ScriptedModel([]), retry_attempts=0, retry_seconds=-1, retry_delay=float("nan"))
    assert str(error.value) == (
        "Invalid Agent settings:\n"
        "- retry_attempts must be a whole number of at least 1 (1: never ask again), got 0\n"
        "- retry_seconds must be a number of seconds from 0, got -1\n"
        "- retry_delay must be a number of seconds from 0, got nan"
    )


# --- OpenAI-compatible servers ------------------------------------------------------------------------


def test_a_busy_server_is_asked_again_and_answers(httpserver, allow_requests):
    answer_next(httpserver, '{"error": {"message": "busy"}}', status=429, headers={"Retry-After": "0"})
    answer_next(httpserver, ANSWER)
    agent = openai_agent(httpserver)
    events, error = run(agent)
    assert error is None
    retries = [e for e in events if isinstance(e, ModelRetry)]
    assert retries == [ModelRetry(1, 2, 8, 0.0, "the server is busy (HTTP 429)")]
    assert agent.last_result is not None and agent.last_result.text == "Hello there."
    assert len(httpserver.log) == 2
    transcript = Transcript.from_events(events)
    assert transcript.to_text() == "[the server is busy (HTTP 429); asking again now, 2 of 8]\nHello there."
    assert '<div class="meowgent-retry" style="font-style: italic; ' in transcript.to_html()


def test_a_cut_answer_is_asked_again_and_its_text_dropped(httpserver, allow_requests):
    answer_next(httpserver, CUT)
    answer_next(httpserver, ANSWER)
    agent = openai_agent(httpserver)
    events, error = run(agent)
    assert error is None
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    # Streamed as it came (a space waits for the word after it); the cut "Hel" is then dropped.
    assert texts == ["Hel", "Hello", " there."]
    [retry] = [e for e in events if isinstance(e, ModelRetry)]
    assert (retry.turn, retry.attempt, retry.attempts, retry.cause) == (1, 2, 8, CUT_WORDS)
    assert 0.005 <= retry.wait <= 0.015  # retry_delay, half either way
    assert agent.last_result is not None and agent.last_result.text == "Hello there."
    assert agent.messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello there."},
    ]
    assert (
        Transcript.from_events(events).to_text() == f"[{CUT_WORDS}; asking again now, 2 of 8]\nHello there."
    )


def test_an_answer_cut_after_a_call_began_is_not_asked_again(httpserver, allow_requests):
    answer_next(httpserver, sse(event('<tool_call>{"name": "get_'), done=False))
    agent = openai_agent(httpserver)
    events, error = run(agent)
    assert type(error) is StreamCut and error.retry is None
    assert str(error).endswith(
        " The answer was cut after the model began a call, so it is not asked again (the call could"
        " be made twice); the conversation is kept: run the cell again to continue."
    )
    assert not any(isinstance(e, ModelRetry) for e in events)
    assert len(httpserver.log) == 1
    assert agent.messages[0] == {"role": "user", "content": "Hi"}
    assert len(agent.messages) == 2  # the cut answer is kept, as after any error


def test_when_the_attempts_run_out_the_error_names_them_and_what_to_do(httpserver, allow_requests):
    for _ in range(3):
        answer_next(httpserver, CUT)
    agent = openai_agent(httpserver, retry_attempts=3)
    events, error = run(agent)
    assert [e.attempt for e in events if isinstance(e, ModelRetry)] == [2, 3]
    assert type(error) is StreamCut and error.retry is None
    base_url = f"http://{httpserver.host}:{httpserver.port}/v1"
    assert str(error) == (
        f"The model request was asked 3 times, waiting 0 s in all between, and failed each time ({CUT_WORDS});"
        " the agent asks at most 3 times and waits at most 120 s (Agent's retry_attempts and"
        f" retry_seconds). The last failure: The OpenAI-compatible server at {base_url} ended its answer"
        " early (the stream ended without a finish_reason): most likely another request arrived while it"
        " answered this one, and the server interrupts the answer it is streaming when one does"
        " (llama-cpp-python's server does by default). Whoever starts the server can make it queue"
        " requests instead: `python -m llama_cpp.server --interrupt_requests False ...`; until then,"
        " wait a little before asking again, as each request cuts another's answer."
    )
    assert len(httpserver.log) == 3
    assert agent.messages == [  # the last attempt is kept, as after any error; the others are not
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hel\n[this answer was cut off: StreamCut]"},
    ]


def test_retry_attempts_1_never_asks_again(httpserver, allow_requests):
    answer_next(httpserver, "{}", status=503)
    events, error = run(openai_agent(httpserver, retry_attempts=1))
    assert isinstance(error, ModelError) and str(error).startswith("The OpenAI-compatible server at ")
    assert "answered HTTP 503" in str(error)
    assert not any(isinstance(e, ModelRetry) for e in events)


def test_a_401_is_never_asked_again(httpserver, allow_requests):
    answer_next(httpserver, '{"error": {"message": "bad key"}}', status=401)
    _events, error = run(openai_agent(httpserver))
    assert isinstance(error, ModelError) and error.retry is None and "HTTP 401" in str(error)
    assert len(httpserver.log) == 1


def test_an_interrupt_during_the_wait_ends_the_run_at_once(httpserver, allow_requests):
    answer_next(httpserver, "{}", status=503)
    agent = openai_agent(httpserver)
    agent.retry_delay, agent.retry_seconds = 600.0, 3600.0
    seen: list = []

    async def go() -> None:
        async for e in agent.stream("Hi"):
            seen.append(e)

    async def main() -> None:
        task = asyncio.ensure_future(go())
        while not task.done() and not any(isinstance(e, ModelRetry) for e in seen):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)  # not the 450 s or more of the wait

    asyncio.run(main())
    assert [type(e) for e in seen][-1] is ModelRetry
    assert agent.last_result is not None and agent.last_result.stopped == "interrupted"


def test_the_wait_for_a_queued_answer_is_said_and_reported(httpserver, allow_requests):
    def slow(request: Request) -> Response:
        time.sleep(1.3)  # queued behind another student's request
        return Response(ANSWER, content_type="text/event-stream")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(slow)
    events, error = run(openai_agent(httpserver))
    assert error is None
    assert [e for e in events if isinstance(e, ModelStatus)] == [ModelStatus("waiting for the server")]
    [end] = [e for e in events if isinstance(e, TurnEnd)]
    assert end.usage is not None and end.usage.waited_seconds is not None
    assert 1.2 <= end.usage.waited_seconds <= 5
    transcript = Transcript.from_events(events)
    transcript.handle(next(e for e in events if isinstance(e, FinalAnswer)))
    assert f"waited for the server {end.usage.waited_seconds:.2f} s" in transcript.to_html()


# --- Ollama ---------------------------------------------------------------------------------------


def test_an_ollama_server_that_is_not_ready_is_asked_again(httpserver, allow_requests):
    httpserver.expect_ordered_request("/api/chat", method="POST").respond_with_data(
        '{"error": "server busy, please try again.  maximum pending requests exceeded"}', status=503
    )
    httpserver.expect_ordered_request("/api/chat", method="POST").respond_with_data(
        ndjson(part("Hello "), part("there."), FINAL), content_type="application/x-ndjson"
    )
    agent = Agent(
        OllamaModel("qwen3:0.6b", host=f"http://{httpserver.host}:{httpserver.port}"), retry_delay=0.01
    )
    events, error = run(agent)
    assert error is None
    [retry] = [e for e in events if isinstance(e, ModelRetry)]
    assert (retry.attempt, retry.cause) == (2, "the server is not ready (HTTP 503)")
    assert agent.last_result is not None and agent.last_result.text == "Hello there."


# --- cassettes ------------------------------------------------------------------------------------


def test_a_recorded_retry_replays_the_same_events_without_waiting(httpserver, allow_requests, tmp_path):
    answer_next(httpserver, CUT)
    answer_next(httpserver, ANSWER)
    base_url = f"http://{httpserver.host}:{httpserver.port}/v1"
    path = tmp_path / "retry.cassette.json"
    recording = RecordingModel(OpenAIModel(MODEL, base_url=base_url), path)
    recorded, error = run(Agent(recording, retry_delay=0.01))
    assert error is None and len(httpserver.log) == 2
    [retry] = [e for e in recorded if isinstance(e, ModelRetry)]

    replayed, error = run(Agent(ReplayModel(path, name=MODEL), retry_delay=0.01))
    assert error is None
    assert [e for e in replayed if not isinstance(e, (RunStart, FinalAnswer))] == [
        e for e in recorded if not isinstance(e, (RunStart, FinalAnswer))
    ]
    assert replayed[-1].result.text == "Hello there."
    assert len(httpserver.log) == 2  # nothing was sent

    async def slow_replay() -> list:  # a wait of 75 s or more, shown and not waited
        agent = Agent(ReplayModel(path, name=MODEL), retry_delay=100.0, retry_seconds=1000.0)
        return [e async for e in agent.stream("Hi")]

    events = asyncio.run(asyncio.wait_for(slow_replay(), 10))
    [slow] = [e for e in events if isinstance(e, ModelRetry)]
    assert slow.wait == pytest.approx(retry.wait * 10_000)
    assert events[-1].result.text == "Hello there."


def test_ollamas_queue_is_its_wait_less_loading_and_reading_the_prompt(httpserver, allow_requests):
    def slow(request: Request) -> Response:
        time.sleep(2.0)  # of which FINAL says 0.25 s loading and 0.5 s reading the prompt
        return Response(ndjson(part("Hi."), FINAL), content_type="application/x-ndjson")

    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(slow)
    agent = Agent(OllamaModel("qwen3:0.6b", host=f"http://{httpserver.host}:{httpserver.port}"))
    events, error = run(agent)
    assert error is None
    assert [e for e in events if isinstance(e, ModelStatus)] == [ModelStatus("waiting for the server")]
    [end] = [e for e in events if isinstance(e, TurnEnd)]
    assert end.usage is not None and end.usage.waited_seconds is not None
    assert 1.2 <= end.usage.waited_seconds <= 4.0  # 2 s and what the request took, less 0.75 s


def test_a_server_that_cannot_be_reached_is_asked_three_times_at_most(allow_requests):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = Agent(OpenAIModel(MODEL, base_url=f"http://127.0.0.1:{port}/v1"), retry_delay=0.01)
    events, error = run(agent)
    retries = [(e.attempt, e.attempts, e.cause) for e in events if isinstance(e, ModelRetry)]
    refused = "the server could not be reached (it may be restarting)"
    assert retries == [(2, 3, refused), (3, 3, refused)]
    assert type(error) is ModelError and error.retry is None
    assert str(error).startswith(
        f"The model request was asked 3 times, waiting 0 s in all between, and failed each time ({refused});"
        " the agent asks at most 3 times a server it cannot reach and waits at most 120 s (Agent's"
        f" retry_attempts and retry_seconds). The last failure: Cannot reach the OpenAI-compatible server at"
        f" http://127.0.0.1:{port}/v1: is it running?"
    )
