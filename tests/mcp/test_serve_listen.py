"""`ToolServer` on the 2026-07-28 protocol: ``subscriptions/listen`` (SEP-2575), heard by the SDK's
real `Client` over streamable HTTP. Each listener gets each event it asked for once, in order, and
never another listener's; a `@tool` added or removed in the notebook while serving is a tools
list change."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx2
import pytest
from IPython.utils.capture import capture_output
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import LISTEN_STREAM_METHODS

from meowgent_nb import tool
from meowgent_nb.mcp import ToolServer, prompt, resource

NOTES = {"a": "one", "b": "two", "x": "ex"}


@resource("notes://a")
def note_a() -> str:
    return NOTES["a"]


@resource("notes://b")
def note_b() -> str:
    return NOTES["b"]


@resource("notes://note/{name}")
def note(name: str) -> str:
    return NOTES[name]


@prompt
def review(topic: str) -> str:
    return f"Review {topic}."


@prompt
def summary(topic: str) -> str:
    return f"Sum up {topic}."


@tool
def ping() -> str:
    """Answers pong."""
    return "pong"


@tool
def pong() -> str:
    """Answers ping."""
    return "ping"


async def until(condition: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("waited in vain")
        await asyncio.sleep(0.02)


class Listener:
    """One 2026 client holding one listen stream open; ``heard`` is every stream frame, as it came."""

    def __init__(self, url: str, token: str, **wanted: Any):
        self.url, self.token, self.wanted = url, token, wanted
        self.heard: list[tuple[str, str | None]] = []
        self.events: list[Any] = []
        self.version: str | None = None
        self.ready = asyncio.Event()
        self.task = asyncio.ensure_future(self._run())

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", None) in LISTEN_STREAM_METHODS:
            uri = getattr(message.params, "uri", None)
            self.heard.append((message.method.split("/", 1)[1], None if uri is None else str(uri)))

    async def _run(self) -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60) as http:
            transport = streamable_http_client(self.url, http_client=http)
            async with Client(transport, cache=None, message_handler=self._on_message) as mcp:
                self.version = mcp.protocol_version
                await mcp.list_tools()  # a 2026 session that lists tools hears of changes on its stream only
                async with mcp.listen(**self.wanted) as events:
                    self.ready.set()
                    async for event in events:
                        self.events.append(event)

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


@pytest.fixture
def served():
    NOTES.clear()
    NOTES.update(a="one", b="two", x="ex")
    server = ToolServer([ping], resources=[note_a, note_b, note], prompts=[review], watch=0.05)
    yield server
    server.stop()


def test_each_listener_hears_what_it_asked_for_once_in_order_and_nothing_else(served):
    async def work() -> tuple[list[Any], list[Any], str | None, list[set[str]]]:
        x = Listener(
            served.url,
            served.token,
            tools_list_changed=True,
            resource_subscriptions=["notes://a", "notes://note/x"],
        )
        y = Listener(
            served.url,
            served.token,
            prompts_list_changed=True,
            resource_subscriptions=["notes://b", "notes://note/new"],
        )
        await asyncio.wait_for(asyncio.gather(x.ready.wait(), y.ready.wait()), 30)
        watched = [served._events.watched()]
        NOTES["a"] = "one, changed"  # the watch sees it (no one calls changed)
        await until(lambda: len(x.heard) == 1)
        NOTES["x"] = "ex, changed"  # a template's resource
        await until(lambda: len(x.heard) == 2)
        NOTES["b"] = "two, changed"
        await until(lambda: len(y.heard) == 1)
        served.update(tools=[ping, pong])  # a tool added
        await until(lambda: len(x.heard) == 3)
        served.update(tools=[ping, pong])  # the same tools: nothing to tell
        served.changed("notes://a")  # told outright, but its content is what was told last: no event
        NOTES["a"] = "one, changed again"
        served.changed("notes://a")  # a change told outright; the watch does not tell it again
        await until(lambda: len(x.heard) == 4)
        served.update(prompts=[review, summary])
        await until(lambda: len(y.heard) == 2)
        NOTES["new"] = "born"  # a template's resource that could not be read when y came: now it can
        await until(lambda: len(y.heard) == 3)
        served.update(tools=[pong])  # one removed
        await until(lambda: len(x.heard) == 5)
        await asyncio.sleep(0.3)  # several looks of the watch: nothing more
        await y.close()
        await until(lambda: served._events.watched() == {"notes://a", "notes://note/x"})
        watched.append(served._events.watched())
        await x.close()
        await until(lambda: not served._events.watched() and not served._events.watching)
        return x.heard, y.heard, x.version, watched

    x_heard, y_heard, version, watched = asyncio.run(work())
    assert version == "2026-07-28"
    assert x_heard == [
        ("resources/updated", "notes://a"),
        ("resources/updated", "notes://note/x"),
        ("tools/list_changed", None),
        ("resources/updated", "notes://a"),
        ("tools/list_changed", None),
    ]
    assert y_heard == [
        ("resources/updated", "notes://b"),
        ("prompts/list_changed", None),
        ("resources/updated", "notes://note/new"),
    ]
    assert watched == [
        {"notes://a", "notes://b", "notes://note/x", "notes://note/new"},
        {"notes://a", "notes://note/x"},
    ]
    assert [t.name for t in served.tools] == ["pong"]
    assert served._events.watching is False


def test_two_streams_of_one_session_each_get_only_their_own_events(served):
    from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

    async def drain(events: Any, into: list[Any]) -> None:
        async for event in events:
            into.append(event)

    async def work() -> tuple[list[Any], list[Any]]:
        tools_seen: list[Any] = []
        notes_seen: list[Any] = []
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}, timeout=60) as http,
            Client(streamable_http_client(served.url, http_client=http), cache=None) as mcp,
        ):
            async with (
                mcp.listen(tools_list_changed=True) as tools,
                mcp.listen(resource_subscriptions=["notes://a"]) as notes,
            ):
                readers = [
                    asyncio.ensure_future(drain(tools, tools_seen)),
                    asyncio.ensure_future(drain(notes, notes_seen)),
                ]
                served.update(tools=[ping, pong])
                NOTES["a"] = "one, changed"
                served.changed("notes://a")
                await until(lambda: tools_seen and notes_seen)
                await asyncio.sleep(0.2)
                for reader in readers:
                    reader.cancel()
        return tools_seen, notes_seen

    assert asyncio.run(work()) == ([ToolsListChanged()], [ResourceUpdated(uri="notes://a")])


def test_a_2025_client_that_listed_the_tools_is_told_each_list_change_once(served):
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) in LISTEN_STREAM_METHODS:
            heard.append(message.method)

    async def work() -> Any:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {served.token}"}, timeout=60
        ) as http:
            transport = streamable_http_client(served.url, http_client=http)
            async with Client(transport, cache=None, mode="legacy", message_handler=on_message) as mcp:
                await mcp.list_tools()
                served.update(tools=[ping, pong])
                await until(lambda: len(heard) == 1)
                served.update(tools=[ping, pong])  # no change
                served.update(prompts=[review, summary])
                await until(lambda: len(heard) == 2)
                await asyncio.sleep(0.2)
                return mcp.server_capabilities

    capabilities = asyncio.run(work())
    assert heard == ["notifications/tools/list_changed", "notifications/prompts/list_changed"]
    assert (capabilities.tools.list_changed, capabilities.prompts.list_changed) == (True, True)
    assert (capabilities.resources.subscribe, capabilities.resources.list_changed) == (True, True)


def test_the_2026_capabilities_say_what_the_listen_stream_tells(served):
    async def work() -> Any:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}, timeout=60) as http,
            Client(streamable_http_client(served.url, http_client=http), cache=None) as mcp,
        ):
            tools = await mcp.list_tools()
            return mcp.server_capabilities, [t.name for t in tools.tools]

    capabilities, names = asyncio.run(work())
    assert capabilities.tools.list_changed is True
    assert capabilities.prompts.list_changed is True
    assert (capabilities.resources.subscribe, capabilities.resources.list_changed) == (True, True)
    assert names == ["ping"]


def test_a_listen_stream_asking_for_too_many_resources_is_refused_with_the_limit(served):
    async def work() -> str:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}, timeout=60) as http,
            Client(streamable_http_client(served.url, http_client=http), cache=None) as mcp,
        ):
            uris = [f"notes://note/n{i}" for i in range(101)]
            try:
                async with mcp.listen(resource_subscriptions=uris):
                    return "listened"
            except Exception as error:  # noqa: BLE001
                return str(error)

    assert asyncio.run(work()) == (
        "subscriptions/listen: 101 resources asked for, at most 100 are watched on one stream;"
        " listen on several streams, or to fewer resources"
    )
    assert served._events.watched() == set()


def test_a_tool_defined_or_deleted_in_the_notebook_while_serving_is_a_tools_list_change(ip):
    ip.run_cell("from meowgent_nb import tool\n@tool\ndef t_one() -> str:\n    '''One.'''\n    return '1'\n")
    with capture_output():
        ip.run_line_magic("tools", "serve")
    server = ip.magics_manager.registry["AgentMagics"]._mcp_serving
    loop = asyncio.new_event_loop()  # the listener's own thread: cells run on this one
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def on_loop(coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(30)

    async def listening() -> Listener:
        x = Listener(server.url, server.token, tools_list_changed=True)
        await asyncio.wait_for(x.ready.wait(), 30)
        return x

    try:
        with capture_output():  # the notebook as a client of itself: its box's tools are never served
            ip.run_line_magic("tools", f"mcp add nb --url {server.url} --token {server.token}")
        box = ip.magics_manager.registry["AgentMagics"]._mcp_servers["nb"]
        x = on_loop(listening())
        names = []
        ip.run_cell("@tool\ndef t_two() -> str:\n    '''Two.'''\n    return '2'\n")
        on_loop(until(lambda: len(x.heard) == 1 and box.stale))
        names.append([t.name for t in server.tools])
        with capture_output() as plain:
            ip.run_cell("x_plain = 3")  # no tool changed: nothing to tell, and no MCP box is listed again
        stale = box.stale
        ip.run_cell(
            "@tool\ndef t_two() -> str:\n    '''Two.'''\n    return 'two'\n"
        )  # the same listing, new code
        called = server.tools[1].run({})
        ip.run_cell("del t_one")
        on_loop(until(lambda: len(x.heard) == 2))
        names.append([t.name for t in server.tools])
        on_loop(asyncio.sleep(0.2))
        on_loop(x.close())
    finally:
        with capture_output():
            ip.run_line_magic("tools", "mcp remove nb")
            ip.run_line_magic("tools", "serve --stop")
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    assert x.heard == [("tools/list_changed", None), ("tools/list_changed", None)]
    assert names == [["t_one", "t_two"], ["t_two"]]
    assert called == "two"
    assert (plain.stdout, stale) == ("", True)
