"""Who decided, where a person reads it (issue 45, items 2 and 9), in a real browser: JupyterLab
light and Notebook 7 dark, in a 1280 px window: about 850 px of output beside JupyterLab's
file browser, a laptop's.

A call a person approves with a click, calls a rule allows and denies, and a call a person edits
(Edit arguments, Check, Approve these arguments): each finished turn's folded line says who
decided; then ``%agent decisions`` draws its HTML table inside the output's width, the edit as
asked -> ran, the long arguments cut with the whole on hover, the facts column.

It saves audit-folds-{light,dark}.png (the folded turns) and audit-decisions-{light,dark}.png (the
table) into $MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/ keeps them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.notebook.browser.test_browser import wait_for_buttons
from tests.support.browser_notebook import write_notebook

SETUP = '''\
%load_ext meowgent_nb
import json, pathlib
from meowgent_nb import ScriptedModel, tool
from meowgent_nb.agent.approvals.decisions import session_decisions

@tool(approval=True, facts={"size": lambda args: f"{len(args['text'])} characters"})
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(text)
    return f"wrote {len(text)} characters to {path}"

def calls(*paths, text="draft"):
    return "".join(
        "<tool_call>" + json.dumps({"name": "write_file", "arguments": {"path": p, "text": text}}) + "</tool_call>"
        for p in paths
    )

LONG = "Minutes of the Tuesday meeting: the budget, the new office, who brings the cake next week. " * 2
asked = ScriptedModel([calls("draft.txt"), "Written."])
ruled = ScriptedModel([calls("scratch/minutes.txt", "keep/minutes.txt", text=LONG), "Done."])
edited = ScriptedModel([calls("model.txt", text="from the model"), "Written."])
session_decisions().clear()
%agent allow write_file path=scratch/**
%agent deny write_file path=keep/**
'''
CELLS = [
    SETUP,
    "%%agent --model-object asked --new\nWrite a draft.",
    "%%agent --model-object ruled --new\nFile the minutes.",
    "%%agent --model-object edited --new\nWrite a file.",
    "%agent decisions",
]
FOLDS = [
    "turn 1: write_file(path='draft.txt', text='draft') approved by you, done",
    "turn 1: write_file(path='scratch/minutes.txt', text='Minutes of the Tuesday ...) allowed by rule 1, done",
    "turn 1: write_file(path='keep/minutes.txt', text='Minutes of the Tuesday mee...) denied by rule 2",
    "turn 1: write_file(path='person.txt', text='from the person') (edited) approved by you, done",
]


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_folded_turns_say_who_decided_and_the_decision_log_reads_at_a_laptops_width(
    jupyter, open_page, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    write_notebook(server.root / f"audit_{suffix}.ipynb", CELLS)
    nb = open_page(server, f"audit_{suffix}.ipynb", theme)
    nb.run_all()
    wait_for_buttons(nb, 1)
    nb.cell(1).get_by_role("button", name="Approve", exact=True).click()
    nb.wait_finished(2, "the cell whose calls the rules decided")

    agent = nb.cell(3)
    wait_for_buttons(nb, 3)
    agent.get_by_role("button", name="Edit arguments").click()
    editor = agent.locator(".meowgent-approval-row textarea")
    nb.wait_visible(editor, "the edit box")
    editor.fill('{"path": "person.txt", "text": "from the person"}')
    agent.get_by_role("button", name="Check").click()
    nb.wait_text(agent.locator(".meowgent-edit-preview"), "will run:", "the checked call")
    agent.get_by_role("button", name="Approve these arguments").click()
    nb.wait_finished(4, "%agent decisions")

    lines = [
        re.sub(r" \([^()]*\d (?:ms|s)\)| · the turn took .*", "", text)
        for index in (1, 2, 3)
        for text in nb.cell(index).locator("details.meowgent-turn > summary").all_inner_texts()
    ]
    folds = [part for line in lines for part in _calls(line)]
    nb.check(folds == FOLDS, f"the folded lines read {folds!r}")
    nb.page.mouse.move(0, 0)  # no row lit by the pointer's hover in the screenshots
    for index in (1, 2, 3):  # the denied call's turn is open; fold it as the others, to show the lines
        nb.cell(index).locator("details.meowgent-turn[open]").evaluate_all(
            "all => all.forEach(d => d.open = false)"
        )
    nb.cell(1).scroll_into_view_if_needed()
    top, bottom = nb.cell(1).bounding_box(), nb.cell(3).bounding_box()
    clip = {
        "x": top["x"],
        "y": top["y"],
        "width": top["width"],
        "height": bottom["y"] + bottom["height"] - top["y"],
    }
    nb.page.screenshot(path=str(screenshots / f"audit-folds-{suffix}.png"), clip=clip)

    output = nb.cell(4).locator(".jp-OutputArea-output").first
    table = output.locator("table.meowgent-decisions")
    nb.wait_visible(table, "the decision log's table")
    heads = table.locator("th").all_inner_texts()
    nb.check(
        heads == ["#", "time", "tool", "arguments", "facts", "decision", "by", "reason"],
        f"the table's columns are {heads!r}",
    )
    widths = output.evaluate("e => [e.clientWidth, e.scrollWidth, e.querySelector('table').offsetWidth]")
    nb.check(widths[0] >= 700 and widths[1] <= widths[0], f"the table overflows its output: {widths!r}")
    broken = table.locator("th").evaluate_all(
        "all => all.filter(th => th.getClientRects().length && th.scrollWidth > th.clientWidth)"
        ".map(th => th.textContent)"
    )
    nb.check(broken == [], f"the header cells {broken!r} do not fit their words")
    rows = table.locator("tbody tr")
    cells = [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())]
    decided = [(c[5], c[6], c[7]) for c in cells]
    nb.check(
        decided
        == [
            ("approved", "you", ""),
            ("approved", "rule 1 (write_file path=scratch/**)", ""),
            (
                "denied",
                "rule 2 (write_file path=keep/**)",
                "rule 2 (write_file path=keep/**) denies this call.",
            ),
            ("edited", "you (edited)", ""),
        ],
        f"the decisions read {decided!r}",
    )
    edit = cells[3][3]
    nb.check(
        edit
        == "asked path='model.txt', text='from the model' → ran path='person.txt', text='from the person'",
        f"the edit reads {edit!r}",
    )
    title = rows.nth(1).locator("td.meowgent-decision-arguments code").first.get_attribute("title")
    nb.check(title == f"path='scratch/minutes.txt', text={_long()!r}", f"the hover shows {title!r}")
    nb.check(cells[1][4] == f"size={len(_long())} characters", f"the facts read {cells[1][4]!r}")
    output.screenshot(path=str(screenshots / f"audit-decisions-{suffix}.png"))


def _long() -> str:
    return "Minutes of the Tuesday meeting: the budget, the new office, who brings the cake next week. " * 2


def _calls(line: str) -> list[str]:
    """A folded line cut into its calls, each with the turn's label."""
    label, _, rest = line.partition(": ")
    return [f"{label}: {call}" for call in re.split(r", (?=write_file\()", rest)]
