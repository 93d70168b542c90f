"""The run whose transcript this cell is showing, for the approvers that run inside it.

`display.show_run` sets `SHOWN_RUN` while a ``%%agent`` cell runs. Approvers read it: a
`WidgetApprover` puts its buttons under the waiting call's card (when the cell shows widgets)
instead of a panel of its own, and a `PolicyApprover` shows nothing, because each card already
says what was decided. Outside such a run (``await agent.arun(...)`` in a cell) it is None and
they show their own panels.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

__all__ = ["SHOWN_RUN", "ShownRun"]


class ShownRun(Protocol):
    """What an approver may do with the run on screen."""

    def attach(self, call: Any, widget: Any) -> bool:
        """Show ``widget`` under ``call``'s card; False when the display cannot show widgets."""
        ...

    def detach(self, call: Any) -> None:
        """Take away what `attach` showed for ``call``."""
        ...

    def note(self, call: Any, text: str) -> None:
        """Add ``text`` to ``call``'s card (what its server asked while it ran, and the outcome)."""
        ...


SHOWN_RUN: ContextVar[ShownRun | None] = ContextVar("meowgent_shown_run", default=None)
