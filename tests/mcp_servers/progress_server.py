"""An MCP server whose tools report progress and log while they work, written with the `mcp` SDK.

``count(steps)`` reports progress ``steps`` times out of ``steps`` with a message each (the
second one hostile HTML, the third 10,000 characters), and logs at four levels (one message with
a hidden character, one as JSON data, one without a logger); ``tick(steps)`` reports progress
without a total; ``chatty(warnings_)`` logs that many warnings. Each waits a little between
steps, so a client that throttles what it draws has something to throttle, and a little after
the last notification, so they all reach the client before the result.
``progress_server.py legacy`` speaks the 2025 handshake only (see asking_server.py);
``progress_server.py http PORT`` serves streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

warnings.simplefilter("ignore")  # the SDK marks logging deprecated (SEP-2577); this server uses it on purpose
server = MCPServer("progress")
READ_ONLY = ToolAnnotations(read_only_hint=True)
LONG = "x" * 10_000


def message(step: int) -> str:
    return {2: "<script>alert(1)</script> step 2", 3: LONG}.get(step, f"step {step}")


@server.tool(annotations=READ_ONLY)
async def count(steps: int, ctx: Context, pause: float = 0.02, rest: float = 0.2) -> str:
    """Count to ``steps``, reporting progress out of ``steps`` (``pause`` seconds apart) and logging on
    the way; the result comes ``rest`` seconds after the last notification."""
    await ctx.debug("starting the count", logger_name="counter")
    await ctx.info({"steps": steps, "unit": "step"}, logger_name="counter")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, message(step))
        await asyncio.sleep(pause)
    await ctx.warning("the count <b>ran</b> long", logger_name="counter")
    await ctx.error("disk almost full\u202e", logger_name=None)
    await asyncio.sleep(rest)  # the notifications reach the client before the result
    return f"counted to {steps}"


@server.tool(annotations=READ_ONLY)
async def tick(steps: int, ctx: Context) -> str:
    """Tick ``steps`` times, reporting progress without a total."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, None, f"tick {step}")
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    return f"ticked {steps} times"


@server.tool(annotations=READ_ONLY)
async def chatty(warnings_: int, ctx: Context) -> str:
    """Log ``warnings_`` warnings during the call."""
    for number in range(1, warnings_ + 1):
        await ctx.warning(f"warning {number}", logger_name="chatty")
    await asyncio.sleep(0.2)
    return "said it all"


if __name__ == "__main__":
    from legacy import run_server  # beside this file, on the path of a script run as one

    run_server(server, sys.argv[1:])
