"""Running one turn's tool calls: validate, ask for approval, execute in parallel, in time limits.

`CallRunner` holds an agent's settings for one run, and the results of the calls that succeeded
in it (an identical call is answered with the earlier result instead of running again).
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolArgumentsError
from ..protocols.parsing import MalformedCall
from ..tools.core import Tool, ToolCall, ToolResult
from ._tool_threads import ToolThreads, call_tool
from .approvals import ApprovalRequest, Approved, Approver, Decision, Denied, DenyAll
from .events import AgentEvent, ApprovalEvent, ApprovalRequested, ToolResultEvent

__all__ = ["CallRunner"]

# One set of daemon threads for every agent: %%agent makes an agent per cell.
_THREADS = ToolThreads()

_NO_APPROVER = DenyAll(
    "this tool needs a person's approval and no approver was given"
    " (pass approver=AutoApprove() to run it without asking)."
)


@dataclass
class CallRunner:
    """Validates, approves and runs the calls of one run's turns (the fields are `Agent`'s)."""

    approver: Approver | None
    ask: str
    max_turns: int
    max_workers: int
    tool_timeout: float | None
    max_output_chars: int | None
    repeat_calls: bool
    answered: dict[str, ToolResult] = field(default_factory=dict)
    """This run's successful calls, by tool and validated arguments."""

    async def run(
        self,
        calls: list[tuple[ToolCall, MalformedCall | None]],
        offered: list[Tool],
        last: bool,
        results: dict[int, ToolResult],
    ) -> AsyncIterator[AgentEvent]:
        """Validate, approve and run one turn's calls, filling ``results`` by call index."""
        by_name = {t.name: t for t in offered}
        runnable: list[tuple[int, ToolCall, Tool, dict[str, Any]]] = []
        for index, (call, malformed) in enumerate(calls):
            early = self._precheck(call, malformed, by_name, last)
            if isinstance(early, ToolResult):
                results[index] = early
            else:
                runnable.append((index, call, *early))
        asking = [item for item in runnable if item[2].approval or self.ask == "every"]
        if asking:
            yield ApprovalRequested(tuple(call for _, call, _, _ in asking))
        try:
            decisions = await self._decide(asking)
        except (asyncio.CancelledError, KeyboardInterrupt):  # stopped while waiting: none of them ran
            for index, call, _, _ in asking:
                results[index] = ToolResult(call, "Not run: the run was stopped before a decision.", kind="denied")
            raise
        edited: dict[int, dict[str, Any]] = {}
        for (index, call, tool, _), decision in zip(asking, decisions):
            yield ApprovalEvent(call, decision)
            if isinstance(decision, Denied):
                results[index] = ToolResult(call, f"Denied: {decision.message}", kind="denied")
            elif decision.arguments is not None:
                try:  # what runs is always validated, also when a person typed it
                    edited[index] = tool.validate(dict(decision.arguments))
                except ToolArgumentsError as error:
                    results[index] = ToolResult(
                        call, f"Not run: the arguments given at approval were invalid.\n{error}", kind="invalid_arguments"
                    )
        for index in sorted(results):
            yield ToolResultEvent(results[index])
        values_of = {index: edited.get(index, values) for index, _, _, values in runnable}
        slots = asyncio.Semaphore(self.max_workers)
        tasks = [
            asyncio.ensure_future(self._execute(index, call, tool, values_of[index], slots))
            for index, call, tool, _ in runnable
            if index not in results
        ]
        try:
            for next_done in asyncio.as_completed(tasks):
                index, result = await next_done
                if index in edited:
                    result = _ran_with(result, edited[index])
                results[index] = result
                if result.ok:
                    self.answered[_call_key(result.call.name, values_of[index])] = result
                yield ToolResultEvent(result)
        finally:
            for task in tasks:
                task.cancel()

    def _precheck(
        self, call: ToolCall, malformed: MalformedCall | None, by_name: dict[str, Tool], last: bool
    ) -> ToolResult | tuple[Tool, dict[str, Any]]:
        """A result for a call that cannot run, else its tool and validated arguments."""
        if malformed is not None:
            raw = malformed.raw if len(malformed.raw) <= 300 else malformed.raw[:300] + "..."
            return ToolResult(
                call, f"Error: could not read a tool call: {malformed.reason}\nThe text was: {raw}", kind="parse_error"
            )
        if last:
            return ToolResult(
                call,
                f"Not run: the limit of {self.max_turns} turns was reached; answer without tools.",
                kind="denied",
            )
        tool = by_name.get(call.name)
        if tool is None:
            names = list(by_name)
            close = difflib.get_close_matches(call.name, names, n=1)
            guess = f" Did you mean {close[0]!r}?" if close else ""
            offered = ", ".join(names) if names else "none"
            return ToolResult(
                call, f"Error: there is no tool named {call.name!r}.{guess} The tools are: {offered}.", kind="unknown_tool"
            )
        try:
            values = tool.validate(call.arguments)
        except ToolArgumentsError as error:
            return ToolResult(
                call, f"Error: {error}\nCall {tool.name} again with corrected arguments.", kind="invalid_arguments"
            )
        earlier = None if self.repeat_calls else self.answered.get(_call_key(tool.name, values))
        if earlier is not None:  # small models loop on a call whose result they already have
            return ToolResult(
                call,
                f"Not run again: {tool.name} was already called with these arguments, and its result"
                f" was:\n{earlier.output}\nUse that result to answer, or call a different tool.",
                kind="denied",
            )
        return tool, values

    async def _decide(self, asking: list[tuple[int, ToolCall, Tool, dict[str, Any]]]) -> list[Decision]:
        if not asking:
            return []
        approver = self.approver or _NO_APPROVER
        requests = [ApprovalRequest(call, tool, values) for _, call, tool, values in asking]
        decisions = list(await approver.approve(requests))
        if len(decisions) != len(requests) or not all(isinstance(d, (Approved, Denied)) for d in decisions):
            reason = (
                f"the approver {approver!r} did not return one Approved or Denied per call"
                f" ({len(requests)} asked, {len(decisions)} answered), so none of them ran."
            )
            return [Denied(reason)] * len(requests)
        return decisions

    async def _execute(
        self, index: int, call: ToolCall, tool: Tool, values: dict[str, Any], slots: asyncio.Semaphore
    ) -> tuple[int, ToolResult]:
        """Run one validated call on a tool thread, within its time limit.

        Whatever the tool does (raise ``SystemExit`` or any other ``BaseException``, return a
        value whose ``repr`` raises, block forever), the outcome is a result for this call alone.
        """
        timeout = tool.timeout if tool.timeout is not None else self.tool_timeout
        async with slots:  # released on a timeout too: a hung call does not hold a place
            started = time.perf_counter()
            try:
                outcome = await asyncio.wait_for(_THREADS.run(call_tool, tool, values, self.max_output_chars), timeout)
            except asyncio.TimeoutError:
                return index, ToolResult(call, f"Timed out after {timeout:g} s", kind="timeout", duration=timeout)
        elapsed = time.perf_counter() - started
        value, text, error = outcome
        if error is not None:
            return index, ToolResult(call, text, kind="error", exception=error, duration=elapsed)
        return index, ToolResult(call, text, value=value, duration=elapsed)


def _ran_with(result: ToolResult, values: dict[str, Any]) -> ToolResult:
    """``result`` of a call a person changed before approving, telling the model so."""
    changed = json.dumps(values, ensure_ascii=False, default=repr)
    note = f"(The person changed the arguments before approving; the call ran with {changed}.)\n"
    return dataclasses.replace(result, output=note + result.output)


def _call_key(name: str, values: dict[str, Any]) -> str:
    return name + json.dumps(values, sort_keys=True, default=repr)
