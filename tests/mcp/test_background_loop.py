"""The MCP background loop's `run`: a wait with no time limit, and one with a limit."""

from __future__ import annotations

import asyncio

import pytest

from meowgent_nb.mcp._thread import background_loop


async def _late(value: str, seconds: float) -> str:
    await asyncio.sleep(seconds)
    return value


def test_a_run_without_a_time_limit_waits_past_the_poll_interval():
    # It polled every 0.5 s and then raised a TypeError formatting "within None s".
    assert background_loop().run(_late("done", 1.2)) == "done"


def test_a_run_over_its_time_limit_is_a_timeout_that_names_the_limit():
    with pytest.raises(TimeoutError, match=r"^did not finish within 0.2 s$"):
        background_loop().run(_late("late", 5), timeout=0.2)
