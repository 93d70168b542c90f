"""``%agent decisions``: every decision of the session on a call that needed approval.

``%agent decisions`` shows the session's `DecisionLog` as a table (time, tool, arguments, the
tool's facts, decision, by whom or which rule, the reason): HTML that wraps in the notebook
(`views.decisions_view.DecisionsView`), the same plain-text table as ``text/plain``; ``%agent
decisions --df`` returns it as a pandas DataFrame. The same log is ``meowgent_nb.agent.approvals.decisions.session_decisions()`` in Python.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ...agent.approvals.decisions import session_decisions

__all__ = ["decisions"]

_USAGE = "%agent decisions (a table) or %agent decisions --df (a pandas DataFrame)"


def decisions(line: str) -> Any:
    """Run ``%agent decisions [--df]`` (``line`` begins with "decisions").

    Raises:
        UsageError: An unknown option, or ``--df`` where pandas is not installed.
    """
    options = line.split()[1:]
    if options == []:
        from IPython.display import display

        from ..views.decisions_view import DecisionsView

        display(DecisionsView(session_decisions()))
        return None
    if options == ["--df"]:
        try:
            return session_decisions().dataframe()
        except ImportError as error:
            raise UsageError(f"%agent decisions --df: {error}") from None
    raise UsageError(f"%agent decisions: unknown option {' '.join(options)!r}; use {_USAGE}.")
