"""``%tools eval`` in a real browser: rows appear in JupyterLab while later cases still run (issue 15).

A `FunctionModel` answers the first case at once; the second and third wait until the test
creates a file, which it does only after it has seen the cell show what came before. So the
rows and the "k/n" progress are seen while the eval is still running, with no timing involved.
A third test runs the same eval in Notebook 7. The light-theme test saves eval_live.png (two
rows, a green pass and a red FAIL, the third case running) into $MEOWGENT_SCREENSHOTS when it is
set (MEOWGENT_SCREENSHOTS=docs/screenshots refreshes the README's picture), else into its tmp dir;
eval_done.png (the finished cell) and the dark-theme test's eval_live_dark.png go to the tests' tmp
dirs. Chromium and playwright are required as for tests/notebook/browser/test_browser.py (skipped without
them, a failure when CI is set).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import JupyterLab, NotebookPage, write_notebook

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"

SETUP = '''\
%load_ext meowgent_nb
import asyncio, json, pathlib
from meowgent_nb import EvalCase, FunctionModel, tool

@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: sunny"

@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b

from meowgent_nb.testing import tool_call as call

async def released(name):
    while not pathlib.Path(name).exists():  # the test creates it
        await asyncio.sleep(0.05)

async def answer(messages, tools):
    prompt = messages[-1]["content"]
    if prompt == "Weather in Paris?":
        return call("get_weather", city="Paris")
    if prompt == "What is 17 plus 4?":
        await released("release-2")
        return call("get_weather", city="17")
    await released("release-3")
    return "I can't write poems, but I can tell you the weather."

model = FunctionModel(answer)
cases = [
    EvalCase("Weather in Paris?", "get_weather", {"city": "Paris"}, "understanding"),
    EvalCase("What is 17 plus 4?", "add", {"a": 17, "b": 4}, "parameters"),
    EvalCase("Write me a poem", None, category="refusal"),
]
'''
EVAL = "%tools eval cases --model-object model"


@pytest.fixture
def screenshots(tmp_path) -> Path:
    folder = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_eval_notebook(open_page, lab: JupyterLab, name: str, theme: str) -> NotebookPage:
    for release in ("release-2", "release-3"):
        (lab.root / release).unlink(missing_ok=True)
    write_notebook(lab.root / f"{name}.ipynb", [SETUP, EVAL])
    notebook = open_page(lab, f"{name}.ipynb", theme)
    theme_name = notebook.page.locator("body").get_attribute("data-jp-theme-name")
    notebook.check(theme_name == theme, f"JupyterLab shows the theme {theme_name!r}, not {theme!r}")
    return notebook


def output(notebook: NotebookPage):
    return notebook.cell(1).locator(".jp-OutputArea")


def test_rows_appear_while_the_eval_runs(open_page, lab, tmp_path, screenshots):
    notebook = open_eval_notebook(open_page, lab, "eval_live", "JupyterLab Light")
    notebook.run_all()
    cell = notebook.cell(1)
    live = output(notebook).locator(".meowgent-eval-live")
    notebook.wait_text(
        live.locator("strong"), "Tool eval: 1/3 cases done", "the eval's progress after case 1"
    )
    rows = live.locator("table.meowgent-eval tbody tr")
    notebook.wait_text(rows.nth(0), "Weather in Paris?", "the first case's row")
    first = rows.nth(0).inner_text()
    notebook.check("pass" in first and '{"city": "Paris"}' in first, f"row 1 reads {first!r}")
    second = rows.nth(1).inner_text()
    notebook.check("What is 17 plus 4?" in second and "running..." in second, f"row 2 reads {second!r}")
    notebook.check(notebook.prompt(1) == "[*]:", f"the eval cell should still run: {notebook.prompt(1)!r}")

    (lab.root / "release-2").write_text("")
    notebook.wait_text(
        live.locator("strong"), "Tool eval: 2/3 cases done", "the eval's progress after case 2"
    )
    notebook.wait_text(rows.nth(1), "FAIL", "the second case's result")
    fail = rows.nth(1).locator(".meowgent-eval-fail")
    colours = fail.evaluate("e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
    notebook.check(
        colours == ["rgb(198, 40, 40)", "rgb(255, 255, 255)"], f"the FAIL pill's colours: {colours}"
    )
    time_cell = rows.nth(0).locator("td").nth(6)
    wrap = time_cell.evaluate("e => getComputedStyle(e).whiteSpace")
    notebook.check(wrap == "nowrap", f"the time column may wrap: white-space is {wrap!r}")
    notebook.check(notebook.prompt(1) == "[*]:", f"the eval cell should still run: {notebook.prompt(1)!r}")
    cell.screenshot(path=str(screenshots / "eval_live.png"))

    (lab.root / "release-3").write_text("")
    notebook.wait_finished(1, "the eval cell")
    report = output(notebook).locator(".meowgent-eval-report")
    notebook.wait_text(report.locator("strong"), "Tool eval: 2 of 3 passed", "the final report")
    notebook.wait_text(live, "Tool eval: 3/3 cases done, 2 passed", "the progress line, once done")
    notebook.check(live.locator("table").count() == 0, "the progress view still shows its table")
    cell.screenshot(path=str(tmp_path / "eval_done.png"))


def test_rows_in_the_dark_theme(open_page, lab, tmp_path):
    notebook = open_eval_notebook(open_page, lab, "eval_dark", "JupyterLab Dark")
    notebook.run_all()
    live = output(notebook).locator(".meowgent-eval-live")
    notebook.wait_text(
        live.locator("strong"), "Tool eval: 1/3 cases done", "the eval's progress after case 1"
    )
    (lab.root / "release-2").write_text("")
    notebook.wait_text(
        live.locator("strong"), "Tool eval: 2/3 cases done", "the eval's progress after case 2"
    )
    notebook.cell(1).screenshot(path=str(tmp_path / "eval_live_dark.png"))
    (lab.root / "release-3").write_text("")
    notebook.wait_finished(1, "the eval cell")


def test_rows_appear_while_the_eval_runs_in_notebook_7(open_page, notebook7):
    notebook = open_eval_notebook(open_page, notebook7, "eval_nb7", "JupyterLab Light")
    notebook.run_all()
    live = output(notebook).locator(".meowgent-eval-live")
    notebook.wait_text(
        live.locator("strong"), "Tool eval: 1/3 cases done", "the eval's progress after case 1"
    )
    rows = live.locator("table.meowgent-eval tbody tr")
    notebook.wait_text(rows.nth(0), "Weather in Paris?", "the first case's row")
    notebook.check(notebook.prompt(1) == "[*]:", f"the eval cell should still run: {notebook.prompt(1)!r}")
    (notebook7.root / "release-2").write_text("")
    (notebook7.root / "release-3").write_text("")
    notebook.wait_finished(1, "the eval cell")
    report = output(notebook).locator(".meowgent-eval-report")
    notebook.wait_text(report.locator("strong"), "Tool eval: 2 of 3 passed", "the final report")
