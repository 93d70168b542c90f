"""`agent_context`: a tool's `ToolContext` when the notebook's agent runs it.

The tool is, for the notebook, a server of one: its `progress` and `log` go to the call's card
through `CallWatch`, and `ask` and `sample` through `ServerAsks` (``sampling="ask"``), with the
same running call (`RUNNING_CALL`). It is the default backend of `tools.context` while the
extension is loaded; a tool called with no agent call running gets none.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Sequence
from typing import Any

from ...agent.running_call import RUNNING_CALL, RunningCall
from ...tools.context import LEVELS, Answer, ToolContextError, log_to_python
from .._thread import background_loop
from .asking import ServerAsks, _Flight
from .progress import CallWatch, LogEntry

__all__ = ["AgentContext", "agent_context"]

_TO_CARD = LEVELS.index("info")
_NO_LIMIT = 24 * 3600.0  # seconds: a call without a time limit still waits no longer than a day


def agent_context(tool: str) -> AgentContext | None:
    """The backend of a context made on a tool's thread during an agent's call, else None."""
    running = RUNNING_CALL.get()
    return AgentContext(running, tool) if running is not None else None


class AgentContext:
    """One call's context, backed by its agent."""

    def __init__(self, running: RunningCall, tool: str):
        self.running, self.tool = running, tool
        self.source = f"the tool {tool}"
        more = f"{self.source} logged more (Python's logging has every line: logger meowgent_nb.tool.{tool})"
        self._watch = CallWatch(self.source, _Flight(running, contextvars.copy_context()), more)
        self._asks = ServerAsks(self.source, sampling="ask")

    def progress(self, done: float, total: float | None, message: str | None) -> None:
        background_loop().submit(
            self._watch.progress(done, total, message)
        )  # the card keeps up; the tool goes on

    def log(self, level: str, message: str) -> None:
        log_to_python(self.tool, level, message)  # every line, bounded as log_to_python bounds it
        if LEVELS.index(level) >= _TO_CARD:
            self._watch.tell(LogEntry(level, None, message, time.time()))

    def ask(self, message: str, schema: dict[str, Any]) -> Answer:
        from mcp_types import ElicitRequestFormParams

        params = ElicitRequestFormParams(message=message, requested_schema=schema)
        result = self._answer(self._asks.elicit(None, params))
        return Answer(
            result.action, dict(result.content) if result.content is not None else None, self._reason()
        )

    def sample(self, messages: Sequence[tuple[str, str]], system: str | None, max_tokens: int) -> str:
        from mcp_types import CreateMessageRequestParams, SamplingMessage, TextContent

        said = [
            SamplingMessage(
                role=role if role in ("user", "assistant") else "user",
                content=TextContent(type="text", text=text),
            )
            for role, text in messages
        ]
        params = CreateMessageRequestParams(messages=said, max_tokens=max_tokens, system_prompt=system)
        result = self._answer(self._asks.sample(None, params))
        return str(getattr(result.content, "text", ""))

    def _answer(self, coroutine: Any) -> Any:
        """Run a `ServerAsks` answer on the MCP loop, from the tool's thread, as a served call's is."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self.running.loop:
            coroutine.close()
            raise ToolContextError(
                f"the tool {self.tool!r} is an async def, so it cannot wait for the person or the model here:"
                " make it a plain def"
            )
        limit = self.running.timeout if self.running.timeout is not None else _NO_LIMIT
        with self._asks.flight():  # the wait is the call's: its limit, not counting the person's time
            result = background_loop().run(coroutine, timeout=limit, held=self.running)
        if getattr(result, "code", None) is not None and hasattr(result, "message"):  # ErrorData: refused
            raise ToolContextError(f"{self.source}: {result.message}")
        return result

    def _reason(self) -> str:
        history = self._asks.history
        outcome = history[-1].outcome if history else ""
        return outcome.split(": ", 1)[1] if ": " in outcome else ""
