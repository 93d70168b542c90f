"""What each request put in the model's context window, and how full the window was.

`ContextRecord` keeps one request as sent (messages, native tools, answer, the backend's usage);
`ContextRecord.measure` counts it, on demand, into `PARTS` (tool rules, tool descriptions, your
instructions, earlier turns, tool results, the new prompt, the answer, message format) as a
`ContextUse`, with the model's tokenizer where it has one, else estimated. `context_window` and
`answer_tokens` read a model's window and answer budget. `compaction` keeps a conversation
inside the window; `_summary` writes the ``"summarize"`` policy's summary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ...models.base import ModelRequest, Usage
from ...tools.calls import is_tool_result

__all__ = [
    "CHARACTERS_PER_TOKEN",
    "PARTS",
    "ContextRecord",
    "ContextUse",
    "ToolsBlock",
    "context_window",
    "message_text",
]

CHARACTERS_PER_TOKEN = 4
"""The estimate for a model without a tokenizer here (`benchmarks/tool_tokens.py` prints the real ratio)."""


PARTS = (
    "tool rules",
    "tool descriptions",
    "your instructions",
    "earlier turns",
    "tool results",
    "the new prompt",
    "the answer",
    "message format",
)
"""The parts of a request, in the order they are shown."""


def answer_tokens(model: Any) -> int | None:
    """The longest answer the model gives, where it says (``max_tokens``, or Ollama's ``num_predict``)."""
    for value in (
        getattr(model, "max_tokens", None),
        (getattr(model, "options", None) or {}).get("num_predict"),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def context_window(model: Any, options: Mapping[str, Any] | None = None) -> int | None:
    """The model's context window in tokens, where it is known here: the request's or the model's
    ``num_ctx`` option, else the model's ``n_ctx`` (the embedded model's, an Ollama model's
    default, an `OpenAIModel` told its server's)."""
    for source in (options or {}, getattr(model, "options", None) or {}):  # a cassette's first: the
        size = source.get("num_ctx") if isinstance(source, Mapping) else None  # same recording or not
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            return size
    inner = getattr(model, "__dict__", {}).get("_inner")  # a cassette: its recording model, if made
    if inner is not None and hasattr(inner, "stream"):
        return context_window(inner)
    size = getattr(model, "n_ctx", None)  # the embedded model's, an Ollama model's default, a server's
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


@dataclass(frozen=True)
class ContextUse:
    """One request's tokens per part (`PARTS`) and the window they went into."""

    turn: int
    """The request's number in the conversation (1 for the first)."""
    tokens: Mapping[str, int]
    """Tokens per part, in `PARTS` order (``message format`` only where the backend reported a total)."""
    estimated: bool
    """True when the parts were estimated from their characters (no tokenizer for this model)."""
    window: int | None
    """The context window in tokens, or None where it is not known here."""
    reported: int | None
    """The prompt's tokens as the backend reported them, or None."""

    @property
    def prompt(self) -> int:
        """The prompt's tokens: the backend's figure where it gave one, else the parts' sum."""
        if self.reported is not None:
            return self.reported
        return sum(n for part, n in self.tokens.items() if part != "the answer")

    @property
    def used(self) -> int:
        """Tokens of the window this request took: its prompt and its answer."""
        return self.prompt + self.tokens.get("the answer", 0)

    @property
    def fraction(self) -> float | None:
        """How full the window was after the answer (0 to 1, or more when it overflowed); None without a window."""
        return None if not self.window else self.used / self.window

    def footer(self) -> str:
        """``context 61 % of 16,384`` (``~`` marks an estimate), or ``context 1,234 tokens`` without a window."""
        mark = "~" if self.estimated and self.reported is None else ""
        if self.fraction is None:
            return f"context {mark}{self.used:,} tokens"
        return f"context {mark}{math.floor(self.fraction * 100)} % of {self.window:,}"


@dataclass(frozen=True)
class ContextRecord:
    """What one request sent and got back, to be measured when someone looks (`measure`)."""

    turn: int
    request: ModelRequest
    instructions: str
    """The system prompt's own text: the person's instructions, or the default."""
    tools_block: str | Callable[[], str]
    """The tools block in the system prompt ("" for native tools, or none), or what renders it."""
    prompt_at: int
    """Where this run's prompt is in ``request.messages``: later messages are this run's."""
    answer: str = ""
    usage: Usage | None = None
    _cache: dict[int, ContextUse] = field(default_factory=dict, compare=False, repr=False)

    def measure(self, model: Any) -> ContextUse:
        """The request's tokens per part, counted with ``model``'s tokenizer where it has one."""
        key = id(model)
        if key not in self._cache:
            self._cache[key] = self._measure(model)
        return self._cache[key]

    def _measure(self, model: Any) -> ContextUse:
        count = getattr(model, "count_tokens", None)
        estimated = not callable(count)

        def tokens(text: str) -> int:
            if not text:
                return 0
            if not estimated:
                try:
                    return int(count(text))  # type: ignore[misc]
                except Exception:  # noqa: BLE001 - a tokenizer that fails is no reason to show nothing
                    pass
            return math.ceil(len(text) / CHARACTERS_PER_TOKEN)

        messages = list(self.request.messages)
        system = (
            str(messages[0].get("content", "")) if messages and messages[0].get("role") == "system" else ""
        )
        texts: dict[str, str] = dict.fromkeys(PARTS, "")
        block = self.tools_block() if callable(self.tools_block) else self.tools_block
        block = block if block and block in system else ""
        instructions = self.instructions if system.startswith(self.instructions) else ""
        texts["your instructions"] = instructions
        texts["tool descriptions"] = block or "\n".join(
            json.dumps(t.to_json_schema()) for t in self.request.tools
        )
        rest = system[len(instructions) :]
        texts["tool rules"] = rest.replace(block, "", 1) if block else rest
        for index, message in enumerate(messages[1:] if system else messages, start=1 if system else 0):
            part = _part(message, index, self.prompt_at)
            texts[part] += message_text(message) + "\n"
        counted = {part: tokens(text) for part, text in texts.items() if part != "message format"}
        counted["the answer"] = tokens(self.answer)
        usage = self.usage
        if usage is not None and usage.prompt_tokens is not None and usage.completion_tokens is not None:
            counted["the answer"] = (
                usage.completion_tokens
            )  # a backend that counts both (not a scripted model's chunks)
        reported = self.usage.prompt_tokens if self.usage is not None else None
        if reported is not None:
            counted["message format"] = max(
                reported - sum(n for p, n in counted.items() if p != "the answer"), 0
            )
        window = context_window(model, self.request.options)
        return ContextUse(self.turn, counted, estimated, window, reported)


class ToolsBlock:
    """The tools block of a run's system prompt, rendered only when a request is measured."""

    def __init__(self, protocol: Any, tools: Sequence[Any]):
        self._protocol, self._tools = protocol, tools
        self._text: str | None = None

    def __call__(self) -> str:
        if self._text is None:
            render = getattr(self._protocol, "tools_block", None)
            # A protocol's tools_block renders the tools as text (see `protocols.base`).
            self._text = cast(str, render(self._tools)) if callable(render) and self._tools else ""
        return self._text


def _part(message: Mapping[str, Any], index: int, prompt_at: int) -> str:
    if is_tool_result(message):  # by how it was made: a prompt beginning "<tool_response" is the person's
        return "tool results"
    if index == prompt_at:
        return "the new prompt"
    return "earlier turns"


def message_text(message: Mapping[str, Any]) -> str:
    text = str(message.get("content", ""))
    calls: Sequence[Any] = message.get("tool_calls") or ()
    if calls:
        text += "\n" + json.dumps(list(calls), default=repr)
    thinking = message.get("thinking")
    return f"{thinking}\n{text}" if thinking else text
