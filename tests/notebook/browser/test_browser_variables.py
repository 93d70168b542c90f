"""``{df}`` in a ``%%agent`` cell, seen in a real browser: JupyterLab's light theme and Notebook 7's
dark one. The transcript says first which variables the model saw and what each cost, readable in
both themes and within the output area of a narrow window.

It saves variables-{light,dark}.png (the cell's output) into $MEOWGENT_SCREENSHOTS when set, else a
tmp dir; docs/screenshots/variables-{light,dark}.png are those.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook
from tests.support.browser_pages import CONTRAST, LAYOUT, NARROW, VIEWPORT

SETUP = """\
%load_ext meowgent_nb
import pandas as pd
from meowgent_nb import ScriptedModel

weather = pd.DataFrame({"city": ["Paris", "Oslo", "Rome"] * 400, "temp": [21.5, 9.0, 25.0] * 400})
model = ScriptedModel(["Rome is the warmest, at 25.0 degrees."])
"""
CELL = "%%agent --model-object model --new\nWhich city in {weather} is the warmest?"
LINE = "variables shown: weather (DataFrame, 84 tokens)"


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_the_cell_says_which_variables_the_model_saw_and_their_cost(
    jupyter, open_page, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    write_notebook(server.root / f"variables_{suffix}.ipynb", [SETUP, CELL])
    nb = open_page(server, f"variables_{suffix}.ipynb", theme)
    nb.cell(0).locator(".jp-InputArea-editor").click()
    nb.page.keyboard.press("Shift+Enter")
    nb.page.keyboard.press("Shift+Enter")
    nb.wait_finished(1, "the agent cell")
    cell = nb.cell(1)
    line = cell.locator(".meowgent-variables")
    nb.wait_visible(line, "the variables line of the transcript")
    shown = line.inner_text()
    nb.check(shown == LINE, f"the variables line reads {shown!r}")
    answer = cell.locator(".meowgent-transcript").inner_text()
    nb.check("Rome is the warmest, at 25.0 degrees." in answer, f"the transcript reads {answer!r}")
    nb.check(
        answer.index(LINE) < answer.index("Rome is"), "the variables line does not come before the answer"
    )
    contrast = line.evaluate(
        CONTRAST.replace("style.backgroundColor", "getComputedStyle(document.body).backgroundColor")
    )
    nb.check(contrast >= 4.5, f"the variables line's contrast is {contrast}:1 (< 4.5)")
    nb.page.set_viewport_size(NARROW)
    try:
        layout = line.evaluate(LAYOUT)
        nb.check(layout["fits"], f"the variables line runs past the output area in a narrow window: {layout}")
    finally:
        nb.page.set_viewport_size(VIEWPORT)
    cell.locator(".jp-OutputArea").screenshot(path=str(screenshots / f"variables-{suffix}.png"))
