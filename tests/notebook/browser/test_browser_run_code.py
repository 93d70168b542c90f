"""``run_code`` as a person sees it in a real browser (JupyterLab light, Notebook 7 dark), in a real
kernel with a DataFrame and ``%%agent --notebook``.

The model's code plots the DataFrame and prints; the person clicks Edit code, changes the title
and a number, Check, Approve these arguments: the card says "ran as edited", shows the edited code,
what it printed and the plot, an image of the figure's size inside the card. Then Stop, while
``run_code`` runs ``while True: pass`` under a 60 s time limit, ends it within seconds; the card
says "interrupted while running", and the next cell runs: the loop's thread was ended.

It saves run-code-{light,dark}.png (the finished card) and run-code-stopped-{light,dark}.png into
$MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/ keeps them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook

SETUP = """\
%load_ext meowgent_nb
import pandas as pd
from meowgent_nb import ScriptedModel
from meowgent_nb.testing import tool_call

df = pd.DataFrame({"city": ["Oslo", "Rome", "Oslo", "Rome"], "temp": [3.0, 18.0, 5.0, 20.0]})
m = ScriptedModel([tool_call("run_code", code=CODE), "The plot is above."])
"""
CODE = """\
import matplotlib.pyplot as plt
means = df.groupby("city").temp.mean()
fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
means.plot.bar(ax=ax, rot=0, title="Mean temperature")
print(means.round(1).to_dict())"""
EDITED = """\
import matplotlib.pyplot as plt
means = df.groupby("city").temp.mean()
fig, ax = plt.subplots(figsize=(5, 3), dpi=100)
means.plot.bar(ax=ax, rot=0, title="Mean temperature per city")
print("cities:", len(means), means.round(1).to_dict())"""
CELL = "%%agent --notebook --model-object m --new\nPlot the mean temperature per city."

LOOP = "spins = 0\nwhile True:\n    spins += 1"
LOOP_SETUP = """\
%load_ext meowgent_nb
%config AgentMagics.tool_timeout = 60
from meowgent_nb import ScriptedModel
from meowgent_nb.testing import tool_call

m = ScriptedModel([tool_call("run_code", code=LOOP), "Stopped."])
"""
LOOP_CELL = "%%agent --notebook --model-object m --new\nSpin."
NEXT = "import time\nbefore = spins\ntime.sleep(0.5)\nprint('the loop ended:', spins == before > 0)"

# The image's own size and where it is drawn, against the card's box.
IMAGE_BOX = """img => {
  const box = img.getBoundingClientRect(), card = img.closest('.meowgent-card').getBoundingClientRect();
  return {width: img.naturalWidth, height: img.naturalHeight, shown: Math.round(box.width),
          inside: box.left >= card.left && box.right <= card.right + 1 && box.top >= card.top
                  && box.bottom <= card.bottom + 1};
}"""

THEMES = pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)


def _screenshots(tmp_path: Path) -> Path:
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    return screenshots


def _open_turns(cell) -> None:
    """The finished turn is folded to one line; open it as a person would."""
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )


@THEMES
def test_edited_plotting_code_runs_and_its_card_shows_the_code_the_print_and_the_plot(
    jupyter, open_page, tmp_path, theme, suffix
):
    screenshots = _screenshots(tmp_path)
    write_notebook(jupyter.root / f"run_code_{suffix}.ipynb", [f"CODE = {CODE!r}\n" + SETUP, CELL])
    nb = open_page(jupyter, f"run_code_{suffix}.ipynb", theme)
    nb.run_all()
    cell = nb.cell(1)
    row = cell.locator(".meowgent-approval-row")
    nb.wait_visible(row, "the approval row of the run_code call", 90)
    shown = row.locator("pre.meowgent-code").inner_text()
    nb.check(shown == CODE, f"the row shows the code {shown!r}")

    cell.get_by_role("button", name="Edit code").click()
    editor = row.locator("textarea")
    nb.wait_visible(editor, "the edit box")
    nb.check(editor.input_value() == CODE, f"the edit box holds {editor.input_value()!r}")
    editor.fill(EDITED)
    cell.get_by_role("button", name="Check").click()
    nb.wait_text(row.locator(".meowgent-edit-preview"), "will run", "the checked code")
    cell.get_by_role("button", name="Approve these arguments").click()

    nb.wait_finished(1, "the agent cell (after the edited code was approved)", 90)
    _open_turns(cell)
    card = cell.locator(".meowgent-card").first
    nb.wait_text(card.locator(".meowgent-edited"), "ran as edited", "the card's mark of edited code")
    ran = card.locator("pre.meowgent-code").inner_text()
    nb.check(ran == EDITED, f"the card shows the code {ran!r} ran")
    output = card.locator(".meowgent-output").inner_text()
    nb.check(
        output
        == "Printed:\ncities: 2 {'Oslo': 4.0, 'Rome': 19.0}\nLeft open and shown: 1 figure ([image: image/png] each)",
        f"the card's output is {output!r}",
    )
    image = card.locator("img.meowgent-media")
    nb.wait_visible(image, "the plot in the card")
    box = image.evaluate(IMAGE_BOX)
    # A 5 x 3 in figure at 100 dpi, drawn as the inline backend draws it (its tight bounding box),
    # shown at its own size inside the card.
    expected = {"width": 448, "height": 316, "shown": 448, "inside": True}
    nb.check(box == expected, f"the plot is {box}, not {expected}")
    cell.locator(".jp-OutputArea").screenshot(path=str(screenshots / f"run-code-{suffix}.png"))


@THEMES
def test_stop_ends_code_that_runs_forever_within_seconds_and_the_next_cell_runs(
    jupyter, open_page, tmp_path, theme, suffix
):
    screenshots = _screenshots(tmp_path)
    write_notebook(
        jupyter.root / f"run_code_stop_{suffix}.ipynb", [f"LOOP = {LOOP!r}\n" + LOOP_SETUP, LOOP_CELL, NEXT]
    )
    nb = open_page(jupyter, f"run_code_stop_{suffix}.ipynb", theme)
    nb.run_all()
    cell = nb.cell(1)
    approve = cell.get_by_role("button", name="Approve", exact=True)
    nb.wait_visible(approve, "the Approve button of the run_code call", 90)
    approve.click()
    nb.wait_text(cell.locator(".meowgent-card").first, "running", "the running call's card")
    time.sleep(1)  # it spins a while
    stop = cell.get_by_role("button", name="Stop")
    nb.wait_visible(stop, "the Stop button")
    clicked = time.monotonic()
    stop.click()
    nb.wait_finished(1, "the agent cell (after Stop)", 20)
    took = time.monotonic() - clicked
    nb.check(took < 5, f"the cell took {took:.1f} s to end after Stop")
    _open_turns(cell)
    card = cell.locator(".meowgent-card").first
    status = card.locator(".meowgent-status").inner_text()
    nb.check(
        status == "interrupted while running", f"the card of the call stopped while it ran says {status!r}"
    )
    footer = cell.locator(".meowgent-footer").inner_text()
    nb.check(footer.startswith("stopped by you after 1 turn, 1 tool call"), f"the footer says {footer!r}")
    errors = cell.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']").count()
    nb.check(errors == 0, "Stop showed an error")
    nb.wait_finished(2, "the cell after the stopped one")
    nb.wait_text(
        nb.cell(2).locator(".jp-OutputArea"), "the loop ended: True", "its output (spins no longer grows)"
    )
    cell.locator(".jp-OutputArea").screenshot(path=str(screenshots / f"run-code-stopped-{suffix}.png"))
