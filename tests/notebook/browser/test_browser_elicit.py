"""A server's form in a running ``%%agent`` cell, in JupyterLab and Debian's Chromium, typed into and
accepted with real clicks, in the light and the dark theme.

The `ScriptedModel` calls the asking server's ``sign_up`` tool (tests/mcp_servers/asking_server.py),
which asks for a name, an age, an email, a plan and the newsletter. The test types a bad age
first: Accept shows the problem next to the field and sends nothing; then it fixes the age,
accepts, and the card shows what the server received. The call may take 300 s (the agent's and the box's limits):
the form waits only as long as the call may take, and a loaded machine types slowly. It saves elicit_form[_dark].png (the form,
the problem shown) and elicit_done[_dark].png into $MEOWGENT_SCREENSHOTS when set, else its tmp dir.
A second test approves a sampling request (``write_poem``) in its two steps, Let the model answer
and Send the answer, and saves sampling_review[_dark].png and sampling_done[_dark].png.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import JupyterLab, NotebookPage, write_notebook

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"
SERVER = str(Path(__file__).parents[2] / "mcp_servers" / "asking_server.py")
SETUP = f"""\
%load_ext meowgent_nb
%config AgentMagics.tool_timeout = 300
import sys
from meowgent_nb import ScriptedModel
from meowgent_nb.mcp.client.toolbox import McpToolbox
shop = McpToolbox("shop", [sys.executable, {SERVER!r}], call_timeout=300)
model = ScriptedModel(['<tool_call>{{"name": "shop_sign_up", "arguments": {{}}}}</tool_call>', "You are signed up."])
"""


def open_notebook(
    open_page, lab: JupyterLab, name: str, theme: str, setup: str = SETUP, ask: str = "Sign me up."
) -> NotebookPage:
    write_notebook(lab.root / f"{name}.ipynb", [setup, f"%%agent --model-object model --new\n{ask}"])
    notebook = open_page(lab, f"{name}.ipynb", theme)
    shown = notebook.page.locator("body").get_attribute("data-jp-theme-name")
    notebook.check(shown == theme, f"JupyterLab shows the theme {shown!r}, not {theme!r}")
    return notebook


@pytest.mark.parametrize(("theme", "suffix"), [("JupyterLab Light", ""), ("JupyterLab Dark", "_dark")])
def test_the_form_is_filled_and_accepted_in_the_browser(open_page, lab, tmp_path, theme, suffix):
    screenshots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    notebook = open_notebook(open_page, lab, f"elicit{suffix}", theme)
    notebook.run_all()
    cell = notebook.cell(1)
    form = cell.locator(".meowgent-elicit-form")
    notebook.wait_visible(form.locator(".meowgent-field-0 input"), "the form's first field", 90)
    message = form.locator(".meowgent-elicit-message").inner_text()
    notebook.check(
        message == "Please sign up <script>alert(1)</script> to continue.", f"the message reads {message!r}"
    )
    notebook.check(notebook.prompt(1) == "[*]:", "the agent cell should still run while the form waits")
    form.locator(".meowgent-field-0 input").fill("Ada")
    age = form.locator(".meowgent-field-1 input")
    age.fill("thirty")
    # Its value travels when the box loses focus, and the form then draws a fresh box for the
    # next change: mark this one first, so the second age cannot be typed into the box being
    # replaced (its value would never reach the kernel).
    age.evaluate("e => { e.dataset.old = '1'; }")
    form.locator(".meowgent-field-2 input").fill("ada@example.org")
    form.locator(".meowgent-field-3 select").select_option(label="pro")
    form.locator(".meowgent-field-4 input").check()
    form.get_by_role("button", name="Accept").click()
    notebook.wait_text(
        form.locator(".meowgent-field-problem").first, "'thirty' is not a whole number", "the age's problem"
    )
    notebook.wait_text(
        cell.locator(".meowgent-status").first, "waiting for you", "the card while the form waits"
    )
    cell.screenshot(path=str(screenshots / f"elicit_form{suffix}.png"))
    notebook.check(notebook.prompt(1) == "[*]:", "a bad value must not send the form")
    age = form.locator(".meowgent-field-1 input:not([data-old])")
    notebook.wait_visible(age, "the age's box, drawn again after its change")
    age.fill("36")
    form.get_by_role("button", name="Accept").click()

    notebook.wait_finished(1, "the agent cell (after Accept)", 90)
    # The finished turn is folded to one line: open it, as a person would.
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )
    card = cell.locator(".meowgent-card")
    expected = {
        "action": "accept",
        "data": {"age": 36, "email": "ada@example.org", "name": "Ada", "newsletter": True, "plan": "pro"},
    }
    notebook.wait_text(
        card.locator(".meowgent-output"), json.dumps(expected, sort_keys=True), "what the server received"
    )
    notebook.wait_text(
        card.locator(".meowgent-server-asked"),
        "shop asked for input ('Please sign up <script>alert(1)</script> to continue.'): accepted, sent name='Ada', age=36",
        "the card's line about the form",
    )
    notebook.wait_text(cell.locator(".meowgent-text"), "You are signed up.", "the final answer")
    cell.screenshot(path=str(screenshots / f"elicit_done{suffix}.png"))


POEM_SETUP = SETUP.rsplit("model = ", 1)[0] + (
    """model = ScriptedModel(['<tool_call>{"name": "shop_write_poem", "arguments": {"topic": "autumn"}}</tool_call>',"""
    """ 'Leaves <b>fall</b> softly.', 'Here is your poem.'])\n"""
)


@pytest.mark.parametrize(("theme", "suffix"), [("JupyterLab Light", ""), ("JupyterLab Dark", "_dark")])
def test_a_sampling_request_and_then_its_answer_are_approved_in_the_browser(
    open_page, lab, tmp_path, theme, suffix
):
    # The server asks to use the model during write_poem: the person first lets the model answer,
    # then reads the answer (escaped: "<b>" is text) and sends it back.
    screenshots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    notebook = open_notebook(open_page, lab, f"sampling{suffix}", theme, POEM_SETUP, "A poem, please.")
    notebook.run_all()
    cell = notebook.cell(1)
    first = cell.get_by_role("button", name="Let the model answer")
    notebook.wait_visible(first, "the button that lets the model answer the server", 90)
    review = cell.locator(".meowgent-sampling-review").first
    notebook.wait_text(review, "shop asks to use the model", "what the server asks")
    notebook.wait_text(review, "A haiku about autumn.", "the server's message")
    first.click()
    send = cell.get_by_role("button", name="Send the answer")
    notebook.wait_visible(send, "the button that sends the model's answer back", 90)
    answer = cell.locator(".meowgent-sampling-review").last
    notebook.wait_text(answer, "Leaves <b>fall</b> softly.", "the model's answer, as text")
    notebook.wait_text(
        cell.locator(".meowgent-status").first, "waiting for you", "the card while the review waits"
    )
    cell.screenshot(path=str(screenshots / f"sampling_review{suffix}.png"))
    notebook.check(notebook.prompt(1) == "[*]:", "the cell should still run while the answer waits")
    send.click()
    notebook.wait_finished(1, "the agent cell (after Send the answer)", 90)
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )
    card = cell.locator(".meowgent-card")
    expected = {"text": "Leaves <b>fall</b> softly.", "model": "scripted", "stop": "endTurn"}
    notebook.wait_text(card.locator(".meowgent-output"), json.dumps(expected), "what the server received")
    notebook.wait_text(
        card.locator(".meowgent-server-asked"),
        "answer sent back: 'Leaves <b>fall</b> softly.'",
        "the card's line about the request",
    )
    notebook.wait_text(cell.locator(".meowgent-text"), "Here is your poem.", "the final answer")
    cell.screenshot(path=str(screenshots / f"sampling_done{suffix}.png"))
