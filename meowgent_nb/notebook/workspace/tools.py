"""`notebook_tools`: the tools that give an agent the notebook as its workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...tools import Tool
from .code_runs import run_code_tool
from .proposals import propose_cell_tool
from .variables import list_variables_tool, look_at_tool

__all__ = ["notebook_tools"]


def notebook_tools(namespace: Mapping[str, Any]) -> list[Tool]:
    """The workspace's tools over a person's namespace, for ``Agent(tools=...)``.

    ``list_variables`` (the names, types and shapes of the variables, no values) and
    ``look_at`` (one variable's bounded view), which only read and ask for no approval;
    ``run_code`` (code run in the namespace as a cell; each call asks a person, see
    `run_code_tool`); and ``propose_cell`` (a cell the person may insert below, with Insert
    below or Not now).

    Args:
        namespace: The person's names: ``get_ipython().user_ns`` in a notebook, ``globals()``
            in a script (a dict: ``run_code`` binds names in it).

    Returns:
        The tools, a new list at each call.

    Raises:
        TypeError: ``namespace`` is not a dict.
    """
    return [
        list_variables_tool(namespace),
        look_at_tool(namespace),
        run_code_tool(namespace),
        propose_cell_tool(),
    ]
