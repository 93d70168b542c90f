"""What a case is and how one answer is judged against it: `EvalCase`, `check_cases`, `judge`.

A case passes when the first call names the expected tool with the expected arguments (compared
after validation), or when there is no call and none was expected. The verdict also says whether
the call could run, whether its arguments were right, and which names it made up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import SettingsError, ToolArgumentsError
from ..tools.core import Tool, ToolCall

__all__ = ["UNREADABLE", "EvalCase", "Verdict", "check_cases", "judge"]

UNREADABLE = "(unreadable)"  # the name the agent gives a call it could not parse


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


@dataclass(frozen=True)
class Verdict:
    """What `judge` found: the fields of the same names in `EvalRow`."""

    reason: str
    executes: bool | None
    arguments_match: bool | None
    made_up: tuple[str, ...]


def judge(case: EvalCase, call: ToolCall | None, by_name: Mapping[str, Tool]) -> Verdict:
    """How the call compares with the case: why it does not match (empty when it does), and
    whether it would run, had the arguments right and made anything up (see `EvalRow`)."""
    if call is None:
        return Verdict("" if case.tool is None else f"expected {case.tool}, chose none", None, None, ())
    tool = None if call.name == UNREADABLE else by_name.get(call.name)
    values, problems = None, []
    if tool is not None:
        try:
            values = tool.validate(call.arguments)
        except ToolArgumentsError as error:
            problems = error.problems
    made_up = _made_up(call, tool)
    executes = values is not None
    if case.tool is None:
        return Verdict(f"expected no tool, chose {call.name}", executes, None, made_up)
    if call.name != case.tool:
        if call.name == UNREADABLE:
            return Verdict(f"expected {case.tool}, the call could not be read", False, None, ())
        return Verdict(f"expected {case.tool}, chose {call.name}", executes, None, made_up)
    if values is None:
        return Verdict("invalid arguments: " + "; ".join(problems), False, False, made_up)
    mismatches = []
    for name, wanted in case.arguments.items():
        if name not in values:
            mismatches.append(f"argument {name}: expected {wanted!r}, got nothing")
        elif values[name] != wanted and call.arguments.get(name) != wanted:
            mismatches.append(f"argument {name}: expected {wanted!r}, got {values[name]!r}")
    return Verdict("; ".join(mismatches), True, not mismatches, made_up)


def _made_up(call: ToolCall, tool: Tool | None) -> tuple[str, ...]:
    """The names in a readable call that the offered tools do not have: the tool's name when no
    offered tool has it, else the argument names its schema does not declare, in the call's order."""
    if call.name == UNREADABLE:
        return ()
    if tool is None:
        return (call.name,)
    declared = tool.parameters.get("properties", {})
    arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
    return tuple(str(name) for name in arguments if name not in declared)


def check_cases(cases: Iterable[EvalCase | Mapping[str, Any]], tools: Iterable[Tool]) -> list[EvalCase]:
    """The cases as `EvalCase` values, checked against the tools offered.

    Raises:
        SettingsError: A case is malformed or names a tool that is not offered; every problem is listed.
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
        raise SettingsError("Invalid eval cases:\n" + "\n".join(f"- {p}" for p in problems))
    return checked
