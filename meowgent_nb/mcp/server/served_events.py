"""`ServedEvents`: what `ToolServer` tells its clients when something it serves changes.

On 2026-07-28 a client hears it on its ``subscriptions/listen`` stream (the SDK's, wrapped here
to know which resources to watch); on 2025 protocols through ``resources/subscribe`` and
``notifications/.../list_changed`` to sessions that listed (`heard`). A resource is updated when
`changed` names it or the watch reads new content; each update is told once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["MAX_LISTENED", "ServedEvents"]

MAX_LISTENED = 100
"""Resources one listen stream may ask to hear about (each is read every ``watch`` seconds)."""
_MAX_SESSIONS = 1000  # 2025 sessions kept to be told of list changes (the most recent ones)
_UNREAD = ""  # the digest of a resource that could not be read: readable later is a change


class ServedEvents:
    """The listen streams and resource subscriptions of one `ToolServer`.

    Args:
        read: Reads a served resource's content (``await read(uri) -> (content, mime)``); raises
            for a URI nothing publishes.
        publishes: Whether a served resource (or template) has ``uri``.
        watch: Seconds between looks at a watched resource's content (None: only `changed`).
    """

    def __init__(
        self,
        read: Callable[[str], Awaitable[tuple[str | bytes, str]]],
        publishes: Callable[[str], bool],
        watch: float | None = 1.0,
    ):
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        self._read, self._publishes, self.watch = read, publishes, watch
        self._bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        self._listened: Counter[str] = Counter()  # uri -> open listen streams naming it
        self._subscribers: dict[str, dict[Any, Any]] = {}  # uri -> {session key: session} (2025)
        self._sessions: dict[Any, Any] = {}  # session key -> 2025 session told of list changes
        self._told: dict[str, str] = {}  # uri -> digest of its content last told (or first seen)
        self._watcher: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def handlers(self, resources: bool) -> dict[str, Any]:
        """The SDK's ``on_...`` handlers: the listen stream, and the 2025 subscriptions where
        resources are served."""
        handlers: dict[str, Any] = {"on_subscriptions_listen": self._listen_stream}
        if resources:
            handlers.update(on_subscribe_resource=self._subscribe, on_unsubscribe_resource=self._unsubscribe)
        return handlers

    def watched(self) -> set[str]:
        """The URIs someone listens to or subscribed to (and that are watched)."""
        return {uri for uri, count in self._listened.items() if count} | set(self._subscribers)

    @property
    def watching(self) -> bool:
        """Whether the watch is running."""
        return self._watcher is not None and not self._watcher.done()

    def subscribed(self, uri: str) -> int:
        """How many 2025 sessions subscribed to ``uri``."""
        return len(self._subscribers.get(uri, {}))

    # --- the 2026 listen stream -----------------------------------------------------------------

    async def _listen_stream(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp import MCPError

        self._loop = asyncio.get_running_loop()
        asked = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        if len(asked) > MAX_LISTENED:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=(
                    f"subscriptions/listen: {len(asked)} resources asked for, at most {MAX_LISTENED} are"
                    " watched on one stream; listen on several streams, or to fewer resources"
                ),
            )
        watched = [uri for uri in asked if self._publishes(uri)]  # another URI never changes here
        await asyncio.gather(*(self._first_look(uri) for uri in watched))  # each within the time limit
        self._listened.update(watched)
        self._start_watch()
        try:
            # The SDK's stream: it subscribes to the bus before its first await (no event is lost
            # after the look above), acknowledges, then forwards what the filter asked for.
            return await self._listen(ctx, params)
        finally:
            self._listened.subtract(watched)
            for uri in watched:
                self._forget(uri)

    # --- 2025 subscriptions ---------------------------------------------------------------------

    async def _subscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        await self._read(uri)  # a URI nothing publishes is refused as a read of it would be
        self._loop = asyncio.get_running_loop()
        await self._first_look(uri)
        self._subscribers.setdefault(uri, {})[_session_key(ctx)] = ctx.session
        self._start_watch()
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        sessions = self._subscribers.get(uri, {})
        sessions.pop(_session_key(ctx), None)
        if not sessions:
            self._subscribers.pop(uri, None)
            self._forget(uri)
        return types.EmptyResult()

    # --- telling --------------------------------------------------------------------------------

    def changed(self, uri: str) -> None:
        """Tell who listens to ``uri`` that it changed, if its content differs (from any thread)."""
        loop = self._loop  # who watches what is read on that loop only, where it changes
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the server stopped
                asyncio.run_coroutine_threadsafe(self._look(uri, outright=True), loop)

    def heard(self, ctx: Any) -> None:
        """Take note of a request's session: one on a 2025 protocol is told of list changes."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
            self._sessions.pop(_session_key(ctx), None)  # the latest last: the oldest goes first
            self._sessions[_session_key(ctx)] = ctx.session
            while len(self._sessions) > _MAX_SESSIONS:  # clients that left without a word
                del self._sessions[next(iter(self._sessions))]

    async def publish(self, event: Any) -> None:
        """Tell ``event`` (a list change) to every listen stream that asked for it, and to the 2025
        sessions (on the server's loop)."""
        await self._bus.publish(event)
        method = {
            "ToolsListChanged": "send_tool_list_changed",
            "PromptsListChanged": "send_prompt_list_changed",
            "ResourcesListChanged": "send_resource_list_changed",
        }[type(event).__name__]
        for key, session in list(self._sessions.items()):
            try:
                await getattr(session, method)()
            except Exception:  # noqa: BLE001 - a client that went away is told nothing more
                self._sessions.pop(key, None)

    async def _first_look(self, uri: str) -> None:
        if uri not in self._told:
            self._told[uri] = await self._digest(uri)

    async def _look(self, uri: str, outright: bool = False) -> None:
        """Read ``uri`` and tell its listeners if its content differs from what was last told; a
        first look only takes note unless ``outright``."""
        if uri not in self.watched():  # no one to tell: the resource is not even read
            return
        digest = await self._digest(uri)
        if uri not in self.watched():
            return
        if digest == _UNREAD:  # a failed read tells nothing new; its listeners were told outright
            if outright:
                await self._tell(uri)
            return
        before, self._told[uri] = self._told.get(uri), digest  # before telling: a look meanwhile sees it told
        if before != digest and (before is not None or outright):
            await self._tell(uri)

    async def _tell(self, uri: str) -> None:
        from mcp.server.subscriptions import ResourceUpdated

        for key, session in list(self._subscribers.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # noqa: BLE001 - a client that went away is no longer subscribed
                self._subscribers.get(uri, {}).pop(key, None)
        await self._bus.publish(ResourceUpdated(uri=uri))

    async def _digest(self, uri: str) -> str:
        try:
            content, _ = await self._read(uri)
        except Exception:  # noqa: BLE001 - a read that fails tells nothing new
            return _UNREAD
        return hashlib.sha256(content if isinstance(content, bytes) else content.encode()).hexdigest()

    def _forget(self, uri: str) -> None:
        if uri not in self.watched():
            self._told.pop(uri, None)

    def _start_watch(self) -> None:
        if self.watch is not None and not self.watching and self.watched():
            self._watcher = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        while self.watched():
            for uri in sorted(self.watched()):
                await self._look(uri)
            await asyncio.sleep(self.watch or 1.0)

    async def stop(self) -> None:
        """End every listen stream and stop watching (on the server's loop)."""
        self._listen.close()
        self._subscribers.clear()
        self._sessions.clear()
        if self._watcher is not None:
            self._watcher.cancel()


def _session_key(ctx: Any) -> Any:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else id(ctx.session)
