"""What `%tools serve` pays to keep its listen streams told (2026-07-28 ``subscriptions/listen``).

- sync ms per cell: `ToolServer.update` with the notebook's N tools unchanged (what runs after
  every cell while serving), and with one of them redefined (a new listing: one event), for N = 10
  and 50 tools whose results are TypedDicts (an output schema each), as medians of 20 runs;
- latency ms from the server's side to a listening SDK `Client` over HTTP on 127.0.0.1: a tools
  list change (`update`), a resource told outright (`changed`), and one the watch finds
  (``watch=0.05``; about half the period on average), as medians of 10 events each.

Run:  python benchmarks/serve_listen.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any, TypedDict

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meowgent_nb import tool
from meowgent_nb.mcp.server.published import resource
from meowgent_nb.mcp.server.serve import ToolServer

NOTE = {"text": "0"}


class Row(TypedDict):
    a: int
    b: str


def tools(count: int, version: int = 0) -> list[Any]:
    made = []
    for i in range(count):

        def f(x: int, y: str = "z") -> Row:
            return {"a": x, "b": y}

        f.__name__, f.__doc__ = f"t{i}", f"Tool {i}, version {version if i == 0 else 0}."
        made.append(tool(f))
    return made


@resource("notes://n")
def note() -> str:
    return NOTE["text"]


def sync_figures() -> None:
    for count in (10, 50):
        given = tools(count)
        server = ToolServer(given)
        same, changed = [], []
        for run in range(20):
            start = time.perf_counter()
            server.update(given)
            same.append(time.perf_counter() - start)
            other = tools(count, run + 1)[:1] + given[1:]
            start = time.perf_counter()
            server.update(other)
            changed.append(time.perf_counter() - start)
            server.update(given)
        server.stop()
        print(
            f"sync per cell, {count:>2} tools: unchanged {statistics.median(same) * 1000:6.2f} ms,"
            f" one redefined {statistics.median(changed) * 1000:6.2f} ms"
        )


async def latency_figures() -> None:
    server = ToolServer(tools(1), resources=[note], watch=0.05)
    heard: list[float] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") in (
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        ):
            heard.append(time.perf_counter())

    async def told(act: Any) -> float:
        count = len(heard)
        start = time.perf_counter()
        act()
        while len(heard) == count:
            await asyncio.sleep(0.001)
        return heard[-1] - start

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60) as http:
        async with Client(
            streamable_http_client(server.url, http_client=http), cache=None, message_handler=on_message
        ) as mcp:
            async with mcp.listen(tools_list_changed=True, resource_subscriptions=["notes://n"]):
                figures: dict[str, list[float]] = {
                    "tools list change": [],
                    "changed(uri)": [],
                    "found by the watch": [],
                }
                for run in range(10):
                    figures["tools list change"].append(await told(lambda: server.update(tools(1, run + 1))))  # noqa: B023 - called within this iteration

                    def outright() -> None:
                        NOTE["text"] = f"o{run}"  # noqa: B023 - called within this iteration
                        server.changed("notes://n")

                    figures["changed(uri)"].append(await told(outright))
                    figures["found by the watch"].append(await told(lambda: NOTE.update(text=f"w{run}")))  # noqa: B023 - called within this iteration
    server.stop()
    for name, values in figures.items():
        print(f"latency, {name:<20} {statistics.median(values) * 1000:6.1f} ms (median of {len(values)})")


if __name__ == "__main__":
    sync_figures()
    asyncio.run(latency_figures())
