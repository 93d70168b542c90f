"""`McpToolbox` on a 2026-07-28 server (`ToolServer`, over streamable HTTP): it listens for tool
changes on ``subscriptions/listen``, the notebook says what changed in one line as on 2025, a
stream the server ends is opened again, and closing the box ends the stream and its task."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from meowgent_nb import tool
from meowgent_nb.mcp import McpToolbox, ToolServer
from meowgent_nb.mcp._thread import background_loop


@tool
def ping() -> str:
    """Answers pong."""
    return "pong"


@tool
def pong() -> str:
    """Answers ping."""
    return "ping"


def until(condition: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("waited in vain")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def served():
    server = ToolServer([ping])
    yield server
    server.stop()


def streams(server: ToolServer) -> int:
    """The server's open listen streams."""

    async def count() -> int:
        return len(server._events._listen._streams)

    return background_loop().run(count(), timeout=5)


def listening_tasks() -> list[str]:
    """The client's tasks on the background loop that listen for tool changes (or run its listen stream)."""

    async def names() -> list[str]:
        return [
            task.get_coro().__qualname__
            for task in asyncio.all_tasks()
            if any(word in task.get_coro().__qualname__ for word in ("listen", "_watch_tools"))
            and task is not asyncio.current_task()
        ]

    return background_loop().run(names(), timeout=5)


def test_the_notebook_says_in_one_line_what_a_2026_server_changed(ip, served):
    served.update(tools=[ping])
    with capture_output():
        ip.run_line_magic("tools", f"mcp add nb --url {served.url} --token {served.token}")
    magics = ip.magics_manager.registry["AgentMagics"]
    box = magics._mcp_servers["nb"]
    try:
        version = box._connection.client.protocol_version
        until(lambda: streams(served) == 1)
        served.update(tools=[ping, pong])
        until(lambda: box.stale)
        with capture_output() as added:
            names = [t.name for t in magics.available_tools("%%agent")]  # as a cell gathers its tools
        served.update(tools=[pong])
        until(lambda: box.stale)
        with capture_output() as removed:
            magics.available_tools("%%agent")
    finally:
        with capture_output():
            ip.run_line_magic("tools", "mcp remove nb")
    assert version == "2026-07-28"
    assert added.stdout == "The MCP server 'nb' changed its tools: +nb_pong; it offers 2 tools.\n"
    assert names == ["nb_ping", "nb_pong"]
    assert removed.stdout == "The MCP server 'nb' changed its tools: -nb_ping; it offers 1 tool.\n"


def test_a_listen_stream_the_server_ends_is_opened_again_and_its_changes_heard(served):
    served.update(tools=[ping])
    with McpToolbox("nb", url=served.url, headers={"Authorization": f"Bearer {served.token}"}) as box:
        until(lambda: streams(served) == 1)

        async def end_streams() -> None:  # as a server that ends its streams (the spec's graceful close)
            served._events._listen.close()

        background_loop().run(end_streams(), timeout=5)
        until(lambda: streams(served) == 0)
        until(lambda: streams(served) == 1)  # listened again
        until(lambda: box.stale)  # a change may have come while no stream was open
        assert str(box.refresh()) == "The MCP server 'nb' has the same 1 tool."
        served.update(tools=[ping, pong])
        until(lambda: box.stale)
        assert box.names == ["nb_ping", "nb_pong"]


def test_closing_the_box_ends_its_listen_stream_and_leaves_no_task_or_thread(served):
    served.update(tools=[ping])
    background_loop()
    threads = set(threading.enumerate())
    box = McpToolbox("nb", url=served.url, headers={"Authorization": f"Bearer {served.token}"})
    until(lambda: streams(served) == 1)
    open_tasks = listening_tasks()
    box.close()
    assert (listening_tasks(), streams(served)) == ([], 0)
    until(lambda: set(threading.enumerate()) <= threads)
    assert len(open_tasks) == 1


def test_a_server_that_ends_every_stream_at_once_is_left_after_five(monkeypatch):
    from meowgent_nb.mcp.client import _session

    # A stream under 0.3 s counts as short: one that ends after 10 ms still does on a loaded machine.
    monkeypatch.setattr(_session, "_RELISTEN", 0.3)
    server = ToolServer([ping])
    real, opened = server._events._listen, []

    async def ends_at_once(ctx: Any, params: Any) -> Any:
        opened.append(time.monotonic())
        asyncio.get_running_loop().call_later(0.01, real.close)  # after its acknowledgement
        return await real(ctx, params)

    server._events._listen = ends_at_once
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            until(lambda: len(opened) == 5)
            time.sleep(1.5)  # five times the spacing: no sixth stream
            count, left = len(opened), listening_tasks()
            assert str(box.refresh()) == "The MCP server 'nb' has the same 1 tool."  # by hand, as before
    finally:
        server.stop()
    assert (count, left) == (5, [])
