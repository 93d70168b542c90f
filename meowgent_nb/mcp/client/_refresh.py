"""`ToolRefresh`: an `McpToolbox`'s tools listed again, by hand or after the server says so.

A change notification arrives on the background loop, maybe mid-call, so it only marks the
connection `stale`; the box lists again the next time its tools are looked at, on the caller's
thread (`refresh_if_stale`). Unchanged tools stay the same objects (`listing_key`); calls of a
tool the server dropped are refused here (`gone`). `ToolChanges` is what a refresh reports.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._visible import visible
from ...tools.core import Tool
from ..config import redact
from ._session import McpServerError, McpToolError, _field
from .tool import McpTool

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["Listing", "ToolChanges", "ToolRefresh", "listing_key"]

_SHOWN_NAMES = 10  # names of each kind in the one-line summary; the rest are counted
_CHECK_LIMIT = 10.0  # seconds for the listing that checks whether a failed call's tool is gone
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


Listing = tuple[dict[str, Tool], dict[str, str], list[str], dict[str, dict[str, str]]]
"""A box's tools as built from a server's listing: tools, skipped, left out, and listing keys."""


class ToolRefresh:
    """The part of an `McpToolbox` that lists its server's tools again.

    Args:
        connection: The box's connection (its ``stale`` says whether the server announced a change).
    """

    def __init__(self, connection: Connection):
        self.connection = connection
        self.withdrawn: dict[str, str] = {}
        """Server tools (by the server's name) that calls are refused for, and why ("" for dropped)."""

    def relist(
        self,
        before: dict[str, Tool],
        skipped_before: dict[str, str],
        keys_before: dict[str, dict[str, str]],
        build: Callable[..., Listing],
    ) -> tuple[Listing, ToolChanges]:
        """The box's tools listed again, and what changed (see `McpToolbox.refresh`).

        Args:
            before: The box's tools now.
            skipped_before: The server tools it does not offer now, and why.
            keys_before: The listing keys of its tools now (see `listing_key`).
            build: The box's ``_built``: its tools from a listing, keeping unchanged ones.

        Raises:
            McpServerError: The box is closed, the server went away, or it did not list its tools in time.
        """
        connection = self.connection
        if not connection.alive:
            raise McpServerError(connection.redact(str(connection.session.not_connected())))
        was, connection.stale = (
            connection.stale,
            False,
        )  # a change announced while listing marks it stale again
        try:
            listed = self._list_tools()
        except BaseException:
            connection.stale = connection.stale or was
            raise
        kept = {local: (keys_before.get(local), tool) for local, tool in before.items()}
        tools, skipped, left_out, keys = build(listed, strict=False, kept=kept)
        offered = {t.remote_name for t in tools.values() if isinstance(t, McpTool)}
        withdrawn = {remote: why for remote, why in self.withdrawn.items() if remote not in offered}
        for tool in before.values():
            remote = tool.remote_name if isinstance(tool, McpTool) else None
            if remote is not None and remote not in offered:
                withdrawn[remote] = (
                    f"it lists it now with a problem: {skipped[remote]}" if remote in skipped else ""
                )
        changes = ToolChanges(
            connection.name,
            added=tuple(n for n in tools if n not in before),
            removed=tuple(n for n in before if n not in tools),
            changed=tuple(
                (n, ", ".join(a for a in keys[n] if keys[n][a] != keys_before[n][a]))
                for n in tools
                if n in before and n in keys and n in keys_before and keys[n] != keys_before[n]
            ),
            not_offered=tuple((r, why) for r, why in skipped.items() if skipped_before.get(r) != why),
            count=len(tools),
            secrets=frozenset(connection.secrets.all),
        )
        self.withdrawn = withdrawn
        return (tools, skipped, left_out, keys), changes

    def _list_tools(self) -> list[Any]:
        connection, limit = self.connection, self.connection.call_timeout

        async def every_page() -> list[Any]:
            try:
                return await asyncio.wait_for(connection.session.listing("list_tools", "tools", limit), limit)
            except asyncio.TimeoutError:
                raise McpServerError(
                    f"the MCP server {connection.name!r} did not list its tools within {limit:g} s"
                ) from None

        return connection.run(every_page(), timeout=limit + 5.0)

    def refresh_if_stale(self, refresh: Callable[[], ToolChanges]) -> None:
        """Call the box's ``refresh`` if the server announced a change, and print what changed."""
        connection = self.connection
        if (
            not connection.stale
            or not connection.alive
            or threading.current_thread() is connection.loop.thread
        ):
            return
        try:
            changes = refresh()
        except McpServerError as error:
            connection.stale = False  # said once; %tools mcp refresh tries again
            first = str(error).splitlines()[0]
            print(
                f"The MCP server {connection.name!r} changed its tools, but listing them again failed ({first});"
                f" its earlier tools are offered. Try %tools mcp refresh {connection.name}."
            )
            return
        if changes:
            print(changes)

    def gone(self, remote: str) -> str | None:
        """Why calls of the server tool ``remote`` are refused here, or None when they are not."""
        if remote not in self.withdrawn:
            return None
        why, name = self.withdrawn[remote], self.connection.name
        what = f"the tool {remote!r} in a usable form ({why})" if why else f"the tool {remote!r}"
        return self.connection.redact(
            f"the MCP server {name!r} no longer offers {what}; its tools changed after this call was"
            f" offered. Refresh them with %tools mcp refresh {name} (or box.refresh()); the next"
            " %%agent cell offers the current ones."
        )

    def vanished(self, remote: str, error: Exception) -> bool:
        """After a failed call: whether the server no longer lists ``remote`` (one listing, asked
        only when the failure may mean that)."""
        connection = self.connection
        refused = isinstance(error, McpToolError) or " refused the call " in str(error)
        announces = connection.session.announces_tool_changes
        if not refused or not connection.alive or (announces and not connection.stale):
            return False
        limit = min(connection.call_timeout, _CHECK_LIMIT)
        try:
            listed = connection.loop.run(
                connection.session.listing("list_tools", "tools", limit), timeout=limit + 5.0
            )
        except Exception:  # the check is a courtesy: the call's own error stands
            return False
        if any(_field(spec, "name", "name") == remote for spec in listed):
            return False
        self.withdrawn = {**self.withdrawn, remote: ""}
        connection.stale = True  # the next look at the box lists its tools again
        return True
