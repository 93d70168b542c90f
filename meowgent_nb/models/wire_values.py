"""Values a server sent, checked before they are used and shown short when they are wrong.

A server is outside input: whatever it sends, a backend either reads a value of the type and size
the API allows, or raises `WireError` naming the field and what came (`shown`: a short repr,
whatever the value's size or depth). The backend turns that into a `ModelError` with its server's
address, shown without any ``user:password@`` (`meowgent_nb._redact.shown_address`). Pure
functions, no client.
"""

from __future__ import annotations

import email.utils
import json
import re
import reprlib
import time
from typing import Any

from ..errors import MeowgentError
from .base import RetryCause

__all__ = [
    "BUSY",
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_NAME",
    "MAX_REASON",
    "RETRY_AFTER_LONGEST",
    "WireError",
    "busy_cause",
    "count",
    "cut",
    "finish_reason",
    "name",
    "nests_deeper",
    "retry_after_seconds",
    "shown",
    "template_opens_thinking",
    "text",
    "unicode",
    "vision_said",
]

BUSY = (429, 502, 503, 504)
"""HTTP statuses of a server that is busy or not ready, where asking again later may be answered."""
RETRY_AFTER_LONGEST = 60.0
"""Seconds of a server's ``Retry-After`` read as such; a longer one is read as this."""
MAX_DEPTH = 100
"""Levels of nested objects and lists a call's arguments may have (a real tool's take a few)."""
MAX_COUNT = 10**12
"""The largest token count read as one: more than any context, far less than a float's range."""

MAX_REASON = 100
"""Characters of a finish reason ("stop", "length", "tool_calls"...)."""
MAX_NAME = 1_000
"""Characters of a tool call's name or id (APIs allow 64 to 128 for a name)."""


class WireError(MeowgentError, ValueError):
    """A value a server sent that its API does not allow; the message names the field and the value."""


class _Short(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() <= 128:
            return super().repr_int(x, level)
        if x.bit_length() > 13_000:  # over 4,300 digits, str() raises
            return f"a number of about {int(x.bit_length() * 0.30103) + 1:,} digits"
        digits = str(x)
        return f"{digits[:10]}...{digits[-5:]} ({len(digits.lstrip('-'))} digits)"


_SHORT = _Short()
_SHORT.maxstring = 80
_SHORT.maxother = 80
_SHORT.maxlong = 40
_SHORT.maxlevel = 3
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = 5


def shown(value: Any) -> str:
    """``value`` as a short repr: long text cut in the middle, deep or long containers elided."""
    return _SHORT.repr(value)


def cut(said: str, limit: int = 500) -> str:
    """A server's own words (an error message) whole up to ``limit`` characters, then saying how many more."""
    return said if len(said) <= limit else f"{said[:limit]} [... {len(said) - limit:,} more characters]"


def text(value: Any, field: str) -> str:
    """``value`` when it is text, ``""`` when it is null or absent.

    Raises:
        WireError: It is anything else.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WireError(f"{field} is {shown(value)}, not text or null")
    if not value.isascii():
        unicode(value, field)
    return value


def unicode(value: Any, field: str) -> None:
    """Check that the text in ``value`` (text, or JSON values holding text) can be written as UTF-8.

    JSON can escape half of a UTF-16 surrogate pair (``"\\ud800"``); Python reads it into a string
    that no file, cassette or message can then hold.

    Raises:
        WireError: Some text in it holds such a half pair.
    """
    try:
        (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)).encode("utf-8")
    except UnicodeEncodeError as exc:
        half = exc.object[exc.start : exc.end]
        raise WireError(
            f"in {field}, {shown(half)} is half of a UTF-16 surrogate pair, which is not text"
        ) from None


def finish_reason(value: Any, field: str) -> str | None:
    """``value`` as a finish reason: short text, or None when null, absent or empty.

    Raises:
        WireError: It is not text, or longer than `MAX_REASON` characters.
    """
    reason = text(value, field)
    if len(reason) > MAX_REASON:
        raise WireError(f"{field} is {shown(reason)}, longer than {MAX_REASON} characters")
    return reason or None


def name(value: Any, field: str) -> str:
    """``value`` as a tool call's name or id: text of at most `MAX_NAME` characters ("" when null).

    Raises:
        WireError: It is not text, or longer.
    """
    read = text(value, field)
    if len(read) > MAX_NAME:
        raise WireError(
            f"{field} is {len(read):,} characters long ({shown(read)}), more than any tool's (at most {MAX_NAME:,})"
        )
    return read


def count(value: Any, field: str) -> int | None:
    """``value`` as a token count (a whole number from 0 to `MAX_COUNT`), None when null or absent.

    Raises:
        WireError: It is text, negative, a fraction, a boolean, or larger than any context.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise WireError(f"{field} is {shown(value)}, not a count of tokens (a whole number from 0)")
    return value


def nests_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` has more than ``limit`` levels of dicts, lists and tuples.

    Read without recursion, so no depth can overflow the stack; the one depth check of values from
    outside (a server's, a cassette's).
    """
    stack = [(value, 1)] if isinstance(value, (dict, list, tuple)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return False


def vision_said(answer: Any) -> bool | None:
    """Whether a server's answer (an ``httpx`` response) says its model reads images; None if it says nothing.

    llama.cpp's ``/props``: ``{"modalities": {"vision": true}}``; Ollama's ``/api/show``:
    ``{"capabilities": ["completion", "vision"]}``; LM Studio's ``/api/v0/models/NAME``: ``{"type": "vlm"}``.
    """
    try:
        body = answer.json()
    except ValueError:  # not JSON: this server does not say it here
        return None
    if not isinstance(body, dict):
        return None
    modalities, capabilities, kind = body.get("modalities"), body.get("capabilities"), body.get("type")
    if isinstance(modalities, dict):
        return modalities.get("vision") is True
    if isinstance(capabilities, list):
        return "vision" in capabilities
    return kind == "vlm" if isinstance(kind, str) else None


# An assistant header (Qwen's "<|im_start|>assistant\n", DeepSeek's "<｜Assistant｜>"), then a
# <think> the template writes before the model's first token, not closed right after (an empty
# block is thinking switched off). A newline may be written as one or as the escape in a string.
_OPENS_THINKING = re.compile(r"assistant(?:\|>|｜>)?(?:\\n|\n)?<think>(?!(?:\\n|\s)*</think>)", re.IGNORECASE)


def template_opens_thinking(template: str) -> bool:
    """Whether a chat template (Jinja or Ollama's Go template), or the generation prompt it
    renders, opens a think block after the assistant header (Qwen3's thinking-2507 models
    pre-fill ``<think>\n``): the model's first words are then thinking, up to ``</think>``.
    """
    return _OPENS_THINKING.search(template) is not None


def busy_cause(status: int, retry_after: str | None) -> RetryCause:
    """The `RetryCause` of an HTTP ``status`` in `BUSY`, with the seconds its ``Retry-After``
    header asks for (a number or an HTTP date; at most `RETRY_AFTER_LONGEST`), if it has one."""
    words = "the server is busy (HTTP 429)" if status == 429 else f"the server is not ready (HTTP {status})"
    return RetryCause("busy" if status == 429 else "unavailable", words, retry_after_seconds(retry_after))


def retry_after_seconds(header: str | None) -> float | None:
    """The seconds a ``Retry-After`` header asks for, from 0 to `RETRY_AFTER_LONGEST`; None when
    absent or unreadable."""
    if header is None:
        return None
    try:
        seconds = float(header.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_LONGEST)
