"""The shared model process: one `LlamaCppModel` served on a Unix socket to the kernels of a machine.

Requests are answered one at a time, in the order they arrive; a client that waits is told how
many are ahead of it. The process removes its socket and exits once no request (chat or count)
has been open for ``idle_seconds`` (a ``status`` or ``stop`` is not use). The wire is
`_shared_wire`'s. `SharedLocalModel` starts this process (``python -m
meowgent_nb.models.shared_local serve``); nothing here is imported by a kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..tools.core import Tool
from ._shared_wire import VERSION, chunk_to_wire, line
from .base import ModelChunk, ModelError, ModelRequest
from .llamacpp import LlamaCppModel

__all__ = ["LocalServer"]


@dataclass(frozen=True)
class _SchemaTool:
    """A tool that arrived as its JSON schema: all the chat template reads of it."""

    schema: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.schema.get("function", {}).get("name", ""))

    def to_json_schema(self) -> dict[str, Any]:
        return dict(self.schema)


class LocalServer:
    """Serves ``model`` on the Unix socket ``socket_path`` until idle for ``idle_seconds``.

    Args:
        model: The model every request goes to.
        socket_path: Where to listen; its folder's permissions decide who may connect.
        idle_seconds: How long the process waits with nobody connected before it exits.
    """

    def __init__(self, model: LlamaCppModel, *, socket_path: Path, idle_seconds: float):
        self.model = model
        self.socket_path = socket_path
        self.idle_seconds = idle_seconds
        self._line: list[object] = []
        """Tickets of the chat requests, the one being answered first."""
        self._turn = asyncio.Condition()
        self._connected = 0
        self._using = 0
        self._last_seen = time.monotonic()
        self._stop = asyncio.Event()

    async def serve(self) -> None:
        """Listen until idle (or asked to stop), then remove the socket."""
        server = await asyncio.start_unix_server(self._client, path=str(self.socket_path))
        mine = self.socket_path.stat().st_ino
        try:
            watch = asyncio.create_task(self._watch_idle())
            await self._stop.wait()
            watch.cancel()
        finally:
            server.close()
            # Not a successor's: a kernel may have started one as soon as this one stopped listening.
            with contextlib.suppress(FileNotFoundError):
                if self.socket_path.stat().st_ino == mine:
                    self.socket_path.unlink()

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.idle_seconds / 4))
            if self._using == 0 and time.monotonic() - self._last_seen >= self.idle_seconds:
                self._stop.set()
                return

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connected += 1
        using = False  # a chat or count: what keeps the process from idling (not status, stop)
        try:
            raw = await reader.readline()
            message = json.loads(raw) if raw.strip() else {}
            using = message.get("op") in ("chat", "count")
            self._using += using
            work = asyncio.create_task(self._answer(message, writer))
            # A client that goes away (its cell stopped) while it waits or streams: stop its work.
            gone = asyncio.create_task(reader.read(1))
            await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not work.done():
                work.cancel()
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await work
        except (ConnectionError, json.JSONDecodeError):
            pass
        finally:
            self._connected -= 1
            if using:
                self._using -= 1
                self._last_seen = time.monotonic()
            writer.close()

    async def _answer(self, message: Mapping[str, Any], writer: asyncio.StreamWriter) -> None:
        async def send(value: Mapping[str, Any]) -> None:
            writer.write(line(value))
            await writer.drain()

        if message.get("v") != VERSION:
            await send(
                {
                    "error": f"The shared model process speaks protocol v{VERSION}, the request"
                    f" v{message.get('v')}: stop it (python -m meowgent_nb.models.shared_local stop)"
                    " and let the next request start a current one."
                }
            )
            return
        op = message.get("op")
        try:
            if op == "chat":
                await self._chat(message.get("request", {}), send)
            elif op == "count":
                count = await asyncio.to_thread(self.model.count_tokens, str(message.get("text", "")))
                await send({"tokens": count})
            elif op == "status":
                await send(self.status())
            elif op == "stop":
                await send({"stopping": True})
                self._stop.set()
            else:
                await send({"error": f"Unknown operation {op!r}: one of chat, count, status, stop."})
        except ModelError as exc:
            await send({"error": str(exc)})

    def status(self) -> dict[str, Any]:
        """What the process is doing: its pid, model, the requests waiting, clients connected."""
        return {
            "pid": os.getpid(),
            "model": self.model.name,
            "path": None if self.model.path is None else str(self.model.path),
            "n_ctx": self.model.n_ctx,
            "waiting": max(0, len(self._line) - 1),
            "connected": self._connected,
            "idle_seconds": self.idle_seconds,
        }

    async def _chat(self, wire: Mapping[str, Any], send: Any) -> None:
        request = request_from_wire(wire)
        ticket = object()
        self._line.append(ticket)
        try:
            shown = None
            async with self._turn:
                while self._line[0] is not ticket:
                    ahead = self._line.index(ticket)
                    if ahead != shown:
                        shown = ahead
                        await send({"status": f"waiting for the shared model: {ahead} ahead"})
                    await self._turn.wait()
            stream = cast("AsyncGenerator[ModelChunk, None]", self.model.stream(request))
            async with contextlib.aclosing(stream) as chunks:
                async for chunk in chunks:
                    await send(chunk_to_wire(chunk))
        finally:
            self._line.remove(ticket)
            async with self._turn:
                self._turn.notify_all()


def serve(
    *, socket_path: Path, path: Path | None, n_ctx: int, n_threads: int | None, idle_seconds: float
) -> None:
    """Run a shared model process in this one until it is idle (what ``shared_local serve`` does)."""
    model = LlamaCppModel(path, n_ctx=n_ctx, n_threads=n_threads)
    asyncio.run(LocalServer(model, socket_path=socket_path, idle_seconds=idle_seconds).serve())


def request_from_wire(wire: Mapping[str, Any]) -> ModelRequest:
    """The `ModelRequest` a ``chat`` line's ``request`` object (`_shared_wire.request_to_wire`) stands for."""
    return ModelRequest(
        messages=list(wire.get("messages", ())),
        tools=cast("list[Tool]", [_SchemaTool(schema) for schema in wire.get("tools", ())]),
        think=wire.get("think"),
        options=dict(wire.get("options", {})),
        format=wire.get("format"),
        call_format=wire.get("call_format"),
        call_tag=wire.get("call_tag"),
        call_grounding=bool(wire.get("call_grounding", False)),
    )
