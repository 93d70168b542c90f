"""What `OpenAIModel` sends and reads, as pure functions: no client, no network.

- `openai_messages`: the conversation (Ollama-style, as every `ModelRequest` carries it) in the
  Chat Completions form: a call's arguments as a JSON string, each call with an id, and each
  ``tool`` message carrying the id of the call it answers.
- `CallDeltas`: the streamed ``tool_calls`` deltas of one answer put back together by index (a
  call's name comes in its first delta, its arguments in pieces across many).
- `read_call`: one assembled call as a `ToolCall`, or, when its arguments are not a JSON object,
  the text the model wrote, so nothing unreadable runs with arguments it never sent.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._deltas import TextDelta
from ..tools.core import ToolCall

__all__ = ["AssembledCall", "CallDeltas", "openai_messages", "read_call"]


def openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as Chat Completions messages.

    Assistant calls get ids ``call_1``, ``call_2``... in conversation order (a call that has an id
    keeps it), so the same history always gives the same request (servers' prompt caches stay
    valid). The ``tool`` messages after an assistant message answer its calls in order, as the
    agent sends them; one with no call left to answer gets a fresh id. Fields Chat Completions has
    no place for (``thinking``, ``tool_name``) are left out.

    Args:
        messages: Ollama-style messages: ``role`` and ``content``; ``tool_calls`` of
            ``{"function": {"name", "arguments": dict}}`` on assistant messages.

    Returns:
        New dicts; ``messages`` is not changed.
    """
    out: list[dict[str, Any]] = []
    unanswered: deque[str] = deque()
    count = 0
    for message in messages:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                count += 1
                function = call.get("function") or {}
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
                call_id = call.get("id") or f"call_{count}"
                function = {"name": function.get("name", ""), "arguments": arguments}
                calls.append({"id": call_id, "type": "function", "function": function})
            unanswered = deque(call["id"] for call in calls)
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif role == "tool":
            if unanswered:
                call_id = unanswered.popleft()
            else:
                count += 1
                call_id = f"call_{count}"
            out.append({"role": "tool", "content": content, "tool_call_id": call_id})
        else:
            out.append({"role": role, "content": content})
            unanswered = deque()
    return out


@dataclass
class AssembledCall:
    """One call as its deltas built it."""

    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    """The pieces of the arguments' JSON text, in arrival order."""


class CallDeltas:
    """The ``tool_calls`` deltas of one streamed answer, joined per call by their ``index``.

    A delta without an index (some servers leave it out) continues the last call, unless it
    brings an id of its own, which starts a new one.
    """

    def __init__(self) -> None:
        self._calls: dict[int, AssembledCall] = {}

    def add(self, deltas: Iterable[Any]) -> None:
        """Add one chunk's deltas (objects with ``index``, ``id``, ``function.name``, ``function.arguments``)."""
        for delta in deltas:
            index = getattr(delta, "index", None)
            delta_id = getattr(delta, "id", None) or ""
            if index is None:
                last = max(self._calls, default=-1)
                new = last < 0 or (delta_id and delta_id != self._calls[last].id)
                index = last + 1 if new else last
            call = self._calls.setdefault(index, AssembledCall(index))
            function = getattr(delta, "function", None)
            if delta_id and not call.id:
                call.id = delta_id
            name = getattr(function, "name", None)
            if name and name != call.name:  # some servers repeat the whole name in every delta
                call.name += name
            piece = getattr(function, "arguments", None)
            if piece:
                call.arguments.append(piece)

    def calls(self) -> list[AssembledCall]:
        """The calls, by index."""
        return [self._calls[index] for index in sorted(self._calls)]


def read_call(call: AssembledCall) -> ToolCall | TextDelta:
    """``call`` as a `ToolCall`, or as the text the model wrote when it cannot be read.

    Arguments that are empty mean none (``{}``), as Chat Completions servers send for tools
    without parameters. Arguments that are not a JSON object (cut off by the token limit, or
    malformed) are never replaced by ``{}``: the call is shown as the text it was, in the
    ``<tool_call>`` form `protocols.native.NativeCallParser` shows an unreadable call in.
    """
    text = "".join(call.arguments)
    if not text.strip():
        return ToolCall(call.name, {}, id=call.id)
    try:
        arguments = json.loads(text)
    except ValueError:
        arguments = None
    if isinstance(arguments, dict) and call.name:
        return ToolCall(call.name, arguments, id=call.id)
    return TextDelta(
        f'<tool_call>{{"name": {json.dumps(call.name, ensure_ascii=False)}, "arguments": {text}}}</tool_call>'
    )
