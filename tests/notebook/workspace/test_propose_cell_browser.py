"""``propose_cell`` in a real browser: JupyterLab's light theme and Notebook 7's dark one. The card
shows the proposed code highlighted with Insert below and Not now; two proposals are both
inserted, and the cell that appears below the ``%%agent`` cell holds exactly their code, in order
(the frontends read one ``set_next_input`` payload per reply, so both go in that one cell).

It saves propose-cell-{light,dark}.png (the card waiting for the click) into $MEOWGENT_SCREENSHOTS
when set, else a tmp dir; docs/screenshots/propose-cell-{light,dark}.png are those.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook
from tests.support.browser_pages import CONTRAST

FIRST = "means = df.groupby('city').temp.mean()  # the mean per city"
SECOND = "for city, temp in means.items():\n    print(f'{city}: {temp:.1f}')"
SETUP = f"""\
%load_ext meowgent_nb
from meowgent_nb import ScriptedModel
from meowgent_nb.notebook.workspace import propose_cell_tool
from meowgent_nb.testing import tool_call

propose_cell = propose_cell_tool()
model = ScriptedModel([tool_call("propose_cell", code={FIRST!r}), tool_call("propose_cell", code={SECOND!r}), "Run them."])
"""
CELL = "%%agent --model-object model --new\nWhat should I run next?"


def source(cell) -> str:
    """A cell's text as its editor holds it (CodeMirror draws a line per element, an empty one as a <br>)."""
    lines = cell.locator(".cm-content .cm-line").all_inner_texts()
    return "\n".join(line.replace("\u200b", "").rstrip("\n") for line in lines)


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_insert_below_puts_the_proposed_code_in_a_new_cell_below(jupyter, open_page, tmp_path, theme, suffix):
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    write_notebook(jupyter.root / f"propose_{suffix}.ipynb", [SETUP, CELL])
    nb = open_page(jupyter, f"propose_{suffix}.ipynb", theme)
    nb.cell(0).locator(".jp-InputArea-editor").click()
    nb.page.keyboard.press("Shift+Enter")
    nb.page.keyboard.press("Shift+Enter")
    cell = nb.cell(1)
    for index, code in enumerate((FIRST, SECOND)):
        card = cell.locator(".meowgent-proposal").nth(index)
        nb.wait_text(card, code.split("\n")[0], "the proposed code in the card", 90)
        insert = card.get_by_role("button", name="Insert below")
        nb.wait_visible(insert, "the Insert below button")
        nb.check(card.get_by_role("button", name="Not now").is_visible(), "the Not now button is not shown")
        nb.check(nb.prompt(1) == "[*]:", "the agent cell should still run while the proposal waits")
        contrast = card.locator(".meowgent-code pre").evaluate(CONTRAST)
        nb.check(contrast >= 4.5, f"the proposed code's contrast is {contrast}:1 (< 4.5)")
        if index == 0:
            cell.locator(".jp-OutputArea").screenshot(path=str(screenshots / f"propose-cell-{suffix}.png"))
        insert.click()
        if index == 0:  # the run waits for the second proposal, so this card is still drawn
            nb.wait_text(
                card.locator(".meowgent-proposal-outcome"), "inserted below", "the card after the click"
            )
    # After the last click the run ends at once and its turns fold, the card with them: the cell
    # below is what says the click was taken.
    nb.wait_finished(1, "the agent cell")
    below = source(nb.cell(2))
    nb.check(below == f"{FIRST}\n\n{SECOND}", f"the cell below the agent cell holds {below!r}")
