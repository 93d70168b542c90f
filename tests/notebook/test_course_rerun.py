"""The course notebook that replays a cassette survives a second Run All in the same kernel."""

from __future__ import annotations

import json
from pathlib import Path

from tests.kernel_driver import Kernel

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def code_cells(name: str) -> list[str]:
    cells = json.loads((NOTEBOOKS / name).read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def test_notebook_5_runs_all_twice_in_one_kernel():
    # Before, the first %%agent cell carried the conversation over from the first Run All, so its
    # request was not the recorded one and the cassette refused it.
    kernel = Kernel(str(NOTEBOOKS))
    try:
        for round_ in (1, 2):
            for number, code in enumerate(code_cells("05_real_model.ipynb"), 1):
                run = kernel.execute(code, allow_stdin=False)
                assert run.reply["status"] == "ok", (round_, number, run.reply.get("evalue"))
    finally:
        kernel.shutdown()
