"""What `OpenAIModel` sends and reads, as pure functions: no client, no network.

`openai_messages` writes the conversation in the Chat Completions form; `read_event` checks one
streamed chunk field by field (anything the API does not allow is a `WireError`: a server is
outside input); `CallDeltas` puts an answer's streamed ``tool_calls`` back together and `read_call`
reads one as a `ToolCall`; `server_events` decodes the stream and `error_words` an error response.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._deltas import TextDelta
from ..tools.core import ToolCall
from ..tools.media import IMAGE_TYPES, MAX_IMAGES, media_type
from .base import Usage
from .wire_values import MAX_DEPTH, WireError, count, finish_reason, name, nests_deeper, shown, text, unicode

__all__ = [
    "AssembledCall",
    "CallDelta",
    "CallDeltas",
    "StreamEvent",
    "error_words",
    "image_parts",
    "openai_messages",
    "read_call",
    "read_event",
    "read_models",
    "server_events",
]

TOOL_IMAGES_NOTE = "The images in the tool results above, in order:"
"""The text of the ``user`` message that carries the images of tool results (see `openai_messages`)."""
MAX_CALLS = 256
"""Calls one answer may make (each distinct ``index``, or id where servers leave the index out)."""


def openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as Chat Completions messages.

    Assistant calls get ids ``call_1``, ``call_2``... in conversation order (an existing id is kept),
    so the same history always gives the same request and servers' prompt caches stay valid; each
    ``tool`` message carries the id of the call it answers, in order. Fields the API has no place for
    (``thinking``, ``tool_name``) are left out. Images become ``image_url`` parts (at most
    `MAX_IMAGES` a message); a ``tool`` message may hold text only, so the images of a run of tool
    messages follow them in one ``user`` message (`TOOL_IMAGES_NOTE`, then the images in call order).

    Args:
        messages: Ollama-style messages: ``role`` and ``content``; ``tool_calls`` of
            ``{"function": {"name", "arguments": dict}}`` on assistant messages.

    Returns:
        New dicts; ``messages`` is not changed.
    """
    out: list[dict[str, Any]] = []
    unanswered: deque[str] = deque()
    count = 0
    seen: list[dict[str, Any]] = []  # the image parts of the tool messages since the last other one
    for message in messages:
        role = message.get("role")
        content = message.get("content") or ""
        if role != "tool":
            _images_after_tools(out, seen)
            seen = []
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
            seen += image_parts(message.get("images"))  # they follow the last of this run of tool messages
        else:
            parts = image_parts(message.get("images"))[:MAX_IMAGES]
            with_parts = [{"type": "text", "text": content}, *parts]
            out.append({"role": role, "content": with_parts if parts else content})
            unanswered = deque()
    _images_after_tools(out, seen)
    return out


def image_parts(images: Any) -> list[dict[str, Any]]:
    """A message's ``images`` (Ollama's form: base64 text) as Chat Completions ``image_url`` parts.

    Each is sent as a ``data:`` URL of the type its first bytes say (PNG, JPEG, GIF, WebP); one
    of another type, or not base64 text, is left out (its placeholder is in the text).
    """
    parts = []
    for image in images if isinstance(images, (list, tuple)) else ():
        try:
            kind = media_type(base64.b64decode(image[:24], validate=True)) if isinstance(image, str) else None
        except (binascii.Error, ValueError):
            kind = None
        if kind in IMAGE_TYPES:
            parts.append({"type": "image_url", "image_url": {"url": f"data:{kind};base64,{image}"}})
    return parts


def _images_after_tools(out: list[dict[str, Any]], parts: list[dict[str, Any]]) -> None:
    """The images of a run of ``tool`` messages, as the ``user`` message after them (the API's tool
    messages hold text only); at most `MAX_IMAGES`."""
    if parts:
        note = {"type": "text", "text": TOOL_IMAGES_NOTE}
        out.append({"role": "user", "content": [note, *parts[:MAX_IMAGES]]})


@dataclass(frozen=True)
class CallDelta:
    """One entry of a streamed ``tool_calls`` list, checked."""

    index: int | None
    """Which call it belongs to; None where the server left the index out."""
    id: str = ""
    name: str = ""
    arguments: str = ""
    """A piece of the arguments' JSON text (an object sent whole is written back as its JSON)."""


@dataclass(frozen=True)
class StreamEvent:
    """What one streamed ``chat.completion.chunk`` says, checked (its first choice only: n=1)."""

    content: str = ""
    thinking: str = ""
    """vLLM's ``reasoning_content``, or ``reasoning``."""
    calls: tuple[CallDelta, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None


def read_event(data: Any) -> StreamEvent:
    """One streamed event's JSON, as the values the API allows there.

    Null and absent are the same (``"content": null``, no ``usage``). Tool-call ``arguments``
    sent as a JSON object instead of its text (some servers do) are read as that object: it can
    only mean one thing. Everything else of the wrong type or out of range is refused.

    Raises:
        WireError: A field is not what Chat Completions allows; the message names the field
            (``choices[0].delta.tool_calls[0].function.name``) and shows what came, cut short.
    """
    if not isinstance(data, dict):
        raise WireError(f"an event that is {shown(data)}, not a JSON object")
    usage = _usage(data.get("usage"))
    choices = data.get("choices", [])
    if not isinstance(choices, list):
        raise WireError(f"choices is {shown(choices)}, not a list")
    if not choices:
        return StreamEvent(usage=usage)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise WireError(f"choices[0] is {shown(choice)}, not an object")
    delta = choice.get("delta", {})
    if not isinstance(delta, dict):
        raise WireError(f"choices[0].delta is {shown(delta)}, not an object")
    reason = finish_reason(choice.get("finish_reason"), "choices[0].finish_reason")
    where = "choices[0].delta."
    thinking = text(delta.get("reasoning_content"), where + "reasoning_content") or text(
        delta.get("reasoning"), where + "reasoning"
    )
    return StreamEvent(
        content=text(delta.get("content"), where + "content"),
        thinking=thinking,
        calls=_call_deltas(delta.get("tool_calls")),
        finish_reason=reason,
        usage=usage,
    )


def read_models(data: Any) -> list[str]:
    """The model names in a ``GET /models`` answer (``{"data": [{"id": name}, ...]}``).

    Raises:
        WireError: It is not that shape.
    """
    listed = data.get("data") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        raise WireError(f"a list of models that is {shown(data)}, not an object with a data list")
    names = []
    for position, model in enumerate(listed):
        model_id = model.get("id") if isinstance(model, dict) else None
        if not isinstance(model_id, str):
            raise WireError(f"data[{position}] is {shown(model)}, not a model with an id")
        names.append(model_id)
    return names


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise WireError(f"usage is {shown(usage)}, not an object")
    return Usage(
        count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
        count(usage.get("completion_tokens"), "usage.completion_tokens"),
    )


def _call_deltas(deltas: Any) -> tuple[CallDelta, ...]:
    if deltas is None:
        return ()
    where = "choices[0].delta.tool_calls"
    if not isinstance(deltas, list):
        raise WireError(f"{where} is {shown(deltas)}, not a list")
    out = []
    for position, delta in enumerate(deltas):
        here = f"{where}[{position}]"
        if not isinstance(delta, dict):
            raise WireError(f"{here} is {shown(delta)}, not an object")
        index = delta.get("index")
        if index is not None and (
            isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < MAX_CALLS
        ):
            raise WireError(
                f"{here}.index is {shown(index)}, not a call's position (a whole number from 0 to {MAX_CALLS - 1})"
            )
        function = delta.get("function", {})
        if function is None:
            function = {}
        if not isinstance(function, dict):
            raise WireError(f"{here}.function is {shown(function)}, not an object")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False)
        out.append(
            CallDelta(
                index,
                name(delta.get("id"), f"{here}.id"),
                name(function.get("name"), f"{here}.function.name"),
                text(arguments, f"{here}.function.arguments"),
            )
        )
    return tuple(out)


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

    def add(self, deltas: Iterable[CallDelta]) -> None:
        """Add one event's deltas.

        Raises:
            WireError: They would make more than `MAX_CALLS` calls in one answer.
        """
        for delta in deltas:
            index = delta.index
            if index is None:
                last = max(self._calls, default=-1)
                new = last < 0 or (delta.id and delta.id != self._calls[last].id)
                index = last + 1 if new else last
            if index not in self._calls and len(self._calls) >= MAX_CALLS:
                raise WireError(f"more than {MAX_CALLS} tool calls in one answer")
            call = self._calls.setdefault(index, AssembledCall(index))
            if delta.id and not call.id:
                call.id = delta.id
            if delta.name and delta.name != call.name:  # some servers repeat the whole name in every delta
                call.name = name(call.name + delta.name, f"the name of tool call {index}")
            if delta.arguments:
                call.arguments.append(delta.arguments)

    def calls(self) -> list[AssembledCall]:
        """The calls, by index."""
        return [self._calls[index] for index in sorted(self._calls)]


class _Repeated(ValueError):
    """A key given twice in one object: which value was meant cannot be known."""


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) != len(pairs):
        raise _Repeated
    return made


def read_call(call: AssembledCall) -> ToolCall | TextDelta:
    """``call`` as a `ToolCall`, or as the text the model wrote when it cannot be read.

    Arguments that are empty mean none (``{}``), as Chat Completions servers send for tools
    without parameters. Arguments that are not a JSON object (cut off by the token limit, or
    malformed, or giving a key twice) are never replaced by ``{}``: the call is shown as the
    text it was, in the ``<tool_call>`` form `protocols.native.NativeCallParser` shows an
    unreadable call in.

    Raises:
        WireError: The arguments nest deeper than `MAX_DEPTH` levels, or hold half of a UTF-16
            surrogate pair.
    """
    written = "".join(call.arguments)
    if not written.strip():
        return ToolCall(call.name, {}, id=call.id)
    deep = False
    try:
        arguments = json.loads(written, object_pairs_hook=_one_value_per_key)
        deep = nests_deeper(arguments)
    except RecursionError:  # deeper than Python's parser goes
        arguments, deep = None, True
    except ValueError:
        arguments = None
    if deep:
        raise WireError(
            f"the arguments of the tool call {shown(call.name)} nest deeper than {MAX_DEPTH} levels"
            f" ({len(written):,} characters: {shown(written)})"
        )
    if isinstance(arguments, dict) and call.name:
        unicode(arguments, f"the arguments of the tool call {shown(call.name)}")
        return ToolCall(call.name, arguments, id=call.id)
    return TextDelta(
        f'<tool_call>{{"name": {json.dumps(call.name, ensure_ascii=False)}, "arguments": {written}}}</tool_call>'
    )


async def server_events(stream: Any) -> AsyncIterator[Any]:
    """The JSON of each event the client decodes, with what it cannot decode as a `WireError`."""
    events = stream.__aiter__()
    while True:
        try:
            data = await events.__anext__()
        except StopAsyncIteration:
            return
        except UnicodeDecodeError as exc:
            around = exc.object[max(exc.start - 20, 0) : exc.end + 20]
            raise WireError(f"bytes that are not UTF-8 text ({shown(around)})") from None
        except json.JSONDecodeError as exc:
            where = f"{exc.msg} at character {exc.pos:,}"
            raise WireError(f"an event whose data is not JSON ({where}): {shown(exc.doc)}") from None
        except RecursionError:
            raise WireError("an event whose JSON nests deeper than it can be read") from None
        except ValueError as exc:  # a number of over 4,300 digits
            raise WireError(f"an event whose JSON cannot be read: {shown(str(exc))}") from None
        yield data


def error_words(exc: Any) -> str:
    """The server's own words in an error response: ``{"error": {"message": ...}}`` or its body."""
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return error["message"].strip()
        if isinstance(error, str):
            return error.strip()
        if isinstance(body.get("detail"), str):
            return body["detail"].strip()
    text = exc.response.text if exc.response is not None else str(exc)
    return text.strip()[:200]
