"""The notebook as the agent's workspace: what it may see of the person's variables, and what
the code it writes would do.

`risk`: `code_risk`, a static scan that labels code (``read-only`` < ``modifies`` <
``writes-files`` < ``deletes`` < ``network`` < ``runs-commands`` < ``unreadable``), failing
closed; `_risky_names` holds the names it knows. `variables`: ``list_variables``, the person's
variables by name, type and shape, never their values, and ``look_at``, one variable's bounded
view. `code_runs`: ``run_code``, the model's code run in the namespace as a cell, on its tool
thread, what it prints and displays captured for that thread alone (`_captured`), its value a
`CodeRun`. `proposals`: ``propose_cell``, a cell the agent proposes and the person may insert
below (the card and its buttons are `notebook.approvals.proposal_card`). `tools`:
`notebook_tools`, the workspace's tools for an agent.
"""

from __future__ import annotations

from .code_runs import CodeRun, run_code_tool
from .proposals import propose_cell_tool
from .risk import RISKS, CodeRisk, Risk, RiskReason, code_risk
from .tools import notebook_tools
from .variables import describe_value, list_variables_tool, look_at_tool, variable_view, variables_listing

__all__ = [
    # what code would do, and what it did
    "RISKS",
    "CodeRisk",
    "CodeRun",
    "Risk",
    "RiskReason",
    "code_risk",
    # the person's variables, and the tools
    "describe_value",
    "list_variables_tool",
    "look_at_tool",
    "notebook_tools",
    "propose_cell_tool",
    "run_code_tool",
    "variable_view",
    "variables_listing",
]
