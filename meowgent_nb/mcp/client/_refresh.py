"""Listing an MCP server's tools again: `McpToolbox.refresh`, by hand or after the server says so.

A server that changes its tools sends ``notifications/tools/list_changed`` (one that declared
``tools.listChanged``; over the 2026-07-28 protocol only on a ``subscriptions/listen`` stream,
which the box keeps open while its session lives: `listen_for_tool_changes`). The notification
arrives on the background loop, maybe in the middle of a call,
so it only marks the box `stale`; the box lists the tools again the next time someone looks at
its tools (iterating it, as a ``%%agent`` cell does when it gathers its tools, ``len``,
``names``, ``in``, ``box[name]``), on the caller's thread, and prints one line saying what
changed. A server that does not announce changes is refreshed by hand (`refresh`,
``%tools mcp refresh NAME``).

A refresh keeps the box's options (prefix, include / exclude, approval overrides, timeouts,
secrets); a tool whose listing did not change stays the same `Tool` object (with any setting made
on it); a changed one is made anew. An agent already running keeps the tools it was given: a
changed tool still validates against its old schema until the next cell (the server checks its
own), and a call to a tool the server no longer offers is refused here with an error saying so
and how to refresh, without reaching the server. A call that fails because the server dropped
the tool without saying so gives the same error.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._visible import visible
from ...tools.core import Tool
from .._thread import BackgroundLoop
from ..config import redact
from ._session import McpServerError, McpToolError, _Connection, _field
from .tool import McpTool

__all__ = ["ToolChanges", "ToolRefresh", "listing_key"]

_SHOWN_NAMES = 10  # names of each kind in the one-line summary; the rest are counted
_CHECK_LIMIT = 10.0  # seconds for the listing that checks whether a failed call's tool is gone
_RELISTEN = 1.0  # seconds at least between two listen streams a server ended (one that ends each at once)
_SHORT_STREAMS = 5  # streams in a row that each lasted under _RELISTEN: the server will not keep one open
_ASPECTS = {  # what of a listed tool changes the Tool made from it, by its name in the summary
    "name": ("name", "name"),  # a server name that becomes the same local name ("a/b", "a_b")
    "description": ("description", "description"),
    "schema": ("input_schema", "inputSchema"),
    "title": ("title", "title"),
    "annotations": ("annotations", "annotations"),
    "execution": ("execution", "execution"),
}


@dataclass(frozen=True)
class ToolChanges:
    """What a refresh changed in an `McpToolbox`'s tools (local names, in the server's order)."""

    server: str
    """The box's name."""
    added: tuple[str, ...] = ()
    """Tools offered now that were not before."""
    removed: tuple[str, ...] = ()
    """Tools no longer offered (the server dropped them, or lists them now in a way that cannot be used)."""
    changed: tuple[tuple[str, str], ...] = ()
    """Tools whose listing changed, each with what changed (``"schema"``, ``"description, title"``)."""
    not_offered: tuple[tuple[str, str], ...] = ()
    """Server tools newly not offered, and why (a bad schema or name, a clash)."""
    count: int = 0
    """How many tools the box offers now."""
    secrets: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    """The box's secrets, shown as ``***`` in the summary (a server may put one in a tool's name)."""

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.not_offered)

    def __str__(self) -> str:
        if not self:
            return f"The MCP server {self.server!r} has the same {_tools(self.count)}."
        parts = _shown("+", self.added) + _shown("-", self.removed)
        parts += _shown("~", [f"{name} ({what})" for name, what in self.changed])
        text = f"The MCP server {self.server!r} changed its tools" + (
            f": {', '.join(parts)}" if parts else ""
        )
        if self.not_offered:  # the server's own names and reasons: on one line, bounded
            reasons = [f"{_line(name, 64)} ({_line(why, 200)})" for name, why in self.not_offered]
            text += f"; not offered: {', '.join(_shown('', reasons))}"
        return redact(f"{text}; it offers {_tools(self.count)}.", self.secrets)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython shows the summary line
        printer.text(str(self))


def listing_key(spec: Any) -> dict[str, str]:
    """What of a listed tool its `Tool` is made from, aspect by aspect, as comparable text."""
    key = {}
    for aspect, (name, wire_name) in _ASPECTS.items():
        value = _field(spec, name, wire_name)
        if hasattr(value, "model_dump"):
            value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        key[aspect] = json.dumps(value, sort_keys=True, default=str)
    return key


def _shown(sign: str, names: Any) -> list[str]:
    names = list(names)
    shown = [f"{sign}{name}" for name in names[:_SHOWN_NAMES]]
    if len(names) > _SHOWN_NAMES:
        shown.append(f"and {len(names) - _SHOWN_NAMES} more")
    return shown


def _line(text: str, limit: int) -> str:
    text = visible(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tools(count: int) -> str:
    return f"{count} tool" + ("" if count == 1 else "s")


class ToolRefresh:
    """The part of `McpToolbox` that lists the server's tools again (see the module's docstring)."""

    name: str
    call_timeout: float
    skipped: dict[str, str]
    left_out: list[str]
    _keys: dict[str, dict[str, str]]
    _connection: _Connection
    _loop: BackgroundLoop
    _redact: Callable[[str], str]
    _secrets: set[str]
    _built: Callable[..., Any]
    _stale = False
    _withdrawn: dict[str, str] = {}  # noqa: RUF012  (replaced, never changed in place)

    if TYPE_CHECKING:  # McpToolbox's tools: a property of `Taped`, which starts a waiting server

        @property
        def _tools(self) -> dict[str, Tool]: ...
        @_tools.setter
        def _tools(self, tools: dict[str, Tool]) -> None: ...

    @property
    def stale(self) -> bool:
        """Whether the server said its tools changed since they were last listed."""
        return self._stale

    @property
    def announces_changes(self) -> bool:
        """Whether the server said it tells when its tools change (``tools.listChanged``); if not,
        refresh by hand."""
        return self._connection.announces_tool_changes

    def tools_changed(self) -> None:
        """Take note that the server's tools changed (the session calls it, on the background loop)."""
        self._stale = True

    async def listen_for_tool_changes(self, connection: _Connection) -> None:
        """Keep a 2026-07-28 server's ``subscriptions/listen`` stream of tool changes open while
        ``connection`` lives (its task, on the background loop; the session ends it when it stops).

        Each change the stream brings also reaches the session's message handler, which calls
        `tools_changed`, as an older protocol's unasked notification does. A stream the server
        ends, gracefully or not, is opened again (at most once a second), and the box is marked
        stale: the protocol replays nothing, so a change may have come while none was open. A
        server that refuses the stream (or an older protocol), or ends five in a row within a
        second each, leaves refreshing by hand.
        """
        from mcp import MCPError
        from mcp.client.subscriptions import ListenNotSupportedError

        if not connection.announces_tool_changes:
            return
        again, short = False, 0
        while connection.alive and not connection.stopped and short < _SHORT_STREAMS:
            opened = time.monotonic()
            try:
                async with connection.client.listen(tools_list_changed=True) as events:
                    if again:
                        self.tools_changed()
                    async for _ in events:  # the change itself comes through the message handler
                        pass
            except (ListenNotSupportedError, MCPError):  # an older protocol, or refused: by hand
                return
            except Exception:  # noqa: BLE001 - the stream dropped: listen again while the session lives
                pass
            again, lasted = True, time.monotonic() - opened
            short = short + 1 if lasted < _RELISTEN else 0
            await asyncio.sleep(max(0.0, _RELISTEN - lasted))

    def refresh(self) -> ToolChanges:
        """List the server's tools again (every page) and offer what it has now.

        The box's options stay as they were given; names that include / exclude / approval give
        and the server no longer has are kept for when it has them again. Names that clash follow
        the rules of a new box: the first keeps the name, the next is not offered (see `skipped`).

        Returns:
            What changed (printed, it is one line; empty when nothing did).

        Raises:
            McpServerError: The box is closed, the server went away, or it did not list its tools
                within the box's call timeout.
        """
        if not self._connection.alive:
            raise McpServerError(self._redact(str(self._connection.not_connected())))
        was, self._stale = self._stale, False  # a change announced while listing marks it stale again
        try:
            listed = self._list_tools()
        except BaseException:
            self._stale = self._stale or was
            raise
        before, keys_before, skipped_before = dict(self._tools), self._keys, dict(self.skipped)
        kept = {local: (keys_before.get(local), tool) for local, tool in before.items()}
        tools, skipped, left_out, keys = self._built(listed, strict=False, kept=kept)
        offered = {t.remote_name for t in tools.values() if isinstance(t, McpTool)}
        withdrawn = {remote: why for remote, why in self._withdrawn.items() if remote not in offered}
        for tool in before.values():
            remote = tool.remote_name if isinstance(tool, McpTool) else None
            if remote is not None and remote not in offered:
                withdrawn[remote] = (
                    f"it lists it now with a problem: {skipped[remote]}" if remote in skipped else ""
                )
        changes = ToolChanges(
            self.name,
            added=tuple(n for n in tools if n not in before),
            removed=tuple(n for n in before if n not in tools),
            changed=tuple(
                (n, ", ".join(a for a in keys[n] if keys[n][a] != keys_before[n][a]))
                for n in tools
                if n in before and n in keys and n in keys_before and keys[n] != keys_before[n]
            ),
            not_offered=tuple((r, why) for r, why in skipped.items() if skipped_before.get(r) != why),
            count=len(tools),
            secrets=frozenset(self._secrets),
        )
        self._tools, self.skipped, self.left_out, self._keys, self._withdrawn = (
            tools,
            skipped,
            left_out,
            keys,
            withdrawn,
        )
        return changes

    def _list_tools(self) -> list[Any]:
        limit = self.call_timeout

        async def every_page() -> list[Any]:
            try:
                return await asyncio.wait_for(self._connection.listing("list_tools", "tools", limit), limit)
            except asyncio.TimeoutError:
                raise McpServerError(
                    f"the MCP server {self.name!r} did not list its tools within {limit:g} s"
                ) from None

        try:
            return self._loop.run(every_page(), timeout=limit + 5.0)
        except McpServerError as error:  # a server may quote its token back
            raise McpServerError(self._redact(str(error))) from None

    def _fresh(self) -> None:
        """Refresh a stale box, on the caller's thread; one printed line says what changed."""
        if not self._stale or not self._connection.alive or threading.current_thread() is self._loop.thread:
            return
        try:
            changes = self.refresh()
        except McpServerError as error:
            self._stale = False  # said once; %tools mcp refresh tries again
            first = str(error).splitlines()[0]
            print(
                f"The MCP server {self.name!r} changed its tools, but listing them again failed ({first});"
                f" its earlier tools are offered. Try %tools mcp refresh {self.name}."
            )
            return
        if changes:
            print(changes)

    def _gone(self, remote: str) -> str | None:
        """Why calls of the server tool ``remote`` are refused here, or None when they are not."""
        if remote not in self._withdrawn:
            return None
        why = self._withdrawn[remote]
        what = f"the tool {remote!r} in a usable form ({why})" if why else f"the tool {remote!r}"
        return self._redact(
            f"the MCP server {self.name!r} no longer offers {what}; its tools changed after this call was"
            f" offered. Refresh them with %tools mcp refresh {self.name} (or box.refresh()); the next"
            " %%agent cell offers the current ones."
        )

    def _vanished(self, remote: str, error: Exception) -> bool:
        """After a failed call: whether the server no longer lists ``remote``.

        Asked only when the failure may be that (the tool's own error, or a refused call) and the
        server either said its tools changed or never says so; it costs one listing.
        """
        refused = isinstance(error, McpToolError) or " refused the call " in str(error)
        if not refused or not self._connection.alive or (self.announces_changes and not self._stale):
            return False
        limit = min(self.call_timeout, _CHECK_LIMIT)
        try:
            listed = self._loop.run(
                self._connection.listing("list_tools", "tools", limit), timeout=limit + 5.0
            )
        except Exception:  # the check is a courtesy: the call's own error stands
            return False
        if any(_field(spec, "name", "name") == remote for spec in listed):
            return False
        self._withdrawn = {**self._withdrawn, remote: ""}
        self._stale = True  # the next look at the box lists its tools again
        return True

    # --- where the box's tools are looked at: a stale box is refreshed first ---------------------

    def __iter__(self) -> Iterator[Tool]:
        self._fresh()
        return super().__iter__()  # type: ignore[misc]

    def __len__(self) -> int:
        self._fresh()
        return super().__len__()  # type: ignore[misc]

    def __contains__(self, name: object) -> bool:
        self._fresh()
        return super().__contains__(name)  # type: ignore[misc]

    def __getitem__(self, name: str) -> Tool:
        self._fresh()
        return super().__getitem__(name)  # type: ignore[misc]

    def get(self, name: str, default: Tool | None = None) -> Tool | None:
        self._fresh()
        return super().get(name, default)  # type: ignore[misc]

    @property
    def names(self) -> list[str]:
        """The tool names, in order (a stale box is refreshed first)."""
        self._fresh()
        return list(self._tools)
