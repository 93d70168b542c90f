"""The course notebook that replays a cassette: what its cells ask and answer, and a second Run All
in the same kernel."""

from __future__ import annotations

import json
from pathlib import Path

from meowgent_nb.testing import run_notebook
from tests.support.kernel_driver import Kernel

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


def test_notebook_5_calls_and_answers_as_recorded():
    run = run_notebook(NOTEBOOKS / "05_real_model.ipynb", env={"MEOWGENT_CASSETTE_MODE": "replay"})
    assert [(cell.prompt, cell.answer, cell.stopped) for cell in run.cells] == [
        ("What is the weather in Paris?", "Paris: 21 degrees celsius, sunny", "answer"),
        ("In one sentence: why is the sky blue?", "The sky is blue because it is a shade of blue.", "answer"),
        (
            "What is the weather in Paris and in Oslo?",
            "Paris: 21 degrees celsius, sunny\nOslo: 9 degrees fahrenheit, sunny",
            "answer",
        ),
        ("What is 2.5 plus 4?", "6.5", "answer"),
    ]
    # The list protocol's cell: a two-part request answered with two calls in one turn.
    assert run.calls == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_weather", {"city": "Oslo", "unit": "fahrenheit"}),
    ]
    assert [(r.kind, r.output) for r in run.results] == [
        ("ok", "Paris: 21 degrees celsius, sunny"),
        ("ok", "Paris: 21 degrees celsius, sunny"),
        ("ok", "Oslo: 9 degrees fahrenheit, sunny"),
    ]
