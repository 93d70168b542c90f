"""The approval buttons in a real browser: JupyterLab, Debian's Chromium, real clicks (issue 7).

Each test writes a notebook, opens it in JupyterLab, runs it with Run > Run All Cells and clicks
in the approval panel of a ``%%agent`` cell whose `ScriptedModel` first calls ``write_file`` (a
tool marked ``approval=True``), then answers with a fixed text. tests/notebook/test_agent_cell_kernel.py
drives the same cells through jupyter_client; this shows what JupyterLab's widgets really send.
The last test runs the approve path once more in Notebook 7 (``jupyter notebook``).

The approve test saves approval_panel.png and finished_cell.png into $MEOWGENT_SCREENSHOTS when it
is set (MEOWGENT_SCREENSHOTS=docs/screenshots refreshes the README's pictures), else into its tmp dir.
Without /usr/bin/chromium the tests are skipped, unless the environment variable CI is set: then
they fail (.ci/run installs Debian's chromium).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.browser_notebook import CHROMIUM, JupyterLab, NotebookPage, launch_chromium, write_notebook

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"
VIEWPORT = {"width": 1280, "height": 1000}

SETUP = '''\
%load_ext meowgent_nb
import json, pathlib
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    pathlib.Path(path).write_text(text)
    return f"wrote {len(text)} characters to {path}"

def scripted(path, text, reply):
    """A model that calls write_file(path, text), then answers `reply`."""
    call = json.dumps({"name": "write_file", "arguments": {"path": path, "text": text}})
    return ScriptedModel([f"<tool_call>{call}</tool_call>", reply])

'''


def _require_chromium() -> None:
    missing = []
    if not os.path.exists(CHROMIUM):
        missing.append(f"{CHROMIUM} is missing (Debian: apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package is missing (pip install -e '.[test]')")
    if not missing:
        return
    reason = "the browser test needs Chromium and playwright: " + "; ".join(missing)
    if os.environ.get("CI"):
        pytest.fail(reason + " (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def _server(tmp_path_factory, app: str):
    _require_chromium()
    server = JupyterLab(
        tmp_path_factory.mktemp(f"{app}-root"), tmp_path_factory.mktemp(f"{app}-work"), app=app
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab (``jupyter lab``), for the whole module."""
    yield from _server(tmp_path_factory, "lab")


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    """Notebook 7 (``jupyter notebook``), for its one test."""
    yield from _server(tmp_path_factory, "notebook")


@pytest.fixture(scope="module")
def browser():
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def open_notebook(browser, tmp_path, request):
    """open_notebook(server, *cells): the notebook, written into the server's root, open in a new page."""
    opened = []

    def open_(server: JupyterLab, *cells: str) -> NotebookPage:
        name = request.node.name.removeprefix("test_")[:40]
        write_notebook(server.root / f"{name}.ipynb", cells)
        context = browser.new_context(viewport=VIEWPORT)
        opened.append((context, server))
        notebook = NotebookPage(context.new_page(), server, tmp_path)
        notebook.open(f"{name}.ipynb", workspace=name)
        return notebook

    yield open_
    for context, server in opened:
        context.close()
        server.shutdown_kernels()


def panel(cell):
    """The approval panel of a cell (the ipywidgets box whose header says "Approval needed")."""
    return cell.locator(".widget-vbox", has_text="Approval needed")


def card(cell):
    """The cell's tool cards, after opening the finished turns folded to one line, as a person would."""
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all("all => all.forEach(s => s.click())")
    return cell.locator(".meowgent-card")


def wait_for_buttons(notebook: NotebookPage, index: int) -> None:
    cell = notebook.cell(index)
    notebook.wait_visible(cell.get_by_role("button", name="Approve"), f"the Approve button in cell {index}")
    notebook.wait_text(panel(cell), "waiting for a decision", f"the approval panel of cell {index}", 30)


def panel_arguments(notebook: NotebookPage, cell) -> dict:
    text = panel(cell).locator("pre").first.inner_text()
    try:
        return json.loads(text)
    except ValueError:
        notebook.fail(f"the approval panel's arguments are not JSON: {text!r}")
        raise


def test_approve_runs_the_tool_and_the_cell_finishes(open_notebook, lab, tmp_path):
    approve_scenario(open_notebook, lab, screenshots=Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path))


def approve_scenario(open_notebook, server: JupyterLab, screenshots: Path | None) -> None:
    notebook = open_notebook(
        server,
        SETUP + 'model = scripted("approved.txt", "hello from the browser", "The greeting is written.")',
        "%%agent --model-object model --new\nWrite the greeting to approved.txt.",
        'print(pathlib.Path("approved.txt").read_text())',
    )
    written = server.root / "approved.txt"
    notebook.run_all()
    wait_for_buttons(notebook, 1)
    agent = notebook.cell(1)

    # The panel names the tool and shows the validated arguments; nothing has run yet.
    shown = panel(agent).inner_text()
    notebook.check("write_file" in shown, f"the approval panel does not name the tool: {shown!r}")
    arguments = panel_arguments(notebook, agent)
    notebook.check(
        arguments == {"path": "approved.txt", "text": "hello from the browser"},
        f"the approval panel shows other arguments: {arguments!r}",
    )
    notebook.check(not written.exists(), "the tool ran before anyone clicked")
    # Run All waits: the agent cell and the cell queued after it are still running.
    prompts = [notebook.prompt(1), notebook.prompt(2)]
    notebook.check(prompts == ["[*]:", "[*]:"], f"cells 1 and 2 should be running/queued, prompts: {prompts}")
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
        agent.screenshot(path=str(screenshots / "approval_panel.png"))

    agent.get_by_role("button", name="Approve").click()

    notebook.wait_finished(1, "the agent cell (after Approve)")
    notebook.check(written.exists(), f"Approve was clicked and the cell finished, but {written} is missing")
    content = written.read_text()
    notebook.check(content == "hello from the browser", f"the tool wrote {content!r}")
    notebook.wait_text(card(agent).locator(".meowgent-status"), "done", "the tool card's status")
    notebook.wait_text(
        card(agent).locator(".meowgent-approval"), "approved by the person", "the card's approval"
    )
    notebook.wait_text(
        card(agent).locator(".meowgent-output"),
        "wrote 22 characters to approved.txt",
        "the tool card's result",
    )
    notebook.wait_text(agent.locator(".meowgent-text"), "The greeting is written.", "the final answer")
    notebook.wait_text(panel(agent), "approved", "the decision in the approval panel")
    disabled = agent.get_by_role("button", name="Approve").is_disabled()
    notebook.check(disabled, "the Approve button is still enabled after the decision")

    # The queued cell ran after the agent cell, and saw the file.
    notebook.wait_finished(2, "the cell after the agent cell")
    notebook.wait_text(notebook.cell(2).locator(".jp-OutputArea"), "hello from the browser", "its output")
    notebook.wait_visible(
        notebook.page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]"), "the kernel to be idle"
    )
    if screenshots is not None:
        agent.screenshot(path=str(screenshots / "finished_cell.png"))


def test_deny_does_not_run_the_tool(open_notebook, lab):
    notebook = open_notebook(
        lab,
        SETUP + 'model = scripted("denied.txt", "must not be written", "I did not write the file.")',
        "%%agent --model-object model --new\nWrite denied.txt.",
    )
    notebook.run_all()
    wait_for_buttons(notebook, 1)
    agent = notebook.cell(1)
    agent.get_by_role("button", name="Deny").click()

    notebook.wait_finished(1, "the agent cell (after Deny)")
    notebook.wait_text(card(agent).locator(".meowgent-status"), "denied", "the tool card's status")
    notebook.wait_text(
        card(agent).locator(".meowgent-output"),
        "Denied: the person did not approve this call.",
        "what the tool card says the model was told",
    )
    notebook.wait_text(agent.locator(".meowgent-text"), "I did not write the file.", "the final answer")
    notebook.wait_text(panel(agent), re.compile(r"\bdenied$"), "the decision in the approval panel")
    notebook.check(not (lab.root / "denied.txt").exists(), "Deny was clicked, but the tool wrote denied.txt")
    notebook.wait_visible(
        notebook.page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]"), "the kernel to be idle"
    )


def test_always_allow_lasts_into_the_next_cell(open_notebook, lab):
    notebook = open_notebook(
        lab,
        SETUP
        + 'first = scripted("always1.txt", "one", "First file written.")\n'
        + 'second = scripted("always2.txt", "two", "Second file written.")',
        "%%agent --model-object first --new\nWrite always1.txt.",
        "%%agent --model-object second --new\nWrite always2.txt.",
    )
    notebook.run_all()
    wait_for_buttons(notebook, 1)
    prompt = notebook.prompt(2)
    notebook.check(
        prompt == "[*]:", f"the second agent cell should wait in the queue, its prompt is {prompt!r}"
    )
    notebook.cell(1).get_by_role("button", name="Always allow").click()

    notebook.wait_finished(1, "the first agent cell (after Always allow)")
    notebook.wait_text(panel(notebook.cell(1)), "always allowed", "the decision in the first panel")
    notebook.wait_finished(2, "the second agent cell (no click)")
    second = notebook.cell(2)
    notebook.wait_text(panel(second), "always allowed", "the decision in the second panel")
    notebook.wait_text(card(second).locator(".meowgent-status"), "done", "the second tool card's status")
    notebook.wait_text(
        card(second).locator(".meowgent-approval"), "always allowed", "the second card's approval"
    )
    notebook.wait_text(second.locator(".meowgent-text"), "Second file written.", "the second final answer")
    buttons = second.locator(".jp-OutputArea button").count()
    notebook.check(buttons == 0, f"the second agent cell showed {buttons} buttons; it should show none")
    files = {
        name: (lab.root / name).read_text()
        for name in ("always1.txt", "always2.txt")
        if (lab.root / name).exists()
    }
    notebook.check(files == {"always1.txt": "one", "always2.txt": "two"}, f"the tools wrote {files!r}")


def test_approve_in_notebook_7(open_notebook, notebook7):
    """The same in Notebook 7, which is JupyterLab's notebook in a page of its own."""
    approve_scenario(open_notebook, notebook7, screenshots=None)
