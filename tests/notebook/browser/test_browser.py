"""A running ``%%agent`` cell in a real browser: JupyterLab and Notebook 7, Debian's Chromium, real clicks.

Each test writes a notebook, opens it, runs it with Run > Run All Cells and clicks in a
``%%agent`` cell: the approval buttons under the card of a call to ``write_file`` (a tool marked
``approval=True``) that a `ScriptedModel` makes, the edit box, the Stop button while a slow model
streams; one test shows the one-line error of an unreachable Ollama server.
tests/notebook/test_live_cell_kernel.py drives the same cells through jupyter_client; this shows
what the browser's widgets really send and what a person sees.

The approve test saves approval_panel.png and finished_cell.png (and the stop test stopped_cell.png)
into $MEOWGENT_SCREENSHOTS when it is set (MEOWGENT_SCREENSHOTS=docs/screenshots refreshes the
README's pictures), else into its tmp dir.
Without /usr/bin/chromium the tests are skipped, unless the environment variable CI is set: then
they fail (.ci/run installs Debian's chromium).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.support.browser_notebook import JupyterLab, NotebookPage, write_notebook

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"

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

class Slow:
    """Streams a word every `delay` seconds."""
    name = "slow"
    def __init__(self, words, delay=0.1):
        self.words, self.delay, self.sent = words, delay, 0
    async def stream(self, request):
        import asyncio
        from meowgent_nb.models.base import ModelChunk
        for word in self.words:
            await asyncio.sleep(self.delay)
            self.sent += 1
            yield ModelChunk(text=word)
        yield ModelChunk(done=True, finish_reason="stop")

'''


@pytest.fixture
def open_notebook(open_page, request):
    """open_notebook(server, *cells): the notebook, written into the server's root, open in its app's page."""

    def open_(server: JupyterLab, *cells: str) -> NotebookPage:
        name = request.node.name.removeprefix("test_")[:40]
        write_notebook(server.root / f"{name}.ipynb", cells)
        return open_page(server, f"{name}.ipynb")

    return open_


def panel(cell):
    """The approval buttons of a cell's waiting call (they sit under its card)."""
    return cell.locator(".meowgent-approval-row")


def card(cell):
    """The cell's tool cards, after opening the finished turns folded to one line, as a person would."""
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )
    return cell.locator(".meowgent-card")


def wait_for_buttons(notebook: NotebookPage, index: int) -> None:
    cell = notebook.cell(index)
    notebook.wait_visible(cell.get_by_role("button", name="Approve"), f"the Approve button in cell {index}")
    notebook.wait_text(panel(cell), "waiting for a decision", f"the approval panel of cell {index}", 30)


def panel_arguments(notebook: NotebookPage, cell) -> dict:
    text = card(cell).locator(".meowgent-arguments").first.inner_text()
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

    # The card names the tool and shows the arguments, the buttons right under it; nothing has run yet.
    shown = card(agent).inner_text()
    notebook.check("write_file" in shown, f"the waiting card does not name the tool: {shown!r}")
    notebook.check("waiting for approval" in shown, f"the card does not say it waits: {shown!r}")
    card_box, row_box = card(agent).bounding_box(), panel(agent).bounding_box()
    gap = row_box["y"] - (card_box["y"] + card_box["height"])
    notebook.check(0 <= gap < 40, f"the buttons are not right under the card (gap {gap:.0f} px)")
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
    notebook.wait_text(card(agent).locator(".meowgent-approval"), "approved by you", "the card's approval")
    notebook.wait_text(
        card(agent).locator(".meowgent-output"),
        "wrote 22 characters to approved.txt",
        "the tool card's result",
    )
    notebook.wait_text(agent.locator(".meowgent-text"), "The greeting is written.", "the final answer")
    buttons = agent.locator(".jp-OutputArea button").count()
    notebook.check(
        buttons == 0, f"{buttons} buttons are left in the finished cell; the card says the decision"
    )

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
    agent.get_by_role("button", name="Deny", exact=True).click()  # not "Deny with a reason"

    notebook.wait_finished(1, "the agent cell (after Deny)")
    notebook.wait_text(card(agent).locator(".meowgent-status"), "denied", "the tool card's status")
    notebook.wait_text(
        card(agent).locator(".meowgent-output"),
        "Denied: the person did not approve this call.",
        "what the tool card says the model was told",
    )
    notebook.wait_text(agent.locator(".meowgent-text"), "I did not write the file.", "the final answer")
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
    notebook.wait_text(
        card(notebook.cell(1)).locator(".meowgent-approval"),
        "approved by you (always allow, for this session)",
        "the decision in the first card",
    )
    notebook.wait_finished(2, "the second agent cell (no click)")
    second = notebook.cell(2)
    notebook.wait_text(card(second).locator(".meowgent-status"), "done", "the second tool card's status")
    notebook.wait_text(
        card(second).locator(".meowgent-approval"),
        "allowed by always allow (for this session)",
        "the second card's approval",
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


def edit_scenario(open_notebook, server: JupyterLab) -> None:
    notebook = open_notebook(
        server,
        SETUP + 'model = scripted("model.txt", "from the model", "Written.")',
        "%%agent --model-object model --new\nWrite a file.",
    )
    notebook.run_all()
    wait_for_buttons(notebook, 1)
    agent = notebook.cell(1)
    agent.get_by_role("button", name="Edit arguments").click()
    editor = agent.locator(".meowgent-approval-row textarea")
    notebook.wait_visible(editor, "the edit box")
    editor.fill('{"path": "person.txt", "text": 5}')
    # Check draws a fresh box; mark this one first, so the second edit cannot land in the box
    # about to be replaced (its value would never reach the kernel).
    editor.evaluate("e => { e.dataset.old = '1'; }")
    agent.get_by_role("button", name="Check").click()
    notebook.wait_text(
        agent.locator(".meowgent-edit-problem"),
        "text: input should be a valid string, got 5",
        "the edit's problem",
    )
    notebook.check(not (server.root / "person.txt").exists(), "invalid edited arguments ran")
    editor = agent.locator(".meowgent-approval-row textarea:not([data-old])")
    notebook.wait_visible(editor, "the edit box, drawn again after Check")
    editor.fill('{"path": "person.txt", "text": "from the person"}')
    agent.get_by_role("button", name="Check").click()
    notebook.wait_text(
        agent.locator(".meowgent-edit-preview"),
        "will run: write_file(path='person.txt', text='from the person')",
        "the checked call, read back from the kernel",
    )
    agent.get_by_role("button", name="Approve these arguments").click()
    notebook.wait_finished(1, "the agent cell (after the edited approval)")
    person, model = server.root / "person.txt", server.root / "model.txt"
    written = person.read_text() if person.exists() else None
    notebook.check(written == "from the person", f"the tool wrote {written!r} to person.txt")
    notebook.check(not model.exists(), "the model's arguments ran too")
    notebook.wait_text(
        card(agent).locator(".meowgent-approval"), "approved by you (edited)", "the card's approval"
    )
    notebook.wait_text(
        card(agent).locator(".meowgent-arguments"), "ran with, changed by you:", "both argument sets"
    )
    notebook.wait_text(card(agent).locator(".meowgent-edited"), "edited", "the card's mark of an edited call")
    notebook.wait_text(
        card(agent).locator(".meowgent-output"), "The person changed the arguments", "what the model read"
    )


def test_edit_then_approve_runs_the_validated_edit(open_notebook, lab):
    edit_scenario(open_notebook, lab)


def stop_scenario(open_notebook, server: JupyterLab, screenshots: Path | None) -> None:
    notebook = open_notebook(
        server,
        SETUP + "model = Slow([f'word{i} ' for i in range(300)], delay=0.1)",
        "%%agent --model-object model --new --no-tools\nTalk for a long time.",
        "print('the next cell ran')",
    )
    notebook.run_all()
    agent = notebook.cell(1)
    notebook.wait_text(agent.locator(".meowgent-text"), "word5", "the streaming answer", 60)
    stop = agent.get_by_role("button", name="Stop")
    notebook.wait_visible(stop, "the Stop button")
    clicked = time.monotonic()
    stop.click()
    notebook.wait_finished(1, "the agent cell (after Stop)", 10)
    took = time.monotonic() - clicked
    notebook.check(took < 5, f"the cell took {took:.1f} s to end after Stop")
    notebook.wait_text(
        agent.locator(".meowgent-footer"), "stopped by you after 1 turn, 0 tool calls", "the footer"
    )
    errors = agent.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']").count()
    notebook.check(errors == 0, "Stop showed an error")
    notebook.wait_finished(2, "the cell after the stopped one")
    notebook.wait_text(notebook.cell(2).locator(".jp-OutputArea"), "the next cell ran", "its output")
    if screenshots is not None:
        agent.screenshot(path=str(screenshots / "stopped_cell.png"))


def test_stop_ends_a_streaming_run_and_the_next_cell_runs(open_notebook, lab, tmp_path):
    stop_scenario(open_notebook, lab, Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path))


def test_an_unreachable_ollama_is_one_line_with_its_fix(open_notebook, lab):
    error_scenario(open_notebook, lab)


def test_an_unreachable_ollama_in_notebook_7(open_notebook, notebook7):
    error_scenario(open_notebook, notebook7)


def error_scenario(open_notebook, server: JupyterLab) -> None:
    notebook = open_notebook(
        server,
        "%load_ext meowgent_nb\nimport os\nos.environ['OLLAMA_HOST'] = 'http://127.0.0.1:9'",
        "%%agent -m ollama:qwen2.5:0.5b --new\nHello",
    )
    notebook.run_all()
    notebook.wait_finished(1, "the agent cell (no server)")
    error = notebook.cell(1).locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    text = notebook.wait_text(error, "ollama serve", "the error")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    notebook.check(len(lines) <= 3, f"the error is {len(lines)} lines long: {text!r}")
    notebook.check(
        lines[-1] == "(the full traceback: %agent traceback)", f"the error's last line: {lines[-1]!r}"
    )
    height = notebook.cell(1).locator(".jp-OutputArea").bounding_box()["height"]
    notebook.check(height < 300, f"the failed cell's output is {height:.0f} px tall")


def test_approve_in_notebook_7(open_notebook, notebook7):
    """The same in Notebook 7, which is JupyterLab's notebook in a page of its own."""
    approve_scenario(open_notebook, notebook7, screenshots=None)


def test_stop_in_notebook_7(open_notebook, notebook7):
    stop_scenario(open_notebook, notebook7, screenshots=None)


def test_edit_then_approve_in_notebook_7(open_notebook, notebook7):
    edit_scenario(open_notebook, notebook7)


def test_exact_call_rule_and_reason_buttons(open_page, lab, tmp_path):
    """Allow this exact call, Allow calls like this… and Deny with a reason (test_browser_decisions)."""
    from tests.notebook.browser.test_browser_decisions import decisions_scenario

    decisions_scenario(open_page, lab, tmp_path, "JupyterLab Light", full=True)


def test_the_next_notebook_opens_in_the_loaded_page_and_the_last_one_is_closed(open_page, pages, lab):
    # The suite's own promise (tests/support/browser_pages.py): JupyterLab loads once per app and theme.
    for name in ("reuse_a", "reuse_b"):
        write_notebook(lab.root / f"{name}.ipynb", ["print('in ' + __import__('os').getcwd())"])
    first = open_page(lab, "reuse_a.ipynb")
    first.page.evaluate("() => { window.loadedOnce = true; }")
    pages.close(first, failed=False)
    second = open_page(lab, "reuse_b.ipynb")
    assert second.page is first.page
    assert second.page.evaluate("() => window.loadedOnce") is True  # not loaded again
    titles = second.page.locator(".jp-NotebookPanel").evaluate_all("all => all.map(p => p.id)")
    assert len(titles) == 1, titles  # reuse_a was closed
    second.run_all()
    second.wait_text(second.cell(0).locator(".jp-OutputArea"), str(lab.root), "the notebook's output")
