"""Keeping a long conversation inside the model's context window: what is sent, shortened or left out.

Before each request `Compaction.fit` measures what would be sent; when that and a margin for the
answer would not fit, the policy (`CONTEXT_POLICIES`) decides: ``"error"`` raises `ContextFull`;
``"compact"`` shortens old tool results and leaves out the oldest whole exchanges until the
request fills at most `LOW_WATER` of the window (so later requests only append, and a server's
prompt cache stays valid); ``"summarize"`` also puts the model's summary where they were
(`_summary`); ``"off"`` sends it as it is. A `Compaction` is a view over `Agent.messages`, which
keep every message. Sizes are estimated from characters and scaled by the backend's last reported
count, the same whether a cassette records or replays. docs/guides/context.md has the rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from ...models.base import Model, ModelError
from ...tools.calls import is_tool_result
from . import CHARACTERS_PER_TOKEN
from ._summary import summary_budget, summary_message, summary_request, write_summary

__all__ = ["CONTEXT_POLICIES", "LOW_WATER", "Compacted", "Compaction", "ContextFull", "ContextPolicy"]

ContextPolicy = Literal["compact", "summarize", "error", "off"]
CONTEXT_POLICIES = ("compact", "summarize", "error", "off")
LOW_WATER = 0.6
"""After a compaction, the request fills at most this share of the window (less the answer's margin)."""
_PER_MESSAGE = 6  # tokens of chat format around each message (role tags, separators), estimated
_KEEP_HEAD, _KEEP_TAIL = 400, 200  # characters of a shortened result kept from its start and end
_ANSWER_MARGIN = 1024  # tokens left for the answer when the request says nothing (at most a quarter)


class ContextFull(ModelError):
    """The request does not fit the model's context window (and the policy could not make it fit)."""


@dataclass(frozen=True)
class Compacted:
    """What one compaction did (the `events.ContextCompacted` event carries it)."""

    shortened: int
    """Tool results shortened by this compaction."""
    left_out: int
    """Whole exchanges left out by this compaction."""
    before: int
    after: int
    """The request's estimated size in tokens, before and after."""
    window: int
    summarized: int | None = None
    """The summary's estimated tokens, when the exchanges left out were summarized."""
    summary_failed: str | None = None
    """Why they were left out without a summary, when writing one failed."""

    def text(self) -> str:
        """One line for the transcript: ``context: shortened 2 tool results and left out ...``."""
        parts = []
        if self.shortened:
            parts.append(f"shortened {self.shortened} tool result{'s' * (self.shortened != 1)}")
        if self.left_out:
            left = f"left out the {self.left_out} oldest exchange{'s' * (self.left_out != 1)}"
            if self.summarized is not None:
                left += f" (summarized in about {self.summarized:,} tokens)"
            elif self.summary_failed:
                left += f" (not summarized: {self.summary_failed})"
            parts.append(left)
        return (
            f"context: {' and '.join(parts)} to fit the model's window of {self.window:,} tokens"
            f" (about {self.before:,} -> {self.after:,} tokens)"
        )


@dataclass
class Compaction:
    """The view of a conversation that is sent: how many leading messages are left out, and which
    later ones are sent shortened (by index in the whole conversation)."""

    dropped: int = 0
    """Leading messages not sent (whole exchanges)."""
    shortened: dict[int, str] = field(default_factory=dict)
    """Messages sent with this content instead of their own."""
    calibration: float = 1.0
    """Reported size over estimated size of the last request (estimates only)."""
    summary: str = ""
    """The model's summary of the messages left out (``"summarize"``), sent in their place."""
    summarizing: list[Mapping[str, Any]] = field(default_factory=list)
    """The messages (as they were sent) that the last `fit` left out and the summary does not
    cover yet: what the ``"summarize"`` policy's next summary is written from."""

    def reset(self) -> None:
        self.dropped, self.calibration, self.summary = 0, 1.0, ""
        self.summarizing = []
        self.shortened.clear()

    def view(self, messages: Sequence[Mapping[str, Any]], *, summary: bool = True) -> list[Mapping[str, Any]]:
        """The messages as sent: the ones left out missing (or their summary in their place), the
        shortened ones shortened."""
        if self.dropped > len(messages):  # the conversation was cut short elsewhere: start over
            self.reset()
        sent: list[Mapping[str, Any]] = []
        if summary and self.summary and self.dropped:
            sent.append(summary_message(self.summary))
        for index in range(self.dropped, len(messages)):
            message = messages[index]
            if index in self.shortened:  # of the message's own type: still known as a tool result
                kind = cast("type[dict[str, Any]]", type(message))  # a dict, or a dict subclass
                message = kind({**message, "content": self.shortened[index]})
            sent.append(message)
        return sent

    def sent_at(self, index: int) -> int:
        """Where message ``index`` of the conversation is in a request (after the system prompt)."""
        return 1 + index - self.dropped + bool(self.summary and self.dropped)

    def fit(
        self,
        system: Mapping[str, Any],
        messages: Sequence[Mapping[str, Any]],
        run_start: int,
        *,
        window: int | None,
        answer: int | None,
        policy: ContextPolicy,
        extra: int = 0,
    ) -> Compacted | None:
        """Make the request fit the window by the policy; what was done, or None when nothing was.

        Args:
            system: The system message (never changed).
            messages: The whole conversation (`Agent.messages`), this run's included.
            run_start: Where this run's prompt is in ``messages`` (it and what follows are kept).
            window: The model's window in tokens; None (not known): nothing is done.
            answer: Tokens the answer may take (``num_predict``), or None for a default margin.
            policy: ``"compact"``, ``"summarize"`` (`summarizing` is then what the summary must
                cover), ``"error"`` or ``"off"`` (send it as it is).
            extra: Tokens the request takes besides its messages (native tools' schemas).

        Raises:
            ContextFull: The request does not fit, and the policy is ``"error"`` or compacting
                could not make it fit.
        """
        if window is None or policy == "off":
            return None
        margin = min(answer if answer and answer > 0 else _ANSWER_MARGIN, window // 4)
        budget = window - margin
        size = _Sizer(self.calibration)
        fixed = size.message(system) + extra
        before = fixed + sum(size.message(m) for m in self.view(messages))
        self.summarizing = []
        if before <= budget:
            return None
        if policy == "summarize":  # sized as the room kept for it, whatever the summary before was
            fixed += summary_budget(window) + _PER_MESSAGE
        if policy == "error":
            raise ContextFull(
                _too_big(before, window, margin, "AgentMagics.context = 'compact' (Agent(context='compact'))")
            )
        target = int(budget * LOW_WATER)
        shortened = left_out = 0
        total = before

        def sent_size() -> int:
            return fixed + sum(size.message(m) for m in self.view(messages, summary=False))

        # 1. The oldest results of earlier runs, shortened.
        for index in _results(messages, self.dropped, run_start):
            if total <= target:
                break
            if self._shorten(messages, index):
                shortened += 1
                total = sent_size()
        # 2. A run too big on its own has its results shortened first: leaving out everything
        #    before it would not be enough, and what it needs anyway may be all it needs.
        own = _results(messages, run_start, len(messages))

        def run_size() -> int:
            return fixed + sum(
                size.message(m) for m in self.view(messages, summary=False)[run_start - self.dropped :]
            )

        for index in own:
            if total <= target or run_size() <= int(budget * LOW_WATER):
                break
            if self._shorten(messages, index):
                shortened += 1
                total = sent_size()
        # 3. The oldest whole exchanges, left out.
        as_sent = dict(enumerate(self.view(messages, summary=False), start=self.dropped))
        first = self.dropped
        for boundary in _exchanges(messages, self.dropped, run_start):
            if total <= target:
                break
            left_out += 1
            self.dropped = boundary
            self.shortened = {i: text for i, text in self.shortened.items() if i >= boundary}
            total = sent_size()
        # 4. The run's other results, shortened, only as far as needed to fit at all.
        for index in own:
            if total <= budget:
                break
            if self._shorten(messages, index):
                shortened += 1
                total = sent_size()
        if total > budget:
            raise ContextFull(_too_big(total, window, margin, None))
        if policy == "summarize" and left_out:
            self.summarizing = [as_sent[i] for i in range(first, self.dropped)]
        return Compacted(shortened, left_out, before, total, window)

    def _shorten(self, messages: Sequence[Mapping[str, Any]], index: int) -> bool:
        if index in self.shortened:
            return False
        text = str(messages[index].get("content", ""))
        if len(text) <= _KEEP_HEAD + _KEEP_TAIL + 100:
            return False
        cut = len(text) - _KEEP_HEAD - _KEEP_TAIL
        note = f"\n[... {cut:,} characters of this tool result were cut to fit the context window ...]\n"
        self.shortened[index] = text[:_KEEP_HEAD] + note + text[-_KEEP_TAIL:]
        return True

    async def summarize(self, model: Model, compacted: Compacted) -> Compacted:
        """Have ``model`` write the summary of what `fit` just left out (``"summarize"``); what was
        done, with the summary's size, or why there is none (the model failed or wrote nothing).

        Raises:
            CassetteError: A cassette has no recording of the summary's request (the run could not
                go on as recorded without it).
        """
        from ...models.base import CassetteError

        left, self.summarizing = self.summarizing, []
        if not left:
            return compacted
        budget = summary_budget(compacted.window)
        request = summary_request(left, self.summary, window=compacted.window, budget=budget)
        size = _Sizer(self.calibration)

        def sent(summarized: int | None = None, failed: str | None = None) -> Compacted:
            # `fit` kept room for a summary; the request's size now counts the one that is sent.
            shown = size.message(summary_message(self.summary)) if self.summary else 0
            after = compacted.after - budget - _PER_MESSAGE + shown
            return replace(compacted, after=after, summarized=summarized, summary_failed=failed)

        try:
            text = await write_summary(model, request, budget)
        except CassetteError:
            raise
        except ModelError as error:
            return sent(failed=str(error).splitlines()[0][:200] or type(error).__name__)
        if not text:
            return sent(failed="the model wrote nothing")
        self.summary = text
        return sent(summarized=size.message(summary_message(text)))

    def calibrate(self, sent: Sequence[Mapping[str, Any]], reported: int | None) -> None:
        """After a request (``sent``: its messages): how far the characters' estimate of it was from
        the size the backend reported; later estimates are scaled by that."""
        if not reported:
            return
        estimated = sum(_Sizer(1.0).message(m) for m in sent)
        if estimated > 0:
            self.calibration = min(max(reported / estimated, 0.5), 3.0)


class _Sizer:
    """Tokens of a message, estimated from its characters and scaled by the calibration.

    Not the model's tokenizer, on purpose: a cassette replays without its model, and the same
    conversation must be compacted the same way when it is recorded and when it is replayed. The
    calibration comes from the sizes the backend reported, which a cassette replays too.
    """

    def __init__(self, calibration: float):
        self._scale = calibration

    def message(self, message: Mapping[str, Any]) -> int:
        text = str(message.get("content", ""))
        calls = message.get("tool_calls")
        if calls:
            text += str(calls)
        return math.ceil(len(text) / CHARACTERS_PER_TOKEN * self._scale) + _PER_MESSAGE


def _is_prompt(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and not is_tool_result(message)


def _results(messages: Sequence[Mapping[str, Any]], start: int, end: int) -> list[int]:
    # Known by how they were made (`is_tool_result`), never by their text: a person's prompt that
    # begins "<tool_response" is the person's, and is never shortened.
    return [i for i in range(start, min(end, len(messages))) if is_tool_result(messages[i])]


def _exchanges(messages: Sequence[Mapping[str, Any]], start: int, run_start: int) -> list[int]:
    """Where each exchange after the first (from ``start``) begins, before ``run_start``: leaving
    out up to one of these leaves out whole exchanges only. The run's own prompt is the last."""
    prompts = [i for i in range(start + 1, run_start) if _is_prompt(messages[i])]
    return [*prompts, run_start] if run_start > start else []


def _too_big(size: int, window: int, margin: int, fix: str | None) -> str:
    text = (
        f"The conversation does not fit the model's context window: the request is about {size:,} tokens,"
        f" and the window is {window:,} with {margin:,} left for the answer."
    )
    if fix:
        return f"{text} Start over (%agent reset, or %%agent --new), or let it be compacted: {fix}."
    return (
        f"{text} Even compacted (old results shortened, old exchanges left out) it does not fit: this run's"
        " own prompt and results are too big. Start over with a shorter prompt, lower max_output_chars,"
        " or use a model with a larger window (num_ctx)."
    )
