"""The JSON inside a tool call -> `ToolCall`s, or `MalformedCall`s that say what was wrong.

Strict JSON first; then the shapes models write (double-encoded arguments, ``parameters`` for
``arguments``, fences, several objects in one tag). Broken JSON is mended by `json_repair` only
where the mending changes punctuation: the mended JSON must hold exactly the keys, strings,
numbers and literals of the text, in order, or the call is a `MalformedCall`. `_call_bare` and
`_call_prose` read each object they find with these rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import json_repair

from ..tools.core import ToolCall
from ._call_scan import match_end

__all__ = ["MalformedCall", "cut_off", "read_calls"]

_SHAPE = '{"name": "TOOL", "arguments": {...}}'
_FENCE = "```"
_INFO = re.compile(r"[ \t]*[\w+.-]*")  # a fence's language tag: ```json, ```py3, ```c++
_GAP = re.compile(r"(?:\s|```[ \t]*[\w+.-]*)*")  # what may stand between call objects


class _DuplicateKey(ValueError):
    """An object names a key twice: clients would keep either value, so neither is trusted."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_BARE_KEYS = frozenset({"name", "arguments", "parameters"})
_CALL_START = re.compile(r'\s*(?:```[\w+.-]*[ \t\r]*\n\s*)?\{\s*"name"\s*:')


@dataclass(frozen=True)
class MalformedCall:
    """A tool call the model wrote that could not be read."""

    raw: str
    """The text that could not be read as a call: what was inside the tags."""
    reason: str
    """What was wrong, in one sentence the model can act on."""


def cut_off(raw: str, *, token_limit: bool) -> MalformedCall:
    """The call the answer ended in the middle of: it never runs, and the model is told why.

    Args:
        raw: What the model had written of the call.
        token_limit: The backend said the answer hit its token limit.
    """
    why = "the answer hit the token limit" if token_limit else "the answer ended"
    advice = (
        "write the call again, with shorter arguments" if token_limit else f"write the whole call as {_SHAPE}"
    )
    return MalformedCall(raw, f"{why} before this call was complete, so it was not run; {advice}")


def _decode_values(text: str) -> list[Any]:
    """Strict JSON values one after another, with whitespace and fence marks between them.

    Raises:
        json.JSONDecodeError: The text is not such values.
    """
    values, i = [], 0
    while True:
        i = match_end(_GAP, text, i)
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
        if isinstance(error, _DuplicateKey):
            reason = f'the JSON gives the key "{error}" twice in one object; give each key once'
            return [MalformedCall(raw, f"{reason}, as {_SHAPE}")]
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
    """`text` as JSON, mended where only its punctuation is broken; None when it cannot be.

    See the module's docstring for what may be mended.
    """
    try:
        return _DECODER.decode(text)
    except _DuplicateKey:
        return None
    except (ValueError, RecursionError):
        pass
    written = _atoms_written(text)
    if written is None:
        return None
    try:
        value = json_repair.loads(text)
    except Exception:  # a third-party heuristic: any failure in it only means "not repairable"
        return None
    try:
        mended = list(_atoms_of(value))
    except RecursionError:
        return None
    return value if mended == written else None


# The pieces of JSON-like text: whitespace and punctuation (skipped), strings in either quote,
# numbers, and bare words (true/false/null, Python's literals, unquoted keys).
_PIECE = re.compile(
    r"""(?P<skip>[\s{}\[\],:]+)|(?P<dq>"(?:[^"\\]|\\.)*")|(?P<sq>'(?:[^'\\]|\\.)*')"""
    r"|(?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<word>[A-Za-z_$][\w$]*)",
    re.S,
)
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}


def _atoms_written(text: str) -> list[tuple[str, Any]] | None:
    """The keys and values ``text`` spells out, in order; None if it holds anything else."""
    atoms, at = [], 0
    while at < len(text):
        piece = _PIECE.match(text, at)
        if piece is None:
            return None  # a character no repair may touch, or a string that never ends
        at, kind, token = piece.end(), piece.lastgroup, piece.group()
        if kind == "dq":
            atoms.append(_atom(_unquote(token)))
        elif kind == "sq":
            inner = token[1:-1].replace("\\'", "'").replace('"', '\\"')
            atoms.append(_atom(_unquote(f'"{inner}"')))
        elif kind == "num":
            atoms.append(_atom(float(token) if any(c in token for c in ".eE") else int(token)))
        elif kind == "word":
            atoms.append(_atom(_LITERALS.get(token, token)))
    return atoms


def _unquote(token: str) -> str:
    try:
        return json.loads(token)
    except ValueError:  # an escape JSON does not know (\d): json-repair keeps it as written
        return token[1:-1]


def _atoms_of(value: Any) -> Any:
    """The keys and values of a JSON value in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield _atom(key)
            yield from _atoms_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from _atoms_of(item)
    else:
        yield _atom(value)


def _atom(value: Any) -> tuple[str, Any]:
    # Typed, so that 1 and true and "1" differ; 1 and 1.0 are the same JSON number.
    if value is None or isinstance(value, bool):
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return ("string", value)


def _unfence(text: str) -> str:
    text = text.strip()
    if text.startswith(_FENCE):
        text = text[match_end(_INFO, text, 3) :]
    if text.endswith(_FENCE):
        text = text[:-3]
    return text.strip()


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    names = {type(None): "null", int: "a number", float: "a number", str: "a string", list: "an array"}
    return names.get(type(value), "an object")
