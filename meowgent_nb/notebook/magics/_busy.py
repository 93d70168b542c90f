"""The kernel reports "busy" for the whole run of a ``%%agent`` cell, whatever it handles meanwhile.

While an async cell awaits, ipykernel handles other requests (the approval buttons' clicks, a
subshell request), each ending with an "idle" that JupyterLab's status bar would show while the
cell still runs; `busy_while_running` follows each such idle with a "busy" for the cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["busy_while_running"]

_running: list[dict[str, Any]] = []
"""The execute requests of the ``%%agent`` cells running now, the newest last."""


@contextmanager
def busy_while_running(shell: Any) -> Iterator[None]:
    """Within it, the kernel of ``shell`` reports busy for the cell that runs now (no-op outside ipykernel)."""
    kernel: Any = getattr(shell, "kernel", None)  # ipykernel's, or None
    publish = getattr(kernel, "_publish_status", None)
    cell: Any = kernel.get_parent("shell") if callable(getattr(kernel, "get_parent", None)) else None
    if not callable(publish) or not _msg_id(cell):
        yield
        return
    if not _running:  # an outer cell (a subshell's) has already wrapped it
        kernel._publish_status = _reasserting(kernel, publish)
    _running.append(cell)
    try:
        yield
    finally:
        _running.remove(cell)
        if not _running:
            vars(kernel).pop("_publish_status", None)  # the class's method again


def _reasserting(kernel: Any, publish: Callable[..., object]) -> Callable[..., None]:
    def publish_status(status: str, channel: str, parent: Any = None) -> None:
        publish(status, channel, parent)
        running = list(_running)  # a control or subshell thread may publish while a cell ends
        if status == "idle" and running:
            cell = running[-1]
            if _msg_id(parent or kernel.get_parent(channel)) != _msg_id(cell):
                publish("busy", "shell", cell)

    return publish_status


def _msg_id(message: Any) -> str | None:
    header = message.get("header") if isinstance(message, dict) else None
    return header.get("msg_id") if isinstance(header, dict) else None
