"""Tool-description evals: does the model pick the right tool, with the right arguments?

For people writing tools: each `EvalCase` is a prompt and the call it should lead to. `evaluate`
sends each prompt as the first turn of a fresh `Agent` (the same system prompt and request) and
stops reading at the first tool call, so no tool ever runs. It also stops once the answer is
clearly not a call (``text_limit``). ``%tools eval CASES`` shows the report, its rows appearing
as the cases finish (``on_row``). The report's rows and rendering are in `_report`.
With ``concurrency=N``, N cases run at once: serving engines (vLLM, SGLang, llama-server) batch
concurrent requests, so an eval against one finishes sooner; a model that answers one request at
a time (``max_concurrency = 1``: the embedded `LlamaCppModel`, `ScriptedModel`) runs them in turn.

Besides pass or fail, each row says whether the call could run, whether its arguments were right
and whether it made up a tool or an argument name (`EvalRow`), and the report sums these up as
the seed design's metrics (`EvalReport.summary`), with the size of the tools block the model was
shown (`_tool_block`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._async import run_to_completion
from ..agent.events import TextDelta, ToolCallEvent, TurnEnd
from ..agent.loop import Agent
from ..errors import ToolArgumentsError
from ..models.base import Model
from ..protocols.base import ToolProtocol
from ..protocols.registry import get_protocol
from ..tools.core import Tool, ToolCall
from ._report import EvalReport, EvalRow, stopped_note
from ._tool_block import measure_tool_block, tool_block_text

__all__ = ["TEXT_LIMIT", "EvalCase", "EvalReport", "EvalRow", "aevaluate", "check_cases", "evaluate"]

_UNREADABLE = "(unreadable)"  # the name the agent gives a call it could not parse
TEXT_LIMIT = 300
"""Characters of answer text, with no call begun, after which an eval stops reading an answer."""

RowCallback = Callable[[EvalRow, int, int], None]
"""Called as ``on_row(row, done, total)`` as each case finishes: ``done`` of ``total`` are done."""


@dataclass(frozen=True)
class EvalCase:
    """A prompt and the tool call it should lead to."""

    prompt: str
    """What the person asks."""
    tool: str | None
    """The tool the model should call; None: it should answer without a tool."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """Arguments the call must have (a subset), compared after validation with the tool."""
    category: str = ""
    """A label to group results by, e.g. ``"understanding"``, ``"parameters"``, ``"refusal"``."""


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
) -> EvalReport:
    """Ask the model each case's prompt once and check the first tool call it makes.

    Each prompt is the first turn of a fresh `Agent` with these tools, so the model gets exactly
    the request an agent would send. Reading stops at the first call (no tool is run), or once
    the answer has shown ``text_limit`` characters of text and no call has begun: the model's
    stream is then closed, so a local model stops generating. The eval scores only the first call
    of the first turn, and a refusal can go on for minutes on a small model.

    The rule counts only text the protocol's parser has shown as text, which never includes a
    call or what may still open one (with ``xml``, a ``<tool_c`` at the end of the text so far,
    or an answer that starts as a bare ``{"name": ...}`` call). Thinking does not count. A model
    may write a sentence or two before its call ("Let me check the weather.\\n\\n<tool_call>...");
    300 characters leave room for that and stop a refusal after a few seconds. A model that
    writes more before calling is scored as not calling, and the row says where reading stopped:
    its ``stopped_after`` is set, and a case that expected a tool fails with "expected X, chose
    none (no call in the first 300 characters)". The ``json`` protocol shows its answer only
    when it is complete, so its answers are always read to the end.

    After the cases, the tools block the model was shown (`_tool_block.tool_block_text`) is
    measured: in tokens of the model's own tokenizer when the model has a ``count_tokens(text)``
    method (`LlamaCppModel`), else estimated as characters / 4 (the report says so).

    Args:
        cases: `EvalCase` values, or dicts with the same keys.
        tools: The tools offered to the model.
        model: A `Model`, or a name as `Agent` takes it.
        protocol: How tools reach the model, as for `Agent` (``"xml"``, ``"native"``, ...).
        system: Your instructions, as for `Agent`.
        text_limit: Characters of text with no call begun after which reading stops; None
            reads every answer to its end (or its first call).
        on_row: Called with each `EvalRow` as its case finishes, in the cases' order, as
            ``on_row(row, done, total)`` (``done`` counts from 1); e.g. to show progress. With
            ``concurrency``, a case that finishes before an earlier one waits for it here.
        concurrency: How many cases run at once, for a server that batches requests. A model
            whose ``max_concurrency`` attribute is lower gets that many (the embedded model: one).
            Each row's ``seconds`` then includes its wait at the server.

    Returns:
        An `EvalReport` with one row per case, the tools block's size, the eval's wall time and
        the concurrency used (`EvalReport.cases_per_second`).

    Raises:
        ValueError: A case is malformed or names a tool that is not offered (all problems
            listed), ``protocol`` names no protocol, or ``text_limit`` or ``concurrency`` is not
            a positive whole number (``text_limit`` may be None); before any case runs.
        ModelError: The model failed (or its tokenizer could not be loaded); the eval stops there.
    """
    tools = list(tools)
    checked = check_cases(cases, tools)
    if text_limit is not None and (
        isinstance(text_limit, bool) or not isinstance(text_limit, int) or text_limit < 1
    ):
        raise ValueError(f"text_limit must be a whole number of at least 1, or None; got {text_limit!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number of at least 1; got {concurrency!r}")
    chosen_protocol = get_protocol(protocol)
    if model is None or isinstance(model, str):
        from ..models.resolve import resolve_model

        model = resolve_model(model)
    most = getattr(model, "max_concurrency", None)
    if isinstance(most, int) and not isinstance(most, bool) and most >= 1:
        concurrency = min(concurrency, most)
    by_name = {t.name: t for t in tools}
    rows: list[EvalRow | None] = [None] * len(checked)
    reported, failed = 0, False
    gate = asyncio.Semaphore(concurrency)

    async def run(number: int, case: EvalCase) -> None:
        nonlocal reported, failed
        async with gate:
            if failed:  # a case failed: start no more (the rest are being cancelled)
                return
            agent = Agent(model, tools=tools, protocol=chosen_protocol, system=system, max_turns=2)
            try:
                rows[number] = await _row(agent, case, text_limit, by_name)
            except BaseException:
                failed = True
                raise
        # In the cases' order: report every finished row that no unfinished one comes before.
        while reported < len(rows) and rows[reported] is not None:
            reported += 1
            if on_row is not None:
                on_row(rows[reported - 1], reported, len(rows))

    started = time.perf_counter()
    # Made in order, so the semaphore lets them in in order: with concurrency 1, one at a time.
    tasks = [asyncio.ensure_future(run(number, case)) for number, case in enumerate(checked)]
    try:
        await asyncio.gather(*tasks)
    finally:  # a failing case (or a cancelled eval) stops the others
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    seconds = time.perf_counter() - started
    # Counted last: by then a local model is loaded, and its own tokenizer counts.
    block = await measure_tool_block(tool_block_text(chosen_protocol, tools, system), model)
    return EvalReport(rows, tool_block=block, seconds=seconds, concurrency=concurrency)


async def _row(agent: Agent, case: EvalCase, text_limit: int | None, by_name: Mapping[str, Tool]) -> EvalRow:
    """One case asked and judged."""
    started = time.perf_counter()
    call, stopped_after = await _first_call(agent, case.prompt, text_limit)
    elapsed = time.perf_counter() - started
    verdict = _judge(case, call, by_name)
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


@dataclass(frozen=True)
class _Verdict:
    """What `_judge` found: the fields of the same names in `EvalRow`."""

    reason: str
    executes: bool | None
    arguments_match: bool | None
    made_up: tuple[str, ...]


def _judge(case: EvalCase, call: ToolCall | None, by_name: Mapping[str, Tool]) -> _Verdict:
    """How the call compares with the case: why it does not match (empty when it does), and
    whether it would run, had the arguments right and made anything up (see `EvalRow`)."""
    if call is None:
        return _Verdict("" if case.tool is None else f"expected {case.tool}, chose none", None, None, ())
    tool = None if call.name == _UNREADABLE else by_name.get(call.name)
    values, problems = None, []
    if tool is not None:
        try:
            values = tool.validate(call.arguments)
        except ToolArgumentsError as error:
            problems = error.problems
    made_up = _made_up(call, tool)
    executes = values is not None
    if case.tool is None:
        return _Verdict(f"expected no tool, chose {call.name}", executes, None, made_up)
    if call.name != case.tool:
        if call.name == _UNREADABLE:
            return _Verdict(f"expected {case.tool}, the call could not be read", False, None, ())
        return _Verdict(f"expected {case.tool}, chose {call.name}", executes, None, made_up)
    if values is None:
        return _Verdict("invalid arguments: " + "; ".join(problems), False, False, made_up)
    mismatches = []
    for name, wanted in case.arguments.items():
        if name not in values:
            mismatches.append(f"argument {name}: expected {wanted!r}, got nothing")
        elif values[name] != wanted and call.arguments.get(name) != wanted:
            mismatches.append(f"argument {name}: expected {wanted!r}, got {values[name]!r}")
    return _Verdict("; ".join(mismatches), True, not mismatches, made_up)


def _made_up(call: ToolCall, tool: Tool | None) -> tuple[str, ...]:
    """The names in a readable call that the offered tools do not have: the tool's name when no
    offered tool has it, else the argument names its schema does not declare, in the call's order."""
    if call.name == _UNREADABLE:
        return ()
    if tool is None:
        return (call.name,)
    declared = tool.parameters.get("properties", {})
    arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
    return tuple(str(name) for name in arguments if name not in declared)


def check_cases(cases: Iterable[EvalCase | Mapping[str, Any]], tools: Iterable[Tool]) -> list[EvalCase]:
    """The cases as `EvalCase` values, checked against the tools offered.

    Raises:
        ValueError: A case is malformed or names a tool that is not offered; every problem is listed.
    """
    names = [t.name for t in tools]
    known = {f.name for f in dataclasses.fields(EvalCase)}
    problems, checked = [], []
    for number, item in enumerate(cases, 1):
        if isinstance(item, Mapping):
            unknown = sorted(set(item) - known)
            missing = [key for key in ("prompt", "tool") if key not in item]
            if unknown or missing:
                detail = [f"unknown keys {', '.join(unknown)}" if unknown else ""]
                detail.append(
                    f"missing {', '.join(missing)} (tool None: no tool expected)" if missing else ""
                )
                problems.append(f"case {number}: " + "; ".join(d for d in detail if d))
                continue
            item = EvalCase(**item)
        elif not isinstance(item, EvalCase):
            problems.append(f"case {number}: an EvalCase or a dict, got {type(item).__name__}")
            continue
        if item.tool is not None and item.tool not in names:
            problems.append(
                f"case {number}: no tool named {item.tool!r} (tools: {', '.join(names) or 'none'})"
            )
        checked.append(item)
    if problems:
        raise ValueError("Invalid eval cases:\n" + "\n".join(f"- {p}" for p in problems))
    return checked
