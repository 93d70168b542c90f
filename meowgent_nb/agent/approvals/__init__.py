"""Approving tool calls: decisions, the approver protocol, the simple policies, and asking the rules.

Decisions are `Approved`, `Denied` and `Ask`, each saying who decided (`DecidedBy`); an
`Approver` gets `ApprovalRequest`s and answers one decision per call (`AutoApprove`, `DenyAll`).
`ruled` asks the agent's `Rules` (about the arguments and the tool's facts, `with_facts`) and the
tool's ``approval=`` function first (`tool_verdict`);
`decide` asks the approver about the calls left asking. A tool marked ``approval="always"``
(`needs_person`) runs only on a person's decision (`by_person`) or a rule's: what a policy
approves of it is denied (`policy_denial`). `decisions`: the words a decision shows
and the session's decision log.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ...tools.core import Tool, ToolCall
from ..rules import Rules

__all__ = [
    "PERSON_DECIDED",
    "ApprovalRequest",
    "Approved",
    "Approver",
    "Ask",
    "AutoApprove",
    "DecidedBy",
    "Decision",
    "Denied",
    "DenyAll",
    "by_person",
    "decide",
    "needs_person",
    "policy_denial",
    "ruled",
    "with_facts",
]


Decider = Literal["person", "session", "rule", "policy", "tool", "approver", "replay"]


@dataclass(frozen=True)
class DecidedBy:
    """Who or what decided a call, set by whoever decides; the decision log's "by" column."""

    kind: Decider
    """``person`` (a click or a typed answer), ``session`` (what a person allowed earlier in the
    session), ``rule`` (a numbered approval rule, or the rules file failing), ``policy``
    (``MEOWGENT_APPROVE``), ``tool`` (the tool's ``approval=`` function), ``approver`` (an approver
    that failed or gave no decision), ``replay`` (the decision recorded in the cassette being
    replayed, for a call of an ``approval="always"`` tool that no one could be asked about)."""
    name: str
    """How the log names it: ``you``, ``rule 2 (delete_file path=scratch/**)``, ``policy: ...``."""

    def edited(self) -> DecidedBy:
        """The same decider, deciding on arguments a person edited."""
        return DecidedBy(self.kind, f"{self.name} (as edited)")


PERSON_DECIDED = DecidedBy("person", "you")
"""A person's decision, without more to say about it."""


@dataclass(frozen=True)
class Approved:
    """Run the call."""

    reason: str = ""
    """Why, as the call's card says it (e.g. "approved by policy: MEOWGENT_APPROVE=allow")."""
    arguments: Mapping[str, Any] | None = None
    """Arguments the person gave instead of the model's (None: run the model's). They are
    validated with the tool's parameters before the call runs, and the model is told the call ran
    with changed arguments."""
    by: DecidedBy | None = field(default=None, compare=False)
    """Who decided; None: an approver that does not say (the log then reads ``reason``). Not
    compared: a decision is the same whoever made it (as a cassette's replay holds)."""


@dataclass(frozen=True)
class Denied:
    """Do not run the call; ``message`` is what the model is told."""

    message: str = "the person did not approve this call."
    """The reason; the model reads ``Denied: {message}``."""
    reason: str = ""
    """Who or what decided, for the call's card ("by you", "by policy: MEOWGENT_APPROVE=deny")."""
    by: DecidedBy | None = field(default=None, compare=False)
    """Who decided; None: an approver that does not say (the log then reads ``reason``). Not
    compared: a decision is the same whoever made it (as a cassette's replay holds)."""


Decision = Approved | Denied


@dataclass(frozen=True)
class Ask:
    """Put the call to the approver: what `ruled` returns when a call needs a decision."""

    why: str = ""
    """What asked: ``asked by rule 3 (...)``, ``delete_file's approval function``, ``approval=True``,
    ``approval="always"``, ``approve="every"``."""


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for a decision."""

    call: ToolCall
    tool: Tool
    arguments: Mapping[str, Any]
    """The validated arguments: exactly what will run if approved."""


@runtime_checkable
class Approver(Protocol):
    """Decides on a batch of calls; returns one decision per request, in order."""

    async def approve(self, requests: Sequence[ApprovalRequest]) -> Sequence[Decision]: ...


class AutoApprove:
    """Approve every call (for trusted tools, scripts and tests)."""

    decides_alone = "allow"
    """It approves without asking anyone: as loose as ``approve="allow"`` (a site's policy may refuse it)."""

    def __init__(self, reason: str = "approved automatically"):
        self.reason = reason

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        return [Approved(self.reason) for _ in requests]

    def __repr__(self) -> str:
        return "AutoApprove()"


class DenyAll:
    """Deny every call, telling the model ``message``."""

    decides_alone = "deny"
    """It denies without asking anyone."""

    def __init__(self, message: str = "no one is here to approve this call."):
        self.message = message

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        return [Denied(self.message) for _ in requests]

    def __repr__(self) -> str:
        return f"DenyAll({self.message!r})"


async def decide(
    approver: Approver,
    calls: Sequence[tuple[ToolCall, Tool, Mapping[str, Any]]],
    deny_if_approver_fails: bool = False,
) -> list[Decision]:
    """``approver``'s decisions on ``calls`` (each with its validated arguments), one per call.

    The approver is shown a copy of the arguments: changing them in place is no way to change
    what runs (an edit is ``Approved(arguments=...)``, validated again). Only a sequence of exactly
    one `Approved` or `Denied` per call is an answer; anything else (None, a string, a mapping, a
    look-alike of `Approved`, a wrong count) decides nothing, and every call is denied, saying why.

    Raises:
        Exception: What the approver raised, unless ``deny_if_approver_fails`` (then the calls
            are denied, saying what failed).
    """
    requests = [ApprovalRequest(call, tool, _copied(values)) for call, tool, values in calls]
    try:
        answer = await approver.approve(requests)
    except Exception as error:
        if not deny_if_approver_fails:
            raise
        reason = f"the approver {approver!r} failed ({type(error).__name__}: {error}), so none of them ran."
        return [Denied(reason, "the approver failed", _APPROVER_FAILED)] * len(requests)
    decisions = _listed(answer)
    if (
        decisions is None
        or len(decisions) != len(requests)
        or not all(isinstance(d, (Approved, Denied)) for d in decisions)
    ):
        count = (
            f"{len(decisions)} answered"
            if decisions is not None
            else f"answered with a {type(answer).__name__}"
        )
        reason = (
            f"the approver {approver!r} did not return one Approved or Denied per call"
            f" ({len(requests)} asked, {count}), so none of them ran."
        )
        return [Denied(reason, "the approver's answer was not a decision", _NO_DECISION)] * len(requests)
    return decisions


_APPROVER_FAILED = DecidedBy("approver", "the approver failed")
_NO_DECISION = DecidedBy("approver", "the approver's answer was not a decision")


def _copied(values: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return copy.deepcopy(dict(values))
    except Exception:  # noqa: BLE001 - a value that cannot be copied: the top level at least
        return dict(values)


def _listed(answer: Any) -> list[Any] | None:
    """An approver's answer as a list, or None when it is no list of anything (None, a number, a
    string, a mapping, an iterator that fails)."""
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return None
    try:
        return list(answer)
    except Exception:  # noqa: BLE001 - an answer that cannot be read decides nothing
        return None


def ruled(rules: Rules | None, tool: Tool, values: Mapping[str, Any], asks: bool) -> Decision | Ask | None:
    """What the rules and the tool's ``approval=`` function say about a validated call.

    A deny from a rule, then from the tool's function, wins; then a rule's allow (`Approved`) or
    ask (an untrusted rules file's allow rules decide nothing: see `rules.trust`); then the tool's
    function ("ask" or True: ask; "allow" or False: run); then ``asks`` (the tool is marked
    ``approval=True`` or ``"always"``, or the agent asks about every call).

    Returns:
        A `Denied` or `Approved` saying which rule or function decided (in its ``by``), an `Ask`
        saying what asked (put it to the approver), or None (run it without asking).

    Raises:
        RuleError: The rules file changed and cannot be used now.
    """
    seen = with_facts(tool, values)
    if isinstance(seen, Denied):
        return seen
    verdict = rules.decide(tool.name, seen) if rules is not None else None
    if verdict is not None and verdict.action == "deny":
        return Denied(
            f"rule {verdict.number} ({verdict.rule.condition}) denies this call.",
            verdict.reason,
            _by_rule(verdict.number, verdict.rule.condition),
        )
    own = tool_verdict(tool, values)
    if isinstance(own, Denied):
        return own
    if verdict is not None:
        forbidden = _rules_forbidden(tool) if verdict.action == "allow" else None
        if forbidden is not None:  # the site's policy: only a person approves this tool's calls
            return Ask(forbidden)
        if verdict.action == "allow":
            return Approved(verdict.reason, by=_by_rule(verdict.number, verdict.rule.condition))
        return Ask(verdict.reason)
    if own is not None:
        return own if isinstance(own, Ask) else None
    if not asks:
        return None
    if needs_person(tool):
        return Ask('approval="always"')
    return Ask("approval=True" if tool.approval is True else 'approve="every"')


def _rules_forbidden(tool: Tool) -> str | None:
    """Why no rule may allow ``tool``'s calls here (the site's policy), or None when one may."""
    if not needs_person(tool):
        return None
    from ...policy import current_policy

    forbidden = current_policy().always_tool_rules
    if forbidden is None or forbidden.value:
        return None
    return f"{forbidden.where}: no rule allows {tool.name}; a person decides"


def needs_person(tool: Tool) -> bool:
    """Whether only a person, or a rule the person set, may approve the tool's calls: it is marked
    ``approval="always"``; a policy's approval of its calls is a denial (`policy_denial`)."""
    return isinstance(tool.approval, str) and tool.approval == "always"


def by_person(decision: Decision) -> bool:
    """Whether a person made ``decision``: a click or a typed answer (``person``), or what they
    chose earlier in the session ("Always allow", "Allow this exact call": ``session``)."""
    return decision.by is not None and decision.by.kind in ("person", "session")


def policy_denial(tool: Tool, approval: Decision, approver: object) -> Denied:
    """The denial of a call of an ``approval="always"`` tool that ``approver`` approved without a
    person (a policy, `AutoApprove`): one line saying who cannot approve it and how to allow it."""
    kind = approval.by.kind if approval.by is not None else None
    who = "a policy" if kind == "policy" else f"the approver {approver!r}"
    example = f"{tool.name} risk=read-only" if "risk" in tool.facts else f"{tool.name} ARG=PATTERN"
    return Denied(
        f"{tool.name} runs only with a person's approval or a rule that allows it ({who} cannot"
        f" approve it); allow it with a rule such as `%agent allow {example}`.",
        f'{who} cannot approve it (approval="always")',
        DecidedBy("tool", f'{tool.name}\'s approval="always"'),
    )


def with_facts(tool: Tool, values: Mapping[str, Any]) -> Mapping[str, Any] | Denied:
    """What the rules match for a call: its validated arguments and the tool's `Tool.facts`
    about them (``risk``), or a `Denied` saying which fact failed."""
    if not tool.facts:
        return values
    try:
        return {**values, **tool.facts_of(values)}
    except Exception as error:  # noqa: BLE001 - a fact that cannot be derived never lets the call through
        name = f"{tool.name}'s facts"
        return Denied(
            f"{name} failed ({type(error).__name__}: {error}), so the call was not run.",
            f"{name} failed",
            DecidedBy("tool", f"{name} failed"),
        )


def _by_rule(number: int, condition: str) -> DecidedBy:
    return DecidedBy("rule", f"rule {number} ({condition})")


def tool_verdict(tool: Tool, values: Mapping[str, Any]) -> Denied | Ask | Approved | None:
    """What ``@tool(approval=function)`` says about a call, or None for ``approval=True/False``.

    The function gets a copy of the validated arguments as a dict and returns "allow", "ask" or
    "deny", or a bool (True: ask, as ``approval=True`` does; False: allow). An error in it, or any
    other answer, denies the call, saying why.

    Returns:
        `Denied`, `Ask`, or `Approved` for "allow" (the call runs without being asked or logged).
    """
    function = tool.approval
    if isinstance(function, bool) or not callable(function):
        return None
    name = f"{tool.name}'s approval function"
    try:
        answer = function(_copied(values))
    except Exception as error:  # noqa: BLE001 - a broken check denies, it never lets the call through
        return Denied(
            f"{name} failed ({type(error).__name__}: {error}), so the call was not run.",
            f"{name} failed",
            DecidedBy("tool", f"{name} failed"),
        )
    word = answer if isinstance(answer, str) else None  # no == on an unknown object: it may raise
    if answer is True or word == "ask":
        return Ask(name)
    if answer is False or word == "allow":
        return Approved(f"allowed by {name}", by=DecidedBy("tool", name))
    if word == "deny":
        return Denied(f"{name} denies this call.", f"denied by {name}", DecidedBy("tool", name))
    return Denied(
        f"{name} answered {answer!r}, not 'allow', 'ask', 'deny', True or False, so the call was not run.",
        f"{name} gave no decision",
        DecidedBy("tool", f"{name} gave no decision"),
    )
