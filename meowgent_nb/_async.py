"""Running a coroutine to completion from synchronous code, whether or not a loop is running.

In a notebook, synchronous cell code runs inside the kernel's event loop, so `asyncio.run` would
fail there; the coroutine then gets a fresh loop in a thread of its own. Not anyio's blocking
portal, which is slower per call (benchmarks/background_loop.py) and would run the coroutine in a
copy of the caller's context variables rather than a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["keep_awake", "run_to_completion"]


def run_to_completion(awaitable: Any) -> Any:
    """Run a coroutine here, or in a fresh thread when this thread's loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(_await(awaitable))
        except BaseException as exc:  # handed back to the caller's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="meowgent-async")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


async def _await(awaitable: Any) -> Any:
    return await awaitable


@contextlib.asynccontextmanager
async def keep_awake(period: float = 0.2) -> AsyncIterator[None]:
    """Wakes the event loop every ``period`` seconds while the block runs.

    ipykernel schedules an interrupt's cancellation of the cell without waking the loop, so a cell
    waiting on a slow tool or a silent model would otherwise notice the interrupt only when something
    else happened; used by ``%%agent`` cells and ``await agent.arun(...)`` alike.
    """

    async def tick() -> None:
        while True:
            await asyncio.sleep(period)

    timer = asyncio.ensure_future(tick())
    try:
        yield
    finally:
        timer.cancel()
