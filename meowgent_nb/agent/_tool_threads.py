"""Threads for tool calls: a hung tool costs its own thread only, and never holds a process open.

`ToolThreads` runs each call on a reused daemon thread; `call_tool` runs one tool there. Python
cannot stop a thread, so a fixed pool would fill with hung calls and be joined at exit: here the
limit on running calls is the agent's semaphore, released when a call ends or times out, and
what a given-up call's thread returns or raises is dropped.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any

from ..tools.output import output_text

if TYPE_CHECKING:
    from ..tools.core import Tool

__all__ = ["ToolThreads", "call_tool"]

_MAX_IDLE = 8  # threads kept waiting for work; more than that exit when their call is done


class ToolThreads:
    """Runs functions on daemon threads, reusing idle ones."""

    def __init__(self, name: str = "meowgent-tool") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._work: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self._idle = 0  # threads waiting for work that no submitted call has claimed
        self._count = 0

    def run(self, function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Starts ``function(*args)`` on a thread, in a copy of the caller's context.

        Returns:
            A future of the running loop that gets the function's value or exception. Cancelling
            it does not stop the thread (nothing can); what the function does later is dropped.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        context = contextvars.copy_context()

        def deliver(ok: bool, outcome: Any) -> None:
            if future.done():  # given up: timed out or interrupted
                return
            if ok:
                future.set_result(outcome)
            else:
                future.set_exception(outcome)

        def work() -> None:
            try:
                value, ok = context.run(function, *args), True
            except BaseException as exc:  # the caller decides what a SystemExit in a tool means
                value, ok = exc, False
            try:
                loop.call_soon_threadsafe(deliver, ok, value)
            except RuntimeError:  # the loop is closed: nobody waits for this call any more
                pass

        number = 0  # the new thread's, when one is spawned
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
            else:
                self._count += 1
                number = self._count
        self._work.put(work)
        if spawn:
            threading.Thread(target=self._serve, name=f"{self._name}_{number}", daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            work = self._work.get()
            work()
            del work  # nothing of a finished call stays alive while the thread waits
            with self._lock:
                if self._idle >= _MAX_IDLE:
                    return
                self._idle += 1


def call_tool(tool: Tool, values: dict[str, Any], limit: Any) -> tuple[Any, str, BaseException | None]:
    """On a tool thread: the tool's value and its text for the model, or the error and its text.

    Never raises: a ``SystemExit`` or ``KeyboardInterrupt`` raised *by the tool* (argparse exits)
    is the tool's failure, not the person's interrupt, which reaches the cell's thread instead.
    """
    try:
        value = tool.invoke(values)
    except SystemExit as exc:
        return None, f"Error: the tool tried to exit the process (SystemExit: {exc.code}); it did not.", exc
    except BaseException as exc:
        return None, f"Error: {_describe(exc)}", exc
    try:
        return value, output_text(value, limit), None
    except BaseException as exc:
        kind = type(value).__name__
        return (
            None,
            f"Error: the tool returned a {kind} that could not be turned into text: {_describe(exc)}",
            exc,
        )


def _describe(exc: BaseException) -> str:
    try:
        detail = str(exc)
    except Exception:  # an exception whose __str__ fails still has a type
        detail = "(its message could not be read)"
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
