"""``propose_cell``: the agent proposes a code cell, and the person chooses whether it goes below.

The tool runs on its call's thread and sends the question to the cell's loop, where
`notebook.approvals.proposal_card` asks (buttons, or ``input()``) and inserts; meanwhile the
call's time limit stands still (`RunningCall.hold`), as for an MCP server's form. A headless
run asks no one and returns at once. Either way the tool's value is a `ProposedCell`, which
`AgentResult.proposed_cells` gathers.
"""

from __future__ import annotations

import ast
import asyncio

from ...agent.running_call import RUNNING_CALL
from ...tools import Tool, tool
from ...tools.proposed import ProposedCell
from ..approvals.proposal_card import ask_to_insert

__all__ = ["parse_problem", "propose_cell_tool"]

_WAIT = 600.0  # seconds, when the approver does not say how long a person may take


def parse_problem(code: str) -> str | None:
    """Why ``code`` (a cell's text, IPython syntax allowed) does not parse, or None when it does."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        tree = ast.parse(TransformerManager().transform_cell(code))
        compile(tree, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as error:
        return f"{error.msg}, line {error.lineno or 1}"
    except Exception as error:  # noqa: BLE001 - null bytes, nesting too deep: it does not parse
        return f"{type(error).__name__}: {error}"
    return None


def propose_cell_tool() -> Tool:
    """The ``propose_cell`` tool: the person sees the code and chooses Insert below or Not now.

    It needs no approval (it is the question itself). Empty code is refused; code that does not
    parse may still be proposed, and the card says it does not parse.

    Returns:
        The tool.
    """

    def propose_cell(code: str) -> ProposedCell:
        """Propose a code cell for the person to run next: they see it and choose whether to insert it below their cell.

        Args:
            code: The cell's complete Python code.

        Returns:
            Whether the person inserted it.
        """
        if not code.strip():
            raise ValueError(
                "propose_cell needs code: the proposed cell is empty; send the cell's Python code"
            )
        problem = parse_problem(code)
        running = RUNNING_CALL.get()
        if running is None:
            outcome = "proposed; nobody to insert it: propose_cell was called outside an agent's run"
            return ProposedCell(code, False, outcome, problem)
        timeout = getattr(running.approver, "timeout", _WAIT)
        with running.hold():  # the person's time does not count against the call's limit
            asked = asyncio.run_coroutine_threadsafe(
                ask_to_insert(code, problem, running, timeout), running.loop
            )
            insertion = asked.result()
        outcome = insertion.outcome + (f" (the code does not parse: {problem})" if problem else "")
        return ProposedCell(code, insertion.inserted, outcome, problem)

    return tool(propose_cell, read_only=False)
