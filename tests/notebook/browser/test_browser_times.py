"""A run's times and failures in a real browser (issue 30), in JupyterLab's light and dark themes:
a running call's card counts its seconds against its time limit while the cell runs, the
finished turns fold to a line with each call's own time and the turn's apart, and a turn whose
call failed stays open with its error in view.

The screenshots times_running[_dark].png (the counting card) and times_folded[_dark].png (the
finished cell) go to $MEOWGENT_SCREENSHOTS when it is set, else to the test's tmp dir. Chromium
and playwright are required as for tests/notebook/browser/test_browser.py.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook

SETUP = '''\
%load_ext meowgent_nb
import json, time
from meowgent_nb import ScriptedModel, tool

@tool(timeout=30)
def slow_step(seconds: float) -> str:
    """Work for a while."""
    time.sleep(seconds)
    return "worked"

@tool
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b

from meowgent_nb.testing import tool_call as call

model = ScriptedModel([call("slow_step", seconds=3.5), call("divide", a=1, b=0), "1/0 has no answer."])
'''
AGENT = "%%agent --model-object model --new\nWork, then divide 1 by 0."


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_running_card_counts_and_the_folds_say_each_calls_time(open_page, lab, tmp_path, theme):
    suffix = "_dark" if "Dark" in theme else ""
    name = f"times{suffix or '_light'}"
    write_notebook(lab.root / f"{name}.ipynb", [SETUP, AGENT])
    folder = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    notebook = open_page(lab, f"{name}.ipynb", theme)
    shown = notebook.page.locator("body").get_attribute("data-jp-theme-name")
    notebook.check(shown == theme, f"JupyterLab shows the theme {shown!r}, not {theme!r}")
    notebook.run_all()
    cell = notebook.cell(1)
    counter = cell.locator(".meowgent-status-running .meowgent-elapsed")
    notebook.wait_text(counter, "1 s of 30 s", "the running card's counter", 60)
    notebook.wait_text(
        counter, "2 s of 30 s", "the counter, a second later", 10
    )  # it counts while the cell runs
    cell.screenshot(path=str(folder / f"times_running{suffix}.png"))
    notebook.wait_finished(1, "the agent cell", 60)
    notebook.check(cell.locator(".meowgent-elapsed").count() == 0, "a counter is left in the finished cell")
    turns = cell.locator("details.meowgent-turn")
    notebook.check(turns.count() == 2, f"{turns.count()} folded turns, not 2")
    first = turns.nth(0).locator("summary").inner_text()
    notebook.check(
        re.fullmatch(
            r"turn 1: slow_step\(seconds=3\.5\) done \(3\.\d\d s\) · the turn took \d+\.\d+ s", first
        )
        is not None,
        f"the first fold: {first!r}",
    )
    notebook.check(not turns.nth(0).evaluate("d => d.open"), "the good turn should stay folded")
    second = turns.nth(1).locator("summary").inner_text()
    notebook.check(
        re.fullmatch(r"turn 2: divide\(a=1, b=0\) error \(\d+ (µs|ms)\) · the turn took \d+ ms", second)
        is not None,
        f"the second fold: {second!r}",
    )
    notebook.check(turns.nth(1).evaluate("d => d.open"), "the turn with the error should be open")
    error = turns.nth(1).locator(".meowgent-output")
    notebook.check(error.is_visible(), "the error's output should be in view without a click")
    notebook.check("ZeroDivisionError" in error.inner_text(), f"the error: {error.inner_text()!r}")
    cell.screenshot(path=str(folder / f"times_folded{suffix}.png"))
