"""`InputApprover`: asking with ``input()`` where no button can be shown; `SessionChoices`: what a choice means.

Used in a terminal, a script, and a frontend without widgets (``jupyter console``).
`SessionChoices.decide` is shared with `WidgetApprover`, so a click and a typed answer mean the same.
A call of a tool with a ``code_argument`` (`code_call`) is shown as its code with its risk label,
and "c" lets a person type new code for it (lines ended by a line with only ``.``).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._visible import visible
from ...agent.approvals import PERSON_DECIDED, ApprovalRequest, Approved, DecidedBy, Decision, Denied
from ...agent.approvals.decisions import PERSON
from ...agent.rules import Rule, RuleError, rule_text_for
from ...errors import ToolArgumentsError
from .._labels import ADD_RULE_ONLY
from .policy_approvals import AsksForServers, call_text, headless_policy, is_headless

__all__ = ["InputApprover", "SessionChoices", "ask_by_input"]

RuleText = Callable[[str, Mapping[str, Any]], str]
"""Writes the rule "Allow calls like this…" starts from: (tool name, validated arguments) -> text."""
AddRule = Callable[[str], Any]
"""Adds a rule a person wrote; raises (ValueError) with what is wrong when the text is no rule."""
REASON_LIMIT = 500
"""Characters of a denial's reason the model reads; the rest is cut."""


def exact_key(request: ApprovalRequest) -> str:
    """What "Allow this exact call" remembers: the tool and its validated arguments, canonical
    (keys sorted; ``1``, ``1.0``, ``"1"`` and ``True`` stay four different values)."""
    from pydantic_core import to_jsonable_python

    values = to_jsonable_python(dict(request.arguments), fallback=lambda v: f"{type(v).__qualname__}:{v!r}")
    return json.dumps([request.tool.name, values], sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class CodeCall:
    """The code a call carries (its tool's ``code_argument``), and its risk label."""

    argument: str
    """The tool's parameter that holds the code."""
    code: str
    label: str | None
    """The tool's ``risk`` fact about the call (`notebook.workspace.code_risk`'s label); None without one."""
    reasons: tuple[str, ...] = ()
    """What the label is based on (`CodeRisk.reasons`), when the label is the scan's."""


def code_call(request: ApprovalRequest, arguments: Mapping[str, Any] | None = None) -> CodeCall | None:
    """The code ``request`` carries, with ``arguments`` in place of its own when given (an edit);
    None when its tool has no ``code_argument`` or the argument is no str."""
    argument = getattr(request.tool, "code_argument", None)
    values = dict(request.arguments if arguments is None else arguments)
    code = values.get(argument) if isinstance(argument, str) else None
    if not isinstance(argument, str) or not isinstance(code, str):
        return None
    try:
        label = request.tool.facts_of(values).get("risk") if request.tool.facts else None
    except Exception:  # noqa: BLE001 - a fact that fails: the rules deny the call, the card shows no label
        label = None
    reasons: tuple[str, ...] = ()
    if label is not None:
        from ..workspace import code_risk

        scan = code_risk(code)
        reasons = tuple(map(str, scan.reasons)) if scan.label == label else ()
    return CodeCall(argument, code, None if label is None else str(label), reasons)


_ALWAYS = DecidedBy("session", "always allow (for this session)")
_EXACT = DecidedBy("session", "this exact call (approved earlier in this session)")


def _you(how: str) -> DecidedBy:
    """A person's decision, and how they made it (``edited``, ``rule added: ...``)."""
    return DecidedBy("person", f"you ({how})")


class SessionChoices:
    """What a person's choices leave behind for the session, and the decision each choice is.

    Args:
        rule_text: Writes the rule "Allow calls like this…" starts from (default: `rules.rule_text_for`,
            a rule that matches exactly this call).
        add_rule: Adds the rule the person settled on (``%%agent`` gives the notebook's rules' `add`;
            default: check it with `Rule.parse` and keep it in `rules_added`).

    Attributes:
        always_allowed: Tools approved for the session with "Always allow".
        exact_allowed: Calls (`exact_key`) approved for the session with "Allow this exact call".
        rules_added: The rules added with "Allow calls like this…" (by the default ``add_rule``).
    """

    def __init__(self, rule_text: RuleText | None = None, add_rule: AddRule | None = None) -> None:
        self.always_allowed: set[str] = set()
        self.exact_allowed: set[str] = set()
        self.rules_added: list[str] = []
        self.rule_text: RuleText = rule_text or rule_text_for
        self.add_rule: AddRule = add_rule or self._keep_rule

    def _keep_rule(self, text: str) -> None:
        Rule.parse(text, "allow")  # a malformed rule is refused here as the agent's rules refuse it
        self.rules_added.append(text)

    def remembered(self, request: ApprovalRequest) -> Approved | None:
        """The decision an earlier choice already made for ``request``, or None: ask."""
        if request.tool.name in self.always_allowed:
            return Approved("allowed by always allow (for this session)", by=_ALWAYS)
        if exact_key(request) in self.exact_allowed:
            return Approved("allowed by this exact call (approved earlier in this session)", by=_EXACT)
        return None

    def prefill(self, request: ApprovalRequest) -> str:
        """The rule text "Allow calls like this…" opens with."""
        return self.rule_text(request.tool.name, dict(request.arguments))

    def decide(self, request: ApprovalRequest, choice: str, value: Any = None) -> Decision:
        """The decision ``choice`` makes on ``request`` (remembering what it is to remember).

        Args:
            choice: ``approve`` (``value``: edited arguments or None), ``deny`` (``value``: the
                reason or None), ``always``, ``exact`` or ``rule`` (``value``: the rule's text).

        Raises:
            Exception: What ``add_rule`` raised for a rule it refused (nothing is decided then).
        """
        if choice == "approve" and value is not None:
            return Approved("approved by you (edited)", value, _you("edited"))
        if choice == "approve":
            return Approved("approved by you", by=PERSON_DECIDED)
        if choice == "deny":
            reason = " ".join(_printable(str(value or "")).split())  # one line
            if len(reason) > REASON_LIMIT:
                reason = reason[: REASON_LIMIT - 3] + "..."
            return (
                Denied(reason, PERSON, PERSON_DECIDED) if reason else Denied(reason=PERSON, by=PERSON_DECIDED)
            )
        if choice == "always":
            self.always_allowed.add(request.tool.name)
            return Approved(
                "approved by you (always allow, for this session)", by=_you("always allow, for this session")
            )
        if choice == "exact":
            self.exact_allowed.add(exact_key(request))
            return Approved(
                "approved by you (this exact call, for this session)",
                by=_you("this exact call, for this session"),
            )
        if choice == "rule":
            text = _rule_line(value)
            missed = self.uncovered(request, text)
            if missed is not None:
                raise RuleError(
                    f"{missed}; widen the rule, or add it with {ADD_RULE_ONLY!r} and decide this call on its own"
                )
            self.add_rule(text)
            return Approved(f"approved by you (rule added: {text})", by=_you(f"rule added: {text}"))
        raise ValueError(f"unknown choice {choice!r}")

    def uncovered(self, request: ApprovalRequest, text: str) -> str | None:
        """The line saying why the allow rule ``text`` would not cover ``request`` (``delete_file
        path=other/** does not cover delete_file(path='draft4.txt'): path 'draft4.txt' is not under
        other/``); None when it covers it, or is no allow rule.

        Raises:
            RuleError: ``text`` is no rule (the message says how to write one).
        """
        rule = Rule.parse(text, "allow")
        missed = rule.missed(request.tool.name, request.arguments) if rule.action == "allow" else None
        return (
            None
            if missed is None
            else f"{rule.condition} does not cover {call_text(request, None)}: {missed}"
        )

    def add_separate_rule(self, value: Any) -> str:
        """Add the rule a person wrote without deciding the call it was written from; returns its text.

        Raises:
            Exception: What ``add_rule`` raised for a rule it refused (nothing is added then).
        """
        text = _rule_line(value)
        self.add_rule(text)
        return text


def _rule_line(value: Any) -> str:
    """A rule's text on one line; an empty one is refused with how to write one."""
    text = " ".join(str(value or "").split())
    if not text:
        raise ValueError("the rule is empty; write one like `TOOL ARG=PATTERN -> allow`")
    return text


def _printable(text: str) -> str:
    """``text`` without control characters (a pasted escape sequence is no part of a reason)."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


class InputApprover(SessionChoices, AsksForServers):
    """Asks with ``input()`` for each call: yes, no, always, this exact call, a rule, or no with a reason.

    Closed input (EOF) denies the call. In a headless run it follows ``MEOWGENT_APPROVE``.

    Args:
        rule_text: Writes the rule "rule" starts from (see `SessionChoices`).
        add_rule: Adds the rule the person settled on.
    """

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        if is_headless():
            return await headless_policy().approve(requests)
        return [ask_by_input(request, self) for request in requests]

    def __repr__(self) -> str:
        return "InputApprover()"


_ANSWERS = {
    "y": "approve",
    "yes": "approve",
    "n": "deny",
    "no": "deny",
    "a": "always",
    "always": "always",
    "e": "exact",
    "exact": "exact",
    "r": "rule",
    "rule": "rule",
    "d": "reason",
    "deny": "reason",
}
_PROMPT = "[y]es / [n]o / [a]lways / [e]xact call / [r]ule / [d]eny with a reason"
_CHANGE = " / [c]hange the code"


def ask_by_input(request: ApprovalRequest, choices: SessionChoices) -> Decision:
    """Ask about one call with ``input()``; an earlier "always" or "exact" answers without asking."""
    earlier = choices.remembered(request)
    if earlier is not None:
        print(f"{call_text(request, None)}: {earlier.reason}")
        return earlier
    code = code_call(request)
    prompt = f"Run {call_text(request, None)}? {_PROMPT}: "
    if code is not None:
        print(code_text(_named(request, code), code))
        prompt = f"Run it? {_PROMPT}{_CHANGE}: "
    try:
        while True:
            answer = input(prompt).strip().lower()  # looked up now: ipykernel swaps it per cell
            choice = "change" if code is not None and answer in ("c", "change") else _ANSWERS.get(answer)
            if choice is None:
                print(f"Please answer y, n, a, e, r{', d or c' if code is not None else ' or d'}.")
            elif choice == "change" and code is not None:
                edited = _change_by_input(request, code)
                if edited is not None:
                    same = edited == dict(request.arguments)
                    return choices.decide(request, "approve", None if same else edited)
            elif choice == "reason":
                return choices.decide(request, "deny", input("Reason (the model reads it): "))
            elif choice == "rule":
                decision = _rule_by_input(request, choices)
                if decision is not None:
                    return decision
            else:
                return choices.decide(request, choice)
    except EOFError:
        return Denied("no answer (the input was closed)")


def code_text(name: str, code: CodeCall, lead: str = "wants to run this code") -> str:
    """A call's code as ``input()`` shows it: numbered lines, its risk label and what it is based on."""
    lines = visible(code.code).rstrip("\n").split("\n")
    width = len(str(len(lines)))
    label = f" (risk: {code.label})" if code.label else ""
    shown = [f"{visible(name)} {lead}{label}:"]
    shown += [f"  {number:>{width}} | {line}".rstrip() for number, line in enumerate(lines, 1)]
    shown += [f"  based on: {visible(reason)}" for reason in code.reasons]
    return "\n".join(shown)


def _named(request: ApprovalRequest, code: CodeCall) -> str:
    """The tool's name, with the call's arguments but its code: ``run_code(timeout=5)``."""
    rest = {name: value for name, value in request.arguments.items() if name != code.argument}
    return request.tool.name + (f"({', '.join(f'{k}={v!r}' for k, v in rest.items())})" if rest else "")


def _change_by_input(request: ApprovalRequest, code: CodeCall) -> dict[str, Any] | None:
    """Read new code, line by line up to a line with only ``.``; show its risk label and ask to run
    it. The arguments with that code, or None (not run: back to the choices)."""
    print("Type the new code; end it with a line with only a '.':")
    lines = []
    while (line := input()) != ".":
        lines.append(line)
    arguments = {**request.arguments, code.argument: "\n".join(lines)}
    try:
        request.tool.validate(arguments)
    except ToolArgumentsError as error:
        print(f"That code cannot be run: {error}")
        return None
    edited = code_call(request, arguments)
    if edited is not None:
        print(code_text(_named(request, edited), edited, "would run your code"))
    answer = input("Run your code? [y]es / [n]o (back to the choices): ").strip().lower()
    return arguments if answer in ("y", "yes") else None


def _rule_by_input(request: ApprovalRequest, choices: SessionChoices) -> Decision | None:
    """Ask for a rule (Enter keeps the one shown); None when it was refused (asked again)."""
    try:
        shown = choices.prefill(request)
    except Exception as error:  # noqa: BLE001 - no prefill: the person writes the rule
        shown = ""
        print(f"No rule could be written from this call ({type(error).__name__}: {error}); write one.")
    text = input(f"Rule (Enter keeps it, or type a wider or narrower one):\n  {shown}\n> ").strip() or shown
    try:
        missed = choices.uncovered(request, text)
        if missed is None:
            return choices.decide(request, "rule", text)
        print(missed)
        if input(
            "Add it anyway as a separate rule? This call is then asked again. [y]es / [n]o: "
        ).strip().lower() in (
            "y",
            "yes",
        ):
            print(f"Rule added: {choices.add_separate_rule(text)}")
    except Exception as error:  # noqa: BLE001 - the rule's problem is the person's to fix
        print(f"That rule was not added: {error}")
    return None
