"""`ToolsView`: the tools as the model sees them, for ``%tools`` and a `Tool` shown as a result.

``text/plain`` is stable (nbval compares it): an aligned table, then the exact XML block. Nothing
here needs IPython, so a `Tool` shows its rich form wherever ``_repr_mimebundle_`` is asked for,
with or without ``%load_ext``. It reads tools by their attributes only (`core` imports this
module, not the other way round).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from .._html import highlight, note_html, pre_html, table_html
from .._visible import visible
from ..errors import SettingsError
from .render import (
    ToolSpec,
    render_tools_text,
    render_tools_xml,
    tool_json_schema,
    tool_string,
    tool_xml,
    tools_json_schema,
)

__all__ = ["ToolsView", "tool_mimebundle"]

ToolsMode = Literal["all", "xml", "json", "text"]
_COLUMNS = ("name", "description", "approval", "timeout")


class ToolsView:
    """The tools as the model sees them, for ``%tools`` and for a `Tool` shown as a cell result.

    Args:
        tools: Tools (a list, a `Toolbox`), or one `Tool` (shown as its own ``<tool>`` element).
        mode: ``"all"``: a table (name, description, approval, timeout; and title, for people,
            when a tool has one, as MCP servers' tools may), then the exact XML (and, for one
            tool with an ``output_schema``, as an MCP server's may have, that schema; and, with
            ``shape``, how its results are shaped for the model);
            ``"xml"``: only the XML, exactly as the system prompt has it; ``"json"``: the JSON
            Schema form the ``native`` protocol sends; ``"text"``: the one-line forms.

    Raises:
        SettingsError: ``mode`` is not one of those.
    """

    def __init__(self, tools: ToolSpec | Iterable[ToolSpec], mode: ToolsMode = "all", shape: Any = None):
        if mode not in ("all", "xml", "json", "text"):
            raise SettingsError(f"mode must be 'all', 'xml', 'json' or 'text', got {mode!r}")
        self.single = not isinstance(tools, Iterable)  # a Tool is not iterable; a Toolbox and a list are
        self.tools: list[ToolSpec] = list(tools) if isinstance(tools, Iterable) else [tools]
        self.mode = mode
        self.shape = shape
        """The limits results are shaped to (a `tools.output.Shape`), said for one tool; or None."""

    def _exact(self, mode: str) -> str:
        """The exact form the model is given in ``mode`` (``xml``, ``json`` or ``text``)."""
        if mode == "xml":
            return tool_xml(self.tools[0]) if self.single else render_tools_xml(self.tools)
        if mode == "json":
            schema = tool_json_schema(self.tools[0]) if self.single else tools_json_schema(self.tools)
            return json.dumps(schema, indent=2, ensure_ascii=False)
        return tool_string(self.tools[0]) if self.single else render_tools_text(self.tools)

    def _titled(self) -> bool:
        return any(getattr(item, "title", None) for item in self.tools)

    def _columns(self) -> tuple[str, ...]:
        return (_COLUMNS[0], "title", *_COLUMNS[1:]) if self._titled() else _COLUMNS

    def _rows(self) -> list[tuple[str, ...]]:
        titled = self._titled()
        return [
            (
                item.name,
                *([visible(_first_line(getattr(item, "title", None) or ""))] if titled else []),
                _first_line(item.description),
                _approval_word(item.approval),
                "default" if item.timeout is None else f"{item.timeout:g} s",
            )
            for item in self.tools
        ]

    def to_text(self) -> str:
        """The ``text/plain`` form: the aligned table, then the XML; or the exact form of ``mode``."""
        if self.mode != "all":
            return self._exact(self.mode)
        if not self.tools:
            return "(no tools)\n\n" + self._exact("xml")
        rows = [self._columns(), *self._rows()]
        widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
        lines = [
            "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]).rstrip() for row in rows
        ]
        returns = self._returns()
        shown = "" if returns is None else f"\n\n{returns[0]}\n{returns[1]}"
        shaped = f"\n\n{self._shaped()}" if self._shaped() else ""
        return "\n".join(lines) + "\n\n" + self._exact("xml") + shown + shaped

    def _shaped(self) -> str:
        """For one tool with a ``shape``: how its results reach the model."""
        if self.shape is None or len(self.tools) != 1:
            return ""
        from .output import shape_note

        return shape_note(self.shape)

    def _returns(self) -> tuple[str, str] | None:
        """For one tool with an output schema (an MCP server's): a heading and the schema's JSON."""
        schema = getattr(self.tools[0], "output_schema", None) if len(self.tools) == 1 else None
        if not isinstance(schema, dict):
            return None
        heading = f"{self.tools[0].name} returns (its output schema; the model reads the server's text):"
        return visible(heading), visible(json.dumps(schema, indent=2, ensure_ascii=False))

    def to_html(self) -> str:
        """The ``text/html`` form, with the XML or JSON syntax-highlighted."""
        if self.mode in ("xml", "json"):
            return highlight(self._exact(self.mode), self.mode)
        if self.mode == "text":
            return pre_html("meowgent-tools-text", self._exact("text"))
        table = table_html("meowgent-tools", self._columns(), self._rows())
        if not self.tools:
            table = note_html("meowgent-tools-empty", "(no tools)")
        returns = self._returns()
        shown = (
            ""
            if returns is None
            else note_html("meowgent-tools-returns", returns[0]) + highlight(returns[1], "json")
        )
        if self._shaped():
            shown += note_html("meowgent-tools-shape", self._shaped())
        return f'<div class="meowgent-tools-view">{table}{highlight(self._exact("xml"), "xml")}{shown}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


def _first_line(text: str, limit: int = 60) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."


def tool_mimebundle(tool: ToolSpec) -> dict[str, str]:
    """What a `Tool` shows as a cell result: `ToolsView` of the one tool."""
    return ToolsView(tool)._repr_mimebundle_()


def _approval_word(approval: object) -> str:
    """The approval column: ``always`` (only a person or a rule), ``by function``, ``yes`` or ``no``."""
    if callable(approval):
        return "by function"
    if approval == "always":
        return "always"
    return "yes" if approval else "no"
