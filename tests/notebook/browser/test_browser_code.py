"""A call carrying code, in a real browser (JupyterLab light, Notebook 7 dark): the approval row
shows the code highlighted with its risk label; Edit opens the code as text; Check shows the new
code's label; Approve these arguments runs the edited code, and the card shows the code that ran,
"ran as edited" and its output.

It saves code-approval-{light,dark}.png (the row after Check) and code-card-{light,dark}.png (the
finished cell) into $MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/ keeps them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook
from tests.support.browser_pages import CONTRAST

SETUP = '''\
%load_ext meowgent_nb
import json
from meowgent_nb import ScriptedModel, tool
from meowgent_nb.notebook.workspace import code_risk

@tool(approval=True, facts={"risk": lambda arguments: code_risk(arguments["code"]).label})
def run_code(code: str) -> str:
    """Run Python code; what it prints comes back.

    Args:
        code: The code.
    """
    printed = []
    exec(code, {"print": lambda *values: printed.append(" ".join(map(str, values)))})
    return "\\n".join(printed)

run_code.code_argument = "code"
call = json.dumps({"name": "run_code", "arguments": {"code": "print(sum(range(4)))"}})
model = ScriptedModel([f"<tool_call>{call}</tool_call>", "Done."])
'''
CELL = "%%agent --model-object model --new\nAdd up the first numbers."
EDITED = 'total = sum(range(10))\nprint(f"the total is {total}")'


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_edited_code_is_checked_approved_and_its_card_shows_what_ran(
    jupyter, open_page, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    write_notebook(server.root / f"code_{suffix}.ipynb", [SETUP, CELL])
    nb = open_page(server, f"code_{suffix}.ipynb", theme)
    nb.run_all()
    cell = nb.cell(1)
    row = cell.locator(".meowgent-approval-row")
    nb.wait_visible(row, "the approval row of the run_code call")
    nb.wait_text(row.locator(".meowgent-risk"), "risk: read-only", "the model's code's risk label")
    shown = row.locator("pre.meowgent-code").inner_text()
    nb.check(shown == "print(sum(range(4)))", f"the row shows the code {shown!r}")
    contrast = row.locator("pre.meowgent-code").evaluate(CONTRAST)
    nb.check(contrast >= 4.5, f"the code's contrast is {contrast}:1 (< 4.5)")

    cell.get_by_role("button", name="Edit code").click()
    editor = row.locator("textarea")
    nb.wait_visible(editor, "the edit box")
    text = editor.input_value()
    nb.check(text == "print(sum(range(4)))", f"the edit box holds {text!r}, not the code alone")
    editor.fill(EDITED)
    cell.get_by_role("button", name="Check").click()
    preview = row.locator(".meowgent-edit-preview")
    nb.wait_text(preview.locator(".meowgent-risk"), "risk: modifies", "the edited code's risk label")
    reasons = preview.locator(".meowgent-risk-reasons").inner_text()
    nb.check(
        reasons == "has a statement that binds or changes: total = sum(range(10)) (line 1)",
        f"the label is based on {reasons!r}",
    )
    row.screenshot(path=str(screenshots / f"code-approval-{suffix}.png"))

    cell.get_by_role("button", name="Approve these arguments").click()
    nb.wait_finished(1, "the agent cell (after the edited code was approved)")
    # The finished turn is folded to one line; open it as a person would.
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )
    card = cell.locator(".meowgent-card").first
    nb.wait_text(card.locator(".meowgent-edited"), "ran as edited", "the card's mark of edited code")
    ran = card.locator("pre.meowgent-code").inner_text()
    nb.check(ran == EDITED, f"the card shows the code {ran!r} ran")
    nb.wait_text(card.locator(".meowgent-risk"), "risk: modifies", "the card's risk label")
    output = card.locator(".meowgent-output").inner_text()
    nb.check(output.endswith("the total is 45"), f"the card's output is {output!r}")
    cell.locator(".jp-OutputArea").screenshot(path=str(screenshots / f"code-card-{suffix}.png"))
