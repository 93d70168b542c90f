"""Whether a call's argument values come from the conversation: a second look at a call.

A small model asked something no offered tool fits often writes a call anyway, with values it
made up (``get_weather(location="San Francisco")`` for "hi there"). A call the request asked for
names something the person wrote: a city, a number, a file. `grounded` says whether at least one
of a call's argument values shares a word or a number with the person's messages; the ``decide``
protocol has the embedded model answer in text instead of a list of calls none of which is
(`ModelRequest.call_grounding`).

What is compared: each string value's words (letters and digits, case and width folded; in CJK
and other unspaced scripts, each pair of adjacent characters) against the messages' words, and
each number against the numbers the messages hold. A value the schema chooses (an ``enum``),
booleans and nulls say nothing either way; a call with no other value (no arguments, only flags
or choices) is grounded: there is nothing to check.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["any_grounded", "grounded", "offered_arguments", "user_text"]

_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?")  # not inside a word or a version (v1.2)
# Scripts written without spaces between words: a "word" there is a pair of adjacent characters.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f\uf900-\ufaff]")


def words(text: str) -> set[str]:
    """The words of ``text`` as `grounded` compares them (folded; CJK as character pairs)."""
    found: set[str] = set()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _UNSPACED.search(word):
            found.update(word[at : at + 2] for at in range(max(1, len(word) - 1)))
        else:
            found.add(word)
    return found


def numbers(text: str) -> set[float]:
    """The numbers written in ``text`` (``3``, ``-2.5``; ``1,500`` both as 1.5 and as 1500)."""
    found: set[float] = set()
    for number in _NUMBER.findall(unicodedata.normalize("NFKC", text)):
        found.add(float(number.replace(",", ".")))
        found.add(float(number.replace(",", "")))
    return found


def grounded(arguments: Mapping[str, Any], properties: Mapping[str, Any], text: str) -> bool:
    """Whether one of a call's argument values appears in ``text`` (the person's messages).

    Args:
        arguments: The call's arguments, as the model wrote them.
        properties: The tool's JSON-schema ``properties`` (a property with an ``enum`` is a choice
            the schema offers, not something the person must have written).
        text: What the person wrote (`user_text`).

    Returns:
        True if a string value shares a word with ``text``, a number value is one of its numbers,
        or the call has no value to check; False if it has values and none is found there.
    """
    said_words, said_numbers = words(text), numbers(text)
    checked = False
    for name, value in arguments.items():
        schema = properties.get(name)
        if isinstance(schema, Mapping) and "enum" in schema:
            continue
        for scalar in _scalars(value):
            if isinstance(scalar, (int, float)):
                checked = True
                if float(scalar) in said_numbers:
                    return True
                continue
            value_words = words(str(scalar))
            if value_words:
                checked = True
                if value_words & said_words or (numbers(str(scalar)) & said_numbers):
                    return True
    return not checked


def offered_arguments(call_format: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Each tool's argument properties, by name, as a request's ``call_format`` offers them (one
    call's shape, `protocols.xml.call_schema`, or a list of them, `protocols.list.list_schema`)."""
    shapes = call_format.get("items", call_format)
    properties: dict[str, Mapping[str, Any]] = {}
    for shape in shapes.get("anyOf", []) if isinstance(shapes, Mapping) else []:
        fields = shape.get("properties", {})
        name = fields.get("name", {}).get("const")
        if isinstance(name, str):
            properties[name] = fields.get("arguments", {}).get("properties", {})
    return properties


def any_grounded(calls: Any, call_format: Mapping[str, Any], text: str) -> bool:
    """Whether one of ``calls`` (a list of ``{"name", "arguments"}``) is `grounded` in ``text``.

    ``call_format`` is the request's (`protocols.list.list_schema` or `protocols.xml.call_schema`):
    each tool's argument properties are read from it. Anything that is not a list of such calls
    (unreadable, empty) is True: the second look judges calls, not their form.
    """
    if not isinstance(calls, list) or not calls:
        return True
    properties = offered_arguments(call_format)
    for call in calls:
        if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping):
            return True
        if grounded(call["arguments"], properties.get(str(call.get("name")), {}), text):
            return True
    return False


def user_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """The text of the person's (``user``) messages, one per line."""
    return "\n".join(
        message["content"]
        for message in messages
        if message.get("role") == "user" and isinstance(message.get("content"), str)
    )


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, bool) or value is None:
        return
    else:
        yield value
