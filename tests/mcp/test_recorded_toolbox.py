"""`McpToolbox(record=True)` outside a kernel: it starts only when it must, and in mode auto a call
the cassette has no recording of starts the server it was replayed without."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from meowgent_nb import Agent, ScriptedModel
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.recording.cassette import Cassette, CassetteError, RecordingModel, ReplayModel

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
ADD = '<tool_call>{"name": "demo_add", "arguments": {"a": %d}}</tool_call>'


def test_a_recorded_box_without_a_cassette_starts_when_first_used():
    box = McpToolbox("demo", [sys.executable, SERVER], record=True)
    try:
        assert (box.connected, box.log_path) == (False, None)
        assert (
            repr(box)
            == f"McpToolbox('demo', stdio: {sys.executable + ' ' + SERVER!r}, recorded, not started)"
        )
        assert box.connected is False  # showing it did not start it
        assert box.names[:2] == ["demo_add", "demo_forecast"]  # looking at its tools starts it
        assert box.connected
        assert box["demo_add"].run({"a": 1}) == 3
        assert box.tape_path is None
    finally:
        box.close()


def test_mode_auto_replays_the_listing_and_starts_the_server_only_for_a_missing_call(tmp_path):
    path = tmp_path / "m.cassette.json"
    with McpToolbox("demo", [sys.executable, SERVER], record=True) as box:
        model = RecordingModel(ScriptedModel([ADD % 1, "3."]), path)
        box.use_tape(model.tool_tape)
        assert Agent(model, tools=list(box)).run("1 + 2?").text == "3."
    box = McpToolbox("demo", [sys.executable, SERVER], record=True)
    try:
        replay = ReplayModel(path, ScriptedModel([ADD % 5, "7."]))  # auto: records what is missing
        box.use_tape(replay.tool_tape)
        assert box.connected is False and box.replayed_from == str(path)
        result = Agent(replay, tools=list(box)).run("1 + 2?")
        assert (result.text, box.connected) == ("3.", False)  # all of it replayed
        result = Agent(replay, tools=list(box)).run("5 + 2?")
        assert (result.text, box.connected) == ("7.", True)  # the call of 5 was not recorded: it ran
        assert [(e.tool, e.arguments, e.result.output) for e in Cassette(path).tool_entries] == [
            ("demo_add", {"a": 1, "b": 2}, "3"),
            ("demo_add", {"a": 5, "b": 2}, "7"),
        ]
    finally:
        box.close()


def test_a_replay_only_box_without_a_listing_is_an_error(tmp_path):
    path = tmp_path / "empty.cassette.json"
    path.write_text("")
    box = McpToolbox("demo", ["/nonexistent/server"], record=True)
    with pytest.raises(CassetteError) as caught:
        box.use_tape(ReplayModel(path).tool_tape)
    assert str(caught.value).startswith(
        f"The cassette {path} has no recording of the tools of the toolbox 'demo', so they cannot be"
        " offered without starting its server; it has none.\n"
    )
    assert box.connected is False


def test_record_must_be_a_bool():
    with pytest.raises(ValueError) as caught:
        McpToolbox("demo", ["/nonexistent/server"], record="yes")
    assert str(caught.value) == "McpToolbox 'demo': record must be True or False, got 'yes'"
