"""What an `Agent`'s settings may be: the settings a run's loop and `CallRunner` share, and their checks.

`RunSettings` is built once by `Agent` (or by `%tools serve` for its calls) and handed to each
run's `CallRunner`. `settings_problems` and `agent_problems` say each wrong setting in one line
that says what it must be; `check_settings` raises one `SettingsError` listing them all, so a
person fixes every setting at once. `check_policy` refuses what passes the site's policy
(`meowgent_nb.policy`), and `policy_defaults` are the settings it starts an `Agent` with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import SettingsError
from ..policy import Policy, PolicyError, current_policy
from ..tools.core import Tool
from ..tools.output import MAX_DEPTH, MAX_ITEMS

__all__ = [
    "Approve",
    "RunSettings",
    "agent_problems",
    "check_policy",
    "check_settings",
    "policy_defaults",
    "settings_problems",
]

Approve = Literal["ask", "every"]
"""Which calls a person is asked about: those of tools marked ``approval=True`` and those the rules
ask about (``ask``), or every call (``every``)."""


@dataclass(kw_only=True, frozen=True)
class RunSettings:
    """The settings a run's loop and its `CallRunner` share (see `Agent` for what each means)."""

    approve: Approve = "ask"
    """Which calls are put to the approver: ``ask`` (marked tools, rules that ask) or ``every``."""
    max_turns: int = 8
    """Model requests per run; a call made on the last turn is not run."""
    max_workers: int = 8
    """Tool calls of one turn that run at the same time."""
    tool_timeout: float | None = 30.0
    """Seconds a call may take when its tool sets no timeout; None: no limit."""
    max_output_chars: int | None = 4000
    """Tool output longer than this is cut, keeping its start and end; None: no limit."""
    max_output_items: int = MAX_ITEMS
    """Entries of a list or object in a result written out at each level."""
    max_output_depth: int = MAX_DEPTH
    """Levels of nesting of a result written out."""
    repeat_calls: bool = False
    """Whether a call identical to one that already succeeded in the run runs again."""
    max_repeated_failures: int | None = 3
    """The run ends when the same call fails the same way this many turns in a row; None: never."""
    retry_attempts: int = 8
    """Times a model request is asked in all when the server fails in a way asking again may mend
    (`models.base.RetryCause`: a cut answer, a busy or restarting server); 1: never again."""
    retry_seconds: float = 120.0
    """Seconds a turn may wait in all between its attempts; a wait that would pass it is not waited."""
    retry_delay: float = 1.0
    """Seconds before the second attempt; each next wait doubles (1, 2, 4, 8 s), give or take 50 %."""
    deny_if_approver_fails: bool = False
    """What an approver that raises means: False (the loop) lets the error end the run, so the
    person sees the broken approver; True (a server) denies the calls, telling the client why."""


def settings_problems(settings: RunSettings) -> list[str]:
    """What is wrong with ``settings``, one line each."""
    problems: list[str] = []
    if not isinstance(settings.max_turns, int) or settings.max_turns < 1:
        problems.append(f"max_turns must be a whole number of at least 1, got {settings.max_turns!r}")
    limit = settings.max_repeated_failures
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 2):
        problems.append(f"max_repeated_failures must be a whole number of at least 2, or None; got {limit!r}")
    attempts = settings.retry_attempts
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
        problems.append(
            f"retry_attempts must be a whole number of at least 1 (1: never ask again), got {attempts!r}"
        )
    for name in ("retry_seconds", "retry_delay"):
        value = getattr(settings, name)
        if not _seconds(value):
            problems.append(f"{name} must be a number of seconds from 0, got {value!r}")
    if settings.approve not in ("ask", "every"):
        problems.append(f"approve must be 'ask' or 'every', got {settings.approve!r}")
    return problems


def _seconds(value: object) -> bool:
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    return real and math.isfinite(value) and value >= 0  # type: ignore[arg-type]


def agent_problems(tools: Sequence[Tool], tool_choice: str) -> list[str]:
    """What is wrong with an `Agent`'s tools and how they are offered (its settings of those
    names), one line each."""
    problems: list[str] = []
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"two tools share a name: {', '.join(duplicates)}; rename one with @tool(name=...)")
    if tool_choice not in ("auto", "none", "required") and tool_choice not in names:
        problems.append(
            f"tool_choice must be 'auto', 'none', 'required' or a tool name ({', '.join(names) or 'none'}),"
            f" got {tool_choice!r}"
        )
    return problems


def check_settings(problems: list[str], what: str = "Agent") -> None:
    """Raise one error listing ``problems``, if there are any.

    Raises:
        SettingsError: ``Invalid Agent settings:`` and one line per problem.
    """
    if problems:
        raise SettingsError(f"Invalid {what} settings:\n" + "\n".join(f"- {p}" for p in problems))


def policy_defaults(given: Iterable[str]) -> dict[str, Any]:
    """The site policy's ``[defaults]`` for the `Agent` settings not in ``given`` (``approve``,
    ``tool_timeout``, ``max_turns``); ``approve`` only where it is one an `Agent` takes.

    Raises:
        PolicyError: The policy cannot be used.
    """
    policy = current_policy()
    found = {"approve": policy.approve, "tool_timeout": policy.tool_timeout, "max_turns": policy.max_turns}
    defaults = {name: value.value for name, value in found.items() if value is not None and name not in given}
    if defaults.get("approve") not in (None, "ask", "every"):
        del defaults["approve"]  # "allow" and "deny" are approvers: the notebook's magics choose those
    return defaults


def check_policy(
    settings: RunSettings,
    approver: Any,
    rules: Any = None,
    tools: Sequence[Tool] = (),
    written: str = "Agent({}={!r})",
) -> None:
    """Refuse settings that pass the site's policy, one line each naming the policy file and key.

    Args:
        settings: The agent's settings (``approve``, ``tool_timeout``).
        approver: Its approver: one that decides without asking (its ``decides_alone`` is
            ``"allow"``, as `AutoApprove`'s) is as loose as ``approve="allow"``; None denies.
        rules: Its `Rules`: no allow rule for a tool marked ``approval="always"`` where the policy
            forbids them.
        tools: Its tools: none with its own timeout over the policy's largest.
        written: How a setting was given, for the refusal: ``"Agent({}={!r})"`` (the default) or
            ``"agent.{} = {!r}"``, filled with its name and value.

    Raises:
        PolicyError: A setting passes the policy, or the policy cannot be used.
    """
    policy = current_policy()
    if not policy.applies:
        return
    refusals = [
        _approval_refusal(policy, settings, approver, written),
        policy.timeout_refusal(settings.tool_timeout, written.format("tool_timeout", settings.tool_timeout)),
        *(
            policy.timeout_refusal(tool.timeout, f"The tool {tool.name}'s own timeout={tool.timeout:g}")
            for tool in tools
            if tool.timeout is not None
        ),
        *_rule_refusals(policy, rules, tools),
    ]
    lines = [refusal for refusal in refusals if refusal is not None]
    if lines:
        raise PolicyError("\n".join(lines))


def _approval_refusal(policy: Policy, settings: RunSettings, approver: Any, written: str) -> str | None:
    alone = "deny" if approver is None else getattr(approver, "decides_alone", None)
    if alone in ("allow", "deny"):
        return policy.approval_refusal(alone, written.format("approver", _Shown(repr(approver))))
    return policy.approval_refusal(settings.approve, written.format("approve", settings.approve))


class _Shown(str):
    """Text whose repr is itself (an approver's repr, put where a setting's repr goes)."""

    def __repr__(self) -> str:
        return str(self)


def _rule_refusals(policy: Policy, rules: Any, tools: Sequence[Tool]) -> list[str]:
    forbidden = policy.always_tool_rules
    if forbidden is None or forbidden.value or rules is None:
        return []
    always = {tool.name for tool in tools if tool.approval == "always"}
    return [
        f"The rule {rule.text!r} ({source}) is refused by {forbidden.where}: {rule.tool} runs only"
        " with a person's approval here; leave the rule out."
        for _, rule, source in rules.numbered()
        if rule.action == "allow" and rule.tool in always
    ]
