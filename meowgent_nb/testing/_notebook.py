"""`run_notebook`: run a notebook headless (nbclient) and get its ``%%agent`` cells as data.

The notebook runs as nbval and papermill run it (a fresh kernel in its folder, no stdin, so
approvals follow ``MEOWGENT_APPROVE``), except that the kernel talks to this process over Unix
sockets in a private folder rather than TCP where the platform has them (`kernel_transport`): no
port is open to the machine, and ipykernel has no reason to print its warning that the kernel
"is running over TCP without encryption" into the run's output. Nothing is saved. Two unsaved cells that leave no
history run in the same kernel, one before the notebook and one after it
(`meowgent_nb.notebook.magics._run_record`): they note each agent cell's result, so the notebook's own
cells, counts and outputs are those of a plain run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AgentCell", "NotebookRun", "ToolRun", "kernel_transport", "run_notebook"]

_START = "__import__('meowgent_nb.notebook.magics._run_record').notebook.magics._run_record.start()"
_COLLECT = "__import__('meowgent_nb.notebook.magics._run_record').notebook.magics._run_record.collected()"


@dataclass(frozen=True)
class ToolRun:
    """One tool call of an agent cell and what came of it."""

    name: str
    arguments: dict[str, Any]
    """As the model sent them."""
    kind: str
    """``ok``, or what went wrong (``denied``, ``invalid_arguments``, ``error``...)."""
    output: str
    """The text the model received."""


@dataclass(frozen=True)
class AgentCell:
    """One ``%%agent`` cell of a run: what was asked, what the model did, what it answered."""

    index: int
    """The cell's position in the notebook, from 0 (markdown cells count)."""
    source: str
    prompt: str
    """What the model was sent for this cell (``{name}`` filled in, nbval markers removed)."""
    answer: str
    """The final answer's text."""
    turns: int
    stopped: str
    """Why the run ended: ``answer``, ``max_turns``, ``repeated_failure``..."""
    results: tuple[ToolRun, ...]
    """Every call, in the order the model made them."""
    transcript: str
    """The transcript's ``text/plain``, as nbval compares it."""

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        """``(name, arguments)`` of each call."""
        return [(r.name, r.arguments) for r in self.results]


@dataclass(frozen=True)
class NotebookRun:
    """A notebook after `run_notebook`: the executed notebook and its agent cells."""

    path: Path
    notebook: Any
    """The executed notebook (an ``nbformat.NotebookNode``), outputs and all; never saved."""
    cells: tuple[AgentCell, ...]
    """The ``%%agent`` cells that finished, in order."""

    @property
    def answers(self) -> list[str]:
        return [cell.answer for cell in self.cells]

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        return [call for cell in self.cells for call in cell.calls]

    @property
    def results(self) -> list[ToolRun]:
        return [result for cell in self.cells for result in cell.results]


def _transcript_text(cell: Any) -> str:
    for output in reversed(cell.get("outputs", [])):
        data = output.get("data", {})
        if str(data.get("text/html", "")).startswith('<div class="meowgent-transcript">'):
            return str(data.get("text/plain", ""))
    return ""


@contextmanager
def kernel_transport() -> Iterator[dict[str, Any]]:
    """The kernel manager's settings for a kernel only this process talks to: ZeroMQ's ``ipc``
    transport (Unix sockets) in a folder of its own, mode 0700, removed afterwards.

    Where ZeroMQ has no ``ipc`` (Windows), the settings are empty: the kernel keeps TCP on
    127.0.0.1, and ipykernel warns that it is unencrypted.
    """
    import zmq

    if not zmq.has("ipc"):
        yield {}
        return
    folder = tempfile.mkdtemp(prefix="meowgent-kernel-")  # 0700; short, for the sockets' path limit
    try:
        yield {"transport": "ipc", "ip": os.path.join(folder, "kernel")}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_notebook(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    kernel_name: str | None = None,
    allow_errors: bool = False,
) -> NotebookRun:
    """Run the notebook at ``path`` headless, in its folder, and return its agent cells as data.

    Args:
        path: The ``.ipynb`` file.
        env: Environment variables for the kernel, over this process's (e.g.
            ``{"MEOWGENT_APPROVE": "allow", "MEOWGENT_CASSETTE_MODE": "replay"}``).
        timeout: Seconds a cell may run.
        kernel_name: The kernel to use; by default the notebook's own.
        allow_errors: Go on after a cell fails (its error is in ``notebook``'s outputs), instead
            of raising.

    Raises:
        nbclient.exceptions.CellExecutionError: A cell failed (unless ``allow_errors``); the
            message names the cell and shows its traceback.
    """
    import nbformat
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from traitlets.config import Config

    file = Path(path).resolve()
    notebook = nbformat.read(file, as_version=4)

    options: dict[str, Any] = {"kernel_name": kernel_name} if kernel_name else {}
    start_env = {**os.environ, **env} if env is not None else None
    hidden = [nbformat.v4.new_code_cell(_START), nbformat.v4.new_code_cell(_COLLECT)]

    async def run() -> dict[str, Any]:
        kwargs: dict[str, Any] = {"cwd": str(file.parent)}
        if start_env is not None:
            kwargs["env"] = start_env
        async with client.async_setup_kernel(**kwargs):
            # A hidden cell is run as the notebook's last cell index; nbclient puts it back there,
            # so the notebook's cells are restored after each.
            last = len(notebook.cells) - 1
            kept = notebook.cells[last] if last >= 0 else None
            await _hidden(client, hidden[0], last, kept)
            for index, cell in enumerate(notebook.cells):
                await client.async_execute_cell(cell, index)
            await _hidden(client, hidden[1], last, notebook.cells[last] if last >= 0 else None)
        shown = [output.get("data", {}) for output in hidden[1].outputs]
        return next((data["application/json"] for data in shown if "application/json" in data), {})

    with kernel_transport() as transport:
        # nbclient makes its kernel manager with its own config: ours reaches the manager that way.
        config = Config({"KernelManager": transport})
        client = NotebookClient(
            notebook, timeout=timeout, allow_errors=allow_errors, config=config, **options
        )
        data = run_sync(run)()
    by_count = {c.get("execution_count"): i for i, c in enumerate(notebook.cells) if c.cell_type == "code"}
    cells = []
    for record in data.get("runs", []):
        index = by_count.get(record["execution_count"], -1)
        source = notebook.cells[index].source if index >= 0 else ""
        cells.append(
            AgentCell(
                index=index,
                source=source,
                prompt=record["prompt"],
                answer=record["answer"],
                turns=record["turns"],
                stopped=record["stopped"],
                results=tuple(ToolRun(**r) for r in record["results"]),
                transcript=_transcript_text(notebook.cells[index]) if index >= 0 else "",
            )
        )
    return NotebookRun(file, notebook, tuple(cells))


async def _hidden(client: Any, cell: Any, index: int, kept: Any) -> None:
    """Run ``cell`` with no history; nbclient stores a cell at its index, so put ``kept`` back."""
    if index < 0:
        client.nb.cells.append(cell)
        index = 0
    try:
        await client.async_execute_cell(cell, index, store_history=False)
    finally:
        if kept is not None:
            client.nb.cells[index] = kept
        else:
            client.nb.cells.clear()
