"""The run whose transcript this cell is showing, for the approvers that run inside it.

`display.show_run` sets `SHOWN_RUN` while a ``%%agent`` cell runs. Approvers read it: a
`WidgetApprover` puts its buttons under the waiting call's card (when the cell shows widgets)
instead of a panel of its own, and a `PolicyApprover` shows nothing, because each card already
says what was decided. Outside such a run (``await agent.arun(...)`` in a cell) it is None and
they show their own panels.

`call_soon_in_cell` runs a widget's handlers in the context of the cell that drew it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol

__all__ = ["SHOWN_RUN", "ShownRun", "call_soon_in_cell"]


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

    def progress(self, call: Any, progress: Any) -> None:
        """Show ``progress`` (an MCP server's newest ``Progress``) in ``call``'s card while it runs."""
        ...

    def answering(self, call: Any, open_: bool) -> None:
        """A question of ``call``'s server (a form, a sampling review) opened (True) or closed in the cell."""
        ...


SHOWN_RUN: ContextVar[ShownRun | None] = ContextVar("meowgent_shown_run", default=None)


def call_soon_in_cell(loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    """``loop.call_soon_threadsafe``, each function run in the context of the cell that called this.

    A click or a typed value reaches the kernel as a comm message and is handled in that
    message's context. ipykernel (>= 7.4) sends a widget's later messages to the subshell of
    the request it was last changed under, and JupyterLab sends comm messages on a subshell of
    its own. So a text box drawn by a click handled in the click's context got its typed text on
    another thread than the Check button beside it, and a Check could read the box before the
    text typed just before it arrived. Run in the cell's context, every widget a handler draws or
    changes stays with the cell's shell, where the messages are handled in the order sent.
    """
    context = contextvars.copy_context()

    def call_soon(function: Callable[..., Any], *args: Any) -> Any:
        return loop.call_soon_threadsafe(function, *args, context=context)

    return call_soon
