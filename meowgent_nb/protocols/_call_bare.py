"""Calls written without tags: where an answer holds them, and reading them (`parsing` uses it).

The start of an answer (the rules are in `meowgent_nb.protocols.parsing`'s docstring):
`bare_start` decides whether the answer is held and `bare_calls` reads the objects it starts
with. Calls later in the answer are `_call_prose`'s. Each object is read with `_call_json`'s
rules: strict JSON, duplicate keys refused, punctuation-only repair.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

import json_repair

from ..tools.core import ToolCall

# The JSON rules are one module's; this one only decides where a call stands.
from ._call_json import (
    _BARE_KEYS,
    _CALL_START,
    _DECODER,
    _FENCE,
    _GAP,
    _SHAPE,
    MalformedCall,
    _decode_values,
    _DuplicateKey,
    _repair,
    _to_call,
    _unfence,
    cut_off,
)
from ._call_prose import offered_object
from ._call_scan import match_end, object_end

__all__ = ["bare_calls", "bare_start"]

# An answer held as bare calls starts with {" after whitespace and maybe a fence line. The second
# pattern matches what could still become such a start.
_BARE = re.compile(r'\s*(?:```[\w+.-]*[ \t\r]*\n\s*)?\{\s*"')
_BARE_SO_FAR = re.compile(r"\s*(?:`{1,2}|```[\w+.-]*[ \t\r]*|(?:```[\w+.-]*[ \t\r]*\n\s*)?(?:\{\s*)?)")
# How far into an answer the bare-call check looks. Past it the answer is ordinary text, so a run
# of leading whitespace cannot hold the stream back for long.
_BARE_LOOKAHEAD = 256
_STRAY = re.compile(r"(?:\s*[}\]])*")  # closers a model adds after a complete call: no value in them
_CLOSING_FENCE = re.compile(r"\s*```(?![`\w])")


def bare_start(lead: str) -> bool | None:
    """Whether an answer starting with `lead` is held as bare calls; None while it cannot tell.

    The verdict depends only on the first `_BARE_LOOKAHEAD` characters, so it is the same
    however the stream was chunked.
    """
    start = lead[:_BARE_LOOKAHEAD]
    if _BARE.match(start):
        return True
    return None if len(lead) < _BARE_LOOKAHEAD and _BARE_SO_FAR.fullmatch(start) else False


def bare_calls(
    text: str, *, token_limit: bool = False, offered: Collection[str] = ()
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
    anything else is None. An object that names one of the ``offered`` tools is read as
    `_call_prose.offered_object` reads it wherever it stands: a call, or a `MalformedCall`.

    Returns:
        ``(calls, rest)``: the calls in order and the text after the last one (maybe "");
        or the whole answer as text; or None.
    """
    calls: list[ToolCall | MalformedCall] = []
    at, fence_open = 0, False
    while True:
        start = match_end(_GAP, text, at)
        if start == len(text):
            return calls, ""
        fence_open ^= text.count(_FENCE, at, start) % 2 == 1
        end = object_end(text, start) if text[start] == "{" else None
        if end is None:
            if text[start] == "{" and _CALL_START.match(text, start) and _call_shaped_so_far(text[start:]):
                return [*calls, cut_off(text[at:].strip(), token_limit=token_limit)], ""
            return (calls, text[at:]) if calls else _not_calls(text)
        read = _bare_object(text[start:end], first=not calls)
        if read is None:  # an object naming an offered tool is a call or says why it is not one
            read, _ = offered_object(text, start, offered) or (None, end)
        if read is None:
            return (calls, text[at:]) if calls else _not_calls(text)
        calls.append(read)
        at = match_end(_STRAY, text, end)
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
            reason = f"the JSON is broken {where} and could not be repaired"
            return MalformedCall(segment, f"{reason}; write the call as {_SHAPE}")
    if not isinstance(value, dict) or not value.keys() <= _BARE_KEYS:
        return None  # a JSON document that happens to have a "name" is an answer
    call = _to_call(value, segment)
    # The answer's first object must be a call as written: {"name": 3} is an answer, not a call.
    return None if first and isinstance(call, MalformedCall) else call


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
