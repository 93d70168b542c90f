"""The rule box, Enter, and Stop during an approval wait, in a real browser: JupyterLab's light
theme and Notebook 7's dark one, one notebook each.

The first ``%%agent`` cell asks to delete draft4.txt: the person opens "Allow calls like this…",
types ``delete_file path=other/** -> allow`` and presses Enter; the rule is refused with the line
saying why (rule-misses-call-{light,dark}.png), **Add rule only** adds it and the call still
waits, and Deny decides it. The second cell is stopped while its call waits for approval: its card
says "not run (stopped before approval)" and the last line counts no call
(stopped-before-approval-{light,dark}.png). The third cell is denied with a reason typed and sent
with Enter. Screenshots go to $MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots
keeps them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.notebook.browser.test_browser import card
from tests.support.browser_notebook import write_notebook

SETUP = '''\
%load_ext meowgent_nb
import json, pathlib
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    pathlib.Path(path).unlink()
    return f"deleted {path}"

def deleting(path):
    call = json.dumps({"name": "delete_file", "arguments": {"path": path}})
    return ScriptedModel([f"<tool_call>{call}</tool_call>", "Done."])

for name in ("draft4.txt", "keep.txt", "reason.txt"):
    pathlib.Path(name).write_text("old")
misses, stopped, reasoned = deleting("draft4.txt"), deleting("keep.txt"), deleting("reason.txt")
'''
CELLS = [
    SETUP,
    "%%agent --model-object misses --new\nDelete draft4.txt.",
    "%%agent --model-object stopped --new\nDelete keep.txt.",
    "%%agent --model-object reasoned --new\nDelete reason.txt.",
]
WIDE = "delete_file path=other/** -> allow"
MISSES = (
    "delete_file path=other/** does not cover delete_file(path='draft4.txt'): path 'draft4.txt' is not under"
    " other/; widen the rule, or add it with 'Add rule only' and decide this call on its own\n"
    "Fix it, then try again."
)


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")


def run_cell(nb, index: int) -> None:
    nb.cell(index).locator(".jp-InputArea-editor").click()
    nb.page.keyboard.press("Shift+Enter")


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_a_rule_that_misses_its_call_enter_and_stop_while_a_call_waits(
    jupyter, open_page, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    folder = server.root / f"words_{suffix}"
    folder.mkdir(parents=True)
    write_notebook(folder / "words.ipynb", CELLS)
    nb = open_page(server, f"words_{suffix}/words.ipynb", theme)
    run_cell(nb, 0)
    nb.wait_finished(0, "the setup cell")

    # (4, 6) A rule that does not cover its call, sent with Enter: refused, then kept on its own.
    run_cell(nb, 1)
    first = nb.cell(1)
    nb.wait_visible(
        first.get_by_role("button", name="Allow calls like this\u2026"), "Allow calls like this…"
    ).click()
    box = nb.wait_visible(first.get_by_label("Rule:"), "the Rule box")
    box.fill(WIDE)
    box.press("Enter")
    problem = first.locator(".meowgent-edit-problem")
    nb.wait_text(problem, exactly(MISSES), "the line saying why the rule does not cover the call")
    nb.check(nb.prompt(1) == "[*]:", "the call should still wait after the rule was refused")
    first.locator(".meowgent-approval-row").screenshot(
        path=str(screenshots / f"rule-misses-call-{suffix}.png")
    )
    first.get_by_role("button", name="Add rule only").click()
    nb.wait_text(
        first.locator(".meowgent-approval-row .widget-label").first,
        exactly(f"rule added: {WIDE}; this call still waits for a decision"),
        "the row after Add rule only",
    )
    first.get_by_role("button", name="Deny", exact=True).click()
    nb.wait_finished(1, "the first agent cell (after Deny)")
    nb.check((folder / "draft4.txt").exists(), "the call was denied, but draft4.txt was deleted")

    # (5) Stop while a call waits for approval: not run, and not counted as a call made.
    run_cell(nb, 2)
    second = nb.cell(2)
    nb.wait_visible(
        second.get_by_role("button", name="Approve", exact=True), "the Approve button of keep.txt"
    )
    second.get_by_role("button", name="Stop").click()
    nb.wait_finished(2, "the second agent cell (after Stop)")
    status = card(second).locator(".meowgent-status")
    nb.wait_text(status, exactly("not run (stopped before approval)"), "the stopped card's status")
    footer = second.locator(".meowgent-footer")
    nb.wait_text(
        footer, re.compile(r"^stopped by you after 1 turn, 0 tool calls \(1 not run\)"), "the footer"
    )
    nb.check((folder / "keep.txt").exists(), "Stop was clicked while keep.txt waited, but it was deleted")
    second.locator(".jp-OutputArea").screenshot(
        path=str(screenshots / f"stopped-before-approval-{suffix}.png")
    )

    # (6) Enter in the Reason box denies with the reason typed.
    run_cell(nb, 3)
    third = nb.cell(3)
    nb.wait_visible(third.get_by_role("button", name="Deny with a reason"), "Deny with a reason").click()
    reason = nb.wait_visible(third.get_by_label("Reason:"), "the Reason box")
    reason.fill("keep the draft")
    reason.press("Enter")
    nb.wait_finished(3, "the third agent cell (after Enter in the Reason box)")
    nb.wait_text(
        card(third).locator(".meowgent-approval"),
        exactly('denied by you: "keep the draft"'),
        "the denied card",
    )
    nb.check((folder / "reason.txt").exists(), "the call was denied, but reason.txt was deleted")
