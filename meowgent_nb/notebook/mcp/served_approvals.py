"""`ServedApprovals`: a served call that needs approval is decided in the notebook that serves it.

``%tools serve`` shows a box in its own cell's output (where the frontend shows widgets); each
served call that asks gets a card there saying which MCP client asked, with the buttons of the
session's approver, and the card then says what was decided. The box keeps working after the
cell finished: widgets talk over comms, which do not end with the cell. The approval runs in a
copy of the serving cell's context (ipykernel's parent message is a ContextVar), so whatever it
shows belongs to that cell, and a headless serving cell is headless for its calls too.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import html
from collections.abc import Sequence
from typing import Any, cast

from ...agent.approvals import ApprovalRequest, Approver, DecidedBy, Decision
from ...agent.approvals.decisions import decided_by, decision_words
from ...mcp.server.serve import SERVED_CLIENT
from .._shown_run import SHOWN_RUN
from ..approvals.policy_approvals import AsksForServers, call_text, row_html, shows_widgets
from ..approvals.widget_approvals import text_panel_type

__all__ = ["ServedApprovals", "asked_by"]

_EMPTY = "Calls from MCP clients that need approval will ask here."


def asked_by(client: str | None) -> str:
    """Who asked, as a card and the decision log say it: ``MCP client 'claude-code'``."""
    return f"MCP client {client!r}" if client else "an MCP client that gave no name"


class ServedApprovals(AsksForServers):
    """The approver of a served notebook: ``approver``'s buttons, in the serving cell's output.

    Made in the cell that runs ``%tools serve``: it keeps that cell's context and, where the
    frontend shows widgets, shows the box the calls' cards go in. Each decision's ``by`` names
    the client that asked (the decision log's "by" column).

    Args:
        approver: The session's approver, which decides (its buttons, its "Always allow").
    """

    def __init__(self, approver: Approver):
        self.approver = approver
        self.context = contextvars.copy_context()
        self.timeout = getattr(approver, "timeout", 600.0)
        self.desk: _Desk | None = _Desk() if shows_widgets() else None

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        client = SERVED_CLIENT.get()
        context = self.context.copy()  # the serving cell's parent message, with this call's client
        context.run(SERVED_CLIENT.set, client)
        if self.desk is None:  # no buttons there: the approver asks as it can (headless: its policy)
            asking = self.approver.approve(requests)
        else:
            asking = self.desk.ask(self.approver, requests, client)
        # A task made in ``context`` runs in a copy of it (create_task's context= is Python 3.11's).
        decisions = await context.run(asyncio.get_running_loop().create_task, _listed(asking))
        return [_naming(decision, client) for decision in decisions]

    def __repr__(self) -> str:
        return f"ServedApprovals({self.approver!r})"


async def _listed(asking: Any) -> list[Decision]:
    return list(await asking)


def _naming(decision: Decision, client: str | None) -> Decision:
    """``decision`` with its decider named as deciding for ``client``."""
    by = decision.by or DecidedBy("approver", decided_by(decision))
    return dataclasses.replace(decision, by=DecidedBy(by.kind, f"{by.name}, asked by {asked_by(client)}"))


class _Desk:
    """The box in the serving cell, and the cards of the calls asking in it (a `ShownRun`)."""

    def __init__(self) -> None:
        import ipywidgets as widgets
        from IPython.display import DisplayHandle, display

        self.lines: list[str] = []
        self.cards: dict[str, Any] = {}  # by call id
        self.view = text_panel_type()(children=[widgets.HTML(html.escape(_EMPTY))])
        self.view.plain_text = lambda: "\n".join(self.lines) or _EMPTY
        self.handle = cast("DisplayHandle", display(self.view, display_id=True))

    async def ask(
        self, approver: Approver, requests: Sequence[ApprovalRequest], client: str | None
    ) -> list[Decision]:
        import ipywidgets as widgets

        who = html.escape(asked_by(client))
        for request in requests:
            card = widgets.VBox([widgets.HTML(f"<b>Asked by {who}</b>{row_html(request, '')}")])
            self.cards[request.call.id] = card
            self.view.children = (*self.view.children, card)
        token = SHOWN_RUN.set(self)
        try:
            decisions = list(await approver.approve(requests))
        finally:
            SHOWN_RUN.reset(token)
        for request, decision in zip(requests, decisions):
            outcome = decision_words(decision) or "denied"
            card = self.cards.pop(request.call.id)
            card.children = (widgets.HTML(f"<b>Asked by {who}</b>{row_html(request, html.escape(outcome))}"),)
            self.lines.append(f"Asked by {asked_by(client)}: {call_text(request)} -> {outcome}")
        self.handle.update(self.view)  # a saved notebook's text says how each call ended
        return decisions

    # --- ShownRun: what the approver does with the cards ------------------------------------------

    def attach(self, call: Any, widget: Any) -> bool:
        card = self.cards.get(call.id)
        if card is None:
            return False
        card.children = (*card.children, widget)
        return True

    def detach(self, call: Any) -> None:
        card = self.cards.get(call.id)
        if card is not None:
            card.children = card.children[:1]

    def note(self, call: Any, text: str) -> None:
        pass  # a served tool's own questions go to its client, not to this notebook

    def progress(self, call: Any, progress: Any) -> None:
        pass

    def answering(self, call: Any, open_: bool) -> None:
        pass
