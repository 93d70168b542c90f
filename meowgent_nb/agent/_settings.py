"""What an `Agent`'s settings may be: the settings a run's loop and `CallRunner` share, and their checks.

`RunSettings` is built once by `Agent` (or by `%tools serve` for its calls) and handed to each
run's `CallRunner`. `settings_problems` and `agent_problems` say each wrong setting in one line
that says what it must be; `check_settings` raises one `SettingsError` listing them all, so a
person fixes every setting at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import SettingsError
from ..tools.core import Tool
from ..tools.output import MAX_DEPTH, MAX_ITEMS

__all__ = ["Approve", "RunSettings", "agent_problems", "check_settings", "settings_problems"]

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
    retry_attempts: int = 5
    """Times a model request is asked in all when the server fails in a way asking again may mend
    (`models.base.RetryCause`: a cut answer, a busy or restarting server); 1: never again."""
    retry_seconds: float = 60.0
    """Seconds a turn may wait in all between its attempts; a wait that would pass it is not waited."""
    retry_delay: float = 1.0
    """Seconds before the second attempt; each next wait doubles (1, 2, 4, 8 s), give or take 25 %."""
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
