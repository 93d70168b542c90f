"""A *served* notebook tool called from another notebook, seen and answered in the browser: in
JupyterLab's light theme and in Notebook 7's dark one.

Notebook A (its own kernel, in JupyterLab's server) defines ``tidy``, a @tool that takes a
`ToolContext`: it logs a warning, reports progress in three steps, asks a form and asks the
caller's model; A serves it with ``%tools serve`` (HTTP on 127.0.0.1, a free port), once for the
module. The test reads the address and the token from A's output, as a person copies them, and
closes A's tab (its kernel goes on serving). Each test writes a notebook B (another kernel; in
JupyterLab's server, or in Notebook 7's): ``%tools mcp add helper --url URL --token TOKEN`` and a
``%%agent`` cell whose `ScriptedModel` calls ``helper_tidy``. In B's running cell the person sees
the progress lines and bar and the log line in the call's card, picks a choice in the form and
clicks Accept, lets B's model answer the sampling request and sends its answer (B's
`ScriptedModel` answers it), and the final answer shows. Each test's kernels are shut down after
it (JupyterLab's last, A's with them); then the module checks A's server no longer listens.

It saves served-tool-{dark,light}.png (the form waiting, the log line and the progress in the
card) and served-tool-done-{dark,light}.png (the finished cell, its turn opened) into
$MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/served-tool-{light,dark}.png are
the first two.
"""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook
from tests.support.browser_pages import LIGHT

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"
TOOL = '''\
%load_ext meowgent_nb
%config AgentMagics.tool_timeout = 300
import time
from meowgent_nb import ToolContext, tool

@tool
def tidy(folder: str, ctx: ToolContext) -> str:
    """Tidy a folder."""
    ctx.log("warning", f"{folder} holds 3 loose files")
    for done in (1, 2, 3):
        ctx.progress(done, 3, f"file {done}")
        time.sleep(0.3)
    answer = ctx.ask("Which style?", {"type": "object", "properties": {"style": {"type": "string", "enum": ["neat", "loose"]}}, "required": ["style"]})
    if not answer.accepted:
        return f"not tidied: {answer.action}"
    summary = ctx.sample(f"Summarize tidying {folder} in a {answer.content['style']} style", max_tokens=50)
    return f"tidied {folder} ({answer.content['style']}): {summary}"
'''
CALLER = """\
%load_ext meowgent_nb
%config AgentMagics.tool_timeout = 300
from meowgent_nb import ScriptedModel
%tools mcp add helper --url {url} --token {token} --no-approval tidy
model = ScriptedModel(['<tool_call>{{"name": "helper_tidy", "arguments": {{"folder": "docs"}}}}</tool_call>',
                       "All neat.", "Tidied."])
"""
# Every text a progress line of the page showed, in order (the kernel redraws the card often).
WATCH_PROGRESS = """() => {
  window.meowgentProgress = [];
  const seen = () => {
    for (const text of document.querySelectorAll('.meowgent-progress-text')) {
      const shown = window.meowgentProgress;
      if (shown[shown.length - 1] !== text.textContent) { shown.push(text.textContent); }
    }
  };
  new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
# Close notebook A's tab in JupyterLab, keeping its kernel (and the server it runs) going.
CLOSE_TAB = """path => {
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (widget.context && widget.context.path === path) { widget.context.model.dirty = false; widget.close(); }
  }
}"""
LOG_LINE = "helper logged warning (tidy): docs holds 3 loose files"
FINAL_CARD = [
    LOG_LINE,
    "helper asked for input ('Which style?'): accepted, sent style='neat'",
    "helper asked to use the model scripted: answer sent back: 'All neat.'",
]


@pytest.fixture(scope="module")
def served(pages, lab, tmp_path_factory):
    """Notebook A served in JupyterLab (light): its address, token and port; its kernel ends last."""
    write_notebook(lab.root / "served.ipynb", [TOOL, "%tools serve"])
    try:
        a = pages.open(lab, "served.ipynb", tmp_path_factory.mktemp("served"), LIGHT)
        a.run_all()
        said = a.wait_text(
            a.cell(1).locator(".jp-OutputArea"), "Stop with %tools serve --stop.", "A's serving output", 90
        )
        url, token = re.search(r"at (http://127\.0\.0\.1:(\d+)/mcp)", said), re.search(r"Token: (\S+)", said)
        a.check(url is not None and token is not None, f"A's output has no address or token: {said!r}")
        a.page.evaluate(CLOSE_TAB, "served.ipynb")  # B's tab is the only one; A's kernel goes on
        yield url.group(1), token.group(1), int(url.group(2))
    finally:
        for session in lab.api("GET", "/api/sessions"):  # JupyterLab's test ended it, unless it failed first
            if session["path"] == "served.ipynb":
                lab.api("DELETE", f"/api/kernels/{session['kernel']['id']}", timeout=30)
    assert _closed(int(url.group(2)), within=10), (
        f"A's server still listens on {url.group(1)} after its kernel ended"
    )


# Notebook 7 first: JupyterLab's test ends every kernel of its server, A's too.
@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("notebook7", "JupyterLab Dark", "dark"), ("lab", "JupyterLab Light", "light")],
    indirect=["jupyter"],
)
def test_a_served_tool_talks_to_the_calling_notebook_s_person_and_model(
    served, jupyter, open_page, tmp_path, theme, suffix
):
    url, token, _port = served
    server = jupyter
    screenshots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    calling = f"calling_{suffix}.ipynb"
    write_notebook(
        server.root / calling,
        [CALLER.format(url=url, token=token), "%%agent --model-object model --new\nTidy docs"],
    )
    b = open_page(server, calling, theme)
    shown = b.page.locator("body").get_attribute("data-jp-theme-name")
    b.check(shown == theme, f"the page shows the theme {shown!r}, not {theme!r}")
    b.page.evaluate(WATCH_PROGRESS)
    b.run_all()
    cell = b.cell(1)
    form = cell.locator(".meowgent-elicit-form")
    b.wait_visible(form.locator(".meowgent-field-0 select"), "the served tool's form in B's cell", 90)
    card = cell.locator(".meowgent-card")
    b.wait_text(
        card.locator(".meowgent-server-asked").first, exactly(LOG_LINE), "the tool's log line in the card"
    )
    b.wait_text(
        card.locator(".meowgent-progress-text"), exactly("3 of 3 (100 %) - file 3"), "the last progress line"
    )
    progress = b.page.evaluate("() => window.meowgentProgress")
    b.check(
        progress == ["1 of 3 (33 %) - file 1", "2 of 3 (66 %) - file 2", "3 of 3 (100 %) - file 3"],
        f"the progress lines the card showed: {progress!r}",
    )
    tall = "e => Math.round(e.getBoundingClientRect().height)"
    live_height = card.locator(".meowgent-server-asked").first.evaluate(tall)
    width = card.locator(".meowgent-progress-bar > span").evaluate("e => e.style.width")
    b.check(width == "100%", f"the progress bar's width: {width!r}")
    head = form.locator(".meowgent-elicit-head").inner_text()
    b.check(head == "helper asks for input (during helper_tidy):", f"the form's head reads {head!r}")
    message = form.locator(".meowgent-elicit-message").inner_text()
    b.check(message == "Which style?", f"the form's message reads {message!r}")
    chosen = "e => e.selectedIndex < 0 ? null : e.options[e.selectedIndex].text.replace(/\\u00a0/g, ' ')"
    choice = form.locator(".meowgent-field-0 select").evaluate(chosen)  # ipywidgets: spaces as nbsp
    b.check(choice == "(choose one)", f"the drop-down shows {choice!r} before the person picks")
    b.wait_text(
        cell.locator(".meowgent-status").first, exactly("waiting for you"), "the card while the form waits"
    )
    b.check(b.prompt(1) == "[*]:", "B's agent cell should still run while the form waits")
    cell.screenshot(path=str(screenshots / f"served-tool-{suffix}.png"))
    form.locator(".meowgent-field-0 select").select_option(label="neat")
    form.get_by_role("button", name="Accept").click()

    let = cell.get_by_role("button", name="Let the model answer")
    b.wait_visible(let, "the button that lets B's model answer the served tool", 90)
    review = cell.locator(".meowgent-sampling-review").first
    b.wait_text(
        review,
        "helper asks to use the model scripted (during helper_tidy). Its request:",
        "who asks for the model",
    )
    asked = [line for line in review.inner_text().splitlines() if line.strip()]
    b.check(
        asked[1:4] == ["user:", "Summarize tidying docs in a neat style", "at most 50 tokens"],
        f"the review reads {asked!r}",
    )
    let.click()
    send = cell.get_by_role("button", name="Send the answer")
    b.wait_visible(send, "the button that sends B's model's answer back", 90)
    b.wait_text(
        cell.locator(".meowgent-sampling-review").last, "the model answered:\nAll neat.", "the model's answer"
    )
    send.click()

    b.wait_finished(1, "B's agent cell (after Send the answer)", 90)
    cell.locator("details.meowgent-turn:not([open]) > summary").evaluate_all(
        "all => all.forEach(s => s.click())"
    )
    notes = card.locator(".meowgent-server-asked").all_inner_texts()
    b.check(notes == FINAL_CARD, f"the finished card's lines: {notes!r}")
    height = card.locator(".meowgent-server-asked").first.evaluate(tall)
    b.check(
        live_height == height, f"the log line is {live_height} px high while the call runs, {height} px after"
    )
    output = card.locator(".meowgent-output").inner_text()
    b.check(output == "tidied docs (neat): All neat.", f"the tool's result in the card: {output!r}")
    b.wait_text(cell.locator(".meowgent-text"), exactly("Tidied."), "the final answer")
    cell.screenshot(path=str(screenshots / f"served-tool-done-{suffix}.png"))


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")


def _closed(port: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return True
        time.sleep(0.2)
    return False
