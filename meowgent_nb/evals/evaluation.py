"""Tool-description evals: does the model pick the right tool, with the right arguments?

For people writing tools: each `EvalCase` is a prompt and the call it should lead to. `evaluate`
sends each prompt as the first turn of a fresh `Agent` (the same system prompt and request) and
stops reading at the first tool call, so no tool ever runs. It also stops once the answer is
clearly not a call (``text_limit``). ``%tools eval CASES`` shows the report, its rows appearing
as the cases finish (``on_row``). The report's rows and rendering are in `report`.
With ``concurrency=N``, N cases run at once: serving engines (vLLM, SGLang, llama-server) batch
concurrent requests, so an eval against one finishes sooner; a model that answers one request at
a time (``max_concurrency = 1``: the embedded `LlamaCppModel`, `ScriptedModel`) runs them in turn.
A server that cuts concurrent streams short has the cut cases rerun one at a time (`_schedule`).
With ``repeat=N`` each case runs N times and passes only when all N pass.

Besides pass or fail (judged in `_judge`), each row says whether the call could run, whether its
arguments were right and whether it made up a tool or an argument name (`EvalRow`), and the report sums these up as
the seed design's metrics (`EvalReport.summary`), with the size of the tools block the model was
shown (`_tool_block`).
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
    """Ask the model each case's prompt (``repeat`` times) and check the first tool call it makes.

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

    With ``repeat=N`` each case is asked N times, one run after the other (a model at a
    temperature above 0 may answer differently each time; from a cassette, the N recordings of
    the request replay in turn). The case passes only when all N runs pass (pass^N), and the
    report gives each case's pass count and the flips: cases that passed in some runs and failed
    in others (`EvalReport.passes`, `EvalReport.flips`).

    With ``concurrency`` above 1, a server that cuts a streamed answer short when the next
    request arrives (llama-cpp-python's server by default) does not end the eval: the cut cases
    and those not yet started run one at a time once the others are over, and the report says so
    in one line (see `_schedule`).

    Args:
        cases: `EvalCase` values, or dicts with the same keys.
        tools: The tools offered to the model.
        model: A `Model`, or a name as `Agent` takes it.
        protocol: How tools reach the model, as for `Agent` (``"xml"``, ``"native"``, ...).
        system: Your instructions, as for `Agent`.
        text_limit: Characters of text with no call begun after which reading stops; None
            reads every answer to its end (or its first call).
        on_row: Called with each `EvalRow` as its case (run) finishes, in the cases' order, as
            ``on_row(row, done, total)`` (``done`` counts from 1); e.g. to show progress. With
            ``concurrency``, a case that finishes before an earlier one waits for it here.
        concurrency: How many cases run at once, for a server that batches requests. A model
            whose ``max_concurrency`` attribute is lower gets that many (the embedded model: one).
            Each row's ``seconds`` then includes its wait at the server.
        repeat: How many times each case is asked.

    Returns:
        An `EvalReport` with one row per case (and each run's rows), the tools block's size, the
        eval's wall time, the concurrency used (`EvalReport.cases_per_second`), the model's name
        and the digests of the tools (what a baseline compares, `baseline.check_baseline`).

    Raises:
        SettingsError: A case is malformed or names a tool that is not offered (all problems
            listed), ``protocol`` names no protocol, or ``text_limit``, ``concurrency`` or
            ``repeat`` is not a positive whole number (``text_limit`` may be None); before any
            case runs.
        ModelError: The model failed (or its tokenizer could not be loaded); the eval stops there.
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
