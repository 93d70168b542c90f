"""The kernel says "busy" for the whole run of a ``%%agent`` cell, whatever it answers meanwhile.

ipykernel (7.4) publishes a busy and an idle status around each request it handles, with that
request as parent. While an async ``%%agent`` cell awaits, the kernel also handles others, which
is what lets the approval buttons work: JupyterLab >= 4.4 asks for a subshell (a control request)
when the cell's first widget shows, then sends the buttons' clicks to that subshell. Each ends
with its "idle", and JupyterLab's status bar shows the last status whatever its parent: "Idle",
while the cell still runs (seen in JupyterLab 4.6 with a real Chromium).

So while a cell runs, an idle status for another request is followed at once by a busy status
whose parent is the cell. The other request still gets its idle (a frontend waits for it), the
clicks are handled as before, and the cell's own idle, when it ends, is the last word.
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
