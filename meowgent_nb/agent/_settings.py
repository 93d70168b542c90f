"""What an `Agent`'s settings may be: each wrong setting as one line that says what it must be.

`settings_problems` is run when an agent is made; the agent raises one `ValueError` listing them all,
so a person fixes every setting at once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["settings_problems"]


def settings_problems(agent: Any) -> list[str]:
    """What is wrong with an `Agent`'s settings (besides its protocol and context), one line each."""
    problems: list[str] = []
    if not isinstance(agent.max_turns, int) or agent.max_turns < 1:
        problems.append(f"max_turns must be a whole number of at least 1, got {agent.max_turns!r}")
    limit = agent.max_repeated_failures
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 2):
        problems.append(f"max_repeated_failures must be a whole number of at least 2, or None; got {limit!r}")
    if agent.ask not in ("marked", "every"):
        problems.append(f"ask must be 'marked' or 'every', got {agent.ask!r}")
    names = [t.name for t in agent.tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"two tools share a name: {', '.join(duplicates)}; rename one with @tool(name=...)")
    if agent.tool_choice not in ("auto", "none", "required") and agent.tool_choice not in names:
        problems.append(
            f"tool_choice must be 'auto', 'none', 'required' or a tool name ({', '.join(names) or 'none'}),"
            f" got {agent.tool_choice!r}"
        )
    return problems
