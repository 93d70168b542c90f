"""``python -m meowgent_nb demo``: run the real-model course notebook and print what its cells showed.

`main` runs ``notebooks/05_real_model.ipynb`` (or the notebook named) headless in its folder with
`meowgent_nb.testing.run_notebook`, and prints each ``%%agent`` cell as a person would read it
in JupyterLab: the cell, the model, the transcript and the footer. The model answers live unless
``MEOWGENT_CASSETTE_MODE`` says otherwise; nothing is saved unless ``--output`` names a file.
Importing this module does nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, TextIO

__all__ = ["NOTEBOOK", "agent_cell_text", "main"]

NOTEBOOK = Path("notebooks") / "05_real_model.ipynb"
"""The course notebook the demo runs, from the root of a clone."""


class _Classes(HTMLParser):
    """The text inside the first element of each of some CSS classes, in a transcript's HTML."""

    def __init__(self, classes: Sequence[str]):
        super().__init__()
        self.wanted = set(classes)
        self.found: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []  # (tag, the wanted class it opened, if any)
        self._texts: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        fresh = sorted(c for c in classes & self.wanted if c not in self.found and c not in self._texts)
        hit = fresh[0] if fresh else None
        if hit is not None:
            self._texts[hit] = []
        if tag not in ("br", "img", "hr", "input", "meta", "link"):
            self._open.append((tag, hit))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            opened, hit = self._open.pop()
            if hit is not None:
                self.found[hit] = "".join(self._texts.pop(hit)).strip()
            if opened == tag:
                break

    def handle_data(self, data: str) -> None:
        for texts in self._texts.values():
            texts.append(data)


def _transcript_output(cell: Any) -> dict[str, Any]:
    """The data of the cell's last transcript display (``{}`` when it shows none)."""
    for output in reversed(cell.get("outputs", [])):
        data = output.get("data", {})
        if str(data.get("text/html", "")).startswith('<div class="meowgent-transcript">'):
            return dict(data)
    return {}


def agent_cell_text(cell: Any) -> str:
    """One executed ``%%agent`` cell as plain text: its source, the model, the transcript, the footer."""
    data = _transcript_output(cell)
    parts = [str(cell.get("source", "")).strip()]
    # What the cell printed besides its transcript: e.g. that the embedded model answers instead of Ollama's.
    parts += [
        str(o.get("text", "")).strip("\n")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream"
    ]
    if not data:
        parts.append("(this cell showed no transcript)")
        return "\n".join(parts) + "\n"
    shown = _Classes(("meowgent-model", "meowgent-footer"))
    shown.feed(str(data.get("text/html", "")))
    if "meowgent-model" in shown.found:
        parts.append(f"model: {shown.found['meowgent-model']}")
    parts.append(str(data.get("text/plain", "")).strip("\n"))
    if "meowgent-footer" in shown.found:
        parts.append(shown.found["meowgent-footer"])
    return "\n".join(parts) + "\n"


def demo(notebook: Path, output: Path | None, out: TextIO) -> int:
    """Run ``notebook`` and print its agent cells; 0 when every cell ran, 1 when one failed."""
    try:
        from nbclient.exceptions import CellExecutionError

        from .testing import run_notebook
    except ImportError as error:
        print(
            f"The demo runs the notebook with nbclient, which is missing ({error}); install the test"
            ' extra: pip install -e ".[test,local]"',
            file=sys.stderr,
        )
        return 1
    if not notebook.is_file():
        print(
            f"There is no notebook {notebook}: run the demo from the root of the meowgent_nb clone,"
            " or name a notebook: python -m meowgent_nb demo PATH.ipynb",
            file=sys.stderr,
        )
        return 1
    env: dict[str, str] = {}
    mode = os.environ.get("MEOWGENT_CASSETTE_MODE")
    if mode is None:
        env["MEOWGENT_CASSETTE_MODE"] = mode = "off"
    how = "the model answers live" if mode == "off" else f"cassette mode {mode!r}"
    print(
        f"Running {notebook} headless ({how}; MEOWGENT_CASSETTE_MODE={mode}). A local model's"
        " first load takes a while; each %%agent cell is printed when the notebook has run.\n",
        file=out,
        flush=True,
    )
    started = time.perf_counter()
    try:
        run = run_notebook(notebook, env=env)
    except CellExecutionError as error:
        print(f"A cell of {notebook} failed:\n{error}", file=sys.stderr)
        return 1
    for cell in run.cells:
        print(f"--- cell {cell.index + 1} " + "-" * 50, file=out)
        print(agent_cell_text(run.notebook.cells[cell.index]), file=out)
    took = time.perf_counter() - started
    cells = len(run.cells)
    print(f"{cells} %%agent cell{'s' * (cells != 1)} ran in {took:.0f} s.", end=" ", file=out)
    if output is not None:
        import nbformat

        nbformat.write(run.notebook, output)
        print(f"The executed notebook is {output}; open it in JupyterLab.", file=out)
    else:
        print("Nothing was saved (--output FILE.ipynb saves the executed notebook).", file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """The command line: ``python -m meowgent_nb demo [NOTEBOOK] [--output FILE]``."""
    parser = argparse.ArgumentParser(prog="python -m meowgent_nb", description="meowgent_nb's commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "demo", help="Run the real-model course notebook headless and print each %%%%agent cell's transcript."
    )
    run.add_argument(
        "notebook", nargs="?", type=Path, default=NOTEBOOK, help=f"the notebook (default: {NOTEBOOK})"
    )
    run.add_argument("-o", "--output", type=Path, help="also save the executed notebook to this file")
    args = parser.parse_args(argv)
    return demo(args.notebook, args.output, sys.stdout if out is None else out)


if __name__ == "__main__":
    sys.exit(main())
