"""A cell the agent proposes, put to the person in the running cell: **Insert below** or **Not now**.

`ask_to_insert` runs on the cell's loop (the ``propose_cell`` tool sends it there from its
thread, as an MCP server's form is sent). Where widgets show, the card shows the code
highlighted with the two buttons and waits like an approval: for a click, the approver's
timeout, the call's end or Stop (`notebook.mcp.server_asks`' wait). A frontend without widgets
is asked with ``input()``; a headless run, a kernel-less one or an approval policy asks no one.

Inserting uses IPython's ``set_next_input`` payload, which the frontend reads from the
``%%agent`` cell's reply when the cell finishes. JupyterLab and Notebook 7 read only the first
such payload of a reply, so a second inserted proposal is added to the same new cell, after
the first (`insert_below`).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

from ..._html import escape, highlight
from ...agent.running_call import RunningCall
from .._kernel import is_headless, running_kernel, running_shell
from .._labels import INSERT_BELOW, NOT_NOW
from .._shown_run import call_soon_in_cell
from ..mcp.server_asks import _shown_until
from .policy_approvals import PolicyApprover, shows_widgets

__all__ = ["HEADLESS", "Insertion", "ProposalView", "ask_to_insert", "insert_below", "nobody_to_insert"]

HEADLESS = "nobody to insert it in a headless run"
"""Why a headless run (nbval, papermill, ``run_notebook``, ``MEOWGENT_APPROVE`` set, no kernel) inserts nothing."""


@dataclass(frozen=True)
class Insertion:
    """What the person chose for a proposed cell."""

    inserted: bool
    """Whether it goes below the ``%%agent`` cell."""
    outcome: str
    """In a line, for the model and the card: "inserted below", "not inserted: ..."."""


def nobody_to_insert(approver: Any) -> str | None:
    """Why no one can be asked to insert a cell here (on the cell's loop), or None when one can."""
    if running_kernel() is None or is_headless() or os.environ.get("MEOWGENT_APPROVE"):
        return HEADLESS
    if isinstance(approver, PolicyApprover):
        return f"nobody is asked under the approval policy {approver.reason}"
    if approver is None or not hasattr(approver, "elicit"):
        return f"the agent's approver ({approver!r}) cannot ask a person"
    return None


def insert_below(code: str) -> None:
    """Have the frontend put ``code`` in a new cell below the running one when it finishes.

    A second call in the same cell adds its code to the same new cell, after a blank line: the
    frontends read one ``set_next_input`` payload per reply.
    """
    shell = running_shell()
    for payload in shell.payload_manager.read_payload():
        if payload.get("source") == "set_next_input" and not payload.get("replace"):
            payload["text"] = payload["text"].rstrip("\n") + "\n\n" + code
            return
    shell.set_next_input(code, replace=False)


def proposal_html(code: str, problem: str | None) -> str:
    """The proposed code, highlighted, under a line saying what it is (and that it does not parse)."""
    head = "The agent proposes this cell, to go below this one:"
    if problem is not None:
        head += (
            f' <span class="meowgent-proposal-problem"><b>it does not parse</b> ({escape(problem)})</span>'
        )
    return f'<div class="meowgent-proposal-head">{head}</div>{highlight(code, "python")}'


class ProposalView:
    """The proposed cell with **Insert below** and **Not now**; reports the choice once, on the cell's loop.

    Args:
        code: The proposed code.
        problem: Why it does not parse, or None.
        call_soon: Runs a function on the cell's loop.
        on_choice: Told True (insert) or False (not now).
    """

    def __init__(self, code: str, problem: str | None, call_soon: Any, on_choice: Any):
        import ipywidgets as widgets

        self.decided = False
        self.on_choice = on_choice
        self.buttons = []
        for label, style, tip, insert in (
            (INSERT_BELOW, "success", "Put this code in a new cell below this one", True),
            (NOT_NOW, "", "Do not insert it", False),
        ):
            button = widgets.Button(description=label, button_style=style, tooltip=tip)
            button.layout.width = "auto"
            button.on_click(lambda _b, insert=insert: call_soon(self._choose, insert))
            self.buttons.append(button)
        self.status = widgets.HTML("")
        self.view = widgets.VBox(
            [widgets.HTML(proposal_html(code, problem)), widgets.HBox([*self.buttons, self.status])]
        )
        self.view.add_class("meowgent-proposal")

    def _choose(self, insert: bool) -> None:
        if not self.decided:
            self.on_choice(insert)

    def finish(self, outcome: str) -> None:
        self.decided = True
        self.status.value = f'<span class="meowgent-proposal-outcome"><b>{escape(outcome)}</b></span>'
        for button in self.buttons:
            button.disabled = True


async def ask_to_insert(code: str, problem: str | None, running: RunningCall, timeout: float) -> Insertion:
    """Ask the person whether ``code`` goes in a new cell below, and put it there if so.

    Args:
        code: The proposed code.
        problem: Why it does not parse, or None (the card says so).
        running: The ``propose_cell`` call.
        timeout: Seconds to wait for a click.

    Returns:
        What the person chose, or why no one was asked.
    """
    nobody = nobody_to_insert(running.approver)
    if nobody is not None:
        return Insertion(False, f"proposed; {nobody}")
    if shows_widgets():
        loop = asyncio.get_running_loop()
        chosen: asyncio.Future[bool] = loop.create_future()
        view = ProposalView(
            code, problem, call_soon_in_cell(loop), lambda ok: chosen.done() or chosen.set_result(ok)
        )
        ended = await _shown_until(
            view, chosen, running, timeout, lambda why: view.finish(f"not inserted: {why}")
        )
        if ended is not None:
            return Insertion(False, f"not inserted: {ended}")
        insert = chosen.result()
        view.finish("inserted below" if insert else "not inserted")
    else:  # a frontend that shows no widgets still forwards input()
        print(
            f"The agent proposes this cell:\n{code}"
            + (f"\n(it does not parse: {problem})" if problem else "")
        )
        insert = input("Insert below? [y/N] ").strip().lower() in ("y", "yes")
    if not insert:
        return Insertion(False, "not inserted: the person chose Not now")
    insert_below(code)
    return Insertion(True, "inserted below the agent's cell")
