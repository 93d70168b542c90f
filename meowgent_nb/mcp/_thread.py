"""One background thread with its own event loop, for MCP sessions and the MCP tool server.

While a cell runs the kernel's loop is busy with it, so every MCP session and server lives on
this loop instead; synchronous code hands it coroutines with `run`. The thread is a daemon, and
closers registered with `on_exit` run at interpreter exit so stdio servers are told to stop.
Hand-written rather than anyio's blocking portal, which cancels a given-up task at every await
so it could not send ``tasks/cancel`` as it ends.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

__all__ = ["BackgroundLoop", "background_loop"]

_EXIT_WAIT = 5.0  # seconds each closer may take at interpreter exit


class BackgroundLoop:
    """An asyncio loop running forever in a daemon thread named ``meowgent-mcp``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._closers: dict[int, Callable[[], Awaitable[Any]]] = {}
        started = threading.Event()
        self.thread = threading.Thread(target=self._main, args=(started,), name="meowgent-mcp", daemon=True)
        self.thread.start()
        started.wait()

    def _main(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(started.set)
        self.loop.run_forever()

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Schedule ``coroutine`` on the loop; returns a future to wait on from any other thread."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float | None = None, held: Any = None) -> Any:
        """Run ``coroutine`` on the loop and wait for it.

        Args:
            coroutine: What to run.
            timeout: Seconds to wait, or None.
            held: A `RunningCall` whose held time (a person answering) does not count.

        Raises:
            TimeoutError: It did not finish within ``timeout`` seconds (it is then cancelled).
            KeyboardInterrupt: The wait was interrupted (the coroutine is then cancelled too).
        """
        if threading.current_thread() is self.thread:
            raise RuntimeError("BackgroundLoop.run was called from the loop's own thread; await instead")
        future = self.submit(coroutine)
        started = time.monotonic()
        try:
            while True:
                left = timeout if held is None or timeout is None else held.left(started, timeout)
                try:
                    return future.result(_HELD_POLL if left is None else max(left, 0.0))
                except concurrent.futures.TimeoutError:
                    if timeout is None:
                        continue  # no limit: wait on, in short waits (an interrupt still gets through)
                    if held is None:
                        raise
                    after = held.left(started, timeout)  # held time may have moved the deadline on
                    if after is not None and after <= 0:
                        raise
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"did not finish within {timeout:g} s") from None
        except KeyboardInterrupt:  # an interrupted cell: do not leave the call running behind it
            future.cancel()
            raise

    def on_exit(self, key: object, closer: Callable[[], Awaitable[Any]] | None) -> None:
        """Register (or, with None, forget) a coroutine function to await at interpreter exit."""
        if closer is None:
            self._closers.pop(id(key), None)
        else:
            self._closers[id(key)] = closer

    def close_all(self) -> None:
        """Await every registered closer (each within a few seconds); used at interpreter exit."""
        for closer in list(self._closers.values()):
            try:
                self.run(_call(closer), timeout=_EXIT_WAIT)
            except BaseException:  # exiting anyway: one stuck server must not keep the others open
                pass
        self._closers.clear()


async def _call(closer: Callable[[], Awaitable[Any]]) -> Any:
    return await closer()


_HELD_POLL = 0.5
"""Seconds between looks at a held call's clock."""

_lock = threading.Lock()
_instance: BackgroundLoop | None = None


def background_loop() -> BackgroundLoop:
    """The process's background loop, started on first use."""
    global _instance
    with _lock:
        if _instance is None:
            _instance = BackgroundLoop()
            atexit.register(_instance.close_all)
        return _instance
