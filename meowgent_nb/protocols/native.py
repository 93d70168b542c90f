"""The ``native`` protocol: tools passed to the backend (``tools=``), calls in ``tool_calls``.

The backend renders the tools in the model's own chat template and parses the calls itself; the
answer's text is shown as it is. Results go back as ``tool`` messages, one per call. A backend
whose model writes its calls as text (`LlamaCppModel`) gets `NativeCallParser` in the request to
read them, so no backend imports a protocol.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import partial
from typing import Any, cast

from .._deltas import TextDelta, ThinkingDelta
from ..tools.core import Tool, ToolCall, ToolResult
from .base import RequestParts, assistant_message
from .parsing import CALL_CLOSE, CALL_OPEN, MalformedCall, ParsedEvent, ToolCallParser
from .prompt import inert, system_prompt
from .xml import call_request

__all__ = ["NativeCallParser", "NativeProtocol"]


class NativeProtocol:
    """Tools passed to the backend; the backend returns the calls it read."""

    name = "native"

    def system_prompt(self, tools: Sequence[Tool], system: str | None) -> str:
        return system_prompt((), system)  # the backend's template describes the tools

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        # The offered names let the parser read a call to one of them inside prose.
        names = tuple(tool.name for tool in offered)
        return call_request(offered, last, tools=offered, call_parser=partial(NativeCallParser, names))

    def parser(self, offered: Sequence[Tool]) -> None:
        return None  # the backend parsed the calls: the text is the answer

    def result_messages(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        # The backend's template wraps each in its own tags: the same care as tool_responses.
        return [
            {"role": "tool", "content": inert(r.output), "tool_name": inert(r.call.name)} for r in results
        ]

    def assistant_message(
        self, raw: str, text: str, thinking: str, calls: Sequence[ToolCall], cut_off_by: str | None
    ) -> dict[str, Any]:
        tool_calls = [{"function": {"name": c.name, "arguments": c.arguments}} for c in calls]
        return assistant_message(text, thinking, cut_off_by, tool_calls or None)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NativeCallParser:
    """Reads the calls a model wrote as text, for a backend that returns them as ``tool_calls``.

    The Hermes / Qwen ``<tool_call>`` blocks of the model's chat template become `ToolCall`s; a
    block that cannot be read stays text, as Ollama shows it: the person sees what the model
    wrote. Events are `TextDelta`, `ThinkingDelta` and `ToolCall` only.

    Args:
        offered: The offered tools' names: a call to one of them inside prose is a call (see
            `ToolCallParser`); without them, only calls at the answer's start or in tags are.
    """

    def __init__(self, offered: Collection[str] = ()) -> None:
        self._parser = ToolCallParser(offered=offered)

    def feed(self, chunk: str) -> list[TextDelta | ThinkingDelta | ToolCall]:
        """The events ``chunk`` completes."""
        return [_shown(event) for event in self._parser.feed(chunk)]

    def close(self, finish_reason: str | None = None) -> list[TextDelta | ThinkingDelta | ToolCall]:
        """The events left at the end of the answer."""
        return [_shown(event) for event in self._parser.close(finish_reason)]


def _shown(event: ParsedEvent) -> TextDelta | ThinkingDelta | ToolCall:
    if isinstance(event, MalformedCall):
        return TextDelta(f"{CALL_OPEN}{event.raw}{CALL_CLOSE}")
    return cast("TextDelta | ThinkingDelta | ToolCall", event)  # no PartialCall: none was asked for
