"""The course notebook that replays a cassette: what its cells ask and answer, and a second Run All
in the same kernel."""

from __future__ import annotations

import json
import shutil
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
    # decide, the embedded model's protocol: the list grammar leaves the unit at its default in the
    # first cell; the two-part request is answered with two calls in one turn.
    assert run.calls == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_weather", {"city": "Oslo", "unit": "fahrenheit"}),
    ]
    assert [(r.kind, r.output) for r in run.results] == [
        ("ok", "Paris: 21 degrees celsius, sunny"),
        ("ok", "Paris: 21 degrees celsius, sunny"),
        ("ok", "Oslo: 9 degrees fahrenheit, sunny"),
    ]


def text_outputs(cell) -> list[str]:
    """What a code cell shows as text: its streams and each display's text/plain."""
    return [
        "".join(output.get("text", "")) or "".join(output.get("data", {}).get("text/plain", ""))
        for output in cell.get("outputs", [])
    ]


def test_notebook_5s_saved_outputs_are_what_course_outputs_makes_from_its_cassette(tmp_path):
    # The cells with an expectation are checked on their calls under nbval, not on their words:
    # this holds their saved words (and "Expectation met" lines) to the cassette as well.
    import nbformat

    from tests.support.course_outputs import save_outputs

    for name in ("05_real_model.ipynb", "05_real_model.cassette.json"):
        shutil.copy(NOTEBOOKS / name, tmp_path / name)
    save_outputs(tmp_path / "05_real_model.ipynb", {"MEOWGENT_CASSETTE_MODE": "replay"})
    made = nbformat.read(tmp_path / "05_real_model.ipynb", as_version=4).cells
    saved = nbformat.read(NOTEBOOKS / "05_real_model.ipynb", as_version=4).cells
    assert [c.source for c in made] == [c.source for c in saved]
    compared = [
        i for i, c in enumerate(saved) if c.cell_type == "code" and "NBVAL_IGNORE_OUTPUT" not in c.source
    ]
    assert [text_outputs(made[i]) for i in compared] == [text_outputs(saved[i]) for i in compared]
    assert (
        text_outputs(saved[5])[-1]
        == "Expectation met: get_weather(city='Paris') then answered (1 call, answered).\n"
    )
