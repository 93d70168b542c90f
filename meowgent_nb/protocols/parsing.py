"""Streamed model text -> text, thinking and tool-call events, for the ``xml`` protocol.

`ToolCallParser.feed` takes each chunk once and returns the events it is sure of (`TextDelta`,
`ThinkingDelta`, `ToolCall`, `MalformedCall`, and with ``partial_calls=True`` a `PartialCall`
for display while a call is written); `ToolCallParser.close` ends the stream and returns the rest.
Only a tail that may start a tag is held back, so text streams.

Read as calls: ``<tool_call>`` blocks (JSON mended by punctuation only, `_call_json`), bare call
objects that start an answer (`_call_bare`), and, when the parser knows the offered tools,
call objects naming one of them later in the answer (`_call_prose`). Inline ``<think>`` blocks are
thinking. What looks like a call but cannot be read is a `MalformedCall` saying why, never silent
text. The rules a person reads are in docs/guides/agent-cells.md ("What happens in a turn"); each
case is a test in tests/protocols/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from .._deltas import TextDelta, ThinkingDelta
from ..tools.core import ToolCall
from ._call_bare import bare_calls, bare_start
from ._call_json import MalformedCall, cut_off, read_calls
from ._call_prose import prose_calls, prose_start
from ._call_scan import CallScanner

__all__ = ["MalformedCall", "ParsedEvent", "PartialCall", "ToolCallParser", "parse_tool_calls"]

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# A call's name, where calls write it: first, maybe after a fence or an array's "[". A held bare
# answer is shown as a call being written only once it starts like one.
_CALL_NAME = re.compile(r'\s*(?:```[\w+.-]*[ \t\r]*\n\s*)?\[?\s*\{\s*"name"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_BARE_CALL = re.compile(r'\s*(?:```[\w+.-]*[ \t\r]*\n\s*)?\{\s*"name"\s*:')
_MAY_OPEN = re.compile(r"[<`{\[]")  # what can begin a tag, a fence, or a list or object that opens a call
_NAME_LOOKAHEAD = 256  # a name that has not appeared this far into a call is not looked for again


@dataclass(frozen=True)
class PartialCall:
    """A tool call the model is still writing, for display only: it never runs.

    The complete call follows as a `ToolCall` (or a `MalformedCall`); a held bare answer that
    turns out to be text is followed by that text instead.
    """

    name: str | None
    """The tool's name, once the model has written it whole (``"name": "get_weather"``)."""
    text: str
    """What the model has written of the call so far (inside ``<tool_call>``, or the bare answer)."""


ParsedEvent = TextDelta | ThinkingDelta | ToolCall | MalformedCall | PartialCall


class ToolCallParser:
    """Turns one streamed answer into events, chunk by chunk.

    Feed every chunk, then call `close` once at the end of the stream. `close` also readies the
    parser for the next answer.

    Args:
        partial_calls: Also report a call being written, as `PartialCall` events.
        offered: The names of the tools offered this turn. With them, calls to these tools
            inside prose are calls too (see the module's docstring).
        thinking_first: The answer starts inside a think block the chat template opened (Qwen3's
            thinking models pre-fill ``<think>\\n``): what comes before ``</think>`` is thinking,
            whether or not the backend sends that ``<think>`` first.

    Example:
        >>> parser = ToolCallParser()
        >>> parser.feed('Checking. <tool_call>{"name": "now"')
        [TextDelta(text='Checking.')]
        >>> parser.feed('}</tool_call>')
        [ToolCall(name='now', arguments={}, id='')]
        >>> parser.close()
        []
    """

    def __init__(
        self, *, partial_calls: bool = False, offered: Collection[str] = (), thinking_first: bool = False
    ) -> None:
        self._partial_calls = partial_calls
        self._offered = frozenset(offered)
        self._thinking_first = thinking_first
        self._reset()

    def _reset(self) -> None:
        self._mode = "think" if self._thinking_first else "lead"  # or bare, text, prose, call
        self._opened = not self._thinking_first  # a think block the template opened took its <think>
        self._tail = ""  # held back: may be the start of a tag, or the undecided answer start
        self._parts: list[str] = []  # the open call's content, or the held bare answer
        self._ws = ""  # a text run's leading or trailing whitespace, or a think block's trailing whitespace
        self._in_run = False  # the current text run or think block has shown non-whitespace
        self._after_think = False  # the next text run follows a think block
        self._answered = False  # visible text or a call has been emitted
        self._bare_ok = True  # cleared once a held bare answer turned out to be text
        self._scan = CallScanner((CALL_CLOSE, CALL_OPEN))  # the open call's JSON strings and depth
        self._new_call()

    def _new_call(self) -> None:
        self._shown = -1  # how much of the open call the last PartialCall showed
        self._name: str | None = None  # the open call's name, once read

    def feed(self, chunk: str) -> list[ParsedEvent]:
        """Reads the next chunk of the stream.

        Args:
            chunk: The text the model streamed next.

        Returns:
            The events this chunk completed, in order.
        """
        out: list[ParsedEvent] = []
        self._run(chunk, out)
        if self._partial_calls and self._mode in ("call", "bare"):
            self._partial(out)
        return out

    def _partial(self, out: list[ParsedEvent]) -> None:
        text = "".join(self._parts)
        if len(text) == self._shown or (self._mode == "bare" and not _BARE_CALL.match(text)):
            return
        if self._name is None and self._shown < _NAME_LOOKAHEAD:
            found = _CALL_NAME.match(text)
            if found is not None:
                try:
                    self._name = json.loads(f'"{found.group(1)}"')
                except ValueError:  # a broken escape: the call will say so when it is read
                    pass
        self._shown = len(text)
        out.append(PartialCall(self._name, text))

    def close(self, finish_reason: str | None = None) -> list[ParsedEvent]:
        """Ends the stream: flushes what was held back and reads an unclosed call.

        A call left without its ``</tool_call>`` is read if its JSON is complete; if the answer
        ended inside its JSON (a string or an object still open), or the backend says it hit the
        token limit, the call is a `MalformedCall` saying it was cut off: it never runs.

        Args:
            finish_reason: Why the model stopped, where the backend says: ``"length"`` means the
                answer hit the token limit.

        Returns:
            The remaining events, in order.
        """
        out: list[ParsedEvent] = []
        limit = finish_reason == "length"
        while self._mode in ("lead", "bare", "prose"):
            held = self._tail + "".join(self._parts)
            self._tail, self._parts = "", []
            mode, self._mode = self._mode, "text"  # an answer start still undecided is text
            if mode == "bare":
                calls = bare_calls(held, token_limit=limit, offered=self._offered)
                self._bare_ok = False
                if isinstance(calls, tuple):
                    # What follows the calls is text like any other, read for tags and thinking.
                    found, held = calls
                    out.extend(found)
                    self._answered, self._after_think = True, False
                elif isinstance(calls, str):  # a JSON answer: text, with no tags read in its strings
                    self._text(calls, out)
                    continue
            elif mode == "prose":
                found = prose_calls(held, self._offered, token_limit=limit)
                if found is not None:
                    # What follows the calls is text like any other, read for tags and calls.
                    calls, held = found
                    self._end_run()
                    out.extend(calls)
                    self._answered, self._after_think = True, False
                else:
                    # Not calls: the fence (or bracket) is text, and a later one may still open calls.
                    opener = 3 if held.startswith("```") else 1
                    self._text(held[:opener], out)
                    held = held[opener:]
            self._run(held, out)
        if self._mode == "text":
            self._text(self._tail, out)
            self._flush_text(out)
        elif self._mode == "think":
            self._thinking(self._tail, out)
        elif self._mode == "call":
            raw = "".join(self._parts) + self._tail
            out.extend([cut_off(raw, token_limit=limit)] if limit or self._scan.open else read_calls(raw))
        self._reset()
        return out

    def _run(self, data: str, out: list[ParsedEvent]) -> None:
        # Each step consumes data up to a mode change and hands the rest to the next mode.
        rest: str | None = data
        while rest is not None:
            rest = _STEPS[self._mode](self, rest, out)

    def _step_lead(self, data: str, out: list[ParsedEvent]) -> str | None:
        lead, self._tail = self._tail + data, ""
        verdict = bare_start(lead)
        if verdict is None:
            self._tail = lead
        elif verdict:
            self._mode, self._parts = "bare", [lead]
        else:
            self._mode = "text"
            return lead
        return None

    def _step_bare(self, data: str, out: list[ParsedEvent]) -> None:
        self._parts.append(data)

    _step_prose = _step_bare  # held to the end of the answer as well

    def _step_text(self, data: str, out: list[ParsedEvent]) -> str | None:
        if not self._tail and _MAY_OPEN.search(data) is None:  # most chunks: plain text, shown as it is
            self._text(data, out)
            return None
        text = self._tail + data
        before, tag, self._tail = _split(text, CALL_OPEN, THINK_OPEN)
        at, verdict = prose_start(text, 0, len(before)) if self._offered else (None, False)
        if at is not None:  # a fence before any tag that opens, or may open, like a call
            self._text(text[:at], out)
            if verdict:
                self._mode, self._parts, self._tail = "prose", [text[at:]], ""
            else:
                self._tail = text[at:]
            return None
        self._text(before, out)
        if tag is None:
            return None
        rest, self._tail = self._tail, ""
        if tag == CALL_OPEN:
            self._end_run()
        else:
            self._flush_text(out)
        self._mode = "call" if tag == CALL_OPEN else "think"
        return rest

    def _step_think(self, data: str, out: list[ParsedEvent]) -> str | None:
        if not self._opened:  # the template opened the block: a <think> sent first is its tag
            text, self._tail = self._tail + data, ""
            body = text.lstrip()
            if len(body) < len(THINK_OPEN) and THINK_OPEN.startswith(body):
                self._tail = text
                return None
            self._opened = True
            data = body[len(THINK_OPEN) :] if body.startswith(THINK_OPEN) else text
        before, tag, self._tail = _split(self._tail + data, THINK_CLOSE)
        self._thinking(before, out)
        if tag is None:
            return None
        rest, self._tail = self._tail, ""
        self._end_run()
        self._after_think = True
        self._mode = "lead" if self._bare_ok and not self._answered else "text"
        return rest

    def _step_call(self, data: str, out: list[ParsedEvent]) -> str | None:
        # Tags count only outside the call's JSON strings. A new <tool_call> before </tool_call>
        # means the model forgot to close the first one.
        text = self._tail + data
        end, tag = self._scan.scan(text)
        self._parts.append(text[:end])
        if tag is None:
            self._tail = text[end:]
            return None
        out.extend(read_calls("".join(self._parts)))
        rest, self._tail, self._parts = text[end + len(tag) :], "", []
        self._scan.reset()
        self._new_call()
        self._answered, self._after_think = True, False
        if tag == CALL_CLOSE:
            self._mode = "text"
        return rest

    def _text(self, text: str, out: list[ParsedEvent]) -> None:
        if not self._in_run:
            # Hold a run's leading whitespace until it shows text: a whitespace-only run is dropped.
            body = text.lstrip()
            self._ws += text[: len(text) - len(body)]
            if not body:
                return
            text = body if self._after_think else self._ws + body
            self._ws, self._in_run = "", True
            self._after_think, self._answered = False, True
        # Trailing whitespace waits for more text: it separates the text from a call that may
        # follow, and a call drops it (`_end_run`).
        self._hold_trailing(text, out, TextDelta)

    def _flush_text(self, out: list[ParsedEvent]) -> None:
        """Ends a text run that no call follows: its held trailing whitespace is text after all."""
        if self._in_run and self._ws:
            out.append(TextDelta(self._ws))
        self._end_run()

    def _thinking(self, text: str, out: list[ParsedEvent]) -> None:
        if not self._in_run:
            text = text.lstrip()
            self._in_run = bool(text)
        # Trailing whitespace waits for more thinking; the block's end drops it.
        self._hold_trailing(text, out, ThinkingDelta)

    def _hold_trailing(
        self, text: str, out: list[ParsedEvent], delta: type[TextDelta] | type[ThinkingDelta]
    ) -> None:
        """Emit ``text`` after the whitespace held before it, holding back its own trailing whitespace."""
        body = text.rstrip()
        if body:
            out.append(delta(self._ws + body))
            self._ws = text[len(body) :]
        else:
            self._ws += text

    def _end_run(self) -> None:
        self._ws, self._in_run = "", False


_STEPS = {
    mode: getattr(ToolCallParser, "_step_" + mode)
    for mode in ("lead", "bare", "prose", "text", "think", "call")
}
"""Each mode's step, looked up once: `ToolCallParser._run` takes a step a chunk."""


def parse_tool_calls(text: str) -> list[ParsedEvent]:
    """Parses a whole answer: `ToolCallParser.feed` then `close`, with adjacent deltas merged.

    Args:
        text: The model's complete answer.

    Returns:
        The events, with adjacent text deltas merged into one (and adjacent thinking deltas).
    """
    parser = ToolCallParser()
    merged: list[ParsedEvent] = []
    for event in parser.feed(text) + parser.close():
        if merged and isinstance(event, (TextDelta, ThinkingDelta)) and type(merged[-1]) is type(event):
            merged[-1] = type(event)(merged[-1].text + event.text)  # type: ignore[union-attr]
        else:
            merged.append(event)
    return merged


def _split(s: str, *tags: str) -> tuple[str, str | None, str]:
    """Splits `s` at the first of `tags`: (before, tag, after).

    Without a tag the result is (before, None, held): `held` is the longest end of `s` that could
    be the start of a tag, to wait for the next chunk; it is at most one tag long.
    """
    found = [(at, tag) for tag in tags if (at := s.find(tag)) >= 0]
    if found:
        at, tag = min(found)
        return s[:at], tag, s[at + len(tag) :]
    # Every tag has one "<", at its start: only the text from the last "<" can begin a tag.
    at = s.rfind("<", max(0, len(s) - max(map(len, tags)) + 1))
    if at < 0 or not any(tag.startswith(s[at:]) for tag in tags):
        return s, None, ""
    return s[:at], None, s[at:]
