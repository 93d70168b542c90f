"""Course notebooks run by a person: an answer that follows an approval says what was decided.

nbval runs the notebooks headless, where every call that asks is denied; these tests click the
buttons in a real kernel, as a person in JupyterLab does, and read the answer after the click.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.kernel_driver import Kernel, Run, clicking

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def code_cells(name: str) -> list[str]:
    cells = json.loads((NOTEBOOKS / name).read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def answer(run: Run) -> str:
    """The last line of the transcript as the cell last showed it: the model's answer."""
    texts = [c["data"]["text/plain"] for c in run.of_type("display_data", "update_display_data")]
    return texts[-1].splitlines()[-1]


@pytest.fixture(scope="module")
def notebook_7():
    """One kernel for the module: notebook 7's cells before its first ``%%agent`` cell run once
    (the library server started); each test starts the conversation over, as a person does."""
    cells = code_cells("07_mcp_tools.ipynb")
    first_agent_cell = next(i for i, code in enumerate(cells) if code.startswith("%%agent"))
    kernel = Kernel(str(NOTEBOOKS))
    try:
        for code in cells[:first_agent_cell]:
            assert kernel.execute(code).reply["status"] == "ok", code
        yield kernel, cells[first_agent_cell]
    finally:
        kernel.shutdown()


@pytest.mark.parametrize(
    ("button", "expected"),
    [
        ("Approve", "Done: Dune is lent to Ada."),
        (
            "Deny",
            "Dune is available, but I did not lend it. The loan was denied: the person did not approve this call.",
        ),
    ],
)
def test_notebook_7_answers_what_the_person_decided_on_the_loan(notebook_7, button, expected):
    # Before, the answer was scripted in advance: "nobody approved the loan", even after Approve.
    kernel, agent_cell = notebook_7
    kernel.ok("%agent reset")
    run = kernel.execute(agent_cell, hook=clicking((button, 0)))
    assert run.reply["status"] == "ok", run.reply
    assert answer(run) == expected
