"""What one model turn produced so far: its text, thinking and calls, kept also when it is cut off."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models.base import Usage
from ..protocols.base import ToolProtocol
from ..protocols.parsing import MalformedCall
from ..tools.core import ToolCall

__all__ = ["TurnAnswer"]


@dataclass
class TurnAnswer:
    """What one model turn produced so far (kept also when the turn is interrupted)."""

    raw: list[str] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[tuple[ToolCall, MalformedCall | None]] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    """Why the model stopped, as the backend said on the last chunk ("length": the token limit)."""
    cut_off_by: str | None = None
    """Why the turn ended early: "interrupted", or the name of the exception."""
    names: dict[str, str | None] = field(default_factory=dict)
    """The offered tools' names by folded form (`offered_name` maps a written name onto them)."""

    @property
    def text(self) -> str:
        return "".join(self.text_parts).strip()

    def message(self, protocol: ToolProtocol) -> dict[str, Any]:
        """The assistant message ``protocol`` records for this turn."""
        calls = [call for call, malformed in self.calls if malformed is None]
        return protocol.assistant_message(
            "".join(self.raw), "".join(self.text_parts), "".join(self.thinking), calls, self.cut_off_by
        )
