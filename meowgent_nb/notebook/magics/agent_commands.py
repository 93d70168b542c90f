"""``%agent`` commands: reset, history, context, models, config, traceback, the approval rules and
the trust in a rules file (`rules_magics`), the decision log (`decisions_magic`), the site's
policy (`policy_magic`) and tracing runs (`trace_magic`)."""

from __future__ import annotations

import sys
import traceback
import uuid
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..._async import run_to_completion
from .rules_magics import RULE_WORDS, rules_command

if TYPE_CHECKING:
    from .session import NotebookSession

__all__ = ["agent_command"]


def agent_command(session: NotebookSession, line: str) -> Any:
    """Run the ``%agent`` command in ``line`` for the notebook's session.

    Raises:
        UsageError: ``line`` is no ``%agent`` command (or the command's own words are wrong).
    """
    command = line.strip()
    if command.split()[:1] == ["decisions"]:
        from .decisions_magic import decisions

        return decisions(command)
    if command.split()[:1] == ["policy"]:
        from .policy_magic import policy_command

        return policy_command(command[len("policy") :].strip())
    if command.split()[:1] == ["trace"]:
        from .trace_magic import trace_command

        return trace_command(session, command[len("trace") :].strip())
    if command == "reset":
        session.messages.clear()
        session.conversation_id = uuid.uuid4().hex
        session.context_log.clear()
        session.compaction.reset()
        print("The conversation was reset.")
    elif command == "context":
        from ..views.window_view import context_view

        return context_view(session.context_log, session.context_model, session.compaction)
    elif command == "history":
        print(_transcript(session.messages) or "(no conversation yet)")
    elif command == "models":
        from ...models.available import available_models

        print(run_to_completion(available_models()))
    elif command == "config":
        for name in sorted(session.settings.trait_names(config=True)):
            print(f"AgentMagics.{name} = {getattr(session.settings, name)!r}")
    elif command == "traceback":
        print(_tracebacks(session), end="")
    elif command.split(" ", 1)[0] in RULE_WORDS:  # the approval rules and trust: see rules_magics
        rules_command(session, command)
    else:
        raise UsageError(
            f"%agent: unknown command {command!r}; use one of: reset, history, context, models, config, traceback,"
            " allow, deny, rules, trust, decisions, policy, trace."
            " To talk to the model, use the %%agent cell magic."
        )


def _tracebacks(session: NotebookSession) -> str:
    """What ``%agent traceback`` prints, newest first: the error of the last run's cell or a later
    one (meowgent's errors show as one message; their whole chain is kept for whoever asks), then
    the tracebacks of the last run's tools that raised; never an earlier cell's error."""
    from ..views._cards import call_text
    from ..views._raised import tool_tracebacks

    error = getattr(sys, "last_value", None)
    agent = session.last_agent
    if agent is None:
        return "".join(traceback.format_exception(error)) if error is not None else "(no error yet)"
    if error is not None and _cell_of(session, error) < session.last_agent_cell:
        error = None
    result = agent.last_result
    tools = tool_tracebacks(result.tool_results if result is not None else [], call_text)
    parts = [] if error is None else ["".join(traceback.format_exception(error))]
    if tools is not None:
        parts.append(tools)
    elif error is None:
        parts.append("(no tool raised an error in the last %%agent run)\n")
    return "\n".join(parts)


def running_cell(shell: Any) -> int:
    """The number of the cell running now, as `_cell_of` numbers cells (for ``%agent traceback``).

    IPython numbers a cell's code when it compiles it, so the running cell holds the highest
    number; ``execution_count`` is no measure, being already one ahead during a cell in IPython 9.
    """
    cells = getattr(shell.compile, "_filename_map", {})
    return max(cells.values(), default=shell.execution_count)


def _cell_of(session: NotebookSession, error: BaseException) -> int:
    """The execution count of the cell ``error`` was raised in (0: none known)."""
    cells = getattr(session.shell.compile, "_filename_map", {})
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename in cells:
            return cells[frame.filename]
    return 0


def _transcript(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{m['role']}]\n{m.get('content', '')}" for m in messages)
