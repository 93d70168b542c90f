"""What a run passes around: a model's `ToolCall` and the `ToolResult` that answers it.

Small frozen values with no behaviour of their own: the protocols parse calls, the agent makes
results, the display and the MCP server read them. And `ToolResultsMessage`, how a conversation
knows the messages that carry results back to the model as the person's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ResultKind", "ToolCall", "ToolResult", "ToolResultsMessage", "is_tool_result"]

ResultKind = Literal["ok", "unknown_tool", "invalid_arguments", "denied", "timeout", "error", "parse_error"]


@dataclass(frozen=True)
class ToolCall:
    """A model's request to run one tool."""

    name: str
    """The tool the model asked for."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The arguments as the model sent them (before validation)."""
    id: str = ""
    """The call's id, where the protocol gives one; used to pair the result with the call."""


@dataclass(frozen=True)
class ToolResult:
    """What came of a `ToolCall`: the text the model reads, and what happened."""

    call: ToolCall
    """The call this answers."""
    output: str
    """The text the model receives."""
    kind: ResultKind = "ok"
    """``ok``, or what went wrong: ``unknown_tool``, ``invalid_arguments``, ``denied``,
    ``timeout``, ``error`` or ``parse_error``."""
    value: Any = None
    """The tool's return value, when it ran."""
    exception: BaseException | None = None
    """The exception a failing tool raised, kept for display."""
    duration: float | None = None
    """Seconds the tool ran, when it ran."""
    arguments: dict[str, Any] | None = None
    """The validated arguments (defaults filled in; a person's, where they changed them at
    approval); None for a call that never passed validation (unreadable, unknown, invalid)."""

    @property
    def ok(self) -> bool:
        """Whether the tool ran and returned."""
        return self.kind == "ok"


class ToolResultsMessage(dict):  # type: ignore[type-arg]
    """A ``user`` message that carries tool results (``xml``, ``json``: ``<tool_response>`` blocks).

    A plain dict to everything that sends, records or compares it (the same JSON, equal to the
    same dict); its type says where it came from. So what the person typed is never taken for a
    tool result because of how it begins (``<tool_response>...``): compaction shortens only
    messages made as results.
    """


def is_tool_result(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` carries tool results: a ``tool`` message, or a `ToolResultsMessage`."""
    return message.get("role") == "tool" or isinstance(message, ToolResultsMessage)
