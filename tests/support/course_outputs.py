"""Save a course notebook's outputs as JupyterLab shows them, from its cassette: the saved outputs
that strict nbval compares and the docs site shows.

``python -m tests.support.course_outputs notebooks/05_real_model.ipynb`` runs the notebook in a
fresh kernel in its folder, as nbval does, and writes it back with its new outputs. Each ``%%agent``
cell whose metadata holds an expectation (``{"meowgent": {"expect": ...}}``) is sent as the pytest
plugin sends it under ``--nbval`` (`pytest_meowgent_nb.agent_cell_source`), so it prints its
"Expectation met" line as it does in JupyterLab, which sends a cell's metadata with its request;
nbclient sends none. The cell's source is saved as it was.

The kernel replays the cassette (``MEOWGENT_CASSETTE_MODE=replay`` unless set): no model answers
and a request the cassette lacks fails the run. To record what changed first (a new cell, a new
default protocol), run the notebook once with ``MEOWGENT_CASSETTE_MODE=record`` (the whole
cassette again) or ``auto`` (only what it lacks), e.g.
``MEOWGENT_CASSETTE_MODE=record python -m tests.support.course_outputs notebooks/05_real_model.ipynb``,
then once more without it, so the saved outputs are the replay's (the model line says "cassette
replay of ...").
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

from meowgent_nb.testing._notebook import kernel_transport
from pytest_meowgent_nb import agent_cell_source, cell_expectation


def save_outputs(path: Path, env: dict[str, str]) -> None:
    """Run the notebook at ``path`` in its folder with ``env`` over this process's, and save it."""
    notebook = nbformat.read(path, as_version=4)
    sources: dict[int, str] = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and cell.source.startswith("%%agent"):
            _, ours = cell_expectation(cell)
            if ours:
                sources[index] = cell.source
                cell.source = agent_cell_source(cell.source, ours)
    with kernel_transport() as transport:
        client = NotebookClient(notebook, timeout=600, config=Config({"KernelManager": transport}))
        client.execute(cwd=str(path.parent), env={**os.environ, **env})
    for index, source in sources.items():
        notebook.cells[index].source = source
    nbformat.write(notebook, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.course_outputs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("notebook", type=Path, help="the .ipynb file to run and save")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        parser.error(
            f"there is no notebook {args.notebook}: name an .ipynb file, e.g. notebooks/05_real_model.ipynb"
        )
    mode = os.environ.get("MEOWGENT_CASSETTE_MODE", "replay")
    save_outputs(args.notebook.resolve(), {"MEOWGENT_CASSETTE_MODE": mode})
    print(f"{args.notebook}: outputs saved (cassette mode {mode})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
