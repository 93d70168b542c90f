"""A tool with a typo, in a real browser (JupyterLab light, Notebook 7 dark): its card shows the
error the model read and, under it, where the tool's code raised (the cell, the line, its code);
``%agent traceback`` shows the tool's whole traceback in IPython's colours.

It saves tool-error-card-{light,dark}.png (the finished cell) and tool-traceback-{light,dark}.png
(the traceback) into $MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/ keeps them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook

SETUP = '''\
%load_ext meowgent_nb
import json
from meowgent_nb import ScriptedModel, tool

@tool
def shout(text: str) -> str:
    """Shout the text."""
    return txet.upper()

call = json.dumps({"name": "shout", "arguments": {"text": "hi"}})
model = ScriptedModel([f"<tool_call>{call}</tool_call>", "Sorry, the tool failed."])
'''
CELL = "%%agent --model-object model --new\nShout hi."


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_a_tool_with_a_typo_shows_where_it_raised_and_its_traceback(
    jupyter, open_page, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    write_notebook(server.root / f"tool_error_{suffix}.ipynb", [SETUP, CELL, "%agent traceback"])
    nb = open_page(server, f"tool_error_{suffix}.ipynb", theme)
    nb.run_all()
    cell = nb.cell(1)
    nb.wait_finished(1, "the agent cell")
    # The finished turn is folded to one line; open it as a person would.
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )
    card = cell.locator(".meowgent-card").first
    output = nb.wait_visible(card.locator(".meowgent-output"), "the card's output").inner_text()
    nb.check(
        output == "Error: NameError: name 'txet' is not defined\n"
        "raised at Cell In[1], line 8, in shout:\n"
        "----> 8 return txet.upper()",
        f"the card's output is {output!r}",
    )
    cell.locator(".jp-OutputArea").screenshot(path=str(screenshots / f"tool-error-card-{suffix}.png"))

    nb.wait_finished(2, "the %agent traceback cell")
    shown = nb.cell(2).locator(".jp-OutputArea")
    nb.wait_text(shown, "NameError: name 'txet' is not defined", "the traceback's last line")
    text = shown.inner_text()
    nb.check(text.startswith("shout(text='hi') raised:"), f"the traceback begins {text[:80]!r}")
    nb.check("----> 8     return txet.upper()" in text, f"the traceback shows the line: {text!r}")
    shown.screenshot(path=str(screenshots / f"tool-traceback-{suffix}.png"))
