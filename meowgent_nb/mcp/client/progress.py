"""What a server says while it works: its calls' progress, and log messages.

`ServerNotes` is one toolbox's view: it keeps the recent log messages at or above its level
(`McpToolbox.log`), and `ServerNotes.watch` makes a `CallWatch` per call that sends the newest
`Progress`, and warnings, to the call's card through the agent's approver, throttled. All of it
is a server's text, so it is bounded here; showing it escaped is the display's part. What a
person sees is in docs/guides/mcp.md ("When a server asks back").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import time
import warnings
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...errors import SettingsError
from .asking import _FLIGHT, _Flight

__all__ = ["LOG_LEVELS", "CallWatch", "LogEntry", "Progress", "ProgressFn", "ServerNotes", "set_level"]

ProgressFn = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""The SDK's ``progress_callback``: (progress, total, message)."""

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""MCP's log levels (those of syslog), least severe first."""
_KEPT = 200  # log messages a box keeps
_LOG_TEXT = 2000  # characters of a log message kept
_LOGGER = 100  # characters of a logger's name kept
_MESSAGE = 200  # characters of a progress message, or of a log message in a card
_INTERVAL = 0.25  # seconds: least time between two progress updates sent to the cell
_CARD_NOTES = 5  # log lines in one call's card, before the one that says where the rest are
_TO_CARD = LOG_LEVELS.index("warning")


@dataclass(frozen=True)
class Progress:
    """One progress notification of a call, as the server sent it (its message on one line, bounded)."""

    progress: float | None
    """None: no count, only a message (a task's status, see `CallWatch.status`)."""
    total: float | None
    message: str | None

    @property
    def fraction(self) -> float | None:
        """How much is done, from 0 to 1; None without a (positive, finite) total."""
        total = self.total
        if (
            self.progress is None
            or total is None
            or not math.isfinite(total)
            or total <= 0
            or not math.isfinite(self.progress)
        ):
            return None
        return min(max(self.progress / total, 0.0), 1.0)

    def text(self) -> str:
        """``42 of 100 (42 %) - message``, or ``3 so far - message`` without a total."""
        fraction, total = self.fraction, self.total
        if self.progress is None:
            return self.message or ""
        if fraction is None or total is None:
            text = f"{_number(self.progress)} so far"
        else:
            text = f"{_number(self.progress)} of {_number(total)} ({math.floor(fraction * 100)} %)"
        return text + (f" - {self.message}" if self.message else "")


@dataclass(frozen=True)
class LogEntry:
    """One log message of a server (``notifications/message``)."""

    level: str
    """One of `LOG_LEVELS`."""
    logger: str | None
    """The logger's name the server gave, if any."""
    text: str
    """The message's data as text: a string as it is, anything else as JSON (at most 2,000 characters)."""
    time: float
    """When it arrived (``time.time()``)."""


class ServerNotes:
    """A toolbox's log of its server's messages, and the progress of its calls.

    Args:
        server: The server's name here.
        level: The least severe level kept (one of `LOG_LEVELS`); the server is asked to send
            nothing below it.
    """

    def __init__(self, server: str, level: str = "info"):
        if level not in LOG_LEVELS:
            raise SettingsError(
                f"McpToolbox {server!r}: log_level must be one of {', '.join(LOG_LEVELS)}, got {level!r}"
            )
        self.server, self.level = server, level
        self._entries: deque[LogEntry] = deque(maxlen=_KEPT)
        self._watches: list[CallWatch] = []
        self._lock = threading.Lock()

    @property
    def log(self) -> tuple[LogEntry, ...]:
        """The last 200 messages kept, oldest first."""
        with self._lock:
            return tuple(self._entries)

    @contextlib.contextmanager
    def watch(self, flight: _Flight) -> Iterator[CallWatch]:
        """Around a call, on the thread that makes it: its progress callback, and its card for log lines."""
        watch = CallWatch(self.server, flight)
        with self._lock:
            self._watches.append(watch)
        try:
            yield watch
        finally:
            watch.over = True
            with self._lock:
                self._watches.remove(watch)

    async def on_log(self, params: Any) -> None:
        """The SDK's ``logging_callback`` (on the MCP loop)."""
        level = params.level if params.level in LOG_LEVELS else "info"
        rank = LOG_LEVELS.index(level)
        if rank < LOG_LEVELS.index(self.level):  # an older server may not have been asked to hold it back
            return
        logger = params.logger if isinstance(params.logger, str) else None
        text = _cut(_data_text(params.data), _LOG_TEXT)
        entry = LogEntry(level, logger[:_LOGGER] if logger else None, text, time.time())
        with self._lock:
            self._entries.append(entry)
            watch = self._watch()
        if watch is not None and rank >= _TO_CARD:
            watch.tell(entry)

    def _watch(self) -> CallWatch | None:
        """The call a log message belongs to: the one whose task it arrived in, else the oldest."""
        own = _FLIGHT.get()
        for watch in self._watches:
            if watch.flight is own:
                return watch
        return self._watches[0] if self._watches else None


class CallWatch:
    """One call's progress and log lines on their way to its card (made by `ServerNotes.watch`)."""

    def __init__(self, server: str, flight: _Flight, more: str | None = None):
        self.server, self.flight = server, flight
        self.more = more or f"{server} logged more: %tools mcp log {server} shows it"
        """The card's last log line, once five are there: where the rest can be read."""
        running = flight.running
        approver = getattr(running, "approver", None)
        self._shows = running is not None and callable(getattr(approver, "progress", None))
        self._tells = running is not None and callable(getattr(approver, "tell", None))
        self.latest: Progress | None = None
        """The newest progress the server reported, or None."""
        self.over = False
        """Set when the call has returned: nothing more goes to its card."""
        self._sent_at = -math.inf
        self._timer: asyncio.TimerHandle | None = None
        self._told = 0

    async def progress(self, progress: float | None, total: float | None, message: str | None) -> None:
        """The call's ``progress_callback`` (on the MCP loop)."""
        message = _cut(" ".join(message.split()), _MESSAGE) if message else None
        self.latest = Progress(progress, total, message)
        if not self._shows or self.over or self._timer is not None:
            return  # nothing shows it, or a send is due and will take the newest
        loop = asyncio.get_running_loop()
        wait = self._sent_at + _INTERVAL - loop.time()
        if wait > 0:
            self._timer = loop.call_later(wait, self._send)
        else:
            self._send()

    async def status(self, text: str) -> None:
        """A new status of the call's task (see `_tasks`): its message, with the last count if any."""
        latest = self.latest
        count = (latest.progress, latest.total) if latest is not None else (None, None)
        await self.progress(*count, text)

    def _send(self) -> None:
        self._timer = None
        running = self.flight.running
        # Once the call ended (its result, or its time limit or Stop first), its card has its result.
        if self.over or self.latest is None or running is None or running.ended is not None:
            return
        self._sent_at = asyncio.get_running_loop().time()
        self._on_cell(running.approver.progress, running, self.latest)

    def tell(self, entry: LogEntry) -> None:
        """Put a log message in the call's card (the first few of the call; then where the rest are)."""
        if not self._tells or self.over or self._told > _CARD_NOTES:
            return
        self._told += 1
        if self._told > _CARD_NOTES:
            text = self.more
        else:
            source = f" ({entry.logger})" if entry.logger else ""
            said = _cut(" ".join(entry.text.split()), _MESSAGE)
            text = f"{self.server} logged {entry.level}{source}: {said}"
        running = self.flight.running
        self._on_cell(running.approver.tell, running, text)  # type: ignore[union-attr]

    def _on_cell(self, function: Callable[..., Any], *args: Any) -> None:
        """Call ``function`` on the cell's loop, in the context of the call (its cell, its display)."""
        loop = self.flight.running.loop  # type: ignore[union-attr]
        with contextlib.suppress(RuntimeError):  # the cell's loop is closed: nobody to show it to
            loop.call_soon_threadsafe(_safely, function, *args, context=self.flight.context.copy())


def _safely(function: Callable[..., Any], *args: Any) -> None:
    try:
        function(*args)
    except Exception:  # noqa: BLE001 - a display must never break a run
        pass


async def set_level(client: Any, capabilities: Any, level: str) -> None:
    """Ask a 2025-protocol server that offers ``logging`` to send ``level`` and above
    (``logging/setLevel``); a 2026-protocol server is asked on every request instead."""
    if getattr(capabilities, "logging", None) is None:
        return
    if str(getattr(client, "protocol_version", "")) >= "2026-07-28":
        return
    with warnings.catch_warnings(), contextlib.suppress(Exception):
        warnings.simplefilter("ignore")  # deprecated in the 2026 protocol, which this server does not speak
        await asyncio.wait_for(client.set_logging_level(level), 10)


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "?"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _data_text(data: Any) -> str:
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # pragma: no cover - a server's JSON is JSON
        return repr(data)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
