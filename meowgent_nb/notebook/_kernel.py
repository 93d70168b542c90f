"""The running IPython shell and kernel, and whether a person can answer in the running cell."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["is_headless", "running_kernel", "running_shell"]


def running_shell() -> Any:
    """The running IPython shell, or None (IPython is not imported just to find out)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def running_kernel() -> Any:
    return getattr(running_shell(), "kernel", None)


def is_headless() -> bool:
    """Whether the code runs in a kernel whose current cell was sent with ``allow_stdin`` false.

    nbval, nbclient and papermill send cells that way; a person's frontend does not. False
    outside a kernel.
    """
    kernel = running_kernel()
    if kernel is None:
        return False
    # The parent is a ContextVar, so it is the request of the cell running in this task, even
    # when another request (on a subshell) arrived since; `_allow_stdin` is only the latest one's.
    parent = kernel.get_parent("shell") or {}
    if parent.get("header", {}).get("msg_type") == "execute_request":
        return not parent.get("content", {}).get("allow_stdin", False)
    return not getattr(kernel, "_allow_stdin", False)
