"""A new session with a server that went away or hangs: `McpToolbox.reconnect`, and the one retry of
an idempotent call (tests/mcp_servers/flaky_server.py: each tool fails the first time only)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from meowgent_nb.mcp import McpServerError, McpToolbox

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "flaky_server.py")


@pytest.fixture
def box(tmp_path):
    with McpToolbox("flaky", [sys.executable, SERVER, str(tmp_path)]) as box:
        yield box


def test_an_idempotent_call_whose_server_went_down_runs_again_on_a_new_server(box):
    assert box["flaky_lookup"].idempotent is True
    assert box["flaky_lookup"].run({"key": "k"}) == "value of k"
    assert (box.connected, box["flaky_starts"].run({})) == (True, 2)


def test_a_call_that_is_not_idempotent_is_not_run_again_and_says_why(box):
    assert box["flaky_append"].idempotent is False
    with pytest.raises(McpServerError) as caught:
        box["flaky_append"].run({"text": "a line"})
    message = str(caught.value)
    assert message.startswith("the MCP server 'flaky' closed the connection during the call to append:")
    assert message.endswith(
        "then start it again (%tools mcp reconnect flaky, or box.reconnect()).\n"
        "It was not tried again: the server does not mark append idempotent (idempotentHint), so it may have run."
    )
    assert box.connected is False
    changes = box.reconnect()
    assert str(changes) == "The MCP server 'flaky' has the same 4 tools."
    assert box["flaky_append"].run({"text": "a line"}) == "appended a line"
    assert box["flaky_starts"].run({}) == 2


def test_an_idempotent_call_that_timed_out_runs_once_more_on_a_new_session(box):
    stuck = box["flaky_stuck"]
    stuck.timeout = 1
    assert stuck.run({"key": "k"}) == "unstuck k"
    assert box["flaky_starts"].run({}) == 2


def test_a_closed_box_is_not_reconnected_by_a_call(box):
    lookup = box["flaky_lookup"]
    box.close()
    with pytest.raises(McpServerError) as caught:
        lookup.run({"key": "k"})
    assert str(caught.value) == (
        "the MCP server 'flaky' is not connected (it was closed or stopped); start it again with"
        " %tools mcp reconnect flaky (or box.reconnect())"
    )


def test_a_server_that_cannot_be_started_again_keeps_the_box_stopped_with_a_clear_error(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    box = McpToolbox("flaky", [sys.executable, SERVER, str(folder)])
    try:
        box.close()
        shutil.rmtree(folder)  # the server writes its count there when it starts: now it cannot start
        with pytest.raises(McpServerError) as caught:
            box.reconnect()
        assert str(caught.value).startswith("could not connect to the MCP server 'flaky' again (")
        assert "FileNotFoundError" in str(caught.value)
        assert box.connected is False
        assert box.names == ["flaky_lookup", "flaky_append", "flaky_stuck", "flaky_starts"]
    finally:
        box.close()
