"""The JSON inside a tool call -> `ToolCall`s, or `MalformedCall`s that say what was wrong.

Strict JSON is tried first; double-encoded arguments, ``parameters`` for ``arguments``, fences,
and several objects in one tag are accepted (see `meowgent_nb.protocols.parsing`).

Broken JSON is mended by `json_repair` only where the mending changes punctuation, never a value
the model wrote. Allowed: single quotes for double ones, unquoted keys, Python's
``True``/``False``/``None``, missing or trailing commas, and missing closing ``}`` / ``]`` after
complete values. The mended JSON must hold exactly the keys, strings, numbers and literals of the
text, in the same order: a value cut short (an unterminated string), a value json-repair would
invent (``"b": }`` -> ``""``), a comment it would drop, a duplicate key it would collapse, or any
character that is not JSON punctuation makes the call a `MalformedCall`. (A call whose JSON was
still open when the answer ended never reaches this module as a call: the parser reports it as
cut off.)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from collections.abc import Collection
from typing import Any

import json_repair

from ._call_scan import object_end
from ..tools.core import ToolCall

__all__ = ["MalformedCall", "bare_calls", "cut_off", "prose_calls", "read_calls"]

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
_STRAY = re.compile(r"(?:\s*[}\]])*")  # closers a model adds after a complete call: no value in them
_CLOSING_FENCE = re.compile(r"\s*```(?![`\w])")


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
    advice = "write the call again, with shorter arguments" if token_limit else f"write the whole call as {_SHAPE}"
    return MalformedCall(raw, f"{why} before this call was complete, so it was not run; {advice}")


def bare_calls(
    text: str, *, token_limit: bool = False
) -> tuple[list[ToolCall | MalformedCall], str] | str | None:
    """The calls a held bare answer starts with and the text after them; else the answer as
    text, or None to read it for tags.

    The answer is read object by object from its start, each object found by its brackets
    (strings respected). A strict JSON object whose keys are only ``name``, ``arguments`` and
    ``parameters`` is a call; so is one whose JSON `_repair` mends by punctuation alone. Closing
    brackets the model added after a complete call (``{...}}``, ``{...}\n}``) and the fence
    closing a fenced call belong to the call. After the first call, an object that starts like
    one (``{"name":``) but cannot be read is a `MalformedCall`, one the answer ended inside is cut
    off, and anything else ends the calls: it is returned as text, read for tags as any text.

    If the answer does not start with a call: a JSON document is text as it is (nothing inside
    its strings is read as a tag), a call object the answer ended inside is a cut-off call, and
    anything else is None.

    Returns:
        ``(calls, rest)``: the calls in order and the text after the last one (maybe "");
        or the whole answer as text; or None.
    """
    calls: list[ToolCall | MalformedCall] = []
    at, fence_open = 0, False
    while True:
        start = _GAP.match(text, at).end()
        if start == len(text):
            return calls, ""
        fence_open ^= text.count(_FENCE, at, start) % 2 == 1
        end = object_end(text, start) if text[start] == "{" else None
        if end is None:
            if text[start] == "{" and _CALL_START.match(text, start) and _call_shaped_so_far(text[start:]):
                return calls + [cut_off(text[at:].strip(), token_limit=token_limit)], ""
            return (calls, text[at:]) if calls else _not_calls(text)
        read = _bare_object(text[start:end], first=not calls)
        if read is None:
            return (calls, text[at:]) if calls else _not_calls(text)
        calls.append(read)
        at = _STRAY.match(text, end).end()
        if fence_open:
            closing = _CLOSING_FENCE.match(text, at)
            if closing is not None:
                at, fence_open = closing.end(), False


def _bare_object(segment: str, *, first: bool) -> ToolCall | MalformedCall | None:
    """One bracketed object of a bare answer as a call, or None if it is not one."""
    try:
        value = _DECODER.decode(segment)
    except _DuplicateKey as error:
        if not _CALL_START.match(segment):
            return None
        reason = f'the JSON gives the key "{error}" twice in one object; give each key once'
        return MalformedCall(segment, f"{reason}, as {_SHAPE}")
    except (ValueError, RecursionError) as error:
        if not _CALL_START.match(segment):
            return None
        value = _repair(segment)
        if value is None:
            if not _call_shaped_so_far(segment):
                return None
            where = "(nested too deeply)"
            if isinstance(error, json.JSONDecodeError):
                where = f"at line {error.lineno} column {error.colno} ({error.msg})"
            return MalformedCall(segment, f"the JSON is broken {where} and could not be repaired; write the call as {_SHAPE}")
    if not isinstance(value, dict) or not value.keys() <= _BARE_KEYS:
        return None  # a JSON document that happens to have a "name" is an answer
    call = _to_call(value, segment)
    # The answer's first object must be a call as written: {"name": 3} is an answer, not a call.
    return None if first and isinstance(call, MalformedCall) else call


_WHITESPACE = re.compile(r"\s*")
_PROSE_FENCE = re.compile(r"\s*```(?i:json)?[ \t]*")
_PROSE_CLOSE = re.compile(r"\s*```(?![`\w])")


def prose_calls(text: str, offered: Collection[str], *, token_limit: bool = False) -> list[ToolCall] | None:
    """The calls of an answer's end that is fenced call objects only; None if it is anything else.

    `text` starts at a ```` ``` ```` fence later in an answer (see
    `meowgent_nb.protocols.parsing` for why only there). It is calls only if it is one or more
    fences, with nothing but whitespace between and after them (the last fence may be left
    open), each holding strict JSON objects with exactly the keys ``name`` (an offered tool's
    name) and ``arguments`` (an object). Nothing is repaired, and an answer cut off by the
    token limit is never calls: the model may have gone on to say "do not run this".
    """
    if token_limit:
        return None
    calls, at = [], 0
    while True:
        fence = _PROSE_FENCE.match(text, at)
        if fence is None:
            return calls if calls and not text[at:].strip() else None
        at, inside = fence.end(), False
        while True:
            at = _WHITESPACE.match(text, at).end()
            if at == len(text):
                return calls if inside else None  # an unclosed last fence ends the answer
            closing = _PROSE_CLOSE.match(text, at)
            if closing is not None and inside:
                at = closing.end()
                break
            try:
                value, at = _DECODER.raw_decode(text, at)
            except (ValueError, RecursionError):
                return None
            if not (isinstance(value, dict) and value.keys() == {"name", "arguments"}):
                return None
            name, arguments = value["name"], value["arguments"]
            if not (isinstance(name, str) and name in offered and isinstance(arguments, dict)):
                return None
            calls.append(ToolCall(name=name, arguments=arguments))
            inside = True


def _not_calls(text: str) -> str | None:
    """A bare answer that does not start with a call: JSON as text, else None (read for tags)."""
    try:
        _decode_values(text)
    except (ValueError, RecursionError):
        return None
    return text


def _call_shaped_so_far(text: str) -> bool:
    """Whether an object cut off in the middle had only a call's keys so far (only to classify)."""
    try:
        value = json_repair.loads(_unfence(text))
    except Exception:  # a third-party heuristic: a failure only means "not a call"
        return False
    return isinstance(value, dict) and value.keys() <= _BARE_KEYS


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
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


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
        text = text[_INFO.match(text, 3).end() :]
    if text.endswith(_FENCE):
        text = text[:-3]
    return text.strip()


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    names = {type(None): "null", int: "a number", float: "a number", str: "a string", list: "an array"}
    return names.get(type(value), "an object")
