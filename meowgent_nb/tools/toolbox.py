"""`Toolbox`: a named, ordered set of tools with unique names."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import ToolDefinitionError
from .core import Tool
from .render import render_tools_xml

__all__ = ["Toolbox"]


class Toolbox:
    """A named, ordered set of tools; two tools may not share a name.

    Example::

        weather = Toolbox("weather", [get_weather, get_forecast])

        @weather.tool(approval=True)
        def set_alert(city: str) -> str: ...

    Args:
        name: What the toolbox is called (shown in listings and errors).
        tools: Tools, or plain functions (made tools with `@tool` defaults), in order.
    """

    def __init__(self, name: str, tools: Iterable[Tool | Callable[..., Any]] = ()):
        self.name = name
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Add a tool (or a plain function, made a tool); returns the tool.

        Raises:
            ToolDefinitionError: A tool of the same name is already in the toolbox.
        """
        new = item if isinstance(item, Tool) else Tool(item)
        if new.name in self._tools:
            raise ToolDefinitionError(
                f"toolbox {self.name!r}",
                [
                    f"it already has a tool named {new.name!r}; rename one with"
                    f" @tool(name=...) or first remove the old one with .remove({new.name!r})"
                ],
                action=f"add tool {new.name!r} to",
            )
        self._tools[new.name] = new
        return new

    def tool(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Decorator: make ``function`` a tool (as `meowgent_nb.tool` does) and add it here."""
        if function is None:
            return lambda function: self.add(Tool(function, **options))
        return self.add(Tool(function, **options))

    def remove(self, name: str) -> Tool:
        """Remove the tool called ``name`` and return it.

        Raises:
            KeyError: No tool has that name; the message lists the names there are.
        """
        self._check(name)
        return self._tools.pop(name)

    def get(self, name: str, default: Tool | None = None) -> Tool | None:
        """The tool called ``name``, or ``default``."""
        return self._tools.get(name, default)

    def __getitem__(self, name: str) -> Tool:
        self._check(name)
        return self._tools[name]

    def _check(self, name: str) -> None:
        if name not in self._tools:
            known = ", ".join(self._tools) or "none"
            raise KeyError(f"toolbox {self.name!r} has no tool named {name!r}; it has: {known}")

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """The tool names, in order."""
        return list(self._tools)

    def to_xml(self) -> str:
        """The ``<tools>`` block of these tools (see `render_tools_xml`)."""
        return render_tools_xml(self)

    def __repr__(self) -> str:
        return f"Toolbox({self.name!r}, tools={self.names!r})"
