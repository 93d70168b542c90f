"""Cassettes that cannot be lost: an entry is checked as the reader will check it before it is
written, and written atomically; the reader refuses keys given twice, nesting too deep and numbers
out of range with a `CassetteError` naming the file, the entry and the field; a tool's value too
deep to record does not end the run; and no hostile file makes the reader raise anything else."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.models import ModelChunk, ModelRequest, Usage
from meowgent_nb.recording.cassette import Cassette, CassetteError, RecordingModel, ReplayModel
from meowgent_nb.tools.calls import ToolCall

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._cassette_documents import DOCUMENTS, REAL, read

NOT_WRITTEN = (
    " Nothing was written: the cassette is as it was. The value came from what was being recorded"
    " (the model's backend or the tool); a cassette holds only what it reads back."
)
FIX_ENTRY = " Fix the entry, or delete the file and record again."
FIX_LINE = " Fix that line, or delete the file and record again."


def ask(model, prompt: str) -> list[ModelChunk]:
    async def run() -> list[ModelChunk]:
        request = ModelRequest(messages=[{"role": "user", "content": prompt}])
        return [chunk async for chunk in model.stream(request)]

    return asyncio.run(run())


def recorded_once(tmp_path: Path) -> tuple[Path, bytes]:
    """A cassette with one recording (lines 1-13), and its bytes."""
    path = tmp_path / "c.cassette.json"
    ask(RecordingModel(ScriptedModel(["Hello."]), path), "Hi")
    return path, path.read_bytes()


def load_error(path: Path) -> str:
    with pytest.raises(CassetteError) as caught:
        Cassette(path)
    return str(caught.value)


# --- an entry is checked before it is written --------------------------------------------------


@pytest.mark.parametrize(
    ("odd", "problem"),
    [
        (
            ModelChunk(usage=Usage(prompt_tokens="26")),
            'chunks[1].usage.prompt_tokens must be a whole number, found "26"',
        ),
        (
            ModelChunk(usage=Usage(completion_tokens=-1)),
            "chunks[1].usage.completion_tokens must not be negative, found -1",
        ),
        (
            ModelChunk(usage=Usage(prompt_tokens=26.5)),
            "chunks[1].usage.prompt_tokens must be a whole number, found 26.5",
        ),
        (
            ModelChunk(usage=Usage(prompt_tokens=10**400)),
            "chunks[1].usage.prompt_tokens must be at most 9223372036854775807, found a number of 401 digits",
        ),
        (
            ModelChunk(usage=Usage(total_seconds=1e300)),
            "chunks[1].usage.total_seconds must be at most 1000000000, found 1e+300",
        ),
        (ModelChunk(finish_reason=3), "chunks[1].finish_reason must be a string, found 3"),
        (
            ModelChunk(tool_calls=(ToolCall("add", {}, id=7),)),
            "chunks[1].tool_calls[0].id must be a string, found 7",
        ),
        (ModelChunk(tool_calls=(ToolCall(5, {}),)), "chunks[1].tool_calls[0].name must be a string, found 5"),
    ],
)
def test_an_odd_value_from_a_backend_is_refused_before_it_is_written(tmp_path, odd, problem):
    path, before = recorded_once(tmp_path)
    model = ReplayModel(path, ScriptedModel([[ModelChunk(text="x"), odd, ModelChunk(done=True)]]))
    with pytest.raises(CassetteError) as caught:
        ask(model, "Again")
    assert str(caught.value) == f"Cassette {path}, line 26: {problem}.{NOT_WRITTEN}"
    assert path.read_bytes() == before  # the earlier recording is still there, and still loads
    assert [chunk.text for chunk in Cassette(path).entries[0].chunks] == ["Hello.", ""]
    assert ask(ReplayModel(path), "Hi")[0].text == "Hello."


def test_a_backend_sending_nan_or_a_number_json_cannot_hold_is_refused_naming_the_field(tmp_path):
    path, before = recorded_once(tmp_path)
    for odd, problem in (
        (Usage(load_seconds=float("nan")), 'chunks[1].usage.load_seconds must be a number, found "nan"'),
        (
            Usage(prompt_tokens=10**5000),
            'chunks[1].usage.prompt_tokens must be a whole number, found "(a number of about 5,000 digits)"',
        ),
    ):
        model = ReplayModel(path, ScriptedModel([[ModelChunk(text="x"), ModelChunk(done=True, usage=odd)]]))
        with pytest.raises(CassetteError) as caught:
            ask(model, "Again")
        assert str(caught.value) == f"Cassette {path}, line 26: {problem}.{NOT_WRITTEN}"
        assert path.read_bytes() == before


def test_a_request_json_cannot_hold_is_recorded_with_what_it_held_named(tmp_path):
    path = tmp_path / "c.cassette.json"
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    request = ModelRequest(
        messages=[{"role": "user", "content": "Hi", "n": 10**5000, "x": float("nan"), "deep": nested}]
    )

    async def run(model) -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]

    asyncio.run(run(RecordingModel(ScriptedModel(["Hello."]), path)))
    message = Cassette(path).entries[0].request["messages"][0]
    assert (message["n"], message["x"]) == ("(a number of about 5,000 digits)", "nan")
    assert json.dumps(message["deep"]).count("[") == 177 and "(nested deeper than 180 levels)" in json.dumps(
        message["deep"]
    )
    assert asyncio.run(run(ReplayModel(path)))[0].text == "Hello."  # and it replays


@pytest.mark.parametrize("failing", ["os.replace", "os.fsync"])
def test_a_write_that_fails_midway_leaves_the_previous_file_as_it_was(tmp_path, monkeypatch, failing):
    path, before = recorded_once(tmp_path)

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing.split(".")[1], full_disk)
    with pytest.raises(CassetteError) as caught:
        ask(ReplayModel(path, ScriptedModel(["Again."])), "Again")
    assert str(caught.value) == f"Cannot write the cassette {path}: No space left on device. It is as it was."
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.cassette.json"]  # no half-written file left


def test_an_interrupt_while_writing_leaves_the_previous_file_and_no_other(tmp_path, monkeypatch):
    path, before = recorded_once(tmp_path)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ask(ReplayModel(path, ScriptedModel(["Again."])), "Again")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.cassette.json"]


def test_appending_keeps_every_byte_before_it_and_the_files_mode(tmp_path):
    path, before = recorded_once(tmp_path)
    edited = before.replace(b"\n", b"\r\n").replace(b'"Hello."', b'"Hello, edited."')
    path.write_bytes(edited)
    path.chmod(0o640)
    ask(ReplayModel(path, ScriptedModel(["Again."])), "Again")
    after = path.read_bytes()
    assert after.startswith(edited + b"\n{")
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    assert [entry.line for entry in Cassette(path).entries] == [1, 15]
    # An old Mac file (CR only): the entry still begins after one blank line.
    path.write_bytes(before.replace(b"\n", b"\r"))
    ask(ReplayModel(path, ScriptedModel(["Again."])), "Again")
    assert [entry.line for entry in Cassette(path).entries] == [1, 15]


# --- what the reader refuses -------------------------------------------------------------------

LISTING = (
    '{"toolbox": "demo",\n "instructions": null,\n "listing": [\n'
    '  {"approval": true, "description": "Delete.", "examples": [], "name": "demo_rm", "output_schema": null,'
    ' "parameters": {"type": "object"}, "remote_name": "rm", "timeout": null, "title": null, "approval": false}\n'
    " ]}\n"
)


def test_a_key_given_twice_is_refused_wherever_it_is(tmp_path):
    path = tmp_path / "c.cassette.json"
    path.write_text(REAL + "\n" + LISTING)
    assert load_error(path) == (
        f'Cassette {path}, line 43: the entry has the key "approval" twice in one object (a reader would'
        f" keep only the last one); keep the one you mean.{FIX_ENTRY}"
    )
    path.write_text(REAL.replace('"role": "user"}', '"role": "user", "role": "system"}'))
    assert load_error(path) == (
        f'Cassette {path}, line 1: the entry has the key "role" twice in one object (a reader would'
        f" keep only the last one); keep the one you mean.{FIX_ENTRY}"
    )


@pytest.mark.parametrize("depth", [201, 1000, 100_000])
def test_nesting_deeper_than_the_bound_is_refused_at_any_depth(tmp_path, depth):
    path = tmp_path / "c.cassette.json"
    nested = "[" * depth + "]" * depth
    path.write_text(REAL + "\n" + REAL.replace('{"a": 1}, "id"', f'{{"a": {nested}}}, "id"'))
    assert load_error(path) == (
        f"Cassette {path}, line 43: the entry is nested deeper than 200 levels, which no cassette entry"
        f" needs.{FIX_ENTRY}"
    )


def test_nesting_within_the_bound_loads(tmp_path):
    path = tmp_path / "c.cassette.json"
    nested = "[" * 190 + "]" * 190
    path.write_text(REAL.replace('{"a": 1}, "id"', f'{{"a": {nested}}}, "id"'))
    assert json.dumps(Cassette(path).entries[0].chunks[1].tool_calls[0].arguments["a"]) == nested


@pytest.mark.parametrize(
    ("number", "problem"),
    [
        (
            "1" * 401,
            "chunks[2].usage.prompt_tokens must be at most 9223372036854775807, found a number of 401 digits",
        ),
        (
            str(2**63),
            "chunks[2].usage.prompt_tokens must be at most 9223372036854775807, found 9223372036854775808",
        ),
        ("1e400", "chunks[2].usage.prompt_tokens must be a whole number, found Infinity"),
    ],
)
def test_a_token_count_out_of_range_names_its_field(tmp_path, number, problem):
    path = tmp_path / "c.cassette.json"
    path.write_text(REAL.replace('"prompt_tokens": 26', f'"prompt_tokens": {number}'))
    assert load_error(path) == f"Cassette {path}, line 13: {problem}.{FIX_LINE}"


def test_the_largest_token_count_a_backend_reports_loads_and_replays(tmp_path):
    path = tmp_path / "c.cassette.json"
    path.write_text(REAL.replace('"prompt_tokens": 26', f'"prompt_tokens": {2**63 - 1}'))
    assert Cassette(path).entries[0].chunks[2].usage.prompt_tokens == 2**63 - 1


def test_a_number_too_large_for_a_float_is_named_where_no_type_is_checked(tmp_path):
    path = tmp_path / "c.cassette.json"
    path.write_text(REAL.replace('"num_ctx": 4096', '"num_ctx": -1e400'))
    assert load_error(path) == (
        f"Cassette {path}, line 3: options.num_ctx is -1e400, a number too large to read (over 1.8e308).{FIX_LINE}"
    )
    path.write_text(REAL.replace('"content": "Hi', '"n": 2E999, "content": "Hi'))
    assert load_error(path) == (
        f"Cassette {path}, line 8: messages[0].n is 2E999, a number too large to read (over 1.8e308).{FIX_LINE}"
    )


def test_a_listed_tool_that_cannot_be_made_is_named(tmp_path):
    path = tmp_path / "c.cassette.json"
    path.write_text(
        REAL.replace('"parameters": {"type": "object"}', '"parameters": {"type": "object", "properties": 5}')
    )
    from meowgent_nb.recording.cassette import ToolTape

    with pytest.raises(CassetteError) as caught:
        ToolTape(Cassette(path), "replay").listing("demo")
    assert str(caught.value) == (
        f"Cassette {path}, the entry on line 36: listing[0] ('demo_add') cannot be offered: Cannot make a"
        " tool from schema tool 'demo_add':\n- the schema is not a valid JSON Schema: 5 is not of type"
        f" 'object'.{FIX_ENTRY}"
    )


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(DOCUMENTS)
def test_no_hostile_file_makes_the_reader_raise_anything_but_a_cassette_error(text):
    assert read(text) in ("read", "refused")


# --- a tool's value too deep to record ---------------------------------------------------------


@tool(record=True)
def deep() -> list:
    """A list nested 100,000 deep."""
    value: list = []
    for _ in range(100_000):
        value = [value]
    return value


def test_a_tool_value_nested_100000_deep_is_recorded_as_its_text_and_the_run_goes_on(tmp_path):
    path = tmp_path / "deep.cassette.json"
    call = '<tool_call>{"name": "deep", "arguments": {}}</tool_call>'
    agent = Agent(RecordingModel(ScriptedModel([call, "Deep.", "Still here."]), path), tools=[deep])
    result = agent.run("Go deep.")
    assert (result.text, result.tool_results[0].kind) == ("Deep.", "ok")
    output = result.tool_results[0].output
    assert output == '[[[[[["[1 item]"]]]]]]'  # shaped for the model: 6 levels, then named
    assert agent.run("And now?").text == "Still here."  # the conversation goes on
    (entry,) = Cassette(path).tool_entries
    assert (entry.result.output, entry.result.value) == (output, None)
    replayed = Agent(ReplayModel(path), tools=[deep]).run("Go deep.")
    assert (replayed.text, replayed.tool_results[0].value) == ("Deep.", output)


def test_arguments_json_cannot_hold_are_recorded_bounded_and_the_call_replays(tmp_path):
    from meowgent_nb.recording.cassette import ToolTape
    from meowgent_nb.tools.calls import ToolResult

    path = tmp_path / "c.cassette.json"
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    values = {"x": float("nan"), "n": -(10**5000), "deep": nested}
    call = ToolCall("t", values)
    ToolTape(Cassette(path, fresh=True), "record").record(values, ToolResult(call, "done", value="done"))
    (entry,) = Cassette(path).tool_entries
    assert (entry.arguments["x"], entry.arguments["n"]) == ("nan", "(a number of about 5,000 digits)")
    assert json.dumps(entry.arguments["deep"]).endswith('["(nested deeper than 180 levels)"]' + "]" * 178)
    replayed = ToolTape(Cassette(path), "replay").replay(call, values)
    assert (replayed.output, replayed.value) == ("done", "done")
