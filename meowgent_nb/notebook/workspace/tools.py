"""`notebook_tools`: the tools that give an agent the notebook as its workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...tools import Tool
from .proposals import propose_cell_tool
from .variables import list_variables_tool, look_at_tool

__all__ = ["notebook_tools"]


def notebook_tools(namespace: Mapping[str, Any]) -> list[Tool]:
    """The workspace's tools over a person's namespace, for ``Agent(tools=...)``.

    So far ``list_variables`` (the names, types and shapes of the variables, no values),
    ``look_at`` (one variable's bounded view), neither asking for approval (both only read), and
    ``propose_cell`` (a cell the person may insert below, with Insert below or Not now).

    Args:
        namespace: The person's names: ``get_ipython().user_ns`` in a notebook, ``globals()``
            in a script.

    Returns:
        The tools, a new list at each call.

    Raises:
        TypeError: ``namespace`` is not a mapping.
    """
    return [list_variables_tool(namespace), look_at_tool(namespace), propose_cell_tool()]
