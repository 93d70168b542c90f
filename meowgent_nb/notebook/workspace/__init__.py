"""The notebook as the agent's workspace: what it may see of the person's variables, and what
the code it writes would do.

`code_risk`: a static scan that labels code (``read-only`` < ``modifies`` < ``writes-files`` <
``deletes`` < ``network`` < ``runs-commands`` < ``unreadable``), failing closed; `_risky_names`
holds the names it knows. `variables`: ``list_variables``, the person's variables by name, type
and shape, never their values. `notebook_tools`: the workspace's tools for an agent.
"""

from __future__ import annotations

from .code_risk import RISKS, CodeRisk, Risk, RiskReason, code_risk

__all__ = [
    # what code would do
    "RISKS",
    "CodeRisk",
    "Risk",
    "RiskReason",
    "code_risk",
]
