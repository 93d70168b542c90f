"""The run whose transcript this cell is showing (`SHOWN_RUN`), for the approvers that run inside it.

`display.show_run` sets it while a ``%%agent`` cell runs, so approvers put their buttons or
decisions on the calls' cards; outside such a run it is None and they show panels of their own.
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

    ipykernel routes a widget's messages to the subshell it was last changed under; running
    handlers in the cell's context keeps every widget they draw on the cell's shell, so a box's
    typed text and the button beside it are handled in the order sent.
    """
    context = contextvars.copy_context()

    def call_soon(function: Callable[..., Any], *args: Any) -> Any:
        return loop.call_soon_threadsafe(function, *args, context=context)

    return call_soon
