"""Calls written inside prose, to tools the parser knows are offered (`parsing` uses it).

A model that means to call often writes the call object after a sentence, in a fence or not,
with stray fences and brackets around it (``Here is the response:\\n{"name": ...}\\n```"``), or
as a list (``[{...}, {...}]``). `prose_start` finds where such an object may begin (a fence, a
``[`` or a ``{`` that opens ``{"name":``) so the parser holds it; `prose_calls` reads the objects
that stand there, one after another. Every object that names an offered tool is a call, or a
`MalformedCall` saying what was wrong (broken JSON, a key twice, keys besides ``name`` and
``arguments``, cut off): it is never left as silent text. Objects are read with `_call_json`'s
rules, the same as inside ``<tool_call>``. An object naming no offered tool is text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

import json_repair

from ..tools.core import ToolCall
from ._call_json import _BARE_KEYS, _DECODER, _SHAPE, MalformedCall, _DuplicateKey, _repair, _to_call, cut_off
from ._call_scan import match_end, object_end

__all__ = ["offered_object", "prose_calls", "prose_start"]

# Where a call may open in prose: a fence, an array's "[" or an object's "{" that open like a call
# (its first key "name" or "arguments", in either quote: json-repair mends single quotes).
# The second pattern matches what could still become one. Whitespace and a fence's language tag
# are bounded so the verdict comes soon.
_PROSE = re.compile(
    r"""(?:```[\w+.-]{0,16}\s{0,32})?(?:\[\s{0,32})?\{\s{0,32}(["'])(?:name|arguments)\1\s{0,8}:"""
)
_PROSE_SO_FAR = re.compile(
    r"""`{1,2}|(?:```[\w+.-]{0,16}\s{0,32})?(?:\[\s{0,32})?"""
    r"""(?:\{\s{0,32}(?:["'](?:n|na|nam|name|a|ar|arg|argu|argum|argume|argumen|argument|arguments)?"""
    r"""|(["'])(?:name|arguments)\1\s{0,8})?)?"""
)
_PROSE_CANDIDATE = re.compile(r"[`\[{]")
# Between call objects: whitespace, fences (a language tag only where whitespace follows it),
# the brackets and commas of a list of calls, and closers the model added.
_BETWEEN = re.compile(r"(?:\s+|[\[\],}]|```[\w+.-]*(?=\s))*")
_STRAY = re.compile(r"(?:\s*[,}\]])*")  # closers after the last call: no value in them
_CLOSING_FENCE = re.compile(r"(?:\s*```(?![`\w]))+")  # the fence it was written in, or stray ones
_NAMED = re.compile(r"""\{\s*(["'])name\1\s*:\s*(["'])((?:(?!\2)[^\\\n]|\\.)*)\2""")
_ARGUMENT_KEYS = frozenset({"arguments", "parameters"})


def prose_start(text: str, start: int, limit: int) -> tuple[int | None, bool]:
    """The first fence, ``[`` or ``{`` in ``text[start:limit]`` that opens like a call: (where,
    True); or one that may still (where, False), to hold back; or (None, False).

    Each verdict depends only on the text from the candidate on, so it is the same however the
    stream was chunked.
    """
    for candidate in _PROSE_CANDIDATE.finditer(text, start, limit):
        at = candidate.start()
        if _PROSE.match(text, at):
            return at, True
        if _PROSE_SO_FAR.fullmatch(text, at):
            return at, False
    return None, False


def prose_calls(
    text: str, offered: Collection[str], *, token_limit: bool = False
) -> tuple[list[ToolCall | MalformedCall], str] | None:
    """The calls ``text`` (held from a `prose_start`) opens with, and the text after them.

    Objects are read one after another while only whitespace, fences, ``[ ] ,`` and stray
    ``}`` stand between them; the closers and the fence after the last one belong to the calls.

    Returns:
        ``(calls, rest)``, or None if the first object names no offered tool (it is text).
    """
    calls: list[ToolCall | MalformedCall] = []
    at = 0
    while True:
        start = match_end(_BETWEEN, text, at)
        read = None
        if text[start : start + 1] == "{":
            read = offered_object(text, start, offered, token_limit=token_limit)
        if read is None:
            break
        call, at = read
        calls.append(call)
    if not calls:
        return None
    at = match_end(_STRAY, text, at)
    closing = _CLOSING_FENCE.match(text, at)
    if closing is not None:
        at = closing.end()
    rest = text[at:]
    return calls, rest if rest.strip() else ""


def offered_object(
    text: str, start: int, offered: Collection[str], *, token_limit: bool = False
) -> tuple[ToolCall | MalformedCall, int] | None:
    """The object at ``text[start]`` as a call and where it ends, if it names an offered tool.

    Returns:
        ``(call, end)``: a `ToolCall`, or a `MalformedCall` for an object that names an offered
        tool but cannot be run as written; None for anything else (an object that names no
        offered tool, or has a ``name`` but no arguments and other keys: a description).
    """
    named = _NAMED.match(text, start)
    names_offered = named is not None and _unquote(named.group(3)) in offered
    end = object_end(text, start)
    if end is None:  # the answer ended inside it: a call cut off, if it names an offered tool
        if not (names_offered or _name_so_far(text[start:]) in offered):
            return None
        return cut_off(text[start:].strip(), token_limit=token_limit), len(text)
    segment = text[start:end]
    try:
        value = _DECODER.decode(segment)
    except _DuplicateKey as error:
        reason = f'the JSON gives the key "{error}" twice in one object; give each key once, as {_SHAPE}'
        return (MalformedCall(segment, reason), end) if names_offered else None
    except (ValueError, RecursionError) as error:
        value = _repair(segment)
        if value is None:
            if not names_offered:
                return None
            where = "(nested too deeply)"
            if isinstance(error, json.JSONDecodeError):
                where = f"at line {error.lineno} column {error.colno} ({error.msg})"
            reason = f"the JSON is broken {where} and could not be repaired; write the call as {_SHAPE}"
            return MalformedCall(segment, reason), end
    if not (isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"] in offered):
        return None
    extra = value.keys() - _BARE_KEYS
    if extra:
        if not value.keys() & _ARGUMENT_KEYS:
            return None
        keys = ", ".join(f'"{key}"' for key in sorted(extra))
        reason = f'the call has keys besides "name" and "arguments" ({keys}); write it as {_SHAPE}'
        return MalformedCall(segment, reason), end
    return _to_call(value, segment), end


def _name_so_far(text: str) -> object:
    """The "name" an object cut off in the middle gives so far, wherever it stands in it."""
    try:
        value = json_repair.loads(text)
    except Exception:  # a third-party heuristic: a failure only means "no name"
        return None
    return value.get("name") if isinstance(value, dict) else None


def _unquote(body: str) -> str | None:
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return None
