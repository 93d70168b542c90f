"""The hand-written background loop (`meowgent_nb.mcp._thread`, `_async.run_to_completion`) against
anyio's blocking portal, side by side in one run (issue 43, item 5).

`PortalLoop` is `BackgroundLoop`'s interface (``run`` with a time limit that a person's answer
holds still, ``submit``, ``on_exit``) built on ``anyio.from_thread.start_blocking_portal``; each
figure is taken for both, in alternating rounds, after one warm-up round each:

- served call ms: one call of a ``%tools serve`` tool through an `McpToolbox` over HTTP on
  127.0.0.1 (server and client both on the loop under test), median of ``--calls``;
- Stop ms: an `Agent` calls a served tool that sleeps; the run's task is cancelled (what Stop
  does) 0.3 s in; the seconds from the cancel to the run's end and to the server's tool seeing
  its MCP request given up (the toolbox's wait on the loop returns in the tool's thread), medians
  of ``--stops``;
- a cancelled wait's clean-up: ``run(..., timeout=0.1)`` gives up a coroutine that, when
  cancelled, awaits one more step before it ends (as `_tasks.call_as_task` sends
  ``tasks/cancel``): whether that step ran;
- run_to_completion ms: `run_to_completion` of a trivial coroutine from inside a running loop (a
  fresh thread and ``asyncio.run``, against a fresh portal), median of 200.

Run:  python benchmarks/background_loop.py [--calls 200] [--stops 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio.from_thread

from meowgent_nb import Agent, tool
from meowgent_nb._async import run_to_completion
from meowgent_nb.mcp import _thread
from meowgent_nb.mcp.client.toolbox import McpToolbox
from meowgent_nb.mcp.server.serve import ToolServer
from meowgent_nb.testing import scripted_model, tool_call


class PortalLoop:
    """`BackgroundLoop`'s interface on anyio's blocking portal (the candidate)."""

    def __init__(self) -> None:
        self._portal_cm = anyio.from_thread.start_blocking_portal(name="meowgent-mcp")
        self.portal = self._portal_cm.__enter__()
        self.thread = self.portal.call(threading.current_thread)
        self._closers: dict[int, Callable[[], Awaitable[Any]]] = {}

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return self.portal.start_task_soon(_await, coroutine)

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float | None = None, held: Any = None) -> Any:
        future = self.submit(coroutine)
        started = time.monotonic()
        try:
            while True:
                left = timeout if held is None or timeout is None else held.left(started, timeout)
                try:
                    return future.result(0.5 if left is None else max(left, 0.0))
                except concurrent.futures.TimeoutError:
                    if timeout is None:
                        continue
                    if held is None:
                        raise
                    after = held.left(started, timeout)
                    if after is not None and after <= 0:
                        raise
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"did not finish within {timeout:g} s") from None
        except KeyboardInterrupt:
            future.cancel()
            raise

    def on_exit(self, key: object, closer: Callable[[], Awaitable[Any]] | None) -> None:
        if closer is None:
            self._closers.pop(id(key), None)
        else:
            self._closers[id(key)] = closer

    def close(self) -> None:
        for closer in list(self._closers.values()):
            try:
                self.run(_call(closer), timeout=5)
            except BaseException:
                pass
        self._portal_cm.__exit__(None, None, None)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


async def _call(closer: Callable[[], Awaitable[Any]]) -> Any:
    return await closer()


def portal_run_to_completion(awaitable: Any) -> Any:
    """`run_to_completion`'s in-a-running-loop branch on a fresh portal (the candidate)."""
    with anyio.from_thread.start_blocking_portal() as portal:
        return portal.call(_await, awaitable)


# --- the figures ---------------------------------------------------------------------------------

SLEPT: dict[str, float] = {}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def nap(seconds: float) -> str:
    """Sleep this long."""
    SLEPT["began"] = time.perf_counter()
    time.sleep(seconds)
    return "rested"


def given_up_noted(call: Callable[..., Any]) -> Callable[..., Any]:
    """`McpToolbox._call`, noting when its wait on the loop ends."""

    def noted(self: Any, remote: str, arguments: dict[str, Any]) -> Any:
        try:
            return call(self, remote, arguments)
        finally:
            SLEPT["given up"] = time.perf_counter()

    return noted


def use(loop: Any) -> None:
    _thread._instance = loop  # what `background_loop()` hands the server and the toolbox


def served_calls(count: int) -> float:
    server = ToolServer([add])
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            box["nb_add"].run({"a": 1, "b": 2})
            times = []
            for i in range(count):
                start = time.perf_counter()
                assert box["nb_add"].run({"a": i, "b": 1}) == str(i + 1)
                times.append(time.perf_counter() - start)
    finally:
        server.stop()
    return statistics.median(times) * 1000


def stops(count: int) -> tuple[float, float]:
    server = ToolServer([nap])
    ended, told = [], []
    original = McpToolbox._call
    McpToolbox._call = given_up_noted(original)  # type: ignore[method-assign]
    try:
        with McpToolbox(
            "nb",
            url=server.url,
            headers={"Authorization": f"Bearer {server.token}"},
            approval={"nb_nap": False},
        ) as box:

            async def once() -> None:
                SLEPT.clear()
                agent = Agent(
                    scripted_model(tool_call("nb_nap", seconds=3), "done"), tools=[box[n] for n in box.names]
                )
                task = asyncio.ensure_future(agent.arun("nap"))
                while "began" not in SLEPT:
                    await asyncio.sleep(0.005)
                await asyncio.sleep(0.3)
                cancelled = time.perf_counter()
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
                ended.append(time.perf_counter() - cancelled)
                while "given up" not in SLEPT and time.perf_counter() - cancelled < 10:
                    await asyncio.sleep(0.001)
                told.append(SLEPT.get("given up", float("inf")) - cancelled)

            for _ in range(count):
                asyncio.run(once())
    finally:
        McpToolbox._call = original  # type: ignore[method-assign]
        server.stop()
    return statistics.median(ended) * 1000, statistics.median(told) * 1000


def clean_up_runs(loop: Any) -> bool:
    steps: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)  # one more step when given up, as sending tasks/cancel
            steps.append("cleaned up")
            raise

    try:
        loop.run(slow(), timeout=0.1)
    except TimeoutError:
        pass
    time.sleep(0.3)
    return steps == ["cleaned up"]


def completions(runner: Callable[[Any], Any], count: int = 200) -> float:
    async def inside() -> float:
        times = []
        for _ in range(count):
            start = time.perf_counter()
            runner(asyncio.sleep(0))
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    return asyncio.run(inside())


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--calls", type=int, default=200)
    options.add_argument("--stops", type=int, default=5)
    options.add_argument("--rounds", type=int, default=3)
    chosen = options.parse_args()
    loops = {"hand-written": _thread.BackgroundLoop(), "anyio portal": PortalLoop()}
    runners = {"hand-written": run_to_completion, "anyio portal": portal_run_to_completion}
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in loops}
    try:
        measure(loops, runners, figures, chosen)
    finally:
        use(None)
        loops["anyio portal"].close()  # type: ignore[attr-defined]


def measure(loops: dict[str, Any], runners: dict[str, Any], figures: dict[str, Any], chosen: Any) -> None:
    for loop in loops.values():  # warm-up
        use(loop)
        served_calls(10)
    for _ in range(chosen.rounds):
        for name, loop in loops.items():
            use(loop)
            got = figures[name]
            got.setdefault("served call ms", []).append(served_calls(chosen.calls))
            stop_end, stop_told = stops(chosen.stops)
            got.setdefault("Stop -> run ended ms", []).append(stop_end)
            got.setdefault("Stop -> call given up ms", []).append(stop_told)
            got.setdefault("run_to_completion ms", []).append(completions(runners[name]))
    print(f"{'':<26}" + "".join(f"{name:>16}" for name in loops))
    for figure in figures["hand-written"]:
        print(f"{figure:<26}" + "".join(f"{statistics.median(figures[n][figure]):16.2f}" for n in loops))
    print(
        f"{'cancelled wait cleans up':<26}"
        + "".join(f"{clean_up_runs(loop)!s:>16}" for loop in loops.values())
    )


if __name__ == "__main__":
    main()
