"""Asking a model request again when the server failed in a way asking again may mend.

A backend marks such a failure with a `RetryCause` on its `ModelError` (a cut answer, a refused
connection, a busy or restarting server). `asking` reads a turn's answer and, when its request
fails so before the model began a call, drops what the attempt streamed, yields a `ModelRetry`,
waits (`wait_after`: exponential, jittered, or the server's ``Retry-After``) and asks again, within
the agent's ``retry_attempts`` and ``retry_seconds``. A request whose answer had begun a call is
never asked again: the call might then be made twice.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable

from ..models.base import ModelError, RetryCause, StreamCut
from ..protocols.parsing import PartialCall
from ._settings import RunSettings
from ._turn import TurnAnswer
from .events import AgentEvent, ModelRetry, ToolCallEvent

__all__ = ["JITTER", "REFUSED_ATTEMPTS", "asking", "backoff", "wait_after"]

JITTER = 0.5
"""How far a wait strays from its doubling, either way, so that a class's kernels, cut at the
same moment, do not all ask again at the same moment (on a server that cuts the answer it streams
when another request arrives, every arrival cuts someone: spreading them is what serves a class)."""
REFUSED_ATTEMPTS = 3
"""The most attempts at a request whose server could not be reached: enough for a server that is
restarting, while a wrong address or a server never started is told within seconds."""


def backoff(attempt: int, *, delay: float, draw: float) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1: the first): ``delay`` doubled each
    attempt (1, 2, 4, 8 s for 1 s), times 1 - `JITTER` (``draw`` 0) to 1 + `JITTER` (``draw`` 1)."""
    return delay * 2 ** (attempt - 1) * (1 + JITTER * (2 * draw - 1))


def wait_after(attempt: int, cause: RetryCause, *, delay: float, draw: float) -> float:
    """Seconds to wait after failed attempt ``attempt``: what the server asked (``Retry-After``),
    else `backoff`."""
    if cause.retry_after is not None:
        return cause.retry_after
    return backoff(attempt, delay=delay, draw=draw)


async def asking(
    read: Callable[[], AsyncIterator[AgentEvent]],
    answer: TurnAnswer,
    turn: int,
    settings: RunSettings,
    *,
    draw: Callable[[], float] = random.random,
) -> AsyncIterator[AgentEvent]:
    """The events of ``read()`` (one attempt at the turn's request, into ``answer``), asked again
    while it fails in a way asking again may mend, before a call began, within ``settings``.

    Yields:
        The attempts' events, and a `ModelRetry` before each attempt after the first (``answer``
        is cleared then: the dropped attempt is in neither the result nor the conversation).

    Raises:
        ModelError: A failure asking again would not mend, as it was; one after the model began
            a call, saying it is not asked again; the last of ``retry_attempts``, or one whose wait
            would pass ``retry_seconds``, naming the attempts and what to do.
    """
    attempt, waited = 1, 0.0
    while True:
        began = False
        try:
            async for event in read():
                began = began or isinstance(event, (PartialCall, ToolCallEvent))
                yield event
            return
        except ModelError as error:
            cause = error.retry
            if cause is None or settings.retry_attempts == 1:
                raise
            if began or answer.calls:
                raise _like(error, _call_began(error)) from error
            wait = wait_after(
                attempt, cause, delay=settings.retry_delay, draw=draw() if cause.draw is None else cause.draw
            )
            attempts = _attempts(cause, settings)
            if attempt >= attempts or waited + wait > settings.retry_seconds:
                raise _like(error, _gave_up(error, cause, attempt, waited, settings)) from error
            attempt += 1
            answer.clear()
            yield ModelRetry(turn, attempt, attempts, wait, cause.words)
            if not cause.replayed:  # a replay shows the wait it recorded, and does not wait
                await asyncio.sleep(wait)
            waited += wait


def _attempts(cause: RetryCause, settings: RunSettings) -> int:
    """The most attempts for a failure of this kind: `REFUSED_ATTEMPTS` for a server not reached."""
    return (
        min(settings.retry_attempts, REFUSED_ATTEMPTS) if cause.kind == "refused" else settings.retry_attempts
    )


def _like(error: ModelError, message: str) -> ModelError:
    """A new error of ``error``'s kind (a `StreamCut` stays one), with no `RetryCause`: it is final."""
    return StreamCut(message) if isinstance(error, StreamCut) else ModelError(message)


def _call_began(error: ModelError) -> str:
    return (
        f"{error} The answer was cut after the model began a call, so it is not asked again (the call"
        " could be made twice); the conversation is kept: run the cell again to continue."
    )


def _gave_up(error: ModelError, cause: RetryCause, attempt: int, waited: float, settings: RunSettings) -> str:
    times = "once" if attempt == 1 else f"{attempt} times"
    return (
        f"The model request was asked {times}, waiting {waited:.0f} s in all between, and failed each"
        f" time ({cause.words}); the agent asks at most {_attempts(cause, settings)} times"
        f"{' a server it cannot reach' if cause.kind == 'refused' else ''} and waits at"
        f" most {settings.retry_seconds:g} s (Agent's retry_attempts and retry_seconds). The last"
        f" failure: {error}"
    )
