"""Tool-description evals: does the model pick the right tool, with the right arguments?

`evaluate` (and `aevaluate`) send each `EvalCase`'s prompt as the first turn of a fresh `Agent`
and judge the first call (`_judge`), some cases at once (`_schedule`), each ``repeat`` times; the
`EvalReport` they return is `report`'s. No tool ever runs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._async import run_to_completion
from ..agent.events import TextDelta, ToolCallEvent, TurnEnd
from ..agent.loop import Agent
from ..errors import SettingsError
from ..models.base import Model
from ..protocols.base import ToolProtocol
from ..protocols.registry import get_protocol
from ..tools.core import Tool, ToolCall
from ._judge import EvalCase, check_cases, judge
from ._schedule import run_jobs
from ._tool_block import measure_tool_block, tool_block_text, tool_digests
from .report import EvalReport, EvalRow, stopped_note

__all__ = ["TEXT_LIMIT", "EvalCase", "EvalReport", "EvalRow", "aevaluate", "check_cases", "evaluate"]

TEXT_LIMIT = 300
"""Characters of answer text, with no call begun, after which an eval stops reading an answer."""

RowCallback = Callable[[EvalRow, int, int], None]
"""Called as ``on_row(row, done, total)`` as each case (each run of it) finishes: ``done`` of ``total`` are done."""


async def aevaluate(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    *,
    tools: Iterable[Tool],
    model: Model | str | None,
    protocol: str | ToolProtocol = "xml",
    system: str | None = None,
    text_limit: int | None = TEXT_LIMIT,
    on_row: RowCallback | None = None,
    concurrency: int = 1,
    repeat: int = 1,
) -> EvalReport:
    """Ask the model each case's prompt (``repeat`` times) and judge the first tool call it makes.

    Each prompt is the first turn of a fresh `Agent` with these tools. Reading stops at the first
    call (no tool runs) or after ``text_limit`` characters of text with no call begun. A case
    passes only when all its runs pass. The rules a person reads are docs/guides/evals.md's.

    Args:
        cases: `EvalCase` values, or dicts with the same keys.
        tools: The tools offered to the model.
        model: A `Model`, or a name as `Agent` takes it.
        protocol: How tools reach the model, as for `Agent` (``"xml"``, ``"native"``, ...).
        system: Your instructions, as for `Agent`.
        text_limit: Characters of text with no call begun after which reading stops; None
            reads every answer to its end (or its first call).
        on_row: Called as ``on_row(row, done, total)`` with each `EvalRow`, in the cases' order.
        concurrency: How many cases run at once (at most the model's ``max_concurrency``).
        repeat: How many times each case is asked.

    Returns:
        An `EvalReport`: the rows, the tools block's size, timings, the model's name and the
        tools' digests (what `baseline.check_baseline` compares).

    Raises:
        SettingsError: Before any case runs, listing every malformed case, unknown tool, protocol
            or non-positive ``text_limit`` / ``concurrency`` / ``repeat``.
        ModelError: The model (or its tokenizer) failed; the eval stops there.
    """
    tools = list(tools)
    checked = check_cases(cases, tools)
    if text_limit is not None and (
        isinstance(text_limit, bool) or not isinstance(text_limit, int) or text_limit < 1
    ):
        raise SettingsError(f"text_limit must be a whole number of at least 1, or None; got {text_limit!r}")
    for name, value in (("concurrency", concurrency), ("repeat", repeat)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SettingsError(f"{name} must be a whole number of at least 1; got {value!r}")
    chosen_protocol = get_protocol(protocol)
    if model is None or isinstance(model, str):
        from ..models.resolve import resolve_model

        model = resolve_model(model)
    most = getattr(model, "max_concurrency", None)
    if isinstance(most, int) and not isinstance(most, bool) and most >= 1:
        concurrency = min(concurrency, most)
    by_name = {t.name: t for t in tools}

    async def run_one(number: int) -> EvalRow:  # job ``number``: case number // repeat
        agent = Agent(model, tools=tools, protocol=chosen_protocol, system=system, max_turns=2)
        return await _row(agent, checked[number // repeat], text_limit, by_name)

    started = time.perf_counter()
    rows, note = await run_jobs(len(checked) * repeat, run_one, concurrency=concurrency, on_done=on_row)
    seconds = time.perf_counter() - started
    # Counted last: by then a local model is loaded, and its own tokenizer counts.
    block = await measure_tool_block(tool_block_text(chosen_protocol, tools, system), model)
    return EvalReport(
        rows,
        tool_block=block,
        seconds=seconds,
        concurrency=concurrency,
        repeat=repeat,
        notes=[note] if note else [],
        model=getattr(model, "name", None) or type(model).__name__,
        tools=tool_digests(tools),
    )


async def _row(agent: Agent, case: EvalCase, text_limit: int | None, by_name: Mapping[str, Tool]) -> EvalRow:
    """One case asked and judged."""
    started = time.perf_counter()
    call, stopped_after = await _first_call(agent, case.prompt, text_limit)
    elapsed = time.perf_counter() - started
    verdict = judge(case, call, by_name)
    reason = verdict.reason
    if reason and stopped_after is not None:
        reason += " " + stopped_note(stopped_after)
    chosen, arguments = (call.name, dict(call.arguments)) if call else (None, {})
    return EvalRow(
        case.prompt,
        case.category,
        case.tool,
        chosen,
        arguments,
        not reason,
        reason,
        elapsed,
        stopped_after,
        verdict.executes,
        verdict.arguments_match,
        verdict.made_up,
        dict(case.arguments),
    )


def evaluate(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    *,
    tools: Iterable[Tool],
    model: Model | str | None,
    protocol: str | ToolProtocol = "xml",
    system: str | None = None,
    text_limit: int | None = TEXT_LIMIT,
    on_row: RowCallback | None = None,
    concurrency: int = 1,
    repeat: int = 1,
) -> EvalReport:
    """`aevaluate` from synchronous code (also in a notebook cell, where ``on_row`` is called
    on another thread)."""
    return run_to_completion(
        aevaluate(
            cases,
            tools=tools,
            model=model,
            protocol=protocol,
            system=system,
            text_limit=text_limit,
            on_row=on_row,
            concurrency=concurrency,
            repeat=repeat,
        )
    )


async def _first_call(
    agent: Agent, prompt: str, text_limit: int | None
) -> tuple[ToolCall | None, int | None]:
    """The first call of the agent's first turn (or None), and where reading stopped early (or None).

    Returning closes the agent's stream, which closes the model's: generation stops there, before
    any tool could run.
    """
    shown = 0
    async with contextlib.aclosing(agent.stream(prompt)) as events:
        async for event in events:
            if isinstance(event, ToolCallEvent):
                return event.call, None
            if isinstance(event, TurnEnd):
                return None, None
            if isinstance(event, TextDelta) and text_limit is not None:
                shown += len(event.text)
                if shown >= text_limit:
                    return None, shown
    return None, None  # pragma: no cover - a stream always ends its first turn
