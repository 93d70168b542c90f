"""Text helpers of `LlamaCppModel`: decoding tokens, spotting where a call's arguments begin,
and turning parsed events into chunks. Nothing here imports llama-cpp-python."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from .._deltas import TextDelta, ThinkingDelta
from ..tools.core import ToolCall
from .base import ModelChunk

__all__ = ["Detokenizer", "arguments_opening", "call_closing", "chunks", "open_closings", "token_text"]


class Detokenizer:
    """Generated tokens to text, special tokens included (``<tool_call>`` stays in the text)."""

    def __init__(self, llama: Any):
        self._llama = llama
        # A character can span tokens; the incremental decoder holds its first bytes back.
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def text(self, token: int) -> str:
        """The text ``token`` completes (maybe "" while a character is unfinished)."""
        return self._utf8.decode(self._llama.detokenize([token], special=True))

    def flush(self) -> str:
        """What is left at the end: an unfinished character becomes U+FFFD."""
        return self._utf8.decode(b"", final=True)


@lru_cache(maxsize=8)
def _arguments_opening(tag: str | None) -> re.Pattern[str]:
    """A call's JSON up to its arguments, at the start of the answer (maybe in a code fence) or
    after ``tag``; what follows the colon is the start of the arguments."""
    after_tag = "" if tag is None else rf"|{re.escape(tag)}\s*"
    return re.compile(
        rf'(?:\A\s*(?:```(?:json)?\s*)?{after_tag})\{{\s*"name"\s*:\s*"(?P<name>[^"\\]+)"\s*,\s*"arguments"\s*:',
        re.IGNORECASE,
    )


def arguments_opening(
    text: str, piece: str, tools: Mapping[str, Any], tag: str | None
) -> tuple[str, str] | None:
    """When ``piece`` completes ``{"name": "<a tool in tools>", "arguments":`` after ``text``:
    the tool's name and the part of ``piece`` up to that colon. None otherwise.

    Args:
        text: The answer so far.
        piece: The text of the token just sampled.
        tools: The tools whose arguments can be constrained, by name.
        tag: What opens a call in the text (`ModelRequest.call_tag`), or None: only a call at
            the start of the answer counts.
    """
    if ":" not in piece:
        return None
    whole = text + piece
    start = max(0, whole.rfind(tag)) if tag and tag in whole else 0
    match = None
    for match in _arguments_opening(tag).finditer(whole, start):  # noqa: B007 - the last match is what is wanted
        pass
    if match is None or match.end() <= len(text) or match["name"] not in tools:
        return None
    # Whatever the token went on to write after the colon (`{`, or `[` or `"` for arguments that
    # are not an object) is dropped: the tool's grammar writes an arguments object.
    return match["name"], piece[: match.end() - len(text)]


def call_closing(text: str, tag: str | None) -> str:
    """What completes a call whose arguments object has just closed at the end of ``text``: the
    call object's ``}``, then the closing tag if the call is inside ``tag``, then a code fence's
    closing ```` ``` ```` if one is open.

    The product writes this itself (the model may then write another call: `_llama_decode`).
    Left to write it, a 0.5B model that began the call on several lines adds a ``\n}`` of its
    own after the ``}``, and an answer with stray text after a call is not read as a call.
    """
    return "}" + open_closings(text, tag)


def open_closings(text: str, tag: str | None) -> str:
    """What closes what ``text`` left open around a call: ``tag``'s closing tag (``\n</tool_call>``)
    if ``text`` opened it last, then a code fence's ``\n```\n`` if one is open."""
    closing = ""
    if tag and tag.startswith("<"):
        close_tag = "</" + tag[1:]
        if text.rfind(tag) > text.rfind(close_tag):
            closing += "\n" + close_tag
    if text.count("```") % 2:
        closing += "\n```"
    return closing


def token_text(llama: Any, token: int) -> str:
    return "" if token < 0 else llama.detokenize([token], special=True).decode("utf-8", errors="replace")


def chunks(events: Iterable[TextDelta | ThinkingDelta | ToolCall]) -> list[ModelChunk]:
    """A `CallParser`'s events as chunks: native tool calls come back as `ModelChunk.tool_calls`."""
    chunks = []
    for event in events:
        if isinstance(event, TextDelta):
            chunks.append(ModelChunk(text=event.text))
        elif isinstance(event, ThinkingDelta):
            chunks.append(ModelChunk(thinking=event.text))
        else:
            chunks.append(ModelChunk(tool_calls=(ToolCall(event.name, dict(event.arguments), id=""),)))
    return chunks
