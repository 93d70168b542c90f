"""The JSON inside a tool call -> `ToolCall`s, or `MalformedCall`s that say what was wrong.

Strict JSON is tried first, then `json_repair`; double-encoded arguments, ``parameters`` for
``arguments``, fences, and several objects in one tag are accepted (see `meowgent_nb.parsing`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import json_repair

from .tools import ToolCall

__all__ = ["MalformedCall", "bare_calls", "read_calls"]

_SHAPE = '{"name": "TOOL", "arguments": {...}}'
_FENCE = "```"
_INFO = re.compile(r"[\w+.-]*")  # a fence's language tag: ```json, ```py3, ```c++
_GAP = re.compile(r"(?:\s|```[\w+.-]*)*")  # what may stand between call objects
_DECODER = json.JSONDecoder()
_BARE_KEYS = frozenset({"name", "arguments", "parameters"})


@dataclass(frozen=True)
class MalformedCall:
    """A tool call the model wrote that could not be read."""

    raw: str
    """The text that could not be read as a call: what was inside the tags."""
    reason: str
    """What was wrong, in one sentence the model can act on."""


def bare_calls(text: str) -> list[ToolCall | MalformedCall] | None:
    """The calls a held bare answer holds, or None when it is ordinary text."""
    try:
        values = _decode_values(text)
    except (ValueError, RecursionError):
        return None
    # Only call-shaped objects: a JSON document that happens to have a "name" is an answer.
    if not values or not all(isinstance(value, dict) and value.keys() <= _BARE_KEYS for value in values):
        return None
    calls = [_to_call(value, text) for value in values]
    return None if any(isinstance(call, MalformedCall) for call in calls) else calls


def _decode_values(text: str) -> list[Any]:
    """Strict JSON values one after another, with whitespace and fence marks between them.

    Raises:
        json.JSONDecodeError: The text is not such values.
    """
    values, i = [], 0
    while True:
        i = _GAP.match(text, i).end()
        if i == len(text):
            return values
        value, i = _DECODER.raw_decode(text, i)
        values.append(value)


def read_calls(raw: str) -> list[ToolCall | MalformedCall]:
    """Reads what stood inside one <tool_call> tag: usually one call, never an exception."""
    body = _unfence(raw)
    if not body:
        return [MalformedCall(raw, f"the <tool_call> tag is empty; put the call inside it as {_SHAPE}")]
    try:
        values = _decode_values(raw)
    except (ValueError, RecursionError) as error:
        value = _repair(body)
        if not isinstance(value, (dict, list)) or value == []:
            where = "(nested too deeply)"
            if isinstance(error, json.JSONDecodeError):
                where = f"at line {error.lineno} column {error.colno} ({error.msg})"
            if body[0] in "{[":
                reason = f"the JSON is broken {where} and could not be repaired"
            else:
                reason = f"the text inside <tool_call> is not JSON {where}"
            return [MalformedCall(raw, f"{reason}; write the call as {_SHAPE}")]
        values = [value]
    calls: list[Any] = []
    for value in values:
        # An array of call objects is several calls; any other array is one bad call.
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            calls.extend(value)
        else:
            calls.append(value)
    if not calls:
        return [MalformedCall(raw, f"the <tool_call> tag holds no call; put one inside it as {_SHAPE}")]
    return [_to_call(value, raw) for value in calls]


def _to_call(value: Any, raw: str) -> ToolCall | MalformedCall:
    if not isinstance(value, dict):
        return MalformedCall(raw, f"the call must be a JSON object {_SHAPE}, not {_kind(value)}")
    if "name" not in value:
        return MalformedCall(raw, f'the call has no "name"; write it as {_SHAPE}')
    name = value["name"]
    if not isinstance(name, str):
        return MalformedCall(raw, f'the "name" must be a string naming the tool, not {_kind(name)}')
    if not name.strip():
        return MalformedCall(raw, 'the "name" is empty; give the name of the tool to call')
    key = "arguments" if "arguments" in value else "parameters"
    arguments = value.get(key)
    if isinstance(arguments, str):
        # Double-encoded: the arguments object was sent as a JSON string.
        decoded = _repair(arguments) if arguments.strip() else {}
        if not isinstance(decoded, dict):
            reason = f'the "{key}" string does not hold a JSON object; give them as an object'
            reason += ' {"arg": value}'
            return MalformedCall(raw, reason)
        arguments = decoded
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return MalformedCall(
            raw, f'the "{key}" must be a JSON object of argument names to values, not {_kind(arguments)}'
        )
    return ToolCall(name=name, arguments=arguments)


def _repair(text: str) -> Any:
    """`text` as JSON, mended by `json_repair` where it is broken; None when nothing came of it."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return json_repair.loads(text)
    except Exception:  # a third-party heuristic: any failure in it only means "not repairable"
        return None


def _unfence(text: str) -> str:
    text = text.strip()
    if text.startswith(_FENCE):
        text = text[_INFO.match(text, 3).end() :]
    if text.endswith(_FENCE):
        text = text[:-3]
    return text.strip()


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    names = {type(None): "null", int: "a number", float: "a number", str: "a string", list: "an array"}
    return names.get(type(value), "an object")
