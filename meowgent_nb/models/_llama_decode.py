"""One answer of the embedded model, token by token: free text, constrained calls, more calls.

`decode_answer` runs llama.cpp's sampler in three phases: free text (or the whole answer's
grammar, `ModelRequest.format`); a call's arguments, once the model has written
``{"name": "<an offered tool>", "arguments":``, under that tool's grammar, after which the product
closes the call (`call_closing`); then the model's choice to end the answer or write another call.
Text after the calls that cannot open a call, a call repeated word for word, and a call the token
limit cuts off end the answer (each would otherwise run on to the limit or run half a call). With
the ``list`` protocol's grammar (``calls_list``) an answer that opens with ``[`` is a list of calls
written under it, and so is what follows ``call_tag`` (the ``decide`` protocol: the model's own
``<tool_call>`` decides, the list's grammar writes every call, the product closes the tag); any
other answer is free text. Given ``review`` (the ``decide`` protocol's second look,
`ModelRequest.call_grounding`), such a list is held back until it is written and reviewed: a list
the review rejects is taken back, and the answer is written again as text, with what opens a call
barred.

Nothing here imports llama-cpp-python; the caller holds the model's lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import Any, cast

from ._llama_text import Detokenizer, arguments_opening, call_closing, open_closings

__all__ = ["Decoded", "call_may_open", "decode_answer", "list_closing", "list_opening"]


@dataclass(frozen=True)
class Decoded:
    """What `decode_answer` did: tokens generated, when the first came, and how it ended."""

    generated: int
    """Tokens sampled (a list taken back by the review included: the model wrote them)."""
    first: float | None
    """`perf_counter` time of the first sampled token, None if none was."""
    calls_closed: int
    """Calls whose arguments the grammar completed and the product closed."""
    hit_limit: bool
    """The token limit ended the answer (not the model, a call's close or a stop)."""


def decode_answer(
    llama: Any,
    is_eog: Callable[[int], bool],
    tokens: list[int],
    sampling: Any,
    put: Callable[[tuple[str, Any]], None],
    stop: Any,
    *,
    limit: int,
    grammar: Any = None,
    arguments: Mapping[str, Any] | None = None,
    call_tag: str | None = None,
    calls_list: Any = None,
    review: Callable[[Any], bool] | None = None,
    call_names: Collection[str] = (),
) -> Decoded:
    """Generate one answer after the prompt ``tokens``, handing each shown piece to ``put``.

    Args:
        llama: The loaded ``llama_cpp.Llama``.
        is_eog: Whether a token ends generation (llama.cpp's ``llama_vocab_is_eog`` for its vocabulary).
        tokens: The prompt's tokens.
        sampling: The `_Sampling` settings (temperature, top_k, ..., both repeat penalties).
        put: Receives ``("text", piece)`` for each piece the answer shows.
        stop: A ``threading.Event``; once set, generation stops after the current token.
        limit: The most tokens to generate.
        grammar: The whole answer's compiled grammar, or None.
        arguments: Each offered tool's compiled arguments grammar, by name; none: no phase 2.
        call_tag: What opens a call in the text (``"<tool_call>"``), or None.
        calls_list: The compiled grammar of a list of calls (the ``list`` and ``decide``
            protocols), or None.
        review: With ``calls_list``: given the calls of a list just written (its JSON, read), whether
            to keep them; None keeps every list unseen.
        call_names: With ``calls_list`` and ``call_tag`` (``decide``): the offered tools' names. A
            ``{`` that opens the answer then opens the list only once the object reads as a call:
            ``{"name": "<one of them>"``, or ``{"name": "<any name>", "arguments"`` (a made-up
            tool, which the grammar then writes as an offered one, for the review to judge). Any
            other object (``{"name": "Alice", "age": 30}``, asked for as the answer) stays text.
            The object's tokens are written again under the list's grammar. Without names, the
            ``{`` opens the list at once.
    """
    return _Decoder(
        llama,
        is_eog,
        tokens,
        sampling,
        put,
        stop,
        limit,
        grammar,
        arguments or {},
        call_tag,
        calls_list,
        review,
        tuple(call_names),
    ).run()


class _Decoder:
    def __init__(
        self,
        llama,
        is_eog,
        tokens,
        sampling,
        put,
        stop,
        limit,
        grammar,
        arguments,
        call_tag,
        calls_list,
        review,
        call_names,
    ):
        self._is_eog = is_eog
        self.call_names: tuple[str, ...] = call_names
        # Where an object that may open a call starts (in text, in generated), while it is read.
        self.probe: tuple[int, int] | None = None
        self.calls_list = calls_list
        self.llama, self.tokens, self.sampling = llama, tokens, sampling
        self.put, self.stop, self.limit = put, stop, limit
        self.grammar, self.arguments, self.tag = grammar, arguments, call_tag
        self.detokenizer = Detokenizer(llama)
        self.generated: list[int] = []
        self.text = ""  # everything written, shown or held
        self.shown = 0  # how much of `text` went to `put`
        self.call_from = 0  # where the current call (or the text before the first) starts
        self.calls: list[str] = []  # this answer's closed calls, as written, whitespace collapsed
        self.first: float | None = None
        self.review: Callable[[Any], bool] | None = review
        self.list_from = (0, 0)  # where the list being written starts: (in text, in generated)
        self.discarded = 0  # their tokens
        self.barred: frozenset[int] | None = None  # after one: tokens that would open a call again

    def run(self) -> Decoded:
        constrained = None  # the grammar of the call being written, in phase 2
        after_call = False  # phase 3, and phase 2 of a call begun there: held back
        listing = False  # a list of calls is being written under its grammar
        outcome = None
        while not self.stop.is_set():
            if len(self.generated) >= self.limit:
                outcome = "limit"
                break
            outcome, name = self._sample(
                constrained, hold=after_call or (listing and self.review is not None)
            )
            if outcome == "list":  # the model opened a list of calls: its grammar writes the rest
                constrained, self.calls_list, listing = self.calls_list, None, True
                continue
            if outcome == "opening":
                constrained = self.arguments[name]
                continue
            if listing and outcome == "ended" and self.review is not None and not self._reviewed():
                constrained, listing, outcome = None, False, None  # taken back: the answer again, as text
                continue
            if listing and outcome == "ended" and (closing := list_closing(self.text, self.tag)):
                self.text += closing  # a list in a tag or a fence: the product closes them
                self._show()
            elif listing:
                self._show()  # a list held for the review and kept
            if outcome != "ended" or constrained is None or listing:
                break  # the model ended its text or list, the limit came, it stopped, or no call followed one
            written = self._close_call()
            if written in self.calls:
                break  # a word-for-word repeat: drop it and end
            self.calls.append(written)
            self._show()
            constrained, after_call, outcome = None, True, None
            self.call_from = len(self.text)
        if listing and outcome in ("limit", "stopped"):
            self._show()  # a list held for its review and cut off: shown as it was cut
        # The limit cut off what was shown; what was held (after a call) is simply dropped.
        hit_limit = outcome == "limit" and not after_call
        self.text = self.text[: self.shown]  # whatever is still held is dropped
        if tail := self.detokenizer.flush():
            self.put(("text", tail))
        return Decoded(len(self.generated) + self.discarded, self.first, len(self.calls), hit_limit)

    def _reviewed(self) -> bool:
        """Whether the review keeps the list just written; if not, take it back (text and tokens)."""
        written = self.text[self.list_from[0] :]
        start, end = written.find("["), written.rfind("]")
        try:
            calls = json.loads(written[start : end + 1]) if 0 <= start < end else None
        except ValueError:
            calls = None
        if calls is None or cast(Callable[[Any], bool], self.review)(calls):
            return True
        self._take_back(*self.list_from)
        # The tag is barred where it is one token (Qwen's <tool_call>); spelled in several, its
        # pieces are ordinary text ("tool"), and the braces barred keep a call from following it.
        tag = self.llama.tokenize(self.tag.encode("utf-8"), add_bos=False, special=True) if self.tag else []
        self.barred = frozenset(tag) if len(tag) == 1 else frozenset()
        return False

    def _sample(self, constrained: Any, *, hold: bool) -> tuple[str, str | None]:
        """Sample until the phase changes: ("opening", tool name), ("ended" | "limit" | "no call"
        | "stopped", None)."""
        barred = {} if self.barred is None else {"logits_processor": [self._bar]}  # after a take-back
        generator = self.llama.generate(
            self.tokens + self.generated,
            temp=self.sampling.temperature,
            top_k=self.sampling.top_k,
            top_p=self.sampling.top_p,
            min_p=self.sampling.min_p,
            repeat_penalty=self.sampling.repeat_penalty
            if constrained is None
            else self.sampling.arguments_repeat_penalty,
            grammar=constrained or (None if hold else self.grammar),
            **barred,
        )
        try:
            for token in generator:
                if self.first is None:
                    self.first = perf_counter()
                if self.stop.is_set():
                    self._end_probe(hold)  # what was read of an object is shown as it got
                    return "stopped", None
                if self._is_eog(token):
                    self._end_probe(hold)
                    return "ended", None
                piece = self.detokenizer.text(token)
                if self.probe is not None:  # an object opened the answer: a call, or the answer?
                    self._keep(piece, token, piece, True)
                    written = self.text[self.probe[0] :]
                    if _names_a_tool(written, self.call_names) or _CALL_SHAPED.match(written):
                        self._take_back(*self.probe)  # the list's grammar writes it again, from its "{"
                        return "list", None
                    if not call_may_open(written, None, self.tag):
                        self._end_probe(hold)
                    if len(self.generated) >= self.limit:
                        self._end_probe(hold)
                        return "limit", None
                    continue
                if constrained is None and self.calls_list is not None:
                    at = list_opening(self.text, piece, self.tag)
                    if at is not None:  # keep what comes before the "[": the grammar writes the list
                        bare = self.tag is not None and self.tag not in self.text + piece
                        probing = bare and bool(self.call_names) and piece[at:].startswith("{")
                        self.list_from = (len(self.text), len(self.generated))
                        # The list's opening waits for its review, and an object for its name.
                        if at:
                            self._keep(piece[:at], token, piece, hold or probing or self.review is not None)
                        if probing:
                            self.probe = (len(self.text), len(self.generated))
                            self._keep(piece[at:], token, piece, True)
                            continue
                        return "list", None
                if constrained is None and self.arguments:
                    opening = arguments_opening(self.text[self.call_from :], piece, self.arguments, self.tag)
                    if opening is not None:
                        self._keep(opening[1], token, piece, hold)
                        return "opening", opening[0]
                self._keep(piece, token, piece, hold)
                if (
                    hold
                    and constrained is None
                    and not call_may_open(self.text[self.call_from :], self.arguments, self.tag)
                ):
                    return "no call", None
                if len(self.generated) >= self.limit:
                    return "limit", None
            self._end_probe(hold)
            return "ended", None
        finally:
            generator.close()

    def _end_probe(self, hold: bool) -> None:
        """The object that opened the answer is not a call (or the answer ended or was stopped in
        it): it is text."""
        if self.probe is not None:
            self.probe = None
            if not hold:
                self._show()

    def _take_back(self, at: int, tokens: int) -> None:
        """Drop what was written since ``at`` in the text, ``tokens`` in `generated` (its tokens
        still count)."""
        self.discarded += len(self.generated) - tokens
        del self.generated[tokens:]
        self.text = self.text[:at]
        self.detokenizer = Detokenizer(self.llama)
        self.probe = None

    def _bar(self, _tokens: Any, scores: Any) -> Any:
        """llama-cpp-python's logits processor once a list was taken back: the answer is written
        again as text. The call tag never comes, nor a brace (no call object, in a list or in
        prose, where a parser would read it), nor, first, what opens a list, a fence or a tag."""
        for token in cast(frozenset, self.barred):
            scores[token] = -float("inf")
        first = not self.text.strip()
        for token in scores.argpartition(-_BARRED_TOP)[-_BARRED_TOP:]:
            piece = self.llama.detokenize([int(token)]).decode("utf-8", "ignore")
            if "{" in piece or (first and piece.lstrip()[:1] in _CALL_STARTS):
                scores[token] = -float("inf")
        return scores

    def _keep(self, keep: str, token: int, piece: str, hold: bool) -> None:
        """Add ``keep`` (``piece``, or the part of it up to a call's arguments) to the answer."""
        # The sampled token may hold the arguments' first characters too: keep only up to the
        # colon, as tokens of its own; the tool's grammar writes the rest.
        tokens = (
            [token]
            if keep == piece
            else self.llama.tokenize(keep.encode("utf-8"), add_bos=False, special=False)
        )
        self.generated.extend(tokens)
        self.text += keep
        if not hold:
            self._show()

    def _close_call(self) -> str:
        """Close the call just completed; return it as written (whitespace collapsed)."""
        closing = call_closing(self.text, self.tag)
        self.generated.extend(self.llama.tokenize(closing.encode("utf-8"), add_bos=False, special=True))
        self.text += closing
        return " ".join(self.text[self.call_from :].split())

    def _show(self) -> None:
        if len(self.text) > self.shown:
            self.put(("text", self.text[self.shown :]))
            self.shown = len(self.text)


_BARRED_TOP = 64
"""The likeliest tokens checked at the start of an answer written again: more than sampling's top_k."""
_CALL_STARTS = ("[", "{", "`", "<")
_OPENERS = ("```json", "```")
_LIST_OPENING = re.compile(r"\s*(?:```[\w+.-]*\s*)?\[")
_CALL_OPENING = re.compile(r"\s*(?:```[\w+.-]*\s*)?[\[{]")


_NAMED = re.compile(r'\s*\{\s*"name"\s*:\s*"([^"]*)"')
_CALL_SHAPED = re.compile(r'\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"arguments"')


def _names_a_tool(text: str, tools: Collection[str]) -> bool:
    """Whether ``text`` opens with ``{"name": "<one of tools>"``."""
    named = _NAMED.match(text)
    return named is not None and named[1] in tools


def list_opening(text: str, piece: str, tag: str | None = None) -> int | None:
    """Where in ``piece`` the answer ``text + piece`` opens a list of calls, if it does there; else
    None. A list opens at its ``[`` at the start of the answer (maybe after a code fence's opening).
    Given ``tag`` (the ``decide`` protocol), what opens a call in the ``xml`` protocol opens the
    list instead: right after the answer's first ``tag``, or at a call object's ``{`` at the start
    of the answer (the grammar then writes ``[{``)."""
    whole = text + piece
    if tag and (found := whole.find(tag)) >= 0 and found + len(tag) > len(text):
        return found + len(tag) - len(text)
    opened = (_CALL_OPENING if tag else _LIST_OPENING).match(whole)
    return None if opened is None or opened.end() <= len(text) else opened.end() - 1 - len(text)


def list_closing(text: str, tag: str | None) -> str:
    """What closes a list of calls just written at the end of ``text``: `open_closings` (the tag,
    a code fence). Without ``tag`` (the ``list`` protocol) nothing: its answers stay as the model
    wrote them."""
    return open_closings(text, tag) if tag else ""


def call_may_open(text: str, tools: Collection[str] | None, tag: str | None) -> bool:
    """Whether ``text``, written after a call, can still become the opening of a call to one of
    ``tools`` (None: of any name): whitespace, maybe ``tag`` or a ```` ```json ```` fence, then
    ``{"name": "``, an offered tool's name (or the start of one), ``", "arguments"``. (At the
    colon that follows, `arguments_opening` takes over.)"""
    rest = text.lstrip()
    for opener in (tag, *_OPENERS) if tag else _OPENERS:
        if rest.startswith(opener):
            rest = rest[len(opener) :].lstrip()
            break
        if opener.startswith(rest):
            return True
    for literal in ("{", '"name"', ":", '"'):
        if not rest.startswith(literal):
            return literal.startswith(rest)
        rest = rest[len(literal) :] if literal == '"' else rest[len(literal) :].lstrip()
    quote = rest.find('"')
    if quote < 0:
        return tools is None or any(tool.startswith(rest) for tool in tools)
    if tools is not None and rest[:quote] not in tools:
        return False
    rest = rest[quote + 1 :].lstrip()
    for literal in (",", '"arguments"'):
        if not rest.startswith(literal):
            return literal.startswith(rest)
        rest = rest[len(literal) :].lstrip()
    return not rest
