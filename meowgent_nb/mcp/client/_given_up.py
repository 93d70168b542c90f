"""A call the agent gave up (Stop, its own time limit) is cancelled on the server at once.

`_until_given_up` wraps a session's request: when the agent call it serves ends other than
"done", the request's task is cancelled (the SDK then tells the server), and `_GivenUp` says so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any


class _GivenUp(Exception):
    """The agent gave the call up (Stop, its own time limit) before the server answered."""


async def _until_given_up(awaitable: Awaitable[Any], running: Any) -> Any:
    """``await awaitable``, cancelled as soon as the agent gives ``running`` up, so the server hears
    of it at once.

    Raises:
        _GivenUp: The agent gave the call up first.
    """
    task = asyncio.ensure_future(awaitable)
    if running is None:
        return await task
    loop, given_up = asyncio.get_running_loop(), []

    def on_end(how: str) -> None:  # on the cell's loop
        if how != "done":
            given_up.append(how)
            with contextlib.suppress(RuntimeError):  # this loop is closed: the call is over anyway
                loop.call_soon_threadsafe(task.cancel)

    running.on_end.append(on_end)
    if running.ended not in (None, "done"):  # it ended before we listened
        on_end(running.ended)
    try:
        return await task
    except asyncio.CancelledError:
        if given_up and task.cancelled():
            raise _GivenUp("stopped" if given_up[0] == "stopped" else "the agent's time limit") from None
        raise
    finally:
        with contextlib.suppress(ValueError):
            running.on_end.remove(on_end)
