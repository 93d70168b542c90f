"""Running one turn's tool calls: validate, ask for approval, execute in parallel, in time limits.

`CallRunner` is the one path from a request to a running tool, for the agent loop and for
`%tools serve`. It holds the run's `RunSettings`, the results of calls that succeeded (an
identical call gets the earlier result) and how each call failed before (`repeated`). Each
validated call travels as a `PendingCall`; the rules and the tool's approval function decide it
first (`approvals.ruled`), the approver only the calls left asking (`Ask`). What runs is exactly
what was approved, and only an explicit `Approved` runs a call: any other answer is a denial.
A tool marked ``approval="always"`` runs only on a person's decision or a rule's: what another
approver (a policy, `AutoApprove`) approves is denied, and when no person decided, a cassette
being replayed decides by the decision recorded in it (`_person_only`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from ..errors import ApprovalMissing, ToolArgumentsError
from ..protocols.parsing import MalformedCall
from ..tools.core import Tool, ToolCall, ToolResult
from ..tools.output import Shape
from ._settings import RunSettings
from ._tool_threads import ToolThreads, call_tool
from .approvals import (
    Approved,
    Approver,
    Ask,
    DecidedBy,
    Decision,
    Denied,
    DenyAll,
    by_person,
    decide,
    needs_person,
    policy_denial,
    ruled,
    with_facts,
)
from .approvals.decisions import logged
from .events import AgentEvent, ApprovalEvent, ApprovalRequested, ToolResultEvent, ToolRunning
from .repeated import Failure, repeat_notice
from .result import RepeatedFailure
from .rules import RuleError, Rules, trust_forbidden
from .running_call import RUNNING_CALL, Ending, RunningCall, within_limit

__all__ = ["CallRunner", "PendingCall", "RunSettings", "edited_note"]

# One set of daemon threads for every agent: %%agent makes an agent per cell.
_THREADS = ToolThreads()

_UNREADABLE = DecidedBy("rule", "the rules could not be read")
_UNSAID = Denied().message

_NO_APPROVER = DenyAll(
    "this tool needs a person's approval and no approver was given"
    " (pass approver=AutoApprove() to run it without asking)."
)


@dataclass(frozen=True)
class PendingCall:
    """A validated call of one turn, on its way to a decision and a run."""

    index: int
    """Its place among the turn's calls (its key in ``results``)."""
    call: ToolCall
    tool: Tool
    values: dict[str, Any]
    """The validated arguments: what is asked about, and what runs unless a person edits them."""
    ruled: Decision | Ask | None
    """What the rules and the tool's approval function said (see `approvals.ruled`); None: run."""

    @property
    def request(self) -> tuple[ToolCall, Tool, dict[str, Any]]:
        """The call as `approvals.decide` and `decisions.logged` take it."""
        return self.call, self.tool, self.values


@dataclass
class CallRunner:
    """Validates, approves and runs the calls of one run's turns.

    Args:
        settings: The run's settings, shared with the loop that made this runner.
        approver: Decides on the calls that ask; None: they are denied.
        model: The agent's model, for a tool that asks it something (an MCP server's sampling
            request) and for its cassette's tool and decision tapes.
        rules: The agent's rules, asked about every call before the approver (see `approvals.ruled`).
    """

    settings: RunSettings
    _: KW_ONLY
    approver: Approver | None = None
    model: Any = None
    rules: Rules | None = None
    answered: dict[str, ToolResult] = field(default_factory=dict)
    """This run's successful calls, by tool and validated arguments."""
    failures: dict[str, Failure] = field(default_factory=dict)
    """The calls whose last outcome was a failure, by tool and arguments as the model sent them."""
    repeated: RepeatedFailure | None = field(default=None, init=False)
    """Set when a call failed the same way ``max_repeated_failures`` times: the run should end."""
    _turn: int = field(default=0, init=False)

    @property
    def shape(self) -> Shape:
        """How results are shaped into the model's text (see `tools.output`)."""
        settings = self.settings
        return Shape(settings.max_output_chars, settings.max_output_items, settings.max_output_depth)

    async def run(
        self,
        calls: list[tuple[ToolCall, MalformedCall | None]],
        offered: list[Tool],
        last: bool,
        results: dict[int, ToolResult],
    ) -> AsyncIterator[AgentEvent]:
        """Validate, approve and run one turn's calls, filling ``results`` by call index."""
        self._turn += 1
        by_name = {t.name: t for t in offered}
        checked: list[tuple[int, ToolCall, Tool, dict[str, Any]]] = []
        for index, (call, malformed) in enumerate(calls):
            early = self._precheck(call, malformed, by_name, last)
            if isinstance(early, ToolResult):
                results[index] = early if last else self._outcome(early)
            else:
                checked.append((index, call, *early))
        # The rules are asked once every call is checked: a rules file gone bad then ends the run
        # with every early result already in place.
        pending = [
            PendingCall(index, call, tool, values, self._ruled(tool, values, True))
            for index, call, tool, values in checked
        ]
        asking = [each for each in pending if isinstance(each.ruled, Ask)]
        await self._log_ruled(pending)
        if asking:
            notes = tuple(self._untrusted_note(each.tool, each.values) for each in asking)
            yield ApprovalRequested(tuple(each.call for each in asking), notes if any(notes) else ())
        try:
            decisions = await self._decide(asking)
        except (asyncio.CancelledError, KeyboardInterrupt):  # stopped while waiting: none of them ran
            for each in asking:
                results[each.index] = ToolResult(
                    each.call, "Not run: the run was stopped before a decision.", kind="denied"
                )
            raise
        edited: dict[int, dict[str, Any]] = {}
        decided: dict[int, Decision] = {
            **{each.index: each.ruled for each in pending if isinstance(each.ruled, (Approved, Denied))},
            **{each.index: decision for each, decision in zip(asking, decisions)},
        }
        for each in pending:  # in call order: the rules' decisions and the approver's
            if each.index in decided:
                decision = self._settle(each, decided[each.index], results, edited)
                yield ApprovalEvent(each.call, decision, _facts(each.tool, each.values))
                if (
                    isinstance(decision, Denied) and each.index in results
                ):  # what was denied, for expectations
                    results[each.index] = dataclasses.replace(results[each.index], arguments=each.values)
        for index in sorted(results):
            yield ToolResultEvent(results[index])
        values_of = {each.index: edited.get(each.index, each.values) for each in pending}
        slots = asyncio.Semaphore(self.settings.max_workers)
        loop = asyncio.get_running_loop()
        approved = {index for index, decision in decided.items() if isinstance(decision, Approved)}
        to_run = [each for each in pending if each.index not in results]
        running = {
            each.index: RunningCall(
                each.call, loop, self._timeout(each.tool), self.approver, self.model, each.index in approved
            )
            for each in to_run
        }
        for each in to_run:
            yield _running(each.tool, each.call, values_of[each.index], running[each.index].timeout)
        tasks = [
            asyncio.ensure_future(self._execute(each, values_of[each.index], slots, running[each.index]))
            for each in to_run
        ]
        pending_at = {each.index: each for each in pending}
        try:
            for next_done in asyncio.as_completed(tasks):
                index, result = await next_done
                if isinstance(result.exception, ApprovalMissing):  # it needs approval after all: ask now
                    each = dataclasses.replace(pending_at[index], values=values_of[index])
                    yield ApprovalRequested((each.call,))
                    (decision,) = await self._decide([each])
                    decision = self._settle(each, decision, results, edited)
                    yield ApprovalEvent(each.call, decision, _facts(each.tool, each.values))
                    if index in results:
                        yield ToolResultEvent(results[index])
                        continue
                    values_of[index] = edited.get(index, values_of[index])
                    running[index] = again = RunningCall(
                        each.call, loop, self._timeout(each.tool), self.approver, self.model, True
                    )
                    yield _running(each.tool, each.call, values_of[index], again.timeout)
                    index, result = await self._execute(each, values_of[index], slots, again)
                if index in edited:
                    result = dataclasses.replace(result, output=edited_note(edited[index]) + result.output)
                result = dataclasses.replace(result, arguments=values_of[index])
                results[index] = result = self._outcome(result)
                if result.ok:
                    self.answered[_call_key(result.call.name, values_of[index])] = result
                yield ToolResultEvent(result)
        finally:
            for task in tasks:
                task.cancel()
            for each in running.values():  # now, not when the cancelled tasks get to it: see RunningCall
                each.end("stopped")

    def _settle(
        self,
        pending: PendingCall,
        decision: Decision,
        results: dict[int, ToolResult],
        edited: dict[int, dict[str, Any]],
    ) -> Decision:
        """Put what ``decision`` means for a call in ``results`` (a denial, an invalid edit) or
        ``edited`` (arguments a person changed, validated: what runs); returns the decision that
        stands (edited arguments a rule denies are denied: the rules see what would run)."""
        index, call, tool = pending.index, pending.call, pending.tool
        if isinstance(decision, Approved) and decision.arguments is not None:
            try:  # what runs is always validated, also when a person typed it
                if not isinstance(decision.arguments, Mapping):
                    kind = type(decision.arguments).__name__
                    raise ToolArgumentsError(
                        tool.name, [f"they must be an object of named values, got a {kind}"]
                    )
                edited[index] = tool.validate(dict(decision.arguments))
            except ToolArgumentsError as error:
                results[index] = ToolResult(
                    call,
                    f"Not run: the arguments given at approval were invalid.\n{error}",
                    kind="invalid_arguments",
                )
            again = self._ruled(tool, edited[index], False) if index in edited else None
            if isinstance(again, Denied):  # the edit made it a call a rule (or the tool) denies
                decision = Denied(
                    f"{again.message} (The arguments as edited.)",
                    f"{again.reason} (as edited)",
                    None if again.by is None else again.by.edited(),
                )
        if isinstance(decision, Denied):
            results[index] = self._outcome(ToolResult(call, f"Denied: {decision.message}", kind="denied"))
        return decision

    def _precheck(
        self, call: ToolCall, malformed: MalformedCall | None, by_name: dict[str, Tool], last: bool
    ) -> ToolResult | tuple[Tool, dict[str, Any]]:
        """A result for a call that cannot run, else its tool and validated arguments."""
        if malformed is not None:
            raw = malformed.raw if len(malformed.raw) <= 300 else malformed.raw[:300] + "..."
            return ToolResult(
                call,
                f"Error: could not read a tool call: {malformed.reason}\nThe text was: {raw}",
                kind="parse_error",
            )
        if last:
            return ToolResult(
                call,
                f"Not run: the limit of {self.settings.max_turns} turns was reached; answer without tools.",
                kind="denied",
            )
        tool = by_name.get(call.name)
        if tool is None:
            names = list(by_name)
            close = difflib.get_close_matches(call.name, names, n=1)
            guess = f" Did you mean {close[0]!r}?" if close else ""
            where = f" The tools are: {', '.join(names) if names else 'none'}."
            return ToolResult(
                call, f"Error: there is no tool named {call.name!r}.{guess}{where}", kind="unknown_tool"
            )
        try:
            values = tool.validate(call.arguments)
        except ToolArgumentsError as error:
            return ToolResult(
                call,
                f"Error: {error}\nCall {tool.name} again with corrected arguments.",
                kind="invalid_arguments",
            )
        earlier = None if self.settings.repeat_calls else self.answered.get(_call_key(tool.name, values))
        if earlier is not None:  # small models loop on a call whose result they already have
            return ToolResult(
                call,
                arguments=values,
                output=f"Not run again: {tool.name} was already called with these arguments, and its result"
                f" was:\n{earlier.output}\nUse that result to answer, or call a different tool.",
                kind="denied",
            )
        return tool, values

    def _outcome(self, result: ToolResult) -> ToolResult:
        """``result``, counted against the same call's earlier failures; a repeat gets a notice.

        A call (same tool, same arguments) that fails the same way (same kind, same output) as
        the last time it was made counts once per turn. At 2 the model is told not to repeat it;
        at ``max_repeated_failures`` the run is marked to end (`repeated`).
        """
        key = _call_key(result.call.name, result.call.arguments)
        limit = self.settings.max_repeated_failures
        if result.ok or limit is None:
            self.failures.pop(key, None)
            return result
        seen = self.failures.get(key)
        if seen is None or (seen.kind, seen.output) != (result.kind, result.output):
            seen = self.failures[key] = Failure(result.kind, result.output, 0, 0)
        if seen.turn != self._turn:  # a twin in the same answer is no sign the model did not read it
            seen.times, seen.turn = seen.times + 1, self._turn
        if seen.times < 2:
            return result
        stop = seen.times >= limit
        result = dataclasses.replace(result, output=result.output + "\n\n" + repeat_notice(seen.times, stop))
        if stop and self.repeated is None:
            self.repeated = RepeatedFailure(result, seen.times, answered=self._answered_before(result))
        return result

    def _answered_before(self, result: ToolResult) -> bool:
        """Whether ``result`` is the "Not run again" answer to a call that had already succeeded."""
        if self.settings.repeat_calls or result.arguments is None:
            return False
        return _call_key(result.call.name, result.arguments) in self.answered

    def _ruled(self, tool: Tool, values: dict[str, Any], may_ask: bool) -> Decision | Ask | None:
        """What the rules and the tool's approval function decide (see `approvals.ruled`); a rules
        file that cannot be read ends the run, or for a server denies the call, as a failing approver does."""
        every = self.settings.approve == "every" and may_ask
        try:
            return ruled(self.rules, tool, values, tool.approval is True or needs_person(tool) or every)
        except RuleError as error:
            if not self.settings.deny_if_approver_fails:
                raise
            return Denied(
                f"the approval rules could not be read: {error}", "the rules could not be read", _UNREADABLE
            )

    def _untrusted_note(self, tool: Tool, values: dict[str, Any]) -> str | None:
        """For the card of a call that asks: that an untrusted rules file's allow rule would allow it."""
        if self.rules is None:
            return None
        seen = with_facts(tool, values)
        if isinstance(seen, Denied):
            return None
        try:
            verdict = self.rules.untrusted_allow(tool.name, seen)
        except RuleError:  # the file went bad since: the call is asked, and the next read says why
            return None
        if verdict is None or self.rules.path is None:
            return None
        if trust_forbidden() is not None:  # %agent trust would be refused: not a way out here
            return f"a rule in {self.rules.path.name} would allow this; the site's policy forbids trusting the file"
        return f"a rule in {self.rules.path.name} would allow this; the file is not trusted (%agent trust)"

    async def _log_ruled(self, pending: list[PendingCall]) -> None:
        """The rules' and approval functions' decisions go to the one decision log as a person's do."""
        decided = [each for each in pending if isinstance(each.ruled, (Approved, Denied))]
        if decided:
            decisions = [each.ruled for each in decided if isinstance(each.ruled, (Approved, Denied))]
            await logged(_given(decisions), [each.request for each in decided], self.model)

    async def _decide(self, asking: list[PendingCall]) -> list[Decision]:
        if not asking:
            return []
        requests = [each.request for each in asking]
        approver = self.approver or _NO_APPROVER
        deciding = self._person_only(asking, decide(approver, requests, self.settings.deny_if_approver_fails))
        return await logged(deciding, requests, self.model)  # the one place every decision is logged

    async def _person_only(
        self, asking: list[PendingCall], deciding: Awaitable[list[Decision]]
    ) -> list[Decision]:
        """The approver's decisions, except on calls of ``approval="always"`` tools that no person
        decided: those the cassette being replayed decides as recorded, and else an approval is a
        denial (`policy_denial`) and a denial stands."""
        decisions = list(await deciding)
        for at, (each, decision) in enumerate(zip(asking, decisions)):
            if not needs_person(each.tool) or by_person(decision):
                continue
            replayed = self._replayed(each)
            if replayed is not None:
                decisions[at] = replayed
            elif isinstance(decision, Approved):
                decisions[at] = policy_denial(each.tool, decision, self.approver or _NO_APPROVER)
        return decisions

    def _replayed(self, pending: PendingCall) -> Decision | None:
        """The decision on ``pending`` recorded in the cassette this run replays, or None."""
        tape = getattr(self.model, "decision_tape", None)
        found = tape.replayed(pending.tool.name, pending.values) if tape is not None else None
        if found is None:
            return None
        by = DecidedBy("replay", f"{found.by or 'you'}, when the cassette was recorded")
        if found.decision == "denied":
            return Denied(found.reason or _UNSAID, f"by {by.name}", by)
        edit = found.ran_with if found.decision == "edited" else None
        return Approved(f"approved by {by.name}", edit, by)

    def _timeout(self, tool: Tool) -> float | None:
        return tool.timeout if tool.timeout is not None else self.settings.tool_timeout

    async def _execute(
        self, pending: PendingCall, values: dict[str, Any], slots: asyncio.Semaphore, running: RunningCall
    ) -> tuple[int, ToolResult]:
        """Run one validated call on a tool thread, within its time limit; a tool marked
        ``record=True`` is answered from the model's cassette (its `tool_tape`) where that has the
        call, and its live result recorded there otherwise (see `recording.tool_tape`).

        Whatever the tool does (raise ``SystemExit`` or any other ``BaseException``, return a
        value whose ``repr`` raises, block forever), the outcome is a result for this call alone.
        ``values`` are the arguments that run (a person's edit, where they made one).
        """
        index, call, tool = pending.index, pending.call, pending.tool
        tape = getattr(self.model, "tool_tape", None) if getattr(tool, "record", False) else None
        codec = getattr(tool, "value_codec", None)
        if tape is not None:
            replayed = tape.replay(call, values, codec)  # in replay only, a missing call is a CassetteError
            if replayed is not None:
                running.end("done")
                return index, replayed
        index, result = await self._live(index, call, tool, values, slots, running)
        if tape is not None:
            tape.record(values, result, codec)
        return index, result

    async def _live(
        self,
        index: int,
        call: ToolCall,
        tool: Tool,
        values: dict[str, Any],
        slots: asyncio.Semaphore,
        running: RunningCall,
    ) -> tuple[int, ToolResult]:
        """Run the call on a tool thread (see `_execute`)."""
        timeout = running.timeout
        # The tool's thread runs in a copy of this task's context: what it reaches (an MCP server
        # asking the person) finds the call, the loop and the approver there.
        RUNNING_CALL.set(running)
        how: Ending = "stopped"
        try:
            async with slots:  # released on a timeout too: a hung call does not hold a place
                started = time.perf_counter()
                try:
                    outcome = await within_limit(
                        _THREADS.run(call_tool, tool, values, self.shape), timeout, running
                    )
                except asyncio.TimeoutError:
                    how = "timeout"
                    return index, ToolResult(
                        call, f"Timed out after {timeout:g} s", kind="timeout", duration=timeout
                    )
            how = "done"
        finally:
            running.end(how)
        elapsed = time.perf_counter() - started
        value, text, error = outcome
        if isinstance(error, ApprovalMissing):  # it did nothing: `run` asks, then runs it again
            return index, ToolResult(
                call, f"Denied: {error}", kind="denied", exception=error, duration=elapsed
            )
        if error is not None:
            return index, ToolResult(call, text, kind="error", exception=error, duration=elapsed)
        return index, ToolResult(call, text, value=value, duration=elapsed)


async def _given(decisions: list[Decision]) -> list[Decision]:
    return decisions


def _running(tool: Tool, call: ToolCall, values: dict[str, Any], limit: float | None) -> ToolRunning:
    """The call starts to run with ``values``: with what its card shows of code and facts."""
    return ToolRunning(call, values, limit, getattr(tool, "code_argument", None), _facts(tool, values))


def _facts(tool: Tool, values: dict[str, Any]) -> dict[str, Any]:
    """The tool's facts about ``values``; none when one fails (the rules denied the call for it)."""
    if not tool.facts:
        return {}
    seen = with_facts(tool, values)
    return {} if isinstance(seen, Denied) else {name: seen[name] for name in tool.facts}


def edited_note(values: Mapping[str, Any]) -> str:
    """The line put before the output of a call a person changed before approving: the arguments
    that ran, as JSON (the model's own call stays in its history). A card that shows the code a
    call ran leaves this line out of the output it shows.

    Args:
        values: The arguments the call ran with.

    Returns:
        The note, ending in a newline.
    """
    changed = json.dumps(dict(values), ensure_ascii=False, default=repr)
    return f"(The person changed the arguments before approving; the call ran with {changed}.)\n"


def _call_key(name: str, values: dict[str, Any]) -> str:
    return name + json.dumps(values, sort_keys=True, default=repr)
