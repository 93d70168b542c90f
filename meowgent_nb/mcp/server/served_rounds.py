"""`ServedCall`: a served call whose tool asks its client, on the 2026-07-28 protocol.

That protocol has no back-channel: the call answers with an ``InputRequiredResult`` holding the
question, and the client calls again with its answer and the ``request_state`` it was given. The
tool's thread waits, parked, meanwhile (its time limit stands still): `ServedCall.next` gives the
next question or the result, `ServedCall.resume` the answer, `ServedCall.question` asks from the
tool's thread. On 2025 protocols `served_context` asks the client directly instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import secrets
from typing import Any

__all__ = ["ANSWER_WAIT", "ServedCall", "session_of"]

ANSWER_WAIT = 600.0
"""Seconds a parked call waits for its client to call again with the answer."""


class ServedCall:
    """One served ``tools/call`` across its rounds.

    Args:
        request: The SDK's context of the first request (then of each retry).
        loop: The server's loop.
        parked: The server's parked calls, by ``request_state``.
    """

    def __init__(self, request: Any, loop: asyncio.AbstractEventLoop, parked: dict[str, ServedCall]):
        self.request, self.loop, self.parked = request, loop, parked
        self.session = session_of(request)
        """The client's MCP session: only a retry from it may answer (None where there are none)."""
        self._events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._waiting: dict[str, concurrent.futures.Future[Any]] = {}
        self._keys = itertools.count(1)

    @property
    def back_channel(self) -> bool:
        """Whether the client can be asked with a request of its own (the 2025 protocols)."""
        return bool(self.request.session.can_send_request)

    def finish(self, result: Any) -> None:
        """The call's end (on the server's loop): the last round returns ``result``."""
        self._events.put_nowait(("done", result))

    async def next(self) -> Any:
        """The tool's next question, as an ``InputRequiredResult``, or its ``CallToolResult``."""
        import mcp_types as types

        kind, value = await self._events.get()
        if kind == "done":
            return value
        key, request = value
        state = secrets.token_urlsafe(24)
        self.parked[state] = self
        self.loop.call_later(ANSWER_WAIT, self._expire, state, key)
        return types.InputRequiredResult(input_requests={key: request}, request_state=state)

    async def resume(self, request: Any, responses: dict[str, Any]) -> Any:
        """Give the tool the client's answers (the retry of the call), then wait for the next round."""
        self.request = request
        for key, answer in responses.items():
            waiting = self._waiting.pop(key, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(answer)
        return await self.next()

    def question(self, request: Any) -> Any:
        """On the tool's thread: ask ``request`` (an ``ElicitRequest`` or ``CreateMessageRequest``)
        and wait for the client's answer.

        Raises:
            TimeoutError: No answer within `ANSWER_WAIT` seconds.
        """
        key = f"q{next(self._keys)}"
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._waiting[key] = answer
        self.loop.call_soon_threadsafe(self._events.put_nowait, ("ask", (key, request)))
        return answer.result(ANSWER_WAIT + 1)

    def answers(self, request: Any) -> bool:
        """Whether ``request`` (a retry) comes from the client this call asked."""
        return session_of(request) == self.session

    def _expire(self, state: str, key: str) -> None:
        self.parked.pop(state, None)
        waiting = self._waiting.pop(key, None)
        if waiting is not None and not waiting.done():
            waiting.set_exception(TimeoutError(f"the MCP client did not answer within {ANSWER_WAIT:g} s"))


def session_of(request: Any) -> str | None:
    """The MCP session id a request came in (its ``Mcp-Session-Id`` header), or None."""
    headers = getattr(getattr(request, "request", None), "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None
